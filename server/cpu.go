package server

import (
	"runtime/metrics"
	"syscall"
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
// background work: the garbage collector and the scavenger returning memory
// to the OS, the counterpart of Redis's background threads.
//
// So the loops' user time is the process's user time times the share of
// the runtime's busy CPU time that ran Go code rather than the collector or
// the scavenger (runtime/metrics /cpu/classes/user against gc/total and
// scavenge/total). The runtime's classes are estimates from the time its
// processors spend in each state, not rusage (its idle-time mark workers,
// for one, count in full), so only their ratio is used, and the figure
// never exceeds used_cpu_user. The system time (the loops' reads, writes
// and epoll_wait, and the AOF's writes) is the process's: the collector
// makes few system calls. The AOF writer and the replication goroutines
// stay in the figure, as the work Redis's main thread does for them (the
// AOF write, feeding replicas) stays in Redis's.
var cpuClassMetrics = []metrics.Sample{
	{Name: "/cpu/classes/user:cpu-seconds"},
	{Name: "/cpu/classes/gc/total:cpu-seconds"},
	{Name: "/cpu/classes/scavenge/total:cpu-seconds"},
}

// mainThreadCPU returns the loops' system and user CPU time, given the
// process's rusage.
func mainThreadCPU(self *syscall.Rusage) (sys, user syscall.Timeval) {
	samples := make([]metrics.Sample, len(cpuClassMetrics))
	copy(samples, cpuClassMetrics)
	metrics.Read(samples)
	var v [3]float64
	for i, s := range samples {
		if s.Value.Kind() == metrics.KindFloat64 {
			v[i] = s.Value.Float64()
		}
	}
	share := 1.0
	if busy := v[0] + v[1] + v[2]; busy > 0 {
		share = v[0] / busy
	}
	return self.Stime, syscall.NsecToTimeval(int64(float64(self.Utime.Nano()) * share))
}
