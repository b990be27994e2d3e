package lua

import (
	"container/list"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	glua "github.com/yuin/gopher-lua"
)

// Log levels of redis.log, Redis's LL_* values.
const (
	LogDebug   = 0
	LogVerbose = 1
	LogNotice  = 2
	LogWarning = 3
)

// Replication flags of redis.set_repl, Redis's PROPAGATE_* values.
const (
	ReplNone    = 0
	ReplAOF     = 1
	ReplReplica = 2
	ReplAll     = ReplAOF | ReplReplica
)

// Version is what scripts see as REDIS_VERSION and REDIS_VERSION_NUM.
const (
	Version    = "7.0.15"
	VersionNum = 0x0007000f
)

// Host is what a running script reaches the server through; see the
// package doc for the contract.
type Host interface {
	Call(dst []byte, argv [][]byte, proto int) []byte
	ACLCheckCmd(argv [][]byte) (allowed, known bool)
	Log(level int, msg string)
	SetRepl(flags int)
}

// Status tells the caller what kind of reply Run appended.
type Status struct {
	// Err is set when the reply is a top-level error.
	Err bool
	// Killed is set when Kill stopped the script.
	Killed bool
	// Counted is set when that error came from a command the script ran
	// (redis.call), so the server already counted it in errorstats and must
	// not count it again (Redis's ignore_error_stats_update).
	Counted bool
}

// NoScriptErr is EVALSHA's reply for an unknown SHA1 (shared.noscripterr).
const NoScriptErr = "NOSCRIPT No matching script. Please use EVAL."

// script is one compiled EVAL body: Redis's f_<sha> function.
type script struct {
	sha  string
	body string
	fn   *glua.LFunction
	// flags from the shebang; FlagEvalCompatMode without one.
	flags uint64
	// straight: no loop, no closure (watchRun).
	straight bool
	// lru is the script's place in the eviction list while only EVAL
	// brought it in; nil once SCRIPT LOAD pinned it.
	lru *list.Element
}

// MaxEvalScripts bounds the scripts that only EVAL brought into the cache,
// as Redis 7.4 does (7.0 grows without bound when an application sends a
// unique script per call): past it the least recently used is evicted.
// Scripts from SCRIPT LOAD (Load) are never evicted.
const MaxEvalScripts = 500

// Engine is one Lua interpreter with its script cache. Create it once per
// event loop with New and reuse it; it is not safe for concurrent use.
type Engine struct {
	vm      *glua.LState
	scripts map[string]*script
	evalLRU list.List // *script, most recently used first
	evicted int64

	// The sandbox. realG holds the globals; scripts see env, an empty proxy
	// whose metatable reads through to realG and refuses writes. Each library
	// table has such a proxy too (realOf maps a proxy to its table, proxyOf
	// the other way); every table in either map is read-only.
	realG   *glua.LTable
	env     *glua.LTable
	realOf  map[*glua.LTable]*glua.LTable
	proxyOf map[*glua.LTable]*glua.LTable

	errHandler *glua.LFunction
	keys, argv *glua.LTable // reused KEYS and ARGV
	nkeys      int          // entries of keys/argv filled by the last run
	nargv      int
	functions  bool         // an engine for FUNCTION/FCALL (NewFunctions)
	loadG      *glua.LTable // globals while a library loads (functions)
	load       *loading     // the LoadLibrary in progress, or nil
	globalsSet bool         // KEYS and ARGV are in realG

	// State of the current run; host is nil between runs.
	host     Host
	resp     int // protocol of the script's redis.call replies (setresp)
	errLine  int // line of the last error, from the error handler; -1 if none
	errSrc   string
	argvBuf  [][]byte // redis.call argv, reused
	argBytes []byte   // backing bytes of argvBuf, reused
	replyBuf []byte   // redis.call reply, reused
	argEnds  []int

	rand lrand48

	broken bool // a panic escaped the interpreter (pcall)

	readonlyFn *glua.LFunction // raises "Attempt to modify a readonly table"

	runSrc string // the running script's source, for error texts (calleeName)

	statusPool []*glua.LTable // status reply tables, reused run after run (statusTable)
	statusUsed int            // how many of them this run has handed out

	// Kill support: the interpreter runs with a context, which Kill cancels
	// from any goroutine; the VM then raises at every instruction, so pcall
	// cannot swallow it. kill guards runID and cancel.
	kill   sync.Mutex
	runID  uint64
	ctx    context.Context
	cancel context.CancelFunc
	killed bool // under kill
	// killFlag mirrors killed for redis.call, which reads it without the
	// lock; ctxOn says whether the interpreter has its context (watchRun).
	killFlag atomic.Bool
	ctxOn    bool

	// statusCache holds the strings of status replies seen (OK, QUEUED,
	// PONG...), so converting one allocates only its table.
	statusCache map[string]glua.LValue
	intern      internCache
	cjson       *cjson          // the cjson module's state, reset by Flush
	boxedLens   [17]glua.LValue // glua.LNumber(i), boxed once
}

