package server

// Client memory and client eviction (Redis 7.0's maxmemory-clients:
// getClientMemoryUsage, updateClientMemUsageAndBucket, evictClients).
//
// A client's memory (clientMem, CLIENT LIST's tot-mem) is its query buffer,
// its reply buffer, the replies gnet holds because the socket would not take
// them, its MULTI queue and watched keys, its subscriptions and a fixed
// overhead for the Client itself.
//
// Accounting. Each loop keeps the sum of its clients' memory in an atomic
// only it writes (loopClientMem.total); a client's part is brought up to
// date by accountMem when a batch's replies are written, once a second from
// the cron (gnet drains queued replies without telling us) and when the
// client goes. The server's figure (used_memory, mem_clients_normal, the
// maxmemory budget) is the sum over the loops. Nothing is locked and nothing
// is read across loops per command: a batch whose clients' memory did not
// change costs one comparison.
//
// Buckets. As in Redis, every client that may be evicted (not CLIENT
// NO-EVICT, not closing) sits in a bucket by the log2 of its memory (32 KiB
// and below share the first bucket, 8 GiB and above the last). Each loop
// counts its clients per bucket and publishes its highest non-empty bucket
// (loopClientMem.top).
//
// Eviction. When a client's memory grew (or it became evictable) and
// maxmemory-clients is set, its loop compares the sum over the loops with
// the limit; if the total is over it, the loop queues an eviction pass on
// itself (after the event that found it, never inside a command). One pass
// runs at a time in the whole server (Server.cmem.evicting): it takes the
// loop whose top bucket is highest (its own on ties), and if that is its
// own, closes the biggest client of that bucket, else hands the pass to that
// loop; it goes on until the total is within the limit. Each client is
// closed by its own loop, so the loops' data stay single-threaded. The cron
// runs the same check once a second (output drained or grown without a
// write from us). CONFIG SET maxmemory-clients runs with every loop parked
// and evicts at once, so that the reply finds the clients gone, as Redis's
// does.
//
// Redis evicts while the total is at or over the limit; here it is while
// the total is over it ("exceeds"), which keeps exactly as many clients as
// fit when the limit is set to the sum of the clients that should stay.

import (
	"context"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/shard"
	"golang.org/x/sys/unix"
)

const (
	clientMemBucketMinLog = 15 // Redis's CLIENT_MEM_USAGE_BUCKET_MIN_LOG (32 KiB)
	clientMemBucketMaxLog = 33 // CLIENT_MEM_USAGE_BUCKET_MAX_LOG (8 GiB)
	clientMemBuckets      = clientMemBucketMaxLog - clientMemBucketMinLog + 1

	// minClientEvictionLimit is Redis's floor for maxmemory-clients, so that
	// a bad setting cannot cut every client off (getClientEvictionLimit).
	minClientEvictionLimit = 128 << 10

	// clientOverhead is the fixed memory of a client: the Client itself
	// and its parser's state (Redis counts sizeof(client) and its static
	// reply buffer).
	clientOverhead = int64(unsafe.Sizeof(Client{})) + 512

	// subOverhead is the memory one subscription costs its client beyond
	// its copy of the name (a map entry), as Redis's pubsubMemOverhead.
	subOverhead = 48
)

// loopClientMem is one loop's client memory accounting.
type loopClientMem struct {
	total     atomic.Int64 // accounted memory of the loop's clients
	evictable atomic.Int64 // the part of total held by clients in a bucket (evictable)
	top       atomic.Int32 // highest bucket holding an evictable client, -1: none
	count     [clientMemBuckets]int32

	evictQueued bool          // an eviction pass is queued on the loop
	evictRun    gnet.Runnable // starts a pass (takes the server's token)
	handoffRun  gnet.Runnable // goes on with a pass another loop handed over
}

// serverClientMem is the server side of client eviction.
type serverClientMem struct {
	evicting  atomic.Bool  // an eviction pass is running (on some loop)
	evicted   atomic.Int64 // INFO stats evicted_clients
	warnedSec atomic.Int64 // last second "Over client maxmemory" was logged
}

