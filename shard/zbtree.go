package shard

import (
	"bytes"
	"unsafe"
)

// The order of a big sorted set: an order-statistic B+ tree over element
// ids. Leaves hold up to btMax elements in (score, member) order with their
// scores beside them; an inner node holds, for each child, its id, how many
// elements it holds and its last element (id and score). A lookup so reads
// a few cache lines per level, about five levels for a million members,
// where the treap it replaces read one line per level over some 25 levels:
// ZADD -P 16 into a 1M-member set spent 39% of its CPU linking treap nodes.
//
// Nodes live in chunks that never move, so a *btNode stays valid while
// others are added. Leaves are linked both ways for iteration. A delete
// merges a node into a neighbour when both together fill at most half a
// node (and, when two inner nodes merge, the children that meet at the
// seam), so no two neighbours are both under a quarter full.

const (
	btMax       = 32
	btChunkBits = 6
	btChunk     = 1 << btChunkBits
)

type btNode struct {
	n          int32
	leaf       bool
	prev, next int32          // leaves: neighbours in order, -1 at the ends; free list link
	id         [btMax]int32   // leaf: elements; inner: children
	key        [btMax]float64 // leaf: element scores; inner: the score of each child's last element
	last       [btMax]int32   // inner: each child's last element
	cnt        [btMax]int32   // inner: elements under each child
}

// btNodeSize is the size of a btNode in bytes.
const btNodeSize = int(unsafe.Sizeof(btNode{}))

func (s *zskip) node(x int32) *btNode { return &s.nodes[x>>btChunkBits][x&(btChunk-1)] }

func (s *zskip) newNode(leaf bool) int32 {
	var x int32
	if s.nfree >= 0 {
		x = s.nfree
		s.nfree = s.node(x).next
	} else {
		x = s.nnodes
		if int(x>>btChunkBits) == len(s.nodes) {
			s.nodes = append(s.nodes, new([btChunk]btNode))
		}
		s.nnodes++
	}
	nd := s.node(x)
	nd.n, nd.leaf, nd.prev, nd.next = 0, leaf, -1, -1
	s.nodesIn++
	return x
}

func (s *zskip) freeNode(x int32) {
	nd := s.node(x)
	if nd.leaf {
		if nd.prev >= 0 {
			s.node(nd.prev).next = nd.next
		}
		if nd.next >= 0 {
			s.node(nd.next).prev = nd.prev
		}
	}
	nd.n, nd.next = 0, s.nfree
	s.nfree = x
	s.nodesIn--
}

// before reports whether element t (whose score is sc) sorts before
// (score, m).
func (s *zskip) before(t int32, sc, score float64, m []byte) bool {
	if sc != score {
		return sc < score
	}
	return bytes.Compare(s.mem(t), m) < 0
}

// firstIn returns the first entry of nd for which ok holds, ok being false
// for a prefix of the entries and true for the rest (nd.n if none). It is
// given each entry's element (in an inner node, the child's last) and score.
func firstIn(nd *btNode, ok func(t int32, score float64) bool) int {
	ids := &nd.id
	if !nd.leaf {
		ids = &nd.last
	}
	lo, hi := 0, int(nd.n)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if ok(ids[h], nd.key[h]) {
			hi = h
		} else {
			lo = h + 1
		}
	}
	return lo
}

// pos returns the first entry of nd that does not sort before (score, m);
// in an inner node that is the child to descend into (the last one when
// every entry sorts before).
func (s *zskip) pos(nd *btNode, score float64, m []byte) int {
	lo := firstIn(nd, func(t int32, sc float64) bool { return !s.before(t, sc, score, m) })
	if !nd.leaf && lo == int(nd.n) {
		lo--
	}
	return lo
}

// total is the number of elements under nd.
func total(nd *btNode) int32 {
	if nd.leaf {
		return nd.n
	}
	var c int32
	for _, v := range nd.cnt[:nd.n] {
		c += v
	}
	return c
}

// refresh copies child i's last element into nd's entry for it.
func (s *zskip) refresh(nd *btNode, i int) {
	c := s.node(nd.id[i])
	j := c.n - 1
	if c.leaf {
		nd.last[i] = c.id[j]
	} else {
		nd.last[i] = c.last[j]
	}
	nd.key[i] = c.key[j]
}

