package server

// Long scripts: -BUSY, SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE while
// a script runs past busy-reply-threshold (Redis's processEventsWhileBlocked).
//
// A running script holds its shards: the loop that runs it is inside the
// interpreter, and the other loops of its shards are parked. No client of
// those loops can be served by its loop until the script returns.
//
//   - A client of a free loop whose command needs a shard a busy script
//     holds gets -BUSY at once (route, commands.go): busy.mask has the
//     shards of the scripts past the threshold. A command whose keys are
//     all on other shards is served as usual: Redis answers -BUSY to
//     everything, redshard does better; but not inside MULTI, where every
//     command is refused as in Redis (route), so that a transaction never
//     runs in part. A command without keys (PING,
//     INFO, CONFIG...) answers -BUSY as in Redis, unless Redis allows it
//     while busy (allow_busy: SCRIPT KILL, FUNCTION KILL, SHUTDOWN, AUTH,
//     ...): Sentinel and health checks learn from PING's -BUSY that a
//     script is stuck, and Sentinel answers it with SCRIPT KILL.
//   - The clients of the stuck loops (the one running the script and the
//     parked ones) are served by the watchdog goroutine below. It reads
//     what they sent straight from their sockets and answers each complete
//     command in Redis's order: unknown command, arity, NOAUTH and -NOPERM
//     first (checkAccess), then SCRIPT KILL, FUNCTION KILL, FUNCTION STATS,
//     SHUTDOWN NOSAVE, AUTH, HELLO, QUIT and UNWATCH as those commands do
//     (Redis's allow_busy ones; WATCH and RESET are refused), -BUSY to
//     anything else. Connections made meanwhile are served the same way
//     (hold.go). It serves only a
//     client with nothing in flight (no input queued, no replies unsent, no
//     hop out), so replies keep their order; a partial command it read is
//     handed to the loop with the client (Client.busyIn). MULTI and DISCARD
//     are answered as those commands do, as Redis allows them while busy;
//     a command refused inside MULTI makes EXEC answer EXECABORT, and an
//     EXEC refused ends the transaction, as in Redis.
//
// DEBUG LOADAOF keeps every loop stuck too (one replays the log, the others
// are parked): the watchdog serves their clients the same way, with
// -LOADING to every command, as Redis's processEventsWhileBlocked does
// during a load (persist.go reloadData).
//
// Ownership. The watchdog touches a loop's clients only while the loop is
// stuck, and only under the loop's busyMu. A loop that resumes (the script
// returned, or the parked loop was released) takes busyMu once before it
// goes on, so it waits for a watchdog pass in progress, and the watchdog
// checks, under busyMu, that the loop is still stuck. The atomic stores
// that mark a loop stuck (lua.running, parked) come after its last change
// to its clients, so the watchdog sees those changes.

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

const (
	busyEvalErr = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	busyFuncErr = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)

type busyState struct {
	mask atomic.Uint64 // shards held by scripts past busy-reply-threshold
	fn   atomic.Bool   // one of them is a function (which BUSY text)
}

// busyWriteWait bounds how long the watchdog waits for a client to take
// its replies.
const busyWriteWait = 50 * time.Millisecond

// busyWatchEvery is how often the watchdog looks for busy scripts.
const busyWatchEvery = 20 * time.Millisecond

// busyWatch runs until the server stops.
func (srv *Server) busyWatch() {
	t := time.NewTicker(busyWatchEvery)
	defer t.Stop()
	buf := make([]byte, 16<<10)
	for {
		select {
		case <-srv.stopCh:
			srv.releaseIntake()
			return
		case <-t.C:
		}
		srv.busyCheck(buf)
	}
}

