package shard

// PrefetchMax is how many keys one Prefetch call warms.
const PrefetchMax = 16

// prefetchMinWords is the index size from which prefetching pays: below it
// (fewer than about 48k keys) the index and entries stay in the caches, and
// the scan for keys would be pure cost.
const prefetchMinWords = 1 << 16

// PrefetchWorth reports whether the database is big enough for Prefetch to
// pay for the scan that finds the keys.
func (db *DB) PrefetchWorth() bool { return len(db.index.words) >= prefetchMinWords }

// Prefetch warms the cache lines that lookups of keys are about to touch,
// for a pipelined batch that is about to run. A lookup is three dependent
// random loads (index word, entry, key bytes); done one command at a time,
// each waits for memory. Here each of the three steps is issued for every
// key before the next step, so the loads of different keys are in flight
// together. Keys that are absent, or whose home word holds another key,
// simply warm less. The result is a meaningless sum the caller keeps, so
// that the loads cannot be dropped as dead.
func (db *DB) Prefetch(keys [][]byte) uint64 {
	ix := &db.index
	if ix.words == nil || len(keys) == 0 {
		return 0
	}
	if len(keys) > PrefetchMax {
		keys = keys[:PrefetchMax]
	}
	var fps [PrefetchMax]uint32
	var slots [PrefetchMax]int32
	var acc uint64
	for i, k := range keys {
		fps[i] = fingerprint(Hash(k))
		acc += ix.words[ix.home(fps[i])]
	}
	for i := range keys {
		slots[i] = -1
		if w := ix.words[ix.home(fps[i])]; uint32(w>>32) == fps[i] {
			slots[i] = int32(uint32(w)) - 1
			acc += uint64(db.at(slots[i]).kv)
		}
	}
	for i := range keys {
		if s := slots[i]; s >= 0 {
			acc += uint64(db.sh.Slab.Bytes(db.at(s).kv, 1)[0])
		}
	}
	return acc
}

// fieldPrefetchMin is the bucket count from which a hash's field lookups
// are worth warming (8 MiB of heads and more than a megabyte of entries: a
// smaller table stays in the caches).
const fieldPrefetchMin = 1 << 16

// PrefetchFields warms the field lookups that pipelined commands on the
// hash at key are about to make, as Prefetch does for keys: the bucket
// heads of all fields first, then the first entry of each chain. It does
// nothing unless key holds a big hashtable-encoded hash, and changes
// nothing (no expiry, no statistics).
func (db *DB) PrefetchFields(key []byte, fields [][]byte) uint64 {
	slot := db.Peek(key)
	if slot < 0 || db.Type(slot) != TypeHash {
		return 0
	}
	t := db.Obj(slot).(*hashObj).ht
	if t == nil || len(t.heads) < fieldPrefetchMin {
		return 0
	}
	if len(fields) > PrefetchMax {
		fields = fields[:PrefetchMax]
	}
	var bis [PrefetchMax]uint64
	var acc uint64
	for i, f := range fields {
		bis[i] = fieldHash(f) & t.mask()
		acc += t.heads[bis[i]]
	}
	for i := range fields {
		if r := t.heads[bis[i]]; r != 0 {
			c, off := t.entry(r)
			acc += uint64(c[off+linkLen])
		}
	}
	return acc
}
