package server

// Scripts: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, and the run of a
// script shared with FCALL (functions.go). The Lua engine is package lua;
// this file runs it on the loops and shards.
//
// Where a script runs. EVAL is routed like any command by its declared
// keys (KEYS): one shard's keys, or none, and it runs on that shard's loop
// (inline at home, or as a hop); keys of several shards, and it runs as a
// cross-shard transaction over them (dispatch.go), every one of those
// shards taken. A script is one command, so nothing else runs on a shard it
// holds until it returns: no client on any loop sees part of it, and it
// sees no other command's partial effects (contract 3).
//
// Undeclared keys. A script may touch keys it did not declare, as in a
// standalone Redis. Each redis.call is placed like a command; when its
// shards are all held, it runs. When it needs a shard the script does not
// hold, the script cannot take it there and then: it holds shards and
// would wait for another, and the loop it waits for may be parked by a
// transaction that waits, in its ascending chain, for a shard this script
// holds. So it never waits. It stops instead (the engine's Kill, which no
// pcall can catch), its writes so far are rolled back (below), nothing it
// did is logged or published, its reply is dropped, and the EVAL is run
// again as a transaction over every shard, where no call can be refused.
// The script is remembered as wide (by SHA1, or by function name) and from
// then on takes every shard from the start. Holding every shard, it needs
// nothing more; holding some, it waits for none: no cycle of waiting can
// form, and no client can observe the first, abandoned run. A script whose
// keys sit on one shard (one key, or one {tag}) runs there like any
// command, with no cross-shard cost. Inside MULTI a script takes every
// shard (EXEC cannot be run again halfway).
//
// Rollback. While a script holds fewer than every shard, each write first
// saves, for each key it may write (its key positions, and MOVE's and
// COPY's target database), the key as it was (shard.Undo): absent, or a
// copy. A value bigger than undoLimit is not copied: the script stops
// before that write as if it needed another shard, and runs again holding
// every shard, where nothing is journaled. Rolled back: values, types,
// expiries. Not taken back: WATCH marks (a watcher's EXEC may fail for a
// write that was undone) and statistics of the commands that ran.
// Keyspace notifications and PUBLISH are held while such a script runs and
// dropped with it.
//
// Effects, not scripts, are logged (Redis 7's effects replication): the
// write commands a script ran are held (like EXEC's, multi.go) and logged
// when it ends, bare when there is one and as MULTI ... EXEC when there are
// several, so that replay is deterministic whatever the script did with
// TIME or random numbers. Each call is tracked against the log as it runs
// (Loop.track), so under appendfsync always the script's reply waits for
// the fsync of its writes and of the writes it read.
//
// The script cache. Bodies live in one registry for the server
// (scriptRegistry: SHA1 -> body and flags), bounded as Redis 7.4 bounds
// it: at most lua.MaxEvalScripts brought in by EVAL alone, least recently
// used first out; SCRIPT LOAD pins. Each loop has its own interpreter and
// compiles a body the first time it runs it there. A loop's view is valid
// while the registry's generation (bumped by every removal: SCRIPT FLUSH,
// eviction) has not moved, so EVALSHA takes no lock.
//
// Long scripts. SCRIPT KILL and FUNCTION KILL stop a running script that
// has not written, from any loop the script does not hold; a script that
// wrote answers -UNKILLABLE. Redshard does not yet answer -BUSY to clients
// whose loop a long script holds: they wait for it.

