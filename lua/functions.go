package lua

import (
	"context"
	"strings"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// Functions (FUNCTION LOAD, FCALL), as Redis 7.0's function_lua.c: an
// engine from NewFunctions is a second interpreter, as Redis keeps one for
// functions apart from EVAL's. While a library loads, its code sees only
// a restricted redis table (register_function, log, its levels and the
// version) and no other global; the functions it registers run later
// with the full sandbox and get KEYS and ARGV as their two arguments
// instead of as globals.

// Function is one function a library registered.
type Function struct {
	Name  string
	Desc  string // "" when none was given
	Flags uint64
	fn    *glua.LFunction
	src   string // its library's code, as LoadLibrary got it
}

// NewFunctions creates an engine for FUNCTION LOAD and FCALL.
func NewFunctions() *Engine {
	e := New()
	e.functions = true
	L := e.vm
	readonly := L.NewFunction(luaReadonlyError)
	nonexistent := L.NewFunction(luaNonexistentGlobal)
	errMT := func(t *glua.LTable) *glua.LTable {
		mt := L.CreateTable(0, 2)
		mt.RawSetString("__index", nonexistent)
		mt.RawSetString("__newindex", readonly)
		t.Metatable = mt
		e.realOf[mt] = mt
		return t
	}
	r := L.CreateTable(0, 8)
	r.RawSetString("register_function", L.NewFunction(e.luaRegisterFunction))
	full := e.realOf[e.realG.RawGetString("redis").(*glua.LTable)]
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		r.RawSetString(name, full.RawGetString(name))
	}
	g := errMT(L.CreateTable(0, 1))
	g.RawSetString("redis", e.protect(errMT(r), readonly))
	e.loadG = g
	return e
}

// LoadTimeout bounds the run of a library's code at FUNCTION LOAD.
const LoadTimeout = 500 * time.Millisecond

// loading is the state of a LoadLibrary in progress.
type loading struct {
	funcs []*Function
	src   string
}

// LoadLibrary runs a library's code (FUNCTION LOAD's payload after its
// "#!lua name=..." line, starting with that line's line feed so line
// numbers stay the user's) and returns the functions it registered. The
// error texts are Redis's, without the "ERR " the server's reply adds:
// "Error compiling function: ...", "Error registering functions: ...",
// "No functions registered". Checking library names and clashes with
// other libraries is the server's.
func (e *Engine) LoadLibrary(code []byte) ([]*Function, error) {
	L := e.vm
	src := string(code)
	if msg := CheckSyntax(src, "user_function"); msg != "" {
		return nil, &CompileError{msg: "Error compiling function: " + msg}
	}
	fn, err := L.Load(strings.NewReader(src), "user_function")
	if err != nil {
		msg := strings.ReplaceAll(compileMessage(errRenamed{err}, strings.Count(src, "\n")+1), "user_script", "user_function")
		return nil, &CompileError{msg: "Error compiling function: " + msg}
	}
	fn.Env = e.env
	mt := e.env.Metatable.(*glua.LTable)
	mt.RawSetString("__index", e.loadG)
	e.load = &loading{src: src}
	defer func() {
		mt.RawSetString("__index", e.realG)
		e.load = nil
		L.SetTop(0)
	}()
	// A library's code runs at most LoadTimeout (Redis's LOAD_TIMEOUT_MS).
	ctx, cancel := context.WithTimeout(context.Background(), LoadTimeout)
	L.SetContext(ctx)
	defer func() {
		cancel()
		L.SetContext(e.ctx)
	}()
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		if ctx.Err() != nil {
			return nil, &CompileError{msg: "Error registering functions: FUNCTION LOAD timeout"}
		}
		var obj glua.LValue = glua.LString(err.Error())
		if aerr, ok := err.(*glua.ApiError); ok && aerr.Object != nil {
			obj = aerr.Object
		}
		msg := ""
		if t, ok := obj.(*glua.LTable); ok {
			if m, ok := t.RawGetString("err").(glua.LString); ok {
				msg = string(m)
			}
		} else {
			msg = "ERR " + luaMessage(strings.ReplaceAll(obj.String(), "user_function:", "user_script:"))
			msg = strings.ReplaceAll(msg, "user_script:", "user_function:")
		}
		return nil, &CompileError{msg: "Error registering functions: " + msg}
	}
	if len(e.load.funcs) == 0 {
		return nil, &CompileError{msg: "No functions registered"}
	}
	return e.load.funcs, nil
}

// errRenamed lets compileMessage, which knows the "user_script" chunk
// name, read an error of the "user_function" chunk.
type errRenamed struct{ err error }

