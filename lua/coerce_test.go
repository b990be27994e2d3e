package lua

import (
	"math"
	"testing"
)

// The replies are redis-server 7.0.15's for the same EVAL (RESP2).
func TestConversionsAsLua51(t *testing.T) {
	e := New()
	defer e.Close()
	for _, tc := range []struct{ script, want string }{
		{`return tonumber('1e2')`, ":100\r\n"},
		{`return tonumber(' 1E+2 ')`, ":100\r\n"},
		{`return tonumber('-0x10')`, ":-16\r\n"},
		{`return tonumber('0x1p4')`, ":16\r\n"},
		{`return tonumber('1e')`, "$-1\r\n"},
		{`return tonumber('ff', 16)`, ":255\r\n"},
		{`return tonumber('1.5', 16)`, "$-1\r\n"},
		{`return tonumber('zz', 36)`, ":1295\r\n"},
		{`return string.format('%d|%5.1f|%g|%x', 3.7, 3.14159, 1/3, 255)`, "$19\r\n3|  3.1|0.333333|ff\r\n"},
		{"return string.format('%q', 'a\\nb')", "$6\r\n\"a\\\nb\"\r\n"},
		{`return string.format('%s', 1/3)`, "$16\r\n0.33333333333333\r\n"},
		{`return string.len(1/3)`, ":16\r\n"},
		{`return string.format('%c', 0)`, "$0\r\n\r\n"},
		{`return string.format('%f', 1/0)`, "$3\r\ninf\r\n"},
		{`return string.format('%d')`, "-ERR user_script:1: bad argument #2 to 'format' (no value) script: " + SHA1Hex([]byte(`return string.format('%d')`)) + ", on @user_script:1.\r\n"},
		{`return string.format('%k', 1)`, "-ERR user_script:1: invalid option '%k' to 'format' script: " + SHA1Hex([]byte(`return string.format('%k', 1)`)) + ", on @user_script:1.\r\n"},
		{`return string.char(256)`, "-ERR user_script:1: bad argument #1 to 'char' (invalid value) script: " + SHA1Hex([]byte(`return string.char(256)`)) + ", on @user_script:1.\r\n"},
		{`return table.insert({}, 1, 2, 3)`, "-ERR user_script:1: wrong number of arguments to 'insert' script: " + SHA1Hex([]byte(`return table.insert({}, 1, 2, 3)`)) + ", on @user_script:1.\r\n"},
		{`return math.max()`, "-ERR user_script:1: bad argument #1 to 'max' (number expected, got no value) script: " + SHA1Hex([]byte(`return math.max()`)) + ", on @user_script:1.\r\n"},
		{`return math.floor('a')`, "-ERR user_script:1: bad argument #1 to 'floor' (number expected, got string) script: " + SHA1Hex([]byte(`return math.floor('a')`)) + ", on @user_script:1.\r\n"},
	} {
		if got := eval(t, e, newFakeHost(), tc.script, 2, nil); got != tc.want {
			t.Errorf("%s:\n got  %q\n want %q", tc.script, got, tc.want)
		}
	}
}

func TestCStrtod(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		n    int
	}{
		{"12", 12, 2}, {"  -1.5e3x", -1500, 8}, {"1e", 1, 1}, {"1e+", 1, 1}, {".5", 0.5, 2}, {"5.", 5, 2},
		{"0x1F", 31, 4}, {"0x", 0, 1}, {"-0x1.8p1", -3, 8}, {"inf", math.Inf(1), 3}, {"-Infinity", math.Inf(-1), 9},
		{"1e400", math.Inf(1), 5}, {"abc", 0, 0}, {".", 0, 0}, {"", 0, 0},
	} {
		got, n := cStrtod(tc.in)
		if n != tc.n || got != tc.want {
			t.Errorf("strtod(%q) = %v, %d; want %v, %d", tc.in, got, n, tc.want, tc.n)
		}
	}
	if f, n := cStrtod("nan"); n != 3 || !math.IsNaN(f) {
		t.Errorf("strtod(nan) = %v, %d", f, n)
	}
	for _, tc := range []struct {
		in   string
		base int
		want uint64
		n    int
	}{
		{"ff", 16, 255, 2}, {"0xff", 16, 255, 4}, {"0x", 16, 0, 1}, {" -10", 16, math.MaxUint64 - 15, 4}, {"z", 36, 35, 1},
		{"2", 2, 0, 0}, {"99999999999999999999999", 10, math.MaxUint64, 23},
	} {
		got, n := cStrtoul(tc.in, tc.base)
		if n != tc.n || got != tc.want {
			t.Errorf("strtoul(%q, %d) = %v, %d; want %v, %d", tc.in, tc.base, got, n, tc.want, tc.n)
		}
	}
}
