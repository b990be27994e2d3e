package tests

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// INFO's lazyfreed_objects counts the values Redis's lazyfree thread
// would have freed: UNLINK of a value whose freeing costs more than 64
// allocations (a set table of 100 members; not one of 10), DEL only under
// lazyfree-lazy-user-del, every key of a FLUSHALL/FLUSHDB ASYNC (or of a
// plain one under lazyfree-lazy-user-flush, not of FLUSHALL SYNC), an
// expired value under lazyfree-lazy-expire, a value overwritten (RENAME,
// SET) under lazyfree-lazy-server-del only; CONFIG RESETSTAT zeroes it and
// lazyfree_pending_objects stays 0. With one shard and four.
func TestLazyfreedObjects(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards="+shards, func(t *testing.T) {
			ctx := context.Background()
			s := startServer(t, "--shards", shards)
			c := s.client(t, 2)
			freed := func() int {
				t.Helper()
				if p := infoField(t, c, "memory", "lazyfree_pending_objects"); p != "0" {
					t.Fatalf("lazyfree_pending_objects %s", p)
				}
				n, _ := strconv.Atoi(infoField(t, c, "memory", "lazyfreed_objects"))
				return n
			}
			set := func(key string, n int) {
				t.Helper()
				m := make([]any, n)
				for i := range m {
					m[i] = "m" + strconv.Itoa(i)
				}
				if err := c.SAdd(ctx, key, m...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			do := func(args ...any) {
				t.Helper()
				if err := c.Do(ctx, args...).Err(); err != nil {
					t.Fatalf("%v: %v", args, err)
				}
			}
			want := func(n int, after string) {
				t.Helper()
				if got := freed(); got != n {
					t.Fatalf("after %s: lazyfreed_objects %d, want %d", after, got, n)
				}
			}
			do("CONFIG", "RESETSTAT")
			set("big", 100)
			set("small", 10)
			do("UNLINK", "big", "small")
			want(1, "UNLINK of 100 and 10 members")
			set("big", 100)
			do("DEL", "big")
			want(1, "DEL")
			do("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
			set("big", 100)
			do("DEL", "big")
			want(2, "DEL under lazyfree-lazy-user-del")
			for i := 0; i < 5; i++ {
				do("SET", "k"+strconv.Itoa(i), "v")
			}
			do("FLUSHALL", "ASYNC")
			want(7, "FLUSHALL ASYNC of 5 keys")
			do("SET", "k", "v")
			do("FLUSHALL", "SYNC")
			want(7, "FLUSHALL SYNC")
			do("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes")
			do("SET", "k", "v")
			do("FLUSHDB")
			want(8, "FLUSHDB under lazyfree-lazy-user-flush")
			do("CONFIG", "SET", "lazyfree-lazy-expire", "yes")
			set("big", 100)
			do("PEXPIRE", "big", "1")
			time.Sleep(20 * time.Millisecond)
			if n := c.Exists(ctx, "big").Val(); n != 0 {
				t.Fatalf("EXISTS big after its expiry: %d", n)
			}
			want(9, "an expiry under lazyfree-lazy-expire")
			set("{t}a", 100)
			set("{t}b", 100)
			do("SET", "{t}a", "x")
			do("RENAME", "{t}a", "{t}b")
			want(9, "overwrites")
			do("CONFIG", "SET", "lazyfree-lazy-server-del", "yes")
			do("DEL", "{t}b") // lazyfree-lazy-user-del: a string, effort 1
			set("{t}a", 100)
			set("{t}b", 100)
			do("RENAME", "{t}a", "{t}b")
			want(10, "RENAME over a set of 100 under lazyfree-lazy-server-del")
			do("SET", "{t}b", "x")
			want(11, "SET over a set of 100 under lazyfree-lazy-server-del")
			do("CONFIG", "RESETSTAT")
			want(0, "CONFIG RESETSTAT")
		})
	}
}
