package server

// BGREWRITEAOF without fork.
//
// The command runs with every loop parked (allShards), which is the cut:
// the executor submits what it has logged so far, aof.Log.StartRewrite
// switches later batches to a new incremental file, and every shard starts
// an image of itself (shard/rewrite.go). Each loop then serializes its own
// shard in small steps, one step per task it queues to itself, so requests
// are served in between; a key about to change is serialized first by the
// shard. When the last shard is done, a goroutine finishes the rewrite (the
// base is written in the background as it comes, then the manifest is
// swapped atomically) off the loops.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/aof/rdb"
)

var persistCommands = []serverCmd{
	{name: "bgrewriteaof", exec: cmdBgrewriteaof, allShards: true},
}

// rewriteStepKeys is how many slots a loop serializes in one step.
const rewriteStepKeys = 256

// rewriteRunBudget is how long steps run back to back before the loop
// serves its clients again. gnet runs up to 256 queued tasks in one pass,
// and a step that queued the next from inside it ran the whole pass: with
// 1M keys a GET waited 310-340 ms during BGREWRITEAOF. Once the steps of a
// run have taken this long the next is queued from a goroutine, which runs
// when the loop next yields, after its pending reads. (A fixed count of 4
// steps of 2048 slots was a millisecond or two for the rewrite's commands
// but tens of ms for a BGSAVE's RDB items of 10-element collections on a
// busy machine: GET p99 62 ms during BGSAVE, bench -only rdb.)
const rewriteRunBudget = time.Millisecond

// While clients are being served (some were in the last
// rewriteBusyWindow), runs are shorter and so are their steps: a GET waited for the run in progress,
// and with 50 writers and a GET probe during a BGSAVE of 1M mixed keys
// (bench -only rdb) the probe got 1589-2014 replies over the BGSAVE
// against 24k in 2 s steady, p99 7-8 ms (the median GET waited about half
// a run). With runs of 100 µs and steps of 32 slots it got 5.7k, p99
// 4-5 ms; the BGSAVE took 2.2-2.6 s instead of 1.1-1.3 s (redis-server:
// 2.6 s).
//
// And after each run a busy loop waits rewriteBusyPause before the next, so
// that while clients are served a BGSAVE's or a rewrite's image takes at
// most a quarter of the loop (a disk-less full sync's does not wait: its
// replica buffers the writes meanwhile). Back to back, the runs kept the
// loop's thread busy without a break, on 2 CPUs that the clients already
// filled (one shard: the loop 89% busy with 50 writers, redis-benchmark
// the other CPU): GET p99 during a BGSAVE of 1M mixed keys 3.0-3.3 ms
// against 0.6-0.7 ms steady. With the pause, 1.1 ms by a probe beside the
// writers, 2.0 ms in bench -only rdb (1.6 ms pinned, against 3.8 ms), and
// the BGSAVE took 4.3 s instead of 1.8 s (pinned 13.6 s instead of 9.9 s).
// A pause of 100 µs (half the loop) gave 2.65 ms on the same keys.
const (
	rewriteBusyPause    = 300 * time.Microsecond
	rewriteBusyBudget   = 100 * time.Microsecond
	rewriteBusyStepKeys = 32
	rewriteBusyWindow   = 10 * time.Millisecond
)

type rewriteStatus struct {
	active    atomic.Bool
	started   atomic.Int64 // unix ms of the current rewrite's start
	lastSecs  atomic.Int64 // duration of the last rewrite, -1 before any
	lastOK    atomic.Bool
	failures  atomic.Int64 // consecutive failed rewrites (aof_rewrites_consecutive_failures)
	count     atomic.Int64
	remaining atomic.Int32 // shards still serializing
	// cur is the rewrite in progress: it is set and cleared with every loop
	// parked (or, at the end, by finishRewrite), and an abort clears it
	// first, so a finish that lost the race to an abort changes nothing.
	cur atomic.Pointer[aof.Rewrite]
}

func cmdBgrewriteaof(x *Exec, argv [][]byte) {
	srv := x.srv
	if x.InMulti && x.cl != nil { // inside EXEC: cut after its block (multi.go)
		if srv.rw.active.Load() {
			x.Err("ERR Background append only file rewriting already in progress")
			return
		}
		x.cl.multi.rewriteAfter = true
		x.Simple("Background append only file rewriting scheduled")
		return
	}
	// What this loop logged earlier in the event belongs before the cut.
	if srv.persist != nil {
		x.loop.p.wrote |= 1<<uint(len(srv.shards)) - 1
		x.loop.submit()
	}
	if srv.save.active.Load() || srv.repl.m.imaging.Load() {
		// One image at a time: it starts when the BGSAVE (or a replica's
		// full sync) is done.
		srv.save.rewriteAfter.Store(true)
		x.Simple("Background append only file rewriting scheduled")
		return
	}
	if err := srv.startRewrite(); err != nil {
		x.Err(err.Error())
		return
	}
	x.Simple("Background append only file rewriting started")
}

