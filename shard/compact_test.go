package shard

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// valueOf is the value the tests store at key i: its length picks the size
// class, its bytes name the key, so a slot read through a wrong handle shows.
func valueOf(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*31 + j*7 + i>>8)
	}
	copy(b, fmt.Sprintf("<%d>", i))
	return b
}

// compactAll runs compaction steps until no run is under way (at most
// limit steps).
func compactAll(t *testing.T, sh *Shard, limit int) int {
	t.Helper()
	for i := 0; i < limit; i++ {
		if !sh.CompactStep(0) && !sh.Slab.cmp.active {
			// A step that ended a run may leave another class to plan.
			if !sh.CompactStep(0) && !sh.Slab.cmp.active {
				return i
			}
		}
	}
	t.Fatalf("compaction still running after %d steps", limit)
	return limit
}

// checkSlab verifies the slab's invariants (slab.go) against the entries
// of every database: each live entry's handle is unique and lies in a page
// in use or being evacuated; a page's live count is the number of entries
// in it; each handed-out free slot of a page in use is on the free list
// exactly once; a released page is nil; reserved is the pages' sum.
func checkSlab(t *testing.T, sh *Shard) {
	t.Helper()
	s := &sh.Slab
	type cp struct{ c, p int }
	live := map[cp]int32{}
	seen := map[Handle]bool{}
	var used int64
	for _, db := range sh.DBs {
		for slot := int32(0); slot < db.nslots; slot++ {
			e := db.at(slot)
			if !e.live {
				continue
			}
			if seen[e.kv] {
				t.Fatalf("db %d slot %d: handle %x held twice", db.ID, slot, e.kv)
			}
			seen[e.kv] = true
			c, p, off := e.kv.parts()
			if c == hugeClass {
				used += int64(len(s.huge[p]))
				continue
			}
			sc := &s.classes[c]
			used += int64(sc.size)
			if sc.state[p] == pageReleased || sc.pages[p] == nil {
				t.Fatalf("db %d slot %d: handle in released page %d of class %d", db.ID, slot, p, c)
			}
			if off%sc.size != 0 || off+sc.size > len(sc.pages[p]) {
				t.Fatalf("db %d slot %d: bad offset %d in class %d", db.ID, slot, off, c)
			}
			live[cp{c, p}]++
		}
	}
	if used != s.used {
		t.Fatalf("used %d, the entries hold %d", s.used, used)
	}
	reserved := int64(0)
	for c := range s.classes {
		sc := &s.classes[c]
		if len(sc.live) != len(sc.pages) || len(sc.state) != len(sc.pages) {
			t.Fatalf("class %d: %d pages, %d live counts, %d states", c, len(sc.pages), len(sc.live), len(sc.state))
		}
		free := map[Handle]bool{}
		perPage := map[int]int{}
		for _, h := range sc.free {
			_, p, _ := h.parts()
			if sc.state[p] != pageInUse {
				continue // stale: dropped by Alloc
			}
			if free[h] {
				t.Fatalf("class %d: handle %x twice on the free list", c, h)
			}
			if seen[h] {
				t.Fatalf("class %d: live handle %x on the free list", c, h)
			}
			free[h] = true
			perPage[p]++
		}
		nevac := 0
		for p := range sc.pages {
			if sc.live[p] != live[cp{c, p}] {
				t.Fatalf("class %d page %d: live count %d, entries %d", c, p, sc.live[p], live[cp{c, p}])
			}
			switch sc.state[p] {
			case pageReleased:
				if sc.pages[p] != nil || sc.live[p] != 0 {
					t.Fatalf("class %d page %d: released but held", c, p)
				}
				continue
			case pageEvacuating:
				nevac++
				if sc.live[p] == 0 {
					t.Fatalf("class %d page %d: evacuated and empty but not released", c, p)
				}
			case pageInUse:
				handed := len(sc.pages[p]) / sc.size
				if p == len(sc.pages)-1 {
					handed = sc.next / sc.size
				}
				if int(sc.live[p])+perPage[p] != handed {
					t.Fatalf("class %d page %d: %d live + %d free != %d handed out", c, p, sc.live[p], perPage[p], handed)
				}
			}
			reserved += int64(len(sc.pages[p]))
		}
		if nevac != sc.nevac {
			t.Fatalf("class %d: %d pages evacuating, nevac %d", c, nevac, sc.nevac)
		}
	}
	for _, b := range s.huge {
		reserved += int64(len(b))
	}
	if reserved != s.reserved {
		t.Fatalf("reserved %d, pages sum to %d", s.reserved, reserved)
	}
}

