package shard

import (
	"encoding/binary"
	"sync/atomic"
)

// List storage: a quicklist-like deque of nodes, each node one byte buffer
// of length-prefixed elements.
//
// An element is stored as uvarint(len), the bytes, then the same uvarint
// written backwards, so a node can be walked from either end. A node's
// elements live in buf[off:]; off > 0 is free room at the front, so pushes
// at both ends are amortised O(1) and never move the other elements. The
// nodes sit by value in a ring, so a list costs the garbage collector one
// pointer per node (its buffer), not one per element.
//
// Node size follows list-max-listpack-size loosely, as Redis's quicklist
// does: a negative fill caps a node's bytes (-1: 4 KB ... -5: 64 KB), a
// positive one its element count (with an 8 KB safety cap). An element that
// does not fit an empty node gets a node of its own.

type qnode struct {
	buf []byte // elements in buf[off:]
	off int
	n   int // elements in the node
}

// List is a list value (TypeList, OBJECT ENCODING "quicklist").
type List struct {
	ring  []qnode // len is a power of two (or 0)
	head  int     // ring index of the first node
	nodes int
	count int // elements
	mem   int // bytes of node buffers plus the ring
	fill  int // list-max-listpack-size when the list was made
}

const qnodeOverhead = 40 // sizeof(qnode)

// packedThreshold is Redis's quicklist packed_threshold (DEBUG
// QUICKLIST-PACKED-THRESHOLD): an element at least this large gets a node
// of its own (Redis's "plain" node).
var packedThreshold atomic.Int64

func init() { packedThreshold.Store(1 << 30) }

// SetPackedThreshold sets the threshold as Redis's
// quicklistisSetPackedThreshold does: 0 restores the default (1 GB), and
// sizes from 4 GB - 1 MB up are refused.
func SetPackedThreshold(sz uint64) bool {
	if sz > 1<<32-1<<20 {
		return false
	}
	if sz == 0 {
		sz = 1 << 30
	}
	packedThreshold.Store(int64(sz))
	return true
}

// NewList returns an empty list with a node size from list-max-listpack-size.
func NewList(fill int) *List {
	if fill == 0 {
		fill = -2
	}
	return &List{fill: fill}
}

// Len returns the number of elements.
func (l *List) Len() int { return l.count }

// Mem is the approximate size in bytes (O(1)).
func (l *List) Mem() int { return 48 + l.mem }

func (l *List) node(i int) *qnode { return &l.ring[(l.head+i)&(len(l.ring)-1)] }

// elemSize is the stored size of an element of n bytes.
func elemSize(n int) int {
	v := uvarintLen(n)
	return 2*v + n
}

func uvarintLen(n int) int {
	s := 1
	for n >= 0x80 {
		n >>= 7
		s++
	}
	return s
}

// putElem writes e at dst (len(dst) >= elemSize(len(e))).
func putElem(dst, e []byte) {
	v := binary.PutUvarint(dst, uint64(len(e)))
	copy(dst[v:], e)
	p := v + len(e)
	for i := v - 1; i >= 0; i-- {
		dst[p] = dst[i]
		p++
	}
}

// readElem reads the element at buf[p:]: its bytes and the position after it.
func readElem(buf []byte, p int) ([]byte, int) {
	n, v := binary.Uvarint(buf[p:])
	start := p + v
	end := start + int(n)
	return buf[start:end], end + v
}

// readElemBack reads the element that ends at buf[:p]: its bytes and its
// start position.
func readElemBack(buf []byte, p int) ([]byte, int) {
	var n uint64
	var shift uint
	v := 0
	for {
		b := buf[p-1-v]
		v++
		n |= uint64(b&0x7f) << shift
		shift += 7
		if b < 0x80 {
			break
		}
	}
	end := p - v
	start := end - int(n)
	return buf[start:end], start - v
}

// fits reports whether a node may take one more element of size s.
func (l *List) fits(nd *qnode, s int) bool {
	if nd.n == 0 {
		return true
	}
	if int64(s) >= packedThreshold.Load() || int64(len(nd.buf)-nd.off) >= packedThreshold.Load() {
		return false // a plain node holds one element
	}
	size := len(nd.buf) - nd.off + s
	if l.fill > 0 {
		return nd.n < l.fill && size <= 8192
	}
	f := -l.fill
	if f > 5 {
		f = 5
	}
	return size <= 4096<<(f-1)
}

// nodeCap is the byte size of a full node under the list's fill.
func (l *List) nodeCap() int {
	if l.fill > 0 {
		return 8192
	}
	f := -l.fill
	if f > 5 {
		f = 5
	}
	return 4096 << (f - 1)
}