// startRewrite makes the cut and starts every shard's image. Every loop is
// parked, and what the loops logged so far is submitted.
func (srv *Server) startRewrite() error {
	if !srv.rw.active.CompareAndSwap(false, true) {
		return errors.New("ERR Background append only file rewriting already in progress")
	}
	var r *aof.Rewrite
	var err error
	if ps := srv.aofLog(); ps != nil {
		r, err = ps.log.StartRewrite()
	} else {
		// appendonly no: Redis 7.0 rewrites the folder all the same (a new
		// base, no incremental file), and so does redshard.
		r, err = aof.OpenFolder(srv.aofOptions(false)).StartRewrite()
	}
	if err != nil {
		srv.rw.active.Store(false)
		srv.rw.lastOK.Store(false)
		srv.rw.failures.Add(1)
		return errors.New("ERR Background append only file rewriting error: " + err.Error())
	}
	srv.rw.started.Store(time.Now().UnixMilli())
	srv.rw.cur.Store(r)
	srv.rw.remaining.Store(int32(len(srv.loops)))
	rdbBase := srv.cfg.AOFUseRDBPreamble()
	if rdbBase {
		// An RDB base, as Redis 7 writes with aof-use-rdb-preamble yes: the
		// libraries go in it, the keys as RDB items (snapshot.go's image).
		h, codes := srv.imageHead()
		if err := r.UseRDB(srv.rdbOptions(), h, codes); err != nil {
			srv.rw.cur.Store(nil)
			r.Abort()
			srv.rw.active.Store(false)
			srv.rw.lastOK.Store(false)
			srv.rw.failures.Add(1)
			return errors.New("ERR Background append only file rewriting error: " + err.Error())
		}
	} else if libs := srv.funcs.list(); len(libs) > 0 {
		// The libraries first, one FUNCTION LOAD each, as Redis's
		// rewriteFunctions writes them (functions.go).
		w := r.NewWriter()
		for _, lib := range libs {
			w.Append(0, [][]byte{[]byte("FUNCTION"), []byte("LOAD"), []byte(lib.code)})
		}
		w.Flush()
	}
	srv.procsFor(1) // a P for the base's writer goroutine (procs.go)
	srv.imageStarted()
	for _, l := range srv.loops {
		l.startRewrite(r, rdbBase)
	}
	if c := r.Child(); c != nil {
		go srv.watchRewriteChild(r, c) // bgchild.go
	}
	return nil
}

// startRewrite runs while every loop is parked: it starts the shard's image
// and queues the loop's first step.
func (l *Loop) startRewrite(r *aof.Rewrite, rdbBase bool) {
	l.rwJob = r
	l.startImageDelay()
	if rdbBase {
		cw := rdb.NewChunkWriter(l.srv.rdbOptions(), snapChunk, r.Hand)
		l.rwChunks = cw
		l.sh.StartImage(imageKey(cw))
	} else {
		w := r.NewWriter()
		l.rwWriter = w
		l.sh.StartRewrite(func(db int, argv [][]byte) { w.Append(db, argv) })
	}
	if l.rwStep == nil {
		l.rwStep = gnet.RunnableFunc(func(context.Context) error {
			l.rewriteStep()
			return nil
		})
	}
	_ = l.post(l.rwStep)
}

