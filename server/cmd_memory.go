package server

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// memAllocatorName is what INFO's mem_allocator says.
const memAllocatorName = "go"

// MEMORY STATS, DOCTOR, PURGE, MALLOC-STATS and HELP (MEMORY USAGE is a data
// command: shard/memory.go).
var memoryServerCommands = []serverCmd{
	{name: "memory|stats", exec: cmdMemoryStats, allShards: true},
	{name: "memory|doctor", exec: cmdMemoryDoctor, allShards: true},
	{name: "memory|purge", exec: cmdMemoryPurge},
	{name: "memory|malloc-stats", exec: cmdMemoryMallocStats, allShards: true},
	{name: "memory|help", exec: cmdMemoryHelp},
}

// cmdMemoryStats answers Redis 7.0's fields, in its order, from the same
// figures as INFO memory. It runs with every loop parked.
func cmdMemoryStats(x *Exec, argv [][]byte) {
	srv := x.srv
	t := srv.sumStats()
	m := readMemInfo(srv, t)
	peak := srv.infoSampler.peak(m.used)
	var keys int64
	dbs := 0
	for i := range t.keys {
		keys += t.keys[i]
		if t.keys[i] > 0 {
			dbs++
		}
	}
	overhead := m.used - m.dataset
	x.Map(27 + dbs) // the 27 fields below and a map per database with keys
	kv := func(k string, v int64) {
		x.Simple(k)
		x.Int(v)
	}
	kd := func(k string, v float64) {
		x.Simple(k)
		x.Double(v)
	}
	kv("peak.allocated", peak)
	kv("total.allocated", m.used)
	kv("startup.allocated", m.startup)
	backlog, replBufs := srv.repl.bufferMem() // repl.go
	evalCache, funcs := srv.scriptCachesMem()
	kv("replication.backlog", backlog)
	kv("clients.slaves", replBufs-backlog)
	kv("clients.normal", t.clientMem)
	kv("cluster.links", 0)
	kv("aof.buffer", srv.aofBufferMem())
	kv("lua.caches", evalCache)
	kv("functions.caches", funcs)
	for i := range t.keys {
		if t.keys[i] == 0 {
			continue
		}
		x.Simple("db." + strconv.Itoa(i))
		x.Map(2)
		kv("overhead.hashtable.main", t.keys[i]*16)
		kv("overhead.hashtable.expires", t.expires[i]*8)
	}
	kv("overhead.total", overhead)
	kv("keys.count", keys)
	perKey := int64(0)
	if keys > 0 {
		perKey = m.dataset / keys
	}
	kv("keys.bytes-per-key", perKey)
	kv("dataset.bytes", m.dataset)
	kd("dataset.percentage", ratio(m.dataset, m.used)*100)
	kd("peak.percentage", ratio(m.used, peak)*100)
	kv("allocator.allocated", m.allocated)
	kv("allocator.active", m.active)
	kv("allocator.resident", m.resident)
	kd("allocator-fragmentation.ratio", ratio(m.active, m.allocated))
	kv("allocator-fragmentation.bytes", m.active-m.allocated)
	kd("allocator.rss-ratio", ratio(m.resident, m.active))
	kv("allocator.rss-bytes", m.resident-m.active)
	kd("rss-overhead.ratio", ratio(m.rss, m.resident))
	kv("rss-overhead.bytes", m.rss-m.resident)
	kd("fragmentation", ratio(m.rss, m.used))
	kv("fragmentation.bytes", m.rss-m.used)
}

// cmdMemoryDoctor is Redis's getMemoryDoctorReport, over the figures of
// MEMORY STATS (the allocator's are the Go heap's). It runs with every loop
// parked. Replica buffers and scripts, which redshard does not have, are
// never reported.
func cmdMemoryDoctor(x *Exec, argv [][]byte) {
	srv := x.srv
	t := srv.sumStats()
	m := readMemInfo(srv, t)
	peak := srv.infoSampler.peak(m.used)
	clients := int64(0)
	for _, l := range srv.loops {
		clients += int64(len(l.clients))
	}
	x.Verbatim([]byte(memoryDoctorReport(m, peak, t.clientMem, clients)))
}

