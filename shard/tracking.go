package shard

import "sync/atomic"

// Client-side caching: the keys that clients with CLIENT TRACKING ON have
// read, per shard (Redis's TrackingTable, split by the key's shard). The
// server's tracking.go states the protocol; this file is the table.
//
// A key maps to the refs of the clients that may cache it: an opaque uint64
// the server packs (client id and home loop). The table holds key names only
// (Redis's table is not per database either). It is touched only by the
// shard's owner, like the keys, and a change to a key (the same touch points
// as WATCH: insert, unlink, in-place changes, expiry, eviction) takes the
// key's entry out and queues one invalidation per ref. The running loop
// collects the queue with TakeInvalidations after the command and delivers
// it; nothing here blocks or allocates once the buffers are warm.
//
// BCAST clients track prefixes, not keys: while one exists (Shared.Bcast),
// every changed key is queued for the prefix match too, with who changed it
// (NOLOOP). A flush (FLUSHDB, FLUSHALL, SWAPDB, a replica's new data set)
// empties the table and queues one "everything" invalidation.
//
// When nobody tracks anything on the shard, a change costs two comparisons.

// TrackShared is the state every shard of a server shares.
type TrackShared struct {
	Bcast   atomic.Bool  // a client tracks in BCAST mode
	Clients atomic.Int64 // clients with tracking on
	Keys    atomic.Int64 // keys in every shard's table (INFO tracking_total_keys)
	Items   atomic.Int64 // refs in every shard's table (tracking_total_items)
}

type trackTable struct {
	one  map[string]uint64              // keys with one ref
	many map[string]map[uint64]struct{} // keys with more
	n    int                            // keys in one and many

	// Queued invalidations: key bytes in keys, one entry per (key, ref);
	// bcast entries (ref 0) are for the prefix match.
	keys    []byte
	pend    []Invalidation
	flushed bool
	anon    bool // the change being made is no client's (expiry)
}

// Invalidation is one queued invalidation: the key (valid during
// TakeInvalidations), the ref it is for (0: a BCAST candidate), and Anon
// when no client's command made the change (an expiry).
type Invalidation struct {
	Key    []byte
	Ref    uint64
	Anon   bool
	a0, a1 int
}

// Track remembers that ref may cache key.
func (s *Shard) Track(key []byte, ref uint64) {
	t := &s.trk
	if t.one == nil {
		t.one = make(map[string]uint64)
		t.many = make(map[string]map[uint64]struct{})
	}
	if r, ok := t.one[string(key)]; ok {
		if r == ref {
			return
		}
		delete(t.one, string(key))
		t.many[string(key)] = map[uint64]struct{}{r: {}, ref: {}}
		s.Trk.Items.Add(1)
		return
	}
	if m, ok := t.many[string(key)]; ok {
		if _, ok := m[ref]; !ok {
			m[ref] = struct{}{}
			s.Trk.Items.Add(1)
		}
		return
	}
	t.one[string(key)] = ref
	t.n++
	s.Trk.Keys.Add(1)
	s.Trk.Items.Add(1)
}

// TrackedKeys is the number of keys in the shard's table.
func (s *Shard) TrackedKeys() int { return s.trk.n }

// tracking reports whether a change must look at the table.
func (s *Shard) tracking() bool {
	return s.trk.n != 0 || s.Trk != nil && s.Trk.Bcast.Load()
}

// invalidate takes key's entry out of the table, queueing its refs, and
// queues the key for BCAST clients.
func (s *Shard) invalidate(key []byte) {
	t := &s.trk
	w := t.anon
	if t.n != 0 {
		if r, ok := t.one[string(key)]; ok {
			delete(t.one, string(key))
			t.n--
			s.Trk.Keys.Add(-1)
			s.Trk.Items.Add(-1)
			s.queue(key, r, w)
		} else if m, ok := t.many[string(key)]; ok {
			delete(t.many, string(key))
			t.n--
			s.Trk.Keys.Add(-1)
			s.Trk.Items.Add(-int64(len(m)))
			for r := range m {
				s.queue(key, r, w)
			}
		}
	}
	if s.Trk != nil && s.Trk.Bcast.Load() {
		s.queue(key, 0, w)
	}
}

func (s *Shard) queue(key []byte, ref uint64, anon bool) {
	t := &s.trk
	a0 := len(t.keys)
	if n := len(t.pend); n > 0 && string(t.keys[t.pend[n-1].a0:t.pend[n-1].a1]) == string(key) {
		a0 = t.pend[n-1].a0 // the same key again: share its bytes
	} else {
		t.keys = append(t.keys, key...)
	}
	t.pend = append(t.pend, Invalidation{Ref: ref, Anon: anon, a0: a0, a1: a0 + len(key)})
}

// EvictTracked takes up to n keys out of the table as if they had changed
// (Redis's trackingLimitUsedSlots: the clients forget them), queueing their
// refs but no BCAST candidates; claim is asked before each key and may
// refuse, and takes the key off Trk.Keys when it agrees (the shards share
// the limit). It returns how many keys went.
func (s *Shard) EvictTracked(n int, claim func() bool) int {
	t := &s.trk
	done := 0
	for done < n && t.n > 0 {
		if !claim() {
			break
		}
		found := false
		for k, r := range t.one {
			delete(t.one, k)
			s.Trk.Items.Add(-1)
			s.queue([]byte(k), r, true)
			found = true
			break
		}
		if !found {
			for k, m := range t.many {
				delete(t.many, k)
				s.Trk.Items.Add(-int64(len(m)))
				for r := range m {
					s.queue([]byte(k), r, true)
				}
				break
			}
		}
		t.n--
		done++
	}
	return done
}

// trackFlush empties the table: every client may have cached anything.
func (s *Shard) trackFlush() {
	t := &s.trk
	if s.Trk == nil || s.Trk.Clients.Load() == 0 && t.n == 0 {
		return
	}
	t.flushed = true
	if t.n == 0 {
		return
	}
	items := len(t.one)
	for _, m := range t.many {
		items += len(m)
	}
	s.Trk.Keys.Add(-int64(t.n))
	s.Trk.Items.Add(-int64(items))
	t.one, t.many, t.n = nil, nil, 0
}

// PendingInvalidations reports whether invalidations are queued.
func (s *Shard) PendingInvalidations() bool { return len(s.trk.pend) != 0 || s.trk.flushed }

// TakeInvalidations hands the queued invalidations to fn (their keys are
// valid during the call) and empties the queue; flushed says a flush
// happened since the last take.
func (s *Shard) TakeInvalidations(fn func(inv []Invalidation, flushed bool)) {
	t := &s.trk
	for i := range t.pend {
		t.pend[i].Key = t.keys[t.pend[i].a0:t.pend[i].a1]
	}
	fn(t.pend, t.flushed)
	clear(t.pend)
	t.pend, t.keys, t.flushed = t.pend[:0], t.keys[:0], false
	if cap(t.keys) > 1<<20 {
		t.keys, t.pend = nil, nil
	}
}
