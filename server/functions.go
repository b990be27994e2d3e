package server

// FUNCTION and FCALL (Redis 7.0's functions.c).
//
// The libraries live in one registry for the server (funcRegistry), changed
// by FUNCTION LOAD, DELETE, FLUSH and RESTORE under its mutex; every change
// bumps its generation. Each loop runs functions in an interpreter of its
// own (lua.NewFunctions), built from the registry's libraries the first
// time the loop needs one after a change, so FCALL takes no lock. A
// function runs like an EVAL script (script.go): routed by its declared
// keys, atomic across shards, its effects logged, a function found to
// reach beyond its declared shards remembered (by name) as wide.
//
// The FUNCTION commands that change the libraries are logged as they came
// (Redis propagates them so), and an AOF rewrite writes one FUNCTION LOAD
// per library at the start of the base (rewriteFunctions), so libraries
// survive a restart.

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/lua"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

var functionCommands = []serverCmd{
	{name: "fcall", exec: cmdFCall, keys: evalKeys},
	{name: "fcall_ro", exec: cmdFCall, keys: evalKeys},
	{name: "function|load", exec: cmdFunctionLoad},
	{name: "function|delete", exec: cmdFunctionDelete},
	{name: "function|flush", exec: cmdFunctionFlush},
	{name: "function|list", exec: cmdFunctionList},
	{name: "function|stats", exec: cmdFunctionStats},
	{name: "function|kill", exec: cmdFunctionKill},
	{name: "function|dump", exec: cmdFunctionDump},
	{name: "function|restore", exec: cmdFunctionRestore},
	{name: "function|help", exec: cmdFunctionHelp},
}

// funcLib is one library.
type funcLib struct {
	name  string
	code  string // as loaded, shebang line included
	funcs []*funcMeta
}

// funcMeta is one function of a library.
type funcMeta struct {
	name  string
	desc  string
	flags uint64
	lib   *funcLib
	wide  atomic.Bool // learned: it reaches beyond its declared shards
}

type funcRegistry struct {
	mu    sync.Mutex
	libs  map[string]*funcLib
	funcs map[string]*funcMeta
	gen   atomic.Uint64
	// For INFO.
	nlibs, nfuncs, mem atomic.Int64
}

// loopFunc is a function as a loop's interpreter holds it.
type loopFunc struct {
	fn   *lua.Function
	meta *funcMeta
}

// Errors of FUNCTION LOAD (functionsCreateWithLibraryCtx).
const (
	errLibName = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
)

// libMeta is functionExtractLibMetaData: the engine and name of a
// library from its "#!<engine> name=<name>" line, and where its code
// starts (at the line feed, so line numbers stay the user's).
func libMeta(code string) (engine, name string, body int, err string) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", 0, "ERR Missing library metadata"
	}
	end := strings.IndexByte(code, '\n')
	if end < 0 {
		return "", "", 0, "ERR Invalid library metadata"
	}
	parts, ok := resp.SplitArgs(code[:end])
	if !ok || len(parts) == 0 {
		return "", "", 0, "ERR Invalid library metadata"
	}
	engine = parts[0][2:]
	seen := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if seen {
				return "", "", 0, "ERR Invalid metadata value, name argument was given multiple times"
			}
			name, seen = p[5:], true
			continue
		}
		return "", "", 0, "ERR Invalid metadata value given: " + p
	}
	if !seen {
		return "", "", 0, "ERR Library name was not given"
	}
	return engine, name, end, ""
}

func validLibName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

var (
	scratchMu sync.Mutex
	scratch   *lua.Engine // compileLib's interpreter
)

