package shard

import (
	"errors"
	"sort"

	"github.com/redshard/redshard/aof/rdb"
)

// Streams to and from the RDB codec's neutral form (rdb.Stream): entries,
// the stream's IDs and counters, groups with their pending entries and
// consumers. A loaded stream's nodes follow stream-node-max-bytes and
// -entries as if its entries had been added by XADD.

func sid(id streamID) rdb.StreamID     { return rdb.StreamID{Ms: id.ms, Seq: id.seq} }
func fromSID(id rdb.StreamID) streamID { return streamID{id.Ms, id.Seq} }

// streamToRDB is a stream's neutral form; its slices alias the stream.
func streamToRDB(s *streamObj) *rdb.Stream {
	st := &rdb.Stream{LastID: sid(s.lastID), FirstID: sid(s.firstID), MaxDeletedID: sid(s.maxDeletedID),
		EntriesAdded: s.entriesAdded, Entries: make([]rdb.StreamEntry, 0, s.length)}
	var buf [][]byte
	s.each(streamID{}, streamID{^uint64(0), ^uint64(0)}, false, func(id streamID, fv [][]byte) bool {
		p := len(buf)
		buf = append(buf, fv...)
		st.Entries = append(st.Entries, rdb.StreamEntry{ID: sid(id), Fields: buf[p:len(buf):len(buf)]})
		return true
	})
	for _, g := range s.groups {
		rg := rdb.StreamGroup{Name: []byte(g.name), LastID: sid(g.lastID), EntriesRead: g.entriesRead}
		g.pel.each(func(nk *streamNACK) bool {
			rg.Pending = append(rg.Pending, rdb.StreamNACK{ID: sid(nk.id), DeliveryTime: nk.deliveryTime, DeliveryCount: nk.deliveryCount})
			return true
		})
		for _, c := range g.consumers {
			rc := rdb.StreamConsumer{Name: []byte(c.name), SeenTime: c.seenTime}
			c.pel.each(func(nk *streamNACK) bool {
				rc.Pending = append(rc.Pending, sid(nk.id))
				return true
			})
			rg.Consumers = append(rg.Consumers, rc)
		}
		st.Groups = append(st.Groups, rg)
	}
	return st
}

var (
	errStreamOrder      = errors.New("stream entries out of order")
	errStreamNACK       = errors.New("a consumer's pending entry is not in its group's PEL")
	errStreamNACKOwner  = errors.New("a pending entry without a consumer, or of two consumers")
	errStreamDupGroup   = errors.New("duplicate consumer group")
	errStreamDupPending = errors.New("duplicate pending entry")
)

// streamFromRDB builds a stream from its neutral form, refusing what Redis
// refuses: entries out of order or past the last ID, repeated groups,
// consumers or pending entries, a consumer's pending entry missing from
// the group's PEL, a pending entry no consumer owns.
func streamFromRDB(cfg *Tunables, st *rdb.Stream) (*streamObj, error) {
	s := &streamObj{}
	var prev streamID
	for i, e := range st.Entries {
		id := fromSID(e.ID)
		if i > 0 && id.cmp(prev) <= 0 || len(e.Fields) == 0 || len(e.Fields)%2 != 0 {
			return nil, errStreamOrder
		}
		s.appendEntry(cfg, id, e.Fields)
		prev = id
	}
	s.lastID = fromSID(st.LastID)
	if s.length > 0 && prev.cmp(s.lastID) > 0 {
		return nil, errStreamOrder
	}
	s.firstID = fromSID(st.FirstID)
	if s.length > 0 {
		s.firstID = fromSID(st.Entries[0].ID)
	}
	s.maxDeletedID = fromSID(st.MaxDeletedID)
	s.entriesAdded = st.EntriesAdded
	for _, rg := range st.Groups {
		g := &streamGroup{name: string(rg.Name), lastID: fromSID(rg.LastID), entriesRead: rg.EntriesRead}
		for _, n := range rg.Pending {
			if !g.pel.insert(&streamNACK{id: fromSID(n.ID), deliveryTime: n.DeliveryTime, deliveryCount: n.DeliveryCount}) {
				return nil, errStreamDupPending
			}
		}
		for _, rc := range rg.Consumers {
			c := g.addConsumer(rc.Name, rc.SeenTime)
			if c == nil {
				return nil, errStreamNACKOwner // two consumers of one name
			}
			for _, id := range rc.Pending {
				nk := g.pel.find(fromSID(id))
				if nk == nil {
					return nil, errStreamNACK
				}
				if nk.consumer != nil {
					return nil, errStreamNACKOwner
				}
				nk.consumer = c
				c.pel.insert(nk)
			}
		}
		owned := true
		g.pel.each(func(nk *streamNACK) bool {
			owned = nk.consumer != nil
			return owned
		})
		if !owned {
			return nil, errStreamNACKOwner
		}
		s.groups = append(s.groups, g)
	}
	sort.Slice(s.groups, func(i, j int) bool { return s.groups[i].name < s.groups[j].name })
	for i := 1; i < len(s.groups); i++ {
		if s.groups[i].name == s.groups[i-1].name {
			return nil, errStreamDupGroup
		}
	}
	return s, nil
}
