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
		{"return f(1)", 1, ""},            // a bare name: local or global, Lua knows which
		{"return a.b(1) + c.d(2)", 1, ""}, // two calls: which one failed is unknown
		{"x = 1\n  redis.register_function(", 2, "field 'register_function' "},
		{"return a.b(function(x) return x end)", 1, "field 'b' "},
		{"return 1", 3, ""},
	} {
		if got := calleeName(c.src, c.line); got != c.want {
			t.Errorf("calleeName(%q, %d) = %q, want %q", c.src, c.line, got, c.want)
		}
	}
}

func TestStraightCode(t *testing.T) {
	e := New()
	defer e.Close()
	for body, want := range map[string]bool{
		"local v = redis.call('GET', KEYS[1]) if v ~= ARGV[1] then redis.call('SET', KEYS[1], ARGV[1]) end return 1": true,
		"return 1":                            true,
		"while true do end":                   false,
		"for i=1,10 do end":                   false,
		"for k,v in pairs(KEYS) do end":       false,
		"repeat local x = 1 until false":      false,
		"local f = function() return 1 end":   false,
		"return loadstring('while 1 do end')": true, // its chunk runs with the context (guardLoad)
	} {
		sha, err := e.Load([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := e.scripts[sha].straight; got != want {
			t.Errorf("%q: straight %v, want %v", body, got, want)
		}
	}
}
