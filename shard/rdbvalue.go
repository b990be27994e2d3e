package shard

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/redshard/redshard/aof/rdb"
)

// Conversion between keys and the RDB codec's neutral values (aof/rdb):
// DUMP, RESTORE and MIGRATE serialize with it, and a loader of RDB files
// can build keys with it.
//
// A value built from an rdb.Value takes the encoding Redis 7.0's
// rdbLoadObject gives it under the current thresholds, which is the one
// commands would have given it: a hash, sorted set or set read from a
// compact RDB type (listpack, ziplist, intset) stays compact unless it has
// more entries than the *-max-listpack-entries / set-max-intset-entries
// limit; one read from a plain type (HASH, ZSET_2, SET) is compact when it
// has at most that many entries, each within the *-max-listpack-value
// length (sets: all integers). Lists are quicklists, as in Redis 7.0.

// errDuplicate is a collection that repeats a member (Redis refuses it).
var errDuplicate = errors.New("duplicate member")

// RDBValue returns a key's value in neutral form. Its slices alias the
// keyspace (integer set members excepted): use it before the key changes.
func (db *DB) RDBValue(slot int32) rdb.Value {
	var v rdb.Value
	db.RDBValueInto(slot, &v)
	return v
}

// RDBValueInto is RDBValue into v, reusing the room of its slices (a
// snapshot serializes a million keys through one Value).
func (db *DB) RDBValueInto(slot int32, v *rdb.Value) {
	items, zs, hs := v.Items[:0], v.ZSet[:0], v.Hash[:0]
	*v = rdb.Value{}
	switch db.Type(slot) {
	case TypeString:
		*v = rdb.Value{Kind: rdb.KindString, Str: db.Str(slot)}
	case TypeList:
		l := db.Obj(slot).(*List)
		it := l.Iter(0, false)
		for {
			e, ok := it.Next()
			if !ok {
				break
			}
			items = append(items, e)
		}
		*v = rdb.Value{Kind: rdb.KindList, Items: items}
	case TypeSet:
		s := db.Obj(slot).(*setObj)
		n := s.len()
		if s.ht != nil {
			for i := 0; i < n; i++ {
				items = append(items, s.ht.member(int32(i)))
			}
		} else {
			nums := make([]byte, 0, n*8)
			for i := 0; i < n; i++ {
				p := len(nums)
				nums = strconv.AppendInt(nums, s.is.get(i), 10)
				items = append(items, nums[p:len(nums):len(nums)])
			}
		}
		*v = rdb.Value{Kind: rdb.KindSet, Items: items}
	case TypeZSet:
		z := db.Obj(slot).(*zset)
		if n := z.Len(); n > 0 {
			it := z.iter(0, false)
			for i := 0; i < n; i++ {
				m, sc := it.next()
				zs = append(zs, rdb.ZMember{Member: m, Score: sc})
			}
		}
		*v = rdb.Value{Kind: rdb.KindZSet, ZSet: zs}
	case TypeHash:
		h := db.Obj(slot).(*hashObj)
		h.each(func(f, val []byte) bool {
			hs = append(hs, rdb.HashField{Field: f, Value: val})
			return true
		})
		*v = rdb.Value{Kind: rdb.KindHash, Hash: hs}
	default:
		*v = rdb.Value{Kind: rdb.KindStream, Strm: db.Obj(slot).(*streamObj).rdbStream()}
	}
	// The other slices' room stays for the next key.
	if v.Items == nil {
		v.Items = items[:0]
	}
	if v.ZSet == nil {
		v.ZSet = zs[:0]
	}
	if v.Hash == nil {
		v.Hash = hs[:0]
	}
}

func rdbID(id streamID) rdb.StreamID     { return rdb.StreamID{Ms: id.ms, Seq: id.seq} }
func fromRDBID(id rdb.StreamID) streamID { return streamID{ms: id.Ms, seq: id.Seq} }