func (l *Loop) initClientMem() {
	l.cmem.top.Store(-1)
	l.cmem.evictRun = gnet.RunnableFunc(func(context.Context) error {
		l.cmem.evictQueued = false
		if l.srv.cmem.evicting.CompareAndSwap(false, true) {
			l.evictClients()
		}
		return nil
	})
	l.cmem.handoffRun = gnet.RunnableFunc(func(context.Context) error {
		l.evictClients()
		return nil
	})
}

// clientMemTotal is the accounted memory of every client.
func (srv *Server) clientMemTotal() int64 {
	var n int64
	for _, l := range srv.loops {
		n += l.cmem.total.Load()
	}
	return n
}

// clientMemEvictable is the accounted memory of the clients that may be
// evicted.
func (srv *Server) clientMemEvictable() int64 {
	var n int64
	for _, l := range srv.loops {
		n += l.cmem.evictable.Load()
	}
	return n
}

// clientEvictionLimit is maxmemory-clients in bytes (a percentage is of
// maxmemory), 0 when client eviction is off (Redis's getClientEvictionLimit).
func (srv *Server) clientEvictionLimit() int64 {
	v := srv.cfg.maxmemoryClients.Load()
	var lim int64
	switch {
	case v > 0:
		lim = v
	case v < 0:
		max := srv.cfg.MaxMemory()
		if max == 0 {
			return 0
		}
		lim = int64(float64(max) * float64(-v) / 100)
	default:
		return 0
	}
	if lim < minClientEvictionLimit {
		lim = minClientEvictionLimit
	}
	return lim
}

// clientMemBucket is the bucket of a client using mem bytes.
func clientMemBucket(mem int64) int8 {
	b := bits.Len64(uint64(mem))
	if b < clientMemBucketMinLog {
		b = clientMemBucketMinLog
	} else if b > clientMemBucketMaxLog {
		b = clientMemBucketMaxLog
	}
	return int8(b - clientMemBucketMinLog)
}

// memUsage is the client's memory (CLIENT LIST's tot-mem): buffers, MULTI
// state and watched keys, subscriptions and the fixed overhead. It feeds
// used_memory and mem_clients_normal as well as client eviction. It runs on
// the client's loop, or with that loop parked.
func (cl *Client) memUsage() int64 { return cl.bufMem() + cl.stateMem() }

// bufMem is the memory of the client's buffers, which only its loop
// changes.
func (cl *Client) bufMem() int64 {
	// The query buffer as Redis holds it (querybuf.go); gnet's read buffer,
	// lent to a call, is the loop's and not counted, so the figure is the
	// same during a command (INFO, CLIENT LIST) as between batches.
	n := int64(cl.qbufAlloc()+cap(cl.out)) + clientOverhead
	if cl.c != nil && !cl.closed {
		n += int64(cl.c.OutboundBuffered())
	}
	return n
}

// stateMem is the memory of the client's MULTI queue, watched keys and
// subscriptions, which a hop in flight may be changing on another loop.
func (cl *Client) stateMem() int64 {
	n := int64(cl.multiMem()) + cl.trackMem() // tracking.go
	if cl.ps != nil {
		sub, psub, ssub := cl.pubsubInfo()
		n += int64(sub+psub+ssub)*subOverhead + int64(cl.ps.nameBytes)
	}
	return n
}

// evictable reports whether the client may be evicted (Redis's
// clientEvictionAllowed: not a replica, nor the master's client, which is
// internal).
func (cl *Client) evictable() bool {
	return !cl.noEvict && !cl.closing && !cl.closed && !cl.internal && cl.c != nil && cl.rep == nil
}

// accountMem brings the loop's total and buckets up to date with the
// client's memory, and starts an eviction pass if the clients are over
// maxmemory-clients. It runs on the client's loop.
func (cl *Client) accountMem() {
	if cl.loop == nil || cl.evicted {
		if cl.evictDeferred && !cl.hopOut {
			cl.evictDeferred = false
			cl.evictNotice() // the caller writes its replies (none) and closes it
		}
		return
	}
	if cl.closed {
		// Gone (OnClose, or closed for good after its replies): dropMem took
		// it out of the accounting. A batch's replies may still be flushed
		// after its connection closed in the same poll round, and must not
		// put it back.
		return
	}
	lm := &cl.loop.cmem
	if !cl.hopOut {
		// With a hop in flight (pipelined commands of another shard), the
		// buffers are accounted and the rest is as last seen: the hop's
		// loop may be changing it.
		cl.stateAcct = cl.stateMem()
	}
	n := cl.bufMem() + cl.stateAcct
	grew := n > cl.memAcct
	var evOld, evNew int64
	if cl.memBucket > 0 {
		evOld = cl.memAcct
	}
	if n != cl.memAcct {
		lm.total.Add(n - cl.memAcct)
		cl.memAcct = n
	}
	b := int8(0) // memBucket is the bucket + 1; 0: in none
	if cl.evictable() {
		b = clientMemBucket(n) + 1
		evNew = n
	}
	if evNew != evOld {
		lm.evictable.Add(evNew - evOld)
	}
	if b != cl.memBucket {
		cl.loop.moveBucket(cl.memBucket-1, b-1)
		cl.memBucket = b
		grew = grew || b > 0
	}
	if grew {
		cl.loop.checkClientMem()
	}
}

