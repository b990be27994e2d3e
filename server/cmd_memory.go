package server

import (
	"runtime/debug"
	"strconv"
)

// MEMORY STATS, DOCTOR, PURGE, MALLOC-STATS and HELP (MEMORY USAGE is a data
// command: shard/memory.go).
var memoryServerCommands = []serverCmd{
	{name: "memory|stats", exec: cmdMemoryStats, allShards: true},
	{name: "memory|doctor", exec: cmdMemoryDoctor},
	{name: "memory|purge", exec: cmdMemoryPurge},
	{name: "memory|malloc-stats", exec: cmdMemoryMallocStats},
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
	x.Map(25 + dbs)
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
	kv("replication.backlog", 0)
	kv("clients.slaves", 0)
	kv("clients.normal", t.clientMem)
	kv("cluster.links", 0)
	kv("aof.buffer", 0)
	kv("lua.caches", 0)
	kv("functions.caches", 0)
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

func cmdMemoryDoctor(x *Exec, argv [][]byte) {
	x.Verbatim([]byte("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base."))
}

// cmdMemoryPurge returns freed memory to the OS (Redis asks jemalloc to).
func cmdMemoryPurge(x *Exec, argv [][]byte) {
	debug.FreeOSMemory()
	x.OK()
}

func cmdMemoryMallocStats(x *Exec, argv [][]byte) {
	x.Verbatim([]byte("Stats not supported for the current allocator"))
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