// rdbStream is a stream in neutral form: live entries, IDs and counters,
// and the consumer groups with their PELs and consumers. Field slices
// alias the stream.
func (s *streamObj) rdbStream() *rdb.Stream {
	st := &rdb.Stream{
		LastID: rdbID(s.lastID), FirstID: rdbID(s.firstID), MaxDeletedID: rdbID(s.maxDeletedID),
		EntriesAdded: s.entriesAdded, Entries: make([]rdb.StreamEntry, 0, s.length),
	}
	s.each(streamID{}, streamID{math.MaxUint64, math.MaxUint64}, false, func(id streamID, fv [][]byte) bool {
		st.Entries = append(st.Entries, rdb.StreamEntry{ID: rdbID(id), Fields: slices.Clone(fv)})
		return true
	})
	for _, g := range s.groups {
		rg := rdb.StreamGroup{Name: []byte(g.name), LastID: rdbID(g.lastID), EntriesRead: g.entriesRead}
		g.pel.each(func(nk *streamNACK) bool {
			rg.Pending = append(rg.Pending, rdb.StreamNACK{ID: rdbID(nk.id), DeliveryTime: nk.deliveryTime, DeliveryCount: nk.deliveryCount})
			return true
		})
		for _, c := range g.consumers {
			rc := rdb.StreamConsumer{Name: []byte(c.name), SeenTime: c.seenTime}
			c.pel.each(func(nk *streamNACK) bool {
				rc.Pending = append(rc.Pending, rdbID(nk.id))
				return true
			})
			rg.Consumers = append(rg.Consumers, rc)
		}
		st.Groups = append(st.Groups, rg)
	}
	return st
}

// errBadStream is a stream whose parts do not agree.
var errBadStream = errors.New("inconsistent stream")

// streamFromRDB builds a stream from its neutral form, refusing what
// Redis's loader refuses (entries out of order or with an odd number of
// fields, a last ID below the last entry's, repeated groups, consumers or
// NACKs, a consumer's pending ID missing from its group's PEL or owned
// twice, a NACK no consumer owns).
func (db *DB) streamFromRDB(v *rdb.Stream) (*streamObj, error) {
	s := &streamObj{}
	var prev streamID
	for i, e := range v.Entries {
		id := fromRDBID(e.ID)
		if i > 0 && id.cmp(prev) <= 0 || len(e.Fields) == 0 || len(e.Fields)%2 != 0 {
			return nil, errBadStream
		}
		s.appendEntry(db.sh.Cfg, id, e.Fields)
		prev = id
	}
	s.lastID, s.firstID, s.maxDeletedID = fromRDBID(v.LastID), fromRDBID(v.FirstID), fromRDBID(v.MaxDeletedID)
	s.entriesAdded = v.EntriesAdded
	if len(v.Entries) > 0 && s.lastID.cmp(prev) < 0 {
		return nil, errBadStream
	}
	for _, rg := range v.Groups {
		g := &streamGroup{name: string(rg.Name), lastID: fromRDBID(rg.LastID), entriesRead: rg.EntriesRead}
		i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].name >= g.name })
		if i < len(s.groups) && s.groups[i].name == g.name {
			return nil, errBadStream
		}
		s.groups = slices.Insert(s.groups, i, g)
		for _, n := range rg.Pending {
			if !g.pel.insert(&streamNACK{id: fromRDBID(n.ID), deliveryTime: n.DeliveryTime, deliveryCount: n.DeliveryCount}) {
				return nil, errBadStream
			}
		}
		owned := 0
		for _, rc := range rg.Consumers {
			c := g.addConsumer(rc.Name, rc.SeenTime)
			if c == nil {
				return nil, errBadStream
			}
			for _, id := range rc.Pending {
				nk := g.pel.find(fromRDBID(id))
				if nk == nil || nk.consumer != nil || !c.pel.insert(nk) {
					return nil, errBadStream
				}
				nk.consumer = c
				owned++
			}
		}
		if owned != g.pel.len() {
			return nil, errBadStream
		}
	}
	return s, nil
}

// RDBOptions returns the writer options under which the codec writes a
// key's value in the RDB type of its current encoding, as Redis's
// rdbSaveObject does (a hash that became a hashtable and shrank is still
// written as a plain HASH). compress is rdbcompression.
func (db *DB) RDBOptions(slot int32, compress bool) rdb.Options {
	o := rdb.DefaultOptions()
	o.Compress = compress
	const all = math.MaxInt
	switch db.Type(slot) {
	case TypeList:
		o.ListMaxListpackSize = db.Obj(slot).(*List).fill
	case TypeSet:
		if db.Encoding(slot) == EncIntset {
			o.SetMaxIntsetEntries = all
		} else {
			o.SetMaxIntsetEntries = -1
		}
	case TypeZSet:
		if db.Encoding(slot) == EncListpack {
			o.ZSetMaxListpackEntries, o.ZSetMaxListpackValue = all, all
		} else {
			o.ZSetMaxListpackEntries = -1
		}
	case TypeHash:
		if db.Encoding(slot) == EncListpack {
			o.HashMaxListpackEntries, o.HashMaxListpackValue = all, all
		} else {
			o.HashMaxListpackEntries = -1
		}
	}
	return o
}