// setChild makes entry i of inner node nd describe child x.
func (s *zskip) setChild(nd *btNode, i int, x int32) {
	nd.id[i] = x
	nd.cnt[i] = total(s.node(x))
	s.refresh(nd, i)
}

// split moves the upper half of full node x into a new node after it and
// returns the new node.
func (s *zskip) split(x int32) int32 {
	y := s.newNode(s.node(x).leaf)
	a, b := s.node(x), s.node(y)
	h := a.n / 2
	k := a.n - h
	copy(b.id[:k], a.id[h:a.n])
	copy(b.key[:k], a.key[h:a.n])
	if !a.leaf {
		copy(b.last[:k], a.last[h:a.n])
		copy(b.cnt[:k], a.cnt[h:a.n])
	} else {
		b.prev, b.next = x, a.next
		if a.next >= 0 {
			s.node(a.next).prev = y
		}
		a.next = y
	}
	a.n, b.n = h, k
	return y
}

// ins inserts element t under node x and returns the node split off x, or
// -1.
func (s *zskip) ins(x, t int32, score float64, m []byte) int32 {
	nd := s.node(x)
	i := s.pos(nd, score, m)
	if nd.leaf {
		copy(nd.id[i+1:nd.n+1], nd.id[i:nd.n])
		copy(nd.key[i+1:nd.n+1], nd.key[i:nd.n])
		nd.id[i], nd.key[i] = t, score
		nd.n++
	} else {
		if y := s.ins(nd.id[i], t, score, m); y >= 0 {
			copy(nd.id[i+2:nd.n+1], nd.id[i+1:nd.n])
			copy(nd.key[i+2:nd.n+1], nd.key[i+1:nd.n])
			copy(nd.last[i+2:nd.n+1], nd.last[i+1:nd.n])
			copy(nd.cnt[i+2:nd.n+1], nd.cnt[i+1:nd.n])
			nd.n++
			s.setChild(nd, i, nd.id[i])
			s.setChild(nd, i+1, y)
		} else {
			nd.cnt[i]++
			s.refresh(nd, i)
		}
	}
	if nd.n == btMax {
		return s.split(x)
	}
	return -1
}

// link puts element t into the tree.
func (s *zskip) link(t int32) {
	e := s.e(t)
	if s.root < 0 {
		s.root = s.newNode(true)
	}
	if y := s.ins(s.root, t, e.score, s.mem(t)); y >= 0 {
		r := s.newNode(false)
		nd := s.node(r)
		nd.n = 2
		s.setChild(nd, 0, s.root)
		s.setChild(nd, 1, y)
		s.root = r
	}
}

// cut removes entry i of nd (the child it names is already freed or
// merged away).
func cut(nd *btNode, i int) {
	copy(nd.id[i:nd.n-1], nd.id[i+1:nd.n])
	copy(nd.key[i:nd.n-1], nd.key[i+1:nd.n])
	if !nd.leaf {
		copy(nd.last[i:nd.n-1], nd.last[i+1:nd.n])
		copy(nd.cnt[i:nd.n-1], nd.cnt[i+1:nd.n])
	}
	nd.n--
}

// mergeInto appends node y's entries to node x (its left neighbour) and
// frees y; inner nodes then merge the two children that meet at the seam
// if they fit together.
func (s *zskip) mergeInto(x, y int32) {
	a, b := s.node(x), s.node(y)
	copy(a.id[a.n:a.n+b.n], b.id[:b.n])
	copy(a.key[a.n:a.n+b.n], b.key[:b.n])
	if !a.leaf {
		copy(a.last[a.n:a.n+b.n], b.last[:b.n])
		copy(a.cnt[a.n:a.n+b.n], b.cnt[:b.n])
	}
	seam := int(a.n)
	a.n += b.n
	s.freeNode(y)
	if !a.leaf {
		s.mergeSmall(a, seam-1) // the children that now meet may fit together
	}
}

// shrunk restores inner node nd after child i lost one element: an empty
// child goes, a small one merges with a neighbour when both fit in half a
// node, and the entry's count and last element follow.
func (s *zskip) shrunk(nd *btNode, i int) {
	c := nd.id[i]
	if s.node(c).n == 0 {
		s.freeNode(c)
		cut(nd, i)
		// its neighbours meet: they may fit together now
		if i > 0 && i < int(nd.n) {
			s.mergeSmall(nd, i-1)
		}
		return
	}
	nd.cnt[i]--
	if !s.mergeSmall(nd, i) && i > 0 && s.mergeSmall(nd, i-1) {
		i--
	}
	s.refresh(nd, i)
}

