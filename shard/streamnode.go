package shard

import (
	"encoding/binary"
	"sort"
)

// Storage of a stream's entries, the role of Redis's radix tree of
// listpacks (t_stream.c).
//
// Entries sit in nodes, kept in ID order in one slice. A node holds a run of
// consecutive entries in one byte buffer; the collector sees a handful of
// pointers per node, never one per entry. A node ends, and the next begins,
// when its buffer would reach stream-node-max-bytes or when it holds
// stream-node-max-entries entries (live and deleted), as in Redis.
//
// The fields of a node's first entry are its master fields. Each entry is
//
//	flags       one byte: streamFlagDeleted, streamFlagSameFields
//	ms delta    uvarint, ms minus the node's first ms
//	seq         uvarint
//	[n]         uvarint number of pairs, absent with streamFlagSameFields
//	elements    uvarint length + bytes: the values only when the fields are
//	            the master fields, else field, value, field, value...
//
// XDEL and an exact trim inside a node mark entries deleted, as Redis does;
// a node whose entries are all deleted leaves the slice. Nothing else in a
// node's buffer changes once written, so the fields and values handed to
// callers stay valid.

const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

// streamNodeMaxBytesCap is STREAM_LISTPACK_MAX_SIZE: stream-node-max-bytes 0
// or above it means this.
const streamNodeMaxBytesCap = 1 << 30

type snode struct {
	first   streamID // the first entry's ID (the master ID)
	last    streamID // the last entry's ID, live or deleted
	live    int32
	deleted int32
	mf      [][]byte // master fields, in one buffer of their own
	data    []byte
}

func (nd *snode) mem() int { return 96 + cap(nd.data) + len(nd.mf)*24 + mfBytes(nd.mf) }

func mfBytes(mf [][]byte) int {
	n := 0
	for _, f := range mf {
		n += len(f)
	}
	return n
}

// entry decoding: a cursor over a node's buffer.

func uvar(b []byte, p int) (uint64, int) {
	v, k := binary.Uvarint(b[p:])
	return v, p + k
}

// head decodes the entry at p: its flags, ID and the offset of its elements.
func (nd *snode) head(p int) (byte, streamID, int) {
	fl := nd.data[p]
	msd, p := uvar(nd.data, p+1)
	seq, p := uvar(nd.data, p)
	return fl, streamID{nd.first.ms + msd, seq}, p
}

// body appends the fields and values of the entry whose elements start at p
// to dst and returns the offset of the next entry.
func (nd *snode) body(fl byte, p int, dst [][]byte) ([][]byte, int) {
	b := nd.data
	if fl&streamFlagSameFields != 0 {
		for _, f := range nd.mf {
			l, q := uvar(b, p)
			dst = append(dst, f, b[q:q+int(l):q+int(l)])
			p = q + int(l)
		}
		return dst, p
	}
	n, p := uvar(b, p)
	for i := uint64(0); i < 2*n; i++ {
		l, q := uvar(b, p)
		dst = append(dst, b[q:q+int(l):q+int(l)])
		p = q + int(l)
	}
	return dst, p
}

// skip returns the offset of the entry after the one whose elements start at p.
func (nd *snode) skip(fl byte, p int) int {
	b := nd.data
	n := uint64(len(nd.mf))
	if fl&streamFlagSameFields == 0 {
		var k uint64
		k, p = uvar(b, p)
		n = 2 * k
	}
	for i := uint64(0); i < n; i++ {
		l, q := uvar(b, p)
		p = q + int(l)
	}
	return p
}

func sameFields(mf, fv [][]byte) bool {
	if len(fv) != 2*len(mf) {
		return false
	}
	for i, f := range mf {
		if string(f) != string(fv[2*i]) {
			return false
		}
	}
	return true
}

func uvarLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendEntry adds an entry after every other; the caller checked the ID.
func (s *streamObj) appendEntry(cfg *Tunables, id streamID, fv [][]byte) {
	maxBytes, maxEntries := int64(4096), int64(100)
	if cfg != nil {
		maxBytes, maxEntries = cfg.StreamNodeMaxBytes.Load(), cfg.StreamNodeMaxEntries.Load()
	}
	if maxBytes <= 0 || maxBytes > streamNodeMaxBytesCap {
		maxBytes = streamNodeMaxBytesCap
	}
	var nd *snode
	if len(s.nodes) > 0 {
		nd = s.nodes[len(s.nodes)-1]
	}
	same := nd != nil && sameFields(nd.mf, fv)
	size := 3 + uvarLen(id.seq)
	for i, f := range fv {
		if !same || i%2 == 1 {
			size += uvarLen(uint64(len(f))) + len(f)
		}
	}
	if nd != nil && (int64(len(nd.data)+size) >= maxBytes ||
		maxEntries > 0 && int64(nd.live+nd.deleted) >= maxEntries) {
		// Close the node at its size, as Redis shrinks a full listpack
		// (when the room its first entry suggested was off by much).
		if cap(nd.data)-len(nd.data) > len(nd.data)/8 {
			before := nd.mem()
			nd.data = append(make([]byte, 0, len(nd.data)), nd.data...)
			s.mem += nd.mem() - before
		}
		nd = nil
	}
	if nd == nil {
		nd = &snode{first: id}
		var n int
		for i := 0; i < len(fv); i += 2 {
			n += len(fv[i])
		}
		buf := make([]byte, 0, n)
		nd.mf = make([][]byte, 0, len(fv)/2)
		for i := 0; i < len(fv); i += 2 {
			buf = append(buf, fv[i]...)
			nd.mf = append(nd.mf, buf[len(buf)-len(fv[i]):len(buf):len(buf)])
		}
		// Room for the node as its first entry predicts it, so that it does
		// not grow by doubling (each step garbage, which kept the RSS of a
		// million entries at twice their size).
		room := int64(maxBytes)
		if maxEntries > 0 {
			room = min(room, int64(size+2)*maxEntries)
		}
		nd.data = make([]byte, 0, min(room, 64<<10))
		s.nodes = append(s.nodes, nd)
		s.mem += nd.mem()
		same = true
	}
	before := cap(nd.data)
	fl := byte(0)
	if same {
		fl = streamFlagSameFields
	}
	nd.data = append(nd.data, fl)
	nd.data = binary.AppendUvarint(nd.data, id.ms-nd.first.ms)
	nd.data = binary.AppendUvarint(nd.data, id.seq)
	if !same {
		nd.data = binary.AppendUvarint(nd.data, uint64(len(fv)/2))
	}
	for i, f := range fv {
		if !same || i%2 == 1 {
			nd.data = binary.AppendUvarint(nd.data, uint64(len(f)))
			nd.data = append(nd.data, f...)
		}
	}
	s.mem += cap(nd.data) - before
	nd.last = id
	nd.live++
	s.length++
	s.entriesAdded++
	s.lastID = id
	if s.length == 1 {
		s.firstID = id
	}
}

// nodeFor is the index of the first node whose last ID is at least id.
func (s *streamObj) nodeFor(id streamID) int {
	return sort.Search(len(s.nodes), func(i int) bool { return s.nodes[i].last.cmp(id) >= 0 })
}

// find locates live entry id: its node and the offset of its head.
func (s *streamObj) find(id streamID) (int, int, bool) {
	ni := s.nodeFor(id)
	if ni == len(s.nodes) || s.nodes[ni].first.cmp(id) > 0 {
		return ni, 0, false
	}
	nd := s.nodes[ni]
	for p := 0; p < len(nd.data); {
		fl, eid, q := nd.head(p)
		if c := eid.cmp(id); c == 0 {
			return ni, p, fl&streamFlagDeleted == 0
		} else if c > 0 {
			break
		}
		p = nd.skip(fl, q)
	}
	return ni, 0, false
}

func (s *streamObj) exists(id streamID) bool { _, _, ok := s.find(id); return ok }

// get returns the fields and values of entry id, appended to dst.
func (s *streamObj) get(id streamID, dst [][]byte) ([][]byte, bool) {
	ni, p, ok := s.find(id)
	if !ok {
		return dst, false
	}
	nd := s.nodes[ni]
	fl, _, q := nd.head(p)
	dst, _ = nd.body(fl, q, dst)
	return dst, true
}

// markDeleted flags the entry whose head is at p of node ni; the node leaves
// when nothing in it is live.
func (s *streamObj) markDeleted(ni, p int) {
	nd := s.nodes[ni]
	nd.data[p] |= streamFlagDeleted
	nd.live--
	nd.deleted++
	s.length--
	if nd.live == 0 {
		s.mem -= nd.mem()
		copy(s.nodes[ni:], s.nodes[ni+1:])
		s.nodes[len(s.nodes)-1] = nil
		s.nodes = s.nodes[:len(s.nodes)-1]
	}
}

// remove deletes entry id; false when absent. The caller updates firstID
// (fixFirst) once it is done removing.
func (s *streamObj) remove(id streamID) bool {
	ni, p, ok := s.find(id)
	if ok {
		s.markDeleted(ni, p)
	}
	return ok
}