// dropMem takes the client out of the accounting (it is going).
func (cl *Client) dropMem() {
	if cl.loop == nil {
		return
	}
	cl.loop.cmem.total.Add(-cl.memAcct)
	if cl.memBucket > 0 {
		cl.loop.cmem.evictable.Add(-cl.memAcct)
	}
	cl.memAcct = 0
	if cl.memBucket > 0 {
		cl.loop.moveBucket(cl.memBucket-1, -1)
		cl.memBucket = 0
	}
}

// moveBucket moves one client from bucket from to bucket to (-1: none) and
// republishes the loop's top bucket.
func (l *Loop) moveBucket(from, to int8) {
	lm := &l.cmem
	if from >= 0 {
		lm.count[from]--
	}
	if to >= 0 {
		lm.count[to]++
	}
	top := int32(-1)
	for i := clientMemBuckets - 1; i >= 0; i-- {
		if lm.count[i] > 0 {
			top = int32(i)
			break
		}
	}
	if lm.top.Load() != top {
		lm.top.Store(top)
	}
}

// checkClientMem queues an eviction pass on the loop if the clients are over
// maxmemory-clients.
func (l *Loop) checkClientMem() {
	lim := l.srv.clientEvictionLimit()
	if lim == 0 || l.cmem.evictQueued || l.srv.clientMemTotal() <= lim {
		return
	}
	if l.el == nil || l.post(l.cmem.evictRun) != nil {
		return
	}
	l.cmem.evictQueued = true
}

// evictNow evicts the loop's own clients while the clients are over
// maxmemory-clients and the loop holds the biggest of them: a transaction
// (CLIENT LIST, INFO, ...) is about to park or run on it, and must not find
// a client that a pass queued behind it, or handed over to it, is about to
// evict (Redis evicts before it serves another command). It does not wait
// for the server's token, so a pass running at the same time on another
// loop may evict one client more than needed.
func (l *Loop) evictNow() {
	srv := l.srv
	if srv.clientEvictionLimit() == 0 {
		return
	}
	if l.cmem.top.Load() < 0 {
		return
	}
	lim := srv.clientEvictionLimit()
	for lim != 0 && srv.clientMemTotal() > lim {
		top := l.cmem.top.Load()
		if top < 0 {
			return
		}
		for _, o := range srv.loops {
			if o.cmem.top.Load() > top {
				return // a bigger client elsewhere: its loop's pass evicts it
			}
		}
		cl := l.biggestClient(int8(top))
		if cl == nil {
			return
		}
		cl.evict(false)
	}
}

