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

// While a big table is copied into its doubled successor, every live word
// is found (in whichever table holds it), a word deleted before or after
// its copy stays deleted, and the copy ends with the old table dropped.
func TestIndexGrowsIncrementally(t *testing.T) {
	var ix index
	r := rand.New(rand.NewPCG(3, 4))
	live := map[int32]uint32{}
	var gone []int32
	goneFP := map[int32]uint32{}
	next := int32(0)
	add := func() {
		fp := r.Uint32()
		ix.insert(fp, next)
		live[next] = fp
		next++
	}
	del := func() {
		for slot, fp := range live {
			ix.remove(fp, slot)
			delete(live, slot)
			gone = append(gone, slot)
			goneFP[slot] = fp
			return
		}
	}
	check := func(step int) {
		t.Helper()
		k := 0
		for slot, fp := range live {
			if got := ix.lookup(fp, func(s int32) bool { return s == slot }); got != slot {
				t.Fatalf("step %d: live slot %d (fp %x) not found: %d", step, slot, fp, got)
			}
			if k++; k == 300 {
				break
			}
		}
		for _, slot := range gone[max(0, len(gone)-300):] {
			fp := goneFP[slot]
			if got := ix.lookup(fp, func(s int32) bool { return s == slot }); got != -1 {
				t.Fatalf("step %d: deleted slot %d found again", step, slot)
			}
		}
		if ix.count != len(live) {
			t.Fatalf("step %d: count %d, want %d", step, ix.count, len(live))
		}
	}
	for len(live) < 100_000 {
		add()
	}
	// Grow once more, then churn while the copy runs.
	for !ix.migrating() {
		add()
	}
	steps := 0
	for ; ix.migrating(); steps++ {
		switch r.IntN(3) {
		case 0:
			add()
		default:
			del()
		}
		if steps%50 == 0 {
			check(steps)
		}
	}
	if steps < 1000 {
		t.Fatalf("the copy ended after %d steps: it should be spread out", steps)
	}
	check(steps)
	for slot, fp := range live {
		if ix.lookup(fp, func(s int32) bool { return s == slot }) != slot {
			t.Fatalf("after the copy: live slot %d lost", slot)
		}
	}
}

// migrating reports whether an old table is still being copied.
func (ix *index) migrating() bool { return ix.old != nil }
