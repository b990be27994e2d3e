package aof

import (
	"sync"
	"testing"
	"time"
)

func TestHist(t *testing.T) {
	var h Hist
	for _, v := range []int64{-5, 0, 1, 2, 3, 4, 1 << 50} {
		h.Observe(v)
	}
	b, sum := h.Snapshot()
	// buckets: 0 holds {-5→0, 0}, 1 holds {1}, 2 holds {2,3}, 3 holds {4}, the last the huge one
	want := map[int]uint64{0: 2, 1: 1, 2: 2, 3: 1, HistBuckets - 1: 1}
	for k := range b {
		if b[k] != want[k] {
			t.Errorf("bucket %d = %d, want %d", k, b[k], want[k])
		}
	}
	if sum != 10+1<<50 {
		t.Errorf("sum %d", sum)
	}
}

// The writer's histograms count fsyncs, and batches and commands per group;
// the latency hook sees each write and each "always" fsync.
func TestWriterHistograms(t *testing.T) {
	ffs := newFaultFS()
	ffs.syncDelay = 2 * time.Millisecond
	o := testOptions(t.TempDir(), FsyncAlways)
	o.FS = ffs
	l := mustOpen(t, o)
	var mu sync.Mutex
	events := map[string]int{}
	l.OnLatency(func(ev string, d time.Duration) {
		mu.Lock()
		events[ev]++
		mu.Unlock()
	})
	p := l.NewProducer()
	var seq uint64
	for b := 0; b < 5; b++ {
		for c := 0; c < 3; c++ {
			p.Append(0, args("SET", "k", "v"))
		}
		seq = p.Submit()
		waitFor(t, "durable", func() bool { return l.Durable() >= seq })
	}
	h := l.Histograms()
	fb, fsum := h.FsyncNanos.Snapshot()
	var fsyncs uint64
	for _, n := range fb {
		fsyncs += n
	}
	if fsyncs < 5 || fsum < int64(5*2*time.Millisecond) {
		t.Errorf("fsync histogram: %d fsyncs, %v total", fsyncs, time.Duration(fsum))
	}
	gb, gsum := h.GroupCmds.Snapshot()
	if gsum != 15 || gb[2] != 5 { // 3 commands per group: bucket [2,4)
		t.Errorf("commands per group: sum %d, buckets %v", gsum, gb)
	}
	bb, bsum := h.GroupBatches.Snapshot()
	if bsum != 5 || bb[1] != 5 {
		t.Errorf("batches per group: sum %d, buckets %v", bsum, bb)
	}
	mu.Lock()
	defer mu.Unlock()
	if events["aof-write"] < 5 || events["aof-fsync-always"] < 5 {
		t.Errorf("latency events %v", events)
	}
}