// evictClients runs an eviction pass on l, which holds the server's token:
// it evicts its biggest clients while the total is over the limit and its
// top bucket is the highest, hands the pass to the loop with the highest
// bucket otherwise, and gives the token back when done.
func (l *Loop) evictClients() {
	srv := l.srv
	for {
		lim := srv.clientEvictionLimit()
		if lim == 0 || srv.clientMemTotal() <= lim {
			srv.cmem.evicting.Store(false)
			// A loop that found the total over the limit while the token
			// was held has given up: look again.
			if lim == 0 || srv.clientMemTotal() <= lim || !srv.cmem.evicting.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		best, top := l, l.cmem.top.Load()
		for _, o := range srv.loops {
			if t := o.cmem.top.Load(); t > top {
				best, top = o, t
			}
		}
		if top < 0 {
			srv.overClientMemory()
			srv.cmem.evicting.Store(false)
			return
		}
		if best != l {
			if best.post(best.cmem.handoffRun) != nil {
				srv.cmem.evicting.Store(false)
			}
			return
		}
		cl := l.biggestClient(int8(top))
		if cl == nil { // cannot happen: the counts say there is one
			srv.cmem.evicting.Store(false)
			return
		}
		cl.evict(false)
	}
}

// overClientMemory logs, at most once a second, that no client is left to
// evict (Redis logs it on every attempt).
func (srv *Server) overClientMemory() {
	sec := time.Now().Unix()
	if last := srv.cmem.warnedSec.Load(); last != sec && srv.cmem.warnedSec.CompareAndSwap(last, sec) {
		srv.log.Warningf("Over client maxmemory after evicting all evictable clients")
	}
}

// biggestClient is the loop's evictable client that uses the most memory in
// bucket b (a scan of the loop's clients: evictions are rare).
func (l *Loop) biggestClient(b int8) *Client {
	var best *Client
	for _, cl := range l.clients {
		if cl.memBucket != b+1 || cl.evicted {
			continue
		}
		if best == nil || cl.memAcct > best.memAcct {
			best = cl
		}
	}
	return best
}

// evict disconnects the client for maxmemory-clients, dropping its pending
// replies (Redis's freeClient from evictClients). It runs on the client's
// loop, or (parked) with that loop parked, when the client's own cleanup is
// queued to its loop.
func (cl *Client) evict(parked bool) {
	cl.dropMem()
	cl.evicted = true
	if cl.hopOut && !parked {
		// The hop's loop may be changing the client's state, which the
		// log line shows: the rest is done when the hop is back
		// (accountMem, from hopDone). Its memory is out of the total now,
		// so the pass does not evict another client for it.
		cl.evictDeferred = true
		return
	}
	cl.evictNotice()
	if cl.hopOut {
		return // closed by writeOut when the hop comes back
	}
	cl.closed = true
	if fd := cl.c.Fd(); fd > 2 {
		// Stop reading and writing now: gnet closes the fd on its loop.
		_ = unix.Shutdown(fd, unix.SHUT_RDWR)
	}
	_ = cl.c.Close()
	delete(cl.loop.clients, cl.id)
	cl.srv.nclients.Add(-1)
	if parked {
		if cl.loop.post(gnet.RunnableFunc(func(context.Context) error {
			cl.onClose()
			return nil
		})) == nil {
			return
		}
	}
	cl.onClose()
}

// evictNotice logs the eviction and drops the client's pending replies;
// the client is closed once no hop is out.
func (cl *Client) evictNotice() {
	cl.srv.log.Noticef("Evicting client: %s", cl.infoLine())
	cl.srv.cmem.evicted.Add(1)
	cl.out = cl.out[:0]
	cl.closing = true
}

// evictClientsParked evicts until the clients are within the limit, with
// every loop parked (CONFIG SET maxmemory-clients): the biggest clients of
// the highest bucket go first, across all loops.
func (srv *Server) evictClientsParked() {
	for _, l := range srv.loops {
		for _, cl := range l.clients {
			cl.accountMem() // CLIENT NO-EVICT and buffers as they are now
		}
	}
	for {
		lim := srv.clientEvictionLimit()
		if lim == 0 || srv.clientMemTotal() <= lim {
			return
		}
		var victim *Client
		for _, l := range srv.loops {
			for _, cl := range l.clients {
				if cl.memBucket == 0 || cl.evicted {
					continue
				}
				if victim == nil || cl.memBucket > victim.memBucket ||
					cl.memBucket == victim.memBucket && cl.memAcct > victim.memAcct {
					victim = cl
				}
			}
		}
		if victim == nil {
			srv.overClientMemory()
			return
		}
		victim.evict(true)
	}
}

// clientMemCron runs from the loop's cron (hz times a second, as Redis's
// clientsCron): it trims query buffers (querybuf.go) and, once a second
// (all), accounts every client for the replies gnet sent or queued since.
func (l *Loop) clientMemCron(now time.Time, all bool) {
	for _, cl := range l.clients {
		c, o := cl.qbufAlloc(), cap(cl.out)
		cl.resizeQueryBuffer(now)
		cl.resizeReplyBuffer(now)
		if all || cl.qbufAlloc() != c || cap(cl.out) != o {
			cl.accountMem()
		}
	}
}

// Reply buffers. A client's replies are assembled in cl.out, which grows
// as a batch's replies need and is kept between batches (let go at once
// past 64 KiB, writeOut). As Redis's clientsCronResizeOutputBuffer does
// for its reply buffer, the cron shrinks a buffer whose client used less
// than half of it at every write of the last peak period
// (replyPeakResetDefault, DEBUG REPLYBUFFER PEAK-RESET-TIME) to that
// peak, at least 1 KiB: a client that once read a large value does not
// keep its buffer while it reads small ones or idles. Growth is counted
// as Redis's expands (reply_buffer_expands), shrinks as its shrinks.
// DEBUG REPLYBUFFER RESIZING 0 stops both (the buffer still grows).
const (
	replyPeakResetDefault = 5000 // ms, Redis's REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME
	replyMinBytes         = 1024 // Redis's PROTO_REPLY_MIN_BYTES
)

// resizeReplyBuffer is the cron's resizing of the client's reply buffer.
func (cl *Client) resizeReplyBuffer(now time.Time) {
	srv := cl.srv
	if srv.replyResizeOff.Load() {
		cl.outCap = cap(cl.out)
		return
	}
	size := cap(cl.out)
	if size > cl.outCap && cl.outCap > 0 {
		srv.replyExpands.Add(1)
	}
	if len(cl.out) == 0 && !cl.hopOut && size/2 >= replyMinBytes && cl.outPeak < size/2 {
		cl.out = make([]byte, 0, max(replyMinBytes, cl.outPeak+1))
		srv.replyShrinks.Add(1)
	}
	cl.outCap = cap(cl.out)
	if cl.outPeakAt.IsZero() {
		cl.outPeakAt = now // its first peak period starts at its first cron
	}
	if reset := srv.replyPeakReset.Load(); reset >= 0 && now.Sub(cl.outPeakAt) >= time.Duration(reset)*time.Millisecond {
		cl.outPeak = len(cl.out)
		cl.outPeakAt = now
	}
}

// configSetParks reports whether a CONFIG SET must run with every loop
// parked: appendonly (persist.go) and maxmemory-clients, whose eviction
// happens before the reply.
func configSetParks(argv [][]byte) bool {
	if configSetAllShards(argv) {
		return true
	}
	for i := 2; i < len(argv); i += 2 {
		if shard.EqualFold(argv[i], "maxmemory-clients") {
			return true
		}
	}
	return false
}

// initClientEviction installs the CONFIG SET hooks: a lower maxmemory-clients
// evicts at once (every loop is parked), and so may a lower maxmemory when
// the limit is a percentage of it (each loop checks on its own).
func (srv *Server) initClientEviction() {
	for _, l := range srv.loops {
		l.initClientMem()
	}
	srv.cfg.OnChange("maxmemory-clients", srv.evictClientsParked)
	srv.cfg.OnChange("maxmemory", func() {
		if srv.cfg.maxmemoryClients.Load() >= 0 {
			return
		}
		for _, l := range srv.loops {
			l := l
			_ = l.post(gnet.RunnableFunc(func(context.Context) error {
				l.checkClientMem()
				return nil
			}))
		}
	})
}

// debugReplyBuffer is DEBUG REPLYBUFFER PEAK-RESET-TIME <ms>|NEVER|RESET
// and RESIZING 0|1, Redis's knobs of the reply buffers' resizing
// (resizeReplyBuffer).
func debugReplyBuffer(x *Exec, argv [][]byte) {
	srv := x.srv
	switch {
	case shard.EqualFold(argv[2], "peak-reset-time"):
		switch {
		case shard.EqualFold(argv[3], "never"):
			srv.replyPeakReset.Store(-1)
		case shard.EqualFold(argv[3], "reset"):
			srv.replyPeakReset.Store(replyPeakResetDefault)
		default:
			ms, ok := shard.ParseInt(argv[3])
			if !ok {
				x.Err("ERR value is not an integer or out of range")
				return
			}
			srv.replyPeakReset.Store(ms)
		}
	case shard.EqualFold(argv[2], "resizing"):
		srv.replyResizeOff.Store(cAtoi(argv[3]) == 0) // atoi, as Redis's
	default:
		subcommandSyntaxError(x, argv)
		return
	}
	x.OK()
}