// New creates an engine with Redis 7.0's libraries, redis API and sandbox.
func New() *Engine {
	// The data stack starts small and grows up to 1M slots: unpack of a
	// table of thousands of elements must work, as Lua's 8000-slot C
	// stack allows, and a fixed registry would overflow (and panic).
	L := glua.NewState(glua.Options{SkipOpenLibs: true, RegistrySize: 1024 * 20, RegistryMaxSize: 1 << 20})
	e := &Engine{
		vm:      L,
		scripts: make(map[string]*script),
		realOf:  make(map[*glua.LTable]*glua.LTable),
		proxyOf: make(map[*glua.LTable]*glua.LTable),

		statusCache: make(map[string]glua.LValue),
	}
	e.rand.seed0()
	e.intern.init()
	for i := range e.boxedLens {
		e.boxedLens[i] = glua.LNumber(i)
	}
	e.realG = L.G.Global
	e.openLibraries()
	e.registerRedisAPI()
	e.errHandler = L.NewFunction(e.luaErrorHandler)
	e.keys = L.CreateTable(8, 0)
	e.argv = L.CreateTable(8, 0)
	e.lockGlobals()
	e.ctx, e.cancel = context.WithCancel(context.Background())
	L.SetContext(e.ctx)
	e.ctxOn = true
	return e
}

// KilledErr is the reply of a script stopped by Kill (SCRIPT KILL).
const KilledErr = "ERR Script killed by user with SCRIPT KILL..."

// RunID identifies the run in progress (or the last one); Kill takes it so
// that a kill meant for one script can never stop the next. Like Kill it
// may be called from any goroutine.
func (e *Engine) RunID() uint64 {
	e.kill.Lock()
	defer e.kill.Unlock()
	return e.runID
}

// Kill stops run id if it is still running (SCRIPT KILL, FUNCTION KILL):
// the script raises KilledErr at its next instruction and Run returns with
// Status.Killed. Whether a script may still be killed (it has not written)
// is the server's decision. Kill may be called from any goroutine.
func (e *Engine) Kill(id uint64) {
	e.kill.Lock()
	defer e.kill.Unlock()
	if id == e.runID && !e.killed {
		e.killed = true
		e.killFlag.Store(true)
		e.cancel()
	}
}

// beginRun starts a run, with a fresh context if the last one was killed.
func (e *Engine) beginRun() {
	e.kill.Lock()
	defer e.kill.Unlock()
	e.runID++
	if e.killed {
		e.killed = false
		e.killFlag.Store(false)
		e.ctx, e.cancel = context.WithCancel(context.Background())
		e.vm.SetContext(e.ctx)
		e.ctxOn = true
	}
}

// watchRun chooses how the coming run can be killed. gopher-lua checks a
// context at every instruction when it has one (a quarter of the
// interpreter's time in EVALSHA GET/compare/SET). A script whose code has
// no loop, no backward jump and no closure ends after a bounded number of
// instructions, its own calls aside: it runs without the context, and
// Kill reaches it at its next redis.call (killFlag). Code it could run
// beyond its own (loadstring, load) switches the context back on first
// (guardLoad). Functions (FCALL) always run with it: a library's other
// functions, reachable through upvalues, may loop.
func (e *Engine) watchRun(straight bool) {
	if straight && !e.functions {
		if e.ctxOn {
			e.vm.RemoveContext()
			e.ctxOn = false
		}
	} else if !e.ctxOn {
		e.vm.SetContext(e.ctx)
		e.ctxOn = true
	}
}

// straightCode reports whether a compiled chunk has no loop, no backward
// jump and no closure (see watchRun).
func straightCode(p *glua.FunctionProto) bool {
	const maxSbx = (1<<18 - 1) >> 1
	for _, inst := range p.Code {
		switch int(inst >> 26) {
		case glua.OP_CLOSURE, glua.OP_FORLOOP, glua.OP_FORPREP, glua.OP_TFORLOOP:
			return false
		case glua.OP_JMP:
			if int(inst&0x3ffff)-maxSbx < 0 {
				return false
			}
		}
	}
	return len(p.FunctionPrototypes) == 0
}

// guardLoad wraps loadstring or load: the function it returns switches
// the interpreter's context on before it runs (see watchRun).
func (e *Engine) guardLoad(orig *glua.LFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		top := L.GetTop()
		L.Push(orig)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, glua.MultRet)
		n := L.GetTop() - top
		if n > 0 {
			if fn, ok := L.Get(top + 1).(*glua.LFunction); ok && !fn.IsG {
				L.Replace(top+1, L.NewFunction(func(L *glua.LState) int {
					if L.Context() == nil {
						L.SetContext(e.ctx)
						e.ctxOn = true
					}
					args := L.GetTop()
					L.Push(fn)
					for i := 1; i <= args; i++ {
						L.Push(L.Get(i))
					}
					L.Call(args, glua.MultRet)
					return L.GetTop() - args
				}))
			}
		}
		return n
	}
}

func (e *Engine) endRun() bool {
	e.kill.Lock()
	defer e.kill.Unlock()
	e.runID++ // a Kill for the finished run no longer matches
	return e.killed
}

// Close releases the interpreter.
func (e *Engine) Close() { e.vm.Close() }

