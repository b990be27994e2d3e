package shard

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Hash commands (Redis 7.0 t_hash.c) and the hash value.
//
// A hash has two forms, named as OBJECT ENCODING names Redis's:
//
//   - listpack: one byte slice of a field count and the pairs in insertion
//     order, each string a uvarint length and its bytes (field, value,
//     field, value, ...). Lookups are linear, as in Redis; it holds one
//     pointer however many fields there are. A hash starts so and stays so
//     while it has at most hash-max-listpack-entries fields, none of whose
//     fields or values is longer than hash-max-listpack-value bytes.
//   - hashtable: a chained hash table whose entries (a link and the same
//     pair encoding) live in byte chunks, linked by integer references, so
//     the garbage collector marks one pointer per chunk of up to 64 KiB
//     however many fields there are. See hashTable.
//
// A hash converts from listpack to hashtable once a limit is exceeded and
// never back, as in Redis.

var hashCommands = []Command{
	{Name: "hset", Run: cmdHset},
	{Name: "hsetnx", Run: cmdHsetnx},
	{Name: "hget", Run: cmdHget},
	{Name: "hmset", Run: cmdHset},
	{Name: "hmget", Run: cmdHmget},
	{Name: "hdel", Run: cmdHdel},
	{Name: "hlen", Run: cmdHlen},
	{Name: "hstrlen", Run: cmdHstrlen},
	{Name: "hkeys", Run: cmdHkeys},
	{Name: "hvals", Run: cmdHvals},
	{Name: "hgetall", Run: cmdHgetall},
	{Name: "hexists", Run: cmdHexists},
	{Name: "hincrby", Run: cmdHincrby},
	{Name: "hincrbyfloat", Run: cmdHincrbyfloat},
	{Name: "hrandfield", Run: cmdHrandfield},
	{Name: "hscan", Run: cmdHscan},
}

const (
	errHashNotInt      = "ERR hash value is not an integer"
	errHashNotFloat    = "ERR hash value is not a float"
	errNaNOrInfValue   = "ERR value is NaN or Infinity"
	errValueOutOfRange = "ERR value is out of range"
	// errHrandfieldRange is getRangeLongFromObjectOrReply's message for
	// HRANDFIELD's count, which must lie in [-LONG_MAX, LONG_MAX].
	errHrandfieldRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)

var wordHSET = []byte("HSET")
var wordHMSET = []byte("HMSET")

// hashDumpPairs is how many field-value pairs one HMSET of an AOF rewrite
// carries (Redis's AOF_REWRITE_ITEMS_PER_CMD).
const hashDumpPairs = 64

// hashRandomLimit bounds HRANDFIELD's count with repetitions: Redis would
// try to build any reply (and run out of memory); we refuse one of more
// than 2^32 elements.
const hashRandomLimit = 1 << 32

// hashObj is a hash value (see the top of this file for its two forms).
//
// The struct is two words and a slice header (32 bytes, a size class of
// its own): a listpack keeps its field count in its first four bytes.
type hashObj struct {
	lp []byte     // listpack form: count, then the pairs in insertion order
	ht *hashTable // hashtable form; nil while the hash is a listpack
}

// lpHdr is the listpack's header: its field count, little-endian.
const lpHdr = 4

// hashStructMem is what a hashObj costs beside its bytes: the struct and
// its object-table entry.
const hashStructMem = 32 + 16

// Len is the number of fields.
func (h *hashObj) Len() int {
	if h.ht != nil {
		return h.ht.n
	}
	if len(h.lp) < lpHdr {
		return 0
	}
	return int(binary.LittleEndian.Uint32(h.lp))
}

func (h *hashObj) setLpLen(n int) { binary.LittleEndian.PutUint32(h.lp, uint32(n)) }

// Encoding is the OBJECT ENCODING code of the hash's form.
func (h *hashObj) Encoding() uint8 {
	if h.ht != nil {
		return EncHashtable
	}
	return EncListpack
}

// Mem is the approximate size in bytes.
func (h *hashObj) Mem() int {
	if h.ht != nil {
		return hashStructMem + h.ht.mem()
	}
	return hashStructMem + cap(h.lp)
}

// Copy returns a deep copy (COPY).
func (h *hashObj) Copy() Object {
	n := &hashObj{}
	if h.ht != nil {
		n.ht = h.ht.clone()
	} else {
		n.lp = append(make([]byte, 0, len(h.lp)), h.lp...)
	}
	return n
}

// Dump returns HMSET commands of at most 64 pairs that recreate the hash,
// as Redis's AOF rewrite does. The field and value slices alias the hash:
// they are valid until it changes.
func (h *hashObj) Dump(key []byte) [][][]byte {
	var cmds [][][]byte
	var cur [][]byte
	h.each(func(f, v []byte) bool {
		if cur == nil {
			left := min(h.Len()-len(cmds)*hashDumpPairs, hashDumpPairs)
			cur = make([][]byte, 0, 2+2*left)
			cur = append(cur, wordHMSET, key)
		}
		cur = append(cur, f, v)
		if len(cur) == 2+2*hashDumpPairs {
			cmds = append(cmds, cur)
			cur = nil
		}
		return true
	})
	if cur != nil {
		cmds = append(cmds, cur)
	}
	return cmds
}

