package server

// WAIT numreplicas timeout: block until numreplicas replicas have
// acknowledged every write the client made before it, or until timeout ms
// (0: for ever), and answer how many did.
//
// What "every write before it" means here: the highest log sequence the
// client's replies waited for (Client.need, once its loop has submitted:
// its own writes and whatever it read), mapped to the stream offset just
// past the group that carried it. The tap records (last sequence, offset)
// per group in a ring (tapped); a WAIT whose sequence is not in the
// stream yet gets its offset when the tap hands that group over. An older
// sequence than the ring holds maps to the ring's oldest offset, which is
// past it: never too low, at worst a moment longer to wait.
//
// A blocked WAIT is a keyless waiter of blocking.go (the client's input
// queues, CLIENT UNBLOCK works, blocked_clients counts it): served by a CAS
// from whichever goroutine sees the count reached (an ACK on a replica's
// loop, the tap), delivered on its home loop; a timeout or CLIENT UNBLOCK
// answers the count at that moment. Blocking sends REPLCONF GETACK * down
// the stream, so that replicas answer at once rather than at their next
// one-second ACK.

import (
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// tapMark is one group handed to the stream.
type tapMark struct {
	seq uint64
	off int64
}

const tapRing = 1024

// replWait is a blocked WAIT.
type replWait struct {
	w   *waiter
	seq uint64
	off int64 // -1 until its sequence is in the stream
	n   int64
}

// tapped records a group in the ring and gives pending WAITs their
// offsets; repl.mu is held.
func (m *replMaster) tapped(seq uint64, off int64) {
	if len(m.ring) < tapRing {
		m.ring = append(m.ring, tapMark{seq, off})
	} else {
		m.ring[m.ringAt] = tapMark{seq, off}
		m.ringAt = (m.ringAt + 1) % tapRing
	}
	m.lastTapped = seq
	for _, rw := range m.waits {
		if rw.off < 0 && rw.seq <= seq {
			rw.off = m.offsetOf(rw.seq)
		}
	}
}

// offsetOf is the stream offset past the group of seq, which is in the
// stream; repl.mu is held.
func (m *replMaster) offsetOf(seq uint64) int64 {
	if seq == 0 || len(m.ring) == 0 {
		return 0
	}
	n := len(m.ring)
	best := int64(-1)
	for i := 0; i < n; i++ {
		t := m.ring[(m.ringAt+n-1-i)%n] // newest first
		if t.seq < seq {
			break
		}
		best = t.off
	}
	if best < 0 {
		// Newer than every group? Then it is not in the stream (callers
		// check lastTapped); older than the ring: its oldest offset.
		best = m.ring[m.ringAt%n].off
	}
	return best
}

// ackedAt counts the online replicas that acknowledged offset off;
// repl.mu is held.
func (m *replMaster) ackedAt(off int64) int64 {
	var n int64
	for _, r := range m.replicas {
		if r.state.Load() == repOnline && !r.rdbOnly && r.ack.Load() >= off {
			n++
		}
	}
	return n
}

func cmdWait(x *Exec, argv [][]byte) {
	srv := x.srv
	if srv.repl.isReplica.Load() {
		x.Err("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	n, ok := shard.ParseInt(argv[1])
	if !ok {
		x.Err(shard.ErrNotInt)
		return
	}
	ms, ok := timeoutMs(x, argv[2])
	if !ok {
		return
	}
	cl := x.cl
	x.loop.submit() // the client's writes so far get their sequence
	rp := &srv.repl
	rp.mu.Lock()
	off := int64(0)
	known := true
	if cl.need > 0 {
		if cl.need <= rp.m.lastTapped {
			off = rp.m.offsetOf(cl.need)
		} else {
			known = false
		}
	}
	acked := int64(0)
	if known {
		acked = rp.m.ackedAt(off)
	}
	if known && acked >= n || x.InMulti {
		rp.mu.Unlock()
		x.Int(acked)
		return
	}
	rp.mu.Unlock()
	deadline := int64(0)
	if ms > 0 {
		deadline = x.NowMs + ms
	}
	// A keyless block: dispatch registers the waiter (blocking.go), and
	// replWaitBlocked (its hook) puts it in the WAIT list.
	x.Block(deadline, [][]byte{})
	x.waitFor = &replWait{seq: cl.need, off: -1, n: n}
	if known {
		x.waitFor.off = off
	}
}

// replWaitBlocked is the registration of a WAIT's waiter (blocking.go).
func (srv *Server) replWaitBlocked(w *waiter, rw *replWait) {
	rw.w = w
	w.cancelReply = func(out []byte) []byte { return resp.AppendInt(out, srv.replWaitCount(rw)) }
	rp := &srv.repl
	rp.mu.Lock()
	rp.m.waits = append(rp.m.waits, rw)
	rp.m.nwaits.Store(int32(len(rp.m.waits)))
	rp.mu.Unlock()
	w.onEnd = func() { srv.replWaitEnded(rw) }
	rp.appendRaw(getackCmd)
	srv.replAcked()
}

var getackCmd = []byte("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")

// replWaitCount is what a WAIT that ends now answers.
func (srv *Server) replWaitCount(rw *replWait) int64 {
	rp := &srv.repl
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rw.off < 0 {
		return 0
	}
	return rp.m.ackedAt(rw.off)
}

// replWaitEnded takes a WAIT out of the list (its wait ended).
func (srv *Server) replWaitEnded(rw *replWait) {
	rp := &srv.repl
	rp.mu.Lock()
	for i, o := range rp.m.waits {
		if o == rw {
			copy(rp.m.waits[i:], rp.m.waits[i+1:])
			rp.m.waits[len(rp.m.waits)-1] = nil
			rp.m.waits = rp.m.waits[:len(rp.m.waits)-1]
			break
		}
	}
	rp.m.nwaits.Store(int32(len(rp.m.waits)))
	rp.mu.Unlock()
}

// replAcked serves the WAITs whose count is reached; called when an ACK
// arrives, a group reaches the stream or a replica goes.
func (srv *Server) replAcked() {
	rp := &srv.repl
	if rp.m.nwaits.Load() == 0 {
		return
	}
	var ready []*replWait
	rp.mu.Lock()
	for _, rw := range rp.m.waits {
		if rw.off >= 0 && rp.m.ackedAt(rw.off) >= rw.n {
			ready = append(ready, rw)
		}
	}
	counts := make([]int64, len(ready))
	for i, rw := range ready {
		counts[i] = rp.m.ackedAt(rw.off)
	}
	rp.mu.Unlock()
	for i, rw := range ready {
		w := rw.w
		if !w.state.CompareAndSwap(wWaiting, wClaimed) {
			continue
		}
		w.out = resp.AppendInt(w.out[:0], counts[i])
		w.state.Store(wDone)
		_ = w.cl.loop.post(w.deliverRun)
	}
}
