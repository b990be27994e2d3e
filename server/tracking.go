package server

// Client-side caching: CLIENT TRACKING and its invalidation messages.
//
// Remembering. A tracking client's command is routed at home, where its
// tracking mode and CLIENT CACHING state live; the home loop decides there,
// per command, whether the command's keys are to be remembered (the bit
// travels with the command, in the hop for a run sent away). The command
// runs on its keys' shard (or shards, in a transaction); after a read-only
// command, Loop.call adds the client's ref (its id and home loop) to each
// key's entry in the table of the key's shard (shard/tracking.go). A script
// remembers its declared keys when it called a read-only command, as
// Redis's does.
//
// Invalidating. Any change to a key on a shard — a write from any loop, an
// expiry, an eviction, the source of RENAME or MOVE — runs on the loop that
// holds the shard then (its owner, or a transaction's executor), and takes
// the key's entry out of the shard's table, queueing one invalidation per
// ref; FLUSHDB, FLUSHALL, SWAPDB and a replica's new data set empty the
// table and queue an "everything" one. At the end of the command (the
// outermost Loop.call: an EXEC or a script's caller counts as one) the
// running loop takes the queue of each shard it held and appends one inbox
// entry per invalidation to the inbox of the client's home loop (the
// pub/sub inbox, pubsub.go), waking it once per target loop. BCAST clients
// are matched there too, against an immutable snapshot of the prefixes, with
// one message per prefix for the whole command (Redis sends one per event
// loop cycle).
//
// Order. Why the invalidation reaches the tracking client C before C can
// read the new value, and no later than the writer's reply:
//   - the queue is taken before the command's reply leaves its loop: inline
//     replies are written after the command, a hop's or a transaction's
//     replies are sent home after their last command, and a blocked client's
//     served reply after the command that served it;
//   - C reads a key only on the key's shard, so a read of the new value runs
//     on that shard after the write, on the same loop or on a transaction's
//     executor that took the shard after the write's loop released it; the
//     inbox entry was appended before, and the read's reply travels home
//     through the same loop's task queue (EventLoop.Execute is FIFO), behind
//     the drain task the entry queued (or a drain that has not yet swapped
//     the inbox): the home loop drains it first;
//   - a home loop drains its inbox before it reads a client's new input, so
//     a command C sends after the writer's reply has reached anyone is
//     answered after the invalidation.
// Under appendfsync always the entry does not wait for the log: it reveals
// that a key changed, never its value, and leaves before the write's reply
// (which waits for the fsync); C's replies that wait for the log keep the
// invalidation behind them, in order.
//
// Delivery, on C's home loop. An entry that arrives while C's run is away
// waits until the run's replies are in place (trk.later): the change may
// have come after the run read the key, and its reply is then queued behind
// the entry's drain only in the task queue, not in the inbox, which the
// home loop may drain first; after the reply an invalidation is always
// safe (the client drops what the reply gave it, at worst once too often).
// Likewise behind a served wait, and behind C's own changes: C's own
// writes (NOLOOP aside) are answered first and invalidated after, as Redis
// 7.0 does. With REDIRECT the message goes to
// the other client: on this loop directly, else forwarded to its loop's
// inbox; a redirect to a client that is gone marks C broken_redirect and,
// in RESP3, sends C Redis's tracking-redir-broken push. A RESP3 target gets
// a push; a RESP2 target only through REDIRECT while it is subscribed, as a
// message on __redis__:invalidate; anything else gets nothing, as in Redis.
//
// tracking-table-max-keys bounds the keys of all shards' tables together
// (an atomic count): each loop's cron evicts keys of its own shard with an
// invalidation, claiming each eviction against the count, so together they
// stop exactly at the limit.

