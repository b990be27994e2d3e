// Package shard owns one slice of the keyspace: its databases, keys, values,
// data types with their commands, and expiry.
//
// A Shard is touched only by the goroutine of the event loop that owns it —
// there is no mutex on the data path — except while that loop is parked by a
// cross-shard atomic command, when the command's coordinator touches it with
// a happens-before edge through the park/release handshake (see server).
// shard never blocks and never does I/O: log records and notifications leave
// through hooks that the server installs.
package shard

import (
	"sync/atomic"
	"time"
)

// Shard is one shard: its databases and everything they own.
type Shard struct {
	ID   int
	DBs  []*DB
	Slab Slab

	objs    []Object
	objFree []uint32

	now int64 // unix ms, cached per batch (Redis's command time snapshot)

	// Loading is set while the log is replayed: keys do not expire then.
	Loading bool
	// NoTouch is set while a CLIENT NO-TOUCH client's command runs.
	NoTouch bool

	keysChanged uint64

	// Memory accounting (evict.go).
	nkeys       int
	objMem      int64
	memPend     []memPending
	evictNextDB int
	usedPub     atomic.Int64 // UsedMemory as last computed (PublishedMemory)
	volPub      atomic.Int64 // keys with an expiry, as UsedMemory last counted them (CanEvict)
	keysPub     atomic.Int64 // keys, as UsedMemory last counted them (CanEvict)

	rw      *rewriteState // an image in progress (rewrite.go)
	rwEpoch uint8
	rwKeys  int64 // keys serialized by images, ever (RewriteKeys)
	// The current (or last) image's progress, read by INFO from any loop
	// (ImageProgress).
	imgKeys, imgCopied atomic.Int64

	// WATCH registry, per database index (watch.go); watchN counts the
	// registrations, so that a change costs nothing when there are none.
	watched []watchMap
	watchN  int

	// CLIENT TRACKING (tracking.go): the keys tracking clients read, and
	// the state all shards share (set by the server).
	trk trackTable
	Trk *TrackShared

	Stats Stats

	// Cfg holds the config values the data types read.
	Cfg *Tunables

	// OnNotify publishes a keyspace notification (see DB.Notify).
	OnNotify func(db int, class int, event string, key []byte)
	// OnReady is called when a list or sorted set is added at key (see
	// signalReady), a stream at key gets an entry, or a stream key goes
	// (deleted, overwritten, flushed); the server serves blocked clients
	// after the command.
	OnReady func(db *DB, key []byte)
	// OnSwapDB is called after SWAPDB swapped two databases: clients
	// blocked on keys of either may now be served (Redis's
	// scanDatabaseForReadyKeys).
	OnSwapDB func(a, b int)
	// OnFlushDB is called after database db was emptied: clients blocked
	// on its stream keys with XREADGROUP are answered.
	OnFlushDB func(db int)
	// OnVerbose, when set, logs a message at the verbose level (RESTORE's
	// report of a corrupt payload, as Redis's rdbReportError).
	OnVerbose func(msg string)

	// OnExpired is called with a key about to be deleted because its time
	// ran out (lazily or by the active cycle): the server logs a DEL and
	// fires notifications there. It must not touch the keyspace.
	OnExpired func(db *DB, key []byte)
	// KeepExpired, when set and true, keeps expired keys in the table:
	// reads see them as absent, nothing deletes them (Redis skips expiry
	// while clients are paused).
	KeepExpired func() bool
	// ObeyMaster is set while a replica's master client runs a command:
	// no key is expired for it (Redis's expireIfNeeded for the master).
	ObeyMaster bool
	// ForceExpire is set while a writable replica's own client runs a write:
	// an expired key it touches is deleted, not kept (Redis's
	// EXPIRE_FORCE_DELETE_EXPIRED).
	ForceExpire bool
	// OwnExpiry, when set and true (a replica), makes SetExpiry from any
	// command but the master's remember the key, for ExpireOwn.
	OwnExpiry   func() bool
	ownExpiring map[ownKey]struct{}
}

// OnFlush, when set (by the server, before the loops run), is called after
// a database or the whole shard was emptied: the memory just dropped is
// garbage the Go runtime will only return to the OS after a collection.
var OnFlush func()

func flushed() {
	if OnFlush != nil {
		OnFlush()
	}
}

// Stats are the shard's counters; the server sums them for INFO while the
// shards are parked, so they are plain integers.
type Stats struct {
	KeyspaceHits   int64
	KeyspaceMisses int64
	ExpiredKeys    int64
	ExpiredStale   int64
	ExpireCycles   int64
	EvictedKeys    int64
	LazyFreed      int64 // values Redis would have freed lazily (lazyfree.go)
}

// New makes a shard with ndb databases.
func New(id, ndb int) *Shard {
	s := &Shard{ID: id, Cfg: DefaultTunables()}
	s.DBs = make([]*DB, ndb)
	for i := range s.DBs {
		s.DBs[i] = newDB(s, i)
	}
	s.SetNow(time.Now().UnixMilli())
	return s
}

// Now is the shard's cached time in unix ms.
func (s *Shard) Now() int64 { return s.now }

