package shard

import (
	"bytes"
	"math"
	"sort"
	"strconv"
)

// Sorted set values (Redis 7.0 t_zset.c): the two encodings and the
// operations the commands in zset.go are written against.
//
// A zset is ordered by (score, member), members compared byte-wise, as
// Redis's skiplist orders it. Two forms, named as OBJECT ENCODING names them:
//
//   - listpack: while the set has at most zset-max-listpack-entries members,
//     each at most zset-max-listpack-value bytes. Parallel sorted slices: the
//     scores, the end offset of each member, and the members' bytes back to
//     back. Three pointers in all; inserts shift (the set is small).
//   - skiplist: past those limits (and never back, as in Redis, except that a
//     freshly built STORE result picks its form by size). An element array,
//     an order-statistic B+ tree over it (zbtree.go: int32 element ids in
//     leaves of up to 32, subtree counts for O(log n) rank and range), and a
//     chained hash table of the same elements for member lookup and ZSCAN.
//     Elements live in chunks of 256, tree nodes in chunks of 64, members'
//     bytes in an arena of chunks up to 64 KB: a million members hold a few
//     thousand pointers, so the garbage collector has next to nothing to
//     walk, and growing never copies what is there (no garbage per insert,
//     no transient doubling).
type zset struct {
	// listpack form, used while sl is nil
	scores []float64
	ends   []uint32 // ends[i]: end of member i in data
	data   []byte

	sl *zskip
}

// zel is one element of the skiplist form (32 bytes); chunks of 256 of
// them (8 KB) hold the elements.
type zel struct {
	score      float64
	chunk, off uint32 // member bytes: zskip.chunks[chunk][off:off+mlen]
	mlen       uint32
	hash       uint32 // low bits of the member's hash
	hnext      int32  // next in the hash chain; next free element when free
	used       bool   // false for a free element
}

// zskip is the skiplist form (Redis's name): the elements, a hash table
// from member to element, and a B+ tree in (score, member) order
// (zbtree.go).
type zskip struct {
	el   []*[zelChunk]zel // element t is el[t>>zelChunkBits][t&(zelChunk-1)]
	nel  int32            // element slots handed out
	free int32            // head of the free-element list

	// The B+ tree (zbtree.go): nodes in chunks, a free list of nodes, how
	// many are in use, and the root (-1 when empty).
	nodes                  []*[btChunk]btNode
	nnodes, nfree, nodesIn int32
	root                   int32

	// The member arena: chunks never move; small members are appended to
	// chunks[cur], longer ones get a chunk of their own.
	chunks   [][]byte
	cur      int
	live     int // bytes of live members
	dead     int // bytes no live member uses (removed members, chunk tails)
	arenaCap int // bytes allocated for chunks

	buckets []int32
	n       int
}

const (
	zsetMinBuckets = 4
	zelChunkBits   = 8
	zelChunk       = 1 << zelChunkBits
	zArenaMin      = 256
	zArenaMax      = 64 << 10 // largest shared chunk
	zArenaOwn      = 16 << 10 // members longer than this get a chunk of their own
)

func newZskip(hint int) *zskip {
	nb := zsetMinBuckets
	for nb < hint {
		nb <<= 1
	}
	s := &zskip{free: -1, nfree: -1, root: -1, cur: -1, buckets: make([]int32, nb)}
	for i := range s.buckets {
		s.buckets[i] = -1
	}
	return s
}

// e returns element t.
func (s *zskip) e(t int32) *zel { return &s.el[t>>zelChunkBits][t&(zelChunk-1)] }

// newElem hands out an element slot: a freed one, or the next one.
func (s *zskip) newElem() int32 {
	if t := s.free; t >= 0 {
		s.free = s.e(t).hnext
		return t
	}
	t := s.nel
	if int(t>>zelChunkBits) == len(s.el) {
		s.el = append(s.el, new([zelChunk]zel))
	}
	s.nel++
	return t
}