// mergeSmall merges child i+1 of nd into child i when both fit in half a
// node, and reports whether it did.
func (s *zskip) mergeSmall(nd *btNode, i int) bool {
	if i+1 >= int(nd.n) || s.node(nd.id[i]).n+s.node(nd.id[i+1]).n > btMax/2 {
		return false
	}
	nd.cnt[i] += nd.cnt[i+1]
	s.mergeInto(nd.id[i], nd.id[i+1])
	cut(nd, i+1)
	s.refresh(nd, i)
	return true
}

// del removes element t, of key (score, m), from under node x.
func (s *zskip) del(x, t int32, score float64, m []byte) {
	nd := s.node(x)
	i := s.pos(nd, score, m)
	if nd.leaf {
		if i >= int(nd.n) || nd.id[i] != t {
			panic("zset: element not in its tree")
		}
		cut(nd, i)
		return
	}
	s.del(nd.id[i], t, score, m)
	s.shrunk(nd, i)
}

// delRank removes the element of rank r from under node x and returns it.
func (s *zskip) delRank(x int32, r int32) int32 {
	nd := s.node(x)
	if nd.leaf {
		t := nd.id[r]
		cut(nd, int(r))
		return t
	}
	i := 0
	for r >= nd.cnt[i] {
		r -= nd.cnt[i]
		i++
	}
	t := s.delRank(nd.id[i], r)
	s.shrunk(nd, i)
	return t
}

// settle shortens the tree after a delete: an empty root leaf goes, an
// inner root with one child hands over to it.
func (s *zskip) settle() {
	for s.root >= 0 {
		nd := s.node(s.root)
		switch {
		case nd.leaf && nd.n == 0:
			s.freeNode(s.root)
			s.root = -1
		case !nd.leaf && nd.n == 1:
			r := s.root
			s.root = nd.id[0]
			s.freeNode(r)
			continue
		}
		return
	}
}

// detach takes element t out of the tree.
func (s *zskip) detach(t int32) {
	s.del(s.root, t, s.e(t).score, s.mem(t))
	s.settle()
}

// detachRank takes the element of rank r out of the tree and returns it.
func (s *zskip) detachRank(r int) int32 {
	t := s.delRank(s.root, int32(r))
	s.settle()
	return t
}

// leafAt returns the leaf holding rank r and r's index in it.
func (s *zskip) leafAt(r int) (int32, int) {
	x := s.root
	for {
		nd := s.node(x)
		if nd.leaf {
			return x, r
		}
		i := 0
		for r >= int(nd.cnt[i]) {
			r -= int(nd.cnt[i])
			i++
		}
		x = nd.id[i]
	}
}

func (s *zskip) byRank(r int) int32 {
	if r < 0 || r >= s.n {
		return -1
	}
	x, i := s.leafAt(r)
	return s.node(x).id[i]
}

// countLess returns how many elements sort before (score, m).
func (s *zskip) countLess(score float64, m []byte) int {
	r := 0
	for x := s.root; x >= 0; {
		nd := s.node(x)
		i := s.pos(nd, score, m)
		if nd.leaf {
			return r + i
		}
		for _, c := range nd.cnt[:i] {
			r += int(c)
		}
		x = nd.id[i]
	}
	return r
}

// search returns the first rank whose element satisfies pred, which is
// false for a prefix of the order and true for the rest (n if none).
func (s *zskip) search(pred func(score float64, m []byte) bool) int {
	r := 0
	for x := s.root; x >= 0; {
		nd := s.node(x)
		i := firstIn(nd, func(t int32, sc float64) bool { return pred(sc, s.mem(t)) })
		if nd.leaf {
			return r + i
		}
		for _, c := range nd.cnt[:i] {
			r += int(c)
		}
		if i == int(nd.n) {
			return r
		}
		x = nd.id[i]
	}
	return r
}

// freeTreeNodes drops every node (the set is emptied).
func (s *zskip) freeTreeNodes() {
	s.nodes, s.nnodes, s.nfree, s.nodesIn = nil, 0, -1, 0
	s.root = -1
}
