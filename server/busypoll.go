package server

// Busy polling: a loop that has just served a round of TLS clients waits
// a few microseconds for the next one before it sleeps in epoll_wait.
//
// Why. A loop that sleeps must be woken by the kernel when a request
// arrives, and the waking is paid by the sender: the client's write runs
// the wake-up of the loop's thread, and when the loop's CPU is idle that
// is an inter-processor interrupt, which in a virtual machine whose idle
// CPUs halt (this project's machines: cpuidle haltpoll, guest polling off)
// exits to the host. Profiled with redis-benchmark --tls -P 1, 50 clients,
// the server on CPU 0 and the client, CPU-bound, on CPU 1: the wake-up
// under the client's write() (sock_def_readable) took 12.5% of the
// client's CPU against redshard and 7.8% against redis-server, and
// redshard's loop went to sleep 31-44k times per 300k GETs against
// redis-server's 13-20k, because it needs less CPU per request (7.6-8.0 µs
// against 8.5-10 µs) and so is idle more often. The client, paying for
// every sleep, set the pace: 0.93-0.95x of redis-server's throughput.
//
// How. After the round's replies are written (the end-of-round task,
// persist.go's deferEnd), the loop polls its own epoll instance with
// poll(2) and a zero timeout, which tells whether epoll_wait would return
// an event without taking it, until one is ready, another goroutine posts
// a task to the loop (Loop.post counts them: a task posted while the loop
// runs its tasks does not write gnet's eventfd, so the epoll instance would
// not show it), or the window ends. Then gnet's epoll_wait takes the event
// at once, or sleeps as before.
//
// The window adapts as Linux's guest halt-polling does: it is 0 until the
// loop finds that it was idle less than the configured maximum
// (busy-poll-usecs, 20) after a round; then it starts at busyPollGrowStart
// and doubles each time the loop was idle longer than the window but less
// than the maximum, halves each time the idle time exceeds the maximum,
// and falls to 0 below busyPollGrowStart. A loop whose clients come back
// within microseconds (many clients, one request each in flight) polls; a
// loop with one client per round trip of a millisecond, or idle, does not.
// The cost is the idle time turned into CPU time, at most busy-poll-usecs
// per round and only while rounds follow each other closely.
//
// Which rounds. Polling pays where the server has CPU to spare beside
// redis-server and the client is the bottleneck. Over TLS redshard needed
// 0.85-0.91x of redis-server's CPU per request and 0.91-1.02x of its
// throughput at -P 1; with polling, 0.85-0.97x and 1.00-1.16x in four runs
// of the bench's tls group (bench/results/2026-12-06-vm-tls-busypoll*.md). In plaintext redshard's
// CPU per request at -P 1 is already redis-server's (0.97-1.05x) and
// polling added 4-15% to it for 2-4% more throughput, so rounds that served
// only plaintext clients poll only with busy-poll-plaintext yes.
//
// The epoll instance is gnet's and gnet does not export it: the loop finds
// it once, the first time it would poll, as the eventpoll file that
// watches a client's socket with the socket's number as its data (how
// gnet registers; Go's runtime poller stores a pointer there), from
// /proc/self/fdinfo (busypoll_linux.go). Without it (another OS, no /proc)
// the loop never polls.

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// busyPollGrowStart is the first window a loop tries.
const busyPollGrowStart = 2 * time.Microsecond

// loopBusyPoll is a loop's polling state; only the loop touches it, but
// posted, which any goroutine bumps.
type loopBusyPoll struct {
	posted atomic.Uint64 // tasks posted to the loop (Loop.post)

	fd     int           // a client's socket, to find the epoll instance by
	probed bool          // the epoll instance was found, or looked for enough
	looks  int           // times it was looked for
	epfd   int           // the loop's epoll instance, or -1
	tls    bool          // this round served a TLS client
	win    time.Duration // the current window
	since  time.Time     // when the last round ended (zero: woken since)

	hits, misses atomic.Int64 // windows that saw an event, and that ran out
}

// post queues r to run on the loop, and counts it for busyPoll: every
// task given to a loop goes through here.
func (l *Loop) post(r gnet.Runnable) error {
	l.bp.posted.Add(1)
	return l.el.Execute(context.Background(), r)
}

// busyPollWoke is called when the loop serves a client's input: it adapts
// the window to how long the loop was idle since its last round.
func (l *Loop) busyPollWoke(c gnet.Conn, now time.Time) {
	bp := &l.bp
	if !bp.probed {
		bp.fd = c.Fd() // a socket the loop's epoll instance watches
	}
	if bp.since.IsZero() {
		return
	}
	idle := now.Sub(bp.since)
	bp.since = time.Time{}
	max := time.Duration(l.srv.cfg.busyPollUsecs.Load()) * time.Microsecond
	switch {
	case idle > max:
		bp.win /= 2
		if bp.win < busyPollGrowStart {
			bp.win = 0
		}
	case idle > bp.win:
		bp.win *= 2
		if bp.win < busyPollGrowStart {
			bp.win = busyPollGrowStart
		}
		if bp.win > max {
			bp.win = max
		}
	}
}

// busyPoll ends a round: it waits up to the window for the loop's next
// event (see the top of this file).
func (l *Loop) busyPoll() {
	bp := &l.bp
	tls := bp.tls
	bp.tls = false
	if !tls && !l.srv.cfg.busyPollPlaintext.Load() {
		return // a plaintext round: no clock read either
	}
	now := time.Now()
	bp.since = now
	max := time.Duration(l.srv.cfg.busyPollUsecs.Load()) * time.Microsecond
	if bp.win > max {
		bp.win = max
	}
	if bp.win <= 0 {
		return
	}
	if !bp.probed {
		// The socket is this round's client's; if it closed in the
		// round, look again at the next (three looks at most).
		bp.epfd = epollWatching(bp.fd)
		bp.looks++
		bp.probed = bp.epfd >= 0 || bp.looks == 3
	}
	if bp.epfd < 0 {
		return
	}
	posted := bp.posted.Load()
	for {
		if epollReady(bp.epfd) {
			bp.hits.Add(1)
			return
		}
		if bp.posted.Load() != posted {
			return
		}
		if time.Since(now) >= bp.win {
			bp.misses.Add(1)
			return
		}
	}
}