// busyCheck updates busy.mask and serves the clients of the stuck loops.
func (srv *Server) busyCheck(buf []byte) {
	thr := srv.cfg.BusyReplyThreshold()
	now := time.Now().UnixMilli()
	var mask uint64
	fn := false
	for _, l := range srv.loops {
		ls := &l.lua
		if ls.running.Load() && thr > 0 && now-ls.started.Load() >= thr {
			mask |= ls.holds.Load() | 1<<uint(l.id)
			fn = fn || ls.isFn.Load()
			if id := ls.runID.Load(); ls.slowLogged != id {
				ls.slowLogged = id
				name := ""
				if n := ls.name.Load(); n != nil {
					name = *n
				}
				srv.log.Warningf("Slow script detected: still in execution after %d milliseconds. You can try killing the script using the SCRIPT KILL command. Script name is: %s.", now-ls.started.Load(), name)
			}
		}
	}
	srv.busy.fn.Store(fn)
	srv.busy.mask.Store(mask)
	loadHeld := srv.load.active.Load() && srv.loadHeld()
	// New connections go to loops that are not stuck, or are held and
	// served until one is free (hold.go).
	if mask != 0 || loadHeld {
		srv.takeIntake()
	} else if srv.intake.on.Load() {
		srv.releaseIntake()
	}
	if loadHeld {
		// DEBUG LOADAOF replays the log on one loop with every other
		// parked (persist.go reloadData): -LOADING to all their clients.
		for _, l := range srv.loops {
			if l.loadHold.Load() || l.parked.Load() {
				srv.serveStuck(l, buf, loadingError)
			}
		}
		return
	}
	if mask == 0 {
		return
	}
	for _, l := range srv.loops {
		if mask&(1<<uint(l.id)) != 0 && (l.lua.running.Load() || l.parked.Load()) {
			srv.serveStuck(l, buf, "")
		}
	}
}

// loadHeld reports whether a loop replays the log for DEBUG LOADAOF.
func (srv *Server) loadHeld() bool {
	for _, l := range srv.loops {
		if l.loadHold.Load() {
			return true
		}
	}
	return false
}

// busyError is the -BUSY text for the scripts running now.
func (srv *Server) busyError() string {
	if srv.busy.fn.Load() {
		return busyFuncErr
	}
	return busyEvalErr
}

// busyRefused answers -BUSY for a command that needs a shard a busy
// script holds (see the top of the file).
func (cl *Client) busyRefused(cmd *Cmd, target int, mask uint64) bool {
	bm := cl.srv.busy.mask.Load()
	if bm == 0 || cmd.flags&flagAllowBusy != 0 {
		return false
	}
	need := mask
	if mask == 0 && target >= 0 {
		need = 1 << uint(target)
	}
	if need != 0 && need&bm == 0 {
		return false // its keys are on shards no busy script holds: served
	}
	cl.reject(cmd, cl.srv.busyError())
	return true
}

// resumeAfterBusy is called by a loop that was stuck (its script returned,
// or it was released from park): it waits for a watchdog pass in progress.
func (l *Loop) resumeAfterBusy() {
	l.busyMu.Lock()
	l.busyMu.Unlock() //nolint:staticcheck // an empty critical section: a barrier
}