// Get returns a field's value; the slice aliases the hash.
func (h *hashObj) Get(field []byte) ([]byte, bool) {
	if h.ht != nil {
		return h.ht.get(field)
	}
	_, voff, _, ok := lpFind(h.lp, field)
	if !ok {
		return nil, false
	}
	v, _ := pairStr(h.lp, voff)
	return v, true
}

// hashLimits are the listpack thresholds in force.
type hashLimits struct{ entries, value int }

func limitsOf(db *DB) hashLimits {
	cfg := db.sh.Cfg
	return hashLimits{
		entries: int(min(max(cfg.HashMaxListpackEntries.Load(), 0), math.MaxInt32)),
		value:   int(min(max(cfg.HashMaxListpackValue.Load(), 0), math.MaxInt32)),
	}
}

// lpMaxSafe is the largest listpack Redis builds (lpSafeToAdd's 1 GiB).
const lpMaxSafe = 1 << 30

// tryConversion is Redis's hashTypeTryConversion: before a write of the
// given strings, a listpack converts when one of them is longer than
// hash-max-listpack-value or the listpack would outgrow 1 GiB.
func (h *hashObj) tryConversion(lim hashLimits, args [][]byte) {
	if h.ht != nil {
		return
	}
	sum := 0
	for _, a := range args {
		if len(a) > lim.value {
			h.convert()
			return
		}
		sum += len(a)
	}
	if len(h.lp)+sum > lpMaxSafe {
		h.convert()
	}
}

// reserve makes room in a listpack for the pairs of args at once, so that
// an HSET of many fields reallocates once.
func (h *hashObj) reserve(args [][]byte) {
	if h.ht != nil || len(args) < 4 {
		return
	}
	n := 0
	if h.lp == nil {
		n = lpHdr
	}
	for j := 0; j+1 < len(args); j += 2 {
		n += pairLen(args[j], args[j+1])
	}
	if h.lp == nil {
		h.lp = growBytes(nil, n)[:lpHdr]
	} else {
		h.lp = growBytes(h.lp, n)
	}
}

// Set sets field to val and reports whether the field is new; a listpack
// converts when the pair or the field count exceeds the limits (Redis's
// hashTypeSet).
func (h *hashObj) Set(lim hashLimits, field, val []byte) bool {
	if h.ht == nil && (len(field) > lim.value || len(val) > lim.value) {
		h.convert()
	}
	if h.ht != nil {
		return h.ht.set(field, val)
	}
	_, voff, end, ok := lpFind(h.lp, field)
	if ok {
		h.lp = spliceStr(h.lp, voff, end, val)
		return false
	}
	if h.lp == nil {
		h.lp = growBytes(nil, lpHdr+pairLen(field, val))[:lpHdr]
	} else {
		h.lp = growBytes(h.lp, pairLen(field, val))
	}
	h.lp = appendPair(h.lp, field, val)
	n := h.Len() + 1
	h.setLpLen(n)
	if n > lim.entries {
		h.convert()
	}
	return true
}

// Delete removes a field and reports whether it was there.
func (h *hashObj) Delete(field []byte) bool {
	if h.ht != nil {
		if !h.ht.del(field) {
			return false
		}
		if !h.ht.maybeShrink() {
			h.ht.maybeCompact()
		}
		return true
	}
	foff, _, end, ok := lpFind(h.lp, field)
	if !ok {
		return false
	}
	h.lp = append(h.lp[:foff], h.lp[end:]...)
	h.setLpLen(h.Len() - 1)
	if cap(h.lp) > 64 && len(h.lp) < cap(h.lp)/2 {
		h.lp = append(growBytes(nil, len(h.lp)), h.lp...)
	}
	return true
}

// convert turns a listpack into a hashtable.
func (h *hashObj) convert() {
	if h.ht != nil {
		return
	}
	n := h.Len()
	var pairs []byte
	if n > 0 {
		pairs = h.lp[lpHdr:]
	}
	t := newHashTable(tableSizeFor(n), len(pairs)+linkLen*n)
	lpEach(pairs, func(f, v []byte) bool {
		t.insertNew(f, v)
		return true
	})
	t.chain = t.longestChain()
	h.ht, h.lp = t, nil
}

// each calls fn with every pair (slices aliasing the hash) until it
// returns false.
func (h *hashObj) each(fn func(f, v []byte) bool) {
	if h.ht != nil {
		h.ht.each(fn)
		return
	}
	if len(h.lp) > lpHdr {
		lpEach(h.lp[lpHdr:], fn)
	}
}

