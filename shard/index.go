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
// told apart. Deletion shifts later words of the run back (no tombstones).
type index struct {
	words []uint64
	shift uint32 // 32 - k
	count int
}

const indexMinBits = 4

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
	mask := len(ix.words) - 1
	for pos := ix.home(fp); ; pos = (pos + 1) & mask {
		w := ix.words[pos]
		if w == 0 {
			return -1
		}
		if uint32(w>>32) == fp {
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
	}
	mask := len(ix.words) - 1
	pos := ix.home(fp)
	for ix.words[pos] != 0 {
		pos = (pos + 1) & mask
	}
	ix.words[pos] = uint64(fp)<<32 | uint64(uint32(slot+1))
	ix.count++
}

// remove deletes the word for slot (whose fingerprint is fp).
func (ix *index) remove(fp uint32, slot int32) {
	mask := len(ix.words) - 1
	want := uint64(fp)<<32 | uint64(uint32(slot+1))
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

// grow doubles the table. Words are visited in table order, which is home
// order except for runs that wrap around, so the new table is written
// nearly sequentially.
func (ix *index) grow() {
	old := ix.words
	bits := 32 - ix.shift + 1
	ix.init(bits)
	mask := len(ix.words) - 1
	for _, w := range old {
		if w == 0 {
			continue
		}
		pos := ix.home(uint32(w >> 32))
		for ix.words[pos] != 0 {
			pos = (pos + 1) & mask
		}
		ix.words[pos] = w
		ix.count++
	}
	freeBig(bytesOfWords(old))
}

// release gives the table's memory back (the index is dropped).
func (ix *index) release() {
	if ix.words != nil {
		freeBig(bytesOfWords(ix.words))
	}
	*ix = index{}
}
