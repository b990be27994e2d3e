package server

// Blocking commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP (see blockingSpecs).
//
// A blocking command runs like any other: inline, as a hop, or as a
// cross-shard transaction when its keys live on several shards. Its
// handler serves at once when it can. When it cannot, it calls
// shard.Ctx.Block and replies nothing; the loop that ran it — which holds
// the shards of all its keys — then registers a waiter:
//
//   - The waiter is queued under (db, key) in the registry of the shard of
//     each key it waits on. A registry is owned like its shard: by the
//     shard's loop, or by a transaction's executor that has taken the
//     shard. Registration happens in the same step as the handler's
//     "nothing there", while the command holds every shard of its keys, so
//     no push can slip in between (no lost wake-up), and a client that
//     INFO or CLIENT LIST shows blocked is in line on all its keys.
//   - The order of a line. A waiter carries a stamp: the monotonic time at
//     which its home loop took the command up (sent it to the key's shard,
//     or ran it there), and a line is kept sorted by stamp. A waiter that
//     registers before another is stamped before it unless the other was
//     sent to the shard earlier and arrived later — so a client that
//     blocks only after seeing another one blocked is always behind it
//     (first blocked, first served), and two clients that block at almost
//     the same moment from different loops are served in the order their
//     loops read them rather than in the order their hops happened to
//     arrive, which is the order a single-threaded Redis would use. (What
//     no loop can see is when the kernel received the bytes: a loop whose
//     thread wakes late reads late, so two blocks sent microseconds apart
//     on connections of different loops, with nothing observed between
//     them, may still be served in either order.)
//   - The client's home loop marks it blocked (Client.blocked): its later
//     input queues, unparsed, exactly as while a hop is out (order). A
//     timer (time.AfterFunc) brings the timeout to the home loop.
//
// Waking up. When a list or sorted set key is added (db insert), a stream
// gets an entry, or a stream key is deleted, overwritten or flushed (its
// XREADGROUP waiters answer that it no longer exists, blockSpec.gone), the
// shard calls OnReady; if the key has waiters, the registry records it as ready.
// Every loop that runs commands (runLocal, runRemote) serves the ready keys
// of the shards it holds right after each command — after the whole of
// EXEC or a script, since those are one command here — so no other
// command sees the data first (Redis's handleClientsBlockedOnKeys). A
// ready key's waiters are served first blocked, first served, while the
// key holds data of the type they wait for:
//
//   - Claim. A waiter may sit in the queues of several shards, served by
//     several loops at once; its state moves waiting → claimed by a CAS,
//     so exactly one loop serves it. Registrations of a waiter that is no
//     longer waiting are stale: they are skipped and dropped lazily (when
//     their key is served, and by the cron's sweep).
//   - Serve. The claiming loop runs the client's command again with
//     Ctx.ServeKey set: the handler pops from that key only (Redis 7.0 pops
//     from the key that became ready) and logs what Redis propagates (LPOP
//     key, LMOVE ..., LPOP key n). If the handler blocks again (the key has
//     another type), the waiter goes back to waiting.
//   - Hand-off. The reply is kept in the waiter and sent to the client's
//     home loop (EventLoop.Execute), which appends it, unblocks the client
//     and goes on with its queued input. With the AOF on, the hand-off waits
//     for the serving loop's next log submission, which holds the pop: the
//     waiter takes that batch's sequence as its need, so under "always" the
//     reply is held until the fsync that covers the pop (and the push
//     before it, which is in the same or an earlier batch) — contract 4.
//   - A serve that needs a shard the serving loop does not hold (BLMOVE
//     whose destination lives on another shard) is claimed and handed home
//     as a retry: the home loop runs the command again as an ordinary
//     cross-shard transaction (atomic, contract 3). Until it has run, the
//     waiter keeps its place and its lines are held: no waiter behind it is
//     served, since the data is its (Redis would have moved it already).
//     The transaction holds the shards of all its keys and ends the hold:
//     if the command blocks again (a command that reached the source shard
//     first took the element), the new waiter takes the old one's places
//     with its stamp and deadline; else the old places go and the lines
//     are served on. A client that goes away or is unblocked before its
//     retry ran releases the lines itself (releaseLines).
//
// Ending without data (on the home loop, which owns the client): a timeout,
// CLIENT UNBLOCK, or the client going away moves the waiter waiting →
// cancelled by a CAS; if a loop has claimed it meanwhile, the serve wins
// and delivers (or, if it fails after the deadline, sends the timeout home
// again). Inside MULTI/EXEC (Ctx.InMulti) the handlers never block: they
// answer as on a timeout.