// compactType reports whether an RDB type is one of the compact encodings
// (intset, ziplist, listpack, zipmap), which Redis keeps compact on load
// unless the entry count is over the limit.
func compactType(t byte) bool {
	switch t {
	case rdb.TypeHashZipmap, rdb.TypeSetIntset, rdb.TypeZSetZiplist, rdb.TypeHashZiplist,
		rdb.TypeHashListpack, rdb.TypeZSetListpack:
		return true
	}
	return false
}

// objectFromValue builds a non-string value from its neutral form, in
// the encoding Redis's rdbLoadObject chooses (see the top of this file).
// The value's bytes are copied.
//
// A repeated member is refused by rdb's decoders, which check every set,
// sorted set and hash they read (checkDups), so the compact builds here
// do not look for one again (a second search, by pairs, was 0.08 s of a
// 1.0 s load of 1M mixed keys on one CPU, pprof); the tables of the big
// encodings find one anyway as they insert.
func (db *DB) objectFromValue(v *rdb.Value) (typ, enc uint8, obj Object, err error) {
	cfg := db.sh.Cfg
	switch v.Kind {
	case rdb.KindList:
		l := newList(db)
		for _, e := range v.Items {
			l.PushBack(e)
		}
		return TypeList, EncQuicklist, l, nil
	case rdb.KindSet:
		maxEnt := maxIntsetEntries(db)
		s := &setObj{}
		if len(v.Items) > maxEnt {
			s.ht = newStrSet(len(v.Items))
		}
		for _, m := range v.Items {
			if s.ht == nil {
				if iv, ok := ParseInt(m); ok {
					if !s.is.add(iv) {
						return 0, 0, nil, errDuplicate
					}
					continue
				}
				if s.is.n == 0 {
					// A set of strings: a table of its final size at
					// once, not grown from 4 buckets member by member.
					s.ht = newStrSet(len(v.Items))
				} else {
					s.convert()
				}
			}
			if !s.ht.add(m) {
				return 0, 0, nil, errDuplicate
			}
		}
		if s.ht == nil && s.is.n > maxEnt {
			s.convert()
		}
		return TypeSet, s.enc(), s, nil
	case rdb.KindZSet:
		byScore := func(a, b rdb.ZMember) int {
			if a.Score != b.Score {
				if a.Score < b.Score {
					return -1
				}
				return 1
			}
			return bytes.Compare(a.Member, b.Member)
		}
		zs := v.ZSet
		if !slices.IsSortedFunc(zs, byScore) {
			// A listpack is in this order already; a copy only for
			// the others (the copy was 80 ms of a 1M-key load).
			zs = slices.Clone(zs)
			slices.SortFunc(zs, byScore)
		}
		maxlen, total := 0, 0
		for i, m := range zs {
			if math.IsNaN(m.Score) {
				return 0, 0, nil, rdb.ErrNaNScore
			}
			if i > 0 && bytes.Equal(m.Member, zs[i-1].Member) && m.Score == zs[i-1].Score {
				return 0, 0, nil, errDuplicate
			}
			maxlen = max(maxlen, len(m.Member))
			total += len(m.Member)
		}
		compact := int64(len(zs)) <= cfg.ZsetMaxListpackEntries.Load()
		if !compactType(v.Type) {
			compact = compact && int64(maxlen) <= cfg.ZsetMaxListpackValue.Load() && total <= lpMaxSafe
		}
		z := &zset{}
		if !compact {
			z.sl = newZskip(len(zs))
			for _, m := range zs {
				if z.sl.find(m.Member) >= 0 {
					return 0, 0, nil, errDuplicate
				}
				z.sl.insert(m.Member, m.Score)
			}
			return TypeZSet, z.encoding(), z, nil
		}
		z.scores = make([]float64, len(zs))
		z.ends = make([]uint32, len(zs))
		z.data = make([]byte, 0, total)
		for i, m := range zs {
			s := m.Score
			if s == 0 {
				s = 0 // a listpack stores -0 as the integer 0
			}
			z.scores[i] = s
			z.data = append(z.data, m.Member...)
			z.ends[i] = uint32(len(z.data))
		}
		return TypeZSet, z.encoding(), z, nil
	case rdb.KindHash:
		lim := limitsOf(db)
		compact := len(v.Hash) <= lim.entries
		total := lpHdr
		for _, p := range v.Hash {
			if (!compactType(v.Type) || v.Type == rdb.TypeHashZipmap) && (len(p.Field) > lim.value || len(p.Value) > lim.value) {
				compact = false
			}
			total += pairLen(p.Field, p.Value)
		}
		if total > lpMaxSafe {
			compact = false
		}
		h := &hashObj{}
		if compact {
			h.lp = growBytes(nil, total)[:lpHdr]
			for _, p := range v.Hash {
				h.lp = appendPair(h.lp, p.Field, p.Value)
			}
			h.setLpLen(len(v.Hash))
			return TypeHash, h.Encoding(), h, nil
		}
		t := newHashTable(tableSizeFor(len(v.Hash)), total+linkLen*len(v.Hash))
		h.ht = t
		for _, p := range v.Hash {
			if !t.set(p.Field, p.Value) {
				return 0, 0, nil, errDuplicate
			}
		}
		t.chain = t.longestChain()
		return TypeHash, h.Encoding(), h, nil
	case rdb.KindStream:
		st, err := db.streamFromRDB(v.Strm)
		if err != nil {
			return 0, 0, nil, err
		}
		return TypeStream, EncStream, st, nil
	}
	return 0, 0, nil, errors.New("unknown value kind")
}

