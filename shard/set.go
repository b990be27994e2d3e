package shard

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/redshard/redshard/resp"
)

// Set commands (Redis 7.0 t_set.c).

var setCommands = []Command{
	{Name: "sadd", Run: cmdSadd},
	{Name: "srem", Run: cmdSrem},
	{Name: "smove", Run: cmdSmove},
	{Name: "sismember", Run: cmdSismember},
	{Name: "smismember", Run: cmdSmismember},
	{Name: "scard", Run: cmdScard},
	{Name: "spop", Run: cmdSpop},
	{Name: "srandmember", Run: cmdSrandmember},
	{Name: "sinter", Run: cmdSinter},
	{Name: "sintercard", Run: cmdSintercard},
	{Name: "sinterstore", Run: cmdSinterstore},
	{Name: "sunion", Run: cmdSunion},
	{Name: "sunionstore", Run: cmdSunionstore},
	{Name: "sdiff", Run: cmdSdiff},
	{Name: "sdiffstore", Run: cmdSdiffstore},
	{Name: "smembers", Run: cmdSmembers},
	{Name: "sscan", Run: cmdSscan},
}

// Error replies of this file, as Redis spells them.
const (
	errMustBePositive = "ERR value is out of range, must be positive"
	errLongRange      = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errNumkeysZero    = "ERR numkeys should be greater than 0"
	errNumkeysArgs    = "ERR Number of keys can't be greater than number of args"
	errLimitNegative  = "ERR LIMIT can't be negative"
)

var wordSREM = []byte("SREM")

// ---------------------------------------------------------------------------
// The value: an intset or a hashtable.

// setObj is a set value. While every member is an integer that string2ll
// accepts and there are at most set-max-intset-entries of them it is an
// intset (ht == nil); then it becomes a hashtable for good, as in Redis 7.0.
// Both forms keep their members densely indexed 0..len-1, which gives
// uniform random members in O(1) and index-based iteration.
type setObj struct {
	is intset
	ht *strSet
}

// maxIntsetEntries is set-max-intset-entries, capped as Redis caps it.
func maxIntsetEntries(db *DB) int {
	n := db.sh.Cfg.SetMaxIntsetEntries.Load()
	if n > 1<<30 {
		n = 1 << 30
	}
	return int(n)
}

// newSetFor returns an empty set that can hold first without conversion
// (Redis's setTypeCreate).
func newSetFor(first []byte) *setObj {
	if _, ok := ParseInt(first); ok {
		return &setObj{}
	}
	return &setObj{ht: newStrSet(0)}
}

func (s *setObj) len() int {
	if s.ht != nil {
		return len(s.ht.ents)
	}
	return s.is.n
}

func (s *setObj) enc() uint8 {
	if s.ht != nil {
		return EncHashtable
	}
	return EncIntset
}

func (s *setObj) has(m []byte) bool {
	if s.ht != nil {
		return s.ht.has(m)
	}
	v, ok := ParseInt(m)
	if !ok {
		return false
	}
	_, found := s.is.search(v)
	return found
}

// hasInt is has for an integer member.
func (s *setObj) hasInt(v int64) bool {
	if s.ht != nil {
		var buf [20]byte
		return s.ht.has(strconv.AppendInt(buf[:0], v, 10))
	}
	_, found := s.is.search(v)
	return found
}

// add adds m and reports whether it was new, converting an intset to a
// hashtable as Redis's setTypeAdd does: on a non-integer member, or when the
// intset grows past max entries.
func (s *setObj) add(m []byte, maxEnt int) bool {
	if s.ht != nil {
		return s.ht.add(m)
	}
	v, ok := ParseInt(m)
	if !ok {
		s.convert()
		return s.ht.add(m)
	}
	if !s.is.add(v) {
		return false
	}
	if s.is.n > maxEnt {
		s.convert()
	}
	return true
}

// convert turns an intset into a hashtable.
func (s *setObj) convert() {
	t := newStrSet(s.is.n)
	var buf [20]byte
	for i := 0; i < s.is.n; i++ {
		t.add(strconv.AppendInt(buf[:0], s.is.get(i), 10))
	}
	s.ht = t
	s.is = intset{}
}

func (s *setObj) remove(m []byte) bool {
	if s.ht != nil {
		return s.ht.remove(m)
	}
	v, ok := ParseInt(m)
	if !ok {
		return false
	}
	i, found := s.is.search(v)
	if found {
		s.is.removeAt(i)
	}
	return found
}

// removeAt removes the member of index i.
func (s *setObj) removeAt(i int) {
	if s.ht != nil {
		s.ht.removeAt(int32(i))
	} else {
		s.is.removeAt(i)
	}
}

