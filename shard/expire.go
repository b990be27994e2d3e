package shard

import (
	"math/rand/v2"
	"time"
)

// Active expiry, after Redis's activeExpireCycle (expire.c).
const (
	expireKeysPerLoop     = 20 // keys sampled per database per loop
	expireAcceptableStale = 10 // % of expired samples below which a database is left
)

// ActiveExpireCycle reclaims keys whose time ran out without waiting for an
// access: for each database it samples keys that have an expiry, 20 at a
// time, deletes the expired ones, and samples again while more than 10% of
// a sample had expired, so the work adapts to how many stale keys there are.
// It stops when budget has been used. effort (1..10, Redis's
// active-expire-effort) raises the sample size and lowers the acceptable
// stale percentage as in Redis.
//
// Expiry is judged against the shard's cached time: the caller sets it with
// SetNow first. Deleted keys go through OnExpired like lazily expired ones.
// Nothing expires while the log is being loaded.
func (s *Shard) ActiveExpireCycle(budget time.Duration, effort int) {
	if s.Loading || len(s.DBs) == 0 {
		return
	}
	effort = min(max(effort, 1), 10) - 1 // rescale to 0..9
	perLoop := expireKeysPerLoop + expireKeysPerLoop/4*effort
	stale := expireAcceptableStale - effort

	s.Stats.ExpireCycles++
	start := time.Now()
	// Redis resumes from the database after the one it stopped in; with no
	// state kept here, a random first database spreads the work the same way
	// when the budget runs out.
	first := rand.IntN(len(s.DBs))
	for j := range s.DBs {
		db := s.DBs[(first+j)%len(s.DBs)]
		for {
			n := db.Expires()
			if n == 0 {
				db.avgTTL = 0 // as Redis: no keys with a TTL, no estimate
				break
			}
			sampled, expired := db.ActiveExpire(min(n, perLoop))
			if time.Since(start) > budget {
				return
			}
			if sampled == 0 || expired*100/sampled <= stale {
				break
			}
		}
	}
}

type ownKey struct {
	db  int
	key string
}

// ExpireOwn deletes the keys a writable replica's own clients gave a TTL
// once they are expired (Redis's expireSlaveKeys): nobody else will. It
// returns how many it deleted.
func (s *Shard) ExpireOwn() int {
	n := 0
	for k := range s.ownExpiring {
		if k.db >= len(s.DBs) {
			delete(s.ownExpiring, k)
			continue
		}
		db := s.DBs[k.db]
		slot := db.find([]byte(k.key), Hash([]byte(k.key)))
		if slot < 0 || db.at(slot).xpos < 0 {
			delete(s.ownExpiring, k)
			continue
		}
		if db.expAt[db.at(slot).xpos] <= s.now {
			delete(s.ownExpiring, k)
			s.onExpired(db, db.key(db.at(slot)))
			s.trk.anon = true
			db.deleteMaybeLazy(slot, s.Cfg.LazyExpire.Load())
			s.trk.anon = false
			n++
		}
	}
	return n
}

// OwnExpiring is how many keys ExpireOwn watches.
func (s *Shard) OwnExpiring() int { return len(s.ownExpiring) }