// growCap is the capacity a node's buffer grows to when it must hold need
// bytes. Buffers double from 64 bytes, so a small list stays small; but a
// fresh node of a list that already fills other nodes will fill too, and
// gets its full size at once instead of being copied through every
// doubling (LPUSH of 100-byte values into a long list: the doublings were
// about 12% of the server's CPU in memmove and zeroing).
func (l *List) growCap(nd *qnode, need int) int {
	c := 2 * cap(nd.buf)
	if c < 64 {
		c = 64
	}
	if nd.n == 0 && l.nodes > 1 {
		if full := l.nodeCap(); c < full {
			c = full
		}
	}
	if c < need {
		c = need
	}
	return c
}

// insertNode makes room for a node at position i (0..nodes) and returns it.
func (l *List) insertNode(i int) *qnode {
	if l.nodes == len(l.ring) {
		n := len(l.ring) * 2
		if n == 0 {
			n = 1
		}
		ring := make([]qnode, n)
		for j := 0; j < l.nodes; j++ {
			ring[j] = *l.node(j)
		}
		l.mem += (n - len(l.ring)) * qnodeOverhead
		l.ring, l.head = ring, 0
	}
	mask := len(l.ring) - 1
	if i == 0 {
		l.head = (l.head - 1) & mask
	} else {
		for j := l.nodes; j > i; j-- {
			l.ring[(l.head+j)&mask] = l.ring[(l.head+j-1)&mask]
		}
	}
	l.nodes++
	nd := l.node(i)
	*nd = qnode{}
	return nd
}

// removeNode drops node i.
func (l *List) removeNode(i int) {
	nd := l.node(i)
	l.mem -= cap(nd.buf)
	mask := len(l.ring) - 1
	if i == 0 {
		*nd = qnode{}
		l.head = (l.head + 1) & mask
	} else {
		for j := i; j < l.nodes-1; j++ {
			l.ring[(l.head+j)&mask] = l.ring[(l.head+j+1)&mask]
		}
		l.ring[(l.head+l.nodes-1)&mask] = qnode{}
	}
	l.nodes--
	if l.nodes == 0 {
		l.head = 0
	}
}

// setBuf replaces a node's buffer, keeping the memory count.
func (l *List) setBuf(nd *qnode, buf []byte, off int) {
	l.mem += cap(buf) - cap(nd.buf)
	nd.buf, nd.off = buf, off
}

// PushBack appends e.
func (l *List) PushBack(e []byte) {
	s := elemSize(len(e))
	var nd *qnode
	if l.nodes > 0 {
		nd = l.node(l.nodes - 1)
	}
	if nd == nil || !l.fits(nd, s) {
		nd = l.insertNode(l.nodes)
	}
	if len(nd.buf)+s > cap(nd.buf) {
		c := l.growCap(nd, len(nd.buf)+s)
		buf := make([]byte, len(nd.buf), c)
		copy(buf, nd.buf)
		l.setBuf(nd, buf, nd.off)
	}
	p := len(nd.buf)
	nd.buf = nd.buf[:p+s]
	putElem(nd.buf[p:], e)
	nd.n++
	l.count++
}

// PushFront prepends e.
func (l *List) PushFront(e []byte) {
	s := elemSize(len(e))
	var nd *qnode
	if l.nodes > 0 {
		nd = l.node(0)
	}
	if nd == nil || !l.fits(nd, s) {
		nd = l.insertNode(0)
	}
	if nd.off < s {
		used := len(nd.buf) - nd.off
		c := l.growCap(nd, used+s)
		buf := make([]byte, c)
		off := c - used
		copy(buf[off:], nd.buf[nd.off:])
		l.setBuf(nd, buf, off)
	}
	nd.off -= s
	putElem(nd.buf[nd.off:], e)
	nd.n++
	l.count++
}

// PopFront removes the first element and returns it; the bytes stay valid
// until the list changes again.
func (l *List) PopFront() []byte {
	if l.count == 0 {
		return nil
	}
	nd := l.node(0)
	e, next := readElem(nd.buf, nd.off)
	nd.off = next
	nd.n--
	l.count--
	if nd.n == 0 {
		l.removeNode(0)
	}
	return e
}

// PopBack removes the last element and returns it (valid until the next change).
func (l *List) PopBack() []byte {
	if l.count == 0 {
		return nil
	}
	nd := l.node(l.nodes - 1)
	e, start := readElemBack(nd.buf, len(nd.buf))
	nd.buf = nd.buf[:start]
	nd.n--
	l.count--
	if nd.n == 0 {
		l.removeNode(l.nodes - 1)
	}
	return e
}