// random returns a field and its value chosen uniformly.
func (h *hashObj) random() (f, v []byte) {
	if h.ht != nil {
		return h.ht.random()
	}
	k := rand.IntN(h.Len())
	off := lpHdr
	for ; k > 0; k-- {
		off = pairEnd(h.lp, off)
	}
	f, off = pairStr(h.lp, off)
	v, _ = pairStr(h.lp, off)
	return f, v
}

// pairs returns every pair as slices aliasing the hash.
func (h *hashObj) pairs() [][2][]byte {
	ps := make([][2][]byte, 0, h.Len())
	h.each(func(f, v []byte) bool {
		ps = append(ps, [2][]byte{f, v})
		return true
	})
	return ps
}

// Encoding of strings in the listpack and the table's chunks: a uvarint
// length, then the bytes. A pair is a field string then a value string.

func strLen(s []byte) int {
	n := len(s)
	switch {
	case n < 1<<7:
		return 1 + n
	case n < 1<<14:
		return 2 + n
	case n < 1<<21:
		return 3 + n
	case n < 1<<28:
		return 4 + n
	}
	return binary.MaxVarintLen64 - bits.LeadingZeros64(uint64(n))/7 + n
}

func pairLen(f, v []byte) int { return strLen(f) + strLen(v) }

func appendStr(dst, s []byte) []byte {
	if len(s) < 1<<7 {
		dst = append(dst, byte(len(s)))
	} else {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
	}
	return append(dst, s...)
}

func appendPair(dst, f, v []byte) []byte { return appendStr(appendStr(dst, f), v) }

// pairStr decodes the string at off and returns it and the offset after it.
func pairStr(b []byte, off int) ([]byte, int) {
	n := int(b[off])
	off++
	if n >= 1<<7 {
		u, k := binary.Uvarint(b[off-1:])
		n = int(u)
		off += k - 1
	}
	return b[off : off+n], off + n
}

// pairEnd returns the offset after the pair at off.
func pairEnd(b []byte, off int) int {
	_, off = pairStr(b, off)
	_, off = pairStr(b, off)
	return off
}