// globalsAllowList is Redis 7.0's allow list (script_lua.c): the globals a
// script may see. Everything else gopher-lua's base library defines
// (print, dofile, loadfile, require, module, ...) is dropped, as Redis
// drops its deny list.
var globalsAllowList = []string{
	// libraries
	"string", "cjson", "bit", "cmsgpack", "math", "table", "struct",
	// redis API
	"redis",
	// builtins
	"xpcall", "tostring", "getfenv", "setmetatable", "next", "assert",
	"tonumber", "rawequal", "collectgarbage", "getmetatable", "rawset",
	"pcall", "coroutine", "type", "_G", "select", "unpack", "gcinfo",
	"pairs", "rawget", "loadstring", "ipairs", "_VERSION", "setfenv",
	"load", "error", "newproxy",
}

func (e *Engine) openLibraries() {
	L := e.vm
	for _, lib := range []glua.LGFunction{glua.OpenBase, glua.OpenTable, glua.OpenString, glua.OpenMath, glua.OpenCoroutine} {
		L.Push(L.NewFunction(lib))
		L.Call(0, 0)
	}
	e.realG.RawSetString("gcinfo", L.NewFunction(e.luaGcinfo))
	e.realG.RawSetString("collectgarbage", L.NewFunction(luaCollectgarbage))
	e.realG.RawSetString("tostring", L.NewFunction(luaTostring(e.realG.RawGetString("tostring").(*glua.LFunction))))
	e.realG.RawGetString("table").(*glua.LTable).RawSetString("concat", L.NewFunction(luaTableConcat))
	str := e.realG.RawGetString("string").(*glua.LTable)
	str.RawSetString("rep", L.NewFunction(luaStringRep(str.RawGetString("rep").(*glua.LFunction))))
	// string.dump: gopher-lua cannot dump a function, and Redis refuses to
	// load binary chunks anyway (loadstring returns nil for one), so it
	// returns a chunk that carries only Lua's binary signature.
	str.RawSetString("dump", L.NewFunction(luaStringDump))
	e.openCoercions() // after rep's override, which it wraps (coerce.go)
	e.realG.RawSetString("pcall", L.NewFunction(e.luaPcall))
	for _, name := range []string{"loadstring", "load"} {
		if orig, ok := e.realG.RawGetString(name).(*glua.LFunction); ok {
			e.realG.RawSetString(name, L.NewFunction(e.guardLoad(orig)))
		}
	}
	e.realG.RawSetString("bit", e.openBit())
	e.realG.RawSetString("struct", e.openStruct())
	e.realG.RawSetString("cjson", e.openCjson())
	e.realG.RawSetString("cmsgpack", e.openCmsgpack())

	// Keep exactly the allow list.
	allowed := make(map[string]bool, len(globalsAllowList))
	for _, n := range globalsAllowList {
		allowed[n] = true
	}
	var drop []glua.LValue
	e.realG.ForEach(func(k, _ glua.LValue) {
		if s, ok := k.(glua.LString); !ok || !allowed[string(s)] {
			drop = append(drop, k)
		}
	})
	for _, k := range drop {
		e.realG.RawSet(k, glua.LNil)
	}

	math := e.realG.RawGetString("math").(*glua.LTable)
	math.RawSetString("random", L.NewFunction(e.luaMathRandom))
	math.RawSetString("randomseed", L.NewFunction(e.luaMathRandomseed))
}

// lockGlobals makes the globals and every table reachable from them
// read-only, Redis's luaSetTableProtectionRecursively, and swaps in the
// functions that would otherwise write around the proxies.
func (e *Engine) lockGlobals() {
	L := e.vm
	readonly := L.NewFunction(luaReadonlyError)
	e.readonlyFn = readonly

	// Writes through the proxies of the base functions must see proxies.
	e.realG.RawSetString("rawset", L.NewFunction(e.luaRawset))
	e.realG.RawSetString("rawget", L.NewFunction(e.luaRawget))
	e.realG.RawSetString("next", L.NewFunction(e.luaNext))
	e.realG.RawSetString("pairs", L.NewFunction(e.luaPairs))
	e.realG.RawSetString("setmetatable", L.NewFunction(e.luaSetmetatable))
	e.realG.RawSetString("getmetatable", L.NewFunction(e.luaGetmetatable))
	e.realG.RawSetString("getfenv", L.NewFunction(e.luaGetfenv))
	tbl := e.realG.RawGetString("table").(*glua.LTable)
	for _, name := range []string{"insert", "remove", "sort"} {
		orig := tbl.RawGetString(name).(*glua.LFunction)
		tbl.RawSetString(name, L.NewFunction(e.guardFirstArg(orig)))
	}

	// Globals: env -> realG -> error on a miss.
	gmt := L.CreateTable(0, 2)
	gmt.RawSetString("__index", L.NewFunction(luaNonexistentGlobal))
	gmt.RawSetString("__newindex", readonly)
	e.realG.Metatable = gmt
	e.env = e.protect(e.realG, readonly)
	e.realG.RawSetString("_G", e.env)
	e.realOf[gmt] = gmt // the globals' metatable is read-only too

	// Library tables, one level deep (Redis's libraries hold no nested
	// tables that scripts could reach otherwise).
	e.realG.ForEach(func(k, v glua.LValue) {
		if t, ok := v.(*glua.LTable); ok && t != e.env {
			e.realG.RawSet(k, e.protect(t, readonly))
		}
	})
	L.Env = e.env
}

// protect returns t's read-only proxy.
func (e *Engine) protect(t *glua.LTable, readonly *glua.LFunction) *glua.LTable {
	if p, ok := e.proxyOf[t]; ok {
		return p
	}
	p := e.vm.CreateTable(0, 0)
	mt := e.vm.CreateTable(0, 2)
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", readonly)
	p.Metatable = mt
	e.proxyOf[t] = p
	e.realOf[p] = t
	e.realOf[mt] = mt
	return p
}