// locate returns the node holding element i (0 <= i < count) and i's index
// within it, walking from the nearer end.
func (l *List) locate(i int) (ni, k int) {
	if i < l.count/2 {
		for ni = 0; ; ni++ {
			n := l.node(ni).n
			if i < n {
				return ni, i
			}
			i -= n
		}
	}
	j := l.count - 1 - i // index from the back
	for ni = l.nodes - 1; ; ni-- {
		n := l.node(ni).n
		if j < n {
			return ni, n - 1 - j
		}
		j -= n
	}
}

// bytePos returns the byte offset of element k in a node.
func (nd *qnode) bytePos(k int) int {
	if k <= nd.n/2 {
		p := nd.off
		for ; k > 0; k-- {
			_, p = readElem(nd.buf, p)
		}
		return p
	}
	p := len(nd.buf)
	for j := nd.n; j > k; j-- {
		_, p = readElemBack(nd.buf, p)
	}
	return p
}

// Index returns element i (negative: from the end), or nil, false.
func (l *List) Index(i int) ([]byte, bool) {
	if i < 0 {
		i += l.count
	}
	if i < 0 || i >= l.count {
		return nil, false
	}
	ni, k := l.locate(i)
	nd := l.node(ni)
	e, _ := readElem(nd.buf, nd.bytePos(k))
	return e, true
}

// Set replaces element i (negative: from the end); false if out of range.
func (l *List) Set(i int, v []byte) bool {
	if i < 0 {
		i += l.count
	}
	if i < 0 || i >= l.count {
		return false
	}
	ni, k := l.locate(i)
	nd := l.node(ni)
	p := nd.bytePos(k)
	_, end := readElem(nd.buf, p)
	l.splice(nd, p, end, v)
	return true
}

// splice replaces buf[p:end] of a node with the encoding of v.
func (l *List) splice(nd *qnode, p, end int, v []byte) {
	s := elemSize(len(v))
	if end-p == s {
		putElem(nd.buf[p:], v)
		return
	}
	used := len(nd.buf) - nd.off - (end - p) + s
	buf := make([]byte, used, used+used/4)
	w := copy(buf, nd.buf[nd.off:p])
	putElem(buf[w:], v)
	copy(buf[w+s:], nd.buf[end:])
	l.setBuf(nd, buf, 0)
}

// InsertAt inserts v so that it becomes element i (0 <= i <= count).
func (l *List) InsertAt(i int, v []byte) {
	switch {
	case i <= 0:
		l.PushFront(v)
		return
	case i >= l.count:
		l.PushBack(v)
		return
	}
	s := elemSize(len(v))
	ni, k := l.locate(i)
	nd := l.node(ni)
	if k == 0 && ni > 0 && l.fits(l.node(ni-1), s) && !l.fits(nd, s) {
		// At a node boundary: the end of the previous node has room.
		l.appendTo(ni-1, v)
		l.count++
		return
	}
	if !l.fits(nd, s) {
		// Split the node at k, then add v to the end of the left half.
		p := nd.bytePos(k)
		right := make([]byte, len(nd.buf)-p)
		copy(right, nd.buf[p:])
		rn := nd.n - k
		nd.buf = nd.buf[:p]
		nd.n = k
		r := l.insertNode(ni + 1)
		l.setBuf(r, right, 0)
		r.n = rn
		nd = l.node(ni)
		if !l.fits(nd, s) {
			n2 := l.insertNode(ni + 1)
			buf := make([]byte, s)
			putElem(buf, v)
			l.setBuf(n2, buf, 0)
			n2.n = 1
			l.count++
			return
		}
		l.appendTo(ni, v)
		l.count++
		return
	}
	p := nd.bytePos(k)
	l.splice(nd, p, p, v)
	nd.n++
	l.count++
}

// appendTo appends v at the end of node ni (which has room); the caller
// counts it in l.count.
func (l *List) appendTo(ni int, v []byte) {
	nd := l.node(ni)
	s := elemSize(len(v))
	if len(nd.buf)+s > cap(nd.buf) {
		used := len(nd.buf) - nd.off
		buf := make([]byte, used, 2*(used+s))
		copy(buf, nd.buf[nd.off:])
		l.setBuf(nd, buf, 0)
	}
	p := len(nd.buf)
	nd.buf = nd.buf[:p+s]
	putElem(nd.buf[p:], v)
	nd.n++
}

