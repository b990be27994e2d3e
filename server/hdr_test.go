package server

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// Every value lies in its counter's range, and the range is narrower than
// 1/128 of the value (two significant digits).
func TestHdrIndexRanges(t *testing.T) {
	prev := -1
	for v := int64(0); v <= hdrMaxValue; v += 1 + v/300 {
		i := hdrIndex(v)
		if i < prev || i >= hdrLen {
			t.Fatalf("hdrIndex(%d) = %d (previous %d)", v, i, prev)
		}
		prev = i
		lo, hi := hdrValueAt(i), hdrHighestEquivalent(v)
		if lo > v || hi < v {
			t.Fatalf("%d outside its counter [%d, %d]", v, lo, hi)
		}
		if hdrIndex(lo) != i || hdrIndex(hi) != i || hdrIndex(hi+1) != i+1 {
			t.Fatalf("counter %d: bounds [%d, %d] map elsewhere", i, lo, hi)
		}
		if v >= 256 && float64(hi-lo+1) > float64(v)/128 {
			t.Fatalf("%d: range [%d, %d] wider than 1/128", v, lo, hi)
		}
	}
}

// The figures of Redis's own INFO latencystats for samples of about 1, 2
// and 3 µs: the highest value equivalent to the sample.
func TestHdrRedisFigures(t *testing.T) {
	var h latHist
	for i := 0; i < 50; i++ {
		h.record(1000)
	}
	for i := 0; i < 49; i++ {
		h.record(2000)
	}
	h.record(3000)
	for _, tc := range []struct {
		p    float64
		want int64
	}{{0, 1000}, {50, 1003}, {51, 2007}, {99, 2007}, {99.9, 3007}, {100, 3007}} {
		if got := h.valueAtPercentile(tc.p); got != tc.want {
			t.Errorf("p%v = %d ns, want %d", tc.p, got, tc.want)
		}
	}
	// Clamped as Redis clamps: under 1 ns, over 1 s.
	var c latHist
	c.record(0)
	c.record(5e9)
	if got := c.valueAtPercentile(0); got != 1 {
		t.Errorf("p0 of a 0 ns sample = %d, want 1", got)
	}
	if got := c.valueAtPercentile(100); got != hdrHighestEquivalent(hdrMaxValue) {
		t.Errorf("p100 of a 5 s sample = %d, want %d", got, hdrHighestEquivalent(hdrMaxValue))
	}
}

// Percentiles of a spread of latencies are within 1% of the exact ones,
// whether recorded in one histogram or in several merged (one per loop).
func TestHdrPercentilesWithinOnePercent(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var loops [4]latHist
	var all latHist
	vals := make([]int64, 200000)
	for i := range vals {
		// log-uniform from 300 ns to 50 ms
		v := int64(math.Exp(math.Log(300) + rng.Float64()*(math.Log(5e7)-math.Log(300))))
		vals[i] = v
		loops[i%4].record(v)
		all.record(v)
	}
	slices.Sort(vals)
	var merged latHist
	for i := range loops {
		merged.add(&loops[i])
	}
	if merged.total != all.total || !slices.Equal(merged.counts, all.counts) {
		t.Fatalf("merged histogram differs from the single one")
	}
	for _, p := range []float64{1, 10, 50, 90, 99, 99.9, 99.99, 100} {
		k := int(math.Ceil(p/100*float64(len(vals)))) - 1
		exact := vals[max(k, 0)]
		got := merged.valueAtPercentile(p)
		if d := math.Abs(float64(got-exact)) / float64(exact); d > 0.01 {
			t.Errorf("p%v = %d ns, exact %d (%.2f%% off)", p, got, exact, d*100)
		}
	}
}

// LATENCY HISTOGRAM's rows: cumulative counts at each power of two from
// 1024 ns, levels adding nothing left out.
func TestHdrLogBuckets(t *testing.T) {
	var h latHist
	for _, v := range []int64{500, 1500, 5000, 5000} {
		h.record(v)
	}
	var got []string
	h.logBuckets(func(usec, cum int64) { got = append(got, fmt.Sprintf("%d:%d", usec, cum)) })
	if want := "[1:1 2:2 8:4]"; fmt.Sprint(got) != want {
		t.Errorf("rows %v, want %s", got, want)
	}
	var empty latHist
	empty.logBuckets(func(int64, int64) { t.Errorf("row for an empty histogram") })
}

func TestHdrToPow2(t *testing.T) {
	var h latHist
	var want cmdHist
	for _, v := range []int64{1, 1023, 1024, 2047, 2048, 70000, 1e9} {
		h.record(v)
		want[histBucket(v)]++
	}
	var got cmdHist
	h.toPow2(&got)
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

// Recording allocates only when a command reaches a new highest bucket.
func TestHdrRecordAllocs(t *testing.T) {
	var h latHist
	h.record(1e6)
	if n := testing.AllocsPerRun(1000, func() { h.record(12345) }); n != 0 {
		t.Errorf("%v allocations per record", n)
	}
}

func BenchmarkHdrRecord(b *testing.B) {
	var h latHist
	h.record(1e6)
	for i := 0; i < b.N; i++ {
		h.record(int64(300 + i&4095))
	}
}