// After most keys of a class are deleted in a pattern that leaves every
// page sparse, compaction gives back most pages and every key reads back
// its value byte for byte; used memory does not change.
func TestCompactionGivesBackSparsePages(t *testing.T) {
	sh := New(0, 2)
	db := sh.DBs[0]
	const n = 12000
	for i := 0; i < n; i++ {
		sz := 1000 + i%3*500 // three classes, each past one 2 MiB page
		if i%10 == 0 {
			db.SetObj([]byte(fmt.Sprintf("list:%d", i)), TypeList, EncListpack, &ksList{items: []string{"x"}})
			continue
		}
		db.SetStr([]byte(fmt.Sprintf("key:%d", i)), valueOf(i, sz), false)
	}
	checkSlab(t, sh)
	before := sh.Slab.Reserved()
	for i := 0; i < n; i++ {
		if i%5 != 0 { // keep one key in five: every page keeps some
			db.DeleteKey([]byte(fmt.Sprintf("key:%d", i)))
		}
	}
	checkSlab(t, sh)
	used := sh.Slab.Used()
	if sh.Slab.Reserved() != before {
		t.Fatalf("deletes alone changed reserved: %d -> %d", before, sh.Slab.Reserved())
	}
	steps := compactAll(t, sh, 10000)
	checkSlab(t, sh)
	after := sh.Slab.Reserved()
	t.Logf("reserved %d -> %d bytes in %d steps (used %d)", before, after, steps, used)
	if after > before/2 {
		t.Fatalf("reserved %d -> %d: compaction gave back less than half with a fifth of the keys left", before, after)
	}
	if sh.Slab.Used() != used {
		t.Fatalf("compaction changed used: %d -> %d", used, sh.Slab.Used())
	}
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			if slot := db.Lookup([]byte(fmt.Sprintf("list:%d", i))); slot < 0 || db.Type(slot) != TypeList {
				t.Fatalf("list:%d lost", i)
			}
			continue
		}
		slot := db.Lookup([]byte(fmt.Sprintf("key:%d", i)))
		if i%5 != 0 {
			if slot >= 0 {
				t.Fatalf("key:%d deleted but found", i)
			}
			continue
		}
		if slot < 0 {
			t.Fatalf("key:%d lost", i)
		}
		if want := valueOf(i, 1000+i%3*500); !bytes.Equal(db.Str(slot), want) {
			t.Fatalf("key:%d reads %q..., want %q...", i, db.Str(slot)[:16], want[:16])
		}
	}
	// The slots freed by compaction serve new keys: filling again reuses them.
	for i := n; i < n+2000; i++ {
		db.SetStr([]byte(fmt.Sprintf("key:%d", i)), valueOf(i, 1000), false)
	}
	checkSlab(t, sh)
	sh.FlushAll()
	checkSlab(t, sh)
}

// A page whose slots were all freed is released at once when planned,
// without moving anything.
func TestCompactionReleasesEmptyPages(t *testing.T) {
	sh := New(0, 1)
	db := sh.DBs[0]
	for i := 0; i < 8000; i++ {
		db.SetStr([]byte(fmt.Sprintf("k%d", i)), valueOf(i, 2000), false)
	}
	before := sh.Slab.Reserved()
	for i := 0; i < 6000; i++ { // the oldest keys: whole pages
		db.DeleteKey([]byte(fmt.Sprintf("k%d", i)))
	}
	compactAll(t, sh, 1000)
	checkSlab(t, sh)
	if sh.Slab.cmp.movedTotal > 500 { // the partly deleted page that holds k6000 may move
		t.Errorf("moved %d slots to release empty pages", sh.Slab.cmp.movedTotal)
	}
	if after := sh.Slab.Reserved(); after > before/3 {
		t.Fatalf("reserved %d -> %d after deleting the oldest three quarters", before, after)
	}
	for i := 6000; i < 8000; i++ {
		if slot := db.Lookup([]byte(fmt.Sprintf("k%d", i))); slot < 0 || !bytes.Equal(db.Str(slot), valueOf(i, 2000)) {
			t.Fatalf("k%d lost its value", i)
		}
	}
}

