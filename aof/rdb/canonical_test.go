package rdb

import (
	"strconv"
	"testing"
)

// TestCanonicalIntMatchesStrconv: the hand-written check agrees with
// ParseInt + FormatInt on the cases that matter.
func TestCanonicalIntMatchesStrconv(t *testing.T) {
	cases := []string{"", "0", "-0", "00", "01", "-01", "1", "-1", "+1", " 1", "1 ", "12a", "9223372036854775807",
		"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551616",
		"99999999999999999999", "-", "2147483647", "2147483648", "-2147483648", "123456789012345678901"}
	for _, c := range cases {
		v, ok := canonicalInt([]byte(c))
		w, err := strconv.ParseInt(c, 10, 64)
		want := err == nil && strconv.FormatInt(w, 10) == c
		if ok != want || ok && v != w {
			t.Errorf("canonicalInt(%q) = %d, %v; want %d, %v", c, v, ok, w, want)
		}
	}
}