// serveStuck serves the clients of a stuck loop (see the top of the file).
// With loading set (a DEBUG LOADAOF), every command is answered with it.
func (srv *Server) serveStuck(l *Loop, buf []byte, loading string) {
	l.busyMu.Lock()
	defer l.busyMu.Unlock()
	if !l.lua.running.Load() && !l.parked.Load() && !l.loadHold.Load() {
		return // resumed meanwhile
	}
	caller, loader := l.lua.caller.Load(), srv.load.caller.Load()
	for _, cl := range l.clients {
		if cl == caller || cl == loader || cl.c == nil || cl.closed || cl.closing || cl.hopOut || cl.held ||
			cl.pending || cl.internal || cl.c.OutboundBuffered() > 0 {
			continue
		}
		if len(cl.out) > 0 {
			// Replies the loop made in the round it got stuck in, before
			// its flush at the round's end: written now, as Redis's
			// processEventsWhileBlocked writes pending replies, so that
			// the client is answered and can be served below.
			if cl.rep != nil || cl.obs.monitor || !srv.busyFlush(cl) {
				continue
			}
		}
		if cl.blocked != nil || len(cl.qbuf) > 0 {
			continue
		}
		fd := cl.c.Fd()
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			continue
		}
		srv.stats.netInput.Add(int64(n))
		in := buf[:n]
		if cl.tls != nil {
			// The loop is stuck in another client's command: nothing
			// else touches this session meanwhile (tls.go).
			in = cl.tls.read(in)
			if cl.tls.err != nil && len(in) == 0 {
				_ = unix.Shutdown(fd, unix.SHUT_RDWR)
				continue
			}
		}
		cl.busyIn = append(cl.busyIn, in...)
		if int64(len(cl.busyIn)) > srv.cfg.ClientQueryBufferLimit() {
			// The start of a command bigger than the query buffer limit.
			cl.busyIn = nil
			_ = unix.Shutdown(fd, unix.SHUT_RDWR)
			continue
		}
		if rest := srv.busySend(cl, srv.busyServe(l, cl, loading)); len(rest) > 0 || cl.closing {
			_ = unix.Shutdown(fd, unix.SHUT_RDWR) // QUIT, or a client that does not read
		}
	}
}

// busySend seals out for a TLS client and writes it (busyWrite), counted
// in the output statistics; it returns what it could not write.
func (srv *Server) busySend(cl *Client, out []byte) []byte {
	if cl.tls != nil {
		out = cl.tls.seal(out)
	}
	rest := srv.busyWrite(cl.c.Fd(), out)
	srv.stats.netOutput.Add(int64(len(out) - len(rest)))
	return rest
}

// busyFlush writes cl.out for serveStuck; false if some of it is left.
func (srv *Server) busyFlush(cl *Client) bool {
	rest := srv.busySend(cl, cl.out)
	switch {
	case len(rest) == 0:
		cl.out = cl.out[:0]
		return true
	case cl.tls != nil:
		// The record is sealed (its sequence number used): what did not
		// go out cannot be sent again, and the session cannot go on.
		_ = unix.Shutdown(cl.c.Fd(), unix.SHUT_RDWR)
		cl.out = cl.out[:0]
	default:
		cl.out = cl.out[:copy(cl.out, rest)] // the loop sends the rest when it resumes
	}
	return false
}

// busyWrite writes out to fd for at most busyWriteWait while the socket is
// full, and returns what it could not write. A client that does not read
// must not hold the loop when the script ends (resumeAfterBusy waits for
// the watchdog's pass).
func (srv *Server) busyWrite(fd int, out []byte) []byte {
	give := time.Now().Add(busyWriteWait)
	for len(out) > 0 {
		w, err := unix.Write(fd, out)
		if err == unix.EAGAIN && time.Now().Before(give) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil || w <= 0 {
			return out
		}
		out = out[w:]
	}
	return nil
}

// busyServe answers the complete commands in cl.busyIn and keeps the rest.
func (srv *Server) busyServe(l *Loop, cl *Client, loading string) []byte {
	var out []byte
	var argvBuf [8][]byte
	pos := 0
	cl.busyParser.Limits = cl.parser.Limits
	for pos < len(cl.busyIn) && !cl.closing {
		cl.busyParser.Unauthenticated = !cl.authenticated // Redis's limits before AUTH
		argv, n, err := cl.busyParser.Next(cl.busyIn[pos:], argvBuf[:0])
		if err != nil {
			// As the loop's protocolError: the error, then the close.
			out = resp.AppendError(out, "ERR "+err.Error())
			srv.log.Verbosef("Protocol error (%s) from client: %s", err.Error(), cl.infoLine())
			cl.closing = true
			pos = len(cl.busyIn)
			break
		}
		if n == 0 {
			break
		}
		pos += n
		if len(argv) == 0 {
			continue
		}
		if loading != "" {
			out = resp.AppendError(out, loading)
			continue
		}
		out = srv.busyCommand(l, cl, argv, out)
	}
	cl.busyIn = append(cl.busyIn[:0], cl.busyIn[pos:]...)
	return out
}

