package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Stream listpack entry flags (STREAM_ITEM_FLAG_*).
const (
	streamFlagDeleted    = 1 << 0
	streamFlagSameFields = 1 << 1
)

// ErrBadStream is a stream whose nodes, counters, groups or PELs do not
// agree; the wrapping error says what.
var ErrBadStream = errors.New("corrupt stream")

// ErrDuplicateConsumer is a consumer group naming a consumer twice (with
// ErrBadStream); Redis reports it as "Duplicate stream consumer detected."
var ErrDuplicateConsumer = errors.New("duplicate stream consumer")

func badStream(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadStream}, args...)...)
}

// Compare orders stream IDs: -1, 0 or 1 as id is before, equal to or
// after o.
func (id StreamID) Compare(o StreamID) int {
	switch {
	case id.Ms < o.Ms:
		return -1
	case id.Ms > o.Ms:
		return 1
	case id.Seq < o.Seq:
		return -1
	case id.Seq > o.Seq:
		return 1
	}
	return 0
}

func (id StreamID) String() string { return fmt.Sprintf("%d-%d", id.Ms, id.Seq) }

// appendStreamID appends id as Redis's streamEncodeID: 128 bits big-endian.
func appendStreamID(b []byte, id StreamID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, id.Ms), id.Seq)
}

func decodeStreamID(b []byte) StreamID {
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// streamNode is a listpack read from the file, before the nodes are put
// in rax (ID) order.
type streamNode struct {
	master      StreamID
	first, last StreamID // of all its entries, deleted ones included
	any         bool     // it has entries (Redis accepts a node of none)
	entries     []StreamEntry
}

// readStream reads a STREAM_LISTPACKS (t 15) or _2 (t 19) value.
func readStream(d *decoder, t byte) (*Stream, error) {
	// A node is at least a 1-byte key and a 1-byte listpack string.
	n, err := d.count(2)
	if err != nil {
		return nil, err
	}
	nodes := make([]streamNode, 0, d.capFor(n, 2))
	for i := uint64(0); i < n; i++ {
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		if len(key) != 16 {
			return nil, badStream("node key of %d bytes is not a stream ID", len(key))
		}
		lp, err := d.str()
		if err != nil {
			return nil, err
		}
		node, err := parseStreamNode(decodeStreamID(key), lp)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, node)
	}
	// Redis inserts the nodes in a radix tree: they are taken in key order.
	slices.SortStableFunc(nodes, func(a, b streamNode) int { return a.master.Compare(b.master) })
	s := &Stream{}
	live := 0
	var prev *streamNode // the last one with entries
	for i := range nodes {
		if i > 0 && nodes[i].master == nodes[i-1].master {
			return nil, badStream("node %s twice", nodes[i].master)
		}
		if !nodes[i].any {
			continue
		}
		if prev != nil && nodes[i].first.Compare(prev.last) <= 0 {
			return nil, badStream("node %s overlaps node %s", nodes[i].master, prev.master)
		}
		prev = &nodes[i]
		live += len(nodes[i].entries)
	}
	s.Entries = make([]StreamEntry, 0, live)
	for _, nd := range nodes {
		s.Entries = append(s.Entries, nd.entries...)
	}

	length, err := d.length()
	if err != nil {
		return nil, err
	}
	if s.LastID, err = readLenID(d); err != nil {
		return nil, err
	}
	if t == TypeStreamListpacks2 {
		if s.FirstID, err = readLenID(d); err != nil {
			return nil, err
		}
		if s.MaxDeletedID, err = readLenID(d); err != nil {
			return nil, err
		}
		added, err := d.length()
		if err != nil {
			return nil, err
		}
		s.EntriesAdded = int64(added)
	}
	if length != 0 && len(nodes) == 0 {
		return nil, badStream("length %d without nodes", length)
	}
	if length != uint64(len(s.Entries)) {
		return nil, badStream("length %d, %d entries", length, len(s.Entries))
	}
	if len(s.Entries) > 0 && s.LastID.Compare(s.Entries[len(s.Entries)-1].ID) < 0 {
		return nil, badStream("last ID %s before the last entry %s", s.LastID, s.Entries[len(s.Entries)-1].ID)
	}
	if t == TypeStreamListpacks {
		// As Redis 7.0 migrates an RDB 9 stream: entries-added is the
		// length, no tombstone is known, the first ID is the first live
		// entry's (streamGetEdgeID: the maximal ID when there is none).
		s.EntriesAdded = int64(length)
		if len(s.Entries) > 0 {
			s.FirstID = s.Entries[0].ID
		} else {
			s.FirstID = StreamID{math.MaxUint64, math.MaxUint64}
		}
	}

	// Groups: at least a name, 2 ID lengths, a PEL count, a consumer count.
	ng, err := d.count(5)
	if err != nil {
		return nil, err
	}
	s.Groups = make([]StreamGroup, 0, d.capFor(ng, 5))
	names := make(map[string]struct{})
	for i := uint64(0); i < ng; i++ {
		g, err := readStreamGroup(d, t, s)
		if err != nil {
			return nil, err
		}
		if _, dup := names[string(g.Name)]; dup {
			return nil, badStream("group %q twice", g.Name)
		}
		names[string(g.Name)] = struct{}{}
		s.Groups = append(s.Groups, g)
	}
	return s, nil
}

