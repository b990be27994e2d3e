package server

import (
	"strings"
	"testing"
)

func TestScanKey(t *testing.T) {
	cases := []struct {
		in   string
		key  string // "" with ok: a command without a second argument
		n    int
		isNo bool // no key
	}{
		{"*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n", "foo", 22, false},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*1\r\n", "k", 31, false},
		{"*1\r\n$4\r\nPING\r\n", "", 14, true},
		{"*2\r\n$0\r\n\r\n$0\r\n\r\n", "", 16, false},
	}
	for _, c := range cases {
		key, n := scanKey([]byte(c.in))
		if n != c.n || string(key) != c.key || (key == nil) != c.isNo {
			t.Errorf("scanKey(%q) = %q, %d; want %q, %d", c.in, key, n, c.key, c.n)
		}
	}
	// Anything incomplete or not a well-formed multibulk yields nothing.
	for _, in := range []string{"", "*", "*2\r\n", "*2\r\n$3\r\nGET\r\n$3\r\nfo", "GET foo\r\n",
		"*2\r\n$3\r\nGET\r\n$-1\r\n", "*-1\r\n", "*2\r\n$99999999999\r\nx\r\n", "*2\r\n:1\r\n:2\r\n",
		"*2\r\n$3\r\nGETx\n$1\r\nk\r\n", "*9999999999999\r\n"} {
		if key, n := scanKey([]byte(in)); n != 0 || key != nil {
			t.Errorf("scanKey(%q) = %q, %d; want nothing", in, key, n)
		}
	}
	// Every prefix of a valid pipeline scans without panicking.
	p := strings.Repeat("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", 3)
	for i := 0; i <= len(p); i++ {
		scanKey([]byte(p[:i]))
	}
}
