package shard

import (
	"fmt"
	"testing"
)

// The image a rewrite emits is the keyspace at the cut, whatever the shard
// does to its keys while the image is being made.
func TestRewriteImageIsTheStateAtTheCut(t *testing.T) {
	s := New(0, 2)
	s.SetNow(1_000_000)
	db0, db1 := s.DBs[0], s.DBs[1]
	want := map[string]string{}
	for i := 0; i < 5000; i++ {
		k, v := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		db0.SetStr([]byte(k), []byte(v), false)
		want["0/"+k] = v
	}
	db1.SetStr([]byte("other"), []byte("db1"), false)
	want["1/other"] = "db1"
	slot := db0.Lookup([]byte("k7"))
	db0.SetExpiry(slot, 2_000_000)
	want["0/k7"] = "v7 PXAT 2000000"

	got := map[string]string{}
	s.StartRewrite(func(db int, argv [][]byte) {
		k := fmt.Sprintf("%d/%s", db, argv[1])
		if _, dup := got[k]; dup {
			t.Errorf("key %s serialized twice", k)
		}
		v := string(argv[2])
		if len(argv) == 5 {
			v += " " + string(argv[3]) + " " + string(argv[4])
		}
		got[k] = v
	})
	s.RewriteStep(100) // part of the walk done
	// Changes after the cut, to keys before and after the walk's cursor.
	db0.SetStr([]byte("k4999"), []byte("changed"), false)
	db0.DeleteKey([]byte("k4000"))
	db0.SetStr([]byte("new-after-cut"), []byte("x"), false)
	app := db0.Lookup([]byte("k3000"))
	copy(db0.ResizeStr(app, 7)[5:], "zz")
	db0.SetExpiry(db0.Lookup([]byte("k2000")), 5_000_000)
	db0.SetStr([]byte("k1"), []byte("changed-too"), false)
	s.RewriteAll()

	if s.Rewriting() {
		t.Fatal("rewrite still active after RewriteAll")
	}
	if len(got) != len(want) {
		t.Errorf("image has %d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("image %s = %q, want %q", k, got[k], v)
		}
	}
}

// FLUSHALL during a rewrite first completes the image.
func TestRewriteSurvivesFlushAll(t *testing.T) {
	s := New(0, 1)
	for i := 0; i < 1000; i++ {
		s.DBs[0].SetStr([]byte(fmt.Sprintf("k%d", i)), []byte("v"), false)
	}
	n := 0
	s.StartRewrite(func(int, [][]byte) { n++ })
	s.RewriteStep(10)
	s.FlushAll()
	if n != 1000 || s.Rewriting() {
		t.Fatalf("image has %d keys (want 1000), rewriting=%v", n, s.Rewriting())
	}
}

// ImageProgress counts the keys an image serialized and, as copied, the
// memory of those a write made it serialize ahead of the walk (INFO's
// current_cow_size); keys the walk reached first cost nothing.
func TestImageProgressCountsCopies(t *testing.T) {
	s := New(0, 1)
	db := s.DBs[0]
	val := make([]byte, 500)
	for i := 0; i < 1000; i++ {
		db.SetStr([]byte(fmt.Sprintf("k%d", i)), val, false)
	}
	s.StartImage(func(*DB, int32) {})
	if k, c := s.ImageProgress(); k != 0 || c != 0 {
		t.Fatalf("at the cut: %d keys, %d copied", k, c)
	}
	s.RewriteStep(10)
	k0, _ := s.ImageProgress()
	var want int64
	for i := 0; i < 16; i++ {
		slot := db.Lookup([]byte(fmt.Sprintf("k%d", 500+i)))
		if db.at(slot).rwEpoch != s.rwEpoch {
			want += db.MemUsage(slot)
		}
		copy(db.ResizeStr(slot, 500)[0:], "BBBB")
	}
	k1, c1 := s.ImageProgress()
	if want < 16*500/2 || c1 != want || k1 <= k0 {
		t.Fatalf("after 16 writes: %d keys (was %d), %d copied, want %d", k1, k0, c1, want)
	}
	s.RewriteAll()
	if k, c := s.ImageProgress(); k != 1000 || c != want {
		t.Fatalf("at the end: %d keys, %d copied", k, c)
	}
}