// rewriteStep serializes a slice of the shard and queues the next one.
func (l *Loop) rewriteStep() {
	if l.rwJob == nil && l.snap == nil {
		return
	}
	// A FLUSHALL or SWAPDB run by a transaction may have finished the
	// image already (Rewriting is then false).
	if d := l.imgDelay; d != 0 && l.sh.Rewriting() {
		// rdb-key-save-delay: small steps, each followed by a wait of the
		// delay times the keys it serialized, as Redis's child sleeps per
		// key it saves.
		// The wait comes after the last step too, so a small image is
		// slowed down as much as a big one's first keys.
		before := l.sh.RewriteKeys()
		done := l.sh.RewriteStep(rewriteDelayedSlots)
		if n := l.sh.RewriteKeys() - before; n > 0 {
			go l.delayStep(d, n)
			return
		}
		if !done {
			_ = l.post(l.rwStep)
			return
		}
	} else if l.sh.Rewriting() {
		if js := l.snap; js != nil && js.s.Pending() > snapPendingMax {
			// The file's writer is behind: wait for it rather than grow
			// the heap (see snapPendingMax).
			l.rwLater(snapPendingWait)
			return
		}
		if l.stats.reads != l.rwReads || l.rwRun.IsZero() { // a new run: clients were served since the last step
			now := time.Now()
			if l.stats.reads != l.rwReads {
				l.rwServed = now
			}
			// Busy when clients were served lately, not only right
			// before this run: a run often starts before the replies'
			// clients have sent their next requests.
			l.rwBusy = now.Sub(l.rwServed) < rewriteBusyWindow
			l.rwReads, l.rwRun = l.stats.reads, now
		}
		keys, budget := rewriteStepKeys, rewriteRunBudget
		if l.rwBusy {
			keys, budget = rewriteBusyStepKeys, rewriteBusyBudget
		}
		if !l.sh.RewriteStep(keys) {
			if time.Since(l.rwRun) < budget {
				_ = l.post(l.rwStep)
				return
			}
			l.rwRun = time.Time{}
			if l.rwBusy && (l.snap == nil || !l.snap.sync) {
				l.rwLater(rewriteBusyPause)
				return
			}
			go func() { _ = l.post(l.rwStep) }()
			return
		}
	}
	if l.snap != nil {
		l.snapStepDone() // a BGSAVE's image (snapshot.go)
		return
	}
	if l.rwChunks != nil {
		l.rwChunks.Flush()
		if err := l.rwChunks.Err(); err != nil {
			l.rwJob.Fail(err)
		}
	} else {
		l.rwWriter.Flush()
	}
	r := l.rwJob
	l.rwWriter, l.rwChunks, l.rwJob = nil, nil, nil
	srv := l.srv
	if srv.rw.remaining.Add(-1) == 0 {
		go srv.finishRewrite(r)
	}
}

// rwLater queues the image's next step after d, off the loop, unless
// another image has started meanwhile (imgGen, as delayStep): a step left
// over from a stopped image would give the new one a second chain of
// steps, and twice its share of the loop.
func (l *Loop) rwLater(d time.Duration) {
	gen := l.imgGen.Load()
	go func() {
		time.Sleep(d)
		if l.imgGen.Load() == gen {
			_ = l.post(l.rwStep)
		}
	}()
}

// maybeAutoRewrite starts BGREWRITEAOF when the log has grown by
// auto-aof-rewrite-percentage over its base and is past
// auto-aof-rewrite-min-size, as Redis's serverCron does. It runs on loop 0
// and sends the command through loop 0's internal client, so the rewrite
// takes every shard exactly as a client's BGREWRITEAOF does.
func (srv *Server) maybeAutoRewrite() {
	pct := srv.cfg.AutoAOFRewritePercentage()
	ps := srv.aofLog()
	if srv.rw.active.Load() || ps == nil || srv.repl.m.imaging.Load() {
		return
	}
	if ps.log.WaitingRewrite() {
		// CONFIG SET appendonly yes whose rewrite failed or waited for a
		// BGSAVE: Redis's serverCron starts the scheduled one (its
		// aof_rewrite_scheduled), within the same limit.
		if srv.save.active.Load() {
			return
		}
		if limited, _ := srv.rwLimit.limited(srv.rw.failures.Load(), time.Now()); limited {
			return
		}
		if sys := srv.sysClient; !sys.hopOut && len(sys.qbuf) == 0 {
			srv.save.rewriteAfter.Store(false) // this is the one scheduled
			sys.onData(bgrewriteaofRequest)
		}
		return
	}
	if pct <= 0 {
		return
	}
	st := ps.log.Stats()
	base := st.BaseSize
	if base == 0 {
		base = 1
	}
	if st.CurrentSize < srv.cfg.AutoAOFRewriteMinSize() || (st.CurrentSize-base)*100/base < pct {
		return
	}
	if limited, minutes := srv.rwLimit.limited(srv.rw.failures.Load(), time.Now()); limited {
		if minutes > 0 {
			srv.log.Warningf("Background AOF rewrite has repeatedly failed and triggered the limit, will retry in %d minutes", minutes)
		}
		return
	}
	sys := srv.sysClient
	if sys.hopOut || len(sys.qbuf) > 0 {
		return
	}
	srv.log.Noticef("Starting automatic rewriting of AOF on %d%% growth", (st.CurrentSize-base)*100/base)
	sys.onData(bgrewriteaofRequest)
}

// rewriteLimiter is Redis's aofRewriteLimited: after three consecutive
// failed rewrites, automatic rewrites wait 1 minute, then 2, 4, ... up to
// an hour between attempts, so a failing disk is not hammered by a rewrite
// every cron tick. (Each failed attempt leaves one more incremental file,
// as in Redis.) A success resets it. It is used on loop 0 only.
type rewriteLimiter struct {
	delayMinutes int
	next         time.Time
}

