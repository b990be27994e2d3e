package aof

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestLoadReturnsEveryCommandInSequenceOrder: producers on several
// goroutines submit batches that change databases; Load returns every
// command in sequence order, each in the database it was appended in.
func TestLoadReturnsEveryCommandInSequenceOrder(t *testing.T) {
	for _, policy := range []string{FsyncAlways, FsyncEverysec, FsyncNo} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions(dir, policy)
			l := mustOpen(t, o)
			if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
				t.Fatal(err)
			}
			const producers, batches = 8, 60
			var mu sync.Mutex
			bySeq := map[uint64][]string{}
			var wg sync.WaitGroup
			for g := 0; g < producers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := l.NewProducer()
					for b := 0; b < batches; b++ {
						var want []string
						for c := 0; c < 1+(g+b)%4; c++ {
							db := (g + b + c/2) % 3
							key := fmt.Sprintf("k%d-%d-%d", g, b, c)
							p.Append(db, args("SET", key, "v"))
							want = append(want, fmt.Sprintf("%d:SET %s v", db, key))
						}
						seq := p.Submit()
						mu.Lock()
						bySeq[seq] = want
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			seqs := make([]uint64, 0, len(bySeq))
			for s := range bySeq {
				seqs = append(seqs, s)
			}
			sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
			if len(seqs) != producers*batches || seqs[0] != 1 || seqs[len(seqs)-1] != producers*batches {
				t.Fatalf("sequences are not 1..%d: %d distinct, first %d, last %d", producers*batches, len(seqs), seqs[0], seqs[len(seqs)-1])
			}
			var want []string
			for _, s := range seqs {
				want = append(want, bySeq[s]...)
			}
			got, st, err := loadAll(t, o)
			if err != nil {
				t.Fatal(err)
			}
			if g := withDB(got); !slices.Equal(g, want) {
				t.Fatalf("loaded %d commands, want %d; first difference at %d", len(g), len(want), firstDiff(g, want))
			}
			if st.Truncated {
				t.Fatalf("a clean file was truncated: %+v", st)
			}
		})
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSelectIsWrittenOnlyWhenTheDatabaseChanges spells out the commands in
// the file for sequences of batches: SELECT opens a new file, separates
// commands of different databases within a batch, and is inserted between
// batches only when the next batch starts in another database.
func TestSelectIsWrittenOnlyWhenTheDatabaseChanges(t *testing.T) {
	type cmd struct {
		db  int
		key string
	}
	tests := []struct {
		name    string
		batches [][]cmd
		want    []string
	}{
		{"one batch in db 0 starts with SELECT 0",
			[][]cmd{{{0, "a"}}},
			[]string{"SELECT 0", "SET a 1"}},
		{"same db across batches: one SELECT",
			[][]cmd{{{2, "a"}}, {{2, "b"}}, {{2, "c"}}},
			[]string{"SELECT 2", "SET a 1", "SET b 1", "SET c 1"}},
		{"db change inside a batch",
			[][]cmd{{{0, "a"}, {1, "b"}, {1, "c"}, {0, "d"}}},
			[]string{"SELECT 0", "SET a 1", "SELECT 1", "SET b 1", "SET c 1", "SELECT 0", "SET d 1"}},
		{"next batch starts where the previous ended: no SELECT",
			[][]cmd{{{0, "a"}, {5, "b"}}, {{5, "c"}}},
			[]string{"SELECT 0", "SET a 1", "SELECT 5", "SET b 1", "SET c 1"}},
		{"next batch starts elsewhere: SELECT between batches",
			[][]cmd{{{0, "a"}, {5, "b"}}, {{0, "c"}}, {{3, "d"}}},
			[]string{"SELECT 0", "SET a 1", "SELECT 5", "SET b 1", "SELECT 0", "SET c 1", "SELECT 3", "SET d 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions(dir, FsyncAlways)
			l := mustOpen(t, o)
			p := l.NewProducer()
			for _, b := range tc.batches {
				for _, c := range b {
					p.Append(c.db, args("SET", c.key, "1"))
				}
				seq := p.Submit()
				// One batch per group, so the test sees batch boundaries.
				waitFor(t, "durable", func() bool { return l.Durable() >= seq })
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(incrPath(dir, 1))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			body := stripAnnotations(data)
			for p := 0; p < len(body); {
				argv, used, _, perr := parseCommand(body[p:], nil)
				if perr != nil || used == 0 {
					t.Fatalf("file is not RESP at %d", p)
				}
				got = append(got, cmdString(argv))
				p += used
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("file holds\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// TestReopenedFileStartsWithSelect: after a restart the first batch gets a
// SELECT even in db 0, as Redis resets aof_selected_db; loading both runs
// keeps every command in its database.
func TestReopenedFileStartsWithSelect(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, FsyncAlways)
	for run, db := range []int{4, 0} {
		l := mustOpen(t, o)
		if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		p := l.NewProducer()
		p.Append(db, args("SET", fmt.Sprintf("run%d", run), "x"))
		p.Submit()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := loadAll(t, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"4:SET run0 x", "0:SET run1 x"}
	if g := withDB(got); !slices.Equal(g, want) {
		t.Fatalf("got %q, want %q", g, want)
	}
}

// TestTransactionIsDeliveredOnlyWithItsExec: MULTI ... EXEC reach apply in
// order, after the EXEC has been read; a MULTI left open at the end of the
// file is never applied and is cut off.
func TestTransactionIsDeliveredOnlyWithItsExec(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, FsyncAlways)
	l := mustOpen(t, o)
	p := l.NewProducer()
	p.Append(0, args("SET", "a", "1"))
	p.Append(0, args("MULTI"))
	p.Append(0, args("INCR", "a"))
	p.Append(1, args("INCR", "b"))
	p.Append(1, args("EXEC"))
	p.Submit()
	p.Append(1, args("MULTI"))
	p.Append(1, args("INCR", "c"))
	p.Submit() // a batch that breaks the contract: MULTI without EXEC
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, st, err := loadAll(t, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SELECT 0", "SET a 1", "MULTI", "INCR a", "SELECT 1", "INCR b", "EXEC"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !st.Truncated || !strings.Contains(st.TruncatedFile, "incr") {
		t.Fatalf("open MULTI at the end was not cut: %+v", st)
	}
}

// TestSubmitWithNothingPendingIsABarrier: an empty Submit returns the
// highest sequence assigned so far.
func TestSubmitWithNothingPendingIsABarrier(t *testing.T) {
	l := mustOpen(t, testOptions(t.TempDir(), FsyncNo))
	defer l.Close()
	p, q := l.NewProducer(), l.NewProducer()
	if s := p.Submit(); s != 0 {
		t.Fatalf("empty Submit on a new log = %d, want 0", s)
	}
	q.Append(0, args("SET", "a", "1"))
	if p.Len() != 0 || q.Len() == 0 {
		t.Fatalf("Len: p=%d q=%d", p.Len(), q.Len())
	}
	s := q.Submit()
	if b := p.Submit(); b != s {
		t.Fatalf("empty Submit after seq %d = %d", s, b)
	}
}
