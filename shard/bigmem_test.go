package shard

import (
	"fmt"
	"testing"
)

// A released mapping comes back zeroed for the next request of its size
// (two huge pages: single ones come from the prefaulted queue first).
func TestBigMemReuseIsZeroed(t *testing.T) {
	const n = 2 * bigPageSize
	b := allocBig(n)
	if len(b) != n {
		t.Fatalf("len %d", len(b))
	}
	for i := range b {
		b[i] = 0xAB
	}
	mappedHere := isMapped(b)
	freeBig(b)
	c := allocBig(n)
	if mappedHere && &c[0] != &b[0] {
		t.Fatalf("a released mapping was not reused")
	}
	for i, v := range c {
		if v != 0 {
			t.Fatalf("byte %d of a reused mapping is %#x, want 0", i, v)
		}
	}
	freeBig(c)
	// Single huge pages, prefaulted or not, are zeroed too, also after a
	// release went back to the pool the prefaulter draws from.
	for round := 0; round < 8; round++ {
		p := allocBig(bigPageSize)
		for i := 0; i < len(p); i += 4096 {
			if p[i] != 0 {
				t.Fatalf("round %d: byte %d of a huge page is %#x", round, i, p[i])
			}
			p[i] = 0xCD
		}
		freeBig(p)
	}
	// Go heap memory (any size that is not a multiple of a huge page) is
	// left alone by freeBig.
	h := allocBig(100)
	h[0] = 1
	freeBig(h)
	if h[0] != 1 {
		t.Fatal("freeBig touched heap memory")
	}
}

// A database large enough to use huge-page chunks and a huge-page index
// keeps every key through growth, and FLUSHDB then refilling works on the
// released memory.
func TestBigMemKeyspaceSurvivesGrowthAndFlush(t *testing.T) {
	sh := New(0, 1)
	db := sh.DBs[0]
	const n = 300_000 // index of 2^19 words = 4 MiB; 74 chunks of entries
	for round := 0; round < 2; round++ {
		for i := 0; i < n; i++ {
			k := []byte(fmt.Sprintf("key:%d", i))
			db.SetStr(k, []byte(fmt.Sprintf("v%d-%d", round, i)), false)
		}
		if db.Len() != n {
			t.Fatalf("round %d: %d keys", round, db.Len())
		}
		for i := 0; i < n; i += 997 {
			slot := db.Lookup([]byte(fmt.Sprintf("key:%d", i)))
			if slot < 0 || string(db.Str(slot)) != fmt.Sprintf("v%d-%d", round, i) {
				t.Fatalf("round %d: key:%d lost", round, i)
			}
		}
		db.Flush()
		if db.Len() != 0 || db.Lookup([]byte("key:1")) >= 0 {
			t.Fatal("FLUSHDB left keys")
		}
	}
}