// growBytes makes room for n more bytes in a listpack. Up to 32 KiB the new
// capacity is the Go allocator's size class for the need, so that no
// allocated byte is out of reach and a listpack is no bigger than Redis's
// (which reallocs to the exact size); beyond, an eighth is left spare.
func growBytes(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	need := len(b) + n
	c := need + need/8
	if need <= goSizeClasses[len(goSizeClasses)-1] {
		i, _ := slices.BinarySearch(goSizeClasses, need)
		c = goSizeClasses[i]
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// goSizeClasses are the Go runtime's small-object size classes
// (runtime/sizeclasses.go).
var goSizeClasses = []int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240,
	10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// spliceStr replaces the string in b[off:end] by s and returns b.
func spliceStr(b []byte, off, end int, s []byte) []byte {
	old := end - off
	nl := strLen(s)
	if nl != old {
		tail := len(b) - end
		if nl > old {
			b = growBytes(b, nl-old)
		}
		b = b[:len(b)+nl-old]
		copy(b[off+nl:], b[off+old:off+old+tail])
	}
	appendStr(b[off:off], s)
	return b
}

// lpFind finds field in a listpack; it returns the offsets of the pair,
// of its value, and of its end.
func lpFind(b, field []byte) (foff, voff, end int, ok bool) {
	// The hot loop of small hashes: lengths of one byte are decoded inline
	// and compared before the bytes.
	for off := lpHdr; off < len(b); {
		n, at := int(b[off]), off+1
		if n >= 1<<7 {
			u, k := binary.Uvarint(b[off:])
			n, at = int(u), off+k
		}
		v := at + n
		m, vat := int(b[v]), v+1
		if m >= 1<<7 {
			u, k := binary.Uvarint(b[v:])
			m, vat = int(u), v+k
		}
		next := vat + m
		if n == len(field) && string(b[at:v]) == string(field) {
			return off, v, next, true
		}
		off = next
	}
	return 0, 0, 0, false
}

func lpEach(b []byte, fn func(f, v []byte) bool) {
	for off := 0; off < len(b); {
		var f, v []byte
		f, off = pairStr(b, off)
		v, off = pairStr(b, off)
		if !fn(f, v) {
			return
		}
	}
}

// hashTable is the hashtable form, a chained hash table without Go
// pointers per element. Entries (an 8-byte link to the next entry of the
// bucket, then the pair) are appended to byte chunks and never move while
// the table grows: a power-of-two array of bucket heads holds references
// (chunk<<32 | offset, plus one so that zero is the empty chain), and
// growing the array relinks the entries in place, as Redis's rehash moves
// dictEntry pointers without copying the strings. A deleted entry, or the
// old entry of a value whose size changed, is left in its chunk as garbage;
// when garbage exceeds half the live bytes the table is rebuilt into fresh
// chunks. So inserts make no garbage at all, and the garbage collector
// sees one pointer per chunk (chunks grow to 64 KiB).
//
// As in Redis's dict, the table grows when the fields outnumber the
// buckets and shrinks when under a tenth of the buckets are used, and HSCAN
// walks the buckets in reverse-binary cursor order (dictScan), which
// returns every field present for the whole scan at least once even when
// the table is resized between calls.
type hashTable struct {
	chunks [][]byte
	heads  []uint64 // bucket chains: entry reference + 1, 0 for none
	tail   int      // the chunk being filled, -1 for none
	n      int      // entries
	live   int      // bytes of live entries
	used   int      // bytes of entries appended (live and garbage)
	size   int      // capacity of all chunks
	chain  int      // an upper bound of the entries in one chain (for random)
}

const (
	linkLen      = 8          // an entry's link to the next of its chain
	deadLink     = ^uint64(0) // the link of an entry no chain holds (garbage)
	maxChunk     = 64 << 10   // growth chunks are at most this big
	minChunk     = 256
	maxBuiltSize = 1 << 30 // a rebuild fills chunks of up to 1 GiB
)

var hashFieldSeed = maphash.MakeSeed()

func fieldHash(b []byte) uint64 { return maphash.Bytes(hashFieldSeed, b) }

// tableSizeFor is the bucket count for n fields: the next power of two,
// at least 4 (Redis's DICT_HT_INITIAL_SIZE).
func tableSizeFor(n int) int {
	s := 4
	for s < n {
		s <<= 1
	}
	return s
}

func (t *hashTable) mem() int { return 96 + t.size + 8*cap(t.heads) + 24*cap(t.chunks) }

func (t *hashTable) mask() uint64 { return uint64(len(t.heads) - 1) }

// newHashTable returns an empty table of size buckets whose first chunk
// holds bytes of entries.
func newHashTable(size, bytes int) *hashTable {
	t := &hashTable{heads: make([]uint64, size), tail: -1}
	if bytes > 0 {
		t.addChunk(min(bytes+bytes/8, maxBuiltSize))
	}
	return t
}

func (t *hashTable) addChunk(c int) {
	if c <= goSizeClasses[len(goSizeClasses)-1] {
		i, _ := slices.BinarySearch(goSizeClasses, c)
		c = goSizeClasses[i]
	}
	t.chunks = append(t.chunks, make([]byte, 0, c))
	t.tail = len(t.chunks) - 1
	t.size += c
}

// entry returns the chunk and offset of a reference (+1 form).
func (t *hashTable) entry(ref uint64) ([]byte, int) {
	ref--
	return t.chunks[ref>>32], int(uint32(ref))
}

func (t *hashTable) link(ref uint64) uint64 {
	c, off := t.entry(ref)
	return binary.LittleEndian.Uint64(c[off:])
}

func (t *hashTable) setLink(ref, next uint64) {
	c, off := t.entry(ref)
	binary.LittleEndian.PutUint64(c[off:], next)
}

// pair returns an entry's field and value, and the offset of the value.
func (t *hashTable) pair(ref uint64) (f, v []byte, c []byte, voff int) {
	c, off := t.entry(ref)
	f, voff = pairStr(c, off+linkLen)
	v, _ = pairStr(c, voff)
	return f, v, c, voff
}

// appendEntry stores a pair with the given link and returns its reference.
// Growth chunks are a quarter of the live bytes, between 256 bytes and
// 64 KiB; an entry bigger than half a chunk gets a chunk of its own.
func (t *hashTable) appendEntry(f, v []byte, next uint64) uint64 {
	need := linkLen + pairLen(f, v)
	if t.tail < 0 || cap(t.chunks[t.tail])-len(t.chunks[t.tail]) < need {
		hint := min(max(t.live/4, minChunk), maxChunk)
		if need > hint/2 {
			// A chunk of its own, keeping the tail being filled.
			tail := t.tail
			t.addChunk(need)
			if tail >= 0 {
				t.tail = tail
				return t.write(len(t.chunks)-1, f, v, next, need)
			}
		} else {
			t.addChunk(hint)
		}
	}
	return t.write(t.tail, f, v, next, need)
}

func (t *hashTable) write(ci int, f, v []byte, next uint64, need int) uint64 {
	c := t.chunks[ci]
	off := len(c)
	c = binary.LittleEndian.AppendUint64(c, next)
	t.chunks[ci] = appendPair(c, f, v)
	t.live += need
	t.used += need
	return uint64(ci)<<32 | uint64(off) + 1
}

// find returns field's bucket, the entry before it in the chain (0 if it
// is the head), its own reference (0 if absent), and the chain's length
// when absent.
func (t *hashTable) find(field []byte) (bi int, prev, ref uint64, chainLen int) {
	bi = int(fieldHash(field) & t.mask())
	for r := t.heads[bi]; r != 0; r = t.link(r) {
		c, off := t.entry(r)
		if f, _ := pairStr(c, off+linkLen); string(f) == string(field) {
			return bi, prev, r, 0
		}
		prev = r
		chainLen++
	}
	return bi, 0, 0, chainLen
}

func (t *hashTable) get(field []byte) ([]byte, bool) {
	_, _, ref, _ := t.find(field)
	if ref == 0 {
		return nil, false
	}
	_, v, _, _ := t.pair(ref)
	return v, true
}

// unlink removes an entry from its chain; its bytes become garbage.
func (t *hashTable) unlink(bi int, prev, ref uint64) {
	next := t.link(ref)
	if prev == 0 {
		t.heads[bi] = next
	} else {
		t.setLink(prev, next)
	}
	f, v, _, _ := t.pair(ref)
	t.live -= linkLen + pairLen(f, v)
	t.n--
	t.setLink(ref, deadLink)
}

// set sets field to val and reports whether it is new.
func (t *hashTable) set(field, val []byte) bool {
	bi, prev, ref, chainLen := t.find(field)
	if ref != 0 {
		_, old, c, voff := t.pair(ref)
		if strLen(old) == strLen(val) {
			appendStr(c[voff:voff], val) // same size: overwrite
			return false
		}
		t.unlink(bi, prev, ref)
		t.heads[bi] = t.appendEntry(field, val, t.heads[bi])
		t.n++
		t.maybeCompact()
		return false
	}
	// A full table grows first (Redis's _dictExpandIfNeeded).
	if t.n >= len(t.heads) {
		t.relink(tableSizeFor(t.n + 1))
		bi = int(fieldHash(field) & t.mask())
		chainLen = 0
		for r := t.heads[bi]; r != 0; r = t.link(r) {
			chainLen++
		}
	}
	t.heads[bi] = t.appendEntry(field, val, t.heads[bi])
	t.n++
	t.chain = max(t.chain, chainLen+1)
	return true
}

func (t *hashTable) del(field []byte) bool {
	bi, prev, ref, _ := t.find(field)
	if ref == 0 {
		return false
	}
	t.unlink(bi, prev, ref)
	return true
}

// relink moves every entry to a new bucket array of size buckets without
// copying any entry. It walks the chunks in order, not the chains: the
// entries are read one after another instead of each at a random place
// (HSET into a 1M-field hash spent 12% of its CPU here walking chains).
func (t *hashTable) relink(size int) {
	heads := make([]uint64, size)
	lens := make([]uint8, size) // chain lengths, for t.chain
	mask := uint64(size - 1)
	longest := uint8(1)
	for ci, c := range t.chunks {
		for off := 0; off < len(c); {
			f, voff := pairStr(c, off+linkLen)
			_, end := pairStr(c, voff)
			if binary.LittleEndian.Uint64(c[off:]) != deadLink {
				bi := fieldHash(f) & mask
				binary.LittleEndian.PutUint64(c[off:], heads[bi])
				heads[bi] = uint64(ci)<<32 | uint64(off) + 1
				if lens[bi] < 255 {
					lens[bi]++
					longest = max(longest, lens[bi])
				}
			}
			off = end
		}
	}
	t.heads = heads
	t.chain = int(longest)
	if longest == 255 {
		t.chain = t.longestChain()
	}
}

func (t *hashTable) longestChain() int {
	longest := 1
	for _, r := range t.heads {
		k := 0
		for ; r != 0; r = t.link(r) {
			k++
		}
		longest = max(longest, k)
	}
	return longest
}

// rebuilt returns a copy of the table with size buckets in fresh chunks.
func (t *hashTable) rebuilt(size int) *hashTable {
	nt := newHashTable(size, t.live)
	t.each(func(f, v []byte) bool {
		nt.insertNew(f, v)
		return true
	})
	nt.chain = nt.longestChain()
	return nt
}

// insertNew adds a field known to be absent, without growing the table.
func (t *hashTable) insertNew(f, v []byte) {
	bi := fieldHash(f) & t.mask()
	t.heads[bi] = t.appendEntry(f, v, t.heads[bi])
	t.n++
}

func (t *hashTable) clone() *hashTable { return t.rebuilt(len(t.heads)) }

// maybeCompact rebuilds the table when garbage exceeds half the live bytes.
func (t *hashTable) maybeCompact() {
	if garbage := t.used - t.live; garbage > 1024 && garbage > t.live/2 {
		*t = *t.rebuilt(len(t.heads))
	}
}

// maybeShrink shrinks the table as Redis's htNeedsResize/dictResize do:
// when fewer than a tenth of more than 4 buckets are used, to the next
// power of two of the fields (compacting the chunks on the way).
func (t *hashTable) maybeShrink() bool {
	if len(t.heads) > 4 && t.n*100/len(t.heads) < 10 {
		*t = *t.rebuilt(tableSizeFor(t.n))
		return true
	}
	return false
}

// eachChain calls fn with the pairs of one chain until it returns false.
func (t *hashTable) eachChain(r uint64, fn func(f, v []byte) bool) bool {
	for ; r != 0; r = t.link(r) {
		f, v, _, _ := t.pair(r)
		if !fn(f, v) {
			return false
		}
	}
	return true
}

func (t *hashTable) each(fn func(f, v []byte) bool) {
	for _, r := range t.heads {
		if r != 0 && !t.eachChain(r, fn) {
			return
		}
	}
}

// random returns a pair chosen uniformly: a bucket and a place in its
// chain up to the longest chain are drawn until the place holds an entry
// (rejection sampling, so long chains are not favoured as in a plain
// bucket draw).
func (t *hashTable) random() (f, v []byte) {
	for {
		r := t.heads[rand.IntN(len(t.heads))]
		for j := rand.IntN(t.chain); j > 0 && r != 0; j-- {
			r = t.link(r)
		}
		if r != 0 {
			f, v, _, _ = t.pair(r)
			return f, v
		}
	}
}

// scan calls fn with the pairs of the bucket cursor names and returns the
// next cursor (0 when the walk is complete): Redis's dictScan on one table,
// which increments the cursor's reversed bits so that a walk begun before a
// resize still visits every bucket's elements of the new size.
func (t *hashTable) scan(cursor uint64, fn func(f, v []byte)) uint64 {
	mask := t.mask()
	t.eachChain(t.heads[cursor&mask], func(f, v []byte) bool {
		fn(f, v)
		return true
	})
	cursor |= ^mask
	cursor = bits.Reverse64(cursor)
	cursor++
	return bits.Reverse64(cursor)
}

// Commands.

// hashRead looks key up for a read; ok is false (and WRONGTYPE replied)
// when it holds another type; h is nil when it is missing.
func hashRead(c *Ctx, db *DB, key []byte) (h *hashObj, ok bool) {
	slot := db.Read(key)
	if slot < 0 {
		return nil, true
	}
	if db.Type(slot) != TypeHash {
		c.Err(ErrWrongType)
		return nil, false
	}
	return db.Obj(slot).(*hashObj), true
}

// hashWrite looks key up for a write, creating an empty hash when it is
// missing (Redis's hashTypeLookupWriteOrCreate). The caller must put at
// least one field in a created hash and call hashDone after its changes.
func hashWrite(c *Ctx, db *DB, key []byte) (h *hashObj, slot int32, ok bool) {
	slot = db.Write(key)
	if slot < 0 {
		h = &hashObj{}
		return h, db.SetObj(key, TypeHash, EncListpack, h), true
	}
	if db.Type(slot) != TypeHash {
		c.Err(ErrWrongType)
		return nil, -1, false
	}
	db.Modify(slot)
	return db.Obj(slot).(*hashObj), slot, true
}

// hashDone records the hash's encoding after a change.
func hashDone(db *DB, slot int32, h *hashObj) { db.SetEncoding(slot, h.Encoding()) }

// HSET key field value [field value ...], and HMSET, which replies +OK.
func cmdHset(c *Ctx, argv [][]byte) {
	if len(argv)%2 == 1 {
		c.Err(errArity(string(lowerASCII(argv[0]))))
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	h, slot, ok := hashWrite(c, db, key)
	if !ok {
		return
	}
	lim := limitsOf(db)
	h.tryConversion(lim, argv[2:])
	h.reserve(argv[2:])
	created := 0
	for j := 2; j < len(argv); j += 2 {
		if h.Set(lim, argv[j], argv[j+1]) {
			created++
		}
	}
	hashDone(db, slot, h)
	if argv[0][1] == 's' || argv[0][1] == 'S' {
		c.Int(int64(created))
	} else {
		c.OK()
	}
	db.Notify(NotifyHash, "hset", key)
	c.Dirty((len(argv) - 2) / 2)
}

// lowerASCII returns b lower-cased (for error messages that name the
// command as Redis does, from its table name).
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		out[i] = ch
	}
	return out
}

func cmdHsetnx(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Write(key)
	if slot >= 0 {
		if db.Type(slot) != TypeHash {
			c.Err(ErrWrongType)
			return
		}
		if _, ok := db.Obj(slot).(*hashObj).Get(argv[2]); ok {
			c.Int(0)
			return
		}
	}
	h, slot, _ := hashWrite(c, db, key)
	lim := limitsOf(db)
	h.tryConversion(lim, argv[2:4])
	h.Set(lim, argv[2], argv[3])
	hashDone(db, slot, h)
	c.Int(1)
	db.Notify(NotifyHash, "hset", key)
	c.Dirty(1)
}

func cmdHget(c *Ctx, argv [][]byte) {
	h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if h == nil {
		c.Null()
		return
	}
	if v, ok := h.Get(argv[2]); ok {
		c.Bulk(v)
	} else {
		c.Null()
	}
}

func cmdHmget(c *Ctx, argv [][]byte) {
	h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, f := range argv[2:] {
		if h == nil {
			c.Null()
		} else if v, ok := h.Get(f); ok {
			c.Bulk(v)
		} else {
			c.Null()
		}
	}
}

func cmdHdel(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Write(key)
	if slot < 0 {
		c.Int(0)
		return
	}
	if db.Type(slot) != TypeHash {
		c.Err(ErrWrongType)
		return
	}
	h := db.Obj(slot).(*hashObj)
	deleted, removed := 0, false
	for _, f := range argv[2:] {
		if _, ok := h.Get(f); !ok {
			continue
		}
		if deleted == 0 {
			db.Modify(slot)
		}
		h.Delete(f)
		deleted++
		if h.Len() == 0 {
			db.Delete(slot)
			removed = true
			break
		}
	}
	if deleted > 0 {
		if !removed {
			hashDone(db, slot, h)
		}
		db.Notify(NotifyHash, "hdel", key)
		if removed {
			db.Notify(NotifyGeneric, "del", key)
		}
		c.Dirty(deleted)
	}
	c.Int(int64(deleted))
}

func cmdHlen(c *Ctx, argv [][]byte) {
	h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if h == nil {
		c.Int(0)
		return
	}
	c.Int(int64(h.Len()))
}

func cmdHstrlen(c *Ctx, argv [][]byte) {
	h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	n := 0
	if h != nil {
		v, _ := h.Get(argv[2])
		n = len(v)
	}
	c.Int(int64(n))
}

func cmdHexists(c *Ctx, argv [][]byte) {
	h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	found := false
	if h != nil {
		_, found = h.Get(argv[2])
	}
	if found {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

const (
	hashKeys = 1 << iota
	hashVals
)

// hgetall is Redis's genericHgetallCommand: a map for pairs, an array for
// fields or values alone.
func hgetall(c *Ctx, argv [][]byte, what int) {
	h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	n := 0
	if h != nil {
		n = h.Len()
	}
	if what == hashKeys|hashVals {
		c.Map(n)
	} else {
		c.Array(n)
	}
	if h == nil {
		return
	}
	h.each(func(f, v []byte) bool {
		if what&hashKeys != 0 {
			c.Bulk(f)
		}
		if what&hashVals != 0 {
			c.Bulk(v)
		}
		return true
	})
}

func cmdHkeys(c *Ctx, argv [][]byte)   { hgetall(c, argv, hashKeys) }
func cmdHvals(c *Ctx, argv [][]byte)   { hgetall(c, argv, hashVals) }
func cmdHgetall(c *Ctx, argv [][]byte) { hgetall(c, argv, hashKeys|hashVals) }

func cmdHincrby(c *Ctx, argv [][]byte) {
	incr, ok := ParseInt(argv[3])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	key, field := argv[1], argv[2]
	db := c.DBOf(key)
	h, slot, ok := hashWrite(c, db, key)
	if !ok {
		return
	}
	var v int64
	if old, found := h.Get(field); found {
		if v, ok = ParseInt(old); !ok {
			c.Err(errHashNotInt)
			return
		}
	}
	if (incr < 0 && v < 0 && incr < math.MinInt64-v) ||
		(incr > 0 && v > 0 && incr > math.MaxInt64-v) {
		c.Err(ErrOverflow)
		return
	}
	v += incr
	var buf [20]byte
	h.Set(limitsOf(db), field, strconv.AppendInt(buf[:0], v, 10))
	hashDone(db, slot, h)
	c.Int(v)
	db.Notify(NotifyHash, "hincrby", key)
	c.Dirty(1)
}

func cmdHincrbyfloat(c *Ctx, argv [][]byte) {
	incr, ok := ParseLongDouble(argv[3])
	if !ok {
		c.Err(ErrNotFloat)
		return
	}
	if incr.IsInf() {
		c.Err(errNaNOrInfValue)
		return
	}
	key, field := argv[1], argv[2]
	db := c.DBOf(key)
	h, slot, ok := hashWrite(c, db, key)
	if !ok {
		return
	}
	old, found := h.Get(field)
	if !found {
		old = []byte{'0'}
	}
	v, ok := ParseLongDouble(old)
	if !ok {
		c.Err(errHashNotFloat)
		return
	}
	sum, ok := AddLongDouble(v, incr)
	if !ok {
		c.Err(errNaNOrInf)
		return
	}
	text := AppendLongDouble(nil, sum)
	h.Set(limitsOf(db), field, text)
	hashDone(db, slot, h)
	c.Bulk(text)
	db.Notify(NotifyHash, "hincrbyfloat", key)
	// Logged as an HSET of the result, as Redis does, so that a replay
	// cannot differ in float precision or formatting.
	c.Propagate(wordHSET, key, field, text)
}

// HRANDFIELD key [count [WITHVALUES]]
func cmdHrandfield(c *Ctx, argv [][]byte) {
	if len(argv) < 3 {
		h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
		if !ok {
			return
		}
		if h == nil {
			c.Null()
			return
		}
		f, _ := h.random()
		c.Bulk(f)
		return
	}
	l, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if l < -math.MaxInt64 {
		c.Err(errHrandfieldRange)
		return
	}
	withValues := false
	if len(argv) > 4 || (len(argv) == 4 && !EqualFold(argv[3], "withvalues")) {
		c.Err(ErrSyntax)
		return
	}
	if len(argv) == 4 {
		withValues = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.Err(errValueOutOfRange)
			return
		}
	}
	hrandfieldCount(c, argv[1], l, withValues)
}

// hrandfieldCount is Redis's hrandfieldWithCountCommand: a positive count
// gives distinct fields, a negative one fields with repetitions.
func hrandfieldCount(c *Ctx, key []byte, l int64, withValues bool) {
	db := c.DBOf(key)
	slot := db.Read(key)
	if slot < 0 {
		c.Out = append(c.Out, "*0\r\n"...)
		return
	}
	if db.Type(slot) != TypeHash {
		c.Err(ErrWrongType)
		return
	}
	h := db.Obj(slot).(*hashObj)
	uniq := l >= 0
	count := uint64(l)
	if !uniq {
		count = uint64(-l)
	}
	if count == 0 {
		c.Out = append(c.Out, "*0\r\n"...)
		return
	}
	reply := func(f, v []byte) {
		if withValues && c.Proto > 2 {
			c.Array(2)
		}
		c.Bulk(f)
		if withValues {
			c.Bulk(v)
		}
	}
	replyLen := func(n int) {
		if withValues && c.Proto == 2 {
			c.Array(2 * n)
		} else {
			c.Array(n)
		}
	}
	size := uint64(h.Len())

	// Repetitions allowed (or a single field): independent draws.
	if !uniq || count == 1 {
		if count > hashRandomLimit {
			c.Err(errValueOutOfRange)
			return
		}
		replyLen(int(count))
		if h.ht != nil {
			for ; count > 0; count-- {
				reply(h.random())
				if count%fullEvery == 0 && c.Full() {
					return // the client is being closed: the reply is dropped
				}
			}
			return
		}
		ps := h.pairs()
		for ; count > 0; count-- {
			p := ps[rand.IntN(len(ps))]
			reply(p[0], p[1])
			if count%fullEvery == 0 && c.Full() {
				return
			}
		}
		return
	}

	// Distinct fields, at least as many as the hash has: all of it.
	if count >= size {
		replyLen(int(size))
		h.each(func(f, v []byte) bool {
			reply(f, v)
			return true
		})
		return
	}

	replyLen(int(count))
	// A count close to the size, or a listpack: a random subset by a partial
	// Fisher-Yates shuffle of all the pairs.
	if count*3 > size || h.ht == nil {
		ps := h.pairs()
		for i := 0; i < int(count); i++ {
			j := i + rand.IntN(len(ps)-i)
			ps[i], ps[j] = ps[j], ps[i]
			reply(ps[i][0], ps[i][1])
		}
		return
	}
	// A big table and a small count: draw until count distinct fields.
	seen := make(map[string]struct{}, count)
	for uint64(len(seen)) < count {
		f, v := h.random()
		if _, dup := seen[string(f)]; dup {
			continue
		}
		seen[string(f)] = struct{}{}
		reply(f, v)
	}
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
func cmdHscan(c *Ctx, argv [][]byte) {
	cur, ok := parseCursor(argv[2])
	if !ok {
		c.Err(errInvalidCursor)
		return
	}
	h, ok := hashRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if h == nil {
		emptyScan(c)
		return
	}
	o, ok := parseScanArgs(c, argv, 3, false)
	if !ok {
		return
	}
	count, pat, usePat := o.count, o.pat, o.usePat

	var found [][]byte
	add := func(f, v []byte) {
		if usePat && !MatchGlob(pat, f, false) {
			return
		}
		found = append(found, f, v)
	}
	if h.ht == nil {
		// A listpack is small: all of it at once, and the walk is over.
		cur = 0
		found = make([][]byte, 0, 2*h.Len())
		h.each(func(f, v []byte) bool {
			add(f, v)
			return true
		})
	} else {
		// As Redis: up to count pairs, visiting at most ten times count
		// buckets so that a sparse table does not stall the loop. The
		// filter applies after collecting, so collected counts as seen.
		maxIter := int64(math.MaxInt64)
		if count <= math.MaxInt64/20 {
			maxIter = count * 20
		}
		collected := int64(0)
		for {
			cur = h.ht.scan(cur, func(f, v []byte) {
				collected++
				add(f, v)
			})
			maxIter--
			if cur == 0 || maxIter <= 0 || collected >= count {
				break
			}
		}
	}
	c.Array(2)
	var buf [20]byte
	c.Bulk(strconv.AppendUint(buf[:0], cur, 10))
	c.Array(len(found))
	for _, b := range found {
		c.Bulk(b)
	}
}
