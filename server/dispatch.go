package server

// Batches, hops and cross-shard commands.
//
// Every connection lives on one event loop (its home loop); loop i owns
// shard i and is the only goroutine that touches it. When a read arrives, the
// home loop parses every complete command in it — the batch — and walks it in
// order:
//
//   - A command whose keys all route to the home shard, or that has no keys,
//     runs inline; its reply is appended to the client's reply buffer.
//   - A command whose keys all route to one other shard starts a hop: the home
//     loop gathers the run of consecutive commands that route to that same
//     shard and sends them to its loop as one task (EventLoop.Execute: a
//     lock-free queue plus an eventfd wake-up). That loop runs them and sends
//     their replies back the same way. While a hop is out, the connection's
//     parsing pauses (input that arrives is queued in its query buffer) and
//     the home loop serves other connections.
//   - A command whose keys route to several shards (MSET, DEL k1 k2, RENAME,
//     ...) or that needs every shard (DBSIZE, KEYS, FLUSHALL, INFO, CLIENT
//     LIST, ...) runs as a cross-shard transaction together with the run of
//     such commands that follows it. The transaction takes its shards in
//     ascending order by a chain of tasks: the task on the lowest shard's loop
//     forwards the chain to the next shard and parks its loop (blocks on the
//     loop's park channel); the last shard's loop runs the commands, touching
//     every taken shard — their owners are parked, and the chain of Execute
//     hand-offs orders their earlier writes before its reads — then releases
//     the parked loops and sends the replies home. Because every transaction
//     takes shards in the same order and a parked loop waits only for an
//     executor that never waits, no cycle of waiting can form. Single-shard
//     commands never pay for this.
//
// Replies are therefore assembled in command order (contract 1: order and
// read-your-writes), and the whole batch's replies are written once, when
// the last command of the batch has answered.
//
// Invariants:
//   - at most one hop or transaction per connection is in flight (cl.hopOut);
//   - while it is, cl.hop and the argv it holds belong to the remote side, and
//     the bytes of cl.qbuf that argv points into are never moved or reused;
//   - a shard is touched only by its own loop, or by the executor of a
//     transaction that has taken it.

