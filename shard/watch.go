package shard

import "sync/atomic"

// WATCH: which clients watch which keys, and marking them dirty when a key
// changes (Redis's watched_keys, touchWatchedKey, touchAllWatchedKeysInDb).
//
// The registry lives on the key's shard, per database index (not per *DB:
// SWAPDB swaps the data but the watches stay with the index, as in Redis),
// and is touched only by the shard's owner, like the keys. A watching client
// may live on any loop, so what the shard marks is a Watcher, whose dirty
// flag is atomic: the shard sets it, the client's EXEC reads it.
//
// The data layer calls touch at every change of a key: insert (a new key),
// unlink (delete, expiry, eviction, the source of RENAME/MOVE), in-place
// changes (replaceStr, ResizeStr, SetExpiry, Modify), and touchAll for
// FLUSHDB/FLUSHALL/SWAPDB. When nothing is watched on the shard, each of
// these costs one comparison (watchN == 0).

// Watcher is one client's WATCH session as the shards see it. A new one is
// made for every session (after UNWATCH, EXEC, DISCARD a client starts
// afresh), so a registration left behind on a shard can only dirty a
// session that is over.
type Watcher struct {
	dirty atomic.Bool
}

// Dirty reports whether a watched key changed since it was watched.
func (w *Watcher) Dirty() bool { return w.dirty.Load() }

// watchReg is one client's watch of one key.
type watchReg struct {
	w *Watcher
	// expired: the key was logically expired (but still present) when it
	// was watched; its deletion is then no change (Redis's wk->expired).
	expired bool
}

// watchMap is one database index's registry: key -> its watchers.
type watchMap map[string][]*watchReg

// Watch registers w as watching key in db and returns the key's expiry at
// that moment (0 when it has none, is missing or is already expired): as
// long as the key is not touched that expiry stands, so EXEC can tell
// whether the key expired since (Redis's isWatchedKeyExpired) without
// visiting this shard.
func (db *DB) Watch(key []byte, w *Watcher) (expAt int64) {
	s := db.sh
	slot := db.find(key, Hash(key))
	expired := slot >= 0 && db.Expired(slot)
	if slot >= 0 && !expired {
		expAt = db.Expiry(slot)
	}
	if s.watched == nil {
		s.watched = make([]watchMap, len(s.DBs))
	}
	m := s.watched[db.ID]
	if m == nil {
		m = make(watchMap)
		s.watched[db.ID] = m
	}
	m[string(key)] = append(m[string(key)], &watchReg{w: w, expired: expired})
	s.watchN++
	return expAt
}

// Unwatch drops w's watch of key in database dbID, if any.
func (s *Shard) Unwatch(dbID int, key []byte, w *Watcher) {
	if s.watchN == 0 || dbID >= len(s.watched) {
		return
	}
	m := s.watched[dbID]
	regs, ok := m[string(key)]
	if !ok {
		return
	}
	kept := regs[:0]
	for _, r := range regs {
		if r.w == w {
			s.watchN--
			continue
		}
		kept = append(kept, r)
	}
	for i := len(kept); i < len(regs); i++ {
		regs[i] = nil
	}
	if len(kept) == 0 {
		delete(m, string(key))
	} else {
		m[string(key)] = kept
	}
}

// Watched is the number of watch registrations on the shard.
func (s *Shard) Watched() int { return s.watchN }

// touch marks the watchers of key dirty; gone says the key has just been
// deleted (Redis's touchWatchedKey, called after the change).
func (db *DB) touch(key []byte, gone bool) {
	if db.sh.watchN != 0 {
		db.sh.touchKey(db.ID, key, gone)
	}
	if db.sh.tracking() {
		db.sh.invalidate(key) // CLIENT TRACKING (tracking.go)
	}
}

// touchSlot is touch for a key about to change in place.
func (db *DB) touchSlot(slot int32) {
	if db.sh.watchN != 0 {
		db.sh.touchKey(db.ID, db.Key(slot), false)
	}
	if db.sh.tracking() {
		db.sh.invalidate(db.Key(slot)) // CLIENT TRACKING (tracking.go)
	}
}

func (s *Shard) touchKey(dbID int, key []byte, gone bool) {
	if dbID >= len(s.watched) {
		return
	}
	for _, r := range s.watched[dbID][string(key)] {
		if r.expired {
			// Watched while already expired: its deletion changes nothing
			// logically; from then on it is watched as missing.
			if gone {
				r.expired = false
			}
			continue
		}
		r.w.dirty.Store(true)
	}
}

// touchAll is Redis's touchAllWatchedKeysInDb for database index dbID whose
// contents emptied are being replaced by replaced (nil: by nothing, for
// FLUSHDB/FLUSHALL; the other database, for SWAPDB). A watched key is
// touched when it exists in either, except that an expired key replaced by
// nothing or by another expired key, or a missing key replaced by an
// expired one, changes nothing logically.
func (s *Shard) touchAll(dbID int, emptied, replaced *DB) {
	if s.watchN == 0 || dbID >= len(s.watched) {
		return
	}
	for k, regs := range s.watched[dbID] {
		key := []byte(k)
		inEmptied := emptied.find(key, Hash(key)) >= 0
		rslot := int32(-1)
		if replaced != nil {
			rslot = replaced.find(key, Hash(key))
		}
		if !inEmptied && rslot < 0 {
			continue
		}
		rExpired := rslot >= 0 && replaced.Expired(rslot)
		for _, r := range regs {
			if r.expired {
				if rslot < 0 {
					r.expired = false
					continue
				}
				if rExpired {
					continue
				}
			} else if !inEmptied && rExpired {
				r.expired = true
				continue
			}
			r.w.dirty.Store(true)
		}
	}
}