func (e *Engine) isReadonly(t *glua.LTable) bool {
	if _, ok := e.realOf[t]; ok {
		return true
	}
	_, ok := e.proxyOf[t]
	return ok
}

func luaReadonlyError(L *glua.LState) int {
	L.RaiseError("Attempt to modify a readonly table")
	return 0
}

func luaNonexistentGlobal(L *glua.LState) int {
	if L.GetTop() != 2 {
		L.RaiseError("Wrong number of arguments to luaProtectedTableError")
	}
	k := L.Get(2)
	if k.Type() != glua.LTString && k.Type() != glua.LTNumber {
		L.RaiseError("Second argument to luaProtectedTableError must be a string or number")
	}
	L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
	return 0
}

// real returns the table a proxy stands for, or t itself.
func (e *Engine) real(t *glua.LTable) *glua.LTable {
	if r, ok := e.realOf[t]; ok {
		return r
	}
	return t
}

func (e *Engine) luaRawset(L *glua.LState) int {
	t := L.CheckTable(1)
	if e.isReadonly(t) {
		L.RaiseError("Attempt to modify a readonly table")
	}
	L.CheckAny(2)
	L.CheckAny(3)
	t.RawSet(L.Get(2), L.Get(3))
	L.SetTop(1)
	return 1
}

func (e *Engine) luaRawget(L *glua.LState) int {
	t := L.CheckTable(1)
	L.CheckAny(2)
	L.Push(e.real(t).RawGet(L.Get(2)))
	return 1
}