import (
	"context"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// clientTrack is a client's tracking state, owned by its home loop.
type clientTrack struct {
	on, bcast, optin, optout, noloop bool
	caching                          bool // CLIENT CACHING yes/no for the next command
	broken                           bool // its redirect target is gone
	redir                            int64
	redirLoop                        int
	prefixes                         []string // BCAST, sorted
	later                            []byte   // invalidations of its own changes, after the replies in flight
}

// serverTrack is the server's tracking state.
type serverTrack struct {
	shared shard.TrackShared

	mu       sync.Mutex                    // BCAST registrations
	prefixes map[string]map[int64]bcastSub // prefix -> subscribers
	snap     atomic.Pointer[bcastTable]
	nprefix  atomic.Int64

	// nudges: the loops still to run a tracking-table-max-keys pass asked
	// by a loop whose own shard could not bring the tables under the limit
	// (trackLimit); while > 0, no loop asks again.
	nudges atomic.Int32
}

type bcastSub struct {
	id     int64
	loop   int
	noloop bool
}

// bcastTable is an immutable snapshot of the BCAST prefixes.
type bcastTable struct {
	prefixes []bcastPrefix
}

type bcastPrefix struct {
	p    string
	subs []bcastSub
}

// loopTrack is a loop's scratch for delivering invalidations.
type loopTrack struct {
	out   [][]trkOut // per destination loop
	buf   []byte
	woken []int
	keys  []int // key positions
	bkeys [][]bkey
	frame []byte
	// inline: the run whose client's invalidations go into its replies
	// (evictFirst), for the length of one trackFlush.
	inline *Exec
}

type trkOut struct {
	kind     uint8
	id, from int64
	self     bool
	off, end int
}

type bkey struct {
	key    []byte
	writer int64
}

// Inbox entry kinds for tracking (after the pub/sub ones, pubsub.go).
const (
	kindInval       uint8 = 10 + iota // a key of the tracking table: id is the tracking client
	kindInvalKeys                     // a BCAST message: the keys array is ready
	kindInvalAll                      // a flush: every tracking client of the loop; from made it
	kindInvalRedir                    // forwarded: id is the redirect target, from the tracking client
	kindRedirBroken                   // back to the tracking client id: its redirect target is gone
)

func trackRef(cl *Client) uint64 { return uint64(cl.id)<<6 | uint64(cl.loop.id) }

func unpackRef(r uint64) (id int64, loop int) { return int64(r >> 6), int(r & 63) }

func (srv *Server) initTracking() {
	srv.trk.prefixes = map[string]map[int64]bcastSub{}
	for _, l := range srv.loops {
		l.trk.out = make([][]trkOut, len(srv.loops))
	}
}

// trackFor is whether cmd's keys are to be remembered for cl (its tracking
// is on), and uses up CLIENT CACHING as Redis's resetClient does: after the
// next command, unless in MULTI (the whole transaction) or a CLIENT command.
func (cl *Client) trackFor(cmd *Cmd) bool {
	t := &cl.trk
	yes := !t.bcast && (t.optin && t.caching || t.optout && !t.caching || !t.optin && !t.optout)
	if t.caching {
		switch {
		case cmd == nil || cmd.fullName == "exec":
			t.caching = false
		case cl.multi.active || cmd.fullName == "multi" || cmd.parent != nil && cmd.parent.name == "client":
		default:
			t.caching = false
		}
	}
	return yes
}

// trackKeys remembers cmd's keys for the client of x (a read-only command
// just ran, or a script that called one: its declared keys).
func (l *Loop) trackKeys(x *Exec, cmd *Cmd, argv [][]byte) {
	cl := x.cl
	if cl == nil || cmd.flags&flagPubSub != 0 {
		return
	}
	ref := trackRef(cl)
	n := len(l.srv.shards)
	one := -1
	if !cmd.home && x.mask != 0 && x.mask&(x.mask-1) == 0 {
		one = trailing(x.mask) // it ran on one shard: its keys are there
	}
	l.trk.keys = cmd.keyPositions(argv, l.trk.keys[:0])
	m := &cl.trkMemo
	for _, i := range l.trk.keys {
		if i < len(argv) {
			k := argv[i]
			si := one
			if si < 0 {
				si = shard.ShardOf(k, n)
			}
			sh := l.srv.shards[si]
			if m.sh == sh && m.epoch == sh.TrackEpoch() && string(m.key) == string(k) {
				continue // the client read it last, and is still in its entry
			}
			sh.Track(k, ref)
			m.sh, m.epoch, m.key = sh, sh.TrackEpoch(), append(m.key[:0], k...)
		}
	}
}

// evictFirst is makeRoom before x's command, whose evictions' invalidations
// go out before the command's reply, as Redis's (processCommand hands them
// out right after performEvictions).
//
// The invalidations meant for x's client itself go straight into its
// replies, in front of this command's: through its home loop's inbox those
// of a run sent away (a hop, a transaction, also one run by the home loop)
// would wait behind the run's replies (trk.later), right for a change made
// after a read of the run, wrong for one made before its command. A client
// that redirects its invalidations gets them through the inbox as ever.
//
// With widen, elsewhere says the command is to run again over every shard
// (makeRoomOr); the invalidations of what its shards evicted on the way
// are in its replies already.
func (l *Loop) evictFirst(x *Exec, widen bool) (ok, elsewhere bool) {
	ok, elsewhere = l.makeRoomOr(x.mask, widen)
	if cl := x.cl; cl != nil && cl.trk.on && !cl.trk.bcast && cl.trk.redir == 0 && x.Proto >= 3 {
		l.trk.inline = x
	}
	l.trackFlush(x.mask, 0)
	l.trk.inline = nil
	if x.cl != nil && x.cl.loop == l && l.ps.in.nonEmpty.Load() {
		l.drainInbox(x, false)
	}
	return ok, elsewhere
}

// trackAfter delivers the invalidations of the command x just ran.
func (l *Loop) trackAfter(x *Exec) {
	mask := x.mask
	if mask == 0 {
		mask = 1 << uint(l.id)
	}
	writer := x.as
	if x.cl != nil {
		writer = x.cl.id
	}
	l.trackFlush(mask, writer)
}

// trackFlush delivers the invalidations queued on the shards of mask by the
// command of writer (0: none) that just ran on this loop.
func (l *Loop) trackFlush(mask uint64, writer int64) {
	any := false
	for m := mask; m != 0 && !any; m &= m - 1 {
		any = l.srv.shards[trailing(m)].PendingInvalidations()
	}
	if !any {
		return
	}
	flushed := false
	var snap *bcastTable
	for m := mask; m != 0; m &= m - 1 {
		sh := l.srv.shards[trailing(m)]
		if !sh.PendingInvalidations() {
			continue
		}
		sh.TakeInvalidations(func(inv []shard.Invalidation, fl bool) {
			flushed = flushed || fl
			for i := range inv {
				v := &inv[i]
				w := writer
				if v.Anon {
					w = 0 // an expiry: no client's change (BCAST NOLOOP)
				}
				if v.Ref == 0 {
					if snap == nil {
						snap = l.srv.trk.snap.Load()
					}
					l.bcastMatch(snap, v.Key, w)
					continue
				}
				id, loop := unpackRef(v.Ref)
				if x := l.trk.inline; x != nil && id == x.cl.id {
					x.Out = resp.AppendPushLen(x.Out, 2, 3)
					x.Out = append(x.Out, "$10\r\ninvalidate\r\n*1\r\n"...)
					x.Out = resp.AppendBulk(x.Out, v.Key)
					continue
				}
				l.trkAppend(loop, kindInval, id, 0, id == writer, v.Key, true)
			}
		})
	}
	if snap != nil {
		l.bcastSend(snap)
	}
	if flushed && l.srv.trk.shared.Clients.Load() > 0 {
		for i, ol := range l.srv.loops {
			if ol.trkClients.Load() > 0 {
				l.trkAppend(i, kindInvalAll, 0, writer, false, nil, false)
			}
		}
	}
	l.trkSend()
}

func trailing(m uint64) int { return bits.TrailingZeros64(m) }

// trkAppend queues one entry for loop dst; array: tail is a one-key array.
func (l *Loop) trkAppend(dst int, kind uint8, id, from int64, self bool, key []byte, array bool) {
	off := len(l.trk.buf)
	if array {
		l.trk.buf = append(l.trk.buf, "*1\r\n"...)
		l.trk.buf = resp.AppendBulk(l.trk.buf, key)
	} else {
		l.trk.buf = append(l.trk.buf, key...)
	}
	l.trk.out[dst] = append(l.trk.out[dst], trkOut{kind: kind, id: id, from: from, self: self, off: off, end: len(l.trk.buf)})
}

// bcastMatch files key under every prefix it matches. key points into a
// shard's queue, which stays as it is until bcastSend, later in the same
// trackFlush (nothing queues on a shard meanwhile).
func (l *Loop) bcastMatch(snap *bcastTable, key []byte, writer int64) {
	if snap == nil {
		return
	}
	if len(l.trk.bkeys) < len(snap.prefixes) {
		l.trk.bkeys = append(l.trk.bkeys, make([][]bkey, len(snap.prefixes)-len(l.trk.bkeys))...)
	}
	for i := range snap.prefixes {
		p := snap.prefixes[i].p
		if len(key) >= len(p) && string(key[:len(p)]) == p {
			bk := l.trk.bkeys[i]
			for j := range bk {
				if string(bk[j].key) == string(key) {
					bk[j].writer = writer // the last change counts (NOLOOP)
					goto next
				}
			}
			l.trk.bkeys[i] = append(bk, bkey{key: key, writer: writer})
		next:
		}
	}
}

// bcastSend builds one message per prefix with keys, per subscriber.
func (l *Loop) bcastSend(snap *bcastTable) {
	if snap == nil {
		return
	}
	for i := range snap.prefixes {
		if i >= len(l.trk.bkeys) || len(l.trk.bkeys[i]) == 0 {
			continue
		}
		keys := l.trk.bkeys[i]
		for _, s := range snap.prefixes[i].subs {
			n := 0
			for _, k := range keys {
				if !s.noloop || k.writer != s.id {
					n++
				}
			}
			if n == 0 {
				continue
			}
			off := len(l.trk.buf)
			l.trk.buf = resp.AppendArrayLen(l.trk.buf, n)
			for _, k := range keys {
				if !s.noloop || k.writer != s.id {
					l.trk.buf = resp.AppendBulk(l.trk.buf, k.key)
				}
			}
			l.trk.out[s.loop] = append(l.trk.out[s.loop], trkOut{kind: kindInvalKeys, id: s.id, off: off, end: len(l.trk.buf)})
		}
		clear(keys)
		l.trk.bkeys[i] = keys[:0]
	}
}

// trkSend moves the queued entries into their loops' inboxes.
func (l *Loop) trkSend() {
	buf := l.trk.buf
	for i, es := range l.trk.out {
		if len(es) == 0 {
			continue
		}
		ib := &l.srv.loops[i].ps.in
		ib.mu.Lock()
		for _, e := range es {
			off := len(ib.buf)
			ib.buf = append(ib.buf, buf[e.off:e.end]...)
			ib.ents = append(ib.ents, inboxEnt{kind: e.kind, id: e.id, from: e.from, self: e.self, off: off, end: len(ib.buf)})
		}
		ib.nonEmpty.Store(true)
		wake := !ib.queued
		ib.queued = true
		ib.mu.Unlock()
		l.trk.out[i] = es[:0]
		if wake {
			l.trk.woken = append(l.trk.woken, i)
		}
	}
	l.trk.buf = buf[:0]
	if cap(buf) > 1<<20 {
		l.trk.buf = nil
	}
	for _, i := range l.trk.woken {
		l.srv.loops[i].wakeInbox()
	}
	l.trk.woken = l.trk.woken[:0]
}

// drainTracking handles a tracking entry of this loop's inbox (drainInbox);
// cur is the client whose command is running here (its output is x.Out),
// or nil.
func (l *Loop) drainTracking(x *Exec, e *inboxEnt, tail []byte) {
	switch e.kind {
	case kindInval, kindInvalKeys:
		cl := l.clients[e.id]
		if cl == nil || cl.closed || !cl.trk.on || (e.kind == kindInval) == cl.trk.bcast {
			return // gone, tracking off since, or another mode now (as Redis)
		}
		if e.kind == kindInval && e.self && cl.trk.noloop {
			return
		}
		l.trackSend(x, cl, tail, e.self)
	case kindInvalAll:
		for _, cl := range l.clients {
			if cl.trk.on && !cl.closed {
				null := "$-1\r\n"
				if cl.proto >= 3 {
					null = "_\r\n"
				}
				l.trackSend(x, cl, []byte(null), cl.id == e.from)
			}
		}
	case kindInvalRedir:
		t := l.clients[e.id]
		if t == nil || t.closed || t.closing {
			_, fromLoop := unpackRef(uint64(e.from))
			fromID, _ := unpackRef(uint64(e.from))
			l.trkAppend(fromLoop, kindRedirBroken, fromID, 0, false, nil, false)
			l.trkSend()
			return
		}
		l.trackFrame(x, t, tail, true, false)
	case kindRedirBroken:
		cl := l.clients[e.id]
		if cl == nil || cl.closed || !cl.trk.on || cl.trk.redir == 0 {
			return
		}
		l.redirBroken(x, cl)
	}
}

// trackSend delivers an invalidation (tail: the keys array, or a null) for
// tracking client cl: to it, or to its redirect target.
func (l *Loop) trackSend(x *Exec, cl *Client, tail []byte, self bool) {
	t := &cl.trk
	if t.redir == 0 {
		l.trackFrame(x, cl, tail, false, self)
		return
	}
	if t.redirLoop != l.id {
		off := len(l.trk.buf)
		l.trk.buf = append(l.trk.buf, tail...)
		l.trk.out[t.redirLoop] = append(l.trk.out[t.redirLoop], trkOut{kind: kindInvalRedir, id: t.redir, from: int64(trackRef(cl)), off: off, end: len(l.trk.buf)})
		l.trkSend()
		return
	}
	target := l.clients[t.redir]
	if target == nil || target.closed || target.closing {
		l.redirBroken(x, cl)
		return
	}
	l.trackFrame(x, target, tail, true, false)
}

// redirBroken marks cl's redirect broken and tells it, in RESP3, as Redis.
func (l *Loop) redirBroken(x *Exec, cl *Client) {
	cl.trk.broken = true
	if cl.proto < 3 {
		return
	}
	f := resp.AppendPushLen(l.trk.frame[:0], 2, 3)
	f = resp.AppendBulk(f, []byte("tracking-redir-broken"))
	f = resp.AppendInt(f, cl.trk.redir)
	l.trk.frame = f
	l.trackOut(x, cl, f, false)
}

// trackFrame appends the invalidation message to c's output in its
// protocol: a push in RESP3; a message on __redis__:invalidate for a RESP2
// redirect target that is subscribed; nothing otherwise.
func (l *Loop) trackFrame(x *Exec, c *Client, tail []byte, redirected, self bool) {
	var f []byte
	switch {
	case c.proto >= 3:
		f = resp.AppendPushLen(l.trk.frame[:0], 2, 3)
		f = append(f, "$10\r\ninvalidate\r\n"...)
	case redirected && c.subscribed():
		f = append(l.trk.frame[:0], "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"...)
	default:
		return
	}
	f = append(f, tail...)
	l.trk.frame = f
	l.trackOut(x, c, f, self)
}

// trackOut appends a frame to c's output, or keeps it behind replies that
// are on their way: those of c's run in flight (the invalidation may be of
// a change made after the run read the key, whose reply is queued behind
// it; after the reply it is always safe), and of c's wait when it is served
// or when the change was c's own (Redis answers first).
func (l *Loop) trackOut(x *Exec, c *Client, f []byte, self bool) {
	if c.hopOut || c.blocked != nil && (self || c.blocked.state.Load() != wWaiting) {
		c.trk.later = append(c.trk.later, f...)
		return
	}
	if x != nil && c == x.cl {
		x.Out = append(x.Out, f...)
		return
	}
	if len(c.out) == 0 && !c.held && c.c != nil && !c.closed && !c.closing && !c.obs.monitor {
		// Nothing waits before it: straight to the connection, so that a
		// burst of invalidations (an eviction of many tracked keys) does
		// not leave a big reply buffer counted against maxmemory, which
		// would evict more (unit/maxmemory's feedback loop).
		c.srv.stats.netOutput.Add(int64(len(f)))
		c.send(f)
		c.accountMem() // what the socket did not take counts (maxmemory-clients)
		return
	}
	c.out = append(c.out, f...)
	if c.ps == nil {
		c.ps = &clientSubs{channels: map[string]struct{}{}, shardChs: map[string]struct{}{}}
	}
	if !c.ps.touched {
		c.ps.touched = true
		l.ps.touched = append(l.ps.touched, c)
	}
}

// trackLater appends what trackOut kept behind the replies now in place.
func (cl *Client) trackLater() {
	if len(cl.trk.later) > 0 {
		cl.out = append(cl.out, cl.trk.later...)
		cl.trk.later = cl.trk.later[:0]
	}
}

// trackCron runs on the loop from its cron: tracking-table-max-keys, and
// the invalidations of the active expiry.
func (l *Loop) trackCron() {
	l.trackLimit()
	l.trackFlush(1<<uint(l.id), 0)
}

// trackLimit evicts keys of this loop's shard from the tracking table, with
// their invalidations, while all the tables together hold more than
// tracking-table-max-keys; it reports whether it evicted any. The cron
// calls it, and so does a read while clients track (OnTraffic), as Redis's
// processCommand calls trackingLimitUsedSlots before each command: a
// lowered limit takes effect at the next command.
//
// The tables are per shard: a loop whose own shard cannot bring them under
// the limit asks the other loops to evict theirs at once (nudgeTrackLimit)
// rather than at their next cron tick.
func (l *Loop) trackLimit() bool {
	st := &l.srv.trk.shared
	max := l.srv.cfg.TrackingTableMaxKeys()
	if max <= 0 || st.Keys.Load() <= max {
		return false
	}
	if l.sh.TrackedKeys() == 0 {
		l.nudgeTrackLimit()
		return false
	}
	claim := func() bool {
		for {
			n := st.Keys.Load()
			if n <= max {
				return false
			}
			if st.Keys.CompareAndSwap(n, n-1) {
				return true
			}
		}
	}
	l.sh.EvictTracked(10000, claim)
	if st.Keys.Load() > max {
		l.nudgeTrackLimit() // its own shard's keys were not enough
	}
	return true
}

// nudgeTrackLimit asks every other loop to run its tracking-table-max-keys
// pass now, with its invalidations; one request at a time.
func (l *Loop) nudgeTrackLimit() {
	srv := l.srv
	others := int32(len(srv.loops) - 1)
	if others == 0 || !srv.trk.nudges.CompareAndSwap(0, others) {
		return
	}
	for _, o := range srv.loops {
		if o == l {
			continue
		}
		o := o
		if o.post(gnet.RunnableFunc(func(context.Context) error {
			o.trackCron() // its pass and its invalidations, as its cron runs them
			srv.trk.nudges.Add(-1)
			return nil
		})) != nil {
			srv.trk.nudges.Add(-1) // the loop is stopping
		}
	}
}

// disableTracking turns cl's tracking off (CLIENT TRACKING off, RESET, its
// close). The table keeps its refs; they are dropped when their keys change.
func (cl *Client) disableTracking() {
	t := &cl.trk
	if !t.on {
		return
	}
	if t.bcast {
		cl.srv.bcastUnsubscribe(cl, t.prefixes)
	}
	later := t.later[:0]
	*t = clientTrack{later: later}
	cl.trkMemo.sh = nil
	cl.loop.trkClients.Add(-1)
	cl.srv.trk.shared.Clients.Add(-1)
}

func (srv *Server) bcastSubscribe(cl *Client, prefixes []string, noloop bool) {
	st := &srv.trk
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range prefixes {
		m := st.prefixes[p]
		if m == nil {
			m = map[int64]bcastSub{}
			st.prefixes[p] = m
		}
		m[cl.id] = bcastSub{id: cl.id, loop: cl.loop.id, noloop: noloop}
	}
	srv.bcastPublishLocked()
}

func (srv *Server) bcastUnsubscribe(cl *Client, prefixes []string) {
	st := &srv.trk
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range prefixes {
		if m := st.prefixes[p]; m != nil {
			delete(m, cl.id)
			if len(m) == 0 {
				delete(st.prefixes, p)
			}
		}
	}
	srv.bcastPublishLocked()
}

// bcastPublishLocked replaces the snapshot the writers read.
func (srv *Server) bcastPublishLocked() {
	st := &srv.trk
	st.nprefix.Store(int64(len(st.prefixes)))
	if len(st.prefixes) == 0 {
		st.snap.Store(nil)
		st.shared.Bcast.Store(false)
		return
	}
	t := &bcastTable{}
	for p, m := range st.prefixes {
		bp := bcastPrefix{p: p}
		for _, s := range m {
			bp.subs = append(bp.subs, s)
		}
		sort.Slice(bp.subs, func(i, j int) bool { return bp.subs[i].id < bp.subs[j].id })
		t.prefixes = append(t.prefixes, bp)
	}
	sort.Slice(t.prefixes, func(i, j int) bool { return t.prefixes[i].p < t.prefixes[j].p })
	st.snap.Store(t)
	st.shared.Bcast.Store(true)
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

var trackingCommands = []serverCmd{
	{name: "client|tracking", exec: cmdClientTracking, home: true, allShardsIf: trackingRedirects},
	{name: "client|caching", exec: cmdClientCaching, home: true},
	{name: "client|getredir", exec: cmdClientGetredir, home: true},
	{name: "client|trackinginfo", exec: cmdClientTrackinginfo, home: true},
}

// trackingRedirects: CLIENT TRACKING on with REDIRECT looks the target up
// on every loop, so it runs with every loop parked.
func trackingRedirects(argv [][]byte) bool {
	for i := 3; i < len(argv); i++ {
		if shard.EqualFold(argv[i], "redirect") {
			return true
		}
	}
	return false
}

func prefixOverlap(a, b string) bool {
	n := min(len(a), len(b))
	return a[:n] == b[:n]
}

func cmdClientTracking(x *Exec, argv [][]byte) {
	cl := x.cl
	var redir int64
	redirLoop := 0
	var bcast, optin, optout, noloop bool
	var prefixes []string
	for j := 3; j < len(argv); j++ {
		more := len(argv) - 1 - j
		a := argv[j]
		switch {
		case shard.EqualFold(a, "redirect") && more > 0:
			j++
			if redir != 0 {
				x.Err("ERR A client can only redirect to a single other client")
				return
			}
			v, err := strconv.ParseInt(string(argv[j]), 10, 64)
			if err != nil {
				x.Err("ERR value is not an integer or out of range")
				return
			}
			t := x.srv.clientByID(v)
			if t == nil {
				x.Err("ERR The client ID you want redirect to does not exist")
				return
			}
			redir, redirLoop = v, t.loop.id
		case shard.EqualFold(a, "bcast"):
			bcast = true
		case shard.EqualFold(a, "optin"):
			optin = true
		case shard.EqualFold(a, "optout"):
			optout = true
		case shard.EqualFold(a, "noloop"):
			noloop = true
		case shard.EqualFold(a, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, string(argv[j]))
		default:
			x.Err("ERR syntax error")
			return
		}
	}
	t := &cl.trk
	switch {
	case shard.EqualFold(argv[2], "on"):
		if !bcast && len(prefixes) > 0 {
			x.Err("ERR PREFIX option requires BCAST mode to be enabled")
			return
		}
		if t.on && t.bcast != bcast {
			x.Err("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast && (optin || optout) {
			x.Err("ERR OPTIN and OPTOUT are not compatible with BCAST")
			return
		}
		if optin && optout {
			x.Err("ERR You can't specify both OPTIN mode and OPTOUT mode")
			return
		}
		if optin && t.optout || optout && t.optin {
			x.Err("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast {
			for i, p := range prefixes {
				for _, q := range t.prefixes {
					if prefixOverlap(p, q) {
						x.Err("ERR Prefix '" + p + "' overlaps with an existing prefix '" + q + "'. Prefixes for a single client must not overlap.")
						return
					}
				}
				for _, q := range prefixes[i+1:] {
					if prefixOverlap(p, q) {
						x.Err("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap.")
						return
					}
				}
			}
		}
		if !t.on {
			t.on = true
			cl.loop.trkClients.Add(1)
			x.srv.trk.shared.Clients.Add(1)
		}
		t.broken, t.optin, t.optout = false, optin, optout
		t.redir, t.redirLoop = redir, redirLoop
		if bcast {
			if len(prefixes) == 0 {
				prefixes = []string{""}
			}
			var added []string
			for _, p := range prefixes {
				if !slices.Contains(t.prefixes, p) {
					added = append(added, p)
				}
			}
			t.prefixes = append(t.prefixes, added...)
			sort.Strings(t.prefixes)
			t.bcast = true
			if noloop != t.noloop {
				added = t.prefixes // the subscriptions carry the flag
			}
			t.noloop = noloop
			x.srv.bcastSubscribe(cl, added, noloop)
		} else {
			t.noloop = noloop
		}
	case shard.EqualFold(argv[2], "off"):
		cl.disableTracking()
	default:
		x.Err("ERR syntax error")
		return
	}
	x.OK()
}

func cmdClientCaching(x *Exec, argv [][]byte) {
	t := &x.cl.trk
	if !t.on {
		x.Err("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case shard.EqualFold(argv[2], "yes"):
		if !t.optin {
			x.Err("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case shard.EqualFold(argv[2], "no"):
		if !t.optout {
			x.Err("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		x.Err("ERR syntax error")
		return
	}
	t.caching = true
	x.OK()
}

func cmdClientGetredir(x *Exec, argv [][]byte) {
	if x.cl.trk.on {
		x.Int(x.cl.trk.redir)
	} else {
		x.Int(-1)
	}
}

func cmdClientTrackinginfo(x *Exec, argv [][]byte) {
	t := &x.cl.trk
	x.Map(3)
	x.BulkStr("flags")
	flags := []string{"off"}
	if t.on {
		flags[0] = "on"
	}
	if t.bcast {
		flags = append(flags, "bcast")
	}
	if t.optin {
		flags = append(flags, "optin")
		if t.caching {
			flags = append(flags, "caching-yes")
		}
	}
	if t.optout {
		flags = append(flags, "optout")
		if t.caching {
			flags = append(flags, "caching-no")
		}
	}
	if t.noloop {
		flags = append(flags, "noloop")
	}
	if t.broken {
		flags = append(flags, "broken_redirect")
	}
	x.Set(len(flags))
	for _, f := range flags {
		x.BulkStr(f)
	}
	x.BulkStr("redirect")
	if t.on {
		x.Int(t.redir)
	} else {
		x.Int(-1)
	}
	x.BulkStr("prefixes")
	x.Array(len(t.prefixes))
	for _, p := range t.prefixes {
		x.BulkStr(p)
	}
}

// trackMem is the memory of the client's BCAST prefixes (Redis counts its
// prefix table in the client's memory).
func (cl *Client) trackMem() int64 {
	var n int64
	for _, p := range cl.trk.prefixes {
		n += int64(len(p)) + subOverhead
	}
	return n
}

// trackInfoFlags appends CLIENT LIST's tracking flags.
func (cl *Client) trackInfoFlags(b []byte) []byte {
	if cl.trk.on {
		b = append(b, 't')
	}
	if cl.trk.broken {
		b = append(b, 'R')
	}
	if cl.trk.bcast {
		b = append(b, 'B')
	}
	return b
}

// trackRedirInfo is CLIENT LIST's redir field.
func (cl *Client) trackRedirInfo() int64 {
	if cl.trk.on {
		return cl.trk.redir
	}
	return -1
}
