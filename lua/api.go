package lua

import (
	"math"
	"strconv"
	"strings"

	"github.com/redshard/redshard/resp"
	glua "github.com/yuin/gopher-lua"
)

// The redis table (script_lua.c luaRegisterRedisAPI, eval.c scriptingInit).
func (e *Engine) registerRedisAPI() {
	L := e.vm
	r := L.CreateTable(0, 32)
	fns := map[string]glua.LGFunction{
		"call":               func(L *glua.LState) int { return e.luaRedisCall(L, true) },
		"pcall":              func(L *glua.LState) int { return e.luaRedisCall(L, false) },
		"log":                e.luaLog,
		"setresp":            e.luaSetResp,
		"sha1hex":            luaSha1hex,
		"error_reply":        luaErrorReply,
		"status_reply":       luaStatusReply,
		"set_repl":           e.luaSetRepl,
		"acl_check_cmd":      e.luaACLCheckCmd,
		"breakpoint":         func(L *glua.LState) int { L.Push(glua.LFalse); return 1 },
		"debug":              func(L *glua.LState) int { return 0 },
		"replicate_commands": func(L *glua.LState) int { L.Push(glua.LTrue); return 1 },
	}
	for name, fn := range fns {
		r.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{
		"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice, "LOG_WARNING": LogWarning,
		"REPL_NONE": ReplNone, "REPL_AOF": ReplAOF, "REPL_SLAVE": ReplReplica, "REPL_REPLICA": ReplReplica, "REPL_ALL": ReplAll,
		"REDIS_VERSION_NUM": VersionNum,
	} {
		r.RawSetString(name, glua.LNumber(v))
	}
	r.RawSetString("REDIS_VERSION", glua.LString(Version))
	e.realG.RawSetString("redis", r)
}

// errorTable builds Redis's error table {err="CODE msg"} from text in
// luaPushErrorBuff's two forms: "-CODE msg" (the code is the first word) or
// "msg" (the code is ERR). Trailing and leading \r\n are trimmed.
func errorTable(L *glua.LState, text string) *glua.LTable {
	var code, msg string
	if strings.HasPrefix(text, "-") {
		if i := strings.IndexByte(text, ' '); i >= 0 {
			code, msg = text[1:i], text[i+1:]
		} else {
			code, msg = "ERR", text[1:]
		}
	} else {
		code, msg = "ERR", text
	}
	msg = strings.Trim(msg, "\r\n")
	t := L.CreateTable(0, 2)
	t.RawSetString("err", glua.LString(code+" "+msg))
	return t
}

// raise raises an error table as lua_error does (no position added).
func raise(L *glua.LState, t *glua.LTable) int {
	L.Error(t, 0)
	return 0
}

// argvFromStack converts the call's arguments to a command argv as
// luaArgsToRedisArgv does: strings as they are, numbers as "%.17g". The
// slices are reused from run to run.
func (e *Engine) argvFromStack(L *glua.LState) ([][]byte, *glua.LTable) {
	n := L.GetTop()
	if n == 0 {
		return nil, errorTable(L, "Please specify at least one argument for this redis lib call")
	}
	e.argBytes = e.argBytes[:0]
	e.argvBuf = e.argvBuf[:0]
	e.argEnds = e.argEnds[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case glua.LString:
			e.argBytes = append(e.argBytes, v...)
		case glua.LNumber:
			e.argBytes = resp.AppendG17(e.argBytes, float64(v))
		default:
			L.SetTop(0)
			return nil, errorTable(L, "Lua redis lib command arguments must be strings or integers")
		}
		e.argEnds = append(e.argEnds, len(e.argBytes))
	}
	// Slice argBytes only now that it stopped growing.
	start := 0
	for _, end := range e.argEnds {
		e.argvBuf = append(e.argvBuf, e.argBytes[start:end:end])
		start = end
	}
	L.SetTop(0)
	return e.argvBuf, nil
}

// luaRedisCall is redis.call (raise) and redis.pcall.
func (e *Engine) luaRedisCall(L *glua.LState, raiseErr bool) int {
	if e.host == nil {
		return raise(L, errorTable(L, "redis.call/pcall can only be called inside a script invocation"))
	}
	if e.killFlag.Load() {
		// Killed while running without the context (watchRun).
		L.RaiseError("%s", KilledErr)
	}
	argv, errT := e.argvFromStack(L)
	if errT != nil {
		if raiseErr {
			return raise(L, errT)
		}
		L.Push(errT)
		return 1
	}
	e.replyBuf = e.host.Call(e.replyBuf[:0], argv, e.resp)
	v, _, ok := e.replyToLua(e.replyBuf, 0, 0)
	if !ok {
		v = errorTable(L, "-ERR the server answered redis.call with a malformed reply")
	}
	if raiseErr {
		if t, ok := v.(*glua.LTable); ok && len(e.replyBuf) > 0 && e.replyBuf[0] == '-' {
			return raise(L, t)
		}
	}
	L.Push(v)
	return 1
}

func luaSha1hex(L *glua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, errorTable(L, "wrong number of arguments"))
	}
	var s string
	switch v := L.Get(1).(type) {
	case glua.LString:
		s = string(v)
	case glua.LNumber:
		s = L.ToString(1)
	}
	var out [40]byte
	sha1hexInto(&out, []byte(s))
	L.Push(glua.LString(out[:]))
	return 1
}

