package lua

import (
	"strings"
	"testing"
)

func TestEvalConvertsReturnValuesToRESP2(t *testing.T) {
	e := New()
	h := newFakeHost()
	for _, tc := range []struct{ script, want string }{
		{"return {1,2,3,'ciao',{1,2}}", "*5\r\n:1\r\n:2\r\n:3\r\n$4\r\nciao\r\n*2\r\n:1\r\n:2\r\n"},
		{"return 'hello'", "$5\r\nhello\r\n"},
		{"return 3.99", ":3\r\n"},
		{"return -3.99", ":-3\r\n"},
		{"return true", ":1\r\n"},
		{"return false", "$-1\r\n"},
		{"return nil", "$-1\r\n"},
		{"return {1,2,nil,4}", "*2\r\n:1\r\n:2\r\n"},
		{"return {}", "*0\r\n"},
		{"return {ok='fine'}", "+fine\r\n"},
		{"return {err='My Error'}", "-My Error\r\n"},
		{"return redis.status_reply('PONG')", "+PONG\r\n"},
		{"return redis.error_reply('My Error')", "-My Error\r\n"},
		{"return redis.error_reply('oops')", "-ERR oops\r\n"},
		{"return redis.error_reply('-WRONGTYPE bad')", "-WRONGTYPE bad\r\n"},
		{"return redis.error_reply(1)", "-ERR wrong number or type of arguments\r\n"},
		{"return {ok='a\\r\\nb'}", "+a  b\r\n"},
		{"return {double=3.5}", "$3\r\n3.5\r\n"},
		{"return {big_number='123'}", "$3\r\n123\r\n"},
		{"return {verbatim_string={format='txt', string='hi'}}", "$2\r\nhi\r\n"},
		{"return {map={a=1}}", "*2\r\n$1\r\na\r\n:1\r\n"},
		{"return {set={a=true}}", "*1\r\n$1\r\na\r\n"},
		{"return {'a', {ok='x'}, {err='ERR y'}}", "*3\r\n$1\r\na\r\n+x\r\n-ERR y\r\n"},
		{"return redis.sha1hex('')", "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"},
		{"return redis.REDIS_VERSION", "$6\r\n7.0.15\r\n"},
		{"return redis.REDIS_VERSION_NUM", ":458767\r\n"},
		{"return redis.replicate_commands()", ":1\r\n"},
		{"return redis.breakpoint()", "$-1\r\n"},
		{"return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}", "*4\r\n:0\r\n:1\r\n:2\r\n:3\r\n"},
		{"return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}", "*5\r\n:0\r\n:1\r\n:2\r\n:2\r\n:3\r\n"},
		{"return {KEYS[1], ARGV[1], ARGV[2], #KEYS, #ARGV}", "*5\r\n$1\r\nk\r\n$1\r\na\r\n$1\r\nb\r\n:1\r\n:2\r\n"},
		{"return _VERSION", "$7\r\nLua 5.1\r\n"},
		{"return type(loadstring)", "$8\r\nfunction\r\n"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			if got := eval(t, e, h, tc.script, 2, []string{"k"}, "a", "b"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEvalConvertsReturnValuesToRESP3(t *testing.T) {
	e := New()
	h := newFakeHost()
	for _, tc := range []struct{ script, want string }{
		{"return nil", "_\r\n"},
		{"return false", "_\r\n"},
		{"redis.setresp(3) return false", "#f\r\n"},
		{"redis.setresp(3) return true", "#t\r\n"},
		{"return {double=3.5}", ",3.5\r\n"},
		{"return {big_number='123'}", "(123\r\n"},
		{"return {verbatim_string={format='txt', string='hi'}}", "=6\r\ntxt:hi\r\n"},
		{"return {map={a=1}}", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"return {set={a=true}}", "~1\r\n$1\r\na\r\n"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			if got := eval(t, e, h, tc.script, 3, nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRESP3ScriptBooleanToRESP2ClientIsInteger(t *testing.T) {
	e := New()
	if got := eval(t, e, newFakeHost(), "redis.setresp(3) return {true, false}", 2, nil); got != "*2\r\n:1\r\n:0\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestRedisCallConvertsRepliesToLua(t *testing.T) {
	e := New()
	h := newFakeHost()
	h.replies = map[string]string{
		"int":     ":42\r\n",
		"bulk":    "$3\r\nabc\r\n",
		"nilbulk": "$-1\r\n",
		"nilarr":  "*-1\r\n",
		"status":  "+QUEUED\r\n",
		"err":     "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
		"arr":     "*3\r\n:1\r\n$1\r\nx\r\n*1\r\n+OK\r\n",
		"map":     "%1\r\n$1\r\nf\r\n:1\r\n",
		"aset":    "~2\r\n$1\r\na\r\n$1\r\nb\r\n",
		"double":  ",1.5\r\n",
		"null":    "_\r\n",
		"true":    "#t\r\n",
		"big":     "(12345678901234567890\r\n",
		"verb":    "=8\r\ntxt:abcd\r\n",
		"attr":    "|1\r\n+a\r\n+b\r\n:7\r\n",
	}
	for _, tc := range []struct{ script, want string }{
		{"return type(redis.call('int'))", "$6\r\nnumber\r\n"},
		{"return redis.call('int')", ":42\r\n"},
		{"return redis.call('bulk')", "$3\r\nabc\r\n"},
		{"return redis.call('nilbulk') == false", ":1\r\n"},
		{"return redis.call('nilarr') == false", ":1\r\n"},
		{"return redis.call('status').ok", "$6\r\nQUEUED\r\n"},
		{"return redis.pcall('err').err", "$65\r\nWRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"return redis.call('arr')", "*3\r\n:1\r\n$1\r\nx\r\n*1\r\n+OK\r\n"},
		{"return redis.call('map').map.f", ":1\r\n"},
		{"return {redis.call('aset').set.a, redis.call('aset').set.b}", "*2\r\n:1\r\n:1\r\n"},
		{"return tostring(redis.call('double').double)", "$3\r\n1.5\r\n"},
		{"return redis.call('null') == nil", ":1\r\n"},
		{"return redis.call('true') == true", ":1\r\n"},
		{"return redis.call('big').big_number", "$20\r\n12345678901234567890\r\n"},
		{"local v = redis.call('verb').verbatim_string return {v.format, v.string}", "*2\r\n$3\r\ntxt\r\n$4\r\nabcd\r\n"},
		{"return redis.call('attr')", ":7\r\n"},
		{"return redis.call('set', KEYS[1], 10.5)", "+OK\r\n"},
		{"return redis.call('get', KEYS[1])", "$4\r\n10.5\r\n"},
		{"return redis.call('set', KEYS[1], 1/3) and redis.call('get', KEYS[1])", "$19\r\n0.33333333333333331\r\n"},
		{"return redis.pcall('get', {})", "-ERR Lua redis lib command arguments must be strings or integers\r\n"},
		{"return redis.pcall()", "-ERR Please specify at least one argument for this redis lib call\r\n"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			if got := eval(t, e, h, tc.script, 2, []string{"k"}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRedisCallIncrThroughHost(t *testing.T) {
	e := New()
	h := newFakeHost()
	for i, want := range []string{":1\r\n", ":2\r\n"} {
		if got := eval(t, e, h, "return redis.call('incr',KEYS[1])", 2, []string{"mykey"}); got != want {
			t.Errorf("run %d: got %q, want %q", i, got, want)
		}
	}
	if got := strings.Join(h.calls, "|"); got != "incr mykey|incr mykey" {
		t.Errorf("host saw %q", got)
	}
}

func TestScriptErrorsAsRedis70(t *testing.T) {
	e := New()
	h := newFakeHost()
	sha := func(s string) string { return SHA1Hex([]byte(s)) }
	for _, tc := range []struct {
		script, want string
		counted      bool
	}{
		{"return a", "-ERR user_script:1: Script attempted to access nonexistent global variable 'a' script: " + sha("return a") + ", on @user_script:1.\r\n", false},
		{"a = 1", "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("a = 1") + ", on @user_script:1.\r\n", false},
		{"redis.call = function() end", "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("redis.call = function() end") + ", on @user_script:1.\r\n", false},
		{"string.x = 1", "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("string.x = 1") + ", on @user_script:1.\r\n", false},
		{"rawset(_G, 'x', 1)", "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("rawset(_G, 'x', 1)") + ", on @user_script:1.\r\n", false},
		{"setmetatable(_G, {})", "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("setmetatable(_G, {})") + ", on @user_script:1.\r\n", false},
		{"table.insert(redis, 1)", "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("table.insert(redis, 1)") + ", on @user_script:1.\r\n", false},
		{"\n\nerror('boom')", "-ERR user_script:3: boom script: " + sha("\n\nerror('boom')") + ", on @user_script:3.\r\n", false},
		{"return redis.call('nosuch')", "-ERR unknown command 'nosuch', with args beginning with:  script: " + sha("return redis.call('nosuch')") + ", on @user_script:1.\r\n", true},
		{"return redis.pcall('nosuch')", "-ERR unknown command 'nosuch', with args beginning with: \r\n", true},
		{"error({err='MY code'})", "-MY code script: " + sha("error({err='MY code'})") + ", on @user_script:1.\r\n", false},
		{"redis.setresp(4)", "-ERR RESP version must be 2 or 3. script: " + sha("redis.setresp(4)") + ", on @user_script:1.\r\n", false},
		{"redis.log(9, 'x')", "-ERR Invalid debug level. script: " + sha("redis.log(9, 'x')") + ", on @user_script:1.\r\n", false},
		{"redis.set_repl(8)", "-ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE. script: " + sha("redis.set_repl(8)") + ", on @user_script:1.\r\n", false},
		{"redis.acl_check_cmd('nosuch')", "-ERR Invalid command passed to redis.acl_check_cmd() script: " + sha("redis.acl_check_cmd('nosuch')") + ", on @user_script:1.\r\n", false},
	} {
		t.Run(tc.script, func(t *testing.T) {
			out, st := e.Eval(nil, h, []byte(tc.script), nil, nil, 2)
			if string(out) != tc.want {
				t.Errorf("got  %q\nwant %q", out, tc.want)
			}
			if !st.Err || st.Counted != tc.counted {
				t.Errorf("status %+v, want Err and Counted=%v", st, tc.counted)
			}
		})
	}
}

func TestSandboxHidesUnsafeGlobals(t *testing.T) {
	e := New()
	for _, name := range []string{"os", "io", "print", "dofile", "loadfile", "require", "module", "debug", "package", "_GOPHER_LUA_VERSION"} {
		got := eval(t, e, newFakeHost(), "return type(rawget(_G, '"+name+"'))", 2, nil)
		if got != "$3\r\nnil\r\n" {
			t.Errorf("%s: got %q, want nil", name, got)
		}
	}
	for _, name := range globalsAllowList {
		got := eval(t, e, newFakeHost(), "return type(rawget(_G, '"+name+"'))", 2, nil)
		if got == "$3\r\nnil\r\n" {
			t.Errorf("%s: missing", name)
		}
	}
}

func TestSandboxSurvivesAcrossRuns(t *testing.T) {
	e := New()
	h := newFakeHost()
	eval(t, e, h, "pcall(function() redis.call = nil end) KEYS.extra = 1", 2, []string{"a", "b", "c"})
	if got := eval(t, e, h, "return {type(redis.call), #KEYS, KEYS.extra == nil}", 2, []string{"x"}); got != "*3\r\n$8\r\nfunction\r\n:1\r\n:1\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestCompileErrors(t *testing.T) {
	e := New()
	out, st := e.Eval(nil, newFakeHost(), []byte("return x +"), nil, nil, 2)
	if !strings.HasPrefix(string(out), "-ERR Error compiling script (new function): user_script") || !st.Err {
		t.Errorf("got %q", out)
	}
	if _, err := e.Load([]byte("return 1 1")); err == nil || !strings.HasPrefix(err.Error(), "ERR Error compiling script (new function): user_script:1:") {
		t.Errorf("Load: %v", err)
	}
}

func TestEvalSHARunsCachedScriptsOnly(t *testing.T) {
	e := New()
	h := newFakeHost()
	sha, err := e.Load([]byte("return 'loaded'"))
	if err != nil || sha != SHA1Hex([]byte("return 'loaded'")) {
		t.Fatalf("Load: %q %v", sha, err)
	}
	if out, _ := e.EvalSHA(nil, h, []byte(strings.ToUpper(sha)), nil, nil, 2); string(out) != "$6\r\nloaded\r\n" {
		t.Errorf("EVALSHA: %q", out)
	}
	if out, st := e.EvalSHA(nil, h, []byte("ffffffffffffffffffffffffffffffffffffffff"), nil, nil, 2); string(out) != "-NOSCRIPT No matching script. Please use EVAL.\r\n" || !st.Err {
		t.Errorf("unknown sha: %q", out)
	}
	e.Flush()
	if e.Exists([]byte(sha)) || e.NumScripts() != 0 {
		t.Errorf("Flush kept the script")
	}
}

func TestShebangLineIsSkippedKeepingLineNumbers(t *testing.T) {
	e := New()
	body := "#!lua flags=no-writes\nerror('x')"
	if got := eval(t, e, newFakeHost(), body, 2, nil); got != "-ERR user_script:2: x script: "+SHA1Hex([]byte(body))+", on @user_script:2.\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestHostCallbacks(t *testing.T) {
	e := New()
	h := newFakeHost()
	got := eval(t, e, h, "redis.log(redis.LOG_WARNING, 'hello', 42, {}, 'x') redis.set_repl(redis.REPL_AOF) return {redis.acl_check_cmd('get','k'), redis.acl_check_cmd('set','k','v')}", 2, nil)
	if got != "*2\r\n:1\r\n$-1\r\n" {
		t.Errorf("got %q", got)
	}
	if len(h.logs) != 1 || h.logs[0] != "hello 42 x" {
		t.Errorf("logs %q", h.logs)
	}
	if h.repl != ReplAOF {
		t.Errorf("repl %d", h.repl)
	}
}

func TestPcallReturnsErrorStringOfRedisErrorTables(t *testing.T) {
	e := New()
	got := eval(t, e, newFakeHost(), "local ok, err = pcall(redis.call, 'nosuch') return {tostring(ok), err}", 2, nil)
	if got != "*2\r\n$5\r\nfalse\r\n$56\r\nERR unknown command 'nosuch', with args beginning with: \r\n" {
		t.Errorf("got %q", got)
	}
}

func TestMathRandomIsRedisLrand48(t *testing.T) {
	// Seeded, the sequence is lrand48's for that seed, on every platform.
	e := New()
	h := newFakeHost()
	a := eval(t, e, h, "math.randomseed(42) return {math.random(1000), math.random(1000), math.random(1000)}", 2, nil)
	b := eval(t, e, h, "math.randomseed(42) return {math.random(1000), math.random(1000), math.random(1000)}", 2, nil)
	if a != b {
		t.Errorf("same seed, different sequences: %q %q", a, b)
	}
	var r lrand48
	r.srand(42)
	// glibc: srand48(42); lrand48() -> 1598855263, 735945821, 238553827
	for _, want := range []int32{1598855263, 735945821, 238553827} {
		if got := r.next(); got != want {
			t.Errorf("lrand48 got %d, want %d", got, want)
		}
	}
	if got := eval(t, e, h, "return math.random(0)", 2, nil); !strings.Contains(got, "interval is empty") {
		t.Errorf("got %q", got)
	}
}

func TestMathRandomStartsFromRedisInitialState(t *testing.T) {
	// A fresh Redis (rand.c's X0..X2 state) answers 40 to its first
	// math.random(100); the generator then carries on across scripts.
	if got := eval(t, New(), newFakeHost(), "return math.random(100)", 2, nil); got != ":40\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestKillStopsALoopingScriptEvenUnderPcall(t *testing.T) {
	e := New()
	h := &killHost{e: e}
	body := "while true do pcall(redis.call, 'ping') end"
	out, st := e.Eval(nil, h, []byte(body), nil, nil, 2)
	want := "-ERR Script killed by user with SCRIPT KILL... script: " + SHA1Hex([]byte(body)) + ", on @user_script:1.\r\n"
	if string(out) != want || !st.Killed || !st.Err {
		t.Errorf("got %q %+v, want %q", out, st, want)
	}
	// The next script runs normally, and a stale kill does not touch it.
	id := e.RunID()
	e.Kill(id - 1)
	if got := eval(t, e, newFakeHost(), "return 1", 2, nil); got != ":1\r\n" {
		t.Errorf("after kill: %q", got)
	}
}

// killHost kills the running script from another goroutine after a few
// calls, as SCRIPT KILL arriving on another loop would.
type killHost struct {
	e     *Engine
	calls int
}

func (h *killHost) Call(dst []byte, _ [][]byte, _ int) []byte {
	h.calls++
	if h.calls == 100 {
		id := h.e.RunID()
		done := make(chan struct{})
		go func() { h.e.Kill(id); close(done) }()
		<-done
	}
	return append(dst, "+PONG\r\n"...)
}
func (h *killHost) ACLCheckCmd([][]byte) (bool, bool) { return true, true }
func (h *killHost) Log(int, string)                   {}
func (h *killHost) SetRepl(int)                       {}

func TestEvalCacheEvictsLeastRecentlyUsedEvalScriptsOnly(t *testing.T) {
	e := New()
	h := newFakeHost()
	loaded, _ := e.Load([]byte("return 'loaded'"))
	first := "return 0"
	eval(t, e, h, first, 2, nil)
	for i := 1; i < MaxEvalScripts; i++ {
		eval(t, e, h, "return "+itoa(i), 2, nil)
	}
	e.EvalSHA(nil, h, []byte(SHA1Hex([]byte(first))), nil, nil, 2) // used again: now the newest
	eval(t, e, h, "return 'one more'", 2, nil)                     // evicts "return 1"
	if !e.Exists([]byte(SHA1Hex([]byte(first)))) || e.Exists([]byte(SHA1Hex([]byte("return 1")))) {
		t.Errorf("wrong script evicted")
	}
	if !e.Exists([]byte(loaded)) || e.NumScripts() != MaxEvalScripts+1 || e.EvictedScripts() != 1 {
		t.Errorf("loaded %v, %d scripts, %d evicted", e.Exists([]byte(loaded)), e.NumScripts(), e.EvictedScripts())
	}
	if out, _ := e.EvalSHA(nil, h, []byte(SHA1Hex([]byte("return 1"))), nil, nil, 2); string(out) != "-NOSCRIPT No matching script. Please use EVAL.\r\n" {
		t.Errorf("evicted script: %q", out)
	}
}

func TestLuaErrorTextsAsLua51(t *testing.T) {
	e := New()
	for _, tc := range []struct{ script, want string }{
		{"return x +", "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n"},
		{"return 1 1", "-ERR Error compiling script (new function): user_script:1: '<eof>' expected near '1'\r\n"}, // redis-server 7.0's text
		{"\n\nfoo(", "-ERR Error compiling script (new function): user_script:3: unexpected symbol near '<eof>'\r\n"},
		{"return 1 + nil", "-ERR user_script:1: attempt to perform arithmetic on a nil value script: " + SHA1Hex([]byte("return 1 + nil")) + ", on @user_script:1.\r\n"},
		{"local t = {} return 'a' .. t", "-ERR user_script:1: attempt to concatenate a table value script: " + SHA1Hex([]byte("local t = {} return 'a' .. t")) + ", on @user_script:1.\r\n"},
		{"local t return t.x", "-ERR user_script:1: attempt to index a nil value script: " + SHA1Hex([]byte("local t return t.x")) + ", on @user_script:1.\r\n"},
		{"return select(2, pcall(function() return {} < {} end))", "$50\r\nuser_script:1: attempt to compare two table values\r\n"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			if got := eval(t, e, newFakeHost(), tc.script, 2, nil); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestScriptsCannotStallOrCrashTheProcess(t *testing.T) {
	e := New()
	for _, tc := range []struct{ script, want string }{
		{"return collectgarbage('count') >= 0 and collectgarbage() == 0", ":1\r\n"},
		{"return select(2, pcall(string.rep, 'x', 1e12))", "$32\r\nuser_script:1: not enough memory\r\n"},
		{"return #('ab'):rep(3)", ":6\r\n"},
	} {
		if got := eval(t, e, newFakeHost(), tc.script, 2, nil); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestTostringFormatsNumbersAsLua51(t *testing.T) {
	e := New()
	got := eval(t, e, newFakeHost(), "return {tostring(1/3), tostring(1e15), tostring(100), tostring(-0.5), tostring(2^53), tostring(1/0), tostring(nil), tostring('s')}", 2, nil)
	want := "*8\r\n$16\r\n0.33333333333333\r\n$5\r\n1e+15\r\n$3\r\n100\r\n$4\r\n-0.5\r\n$18\r\n9.007199254741e+15\r\n$3\r\ninf\r\n$3\r\nnil\r\n$1\r\ns\r\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestShebangFlagsAndErrors(t *testing.T) {
	e := New()
	for _, tc := range []struct {
		body  string
		flags uint64
		err   string
	}{
		{"return 1", FlagEvalCompatMode, ""},
		{"#!lua\nreturn 1", 0, ""},
		{"#!lua flags=no-writes,allow-oom\nreturn 1", FlagNoWrites | FlagAllowOOM, ""},
		{"#!lua flags=allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1", FlagAllowStale | FlagNoCluster | FlagAllowCrossSlot, ""},
		{"#!lua", 0, "ERR Invalid script shebang"},
		{"#!python\nreturn 1", 0, "ERR Unexpected engine in script shebang: #!python"},
		{"#!lua flags=bogus\nreturn 1", 0, "ERR Unexpected flag in script shebang: bogus"},
		{"#!lua name=x\nreturn 1", 0, "ERR Unknown lua shebang option: name=x"},
	} {
		sha, flags, err := e.Prepare([]byte(tc.body))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err %v, want %q", tc.body, err, tc.err)
			}
			continue
		}
		if err != nil || flags != tc.flags || sha != SHA1Hex([]byte(tc.body)) {
			t.Errorf("%q: %q %x %v, want flags %x", tc.body, sha, flags, err, tc.flags)
		}
		if f, ok := e.Flags([]byte(sha)); !ok || f != tc.flags {
			t.Errorf("%q: Flags %x %v", tc.body, f, ok)
		}
	}
	if got := FlagNames(FlagNoWrites | FlagAllowCrossSlot); len(got) != 2 || got[0] != "no-writes" || got[1] != "allow-cross-slot-keys" {
		t.Errorf("FlagNames %q", got)
	}
}

func TestTableConcatAsLua51(t *testing.T) {
	e := New()
	for _, tc := range []struct{ script, want string }{
		{"return type(table.concat({5}))", "$6\r\nstring\r\n"},
		{"return table.concat({1, 1/3, 'a'}, ',')", "$20\r\n1,0.33333333333333,a\r\n"},
		{"return table.concat({1, 2, 3}, '-', 2)", "$3\r\n2-3\r\n"},
		{"return table.concat({1, 2, 3}, '-', 3, 2)", "$0\r\n\r\n"},
		{"return select(2, pcall(table.concat, {1, {}}))", "$63\r\nuser_script:1: invalid value (at index 2) in table for 'concat'\r\n"},
	} {
		if got := eval(t, e, newFakeHost(), tc.script, 2, nil); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.script, got, tc.want)
		}
	}
}
