package server

// MULTI/EXEC/DISCARD and WATCH/UNWATCH (Redis's multi.c).
//
// Queueing. MULTI sets the client's multi state; from then on route()
// (commands.go) hands every checked command to routeMulti, which copies its
// arguments into the client's queue and answers +QUEUED without running it.
// EXEC, DISCARD, MULTI, WATCH, QUIT and RESET are not queued, as in Redis.
// A command rejected while queueing (unknown, arity, NOAUTH, "not allowed
// inside a transaction" for no-multi commands, MISCONF, LOADING: anything
// check() refuses) flags the transaction (Client.reject calls multiReject),
// and EXEC then answers -EXECABORT and discards it. Errors of the commands
// themselves, at EXEC time, roll nothing back.
//
// Where EXEC runs. While queueing, the shards each command would take
// (placement) are OR-ed into one mask, and a command that runs on the home
// loop (SELECT, CLIENT ..., CONFIG ..., AUTH, HELLO: it changes the
// client) adds the home shard. EXEC is then routed like one command over
// that mask (Dragonfly's idea: a transaction takes, ahead of running, the
// union of the shards it touches), with the existing machinery of
// dispatch.go:
//   - no shard, or only the home shard: EXEC runs inline, no hop, no park;
//   - one other shard: a hop to its loop;
//   - several shards (or a command that needs all of them: FLUSHALL,
//     DBSIZE, INFO, CLIENT LIST, ...): a cross-shard transaction, whose
//     executor runs with every shard of the mask taken (their loops parked),
//     so no client on any loop can see part of the EXEC (contract 3).
// Keyless commands that touch nothing (PING, ECHO, TIME, ...) add no shard
// and run on whichever loop executes. Home-loop commands run in the
// executor too: the home loop is then parked (its shard is in the mask) or
// is the executor, so the client's state is safe to change, and after each
// of them the executor takes the client's db and protocol again (so SELECT
// inside MULTI changes the database of the commands queued after it).
//
// Running. cmdExec runs each queued command through Loop.call (statistics,
// errors, propagation as for any command) with Ctx.InMulti set, so blocking
// commands answer at once as if their timeout had expired; the replies form
// EXEC's array. Under the log each command is tracked as it runs (its
// writes marked pending, its reads waiting for pending writes), and EXEC's
// reply waits, like any reply, until the log holds what it depends on.
//
// Propagation (Redis 7.0's propagatePendingCommands). The commands an EXEC
// logs are held while it runs and then go to the executor's producer as one
// MULTI ... EXEC block, within one batch of the log (so one record,
// replayed all or nothing); an EXEC that logs a single command logs it
// bare, and one that logs nothing logs nothing. Holding them to the end
// also keeps the block whole when a command inside submits the loop's
// records (CONFIG SET appendonly no); BGREWRITEAOF inside EXEC answers
// "scheduled" and makes its cut after the block, as Redis defers it, so the
// rewrite's image never holds half of a block that the new log replays.
//
// WATCH. The registry lives in the shards (shard/watch.go): WATCH is routed
// by its keys like a multi-key read, and registers a fresh shard.Watcher
// of the client's on each key's shard, recording each key's expiry at that
// moment. Any change to the key on its shard (write, delete, expiry,
// eviction, FLUSHDB, FLUSHALL, SWAPDB, RENAME, MOVE) sets the watcher's
// atomic dirty flag, whichever loop the watcher's client lives on. EXEC
// fails with a null array if the flag is set or a watched key's recorded
// expiry has passed (Redis 7.0's isWatchedKeyExpired), without visiting
// the watched shards. EXEC, DISCARD, UNWATCH, RESET and closing drop the
// session: the registrations on shards the current goroutine owns are
// removed at once, the others by a task sent to their loop; a registration
// that lingers meanwhile can only mark the finished session's watcher.
//
// maxmemory. While queueing, a command is refused with -OOM (flagging the
// transaction) when evicting from the home shard cannot make room
// (memory.go); EXEC with a
// denyoom command makes room on all of its shards first and is refused as a
// whole (-EXECABORT ... OOM) if one cannot, as Redis checks EXEC once with
// the queued commands' flags; the queued commands are not checked again.
//
// Restrictions (documented differences): CLIENT REPLY OFF/SKIP queued
// inside MULTI is not supported (in Redis it truncates EXEC's array; here
// it may drop EXEC's whole reply); the queue-time OOM check sees only the
// home shard (Redis's is global).