// store copies a member into the arena and returns where it is.
func (s *zskip) store(m []byte) (chunk, off uint32) {
	n := len(m)
	if n == 0 {
		return 0, 0
	}
	if n > zArenaOwn {
		s.chunks = append(s.chunks, bytes.Clone(m))
		s.arenaCap += n
		return uint32(len(s.chunks) - 1), 0
	}
	if s.cur < 0 || len(s.chunks[s.cur])+n > cap(s.chunks[s.cur]) {
		size := zArenaMin
		if s.cur >= 0 {
			old := s.chunks[s.cur]
			s.dead += cap(old) - len(old)
			size = min(2*cap(old), zArenaMax)
		}
		for size < n {
			size *= 2
		}
		s.chunks = append(s.chunks, make([]byte, 0, size))
		s.cur = len(s.chunks) - 1
		s.arenaCap += size
	}
	c := &s.chunks[s.cur]
	off = uint32(len(*c))
	*c = append(*c, m...)
	return uint32(s.cur), off
}

// Len is the number of members.
func (z *zset) Len() int {
	if z.sl != nil {
		return z.sl.n
	}
	return len(z.scores)
}

// encoding is the OBJECT ENCODING code of the current form.
func (z *zset) encoding() uint8 {
	if z.sl != nil {
		return EncSkiplist
	}
	return EncListpack
}

func (z *zset) lpMember(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = z.ends[i-1]
	}
	return z.data[start:z.ends[i]:z.ends[i]]
}

// at returns the member and score at rank i (0-based, ascending).
func (z *zset) at(i int) ([]byte, float64) {
	if z.sl != nil {
		e := z.sl.byRank(i)
		return z.sl.mem(e), z.sl.e(e).score
	}
	return z.lpMember(i), z.scores[i]
}

// find returns a member's score.
func (z *zset) find(m []byte) (float64, bool) {
	if z.sl != nil {
		if e := z.sl.find(m); e >= 0 {
			return z.sl.e(e).score, true
		}
		return 0, false
	}
	if i := z.lpFind(m); i >= 0 {
		return z.scores[i], true
	}
	return 0, false
}

func (z *zset) lpFind(m []byte) int {
	start := uint32(0)
	for i, end := range z.ends {
		if int(end-start) == len(m) && string(z.data[start:end]) == string(m) {
			return i
		}
		start = end
	}
	return -1
}

// rank returns a member's 0-based ascending rank.
func (z *zset) rank(m []byte) (int, bool) {
	if z.sl != nil {
		e := z.sl.find(m)
		if e < 0 {
			return 0, false
		}
		return z.sl.countLess(z.sl.e(e).score, z.sl.mem(e)), true
	}
	i := z.lpFind(m)
	return i, i >= 0
}

// search returns the first rank whose element satisfies pred, which must be
// false for a prefix of the order and true for the rest (n if none).
func (z *zset) search(pred func(score float64, m []byte) bool) int {
	if z.sl != nil {
		return z.sl.search(pred)
	}
	return sort.Search(len(z.scores), func(i int) bool { return pred(z.scores[i], z.lpMember(i)) })
}

// fits reports whether the listpack form may hold n members of which the
// longest has maxlen bytes.
func zsetFits(cfg *Tunables, n, maxlen int) bool {
	return int64(n) <= cfg.ZsetMaxListpackEntries.Load() && int64(maxlen) <= cfg.ZsetMaxListpackValue.Load()
}

// insert adds a member that is not in the set, converting the listpack form
// to a skiplist first when the new member would break its limits (Redis's
// zsetAdd). The member's bytes are copied.
func (z *zset) insert(cfg *Tunables, m []byte, score float64) {
	if z.sl == nil && !zsetFits(cfg, len(z.scores)+1, len(m)) {
		z.convert()
	}
	if z.sl != nil {
		z.sl.insert(m, score)
		return
	}
	z.lpInsert(m, score)
}

func (z *zset) lpInsert(m []byte, score float64) {
	if score == 0 {
		score = 0 // a listpack stores -0 as the integer 0
	}
	i := sort.Search(len(z.scores), func(i int) bool {
		s := z.scores[i]
		return s > score || s == score && bytes.Compare(z.lpMember(i), m) > 0
	})
	start := uint32(0)
	if i > 0 {
		start = z.ends[i-1]
	}
	z.scores = append(z.scores, 0)
	copy(z.scores[i+1:], z.scores[i:])
	z.scores[i] = score
	z.ends = append(z.ends, 0)
	copy(z.ends[i+1:], z.ends[i:])
	z.ends[i] = start
	for j := i; j < len(z.ends); j++ {
		z.ends[j] += uint32(len(m))
	}
	z.data = append(z.data, m...) // grow by len(m)
	copy(z.data[int(start)+len(m):], z.data[start:len(z.data)-len(m)])
	copy(z.data[start:], m)
}

