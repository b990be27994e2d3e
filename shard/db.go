package shard

import (
	"hash/maphash"
	"math/rand/v2"
	"unsafe"
)

// Value types, as TYPE names them.
const (
	TypeString uint8 = iota
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	TypeStream
)

// TypeNames are the replies of TYPE.
var TypeNames = [...]string{"string", "list", "set", "zset", "hash", "stream"}

// Encodings, as OBJECT ENCODING names them.
const (
	EncRaw uint8 = iota
	EncInt
	EncEmbstr
	EncListpack
	EncQuicklist
	EncHashtable
	EncIntset
	EncSkiplist
	EncStream
)

// EncNames are the replies of OBJECT ENCODING.
var EncNames = [...]string{"raw", "int", "embstr", "listpack", "quicklist", "hashtable", "intset", "skiplist", "stream"}

// entry is one key of a DB. It holds no Go pointers, so that a keyspace of
// millions of keys costs the garbage collector nothing to mark: key and string
// value bytes live in the shard's Slab, other values in the shard's object
// table, and both are named by integers.
type entry struct {
	kv   Handle // slab allocation: key bytes, then the string value bytes
	klen uint32
	vlen uint32 // string: value length; other types: index in Shard.objs
	next int32  // next free slot, while the slot is free
	xpos int32  // position in DB.expiring and DB.expAt, or -1: no expiry
	lru  uint32 // LRU clock (seconds) of the last access, or LFU counter
	typ  uint8
	enc  uint8
	live bool
	// rwEpoch is the rewrite epoch at which the key was last serialized
	// (or created); equal to the shard's while a rewrite runs means done.
	rwEpoch uint8
}

// An entry is 32 bytes; the keyspace's memory per key (keyOverhead) counts on it.
var _ [unsafe.Sizeof(entry{}) - 32]byte
var _ [32 - unsafe.Sizeof(entry{})]byte

const chunkBits = 12
const chunkSize = 1 << chunkBits

var hashSeed = maphash.MakeSeed()

