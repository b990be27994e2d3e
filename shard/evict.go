package shard

import (
	"math/rand/v2"
	"time"
)

// Memory accounting and eviction (Redis's maxmemory, evict.c).
//
// A shard counts the memory its keys hold, in O(1) per change, so that the
// loop can compare it with its share of maxmemory before every write:
//
//	used = slab bytes in use (keys and string values, by size class)
//	     + keyOverhead per key (its entry and index words)
//	     + the Mem() of every non-string value
//
// A value changed in place cannot say by how much before the change is
// done, so db.Modify takes the value's Mem() out of the total and puts the
// slot on a short pending list; the new Mem() goes back in when the total is
// next read (settle), or when the list grows. SetObj does the same for a
// new value, which is usually filled after it is stored. A pending value
// that is deleted before it is settled is simply dropped from the list.
//
// Eviction samples keys as Redis does (maxmemory-samples per database, the
// best candidate by the policy: idle time for LRU, the decayed access
// counter for LFU, the nearest expiry for volatile-ttl, any for random) and
// deletes until the shard is back under its budget.

// keyOverhead is what a key costs beyond its bytes: its 32-byte entry and
// about two 8-byte index words.
const keyOverhead = 48

// Eviction policies, in the order of maxmemory-policy's enum.
const (
	PolicyVolatileLRU = iota
	PolicyVolatileLFU
	PolicyVolatileRandom
	PolicyVolatileTTL
	PolicyAllkeysLRU
	PolicyAllkeysLFU
	PolicyAllkeysRandom
	PolicyNoEviction
)

type memPending struct {
	db   *DB
	slot int32
}

// UsedMemory is the memory the shard's keys and values hold, in bytes. The
// figure is also published for other goroutines (PublishedMemory).
func (s *Shard) UsedMemory() int64 {
	s.settleMem()
	v := s.Slab.Used() + int64(s.nkeys)*keyOverhead + s.objMem
	if s.usedPub.Load() != v { // with maxmemory, every command reads it (server's makeRoom): no store when unchanged
		s.usedPub.Store(v)
	}
	if s.Cfg.MaxmemoryPolicy.Load() <= PolicyVolatileTTL { // CanEvict reads it only then
		var vol int64
		for _, db := range s.DBs {
			vol += int64(len(db.expiring))
		}
		if s.volPub.Load() != vol {
			s.volPub.Store(vol)
		}
	}
	if n := int64(s.nkeys); s.keysPub.Load() != n {
		s.keysPub.Store(n)
	}
	return v
}

// PublishKeys publishes the shard's key count (all databases) for other
// goroutines (PublishedKeys), as UsedMemory does; the loop's cron calls it.
func (s *Shard) PublishKeys() {
	if n := int64(s.nkeys); s.keysPub.Load() != n {
		s.keysPub.Store(n)
	}
}

// PublishedKeys is the shard's key count as last published (UsedMemory,
// PublishKeys). Any goroutine may call it.
func (s *Shard) PublishedKeys() int64 { return s.keysPub.Load() }

// CanEvict reports, from the figures UsedMemory last published, whether the
// shard has a key that policy may evict: any key, or under a volatile
// policy a key with an expiry. Any goroutine may call it.
func (s *Shard) CanEvict(policy int64) bool {
	if policy == PolicyNoEviction {
		return false
	}
	if policy <= PolicyVolatileTTL {
		return s.volPub.Load() > 0
	}
	return s.keysPub.Load() > 0
}

// ObjMemory is the memory of the shard's values other than strings (on the
// Go heap), as last settled.
func (s *Shard) ObjMemory() int64 { return s.objMem }

// PublishedMemory is UsedMemory as its owner last computed it (before every
// write and in INFO); any goroutine may read it.
func (s *Shard) PublishedMemory() int64 { return s.usedPub.Load() }

