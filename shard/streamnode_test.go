package shard

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// TestStreamNodesAgainstModel drives the node storage with random appends
// (same and different fields, several node limits), deletions and trims, and
// compares every read with a plain slice of entries.
func TestStreamNodesAgainstModel(t *testing.T) {
	type ent struct {
		id streamID
		fv []string
	}
	for _, lim := range []struct{ bytes, entries int64 }{{4096, 100}, {0, 1}, {0, 2}, {64, 0}, {4096, 7}} {
		t.Run(fmt.Sprintf("bytes%d-entries%d", lim.bytes, lim.entries), func(t *testing.T) {
			cfg := DefaultTunables()
			cfg.StreamNodeMaxBytes.Store(lim.bytes)
			cfg.StreamNodeMaxEntries.Store(lim.entries)
			rng := rand.New(rand.NewSource(lim.bytes*31 + lim.entries))
			s := &streamObj{}
			var model []ent
			next := streamID{1, 0}
			for op := 0; op < 4000; op++ {
				switch r := rng.Intn(10); {
				case r < 6:
					if rng.Intn(3) == 0 {
						next = streamID{next.ms + uint64(rng.Intn(100000)), uint64(rng.Intn(3))}
					} else {
						next.seq++
					}
					var fv []string
					if rng.Intn(4) == 0 {
						for k := 0; k <= rng.Intn(3); k++ {
							fv = append(fv, fmt.Sprintf("g%d", rng.Intn(5)), strings.Repeat("v", rng.Intn(40)))
						}
					} else {
						fv = []string{"a", fmt.Sprint(op), "b", "x", "c", strings.Repeat("y", rng.Intn(5))}
					}
					bs := make([][]byte, len(fv))
					for i := range fv {
						bs[i] = []byte(fv[i])
					}
					s.appendEntry(cfg, next, bs)
					model = append(model, ent{next, fv})
				case r < 8 && len(model) > 0:
					k := rng.Intn(len(model))
					if !s.remove(model[k].id) {
						t.Fatalf("remove %v: absent", model[k].id)
					}
					if s.remove(model[k].id) {
						t.Fatalf("remove %v twice", model[k].id)
					}
					model = append(model[:k], model[k+1:]...)
					s.fixFirst()
				case r == 8 && len(model) > 0:
					maxlen := int64(rng.Intn(len(model) + 1))
					n := s.trim(maxlen, nil, false, 0)
					if want := int64(len(model)) - maxlen; n != want {
						t.Fatalf("trim to %d removed %d, want %d", maxlen, n, want)
					}
					model = model[len(model)-int(maxlen):]
				case r == 9 && len(model) > 0:
					minid := model[rng.Intn(len(model))].id
					n := s.trim(0, &minid, true, 0)
					k := 0
					for k < len(model) && model[k].id.cmp(minid) < 0 {
						k++
					}
					if n > int64(k) {
						t.Fatalf("approx trim removed %d of %d", n, k)
					}
					model = model[n:]
				}
				if s.length != int64(len(model)) {
					t.Fatalf("op %d: length %d, model %d", op, s.length, len(model))
				}
				if len(model) > 0 && (s.firstID != model[0].id || s.lastValid() != model[len(model)-1].id) {
					t.Fatalf("op %d: first/last %v %v, model %v %v", op, s.firstID, s.lastValid(), model[0].id, model[len(model)-1].id)
				}
				if op%97 != 0 {
					continue
				}
				// full scans both ways, a sub-range, and point reads
				check := func(rev bool, lo, hi int) {
					var got []string
					a, b := streamID{}, streamID{math.MaxUint64, math.MaxUint64}
					if lo > 0 {
						a = model[lo].id
					}
					if hi < len(model) {
						b = model[hi-1].id
					}
					s.each(a, b, rev, func(id streamID, fv [][]byte) bool {
						got = append(got, fmt.Sprintf("%v %q", id, fv))
						return true
					})
					var want []string
					for _, e := range model[lo:hi] {
						want = append(want, fmt.Sprintf("%v %q", e.id, toBytes(e.fv)))
					}
					if rev {
						for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
							want[i], want[j] = want[j], want[i]
						}
					}
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Fatalf("op %d rev %v [%d,%d): got %d entries, want %d", op, rev, lo, hi, len(got), len(want))
					}
				}
				check(false, 0, len(model))
				check(true, 0, len(model))
				if len(model) > 2 {
					lo := rng.Intn(len(model) - 1)
					hi := lo + 1 + rng.Intn(len(model)-lo-1)
					check(false, lo, hi)
					check(true, lo, hi)
				}
				for _, e := range model[:min(len(model), 20)] {
					fv, ok := s.get(e.id, nil)
					if !ok || fmt.Sprintf("%q", fv) != fmt.Sprintf("%q", toBytes(e.fv)) {
						t.Fatalf("get %v: %q %v", e.id, fv, ok)
					}
				}
				c := s.Copy().(*streamObj)
				if c.length != s.length || c.nodeCount() != s.nodeCount() {
					t.Fatalf("copy differs")
				}
			}
			if lim.entries > 0 {
				for _, nd := range s.nodes {
					if int64(nd.live+nd.deleted) > lim.entries {
						t.Fatalf("node of %d entries, limit %d", nd.live+nd.deleted, lim.entries)
					}
				}
			}
		})
	}
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