// fixFirst sets firstID to the first live entry.
func (s *streamObj) fixFirst() {
	s.firstID = streamID{}
	if s.length == 0 || len(s.nodes) == 0 {
		return
	}
	nd := s.nodes[0]
	for p := 0; p < len(nd.data); {
		fl, id, q := nd.head(p)
		if fl&streamFlagDeleted == 0 {
			s.firstID = id
			return
		}
		p = nd.skip(fl, q)
	}
}

// lastValid is the ID of the last live entry (0-0 when none).
func (s *streamObj) lastValid() streamID {
	var last streamID
	if s.length == 0 || len(s.nodes) == 0 {
		return last
	}
	nd := s.nodes[len(s.nodes)-1]
	for p := 0; p < len(nd.data); {
		fl, id, q := nd.head(p)
		if fl&streamFlagDeleted == 0 {
			last = id
		}
		p = nd.skip(fl, q)
	}
	return last
}

// each calls fn with the ID and the fields and values (valid only during
// the call) of each live entry in [start, end], in order (rev: backwards),
// until fn returns false.
func (s *streamObj) each(start, end streamID, rev bool, fn func(id streamID, fv [][]byte) bool) {
	if start.cmp(end) > 0 || len(s.nodes) == 0 {
		return
	}
	var fv [][]byte
	if !rev {
		for ni := s.nodeFor(start); ni < len(s.nodes); ni++ {
			nd := s.nodes[ni]
			if nd.first.cmp(end) > 0 {
				return
			}
			for p := 0; p < len(nd.data); {
				fl, id, q := nd.head(p)
				if id.cmp(end) > 0 {
					return
				}
				if fl&streamFlagDeleted != 0 || id.cmp(start) < 0 {
					p = nd.skip(fl, q)
					continue
				}
				fv, p = nd.body(fl, q, fv[:0])
				if !fn(id, fv) {
					return
				}
			}
		}
		return
	}
	var offs []int
	ni := s.nodeFor(end)
	if ni == len(s.nodes) {
		ni--
	}
	for ; ni >= 0; ni-- {
		nd := s.nodes[ni]
		if nd.last.cmp(start) < 0 {
			return
		}
		offs = offs[:0]
		for p := 0; p < len(nd.data); {
			fl, _, q := nd.head(p)
			offs = append(offs, p)
			p = nd.skip(fl, q)
		}
		for k := len(offs) - 1; k >= 0; k-- {
			fl, id, q := nd.head(offs[k])
			if id.cmp(start) < 0 {
				return
			}
			if fl&streamFlagDeleted != 0 || id.cmp(end) > 0 {
				continue
			}
			fv, _ = nd.body(fl, q, fv[:0])
			if !fn(id, fv) {
				return
			}
		}
	}
}

// trim removes entries from the head, as Redis's streamTrim: whole nodes
// while it can, then (unless approx) entries of the first node are marked
// deleted. limit > 0 bounds the entries removed. It returns how many went.
func (s *streamObj) trim(maxlen int64, minid *streamID, approx bool, limit int64) int64 {
	var deleted int64
	for len(s.nodes) > 0 {
		if minid == nil && s.length <= maxlen {
			break
		}
		nd := s.nodes[0]
		entries := int64(nd.live)
		if limit > 0 && deleted+entries > limit {
			break
		}
		var whole bool
		if minid == nil {
			whole = s.length-entries >= maxlen
		} else {
			whole = nd.last.cmp(*minid) < 0
		}
		if whole {
			s.mem -= nd.mem()
			s.nodes[0] = nil
			s.nodes = s.nodes[1:]
			s.length -= entries
			deleted += entries
			continue
		}
		if approx {
			break
		}
		for p := 0; p < len(nd.data) && len(s.nodes) > 0 && s.nodes[0] == nd; {
			fl, id, q := nd.head(p)
			if minid == nil && s.length <= maxlen || minid != nil && id.cmp(*minid) >= 0 {
				break
			}
			if fl&streamFlagDeleted == 0 {
				s.markDeleted(0, p)
				deleted++
			}
			p = nd.skip(fl, q)
		}
		break
	}
	if deleted > 0 {
		s.fixFirst()
	}
	return deleted
}

// nodeCount is the number of storage nodes (XINFO STREAM's radix-tree-keys).
func (s *streamObj) nodeCount() int { return len(s.nodes) }

// copyNodes returns a deep copy of the nodes (master fields are never
// written after a node starts, so they are shared).
func copyNodes(nodes []*snode) []*snode {
	out := make([]*snode, len(nodes))
	for i, nd := range nodes {
		n := *nd
		n.data = append([]byte(nil), nd.data...)
		out[i] = &n
	}
	return out
}