import (
	"bytes"
	"context"
	"fmt"
	"math/bits"
	"slices"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/failpoint"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// maxRun bounds how many commands one hop or transaction carries, so that a
// deep pipeline cannot hold another loop (or a parked one) for long.
const maxRun = 512

// hop is a client's in-flight hop or transaction. Each client owns one and
// reuses it, so hops allocate nothing in the steady state.
type hop struct {
	cl     *Client
	target int    // hop: the shard; transaction: the executor (highest shard)
	mask   uint64 // transaction: the shards taken; 0 for a hop
	cmds   []*Cmd
	argv   [][][]byte
	trk    []bool // per command: remember its keys (tracking.go)
	out    []byte
	db     int
	proto  int
	noTch  bool
	tx     bool
	buf    []byte // copies of inline commands' arguments
	parked []int  // transaction: loops parked so far, released by the executor
	need   uint64 // log position the replies wait for (persist.go)
	// blocked is the waiter of the run's last command when it blocked
	// (blocking.go); the run's other commands came before it. stamp is
	// that command's place in line if it blocks, and retry the waiter it
	// runs again (blocking.go).
	blocked *waiter
	stamp   int64
	retry   *waiter
	// restart is the command at which a script stopped to run again over
	// every shard (script.go): the run is sent again from there; -1: none.
	restart int

	// CLIENT REPLY OFF/SKIP: drop every reply of the run, or the first one.
	dropAll, dropFirst bool

	// room is how many reply bytes the run may make before its client
	// passes its output buffer hard limit (0: no limit); cut says the run
	// stopped there: the client is closed without its replies (obuf.go).
	room int
	cut  bool
}

// onData is called by the home loop with the bytes just read.
func (cl *Client) onData(data []byte) {
	if cl.loop.ps.in.nonEmpty.Load() {
		// Messages queued for this loop before this input arrived go out
		// before its replies (an invalidation before the reply of a read
		// sent after the writer was answered, tracking.go).
		cl.loop.drainInbox(nil, false)
	}
	if cl.hopOut || cl.held || cl.blocked != nil || len(cl.qbuf) > 0 {
		if cl.closing {
			return // input after the client is to be closed is dropped
		}
		owned := within(cl.qbuf, cl.ownBuf)
		cl.qbuf = append(cl.qbuf, data...)
		cl.notePeak(len(cl.qbuf))
		if owned {
			// The input outgrew our buffer: the grown one is ours now (the
			// cron trims a big one once it is idle, querybuf.go).
			cl.ownBuf = cl.qbuf
		}
		if int64(len(cl.qbuf)) > cl.srv.cfg.ClientQueryBufferLimit() {
			first := cl.qbuf // from the element being received, as Redis's query buffer holds it
			if c, _ := cl.parser.Progress(); c <= len(first) {
				first = first[c:]
			}
			first = first[:min(len(first), 64)]
			cl.srv.log.Warningf("Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)", cl.infoLine(), resp.AppendRepr(nil, first))
			cl.closeNow()
			cl.flush() // closes it (once a hop in flight is back)
			return
		}
		if cl.hopOut || cl.held || cl.blocked != nil {
			return
		}
		cl.process(true)
		return
	}
	if len(cl.busyIn) > 0 {
		// The start of a command the busy watchdog read (busy.go).
		cl.qbuf = append(cl.busyIn, data...)
		cl.busyIn = nil
		cl.busyParser.Reset()
		cl.ownBuf = cl.qbuf
		cl.process(true)
		return
	}
	cl.qbuf = data // borrowed from gnet for the duration of this call
	cl.notePeak(len(data))
	cl.process(false)
}

// process runs the commands at the start of cl.qbuf until the input runs out
// or a hop leaves. own says whether cl.qbuf is the client's own memory (else
// it is gnet's read buffer, valid only during OnTraffic).
func (cl *Client) process(own bool) {
	loop := cl.loop
	pos := 0
	data := cl.qbuf
	room := cl.replyRoom() // output buffer hard limit (obuf.go)
	warm := 0              // input up to here has been prefetched (prefetch.go)
	for !cl.closing {
		if cl.rm != nil && cl.rm.step(len(data)-pos) {
			pos = len(data) // the master's link ended: its unapplied input is dropped (replica.go)
			break
		}
		if room > 0 && len(cl.out) >= room && cl.overLimit(true) {
			break // closed for its output buffer limit: the rest is not run
		}
		if pos >= warm {
			warm = pos + max(cl.prefetch(data[pos:]), 1)
		}
		argv, n, err := cl.parser.Next(data[pos:], cl.argv[:0])
		if err != nil {
			cl.protocolError(err)
			break
		}
		if n == 0 {
			break
		}
		cl.argv = argv[:0]
		if len(argv) == 0 {
			pos += n
			continue
		}
		if cl.rm != nil && shard.EqualFold(argv[0], "replconf") {
			cl.rm.replconf(argv) // REPLCONF GETACK from the master (replica.go)
			pos += n
			continue
		}
		if cl.srv.repl.isReplica.Load() && len(argv) == 4 && cl.failoverWaitsForLink(argv) { // failover.go
			cl.parser.Reset()
			cl.waitForLink(argv)
			break
		}
		if cl.srv.pause.typ.Load() != pauseOff && cl.paused(argv) { // CLIENT PAUSE (pause.go)
			cl.parser.Reset()
			cl.postpone(argv)
			break
		}
		cmd, target, mask, rejected := cl.route(argv)
		if rejected {
			pos += n
			continue
		}
		trk, decided := false, false
		if mask == 0 && (target < 0 || target == loop.id) {
			trk, decided = cl.trk.on && cl.trackFor(cmd), true // tracking.go
			loop.runLocal(cl, cmd, argv, target >= 0, trk)
			if !cl.escalated {
				pos += n
				if cl.blocked != nil {
					break // a blocking command waits: the rest of the input queues
				}
				continue
			}
			// A script reached beyond the home shard: it runs again over
			// every shard (script.go).
			cl.escalated = false
			target, mask = -1, 1<<uint(len(cl.srv.shards))-1
		}
		// A hop or transaction. Its argv must outlive this call: if the input
		// is gnet's buffer, move the rest of it into our own and go again.
		if !own {
			cl.qbuf = append(cl.ownBuf[:0], data[pos:]...)
			cl.ownBuf = cl.qbuf
			cl.parser.Reset()
			cl.process(true)
			return
		}
		if !decided {
			trk = cl.trk.on && cl.trackFor(cmd) // tracking.go
		}
		pos = cl.startRemote(cmd, argv, n, target, mask, data, pos, trk)
		break
	}
	rest := data[pos:]
	switch {
	case cl.hopOut:
		// Keep the bytes in place: the hop's argv points into them.
		cl.qbuf = rest
		return
	case !own:
		if len(rest) > 0 {
			cl.keepInput(rest)
		} else {
			cl.qbuf = nil
		}
	default:
		if len(rest) == 0 {
			cl.qbuf = nil
			cl.resetOwnBuf()
		} else if pos > 0 || cap(cl.ownBuf) < len(rest)+cl.bigPending() {
			// compact into the start of our buffer (querybuf.go)
			cl.keepInput(rest)
		}
	}
	cl.flush()
}

// startRemote gathers the run of commands that starts with argv (n bytes at
// data[pos:]) and sends it away; it returns the position after the run.
func (cl *Client) startRemote(cmd *Cmd, argv [][]byte, n, target int, mask uint64, data []byte, pos int, trk bool) int {
	h := &cl.hop
	h.cmds = h.cmds[:0]
	h.argv = h.argv[:0]
	h.out = h.out[:0]
	h.db, h.proto, h.noTch = cl.db, cl.proto, cl.noTouch
	cl.replyModeForHop(h)
	h.tx = mask != 0
	h.mask = mask
	h.need = 0
	h.blocked, h.retry = nil, nil
	h.restart = -1
	h.target = target
	h.buf = h.buf[:0]
	h.trk = h.trk[:0]
	h.add(cmd, argv, data[pos] != '*', trk)
	pos += n
	// A blocking command ends its run: what follows it must wait for it.
	for len(h.cmds) < maxRun && h.cmds[len(h.cmds)-1].flags&flagBlocking == 0 {
		argv2, n2, err := cl.parser.Next(data[pos:], cl.argv[:0])
		if err != nil || n2 == 0 || len(argv2) == 0 {
			break
		}
		cmd2, target2, mask2, ok := cl.peekRoute(argv2)
		if !ok {
			break
		}
		if h.tx {
			if mask2 == 0 {
				break
			}
			h.mask |= mask2
		} else if mask2 != 0 || target2 != target {
			break
		}
		h.add(cmd2, argv2, data[pos] != '*', cl.trk.on && cl.trackFor(cmd2))
		pos += n2
	}
	if h.cmds[len(h.cmds)-1].flags&flagBlocking != 0 {
		h.stamp = nanotime() // its place in line (blocking.go)
	}
	cl.parser.Reset()
	// The run's bytes are consumed (CLIENT LIST's qbuf counts them once, also
	// when a transaction runs right here in launch); process keeps the rest.
	cl.qbuf = data[pos:]
	cl.launch()
	return pos
}

// launch sends the run in cl.hop (its target, or its transaction's mask,
// set) to the loop that runs it.
func (cl *Client) launch() {
	h := &cl.hop
	cl.hopOut = true
	// The reply bytes the run may make before the client passes its
	// output buffer hard limit (obuf.go).
	h.cut = false
	if h.room = cl.replyRoom(); h.room > 0 {
		h.room = max(h.room-len(cl.out), 1)
	}
	// Log what this event ran so far before the run leaves: the remote side
	// submits its records as soon as it has run (and a transaction taken in
	// place below parks this loop until then), so this loop's pending
	// records must get the lower sequence: log order is execution order.
	cl.loop.submit()
	loops := cl.srv.loops
	if !h.tx {
		_ = loops[h.target].post(cl.hopRunnable)
	} else {
		h.target = 63 - bits.LeadingZeros64(h.mask)
		h.parked = h.parked[:0]
		first := bits.TrailingZeros64(h.mask)
		if first == cl.loop.id {
			// We are the lowest shard: take it right here (park) instead of
			// queueing a task to ourselves. The run's bytes are consumed
			// already (startRemote set cl.qbuf past them, for CLIENT LIST).
			_ = cl.runTx(context.Background())
		} else {
			_ = loops[first].post(cl.txRunnable)
		}
	}
}

// add appends a command to the run. Multibulk argv points into the client's
// query buffer, which stays put while the hop is out; inline argv points into
// the parser's scratch space, which the next parse reuses, so it is copied.
func (h *hop) add(cmd *Cmd, argv [][]byte, inline, trk bool) {
	h.cmds = append(h.cmds, cmd)
	h.trk = append(h.trk, trk)
	if inline {
		for i, a := range argv {
			start := len(h.buf)
			h.buf = append(h.buf, a...)
			argv[i] = h.buf[start:len(h.buf):len(h.buf)]
		}
	}
	// argv itself is the client's scratch slice: keep a copy of the headers.
	var a [][]byte
	if len(h.argv) < cap(h.argv) {
		a = h.argv[:len(h.argv)+1][len(h.argv)][:0]
	}
	a = append(a, argv...)
	h.argv = append(h.argv, a)
}

// runHop runs on the target loop.
func (cl *Client) runHop(context.Context) error {
	h := &cl.hop
	loop := cl.srv.loops[h.target]
	defer func() {
		if r := recover(); r != nil {
			cl.srv.crashFromPanic(r, loop) // crash.go
		}
	}()
	loop.runRemote(cl, h)
	_ = cl.loop.post(cl.doneRunnable)
	return nil
}

// runTx runs on each taken loop in ascending order; the last one executes.
func (cl *Client) runTx(context.Context) error {
	h := &cl.hop
	srv := cl.srv
	// which loop are we on? the lowest shard of mask not yet parked
	var me int
	if len(h.parked) == 0 {
		me = bits.TrailingZeros64(h.mask)
	} else {
		last := h.parked[len(h.parked)-1]
		rest := h.mask &^ (1<<(uint(last)+1) - 1)
		me = bits.TrailingZeros64(rest)
	}
	defer func() {
		if r := recover(); r != nil {
			srv.crashFromPanic(r, srv.loops[me]) // crash.go
		}
	}()
	srv.loops[me].evictNow() // a transaction must not see clients over maxmemory-clients (clientmem.go)
	if me != h.target {
		// What this loop logged must precede what the executor will log.
		srv.loops[me].submit()
		h.parked = append(h.parked, me)
		rest := h.mask &^ (1<<(uint(me)+1) - 1)
		next := bits.TrailingZeros64(rest)
		park := srv.loops[me].park
		parked := &srv.loops[me].parked
		if err := srv.loops[next].post(cl.txRunnable); err != nil {
			// The engine is stopping: the chain cannot go on. Let the loops
			// parked before us go; the client is being dropped anyway.
			srv.release(h.parked[:len(h.parked)-1])
			return nil
		}
		parked.Store(true) // the busy watchdog may serve our clients now (busy.go)
		select {
		case <-park: // parked until the executor is done with our shard
		case <-srv.stopCh:
			// Shutdown: the executor's loop may already have stopped and
			// will never release us. Nothing else runs on the shards now.
		}
		parked.Store(false)
		srv.loops[me].resumeAfterBusy()
		return nil
	}
	// exec-locked: every shard of the transaction is taken (the others'
	// loops are parked), nothing of it has run. sleep here stalls every
	// taken loop, as a long transaction would.
	failpoint.Inject(failpoint.ExecLocked)
	srv.loops[me].runRemote(cl, h)
	srv.release(h.parked)
	_ = cl.loop.post(cl.doneRunnable)
	return nil
}

// release lets parked loops go. The send never blocks: a parked loop waits
// for exactly one token, and its channel holds one; only a loop that left
// early because of shutdown can leave a token unread, and then dropping the
// next one is right.
func (srv *Server) release(parked []int) {
	for _, p := range parked {
		select {
		case srv.loops[p].park <- struct{}{}:
		default:
		}
	}
}

// hopDone runs on the home loop when the replies are back.
func (cl *Client) hopDone(context.Context) error {
	cl.hopOut = false
	cl.loop.tickValid = false
	cl.loop.nowValid = false
	defer cl.loop.endEvent()
	if cl.hop.need > cl.need {
		cl.need = cl.hop.need
	}
	h := &cl.hop
	if !cl.obs.obufKill { // else closed for its output limits meanwhile: dropped
		cl.out = append(cl.out, h.out...)
		cl.trackLater() // invalidations that arrived meanwhile, after the run's replies (tracking.go)
	}
	if h.restart < 0 || cl.closed {
		for i := range h.argv {
			h.argv[i] = h.argv[i][:0]
		}
	}
	if cl.closed {
		if h.blocked != nil {
			cl.startWait(h.blocked)
			cl.onCloseBlocked()
			h.blocked = nil
		}
		cl.multiClose() // WATCH state left while the hop was out (multi.go)
		return nil
	}
	if h.cut {
		cl.killForOutput(true) // the run stopped at the limit (obuf.go)
	} else {
		cl.noteOutput() // over its output buffer limit: closing, the rest is not run (obuf.go)
	}
	cl.accountMem() // the replies may wait in cl.out behind the next hop (clientmem.go)
	ran := h.cmds
	if h.restart >= 0 {
		ran = h.cmds[:h.restart]
	}
	for _, cmd := range ran {
		cl.afterRemote(cmd)
	}
	if h.restart >= 0 {
		if !h.cut && !cl.closing {
			cl.relaunch()
			return nil
		}
		h.restart = -1
		for i := range h.argv {
			h.argv[i] = h.argv[i][:0]
		}
	}
	if w := h.blocked; w != nil {
		h.blocked = nil
		cl.blockedHop(w) // goes on with the input once served
		return nil
	}
	cl.retryDeadline = 0 // a retried blocking command was served
	if len(cl.qbuf) > 0 {
		cl.process(true)
	} else {
		cl.qbuf = nil
		cl.resetOwnBuf()
		cl.flush()
	}
	return nil
}

// relaunch sends the rest of a run again, from the script that stopped to
// take every shard (script.go), as a transaction over every shard.
func (cl *Client) relaunch() {
	h := &cl.hop
	r := h.restart
	h.restart = -1
	// Rotate rather than shift, so that each argv slice keeps a backing
	// array of its own for the next runs (hop.add reuses them).
	slices.Reverse(h.argv[:r])
	slices.Reverse(h.argv[r:])
	slices.Reverse(h.argv)
	n := len(h.cmds) - r
	copy(h.cmds, h.cmds[r:])
	h.cmds = h.cmds[:n]
	copy(h.trk, h.trk[r:])
	h.trk = h.trk[:n]
	h.argv = h.argv[:n]
	h.out = h.out[:0]
	h.need = 0
	h.blocked, h.retry = nil, nil
	h.dropFirst = false
	h.tx = true
	h.mask = 1<<uint(len(cl.srv.shards)) - 1
	cl.launch()
}

// resetOwnBuf empties the client's own input buffer once all of it has run.
// A big one (a big command that came in pieces) stays until the cron finds
// it idle or oversized (resizeQueryBuffer, querybuf.go), as Redis's query
// buffer does.
func (cl *Client) resetOwnBuf() {
	cl.ownBuf = cl.ownBuf[:0]
}

// runRemote runs a hop's or transaction's commands on loop l.
func (l *Loop) runRemote(cl *Client, h *hop) {
	l.tickValid = false
	now := time.Now()
	ms := now.UnixMilli()
	x := &l.x
	x.reset(cl, h.db, h.proto, ms)
	x.Out = h.out
	x.hop = h
	x.mayWiden = true
	mask := h.mask
	if !h.tx {
		mask = 1 << uint(h.target)
	}
	x.mask = mask
	x.Held = mask // SCAN may go on into the shards it holds (shard/keys.go)
	var hook func(*shard.DB, []byte)
	if l.srv.persist != nil {
		hook = l.p.expHook
	}
	for m := mask; m != 0; m &= m - 1 {
		sh := l.srv.shards[bits.TrailingZeros64(m)]
		sh.SetNow(ms)
		sh.NoTouch = h.noTch
		sh.OnExpired = hook
		sh.OnNotify = l.ps.notifyFn // notifications leave from the running loop (pubsub.go)
	}
	persisting := l.srv.persist != nil
	var need uint64
	dependsNow := false
	for i, cmd := range h.cmds {
		if h.room > 0 && len(x.Out) >= h.room || h.cut {
			// Past the client's output buffer hard limit: it is closed
			// without these replies, and the rest of the run is not run.
			h.cut = true
			break
		}
		x.dropReply = h.dropAll || (i == 0 && h.dropFirst)
		x.trk = h.trk[i]
		l.call(x, cmd, h.argv[i])
		if x.escalate {
			x.escalate = false
			h.restart = i
			break
		}
		if x.Blocked() || h.retry != nil {
			h.blocked = l.blockRemote(cl, h, cmd, h.argv[i], x) // the run's last command
		}
		l.serveReady(mask) // blocked clients first (blocking.go)
		if persisting {
			n, now := l.track(cmd, h.argv[i], mask, x.Prop.Dirty > 0)
			if n > need {
				need = n
			}
			dependsNow = dependsNow || now
		}
	}
	h.out = x.Out
	x.Out = nil
	x.cl = nil
	x.hop = nil
	x.trk = false
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		l.srv.shards[i].NoTouch = false
		l.srv.shards[i].OnNotify = l.srv.loops[i].ps.notifyFn
	}
	if l.srv.persist != nil {
		// Submit before the replies go home (and, for a transaction, before
		// the parked loops are released), so log order is execution order.
		if seq := l.submit(); dependsNow && seq > need {
			need = seq
		}
		h.need = need
	}
}

