package aof

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestConcurrentProducersShareFsyncs: under "always", producers that each
// wait for their batch to be durable before submitting the next (a client
// whose reply is held) share fsyncs: far fewer fsyncs than batches, counted
// through the FS. The disk is made slow (1ms per fsync) so the test does not
// depend on the machine's.
func TestConcurrentProducersShareFsyncs(t *testing.T) {
	tests := []struct {
		name      string
		producers int
		batches   int
		wait      bool // wait for each batch to be durable (pipeline depth 1)
	}{
		{"16 producers waiting for each batch", 16, 60, true},
		{"8 producers waiting for each batch", 8, 100, true},
		{"16 producers pipelining", 16, 200, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ffs := newFaultFS()
			ffs.syncDelay = time.Millisecond
			o := testOptions(t.TempDir(), FsyncAlways)
			o.FS = ffs
			l := mustOpen(t, o)
			var mu sync.Mutex
			cond := sync.NewCond(&mu)
			l.OnDurable(func(_, _ uint64) {
				mu.Lock()
				cond.Broadcast()
				mu.Unlock()
			})
			before := ffs.incrSyncs()
			var wg sync.WaitGroup
			var last uint64
			var lastMu sync.Mutex
			for g := 0; g < tc.producers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := l.NewProducer()
					for b := 0; b < tc.batches; b++ {
						for c := 0; c <= b%3; c++ {
							p.Append(g%4, args("INCR", fmt.Sprintf("counter:%d:%d", g, c)))
						}
						seq := p.Submit()
						lastMu.Lock()
						last = max(last, seq)
						lastMu.Unlock()
						if tc.wait {
							mu.Lock()
							for l.Durable() < seq {
								cond.Wait()
							}
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			waitFor(t, "all durable", func() bool { return l.Durable() >= last })
			fsyncs := ffs.incrSyncs() - before
			batches := tc.producers * tc.batches
			st := l.Stats()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d batches, %d groups, %d fsyncs, fsync max %v", batches, st.Groups, fsyncs, st.FsyncLatencyMax)
			if fsyncs >= batches/2 {
				t.Fatalf("%d fsyncs for %d batches: group commit is not grouping", fsyncs, batches)
			}
			if st.Batches != uint64(batches) || st.Groups != uint64(fsyncs) || st.Fsyncs != uint64(fsyncs) {
				t.Fatalf("stats %+v disagree with %d batches and %d fsyncs", st, batches, fsyncs)
			}
		})
	}
}

// TestWriteNow: under everysec a producer that submits quietly and calls
// WriteNow finds its batch written when WriteNow returns true; several
// producers doing so while the writer goroutine runs rounds too keep every
// batch, in sequence order; under always WriteNow writes and fsyncs for a
// lone producer unless the disk is slow; and a write
// error met by WriteNow hands the retries to the writer goroutine, which
// writes the batch once the disk recovers.
func TestWriteNow(t *testing.T) {
	t.Run("everysec: written on return, every batch kept in order", func(t *testing.T) {
		dir := t.TempDir()
		o := testOptions(dir, FsyncEverysec)
		l := mustOpen(t, o)
		var wg sync.WaitGroup
		var inline sync.Map
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := l.NewProducer()
				for b := 0; b < 200; b++ {
					p.Append(0, args("SET", fmt.Sprintf("k:%d", g), fmt.Sprint(b)))
					seq := p.SubmitQuiet()
					if l.WriteNow() {
						if l.Written() < seq {
							t.Errorf("WriteNow returned with batch %d unwritten (written %d)", seq, l.Written())
						}
						inline.Store(seq, true)
					} else {
						l.Signal()
					}
				}
			}()
		}
		wg.Wait()
		n := 0
		inline.Range(func(_, _ any) bool { n++; return true })
		if n == 0 {
			t.Fatal("WriteNow never wrote")
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		got, _, err := loadAll(t, o)
		if err != nil {
			t.Fatal(err)
		}
		last := map[string]int{}
		count := 0
		for _, c := range got {
			var k string
			var v int
			if _, err := fmt.Sscanf(c, "SET %s %d", &k, &v); err != nil {
				continue // SELECT
			}
			if prev, ok := last[k]; ok && v != prev+1 {
				t.Fatalf("%s: %d after %d: batches out of order or lost", k, v, prev)
			}
			last[k] = v
			count++
		}
		if count != 800 {
			t.Fatalf("%d records loaded, want 800", count)
		}
	})
	t.Run("always: inline with its fsync while the disk is fast", func(t *testing.T) {
		l := mustOpen(t, testOptions(t.TempDir(), FsyncAlways))
		p := l.NewProducer()
		p.Append(0, args("SET", "k", "v"))
		seq := p.SubmitQuiet()
		before := l.Stats().Fsyncs
		if !l.WriteNow() {
			t.Fatal("WriteNow did not write under always with an idle writer")
		}
		if l.Durable() < seq || l.Written() < seq {
			t.Fatalf("WriteNow returned with batch %d not durable (durable %d)", seq, l.Durable())
		}
		if got := l.Stats().Fsyncs - before; got != 1 {
			t.Fatalf("%d fsyncs for the inline round, want 1", got)
		}
		// A second producer (a second shard): the shared writer fsyncs.
		p2 := l.NewProducer()
		p2.Append(0, args("SET", "k2", "v"))
		seq = p2.SubmitQuiet()
		if l.WriteNow() {
			t.Fatal("WriteNow fsynced inline under always with two producers")
		}
		l.Signal()
		waitFor(t, "durable", func() bool { return l.Durable() >= seq })
		l.producers.Store(1)
		// A slow disk: the loop must not stall on it.
		l.wmu.Lock()
		l.gth.fsyncAvg = int64(2 * inlineFsyncMax)
		l.wmu.Unlock()
		p.Append(0, args("SET", "k", "w"))
		seq = p.SubmitQuiet()
		if l.WriteNow() {
			t.Fatal("WriteNow fsynced inline with a smoothed fsync time over inlineFsyncMax")
		}
		l.Signal()
		waitFor(t, "durable", func() bool { return l.Durable() >= seq })
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a failed inline write is retried by the writer", func(t *testing.T) {
		ffs := newFaultFS()
		o := testOptions(t.TempDir(), FsyncEverysec)
		o.FS = ffs
		o.retryMin, o.retryMax = time.Millisecond, 5*time.Millisecond
		l := mustOpen(t, o)
		ffs.mu.Lock()
		ffs.failWrites, ffs.err = 1, errors.New("injected")
		ffs.mu.Unlock()
		p := l.NewProducer()
		p.Append(0, args("SET", "k", "v"))
		seq := p.SubmitQuiet()
		if !l.WriteNow() {
			t.Fatal("WriteNow did not run with an idle writer")
		}
		if l.Written() >= seq || l.Err() == nil {
			t.Fatalf("written %d, err %v after a failed write", l.Written(), l.Err())
		}
		waitFor(t, "the retry", func() bool { return l.Written() >= seq })
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		got, _, err := loadAll(t, o)
		if err != nil || len(withDB(got)) != 1 {
			t.Fatalf("loaded %q, %v", got, err)
		}
	})
}

