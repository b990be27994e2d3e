package aof

import (
	"sync/atomic"
	"time"
)

// Gathering a group under "always".
//
// Each fsync releases the replies of the clients whose commands it
// carried, and most of them send their next command at once; but they come
// back one by one, while the loop writes their replies and reads their
// requests. A writer that starts the next fsync on the first submission
// gives a whole fsync to the first few clients back, and the others, who
// arrive microseconds later, wait for it to end and then for one of their
// own. Measured with one shard, SET -c 50 -P 1 on 2 cores: groups of 1 or
// 2 commands alternated with groups of 48 or 49 (21-25 commands per fsync);
// the clients had split into a small and a big half.
//
// So before a round, when fewer commands are pending than the last group
// carried (the clients it released, as far as the writer can tell), the
// writer waits for more submissions, and starts as soon as the count is
// reached. The wait is bounded by half the smoothed fsync time, and by
// gatherMax: a client whose command comes alone waits at most that long
// more than it would have. A lone client never waits (its group carried
// one command, and its next one reaches the count); nor does a workload
// whose next group is at least as big as the last, so the groups of a
// pipelined load that overlap an fsync keep overlapping.
//
// Measured the same way (alternating rounds against the previous build and
// redis-server 7.0.15 on the same disk, 9 rounds, medians): SET -P 1 +12%
// to +23% over the previous build, 39-44 commands per fsync instead of
// 24-26; SET -P 16 +10% to +21%, 500 commands per fsync instead of 410; p50
// latency at -P 1 lower, p99 unchanged. Half an fsync as the bound beat a
// whole one (capped at 2ms) and a quarter (capped at 0.5ms).

// gatherMax bounds one gather.
const gatherMax = time.Millisecond

type gatherState struct {
	drained  uint64       // l.submitted at the last drain (guarded by mu)
	want     atomic.Int64 // commands of the last group fsynced under always
	wait     atomic.Int64 // bound of a gather (ns)
	fsyncAvg int64        // smoothed fsync time (guarded by wmu)
	timer    *time.Timer  // the writer goroutine's
	waits    uint64       // gathers that waited (the writer goroutine's; tests)
}

// gatherNext is called by flush when a group of cmds commands has been
// made durable by an fsync that took d.
func (l *Log) gatherNext(cmds int, d time.Duration) {
	g := &l.gth
	if g.fsyncAvg == 0 {
		g.fsyncAvg = int64(d)
	} else {
		g.fsyncAvg += (int64(d) - g.fsyncAvg) / 8
	}
	g.wait.Store(min(g.fsyncAvg/2, int64(gatherMax)))
	g.want.Store(int64(cmds))
}

// gather is step 0 of a writer round: under "always", it waits until at
// least as many commands are pending as the last group carried, or the
// bound has passed since it began. It returns early when nothing is
// pending, when the log closes or fails, and reports whether the retry
// timer fired meanwhile.
func (l *Log) gather(retryC <-chan time.Time) bool {
	g := &l.gth
	if l.policy.Load() != policyAlways {
		return false
	}
	wait := g.wait.Load()
	if wait <= 0 {
		return false
	}
	var deadline time.Time
	for {
		l.mu.Lock()
		stop := l.closing || l.writeErr != nil
		pending := l.submitted.Load() - g.drained
		l.mu.Unlock()
		if stop || pending == 0 || int64(pending) >= g.want.Load() {
			return false
		}
		var d time.Duration
		if deadline.IsZero() {
			g.waits++
			deadline = time.Now().Add(time.Duration(wait))
			d = time.Duration(wait)
		} else if d = time.Until(deadline); d <= 0 {
			return false
		}
		if g.timer == nil {
			g.timer = time.NewTimer(d)
		} else {
			g.timer.Reset(d)
		}
		select {
		case <-l.wake:
			g.timer.Stop()
		case <-g.timer.C:
			return false
		case <-retryC:
			g.timer.Stop()
			return true
		}
	}
}
