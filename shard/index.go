package shard

// index maps key hashes to entry slots: an open-addressing table of 8-byte
// words with linear probing. A word holds the top 32 bits of the key's
// 64-bit hash (the fingerprint) and slot+1 (0 is an empty word). The home
// position of a key in a table of 2^k words is the top k bits of its hash —
// the fingerprint's top k bits — so growing the table needs neither the keys
// nor their hashes: every word knows where it goes. A word holds no pointer,
// so the garbage collector never scans the table.
//
// Lookups compare fingerprints and then the full key (the caller's match
// function), so two keys with equal fingerprints, or even equal hashes, are
// told apart. Deletion shifts later words of the run back (no tombstones
// in the current table).
//
// A big table grows incrementally, as Redis's dict rehashes: the doubled
// table takes new words at once, and the old one is copied over a few
// positions per insert, delete and lookup, so no single command pays for
// moving millions of words (copying the 4M-word table at 3.1M keys took
// 45 ms in one go). While both exist, old positions below mig have been
// copied (the words left there are stale and never match) and a word
// deleted above mig becomes a tombstone.
type index struct {
	words []uint64
	shift uint32 // 32 - k
	count int    // live words in both tables

	old      []uint64 // the table being copied from, nil when none
	oldShift uint32
	mig      int // old positions below mig are copied
}

const (
	indexMinBits = 4
	// tombstone marks a deleted word of the old table: fingerprint 0 and
	// slot+1 = 2^32-1, which no slot has.
	tombstone = uint64(0xFFFFFFFF)
	// migStep old positions are copied per insert or delete, half as many
	// per lookup. A grow starts at 3/4 load and the doubled table reaches
	// that load after as many inserts again, so the copy always ends first.
	migStep = 8
	// Tables up to this many words are copied in one go.
	migAtOnce = 1 << 14
)

func (ix *index) init(bits uint32) {
	if n := 8 << bits; n >= bigPageSize {
		ix.words = wordsOf(allocBig(n)) // bigmem.go: huge pages, off the Go heap
	} else {
		ix.words = make([]uint64, 1<<bits)
	}
	ix.shift = 32 - bits
	ix.count = 0
}

func fingerprint(h uint64) uint32 { return uint32(h >> 32) }

func (ix *index) home(fp uint32) int { return int(fp >> ix.shift) }

// lookup returns the slot whose word matches fp and for which match(slot)
// is true, or -1.
func (ix *index) lookup(fp uint32, match func(slot int32) bool) int32 {
	if ix.words == nil {
		return -1
	}
	if ix.old != nil {
		ix.step(migStep / 2) // before probing: a step moves words between the tables
	}
	mask := len(ix.words) - 1
	for pos := ix.home(fp); ; pos = (pos + 1) & mask {
		w := ix.words[pos]
		if w == 0 {
			break
		}
		if uint32(w>>32) == fp {
			if slot := int32(uint32(w)) - 1; match(slot) {
				return slot
			}
		}
	}
	if ix.old == nil {
		return -1
	}
	return ix.lookupOld(fp, match)
}

// lookupOld looks fp up in the old table, above mig.
func (ix *index) lookupOld(fp uint32, match func(slot int32) bool) int32 {
	mask := len(ix.old) - 1
	for pos := int(fp >> ix.oldShift); ; pos = (pos + 1) & mask {
		w := ix.old[pos]
		if w == 0 {
			return -1
		}
		if pos >= ix.mig && uint32(w>>32) == fp && w != tombstone {
			if slot := int32(uint32(w)) - 1; match(slot) {
				return slot
			}
		}
	}
}

// insert adds slot under fp; the caller has checked the key is absent.
func (ix *index) insert(fp uint32, slot int32) {
	if ix.words == nil {
		ix.init(indexMinBits)
	}
	if (ix.count+1)*4 > len(ix.words)*3 {
		ix.grow()
	} else if ix.old != nil {
		ix.step(migStep)
	}
	ix.place(uint64(fp)<<32 | uint64(uint32(slot+1)))
	ix.count++
}

// place puts word w into the (new) table at the first free position from
// its home.
func (ix *index) place(w uint64) {
	mask := len(ix.words) - 1
	pos := ix.home(uint32(w >> 32))
	for ix.words[pos] != 0 {
		pos = (pos + 1) & mask
	}
	ix.words[pos] = w
}

// remove deletes the word for slot (whose fingerprint is fp).
func (ix *index) remove(fp uint32, slot int32) {
	want := uint64(fp)<<32 | uint64(uint32(slot+1))
	if ix.old != nil {
		ix.step(migStep)
		if ix.old != nil && ix.removeOld(want) {
			return
		}
	}
	mask := len(ix.words) - 1
	pos := ix.home(fp)
	for ix.words[pos] != want {
		if ix.words[pos] == 0 {
			return // not present
		}
		pos = (pos + 1) & mask
	}
	// Backward shift: move each later word of the run whose home is not
	// between the hole and it into the hole.
	hole := pos
	for {
		pos = (pos + 1) & mask
		w := ix.words[pos]
		if w == 0 {
			break
		}
		h := ix.home(uint32(w >> 32))
		// w may move to hole iff its home is not in (hole, pos] cyclically.
		if (pos > hole && (h <= hole || h > pos)) || (pos < hole && h <= hole && h > pos) {
			ix.words[hole] = w
			hole = pos
		}
	}
	ix.words[hole] = 0
	ix.count--
}

// removeOld turns word want into a tombstone if the old table still holds
// it (above mig), and reports whether it did.
func (ix *index) removeOld(want uint64) bool {
	mask := len(ix.old) - 1
	for pos := int(uint32(want>>32) >> ix.oldShift); ; pos = (pos + 1) & mask {
		w := ix.old[pos]
		if w == 0 {
			return false
		}
		if w == want && pos >= ix.mig {
			ix.old[pos] = tombstone
			ix.count--
			return true
		}
	}
}

// grow doubles the table and starts copying the old one over (or copies
// it at once when it is small). A copy still under way is finished first.
func (ix *index) grow() {
	if ix.old != nil {
		ix.step(len(ix.old))
	}
	old, oldShift, count := ix.words, ix.shift, ix.count
	ix.init(32 - ix.shift + 1)
	ix.count = count
	ix.old, ix.oldShift, ix.mig = old, oldShift, 0
	if len(old) <= migAtOnce {
		ix.step(len(old))
	} else {
		ix.step(migStep)
	}
}

// step copies up to n positions of the old table into the new one, in
// table order (so the old table is read sequentially), and drops the old
// table when the copy is complete.
func (ix *index) step(n int) {
	end := min(ix.mig+n, len(ix.old))
	for _, w := range ix.old[ix.mig:end] {
		if w != 0 && w != tombstone {
			ix.place(w)
		}
	}
	ix.mig = end
	if ix.mig == len(ix.old) {
		freeBig(bytesOfWords(ix.old))
		ix.old, ix.mig = nil, 0
	}
}

// release gives the table's memory back (the index is dropped).
func (ix *index) release() {
	if ix.words != nil {
		freeBig(bytesOfWords(ix.words))
	}
	if ix.old != nil {
		freeBig(bytesOfWords(ix.old))
	}
	*ix = index{}
}