import (
	"context"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// blockSpec says what a blocking command waits for.
type blockSpec struct {
	// typ is the value type that can serve it: a ready key of another
	// type leaves it blocked without running it.
	typ uint8
	// gone: a key deleted, or given another type, serves it too (the
	// handler answers its error): XREADGROUP, whose group went with the key.
	gone bool
}

// blockingSpecs lists the blocking commands. Adding one is a row here plus
// a handler that honours Ctx.ServeKey and calls Ctx.Block.
var blockingSpecs = map[string]blockSpec{
	"blpop":      {typ: shard.TypeList},
	"brpop":      {typ: shard.TypeList},
	"blmove":     {typ: shard.TypeList},
	"brpoplpush": {typ: shard.TypeList},
	"blmpop":     {typ: shard.TypeList},
	"bzpopmin":   {typ: shard.TypeZSet},
	"bzpopmax":   {typ: shard.TypeZSet},
	"bzmpop":     {typ: shard.TypeZSet},
	"xread":      {typ: shard.TypeStream},
	"xreadgroup": {typ: shard.TypeStream, gone: true},
}

// Waiter states.
const (
	wWaiting   int32 = iota
	wClaimed         // a loop is serving it
	wDone            // served: out and need are set
	wRetry           // to be run again from home as a transaction
	wCancelled       // timed out, unblocked, or its client went away
)

// waiter is one blocked command.
type waiter struct {
	// Set at registration, read-only afterwards.
	cl       *Client
	cmd      *Cmd
	spec     blockSpec
	argv     [][]byte // own copy
	keys     [][]byte // the keys waited on (own copy)
	db       int
	proto    int
	deadline int64 // unix ms, 0: none
	// stamp orders the waiters of a key: the monotonic time (nanotime) at
	// which its client's command was taken up on its home loop — sent to
	// the key's shard, or run there. A retried command keeps its stamp.
	stamp int64

	state atomic.Int32

	// Written by the serving loop before the state becomes wDone.
	out  []byte
	need uint64

	// A keyless waiter's (WAIT, repl_wait.go): the reply of a timeout or
	// CLIENT UNBLOCK ... TIMEOUT, and what to do when the wait ends.
	cancelReply func([]byte) []byte
	onEnd       func()

	// Home loop only.
	timer      *time.Timer
	delivered  bool
	unblockErr bool   // CLIENT UNBLOCK ... ERROR
	unblockMsg string // the error of a forced unblock (the server became a replica)
	postponed  bool   // held by CLIENT PAUSE (pause.go)
	deliverRun gnet.Runnable
	timeoutRun gnet.Runnable
}

// blockRegistry is one shard's waiters, by database and key.
type blockRegistry struct {
	dbs   []map[string]*waitQueue
	regs  int // registrations, live or stale
	ready []*waitQueue
}

type waitQueue struct {
	db    int
	key   string
	ws    []*waiter
	ready bool // in the registry's ready list
}

// serverBlocking is the server's blocking state.
type serverBlocking struct {
	regs    []*blockRegistry // per shard
	clients atomic.Int64     // blocked clients (INFO blocked_clients)
	timed   atomic.Int64     // of which with a timeout (clients_in_timeout_table)
}

// loopBlocking is a loop's blocking state.
type loopBlocking struct {
	x         Exec      // the context blocked commands are served in
	served    []*waiter // served, handed home at the next log submission
	lastSweep int64
}

const (
	unblockedError = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
)

// initBlocking makes the registries; newShard installs the ready hook.
func (srv *Server) initBlocking(n int) {
	srv.blk.regs = make([]*blockRegistry, n)
	for i := range srv.blk.regs {
		srv.blk.regs[i] = &blockRegistry{dbs: make([]map[string]*waitQueue, srv.cfg.Databases())}
	}
}

// readyHook is the shard's OnReady: key may serve its waiters now.
func (srv *Server) readyHook(sh *shard.Shard) func(db *shard.DB, key []byte) {
	return func(db *shard.DB, key []byte) {
		if sh.Loading || srv.blk.regs == nil {
			return
		}
		r := srv.blk.regs[sh.ID]
		if r.regs == 0 {
			return
		}
		m := r.dbs[db.ID]
		if m == nil {
			return
		}
		if q := m[string(key)]; q != nil && !q.ready {
			q.ready = true
			r.ready = append(r.ready, q)
		}
	}
}

// swapHook is the shard's OnSwapDB: after SWAPDB, every waited-for key of
// the two databases that now holds a list, sorted set or stream is ready,
// and so is every missing one an XREADGROUP waits on.
func (srv *Server) swapHook(sh *shard.Shard) func(a, b int) {
	return func(a, b int) { srv.rescan(sh, a, b) }
}

// flushHook is the shard's OnFlushDB.
func (srv *Server) flushHook(sh *shard.Shard) func(db int) {
	return func(db int) { srv.rescan(sh, db, db) }
}

// rescan marks ready the waited-for keys of databases a and b of sh that
// may serve their waiters (Redis's scanDatabaseForReadyKeys and
// scanDatabaseForDeletedStreams).
func (srv *Server) rescan(sh *shard.Shard, a, b int) {
	if srv.blk.regs == nil {
		return
	}
	r := srv.blk.regs[sh.ID]
	if r.regs == 0 {
		return
	}
	ids := [2]int{a, b}
	for i, id := range ids {
		if i == 1 && b == a {
			break
		}
		db := sh.DBs[id]
		for _, q := range r.dbs[id] {
			if q.ready {
				continue
			}
			// Peek, not Lookup: as Redis's dictFind here, a key that
			// expired is not deleted now (its DEL would reach the log
			// before the SWAPDB or FLUSHDB that runs this); serving the
			// waiters expires it, after the command's record.
			slot := db.Peek([]byte(q.key))
			if slot < 0 {
				if q.gone() {
					q.ready = true
					r.ready = append(r.ready, q)
				}
				continue
			}
			if t := db.Type(slot); t == shard.TypeList || t == shard.TypeZSet || t == shard.TypeStream || q.gone() {
				q.ready = true
				r.ready = append(r.ready, q)
			}
		}
	}
}

// gone reports whether a waiter of q is served by its key going away.
func (q *waitQueue) gone() bool {
	for _, w := range q.ws {
		if w.spec.gone {
			return true
		}
	}
	return false
}

// block registers the command x just ran, which called Block, on the
// shards of its keys (all held by the running loop), and returns the waiter.
// stamp places it in line (waiter.stamp). prev, if not nil, is the waiter
// this command is a retry of: the new waiter takes its places in line.
func (l *Loop) block(cl *Client, cmd *Cmd, argv [][]byte, x *Exec, stamp int64, prev *waiter) *waiter {
	srv := l.srv
	w := &waiter{cl: cl, cmd: cmd, db: x.DB, proto: x.Proto, deadline: x.BlockDeadline, stamp: stamp}
	w.spec = blockingSpecs[cmd.fullName]
	if x.BlockArgv != nil {
		argv = x.BlockArgv // XREAD $ resolved
	}
	size := 0
	for _, a := range argv {
		size += len(a)
	}
	for _, k := range x.BlockKeys {
		size += len(k)
	}
	buf := make([]byte, 0, size)
	w.argv = make([][]byte, len(argv))
	for i, a := range argv {
		buf = append(buf, a...)
		w.argv[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	w.keys = make([][]byte, len(x.BlockKeys))
	for i, k := range x.BlockKeys {
		buf = append(buf, k...)
		w.keys[i] = buf[len(buf)-len(k) : len(buf) : len(buf)]
	}
	n := len(srv.shards)
	for _, k := range w.keys {
		r := srv.blk.regs[shard.ShardOf(k, n)]
		m := r.dbs[w.db]
		if m == nil {
			m = make(map[string]*waitQueue)
			r.dbs[w.db] = m
		}
		q := m[string(k)]
		if q == nil {
			q = &waitQueue{db: w.db, key: string(k)}
			m[q.key] = q
		}
		if q.insert(w, prev) {
			r.regs++
		}
	}
	if prev != nil {
		l.dropRetry(prev)
	}
	w.deliverRun = gnet.RunnableFunc(w.deliver)
	w.timeoutRun = gnet.RunnableFunc(w.timedOut)
	srv.blk.clients.Add(1)
	return w
}

// insert puts w in line by its stamp and reports whether it added a place.
// A waiter is in a key's line once (BLPOP k k). If prev (the waiter w is a
// retry of) is in line, w takes its place instead.
func (q *waitQueue) insert(w, prev *waiter) bool {
	i := len(q.ws)
	for i > 0 && q.ws[i-1].stamp > w.stamp {
		i--
	}
	for j := i - 1; j >= 0 && q.ws[j].stamp == w.stamp; j-- {
		if q.ws[j] == w {
			return false
		}
	}
	if prev != nil {
		for j, o := range q.ws {
			if o == prev {
				q.ws[j] = w // the same stamp: the order holds
				return false
			}
		}
	}
	q.ws = append(q.ws, nil)
	copy(q.ws[i+1:], q.ws[i:])
	q.ws[i] = w
	return true
}

// blockRemote runs after a command of a hop or transaction that blocked,
// or that retried the waiter h.retry (runRemote); it returns the new
// waiter, or nil if the command did not block.
func (l *Loop) blockRemote(cl *Client, h *hop, cmd *Cmd, argv [][]byte, x *Exec) *waiter {
	prev := h.retry
	h.retry = nil
	if x.Blocked() {
		return l.block(cl, cmd, argv, x, h.stamp, prev)
	}
	if prev != nil {
		l.dropRetry(prev)
	}
	return nil
}

// dropRetry ends the places in line of prev, a waiter whose command was
// retried (it ran again in the transaction this loop executes, which holds
// the shards of all its keys): they were held for it (serveQueue), so the
// waiters behind them may be served now. (A retry that blocked again has
// taken prev's places already: see insert.)
func (l *Loop) dropRetry(prev *waiter) {
	prev.state.Store(wCancelled) // stale from now on
	n := len(l.srv.shards)
	for _, k := range prev.keys {
		s := shard.ShardOf(k, n)
		r := l.srv.blk.regs[s]
		q := r.dbs[prev.db][string(k)]
		if q == nil {
			continue
		}
		for j, o := range q.ws {
			if o == prev {
				copy(q.ws[j:], q.ws[j+1:])
				q.ws[len(q.ws)-1] = nil
				q.ws = q.ws[:len(q.ws)-1]
				r.regs--
				break
			}
		}
		r.markReady(q)
		if len(q.ws) == 0 {
			delete(r.dbs[prev.db], q.key)
		}
	}
}

// markReady queues q to be served if its key holds a list or sorted set.
func (r *blockRegistry) markReady(q *waitQueue) {
	if !q.ready && len(q.ws) > 0 {
		q.ready = true
		r.ready = append(r.ready, q)
	}
}

// startWait runs on the home loop once the client is blocked on w.
func (cl *Client) startWait(w *waiter) {
	cl.blocked = w
	if cl.retryDeadline != 0 {
		// A retried command keeps the deadline it first blocked with.
		w.deadline, cl.retryDeadline = cl.retryDeadline, 0
		if w.deadline < 0 {
			w.deadline = 0
		}
	}
	if w.deadline != 0 {
		cl.srv.blk.timed.Add(1)
		w.arm()
	}
}

// arm starts the timer that brings w's deadline to its home loop.
func (w *waiter) arm() {
	d := time.Duration(w.deadline-time.Now().UnixMilli()+1) * time.Millisecond
	if d < 0 {
		d = 0
	}
	l := w.cl.loop
	w.timer = time.AfterFunc(d, func() { _ = l.post(w.timeoutRun) })
}

// serveReady serves the ready keys of the shards in held, until none is
// left (serving may make other keys ready: BLMOVE's destination).
func (l *Loop) serveReady(held uint64) {
	regs := l.srv.blk.regs
	if regs == nil {
		return // a server made without registries (unit tests)
	}
	var now int64
	for m := held; m != 0; m &= m - 1 {
		if s := bits.TrailingZeros64(m); len(regs[s].ready) > 0 {
			// Keys are checked against the time now, fixed for the
			// serving, as Redis's handleClientsBlockedOnKeys calls
			// updateCachedTime: a key that expired while the command
			// that made it ready ran (MULTI ... DEBUG SLEEP ... EXEC) is
			// expired here (its DEL logged) and its waiters stay blocked.
			if now == 0 {
				now = time.Now().UnixMilli()
			}
			l.srv.shards[s].SetNow(now)
		}
	}
	for again := true; again; {
		again = false
		for m := held; m != 0; m &= m - 1 {
			s := bits.TrailingZeros64(m)
			r := regs[s]
			for len(r.ready) > 0 {
				q := r.ready[0]
				r.ready[0] = nil
				r.ready = r.ready[1:]
				q.ready = false
				l.serveQueue(r, s, q, held)
				again = true
			}
			if cap(r.ready) > 0 && len(r.ready) == 0 {
				r.ready = r.ready[:0:0]
			}
		}
	}
}

// serveQueue serves q's waiters in order while its key holds data.
func (l *Loop) serveQueue(r *blockRegistry, s int, q *waitQueue, held uint64) {
	srv := l.srv
	db := srv.shards[s].DBs[q.db]
	key := []byte(q.key)
	kept := q.ws[:0]
	i := 0
loop:
	for ; i < len(q.ws); i++ {
		w := q.ws[i]
		switch w.state.Load() {
		case wDone, wCancelled:
			r.regs--
			continue // stale
		case wClaimed:
			kept = append(kept, w) // another loop is serving it
			continue
		case wRetry:
			// Its command runs again from home as a transaction, and the
			// data here is its: hold the line until then (dropRetry).
			break loop
		}
		slot := db.Lookup(key)
		if slot < 0 && !w.spec.gone {
			kept = append(kept, w)
			continue
		}
		if slot >= 0 && db.Type(slot) != w.spec.typ && !w.spec.gone || !w.state.CompareAndSwap(wWaiting, wClaimed) {
			kept = append(kept, w)
			continue
		}
		if w.serveMask(key, len(srv.shards))&^held != 0 {
			// It needs a shard this loop does not hold: home runs it again,
			// and it keeps its place (and the line waits) until then.
			w.state.Store(wRetry)
			_ = w.cl.loop.post(w.deliverRun)
			break
		}
		if !l.serveOne(w, key, held) {
			w.state.Store(wWaiting)
			if w.deadline != 0 && time.Now().UnixMilli() >= w.deadline {
				_ = w.cl.loop.post(w.timeoutRun)
			}
			kept = append(kept, w)
			continue
		}
		r.regs--
	}
	kept = append(kept, q.ws[i:]...)
	for j := len(kept); j < len(q.ws); j++ {
		q.ws[j] = nil
	}
	q.ws = kept
	if len(q.ws) == 0 {
		delete(r.dbs[q.db], q.key)
	}
}

// serveMask is the set of shards serving w from key needs: key's, and
// those of the command's keys it does not wait on (BLMOVE's destination).
func (w *waiter) serveMask(key []byte, n int) uint64 {
	m := uint64(1) << uint(shard.ShardOf(key, n))
	var kbuf [16]int
	for _, i := range w.cmd.keyPositions(w.argv, kbuf[:0]) {
		if i >= len(w.argv) || w.waitsOn(w.argv[i]) {
			continue
		}
		m |= 1 << uint(shard.ShardOf(w.argv[i], n))
	}
	return m
}

func (w *waiter) waitsOn(k []byte) bool {
	for _, b := range w.keys {
		if string(b) == string(k) {
			return true
		}
	}
	return false
}

// serveOne runs w's command for key on this loop; false if it blocked again.
func (l *Loop) serveOne(w *waiter, key []byte, held uint64) bool {
	x := &l.blk.x
	x.Shards = l.srv.shards
	x.loop, x.srv = l, l.srv
	x.reset(nil, w.db, w.proto, l.srv.shards[bits.TrailingZeros64(held)].Now())
	x.mask = 0 // served as Redis serves: no maxmemory check (call's makeRoom)
	x.Out = x.Out[:0]
	x.ServeKey = key
	x.as = w.cl.id
	l.call(x, w.cmd, w.argv)
	x.as = 0
	l.trackFlush(held, w.cl.id) // the invalidations of its changes (tracking.go)
	x.ServeKey = nil
	if x.Blocked() {
		x.BlockKeys, x.BlockArgv = nil, nil
		return false
	}
	w.out = append(w.out[:0], x.Out...)
	if l.srv.persist != nil && x.Prop.Dirty > 0 {
		l.trackServed(w, held)
		l.blk.served = append(l.blk.served, w)
		return true
	}
	w.state.Store(wDone)
	_ = w.cl.loop.post(w.deliverRun)
	return true
}

// trackServed records a served command's write for the log (persist.go's
// track, limited to the keys on shards this loop holds: a BLPOP's other
// keys may live on shards it does not).
func (l *Loop) trackServed(w *waiter, held uint64) {
	ps := l.srv.persist
	n := len(l.srv.shards)
	var kbuf [16]int
	for _, i := range w.cmd.keyPositions(w.argv, kbuf[:0]) {
		if i >= len(w.argv) {
			continue
		}
		k := w.argv[i]
		s := shard.ShardOf(k, n)
		if held&(1<<uint(s)) == 0 {
			continue
		}
		l.p.wrote |= 1 << uint(s)
		h := shard.Hash(k)
		ps.pend[s].mark(h)
		l.p.curKeys = append(l.p.curKeys, pendingKey{s, h})
	}
}

// handServed hands the waiters served since the last submission home, with
// the submitted batch's sequence as their need (called by submit).
func (l *Loop) handServed(seq uint64) {
	for i, w := range l.blk.served {
		w.need = seq
		w.state.Store(wDone)
		_ = w.cl.loop.post(w.deliverRun)
		l.blk.served[i] = nil
	}
	l.blk.served = l.blk.served[:0]
}

// deliver runs on the home loop when w was served or is to be retried.
func (w *waiter) deliver(context.Context) error {
	cl := w.cl
	if cl.blocked != w || w.delivered {
		// Not blocked yet: the hop that blocked it has not come back;
		// hopDone finishes it. Or already finished.
		return nil
	}
	defer cl.loop.endEvent()
	cl.finishWait(w)
	return nil
}

// timedOut runs on the home loop when w's deadline has passed.
func (w *waiter) timedOut(context.Context) error {
	cl := w.cl
	if cl.blocked != w || w.delivered {
		return nil
	}
	if w.deadline != 0 && time.Now().UnixMilli() < w.deadline {
		w.arm() // early (clock granularity): wait for the rest
		return nil
	}
	if !w.state.CompareAndSwap(wWaiting, wCancelled) {
		return nil // being served: the serve delivers
	}
	defer cl.loop.endEvent()
	cl.finishWait(w)
	return nil
}

// finishWait ends the client's wait on w (home loop): it appends the reply
// (the served one, the timeout's, or CLIENT UNBLOCK's error) and goes on
// with the client's queued input — or, for a retry, runs the command again.
func (cl *Client) finishWait(w *waiter) {
	cl.blocked = nil
	w.delivered = true
	if w.onEnd != nil {
		w.onEnd()
	}
	if w.timer != nil {
		w.timer.Stop()
		cl.srv.blk.timed.Add(-1)
	}
	cl.srv.blk.clients.Add(-1)
	if cl.closed {
		return
	}
	cl.loop.nowValid, cl.loop.tickValid = false, false
	cl.lastInteraction = time.Now()
	switch w.state.Load() {
	case wDone:
		cl.out = append(cl.out, w.out...)
		cl.trackLater() // invalidations of its own changes, after the reply (tracking.go)
		if w.need > cl.need {
			cl.need = w.need
		}
	case wRetry:
		cl.retryDeadline = w.deadline
		if cl.retryDeadline == 0 {
			cl.retryDeadline = -1 // keeps "no timeout" (startWait maps it back)
		}
		cl.startRetry(w)
		return
	default: // cancelled: timed out or unblocked, counted now (dispatch.go's call)
		cl.loop.stats.cmds[w.cmd.id].calls++
		if w.unblockMsg != "" { // the server became a replica (replica.go)
			cl.out = resp.AppendError(cl.out, w.unblockMsg)
			cl.loop.stats.cmds[w.cmd.id].failed++
			cl.loop.stats.countErrorString(w.unblockMsg)
			cl.closing = true // closed after the reply, as Redis
			cl.flush()
			return
		} else if w.unblockErr {
			cl.out = resp.AppendError(cl.out, unblockedError)
			// A failed call (Redis's updateStatsOnUnblock with had_errors).
			cl.loop.stats.cmds[w.cmd.id].failed++
			cl.loop.stats.countErrorString(unblockedError)
		} else if w.cancelReply != nil {
			cl.out = w.cancelReply(cl.out) // WAIT: the count now (repl_wait.go)
		} else {
			cl.out = resp.AppendNullArray(cl.out, w.proto)
		}
	}
	if len(cl.qbuf) > 0 && !cl.closing && !cl.held {
		cl.process(true)
		return
	}
	cl.flush()
}

// blockedHop runs on the home loop when a hop came back blocked on w
// (hopDone): the waiter may even have been served already.
func (cl *Client) blockedHop(w *waiter) {
	cl.startWait(w)
	if st := w.state.Load(); st == wDone || st == wRetry {
		cl.finishWait(w)
		return
	}
	cl.flush()
}

// startRetry runs w's command again from home, as a hop or a transaction
// over the shards of all its keys.
func (cl *Client) startRetry(w *waiter) {
	h := &cl.hop
	h.cmds = h.cmds[:0]
	h.argv = h.argv[:0]
	h.out = h.out[:0]
	h.db, h.proto, h.noTch = w.db, w.proto, cl.noTouch
	cl.replyModeForHop(h)
	h.need = 0
	h.buf = h.buf[:0]
	h.blocked = nil
	h.retry, h.stamp = w, w.stamp // it takes w's places in line
	h.trk = h.trk[:0]
	h.add(w.cmd, w.argv, true, false) // copies the arguments into h.buf
	target, mask := cl.placementOf(w.cmd, w.argv, len(cl.srv.shards))
	h.tx = mask != 0
	h.mask = mask
	h.target = target
	cl.launch()
}

// placementOf is where a command runs: a shard (mask 0) or the shards of a
// transaction.
func (cl *Client) placementOf(cmd *Cmd, argv [][]byte, n int) (target int, mask uint64) {
	target, mask = cl.placement(cmd, argv)
	if mask == 0 && target < 0 {
		target = cl.loop.id
	}
	return target, mask
}

// onCloseBlocked unregisters a client that goes away while blocked.
func (cl *Client) onCloseBlocked() {
	w := cl.blocked
	if w == nil {
		return
	}
	if !w.state.CompareAndSwap(wWaiting, wCancelled) && w.state.CompareAndSwap(wRetry, wCancelled) {
		cl.srv.releaseLines(w) // its retry will not run: the lines it held go on
	}
	cl.blocked = nil
	w.delivered = true
	if w.timer != nil {
		w.timer.Stop()
		cl.srv.blk.timed.Add(-1)
	}
	cl.srv.blk.clients.Add(-1)
	if w.onEnd != nil {
		w.onEnd()
	}
}

// releaseLines serves, on their shards' loops, the keys whose lines w held
// for a retry that will not run (w is cancelled: stale).
func (srv *Server) releaseLines(w *waiter) {
	n := len(srv.shards)
	for _, k := range w.keys {
		s := shard.ShardOf(k, n)
		l := srv.loops[s]
		key := string(k)
		_ = l.post(gnet.RunnableFunc(func(context.Context) error {
			r := srv.blk.regs[s]
			if q := r.dbs[w.db][key]; q != nil {
				r.markReady(q)
				l.serveReady(1 << uint(s))
				l.endEvent()
			}
			return nil
		}))
	}
}

// sweepBlocked drops stale registrations from this loop's shard registry
// (from the cron, at most once a second).
func (l *Loop) sweepBlocked(nowMs int64) {
	if l.srv.blk.regs == nil {
		return
	}
	r := l.srv.blk.regs[l.id]
	if r.regs == 0 || nowMs-l.blk.lastSweep < 1000 {
		return
	}
	l.blk.lastSweep = nowMs
	for _, m := range r.dbs {
		for k, q := range m {
			kept := q.ws[:0]
			for _, w := range q.ws {
				switch w.state.Load() {
				case wDone, wCancelled:
					r.regs--
				default:
					kept = append(kept, w)
				}
			}
			for j := len(kept); j < len(q.ws); j++ {
				q.ws[j] = nil
			}
			q.ws = kept
			if len(kept) == 0 && !q.ready {
				delete(m, k)
			}
		}
	}
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR] runs with every loop parked, so
// it may read any client; the unblocked client's own loop replies to it.
func cmdClientUnblock(x *Exec, argv [][]byte) {
	unblockErr := false
	if len(argv) == 4 {
		switch {
		case shard.EqualFold(argv[3], "timeout"):
		case shard.EqualFold(argv[3], "error"):
			unblockErr = true
		default:
			x.Err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := shard.ParseInt(argv[2])
	if !ok {
		x.Err(shard.ErrNotInt)
		return
	}
	cl := x.srv.clientByID(id)
	if cl == nil || cl.closed || cl.blocked == nil || cl.blocked.delivered {
		x.Int(0)
		return
	}
	w := cl.blocked
	if !w.state.CompareAndSwap(wWaiting, wCancelled) {
		if !w.state.CompareAndSwap(wRetry, wCancelled) {
			x.Int(0) // being served
			return
		}
		x.srv.releaseLines(w) // its retry will not run
	}
	w.unblockErr = unblockErr
	cl.endWaitAtHome(w)
	x.Int(1)
}

// endWaitAtHome ends a cancelled wait on the client's home loop, from any
// goroutine (CLIENT UNBLOCK, a master turned replica).
func (cl *Client) endWaitAtHome(w *waiter) {
	w.deadline = 0
	_ = cl.loop.post(gnet.RunnableFunc(func(context.Context) error {
		if cl.blocked != w || w.delivered {
			return nil
		}
		defer cl.loop.endEvent()
		cl.finishWait(w)
		return nil
	}))
}