// A dense class is left alone.
func TestCompactionLeavesDenseClasses(t *testing.T) {
	sh := New(0, 1)
	db := sh.DBs[0]
	for i := 0; i < 8000; i++ {
		db.SetStr([]byte(fmt.Sprintf("k%d", i)), valueOf(i, 2000), false)
	}
	for i := 0; i < 8000; i += 10 {
		db.DeleteKey([]byte(fmt.Sprintf("k%d", i)))
	}
	if sh.CompactStep(0) || sh.Slab.cmp.runs != 0 {
		t.Fatalf("a class 90%% full was compacted")
	}
}

// runCompactionModel applies random operations to a shard and to a map
// model — sets of several sizes, overwrites, appends, deletes, renames,
// SWAPDB, FLUSHDB, non-string keys — interleaved with compaction steps of
// a few slots each, and checks after every step that the slab's invariants
// hold and every key reads back the model's value.
func runCompactionModel(t *testing.T, seed uint64, ops int) compaction {
	oldSlots, oldBytes, oldMin := compactSlotsPerCheck, compactBytesPerCheck, compactMinBytes
	compactSlotsPerCheck, compactBytesPerCheck, compactMinBytes = 7, 1+int(seed%3)*2000, 1
	defer func() { compactSlotsPerCheck, compactBytesPerCheck, compactMinBytes = oldSlots, oldBytes, oldMin }()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	sh := New(0, 3)
	model := make([]map[string]string, 3) // "" value: a list
	for i := range model {
		model[i] = map[string]string{}
	}
	sizes := []int{100, 700, 3000, 70000}
	keyOf := func() string { return fmt.Sprintf("k%d", r.IntN(3000)) }
	verify := func() {
		checkSlab(t, sh)
		for d, m := range model {
			db := sh.DBs[d]
			if db.Len() != len(m) {
				t.Fatalf("seed %d: db %d holds %d keys, the model %d", seed, d, db.Len(), len(m))
			}
			for k, v := range m {
				slot := db.Peek([]byte(k))
				if slot < 0 {
					t.Fatalf("seed %d: db %d lost %s", seed, d, k)
				}
				if v == "" {
					if db.Type(slot) != TypeList {
						t.Fatalf("seed %d: db %d %s is not a list", seed, d, k)
					}
				} else if string(db.Str(slot)) != v {
					t.Fatalf("seed %d: db %d %s corrupt", seed, d, k)
				}
			}
		}
	}
	for op := 0; op < ops; op++ {
		if op%2500 == 2499 { // a delete of most keys, as after a fill
			for d, m := range model {
				for k := range m {
					if r.IntN(10) < 7 {
						sh.DBs[d].DeleteKey([]byte(k))
						delete(m, k)
					}
				}
			}
		}
		d := r.IntN(3)
		db, m := sh.DBs[d], model[d]
		k := keyOf()
		switch x := r.IntN(100); {
		case x < 40: // set (a new key or an overwrite, any size)
			sz := sizes[r.IntN(len(sizes)-1)]
			if r.IntN(50) == 0 {
				sz = sizes[len(sizes)-1] // huge
			}
			v := valueOf(r.IntN(1<<20), sz/2+r.IntN(sz/2))
			db.SetStr([]byte(k), v, false)
			m[k] = string(v)
		case x < 45: // a list
			db.SetObj([]byte(k), TypeList, EncListpack, &ksList{items: []string{"x"}})
			m[k] = ""
		case x < 50: // append
			if v, ok := m[k]; ok && v != "" {
				add := valueOf(r.IntN(1000), 1+r.IntN(300))
				buf := db.ResizeStr(db.Peek([]byte(k)), len(v)+len(add))
				copy(buf[len(v):], add)
				m[k] = v + string(add)
			}
		case x < 85: // delete, in bursts so that pages go sparse
			for j := 0; j < 1+r.IntN(20); j++ {
				k := keyOf()
				if _, ok := m[k]; ok {
					db.DeleteKey([]byte(k))
					delete(m, k)
				}
			}
		case x < 92: // rename, maybe to another database
			if v, ok := m[k]; ok {
				d2 := r.IntN(3)
				nk := keyOf()
				if d2 == d && nk == k {
					break
				}
				db.MoveTo(db.Peek([]byte(k)), sh.DBs[d2], []byte(nk))
				delete(m, k)
				model[d2][nk] = v
			}
		case x < 94:
			a, b := r.IntN(3), r.IntN(3)
			sh.SwapDB(a, b)
			model[a], model[b] = model[b], model[a]
		case x < 95:
			if r.IntN(4) == 0 {
				db.Flush()
				model[d] = map[string]string{}
			}
		default:
			for j := 0; j < 1+r.IntN(10); j++ {
				sh.CompactStep(0)
			}
		}
		if op%50 == 0 {
			verify()
		}
	}
	for i := 0; i < 100000 && (sh.CompactStep(0) || sh.Slab.cmp.active); i++ {
	}
	verify()
	return sh.Slab.cmp
}

