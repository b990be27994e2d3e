package shard

// Slab is a pointer-light allocator for key and value bytes.
//
// Memory is carved from pages of fixed-size slots grouped in size classes, so
// that the Go garbage collector sees one pointer per page instead of one per
// key. An allocation is named by a Handle (class, page, offset) — a plain
// integer the keyspace can store in pointer-free entries. Freed slots go on a
// per-class free list and are reused by the next allocation of that class.
// Allocations larger than the biggest class get a page of their own ("huge").
//
// Pages that deletes left sparse are given back by compaction (compact.go):
// their live slots move to free slots of denser pages of the same class, and
// a page that holds no live slot any more is released.
//
// A Slab is owned by one shard's loop and is not safe for concurrent use.
type Slab struct {
	classes  [numClasses]slabClass
	huge     [][]byte
	hugeFree []uint32
	// used is the sum of the slot sizes handed out (what used_memory counts);
	// reserved is the sum of page sizes obtained from the Go heap.
	used     int64
	reserved int64

	cmp compaction // the compaction in progress, if any (compact.go)
}

// Handle names one allocation in a Slab; it is meaningful only together with
// the length it was allocated for.
type Handle uint64

// slabClass holds the pages of one slot size.
//
// Invariants, per page p of a class:
//   - live[p] is the number of its slots handed out by Alloc and not freed;
//   - while state[p] is pageInUse, each slot of p that was handed out and
//     freed is on the free list exactly once;
//   - once state[p] is pageEvacuating, no slot of p is handed out again:
//     Alloc drops its slots from the free list as it meets them and Free
//     does not put them back; compaction moves its live slots away, and
//     the Free that takes live[p] to 0 releases the page;
//   - a pageReleased page is nil and its index is never reused, so a stale
//     free-list entry naming it is recognised (and dropped) forever;
//   - Alloc bumps only into the last page, and only while it is in use:
//     evacuating the last page closes it (next at its end).
//
// A page's state only moves forward: in use, evacuating, released.
type slabClass struct {
	size  int
	pages [][]byte
	next  int      // bump offset in the last page
	free  []Handle // freed slots of this class (and stale ones, see above)
	live  []int32  // live slots per page
	state []uint8  // pageInUse, pageEvacuating or pageReleased, per page
	nevac int      // pages in state pageEvacuating
}

// Page states (slabClass.state).
const (
	pageInUse uint8 = iota
	pageEvacuating
	pageReleased
)

const (
	hugeClass  = 127
	pageSize   = bigPageSize // a full page is one 2 MiB mapping (bigmem.go)
	maxClassSz = 64 << 10
)

var classSizes = func() []int {
	var s []int
	for sz := 8; sz <= 64; sz += 8 {
		s = append(s, sz)
	}
	// Eight classes per doubling above 64 bytes: at most 12.5% slack, ~6% on
	// average (a 16-byte key with a 100-byte value takes 120 bytes, not 128).
	for base := 64; base < maxClassSz; base *= 2 {
		step := base / 8
		for i := 1; i <= 8; i++ {
			s = append(s, base+i*step)
		}
	}
	return s
}()

// numClasses is len(classSizes): 8 classes up to 64 bytes, then 8 per doubling up to 64 KiB.
const numClasses = 8 + 8*10

func init() {
	if len(classSizes) != numClasses {
		panic("shard: slab class table out of step with numClasses")
	}
}