// TestGather: under "always", a command submitted alone right after an
// fsync does not get an fsync of its own when the clients that fsync
// released come back within the bound (half an fsync): the writer waits for
// as many commands as the last group carried. A lone producer, whose next
// batch is always as big as its last, never waits.
func TestGather(t *testing.T) {
	t.Run("a straggler rides with the released clients", func(t *testing.T) {
		ffs := newFaultFS()
		ffs.syncDelay = 4 * time.Millisecond // bound: min(2ms, gatherMax)
		o := testOptions(t.TempDir(), FsyncAlways)
		o.FS = ffs
		l := mustOpen(t, o)
		a, b := l.NewProducer(), l.NewProducer()
		const rounds = 10
		merged := 0
		for r := 0; r < rounds; r++ {
			for i := 0; i < 10; i++ {
				a.Append(0, args("SET", fmt.Sprint("a", i), fmt.Sprint(r)))
			}
			s := a.Submit()
			waitFor(t, "durable", func() bool { return l.Durable() >= s })
			g0 := l.Stats().Groups
			b.Append(0, args("SET", "b", fmt.Sprint(r)))
			sb := b.Submit()
			for t0 := time.Now(); time.Since(t0) < 100*time.Microsecond; {
				runtime.Gosched() // time.Sleep may round 100µs up to 1ms
			}
			for i := 0; i < 10; i++ {
				a.Append(0, args("SET", fmt.Sprint("a", i), fmt.Sprint(r)))
			}
			sa := a.Submit()
			waitFor(t, "durable", func() bool { return l.Durable() >= sa && l.Durable() >= sb })
			if l.Stats().Groups-g0 == 1 {
				merged++
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d of %d stragglers merged", merged, rounds)
		if merged < rounds/2 {
			t.Fatalf("only %d of %d stragglers shared the released clients' fsync", merged, rounds)
		}
	})
	t.Run("a lone producer never waits", func(t *testing.T) {
		ffs := newFaultFS()
		ffs.syncDelay = time.Millisecond
		o := testOptions(t.TempDir(), FsyncAlways)
		o.FS = ffs
		l := mustOpen(t, o)
		p := l.NewProducer()
		for r := 0; r < 20; r++ {
			p.Append(0, args("INCR", "k"))
			s := p.Submit()
			waitFor(t, "durable", func() bool { return l.Durable() >= s })
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if l.gth.waits != 0 {
			t.Fatalf("the writer waited %d times for a lone producer", l.gth.waits)
		}
	})
}