func TestCompactionAgainstAModel(t *testing.T) {
	var runs, moved, released int64
	for seed := uint64(1); seed <= 6; seed++ {
		cm := runCompactionModel(t, seed, 20000)
		runs, moved, released = runs+cm.runs, moved+cm.movedTotal, released+cm.released
	}
	t.Logf("%d runs, %d slots moved, %d bytes of pages released", runs, moved, released)
	if runs == 0 || moved == 0 || released == 0 {
		t.Fatalf("the model never exercised compaction: %d runs, %d moved, %d released", runs, moved, released)
	}
}

// FuzzCompaction runs the model with seeds the fuzzer picks:
// go test -fuzz FuzzCompaction -run XXX ./shard/
func FuzzCompaction(f *testing.F) {
	f.Add(uint64(42), uint16(2000))
	f.Fuzz(func(t *testing.T, seed uint64, ops uint16) {
		runCompactionModel(t, seed, int(ops%4000))
	})
}

// An allocation no entry holds cannot be moved: the run ends after two
// passes that moved nothing, its page stays (never handed out again) and
// its bytes are intact; the page goes when the allocation is freed.
func TestCompactionLeavesWhatNoEntryHolds(t *testing.T) {
	sh := New(0, 1)
	db := sh.DBs[0]
	var hidden Handle
	for i := 0; i < 6000; i++ {
		if i == 100 {
			hidden = sh.Slab.Alloc(2000)
			copy(sh.Slab.Bytes(hidden, 2000), valueOf(-1, 2000))
		}
		db.SetStr([]byte(fmt.Sprintf("k%d", i)), valueOf(i, 2000), false)
	}
	for i := 0; i < 6000; i++ {
		if i%8 != 0 {
			db.DeleteKey([]byte(fmt.Sprintf("k%d", i)))
		}
	}
	compactAll(t, sh, 1000)
	sc := &sh.Slab.classes[sizeToClass(2000)]
	if p := hidden.page(); sc.state[p] != pageEvacuating || sc.live[p] != 1 {
		t.Fatalf("the page of the allocation no entry holds: state %d, live %d", sc.state[p], sc.live[p])
	}
	if !bytes.Equal(sh.Slab.Bytes(hidden, 2000), valueOf(-1, 2000)) {
		t.Fatal("the allocation no entry holds lost its bytes")
	}
	for i := 0; i < 6000; i += 8 {
		if slot := db.Lookup([]byte(fmt.Sprintf("k%d", i))); slot < 0 || !bytes.Equal(db.Str(slot), valueOf(i, 2000)) {
			t.Fatalf("k%d lost its value", i)
		}
	}
	for i := 0; i < 3000; i++ { // new keys never land in the page left evacuating
		h := sh.Slab.Alloc(2000)
		if h.page() == hidden.page() {
			t.Fatal("a slot of an evacuating page was handed out")
		}
	}
	sh.Slab.Free(hidden, 2000)
	if p := hidden.page(); sc.state[p] != pageReleased {
		t.Fatalf("page state %d after its last allocation was freed", sc.state[p])
	}
}
