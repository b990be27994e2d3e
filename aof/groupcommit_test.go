package aof

import (
	"fmt"
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
