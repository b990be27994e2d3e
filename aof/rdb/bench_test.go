package rdb

import (
	"bytes"
	"math/rand"
	"testing"
)

// BenchmarkLZFCompress: the strings a BGSAVE compresses most, values of
// redis-benchmark -d 100 (one byte repeated), DEBUG POPULATE's (a short
// text and zeros), and 100 bytes of text-like data, and a 64 KB page.
func BenchmarkLZFCompress(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"user", "session", "id", ":", "name", "alice", "bob", "1234", "token", "=", " ", "value"}
	text := func(n int) []byte {
		var buf bytes.Buffer
		for buf.Len() < n {
			buf.WriteString(words[rng.Intn(len(words))])
		}
		return buf.Bytes()[:n]
	}
	pop := append([]byte("value:123456"), make([]byte, 88)...)
	cases := []struct {
		name string
		in   []byte
	}{
		{"bench-100", bytes.Repeat([]byte("x"), 100)},
		{"populate-100", pop},
		{"text-100", text(100)},
		{"text-64k", text(64 << 10)},
	}
	st := new(lzfState)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			var out []byte
			for i := 0; i < b.N; i++ {
				out = st.compress(c.in)
			}
			b.ReportMetric(float64(len(out))/float64(len(c.in)), "out/in")
		})
	}
}

// FuzzLZFRoundTrip: whatever the input, LZFCompress's output decompresses
// to exactly it, and a state reused across inputs (as the BGSAVE's
// compressors reuse theirs) compresses each as a fresh one would.
func FuzzLZFRoundTrip(f *testing.F) {
	f.Add([]byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), []byte("abcabcabcabd"))
	f.Add(append([]byte("value:123456"), make([]byte, 88)...), []byte{})
	f.Add(bytes.Repeat([]byte("ab"), 300), bytes.Repeat([]byte("0123456789"), 1000))
	st := new(lzfState)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		for _, in := range [][]byte{a, b, append(append([]byte(nil), a...), b...)} {
			c := append([]byte(nil), st.compress(in)...)
			if fresh := new(lzfState).compress(in); !bytes.Equal(c, fresh) {
				t.Fatalf("len %d: a reused state compressed differently", len(in))
			}
			out, err := LZFDecompress(c, len(in))
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("len %d: round trip failed: %v", len(in), err)
			}
		}
	})
}

// BenchmarkDupAt10: the repeat check of a loaded 10-field hash, the
// collections of bench -only rdb.
func BenchmarkDupAt10(b *testing.B) {
	var items [][]byte
	for i := 0; i < 10; i++ {
		items = append(items, []byte{'f', byte('0' + i)})
	}
	for i := 0; i < b.N; i++ {
		if checkDups(items, 1) != nil {
			b.Fatal("a repeat found")
		}
	}
}
