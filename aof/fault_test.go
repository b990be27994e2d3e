package aof

import (
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

var errNoSpace = syscall.ENOSPC

// failures records OnFailed calls.
type failures struct {
	mu   sync.Mutex
	seqs []uint64
	errs []error
}

func (f *failures) record(from, to uint64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := from; s <= to; s++ {
		f.seqs = append(f.seqs, s)
	}
	f.errs = append(f.errs, err)
}

func (f *failures) has(s uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.seqs, s)
}

func (f *failures) all() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seqs)
}

// TestFailedWriteOrFsyncIsReportedAndRecovers: while the disk fails, the
// failed group's sequences and every later submission are reported through
// OnFailed (once each), Err is set with Redis's reason, Written and Durable
// stay put; once the disk recovers the kept batches are written once, in
// order, and the error state clears.
func TestFailedWriteOrFsyncIsReportedAndRecovers(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		arm    func(f *faultFS)
	}{
		{"write fails under always", FsyncAlways, func(f *faultFS) { f.failWrites = -1 }},
		{"partial write under always", FsyncAlways, func(f *faultFS) { f.failWrites, f.partial = -1, true }},
		{"partial write and ftruncate fail", FsyncAlways, func(f *faultFS) { f.failWrites, f.partial, f.failTruncs = -1, true, -1 }},
		{"fsync fails under always", FsyncAlways, func(f *faultFS) { f.failSyncs = -1 }},
		{"write fails under everysec", FsyncEverysec, func(f *faultFS) { f.failWrites = -1 }},
		{"partial write under everysec", FsyncEverysec, func(f *faultFS) { f.failWrites, f.partial = -1, true }},
		{"write fails under no", FsyncNo, func(f *faultFS) { f.failWrites = -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ffs := newFaultFS()
			o := testOptions(dir, tc.policy)
			o.FS = ffs
			l := mustOpen(t, o)
			if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
				t.Fatal(err)
			}
			var fails failures
			l.OnFailed(fails.record)
			always := tc.policy == FsyncAlways
			pos := func() uint64 {
				if always {
					return l.Durable()
				}
				return l.Written()
			}
			p := l.NewProducer()
			p.Append(0, args("SET", "a", "1"))
			s1 := p.Submit()
			waitFor(t, "first batch", func() bool { return pos() >= s1 })
			durable1 := l.Durable()

			ffs.arm(tc.arm)
			p.Append(0, args("SET", "b", "2"))
			s2 := p.Submit()
			waitFor(t, "OnFailed for the failing batch", func() bool { return fails.has(s2) })
			err := l.Err()
			if err == nil {
				t.Fatal("Err() is nil while the disk fails")
			}
			if r := Reason(err); r != "No space left on device" {
				t.Fatalf("Reason = %q, want Redis's strerror", r)
			}
			if st := l.Stats(); st.LastWriteStatus != "err" {
				t.Fatalf("LastWriteStatus = %q", st.LastWriteStatus)
			}

			// A submission during the error state fails fast.
			p.Append(1, args("SET", "c", "3"))
			s3 := p.Submit()
			waitFor(t, "OnFailed for a batch submitted while failing", func() bool { return fails.has(s3) })
			time.Sleep(20 * time.Millisecond) // several retries
			if l.Written() >= s2 || l.Durable() >= s2 || (always && l.Durable() != durable1) {
				t.Fatalf("positions moved past a failed batch: written %d durable %d", l.Written(), l.Durable())
			}

			ffs.arm(func(f *faultFS) { f.failWrites, f.failSyncs, f.failTruncs, f.partial = 0, 0, 0, false })
			waitFor(t, "recovery", func() bool { return l.Err() == nil && pos() >= s3 })
			if st := l.Stats(); st.LastWriteStatus != "ok" || st.WriteErrors == 0 {
				t.Fatalf("after recovery: %+v", st)
			}
			if got := fails.all(); !slices.Equal(got, []uint64{s2, s3}) {
				t.Fatalf("OnFailed reported %v, want each of [%d %d] once", got, s2, s3)
			}
			p.Append(1, args("SET", "d", "4"))
			p.Submit()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}

			o.FS = nil
			o.LoadTruncated = false
			got, _, err := loadAll(t, o)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"0:SET a 1", "0:SET b 2", "1:SET c 3", "1:SET d 4"}
			if g := withDB(got); !slices.Equal(g, want) {
				t.Fatalf("loaded %q, want %q", g, want)
			}
		})
	}
}

// TestEverysecFsyncFailureHoldsDurable: under everysec a failing fsync sets
// the error state and Durable stays behind Written until an fsync succeeds.
func TestEverysecFsyncFailureHoldsDurable(t *testing.T) {
	dir := t.TempDir()
	ffs := newFaultFS()
	o := testOptions(dir, FsyncEverysec)
	o.FS = ffs
	l := mustOpen(t, o)
	defer l.Close()
	var fails failures
	l.OnFailed(fails.record)
	var mu sync.Mutex
	var calls [][2]uint64
	l.OnDurable(func(w, d uint64) {
		mu.Lock()
		calls = append(calls, [2]uint64{w, d})
		mu.Unlock()
	})
	ffs.arm(func(f *faultFS) { f.failSyncs = -1 })
	p := l.NewProducer()
	p.Append(0, args("SET", "a", "1"))
	s := p.Submit()
	waitFor(t, "written", func() bool { return l.Written() >= s })
	waitFor(t, "error state", func() bool { return l.Err() != nil })
	waitFor(t, "OnFailed", func() bool { return fails.has(s) })
	if l.Durable() >= s {
		t.Fatalf("Durable %d passed a batch whose fsync failed", l.Durable())
	}
	ffs.arm(func(f *faultFS) { f.failSyncs = 0 })
	waitFor(t, "durable after recovery", func() bool { return l.Durable() >= s && l.Err() == nil })
	mu.Lock()
	defer mu.Unlock()
	if len(calls) == 0 || calls[len(calls)-1][1] < s {
		t.Fatalf("OnDurable calls %v do not end at durable >= %d", calls, s)
	}
}

// TestCloseFlushesAndFsyncs: Close writes what was submitted and fsyncs it,
// whatever the policy.
func TestCloseFlushesAndFsyncs(t *testing.T) {
	for _, policy := range []string{FsyncAlways, FsyncEverysec, FsyncNo} {
		t.Run(policy, func(t *testing.T) {
			ffs := newFaultFS()
			o := testOptions(t.TempDir(), policy)
			o.FS = ffs
			o.syncEvery = time.Hour
			l := mustOpen(t, o)
			p := l.NewProducer()
			var last uint64
			for i := 0; i < 10; i++ {
				p.Append(0, args("SET", fmt.Sprint(i), "x"))
				last = p.Submit()
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l.Durable() != last || l.Written() != last || ffs.incrSyncs() == 0 {
				t.Fatalf("after Close: written %d durable %d fsyncs %d, want %d", l.Written(), l.Durable(), ffs.incrSyncs(), last)
			}
		})
	}
}
