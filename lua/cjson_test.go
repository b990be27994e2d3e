package lua

import (
	"strings"
	"testing"
)

func TestCjsonAsRedis(t *testing.T) {
	e := New()
	h := newFakeHost()
	for _, tc := range []struct{ script, want string }{
		{`return cjson.encode({1,2,3,'a'})`, `[1,2,3,"a"]`},
		{`return cjson.encode({})`, `{}`},
		{`return cjson.encode({a=1})`, `{"a":1}`},
		{`return cjson.encode({a={b={}}})`, `{"a":{"b":{}}}`},
		{`return cjson.encode({[1]=1,[3]=3})`, `[1,null,3]`},
		{`return cjson.encode({[1.5]=1})`, `{"1.5":1}`},
		{`return cjson.encode(1/3)`, `0.33333333333333`},
		{`return cjson.encode(1e20)`, `1e+20`},
		{`return cjson.encode(100)`, `100`},
		{`return cjson.encode(-0.1)`, `-0.1`},
		{`return cjson.encode('a/b"c\\d\n\1')`, `"a\/b\"c\\d\n\u0001"`},
		{`return cjson.encode({true,false,cjson.null})`, `[true,false,null]`},
		{`return cjson.encode(cjson.decode('{"a":[1,2,{"b":null}]}'))`, `{"a":[1,2,{"b":null}]}`},
		{`return cjson.decode('[1,2,3,"abc"]')[4]`, `abc`},
		{`return tostring(cjson.decode('"\\u00e9\\ud83d\\ude00"'))`, "\u00e9\U0001F600"},
		{`return cjson.decode('{"x":1.5e2}').x`, "150"},
		{`return tostring(cjson.decode('null') == cjson.null)`, "true"},
		{`return cjson.encode_keep_buffer(false)`, ""},
		{`return cjson.encode_max_depth()`, "1000"},
		{`return cjson._VERSION`, "2.1.0"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			got := eval(t, e, h, "local r = (function() "+tc.script+" end)() if type(r) == 'boolean' then return tostring(r) end return tostring(r)", 2, nil)
			want := "$" + itoa(len(tc.want)) + "\r\n" + tc.want + "\r\n"
			if tc.want == "" {
				want = "$5\r\nfalse\r\n"
			}
			if got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestCjsonErrorsAsRedis(t *testing.T) {
	e := New()
	for _, tc := range []struct{ script, want string }{
		{`cjson.encode({[1]=1,[20]=2})`, "Cannot serialise table: excessively sparse array"},
		{`cjson.encode(function() end)`, "Cannot serialise function: type not supported"},
		{`cjson.encode(0/0)`, "Cannot serialise number: must not be NaN or Inf"},
		{`cjson.encode({[true]=1})`, "Cannot serialise boolean: table key must be a number or string"},
		{`cjson.decode('[1,]')`, "Expected value but found T_ARR_END at character 4"},
		{`cjson.decode('{"a" 1}')`, "Expected colon but found T_NUMBER at character 6"},
		{`cjson.decode('[1] x')`, "Expected the end but found invalid token at character 5"},
		{`cjson.decode('"\\q"')`, "Expected value but found invalid escape code at character 1"},
		{`cjson.decode(string.rep('[', 1001))`, "Found too many nested data structures (1001) at character 1001"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			got := eval(t, e, newFakeHost(), "local ok, err = pcall(function() "+tc.script+" end) return err", 2, nil)
			want := "user_script:1: " + tc.want
			if got != "$"+itoa(len(want))+"\r\n"+want+"\r\n" {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func itoa(n int) string {
	b := []byte{}
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestCjsonRedisSuite runs the cjson scripts of Redis 7.0's
// tests/unit/scripting.tcl with their expected replies.
func TestCjsonRedisSuite(t *testing.T) {
	e := New()
	if got := eval(t, e, newFakeHost(), `return table.concat(cjson.decode("[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]"), " ")`, 2, nil); got != "$26\r\n0 -5000 -1 0.0003 1023.2 0\r\n" {
		t.Errorf("numeric decoding: %q", got)
	}
	smoke := `
local some_map = {s1="Some string", n1=100, a1={"Some","String","Array"}, nil1=nil, b1=true, b2=false}
local encoded = cjson.encode(some_map)
local decoded = cjson.decode(encoded)
assert(table.concat(some_map) == table.concat(decoded))
cjson.encode_keep_buffer(false)
encoded = cjson.encode(some_map)
decoded = cjson.decode(encoded)
assert(table.concat(some_map) == table.concat(decoded))
local table1 = {one="one", [1]="one"}
encoded = cjson.encode(table1)
decoded = cjson.decode(encoded)
assert(decoded["one"] == table1["one"])
assert(decoded["1"] == table1[1])
local array1 = {[1]="one", [2]="two"}
encoded = cjson.encode(array1)
decoded = cjson.decode(encoded)
assert(table.concat(array1) == table.concat(decoded))
local invalid_map = {}
invalid_map[false] = "false"
local ok, encoded = pcall(cjson.encode, invalid_map)
assert(ok == false)
cjson.encode_max_depth(1)
ok, encoded = pcall(cjson.encode, some_map)
assert(ok == false)
cjson.decode_max_depth(1)
ok, decoded = pcall(cjson.decode, '{"obj": {"array": [1,2,3,4]}}')
assert(ok == false)
ok, encoded = pcall(cjson.encode, {num1=0/0})
assert(ok == false)
cjson.encode_invalid_numbers(true)
ok, encoded = pcall(cjson.encode, {num1=0/0})
assert(ok == true)
cjson.decode_max_depth(1000)
cjson.encode_max_depth(1000)
cjson.encode_invalid_numbers(false)
return 'ok'`
	if got := eval(t, e, newFakeHost(), smoke, 2, nil); got != "$2\r\nok\r\n" {
		t.Errorf("smoke: %q", got)
	}
}

func TestFlushRestoresCjsonDefaults(t *testing.T) {
	e := New()
	h := newFakeHost()
	eval(t, e, h, "cjson.encode_max_depth(1)", 2, nil)
	if got := eval(t, e, h, "return cjson.encode_max_depth()", 2, nil); got != ":1\r\n" {
		t.Fatalf("setting not kept: %q", got)
	}
	e.Flush()
	if got := eval(t, e, h, "return cjson.encode_max_depth()", 2, nil); got != ":1000\r\n" {
		t.Errorf("after Flush: %q", got)
	}
	if e.VMMemory() <= luaBaseMemory || e.ScriptsMemory() == 0 {
		t.Errorf("memory %d %d", e.VMMemory(), e.ScriptsMemory())
	}
}

func TestCjsonDecodesNumbersAsStrtod(t *testing.T) {
	e := New()
	for _, tc := range []struct{ json, want string }{
		{`[1.5e3, -0.25, 5., 1e+2, 0.1E-1]`, "1500 -0.25 5 100 0.01"},
		{`[-5, 7]`, "-5 7"},
	} {
		got := eval(t, e, newFakeHost(), "local ok, v = pcall(cjson.decode, KEYS[1]) if not ok then return v end return table.concat(v, ' ')", 2, []string{tc.json})
		if got != "$"+itoa(len(tc.want))+"\r\n"+tc.want+"\r\n" {
			t.Errorf("%s: got %q, want %q", tc.json, got, tc.want)
		}
	}
	// A long run of number characters is scanned once, not once per prefix.
	long := "[" + strings.Repeat("1", 200000) + "e" + strings.Repeat("-", 200000) + "]"
	if got := eval(t, e, newFakeHost(), "return select(2, pcall(cjson.decode, KEYS[1]))", 2, []string{long}); !strings.Contains(got, "Expected comma or array end but found invalid token") {
		t.Errorf("long number: %.100q", got)
	}
}
