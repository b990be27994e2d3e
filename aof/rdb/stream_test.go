package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func streamsEqual(a, b *Stream) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Entries) != len(b.Entries) || a.LastID != b.LastID || a.FirstID != b.FirstID ||
		a.MaxDeletedID != b.MaxDeletedID || a.EntriesAdded != b.EntriesAdded || len(a.Groups) != len(b.Groups) {
		return false
	}
	for i := range a.Entries {
		x, y := a.Entries[i], b.Entries[i]
		if x.ID != y.ID || len(x.Fields) != len(y.Fields) {
			return false
		}
		for k := range x.Fields {
			if !bytes.Equal(x.Fields[k], y.Fields[k]) {
				return false
			}
		}
	}
	// Groups and consumers compare in name order, as Redis keeps them.
	ga, gb := sortedGroups(a.Groups), sortedGroups(b.Groups)
	for i := range ga {
		x, y := ga[i], gb[i]
		if !bytes.Equal(x.Name, y.Name) || x.LastID != y.LastID || x.EntriesRead != y.EntriesRead ||
			!slices.Equal(x.Pending, y.Pending) || len(x.Consumers) != len(y.Consumers) {
			return false
		}
		for k := range x.Consumers {
			cx, cy := x.Consumers[k], y.Consumers[k]
			if !bytes.Equal(cx.Name, cy.Name) || cx.SeenTime != cy.SeenTime || !slices.Equal(cx.Pending, cy.Pending) {
				return false
			}
		}
	}
	return true
}

func sortedGroups(gs []StreamGroup) []StreamGroup {
	gs = slices.Clone(gs)
	slices.SortFunc(gs, func(a, b StreamGroup) int { return bytes.Compare(a.Name, b.Name) })
	for i := range gs {
		gs[i].Consumers = slices.Clone(gs[i].Consumers)
		slices.SortFunc(gs[i].Consumers, func(a, b StreamConsumer) int { return bytes.Compare(a.Name, b.Name) })
	}
	return gs
}

func describeStream(s *Stream) string {
	if s == nil {
		return "stream(nil)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stream[%d] last %s first %s maxdel %s added %d", len(s.Entries), s.LastID, s.FirstID, s.MaxDeletedID, s.EntriesAdded)
	for i, e := range s.Entries {
		if i == 6 {
			b.WriteString(" ...")
			break
		}
		fmt.Fprintf(&b, " %s%q", e.ID, e.Fields)
	}
	for _, g := range sortedGroups(s.Groups) {
		fmt.Fprintf(&b, " group %q last %s read %d pel %v", g.Name, g.LastID, g.EntriesRead, g.Pending)
		for _, c := range g.Consumers {
			fmt.Fprintf(&b, " consumer %q seen %d %v", c.Name, c.SeenTime, c.Pending)
		}
	}
	return b.String()
}

// testStream is a stream with entries of the same and of other fields,
// values that are integers, long values, and two groups.
func testStream(n int) *Stream {
	s := &Stream{}
	for i := 0; i < n; i++ {
		id := StreamID{1700000000000 + uint64(i/3), uint64(i % 3)}
		var f [][]byte
		switch {
		case i%7 == 3:
			f = strs("other", fmt.Sprint(i))
		case i%11 == 5:
			f = strs("name", "x", "age", "12", "extra", strings.Repeat("v", 70+i))
		default:
			f = strs("name", fmt.Sprintf("user%d", i), "age", fmt.Sprint(i*1000-5000))
		}
		s.Entries = append(s.Entries, StreamEntry{ID: id, Fields: f})
	}
	if n > 0 {
		s.FirstID, s.LastID = s.Entries[0].ID, s.Entries[n-1].ID
	}
	s.EntriesAdded = int64(n) + 2
	s.MaxDeletedID = StreamID{5, 0}
	if n >= 4 {
		s.Groups = []StreamGroup{
			{Name: []byte("g2"), LastID: s.Entries[3].ID, EntriesRead: 4,
				Pending: []StreamNACK{{s.Entries[1].ID, 1700000000123, 2}, {s.Entries[3].ID, 1700000000999, 1}},
				Consumers: []StreamConsumer{
					{Name: []byte("bob"), SeenTime: 1700000000999, Pending: []StreamID{s.Entries[3].ID}},
					{Name: []byte("alice"), SeenTime: 1700000000123, Pending: []StreamID{s.Entries[1].ID}},
					{Name: []byte("idle"), SeenTime: 17},
				}},
			{Name: []byte("g1"), LastID: StreamID{}, EntriesRead: -1},
		}
	}
	return s
}

