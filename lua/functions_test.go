package lua

import (
	"strings"
	"testing"
)

func loadLib(t *testing.T, e *Engine, code string) []*Function {
	t.Helper()
	fs, err := e.LoadLibrary([]byte(code))
	if err != nil {
		t.Fatalf("LoadLibrary: %v", err)
	}
	return fs
}

func TestFunctionsRegisterAndCall(t *testing.T) {
	e := NewFunctions()
	h := newFakeHost()
	fs := loadLib(t, e, `
redis.register_function('incr_by_key', function(keys, args) return redis.call('incr', keys[1]) end)
redis.register_function{function_name='echo', callback=function(keys, args) return {keys[1], args[1], #args} end,
  flags={'no-writes', 'ALLOW-OOM'}, description='echoes'}
`)
	if len(fs) != 2 || fs[0].Name != "incr_by_key" || fs[1].Name != "echo" || fs[1].Desc != "echoes" || fs[1].Flags != FlagNoWrites|FlagAllowOOM || fs[0].Flags != 0 {
		t.Fatalf("functions %+v %+v", fs[0], fs[1])
	}
	if out, _ := e.FCall(nil, h, fs[0], bs("k"), nil, 2); string(out) != ":1\r\n" {
		t.Errorf("incr: %q", out)
	}
	if out, _ := e.FCall(nil, h, fs[1], bs("k"), bs("a", "b"), 2); string(out) != "*3\r\n$1\r\nk\r\n$1\r\na\r\n:2\r\n" {
		t.Errorf("echo: %q", out)
	}
}

func TestFunctionsSeeNoKEYSGlobalAndNameTheFunctionInErrors(t *testing.T) {
	e := NewFunctions()
	fs := loadLib(t, e, "\nredis.register_function('f', function(keys, args)\n  return KEYS[1]\nend)")
	out, st := e.FCall(nil, newFakeHost(), fs[0], bs("k"), nil, 2)
	want := "-ERR user_function:3: Script attempted to access nonexistent global variable 'KEYS' script: f, on @user_function:3.\r\n"
	if string(out) != want || !st.Err {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

// TestFunctionLoadErrorsAsRedis follows Redis 7.0's tests/unit/functions.tcl
// (the LIBRARIES tests); the server adds "ERR " in front.
func TestFunctionLoadErrorsAsRedis(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"redis.register_function()", "Error registering functions: ERR wrong number of arguments to redis.register_function"},
		{"redis.register_function('f1')", "Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."},
		{"redis.register_function('f1', function() return 1 end, {}, 'description', 'extra arg')", "Error registering functions: ERR wrong number of arguments to redis.register_function"},
		{"redis.register_function(nil, function() return 1 end)", "Error registering functions: ERR first argument to redis.register_function must be a string"},
		{"redis.register_function('test\\0test', function() return 1 end)", "Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"redis.register_function('', function() return 1 end)", "Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"return math.random()", "Error registering functions: ERR user_function:1: Script attempted to access nonexistent global variable 'math'"},
		{"return redis.call('ping')", "Error registering functions: ERR user_function:1: Script attempted to access nonexistent global variable 'call'"},
		{"return redis.setresp(3)", "Error registering functions: ERR user_function:1: Script attempted to access nonexistent global variable 'setresp'"},
		{"redis.math.random()", "Error registering functions: ERR user_function:1: Script attempted to access nonexistent global variable 'math'"},
		{"redis.register_function('f', function() end) redis.register_function('f', function() end)", "Error registering functions: ERR Function already exists in the library"},
		{"redis.register_function{function_name='f', callback=function() end, flags={'bogus'}}", "Error registering functions: ERR unknown flag given"},
		{"redis.register_function{function_name='f'}", "Error registering functions: ERR redis.register_function must get a callback argument"},
		{"redis.register_function{callback=function() end}", "Error registering functions: ERR redis.register_function must get a function name argument"},
		{"redis.register_function{function_name='f', callback=function() end, x=1}", "Error registering functions: ERR unknown argument given to redis.register_function"},
		{"local x = 1", "No functions registered"},
		{"return 1 +", "Error compiling function: user_function:1: unexpected symbol near '<eof>'"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			_, err := NewFunctions().LoadLibrary([]byte(tc.code))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestFunctionsMaliciousAccess(t *testing.T) {
	e := NewFunctions()
	fs := loadLib(t, e, `
local lib = redis
lib.register_function('f1', function() lib.redis = redis lib.math = math return {ok='OK'} end)
lib.register_function('f2', function() lib.register_function('f1', function() end) end)
`)
	if out, _ := e.FCall(nil, newFakeHost(), fs[0], nil, nil, 2); !strings.Contains(string(out), "Attempt to modify a readonly table") {
		t.Errorf("f1: %q", out)
	}
	if out, _ := e.FCall(nil, newFakeHost(), fs[1], nil, nil, 2); !strings.Contains(string(out), "can only be called on FUNCTION LOAD command") {
		t.Errorf("f2: %q", out)
	}
	// After a failed load the full globals are back.
	if _, err := e.LoadLibrary([]byte("return math.random()")); err == nil {
		t.Fatal("load with math should fail")
	}
	g := loadLib(t, e, "redis.register_function('g', function() return math.floor(2.5) + #redis.sha1hex('') end)")
	if out, _ := e.FCall(nil, newFakeHost(), g[0], nil, nil, 2); string(out) != ":42\r\n" {
		t.Errorf("g after failed load: %q", out)
	}
}
