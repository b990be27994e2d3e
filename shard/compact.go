package shard

import (
	"slices"
	"time"
)

// Slab compaction: giving back the pages that deletes left sparse.
//
// A slab class keeps freed slots for its next allocations and never shrinks
// on its own: after a delete of most keys its pages are as many as at the
// peak, each holding a few live slots, and RSS stays at the high-water mark.
// Compaction, run by the shard's loop in small steps between requests
// (CompactStep, from the cron), gives those pages back, one class at a time:
//
//  1. Plan: pick the class with the most to give back and, in it, the pages
//     to evacuate, sparsest first, as long as the free slots of the pages
//     kept can take the live slots of the pages evacuated. The last page
//     may go too (its untouched tail is closed, so Alloc's next bump takes a
//     new page). A page with no live slot is released at once.
//  2. Walk: the keyspace entries are the only holders of Handles (entry.kv,
//     key bytes and a string's value; other values live in the object
//     table). The walk visits every slot of every database in order and
//     moves each live allocation it finds in an evacuating page to a slot
//     handed out as by Alloc — never in an evacuating page (slab.go) — and
//     points the entry at it. The bytes are the same, so nothing else
//     changes: not the index, not WATCH, not the rewrite's image, not
//     used_memory.
//  3. Release: the Free or move that takes an evacuating page's live count
//     to zero releases it (slab.go).
//
// While a walk is under way the keyspace changes: new allocations never land
// in an evacuating page, frees of its slots only count down, so one pass over
// every entry finds every live slot that was there when it passed; a key
// that SWAPDB carried to a database the pass had already walked is found by
// the next pass. Should a pass move nothing while pages remain evacuating,
// something outside the entries holds their slots (the second such pass
// in a row, since a SWAPDB may hide keys from one): the run ends, those
// pages stay (never reused, released once freed), and nothing is corrupted.
//
// Slices from Slab.Bytes held across a step would see a moved key's old
// slot: no command keeps one past its own run, and the step runs between
// commands, never while the loop is parked for another's transaction.

// compaction is the state of a compaction run (Slab.cmp).
type compaction struct {
	active bool
	class  int   // the class being compacted
	db     int   // the walk's position: database index,
	slot   int32 // and slot in it
	moved  int   // allocations moved by the current pass
	passes int   // passes begun in this run
	idle   int   // passes in a row, just ended, that moved nothing
	cands  []int // scratch for evacuate, kept to make no garbage per cron tick

	// Totals, ever (MEMORY MALLOC-STATS).
	runs       int64
	movedTotal int64
	released   int64 // bytes of pages released
	// heapReleased is the part of released that was Go heap memory.
	heapReleased int64
}

// compactMinBytes is the least a run must give back to be worth starting:
// a class's slack under it is left alone. (A variable for the tests.)
var compactMinBytes int64 = 512 << 10

const (
	// compactMaxFill: a page more than 3/4 full is not evacuated (moving
	// it would copy much to give back little).
	compactMaxFillNum, compactMaxFillDen = 3, 4
)

// compactSlotsPerCheck and compactBytesPerCheck bound the work between two
// looks at the clock: entries walked (some microseconds) and bytes copied
// (tens of microseconds; 4096 slots of the largest class would be 256 MiB).
// Variables, so that tests can make steps small.
var (
	compactSlotsPerCheck int32 = 4096
	compactBytesPerCheck       = 256 << 10
)

// planCompaction picks a class and marks its pages to evacuate; it reports
// whether a run has begun.
func (s *Slab) planCompaction() bool {
	best, bestGain := -1, int64(0)
	for c := range s.classes {
		if g := s.evacuate(c, false); g > bestGain {
			best, bestGain = c, g
		}
	}
	if best < 0 || bestGain < compactMinBytes {
		return false
	}
	s.evacuate(best, true)
	s.cmp.active, s.cmp.class = true, best
	s.cmp.db, s.cmp.slot, s.cmp.moved, s.cmp.passes, s.cmp.idle = 0, 0, 0, 0, 0
	s.cmp.runs++
	return true
}

// evacuate chooses the pages of class c to evacuate and returns how many
// bytes they hold; with mark it marks them (and releases the empty ones).
//
// room is the number of free slots in the pages kept, the last page's
// untouched tail included. Evacuating page p takes its free slots out of
// room and needs room for its live ones, so it is possible while room >=
// cap(p) (room counted with p's own free slots), after which room is
// cap(p) smaller. The last page may go too: its tail is then closed
// (next set to its end), so the next bump takes a new page.
func (s *Slab) evacuate(c int, mark bool) int64 {
	sc := &s.classes[c]
	if len(sc.pages) < 2 {
		return 0
	}
	last := len(sc.pages) - 1
	room := 0
	cands := s.cmp.cands[:0]
	for p := 0; p <= last; p++ {
		if sc.state[p] != pageInUse {
			continue
		}
		slots := len(sc.pages[p]) / sc.size
		room += slots - int(sc.live[p])
		if int(sc.live[p])*compactMaxFillDen <= slots*compactMaxFillNum {
			cands = append(cands, p)
		}
	}
	s.cmp.cands = cands
	if len(cands) == 0 {
		return 0
	}
	slices.SortFunc(cands, func(a, b int) int { return int(sc.live[a]) - int(sc.live[b]) })
	var gain int64
	for _, p := range cands {
		slots := len(sc.pages[p]) / sc.size
		if room < slots {
			break
		}
		room -= slots
		gain += int64(len(sc.pages[p]))
		if mark {
			sc.state[p] = pageEvacuating
			sc.nevac++
			if p == last {
				sc.next = len(sc.pages[p]) // closed: no more bumps into it
			}
			if sc.live[p] == 0 {
				s.releasePage(sc, p)
			}
		}
	}
	return gain
}

