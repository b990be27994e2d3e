package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The collector's headroom has a floor.
//
// GOGC 25 (memory.go) lets the heap grow by a quarter of the live heap
// between collections. While a data set that lives on the Go heap (lists,
// hashes, sets, sorted sets) grows from nothing, that is a collection for
// every 25% of growth: 12 of them while one list took 200k LPUSHes of
// 100 bytes. With GOMAXPROCS at the number of shards, the collector's
// worker takes a loop's P each time: Go's /sched/latencies histogram of
// the same run showed 15-22 waits over 100 µs (p99.9 0.9-12.6 ms) against 5
// (0.2-0.5 ms) with the collector off, and a stalled loop delays every
// client it serves — the -P 1 p99 figures of LPUSH and HSET.
//
// So after each collection the percentage is raised, when the live heap is
// small, to give at least gcFloor of headroom: max(25, gcFloor/live). A
// small heap then collects a few times while it grows, a big one exactly
// as before (from 64 MiB of live heap on, a quarter is more than the
// floor). What it costs is at most gcFloor of garbage kept a little
// longer, only where there is garbage; pointer-free data off the heap (the
// keyspace, strings) makes none of this. A GOGC in the environment wins.
const (
	gcFloor   = 16 << 20
	gcBasePct = 25
	gcMaxPct  = 1000
)

type gcTuner struct {
	mu     sync.Mutex   // tune runs on the finalizer goroutine and from gcImage
	pct    atomic.Int32 // the percentage last set
	sample []metrics.Sample
}

// gcSentinel is an object nothing keeps: its finalizer runs after every
// collection and re-arms itself.
type gcSentinel struct{ _ [32]byte }

var gcTunerOnce sync.Once

// startGCTuner sets GOGC 25 and keeps the floor from then on (once per
// process: servers started again in one process share it).
func startGCTuner() {
	gcTunerOnce.Do(func() {
		t := &gcTuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		gcT.Store(t)
		t.pct.Store(gcBasePct)
		debug.SetGCPercent(gcBasePct)
		t.arm()
	})
}

func (t *gcTuner) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		t.tune()
		t.arm()
	})
}

// gcT is the tuner, once started (not with GOGC in the environment).
var gcT atomic.Pointer[gcTuner]

// tune sets the percentage for the live heap of the collection that just
// ended (the finalizer goroutine runs it, and gcImage).
func (t *gcTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := gcPercentFor(t.sample[0].Value.Uint64())
	if p != t.pct.Load() {
		t.pct.Store(p)
		debug.SetGCPercent(int(p))
	}
}

// gcPercentFor returns the GOGC that gives a live heap of live bytes at
// least gcFloor of headroom, and at least gcBasePct percent (gcLoadPct
// while a data set loads).
func gcPercentFor(live uint64) int32 {
	if live == 0 {
		return gcMaxPct
	}
	floor := uint64(gcFloor)
	if gcImages.Load() > 0 || gcLoads.Load() > 0 {
		floor = gcImageFloor
	}
	p := floor * 100 / live
	base := uint64(gcBasePct)
	if gcLoads.Load() > 0 {
		base = gcLoadPct
	}
	switch {
	case p < base:
		return int32(base)
	case p > gcMaxPct:
		return gcMaxPct
	}
	return int32(p)
}

// While a data set loads (an RDB file or base), the heap only grows: at
// GOGC 25 a load of 1M keys of mixed types spent a fifth of its CPU
// collecting. gcLoadPct gives it room, and so does a floor of
// gcImageFloor instead of gcFloor: with the small floor the same load (a
// dump.rdb of 1.01M mixed keys, one shard) made 19 collections, 15 of them
// before the live heap reached 50 MB, and took 0.90-1.03 s; with the
// bigger one 9, 0.79-0.84 s, and a lower peak RSS (333-338 MB against
// 355-370). The tuner goes back to the base at the first collection after
// the load.
const gcLoadPct = 100

var gcLoads atomic.Int32

// gcLoading raises the percentage for a load; the function it returns ends
// that.
func gcLoading() func() {
	if gcLoads.Add(1) == 1 {
		if t := gcT.Load(); t != nil {
			t.tune()
		} else if debug.SetGCPercent(gcLoadPct) > gcLoadPct {
			debug.SetGCPercent(gcMaxPct) // it was higher (a small heap): keep it
		}
	}
	return func() { gcLoads.Add(-1) }
}

// While an image of the data set is written between requests (BGSAVE, an
// AOF rewrite, a disk-less full sync), its chunks come and go at up to
// tens of MB a second, and a collection started then runs its mark worker
// on a loop's P: with the server on one CPU (GOMAXPROCS 1) it took the P
// 8-11 ms at a time, one or two collections of 70-80 ms a BGSAVE of 1M
// keys (GODEBUG=gctrace=1, go tool trace), each a GET waiting for it. So
// the headroom's floor is gcImageFloor until the image ends: at most that
// much more heap for the length of a BGSAVE, where Redis's fork costs the
// copy-on-write of every page written meanwhile.
const gcImageFloor = 64 << 20

var gcImages atomic.Int32

// gcImage counts a background image in (+1) or out (-1) and sets the
// percentage for it now (procsFor calls it).
func gcImage(d int32) {
	gcImages.Add(d)
	if t := gcT.Load(); t != nil {
		t.tune()
	}
}
