package server

// Background jobs' child processes (package bgchild).
//
// A BGSAVE's and an AOF rewrite's file is written by a child process of the
// server, which the image is streamed to, so that what Redis's users see of
// a background job holds: the child shows in ps, the temp file carries its
// pid, it takes oom-score-adj-values' bgchild class, and killing it stops
// the job. The image itself is still made by the loops, in steps, without
// fork (rewrite.go, snapshot.go); the child only writes.
//
// A child that exits before its input has ended (kill -9, the OOM killer,
// a write error) fails its job as Redis's dead child does: a watcher
// goroutine waits for the child's exit and, if it died, parks every loop
// and aborts the job if it is still the current one (the image steps stop,
// the temp file is removed), then records the failure: for a rewrite
// aof_last_bgrewrite_status:err and one more consecutive failure (the
// incremental file it opened stays, as Redis's does); for a BGSAVE
// rdb_last_bgsave_status:err, so writes get -MISCONF under
// stop-writes-on-bgsave-error, and replicas waiting for the file fail their
// sync. A job that ends normally or is aborted by the server ends its child
// itself, and the watcher finds the job gone or the child not dead.

import (
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/bgchild"
)

// initBgChild makes background jobs run their file in a child process
// when the binary can be its own child (cmd/redshard-server calls
// bgchild.Main and bgchild.Enable).
func (srv *Server) initBgChild() {
	if !bgchild.Enabled() {
		return
	}
	aof.StartChild = func(dir, pattern, title string) (aof.ChildFile, error) {
		srv.reapStrays() // so that `pgrep -P` finds the new child alone
		start := time.Now()
		c, err := bgchild.Start(dir, pattern, title, srv.childOOMScoreAdj())
		if err == nil {
			// INFO's total_forks and latest_fork_usec: the child's start.
			srv.forks.total.Add(1)
			srv.forks.lastUsec.Store(time.Since(start).Microseconds())
		}
		return c, err
	}
}

// reapStrays reaps the server's exited children that are not jobs' (see
// bgchild.ReapStrays), as Redis's waitpid(-1) does, with its log line.
func (srv *Server) reapStrays() {
	for _, pid := range bgchild.ReapStrays() {
		srv.log.Warningf("Warning, detected child with unmatched pid: %d", pid)
	}
}

// forkStats are INFO stats' total_forks and latest_fork_usec.
type forkStats struct {
	total, lastUsec atomic.Int64
}

// watchChild waits for a job's child to exit and, if it died before its
// input ended, parks every loop and runs abort, which stops the job if it
// is still the current one and reports whether it did; then job's failure
// is logged in Redis's words ("Background saving terminated by signal 9")
// and failed records it, still with every loop parked.
func (srv *Server) watchChild(c aof.ChildFile, job string, abort func() bool, failed func(how string)) {
	<-c.Done()
	select {
	case <-c.Died():
	default:
		return
	}
	_ = srv.parkAll(func() {
		if !abort() {
			return
		}
		how := "terminated with error"
		var k *bgchild.Killed
		if err := c.Err(); errors.As(err, &k) {
			how = "terminated by signal " + strconv.Itoa(int(k.Signal))
		} else if err != nil {
			srv.log.Warningf("%s child: %v", job, err)
		}
		srv.log.Warningf("%s %s", job, how)
		failed(how)
	})
}

// watchRewriteChild fails the rewrite r if its child dies early.
func (srv *Server) watchRewriteChild(r *aof.Rewrite, c aof.ChildFile) {
	srv.watchChild(c, "Background AOF rewrite",
		func() bool { return srv.rw.cur.Load() == r && srv.abortRewrite() },
		func(string) {
			srv.rw.lastOK.Store(false)
			srv.rw.failures.Add(1)
			srv.rw.count.Add(1)
		})
}

// watchSnapshotChild fails the BGSAVE s if its child dies early.
func (srv *Server) watchSnapshotChild(s *aof.Snapshot, c aof.ChildFile) {
	srv.watchChild(c, "Background saving",
		func() bool { return srv.save.cur.Load() == s && srv.abortSnapshot() },
		func(how string) {
			srv.save.failed.Store(true)
			srv.save.lastSecs.Store((time.Now().UnixMilli() - srv.save.started.Load()) / 1000)
			srv.replDiskSaved(errors.New("Background saving " + how))
			srv.runWaitingRewrite()
		})
}

