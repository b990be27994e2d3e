package server

import (
	"strings"
	"testing"
)

func TestScanCmd(t *testing.T) {
	cases := []struct {
		in              string
		name, key, arg3 string // "" with isNo: absent
		n               int
		isNo            bool // no key
	}{
		{"*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n", "GET", "foo", "", 22, false},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*1\r\n", "SET", "k", "hello", 31, false},
		{"*1\r\n$4\r\nPING\r\n", "PING", "", "", 14, true},
		{"*2\r\n$0\r\n\r\n$0\r\n\r\n", "", "", "", 16, false},
	}
	for _, c := range cases {
		name, key, arg3, n := scanCmd([]byte(c.in))
		if n != c.n || string(name) != c.name || string(key) != c.key || string(arg3) != c.arg3 || (key == nil) != c.isNo {
			t.Errorf("scanCmd(%q) = %q %q %q, %d; want %q %q %q, %d", c.in, name, key, arg3, n, c.name, c.key, c.arg3, c.n)
		}
	}
	// Anything incomplete or not a well-formed multibulk yields nothing.
	for _, in := range []string{"", "*", "*2\r\n", "*2\r\n$3\r\nGET\r\n$3\r\nfo", "GET foo\r\n",
		"*2\r\n$3\r\nGET\r\n$-1\r\n", "*-1\r\n", "*2\r\n$99999999999\r\nx\r\n", "*2\r\n:1\r\n:2\r\n",
		"*2\r\n$3\r\nGETx\n$1\r\nk\r\n", "*9999999999999\r\n"} {
		if _, key, _, n := scanCmd([]byte(in)); n != 0 || key != nil {
			t.Errorf("scanCmd(%q) = %q, %d; want nothing", in, key, n)
		}
	}
	// Every prefix of a valid pipeline scans without panicking.
	p := strings.Repeat("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", 3)
	for i := 0; i <= len(p); i++ {
		scanCmd([]byte(p[:i]))
	}
}

func TestIsHashFieldCmd(t *testing.T) {
	for _, n := range []string{"HSET", "hget", "HsetNX", "HEXISTS", "hdel", "HINCRBY", "hincrbyfloat", "HSTRLEN", "HMGET", "hmset"} {
		if !isHashFieldCmd([]byte(n)) {
			t.Errorf("%s: not taken for a hash field command", n)
		}
	}
	for _, n := range []string{"GET", "SET", "HLEN", "HGETALL", "HKEYS", "HSCAN", "HRANDFIELD", "H", "", "ZADD"} {
		if isHashFieldCmd([]byte(n)) {
			t.Errorf("%s: taken for a hash field command", n)
		}
	}
}