// compileLib checks and compiles a library's code in a scratch
// interpreter and returns it, unregistered.
func compileLib(code string) (*funcLib, string) {
	engine, name, body, msg := libMeta(code)
	if msg != "" {
		return nil, msg
	}
	if !validLibName(name) {
		return nil, errLibName
	}
	if !strings.EqualFold(engine, "lua") {
		return nil, "ERR Engine '" + engine + "' not found"
	}
	// One interpreter checks every library: building one per FUNCTION
	// LOAD made loading an AOF of 10000 of them take seconds.
	scratchMu.Lock()
	if scratch == nil || scratch.Broken() {
		scratch = lua.NewFunctions()
	}
	fns, err := scratch.LoadLibrary([]byte(code[body:]))
	scratchMu.Unlock()
	if err != nil {
		return nil, "ERR " + err.Error()
	}
	lib := &funcLib{name: name, code: code}
	for _, f := range fns {
		lib.funcs = append(lib.funcs, &funcMeta{name: f.Name, desc: f.Desc, flags: f.Flags, lib: lib})
	}
	return lib, ""
}

// add registers libs (FUNCTION LOAD, RESTORE): all or none. replace lets a
// library replace one of the same name.
func (r *funcRegistry) add(libs []*funcLib, replace bool) string {
	return r.addAs(libs, replace, false, "'")
}

// addAs is add; flush first empties the registry (RESTORE FLUSH), and q
// quotes a library's name in the error (LOAD quotes it, RESTORE not).
func (r *funcRegistry) addAs(libs []*funcLib, replace, flush bool, q string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if flush {
		r.libs, r.funcs = nil, nil
		r.nlibs.Store(0)
		r.nfuncs.Store(0)
		r.mem.Store(0)
		r.gen.Add(1)
	}
	if r.libs == nil {
		r.libs = make(map[string]*funcLib)
		r.funcs = make(map[string]*funcMeta)
	}
	gone := make(map[string]bool) // libraries replaced
	names := make(map[string]bool)
	for _, lib := range libs {
		if old := r.libs[lib.name]; old != nil || names[lib.name] {
			if !replace || names[lib.name] {
				return "ERR Library " + q + lib.name + q + " already exists"
			}
			gone[lib.name] = true
		}
		names[lib.name] = true
	}
	fnames := make(map[string]bool)
	for _, lib := range libs {
		for _, f := range lib.funcs {
			low := strings.ToLower(f.name)
			if old := r.funcs[low]; (old != nil && !gone[old.lib.name]) || fnames[low] {
				return "ERR Function " + f.name + " already exists"
			}
			fnames[low] = true
		}
	}
	for name := range gone {
		r.unlink(r.libs[name])
	}
	for _, lib := range libs {
		r.libs[lib.name] = lib
		for _, f := range lib.funcs {
			r.funcs[strings.ToLower(f.name)] = f // function names ignore case, as Redis's functionDictType
		}
		r.nlibs.Add(1)
		r.nfuncs.Add(int64(len(lib.funcs)))
		r.mem.Add(int64(len(lib.code)))
	}
	r.gen.Add(1)
	return ""
}

func (r *funcRegistry) unlink(lib *funcLib) {
	delete(r.libs, lib.name)
	for _, f := range lib.funcs {
		delete(r.funcs, strings.ToLower(f.name))
	}
	r.nlibs.Add(-1)
	r.nfuncs.Add(-int64(len(lib.funcs)))
	r.mem.Add(-int64(len(lib.code)))
}

func (r *funcRegistry) delete(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	lib := r.libs[name]
	if lib == nil {
		return false
	}
	r.unlink(lib)
	r.gen.Add(1)
	return true
}

func (r *funcRegistry) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.libs, r.funcs = nil, nil
	r.nlibs.Store(0)
	r.nfuncs.Store(0)
	r.mem.Store(0)
	r.gen.Add(1)
}