// lpDeleteRange removes ranks [i, j) of the listpack form.
func (z *zset) lpDeleteRange(i, j int) {
	if i >= j {
		return
	}
	start := uint32(0)
	if i > 0 {
		start = z.ends[i-1]
	}
	end := z.ends[j-1]
	gone := end - start
	z.data = append(z.data[:start], z.data[end:]...)
	z.scores = append(z.scores[:i], z.scores[j:]...)
	z.ends = append(z.ends[:i], z.ends[j:]...)
	for k := i; k < len(z.ends); k++ {
		z.ends[k] -= gone
	}
}

// remove deletes a member and reports whether it was there.
func (z *zset) remove(m []byte) bool {
	if z.sl != nil {
		e := z.sl.find(m)
		if e < 0 {
			return false
		}
		z.sl.remove(e)
		return true
	}
	i := z.lpFind(m)
	if i < 0 {
		return false
	}
	z.lpDeleteRange(i, i+1)
	return true
}

// setScore changes the score of a member that is in the set.
func (z *zset) setScore(m []byte, score float64) {
	if z.sl != nil {
		z.sl.setScore(z.sl.find(m), score)
		return
	}
	i := z.lpFind(m)
	m = append([]byte(nil), m...) // m may alias data
	z.lpDeleteRange(i, i+1)
	z.lpInsert(m, score)
}

// removeRange deletes ranks start..end (inclusive, in range).
func (z *zset) removeRange(start, end int) {
	if z.sl != nil {
		z.sl.removeRange(start, end)
		return
	}
	z.lpDeleteRange(start, end+1)
}

// convert turns the listpack form into the skiplist form.
func (z *zset) convert() {
	s := newZskip(len(z.scores))
	for i := range z.scores {
		s.insert(z.lpMember(i), z.scores[i])
	}
	z.scores, z.ends, z.data = nil, nil, nil
	z.sl = s
}

// newZsetSorted builds a sorted set from members in ascending (score,
// member) order, in the form its size calls for (Redis's choice for STORE
// results: zsetConvertToListpackIfNeeded).
func newZsetSorted(cfg *Tunables, members [][]byte, scores []float64) *zset {
	maxlen, total := 0, 0
	for _, m := range members {
		maxlen = max(maxlen, len(m))
		total += len(m)
	}
	z := &zset{}
	if !zsetFits(cfg, len(members), maxlen) {
		z.sl = newZskip(len(members))
		for i, m := range members {
			z.sl.insert(m, scores[i])
		}
		return z
	}
	z.scores = make([]float64, len(members))
	z.ends = make([]uint32, len(members))
	z.data = make([]byte, 0, total)
	for i, m := range members {
		s := scores[i]
		if s == 0 {
			s = 0
		}
		z.scores[i] = s
		z.data = append(z.data, m...)
		z.ends[i] = uint32(len(z.data))
	}
	return z
}

// zIter walks a sorted set from a rank, up or down. It is a value, so a
// range costs no allocation.
type zIter struct {
	z    *zset
	i    int // listpack: the next rank; skiplist: the next entry in leaf
	rev  bool
	leaf int32 // skiplist: the leaf of the next element
}

// iter returns an iterator at rank i (which must be in range) going up, or
// down when rev.
func (z *zset) iter(i int, rev bool) zIter {
	it := zIter{z: z, i: i, rev: rev}
	if z.sl != nil {
		it.leaf, it.i = z.sl.leafAt(i)
	}
	return it
}

// nextRef is next without the member: a reference to it (memberAt) and the
// score. A scan that looks at scores first (GEOSEARCH) reads the member
// only of the elements it keeps.
func (it *zIter) nextRef() (int32, float64) {
	z := it.z
	if z.sl == nil {
		i := it.i
		if it.rev {
			it.i--
		} else {
			it.i++
		}
		return int32(i), z.scores[i]
	}
	s := z.sl
	nd := s.node(it.leaf)
	t, score := nd.id[it.i], nd.key[it.i]
	if it.rev {
		if it.i--; it.i < 0 && nd.prev >= 0 {
			it.leaf = nd.prev
			it.i = int(s.node(it.leaf).n) - 1
		}
	} else if it.i++; it.i == int(nd.n) && nd.next >= 0 {
		it.leaf, it.i = nd.next, 0
	}
	return t, score
}

// memberAt is the member nextRef referred to.
func (z *zset) memberAt(ref int32) []byte {
	if z.sl == nil {
		return z.lpMember(int(ref))
	}
	return z.sl.mem(ref)
}