import (
	"context"
	"math/bits"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/shard"
)

var multiCommands = []serverCmd{
	{name: "multi", exec: cmdMulti, home: true},
	{name: "exec", exec: cmdExec, home: true}, // routed by routeMulti while in MULTI
	{name: "discard", exec: cmdDiscard, home: true},
	{name: "watch", exec: cmdWatch}, // routed by its keys
	{name: "unwatch", exec: cmdUnwatch, home: true},
}

const (
	errExecAbort   = "EXECABORT Transaction discarded because of previous errors."
	errNestedMulti = "ERR MULTI calls can not be nested"
	errNoMulti     = "ERR Command not allowed inside a transaction"
)

// multiState is a client's transaction and WATCH state. It is owned like
// the client: by its home loop, or by the loop running its hop (EXEC,
// WATCH) while the hop is out.
type multiState struct {
	active  bool // between MULTI and EXEC/DISCARD
	aborted bool // a command was rejected while queueing: EXECABORT

	// The queue: command i has nargs[i] arguments, argument k ends at
	// ends[k] in buf. Arguments are copied because the query buffer they
	// came in is reused.
	cmds  []*Cmd
	nargs []int32
	ends  []int
	buf   []byte
	argv  [][][]byte // the queue as argv, built by EXEC

	flags cmdFlags // union of the queued commands' flags
	mask  uint64   // shards their keys route to
	home  bool     // one of them runs on the home loop

	// While EXEC runs, on its executor.
	running bool
	runMask uint64 // the shards EXEC's loop may touch
	need    uint64 // what EXEC's reply waits for in the log (Loop.track)
	now     bool
	// What EXEC logs, held until it ends (propagate, endPropagation).
	prop propHold
	// BGREWRITEAOF ran inside EXEC: the cut is made after EXEC's block is
	// logged, so that the image and the log agree (Redis schedules it too).
	rewriteAfter bool

	watch *watchState // nil: nothing watched
}

// watchState is one WATCH session: the watcher the shards mark, and the
// keys it watches (for EXEC's expiry check and for unregistering).
type watchState struct {
	w        *shard.Watcher
	keys     []watchedKey
	keyBytes int // the length of every key, the client's own copies (multiMem)
}

type watchedKey struct {
	db, shard int
	key       []byte
	expAt     int64 // expiry when watched (0: none, missing or already expired)
}

// routeMulti is route() for a client in MULTI: it queues the command and
// answers +QUEUED (done), or says where a command that is not queued runs.
func (cl *Client) routeMulti(cmd *Cmd, argv [][]byte) (target int, mask uint64, done bool) {
	tx := &cl.multi
	switch cmd.fullName {
	case "exec":
		return cl.routeExec()
	case "discard", "quit", "reset":
		target, mask = cl.placement(cmd, argv)
		return target, mask, false
	}
	cl.lastCmd = cmd.fullName
	if cl.srv.shardBudget.Load() != 0 && !cl.loop.makeRoom(1<<uint(cl.loop.id)) {
		// Redis refuses anything but EXEC, DISCARD, QUIT and RESET in MULTI
		// while out of memory. Only the home shard can be asked here; EXEC
		// checks all of its shards.
		cl.reject(cmd, oomError)
		return 0, 0, true
	}
	switch cmd.fullName {
	case "watch":
		return -1, 0, false // answered at home: not allowed inside MULTI
	case "multi":
		return -1, 0, false // answered at home: nested
	}
	if !tx.aborted {
		// No sense in growing the queue of a transaction that will abort.
		tx.add(cmd, argv)
		t, m := cl.placement(cmd, argv)
		if cmd.script != 0 && len(cl.srv.shards) > 1 {
			m = 1<<uint(len(cl.srv.shards)) - 1 // EXEC cannot run a script again (script.go)
		}
		switch {
		case m != 0:
			tx.mask |= m
		case t >= 0:
			tx.mask |= 1 << uint(t)
		case cmd.home:
			tx.home = true
		}
		tx.flags |= cl.effectiveFlags(cmd, argv) // a no-writes script neither writes nor replicates
	}
	start := len(cl.out)
	cl.out = append(cl.out, "+QUEUED\r\n"...)
	cl.replyDone(start) // CLIENT REPLY OFF/SKIP
	return 0, 0, true
}

