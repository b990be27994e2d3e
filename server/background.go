package server

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/bgchild"
)

// startBackground runs the per-shard cron (Redis's serverCron/databasesCron):
// every 1000/hz ms each loop runs the active expiry cycle on its own shard.
func (srv *Server) startBackground() {
	for _, l := range srv.loops {
		l := l
		l.cronRunnable = gnet.RunnableFunc(func(context.Context) error {
			l.cron()
			return nil
		})
	}
	if bgchild.Enabled() {
		go func() { // bgchild.go
			for !srv.stopping.Load() {
				time.Sleep(time.Second)
				srv.reapStrays()
			}
		}()
	}
	go func() {
		for {
			hz := srv.cfg.Hz()
			if hz < 1 {
				hz = 1
			}
			time.Sleep(time.Second / time.Duration(hz))
			if srv.stopping.Load() {
				return
			}
			if srv.shut.paused.Load() { // DEBUG PAUSE-CRON 1
				continue
			}
			for _, l := range srv.loops {
				if l.cronBusy.CompareAndSwap(false, true) {
					_ = l.post(l.cronRunnable)
				}
			}
		}
	}()
}

// compactBudget is the time a cron tick gives slab compaction: at the
// default hz 10, 1% of a core while a run is under way, nothing otherwise.
const compactBudget = time.Millisecond

// releaseMemory returns the memory of flushed keys to the OS: a collection
// and a scavenge, off the loops, at most one at a time (FLUSHALL on every
// shard calls it once per shard). Without it the Go heap keeps the freed
// slabs until the next collection, which an idle server never starts.
func (srv *Server) releaseMemory() {
	if !srv.freeing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		time.Sleep(100 * time.Millisecond) // let every shard's flush land
		runtime.GC()
		debug.FreeOSMemory()
		srv.freeing.Store(false)
	}()
}

// heapMark is where a loop's shard stood on the Go heap when it last asked
// for a collection: the largest object memory seen since, and the slab's
// bytes of pages released to the heap.
type heapMark struct {
	objPeak, slabReleased int64
}

// gcFreedTrigger is how much a shard must have left to the Go heap (values
// deleted, slab pages compaction released) before its cron asks for a
// collection.
const gcFreedTrigger = 8 << 20

// maybeCollect asks for a garbage collection once the shard has left
// gcFreedTrigger bytes to the Go heap since the last one it asked for.
//
// Under load the collector runs often enough on its own (GOGC 25); after a
// delete on a quiet server it would wait for the runtime's two-minute
// forced collection, and until a collection has run freed memory is not
// free. The collection runs concurrently, off the loops; the heap goal it
// leaves is lower, and the runtime's background scavenger gives the pages
// above it back to the OS at its own pace (about 1% of a CPU), which is
// why this is not debug.FreeOSMemory: that one scavenges everything at
// once, holding up every allocation meanwhile.
func (l *Loop) maybeCollect() {
	obj, rel := l.sh.ObjMemory(), l.sh.Slab.HeapReleased()
	m := &l.gcMark
	if rel < m.slabReleased { // a new slab (FLUSHALL, a full sync)
		m.slabReleased = rel
	}
	m.objPeak = max(m.objPeak, obj)
	if m.objPeak-obj+rel-m.slabReleased < gcFreedTrigger {
		return
	}
	m.objPeak, m.slabReleased = obj, rel
	srv := l.srv
	if srv.collecting.CompareAndSwap(false, true) {
		go func() {
			runtime.GC()
			srv.collecting.Store(false)
		}()
	}
}

// cron runs on the loop.
func (l *Loop) cron() {
	defer l.cronBusy.Store(false)
	now := time.Now()
	l.sh.SetNow(now.UnixMilli())
	l.sweepBlocked(now.UnixMilli())
	l.nowValid = false
	l.tickValid = false
	l.dirtyPub.Store(l.stats.dirty)
	if l.srv.persist != nil {
		l.sh.OnExpired = l.p.expHook
		defer l.endEvent()
		if l.id == 0 && !l.srv.load.active.Load() {
			l.srv.maybeAutoRewrite()
		}
	}
	if l.id == 0 {
		l.maybeAutoSave() // snapshot.go
		l.srv.replCron()  // repl_master.go
	}
	if l.srv.repl.isReplica.Load() && l.sh.OwnExpiring() > 0 && l.srv.pause.typ.Load() == pauseOff {
		l.sh.ExpireOwn() // a writable replica's own keys (shard/expire.go)
	}
	if l.srv.activeExpire.Load() && !l.srv.keepExpired() && !l.srv.repl.isReplica.Load() {
		// A replica waits for its master's DELs (Redis runs the cycle on
		// masters only); a paused server expires nothing (pause.go).
		hz := l.srv.cfg.Hz()
		if hz < 1 {
			hz = 1
		}
		// 25% of a cron period at the default effort, like Redis.
		budget := time.Second / time.Duration(hz) / 4
		t0 := time.Now()
		l.sh.ActiveExpireCycle(budget, l.srv.cfg.ActiveExpireEffort())
		l.srv.addLatency("expire-cycle", time.Since(t0)) // latency.go
	}
	if l.srv.shardBudget.Load() != 0 && !l.srv.replIgnoresMaxmemory() {
		l.makeRoom(1 << uint(l.id)) // maxmemory lowered while no write came
	}
	// Slab compaction (shard/compact.go): pages that deletes left sparse
	// go back to the OS, a millisecond per cron tick at most, so RSS
	// follows the live data rather than its high-water mark. Redis names
	// the latency event of its active defrag so.
	t0 := time.Now()
	l.sh.CompactStep(compactBudget)
	l.srv.addLatency("active-defrag-cycle", time.Since(t0)) // latency.go
	l.maybeCollect()
	l.sh.PublishKeys() // for SCAN's routing (commands.go's scanShards)
	l.trackCron()      // tracking-table-max-keys, the expiry's invalidations (tracking.go)
	everySec := l.timeoutCheck.Before(now)
	l.clientMemCron(now, everySec) // query buffers, replies gnet has sent since (clientmem.go)
	if everySec {
		l.timeoutCheck = now.Add(time.Second)
		l.closeIdleClients(now)
		l.pubsubCron()       // output buffer limits of subscribers (pubsub.go)
		l.cronOutputLimits() // soft output buffer limits of the others (obuf.go)
	}
}

// closeIdleClients closes clients idle for longer than the timeout option,
// as Redis's clientsCronHandleTimeout (a client waiting on a hop is busy).
func (l *Loop) closeIdleClients(now time.Time) {
	secs := l.srv.cfg.Timeout()
	if secs <= 0 {
		return
	}
	limit := time.Duration(secs) * time.Second
	for _, cl := range l.clients {
		if !cl.hopOut && !cl.closing && !cl.subscribed() && now.Sub(cl.lastInteraction) > limit {
			l.srv.log.Verbosef("Closing idle client")
			cl.closing = true
			cl.flush()
		}
	}
}
