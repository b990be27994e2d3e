package lua

import "testing"

func TestCalleeName(t *testing.T) {
	for _, c := range []struct {
		src  string
		line int
		want string
	}{
		{"return redis.nosuch('x')", 1, "field 'nosuch' "},
		{"local a\nreturn t:go(1)", 2, "method 'go' "},
		{"return f(1)", 1, ""},                    // a bare name: local or global, Lua knows which
		{"return a.b(1) + c.d(2)", 1, ""},         // two calls: which one failed is unknown
		{"x = 1\n  redis.register_function(", 2, "field 'register_function' "},
		{"return a.b(function(x) return x end)", 1, "field 'b' "},
		{"return 1", 3, ""},
	} {
		if got := calleeName(c.src, c.line); got != c.want {
			t.Errorf("calleeName(%q, %d) = %q, want %q", c.src, c.line, got, c.want)
		}
	}
}