import (
	"context"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/acl"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/lua"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// scriptEntryOverhead is what INFO counts per cached script or function
// beyond its sources (the entry and the map's share), as Redis counts its
// dict entries.
const scriptEntryOverhead = 96

// undoLimit is the biggest value a script holding some shards journals
// before writing it (shard.Undo); a bigger one makes it take every shard.
const undoLimit = 64 << 10

// Script command kinds (Cmd.script).
const (
	scriptEval = 1 + iota
	scriptEvalSHA
	scriptFCall
)

var scriptCommands = []serverCmd{
	{name: "eval", exec: cmdEval, keys: evalKeys},
	{name: "eval_ro", exec: cmdEval, keys: evalKeys},
	{name: "evalsha", exec: cmdEval, keys: evalKeys},
	{name: "evalsha_ro", exec: cmdEval, keys: evalKeys},
	{name: "script|load", exec: cmdScriptLoad},
	{name: "script|exists", exec: cmdScriptExists},
	{name: "script|flush", exec: cmdScriptFlush},
	{name: "script|kill", exec: cmdScriptKill},
	{name: "script|help", exec: cmdScriptHelp},
	{name: "script|debug", exec: cmdScriptDebug},
}

// evalKeys finds EVAL's and FCALL's declared keys: numkeys at argv[2],
// then the keys. A bad numkeys declares none (the command answers its
// error where it runs).
func evalKeys(argv [][]byte, dst []int) []int {
	if len(argv) < 3 {
		return dst
	}
	n, ok := parseNumkeys(argv[2])
	if !ok || n < 0 || n > int64(len(argv)-3) {
		return dst
	}
	for i := 0; i < int(n); i++ {
		dst = append(dst, 3+i)
	}
	return dst
}

func parseNumkeys(b []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// ---------------------------------------------------------------------------
// The registry of script bodies
// ---------------------------------------------------------------------------

type scriptEntry struct {
	sha    string
	shaB   []byte // sha's bytes, for the engine (no conversion per call)
	body   string
	flags  uint64
	loaded bool         // SCRIPT LOAD pinned it (under the registry's mu)
	used   atomic.Int64 // last use (unix ms), for the EVAL-only LRU
	wide   atomic.Bool  // learned: it reaches beyond its declared shards
}

type scriptRegistry struct {
	mu      sync.Mutex
	m       map[string]*scriptEntry
	evalN   int           // entries that only EVAL brought in
	gen     atomic.Uint64 // bumped by every removal
	count   atomic.Int64
	mem     atomic.Int64 // SHA1s and bodies
	evicted atomic.Int64
}

// get returns the entry for a lower-case SHA1, or nil.
func (r *scriptRegistry) get(sha string) *scriptEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[sha]
}

// add registers a body the caller compiled; pin is SCRIPT LOAD.
func (r *scriptRegistry) add(sha, body string, flags uint64, pin bool, now int64) *scriptEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]*scriptEntry)
	}
	e := r.m[sha]
	if e == nil {
		e = &scriptEntry{sha: sha, shaB: []byte(sha), body: body, flags: flags}
		r.m[sha] = e
		r.count.Add(1)
		r.mem.Add(int64(len(sha) + len(body)))
		if !pin {
			r.evalN++
		}
	} else if pin && !e.loaded {
		r.evalN--
	}
	if pin {
		e.loaded = true
	}
	e.used.Store(now)
	for r.evalN > lua.MaxEvalScripts {
		var old *scriptEntry
		for _, c := range r.m {
			if !c.loaded && c != e && (old == nil || c.used.Load() < old.used.Load()) {
				old = c
			}
		}
		if old == nil {
			break
		}
		delete(r.m, old.sha)
		r.evalN--
		r.count.Add(-1)
		r.mem.Add(-int64(len(old.sha) + len(old.body)))
		r.evicted.Add(1)
		r.gen.Add(1)
	}
	return e
}

func (r *scriptRegistry) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = nil
	r.evalN = 0
	r.count.Store(0)
	r.mem.Store(0)
	r.gen.Add(1)
}

// loopScripts is a loop's interpreters and its view of the registries.
type loopScripts struct {
	eng *lua.Engine // EVAL's, created at the first script
	gen uint64
	m   map[string]*scriptEntry

	fn    *lua.Engine // FCALL's (functions.go)
	fnGen uint64
	fns   map[string]*loopFunc
	// fnLibs: the libraries fn has loaded, with their functions.
	fnLibs map[*funcLib][]*loopFunc

	run scriptRun
	// mon: the MONITOR lines of the running script, fed when it ends
	// (feedScript).
	mon []byte

	// What SCRIPT KILL and FUNCTION KILL on other loops read.
	running atomic.Bool
	holds   atomic.Uint64 // the shards it holds
	caller  atomic.Pointer[Client]
	wrote   atomic.Bool
	isFn    atomic.Bool
	runID   atomic.Uint64
	// slowLogged is the run the watchdog logged as slow (its own field).
	slowLogged uint64
	runEng     atomic.Pointer[lua.Engine]
	started    atomic.Int64 // unix ms
	name       atomic.Pointer[string]
	argv       atomic.Pointer[[][]byte] // FUNCTION STATS: the command (a copy)
}

// engine returns the loop's EVAL interpreter, its view of the registry
// brought up to date.
func (l *Loop) engine() *lua.Engine {
	ls := &l.lua
	if ls.eng == nil {
		ls.eng = lua.New()
		ls.gen = l.srv.scripts.gen.Load()
		ls.m = make(map[string]*scriptEntry)
	}
	if g := l.srv.scripts.gen.Load(); g != ls.gen {
		ls.eng.Flush()
		clear(ls.m)
		ls.gen = g
	}
	return ls.eng
}