func readLenID(d *decoder) (StreamID, error) {
	ms, err := d.length()
	if err != nil {
		return StreamID{}, err
	}
	seq, err := d.length()
	return StreamID{ms, seq}, err
}

func readStreamGroup(d *decoder, t byte, s *Stream) (StreamGroup, error) {
	var g StreamGroup
	var err error
	if g.Name, err = d.str(); err != nil {
		return g, err
	}
	if g.LastID, err = readLenID(d); err != nil {
		return g, err
	}
	if t == TypeStreamListpacks2 {
		u, err := d.length()
		if err != nil {
			return g, err
		}
		g.EntriesRead = int64(u)
	} else {
		g.EntriesRead = estimateEntriesRead(s, g.LastID)
	}
	// A NACK: a 16-byte ID, an 8-byte delivery time, a count.
	np, err := d.count(25)
	if err != nil {
		return g, err
	}
	g.Pending = make([]StreamNACK, 0, d.capFor(np, 25))
	owner := make(map[StreamID]int, len(g.Pending)) // -1: no consumer yet
	for i := uint64(0); i < np; i++ {
		raw, err := d.view(16)
		if err != nil {
			return g, err
		}
		nack := StreamNACK{ID: decodeStreamID(raw)}
		tm, err := d.le(8)
		if err != nil {
			return g, err
		}
		cnt, err := d.length()
		if err != nil {
			return g, err
		}
		nack.DeliveryTime, nack.DeliveryCount = int64(tm), int64(cnt)
		if _, dup := owner[nack.ID]; dup {
			return g, badStream("group %q: PEL entry %s twice", g.Name, nack.ID)
		}
		owner[nack.ID] = -1
		g.Pending = append(g.Pending, nack)
	}
	// A consumer: a name, an 8-byte seen time, a PEL count.
	nc, err := d.count(10)
	if err != nil {
		return g, err
	}
	g.Consumers = make([]StreamConsumer, 0, d.capFor(nc, 10))
	cnames := make(map[string]struct{})
	for i := uint64(0); i < nc; i++ {
		var c StreamConsumer
		if c.Name, err = d.str(); err != nil {
			return g, err
		}
		if _, dup := cnames[string(c.Name)]; dup {
			return g, fmt.Errorf("%w: %w: group %q: consumer %q twice", ErrBadStream, ErrDuplicateConsumer, g.Name, c.Name)
		}
		cnames[string(c.Name)] = struct{}{}
		tm, err := d.le(8)
		if err != nil {
			return g, err
		}
		c.SeenTime = int64(tm)
		n, err := d.count(16)
		if err != nil {
			return g, err
		}
		c.Pending = make([]StreamID, 0, d.capFor(n, 16))
		for j := uint64(0); j < n; j++ {
			raw, err := d.view(16)
			if err != nil {
				return g, err
			}
			id := decodeStreamID(raw)
			o, ok := owner[id]
			switch {
			case !ok:
				return g, badStream("group %q consumer %q: entry %s not in the group's PEL", g.Name, c.Name, id)
			case o == int(i):
				return g, badStream("group %q consumer %q: entry %s twice", g.Name, c.Name, id)
			case o >= 0:
				return g, badStream("group %q: entry %s pending for two consumers", g.Name, id)
			}
			owner[id] = int(i)
			c.Pending = append(c.Pending, id)
		}
		slices.SortFunc(c.Pending, StreamID.Compare)
		g.Consumers = append(g.Consumers, c)
	}
	for id, o := range owner {
		if o < 0 {
			return g, badStream("group %q: PEL entry %s without a consumer", g.Name, id)
		}
	}
	// The PEL is a radix tree in Redis: in ID order whatever the file's.
	slices.SortFunc(g.Pending, func(a, b StreamNACK) int { return a.ID.Compare(b.ID) })
	return g, nil
}

