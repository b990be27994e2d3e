package shard

import (
	"slices"
	"sync/atomic"
)

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
	m map[string]trackEntry // key -> the refs that may cache it
	n int                   // len(m)

	// Queued invalidations: key bytes in keys, one entry per (key, ref);
	// bcast entries (ref 0) are for the prefix match.
	keys    []byte
	pend    []Invalidation
	flushed bool
	anon    bool // the change being made is no client's (expiry)
	// epoch changes whenever refs leave the table (a key invalidated or
	// evicted from it, a flush): a ref found in the table stays there
	// while it is the same (TrackEpoch).
	epoch uint64
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

// trackEntry is a key's refs: one, or a sorted slice once there are more
// (a binary search over a few cache lines beats a hash set of the same
// refs: measured 2x on GET with 50 tracking clients per key), or a set past
// maxSortedRefs.
type trackEntry struct {
	one  uint64
	many []uint64
	set  map[uint64]struct{}
}

const maxSortedRefs = 256

// Track remembers that ref may cache key. A ref already there costs one
// lookup of the key and, when several clients track it, a binary search.
func (s *Shard) Track(key []byte, ref uint64) {
	t := &s.trk
	e, ok := t.m[string(key)]
	if !ok {
		if t.m == nil {
			t.m = make(map[string]trackEntry)
		}
		t.m[string(key)] = trackEntry{one: ref}
		t.n++
		s.Trk.Keys.Add(1)
		s.Trk.Items.Add(1)
		return
	}
	switch {
	case e.set != nil:
		if _, dup := e.set[ref]; !dup {
			e.set[ref] = struct{}{}
			s.Trk.Items.Add(1)
		}
		return
	case e.many != nil:
		i, found := slices.BinarySearch(e.many, ref)
		if found {
			return
		}
		if len(e.many) < maxSortedRefs {
			e.many = slices.Insert(e.many, i, ref)
		} else {
			e.set = make(map[uint64]struct{}, len(e.many)+1)
			for _, r := range e.many {
				e.set[r] = struct{}{}
			}
			e.set[ref] = struct{}{}
			e.many = nil
		}
	case e.one == ref:
		return
	default:
		e.many = []uint64{min(e.one, ref), max(e.one, ref)}
		e.one = 0
	}
	t.m[string(key)] = e
	s.Trk.Items.Add(1)
}

func (e trackEntry) size() int {
	switch {
	case e.set != nil:
		return len(e.set)
	case e.many != nil:
		return len(e.many)
	}
	return 1
}

// each calls fn for each of the entry's refs.
func (e trackEntry) each(fn func(uint64)) {
	switch {
	case e.set != nil:
		for r := range e.set {
			fn(r)
		}
	case e.many != nil:
		for _, r := range e.many {
			fn(r)
		}
	default:
		fn(e.one)
	}
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
		if e, ok := t.m[string(key)]; ok {
			delete(t.m, string(key))
			t.epoch++
			t.n--
			s.Trk.Keys.Add(-1)
			s.Trk.Items.Add(-int64(e.size()))
			e.each(func(r uint64) { s.queue(key, r, w) })
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
		for k, e := range t.m {
			delete(t.m, k)
			t.epoch++
			s.Trk.Items.Add(-int64(e.size()))
			e.each(func(r uint64) { s.queue([]byte(k), r, true) })
			break
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
	items := 0
	for _, e := range t.m {
		items += e.size()
	}
	s.Trk.Keys.Add(-int64(t.n))
	s.Trk.Items.Add(-int64(items))
	t.m, t.n = nil, 0
	t.epoch++
}

// TrackEpoch identifies the table's state as far as refs leaving it go:
// after Track(key, ref), ref stays in key's entry while TrackEpoch returns
// the same value (on the same Shard).
func (s *Shard) TrackEpoch() uint64 { return s.trk.epoch }

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