// SetNow sets the cached time; the loop calls it once per batch or hop.
func (s *Shard) SetNow(ms int64) { s.now = ms }

// KeysChanged is a counter that moves whenever a key is added or removed.
func (s *Shard) KeysChanged() uint64 { return s.keysChanged }

func (s *Shard) onExpired(db *DB, key []byte) {
	s.Stats.ExpiredKeys++
	if s.OnExpired != nil {
		s.OnExpired(db, key)
	}
	db.Notify(NotifyExpired, "expired", key)
}

func (s *Shard) newObj(o Object) uint32 {
	if k := len(s.objFree); k > 0 {
		i := s.objFree[k-1]
		s.objFree = s.objFree[:k-1]
		s.objs[i] = o
		return i
	}
	s.objs = append(s.objs, o)
	return uint32(len(s.objs) - 1)
}

func (s *Shard) freeObj(i uint32) {
	s.objs[i] = nil
	s.objFree = append(s.objFree, i)
}

// SwapDB swaps two databases of this shard (SWAPDB runs it on every shard).
func (s *Shard) SwapDB(a, b int) {
	if s.rw != nil {
		s.RewriteAll()
	}
	s.touchAll(a, s.DBs[a], s.DBs[b]) // WATCH (watch.go)
	s.touchAll(b, s.DBs[b], s.DBs[a])
	s.trackFlush() // CLIENT TRACKING (tracking.go)
	s.DBs[a], s.DBs[b] = s.DBs[b], s.DBs[a]
	s.DBs[a].ID, s.DBs[b].ID = a, b
	s.keysChanged++
	if s.OnSwapDB != nil {
		s.OnSwapDB(a, b)
	}
}

// FlushAll empties every database and gives the memory back.
func (s *Shard) FlushAll() {
	if s.rw != nil {
		s.RewriteAll()
	}
	s.trackFlush() // CLIENT TRACKING (tracking.go)
	for i := range s.DBs {
		s.touchAll(i, s.DBs[i], nil) // WATCH (watch.go)
		s.DBs[i].release()
		s.DBs[i] = newDB(s, i)
	}
	s.objs, s.objFree = nil, nil
	s.nkeys, s.objMem, s.memPend = 0, 0, nil
	s.Slab.Reset()
	s.keysChanged++
	if s.OnFlushDB != nil {
		for i := range s.DBs {
			s.OnFlushDB(i)
		}
	}
	flushed()
}

// Adopt replaces the shard's data with o's, which the caller built on its
// own (a replica's full sync loaded beside the data it serves) and never
// uses again: every database, with the values' storage and the memory
// accounting; the shard keeps its identity, hooks, WATCH registry and
// statistics. Watchers of every key are touched, as by FlushAll.
func (s *Shard) Adopt(o *Shard) {
	if s.rw != nil {
		s.RewriteAll()
	}
	s.trackFlush() // CLIENT TRACKING (tracking.go)
	for i := range s.DBs {
		nd := newDB(s, i)
		if i < len(o.DBs) {
			nd = o.DBs[i]
			nd.sh = s
		}
		s.touchAll(i, s.DBs[i], nd) // WATCH (watch.go)
		s.DBs[i].release()
		s.DBs[i] = nd
	}
	s.Slab = o.Slab
	s.objs, s.objFree = o.objs, o.objFree
	s.nkeys, s.objMem, s.memPend = o.nkeys, o.objMem, o.memPend
	s.ownExpiring = nil
	s.keysChanged++
	o.DBs, o.Slab, o.objs, o.objFree, o.memPend = nil, Slab{}, nil, nil, nil
	if s.OnSwapDB != nil {
		for i := range s.DBs {
			s.OnSwapDB(i, i) // blocked clients may be served now
		}
	}
	flushed()
}

// Keys counts the keys of all databases.
func (s *Shard) Keys() (keys, expires int) {
	for _, db := range s.DBs {
		keys += db.Len()
		expires += db.Expires()
	}
	return
}

// ShardOf returns the shard index of a key among n: the Redis Cluster slot
// of its hash tag (the part between the first '{' and the next '}', when
// non-empty) or of the whole key, modulo n, so that keys sharing a tag share
// a shard.
func ShardOf(key []byte, n int) int {
	if n == 1 {
		return 0
	}
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						key = key[i+1 : j]
					}
					goto done
				}
			}
			break
		}
	}
done:
	return int(crc16(key)&16383) % n
}

// KeySlot is the Redis Cluster hash slot of a key (Redis's keyHashSlot):
// the CRC16 of its hash tag, or of the whole key, modulo 16384. ShardOf is
// KeySlot modulo the shard count, so a slot's keys live on one shard.
func KeySlot(key []byte) int {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						return int(crc16(key[i+1:j]) & 16383)
					}
					break
				}
			}
			break
		}
	}
	return int(crc16(key) & 16383)
}

// crc16 is the CRC16 (XMODEM) of Redis Cluster's key slots: a key's shard is
// its slot modulo the shard count, the same in every process (tests and
// tools can tell which shard a key lives on), unlike the keyspace hash,
// whose seed is random per process.
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^c]
	}
	return crc
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for j := 0; j < 8; j++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return
}()