// routeExec places EXEC over the shards of the queued commands (check has
// applied Redis's checks with their flags, execFlags).
func (cl *Client) routeExec() (target int, mask uint64, done bool) {
	tx := &cl.multi
	home := cl.loop.id
	mask = tx.mask
	if tx.home {
		mask |= 1 << uint(home)
	}
	if tx.aborted || len(tx.cmds) == 0 || mask == 0 {
		tx.runMask = 1 << uint(home)
		return home, 0, false
	}
	if mask&(mask-1) == 0 {
		tx.runMask = mask
		return bits.TrailingZeros64(mask), 0, false
	}
	tx.runMask = mask
	return -1, mask, false
}

// execFlags are EXEC's flags for check, with those of the queued
// commands (Redis's mstate.cmd_flags and cmd_inv_flags): a write if one
// of them writes; stale and loading only if all of them are.
func (tx *multiState) execFlags(f cmdFlags) cmdFlags {
	f |= tx.flags & flagWrite
	for _, c := range tx.cmds {
		f &= c.flags | ^(flagStale | flagLoading)
	}
	return f
}

// multiReject is called for every command rejected before running: in
// MULTI the transaction is flagged, and a rejected EXEC aborts it (Redis's
// flagTransaction and execCommandAbort). It returns the error to answer.
func (cl *Client) multiReject(cmd *Cmd, msg string) string {
	if cmd != nil && cmd.fullName == "exec" {
		cl.discardMulti(1 << uint(cl.loop.id))
		if isClusterRedirect(msg) {
			return msg // answered bare, as Redis's clusterRedirectClient (cluster_route.go)
		}
		if len(msg) > 4 && msg[:4] == "ERR " {
			msg = msg[4:] // Redis's formatted rejections carry no code here
		}
		return "EXECABORT Transaction discarded because of: " + msg
	}
	if cl.multi.active {
		cl.multi.aborted = true
	}
	return msg
}

// add copies a command into the queue.
func (tx *multiState) add(cmd *Cmd, argv [][]byte) {
	tx.cmds = append(tx.cmds, cmd)
	tx.nargs = append(tx.nargs, int32(len(argv)))
	for _, a := range argv {
		tx.buf = append(tx.buf, a...)
		tx.ends = append(tx.ends, len(tx.buf))
	}
}

// build makes the queue's argv, reusing the slices of earlier transactions.
func (tx *multiState) build() [][][]byte {
	tx.argv = tx.argv[:0]
	pos, k := 0, 0
	for i := range tx.cmds {
		var a [][]byte
		if i < cap(tx.argv) {
			a = tx.argv[:i+1][i][:0]
		}
		for j := int32(0); j < tx.nargs[i]; j++ {
			end := tx.ends[k]
			a = append(a, tx.buf[pos:end:end])
			pos = end
			k++
		}
		tx.argv = append(tx.argv, a)
	}
	return tx.argv
}

// discardMulti leaves MULTI and ends the WATCH session (Redis's
// discardTransaction); owned is the set of shards the calling goroutine
// may touch.
func (cl *Client) discardMulti(owned uint64) {
	tx := &cl.multi
	tx.active, tx.aborted = false, false
	tx.cmds = tx.cmds[:0]
	tx.nargs = tx.nargs[:0]
	tx.ends = tx.ends[:0]
	for i := range tx.argv {
		tx.argv[i] = tx.argv[i][:0]
	}
	tx.argv = tx.argv[:0]
	if cap(tx.buf) > 64<<10 {
		tx.buf = nil
	} else {
		tx.buf = tx.buf[:0]
	}
	tx.flags, tx.mask, tx.home = 0, 0, false
	cl.unwatchAll(owned)
}

