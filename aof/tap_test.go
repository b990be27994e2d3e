package aof

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// The tap sees every group in log order, with the database the file was
// in before it, for a file log and for a memory log alike.
func TestTapSeesGroupsInOrder(t *testing.T) {
	for _, memory := range []bool{false, true} {
		var mu sync.Mutex
		var got bytes.Buffer
		db := -1
		tap := func(g []byte, startDB, endDB int, last uint64) {
			mu.Lock()
			defer mu.Unlock()
			if startDB != db {
				t.Errorf("memory=%v: group starts in db %d, the tap's reader is in %d", memory, startDB, db)
			}
			got.Write(g)
			db = lastSelect(g, db)
			if db != endDB {
				t.Errorf("memory=%v: group ends in db %d, the tap says %d", memory, db, endDB)
			}
		}
		var l *Log
		if memory {
			l = OpenMemory(Options{Tap: tap})
		} else {
			var err error
			l, err = Open(Options{Dir: t.TempDir(), Fsync: FsyncAlways, Tap: tap})
			if err != nil {
				t.Fatal(err)
			}
		}
		p1, p2 := l.NewProducer(), l.NewProducer()
		var want bytes.Buffer
		wdb := -1
		var last uint64
		for i := 0; i < 200; i++ {
			p, d := p1, i%3
			if i%2 == 1 {
				p = p2
			}
			argv := [][]byte{[]byte("SET"), []byte("k"), []byte{byte('a' + i%26)}}
			p.Append(d, argv)
			last = p.Submit()
			if d != wdb {
				want.Write(appendSelect(nil, d))
				wdb = d
			}
			want.Write(appendCommand(nil, argv))
		}
		deadline := time.Now().Add(5 * time.Second)
		for l.Written() < last && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("memory=%v: the tap saw %d bytes, want %d (%q...)", memory, got.Len(), want.Len(), got.Bytes()[:min(80, got.Len())])
		}
		mu.Unlock()
	}
}

// lastSelect returns the database of the last SELECT in g, or db.
func lastSelect(g []byte, db int) int {
	sel := []byte("$6\r\nSELECT\r\n$")
	for {
		i := bytes.Index(g, sel)
		if i < 0 {
			return db
		}
		g = g[i+len(sel):]
		j := bytes.IndexByte(g, '\n')
		k := g[j+1:]
		e := bytes.IndexByte(k, '\r')
		n := 0
		for _, c := range k[:e] {
			n = n*10 + int(c-'0')
		}
		db = n
	}
}