// runLocal runs one command on the home loop.
func (l *Loop) runLocal(cl *Client, cmd *Cmd, argv [][]byte, keyed, trk bool) {
	x := &l.x
	ms := l.batchNow()
	x.reset(cl, cl.db, cl.proto, ms)
	x.trk = trk
	x.mayWiden = true
	x.mask = 1 << uint(l.id)
	x.Held = x.mask
	x.Out = cl.out
	start := len(cl.out)
	l.sh.NoTouch = cl.noTouch
	if l.srv.persist != nil {
		l.sh.OnExpired = l.p.expHook
	}
	l.call(x, cmd, argv)
	if x.escalate {
		// A script reached beyond this shard: process runs it again over
		// every shard (script.go).
		x.escalate = false
		l.sh.NoTouch = false
		cl.out = x.Out
		x.Out = nil
		x.cl = nil
		x.trk = false
		cl.escalated = true
		return
	}
	if x.Blocked() {
		w := l.block(cl, cmd, argv, x, nanotime(), nil)
		if x.waitFor != nil { // WAIT (repl_wait.go)
			l.srv.replWaitBlocked(w, x.waitFor)
			x.waitFor = nil
		}
		if x.shutWait {
			l.srv.shutdownBlocked(w)
			x.shutWait = false
		}
		cl.startWait(w)
	}
	l.serveReady(1 << uint(l.id)) // blocked clients first (blocking.go)
	l.sh.NoTouch = false
	if l.srv.persist != nil && (keyed || x.Prop.Dirty > 0) {
		need, now := l.track(cmd, argv, 1<<uint(l.id), x.Prop.Dirty > 0)
		if need > cl.need {
			cl.need = need
		}
		if now && !cl.waitingNow {
			cl.waitingNow = true
			l.p.waiters = append(l.p.waiters, cl)
		}
	}
	cl.out = x.Out
	cl.replyDone(start) // CLIENT REPLY OFF/SKIP
	x.Out = nil
	x.cl = nil
	x.trk = false
	cl.afterLocal(cmd)
}

