package shard

import "sync/atomic"

// Object is a value other than a string: a list, hash, set or sorted set.
// It lives in the shard's object table (entry.vlen indexes it), so the
// keyspace entries themselves stay pointer-free.
//
// Every data type that changes an existing value in place calls
// db.Modify(slot) first: the rewrite serializes the key's old state there,
// WATCH and memory accounting hook there too.
type Object interface {
	// Copy returns a deep copy (COPY).
	Copy() Object
	// Dump returns the commands that recreate the value at key (AOF
	// rewrite), at most 64 elements per command as Redis's rewrite does.
	// The expiry is added by the caller.
	Dump(key []byte) [][][]byte
	// Mem is the value's approximate size in bytes; it must be O(1).
	Mem() int
}

// Modify must be called before a slot's non-string value changes in place
// (HSET on an existing hash, LPUSH on an existing list, ...).
func (db *DB) Modify(slot int32) {
	db.rwBefore(slot)
	db.touchSlot(slot) // WATCH (watch.go)
	if e := db.at(slot); e.typ != TypeString {
		db.memOut(slot, e)
	}
}

// Tunables are the config values the data types read: encoding thresholds
// and the keyspace-notification mask. The server points a shard at its
// config's values (CONFIG SET changes them live); New uses Redis's defaults.
type Tunables struct {
	HashMaxListpackEntries atomic.Int64 // hash-max-listpack-entries (512)
	HashMaxListpackValue   atomic.Int64 // hash-max-listpack-value (64)
	SetMaxIntsetEntries    atomic.Int64 // set-max-intset-entries (512)
	ZsetMaxListpackEntries atomic.Int64 // zset-max-listpack-entries (128)
	ZsetMaxListpackValue   atomic.Int64 // zset-max-listpack-value (64)
	ListMaxListpackSize    atomic.Int64 // list-max-listpack-size (-2)
	ListCompressDepth      atomic.Int64 // list-compress-depth (0)
	ProtoMaxBulkLen        atomic.Int64 // proto-max-bulk-len (512mb): bit offsets stay below it
	HLLSparseMaxBytes      atomic.Int64 // hll-sparse-max-bytes (3000)
	StreamNodeMaxBytes     atomic.Int64 // stream-node-max-bytes (4096)
	StreamNodeMaxEntries   atomic.Int64 // stream-node-max-entries (100)
	// NotifyFlags is notify-keyspace-events as a mask of Notify* bits.
	NotifyFlags atomic.Uint32
	// RDBCompression is rdbcompression: DUMP and MIGRATE payloads
	// LZF-compress long strings.
	RDBCompression atomic.Bool
	// SkipChecksumValidation is DEBUG SET-SKIP-CHECKSUM-VALIDATION:
	// RESTORE does not check a payload's CRC.
	SkipChecksumValidation atomic.Bool

	MaxmemoryPolicy           atomic.Int64 // maxmemory-policy, a Policy* value
	MaxmemorySet              atomic.Bool  // maxmemory is not 0
	MaxmemorySamples          atomic.Int64 // maxmemory-samples (5)
	MaxmemoryEvictionTenacity atomic.Int64 // maxmemory-eviction-tenacity (10)
	LFULogFactor              atomic.Int64 // lfu-log-factor (10)
	LFUDecayTime              atomic.Int64 // lfu-decay-time (1)

	// lazyfree-lazy-user-del, -expire, -eviction, -server-del and
	// -user-flush: which deletions count as lazy ones (lazyfree.go).
	LazyUserDel   atomic.Bool
	LazyServerDel atomic.Bool
	LazyExpire    atomic.Bool
	LazyEviction  atomic.Bool
	LazyUserFlush atomic.Bool
}

// DefaultTunables returns Redis's defaults.
func DefaultTunables() *Tunables {
	t := &Tunables{}
	t.HashMaxListpackEntries.Store(512)
	t.HashMaxListpackValue.Store(64)
	t.SetMaxIntsetEntries.Store(512)
	t.ZsetMaxListpackEntries.Store(128)
	t.ZsetMaxListpackValue.Store(64)
	t.ListMaxListpackSize.Store(-2)
	t.MaxmemoryPolicy.Store(PolicyNoEviction)
	t.MaxmemorySamples.Store(5)
	t.MaxmemoryEvictionTenacity.Store(10)
	t.LFULogFactor.Store(10)
	t.LFUDecayTime.Store(1)
	t.ProtoMaxBulkLen.Store(512 << 20)
	t.HLLSparseMaxBytes.Store(3000)
	t.StreamNodeMaxBytes.Store(4096)
	t.StreamNodeMaxEntries.Store(100)
	t.RDBCompression.Store(true)
	return t
}

// Keyspace notification classes (Redis's NOTIFY_* bits).
const (
	NotifyKeyspace = 1 << iota // K
	NotifyKeyevent             // E
	NotifyGeneric              // g
	NotifyString               // $
	NotifyList                 // l
	NotifySet                  // s
	NotifyHash                 // h
	NotifyZSet                 // z
	NotifyExpired              // x
	NotifyEvicted              // e
	NotifyStream               // t
	NotifyKeyMiss              // m
	NotifyLoaded               // module only
	NotifyModule               // d
	NotifyNew                  // n
)

// Notify fires a keyspace notification (Redis's notifyKeyspaceEvent) when
// notify-keyspace-events selects its class. Call it where Redis does, after
// the change. The server's hook publishes it; it must not touch the keyspace.
func (db *DB) Notify(class int, event string, key []byte) {
	s := db.sh
	if s.Cfg.NotifyFlags.Load()&uint32(class) != 0 && s.OnNotify != nil && !s.Loading {
		s.OnNotify(db.ID, class, event, key)
	}
}

// signalReady tells the server that a list or sorted set appeared at key,
// so that clients blocked on it can be served (Redis's signalKeyAsReady,
// called from dbAdd).
func (db *DB) signalReady(key []byte, typ uint8) {
	if (typ == TypeList || typ == TypeZSet) && db.sh.OnReady != nil {
		db.sh.OnReady(db, key)
	}
}
