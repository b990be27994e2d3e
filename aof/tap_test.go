package aof

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		l := tapLog(t, memory, t.TempDir(), tap)
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

// Replication-only records (AppendReplOnly: Redis's PUBLISH) reach the tap
// in their places among the other records, and never the file: a batch
// that holds some, one that holds nothing else, and groups made of those
// alone; the file loads back with the other records only, and a group of
// replication-only records alone writes nothing to it.
func TestTapReplOnlyRecords(t *testing.T) {
	for _, memory := range []bool{false, true} {
		var mu sync.Mutex
		var got bytes.Buffer
		tap := func(g []byte, startDB, endDB int, last uint64) {
			mu.Lock()
			defer mu.Unlock()
			got.Write(g)
		}
		dir := t.TempDir()
		l := tapLog(t, memory, dir, tap)
		p := l.NewProducer()
		// The expected stream: a batch's records as appended (a SELECT
		// where a write's database changes within it), behind a SELECT
		// when the batch's first write is in another database than the
		// stream's; a batch of publishes alone changes no database.
		var want, bw bytes.Buffer
		var file []string
		wdb, bfirst, bdb := -1, -1, -1
		set := func(db int, v string) {
			argv := [][]byte{[]byte("SET"), []byte("k"), []byte(v)}
			p.Append(db, argv)
			if bfirst < 0 {
				bfirst, bdb = db, db
			} else if db != bdb {
				bw.Write(appendSelect(nil, db))
				bdb = db
			}
			bw.Write(appendCommand(nil, argv))
			file = append(file, "SET k "+v)
		}
		pub := func(msg string) {
			argv := [][]byte{[]byte("PUBLISH"), []byte("ch"), []byte(msg)}
			p.AppendReplOnly(argv)
			bw.Write(appendCommand(nil, argv))
		}
		submit := func() uint64 {
			if bfirst >= 0 && bfirst != wdb {
				want.Write(appendSelect(nil, bfirst))
			}
			want.Write(bw.Bytes())
			if bfirst >= 0 {
				wdb = bdb
			}
			bw.Reset()
			bfirst, bdb = -1, -1
			return p.Submit()
		}
		var last uint64
		for i := 0; i < 60; i++ {
			switch i % 4 {
			case 0: // writes around a publish, in two databases
				set(i%3, "a")
				pub("m1")
				set((i+1)%3, "b")
			case 1: // a publish alone in its batch
				pub("m2")
			case 2: // publishes first, then a write
				pub("m3")
				pub("m4")
				set(i%3, "c")
			case 3:
				set(i%3, "d")
			}
			last = submit()
			if i%10 == 9 { // let some groups hold a publish alone
				waitWritten(l, last)
			}
		}
		waitWritten(l, last)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if g, w := got.Bytes(), want.Bytes(); !bytes.Equal(g, w) {
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("memory=%v: the tap saw %d bytes, want %d; from byte %d: %q, want %q", memory, len(g), len(w), i, g[i:min(i+80, len(g))], w[i:min(i+80, len(w))])
		}
		mu.Unlock()
		if memory {
			continue
		}
		incr, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
		if len(incr) == 0 {
			t.Fatalf("no incr file in %s", dir)
		}
		for _, f := range incr {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("PUBLISH")) || bytes.Contains(b, []byte("#B:0:")) {
				t.Errorf("%s holds a replication-only record or an empty group:\n%q", f, b)
			}
		}
		l2, err := Open(Options{Dir: dir, Fsync: FsyncAlways})
		if err != nil {
			t.Fatal(err)
		}
		var loaded []string
		if _, err := l2.Load(func(argv [][]byte) error {
			if c := cmdString(argv); !strings.HasPrefix(c, "SELECT") {
				loaded = append(loaded, c)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		l2.Close()
		if strings.Join(loaded, "\n") != strings.Join(file, "\n") {
			t.Errorf("the file loads back as\n%v\nwant\n%v", loaded, file)
		}
	}
}

// AppendTo's records go to one side: DestFile ones to the file and not the
// tap, DestRepl ones to the tap and not the file, each in its database on
// the side it reaches (the replayed file and the tap's stream both apply
// every record in the database it was appended in), and a memory log's
// tap never sees DestFile records.
func TestAppendToOneSide(t *testing.T) {
	for _, memory := range []bool{false, true} {
		var mu sync.Mutex
		var tapped []string
		tdb := -1
		tap := func(g []byte, startDB, endDB int, last uint64) {
			mu.Lock()
			defer mu.Unlock()
			if startDB != tdb {
				t.Errorf("memory=%v: group starts in db %d, the tap's reader is in %d", memory, startDB, tdb)
			}
			for _, argv := range parseAll(t, g) {
				if c := cmdString(argv); strings.HasPrefix(c, "SELECT ") {
					tdb = int(argv[1][0] - '0')
				} else {
					tapped = append(tapped, fmt.Sprintf("%d:%s", tdb, c))
				}
			}
		}
		dir := t.TempDir()
		l := tapLog(t, memory, dir, tap)
		p := l.NewProducer()
		var wantFile, wantTap []string
		put := func(db int, v string, d Dest) {
			argv := [][]byte{[]byte("SET"), []byte("k"), []byte(v)}
			p.AppendTo(db, argv, d)
			rec := fmt.Sprintf("%d:SET k %s", db, v)
			if d != DestRepl {
				wantFile = append(wantFile, rec)
			}
			if d != DestFile {
				wantTap = append(wantTap, rec)
			}
		}
		var last uint64
		for i := 0; i < 40; i++ {
			v := strconv.Itoa(i)
			switch i % 4 {
			case 0:
				put(i%3, v+"a", DestAll)
				put((i+1)%3, v+"f", DestFile)
				put((i+2)%3, v+"r", DestRepl)
			case 1:
				put(i%3, v+"r", DestRepl) // a batch for the stream alone
			case 2:
				put(i%3, v+"f", DestFile) // for the file alone
			case 3:
				put(i%3, v+"f", DestFile)
				put(i%3, v+"a", DestAll)
			}
			last = p.Submit()
			if i%10 == 9 {
				waitWritten(l, last)
			}
		}
		waitWritten(l, last)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if strings.Join(tapped, " ") != strings.Join(wantTap, " ") {
			t.Errorf("memory=%v: the tap saw\n%v\nwant\n%v", memory, tapped, wantTap)
		}
		mu.Unlock()
		if memory {
			continue
		}
		l2, err := Open(Options{Dir: dir, Fsync: FsyncAlways})
		if err != nil {
			t.Fatal(err)
		}
		var loaded []string
		fdb := 0
		if _, err := l2.Load(func(argv [][]byte) error {
			if c := cmdString(argv); strings.HasPrefix(c, "SELECT ") {
				fdb = int(argv[1][0] - '0')
			} else {
				loaded = append(loaded, fmt.Sprintf("%d:%s", fdb, c))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		l2.Close()
		if strings.Join(loaded, " ") != strings.Join(wantFile, " ") {
			t.Errorf("the file loads back as\n%v\nwant\n%v", loaded, wantFile)
		}
	}
}

// parseAll splits RESP commands (as a group holds them) into argvs.
func parseAll(t *testing.T, g []byte) [][][]byte {
	t.Helper()
	var out [][][]byte
	num := func() int {
		i := bytes.Index(g, []byte("\r\n"))
		n, err := strconv.Atoi(string(g[1:i]))
		if err != nil {
			t.Fatalf("bad RESP at %q", g[:min(len(g), 40)])
		}
		g = g[i+2:]
		return n
	}
	for len(g) > 0 {
		argv := make([][]byte, num())
		for k := range argv {
			n := num()
			argv[k] = g[:n]
			g = g[n+2:]
		}
		out = append(out, argv)
	}
	return out
}

// tapLog opens a log with tap: in memory, or in dir under always.
func tapLog(t *testing.T, memory bool, dir string, tap func(g []byte, startDB, endDB int, last uint64)) *Log {
	t.Helper()
	if memory {
		return OpenMemory(Options{Tap: tap})
	}
	l, err := Open(Options{Dir: dir, Fsync: FsyncAlways, Tap: tap})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// waitWritten waits, 5 s at most, until the log has written seq.
func waitWritten(l *Log, seq uint64) {
	for deadline := time.Now().Add(5 * time.Second); l.Written() < seq && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}