// entry finds a script by its SHA1 (any case) in the loop's view, then in
// the registry; nil when unknown.
func (l *Loop) scriptEntry(sha []byte) *scriptEntry {
	if len(sha) != 40 {
		return nil
	}
	l.engine() // brings the view up to date
	var low [40]byte
	for i, c := range sha {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	if e := l.lua.m[string(low[:])]; e != nil {
		return e
	}
	e := l.srv.scripts.get(string(low[:]))
	if e != nil {
		l.lua.m[e.sha] = e
	}
	return e
}

// ---------------------------------------------------------------------------
// A running script
// ---------------------------------------------------------------------------

// scriptRun is the state of the script a loop runs; it is the Host its
// engine calls.
type scriptRun struct {
	l       *Loop
	active  bool
	eng     *lua.Engine
	cl      *Client
	x       Exec   // the context of the commands it calls
	out     []byte // their replies
	db      int
	mask    uint64 // the shards it holds
	all     bool   // every shard
	ro      bool
	compat  bool // no shebang: Redis 6 rules
	noOOM   bool // a call that may grow memory gets -OOM until it wrote
	wrote   bool
	stop    bool // it needs a shard it does not hold: stopped, run again wide
	repl    int
	undo    shard.Undo
	notes   int // the loop's held notifications when it started
	noteLen int
	prop    propHold
	need    uint64
	now     bool
	keys    [16]int
	trkRead bool // it called a read-only command: its caller tracks its keys (tracking.go)
	// Cluster mode (cluster_route.go): the slot of the keys it touched so
	// far (-1: none yet), and whether it may touch keys of other slots.
	slot      int
	crossSlot bool
}

// propHold is what a transaction or script logs, held until it ends:
// command i is logged in database dbs[i] with n[i] arguments, argument k
// ending at ends[k] in buf.
type propHold struct {
	buf  []byte
	dbs  []int
	n    []int32
	ends []int
	dest []holdDest // per command: where it goes
	argv [][]byte
}

// holdDest is where a held command goes.
type holdDest uint8

const (
	holdAll     holdDest = iota // the AOF and the replicas
	holdPublish                 // the replicas only, in no database (PUBLISH)
	holdAOF                     // the AOF only (a script's redis.set_repl(REPL_AOF))
	holdReplica                 // the replicas only (redis.set_repl(REPL_REPLICA))
)

func (p *propHold) hold(db int, argv [][]byte) { p.holdAs(db, argv, holdAll) }

// holdReplOnly holds a PUBLISH for the replication stream only.
func (p *propHold) holdReplOnly(db int, argv [][]byte) { p.holdAs(db, argv, holdPublish) }

func (p *propHold) holdAs(db int, argv [][]byte, d holdDest) {
	p.dbs = append(p.dbs, db)
	p.n = append(p.n, int32(len(argv)))
	p.dest = append(p.dest, d)
	for _, a := range argv {
		p.buf = append(p.buf, a...)
		p.ends = append(p.ends, len(p.buf))
	}
}

func (p *propHold) reset() {
	p.dbs, p.n, p.ends, p.dest = p.dbs[:0], p.n[:0], p.ends[:0], p.dest[:0]
	if cap(p.buf) > 64<<10 {
		p.buf = nil
	} else {
		p.buf = p.buf[:0]
	}
}

// flush logs what was held (Redis 7.0's propagatePendingCommands):
// nothing, one command as it is, or a MULTI ... EXEC block, all of it at
// once so that it lands in one batch of the log. The MULTI goes in the
// first command's database, the EXEC in the last one's. A command for
// replicas only (PUBLISH) counts as one of the block, as in Redis, and
// goes in its place to the replication stream alone. With the log off
// (prod nil) it is dropped.
func (p *propHold) flush(prod *aof.Producer) {
	n := len(p.dbs)
	if prod != nil && n > 0 {
		if n > 1 {
			prod.Append(p.dbs[0], [][]byte{wordMULTI})
		}
		pos, k := 0, 0
		for i, db := range p.dbs {
			argv := p.argv[:0]
			for j := int32(0); j < p.n[i]; j++ {
				end := p.ends[k]
				argv = append(argv, p.buf[pos:end])
				pos = end
				k++
			}
			switch p.dest[i] {
			case holdPublish:
				prod.AppendReplOnly(argv)
			case holdAOF:
				prod.AppendTo(db, argv, aof.DestFile)
			case holdReplica:
				prod.AppendTo(db, argv, aof.DestRepl)
			default:
				prod.Append(db, argv)
			}
			p.argv = argv[:0]
		}
		if n > 1 {
			prod.Append(p.dbs[n-1], [][]byte{wordEXEC})
		}
	}
	p.reset()
}

// scriptHolds reports whether writes now running belong to a script of
// this loop, whose notifications and log records are held until it ends.
func (l *Loop) scriptHolds() bool { return l.lua.run.active }

// cmdEval is EVAL, EVALSHA and their _RO variants.
func cmdEval(x *Exec, argv [][]byte) {
	n, ok := parseNumkeys(argv[2])
	if !ok {
		x.Err(shard.ErrNotInt)
		return
	}
	if n > int64(len(argv)-3) {
		x.Err("ERR Number of keys can't be greater than number of args")
		return
	} else if n < 0 {
		x.Err("ERR Number of keys can't be negative")
		return
	}
	l := x.loop
	eng := l.engine()
	sha := x.cmd().script == scriptEvalSHA
	ro := strings.HasSuffix(x.cmd().name, "_ro")
	var e *scriptEntry
	if sha {
		if e = l.scriptEntry(argv[1]); e == nil {
			x.Err(lua.NoScriptErr)
			return
		}
	} else {
		s, flags, err := eng.Prepare(argv[1])
		if err != nil {
			x.Err(strings.TrimPrefix(err.Error(), "-"))
			return
		}
		if e = l.lua.m[s]; e == nil {
			e = l.srv.scripts.add(s, string(argv[1]), flags, false, x.NowMs)
			l.lua.m[s] = e
		} else {
			e.used.Store(x.NowMs)
		}
	}
	e.used.Store(x.NowMs)
	if !l.scriptPrepare(x, e.flags, ro) {
		return
	}
	l.feedScript(x, argv)
	keys, args := argv[3:3+n], argv[3+n:]
	r := l.beginScript(x, eng, e.flags, ro, &e.sha, false, argv)
	var st lua.Status
	start := len(x.Out)
	x.Out, st = eng.EvalSHA(x.Out, r, e.shaB, keys, args, x.Proto)
	if r.stop == false && st.Err && len(x.Out) > start && string(x.Out[start:]) == "-"+lua.NoScriptErr+"\r\n" {
		// Compiled elsewhere: compile it here and run.
		x.Out = x.Out[:start]
		if e.loaded {
			_, _ = eng.Load([]byte(e.body))
		} else {
			_, _, _ = eng.Prepare([]byte(e.body))
		}
		x.Out, st = eng.EvalSHA(x.Out, r, e.shaB, keys, args, x.Proto)
	}
	if l.endScript(x, start, st) {
		e.wide.Store(true)
	}
}

// cmd is the command being run by x (for handlers shared by several).
func (x *Exec) cmd() *Cmd { return x.running }

// scriptPrepare is scriptPrepareForRun's checks; it answers and returns
// false when the script must not run.
func (l *Loop) scriptPrepare(x *Exec, flags uint64, ro bool) bool {
	if flags&lua.FlagEvalCompatMode != 0 {
		return true
	}
	if flags&lua.FlagNoCluster != 0 && l.srv.clus != nil {
		x.Err("ERR Can not run script on cluster, 'no-cluster' flag is set.")
		return false
	}
	if flags&lua.FlagNoWrites == 0 {
		if l.srv.writesRefused() != "" && !l.srv.repl.isReplica.Load() && (x.cl == nil || x.cl.rm == nil) {
			x.Err("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.")
			return false
		}
		if msg := l.srv.logError(); msg != "" {
			x.Err("MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts. AOF error: " + strings.TrimPrefix(msg, "MISCONF Errors writing to the AOF file: "))
			return false
		}
		if ro {
			x.Err("ERR Can not execute a script with write flag using *_ro command.")
			return false
		}
	}
	if flags&(lua.FlagAllowOOM|lua.FlagNoWrites) == 0 && l.srv.shardBudget.Load() != 0 && !l.makeRoom(x.mask) {
		x.Err("OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'")
		return false
	}
	return true
}

// scriptMonitorClient stands for scripts in MONITOR's lines ("lua").
var scriptMonitorClient = &Client{}

// feedScript shows a script's command to MONITOR before the commands it
// runs, as Redis's evalCommand and fcallCommand feed it first (the
// command is skip_monitor, so it is not shown again after it ran).
//
// The line is held in l.lua.mon with those of the commands the script
// calls (observe), and fed when the run ends (endScript); a run that stops
// to take more shards drops them, so the rerun shows the script once.
func (l *Loop) feedScript(x *Exec, argv [][]byte) {
	l.lua.mon = l.lua.mon[:0]
	if l.srv.obs.nmon.Load() > 0 && !l.srv.load.active.Load() {
		l.lua.mon = monitorLine(l.lua.mon, time.Now(), x.DB, x.cl, argv, redactions(x.cmd(), argv))
	}
}

// beginScript sets up the loop's script run for the command x runs.
func (l *Loop) beginScript(x *Exec, eng *lua.Engine, flags uint64, ro bool, name *string, fn bool, argv [][]byte) *scriptRun {
	r := &l.lua.run
	r.l = l
	r.active = true
	r.trkRead = false
	r.eng = eng
	r.cl = x.cl
	r.db = x.DB
	r.mask = x.mask
	all := uint64(1)<<uint(len(l.srv.shards)) - 1
	r.all = x.mask&all == all
	r.compat = flags&lua.FlagEvalCompatMode != 0
	r.ro = ro || (!r.compat && flags&lua.FlagNoWrites != 0)
	r.noOOM = false
	if l.srv.shardBudget.Load() != 0 && !(!r.compat && flags&lua.FlagAllowOOM != 0) {
		r.noOOM = !l.makeRoom(x.mask)
	}
	r.wrote, r.stop = false, false
	if l.srv.clus != nil {
		r.clusterBegin(flags, argv) // cluster_route.go
	}
	r.repl = lua.ReplAll
	r.need, r.now = 0, false
	r.notes, r.noteLen = len(l.ps.noteEnts), len(l.ps.notes)
	sx := &r.x
	sx.Shards = l.srv.shards
	sx.loop, sx.srv = l, l.srv
	sx.cl = x.cl
	sx.mask = x.mask
	sx.NowMs = x.NowMs
	sx.InMulti = true
	sx.InScript = true
	sx.hop = x.hop
	ls := &l.lua
	ls.wrote.Store(false)
	ls.isFn.Store(fn)
	ls.started.Store(x.NowMs)
	ls.name.Store(name) // a field of the script's entry: no allocation
	if fn {
		cp := make([][]byte, len(argv))
		for i, a := range argv {
			cp[i] = append([]byte(nil), a...)
		}
		ls.argv.Store(&cp)
	}
	ls.runEng.Store(eng)
	ls.runID.Store(eng.RunID() + 1) // the id of the run about to start
	ls.holds.Store(x.mask)
	ls.caller.Store(x.cl)
	ls.running.Store(true) // last: the watchdog may serve our clients from now (busy.go)
	return r
}

// endScript finishes the run after the engine returned: it logs the
// script's effects, or, for a script that stopped to take more shards,
// takes back what it did and drops its reply (start is where it began in
// x.Out). It reports whether the script stopped so.
func (l *Loop) endScript(x *Exec, start int, st lua.Status) bool {
	r := &l.lua.run
	ls := &l.lua
	ls.running.Store(false)
	if bm := l.srv.busy.mask.Load(); bm != 0 {
		l.srv.busy.mask.And(^(ls.holds.Load() | 1<<uint(l.id)))
	}
	l.resumeAfterBusy() // a watchdog pass serving our clients ends first (busy.go)
	ls.caller.Store(nil)
	ls.argv.Store(nil)
	r.active = false
	r.cl = nil
	r.x.cl, r.x.hop = nil, nil
	if r.eng.Broken() {
		// A panic escaped the interpreter: replace it (lua.Engine.Broken).
		r.eng.Close()
		if r.eng == ls.eng {
			ls.eng = nil
		} else {
			ls.fn = nil
		}
	}
	if r.stop {
		l.lua.mon = l.lua.mon[:0] // this run did not happen: neither do its MONITOR lines
		r.undo.Rollback()
		l.dropNotes(r.notes, r.noteLen)
		r.prop.reset()
		x.Out = x.Out[:start]
		x.escalate = true
		return true
	}
	r.undo.Reset()
	if len(l.lua.mon) > 0 {
		l.srv.sendMonitors(l.lua.mon)
		l.lua.mon = l.lua.mon[:0]
	}
	if l.srv.persist != nil {
		r.prop.flush(l.p.prod)
	} else {
		r.prop.reset()
		if len(l.ps.noteEnts) > 0 {
			l.flushNotes(0)
		}
	}
	if st.Counted {
		x.errCounted = true
	}
	return false
}

// dropNotes drops the notifications held since a stopped script began.
func (l *Loop) dropNotes(ents, bytes int) {
	for i := ents; i < len(l.ps.noteEnts); i++ {
		l.ps.noteEnts[i] = note{}
	}
	l.ps.noteEnts = l.ps.noteEnts[:ents]
	l.ps.notes = l.ps.notes[:bytes]
}

// scriptTracked is what a script that just ran on l waits for in the log:
// its calls were tracked as they ran.
func (l *Loop) scriptTracked() (need uint64, now bool) {
	return l.lua.run.need, l.lua.run.now
}

// Call runs one redis.call / redis.pcall (scriptCall).
func (r *scriptRun) Call(dst []byte, argv [][]byte, proto int) []byte {
	l := r.l
	srv := l.srv
	if r.stop {
		return resp.AppendError(dst, "ERR script stopped")
	}
	cmd := srv.lookup(argv)
	if cmd == nil || (cmd.subs != nil && cmd.exec == nil && cmd.run == nil) {
		return r.reject(dst, cmd, "ERR Unknown Redis command called from script")
	}
	if cmd.subs != nil && len(argv) > 1 {
		return r.reject(dst, cmd, "ERR Unknown Redis command called from script")
	}
	if (cmd.arity > 0 && len(argv) != cmd.arity) || len(argv) < -cmd.arity {
		return r.reject(dst, cmd, "ERR Wrong number of args calling Redis command from script")
	}
	if cmd.flags&flagNoScript != 0 && !srv.denyScriptsOff.Load() {
		return r.reject(dst, cmd, "ERR This Redis command is not allowed from script")
	}
	if r.cl != nil && r.cl.user != nil && !r.cl.user.Load().Open() {
		if msg := r.cl.aclScriptCheck(cmd, argv); msg != "" { // acl.go
			return r.reject(dst, cmd, msg)
		}
	}
	write := cmd.flags&flagWrite != 0
	if r.ro && (write || cmd.fullName == "publish" || cmd.fullName == "spublish") {
		return r.reject(dst, cmd, "ERR Write commands are not allowed from read-only scripts.")
	}
	if write && !r.wrote {
		// Redis's scriptVerifyWriteCommandAllow: a failed BGSAVE (on a
		// master) or the AOF's error refuses the script's writes.
		if msg := srv.writesRefused(); msg != "" && !srv.repl.isReplica.Load() && (r.cl == nil || r.cl.rm == nil) {
			return r.reject(dst, cmd, msg)
		}
		if msg := srv.logError(); msg != "" {
			return r.reject(dst, cmd, msg)
		}
	}
	if write && (r.cl == nil || r.cl.rm == nil) {
		// Replication's refusals, for scripts that declare no flags
		// (Redis's scriptCall): a read-only replica, too few good replicas.
		if srv.repl.isReplica.Load() && srv.rs.readOnly.Load() {
			return r.reject(dst, cmd, "READONLY You can't write against a read only replica.")
		}
		if !r.wrote && srv.repl.m.tooFewGood.Load() {
			return r.reject(dst, cmd, "NOREPLICAS Not enough good replicas to write.")
		}
	}
	if r.noOOM && !r.wrote && cmd.flags&flagDenyOOM != 0 {
		return r.reject(dst, cmd, oomError)
	}
	if srv.clus != nil && (r.cl == nil || r.cl.rm == nil) {
		if msg := r.clusterCheck(cmd, argv); msg != "" { // cluster_route.go
			return r.reject(dst, cmd, msg)
		}
	}
	if cmd.flags&flagStale == 0 && srv.staleReplica() && (r.cl == nil || r.cl.rm == nil) {
		// A script allowed on a stale replica (allow-stale) calls a
		// command that is not (Redis's scriptVerifyAllowStale).
		return r.reject(dst, cmd, "ERR Can not execute the command on a stale replica. The command is allowed to run only if it has the 'STALE' flag.")
	}
	if cmd.fullName == "select" {
		// The script's database, not its caller's (Redis 7).
		st := &l.stats.cmds[cmd.id]
		st.calls++
		msg := ""
		id, err := strconv.ParseInt(string(argv[1]), 10, 64)
		if err != nil {
			msg = shard.ErrNotInt
		} else if srv.clus != nil && id != 0 {
			msg = errClusterSelect
		} else if id < 0 || id >= int64(len(srv.shards[0].DBs)) {
			msg = shard.ErrDBIndex
		}
		if msg != "" {
			st.failed++
			l.stats.countErrorString(msg)
			return resp.AppendError(dst, msg)
		}
		r.db = int(id)
		return append(dst, "+OK\r\n"...)
	}
	target, mask := srv.placement(cmd, argv)
	need := mask
	if mask == 0 && target >= 0 {
		need = 1 << uint(target)
	}
	if need&^r.mask != 0 {
		return r.stopRun(dst)
	}
	if write && !r.all && !r.save(cmd, argv) {
		return r.stopRun(dst)
	}
	if write {
		r.wrote = true
		l.lua.wrote.Store(true)
	}
	x := &r.x
	x.DB = r.db
	x.Proto = proto
	x.Out = r.out[:0]
	x.mask = r.mask
	x.dropReply = false
	hold := r.mask
	if hold == 0 {
		hold = 1 << uint(l.id)
	}
	for m := hold; m != 0; m &= m - 1 {
		srv.shards[bits.TrailingZeros64(m)].SetNow(x.NowMs)
	}
	l.call(x, cmd, argv)
	if cmd.flags&flagReadonly != 0 {
		r.trkRead = true
	}
	if srv.persist != nil {
		n, now := l.track(cmd, argv, hold, x.Prop.Dirty > 0)
		if n > r.need {
			r.need = n
		}
		r.now = r.now || now
	}
	r.out = x.Out
	x.Out = nil
	return append(dst, r.out...)
}

// reject answers a call refused before it ran, counted as Redis counts it.
func (r *scriptRun) reject(dst []byte, cmd *Cmd, msg string) []byte {
	st := &r.l.stats
	if cmd != nil {
		st.cmds[cmd.id].rejected++
	}
	st.countErrorString(msg)
	return resp.AppendError(dst, msg)
}

// stopRun stops the script to run it again with every shard (see the top
// of the file).
func (r *scriptRun) stopRun(dst []byte) []byte {
	r.stop = true
	r.eng.Kill(r.eng.RunID())
	return resp.AppendError(dst, "ERR script stopped")
}

// save journals the keys a write may change; false when one is too big.
func (r *scriptRun) save(cmd *Cmd, argv [][]byte) bool {
	srv := r.l.srv
	n := len(srv.shards)
	for _, k := range cmd.keyPositions(argv, r.keys[:0]) {
		if k >= len(argv) {
			continue
		}
		key := argv[k]
		if !r.undo.Save(srv.shards[shard.ShardOf(key, n)].DBs[r.db], key, undoLimit) {
			return false
		}
	}
	// Writes to another database than the script's.
	other, key := -1, []byte(nil)
	switch cmd.fullName {
	case "move":
		if id, err := strconv.Atoi(string(argv[2])); err == nil {
			other, key = id, argv[1]
		}
	case "copy":
		for j := 3; j+1 < len(argv); j++ {
			if shard.EqualFold(argv[j], "db") {
				if id, err := strconv.Atoi(string(argv[j+1])); err == nil {
					other, key = id, argv[2]
				}
			}
		}
	}
	if other >= 0 && other < len(srv.shards[0].DBs) {
		return r.undo.Save(srv.shards[shard.ShardOf(key, n)].DBs[other], key, undoLimit)
	}
	return true
}

// ACLCheckCmd answers redis.acl_check_cmd against the caller's user.
func (r *scriptRun) ACLCheckCmd(argv [][]byte) (allowed, known bool) {
	cmd := r.l.srv.lookup(argv)
	if cmd == nil || (cmd.subs != nil && cmd.exec == nil && cmd.run == nil) {
		return false, false
	}
	if (cmd.arity > 0 && len(argv) != cmd.arity) || len(argv) < -cmd.arity {
		return false, false
	}
	if r.cl != nil && r.cl.user != nil {
		if res, _ := aclCheckRules(r.cl.user.Load(), cmd, argv); res != acl.OK {
			return false, true
		}
	}
	return true, true
}

// Log is redis.log.
func (r *scriptRun) Log(level int, msg string) {
	lv := LogLevelDebug
	switch level {
	case lua.LogVerbose:
		lv = LogLevelVerbose
	case lua.LogNotice:
		lv = LogLevelNotice
	case lua.LogWarning:
		lv = LogLevelWarning
	}
	r.l.srv.log.Raw(lv, msg)
}

// SetRepl is redis.set_repl: the script's next writes go to the AOF and
// the replicas (REPL_ALL), one of them (REPL_AOF, REPL_REPLICA), or
// neither (REPL_NONE), as Redis's PROPAGATE_AOF and PROPAGATE_REPL. They
// stay in the script's one MULTI ... EXEC block in both.
func (r *scriptRun) SetRepl(flags int) { r.repl = flags }

// propagate holds a write a script ran (srv.propagate hands it over).
func (r *scriptRun) propagate(x *Exec, argv [][]byte) {
	if x.Prop.ReplOnly {
		if r.repl&lua.ReplReplica != 0 {
			r.prop.holdReplOnly(x.DB, argv) // PUBLISH: to replicas only
		}
		return
	}
	var d holdDest
	switch r.repl & lua.ReplAll {
	case 0:
		return
	case lua.ReplAOF:
		d = holdAOF
	case lua.ReplReplica:
		d = holdReplica
	}
	if !x.Prop.Custom {
		r.prop.holdAs(x.DB, argv, d)
		return
	}
	for _, c := range x.Prop.Cmds {
		r.prop.holdAs(x.DB, c, d)
	}
}

// ---------------------------------------------------------------------------
// SCRIPT
// ---------------------------------------------------------------------------

func cmdScriptLoad(x *Exec, argv [][]byte) {
	l := x.loop
	eng := l.engine()
	sha, err := eng.Load(argv[2])
	if err != nil {
		x.Err(strings.TrimPrefix(err.Error(), "-"))
		return
	}
	flags, _ := eng.Flags([]byte(sha))
	e := l.srv.scripts.add(sha, string(argv[2]), flags, true, x.NowMs)
	l.lua.m[sha] = e
	x.BulkStr(sha)
}

func cmdScriptExists(x *Exec, argv [][]byte) {
	x.Array(len(argv) - 2)
	for _, s := range argv[2:] {
		if x.loop.scriptEntry(s) != nil {
			x.Int(1)
		} else {
			x.Int(0)
		}
	}
}

func cmdScriptFlush(x *Exec, argv [][]byte) {
	if len(argv) > 3 || len(argv) == 3 && !shard.EqualFold(argv[2], "sync") && !shard.EqualFold(argv[2], "async") {
		x.Err("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	x.srv.scripts.flush()
	x.srv.eachLoop(func(l *Loop) { l.engine() }) // each interpreter drops its scripts now
	x.OK()
}

// eachLoop runs f on every loop's goroutine: at once for the calling
// loop, by a task for the others (SCRIPT FLUSH and FUNCTION FLUSH give the
// interpreters' memory back without waiting for their next script).
func (srv *Server) eachLoop(f func(l *Loop)) {
	for _, l := range srv.loops {
		if l.el == nil {
			continue
		}
		l := l
		_ = l.post(gnet.RunnableFunc(func(context.Context) error {
			if l.lua.eng != nil || l.lua.fn != nil {
				f(l)
			}
			return nil
		}))
	}
}

func cmdScriptKill(x *Exec, argv [][]byte) { replyKill(x, x.srv.killScript(false)) }

func replyKill(x *Exec, msg string) {
	if msg != "" {
		x.Err(msg)
		return
	}
	x.OK()
}

// killScript is SCRIPT KILL (fn false) and FUNCTION KILL (scriptKill): it
// returns the error to answer, or "" when it killed.
func (srv *Server) killScript(fn bool) string {
	found := false
	for _, l := range srv.loops {
		ls := &l.lua
		if !ls.running.Load() {
			continue
		}
		found = true
		if ls.wrote.Load() {
			return "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
		}
		if isFn := ls.isFn.Load(); isFn != fn {
			if isFn {
				return busyFuncErr
			}
			return busyEvalErr
		}
		if eng := ls.runEng.Load(); eng != nil {
			eng.Kill(ls.runID.Load())
		}
	}
	if !found {
		return "NOTBUSY No scripts in execution right now."
	}
	return ""
}

func cmdScriptHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	})
}

// cmdScriptDebug: redshard has no script debugger. NO is accepted (it is
// the state every client is in); YES and SYNC are refused.
func cmdScriptDebug(x *Exec, argv [][]byte) {
	switch {
	case shard.EqualFold(argv[2], "no"):
		x.OK()
	case shard.EqualFold(argv[2], "yes"), shard.EqualFold(argv[2], "sync"):
		x.Err("ERR redshard has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported")
	default:
		x.Err("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}
