package aof

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Hist is a histogram with power-of-two buckets, safe for concurrent use:
// bucket 0 counts values below 1, bucket k values in [2^(k-1), 2^k), the
// last bucket everything larger.
type Hist struct {
	b   [HistBuckets]atomic.Uint64
	sum atomic.Int64
}

// HistBuckets is the number of buckets of a Hist.
const HistBuckets = 40

// Observe adds a value (negative values count as 0).
func (h *Hist) Observe(v int64) {
	if v < 0 {
		v = 0
	}
	k := bits.Len64(uint64(v))
	if k >= HistBuckets {
		k = HistBuckets - 1
	}
	h.b[k].Add(1)
	h.sum.Add(v)
}

// Snapshot returns the bucket counts (not cumulative) and the sum.
func (h *Hist) Snapshot() (buckets [HistBuckets]uint64, sum int64) {
	for i := range h.b {
		buckets[i] = h.b[i].Load()
	}
	return buckets, h.sum.Load()
}

// HistUpper is the exclusive upper bound of bucket k of a Hist.
func HistUpper(k int) int64 { return 1 << uint(k) }

// Histograms are the writer's distributions, for metrics.
type Histograms struct {
	FsyncNanos   *Hist // duration of each successful fdatasync of an incr file
	GroupBatches *Hist // batches (one loop event's records each) per written group
	GroupCmds    *Hist // commands (records appended by producers) per written group
}

// Histograms returns the log's histograms (live: read them with Snapshot).
func (l *Log) Histograms() Histograms {
	return Histograms{FsyncNanos: &l.hist.fsync, GroupBatches: &l.hist.group, GroupCmds: &l.hist.groupCmds}
}

// OnLatency sets a function the writer calls with the duration of each
// group's write(2) ("aof-write") and, under appendfsync always, of its
// fdatasync ("aof-fsync-always"), as Redis's latency monitor events. It may
// be set at any time; fn must be safe to call from the writer goroutine.
func (l *Log) OnLatency(fn func(event string, d time.Duration)) {
	l.latencyFn.Store(&fn)
}

func (l *Log) latency(event string, d time.Duration) {
	if p := l.latencyFn.Load(); p != nil && *p != nil {
		(*p)(event, d)
	}
}