func streamValue(s *Stream) Value { return Value{Kind: KindStream, Strm: s} }

func TestStreamRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 4, 150, 1000} {
		for _, opts := range []Options{DefaultOptions(), {StreamNodeMaxEntries: 3, StreamNodeMaxBytes: 0}, {StreamNodeMaxBytes: 200, Compress: true}} {
			v := streamValue(testStream(n))
			p, err := EncodeDump(&v, opts)
			if err != nil {
				t.Fatal(err)
			}
			if p[0] != TypeStreamListpacks2 {
				t.Fatalf("type %d", p[0])
			}
			got, err := DecodeDump(p)
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			if !valuesEqual(got, v) || got.Type != TypeStreamListpacks2 {
				t.Fatalf("n=%d:\n got %s\nwant %s", n, describe(got), describe(v))
			}
			b := writeFixture(t, opts, []fixtureKey{{key: "s", v: v, expireMS: -1}})
			fc := collect(t, b, true)
			if len(fc.keys) != 1 || !valuesEqual(fc.keys[0].v, v) {
				t.Fatalf("n=%d: file round trip: %d keys", n, len(fc.keys))
			}
		}
	}
}

// TestStreamNodes: nodes split as Redis's XADD splits them, entries with
// the master's fields are SAMEFIELDS, and every listpack is well formed.
func TestStreamNodes(t *testing.T) {
	s := testStream(40)
	body, err := appendStream(nil, s, &Options{StreamNodeMaxEntries: 10})
	if err != nil {
		t.Fatal(err)
	}
	d := newBytesDecoder(body)
	n, _ := d.length()
	if n != 4 {
		t.Fatalf("%d nodes, want 4", n)
	}
	key, _ := d.str()
	lp, _ := d.str()
	if !bytes.Equal(key, appendStreamID(nil, s.Entries[0].ID)) {
		t.Fatalf("key %x", key)
	}
	el, err := parseListpack(lp)
	if err != nil {
		t.Fatal(err)
	}
	// count 10, deleted 0, 2 fields name age, 0; then entry 0 SAMEFIELDS.
	want := strs("10", "0", "2", "name", "age", "0", "2", "0", "0", "user0", "-5000", "5")
	if !slices.EqualFunc(el[:len(want)], want, bytes.Equal) {
		t.Fatalf("listpack %q", el[:len(want)])
	}
	// Entry 3 has other fields: flags 0, its field count and names.
	i := len(want) + 2*6
	if w := strs("0", "1", "0", "1", "other", "3", "6"); !slices.EqualFunc(el[i:i+len(w)], w, bytes.Equal) {
		t.Fatalf("entry 3: %q", el[i:i+len(w)])
	}
	// By bytes: a node is full when its bytes and the new entry's reach
	// the limit.
	body, _ = appendStream(nil, s, &Options{StreamNodeMaxBytes: 100})
	d = newBytesDecoder(body)
	n, _ = d.length()
	for k := uint64(0); k < n; k++ {
		d.str()
		lp, _ := d.str()
		if len(lp) > 100+80 {
			t.Fatalf("node of %d bytes", len(lp))
		}
	}
	if n < 5 {
		t.Fatalf("%d nodes", n)
	}
}

// lpOf builds a listpack of the elements (integers as integers).
func lpOf(elems ...string) []byte {
	lp := newListpack(len(elems))
	for _, e := range elems {
		lp = lpAppend(lp, []byte(e))
	}
	return lpFinish(lp, len(elems))
}

