package shard

import "sort"

// streamPEL is a pending entries list: the NACKs of a group or of one
// consumer, ordered by ID. It is a sorted run of chunks of at most
// pelChunkMax NACKs each (no chunk is empty), so that finding an ID is a
// binary search over the chunks' last IDs and then within one chunk, and
// inserting or deleting moves at most a chunk's worth of pointers (plus the
// chunk list when a chunk is split or dropped). Deliveries append at the back
// and acknowledgements mostly remove from the front, which both stay cheap.
type streamPEL struct {
	chunks [][]*streamNACK
	n      int
}

const pelChunkMax = 128

func (p *streamPEL) len() int { return p.n }

// chunkFor is the index of the first chunk whose last ID is >= id
// (len(p.chunks) when id is past every NACK).
func (p *streamPEL) chunkFor(id streamID) int {
	ch := p.chunks
	return sort.Search(len(ch), func(i int) bool { return ch[i][len(ch[i])-1].id.cmp(id) >= 0 })
}

func searchChunk(ch []*streamNACK, id streamID) int {
	return sort.Search(len(ch), func(i int) bool { return ch[i].id.cmp(id) >= 0 })
}

// find returns the NACK of id, nil when id is not pending.
func (p *streamPEL) find(id streamID) *streamNACK {
	ci := p.chunkFor(id)
	if ci == len(p.chunks) {
		return nil
	}
	ch := p.chunks[ci]
	j := searchChunk(ch, id)
	if j < len(ch) && ch[j].id == id {
		return ch[j]
	}
	return nil
}

// insert adds nk; false (and no change) when its ID is already present.
func (p *streamPEL) insert(nk *streamNACK) bool {
	id := nk.id
	if len(p.chunks) == 0 {
		p.chunks = append(p.chunks, []*streamNACK{nk})
		p.n++
		return true
	}
	ci := p.chunkFor(id)
	if ci == len(p.chunks) {
		// Past the end: the common case of a new delivery.
		last := p.chunks[ci-1]
		if len(last) >= pelChunkMax {
			nc := make([]*streamNACK, 1, 8)
			nc[0] = nk
			p.chunks = append(p.chunks, nc)
		} else {
			p.chunks[ci-1] = append(last, nk)
		}
		p.n++
		return true
	}
	ch := p.chunks[ci]
	j := searchChunk(ch, id)
	if j < len(ch) && ch[j].id == id {
		return false
	}
	if len(ch) >= pelChunkMax {
		// Split in halves, then insert into the half that holds the position.
		half := len(ch) / 2
		right := make([]*streamNACK, len(ch)-half, pelChunkMax)
		copy(right, ch[half:])
		for k := half; k < len(ch); k++ {
			ch[k] = nil
		}
		left := ch[:half]
		p.chunks = append(p.chunks, nil)
		copy(p.chunks[ci+2:], p.chunks[ci+1:])
		p.chunks[ci], p.chunks[ci+1] = left, right
		if j > half {
			ci, ch, j = ci+1, right, j-half
		} else {
			ch = left
		}
	}
	ch = append(ch, nil)
	copy(ch[j+1:], ch[j:])
	ch[j] = nk
	p.chunks[ci] = ch
	p.n++
	return true
}

// delete removes id and returns its NACK, nil when it was not pending.
func (p *streamPEL) delete(id streamID) *streamNACK {
	ci := p.chunkFor(id)
	if ci == len(p.chunks) {
		return nil
	}
	ch := p.chunks[ci]
	j := searchChunk(ch, id)
	if j >= len(ch) || ch[j].id != id {
		return nil
	}
	nk := ch[j]
	p.n--
	if len(ch) == 1 {
		copy(p.chunks[ci:], p.chunks[ci+1:])
		p.chunks[len(p.chunks)-1] = nil
		p.chunks = p.chunks[:len(p.chunks)-1]
		if len(p.chunks) == 0 {
			p.chunks = nil
		}
		return nk
	}
	if j == 0 {
		// Removing from the front (acks in order): reslice, no move.
		ch[0] = nil
		ch = ch[1:]
	} else {
		copy(ch[j:], ch[j+1:])
		ch[len(ch)-1] = nil
		ch = ch[:len(ch)-1]
	}
	p.chunks[ci] = ch
	if len(ch) < pelChunkMax/4 {
		p.merge(ci)
	}
	return nk
}

// merge joins the small chunk ci with a neighbour when both fit in half a
// chunk, so that scattered deletes do not leave a long run of tiny chunks.
// (A front chunk drained by in-order acks beside a full one is left alone.)
func (p *streamPEL) merge(ci int) {
	switch {
	case ci+1 < len(p.chunks) && len(p.chunks[ci])+len(p.chunks[ci+1]) <= pelChunkMax/2:
	case ci > 0 && len(p.chunks[ci-1])+len(p.chunks[ci]) <= pelChunkMax/2:
		ci--
	default:
		return
	}
	left, right := p.chunks[ci], p.chunks[ci+1]
	merged := make([]*streamNACK, len(left)+len(right), pelChunkMax/2)
	copy(merged, left)
	copy(merged[len(left):], right)
	p.chunks[ci] = merged
	copy(p.chunks[ci+1:], p.chunks[ci+2:])
	p.chunks[len(p.chunks)-1] = nil
	p.chunks = p.chunks[:len(p.chunks)-1]
}

// mem estimates the bytes held by a group's PEL and its consumers' (the
// NACKs are shared: counted once, with a pointer in each list).
func (p *streamPEL) mem() int { return p.n*(48+16) + len(p.chunks)*24 }

// first and last are the lowest and highest NACKs (nil when empty).
func (p *streamPEL) first() *streamNACK {
	if p.n == 0 {
		return nil
	}
	return p.chunks[0][0]
}

func (p *streamPEL) last() *streamNACK {
	if p.n == 0 {
		return nil
	}
	ch := p.chunks[len(p.chunks)-1]
	return ch[len(ch)-1]
}

// seek returns the first NACK with an ID >= id, nil when there is none.
func (p *streamPEL) seek(id streamID) *streamNACK {
	ci := p.chunkFor(id)
	if ci == len(p.chunks) {
		return nil
	}
	ch := p.chunks[ci]
	return ch[searchChunk(ch, id)]
}

// ascend calls fn on the NACKs with IDs >= from in order, until fn returns
// false. fn must not insert into or delete from p.
func (p *streamPEL) ascend(from streamID, fn func(nk *streamNACK) bool) {
	ci := p.chunkFor(from)
	if ci == len(p.chunks) {
		return
	}
	j := searchChunk(p.chunks[ci], from)
	for ; ci < len(p.chunks); ci, j = ci+1, 0 {
		for _, nk := range p.chunks[ci][j:] {
			if !fn(nk) {
				return
			}
		}
	}
}

// each calls fn on every NACK in order until it returns false.
func (p *streamPEL) each(fn func(nk *streamNACK) bool) {
	for _, ch := range p.chunks {
		for _, nk := range ch {
			if !fn(nk) {
				return
			}
		}
	}
}
