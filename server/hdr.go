package server

// latHist: a command's latency histogram, with the layout of an HDR
// histogram tracking 1 ns to 1 s with two significant decimal digits, as
// Redis's per-command histograms are (hdr_init(1, 1000000000, 2)), so that
// INFO latencystats and LATENCY HISTOGRAM report the same figures as Redis.
//
// Layout. Values are grouped in power-of-two buckets; each bucket is cut in
// 128 sub-buckets of equal width (256 in bucket 0), so any value is known to
// within 1/128 of itself (< 0.8%, better than two significant digits):
//
//	bucket 0: values 0..255, width 1     (counts[0..255])
//	bucket b: values 2^(b+7)..2^(b+8)-1, width 2^b (counts[(b+1)*128 .. (b+2)*128-1])
//
// 1 s (2^30 > 1e9) falls in bucket 22, so a full histogram has 24*128
// counters. Each loop keeps one per command it ran (Loop.observe records on
// the loop, no lock); readers (INFO, LATENCY HISTOGRAM, metrics) merge the
// loops' histograms with every loop parked or on the loop itself.
//
// counts grows, a bucket's worth at a time, to the highest bucket recorded,
// so a command that never took more than a few microseconds holds a few KB;
// a record allocates only when it reaches a new highest bucket.

import (
	"math/bits"
)

const (
	hdrHalfBits = 7                // log2 of the sub-buckets of a bucket above 0
	hdrHalf     = 1 << hdrHalfBits // 128
	hdrMaxValue = 1_000_000_000    // ns: Redis's LATENCY_HISTOGRAM_MAX_VALUE
	hdrLen      = 24 * hdrHalf     // counters of a histogram reaching hdrMaxValue
)

type latHist struct {
	total  int64
	counts []int64
}

// hdrIndex is the counter a value (0 ≤ v ≤ hdrMaxValue) is counted in.
func hdrIndex(v int64) int {
	b := bits.Len64(uint64(v)|(2*hdrHalf-1)) - (hdrHalfBits + 1) // bucket
	return (b+1)<<hdrHalfBits + int(v>>uint(b)) - hdrHalf
}

// hdrValueAt is the lowest value counted in counter i.
func hdrValueAt(i int) int64 {
	b := i>>hdrHalfBits - 1
	sub := int64(i&(hdrHalf-1) + hdrHalf)
	if b < 0 {
		b, sub = 0, sub-hdrHalf
	}
	return sub << uint(b)
}

// hdrHighestEquivalent is the highest value counted in the same counter as v.
func hdrHighestEquivalent(v int64) int64 {
	b := bits.Len64(uint64(v)|(2*hdrHalf-1)) - (hdrHalfBits + 1)
	return (v>>uint(b))<<uint(b) + 1<<uint(b) - 1
}

// record counts one duration in nanoseconds, clamped to [1 ns, 1 s] as
// Redis clamps it.
func (h *latHist) record(ns int64) {
	if ns < 1 {
		ns = 1
	} else if ns > hdrMaxValue {
		ns = hdrMaxValue
	}
	i := hdrIndex(ns)
	if i >= len(h.counts) {
		h.grow(i)
	}
	h.counts[i]++
	h.total++
}

func (h *latHist) grow(i int) {
	n := (i>>hdrHalfBits + 1) << hdrHalfBits
	if n < 2*hdrHalf {
		n = 2 * hdrHalf
	}
	c := make([]int64, n)
	copy(c, h.counts)
	h.counts = c
}

// add merges src into h.
func (h *latHist) add(src *latHist) {
	if src == nil || src.total == 0 {
		return
	}
	if len(src.counts) > len(h.counts) {
		h.grow(len(src.counts) - 1)
	}
	for i, v := range src.counts {
		h.counts[i] += v
	}
	h.total += src.total
}

// reset empties h, keeping its counters' memory.
func (h *latHist) reset() {
	clear(h.counts)
	h.total = 0
}

// valueAtPercentile is hdr_value_at_percentile: the highest value
// equivalent to the one under which p percent of the samples lie (the
// lowest such value for p = 0), in nanoseconds.
func (h *latHist) valueAtPercentile(p float64) int64 {
	if p > 100 {
		p = 100
	}
	want := int64(p/100*float64(h.total) + 0.5)
	if want < 1 {
		want = 1
	}
	var cum int64
	v := int64(0)
	for i, c := range h.counts {
		cum += c
		if cum >= want {
			v = hdrValueAt(i)
			break
		}
	}
	if p == 0 {
		return v
	}
	return hdrHighestEquivalent(v)
}

// logBuckets calls fn for each power of two from 1024 ns up, as Redis's
// LATENCY HISTOGRAM iterates (hdr_iter_log_init(h, 1024, 2)): usec is the
// highest value equivalent to the level in microseconds, cum the samples
// counted up to it. Levels that add no sample are skipped, as Redis skips
// them; iteration ends with the last sample.
func (h *latHist) logBuckets(fn func(usec, cum int64)) {
	var cum, prev int64
	i := 0
	for level := int64(1024); cum < h.total; level *= 2 {
		last := hdrIndex(min(level, hdrMaxValue))
		for ; i <= last && i < len(h.counts); i++ {
			cum += h.counts[i]
		}
		if cum > prev {
			fn(hdrHighestEquivalent(level)/1000, cum)
		}
		prev = cum
		if level > hdrMaxValue {
			break
		}
	}
}

// toPow2 adds h into a power-of-two histogram (metrics.go's buckets). A
// counter never straddles a power of two, so the conversion is exact.
func (h *latHist) toPow2(dst *cmdHist) {
	for i, c := range h.counts {
		if c != 0 {
			dst[histBucket(hdrValueAt(i))] += c
		}
	}
}