// streamBody builds a stream value body by hand: nodes (key, listpack),
// then the rest as raw bytes.
func streamBody(t byte, nodes [][2][]byte, rest ...[]byte) []byte {
	b := AppendLen([]byte{t}, uint64(len(nodes)))
	for _, n := range nodes {
		b = AppendString(b, n[0], false)
		b = AppendString(b, n[1], false)
	}
	for _, r := range rest {
		b = append(b, r...)
	}
	return b
}

func lens(v ...uint64) []byte {
	var b []byte
	for _, x := range v {
		b = AppendLen(b, x)
	}
	return b
}

func idKey(ms, seq uint64) []byte { return appendStreamID(nil, StreamID{ms, seq}) }

// TestStreamRDB9: a type 15 stream as Redis 5 to 6.2 write it, with a
// deleted entry, one of other fields, a negative seq difference and a
// second node: its 7.0 counters are derived as Redis 7.0 derives them.
func TestStreamRDB9(t *testing.T) {
	node1 := lpOf("2", "1", "2", "a", "b", "0",
		"2", "0", "0", "1", "2", "5", // 100-5 a=1 b=2
		"3", "0", "1", "x", "y", "5", // 100-6 deleted
		"0", "1", "-5", "1", "c", "3", "6") // 101-0 c=3
	node2 := lpOf("1", "0", "1", "f", "0", "2", "0", "0", "v", "4")
	grp := func(name string, ms, seq uint64) []byte {
		b := AppendString(nil, []byte(name), false)
		return append(b, lens(ms, seq, 0, 0)...)
	}
	body := streamBody(TypeStreamListpacks, [][2][]byte{{idKey(200, 0), node2}, {idKey(100, 5), node1}},
		lens(3, 200, 0, 4), grp("atlast", 200, 0), grp("atstart", 0, 0), grp("atfirst", 100, 5), grp("middle", 101, 0))
	v, err := DecodeDump(AppendFooter(body))
	if err != nil {
		t.Fatal(err)
	}
	s := v.Strm
	want := []StreamEntry{
		{StreamID{100, 5}, strs("a", "1", "b", "2")},
		{StreamID{101, 0}, strs("c", "3")},
		{StreamID{200, 0}, strs("f", "v")},
	}
	if !streamsEqual(&Stream{Entries: want, LastID: StreamID{200, 0}, FirstID: StreamID{100, 5}, EntriesAdded: 3,
		Groups: s.Groups}, s) {
		t.Fatalf("got %s", describeStream(s))
	}
	reads := map[string]int64{}
	for _, g := range s.Groups {
		reads[string(g.Name)] = g.EntriesRead
	}
	if w := map[string]int64{"atlast": 3, "atstart": 0, "atfirst": 1, "middle": -1}; fmt.Sprint(reads) != fmt.Sprint(w) {
		t.Fatalf("entries-read %v, want %v", reads, w)
	}
	// A node of no entries, as Redis accepts one, between two others.
	none := lpOf("0", "0", "1", "f", "0")
	v, err = DecodeDump(AppendFooter(streamBody(TypeStreamListpacks2, [][2][]byte{{idKey(200, 0), node2}, {idKey(150, 0), none}, {idKey(100, 5), node1}},
		lens(3, 200, 0, 100, 5, 0, 0, 3, 0))))
	if err != nil || !slices.EqualFunc(v.Strm.Entries, want, func(a, b StreamEntry) bool { return a.ID == b.ID }) {
		t.Fatalf("a node of no entries: %v", err)
	}
	// An empty RDB 9 stream: first ID the maximal one.
	v, err = DecodeDump(AppendFooter(streamBody(TypeStreamListpacks, nil, lens(0, 7, 1, 1), grp("g", 7, 1))))
	if err != nil {
		t.Fatal(err)
	}
	if s := v.Strm; s.FirstID != (StreamID{math.MaxUint64, math.MaxUint64}) || s.EntriesAdded != 0 || s.Groups[0].EntriesRead != 0 {
		t.Fatalf("empty: %s", describeStream(s))
	}
	// The same empty stream in a file is a key, not an empty skipped one.
	fc := collect(t, file(9, append(rawStr([]byte{TypeStreamListpacks}, "k"), streamBody(0, nil, lens(0, 7, 1, 0))[1:]...)), true)
	if len(fc.keys) != 1 || fc.summary.Empty != 0 {
		t.Fatalf("empty stream in a file: %d keys, %d empty", len(fc.keys), fc.summary.Empty)
	}
}

