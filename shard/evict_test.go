package shard

import (
	"fmt"
	"testing"
)

func TestUsedMemoryFollowsKeysAndValues(t *testing.T) {
	sh := New(0, 16)
	db := sh.DBs[0]
	base := sh.UsedMemory()
	for i := 0; i < 1000; i++ {
		db.SetStr([]byte(fmt.Sprintf("key:%d", i)), make([]byte, 100), false)
	}
	full := sh.UsedMemory()
	if per := (full - base) / 1000; per < 100+keyOverhead || per > 160+keyOverhead {
		t.Fatalf("%d bytes per 100-byte string key", per)
	}
	// A value changed in place is counted at its new size once settled.
	l := &ksList{}
	slot := db.SetObj([]byte("list"), TypeList, EncQuicklist, l)
	withList := sh.UsedMemory()
	db.Modify(slot)
	l.items = append(l.items, "a", "b", "c", "d")
	db.Modify(slot) // twice before settling: counted once
	if got := sh.UsedMemory() - withList; got != 64 {
		t.Fatalf("four list items added %d bytes, want 64", got)
	}
	// Deleted while pending: nothing is left behind.
	db.Modify(slot)
	l.items = append(l.items, "e")
	db.Delete(slot)
	for i := 0; i < 1000; i++ {
		db.DeleteKey([]byte(fmt.Sprintf("key:%d", i)))
	}
	if got := sh.UsedMemory(); got != base {
		t.Fatalf("used %d after deleting everything, want %d", got, base)
	}
	// RENAME within the shard and across shards moves the value's bytes.
	other := New(1, 16)
	l2 := &ksList{items: []string{"x", "y"}}
	s2 := db.SetObj([]byte("l2"), TypeList, EncQuicklist, l2)
	before := sh.UsedMemory()
	db.MoveTo(s2, other.DBs[0], []byte("l3"))
	if sh.UsedMemory() != base || other.UsedMemory() != before-base {
		t.Fatalf("after a cross-shard move: source %d (base %d), destination %d", sh.UsedMemory(), base, other.UsedMemory())
	}
	db.SetStr([]byte("s"), []byte("v"), false)
	db.Flush()
	if got := sh.UsedMemory(); got != base {
		t.Fatalf("used %d after FLUSHDB, want %d", got, base)
	}
}

func TestEvictByPolicy(t *testing.T) {
	const n = 200
	fill := func(policy int64) (*Shard, *DB) {
		sh := New(0, 16)
		sh.Cfg.MaxmemoryPolicy.Store(policy)
		sh.Cfg.MaxmemorySamples.Store(10)
		// No eviction time limit: Evict must reach its budget in one call
		// however slow the machine (the race detector) is.
		sh.Cfg.MaxmemoryEvictionTenacity.Store(100)
		db := sh.DBs[0]
		for i := 0; i < n; i++ {
			sh.SetNow(int64(i) * 1000) // key i last accessed at second i
			slot := db.SetStr([]byte(fmt.Sprintf("k%03d", i)), make([]byte, 100), false)
			if i%2 == 0 {
				db.SetExpiry(slot, int64(1e9)+int64(i)) // even keys expire, later for higher i
			}
		}
		sh.SetNow(n * 1000)
		return sh, db
	}
	for _, tc := range []struct {
		name   string
		policy int64
		check  func(t *testing.T, db *DB)
	}{
		{"allkeys-lru", PolicyAllkeysLRU, func(t *testing.T, db *DB) {
			// The most recently used keys survive.
			for i := n - 10; i < n; i++ {
				if db.Peek([]byte(fmt.Sprintf("k%03d", i))) < 0 {
					t.Errorf("recent key k%03d evicted", i)
				}
			}
		}},
		{"volatile-ttl", PolicyVolatileTTL, func(t *testing.T, db *DB) {
			for i := 1; i < n; i += 2 {
				if db.Peek([]byte(fmt.Sprintf("k%03d", i))) < 0 {
					t.Fatalf("key k%03d without an expiry evicted", i)
				}
			}
		}},
		{"allkeys-random", PolicyAllkeysRandom, func(t *testing.T, db *DB) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, db := fill(tc.policy)
			evicted := 0
			budget := sh.UsedMemory() * 3 / 4
			if !sh.Evict(budget, func(*DB, []byte) { evicted++ }) {
				t.Fatal("Evict could not reach the budget")
			}
			if sh.UsedMemory() > budget || evicted == 0 || int64(evicted) != sh.Stats.EvictedKeys {
				t.Fatalf("used %d > budget %d, or %d evicted (stats %d)", sh.UsedMemory(), budget, evicted, sh.Stats.EvictedKeys)
			}
			if db.Len() != n-evicted {
				t.Fatalf("%d keys left after %d evictions", db.Len(), evicted)
			}
			tc.check(t, db)
		})
	}
	sh, _ := fill(PolicyNoEviction)
	if sh.Evict(sh.UsedMemory()/2, nil) {
		t.Fatal("noeviction reported success over budget")
	}
	sh, db := fill(PolicyVolatileLRU)
	if sh.Evict(0, nil) || db.Expires() != 0 || db.Len() != n/2 {
		t.Fatalf("volatile-lru with a zero budget: %d keys, %d expiring left", db.Len(), db.Expires())
	}
}

// BenchmarkSetWithEviction: a SET of a new 100-byte key on a full shard,
// evicting one key by allkeys-lru each time.
func BenchmarkSetWithEviction(b *testing.B) {
	sh := New(0, 16)
	sh.Cfg.MaxmemoryPolicy.Store(PolicyAllkeysLRU)
	db := sh.DBs[0]
	val := make([]byte, 100)
	for i := 0; i < 100_000; i++ {
		db.SetStr([]byte(fmt.Sprintf("key:%d", i)), val, false)
	}
	budget := sh.UsedMemory()
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("new:%d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sh.Evict(budget, nil)
		db.SetStr(keys[i&(1<<16-1)], val, false)
	}
}

// TestMemoryUsageAddsUpToUsedMemory: MEMORY USAGE of every key sums to what
// the keys add to the shard's used memory.
func TestMemoryUsageAddsUpToUsedMemory(t *testing.T) {
	sh := New(0, 16)
	db := sh.DBs[0]
	base := sh.UsedMemory()
	var slots []int32
	for i := 0; i < 100; i++ {
		slots = append(slots, db.SetStr([]byte(fmt.Sprintf("k%d", i)), make([]byte, i*7), false))
	}
	slots = append(slots, db.SetObj([]byte("l"), TypeList, EncQuicklist, &ksList{items: []string{"a", "b", "c"}}))
	var sum int64
	for _, s := range slots {
		sum += db.MemUsage(s)
	}
	if got := sh.UsedMemory() - base; got != sum {
		t.Fatalf("MEMORY USAGE sums to %d, used memory grew by %d", sum, got)
	}
	c := &Ctx{Shards: []*Shard{sh}, Proto: 2}
	cmdMemoryUsage(c, [][]byte{[]byte("memory"), []byte("usage"), []byte("k3"), []byte("SAMPLES"), []byte("0")})
	if want := fmt.Sprintf(":%d\r\n", db.MemUsage(slots[3])); string(c.Out) != want {
		t.Fatalf("MEMORY USAGE k3 = %q, want %q", c.Out, want)
	}
}