// Built is a value made from its neutral form, not yet in the keyspace
// (RESTORE builds it before it deletes what it replaces).
type Built struct {
	str      []byte // a string's bytes (typ TypeString)
	typ, enc uint8
	obj      Object
}

// BuildValue makes a value from its neutral form, as rdb's decoders give
// it, in the encoding Redis's rdbLoadObject gives it; an empty collection
// or a NaN score is an error, and so is a repeated member the decoder let
// through (it refuses them: see objectFromValue).
func (db *DB) BuildValue(v *rdb.Value) (Built, error) {
	if v.Kind == rdb.KindString {
		return Built{str: v.Str, typ: TypeString}, nil
	}
	if v.Kind == rdb.KindStream && v.Strm == nil {
		return Built{}, errBadStream
	}
	if v.Len() == 0 && v.Kind != rdb.KindStream { // a stream may be empty
		return Built{}, rdb.ErrEmptyValue
	}
	typ, enc, obj, err := db.objectFromValue(v)
	if err != nil {
		return Built{}, err
	}
	return Built{typ: typ, enc: enc, obj: obj}, nil
}

// AddBuilt stores a built value at key, replacing any value, and returns
// the slot. The key gets no expiry and its access time is now (SetAccess
// changes it).
func (db *DB) AddBuilt(key []byte, b Built) int32 {
	if b.typ == TypeString {
		return db.SetStr(key, b.str, false)
	}
	return db.SetObj(key, b.typ, b.enc, b.obj)
}

// AddValue is BuildValue then AddBuilt.
func (db *DB) AddValue(key []byte, v *rdb.Value) (int32, error) {
	b, err := db.BuildValue(v)
	if err != nil {
		return -1, err
	}
	return db.AddBuilt(key, b), nil
}

// IdleTime is a key's LRU idle time in seconds (OBJECT IDLETIME's value
// under an LRU policy).
func (db *DB) IdleTime(slot int32) int64 {
	return max(db.sh.Now()/1000-int64(db.at(slot).lru), 0)
}

// SetAccess sets a key's access information as Redis's objectSetLRUOrLFU:
// under an LFU policy the counter freq (when freq >= 0, at most 255), else
// the LRU clock idle seconds ago (when idle >= 0). It reports whether it
// changed anything.
func (db *DB) SetAccess(slot int32, freq, idle int64) bool {
	e := db.at(slot)
	if lfuPolicyOf(db.sh.Cfg.MaxmemoryPolicy.Load()) {
		if freq >= 0 {
			e.lru = lfuMinutes(db.sh.Now())<<8 | uint32(min(freq, 255))
			return true
		}
		return false
	}
	if idle >= 0 {
		now := db.sh.Now() / 1000
		e.lru = uint32(max(now-idle, 0))
		return true
	}
	return false
}