// sizeToClass maps a size to the smallest class that holds it; sizes above
// maxClassSz return hugeClass.
func sizeToClass(n int) int {
	if n > maxClassSz {
		return hugeClass
	}
	if n <= 64 {
		if n <= 0 {
			return 0
		}
		return (n+7)/8 - 1
	}
	// binary search over the geometric part
	lo, hi := 8, len(classSizes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if classSizes[mid] >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func makeHandle(class, page, off int) Handle {
	return Handle(uint64(class)<<57 | uint64(page)<<32 | uint64(uint32(off)))
}

// A Handle is class (7 bits) | page (25 bits) | offset in the page (32 bits).
func (h Handle) parts() (class, page, off int) {
	return int(h >> 57), int(h>>32) & (1<<25 - 1), int(uint32(h))
}

func (h Handle) page() int { return int(h>>32) & (1<<25 - 1) }

// Alloc returns a handle to n bytes (contents unspecified).
func (s *Slab) Alloc(n int) Handle {
	c := sizeToClass(n)
	if c == hugeClass {
		b := make([]byte, n)
		s.used += int64(n)
		s.reserved += int64(n)
		if k := len(s.hugeFree); k > 0 {
			idx := s.hugeFree[k-1]
			s.hugeFree = s.hugeFree[:k-1]
			s.huge[idx] = b
			return makeHandle(hugeClass, int(idx), 0)
		}
		s.huge = append(s.huge, b)
		return makeHandle(hugeClass, len(s.huge)-1, 0)
	}
	sc := &s.classes[c]
	if sc.size == 0 {
		sc.size = classSizes[c]
	}
	s.used += int64(sc.size)
	return s.allocSlot(c, sc)
}

// allocSlot hands out a slot of class c: a free one of a page in use, else
// the next of the last page, else the first of a new page.
func (s *Slab) allocSlot(c int, sc *slabClass) Handle {
	for k := len(sc.free); k > 0; {
		k--
		h := sc.free[k]
		if p := h.page(); sc.state[p] == pageInUse {
			sc.free = sc.free[:k]
			sc.live[p]++
			return h
		}
		// A slot of a page being evacuated or released: never again.
		sc.free = sc.free[:k]
	}
	if len(sc.pages) == 0 || sc.next+sc.size > len(sc.pages[len(sc.pages)-1]) {
		if n := classPageBytes(sc.size, len(sc.pages)); n < pageSize {
			sc.pages = append(sc.pages, make([]byte, n))
			s.reserved += int64(n)
		} else {
			sc.pages = append(sc.pages, allocBig(pageSize))
			s.reserved += pageSize
		}
		sc.live = append(sc.live, 0)
		sc.state = append(sc.state, pageInUse)
		sc.next = 0
	}
	last := len(sc.pages) - 1
	h := makeHandle(c, last, sc.next)
	sc.next += sc.size
	sc.live[last]++
	return h
}

// classPageBytes is the size of the k-th page (from 0) of a class of slots
// of size bytes: 16 slots, then twice the page before, up to a full page.
//
// A page is resident once it is handed out (full pages come prefaulted), so
// a class's unused tail is at most its last page. Were every page of a busy
// class a full 2 MiB, each class in use would hold up to 2 MiB that no key
// uses: values of 64 to 4096 bytes touch some fifty classes, 100 MiB of RSS
// with next to no data, which is how a server with maxmemory at 70% of a
// 128 MiB cgroup was OOM-killed in its first second. Doubling keeps a
// class's slack under what it already holds (and the page count per class
// under twenty); pages under a full page live on the Go heap, pointer-free.
func classPageBytes(size, k int) int {
	n := size * 16
	for ; k > 0 && n < pageSize; k-- {
		n *= 2
	}
	return min(n, pageSize)
}

// Free releases an allocation of n bytes made by Alloc(n).
func (s *Slab) Free(h Handle, n int) {
	c, page, _ := h.parts()
	if c == hugeClass {
		s.used -= int64(len(s.huge[page]))
		s.reserved -= int64(len(s.huge[page]))
		s.huge[page] = nil
		s.hugeFree = append(s.hugeFree, uint32(page))
		return
	}
	sc := &s.classes[c]
	s.used -= int64(sc.size)
	sc.live[page]--
	if sc.state[page] != pageInUse {
		// Being evacuated: the slot is not reused, and the page goes
		// once its last live slot does.
		if sc.live[page] == 0 {
			s.releasePage(sc, page)
		}
		return
	}
	sc.free = append(sc.free, h)
}

// releasePage gives back an evacuated page that holds no live slot: a 2 MiB
// mapping has its memory dropped at once (bigmem.go), a smaller page is
// left to the garbage collector.
func (s *Slab) releasePage(sc *slabClass, page int) {
	b := sc.pages[page]
	s.reserved -= int64(len(b))
	s.cmp.released += int64(len(b))
	if len(b) < bigPageSize {
		s.cmp.heapReleased += int64(len(b))
	}
	freeBig(b)
	sc.pages[page] = nil
	sc.state[page] = pageReleased
	sc.nevac--
}

// Bytes returns the n bytes of an allocation. The slice aliases slab memory:
// it is valid until the allocation is freed or moved (compaction moves live
// allocations between requests, compact.go), and writes go to the slab.
func (s *Slab) Bytes(h Handle, n int) []byte {
	c, page, off := h.parts()
	if c == hugeClass {
		return s.huge[page][:n:n]
	}
	p := s.classes[c].pages[page]
	return p[off : off+n : off+n]
}

// Cap returns how many bytes the allocation behind h can hold.
func (s *Slab) Cap(h Handle, n int) int {
	c, page, _ := h.parts()
	if c == hugeClass {
		return len(s.huge[page])
	}
	return classSizes[c]
}

// Used is the number of bytes in live allocations (slot sizes).
func (s *Slab) Used() int64 { return s.used }

// Reserved is the number of bytes of pages taken from the Go heap.
func (s *Slab) Reserved() int64 { return s.reserved }

// HeapReleased is the number of bytes of pages compaction has released to
// the Go heap, ever (smaller pages: the collector frees them; full ones go
// back to the OS at once).
func (s *Slab) HeapReleased() int64 { return s.cmp.heapReleased }

// Reset frees everything at once (FLUSHALL).
func (s *Slab) Reset() {
	for c := range s.classes {
		for _, p := range s.classes[c].pages {
			freeBig(p)
		}
	}
	*s = Slab{}
}