// busyCommand answers one command of a client of a stuck loop.
func (srv *Server) busyCommand(l *Loop, cl *Client, argv [][]byte, out []byte) []byte {
	cmd := srv.lookup(argv)
	if cmd != nil {
		cl.lastCmd = cmd.fullName // CLIENT LIST's cmd, as Redis sets it before its checks
	}
	if msg := cl.checkAccess(cmd, argv); msg != "" {
		// What Redis's processCommand answers before its busy check:
		// unknown command, arity, NOAUTH, -NOPERM (logged). Inside MULTI
		// the transaction is flagged, as rejectCommand does.
		if cmd != nil {
			cl.aclLogDenied(cmd, argv)
		}
		if cl.multi.active {
			cl.multi.aborted = true
		}
		return resp.AppendError(out, msg)
	}
	x := &Exec{srv: srv, loop: l, cl: cl}
	x.Proto = cl.proto
	x.NowMs = time.Now().UnixMilli()
	x.Out = out
	switch cmd.fullName {
	case "auth":
		cmdAuth(x, argv)
		return x.Out
	case "hello":
		cmdHello(x, argv)
		return x.Out
	case "unwatch":
		if !cl.multi.active { // inside MULTI Redis queues it: refused below, as a command while busy
			cl.unwatchAll(0) // the keys' registrations go by tasks on their loops (multi.go)
			return append(out, "+OK\r\n"...)
		}
	case "quit":
		// +OK, then the socket is shut: the loop closes the client when
		// it resumes (serveStuck), or the held connection's goroutine
		// does (hold.go).
		cl.closing = true
		return append(out, "+OK\r\n"...)
	case "script|kill", "function|kill":
		if msg := srv.killScript(cmd.fullName == "function|kill"); msg != "" {
			return resp.AppendError(out, msg)
		}
		return append(out, "+OK\r\n"...)
	case "function|stats":
		cmdFunctionStats(x, argv)
		return x.Out
	case "shutdown":
		for _, a := range argv[1:] {
			if shard.EqualFold(a, "nosave") {
				srv.busyShutdown()
			}
		}
	case "multi":
		// MULTI and DISCARD are allowed while busy, as in Redis; they
		// change only the client's state (its WATCH keys, on shards the
		// watchdog does not hold, are dropped by tasks on their loops).
		if cl.multi.active {
			return resp.AppendError(out, errNestedMulti)
		}
		cl.multi.active = true
		return append(out, "+OK\r\n"...)
	case "discard":
		if !cl.multi.active {
			return resp.AppendError(out, "ERR DISCARD without MULTI")
		}
		cl.discardMulti(0)
		return append(out, "+OK\r\n"...)
	case "exec":
		if cl.multi.active {
			// Refused with -BUSY, which ends the transaction (Redis's
			// execCommandAbort): nothing of it runs.
			cl.discardMulti(0)
			return resp.AppendError(out, "EXECABORT Transaction discarded because of: "+srv.busyError())
		}
	}
	if cl.multi.active {
		cl.multi.aborted = true // a command refused while queueing: EXEC answers EXECABORT
	}
	return resp.AppendError(out, srv.busyError())
}

// busyShutdown is SHUTDOWN NOSAVE while a script is busy: the script's
// effects, held until it ends, are not in the log; what the log holds is
// flushed and fsynced, and the process exits.
func (srv *Server) busyShutdown() {
	srv.log.Warningf("User requested shutdown...")
	srv.sdNotify("STOPPING=1")
	srv.log.Warningf("Lua script running: exiting without waiting for it.")
	srv.closeLog()
	if pf := srv.cfg.PidFile(); pf != "" {
		_ = os.Remove(pf)
	}
	srv.log.Warningf("Redis is now ready to exit, bye bye...")
	os.Exit(0)
}