// elem returns the member of index i; an intset's is formatted into buf.
// The slice aliases the set (or buf): use it before the set changes.
func (s *setObj) elem(i int, buf []byte) []byte {
	if s.ht != nil {
		return s.ht.member(int32(i))
	}
	return strconv.AppendInt(buf[:0], s.is.get(i), 10)
}

// appendBulk appends the member of index i as a bulk reply.
func (s *setObj) appendBulk(out []byte, i int) []byte {
	if s.ht != nil {
		return resp.AppendBulk(out, s.ht.member(int32(i)))
	}
	return resp.AppendBulkInt(out, s.is.get(i))
}

// Copy implements Object.
func (s *setObj) Copy() Object {
	if s.ht != nil {
		return &setObj{ht: s.ht.clone()}
	}
	return &setObj{is: intset{w: s.is.w, n: s.is.n, b: slices.Clone(s.is.b)}}
}

// Dump implements Object: SADD commands of at most 64 members each, as
// Redis's rewriteSetObject writes them. Hashtable members alias the set.
func (s *setObj) Dump(key []byte) [][][]byte {
	const perCmd = 64
	n := s.len()
	var cmds [][][]byte
	var nums []byte // an intset's members, formatted once
	if s.ht == nil {
		nums = make([]byte, 0, n*8)
	}
	for start := 0; start < n; start += perCmd {
		end := min(start+perCmd, n)
		argv := make([][]byte, 0, 2+end-start)
		argv = append(argv, []byte("SADD"), key)
		for i := start; i < end; i++ {
			if s.ht != nil {
				argv = append(argv, s.ht.member(int32(i)))
				continue
			}
			p := len(nums)
			nums = strconv.AppendInt(nums, s.is.get(i), 10)
			argv = append(argv, nums[p:len(nums):len(nums)])
		}
		cmds = append(cmds, argv)
	}
	return cmds
}

// Mem implements Object.
func (s *setObj) Mem() int {
	if s.ht != nil {
		return 48 + s.ht.mem()
	}
	return 48 + cap(s.is.b)
}

// ---------------------------------------------------------------------------
// intset: sorted integers in the narrowest of 2, 4 or 8 bytes that holds
// them all (Redis's intset; the width only grows).

type intset struct {
	w uint8 // bytes per element: 2, 4 or 8 (0 while empty and new)
	n int
	b []byte // n*w bytes, little endian
}