// unwatchAll ends the WATCH session: registrations on the shards in owned
// are dropped here, the others by a task on their loops.
func (cl *Client) unwatchAll(owned uint64) {
	ws := cl.multi.watch
	if ws == nil {
		return
	}
	cl.multi.watch = nil
	var remote map[int][]watchedKey
	for _, k := range ws.keys {
		if owned&(1<<uint(k.shard)) != 0 {
			cl.srv.shards[k.shard].Unwatch(k.db, k.key, ws.w)
			continue
		}
		if remote == nil {
			remote = make(map[int][]watchedKey)
		}
		remote[k.shard] = append(remote[k.shard], k)
	}
	for s, keys := range remote {
		srv, s, keys, w := cl.srv, s, keys, ws.w
		if srv.loops[s].el == nil {
			continue // unit tests: no event loops
		}
		_ = srv.loops[s].post(gnet.RunnableFunc(func(context.Context) error {
			sh := srv.loops[s].sh
			for _, k := range keys {
				sh.Unwatch(k.db, k.key, w)
			}
			return nil
		}))
	}
}

// watchDirty reports whether a watched key changed or expired since WATCH.
func (ws *watchState) dirty(now int64) bool {
	if ws.w.Dirty() {
		return true
	}
	for _, k := range ws.keys {
		if k.expAt != 0 && k.expAt <= now {
			return true
		}
	}
	return false
}

// multiClose frees a closing client's state; a client whose hop is out is
// freed when the hop comes back (hopDone).
func (cl *Client) multiClose() {
	if cl.hopOut {
		return
	}
	cl.discardMulti(1 << uint(cl.loop.id))
}

// multiReset is RESET's part: leave MULTI, unwatch.
func (cl *Client) multiReset() { cl.discardMulti(1 << uint(cl.loop.id)) }

func cmdMulti(x *Exec, argv [][]byte) {
	if x.cl.multi.active {
		x.Err(errNestedMulti)
		return
	}
	x.cl.multi.active = true
	x.OK()
}

func cmdDiscard(x *Exec, argv [][]byte) {
	if !x.cl.multi.active {
		x.Err("ERR DISCARD without MULTI")
		return
	}
	x.cl.discardMulti(1 << uint(x.loop.id))
	x.OK()
}

func cmdWatch(x *Exec, argv [][]byte) {
	tx := &x.cl.multi
	if tx.active {
		x.Err("ERR WATCH inside MULTI is not allowed")
		return
	}
	ws := tx.watch
	if ws != nil && ws.w.Dirty() {
		x.OK() // no point in watching more: EXEC will fail anyway
		return
	}
	if ws == nil {
		ws = &watchState{w: new(shard.Watcher)}
		tx.watch = ws
	}
	n := len(x.Shards)
next:
	for _, key := range argv[1:] {
		for _, k := range ws.keys {
			if k.db == x.DB && string(k.key) == string(key) {
				continue next
			}
		}
		exp := x.DBOf(key).Watch(key, ws.w)
		ws.keys = append(ws.keys, watchedKey{db: x.DB, shard: shard.ShardOf(key, n), key: append([]byte(nil), key...), expAt: exp})
		ws.keyBytes += len(key)
	}
	x.OK()
}

func cmdUnwatch(x *Exec, argv [][]byte) {
	x.cl.unwatchAll(1 << uint(x.loop.id))
	x.OK()
}

