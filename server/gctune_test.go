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

// TestGCPercentForImage: while an image is written the headroom's floor is
// gcImageFloor, so a heap of 128 MiB collects after 64 MiB of growth
// instead of 32, and a big heap keeps its quarter; the floor ends with the
// image.
func TestGCPercentForImage(t *testing.T) {
	gcImages.Add(1)
	for _, c := range []struct {
		live uint64
		want int32
	}{
		{128 << 20, 50},        // 64 MiB on 128 MiB
		{64 << 20, 100},        // the floor equals the heap
		{1 << 30, gcBasePct},   // a quarter is more than the floor
		{512 << 20, gcBasePct}, // 64 MiB is 12.5%: the base wins
		{1 << 20, gcMaxPct},    // capped
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("during an image, gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
	gcImages.Add(-1)
	if got := gcPercentFor(128 << 20); got != gcBasePct {
		t.Errorf("after the image, gcPercentFor(128 MiB) = %d, want %d", got, gcBasePct)
	}
}

// TestGCPercentForLoad: while a data set loads the percentage is at least
// gcLoadPct and the headroom's floor is gcImageFloor, so a small heap
// growing from nothing collects a few times instead of every 16 MiB; both
// end with the load.
func TestGCPercentForLoad(t *testing.T) {
	done := gcLoading()
	for _, c := range []struct {
		live uint64
		want int32
	}{
		{16 << 20, 400},      // 64 MiB on 16 MiB
		{64 << 20, 100},      // the floor equals the heap, and gcLoadPct
		{128 << 20, 100},     // gcLoadPct wins over the floor's 50
		{1 << 30, gcLoadPct}, // a big heap: gcLoadPct
		{1 << 20, gcMaxPct},  // capped
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("during a load, gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
	done()
	if got := gcPercentFor(16 << 20); got != 100 {
		t.Errorf("after the load, gcPercentFor(16 MiB) = %d, want 100", got)
	}
}