// batchNow returns the time snapshot for commands run inline: one clock read
// per batch of input, not per command.
func (l *Loop) batchNow() int64 {
	if !l.nowValid {
		l.nowMs = time.Now().UnixMilli()
		l.nowValid = true
		l.sh.SetNow(l.nowMs)
	}
	return l.nowMs
}

// nanotime is the runtime's monotonic clock (a vDSO read, cheaper than
// time.Now, which reads two clocks).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// call runs one command with statistics and error accounting.
func (l *Loop) call(x *Exec, cmd *Cmd, argv [][]byte) {
	start := len(x.Out)
	var t0 int64
	timed := l.srv.timing
	if timed {
		// One clock read per command: the end of one command of an event
		// is the start of the next.
		if l.tickValid {
			t0 = l.tick
		} else {
			t0 = nanotime()
		}
	}
	x.Prop.Reset()
	x.BlockKeys, x.BlockArgv = nil, nil
	// With maxmemory set, every command first evicts on the shards it runs
	// on, and one that may grow memory is refused if that cannot bring
	// used_memory within maxmemory (memory.go; Redis's processCommand calls performEvictions
	// before each command). Inside EXEC the room was made once for the
	// whole transaction (multi.go).
	if l.srv.shardBudget.Load() != 0 && !x.InMulti && x.mask != 0 && !l.srv.replIgnoresMaxmemory() {
		ok, elsewhere := l.evictFirst(x, l.mayWiden(x, cmd))
		if elsewhere {
			x.escalate = true // run again over every shard, to evict there (makeRoomOr, memory.go)
			return
		}
		if !ok && cmd.flags&flagDenyOOM != 0 {
			l.stats.cmds[cmd.id].rejected++
			l.stats.countErrorString(oomError)
			x.Out = resp.AppendError(x.Out, oomError)
			if x.dropReply {
				x.Out = x.Out[:start]
				x.dropReply = false
			}
			return
		}
	}
	l.curCl, l.curArgv = x.cl, argv
	if l.srv.repl.isReplica.Load() && x.cl != nil {
		if obey := x.cl.rm != nil; obey || cmd.flags&flagWrite != 0 { // replica.go
			l.setShardFlags(x.mask, obey, !obey)
			defer l.setShardFlags(x.mask, false, false)
		}
	}
	if cmd.run != nil {
		if cmd.aclSort {
			x.SortPatternsDenied = x.cl != nil && sortPatternsDenied(x.cl, cmd, argv) // acl.go
		}
		if cmd.resetRDB && shard.FlushArgsValid(argv) {
			l.srv.stopBgsaveForFlush() // snapshot.go
			l.srv.stopSyncForFlush()   // repl_master.go
		}
		cmd.run(&x.Ctx, argv)
		x.SortPatternsDenied = false
		if cmd.resetRDB && len(x.Out) > start && x.Out[start] == '+' {
			l.srv.saveAfterFlush(int64(x.Prop.Dirty)) // snapshot.go
		}
	} else {
		outer := x.running
		x.running = cmd
		cmd.exec(x, argv)
		x.running = outer
		if x.escalate {
			// A script stopped to run again with every shard (script.go):
			// this run did not happen.
			l.curCl, l.curArgv = nil, nil
			x.Out = x.Out[:start]
			x.Prop.Reset()
			return
		}
	}
	l.curCl, l.curArgv = nil, nil
	if x.trk && x.cl != nil { // CLIENT TRACKING: remember what it read (tracking.go)
		if cmd.script == 0 && cmd.flags&flagReadonly != 0 || cmd.script != 0 && l.lua.run.trkRead {
			l.trackKeys(x, cmd, argv)
		}
	}
	if x.running == nil {
		l.trackAfter(x) // the invalidations of what it changed leave now (tracking.go)
	}
	st := &l.stats.cmds[cmd.id]
	// A command that blocked is counted when its wait ends, served or
	// not (Redis's updateStatsOnUnblock; blocking.go's finishWait).
	counted := !x.Blocked()
	if counted {
		st.calls++
	}
	var ns int64
	if timed {
		end := nanotime()
		l.tick, l.tickValid = end, true
		ns = end - t0
		if counted {
			st.nsec += ns
		}
	}
	l.observe(x, cmd, argv, ns) // slowlog, latency, monitor (obs.go)
	if len(x.Out) > start && x.Out[start] == '-' {
		st.failed++
		if !x.errCounted {
			l.stats.countError(x.Out[start+1:])
		}
		if x.cl != nil && x.cl.rm != nil {
			l.srv.errorToMaster(l, x.Out[start+1:], cmd.fullName)
		}
	}
	x.errCounted = false
	if x.Prop.Dirty > 0 {
		l.stats.dirty += int64(x.Prop.Dirty)
		l.srv.propagate(l, x, cmd, argv)
	} else if x.Prop.ReplOnly {
		l.srv.propagate(l, x, cmd, argv) // PUBLISH, to replicas only
	}
	if x.dropReply {
		x.Out = x.Out[:start]
		x.dropReply = false
	}
}