// estimateEntriesRead is Redis 7.0's streamEstimateDistanceFromFirstEverEntry:
// the entries-read counter of a group whose last ID is id, or -1 when it
// cannot be known.
func estimateEntriesRead(s *Stream, id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	length := int64(len(s.Entries))
	cmpLast := id.Compare(s.LastID)
	if length == 0 && cmpLast <= 0 {
		return s.EntriesAdded
	}
	if cmpLast == 0 {
		return s.EntriesAdded
	} else if cmpLast > 0 {
		return -1
	}
	cmpFirst := id.Compare(s.FirstID)
	if s.MaxDeletedID == (StreamID{}) || s.MaxDeletedID.Compare(s.FirstID) < 0 {
		if cmpFirst < 0 {
			return s.EntriesAdded - length
		} else if cmpFirst == 0 {
			return s.EntriesAdded - length + 1
		}
	}
	return -1
}

// parseStreamNode decodes a stream listpack whose master ID is master:
// the master entry (count, deleted, field count, fields, 0), then per entry
// flags, ms and seq differences from master, the field count and fields
// unless SAMEFIELDS, the values, and the entry's element count (lp-count).
func parseStreamNode(master StreamID, lp []byte) (streamNode, error) {
	nd := streamNode{master: master}
	el, err := parseListpack(lp)
	if err != nil {
		return nd, err
	}
	if len(el) == 0 {
		return nd, badStream("empty listpack in node %s", master)
	}
	p := 0
	next := func() (int64, error) {
		if p >= len(el) {
			return 0, badStream("node %s: listpack ends inside an entry", master)
		}
		v, ok := canonicalInt(el[p])
		if !ok {
			return 0, badStream("node %s: %q where an integer belongs", master, el[p])
		}
		p++
		return v, nil
	}
	count, err := next()
	if err != nil {
		return nd, err
	}
	deleted, err := next()
	if err != nil {
		return nd, err
	}
	nmaster, err := next()
	if err != nil {
		return nd, err
	}
	if count < 0 || deleted < 0 || nmaster < 0 || nmaster > int64(len(el)-p) || count > int64(len(el)) || deleted > int64(len(el)) {
		return nd, badStream("node %s: master entry counts %d, %d, %d", master, count, deleted, nmaster)
	}
	fields := el[p : p+int(nmaster)]
	p += int(nmaster)
	if z, err := next(); err != nil || z != 0 {
		return nd, badStream("node %s: master entry not terminated by 0", master)
	}
	nd.entries = make([]StreamEntry, 0, count)
	for i := int64(0); i < count+deleted; i++ {
		start := p
		flags, err := next()
		if err != nil {
			return nd, err
		}
		dms, err := next()
		if err != nil {
			return nd, err
		}
		dseq, err := next()
		if err != nil {
			return nd, err
		}
		id := StreamID{master.Ms + uint64(dms), master.Seq + uint64(dseq)}
		// SAMEFIELDS: the values, the names are the master's; else the
		// field count, then field and value pairs.
		var e StreamEntry
		if flags&streamFlagSameFields != 0 {
			if len(fields) > len(el)-p {
				return nd, badStream("node %s: listpack ends inside an entry", master)
			}
			if flags&streamFlagDeleted == 0 {
				e.Fields = make([][]byte, 0, 2*len(fields))
				for k, f := range fields {
					e.Fields = append(e.Fields, f, el[p+k])
				}
			}
			p += len(fields)
		} else {
			nf, err := next()
			if err != nil {
				return nd, err
			}
			if nf < 0 || nf > int64(len(el)-p)/2 {
				return nd, badStream("node %s: entry of %d fields", master, nf)
			}
			e.Fields = el[p : p+2*int(nf) : p+2*int(nf)]
			p += 2 * int(nf)
		}
		lpCount, err := next()
		if err != nil {
			return nd, err
		}
		if lpCount != int64(p-start-1) {
			return nd, badStream("node %s: entry %s has lp-count %d, is %d elements", master, id, lpCount, p-start-1)
		}
		if !nd.any {
			if id.Compare(master) < 0 {
				return nd, badStream("node %s: entry %s before the master ID", master, id)
			}
			nd.first = id
		} else if id.Compare(nd.last) <= 0 {
			return nd, badStream("node %s: entry %s not after %s", master, id, nd.last)
		}
		nd.last, nd.any = id, true
		if flags&streamFlagDeleted != 0 {
			continue
		}
		e.ID = id
		nd.entries = append(nd.entries, e)
	}
	if p != len(el) {
		return nd, badStream("node %s: %d elements after its %d entries", master, len(el)-p, count+deleted)
	}
	if int64(len(nd.entries)) != count {
		return nd, badStream("node %s: master entry counts %d live entries, has %d", master, count, len(nd.entries))
	}
	return nd, nil
}

