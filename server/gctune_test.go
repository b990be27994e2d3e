package server

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int32
	}{
		{0, gcMaxPct},
		{1 << 20, gcMaxPct},   // 1600% capped
		{4 << 20, 400},        // 16 MiB on 4 MiB
		{16 << 20, 100},       // the floor equals the heap
		{64 << 20, gcBasePct}, // a quarter is the floor
		{1 << 30, gcBasePct},  // big heaps: GOGC 25 as before
		{40 << 20, 40},        // in between
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestGCTunerFollowsLiveHeap: after collections the percentage in force is
// the one gcPercentFor gives for a small live heap, not 25.
func TestGCTunerFollowsLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(gcBasePct) // only the tuner can raise it
	defer debug.SetGCPercent(old)
	startGCTuner()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer goroutine runs tune
		cur := debug.SetGCPercent(-1)
		debug.SetGCPercent(cur)
		if cur > gcBasePct {
			return // a test binary's live heap is far under 64 MiB
		}
	}
	t.Fatal("GOGC still at or under 25 after collections with a small live heap")
}