// memoryDoctorReport applies Redis's thresholds and returns its text.
func memoryDoctorReport(m memInfo, peak, clientMem, clients int64) string {
	const mb10 = 10 << 20
	if m.used < 5<<20 {
		return "Hi Sam, this instance is empty or is using very little memory, " +
			"my issues detector can't be used in these conditions. " +
			"Please, leave for your mission on Earth and fill it with some data. " +
			"The new Sam and I will be back to our programming as soon as I " +
			"finished rebooting.\n"
	}
	var b strings.Builder
	if ratio(peak, m.used) > 1.5 {
		b.WriteString(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n")
	}
	if ratio(m.rss, m.used) > 1.4 && m.rss-m.used > mb10 {
		b.WriteString(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"" + memAllocatorName + "\".\n\n")
	}
	if ratio(m.active, m.allocated) > 1.1 && m.active-m.allocated > mb10 {
		b.WriteString(" * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n")
	}
	if ratio(m.resident, m.active) > 1.1 && m.resident-m.active > mb10 {
		b.WriteString(" * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n")
	}
	if ratio(m.rss, m.resident) > 1.1 && m.rss-m.resident > mb10 {
		b.WriteString(" * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n")
	}
	if clients > 0 && clientMem/clients > 200<<10 {
		b.WriteString(" * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n")
	}
	if b.Len() == 0 {
		return "Hi Sam, I can't find any memory issue in your instance. " +
			"I can only account for what occurs on this base.\n"
	}
	return "Sam, I detected a few issues in this Redis instance memory implants:\n\n" +
		b.String() + "I'm here to keep you safe, Sam. I want to help you.\n"
}

// cmdMemoryPurge returns freed memory to the OS (Redis asks jemalloc to).
func cmdMemoryPurge(x *Exec, argv [][]byte) {
	debug.FreeOSMemory()
	x.OK()
}

// cmdMemoryMallocStats reports what redshard's allocators hold, as Redis
// reports jemalloc's: the Go runtime's memory classes (runtime/metrics) and
// each shard's slab, class by class, with compaction's totals (shard/compact.go).
// It runs with every loop parked.
func cmdMemoryMallocStats(x *Exec, argv [][]byte) {
	x.Verbatim([]byte(mallocStats(x.srv)))
}

// mallocStatsMetrics are the Go runtime's figures MEMORY MALLOC-STATS shows.
var mallocStatsMetrics = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/other:bytes",
	"/gc/heap/goal:bytes",
	"/gc/gomemlimit:bytes",
	"/gc/cycles/total:gc-cycles",
}

func mallocStats(srv *Server) string {
	var b strings.Builder
	samples := make([]metrics.Sample, len(mallocStatsMetrics))
	for i, n := range mallocStatsMetrics {
		samples[i].Name = n
	}
	metrics.Read(samples)
	b.WriteString("# Go runtime (runtime/metrics)\n")
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
		}
	}
	for _, sh := range srv.shards {
		st := sh.Slab.Stats()
		fmt.Fprintf(&b, "# shard %d slab\nused %d\nreserved %d\nhuge %d\ncompaction_runs %d\ncompaction_moved %d\ncompaction_released %d\ncompaction_class %d\n",
			sh.ID, st.Used, st.Reserved, st.HugeBytes, st.CompactRuns, st.CompactMoved, st.CompactReleased, st.CompactClass)
		b.WriteString("# class pages bytes live_slots live_bytes occupancy_pct evacuating\n")
		for _, c := range st.Classes {
			occ := 0.0
			if c.Bytes > 0 {
				occ = float64(c.Live*int64(c.Size)) * 100 / float64(c.Bytes)
			}
			fmt.Fprintf(&b, "%d %d %d %d %d %.1f %d\n", c.Size, c.Pages, c.Bytes, c.Live, c.Live*int64(c.Size), occ, c.Evacuated)
		}
	}
	return b.String()
}

func cmdMemoryHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	})
}