// Stream node limits, as Redis applies them (STREAM_LISTPACK_MAX_SIZE).
const streamListpackMaxSize = 1 << 30

// appendStream appends a STREAM_LISTPACKS_2 body: the entries in listpack
// nodes as Redis 7.0's XADD fills them under stream-node-max-bytes and
// -entries, the counters, then the groups, consumers and PELs in Redis's
// radix tree order (IDs ascending, names by bytes).
func appendStream(dst []byte, s *Stream, o *Options) ([]byte, error) {
	if err := checkStream(s); err != nil {
		return dst, err
	}
	maxBytes := o.StreamNodeMaxBytes
	if maxBytes <= 0 || maxBytes > streamListpackMaxSize {
		maxBytes = streamListpackMaxSize
	}
	type node struct {
		master StreamID
		fields [][]byte
		count  int
		elems  int    // listpack elements
		body   []byte // the listpack after its count entry, unterminated
	}
	var nodes []node
	var cur *node
	// lpBytes is Redis's lpBytes of the node: header, count entry, the
	// rest, terminator.
	lpBytes := func(n *node) int { return 6 + len(lpAppendInt(nil, int64(n.count))) + len(n.body) + 1 }
	for _, e := range s.Entries {
		tot := 0
		for _, f := range e.Fields {
			tot += len(f)
		}
		if cur != nil {
			if lpBytes(cur)+tot >= maxBytes {
				cur = nil
			} else if o.StreamNodeMaxEntries > 0 && cur.count >= o.StreamNodeMaxEntries {
				cur = nil
			}
		}
		nf := len(e.Fields) / 2
		same := true
		if cur == nil {
			nodes = append(nodes, node{master: e.ID})
			cur = &nodes[len(nodes)-1]
			cur.body = lpAppendInt(cur.body, 0) // deleted
			cur.body = lpAppendInt(cur.body, int64(nf))
			for k := 0; k < nf; k++ {
				cur.fields = append(cur.fields, e.Fields[2*k])
				cur.body = lpAppend(cur.body, e.Fields[2*k])
			}
			cur.body = lpAppendInt(cur.body, 0)
			cur.elems = 4 + nf
		} else {
			same = nf == len(cur.fields)
			for k := 0; same && k < nf; k++ {
				same = bytes.Equal(e.Fields[2*k], cur.fields[k])
			}
		}
		flags := int64(0)
		if same {
			flags = streamFlagSameFields
		}
		b := lpAppendInt(cur.body, flags)
		b = lpAppendInt(b, int64(e.ID.Ms-cur.master.Ms))
		b = lpAppendInt(b, int64(e.ID.Seq-cur.master.Seq))
		lpCount := int64(nf + 3)
		if !same {
			b = lpAppendInt(b, int64(nf))
			lpCount += int64(nf + 1)
		}
		for k := 0; k < nf; k++ {
			if !same {
				b = lpAppend(b, e.Fields[2*k])
			}
			b = lpAppend(b, e.Fields[2*k+1])
		}
		cur.body = lpAppendInt(b, lpCount)
		cur.elems += int(lpCount) + 1
		cur.count++
	}
	dst = AppendLen(dst, uint64(len(nodes)))
	for _, n := range nodes {
		dst = o.str(dst, appendStreamID(nil, n.master))
		lp := lpAppendInt(newListpack(0), int64(n.count))
		lp = append(lp, n.body...)
		dst = o.str(dst, lpFinish(lp, n.elems))
	}
	dst = AppendLen(dst, uint64(len(s.Entries)))
	for _, id := range []StreamID{s.LastID, s.FirstID, s.MaxDeletedID} {
		dst = AppendLen(AppendLen(dst, id.Ms), id.Seq)
	}
	dst = AppendLen(dst, uint64(s.EntriesAdded))

	groups := slices.Clone(s.Groups)
	slices.SortStableFunc(groups, func(a, b StreamGroup) int { return bytes.Compare(a.Name, b.Name) })
	dst = AppendLen(dst, uint64(len(groups)))
	for _, g := range groups {
		dst = o.str(dst, g.Name)
		dst = AppendLen(AppendLen(dst, g.LastID.Ms), g.LastID.Seq)
		dst = AppendLen(dst, uint64(g.EntriesRead))
		pel := slices.Clone(g.Pending)
		slices.SortFunc(pel, func(a, b StreamNACK) int { return a.ID.Compare(b.ID) })
		dst = AppendLen(dst, uint64(len(pel)))
		for _, n := range pel {
			dst = appendStreamID(dst, n.ID)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(n.DeliveryTime))
			dst = AppendLen(dst, uint64(n.DeliveryCount))
		}
		cons := slices.Clone(g.Consumers)
		slices.SortStableFunc(cons, func(a, b StreamConsumer) int { return bytes.Compare(a.Name, b.Name) })
		dst = AppendLen(dst, uint64(len(cons)))
		for _, cn := range cons {
			dst = o.str(dst, cn.Name)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(cn.SeenTime))
			ids := slices.Clone(cn.Pending)
			slices.SortFunc(ids, StreamID.Compare)
			dst = AppendLen(dst, uint64(len(ids)))
			for _, id := range ids {
				dst = appendStreamID(dst, id)
			}
		}
	}
	return dst, nil
}