func (r errRenamed) Error() string {
	msg := r.err.Error()
	if aerr, ok := r.err.(*glua.ApiError); ok && aerr.Cause != nil {
		msg = aerr.Cause.Error()
	}
	return strings.ReplaceAll(msg, "user_function", "user_script")
}

// FCall runs f (FCALL, FCALL_RO) and appends its reply for a client
// speaking proto to dst. Errors name the function: "... script: <name>,
// on @user_function:<line>.".
func (e *Engine) FCall(dst []byte, h Host, f *Function, keys, args [][]byte, proto int) ([]byte, Status) {
	return e.call(dst, h, f.fn, f.Name, f.src, keys, args, proto)
}

// validFunctionName is functionsVerifyName: letters, digits and '_'.
func validFunctionName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || c == '_') {
			return false
		}
	}
	return true
}

func (e *Engine) luaRegisterFunction(L *glua.LState) int {
	if e.load == nil {
		return raise(L, errorTable(L, "redis.register_function can only be called on FUNCTION LOAD command"))
	}
	f := &Function{src: e.load.src}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*glua.LTable)
		if !ok {
			return raise(L, errorTable(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."))
		}
		for k, v := t.Next(glua.LNil); k != glua.LNil; k, v = t.Next(k) {
			var key string
			switch k := k.(type) {
			case glua.LString:
				key = string(k)
			case glua.LNumber:
				key = k.String()
			default:
				return raise(L, errorTable(L, "named argument key given to redis.register_function is not a string"))
			}
			switch strings.ToLower(key) {
			case "function_name":
				s, ok := luaStringish(v)
				if !ok {
					return raise(L, errorTable(L, "function_name argument given to redis.register_function must be a string"))
				}
				f.Name = s
			case "description":
				s, ok := luaStringish(v)
				if !ok {
					return raise(L, errorTable(L, "description argument given to redis.register_function must be a string"))
				}
				f.Desc = s
			case "callback":
				fn, ok := v.(*glua.LFunction)
				if !ok {
					return raise(L, errorTable(L, "callback argument given to redis.register_function must be a function"))
				}
				f.fn = fn
			case "flags":
				ft, ok := v.(*glua.LTable)
				if !ok {
					return raise(L, errorTable(L, "flags argument to redis.register_function must be a table representing function flags"))
				}
				flags, ok := readFunctionFlags(L, ft)
				if !ok {
					return raise(L, errorTable(L, "unknown flag given"))
				}
				f.Flags = flags
			default:
				return raise(L, errorTable(L, "unknown argument given to redis.register_function"))
			}
		}
		if f.Name == "" && !hasKey(t, "function_name") {
			return raise(L, errorTable(L, "redis.register_function must get a function name argument"))
		}
		if f.fn == nil {
			return raise(L, errorTable(L, "redis.register_function must get a callback argument"))
		}
	case 2:
		s, ok := luaStringish(L.Get(1))
		if !ok {
			return raise(L, errorTable(L, "first argument to redis.register_function must be a string"))
		}
		fn, ok := L.Get(2).(*glua.LFunction)
		if !ok {
			return raise(L, errorTable(L, "second argument to redis.register_function must be a function"))
		}
		f.Name, f.fn = s, fn
	default:
		return raise(L, errorTable(L, "wrong number of arguments to redis.register_function"))
	}
	if !validFunctionName(f.Name) {
		return raise(L, errorTable(L, "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"))
	}
	for _, g := range e.load.funcs {
		if g.Name == f.Name {
			return raise(L, errorTable(L, "Function already exists in the library"))
		}
	}
	e.load.funcs = append(e.load.funcs, f)
	return 0
}

func hasKey(t *glua.LTable, name string) bool {
	for k, _ := t.Next(glua.LNil); k != glua.LNil; k, _ = t.Next(k) {
		if s, ok := k.(glua.LString); ok && strings.EqualFold(string(s), name) {
			return true
		}
	}
	return false
}

// luaStringish is lua_isstring + lua_tostring: strings and numbers.
func luaStringish(v glua.LValue) (string, bool) {
	switch v := v.(type) {
	case glua.LString:
		return string(v), true
	case glua.LNumber:
		return formatLuaNumber(float64(v)), true
	}
	return "", false
}

// readFunctionFlags is luaRegisterFunctionReadFlags: t[1], t[2], ... up
// to the first nil, each a flag name (any case).
func readFunctionFlags(L *glua.LState, t *glua.LTable) (uint64, bool) {
	var flags uint64
	for i := 1; ; i++ {
		v := L.GetTable(t, glua.LNumber(i))
		if v == glua.LNil {
			return flags, true
		}
		s, ok := luaStringish(v)
		if !ok {
			return 0, false
		}
		found := false
		for _, fl := range flagNames {
			if strings.EqualFold(fl.name, s) {
				flags |= fl.flag
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
}