// errorToMaster is Redis's afterErrorReply for the master client of a
// replica: a command of the master's stream that fails here means the
// data sets have diverged (a writable replica's own writes, a bug). It is
// logged, counted (unexpected_error_replies), and with
// propagation-error-behavior panic or panic-on-replicas on a read-only
// replica, the server stops with a crash report. msg is the error without
// its '-' (and maybe with its CRLF).
func (srv *Server) errorToMaster(l *Loop, msg []byte, cmdName string) {
	msg = bytes.TrimRight(msg, "\r\n")
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	srv.log.Warningf("== CRITICAL == This replica is sending an error to its master: '%s' after processing the command '%s'", msg, cmdName)
	srv.stats.unexpectedErrors.Add(1)
	if b, _ := srv.cfg.GetValue("propagation-error-behavior"); (b == "panic" || b == "panic-on-replicas") && srv.cfg.boolOr("replica-read-only", true) {
		// Redis's serverPanic: the crash report, as DEBUG PANIC's (a
		// panic, so that the report names this line).
		defer func() { srv.crashFromPanic(recover(), l) }()
		panic(fmt.Sprintf("This replica panicked sending an error to its master after processing the command '%s'", cmdName))
	}
}

// reject answers an error for a command that did not run (unknown, arity,
// auth, ...), counting it as Redis does (rejected_calls, errorstats).
func (cl *Client) reject(cmd *Cmd, msg string) {
	msg = cl.multiReject(cmd, msg) // flags a transaction being queued (multi.go)
	if cl.rep != nil && cmd != nil {
		// An error to a replica is a bug somewhere: Redis logs it so.
		cl.srv.log.Warningf("== CRITICAL == This master is sending an error to its replica: '%s' after processing the command '%s'", msg, cmd.fullName)
	} else if cl.rm != nil {
		name := "<unknown>"
		if cmd != nil {
			name = cmd.fullName
		}
		cl.srv.errorToMaster(cl.loop, []byte(msg), name)
	}
	start := len(cl.out)
	cl.out = resp.AppendError(cl.out, msg)
	cl.replyDone(start) // CLIENT REPLY OFF/SKIP
	if cmd != nil {
		cl.loop.stats.cmds[cmd.id].rejected++
	}
	cl.loop.stats.countErrorString(msg)
}

// txRunnable etc. are bound once per client so that sending a hop allocates
// no closure of ours.
func (cl *Client) bindRunnables() {
	cl.hopRunnable = gnet.RunnableFunc(cl.runHop)
	cl.txRunnable = gnet.RunnableFunc(cl.runTx)
	cl.doneRunnable = gnet.RunnableFunc(cl.hopDone)
	cl.hop.cl = cl
}