// next returns the current element and moves on; the caller knows how many
// elements remain.
func (it *zIter) next() ([]byte, float64) {
	ref, score := it.nextRef()
	return it.z.memberAt(ref), score
}

// Object interface.

// Copy returns a deep copy in the same form (COPY).
func (z *zset) Copy() Object {
	n := &zset{}
	if z.sl == nil {
		n.scores = append([]float64(nil), z.scores...)
		n.ends = append([]uint32(nil), z.ends...)
		n.data = append([]byte(nil), z.data...)
		return n
	}
	s := *z.sl
	s.el = make([]*[zelChunk]zel, len(z.sl.el))
	for i, c := range z.sl.el {
		cc := *c
		s.el[i] = &cc
	}
	s.chunks = make([][]byte, len(z.sl.chunks))
	for i, c := range z.sl.chunks {
		if c != nil {
			s.chunks[i] = append(make([]byte, 0, cap(c)), c...)
		}
	}
	s.buckets = append([]int32(nil), z.sl.buckets...)
	s.nodes = make([]*[btChunk]btNode, len(z.sl.nodes))
	for i, c := range z.sl.nodes {
		cc := *c
		s.nodes[i] = &cc
	}
	n.sl = &s
	return n
}

// zsetItemsPerCmd is Redis's AOF_REWRITE_ITEMS_PER_CMD.
const zsetItemsPerCmd = 64

var wordZADD = []byte("ZADD")