// memOut takes a slot's value out of the total until it is settled.
func (db *DB) memOut(slot int32, e *entry) {
	s := db.sh
	for _, p := range s.memPend {
		if p.db == db && p.slot == slot {
			return // already out
		}
	}
	s.objMem -= int64(s.objs[e.vlen].Mem())
	s.memPend = append(s.memPend, memPending{db, slot})
	if len(s.memPend) > 64 {
		s.settleMem()
	}
}

// memNew registers a value just stored at slot (not yet counted).
func (db *DB) memNew(slot int32) {
	s := db.sh
	s.memPend = append(s.memPend, memPending{db, slot})
	if len(s.memPend) > 64 {
		s.settleMem()
	}
}

// memGone is called when a slot's value leaves the shard.
func (db *DB) memGone(slot int32, e *entry) {
	s := db.sh
	for i, p := range s.memPend {
		if p.db == db && p.slot == slot {
			s.memPend[i] = s.memPend[len(s.memPend)-1]
			s.memPend = s.memPend[:len(s.memPend)-1]
			return // never counted back in
		}
	}
	s.objMem -= int64(s.objs[e.vlen].Mem())
}

func (s *Shard) settleMem() {
	for _, p := range s.memPend {
		if e := p.db.at(p.slot); e.live && e.typ != TypeString {
			s.objMem += int64(s.objs[e.vlen].Mem())
		}
	}
	s.memPend = s.memPend[:0]
}

// recountMem recomputes the object total from scratch (after FLUSHDB).
func (s *Shard) recountMem() {
	s.memPend = s.memPend[:0]
	s.objMem = 0
	s.nkeys = 0
	for _, db := range s.DBs {
		s.nkeys += db.count
		for slot := int32(0); slot < db.nslots; slot++ {
			if e := db.at(slot); e.live && e.typ != TypeString {
				s.objMem += int64(s.objs[e.vlen].Mem())
			}
		}
	}
}

// LFU: the access field holds the minute of the last decrement in its high
// 16 bits and a logarithmic access counter in its low 8 (Redis's layout).
const lfuInitVal = 5

func lfuMinutes(nowMs int64) uint32 { return uint32(nowMs/60000) & 0xffff }

func lfuPolicyOf(p int64) bool { return p == PolicyVolatileLFU || p == PolicyAllkeysLFU }

// lfuInit is the access field of a new key under an LFU policy.
func lfuInit(nowMs int64) uint32 { return lfuMinutes(nowMs)<<8 | lfuInitVal }

// lfuDecr returns the counter decayed by the minutes since its last decrement.
func (s *Shard) lfuDecr(lru uint32) uint32 {
	ldt, counter := lru>>8, lru&0xff
	now := lfuMinutes(s.now)
	var elapsed uint32
	if now >= ldt {
		elapsed = now - ldt
	} else {
		elapsed = 65535 - ldt + now
	}
	if decay := s.Cfg.LFUDecayTime.Load(); decay > 0 {
		periods := elapsed / uint32(decay)
		if periods > counter {
			return 0
		}
		return counter - periods
	}
	return counter
}

// lfuTouch is Redis's updateLFU.
func (s *Shard) lfuTouch(lru uint32) uint32 {
	counter := s.lfuDecr(lru)
	if counter < 255 {
		base := float64(counter) - lfuInitVal
		if base < 0 {
			base = 0
		}
		if rand.Float64() < 1/(base*float64(s.Cfg.LFULogFactor.Load())+1) {
			counter++
		}
	}
	return lfuMinutes(s.now)<<8 | counter
}

// LFUFreq is OBJECT FREQ: the decayed access counter of a slot.
func (db *DB) LFUFreq(slot int32) int64 { return int64(db.sh.lfuDecr(db.at(slot).lru)) }

// Evict deletes keys chosen by the maxmemory policy until the shard uses at
// most budget bytes. onEvict is called with each key before it goes (the
// server logs a DEL). It reports whether the shard is within its budget.
func (s *Shard) Evict(budget int64, onEvict func(db *DB, key []byte)) bool {
	return s.EvictWhile(func() bool { return s.UsedMemory() > budget }, onEvict)
}