// corruptStreams are stream values the reader refuses; stricter marks
// those Redis 7.0 loads all the same.
func corruptStreams(t *testing.T) (cases map[string][]byte, stricter map[string]bool) {
	good := lpOf("1", "0", "1", "f", "0", "2", "0", "0", "v", "4")
	k := idKey(1, 0)
	tail := lens(1, 1, 0, 1, 0, 0, 0, 1)
	nack := func(ms uint64) []byte { return append(append(idKey(ms, 0), make([]byte, 8)...), 1) }
	cons := func(name string, ids ...uint64) []byte {
		b := append(AppendString(nil, []byte(name), false), make([]byte, 8)...)
		b = AppendLen(b, uint64(len(ids)))
		for _, id := range ids {
			b = append(b, idKey(id, 0)...)
		}
		return b
	}
	group := func(name string, pel [][]byte, consumers ...[]byte) []byte {
		b := append(AppendString(nil, []byte(name), false), lens(1, 0, 1, uint64(len(pel)))...)
		for _, p := range pel {
			b = append(b, p...)
		}
		b = AppendLen(b, uint64(len(consumers)))
		for _, c := range consumers {
			b = append(b, c...)
		}
		return b
	}
	if _, err := DecodeDump(AppendFooter(streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1),
		group("g", [][]byte{nack(1)}, cons("c", 1))))); err != nil {
		t.Fatalf("the good one: %v", err)
	}
	cases = map[string][]byte{
		"key size":       streamBody(TypeStreamListpacks2, [][2][]byte{{k[:15], good}}, tail, lens(0)),
		"empty listpack": streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf()}}, tail, lens(0)),
		"not a listpack": streamBody(TypeStreamListpacks2, [][2][]byte{{k, good[1:]}}, tail, lens(0)),
		"key twice":      streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}, {k, good}}, lens(2, 1, 0, 1, 0, 0, 0, 2), lens(0)),
		"lp-count":       streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("1", "0", "1", "f", "0", "2", "0", "0", "v", "5")}}, tail, lens(0)),
		"no terminator":  streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("1", "0", "1", "f", "1", "2", "0", "0", "v", "4")}}, tail, lens(0)),
		"short":          streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("1", "0", "1", "f", "0", "2", "0", "0", "v")}}, tail, lens(0)),
		"extra":          streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("1", "0", "1", "f", "0", "2", "0", "0", "v", "4", "1")}}, tail, lens(0)),
		"count":          streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("2", "0", "1", "f", "0", "2", "0", "0", "v", "4")}}, tail, lens(0)),
		"live count":     streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("1", "0", "1", "f", "0", "3", "0", "0", "v", "4")}}, tail, lens(0)),
		"not integer":    streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("1", "0", "1", "f", "0", "x", "0", "0", "v", "4")}}, tail, lens(0)),
		"before master":  streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("1", "0", "1", "f", "0", "2", "-1", "0", "v", "4")}}, tail, lens(0)),
		"length":         streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, lens(2, 1, 0, 1, 0, 0, 0, 1), lens(0)),
		"no nodes":       streamBody(TypeStreamListpacks2, nil, tail, lens(0)),
		"last id":        streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, lens(1, 0, 5, 1, 0, 0, 0, 1), lens(0)),
		"group twice":    streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(2), group("g", nil), group("g", nil)),
		"nack twice":     streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1), group("g", [][]byte{nack(1), nack(1)}, cons("c", 1))),
		"nack not found": streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1), group("g", [][]byte{nack(1)}, cons("c", 1, 2))),
		"consumer twice": streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1), group("g", nil, cons("c"), cons("c"))),
		"id twice":       streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1), group("g", [][]byte{nack(1)}, cons("c", 1, 1))),
		"two owners":     streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1), group("g", [][]byte{nack(1)}, cons("c", 1), cons("d", 1))),
		"no owner":       streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1), group("g", [][]byte{nack(1)}, cons("c"))),
		"truncated":      streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1), group("g", [][]byte{nack(1)}, cons("c", 1))[:20]),
		"count overflow": streamBody(TypeStreamListpacks2, [][2][]byte{{k, lpOf("9223372036854775807", "9223372036854775807", "1", "f", "0", "2", "0", "0", "v", "4")}}, tail, lens(0)),
		"huge counts":    streamBody(TypeStreamListpacks2, [][2][]byte{{k, good}}, tail, lens(1<<60)),
		"huge nodes":     streamBody(TypeStreamListpacks2, nil, lens(1<<62)),
	}
	stricter = map[string]bool{"live count": true, "before master": true, "length": true, "last id": true,
		"two owners": true}
	return cases, stricter
}

