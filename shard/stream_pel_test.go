package shard

import (
	"math/rand"
	"sort"
	"testing"
	"time"
)

// checkPEL verifies the invariants: n counts the NACKs, no chunk is empty or
// over pelChunkMax, IDs ascend across chunks.
func checkPEL(t *testing.T, p *streamPEL) []streamID {
	t.Helper()
	var ids []streamID
	for _, ch := range p.chunks {
		if len(ch) == 0 || len(ch) > pelChunkMax {
			t.Fatalf("chunk of %d", len(ch))
		}
		for _, nk := range ch {
			if len(ids) > 0 && ids[len(ids)-1].cmp(nk.id) >= 0 {
				t.Fatalf("order: %v then %v", ids[len(ids)-1], nk.id)
			}
			ids = append(ids, nk.id)
		}
	}
	if len(ids) != p.len() {
		t.Fatalf("len %d, counted %d", p.len(), len(ids))
	}
	return ids
}

func TestStreamPELRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var p streamPEL
	ref := map[streamID]*streamNACK{}
	rid := func() streamID { return streamID{uint64(rng.Intn(3000)), uint64(rng.Intn(3))} }
	for op := 0; op < 60000; op++ {
		id := rid()
		switch rng.Intn(4) {
		case 0, 1:
			nk := &streamNACK{id: id}
			_, had := ref[id]
			if p.insert(nk) == had {
				t.Fatalf("insert %v: had %v", id, had)
			}
			if !had {
				ref[id] = nk
			}
		case 2:
			got := p.delete(id)
			if got != ref[id] {
				t.Fatalf("delete %v: %p want %p", id, got, ref[id])
			}
			delete(ref, id)
		case 3:
			if p.find(id) != ref[id] {
				t.Fatalf("find %v", id)
			}
		}
		if op%5000 == 0 {
			checkPEL(t, &p)
		}
	}
	ids := checkPEL(t, &p)
	want := make([]streamID, 0, len(ref))
	for id := range ref {
		want = append(want, id)
	}
	sort.Slice(want, func(i, j int) bool { return want[i].cmp(want[j]) < 0 })
	if len(ids) != len(want) {
		t.Fatalf("%d ids, want %d", len(ids), len(want))
	}
	for i := range ids {
		if ids[i] != want[i] {
			t.Fatalf("ids[%d] = %v want %v", i, ids[i], want[i])
		}
	}
	// seek and ascend agree with the sorted reference.
	for k := 0; k < 2000; k++ {
		from := rid()
		i := sort.Search(len(want), func(i int) bool { return want[i].cmp(from) >= 0 })
		nk := p.seek(from)
		if i == len(want) {
			if nk != nil {
				t.Fatalf("seek %v: %v, want none", from, nk.id)
			}
		} else if nk == nil || nk.id != want[i] {
			t.Fatalf("seek %v: want %v", from, want[i])
		}
		var got []streamID
		p.ascend(from, func(nk *streamNACK) bool {
			got = append(got, nk.id)
			return len(got) < 5
		})
		exp := want[i:min(i+5, len(want))]
		if len(got) != len(exp) {
			t.Fatalf("ascend %v: %v want %v", from, got, exp)
		}
		for j := range got {
			if got[j] != exp[j] {
				t.Fatalf("ascend %v: %v want %v", from, got, exp)
			}
		}
	}
	if len(want) > 0 && (p.first().id != want[0] || p.last().id != want[len(want)-1]) {
		t.Fatal("first/last")
	}
	for _, id := range want {
		p.delete(id)
	}
	if p.len() != 0 || p.first() != nil || p.last() != nil || len(p.chunks) != 0 {
		t.Fatalf("not empty: %d", p.len())
	}
}

// 100k pending entries: deliveries append at the back, acks come from the
// front; each operation must stay cheap (no re-sorting, no big moves).
func TestStreamPELLargeQueue(t *testing.T) {
	const n = 100000
	var p streamPEL
	start := time.Now()
	for i := 0; i < n; i++ {
		p.insert(&streamNACK{id: streamID{uint64(i + 1), 0}})
	}
	for round := 0; round < 3; round++ {
		for i := 0; i < n; i++ {
			base := uint64(n*(round+1) + i + 1)
			p.insert(&streamNACK{id: streamID{base, 0}})
			if p.delete(streamID{base - n, 0}) == nil {
				t.Fatalf("ack %d", base-n)
			}
		}
	}
	checkPEL(t, &p)
	if p.len() != n || p.first().id.ms != uint64(3*n+1) {
		t.Fatalf("len %d first %v", p.len(), p.first().id)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("too slow: %v", d)
	}
	// Chunks stay reasonably full.
	if len(p.chunks) > 2*n/pelChunkMax+2 {
		t.Fatalf("%d chunks for %d", len(p.chunks), n)
	}
}

func BenchmarkStreamPELQueue(b *testing.B) {
	var p streamPEL
	const n = 100000
	for i := 0; i < n; i++ {
		p.insert(&streamNACK{id: streamID{uint64(i + 1), 0}})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base := uint64(n + i + 1)
		p.insert(&streamNACK{id: streamID{base, 0}})
		p.delete(streamID{base - n, 0})
	}
}

// Scattered acks merge the chunks they empty, so the chunk list stays
// proportional to what is still pending.
func TestStreamPELScatteredDeletes(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var p streamPEL
	const n = 20000
	for i := 0; i < n; i++ {
		p.insert(&streamNACK{id: streamID{uint64(i), 0}})
	}
	for _, i := range rng.Perm(n)[:n*19/20] {
		if p.delete(streamID{uint64(i), 0}) == nil {
			t.Fatalf("delete %d", i)
		}
	}
	checkPEL(t, &p)
	if max := p.len()/16 + 2; len(p.chunks) > max {
		t.Fatalf("%d chunks for %d NACKs (want <= %d)", len(p.chunks), p.len(), max)
	}
}
