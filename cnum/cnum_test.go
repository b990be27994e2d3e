package cnum

import (
	"math"
	"testing"
)

func TestStrtodAndStrtoul(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		n    int
		rng  bool
	}{
		{"  -1.5e3x", -1500, 8, false}, {"1e", 1, 1, false}, {"0x1F", 31, 4, false}, {"0x", 0, 1, false},
		{"-0x1.8p1", -3, 8, false}, {"1e400", math.Inf(1), 5, true}, {"1e-400", 0, 6, true}, {"abc", 0, 0, false},
	} {
		f, n, rng := Strtod([]byte(tc.in))
		if f != tc.want || n != tc.n || rng != tc.rng {
			t.Errorf("Strtod(%q) = %v %d %v", tc.in, f, n, rng)
		}
	}
	if f, n, _ := Strtod([]byte("-nan")); n != 4 || !math.IsNaN(f) || !math.Signbit(f) {
		t.Errorf("Strtod(-nan) = %v %d", f, n)
	}
	for _, tc := range []struct {
		in       string
		base     int
		want     uint64
		n        int
		rangeErr bool
	}{
		{" +12", 10, 12, 4, false}, {" -1", 10, math.MaxUint64, 3, false}, {"0xff", 16, 255, 4, false},
		{"18446744073709551616", 10, math.MaxUint64, 20, true}, {"x", 10, 0, 0, false}, {"zz", 36, 1295, 2, false},
	} {
		v, n, r := Strtoul([]byte(tc.in), tc.base)
		if v != tc.want || n != tc.n || r != tc.rangeErr {
			t.Errorf("Strtoul(%q, %d) = %v %d %v", tc.in, tc.base, v, n, r)
		}
	}
	for _, tc := range []struct {
		in       string
		base     int
		want     int64
		n        int
		rangeErr bool
	}{
		{" -12x", 10, -12, 4, false}, {"0755", 8, 493, 4, false}, {"9223372036854775808", 10, math.MaxInt64, 19, true},
		{"-9223372036854775808", 10, math.MinInt64, 20, false}, {"-9223372036854775809", 10, math.MinInt64, 20, true},
		{"+", 10, 0, 0, false},
	} {
		v, n, r := Strtoll([]byte(tc.in), tc.base)
		if v != tc.want || n != tc.n || r != tc.rangeErr {
			t.Errorf("Strtoll(%q, %d) = %v %d %v", tc.in, tc.base, v, n, r)
		}
	}
}