// cmdExec runs the queued commands on the loop EXEC was routed to, every
// shard they need being taken (see routeExec).
func cmdExec(x *Exec, argv [][]byte) {
	cl := x.cl
	tx := &cl.multi
	tx.need, tx.now = 0, false
	if !tx.active {
		x.Err("ERR EXEC without MULTI")
		return
	}
	owned := tx.runMask
	if tx.aborted {
		x.Err(errExecAbort)
		cl.discardMulti(owned)
		return
	}
	if ws := tx.watch; ws != nil && ws.dirty(x.NowMs) {
		x.NullArray()
		cl.discardMulti(owned)
		return
	}
	l := x.loop
	if tx.flags&flagDenyOOM != 0 && l.srv.shardBudget.Load() != 0 && !l.makeRoom(owned) {
		// Redis's processCommand refuses such an EXEC as a whole; the
		// queued commands then run without a check of their own.
		x.Err("EXECABORT Transaction discarded because of: " + oomError)
		cl.discardMulti(owned)
		return
	}
	cmds, all := tx.cmds, tx.build()
	drop := x.dropReply // CLIENT REPLY OFF/SKIP applies to EXEC's whole reply
	x.dropReply = false
	tx.running = true
	x.InMulti = true
	x.Array(len(cmds))
	for i, cmd := range cmds {
		if msg := cl.aclRecheck(cmd, all[i]); msg != "" { // acl.go
			x.Err(msg)
			continue
		}
		l.call(x, cmd, all[i])
		if l.srv.persist != nil { // (CONFIG SET appendonly may change it)
			need, now := l.track(cmd, all[i], owned, x.Prop.Dirty > 0)
			if need > tx.need {
				tx.need = need
			}
			tx.now = tx.now || now
		}
		if cmd.home {
			// It may have changed the client: SELECT, HELLO, CLIENT NO-TOUCH.
			x.DB, x.Proto = cl.db, cl.proto
			for m := owned; m != 0; m &= m - 1 {
				l.srv.shards[bits.TrailingZeros64(m)].NoTouch = cl.noTouch
			}
		}
	}
	var prod *aof.Producer
	if l.srv.persist != nil {
		prod = l.p.prod
	}
	tx.endPropagation(prod)
	if tx.rewriteAfter {
		// BGREWRITEAOF inside EXEC: every loop is parked (it needs all
		// shards), EXEC's block is in this loop's records; cut now.
		tx.rewriteAfter = false
		if l.srv.persist != nil {
			l.p.wrote |= 1<<uint(len(l.srv.shards)) - 1
			l.submit()
		}
		if err := l.srv.startRewrite(); err != nil {
			l.srv.log.Warningf("Background append only file rewriting scheduled by EXEC failed to start: %s", err.Error())
		}
	}
	x.InMulti = false
	tx.running = false
	x.dropReply = drop
	x.Prop.Reset() // the commands logged themselves; EXEC logs nothing more
	cl.discardMulti(owned)
}

// execTracked is what an EXEC that just ran on l waits for in the log: its
// commands were tracked one by one (Loop.track calls it for EXEC).
func (l *Loop) execTracked() (need uint64, now bool) {
	if cl := l.x.cl; cl != nil {
		return cl.multi.need, cl.multi.now
	}
	return 0, false
}

// propagate logs a command run inside EXEC (srv.propagate hands it over):
// it is held until EXEC ends.
func (tx *multiState) propagate(x *Exec, argv [][]byte) {
	if x.Prop.ReplOnly {
		tx.prop.holdReplOnly(x.DB, argv)
		return
	}
	if !x.Prop.Custom {
		tx.prop.hold(x.DB, argv)
		return
	}
	for _, c := range x.Prop.Cmds {
		tx.prop.hold(x.DB, c)
	}
}

// endPropagation logs what EXEC held (propHold.flush, script.go), all of it
// at once, so that it lands in one batch of the log even when a command of
// the transaction submitted the loop's records (CONFIG SET appendonly).
// With the log off (p nil) it is dropped.
func (tx *multiState) endPropagation(p *aof.Producer) {
	if p == nil {
		tx.prop.reset()
		return
	}
	tx.prop.flush(p)
}

// multiFlags adds CLIENT LIST's transaction flags: x in MULTI, d when a
// watched key changed.
func (cl *Client) multiFlags(fl []byte) []byte {
	if cl.multi.active {
		fl = append(fl, 'x')
	}
	if ws := cl.multi.watch; ws != nil && ws.w.Dirty() {
		fl = append(fl, 'd')
	}
	return fl
}

// multiCount is CLIENT LIST's multi= field: queued commands, -1 outside MULTI.
func (cl *Client) multiCount() int {
	if !cl.multi.active {
		return -1
	}
	return len(cl.multi.cmds)
}

// multiMem is CLIENT LIST's multi-mem= field: what the queue and the
// watched keys hold (Redis's multiStateMemOverhead).
func (cl *Client) multiMem() int {
	tx := &cl.multi
	n := 0
	if tx.active {
		n = len(tx.buf) + len(tx.cmds)*(8+4) + len(tx.ends)*8
	}
	if ws := tx.watch; ws != nil {
		n += len(ws.keys)*int(unsafe.Sizeof(watchedKey{})) + ws.keyBytes
	}
	return n
}