// Dump returns ZADD commands of up to 64 score-member pairs; scores are
// printed with 17 significant digits, which read back to the same double.
func (z *zset) Dump(key []byte) [][][]byte {
	n := z.Len()
	if n == 0 {
		return nil
	}
	var cmds [][][]byte
	var cur [][]byte
	var text []byte // the scores of cur, back to back
	it := z.iter(0, false)
	for i := 0; i < n; i++ {
		if cur == nil {
			k := min(n-i, zsetItemsPerCmd)
			cur = make([][]byte, 0, 2+2*k)
			cur = append(cur, wordZADD, key)
			text = make([]byte, 0, 24*k) // "%.17g" takes at most 24 bytes
		}
		m, s := it.next()
		start := len(text)
		text = appendScore(text, s)
		cur = append(cur, text[start:len(text):len(text)], m)
		if len(cur) == cap(cur) {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	return cmds
}

// Mem is the approximate size in bytes.
func (z *zset) Mem() int {
	if z.sl == nil {
		return 64 + 12*len(z.scores) + len(z.data)
	}
	s := z.sl
	return 128 + (32*zelChunk+8)*len(s.el) + s.arenaCap + 24*len(s.chunks) + 4*len(s.buckets) + btNodeSize*btChunk*len(s.nodes)
}

// appendScore appends a score as Redis's "%.17g" prints it ("inf", "-inf").
func appendScore(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// appendD2string appends a score as Redis's d2string prints it (how a
// listpack stores it, so how ZSCAN of a small set shows it): integers in
// (-2^62, 2^62) in decimal, "-0", otherwise "%.17g".
func appendD2string(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	case f >= -float64(math.MaxInt64/2) && f <= float64(math.MaxInt64/2) && f == math.Trunc(f):
		return strconv.AppendInt(b, int64(f), 10)
	}
	return appendScore(b, f)
}

// Skiplist form.

func (s *zskip) mem(t int32) []byte {
	e := s.e(t)
	if e.mlen == 0 {
		return nil
	}
	return s.chunks[e.chunk][e.off : e.off+e.mlen : e.off+e.mlen]
}

func (s *zskip) find(m []byte) int32 {
	h := uint32(Hash(m))
	for t := s.buckets[h&uint32(len(s.buckets)-1)]; t >= 0; t = s.e(t).hnext {
		if e := s.e(t); e.hash == h && int(e.mlen) == len(m) && string(s.mem(t)) == string(m) {
			return t
		}
	}
	return -1
}

func (s *zskip) insert(m []byte, score float64) {
	t := s.newElem()
	chunk, off := s.store(m)
	s.live += len(m)
	h := uint32(Hash(m))
	*s.e(t) = zel{score: score, chunk: chunk, off: off, mlen: uint32(len(m)), hash: h, used: true}
	s.n++
	if s.n > len(s.buckets) {
		s.rehash(len(s.buckets) * 2)
	}
	b := h & uint32(len(s.buckets)-1)
	s.e(t).hnext = s.buckets[b]
	s.buckets[b] = t
	s.link(t)
}

func (s *zskip) setScore(t int32, score float64) {
	s.detach(t)
	s.e(t).score = score
	s.link(t)
}

// unhash takes element t out of the hash table and frees it.
func (s *zskip) unhash(t int32) {
	e := s.e(t)
	p := &s.buckets[e.hash&uint32(len(s.buckets)-1)]
	for *p != t {
		p = &s.e(*p).hnext
	}
	*p = e.hnext
	s.live -= int(e.mlen)
	if e.mlen > zArenaOwn {
		s.chunks[e.chunk] = nil // its own chunk: give it back now
		s.arenaCap -= int(e.mlen)
		s.dead += 24
	} else {
		s.dead += int(e.mlen)
	}
	*e = zel{hnext: s.free}
	s.free = t
	s.n--
}

func (s *zskip) remove(t int32) {
	s.detach(t)
	s.unhash(t)
	s.tidy()
}

// removeRange deletes ranks start..end inclusive.
func (s *zskip) removeRange(start, end int) {
	for r := start; r <= end; r++ {
		s.unhash(s.detachRank(start))
	}
	s.tidy()
}

// tidy shrinks the hash table when it is less than 10% full (Redis's
// htNeedsResize) and compacts the member arena when most of it is dead.
func (s *zskip) tidy() {
	if len(s.buckets) > zsetMinBuckets && s.n*10 < len(s.buckets) {
		nb := zsetMinBuckets
		for nb < s.n {
			nb <<= 1
		}
		s.rehash(nb)
	}
	if s.n == 0 {
		s.el, s.nel, s.free = s.el[:min(len(s.el), 1)], 0, -1
		s.chunks, s.cur, s.live, s.dead, s.arenaCap = nil, -1, 0, 0, 0
		s.freeTreeNodes()
		return
	}
	if s.dead > 4096 && s.dead > s.live {
		s.compact()
	}
}

// compact copies the live members into a fresh arena.
func (s *zskip) compact() {
	old := s.chunks
	s.chunks, s.cur, s.dead, s.arenaCap = nil, -1, 0, 0
	for t := int32(0); t < s.nel; t++ {
		{
			e := s.e(t)
			if !e.used || e.mlen == 0 {
				continue
			}
			if e.mlen > zArenaOwn {
				s.chunks = append(s.chunks, old[e.chunk])
				s.arenaCap += int(e.mlen)
				e.chunk = uint32(len(s.chunks) - 1)
				continue
			}
			e.chunk, e.off = s.store(old[e.chunk][e.off : e.off+e.mlen])
		}
	}
}

// rehash moves every element into a table of nb buckets (a power of two).
func (s *zskip) rehash(nb int) {
	b := make([]int32, nb)
	for i := range b {
		b[i] = -1
	}
	mask := uint32(nb - 1)
	for _, head := range s.buckets {
		for t := head; t >= 0; {
			e := s.e(t)
			next := e.hnext
			e.hnext = b[e.hash&mask]
			b[e.hash&mask] = t
			t = next
		}
	}
	s.buckets = b
}

// scan visits the buckets from cursor v with Redis's reverse-binary cursor
// (dictScan over a single table): every element present for a whole scan is
// returned at least once, even when the table grows or shrinks between
// calls. It returns the next cursor (0 when done).
func (s *zskip) scan(v uint64, fn func(t int32)) uint64 {
	m := uint64(len(s.buckets) - 1)
	for t := s.buckets[v&m]; t >= 0; t = s.e(t).hnext {
		fn(t)
	}
	v |= ^m
	v = reverseBits(v)
	v++
	return reverseBits(v)
}

func reverseBits(v uint64) uint64 {
	v = (v >> 1 & 0x5555555555555555) | (v&0x5555555555555555)<<1
	v = (v >> 2 & 0x3333333333333333) | (v&0x3333333333333333)<<2
	v = (v >> 4 & 0x0F0F0F0F0F0F0F0F) | (v&0x0F0F0F0F0F0F0F0F)<<4
	v = (v >> 8 & 0x00FF00FF00FF00FF) | (v&0x00FF00FF00FF00FF)<<8
	v = (v >> 16 & 0x0000FFFF0000FFFF) | (v&0x0000FFFF0000FFFF)<<16
	return v>>32 | v<<32
}