const (
	rewriteLimitThreshold  = 3
	rewriteLimitMaxMinutes = 60
)

// limited reports whether an automatic rewrite must wait; minutes > 0
// when a new wait starts now (the caller logs it).
func (rl *rewriteLimiter) limited(failures int64, now time.Time) (limited bool, minutes int) {
	if failures < rewriteLimitThreshold {
		rl.delayMinutes, rl.next = 0, time.Time{}
		return false, 0
	}
	if !rl.next.IsZero() {
		if now.Before(rl.next) {
			return true, 0
		}
		rl.next = time.Time{}
		return false, 0
	}
	if rl.delayMinutes == 0 {
		rl.delayMinutes = 1
	} else {
		rl.delayMinutes = min(rl.delayMinutes*2, rewriteLimitMaxMinutes)
	}
	rl.next = now.Add(time.Duration(rl.delayMinutes) * time.Minute)
	return true, rl.delayMinutes
}

var bgrewriteaofRequest = []byte("*1\r\n$12\r\nBGREWRITEAOF\r\n")

// newSysClient makes loop 0's internal client: it has no connection, and
// its replies are dropped.
func (srv *Server) newSysClient() *Client {
	cl := &Client{srv: srv, loop: srv.loops[0], proto: 2, internal: true}
	cl.setAuthenticated(true)
	cl.parser.Limits = srv.protoLimits()
	cl.bindRunnables()
	return cl
}

// startImageDelay takes rdb-key-save-delay for the image the loop starts:
// Redis's child keeps the value it forked with, so setting the option
// back to 0 does not speed up a job under way (the suite kills the child
// instead), and neither does it here.
func (l *Loop) startImageDelay() {
	l.imgDelay = l.srv.cfg.RDBKeySaveDelay()
	l.imgGen.Add(1)
}

// delayStep queues the next rewrite step after rdb-key-save-delay
// microseconds for each of the keys the last step serialized (a negative
// value is nanoseconds, as Redis's debugDelay): the test knob that slows
// Redis's rewrite child down slows redshard's rewrite the same way,
// without stopping the loop. The wait ends early when the image is
// stopped (another starts, or the server stops), and then queues nothing.
func (l *Loop) delayStep(d, keys int64) {
	gen := l.imgGen.Load()
	wait := debugDelay(d) * time.Duration(keys)
	for end := time.Now().Add(wait); ; {
		left := time.Until(end)
		if left <= 0 {
			break
		}
		if l.imgGen.Load() != gen || l.srv.stopping.Load() {
			return
		}
		time.Sleep(min(left, 20*time.Millisecond))
	}
	if l.imgGen.Load() == gen {
		_ = l.post(l.rwStep)
	}
}

// debugDelay is the wait of one key under a test knob (rdb-key-save-delay,
// key-load-delay): microseconds, or nanoseconds when negative, as Redis's
// debugDelay.
func debugDelay(d int64) time.Duration {
	if d < 0 {
		return time.Duration(-d)
	}
	return time.Duration(d) * time.Microsecond
}

// rewriteDelayedSlots is a step's size while rdb-key-save-delay is set.
const rewriteDelayedSlots = 16

// abortRewrite stops the rewrite in progress, if any, as Redis kills its
// rewrite child: every loop drops its part of the image and the temp file
// is deleted. Every loop is parked.
func (srv *Server) abortRewrite() bool {
	r := srv.rw.cur.Swap(nil)
	if r == nil {
		return false
	}
	for _, l := range srv.loops {
		if l.rwJob == r {
			l.sh.AbortRewrite()
			l.rwWriter, l.rwChunks, l.rwJob = nil, nil, nil
		}
	}
	r.Abort()
	srv.procsFor(-1)
	srv.rw.lastSecs.Store((time.Now().UnixMilli() - srv.rw.started.Load()) / 1000)
	srv.rw.active.Store(false)
	return true
}

func (srv *Server) finishRewrite(r *aof.Rewrite) {
	err := r.Finish()
	if !srv.rw.cur.CompareAndSwap(r, nil) {
		return // aborted meanwhile (abortRewrite did the accounting)
	}
	_, copied := srv.imageProgress()
	srv.img.lastAOF.Store(copied)
	srv.procsFor(-1)
	secs := (time.Now().UnixMilli() - srv.rw.started.Load()) / 1000
	srv.rw.lastSecs.Store(secs)
	srv.rw.count.Add(1)
	if err != nil {
		srv.rw.lastOK.Store(false)
		srv.rw.failures.Add(1)
		srv.log.Warningf("Background AOF rewrite failed: %v", err)
	} else {
		srv.rw.lastOK.Store(true)
		srv.rw.failures.Store(0)
	}
	srv.rw.active.Store(false)
}
