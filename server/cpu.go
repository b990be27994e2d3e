package server

import (
	"runtime/metrics"
	"syscall"
	"time"
)

// used_cpu_sys_main_thread and used_cpu_user_main_thread.
//
// Redis reports its main thread's rusage (RUSAGE_THREAD): the thread that
// runs the event loop and every command, as against the background threads
// (bio's lazy free, close and fsync, jemalloc's purger) and the children.
// redshard's main thread is its event loops, one per shard. Go does not bind
// a goroutine to a thread (the loops are not locked: locking one makes every
// Gosched of gnet's poll loop a thread hand-off), so a loop's CPU is spread
// over the runtime's threads and no thread's counters isolate it. What the
// process does besides the loops' work is, in the main, the runtime's own
// background work: the garbage collector's marking and sweeping and the
// scavenger returning memory to the OS, the counterpart of Redis's
// background threads. So the loops' figure is the process's rusage less
// that work, as the runtime measures it (runtime/metrics
// /cpu/classes/gc/total and /cpu/classes/scavenge/total): taken from the
// user time, since the collector and the scavenger run Go code and make
// few system calls; the system time (the loops' reads, writes and
// epoll_wait, and the AOF's writes) is the process's. The AOF writer and
// the replication goroutines stay in the figure, as the work Redis's main
// thread does for them (the AOF write, feeding replicas) stays in Redis's.
var cpuBackgroundMetrics = []metrics.Sample{
	{Name: "/cpu/classes/gc/total:cpu-seconds"},
	{Name: "/cpu/classes/scavenge/total:cpu-seconds"},
}

// mainThreadCPU returns the loops' system and user CPU time, given the
// process's rusage.
func mainThreadCPU(self *syscall.Rusage) (sys, user syscall.Timeval) {
	samples := make([]metrics.Sample, len(cpuBackgroundMetrics))
	copy(samples, cpuBackgroundMetrics)
	metrics.Read(samples)
	var bg float64
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindFloat64 {
			bg += s.Value.Float64()
		}
	}
	u := time.Duration(self.Utime.Nano()) - time.Duration(bg*float64(time.Second))
	if u < 0 {
		u = 0
	}
	return self.Stime, syscall.NsecToTimeval(int64(u))
}
