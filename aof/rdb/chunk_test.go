package rdb

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// chunkValues are keys of every kind, with strings LZF shortens, strings it
// does not, and short ones.
func chunkValues() []Value {
	long := strings.Repeat("abcdefgh", 40)
	var vs []Value
	for i := 0; i < 300; i++ {
		s := []byte(fmt.Sprintf("%s-%d", long[:20+i%200], i))
		rnd := []byte(fmt.Sprintf("%x%x%x", i*7919, i*104729, i*1299709))
		vs = append(vs,
			Value{Kind: KindString, Str: s},
			Value{Kind: KindString, Str: rnd},
			Value{Kind: KindString, Str: []byte("12345")},
			Value{Kind: KindList, Items: [][]byte{s, rnd, []byte("x")}},
			Value{Kind: KindSet, Items: [][]byte{s, rnd, []byte("y")}},
			Value{Kind: KindSet, Items: [][]byte{[]byte("1"), []byte("2"), []byte(fmt.Sprint(i + 3))}},
			Value{Kind: KindZSet, ZSet: []ZMember{{s, 1}, {rnd, 2.5}}},
			Value{Kind: KindZSet, ZSet: []ZMember{{[]byte(long + long), 1}, {rnd, 2}}}, // skiplist (member > 64)
			Value{Kind: KindHash, Hash: []HashField{{s, rnd}, {[]byte("f"), []byte("v")}}},
			Value{Kind: KindHash, Hash: []HashField{{[]byte(long), s}}}, // hashtable (value > 64)
		)
	}
	st := &Stream{}
	for i := 0; i < 50; i++ {
		st.Entries = append(st.Entries, StreamEntry{ID: StreamID{uint64(1000 + i), 0}, Fields: [][]byte{[]byte("field"), []byte(long)}})
	}
	st.LastID = StreamID{1049, 0}
	st.FirstID = StreamID{1000, 0}
	st.EntriesAdded = 50
	vs = append(vs, Value{Kind: KindStream, Strm: st})
	return vs
}

// TestChunkOffloadSameBytes: the chunks of an Offload ChunkWriter are the
// bytes of an ordinary one, whether the compressor or Flush compressed them.
func TestChunkOffloadSameBytes(t *testing.T) {
	for _, c := range []struct{ size, depth int }{{1 << 30, 0}, {1 << 30, 4}, {4096, 0}, {4096, 1}, {4096, 64}} {
		size, depth := c.size, c.depth
		opts := DefaultOptions()
		collect := func(offload bool) []byte {
			var mu sync.Mutex
			var got [][]byte
			cw := NewChunkWriter(opts, size, func(b []byte) {
				mu.Lock()
				got = append(got, append([]byte(nil), b...))
				mu.Unlock()
			})
			if offload {
				cw.Offload(depth)
			}
			for i, v := range chunkValues() {
				exp := int64(-1)
				if i%3 == 0 {
					exp = 1700000000000 + int64(i)
				}
				if err := cw.Key(i%2, []byte(fmt.Sprintf("key:%d:%s", i, strings.Repeat("k", i%30))), exp, &v); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan struct{})
			cw.Close(func() { close(done) })
			<-done
			// chunks stand alone: compare them in order of their bytes
			mu.Lock()
			defer mu.Unlock()
			var all []string
			for _, g := range got {
				all = append(all, string(g))
			}
			if size < 1<<30 {
				// Chunks end at other places (their raw size counts), so
				// compare the file's keys.
				return fileKeys(t, got)
			}
			return []byte(strings.Join(all, "|"))
		}
		plain, off := collect(false), collect(true)
		if !bytes.Equal(plain, off) {
			t.Fatalf("size %d depth %d: offloaded chunks differ (%d vs %d bytes)", size, depth, len(off), len(plain))
		}
		if size == 1<<30 && !bytes.Contains(plain, []byte{lenEnc<<6 | EncLZF}) {
			t.Fatal("no LZF string in the chunks")
		}
	}
}

// fileKeys makes a file of the chunks and lists its keys as read back.
func fileKeys(t *testing.T, chunks [][]byte) []byte {
	var f bytes.Buffer
	w, err := NewWriter(&f, DefaultOptions(), Header{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		if err := w.Raw(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	_, err = Parse(f.Bytes(), &Handler{Key: func(e *Entry) error {
		v := e.Value
		st := ""
		if v.Strm != nil {
			st = fmt.Sprintf("%+v", *v.Strm)
			v.Strm = nil
		}
		lines = append(lines, fmt.Sprintf("%d %s %v %d %+v %s", e.DB, e.Key, e.HasExpire, e.ExpireMS, v, st))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return []byte(strings.Join(lines, "\n"))
}

// TestRawYieldingSameFile: writing chunks in yieldBytes pieces gives the
// file (and CRC64) that Raw gives, for chunks shorter than, equal to and
// several times a piece.
func TestRawYieldingSameFile(t *testing.T) {
	for _, n := range []int{0, 1, yieldBytes - 1, yieldBytes, yieldBytes + 1, 3*yieldBytes + 17} {
		chunk := make([]byte, n)
		for i := range chunk {
			chunk[i] = byte(i * 31)
		}
		write := func(yielding bool) []byte {
			var f bytes.Buffer
			w, err := NewWriter(&f, DefaultOptions(), Header{})
			if err != nil {
				t.Fatal(err)
			}
			raw := w.Raw
			if yielding {
				raw = w.RawYielding
			}
			if err := raw(chunk); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return f.Bytes()
		}
		if a, b := write(false), write(true); !bytes.Equal(a, b) {
			t.Fatalf("%d bytes: RawYielding wrote %d bytes, Raw %d (or other bytes)", n, len(b), len(a))
		}
	}
}

// TestCompressedChunkReusable: a chunk the compressor made has the
// capacity of the one it came from, so once written it serves the next
// Key's getChunk (size + size/4) instead of being dropped as too small,
// which made a BGSAVE allocate a new chunk per chunk and start
// collections on the loops' P.
func TestCompressedChunkReusable(t *testing.T) {
	const size = 64 << 10
	long := []byte(strings.Repeat("abcdefgh", 64)) // LZF shortens it
	src := getChunk(size + size/4)
	var marks []strMark
	opts := DefaultOptions()
	opts.marks = &marks
	for len(src) < size {
		var err error
		if src, err = AppendKey(src, []byte("k"), -1, &Value{Kind: KindString, Str: long}, &opts); err != nil {
			t.Fatal(err)
		}
	}
	if len(marks) == 0 {
		t.Fatal("no string marked for compression")
	}
	want := cap(src)
	out := compressMarked(src, marks, true)
	if len(out) >= size {
		t.Fatalf("compressed chunk %d bytes, not shorter than the %d raw", len(out), size)
	}
	if cap(out) < want {
		t.Fatalf("compressed chunk cap %d, below its source's %d: getChunk(size+size/4) would drop it", cap(out), want)
	}
}
