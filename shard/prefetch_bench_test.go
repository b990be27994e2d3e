package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func benchLookups(b *testing.B, prefetch bool) {
	sh := New(0, 1)
	db := sh.DBs[0]
	const n = 1_000_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key:%012d", i))
		db.SetStr(keys[i], make([]byte, 100), false)
	}
	batch := make([][]byte, PrefetchMax)
	b.ResetTimer()
	var sink uint64
	for i := 0; i < b.N; i += PrefetchMax {
		for j := range batch {
			batch[j] = keys[rand.IntN(n)]
		}
		if prefetch {
			sink += db.Prefetch(batch)
		}
		for _, k := range batch {
			if s := db.Lookup(k); s >= 0 {
				sink += uint64(db.Str(s)[0])
			}
		}
	}
	_ = sink
}

func BenchmarkLookupPlain(b *testing.B)    { benchLookups(b, false) }
func BenchmarkLookupPrefetch(b *testing.B) { benchLookups(b, true) }