// Hash is the keyspace hash of a key; Sum64 of the same seed is used to pick
// a key's shard (on its hash tag) and its slot in the DB index.
func Hash(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// DB is one numbered database of one shard.
//
// Entries live in fixed-size chunks that never move, so an entry's slot number
// is stable for its lifetime: SCAN uses slot numbers as cursors, and the
// expiring list and hash chains refer to slots. The index maps a key's 64-bit
// hash to the head of a chain of slots whose keys share that hash; lookups
// compare the full key.
type DB struct {
	ID       int
	sh       *Shard
	index    index
	chunks   [][]entry
	nslots   int32 // slots ever handed out (live or free)
	free     int32 // head of the free-slot list, -1 if empty
	count    int
	expiring []int32 // slots of keys that have an expiry
	expAt    []int64 // their absolute expiry in unix ms, beside expiring

	// avgTTL is Redis's db->avg_ttl: a running estimate, in ms, of the
	// time to live left to the keys with an expiry, from the keys the
	// active expiry cycle samples; 0 while none has been sampled.
	avgTTL int64

	// memo remembers the last lookup (hash and result, -1 for a miss), so
	// that a command's read-then-write of one key (SET, INCR, ...) costs one
	// index probe, not two. insert and unlink keep it true.
	memoH    uint64
	memoSlot int32
	memoOK   bool

	// arenas are the huge-page mappings that chunks after the first are
	// carved from; arena is what is left of the last one.
	arenas [][]byte
	arena  []byte
}

func newDB(sh *Shard, id int) *DB {
	return &DB{ID: id, sh: sh, free: -1}
}

// chunkBytes is the size of a chunk of entries; a 2 MiB page holds several.
const chunkBytes = chunkSize * int(unsafe.Sizeof(entry{}))

// newChunk returns a zeroed chunk of entries. The first comes from the Go
// heap (most databases stay small); later ones are carved from 2 MiB pages
// (bigmem.go).
func (db *DB) newChunk() []entry {
	if len(db.chunks) == 0 {
		return make([]entry, chunkSize)
	}
	if len(db.arena) < chunkBytes {
		db.arena = allocBig(bigPageSize)
		db.arenas = append(db.arenas, db.arena)
	}
	c := entriesOf(db.arena[:chunkBytes])
	db.arena = db.arena[chunkBytes:]
	return c
}

// release gives the database's big arrays back (FLUSHDB, FLUSHALL).
func (db *DB) release() {
	db.index.release()
	for _, a := range db.arenas {
		freeBig(a)
	}
	db.arenas, db.arena = nil, nil
}

func (db *DB) at(slot int32) *entry {
	return &db.chunks[slot>>chunkBits][slot&(chunkSize-1)]
}

// ShardID is the index of the shard that owns this database.
func (db *DB) ShardID() int { return db.sh.ID }

// Len is the number of keys (DBSIZE), including expired keys not yet reclaimed.
func (db *DB) Len() int { return db.count }

// Expires is the number of keys with an expiry.
func (db *DB) Expires() int { return len(db.expiring) }

// Slots is an upper bound of slot numbers, for iteration (SCAN, KEYS).
func (db *DB) Slots() int32 { return db.nslots }

func (db *DB) key(e *entry) []byte { return db.sh.Slab.Bytes(e.kv, int(e.klen)) }

// find returns the slot of key without looking at expiry, or -1.
func (db *DB) find(key []byte, h uint64) int32 {
	if db.memoOK && db.memoH == h {
		if ms := db.memoSlot; ms < 0 {
			return -1
		} else if e := db.at(ms); e.live && int(e.klen) == len(key) && string(db.key(e)) == string(key) {
			return ms
		}
	}
	candidates := false
	slot := db.index.lookup(fingerprint(h), func(slot int32) bool {
		candidates = true
		e := db.at(slot)
		return int(e.klen) == len(key) && string(db.key(e)) == string(key)
	})
	// A miss is remembered only when no key shares the fingerprint: then no
	// other key with this very hash exists either.
	if slot >= 0 || !candidates {
		db.memoH, db.memoSlot, db.memoOK = h, slot, true
	}
	return slot
}

// Lookup returns the slot of a live key, or -1. An expired key is deleted on
// the way (lazy expiry), as Redis does on every access.
func (db *DB) Lookup(key []byte) int32 {
	slot := db.find(key, Hash(key))
	if slot < 0 {
		return -1
	}
	if e := db.at(slot); e.xpos >= 0 && db.expAt[e.xpos] <= db.sh.Now() && !db.sh.Loading {
		if db.sh.ObeyMaster {
			return slot // a replica applies its master's commands to the keys it has
		}
		db.expireSlot(slot)
		return -1
	}
	return slot
}

// Peek is Lookup without expiring: it reports whether the key exists in the
// table at all (used by commands that must see a logically expired key as absent
// but must not delete it, such as during loading).
func (db *DB) Peek(key []byte) int32 { return db.find(key, Hash(key)) }

func (db *DB) expireSlot(slot int32) {
	if k := db.sh.KeepExpired; k != nil && !db.sh.ForceExpire && k() {
		return // logically gone, kept in the table (CLIENT PAUSE)
	}
	e := db.at(slot)
	db.sh.onExpired(db, db.key(e))
	db.sh.trk.anon = true // no client's change (tracking.go)
	db.deleteMaybeLazy(slot, db.sh.Cfg.LazyExpire.Load())
	db.sh.trk.anon = false
}

// Key returns a slot's key. The slice aliases slab memory: copy it before the
// keyspace changes.
func (db *DB) Key(slot int32) []byte { return db.key(db.at(slot)) }

// Type returns a slot's value type.
func (db *DB) Type(slot int32) uint8 { return db.at(slot).typ }

// Encoding returns a slot's OBJECT ENCODING code.
func (db *DB) Encoding(slot int32) uint8 { return db.at(slot).enc }

// SetEncoding sets a slot's OBJECT ENCODING code.
func (db *DB) SetEncoding(slot int32, enc uint8) { db.at(slot).enc = enc }

// Str returns a string value. The slice aliases slab memory.
func (db *DB) Str(slot int32) []byte {
	e := db.at(slot)
	return db.sh.Slab.Bytes(e.kv, int(e.klen)+int(e.vlen))[e.klen:]
}

// Obj returns the value of a non-string key.
func (db *DB) Obj(slot int32) Object { return db.sh.objs[db.at(slot).vlen] }

// Expiry returns the absolute expiry in unix ms, 0 if none.
func (db *DB) Expiry(slot int32) int64 { return db.expOf(db.at(slot)) }

// expOf is an entry's absolute expiry, 0 if none. Expiries live beside the
// expiring list rather than in every entry: most keys have none, and the
// entry stays at 32 bytes.
func (db *DB) expOf(e *entry) int64 {
	if e.xpos < 0 {
		return 0
	}
	return db.expAt[e.xpos]
}

// Live reports whether a slot holds a key (for iteration).
func (db *DB) Live(slot int32) bool { return slot < db.nslots && db.at(slot).live }

// Expired reports whether a live slot's key is logically expired.
func (db *DB) Expired(slot int32) bool {
	e := db.at(slot)
	return e.xpos >= 0 && db.expAt[e.xpos] <= db.sh.Now() && !db.sh.Loading && !db.sh.ObeyMaster
}

// LRU returns the access clock (seconds) of a slot.
func (db *DB) LRU(slot int32) uint32 { return db.at(slot).lru }

// Touch records an access.
func (db *DB) Touch(slot int32) {
	if !db.sh.NoTouch {
		e := db.at(slot)
		if lfuPolicyOf(db.sh.Cfg.MaxmemoryPolicy.Load()) {
			e.lru = db.sh.lfuTouch(e.lru)
		} else {
			e.lru = uint32(db.sh.Now() / 1000)
		}
	}
}

// newLRU is the access field of a new key: the LRU clock, or the initial
// LFU counter under an LFU policy.
func (db *DB) newLRU() uint32 {
	if lfuPolicyOf(db.sh.Cfg.MaxmemoryPolicy.Load()) {
		return lfuInit(db.sh.Now())
	}
	return uint32(db.sh.Now() / 1000)
}

func (db *DB) newSlot() int32 {
	if db.free >= 0 {
		s := db.free
		db.free = db.at(s).next
		return s
	}
	if int(db.nslots)>>chunkBits >= len(db.chunks) {
		db.chunks = append(db.chunks, db.newChunk())
	}
	s := db.nslots
	db.nslots++
	return s
}

// insert adds a new key with room for vlen string bytes and returns its slot.
// The caller has checked the key is absent.
func (db *DB) insert(key []byte, h uint64, typ uint8, vlen int) int32 {
	slot := db.newSlot()
	kv := db.sh.Slab.Alloc(len(key) + vlen)
	copy(db.sh.Slab.Bytes(kv, len(key)), key)
	e := db.at(slot)
	*e = entry{kv: kv, klen: uint32(len(key)), typ: typ, xpos: -1, live: true, lru: db.newLRU(), rwEpoch: db.sh.rwEpoch}
	e.next = -1
	db.index.insert(fingerprint(h), slot)
	db.memoH, db.memoSlot, db.memoOK = h, slot, true
	db.count++
	db.sh.nkeys++
	db.sh.keysChanged++
	db.touch(key, false) // WATCH (watch.go)
	db.signalReady(key, typ)
	return slot
}

// SetStr stores a string value at key, replacing any value of any type, and
// returns the slot. The expiry is cleared unless keepTTL.
func (db *DB) SetStr(key, val []byte, keepTTL bool) int32 {
	h := Hash(key)
	slot := db.find(key, h)
	if slot < 0 {
		slot = db.insert(key, h, TypeString, len(val))
		e := db.at(slot)
		e.vlen = uint32(len(val))
		copy(db.sh.Slab.Bytes(e.kv, len(key)+len(val))[len(key):], val)
		e.enc = strEncoding(val)
		db.Notify(NotifyNew, "new", key) // Redis's dbAdd; an overwrite is not new
		return slot
	}
	db.replaceStr(slot, val)
	db.at(slot).enc = strEncoding(val)
	if !keepTTL {
		db.SetExpiry(slot, 0)
	}
	return slot
}

// replaceStr overwrites a slot's value with a string, in place when it fits.
func (db *DB) replaceStr(slot int32, val []byte) {
	db.rwBefore(slot)
	db.touchSlot(slot) // WATCH (watch.go)
	e := db.at(slot)
	if e.typ == TypeStream && db.sh.OnReady != nil {
		db.sh.OnReady(db, db.key(e)) // XREADGROUP's waiters learn
	}
	if e.typ != TypeString {
		if db.sh.Cfg.LazyServerDel.Load() {
			db.countLazy(slot) // an overwrite (lazyfree.go)
		}
		db.sh.freeObj(e.vlen)
		e.typ = TypeString
		e.vlen = 0
	}
	need := int(e.klen) + len(val)
	old := int(e.klen) + int(e.vlen)
	if db.sh.Slab.Cap(e.kv, old) < need || need < old/2 {
		kv := db.sh.Slab.Alloc(need)
		copy(db.sh.Slab.Bytes(kv, int(e.klen)), db.key(e))
		db.sh.Slab.Free(e.kv, old)
		e.kv = kv
	}
	e.vlen = uint32(len(val))
	copy(db.sh.Slab.Bytes(e.kv, need)[e.klen:], val)
	e.lru = uint32(db.sh.Now() / 1000)
}

// ResizeStr sets a string value's length to n, keeping its first bytes (and
// zero-filling growth), and returns the value for the caller to write into.
// APPEND and SETRANGE use it; the encoding becomes raw as in Redis.
func (db *DB) ResizeStr(slot int32, n int) []byte {
	db.rwBefore(slot)
	db.touchSlot(slot) // WATCH (watch.go)
	e := db.at(slot)
	old := int(e.klen) + int(e.vlen)
	need := int(e.klen) + n
	if db.sh.Slab.Cap(e.kv, old) < need {
		// Grow geometrically so that repeated APPENDs are amortised O(1).
		kv := db.sh.Slab.Alloc(need + need/2)
		copy(db.sh.Slab.Bytes(kv, old), db.sh.Slab.Bytes(e.kv, old))
		db.sh.Slab.Free(e.kv, old)
		e.kv = kv
	}
	buf := db.sh.Slab.Bytes(e.kv, need)[e.klen:]
	for i := int(e.vlen); i < n; i++ {
		buf[i] = 0
	}
	e.vlen = uint32(n)
	e.enc = EncRaw
	return buf
}

// SetObj stores a non-string value at key (replacing any value) and returns
// the slot. The expiry is cleared.
func (db *DB) SetObj(key []byte, typ uint8, enc uint8, obj Object) int32 {
	h := Hash(key)
	slot := db.find(key, h)
	existed := slot >= 0
	if existed {
		db.Delete(slot)
	}
	slot = db.insert(key, h, typ, 0)
	e := db.at(slot)
	e.vlen = db.sh.newObj(obj)
	e.enc = enc
	db.memNew(slot)
	if !existed {
		db.Notify(NotifyNew, "new", key) // Redis's dbAdd; an overwrite is not new
	}
	return slot
}

// SetExpiry sets (ms > 0) or clears (ms == 0) a slot's expiry.
func (db *DB) SetExpiry(slot int32, ms int64) {
	db.rwBefore(slot)
	db.touchSlot(slot) // WATCH (watch.go)
	e := db.at(slot)
	if ms != 0 && !db.sh.ObeyMaster && db.sh.OwnExpiry != nil && db.sh.OwnExpiry() {
		// A writable replica's own key with a TTL: the replica expires it
		// itself, its master knows nothing of it (Redis's
		// rememberSlaveKeyWithExpire).
		if db.sh.ownExpiring == nil {
			db.sh.ownExpiring = make(map[ownKey]struct{})
		}
		db.sh.ownExpiring[ownKey{db.ID, string(db.key(e))}] = struct{}{}
	}
	switch {
	case ms != 0 && e.xpos < 0:
		e.xpos = int32(len(db.expiring))
		db.expiring = append(db.expiring, slot)
		db.expAt = append(db.expAt, ms)
	case ms != 0:
		db.expAt[e.xpos] = ms
	case e.xpos >= 0:
		db.dropExpiring(e)
	}
}

func (db *DB) dropExpiring(e *entry) {
	n := len(db.expiring) - 1
	last := db.expiring[n]
	db.expiring[e.xpos] = last
	db.expAt[e.xpos] = db.expAt[n]
	db.at(last).xpos = e.xpos
	db.expiring = db.expiring[:n]
	db.expAt = db.expAt[:n]
	e.xpos = -1
}

// Delete removes a slot's key: a deletion by the server (an overwrite, a
// collection emptied, ...), a lazy one under lazyfree-lazy-server-del
// (lazyfree.go). DEL, expiry and eviction use deleteMaybeLazy.
func (db *DB) Delete(slot int32) {
	if db.sh.Cfg.LazyServerDel.Load() {
		db.countLazy(slot)
	}
	db.unlink(slot, true)
}

// unlink removes a slot's key; freeObj false hands a non-string value over
// to its new owner instead of releasing it.
func (db *DB) unlink(slot int32, freeObj bool) {
	db.rwBefore(slot)
	e := db.at(slot)
	key := db.key(e)
	h := Hash(key)
	if db.memoOK && db.memoH == h {
		db.memoOK = false
	}
	db.index.remove(fingerprint(h), slot)
	db.touch(key, true) // WATCH (watch.go): the key is gone from the index
	if e.typ == TypeStream && db.sh.OnReady != nil {
		db.sh.OnReady(db, key) // XREADGROUP's waiters learn (signalDeletedKeyAsReady)
	}
	if e.xpos >= 0 {
		db.dropExpiring(e)
	}
	if e.typ == TypeString {
		db.sh.Slab.Free(e.kv, int(e.klen)+int(e.vlen))
	} else {
		db.sh.Slab.Free(e.kv, int(e.klen))
		db.memGone(slot, e)
		if freeObj {
			db.sh.freeObj(e.vlen)
		}
	}
	*e = entry{next: db.free, xpos: -1}
	db.free = slot
	db.count--
	db.sh.nkeys--
	db.sh.keysChanged++
}

// DeleteKey removes key if present and reports whether it was.
func (db *DB) DeleteKey(key []byte) bool {
	slot := db.Lookup(key)
	if slot < 0 {
		return false
	}
	db.Delete(slot)
	return true
}

// MoveTo moves the value at slot to newKey in db dst (which may be db itself),
// replacing what dst holds at newKey and keeping type, encoding, LRU and
// expiry; the source slot is freed. It returns the new slot. RENAME, MOVE and
// SWAPDB-free cross-db moves use it; dst may be on another shard (RENAME of
// keys on different shards, both shards taken).
func (db *DB) MoveTo(slot int32, dst *DB, newKey []byte) int32 {
	if old := dst.Peek(newKey); old >= 0 {
		if dst == db && old == slot {
			return slot
		}
		dst.Delete(old)
	}
	e := db.at(slot) // chunks never move, so e stays valid across inserts
	var ns int32
	if e.typ == TypeString {
		ns = dst.insert(newKey, Hash(newKey), TypeString, int(e.vlen))
		ne := dst.at(ns)
		ne.vlen = e.vlen
		copy(dst.sh.Slab.Bytes(ne.kv, len(newKey)+int(e.vlen))[len(newKey):], db.Str(slot))
	} else {
		ns = dst.insert(newKey, Hash(newKey), e.typ, 0)
		if dst.sh == db.sh {
			dst.at(ns).vlen = e.vlen
		} else {
			// Another shard (RENAME across shards): the value changes object table.
			dst.at(ns).vlen = dst.sh.newObj(db.sh.objs[e.vlen])
		}
		dst.memNew(ns)
	}
	ne := dst.at(ns)
	ne.enc, ne.lru = e.enc, e.lru
	if exp := db.expOf(e); exp != 0 {
		dst.SetExpiry(ns, exp)
	}
	db.unlink(slot, dst.sh != db.sh)
	dst.Notify(NotifyNew, "new", newKey) // RENAME and MOVE add the key with dbAdd
	return ns
}

// Flush removes every key.
func (db *DB) Flush() {
	db.sh.touchAll(db.ID, db, nil) // WATCH (watch.go)
	db.sh.trackFlush()             // CLIENT TRACKING (tracking.go)
	if db.sh.rw != nil {
		db.sh.RewriteAll() // the image is the state at the cut
	}
	for s := int32(0); s < db.nslots; s++ {
		e := db.at(s)
		if !e.live {
			continue
		}
		if e.typ == TypeString {
			db.sh.Slab.Free(e.kv, int(e.klen)+int(e.vlen))
		} else {
			db.sh.Slab.Free(e.kv, int(e.klen))
			db.sh.freeObj(e.vlen)
		}
	}
	db.count = 0
	db.sh.keysChanged++
	if db.sh.OnFlushDB != nil {
		db.sh.OnFlushDB(db.ID)
	}
	db.release()
	*db = DB{ID: db.ID, sh: db.sh, free: -1}
	db.sh.recountMem()
	flushed()
}

// RandomSlot returns a random live slot, or -1 if the DB is empty.
func (db *DB) RandomSlot() int32 {
	if db.count == 0 {
		return -1
	}
	for tries := 0; tries < 64; tries++ {
		s := rand.Int32N(db.nslots)
		if db.at(s).live {
			return s
		}
	}
	// sparse table: walk from a random point
	start := rand.Int32N(db.nslots)
	for i := int32(0); i < db.nslots; i++ {
		s := (start + i) % db.nslots
		if db.at(s).live {
			return s
		}
	}
	return -1
}

// ActiveExpire samples up to n keys with an expiry and deletes the expired
// ones; it returns how many it sampled and how many expired, and folds the
// time to live of the sampled keys that have not expired into AvgTTL.
func (db *DB) ActiveExpire(n int) (sampled, expired int) {
	now := db.sh.Now()
	var ttlSum, ttlSamples int64
	for i := 0; i < n && len(db.expiring) > 0; i++ {
		i := rand.IntN(len(db.expiring))
		slot := db.expiring[i]
		sampled++
		if ttl := db.expAt[i] - now; ttl <= 0 {
			db.expireSlot(slot)
			expired++
		} else {
			ttlSum += ttl
			ttlSamples++
		}
	}
	if ttlSamples > 0 {
		// As Redis's activeExpireCycle: the sample's mean weighs 2%, the
		// estimate so far 98%, so one sample moves it little and a change
		// of the keys' TTLs shows after some tens of cycles.
		avg := ttlSum / ttlSamples
		if db.avgTTL == 0 {
			db.avgTTL = avg
		}
		db.avgTTL = db.avgTTL/50*49 + avg/50
	}
	return
}

// AvgTTL is the database's avg_ttl of INFO keyspace, in milliseconds: the
// active expiry cycle's running estimate of the time to live left to its
// keys with an expiry (0 when it has none, or has sampled none yet).
func (db *DB) AvgTTL() int64 {
	if len(db.expiring) == 0 {
		return 0
	}
	return db.avgTTL
}

// strEncoding is Redis's choice of string encoding at SET time.
func strEncoding(v []byte) uint8 {
	if len(v) <= 20 && len(v) > 0 {
		if _, ok := ParseInt(v); ok {
			return EncInt
		}
	}
	if len(v) <= 44 {
		return EncEmbstr
	}
	return EncRaw
}

// Read looks a key up for a read: like Lookup, and it counts a keyspace hit
// or miss and records the access (Redis's lookupKeyRead).
func (db *DB) Read(key []byte) int32 {
	slot := db.Lookup(key)
	if slot < 0 {
		db.sh.Stats.KeyspaceMisses++
		db.Notify(NotifyKeyMiss, "keymiss", key)
		return -1
	}
	db.sh.Stats.KeyspaceHits++
	db.Touch(slot)
	return slot
}

// Write looks a key up for a write (Redis's lookupKeyWrite): no statistics.
func (db *DB) Write(key []byte) int32 { return db.Lookup(key) }