func intWidth(v int64) uint8 {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

func (s *intset) get(i int) int64 {
	switch s.w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(s.b[2*i:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(s.b[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(s.b[8*i:]))
}

func (s *intset) put(i int, v int64) {
	switch s.w {
	case 2:
		binary.LittleEndian.PutUint16(s.b[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(s.b[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(s.b[8*i:], uint64(v))
	}
}

// search returns v's index, or where it would be inserted.
func (s *intset) search(v int64) (int, bool) {
	lo, hi := 0, s.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.get(mid) < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < s.n && s.get(lo) == v
}

func (s *intset) add(v int64) bool {
	if w := intWidth(v); w > s.w {
		s.upgrade(w)
	}
	i, found := s.search(v)
	if found {
		return false
	}
	w := int(s.w)
	s.b = slices.Grow(s.b, w)[:(s.n+1)*w]
	copy(s.b[(i+1)*w:], s.b[i*w:s.n*w])
	s.n++
	s.put(i, v)
	return true
}

// upgrade widens every element to w bytes.
func (s *intset) upgrade(w uint8) {
	old := *s
	s.w = w
	s.b = make([]byte, s.n*int(w), (s.n+1)*int(w))
	for i := 0; i < s.n; i++ {
		s.put(i, old.get(i))
	}
}

func (s *intset) removeAt(i int) {
	w := int(s.w)
	copy(s.b[i*w:], s.b[(i+1)*w:s.n*w])
	s.n--
	s.b = s.b[:s.n*w]
	if cap(s.b) > 64 && len(s.b) < cap(s.b)/4 {
		s.b = slices.Clone(s.b)
	}
}

// ---------------------------------------------------------------------------
// strSet: the hashtable form, built to hold no Go pointers per member.
//
// Members' bytes live back to back in one arena; ents (dense, so that a
// random member is one draw) name them by offset and length; a table is a
// power-of-two slice of chain heads into ents. Removing an entry moves the
// last entry into its place (relinking its chain), and the arena is
// compacted when more than half of it is garbage.
//
// Resizing is incremental, as Redis's dict: a second table is made and each
// add or remove moves one bucket into it, so that no command pays for
// rehashing a large set at once. SSCAN walks the buckets with Redis's
// reverse-binary cursor over both tables while a rehash is under way, which
// keeps Redis's guarantee: a member present for the whole scan is returned
// at least once, whatever the resizes in between.

type strSet struct {
	// tab[0] is the table; while tab[1] is not nil, the buckets of tab[0]
	// below rehashIdx have been moved to tab[1].
	tab       [2][]int32
	rehashIdx int
	ents      []setEnt
	arena     []byte
	garbage   int // bytes of the arena no entry uses
}

type setEnt struct {
	off  uint64 // in arena
	n    uint32 // length, or bigMember: an 8-byte length precedes the bytes
	next int32  // next entry of the chain, -1 ends
}

const bigMember = math.MaxUint32

var setSeed = maphash.MakeSeed()

func memberHash(m []byte) uint64 { return maphash.Bytes(setSeed, m) }

// newStrSet returns an empty table presized for n members.
func newStrSet(n int) *strSet {
	t := &strSet{}
	if n > 0 {
		t.expand(n)
		t.ents = make([]setEnt, 0, n)
	}
	return t
}

// tableSize is the bucket count for n members: a power of two >= n, at
// least 4 (Redis's _dictNextExp with DICT_HT_INITIAL_SIZE).
func tableSize(n int) int {
	if n <= 4 {
		return 4
	}
	return 1 << bits.Len(uint(n-1))
}

func newTable(n int) []int32 {
	b := make([]int32, n)
	for i := range b {
		b[i] = -1
	}
	return b
}

func (t *strSet) rehashing() bool { return t.tab[1] != nil }

// expand makes a table for n members: at once when there is none yet, else
// as the target of an incremental rehash (Redis's dictExpand).
func (t *strSet) expand(n int) {
	if len(t.tab[0]) == 0 {
		t.tab[0] = newTable(tableSize(n))
		return
	}
	t.tab[1] = newTable(tableSize(n))
	t.rehashIdx = 0
}

// step moves one bucket of a rehash, visiting at most ten empty ones
// (Redis's _dictRehashStep).
func (t *strSet) step() {
	if !t.rehashing() {
		return
	}
	old, nt := t.tab[0], t.tab[1]
	mask := uint64(len(nt) - 1)
	for empty := 10; t.rehashIdx < len(old); {
		i := old[t.rehashIdx]
		if i < 0 {
			t.rehashIdx++
			if empty--; empty == 0 {
				break
			}
			continue
		}
		for i >= 0 {
			next := t.ents[i].next
			b := memberHash(t.member(i)) & mask
			t.ents[i].next = nt[b]
			nt[b] = i
			i = next
		}
		old[t.rehashIdx] = -1
		t.rehashIdx++
		break
	}
	if t.rehashIdx >= len(old) {
		t.tab[0], t.tab[1] = nt, nil
	}
}

func (t *strSet) member(i int32) []byte {
	e := &t.ents[i]
	off, n := e.off, uint64(e.n)
	if e.n == bigMember {
		n = binary.LittleEndian.Uint64(t.arena[off:])
		off += 8
	}
	return t.arena[off : off+n : off+n]
}

// size is the arena bytes an entry takes.
func (t *strSet) size(i int32) int {
	if n := t.ents[i].n; n != bigMember {
		return int(n)
	}
	return 8 + len(t.member(i))
}

func (t *strSet) find(m []byte) int32 {
	if len(t.tab[0]) == 0 {
		return -1
	}
	h := memberHash(m)
	for _, tab := range t.tab {
		if tab == nil {
			break
		}
		for i := tab[h&uint64(len(tab)-1)]; i >= 0; i = t.ents[i].next {
			if e := &t.ents[i]; (e.n == uint32(len(m)) || e.n == bigMember) && string(t.member(i)) == string(m) {
				return i
			}
		}
	}
	return -1
}

// has reports whether m is a member. Unlike Redis's dictFind it does not
// move a rehash on: only writes do, after db.Modify, because finishing a
// rehash frees a table and so changes Mem, which memory accounting reads
// only around writes.
func (t *strSet) has(m []byte) bool { return t.find(m) >= 0 }

func (t *strSet) add(m []byte) bool {
	t.step()
	if t.find(m) >= 0 {
		return false
	}
	if !t.rehashing() && len(t.ents) >= len(t.tab[0]) {
		t.expand(len(t.ents) + 1)
	}
	e := setEnt{off: uint64(len(t.arena)), n: uint32(len(m))}
	if uint64(len(m)) >= bigMember {
		e.n = bigMember
		t.arena = binary.LittleEndian.AppendUint64(t.arena, uint64(len(m)))
	}
	t.arena = append(t.arena, m...)
	tab := t.tab[0]
	if t.rehashing() {
		tab = t.tab[1]
	}
	b := memberHash(m) & uint64(len(tab)-1)
	e.next = tab[b]
	tab[b] = int32(len(t.ents))
	t.ents = append(t.ents, e)
	return true
}

func (t *strSet) remove(m []byte) bool {
	t.step()
	i := t.find(m)
	if i < 0 {
		return false
	}
	t.removeAt(i)
	return true
}

// link returns the chain link that points at entry i.
func (t *strSet) link(i int32) *int32 {
	h := memberHash(t.member(i))
	for _, tab := range t.tab {
		if tab == nil {
			break
		}
		for p := &tab[h&uint64(len(tab)-1)]; *p >= 0; p = &t.ents[*p].next {
			if *p == i {
				return p
			}
		}
	}
	panic("shard: set entry not in its chain")
}

func (t *strSet) removeAt(i int32) {
	t.step()
	p := t.link(i)
	*p = t.ents[i].next
	t.garbage += t.size(i)
	last := int32(len(t.ents) - 1)
	if i != last {
		*t.link(last) = i
		t.ents[i] = t.ents[last]
	}
	t.ents = t.ents[:last]
	n := len(t.ents)
	switch {
	case n == 0:
		t.arena, t.garbage = t.arena[:0], 0
	case t.garbage > 1024 && t.garbage > len(t.arena)/2:
		t.compact()
	}
	// Shrink below 10% fill, as Redis's htNeedsResize/dictResize do.
	if slots := len(t.tab[0]) + len(t.tab[1]); !t.rehashing() && slots > 4 && n*10 < slots {
		t.expand(n)
		if cap(t.ents) > 64 && n < cap(t.ents)/4 {
			t.ents = slices.Clip(slices.Clone(t.ents))
		}
	}
}

// compact rewrites the arena without its garbage.
func (t *strSet) compact() {
	arena := make([]byte, 0, len(t.arena)-t.garbage)
	for i := range t.ents {
		e := &t.ents[i]
		sz := t.size(int32(i))
		from := e.off
		e.off = uint64(len(arena))
		arena = append(arena, t.arena[from:from+uint64(sz)]...)
	}
	t.arena, t.garbage = arena, 0
}

// clone returns a copy: a new table of the same members, without garbage.
func (t *strSet) clone() *strSet {
	c := newStrSet(len(t.ents))
	for i := range t.ents {
		c.add(t.member(int32(i)))
	}
	return c
}

func (t *strSet) mem() int {
	return cap(t.arena) + 16*cap(t.ents) + 4*(cap(t.tab[0])+cap(t.tab[1]))
}

// scan visits the chains the cursor names and returns the next cursor, 0
// when the scan is complete (Redis's dictScan). The cursor's bits are
// incremented from the top, so buckets split or merged by a resize between
// calls are neither skipped nor revisited in full; during a rehash it
// visits the cursor's bucket in the smaller table and all the buckets it
// expands to in the larger one.
func (t *strSet) scan(v uint64, fn func(i int32)) uint64 {
	if len(t.ents) == 0 {
		return 0
	}
	emit := func(tab []int32, b uint64) {
		for i := tab[b]; i >= 0; i = t.ents[i].next {
			fn(i)
		}
	}
	next := func(v, mask uint64) uint64 {
		v |= ^mask
		v = bits.Reverse64(v)
		v++
		return bits.Reverse64(v)
	}
	if !t.rehashing() {
		m0 := uint64(len(t.tab[0]) - 1)
		emit(t.tab[0], v&m0)
		return next(v, m0)
	}
	t0, t1 := t.tab[0], t.tab[1]
	if len(t0) > len(t1) {
		t0, t1 = t1, t0
	}
	m0, m1 := uint64(len(t0)-1), uint64(len(t1)-1)
	emit(t0, v&m0)
	for {
		emit(t1, v&m1)
		v = next(v, m1)
		if v&(m0^m1) == 0 {
			break
		}
	}
	return v
}

// ---------------------------------------------------------------------------
// Lookups shared by the handlers.

// readSet looks key up for reading; ok is false (WRONGTYPE replied) when it
// holds another type; s is nil when the key is missing.
func readSet(c *Ctx, db *DB, key []byte) (s *setObj, ok bool) {
	slot := db.Read(key)
	if slot < 0 {
		return nil, true
	}
	if db.Type(slot) != TypeSet {
		c.Err(ErrWrongType)
		return nil, false
	}
	return db.Obj(slot).(*setObj), true
}

// writeSet is readSet for a write; it also returns the slot.
func writeSet(c *Ctx, db *DB, key []byte) (slot int32, s *setObj, ok bool) {
	slot = db.Write(key)
	if slot < 0 {
		return -1, nil, true
	}
	if db.Type(slot) != TypeSet {
		c.Err(ErrWrongType)
		return slot, nil, false
	}
	return slot, db.Obj(slot).(*setObj), true
}

// emptySet replies an empty set (Redis's shared.emptyset).
func emptySet(c *Ctx) { c.Set(0) }

// ---------------------------------------------------------------------------
// Commands.

// SADD key member [member ...]
func cmdSadd(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot, s, ok := writeSet(c, db, key)
	if !ok {
		return
	}
	fresh := s == nil
	if fresh {
		s = newSetFor(argv[2])
		slot = db.SetObj(key, TypeSet, s.enc(), s)
	}
	maxEnt := maxIntsetEntries(db)
	added := 0
	for _, m := range argv[2:] {
		if added == 0 && !fresh {
			// Touch the value only when it really changes.
			if s.has(m) {
				continue
			}
			db.Modify(slot)
		}
		if s.add(m, maxEnt) {
			added++
		}
	}
	if added > 0 {
		db.SetEncoding(slot, s.enc())
		db.Notify(NotifySet, "sadd", key)
	}
	c.Dirty(added)
	c.Int(int64(added))
}

// SREM key member [member ...]
func cmdSrem(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot, s, ok := writeSet(c, db, key)
	if !ok {
		return
	}
	if s == nil {
		c.Int(0)
		return
	}
	deleted, removed := 0, false
	for _, m := range argv[2:] {
		if deleted == 0 {
			if !s.has(m) {
				continue
			}
			db.Modify(slot)
		}
		if s.remove(m) {
			deleted++
			if s.len() == 0 {
				db.Delete(slot)
				removed = true
				break
			}
		}
	}
	if deleted > 0 {
		db.Notify(NotifySet, "srem", key)
		if removed {
			db.Notify(NotifyGeneric, "del", key)
		}
	}
	c.Dirty(deleted)
	c.Int(int64(deleted))
}

// SMOVE source destination member
func cmdSmove(c *Ctx, argv [][]byte) {
	src, dst, m := argv[1], argv[2], argv[3]
	sdb, ddb := c.DBOf(src), c.DBOf(dst)
	sslot := sdb.Write(src)
	dslot := ddb.Write(dst)
	if sslot < 0 {
		c.Int(0)
		return
	}
	if sdb.Type(sslot) != TypeSet || (dslot >= 0 && ddb.Type(dslot) != TypeSet) {
		c.Err(ErrWrongType)
		return
	}
	ss := sdb.Obj(sslot).(*setObj)
	if sdb == ddb && sslot == dslot {
		c.Int(b2i(ss.has(m)))
		return
	}
	if !ss.has(m) {
		c.Int(0)
		return
	}
	sdb.Modify(sslot)
	ss.remove(m)
	sdb.Notify(NotifySet, "srem", src)
	if ss.len() == 0 {
		sdb.Delete(sslot)
		sdb.Notify(NotifyGeneric, "del", src)
	}
	var ds *setObj
	if dslot < 0 {
		ds = newSetFor(m)
		dslot = ddb.SetObj(dst, TypeSet, ds.enc(), ds)
	} else {
		ds = ddb.Obj(dslot).(*setObj)
	}
	dirty := 1
	if !ds.has(m) {
		ddb.Modify(dslot)
		ds.add(m, maxIntsetEntries(ddb))
		ddb.SetEncoding(dslot, ds.enc())
		dirty++
		ddb.Notify(NotifySet, "sadd", dst)
	}
	c.Dirty(dirty)
	c.Int(1)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// SISMEMBER key member
func cmdSismember(c *Ctx, argv [][]byte) {
	s, ok := readSet(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	c.Int(b2i(s != nil && s.has(argv[2])))
}

// SMISMEMBER key member [member ...]: a missing key is an empty set.
func cmdSmismember(c *Ctx, argv [][]byte) {
	s, ok := readSet(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		c.Int(b2i(s != nil && s.has(m)))
	}
}

// SCARD key
func cmdScard(c *Ctx, argv [][]byte) {
	s, ok := readSet(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if s == nil {
		c.Int(0)
		return
	}
	c.Int(int64(s.len()))
}

// SMEMBERS key (in Redis 7.0, SINTER of one key).
func cmdSmembers(c *Ctx, argv [][]byte) {
	sinterGeneric(c, argv[1:2], nil, false, 0)
}

// spopMoveStrategyMul is Redis's SPOP_MOVE_STRATEGY_MUL: SPOP with a count
// builds a new set of the remaining members when they are few.
const spopMoveStrategyMul = 5

// SPOP key [count]
func cmdSpop(c *Ctx, argv [][]byte) {
	if len(argv) == 3 {
		spopWithCount(c, argv)
		return
	}
	if len(argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot, s, ok := writeSet(c, db, key)
	if !ok {
		return
	}
	if s == nil {
		c.Null()
		return
	}
	db.Modify(slot)
	i := rand.IntN(s.len())
	var buf [20]byte
	m := slices.Clone(s.elem(i, buf[:0]))
	s.removeAt(i)
	db.Notify(NotifySet, "spop", key)
	c.Propagate(wordSREM, key, m)
	c.Bulk(m)
	if s.len() == 0 {
		db.Delete(slot)
		db.Notify(NotifyGeneric, "del", key)
	}
}

// SPOP key count: logged as one SREM per member popped (wrapped in
// MULTI/EXEC by the server when more than one), or as DEL when the whole
// set goes, as Redis 7.0 propagates it.
func spopWithCount(c *Ctx, argv [][]byte) {
	n, ok := ParseInt(argv[2])
	if !ok || n < 0 {
		c.Err(errMustBePositive)
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot, s, ok := writeSet(c, db, key)
	if !ok {
		return
	}
	if s == nil || n == 0 {
		emptySet(c)
		return
	}
	size := s.len()
	count := int(min(n, int64(size)))
	db.Notify(NotifySet, "spop", key)

	// Case 1: the whole set goes.
	if count >= size {
		c.Set(size)
		for i := 0; i < size; i++ {
			c.Out = s.appendBulk(c.Out, i)
		}
		db.Delete(slot)
		db.Notify(NotifyGeneric, "del", key)
		c.Propagate(wordDEL, key)
		c.Prop.Dirty += size - 1
		return
	}
	db.Modify(slot)
	c.Set(count)
	var buf [20]byte
	remaining := size - count
	if remaining*spopMoveStrategyMul > count {
		// Case 2: draw and remove count random members.
		for j := 0; j < count; j++ {
			i := rand.IntN(s.len())
			m := slices.Clone(s.elem(i, buf[:0]))
			c.Bulk(m)
			s.removeAt(i)
			c.Propagate(wordSREM, key, m)
		}
	} else {
		// Case 3: move the few members that stay to a new set, and pop
		// all that is left in the old one.
		var kept *setObj
		maxEnt := maxIntsetEntries(db)
		for j := 0; j < remaining; j++ {
			i := rand.IntN(s.len())
			m := s.elem(i, buf[:0])
			if kept == nil {
				kept = newSetFor(m)
			}
			kept.add(m, maxEnt)
			s.removeAt(i)
		}
		for i := 0; i < s.len(); i++ {
			m := slices.Clone(s.elem(i, buf[:0]))
			c.Bulk(m)
			c.Propagate(wordSREM, key, m)
		}
		*s = *kept // the same object: the key keeps its TTL and slot
		db.SetEncoding(slot, s.enc())
	}
}

// srandmemberSubStrategyMul is Redis's SRANDMEMBER_SUB_STRATEGY_MUL.
const srandmemberSubStrategyMul = 3

// SRANDMEMBER key [count]
func cmdSrandmember(c *Ctx, argv [][]byte) {
	if len(argv) == 3 {
		srandmemberWithCount(c, argv)
		return
	}
	if len(argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	s, ok := readSet(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if s == nil {
		c.Null()
		return
	}
	c.Out = s.appendBulk(c.Out, rand.IntN(s.len()))
}

// SRANDMEMBER key count: a negative count may repeat members; a positive
// one returns distinct members, in random order.
func srandmemberWithCount(c *Ctx, argv [][]byte) {
	l, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if l == math.MinInt64 {
		c.Err(errLongRange)
		return
	}
	uniq := l >= 0
	count := l
	if !uniq {
		count = -l
	}
	s, ok := readSet(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if s == nil || count == 0 {
		c.Out = append(c.Out, "*0\r\n"...) // shared.emptyarray, in RESP3 too
		return
	}
	size := s.len()
	// Case 1: repeats allowed (or one member): independent draws.
	if !uniq || count == 1 {
		c.Array(int(count))
		for ; count > 0; count-- {
			c.Out = s.appendBulk(c.Out, rand.IntN(size))
			if count%fullEvery == 0 && c.Full() {
				return // the client is being closed: the reply is dropped
			}
		}
		return
	}
	// Case 2: the whole set.
	if count >= int64(size) {
		c.Array(size)
		for i := 0; i < size; i++ {
			c.Out = s.appendBulk(c.Out, i)
		}
		return
	}
	// Cases 3 and 4: count distinct members drawn uniformly. Redis copies
	// the set and removes random members when count is near the size, and
	// draws until it has count distinct ones otherwise; over dense indexes
	// that is a partial shuffle, or Floyd's sampling.
	k := int(count)
	c.Array(k)
	if k*srandmemberSubStrategyMul > size {
		perm := make([]int32, size)
		for i := range perm {
			perm[i] = int32(i)
		}
		for i := 0; i < k; i++ {
			j := i + rand.IntN(size-i)
			perm[i], perm[j] = perm[j], perm[i]
			c.Out = s.appendBulk(c.Out, int(perm[i]))
		}
		return
	}
	picked := make(map[int]struct{}, k)
	order := make([]int, 0, k)
	for j := size - k; j < size; j++ {
		i := rand.IntN(j + 1)
		if _, dup := picked[i]; dup {
			i = j
		}
		picked[i] = struct{}{}
		order = append(order, i)
	}
	rand.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	for _, i := range order {
		c.Out = s.appendBulk(c.Out, i)
	}
}

// SINTER key [key ...]
func cmdSinter(c *Ctx, argv [][]byte) { sinterGeneric(c, argv[1:], nil, false, 0) }

// SINTERSTORE destination key [key ...]
func cmdSinterstore(c *Ctx, argv [][]byte) { sinterGeneric(c, argv[2:], argv[1], false, 0) }

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func cmdSintercard(c *Ctx, argv [][]byte) {
	numkeys, ok := ParseInt(argv[1])
	if !ok || numkeys < 1 {
		c.Err(errNumkeysZero)
		return
	}
	if numkeys > int64(len(argv)-2) {
		c.Err(errNumkeysArgs)
		return
	}
	var limit int64
	for j := 2 + int(numkeys); j < len(argv); j++ {
		if EqualFold(argv[j], "limit") && j+1 < len(argv) {
			j++
			v, ok := ParseInt(argv[j])
			if !ok || v < 0 {
				c.Err(errLimitNegative)
				return
			}
			limit = v
		} else {
			c.Err(ErrSyntax)
			return
		}
	}
	sinterGeneric(c, argv[2:2+numkeys], nil, true, limit)
}

// lookupSets reads every key's set (nil for a missing key); ok is false
// (WRONGTYPE replied) when one holds another type.
func lookupSets(c *Ctx, keys [][]byte) (sets []*setObj, missing int, ok bool) {
	sets = make([]*setObj, len(keys))
	for j, k := range keys {
		s, ok := readSet(c, c.DBOf(k), k)
		if !ok {
			return nil, 0, false
		}
		if s == nil {
			missing++
		}
		sets[j] = s
	}
	return sets, missing, true
}

// storeSet stores a command's result at dst (replacing any value and its
// TTL), or deletes dst when the result is empty, and replies its size.
func storeSet(c *Ctx, dst []byte, res *setObj, event string) {
	db := c.DBOf(dst)
	if res != nil && res.len() > 0 {
		db.SetObj(dst, TypeSet, res.enc(), res)
		c.Int(int64(res.len()))
		db.Notify(NotifySet, event, dst)
		c.Dirty(1)
		return
	}
	c.Int(0)
	if slot := db.Peek(dst); slot >= 0 {
		db.Delete(slot)
		db.Notify(NotifyGeneric, "del", dst)
		c.Dirty(1)
	}
}

// sinterGeneric is SINTER, SMEMBERS, SINTERSTORE (dst set) and SINTERCARD
// (cardOnly, stopping at limit when it is not 0).
func sinterGeneric(c *Ctx, keys [][]byte, dst []byte, cardOnly bool, limit int64) {
	var one [1]*setObj
	var sets []*setObj
	missing := 0
	if len(keys) == 1 {
		// SMEMBERS: no allocation.
		s, ok := readSet(c, c.DBOf(keys[0]), keys[0])
		if !ok {
			return
		}
		one[0] = s
		sets = one[:]
		if s == nil {
			missing = 1
		}
	} else {
		var ok bool
		if sets, missing, ok = lookupSets(c, keys); !ok {
			return
		}
	}
	if missing > 0 {
		switch {
		case dst != nil:
			storeSet(c, dst, nil, "")
		case cardOnly:
			c.Int(0)
		default:
			emptySet(c)
		}
		return
	}
	if len(sets) == 1 && dst == nil && !cardOnly {
		s := sets[0]
		c.Set(s.len())
		for i := 0; i < s.len(); i++ {
			c.Out = s.appendBulk(c.Out, i)
		}
		return
	}
	slices.SortStableFunc(sets, func(a, b *setObj) int { return a.len() - b.len() })

	var res *setObj // the STORE result, an intset at first as in Redis
	var body []byte // the reply's elements, counted in card
	if dst != nil {
		res = &setObj{}
	}
	maxEnt := maxIntsetEntries(c.DBOf(keys[0]))
	card := int64(0)
	first := sets[0]
	var buf [20]byte
	for i := 0; i < first.len(); i++ {
		var m []byte
		var v int64
		if first.ht != nil {
			m = first.ht.member(int32(i))
		} else {
			v = first.is.get(i)
		}
		all := true
		for _, o := range sets[1:] {
			if o == first {
				continue
			}
			if first.ht != nil && !o.has(m) || first.ht == nil && !o.hasInt(v) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		switch {
		case cardOnly:
			card++
			if limit > 0 && card >= limit {
				i = first.len()
			}
		case dst == nil:
			body = first.appendBulk(body, i)
			card++
		default:
			res.add(first.elem(i, buf[:0]), maxEnt)
		}
	}
	switch {
	case cardOnly:
		c.Int(card)
	case dst != nil:
		storeSet(c, dst, res, "sinterstore")
	default:
		c.Set(int(card))
		c.Out = append(c.Out, body...)
	}
}

// SUNION key [key ...]
func cmdSunion(c *Ctx, argv [][]byte) { sunionDiffGeneric(c, argv[1:], nil, false) }

// SUNIONSTORE destination key [key ...]
func cmdSunionstore(c *Ctx, argv [][]byte) { sunionDiffGeneric(c, argv[2:], argv[1], false) }

// SDIFF key [key ...]
func cmdSdiff(c *Ctx, argv [][]byte) { sunionDiffGeneric(c, argv[1:], nil, true) }

// SDIFFSTORE destination key [key ...]
func cmdSdiffstore(c *Ctx, argv [][]byte) { sunionDiffGeneric(c, argv[2:], argv[1], true) }

// sunionDiffGeneric is SUNION and SDIFF (diff), and their STORE forms (dst
// set). It follows Redis's algorithms, whose choice shows in the encoding
// of a stored result.
func sunionDiffGeneric(c *Ctx, keys [][]byte, dst []byte, diff bool) {
	sets, _, ok := lookupSets(c, keys)
	if !ok {
		return
	}
	sameset := false
	for _, s := range sets[1:] {
		if s != nil && s == sets[0] {
			sameset = true
		}
	}
	maxEnt := maxIntsetEntries(c.DBOf(keys[0]))
	res := &setObj{}
	var buf [20]byte
	switch {
	case !diff:
		for _, s := range sets {
			if s == nil {
				continue
			}
			for i := 0; i < s.len(); i++ {
				res.add(s.elem(i, buf[:0]), maxEnt)
			}
		}
	case sameset || sets[0] == nil:
		// A set minus itself, or nothing minus anything: empty.
	default:
		// Algorithm 1 tests each member of the first set against the
		// others (O(N*M)); algorithm 2 adds the first set and removes the
		// others (O(total)). Redis picks by this estimate.
		one, two := 0, 0
		for _, s := range sets {
			if s != nil {
				one += sets[0].len()
				two += s.len()
			}
		}
		one /= 2
		if one <= two {
			rest := slices.Clone(sets[1:])
			slices.SortStableFunc(rest, func(a, b *setObj) int { return setLen(b) - setLen(a) })
			first := sets[0]
			for i := 0; i < first.len(); i++ {
				m := first.elem(i, buf[:0])
				in := false
				for _, o := range rest {
					if o != nil && o.has(m) {
						in = true
						break
					}
				}
				if !in {
					res.add(m, maxEnt)
				}
			}
		} else {
			for j, s := range sets {
				if s == nil {
					continue
				}
				for i := 0; i < s.len(); i++ {
					if j == 0 {
						res.add(s.elem(i, buf[:0]), maxEnt)
					} else {
						res.remove(s.elem(i, buf[:0]))
					}
				}
				if res.len() == 0 {
					break
				}
			}
		}
	}
	if dst != nil {
		event := "sunionstore"
		if diff {
			event = "sdiffstore"
		}
		storeSet(c, dst, res, event)
		return
	}
	c.Set(res.len())
	for i := 0; i < res.len(); i++ {
		c.Out = res.appendBulk(c.Out, i)
	}
}

func setLen(s *setObj) int {
	if s == nil {
		return 0
	}
	return s.len()
}

// SSCAN key cursor [MATCH pattern] [COUNT count]
func cmdSscan(c *Ctx, argv [][]byte) {
	cursor, ok := parseCursor(argv[2])
	if !ok {
		c.Err(errInvalidCursor)
		return
	}
	s, ok := readSet(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if s == nil {
		emptyScan(c)
		return
	}
	o, ok := parseScanArgs(c, argv, 3, false)
	if !ok {
		return
	}
	count, pat, usePat := o.count, o.pat, o.usePat
	var found []int32
	if s.ht != nil {
		// Like Redis: stop after count members or ten times as many buckets.
		maxIter := int64(math.MaxInt64)
		if count <= math.MaxInt64/10 {
			maxIter = count * 10
		}
		collect := func(i int32) { found = append(found, i) }
		for {
			cursor = s.ht.scan(cursor, collect)
			if cursor == 0 || maxIter == 0 || int64(len(found)) >= count {
				break
			}
			maxIter--
		}
	} else {
		// An intset is small: all of it at once, cursor 0.
		found = make([]int32, s.len())
		for i := range found {
			found[i] = int32(i)
		}
		cursor = 0
	}
	var buf [20]byte
	keep := found[:0]
	for _, i := range found {
		if usePat && !MatchGlob(pat, s.elem(int(i), buf[:0]), false) {
			continue
		}
		keep = append(keep, i)
	}
	c.Array(2)
	c.Bulk(strconv.AppendUint(buf[:0], cursor, 10))
	c.Array(len(keep))
	for _, i := range keep {
		c.Out = s.appendBulk(c.Out, int(i))
	}
}