func luaErrorReply(L *glua.LState) int {
	s, ok := L.Get(1).(glua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	text := string(s)
	if !strings.HasPrefix(text, "-") {
		text = "-" + text
	}
	L.Push(errorTable(L, text))
	return 1
}

func luaStatusReply(L *glua.LState) int {
	s, ok := L.Get(1).(glua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func (e *Engine) luaSetRepl(L *glua.LState) int {
	if e.host == nil {
		return raise(L, errorTable(L, "redis.set_repl can only be called inside a script invocation"))
	}
	if L.GetTop() != 1 {
		return raise(L, errorTable(L, "redis.set_repl() requires two arguments."))
	}
	flags := int(luaToNumber(L.Get(1)))
	if flags&^ReplAll != 0 {
		return raise(L, errorTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."))
	}
	e.host.SetRepl(flags)
	return 0
}

func (e *Engine) luaACLCheckCmd(L *glua.LState) int {
	if e.host == nil {
		return raise(L, errorTable(L, "redis.acl_check_cmd can only be called inside a script invocation"))
	}
	argv, errT := e.argvFromStack(L)
	if errT != nil {
		return raise(L, errT)
	}
	allowed, known := e.host.ACLCheckCmd(argv)
	if !known {
		return raise(L, errorTable(L, "Invalid command passed to redis.acl_check_cmd()"))
	}
	L.Push(glua.LBool(allowed))
	return 1
}

func (e *Engine) luaLog(L *glua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return raise(L, errorTable(L, "redis.log() requires two arguments or more."))
	}
	lv, ok := luaIsNumber(L.Get(1))
	if !ok {
		return raise(L, errorTable(L, "First argument must be a number (log level)."))
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		return raise(L, errorTable(L, "Invalid debug level."))
	}
	if e.host == nil {
		return 0
	}
	var b strings.Builder
	first := true
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case glua.LString:
			if !first {
				b.WriteByte(' ')
			}
			first = false
			b.WriteString(string(v))
		case glua.LNumber:
			if !first {
				b.WriteByte(' ')
			}
			first = false
			b.WriteString(formatLuaNumber(float64(v)))
		}
	}
	e.host.Log(level, b.String())
	return 0
}

func (e *Engine) luaSetResp(L *glua.LState) int {
	if e.host == nil {
		return raise(L, errorTable(L, "redis.setresp can only be called inside a script invocation"))
	}
	if L.GetTop() != 1 {
		return raise(L, errorTable(L, "redis.setresp() requires one argument."))
	}
	resp := int(luaToNumber(L.Get(1)))
	if resp != 2 && resp != 3 {
		return raise(L, errorTable(L, "RESP version must be 2 or 3."))
	}
	e.resp = resp
	return 0
}

// luaIsNumber is lua_isnumber + lua_tonumber: numbers and numeric strings
// (decimal or 0x hex, surrounding spaces allowed).
func luaIsNumber(v glua.LValue) (float64, bool) {
	switch v := v.(type) {
	case glua.LNumber:
		return float64(v), true
	case glua.LString:
		s := strings.TrimSpace(string(v))
		if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
			n, err := strconv.ParseUint(h, 16, 64)
			return float64(n), err == nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// luaToNumber is lua_tonumber: 0 for what is not a number.
func luaToNumber(v glua.LValue) float64 {
	f, _ := luaIsNumber(v)
	return f
}

// lrand48 is Redis's redisLrand48 (rand.c), the 48-bit linear congruential
// generator of drand48, so math.random gives Redis's sequence for a seed.
type lrand48 struct{ x uint64 }

const (
	lrandA    = 0x5DEECE66D
	lrandC    = 0xB
	lrandMask = 1<<48 - 1
	lrandMax  = math.MaxInt32 // REDIS_LRAND48_MAX
)

func (r *lrand48) seed0() { r.x = 0x1234ABCD330E }

func (r *lrand48) srand(seed int32) {
	r.x = uint64(uint32(seed))<<16 | 0x330E
}

func (r *lrand48) next() int32 {
	r.x = (lrandA*r.x + lrandC) & lrandMask
	return int32(r.x >> 17)
}

// luaMathRandom is redis_math_random: Lua 5.1's math.random over
// redisLrand48. Like Redis 7.0 the generator is not reseeded per script
// (scripts replicate by effects), only by math.randomseed.
func (e *Engine) luaMathRandom(L *glua.LState) int {
	if e.host == nil {
		L.RaiseError("math.random can only be called inside a script invocation")
	}
	r := float64(e.rand.next()%lrandMax) / float64(lrandMax)
	switch L.GetTop() {
	case 0:
		L.Push(glua.LNumber(r))
	case 1:
		u := luaCheckInt(L, 1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(glua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l := luaCheckInt(L, 1)
		u := luaCheckInt(L, 2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(glua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (e *Engine) luaMathRandomseed(L *glua.LState) int {
	if e.host == nil {
		L.RaiseError("math.randomseed can only be called inside a script invocation")
	}
	e.rand.srand(int32(luaCheckInt(L, 1)))
	return 0
}

// luaCheckInt is luaL_checkint: a number or a numeric string, truncated.
func luaCheckInt(L *glua.LState, n int) int {
	f, ok := luaIsNumber(L.Get(n))
	if !ok {
		L.TypeError(n, glua.LTNumber)
	}
	return int(f)
}