// checkStream refuses, before writing, what the reader would refuse: a
// stream whose entries are out of order or after its last ID, an entry
// with an odd number of fields and values, groups or consumers named
// twice, and PELs that do not agree (an entry pending twice, or for no or
// two consumers, or for a consumer and not in its group's PEL).
func checkStream(s *Stream) error {
	for i, e := range s.Entries {
		if len(e.Fields)%2 != 0 {
			return fmt.Errorf("rdb: stream entry %s has an odd number of fields and values", e.ID)
		}
		if i > 0 && e.ID.Compare(s.Entries[i-1].ID) <= 0 {
			return fmt.Errorf("rdb: stream entry %s not after %s", e.ID, s.Entries[i-1].ID)
		}
	}
	if n := len(s.Entries); n > 0 && s.LastID.Compare(s.Entries[n-1].ID) < 0 {
		return fmt.Errorf("rdb: stream last ID %s before its last entry %s", s.LastID, s.Entries[n-1].ID)
	}
	groups := make(map[string]struct{}, len(s.Groups))
	for _, g := range s.Groups {
		if _, dup := groups[string(g.Name)]; dup {
			return fmt.Errorf("rdb: stream group %q twice", g.Name)
		}
		groups[string(g.Name)] = struct{}{}
		owner := make(map[StreamID]bool, len(g.Pending))
		for _, n := range g.Pending {
			if _, dup := owner[n.ID]; dup {
				return fmt.Errorf("rdb: stream group %q: %s pending twice", g.Name, n.ID)
			}
			owner[n.ID] = false
		}
		names := make(map[string]struct{}, len(g.Consumers))
		for _, c := range g.Consumers {
			if _, dup := names[string(c.Name)]; dup {
				return fmt.Errorf("rdb: stream group %q: consumer %q twice", g.Name, c.Name)
			}
			names[string(c.Name)] = struct{}{}
			for _, id := range c.Pending {
				owned, ok := owner[id]
				if !ok || owned {
					return fmt.Errorf("rdb: stream group %q: %s pending for consumer %q and not in the group's PEL or for another", g.Name, id, c.Name)
				}
				owner[id] = true
			}
		}
		for id, owned := range owner {
			if !owned {
				return fmt.Errorf("rdb: stream group %q: %s pending for no consumer", g.Name, id)
			}
		}
	}
	return nil
}