// imageStats are INFO persistence's current_cow_size, current_save_keys_*
// and current_fork_perc while a BGSAVE or a rewrite runs, and
// rdb_last_cow_size / aof_last_cow_size after: redshard's image copies a
// key only when a write is about to change it before the walk reached it
// (shard.ImageProgress), which is what copy-on-write costs Redis's child.
type imageStats struct {
	keysTotal        atomic.Int64 // keys at the cut
	lastRDB, lastAOF atomic.Int64 // copied bytes of the last BGSAVE, rewrite
}

// imageStarted records the keys at the cut; every loop is parked.
func (srv *Server) imageStarted() {
	var n int64
	for _, sh := range srv.shards {
		k, _ := sh.Keys()
		n += int64(k)
	}
	srv.img.keysTotal.Store(n)
}

// imageProgress sums the shards' progress of the image under way.
func (srv *Server) imageProgress() (keys, copied int64) {
	for _, sh := range srv.shards {
		k, c := sh.ImageProgress()
		keys += k
		copied += c
	}
	return keys, copied
}

// infoImage writes the current_* fields of INFO persistence.
func (srv *Server) infoImage(w *infoWriter) {
	var keys, copied, total int64
	if srv.save.active.Load() || srv.rw.active.Load() {
		keys, copied = srv.imageProgress()
		total = srv.img.keysTotal.Load()
	}
	perc := 0.0
	if total > 0 {
		perc = min(float64(keys)*100/float64(total), 100)
	}
	w.int("current_cow_peak", copied) // it only grows during an image
	w.int("current_cow_size", copied)
	w.int("current_cow_size_age", 0)
	w.float("current_fork_perc", perc)
	w.int("current_save_keys_processed", keys)
	w.int("current_save_keys_total", total)
}

// startSyncChild starts the child a disk-less full sync's image passes
// through, as Redis 7's child writes the RDB to a pipe that the parent
// reads and sends to the replicas: so the sync has a child to show, to
// class for the OOM killer and to kill, as Redis's. Nil without one (the
// image then goes to the replicas straight from the loops).
func (srv *Server) startSyncChild() (*bgchild.Child, *os.File) {
	if !bgchild.Enabled() {
		return nil, nil
	}
	srv.reapStrays()
	start := time.Now()
	c, out, err := bgchild.StartPipe("redshard-rdb-to-replicas", srv.childOOMScoreAdj())
	if err != nil {
		srv.log.Warningf("Can't start the child of the disk-less sync, sending from the server: %v", err)
		return nil, nil
	}
	srv.forks.total.Add(1)
	srv.forks.lastUsec.Store(time.Since(start).Microseconds())
	return c, out
}

// relaySync sends what the sync's child gives back to the replicas, until
// the child's output ends. When the last replica has gone it kills the
// child (the image's writes then fail, and the sync ends in error), and
// it logs Redis's lines for both ends.
func (srv *Server) relaySync(c *bgchild.Child, out *os.File, fan *replFan, done chan struct{}) {
	defer close(done)
	defer out.Close()
	buf := make([]byte, 64<<10)
	dropped := false
	for {
		n, err := out.Read(buf)
		if n > 0 && !dropped {
			if _, werr := fan.Write(buf[:n]); werr != nil {
				srv.log.Warningf("Diskless rdb transfer, last replica dropped, killing fork child.")
				dropped = true
				go c.Close() // kills it; its output then ends
			}
		}
		if err != nil {
			break
		}
	}
	if dropped {
		return
	}
	<-c.Done() // its output ended: it has exited, or is about to
	select {
	case <-c.Died():
		srv.log.Warningf("Diskless rdb transfer, the child ended early: %v", c.Err())
		return
	default:
	}
	live := 0
	for _, r := range fan.rs {
		if !r.dropped.Load() {
			live++
		}
	}
	srv.log.Noticef("Diskless rdb transfer, done reading from pipe, %d replicas still up.", live)
}
