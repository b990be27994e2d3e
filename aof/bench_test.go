package aof

import (
	"sync"
	"testing"
)

// BenchmarkAppendSubmit measures the producer side alone: encoding a SET
// and submitting it as a batch of one (the writer runs under "no").
func BenchmarkAppendSubmit(b *testing.B) {
	l := mustOpen(b, testOptions(b.TempDir(), FsyncNo))
	defer l.Close()
	p := l.NewProducer()
	argv := args("SET", "key:000000001", "value-value-value-value")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Append(0, argv)
		p.Submit()
	}
}

// BenchmarkGroupCommitAlways: 32 producers each waiting for its batch to be
// durable under "always" on the real disk; reports fsyncs per batch.
func BenchmarkGroupCommitAlways(b *testing.B) {
	ffs := newFaultFS()
	o := testOptions(b.TempDir(), FsyncAlways)
	o.FS = ffs
	l := mustOpen(b, o)
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	l.OnDurable(func(_, _ uint64) { mu.Lock(); cond.Broadcast(); mu.Unlock() })
	argv := args("SET", "key:000000001", "value-value-value-value")
	const producers = 32
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := 0; g < producers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := l.NewProducer()
			for i := g; i < b.N; i += producers {
				p.Append(0, argv)
				seq := p.Submit()
				mu.Lock()
				for l.Durable() < seq {
					cond.Wait()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	st := l.Stats()
	l.Close()
	b.ReportMetric(float64(st.Fsyncs)/float64(b.N), "fsyncs/batch")
	if st.Fsyncs > 0 {
		b.ReportMetric(float64(st.FsyncLatencySum.Microseconds())/float64(st.Fsyncs), "µs/fsync")
	}
}
