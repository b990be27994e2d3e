package server

import (
	"strconv"
	"testing"

	"github.com/redshard/redshard/shard"
)

// keysOnShards returns one key on each of n shards.
func keysOnShards(n int) [][]byte {
	keys := make([][]byte, n)
	for i, found := 0, 0; found < n; i++ {
		k := []byte("key" + strconv.Itoa(i))
		if s := shard.ShardOf(k, n); keys[s] == nil {
			keys[s] = k
			found++
		}
	}
	return keys
}

func TestServeMaskTakesTheReadyKeyAndDestinationOnly(t *testing.T) {
	srv := admServer(t, 4)
	k := keysOnShards(4)
	args := func(a ...[]byte) [][]byte { return a }
	cases := []struct {
		argv  [][]byte
		waits [][]byte
		ready []byte
		want  uint64
	}{
		// BLPOP on keys of two shards, served from one: that shard only.
		{args([]byte("BLPOP"), k[1], k[2], []byte("0")), args(k[1], k[2]), k[2], 1 << 2},
		// BLMPOP likewise (movable keys).
		{args([]byte("BLMPOP"), []byte("0"), []byte("2"), k[0], k[3], []byte("LEFT")), args(k[0], k[3]), k[0], 1 << 0},
		// BLMOVE also needs its destination's shard.
		{args([]byte("BLMOVE"), k[1], k[3], []byte("LEFT"), []byte("LEFT"), []byte("0")), args(k[1]), k[1], 1<<1 | 1<<3},
		{args([]byte("BRPOPLPUSH"), k[2], k[2], []byte("0")), args(k[2]), k[2], 1 << 2},
	}
	for _, tc := range cases {
		w := &waiter{cmd: srv.lookup(tc.argv), argv: tc.argv, keys: tc.waits}
		if got := w.serveMask(tc.ready, 4); got != tc.want {
			t.Errorf("%s: serve mask %04b, want %04b", tc.argv[0], got, tc.want)
		}
	}
}

func TestWaitQueueKeepsStampOrder(t *testing.T) {
	mk := func(stamp int64) *waiter { return &waiter{stamp: stamp} }
	a, b, c, d := mk(5), mk(3), mk(9), mk(7)
	q := &waitQueue{}
	for _, w := range []*waiter{a, b, c, d} {
		if !q.insert(w, nil) {
			t.Fatalf("insert of stamp %d added no place", w.stamp)
		}
	}
	if q.insert(b, nil) {
		t.Errorf("a waiter got a second place in one line (BLPOP k k)")
	}
	order := func() []int64 {
		var s []int64
		for _, w := range q.ws {
			s = append(s, w.stamp)
		}
		return s
	}
	if got := order(); len(got) != 4 || got[0] != 3 || got[1] != 5 || got[2] != 7 || got[3] != 9 {
		t.Fatalf("line %v, want [3 5 7 9]", got)
	}
	// A retry of d (same stamp) takes d's place instead of a new one.
	d2 := mk(7)
	if q.insert(d2, d) {
		t.Errorf("the retry added a place")
	}
	if q.ws[2] != d2 || len(q.ws) != 4 {
		t.Errorf("the retry did not take its first place: %v", order())
	}
	// A retry whose old place is gone (released) is put in line by stamp.
	e := mk(4)
	if !q.insert(e, mk(4)) || q.ws[1] != e {
		t.Errorf("a retry without its old place: line %v", order())
	}
}