// EvictWhile deletes keys chosen by the maxmemory policy while over
// reports true (the server's view: used_memory over maxmemory), checked
// before each key. It reports false if the policy finds nothing more to
// evict (noeviction, or a volatile policy with no volatile key left) while
// over still holds; true once over is false, or when Redis's eviction time
// limit is reached (the next write goes on evicting).
func (s *Shard) EvictWhile(over func() bool, onEvict func(db *DB, key []byte)) bool {
	policy := s.Cfg.MaxmemoryPolicy.Load()
	if !over() {
		return true
	}
	if policy == PolicyNoEviction {
		return false
	}
	deadline := time.Now().Add(evictTimeLimit(s.Cfg.MaxmemoryEvictionTenacity.Load()))
	for n := 0; over(); n++ {
		db, slot := s.evictCandidate(policy)
		if slot < 0 {
			return false
		}
		key := db.Key(slot)
		if onEvict != nil {
			onEvict(db, key)
		}
		db.Notify(NotifyEvicted, "evicted", key)
		db.deleteMaybeLazy(slot, s.Cfg.LazyEviction.Load())
		s.Stats.EvictedKeys++
		s.UsedMemory() // publishes the shard's figure, which over may read
		if n&15 == 15 && time.Now().After(deadline) {
			// Redis's eviction time limit: let the command run; the next
			// write goes on evicting.
			return true
		}
	}
	return true
}

// evictTimeLimit is Redis's evictionTimeLimitUs: 50µs per step up to
// 500µs at tenacity 10, then 15% more per step; 100 means no limit.
func evictTimeLimit(tenacity int64) time.Duration {
	if tenacity >= 100 {
		return time.Hour
	}
	if tenacity <= 10 {
		return 500 * time.Microsecond * time.Duration(tenacity) / 10
	}
	d := 500.0
	for i := int64(10); i < tenacity; i++ {
		d *= 1.15
	}
	return time.Duration(d) * time.Microsecond
}

// evictCandidate picks the key to evict next, or slot -1 if none can be.
func (s *Shard) evictCandidate(policy int64) (*DB, int32) {
	volatile := policy <= PolicyVolatileTTL
	samples := int(s.Cfg.MaxmemorySamples.Load())
	if samples < 1 {
		samples = 1
	}
	if policy == PolicyAllkeysRandom || policy == PolicyVolatileRandom {
		for i := range s.DBs {
			db := s.DBs[(s.evictNextDB+i)%len(s.DBs)]
			var slot int32 = -1
			if volatile {
				if len(db.expiring) > 0 {
					slot = db.expiring[rand.IntN(len(db.expiring))]
				}
			} else {
				slot = db.RandomSlot()
			}
			if slot >= 0 {
				s.evictNextDB = (s.evictNextDB + i + 1) % len(s.DBs)
				return db, slot
			}
		}
		return nil, -1
	}
	var best *DB
	bestSlot := int32(-1)
	var bestScore uint64
	nowSec := uint32(s.now / 1000)
	for _, db := range s.DBs {
		if volatile && len(db.expiring) == 0 || db.count == 0 {
			continue
		}
		for i := 0; i < samples; i++ {
			var slot int32
			if volatile {
				slot = db.expiring[rand.IntN(len(db.expiring))]
			} else if slot = db.RandomSlot(); slot < 0 {
				break
			}
			e := db.at(slot)
			var score uint64 // higher: better to evict
			switch policy {
			case PolicyVolatileTTL:
				score = ^uint64(db.expOf(e))
			case PolicyVolatileLFU, PolicyAllkeysLFU:
				score = uint64(255 - s.lfuDecr(e.lru))
			default:
				if nowSec > e.lru {
					score = uint64(nowSec - e.lru)
				}
			}
			if bestSlot < 0 || score > bestScore {
				best, bestSlot, bestScore = db, slot, score
			}
		}
	}
	return best, bestSlot
}
