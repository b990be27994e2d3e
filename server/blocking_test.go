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