// list returns the libraries, by name.
func (r *funcRegistry) list() []*funcLib {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*funcLib, 0, len(r.libs))
	for _, lib := range r.libs {
		out = append(out, lib)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// functions returns the loop's interpreter of functions, brought up to
// date with the registry: libraries added or replaced since are loaded
// into it, removed ones dropped (their functions become garbage).
func (l *Loop) functions() *lua.Engine {
	ls := &l.lua
	g := l.srv.funcs.gen.Load()
	if ls.fn != nil && ls.fnGen == g {
		return ls.fn
	}
	libs := l.srv.funcs.list()
	if ls.fn == nil {
		ls.fn = lua.NewFunctions()
		ls.fnLibs = nil
	}
	ls.fnGen = g
	old := ls.fnLibs
	ls.fnLibs = make(map[*funcLib][]*loopFunc, len(libs))
	ls.fns = make(map[string]*loopFunc)
	for _, lib := range libs {
		fs, ok := old[lib]
		if !ok {
			_, _, body, _ := libMeta(lib.code)
			fns, err := ls.fn.LoadLibrary([]byte(lib.code[body:]))
			if err != nil {
				l.srv.log.Warningf("Library %s failed to load on loop %d: %s", lib.name, l.id, err)
				continue
			}
			for i, f := range fns {
				if i < len(lib.funcs) {
					fs = append(fs, &loopFunc{fn: f, meta: lib.funcs[i]})
				}
			}
		}
		ls.fnLibs[lib] = fs
		for _, f := range fs {
			ls.fns[strings.ToLower(f.meta.name)] = f
		}
	}
	return ls.fn
}

// scriptWide reports whether the script or function of a call was found
// to reach beyond its declared shards (script.go): it then takes every
// shard.
func (cl *Client) scriptWide(cmd *Cmd, argv [][]byte) bool {
	l := cl.loop
	if l == nil || len(argv) < 2 {
		return false
	}
	switch cmd.script {
	case scriptEvalSHA:
		e := l.scriptEntry(argv[1])
		return e != nil && e.wide.Load()
	case scriptEval:
		e := l.scriptEntry([]byte(lua.SHA1Hex(argv[1])))
		return e != nil && e.wide.Load()
	case scriptFCall:
		l.functions()
		f := l.loopFunc(argv[1])
		return f != nil && f.meta.wide.Load()
	}
	return false
}

// loopFunc finds a function of the loop's interpreter by name, in any case.
func (l *Loop) loopFunc(name []byte) *loopFunc {
	var buf [64]byte
	if len(name) <= len(buf) {
		return l.lua.fns[string(toLower(buf[:0], name))]
	}
	return l.lua.fns[strings.ToLower(string(name))]
}

func cmdFCall(x *Exec, argv [][]byte) {
	l := x.loop
	eng := l.functions()
	f := l.loopFunc(argv[1])
	if f == nil {
		x.Err("ERR Function not found")
		return
	}
	n, ok := parseNumkeys(argv[2])
	if !ok {
		x.Err("ERR Bad number of keys provided")
		return
	}
	if n > int64(len(argv)-3) {
		x.Err("ERR Number of keys can't be greater than number of args")
		return
	} else if n < 0 {
		x.Err("ERR Number of keys can't be negative")
		return
	}
	ro := x.cmd().name == "fcall_ro"
	if !l.scriptPrepare(x, f.meta.flags, ro) {
		return
	}
	l.feedScript(x, argv)
	r := l.beginScript(x, eng, f.meta.flags, ro, &f.meta.name, true, argv)
	start := len(x.Out)
	var st lua.Status
	x.Out, st = eng.FCall(x.Out, r, f.fn, argv[3:3+n], argv[3+n:], x.Proto)
	if l.endScript(x, start, st) {
		f.meta.wide.Store(true)
	}
}

func cmdFunctionLoad(x *Exec, argv [][]byte) {
	replace := false
	i := 2
	for ; i < len(argv)-1; i++ {
		if shard.EqualFold(argv[i], "replace") {
			replace = true
			continue
		}
		x.Err("ERR Unknown option given: " + string(argv[i]))
		return
	}
	if i >= len(argv) {
		x.Err("ERR Function code is missing")
		return
	}
	lib, msg := compileLib(string(argv[i]))
	if msg == "" {
		msg = x.srv.funcs.add([]*funcLib{lib}, replace)
	}
	if msg != "" {
		x.Err(msg)
		return
	}
	x.Dirty(1)
	x.BulkStr(lib.name)
}

func cmdFunctionDelete(x *Exec, argv [][]byte) {
	if !x.srv.funcs.delete(string(argv[2])) {
		x.Err("ERR Library not found")
		return
	}
	x.Dirty(1)
	x.OK()
}

func cmdFunctionFlush(x *Exec, argv [][]byte) {
	if len(argv) > 3 {
		subcommandSyntaxError(x, argv)
		return
	}
	if len(argv) == 3 && !shard.EqualFold(argv[2], "sync") && !shard.EqualFold(argv[2], "async") {
		x.Err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	x.srv.funcs.flush()
	x.srv.eachLoop(func(l *Loop) {
		if l.lua.fn != nil {
			l.functions() // drops the libraries' functions now
		}
	})
	x.Dirty(1)
	x.OK()
}

func cmdFunctionList(x *Exec, argv [][]byte) {
	withCode := false
	var pattern []byte
	for i := 2; i < len(argv); i++ {
		switch {
		case !withCode && shard.EqualFold(argv[i], "withcode"):
			withCode = true
		case pattern == nil && shard.EqualFold(argv[i], "libraryname"):
			if i+1 >= len(argv) {
				x.Err("ERR library name argument was not given")
				return
			}
			i++
			pattern = argv[i]
		default:
			x.Err("ERR Unknown argument " + string(argv[i]))
			return
		}
	}
	libs := x.srv.funcs.list()
	if pattern != nil {
		kept := libs[:0]
		for _, lib := range libs {
			if shard.MatchGlob(pattern, []byte(lib.name), true) {
				kept = append(kept, lib)
			}
		}
		libs = kept
	}
	x.Array(len(libs))
	for _, lib := range libs {
		if withCode {
			x.Map(4)
		} else {
			x.Map(3)
		}
		x.BulkStr("library_name")
		x.BulkStr(lib.name)
		x.BulkStr("engine")
		x.BulkStr("LUA")
		x.BulkStr("functions")
		x.Array(len(lib.funcs))
		for _, f := range lib.funcs {
			x.Map(3)
			x.BulkStr("name")
			x.BulkStr(f.name)
			x.BulkStr("description")
			if f.desc == "" {
				x.Null()
			} else {
				x.BulkStr(f.desc)
			}
			x.BulkStr("flags")
			names := lua.FlagNames(f.flags)
			x.Set(len(names))
			for _, n := range names {
				x.Simple(n)
			}
		}
		if withCode {
			x.BulkStr("library_code")
			x.BulkStr(lib.code)
		}
	}
}

func cmdFunctionStats(x *Exec, argv [][]byte) {
	x.Map(2)
	x.BulkStr("running_script")
	var run *loopScripts
	for _, l := range x.srv.loops {
		if ls := &l.lua; ls.running.Load() && ls.isFn.Load() {
			run = ls
			break
		}
	}
	if run == nil {
		x.Null()
	} else {
		x.Map(3)
		x.BulkStr("name")
		if n := run.name.Load(); n != nil {
			x.BulkStr(*n)
		} else {
			x.BulkStr("")
		}
		x.BulkStr("command")
		if a := run.argv.Load(); a != nil {
			x.Array(len(*a))
			for _, b := range *a {
				x.Bulk(b)
			}
		} else {
			x.Array(0)
		}
		x.BulkStr("duration_ms")
		x.Int(max(0, x.NowMs-run.started.Load()))
	}
	x.BulkStr("engines")
	x.Map(1)
	x.BulkStr("LUA")
	x.Map(2)
	x.BulkStr("libraries_count")
	x.Int(x.srv.funcs.nlibs.Load())
	x.BulkStr("functions_count")
	x.Int(x.srv.funcs.nfuncs.Load())
}

func cmdFunctionDump(x *Exec, argv [][]byte) {
	libs := x.srv.funcs.list()
	codes := make([]string, len(libs))
	for i, lib := range libs {
		codes[i] = lib.code
	}
	x.Bulk(rdb.DumpFunctions(codes))
}

func cmdFunctionRestore(x *Exec, argv [][]byte) {
	if len(argv) > 4 {
		subcommandSyntaxError(x, argv)
		return
	}
	policy := "append"
	if len(argv) == 4 {
		policy = strings.ToLower(string(argv[3]))
		if policy != "append" && policy != "replace" && policy != "flush" {
			x.Err("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	if msg := x.srv.restoreFunctions(argv[2], policy); msg != "" {
		x.Err(msg)
		return
	}
	x.Dirty(1)
	x.OK()
}

// restoreFunctions is FUNCTION RESTORE's work: all the payload's libraries
// or none.
func (srv *Server) restoreFunctions(payload []byte, policy string) string {
	codes, err := rdb.ParseFunctions(payload)
	if err != nil {
		return err.Error()
	}
	libs := make([]*funcLib, 0, len(codes))
	for _, code := range codes {
		lib, msg := compileLib(code)
		if msg != "" {
			return msg
		}
		libs = append(libs, lib)
	}
	return srv.funcs.addAs(libs, policy == "replace", policy == "flush", "")
}

func cmdFunctionKill(x *Exec, argv [][]byte) { replyKill(x, x.srv.killScript(true)) }

func cmdFunctionHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	})
}

// funcLoad gathers the FUNCTION commands of an AOF being loaded: only the
// libraries they leave behind are compiled, once, when the log has been
// read (apply). An application that loads a library before each call
// leaves an AOF of thousands of FUNCTION LOAD REPLACE; compiling each made
// loading take seconds.
type funcLoad struct {
	order []string
	code  map[string]string
}

func (fl *funcLoad) set(code string) error {
	_, name, _, msg := libMeta(code)
	if msg != "" {
		return loadError("FUNCTION in the append only file failed: " + msg)
	}
	if fl.code == nil {
		fl.code = make(map[string]string)
	}
	if _, ok := fl.code[name]; !ok {
		fl.order = append(fl.order, name)
	}
	fl.code[name] = code
	return nil
}

func (fl *funcLoad) flush() { fl.order, fl.code = nil, nil }

// add records one FUNCTION command read from the AOF.
func (fl *funcLoad) add(argv [][]byte) error {
	if len(argv) < 2 {
		return errBadFunctionCmd
	}
	switch strings.ToLower(string(argv[1])) {
	case "load":
		if len(argv) < 3 || len(argv) > 4 {
			return errBadFunctionCmd
		}
		return fl.set(string(argv[len(argv)-1]))
	case "delete":
		if len(argv) != 3 {
			return errBadFunctionCmd
		}
		delete(fl.code, string(argv[2]))
	case "flush":
		fl.flush()
	case "restore":
		if len(argv) < 3 || len(argv) > 4 {
			return errBadFunctionCmd
		}
		codes, err := rdb.ParseFunctions(argv[2])
		if err != nil {
			return loadError("FUNCTION RESTORE in the append only file failed: " + err.Error())
		}
		if len(argv) == 4 && shard.EqualFold(argv[3], "flush") {
			fl.flush()
		}
		for _, c := range codes {
			if err := fl.set(c); err != nil {
				return err
			}
		}
	default:
		return loadError("Unknown command 'FUNCTION " + strconv.Quote(string(argv[1])) + "' reading the append only file")
	}
	return nil
}

// apply replaces the server's libraries with the ones the log left (a
// loaded AOF is the whole state, as Redis empties the functions with the
// data before it loads one).
func (srv *Server) applyFunctionLoad(fl *funcLoad) error {
	var libs []*funcLib
	for _, name := range fl.order {
		code, ok := fl.code[name]
		if !ok {
			continue
		}
		lib, msg := compileLib(code)
		if msg != "" {
			return loadError("FUNCTION LOAD in the append only file failed: " + msg)
		}
		libs = append(libs, lib)
	}
	if msg := srv.funcs.addAs(libs, false, true, "'"); msg != "" {
		return loadError("FUNCTION LOAD in the append only file failed: " + msg)
	}
	return nil
}

type loadError string

func (e loadError) Error() string { return string(e) }

const errBadFunctionCmd = loadError("wrong number of arguments for 'function' reading the append only file")

// loadScript runs an EVAL read from an AOF: Redis 6 and older logged
// scripts verbatim, and Redis 7 loads such logs (redshard logs effects). It
// runs after the commands before it, over every shard, with the data
// commands it calls; the loader holds the shards alone.
func (p *parallelLoader) loadScript(db int, argv [][]byte) error {
	p.drain()
	if len(argv) < 3 {
		return errBadEvalCmd
	}
	n, ok := parseNumkeys(argv[2])
	if !ok || n < 0 || n > int64(len(argv)-3) {
		return errBadEvalCmd
	}
	if p.eng == nil {
		p.eng = lua.New()
	}
	h := &loadHost{p: p, db: db, start: time.Now()}
	p.x.NowMs = time.Now().UnixMilli()
	out, st := p.eng.Eval(nil, h, argv[1], argv[3:3+n], argv[3+n:], 2)
	if st.Err {
		p.srv.log.Warningf("A script in the append only file failed: %s", strings.TrimSpace(string(out)))
	}
	return nil
}

var errBadEvalCmd = loadError("wrong number of arguments for 'eval' reading the append only file")

// loadHost is the Host of a script replayed from the AOF.
type loadHost struct {
	p      *parallelLoader
	db     int
	start  time.Time
	calls  int
	logged bool
}

func (h *loadHost) Call(dst []byte, argv [][]byte, proto int) []byte {
	p := h.p
	if h.calls++; h.calls&1023 == 0 && !h.logged {
		if ms := time.Since(h.start).Milliseconds(); ms >= p.srv.cfg.BusyReplyThreshold() {
			h.logged = true
			p.srv.log.Warningf("Slow script detected: still in execution after %d milliseconds. You can try killing the script using the SCRIPT KILL command. Script name is: %s.", ms, "from the append only file")
		}
	}
	cmd := p.srv.lookup(argv)
	switch {
	case cmd == nil:
		return resp.AppendError(dst, "ERR Unknown Redis command called from script")
	case (cmd.arity > 0 && len(argv) != cmd.arity) || len(argv) < -cmd.arity:
		return resp.AppendError(dst, "ERR Wrong number of args calling Redis command from script")
	case cmd.fullName == "select":
		id, err := strconv.Atoi(string(argv[1]))
		if err != nil || id < 0 || id >= len(p.shards[0].DBs) {
			return resp.AppendError(dst, shard.ErrDBIndex)
		}
		h.db = id
		return append(dst, "+OK\r\n"...)
	case cmd.fullName == "ping":
		return append(dst, "+PONG\r\n"...)
	case cmd.run == nil || cmd.subs != nil:
		return resp.AppendError(dst, "ERR This Redis command is not allowed from script")
	}
	x := &p.x
	x.DB = h.db
	x.Proto = proto
	x.InMulti, x.InScript = true, true
	x.Out = x.Out[:0]
	x.Prop.Reset()
	cmd.run(&x.Ctx, argv)
	x.InMulti, x.InScript = false, false
	return append(dst, x.Out...)
}

func (h *loadHost) ACLCheckCmd(argv [][]byte) (allowed, known bool) {
	return h.p.srv.lookup(argv) != nil, h.p.srv.lookup(argv) != nil
}
func (h *loadHost) Log(level int, msg string) {}
func (h *loadHost) SetRepl(flags int)         {}
