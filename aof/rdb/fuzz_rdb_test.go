package rdb

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strings"
	"testing"
)

// FuzzReadRDB: Read and Parse never panic, agree with each other, and
// allocate in proportion to the input, however bogus its lengths; a file
// they accept survives Writer and Parse unchanged. The input is also tried
// as a body between a magic and an EOF with its CRC, and as a DUMP value.
func FuzzReadRDB(f *testing.F) {
	old, _ := oldFileSized(9, 300, true)
	f.Add(old)
	small := []fixtureKey{}
	for _, k := range fixtureKeys() {
		if k.v.Len() < 20 && len(k.v.Str) < 100 {
			small = append(small, k)
		}
	}
	f.Add(writeFixture(f, DefaultOptions(), small))
	if b, err := os.ReadFile(fixtureFile); err == nil {
		f.Add(b[:1024])
	}
	f.Add(file(10, AppendLen(rawStr([]byte{TypeList}, "k"), 1<<62)))
	f.Add([]byte{TypeListQuicklist2, 1, 'k', 1, 2, 0x0b, 0x0b, 0, 0, 0, 1, 0, 0x81, 'a', 2, 0xff})
	// Streams: as values (the DUMP path), in files, of RDB 9 too.
	for _, n := range []int{0, 4, 12} {
		v := streamValue(testStream(n))
		b, _ := AppendValue(nil, &v, Options{StreamNodeMaxEntries: 5})
		f.Add(b)
	}
	f.Add(writeFixture(f, DefaultOptions(), []fixtureKey{{key: "s", v: streamValue(testStream(6)), expireMS: -1}}))
	f.Add(streamBody(TypeStreamListpacks, [][2][]byte{{idKey(100, 5),
		lpOf("2", "1", "2", "a", "b", "0", "2", "0", "0", "1", "2", "5", "3", "0", "1", "x", "y", "5", "0", "1", "-5", "1", "c", "3", "6")}},
		lens(2, 101, 0, 1), AppendString(nil, []byte("g"), false), lens(100, 5, 0, 0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		framed := file(10, data)
		for _, in := range [][]byte{data, framed} {
			before := allocated()
			var keys []fixtureKey
			s, err := Parse(in, &Handler{Key: func(e *Entry) error {
				keys = append(keys, fixtureKey{db: e.DB, key: string(e.Key), v: e.Value, expireMS: -1})
				return nil
			}})
			// LZF expands at most 264 times, a listpack byte becomes at
			// most a slice header and a small number's text.
			if alloc := allocated() - before; alloc > uint64(len(in))*264*64+8<<20 {
				t.Fatalf("%d bytes of input allocated %d", len(in), alloc)
			}
			s2, err2 := Read(bytes.NewReader(in), nil)
			if (err == nil) != (err2 == nil) || (err == nil && (s.Keys != s2.Keys || s.Checksum != s2.Checksum)) {
				t.Fatalf("Parse %+v %v, Read %+v %v", s, err, s2, err2)
			}
			if err != nil {
				continue
			}
			var buf bytes.Buffer
			w, _ := NewWriter(&buf, DefaultOptions(), Header{})
			for _, k := range keys {
				w.SelectDB(k.db, 1, 0)
				if err := w.Key([]byte(k.key), -1, &k.v); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			i := 0
			if _, err := Parse(buf.Bytes(), &Handler{Key: func(e *Entry) error {
				if i >= len(keys) || string(e.Key) != keys[i].key || !valuesEqual(e.Value, keys[i].v) {
					t.Fatalf("key %d rewritten differs", i)
				}
				i++
				return nil
			}}); err != nil || i != len(keys) {
				t.Fatalf("rewrite: %d of %d keys, %v", i, len(keys), err)
			}
		}
		if v, err := DecodeDump(AppendFooter(bytes.Clone(data))); err == nil {
			p, err := EncodeDump(&v, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if again, err := DecodeDump(p); err != nil || !valuesEqual(again, v) {
				t.Fatalf("DUMP round trip: %v", err)
			}
		}
	})
}

// allocated is the bytes allocated on the heap so far, without the
// stop-the-world of runtime.ReadMemStats.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// FuzzStreamNode: stream nodes made of any elements (the input split at
// commas into listpack entries) never panic the node parser, and the
// entries of one it accepts survive the writer and the reader.
func FuzzStreamNode(f *testing.F) {
	f.Add("2,1,2,a,b,0,2,0,0,1,2,5,3,0,1,x,y,5,0,1,-5,2,c,3,d,4,8")
	f.Add("1,0,1,f,0,2,0,0,v,4")
	f.Add("0,0,1,f,0")
	f.Add("1,0,0,0,0,0,0,0,4,3")
	f.Fuzz(func(t *testing.T, in string) {
		nd, err := parseStreamNode(StreamID{100, 5}, lpOf(strings.Split(in, ",")...))
		if err != nil || len(nd.entries) == 0 {
			return
		}
		s := &Stream{Entries: nd.entries, LastID: nd.last, FirstID: nd.entries[0].ID, EntriesAdded: int64(len(nd.entries))}
		v := Value{Kind: KindStream, Strm: s}
		p, err := EncodeDump(&v, Options{StreamNodeMaxEntries: 2})
		if err != nil {
			t.Fatal(err)
		}
		if again, err := DecodeDump(p); err != nil || !valuesEqual(again, v) {
			t.Fatalf("round trip: %v\n%s\n%s", err, describe(again), describe(v))
		}
	})
}