func TestStreamCorrupt(t *testing.T) {
	cases, _ := corruptStreams(t)
	for name, body := range cases {
		_, err := DecodeDump(AppendFooter(body))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := Parse(file(10, append(rawStr(body[:1], "k"), body[1:]...)), nil); !errors.As(err, &e) {
			t.Errorf("%s in a file: %v", name, err)
		}
	}
	// The writer refuses what it cannot write.
	for _, s := range []*Stream{
		{Entries: []StreamEntry{{StreamID{2, 0}, strs("a", "b")}, {StreamID{1, 0}, strs("a", "b")}}},
		{Entries: []StreamEntry{{StreamID{2, 0}, strs("a")}}},
		{Groups: []StreamGroup{{Name: []byte("g")}, {Name: []byte("g")}}},
		{Entries: []StreamEntry{{StreamID{2, 0}, strs("a", "b")}}, LastID: StreamID{1, 9}},
		{Groups: []StreamGroup{{Name: []byte("g"), Pending: []StreamNACK{{ID: StreamID{1, 0}}}}}},
		{Groups: []StreamGroup{{Name: []byte("g"), Pending: []StreamNACK{{ID: StreamID{1, 0}}, {ID: StreamID{1, 0}}},
			Consumers: []StreamConsumer{{Name: []byte("c"), Pending: []StreamID{{1, 0}}}}}}},
		{Groups: []StreamGroup{{Name: []byte("g"), Consumers: []StreamConsumer{{Name: []byte("c"), Pending: []StreamID{{1, 0}}}}}}},
		{Groups: []StreamGroup{{Name: []byte("g"), Pending: []StreamNACK{{ID: StreamID{1, 0}}},
			Consumers: []StreamConsumer{{Name: []byte("c"), Pending: []StreamID{{1, 0}}}, {Name: []byte("d"), Pending: []StreamID{{1, 0}}}}}}},
		{Groups: []StreamGroup{{Name: []byte("g"), Consumers: []StreamConsumer{{Name: []byte("c")}, {Name: []byte("c")}}}}},
	} {
		if _, err := EncodeDump(&Value{Kind: KindStream, Strm: s}, DefaultOptions()); err == nil {
			t.Errorf("EncodeDump of %s accepted", describeStream(s))
		}
	}
}

// TestStreamDuplicateConsumer: a group naming a consumer twice is
// ErrDuplicateConsumer (Redis's "Duplicate stream consumer detected."),
// and no other corruption is.
func TestStreamDuplicateConsumer(t *testing.T) {
	cases, _ := corruptStreams(t)
	for name, body := range cases {
		_, err := DecodeDump(AppendFooter(body))
		if got, want := errors.Is(err, ErrDuplicateConsumer), name == "consumer twice"; got != want {
			t.Errorf("%s: errors.Is(%v, ErrDuplicateConsumer) = %v", name, err, got)
		}
	}
}
