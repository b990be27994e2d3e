package shard

import (
	"math/rand/v2"
	"testing"
)

// The index must agree with a map under random inserts and deletes,
// including fingerprints that collide and runs that wrap around the table.
func TestIndexAgreesWithMapUnderChurn(t *testing.T) {
	for _, fpBits := range []uint{32, 6} { // 6: heavy fingerprint collisions
		var ix index
		want := map[int32]uint32{} // slot -> fp
		r := rand.New(rand.NewPCG(1, uint64(fpBits)))
		next := int32(0)
		for i := 0; i < 200000; i++ {
			if r.IntN(3) > 0 || len(want) == 0 {
				fp := r.Uint32()
				if fpBits < 32 {
					fp = fp >> (32 - fpBits) << (32 - fpBits)
				}
				ix.insert(fp, next)
				want[next] = fp
				next++
			} else {
				for slot, fp := range want {
					ix.remove(fp, slot)
					delete(want, slot)
					break
				}
			}
			if i%997 == 0 {
				for slot, fp := range want {
					if got := ix.lookup(fp, func(s int32) bool { return s == slot }); got != slot {
						t.Fatalf("fpBits %d step %d: lookup of slot %d (fp %x) = %d", fpBits, i, slot, fp, got)
					}
				}
				if ix.count != len(want) {
					t.Fatalf("count %d, want %d", ix.count, len(want))
				}
			}
		}
	}
}

func TestIndexLookupOfAbsentKeyIsMiss(t *testing.T) {
	var ix index
	if ix.lookup(7, func(int32) bool { return true }) != -1 {
		t.Fatal("empty index found something")
	}
	ix.insert(7<<28, 1)
	if ix.lookup(7<<28, func(s int32) bool { return s == 2 }) != -1 {
		t.Fatal("a fingerprint match whose key differs must be a miss")
	}
}