// move copies the allocation h, in a page being evacuated, to a slot of a
// page in use of its class and returns the new handle; h is freed.
func (s *Slab) move(h Handle) Handle {
	c, page, off := h.parts()
	sc := &s.classes[c]
	nh := s.allocSlot(c, sc)
	_, np, noff := nh.parts()
	copy(sc.pages[np][noff:noff+sc.size], sc.pages[page][off:off+sc.size])
	sc.live[page]--
	if sc.live[page] == 0 {
		s.releasePage(sc, page)
	}
	s.cmp.movedTotal++
	return nh
}

// endCompaction ends the run and drops from the class's free list the slots
// of released pages (Alloc would drop them one by one), when that is cheap.
func (s *Slab) endCompaction() {
	sc := &s.classes[s.cmp.class]
	if len(sc.free) <= 1<<16 {
		sc.free = slices.DeleteFunc(sc.free, func(h Handle) bool { return sc.state[h.page()] != pageInUse })
	}
	s.cmp.active = false
}

// CompactStep does compaction work (see the top of the file) for about
// budget and reports whether a run is still under way. The loop calls it
// from its cron, between requests.
func (s *Shard) CompactStep(budget time.Duration) bool {
	if s.Loading {
		return false
	}
	sl := &s.Slab
	cm := &sl.cmp
	if !cm.active && !sl.planCompaction() {
		return false
	}
	start := time.Now()
	sc := &sl.classes[cm.class]
	c := cm.class
	for {
		if sc.nevac == 0 {
			sl.endCompaction()
			return false
		}
		if cm.db >= len(s.DBs) {
			// A pass is over and pages are still being evacuated. Two
			// passes in a row that moved nothing (one could have missed
			// keys SWAPDB carried behind it) mean no entry holds the rest.
			if cm.moved == 0 {
				cm.idle++
			} else {
				cm.idle = 0
			}
			if cm.idle >= 2 {
				sl.endCompaction() // see the top of the file: nothing is lost
				return false
			}
			cm.db, cm.slot, cm.moved = 0, 0, 0
			cm.passes++
			continue
		}
		if cm.passes == 0 {
			cm.passes = 1
		}
		db := s.DBs[cm.db]
		if cm.slot >= db.nslots {
			cm.db, cm.slot = cm.db+1, 0
			continue
		}
		end := min(db.nslots, cm.slot+compactSlotsPerCheck)
		slot, copied := cm.slot, 0
		for ; slot < end && copied < compactBytesPerCheck; slot++ {
			e := db.at(slot)
			if !e.live {
				continue
			}
			ec, ep, _ := e.kv.parts()
			if ec == c && sc.state[ep] == pageEvacuating {
				e.kv = sl.move(e.kv)
				cm.moved++
				copied += sc.size
			}
		}
		cm.slot = slot
		if time.Since(start) >= budget {
			return true
		}
	}
}

// SlabClassStats describes one slab class (MEMORY MALLOC-STATS).
type SlabClassStats struct {
	Size      int   // slot size
	Pages     int   // pages held
	Bytes     int64 // bytes of the pages held
	Live      int64 // live slots
	Evacuated int   // pages being evacuated
}

// SlabStats describes the slab: its classes in use, the huge allocations
// and compaction's totals.
type SlabStats struct {
	Classes         []SlabClassStats
	HugeBytes       int64
	Used, Reserved  int64
	CompactRuns     int64
	CompactMoved    int64
	CompactReleased int64
	CompactActive   bool
	CompactClass    int // slot size of the class being compacted, 0 if none
}

// Stats reports the slab's classes in use and compaction's totals.
func (s *Slab) Stats() SlabStats {
	st := SlabStats{Used: s.used, Reserved: s.reserved, CompactRuns: s.cmp.runs,
		CompactMoved: s.cmp.movedTotal, CompactReleased: s.cmp.released, CompactActive: s.cmp.active}
	if s.cmp.active {
		st.CompactClass = classSizes[s.cmp.class]
	}
	for c := range s.classes {
		sc := &s.classes[c]
		if len(sc.pages) == 0 {
			continue
		}
		cs := SlabClassStats{Size: sc.size, Evacuated: sc.nevac}
		for p, b := range sc.pages {
			if b != nil {
				cs.Pages++
				cs.Bytes += int64(len(b))
			}
			cs.Live += int64(sc.live[p])
		}
		st.Classes = append(st.Classes, cs)
	}
	for _, b := range s.huge {
		st.HugeBytes += int64(len(b))
	}
	return st
}
