package shard

import (
	"bytes"
	"testing"
)

// A class's pages double from 16 slots up to a full page, so a class in use
// holds little more than its slots: one slot in each of fifty classes
// reserves well under a megabyte, and a class that grows keeps its unused
// tail under what it holds. Data survives across the page boundaries.
func TestSlabPagesGrowGeometrically(t *testing.T) {
	var s Slab
	for n := 100; n <= 4096; n += 80 {
		s.Alloc(n)
	}
	if s.Reserved() > 1<<20 {
		t.Fatalf("one slot in each of ~50 classes reserved %d bytes", s.Reserved())
	}

	var g Slab
	type alloc struct {
		h Handle
		v byte
	}
	var as []alloc
	for i := 0; i < 20000; i++ {
		h := g.Alloc(1000)
		b := g.Bytes(h, 1000)
		for j := range b {
			b[j] = byte(i)
		}
		as = append(as, alloc{h, byte(i)})
		if used, res := g.Used(), g.Reserved(); res > 2*used+16*1024 && res > used+pageSize {
			t.Fatalf("after %d allocations: used %d, reserved %d", i+1, used, res)
		}
	}
	for _, a := range as {
		if !bytes.Equal(g.Bytes(a.h, 1000), bytes.Repeat([]byte{a.v}, 1000)) {
			t.Fatalf("allocation %v lost its bytes", a.h)
		}
	}
	for k, want := range []int{16 * 1024, 32 * 1024, 64 * 1024} {
		if got := classPageBytes(1024, k); got != want {
			t.Errorf("classPageBytes(1024, %d) = %d, want %d", k, got, want)
		}
	}
	if got := classPageBytes(1024, 30); got != pageSize {
		t.Errorf("classPageBytes(1024, 30) = %d, want a full page", got)
	}
	g.Reset()
}