func (e *Engine) luaNext(L *glua.LState) int {
	t := e.real(L.CheckTable(1))
	k, v := t.Next(L.Get(2))
	if k == glua.LNil {
		L.Push(glua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

func (e *Engine) luaPairs(L *glua.LState) int {
	t := L.CheckTable(1)
	L.Push(e.realG.RawGetString("next"))
	L.Push(t)
	L.Push(glua.LNil)
	return 3
}

func (e *Engine) luaSetmetatable(L *glua.LState) int {
	t := L.CheckTable(1)
	if e.isReadonly(t) {
		L.RaiseError("Attempt to modify a readonly table")
	}
	mt := L.Get(2)
	if mt.Type() != glua.LTNil && mt.Type() != glua.LTTable {
		L.ArgError(2, "nil or table expected")
	}
	if old, ok := t.Metatable.(*glua.LTable); ok && old.RawGetString("__metatable") != glua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	t.Metatable = mt
	L.SetTop(1)
	return 1
}

func (e *Engine) luaGetmetatable(L *glua.LState) int {
	mt := L.GetMetatable(L.CheckAny(1))
	if t, ok := mt.(*glua.LTable); ok {
		if f := t.RawGetString("__metatable"); f != glua.LNil {
			L.Push(f)
			return 1
		}
		if p, ok := e.proxyOf[t]; ok {
			mt = p
		} else if e.realOf[t] == t {
			// One of the sandbox's own metatables (the globals', a
			// library proxy's): scripts get a read-only proxy of it, so
			// getmetatable(_G).__index = {} raises as in Redis.
			mt = e.protect(t, e.readonlyFn)
		}
	}
	L.Push(mt)
	return 1
}

func (e *Engine) luaGetfenv(L *glua.LState) int {
	v := L.Get(1)
	if f, ok := v.(*glua.LFunction); ok && !f.IsG {
		L.Push(f.Env)
		return 1
	}
	// Levels and Go functions: the globals, which scripts only see as env.
	L.Push(e.env)
	return 1
}

// guardFirstArg wraps a table library function so that it refuses a
// read-only table as its first argument.
func (e *Engine) guardFirstArg(orig *glua.LFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		if t, ok := L.Get(1).(*glua.LTable); ok && e.isReadonly(t) {
			L.RaiseError("Attempt to modify a readonly table")
		}
		return orig.GFunction(L)
	}
}

func (e *Engine) luaGcinfo(L *glua.LState) int {
	L.Push(glua.LNumber(0))
	return 1
}

// luaCollectgarbage is Lua 5.1's collectgarbage without gopher-lua's
// runtime.GC: a script must not be able to stop the whole process (every
// shard's loop) for a collection of the Go heap. The Lua heap is the Go
// heap, collected by the Go runtime, so the options have nothing to do.
func luaStringDump(L *glua.LState) int {
	L.CheckFunction(1)
	L.Push(glua.LString("\x1bLuaQ\x00"))
	return 1
}

func luaCollectgarbage(L *glua.LState) int {
	switch opt := L.OptString(1, "collect"); opt {
	case "collect", "stop", "restart":
		L.Push(glua.LNumber(0))
	case "count":
		L.Push(glua.LNumber(0))
	case "step":
		L.Push(glua.LTrue)
	case "setpause", "setstepmul":
		L.Push(glua.LNumber(0))
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

// luaTostring is tostring with Lua 5.1's number format, "%.14g"
// (tostring(1/3) is "0.33333333333333", tostring(1e15) "1e+15"), where
// gopher-lua prints Go's shortest form. Concatenation (..) still uses
// gopher-lua's format: the VM does it without a call that could be
// replaced.
func luaTostring(orig *glua.LFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		if n, ok := L.Get(1).(glua.LNumber); ok {
			L.Push(glua.LString(formatLuaNumber(float64(n))))
			return 1
		}
		return orig.GFunction(L)
	}
}

// formatLuaNumber is printf("%.14g", f) as glibc prints it, Lua 5.1's
// LUA_NUMBER_FMT.
func formatLuaNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// luaTableConcat is Lua 5.1's table.concat: numbers as "%.14g", always a
// string (gopher-lua's returns a lone number element as a number), and
// 5.1's error for other values.
func luaTableConcat(L *glua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt(3, 1)
	j := L.OptInt(4, t.Len())
	var b strings.Builder
	for k := i; k <= j; k++ {
		switch v := t.RawGetInt(k).(type) {
		case glua.LString:
			b.WriteString(string(v))
		case glua.LNumber:
			b.WriteString(formatLuaNumber(float64(v)))
		default:
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
		}
		if k != j {
			b.WriteString(sep)
		}
	}
	L.Push(glua.LString(b.String()))
	return 1
}

// maxStringRep bounds string.rep's result (proto-max-bulk-len's default):
// in Go a failed allocation kills the process instead of raising Lua's
// "not enough memory", so a one-line script could crash the server.
const maxStringRep = 512 << 20

func luaStringRep(orig *glua.LFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		s := L.CheckString(1)
		n := L.CheckInt(2)
		if n > 0 && int64(len(s))*int64(n) > maxStringRep {
			L.RaiseError("not enough memory")
		}
		return orig.GFunction(L)
	}
}

// luaPcall is Redis 7's pcall: an error raised as a table with an err field
// (as redis.call raises) is returned as that field's string.
func (e *Engine) luaPcall(L *glua.LState) int {
	L.CheckAny(1)
	nargs := L.GetTop() - 1
	if err := L.PCall(nargs, glua.MultRet, nil); err != nil {
		var obj glua.LValue = glua.LString(err.Error())
		if aerr, ok := err.(*glua.ApiError); ok {
			obj = aerr.Object
		}
		switch o := obj.(type) {
		case *glua.LTable:
			if s, ok := o.RawGetString("err").(glua.LString); ok {
				obj = s
			}
		case glua.LString:
			obj = glua.LString(luaMessage(string(o)))
		}
		L.Push(glua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(glua.LTrue, 1)
	return L.GetTop()
}

// SHA1Hex returns the lower-case hex SHA1 of body, the name Redis gives a
// script.
func SHA1Hex(body []byte) string {
	var out [40]byte
	sha1hexInto(&out, body)
	return string(out[:])
}

func sha1hexInto(out *[40]byte, body []byte) {
	sum := sha1.Sum(body)
	hex.Encode(out[:], sum[:])
}

// CompileError is a script that does not compile; Error is Redis's reply
// text ("ERR Error compiling script (new function): user_script:1: ...").
type CompileError struct{ msg string }

func (e *CompileError) Error() string { return e.msg }

// Load compiles body into the cache (SCRIPT LOAD) and returns its SHA1. A
// body already cached is not compiled again.
func (e *Engine) Load(body []byte) (string, error) {
	var sum [40]byte
	sha1hexInto(&sum, body)
	s, ok := e.scripts[string(sum[:])]
	if !ok {
		var err error
		if s, err = e.compile(string(sum[:]), body); err != nil {
			return "", err
		}
	}
	if s.lru != nil {
		e.evalLRU.Remove(s.lru)
		s.lru = nil
	}
	return s.sha, nil
}

func (e *Engine) compile(sha string, body []byte) (*script, error) {
	src := string(body)
	// A shebang line is skipped but its line feed kept, so line numbers
	// stay the user's (evalExtractShebangFlags).
	flags, shebangLen, serr := parseShebang(src)
	if serr != "" {
		return nil, &CompileError{msg: "ERR " + serr}
	}
	code := src[shebangLen:]
	// Lua 5.1's own syntax check first (syntax.go): gopher-lua accepts
	// some chunks 5.1 refuses, and words its errors its own way.
	if msg := CheckSyntax(code, "user_script"); msg != "" {
		return nil, &CompileError{msg: "ERR Error compiling script (new function): " + msg}
	}
	fn, err := e.vm.Load(strings.NewReader(code), "user_script")
	if err != nil {
		return nil, &CompileError{msg: "ERR Error compiling script (new function): " + compileMessage(err, strings.Count(code, "\n")+1)}
	}
	fn.Env = e.env
	// The chunk is a vararg function; gopher-lua's Lua 5.0 compatibility
	// would build an "arg" table for it on every call, which a chunk (not
	// a function with a named "arg" local) can never read.
	fn.Proto.IsVarArg &^= glua.VarArgNeedsArg
	s := &script{sha: sha, body: src, fn: fn, flags: flags, straight: straightCode(fn.Proto)}
	e.scripts[sha] = s
	return s, nil
}

// compileMessage turns gopher-lua's syntax error into Lua 5.1's shape,
// "user_script:<line>: <message> near '<token>'", as far as it can: its
// parser only says "syntax error", which becomes Lua's most common
// "unexpected symbol". lines is the line count of the chunk, for errors at
// its end.
func compileMessage(err error, lines int) string {
	msg := err.Error()
	if aerr, ok := err.(*glua.ApiError); ok && aerr.Cause != nil {
		msg = aerr.Cause.Error()
	}
	msg = strings.TrimSpace(msg)
	what := func(s string) string {
		s = strings.TrimSpace(s)
		if s == "syntax error" {
			return "unexpected symbol"
		}
		return s
	}
	// "user_script at EOF:   syntax error"
	if rest, ok := strings.CutPrefix(msg, "user_script at EOF:"); ok {
		return "user_script:" + strconv.Itoa(lines) + ": " + what(rest) + " near '<eof>'"
	}
	// "user_script line:1(column:7) near 'x':   syntax error"
	if rest, ok := strings.CutPrefix(msg, "user_script line:"); ok {
		line := rest
		if i := strings.IndexByte(rest, '('); i >= 0 {
			line = rest[:i]
		}
		if i := strings.Index(rest, " near "); i >= 0 {
			near := rest[i+len(" near "):]
			if j := strings.LastIndex(near, ":"); j >= 0 {
				return "user_script:" + line + ": " + what(near[j+1:]) + " near " + strings.TrimSpace(near[:j])
			}
		}
		if i := strings.LastIndex(rest, ":"); i >= 0 {
			return "user_script:" + line + ": " + what(rest[i+1:])
		}
	}
	return msg
}

// luaMessage rewrites gopher-lua's runtime error texts into Lua 5.1's
// (without 5.1's variable names, which gopher-lua does not track): for
// "user_script:1: cannot perform add operation between number and nil" it
// returns "user_script:1: attempt to perform arithmetic on a nil value".
func luaMessage(msg string) string {
	pos, text := "", msg
	if strings.HasPrefix(msg, "user_script:") || strings.HasPrefix(msg, "user_function:") {
		if i := strings.Index(msg, ": "); i >= 0 {
			pos, text = msg[:i+2], msg[i+2:]
		}
	}
	if rest, ok := strings.CutPrefix(text, "cannot perform "); ok {
		op, types, _ := strings.Cut(rest, " operation between ")
		a, b, _ := strings.Cut(types, " and ")
		bad := a
		if a == "number" || (op == "concat" && a == "string") {
			bad = b
		}
		if op == "concat" {
			return pos + "attempt to concatenate a " + bad + " value"
		}
		return pos + "attempt to perform arithmetic on a " + bad + " value"
	}
	if rest, ok := strings.CutPrefix(text, "attempt to index a non-table object("); ok {
		if i := strings.IndexByte(rest, ')'); i >= 0 {
			return pos + "attempt to index a " + rest[:i] + " value"
		}
	}
	if text == "attempt to call a non-function object" {
		// gopher-lua does not say what was called; calling nil (an
		// unknown function or field) is by far the usual case.
		return pos + "attempt to call a nil value"
	}
	// gopher-lua's ArgError: "bad argument #1 to floor (number expected,
	// got string)"; Lua 5.1 quotes the function's name.
	if rest, ok := strings.CutPrefix(text, "bad argument #"); ok {
		if n, fn, ok := strings.Cut(rest, " to "); ok && !strings.HasPrefix(fn, "'") {
			if name, why, ok := strings.Cut(fn, " ("); ok {
				return pos + "bad argument #" + n + " to '" + name + "' (" + why
			}
		}
	}
	if rest, ok := strings.CutPrefix(text, "attempt to compare "); ok {
		if a, b, ok := strings.Cut(rest, " with "); ok && a == b {
			return pos + "attempt to compare two " + a + " values"
		}
	}
	return msg
}

// Prepare compiles body as EVAL does, caching it (under the EVAL cache
// bound) if it is new, and returns its SHA1 and flags, so the server can
// check the flags before it runs the script with EvalSHA.
func (e *Engine) Prepare(body []byte) (sha string, flags uint64, err error) {
	s, err := e.evalScript(body)
	if err != nil {
		return "", 0, err
	}
	return s.sha, s.flags, nil
}

// Flags returns a cached script's flags.
func (e *Engine) Flags(sha []byte) (uint64, bool) {
	s, ok := e.lookup(sha)
	if !ok {
		return 0, false
	}
	return s.flags, true
}

// Exists reports whether sha (40 hex digits, any case) is cached.
func (e *Engine) Exists(sha []byte) bool {
	_, ok := e.lookup(sha)
	return ok
}

// Body returns the source of a cached script.
func (e *Engine) Body(sha []byte) (string, bool) {
	s, ok := e.lookup(sha)
	if !ok {
		return "", false
	}
	return s.body, true
}

// NumScripts is the number of cached scripts (number_of_cached_scripts).
func (e *Engine) NumScripts() int { return len(e.scripts) }

// EvictedScripts counts the EVAL scripts evicted so far (Redis 7.4's
// evicted_scripts).
func (e *Engine) EvictedScripts() int64 { return e.evicted }

// Flush drops every cached script (SCRIPT FLUSH). The interpreter is kept:
// its globals are read-only, so scripts left nothing behind in it.
//
// Redis builds a new interpreter instead, which also puts the cjson
// settings a script changed (cjson.encode_max_depth and the others) back
// to their defaults; so does Flush.
func (e *Engine) Flush() {
	clear(e.scripts)
	e.evalLRU.Init()
	e.vm.SetTop(0)
	e.cjson.cfg = cjsonDefaults
	e.cjson.buf = nil
}

// Memory figures for INFO. The Lua heap is part of the Go heap, so the
// interpreter's size is an estimate: Redis's figure for an empty
// interpreter (used_memory_lua:31744 in 7.0) plus the script sources.

// luaBaseMemory is what Redis 7.0 reports as used_memory_lua at start.
const luaBaseMemory = VMBaseMemory

// VMBaseMemory is an empty interpreter's memory as Redis 7.0 reports it (used_memory_lua at start).
const VMBaseMemory = 31744

// VMMemory estimates the interpreter's memory (used_memory_lua,
// used_memory_vm_eval, used_memory_vm_functions).
func (e *Engine) VMMemory() int64 {
	return luaBaseMemory + e.ScriptsMemory()
}

// ScriptsMemory is the memory of the cached EVAL scripts' SHA1s and
// bodies (used_memory_scripts_eval), as lctx.lua_scripts_mem counts it.
func (e *Engine) ScriptsMemory() int64 {
	var n int64
	for _, s := range e.scripts {
		n += int64(len(s.sha)+len(s.body)) + 2*16 // two string headers
	}
	return n
}

func (e *Engine) lookup(sha []byte) (*script, bool) {
	if len(sha) != 40 {
		return nil, false
	}
	var low [40]byte
	for i, c := range sha {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	s, ok := e.scripts[string(low[:])]
	return s, ok
}

// Eval runs body (EVAL), compiling and caching it first if needed, and
// appends its reply for a client speaking proto to dst.
func (e *Engine) Eval(dst []byte, h Host, body []byte, keys, args [][]byte, proto int) ([]byte, Status) {
	s, err := e.evalScript(body)
	if err != nil {
		return appendErr(dst, err.Error()), Status{Err: true}
	}
	return e.run(dst, h, s, keys, args, proto)
}

// evalScript finds or compiles body for EVAL, keeping the EVAL cache's
// LRU order and bound.
func (e *Engine) evalScript(body []byte) (*script, error) {
	var sum [40]byte
	sha1hexInto(&sum, body)
	s, ok := e.scripts[string(sum[:])]
	if !ok {
		var err error
		if s, err = e.compile(string(sum[:]), body); err != nil {
			return nil, err
		}
		s.lru = e.evalLRU.PushFront(s)
		for e.evalLRU.Len() > MaxEvalScripts {
			old := e.evalLRU.Remove(e.evalLRU.Back()).(*script)
			delete(e.scripts, old.sha)
			e.evicted++
		}
	} else if s.lru != nil {
		e.evalLRU.MoveToFront(s.lru)
	}
	return s, nil
}

// EvalSHA runs a cached script (EVALSHA); an unknown sha gets NOSCRIPT.
func (e *Engine) EvalSHA(dst []byte, h Host, sha []byte, keys, args [][]byte, proto int) ([]byte, Status) {
	s, ok := e.lookup(sha)
	if !ok {
		return appendErr(dst, NoScriptErr), Status{Err: true}
	}
	if s.lru != nil {
		e.evalLRU.MoveToFront(s.lru)
	}
	return e.run(dst, h, s, keys, args, proto)
}

func appendErr(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	dst = append(dst, msg...)
	return append(dst, '\r', '\n')
}

// fillArray sets t[1..len(vals)] to vals and clears what the last run left
// beyond them. A table the script changed (more or fewer entries than the
// last run gave it) is replaced rather than cleaned.
func (e *Engine) fillArray(t *glua.LTable, prev int, vals [][]byte) (*glua.LTable, int) {
	// Unchanged means: still exactly 1..prev, nothing after the last index
	// (Next from it reaches the hash part), and no metatable.
	var last glua.LValue = glua.LNil
	if prev > 0 && prev < len(e.boxedLens) {
		last = e.boxedLens[prev]
	} else if prev > 0 {
		last = glua.LNumber(prev)
	}
	if k, _ := t.Next(last); k != glua.LNil || t.Len() != prev || t.Metatable != glua.LNil {
		t = e.vm.CreateTable(len(vals), 0)
	} else {
		for i := len(vals) + 1; i <= prev; i++ {
			t.RawSetInt(i, glua.LNil)
		}
	}
	for i, v := range vals {
		t.RawSetInt(i+1, e.intern.str(v))
	}
	return t, len(vals)
}

func (e *Engine) run(dst []byte, h Host, s *script, keys, args [][]byte, proto int) ([]byte, Status) {
	e.watchRun(s.straight)
	return e.call(dst, h, s.fn, s.sha, s.body, keys, args, proto)
}

// call runs fn, named name in error replies (the SHA1 for EVAL, the
// function's name for FCALL). In EVAL mode KEYS and ARGV are globals; in
// function mode (an engine from NewFunctions) they are fn's two arguments.
func (e *Engine) call(dst []byte, h Host, fn *glua.LFunction, name, src string, keys, args [][]byte, proto int) ([]byte, Status) {
	L := e.vm
	e.runSrc = src
	e.host = h
	e.resp = 2
	e.errLine = -1
	e.errSrc = ""
	e.beginRun()
	e.statusUsed = 0
	defer func() { e.host = nil }()

	oldKeys, oldArgv := e.keys, e.argv
	e.keys, e.nkeys = e.fillArray(e.keys, e.nkeys, keys)
	e.argv, e.nargv = e.fillArray(e.argv, e.nargv, args)
	nargs := 0
	L.Push(fn)
	if e.functions {
		L.Push(e.keys)
		L.Push(e.argv)
		nargs = 2
	} else {
		// KEYS and ARGV are globals. Scripts cannot rebind them (the
		// globals are read-only), so they are set again only when a table
		// is replaced.
		if e.keys != oldKeys || !e.globalsSet {
			e.realG.RawSetString("KEYS", e.keys)
		}
		if e.argv != oldArgv || !e.globalsSet {
			e.realG.RawSetString("ARGV", e.argv)
		}
		e.globalsSet = true
	}
	err := e.pcall(nargs)
	// A Kill that lands after the script's last instruction does not turn
	// its result into an error.
	if killed := e.endRun(); killed && err != nil {
		L.SetTop(0)
		return e.appendRunError(dst, name, errorTable(L, "-"+KilledErr)), Status{Err: true, Killed: true}
	}
	if err != nil {
		var obj glua.LValue = glua.LString(err.Error())
		if aerr, ok := err.(*glua.ApiError); ok && aerr.Object != nil {
			obj = aerr.Object
		}
		L.SetTop(0)
		return e.appendRunError(dst, name, obj), Status{Err: true, Counted: errCounted(obj)}
	}
	ret := L.Get(-1)
	L.SetTop(0)
	st := Status{}
	if t, ok := ret.(*glua.LTable); ok {
		if _, isErr := t.RawGetString("err").(glua.LString); isErr {
			st = Status{Err: true, Counted: errCounted(t)}
		}
	}
	return e.appendLuaReply(dst, ret, proto, 0), st
}

// pcall is L.PCall, with a panic that escapes gopher-lua's own recovery
// (it can overflow its stack while handling an error) turned into an
// error; the interpreter is then Broken and must be replaced.
func (e *Engine) pcall(nargs int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e.broken = true
			err = fmt.Errorf("%v", r)
		}
	}()
	return e.vm.PCall(nargs, 1, e.errHandler)
}

// Broken reports whether a run left the interpreter unusable (see pcall):
// the caller must Close it and use a new Engine.
func (e *Engine) Broken() bool { return e.broken }

func errCounted(obj glua.LValue) bool {
	t, ok := obj.(*glua.LTable)
	return ok && t.RawGetString("ignore_error_stats_update") == glua.LTrue
}

// luaErrorHandler is Redis's __redis__err__handler: it notes where the
// error was raised (the script's line, not a Go function's) for the reply.
func (e *Engine) luaErrorHandler(L *glua.LState) int {
	for level := 1; level <= 3; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, glua.LNil); err != nil {
			break
		}
		if dbg.What == "G" {
			continue
		}
		e.errSrc = "@" + dbg.Source
		e.errLine = dbg.CurrentLine
		break
	}
	L.Push(L.Get(1))
	return 1
}

// calleeName is what Lua 5.1 says of a failed call that gopher-lua does
// not: "field 'x' " or "method 'x' " when line line of src holds exactly
// one call and it is of a.x(...) or a:x(...); "" otherwise (then the
// message stays "attempt to call a nil value").
func calleeName(src string, line int) string {
	for i := 1; i < line && src != ""; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	isID := func(c byte) bool { return c == '_' || isAlnum(c) }
	calls, kind, name := 0, "", ""
	for p := strings.IndexByte(src, '('); p >= 0; {
		q := p - 1
		for q >= 0 && src[q] == ' ' {
			q--
		}
		end := q + 1
		for q >= 0 && isID(src[q]) {
			q--
		}
		id := src[q+1 : end]
		switch id {
		case "", "function", "if", "while", "and", "or", "not", "return", "elseif", "until", "in", "local":
		default:
			calls++
			r := q
			for r >= 0 && src[r] == ' ' {
				r--
			}
			kind, name = "", id
			if r >= 0 && src[r] == '.' {
				kind = "field"
			} else if r >= 0 && src[r] == ':' {
				kind = "method"
			}
		}
		next := strings.IndexByte(src[p+1:], '(')
		if next < 0 {
			break
		}
		p += 1 + next
	}
	if calls != 1 || kind == "" {
		return ""
	}
	return kind + " '" + name + "' "
}

// appendRunError appends the reply of a script that raised obj, as
// luaCallFunction does: "-<err> script: <sha>, on @user_script:<line>."
func (e *Engine) appendRunError(dst []byte, name string, obj glua.LValue) []byte {
	var msg string
	if t, ok := obj.(*glua.LTable); ok {
		if m, ok := t.RawGetString("err").(glua.LString); ok {
			msg = string(m)
		}
	} else {
		msg = "ERR " + luaMessage(obj.String())
		if e.errLine > 0 && strings.HasSuffix(msg, "attempt to call a nil value") {
			if callee := calleeName(e.runSrc, e.errLine); callee != "" {
				msg = strings.TrimSuffix(msg, "a nil value") + callee + "(a nil value)"
			}
		}
	}
	if e.errLine >= 0 && e.errSrc != "" {
		msg += " script: " + name + ", on " + e.errSrc + ":" + strconv.Itoa(e.errLine) + "."
	}
	return appendErrorLine(dst, msg)
}
