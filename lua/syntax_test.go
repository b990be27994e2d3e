package lua

import (
	"strconv"
	"strings"
	"testing"
)

// The messages are redis-server 7.0.15's for the same SCRIPT LOAD (its
// Lua 5.1), after "ERR Error compiling script (new function): ".
var syntaxCases = []struct{ src, want string }{
	// the lexer
	{`return "abc`, `user_script:1: unfinished string near '<eof>'`},
	{"x = \"a\\65\nb\"", `user_script:1: unfinished string near '"aA'`},
	{`return [[abc`, `user_script:1: unfinished long string near '<eof>'`},
	{"--[==[ abc\nx", `user_script:2: unfinished long comment near '<eof>'`},
	{`x = [=x`, `user_script:1: invalid long string delimiter near '[='`},
	{`return 0x`, `user_script:1: malformed number near '0x'`},
	{`return 1e`, `user_script:1: malformed number near '1e'`},
	{`return 1.2.3`, `user_script:1: malformed number near '1.2.3'`},
	{`return 12abc`, `user_script:1: malformed number near '12abc'`},
	{`return "\300"`, `user_script:1: escape sequence too large near '"'`},
	{"x = \x01", `user_script:1: unexpected symbol near 'char(1)'`},
	{"x = \x80", "user_script:1: unexpected symbol near '\x80'"},
	// the text after "near": a string as read, escapes decoded, up to a NUL
	{`return 1 "a\66c"`, `user_script:1: '<eof>' expected near '"aBc"'`},
	{`return 1 "a\0b"`, `user_script:1: '<eof>' expected near '"a'`},
	{`return 1 0x1F`, `user_script:1: '<eof>' expected near '0x1F'`},
	// the parser
	{`return 1 +`, `user_script:1: unexpected symbol near '<eof>'`},
	{`for i=1 do end`, `user_script:1: ',' expected near 'do'`},
	{`for a.b = 1, 2 do end`, `user_script:1: '=' or 'in' expected near '.'`},
	{`return 1 end`, `user_script:1: '<eof>' expected near 'end'`},
	{"if x then", `user_script:1: 'end' expected near '<eof>'`},
	{"if x then\n", `user_script:2: 'end' expected (to close 'if' at line 1) near '<eof>'`},
	{"function f()\n  return 1\nx", `user_script:3: 'end' expected (to close 'function' at line 1) near 'x'`},
	{`local function f( return end`, `user_script:1: <name> or '...' expected near 'return'`},
	{`local 1 = 2`, `user_script:1: '<name>' expected near '1'`},
	{`a.b:c = 1`, `user_script:1: function arguments expected near '='`},
	{`break`, `user_script:1: no loop to break near '<eof>'`},
	{`return 1;;`, `user_script:1: '<eof>' expected near ';'`},
	{`;x = 1`, `user_script:1: unexpected symbol near ';'`},
	{`x = {1,2`, `user_script:1: '}' expected near '<eof>'`},
	{`return {a, ,b}`, `user_script:1: unexpected symbol near ','`},
	{`f() = 1`, `user_script:1: unexpected symbol near '='`},
	{`(a) = 1`, `user_script:1: syntax error near '='`},
	{`x, f() = 1, 2`, `user_script:1: syntax error near '='`},
	{"local a = f\n(g)()", `user_script:2: ambiguous syntax (function call x new statement) near '('`},
	{`local function f() return ... end`, `user_script:1: cannot use '...' outside a vararg function near '...'`},
	{`return a // b`, `user_script:1: unexpected symbol near '/'`},
	// valid Lua 5.1
	{"local t = {f\n(1)}", ""}, // the constructor's lookahead moves the line
	{`return [[a [[b]]`, ""},   // no nesting: the string ends at the first "]]"
	{`function f(a, ...) return arg, ... end`, ""},
	{`function a.b.c:d() return self end`, ""},
	{"for k, v in pairs(t) do break end repeat local x = 1 until x == 1 while false do end", ""},
	{`return not not -#x, 2 ^ -3 ^ 4, a and b or c, 1 .. 2, 0x1F, .5, 5., 3e-2, "\q", '\z'`, ""},
	{"--[[ comment\n]] return 1 -- line\n", ""},
	{`local goto = 1 return goto`, ""}, // a name in 5.1 (gopher-lua refuses it later)
	{"x.y:z \"s\" x.y:z {1} return", ""},
}

func TestCheckSyntax(t *testing.T) {
	for _, c := range syntaxCases {
		if got := CheckSyntax(c.src, "user_script"); got != c.want {
			t.Errorf("%q:\n got  %q\n want %q", c.src, got, c.want)
		}
	}
}

// TestCheckSyntaxLimits: Lua 5.1's limits, at the counts where redis-server
// starts to refuse.
func TestCheckSyntaxLimits(t *testing.T) {
	names := func(prefix string, n int, sep string) string {
		s := make([]string, n)
		for i := range s {
			s[i] = prefix + strconv.Itoa(i)
		}
		return strings.Join(s, sep)
	}
	cases := []struct{ src, want string }{
		{"return " + strings.Repeat("(", 198) + "1" + strings.Repeat(")", 198), ""},
		{"return " + strings.Repeat("(", 199) + "1" + strings.Repeat(")", 199), "user_script:1: chunk has too many syntax levels"},
		{"return " + strings.Repeat("not ", 198) + "1", ""},
		{"return " + strings.Repeat("not ", 199) + "1", "user_script:1: chunk has too many syntax levels"},
		{"local " + names("v", 200, ","), ""},
		{"local " + names("v", 201, ","), "user_script:1: main function has more than 200 local variables"},
		{"local " + names("v", 196, ",") + "\nfor i=1,2 do end", ""},
		{"local " + names("v", 197, ",") + "\nfor i=1,2 do end", "user_script:2: main function has more than 200 local variables"},
		{"local " + names("u", 60, ",") + "\nreturn function() return " + names("u", 60, "+") + " end", ""},
		{"local " + names("u", 61, ",") + "\nreturn function() return " + names("u", 61, "+") + " end",
			"user_script:2: function at line 2 has more than 60 upvalues"},
		{names("a", 200, ",") + " = 1", ""},
		{names("a", 201, ",") + " = 1", "user_script:1: main function has more than 199 variables in assignment"},
	}
	for _, c := range cases {
		if got := CheckSyntax(c.src, "user_script"); got != c.want {
			t.Errorf("%.60q...:\n got  %q\n want %q", c.src, got, c.want)
		}
	}
}

// TestCompileUsesLuaSyntax: EVAL's compile and FUNCTION LOAD answer Lua
// 5.1's error where gopher-lua would have run the chunk.
func TestCompileUsesLuaSyntax(t *testing.T) {
	e := New()
	defer e.Close()
	_, err := e.Load([]byte("return 1e"))
	if err == nil || err.Error() != "ERR Error compiling script (new function): user_script:1: malformed number near '1e'" {
		t.Fatalf("Load: %v", err)
	}
	_, err = e.LoadLibrary([]byte("\nredis.register_function('f', function() return ... end)"))
	if err == nil || err.Error() != "Error compiling function: user_function:2: cannot use '...' outside a vararg function near '...'" {
		t.Fatalf("LoadLibrary: %v", err)
	}
}
