package server

import (
	"os"
	"runtime"
	"sync/atomic"
)

// Processors (GOMAXPROCS).
//
// The event loops are the server's CPU consumers; the only other busy
// goroutine is the AOF writer (and its everysec syncer). A spare P costs
// CPU: whenever a loop runs out of events, gnet's poll loop calls
// runtime.Gosched before it blocks in epoll_wait, and Gosched wakes an
// idle P's thread (wakep), which spins looking for work, steals the loop
// goroutine from the global run queue and makes it hop between threads.
// Measured with shards 1 on 2 CPUs, GET -P 1, 50 clients, 200k requests
// (server CPU ticks from /proc/PID/task/*/stat, 2 runs each):
// GOMAXPROCS 2: 110 and 127 ticks, 42k and 84k context switches;
// GOMAXPROCS 1: 79 and 79 ticks, 32k and 33k (redis-server: about 70).
//
// So GOMAXPROCS is the number of shards, plus one under appendfsync
// always, for the log's writer: its fdatasync per group holds a P for the
// length of the call, which must not stall a loop. Under everysec and no
// the loops write the log themselves (aof.Log.WriteNow) and the one
// fdatasync a second is the syncer's; measured with everysec, SET -P 1,
// 400k requests, 2 runs: 321 and 365 ticks with the extra P, 208 and 297
// without, same p99 and maximum latency. Never more than the CPUs the
// process may use, and a GOMAXPROCS in the environment wins.
//
// Plus one while a BGSAVE or an AOF rewrite runs, for the goroutine that
// writes the image (with shards 1 it took the loop's only P: GET p99 during
// a BGSAVE of 1M keys was 7 ms against 0.3 ms steady), and every CPU while
// a data set loads (the parser and the shards' builders, one P with shards 1:
// the load of an RDB took 1.85x redis-server's time), and at least
// loadMinProcs even on one CPU.
type procs struct {
	max   int          // GOMAXPROCS at start
	user  bool         // GOMAXPROCS set in the environment: leave it alone
	bg    atomic.Int32 // images being written (BGSAVE, BGREWRITEAOF)
	loads atomic.Int32 // data sets being loaded
}

// loadMinProcs is the fewest Ps while a data set loads, even on one CPU:
// the parser and the shards' builders must not wait for a P that a loop
// holds. A loop blocked in epoll_wait keeps its P until sysmon retakes it
// (gnet's poller makes a plain system call), and a loop wakes during a load
// to answer -LOADING and INFO: with the server on one CPU (GOMAXPROCS 1) a
// load of 1.01M mixed keys took 1.29-1.77 s of wall time for 0.9-1.1 s of
// CPU (go tool trace: the parser and the builder runnable 0.6-0.7 s each
// while the loop sat in its system call); with 2 Ps 0.92-0.99 s, as much
// as its CPU. Unpinned on 2 CPUs a third P only added spinning (0.90-0.99 s
// against 0.80-0.88 s).
const loadMinProcs = 2

// procsFor runs fitProcs with one more background image (+1) or one less
// (-1); procsLoad with a load.
func (srv *Server) procsFor(d int32) {
	srv.procs.bg.Add(d)
	srv.fitProcs()
	gcImage(d) // the collector's headroom while an image is written (gctune.go)
}

func (srv *Server) procsLoad(d int32) {
	srv.procs.loads.Add(d)
	srv.fitProcs()
}

func (srv *Server) initProcs() {
	_, srv.procs.user = os.LookupEnv("GOMAXPROCS")
	srv.procs.max = runtime.GOMAXPROCS(0)
}

// fitProcs sets GOMAXPROCS for the shards and the log's fsync policy.
func (srv *Server) fitProcs() {
	if srv.procs.user || srv.procs.max == 0 {
		return
	}
	want := len(srv.shards)
	if srv.aofLog() != nil && srv.cfg != nil && srv.cfg.AppendFsync() == "always" {
		want++
	}
	if srv.procs.bg.Load() > 0 {
		want++
	}
	want = min(max(want, 1), srv.procs.max)
	if srv.procs.loads.Load() > 0 {
		want = max(srv.procs.max, loadMinProcs)
	}
	if runtime.GOMAXPROCS(0) != want {
		runtime.GOMAXPROCS(want)
	}
}
