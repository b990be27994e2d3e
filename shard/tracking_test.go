package shard

import "testing"

func takeAll(s *Shard) (keys []string, refs []uint64, anon []bool, flushed bool) {
	s.TakeInvalidations(func(inv []Invalidation, fl bool) {
		flushed = fl
		for _, v := range inv {
			keys = append(keys, string(v.Key))
			refs = append(refs, v.Ref)
			anon = append(anon, v.Anon)
		}
	})
	return
}

func TestTrackingTable(t *testing.T) {
	sh := New(0, 2)
	sh.Trk = &TrackShared{}
	sh.Trk.Clients.Store(1)
	db := sh.DBs[0]
	db.SetStr([]byte("a"), []byte("1"), false)
	sh.Track([]byte("a"), 7)
	sh.Track([]byte("a"), 7) // once per ref
	sh.Track([]byte("a"), 9)
	sh.Track([]byte("b"), 7) // a missing key is tracked too, as Redis
	if sh.TrackedKeys() != 2 || sh.Trk.Keys.Load() != 2 || sh.Trk.Items.Load() != 3 {
		t.Fatalf("keys %d/%d items %d", sh.TrackedKeys(), sh.Trk.Keys.Load(), sh.Trk.Items.Load())
	}
	if sh.PendingInvalidations() {
		t.Fatal("reads queued invalidations")
	}
	db.SetStr([]byte("a"), []byte("2"), false) // in place: one invalidation per ref
	db.SetStr([]byte("a"), []byte("3"), false) // not tracked any more
	keys, refs, anon, _ := takeAll(sh)
	if len(keys) != 2 || keys[0] != "a" || keys[1] != "a" || refs[0]+refs[1] != 16 || anon[0] {
		t.Fatalf("after SET: %v %v", keys, refs)
	}
	if sh.TrackedKeys() != 1 || sh.Trk.Items.Load() != 1 {
		t.Fatalf("table after invalidation: %d keys, %d items", sh.TrackedKeys(), sh.Trk.Items.Load())
	}
	// An expiry is no client's change.
	slot := db.SetStr([]byte("b"), []byte("x"), false)
	takeAll(sh)
	sh.Track([]byte("b"), 7)
	db.SetExpiry(slot, 1)
	takeAll(sh)
	sh.Track([]byte("b"), 7)
	sh.SetNow(10)
	if db.Lookup([]byte("b")) >= 0 {
		t.Fatal("b did not expire")
	}
	_, _, anon, _ = takeAll(sh)
	if len(anon) != 1 || !anon[0] {
		t.Fatalf("expiry invalidation: %v", anon)
	}
	// A flush empties the table and says so once.
	sh.Track([]byte("c"), 7)
	sh.FlushAll()
	if keys, _, _, fl := takeAll(sh); !fl || len(keys) != 0 || sh.TrackedKeys() != 0 || sh.Trk.Keys.Load() != 0 || sh.Trk.Items.Load() != 0 {
		t.Fatalf("flush: %v %v keys %d/%d items %d", fl, keys, sh.TrackedKeys(), sh.Trk.Keys.Load(), sh.Trk.Items.Load())
	}
	// BCAST: every change is a candidate (ref 0).
	sh.Trk.Bcast.Store(true)
	db.SetStr([]byte("p:1"), []byte("x"), false)
	keys, refs, _, _ = takeAll(sh)
	if len(keys) == 0 || keys[0] != "p:1" || refs[0] != 0 {
		t.Fatalf("bcast: %v %v", keys, refs)
	}
	sh.Trk.Bcast.Store(false)
	// Evicting from the table: as many as claimed.
	for _, k := range []string{"e1", "e2", "e3"} {
		sh.Track([]byte(k), 7)
	}
	left := 1
	n := sh.EvictTracked(10, func() bool {
		if left--; left < 0 {
			return false
		}
		sh.Trk.Keys.Add(-1)
		return true
	})
	if keys, _, _, _ := takeAll(sh); n != 1 || len(keys) != 1 || sh.TrackedKeys() != 2 || sh.Trk.Keys.Load() != 2 {
		t.Fatalf("evict: %d %v %d", n, keys, sh.TrackedKeys())
	}
}