// DeleteRange removes count elements starting at start (0 <= start,
// start+count <= Len()).
func (l *List) DeleteRange(start, count int) {
	if count <= 0 {
		return
	}
	if start == 0 && count == l.count {
		l.clear()
		return
	}
	ni, k := l.locate(start)
	for count > 0 {
		nd := l.node(ni)
		if k == 0 && count >= nd.n {
			count -= nd.n
			l.count -= nd.n
			l.removeNode(ni)
			continue
		}
		take := nd.n - k
		if take > count {
			take = count
		}
		p := nd.bytePos(k)
		q := p
		for j := 0; j < take; j++ {
			_, q = readElem(nd.buf, q)
		}
		switch {
		case k == 0:
			nd.off = q
		case q == len(nd.buf):
			nd.buf = nd.buf[:p]
		default:
			n := copy(nd.buf[p:], nd.buf[q:])
			nd.buf = nd.buf[:p+n]
		}
		nd.n -= take
		l.count -= take
		count -= take
		ni++
		k = 0
	}
}

func (l *List) clear() {
	l.mem -= len(l.ring) * qnodeOverhead
	for i := 0; i < l.nodes; i++ {
		l.mem -= cap(l.node(i).buf)
	}
	l.ring, l.head, l.nodes, l.count = nil, 0, 0, 0
}

// Remove deletes the elements equal to v, skipping the first skip matches
// (from the head) and removing at most max (0: all) after them; it returns
// how many it removed. LREM with a negative count uses skip to remove the
// last matches.
func (l *List) Remove(v []byte, skip, max int) int {
	removed := 0
	for ni := 0; ni < l.nodes; {
		nd := l.node(ni)
		w := nd.off
		r := nd.off
		for r < len(nd.buf) {
			e, next := readElem(nd.buf, r)
			if string(e) == string(v) && (max == 0 || removed < max) {
				if skip > 0 {
					skip--
				} else {
					removed++
					nd.n--
					l.count--
					r = next
					continue
				}
			}
			if w != r {
				copy(nd.buf[w:], nd.buf[r:next])
			}
			w += next - r
			r = next
		}
		nd.buf = nd.buf[:w]
		if nd.n == 0 {
			l.removeNode(ni)
			continue
		}
		ni++
	}
	return removed
}

// Count returns how many elements equal v.
func (l *List) Count(v []byte) int {
	n := 0
	it := l.Iter(0, false)
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		if string(e) == string(v) {
			n++
		}
	}
	return n
}

// ListIter walks a list from an element towards the tail or the head.
type ListIter struct {
	l    *List
	ni   int
	p    int
	left int // elements left in the walk
	back bool
}

// Iter starts a walk at element i (0 <= i < Len()), towards the head when
// back is set.
func (l *List) Iter(i int, back bool) ListIter {
	it := ListIter{l: l, back: back}
	if i < 0 || i >= l.count {
		return it
	}
	ni, k := l.locate(i)
	nd := l.node(ni)
	it.ni = ni
	if back {
		_, it.p = readElem(nd.buf, nd.bytePos(k)) // end of element k
		it.left = i + 1
	} else {
		it.p = nd.bytePos(k)
		it.left = l.count - i
	}
	return it
}

// Next returns the next element of the walk.
func (it *ListIter) Next() ([]byte, bool) {
	if it.left == 0 {
		return nil, false
	}
	it.left--
	l := it.l
	nd := l.node(it.ni)
	if it.back {
		if it.p <= nd.off {
			it.ni--
			nd = l.node(it.ni)
			it.p = len(nd.buf)
		}
		e, start := readElemBack(nd.buf, it.p)
		it.p = start
		return e, true
	}
	if it.p >= len(nd.buf) {
		it.ni++
		nd = l.node(it.ni)
		it.p = nd.off
	}
	e, next := readElem(nd.buf, it.p)
	it.p = next
	return e, true
}

// Copy returns a deep copy (COPY).
func (l *List) Copy() Object {
	n := &List{fill: l.fill}
	if l.nodes == 0 {
		return n
	}
	size := 1
	for size < l.nodes {
		size *= 2
	}
	n.ring = make([]qnode, size)
	n.mem = size * qnodeOverhead
	for i := 0; i < l.nodes; i++ {
		nd := l.node(i)
		buf := make([]byte, len(nd.buf)-nd.off)
		copy(buf, nd.buf[nd.off:])
		n.ring[i] = qnode{buf: buf, n: nd.n}
		n.mem += cap(buf)
	}
	n.nodes, n.count = l.nodes, l.count
	return n
}

// Dump returns RPUSH commands of at most 64 elements that rebuild the list.
func (l *List) Dump(key []byte) [][][]byte {
	var cmds [][][]byte
	var cur [][]byte
	it := l.Iter(0, false)
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		if cur == nil {
			cur = append(make([][]byte, 0, 66), []byte("RPUSH"), key)
		}
		cur = append(cur, append([]byte(nil), e...))
		if len(cur) == 66 {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	if cur != nil {
		cmds = append(cmds, cur)
	}
	return cmds
}
