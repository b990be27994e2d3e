package server

// CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE (Redis 7.0's
// pauseClients): until the pause ends, a client's command that the pause
// covers — every command under ALL; under WRITE those that write or may
// be propagated (PUBLISH, PFCOUNT, EVAL and FCALL unless their flags say
// no-writes, EXEC of a queue holding one) — is postponed: it stays,
// unparsed, in the client's input, and the client waits as a keyless
// waiter of the blocking machinery (blocked_clients counts it, as Redis's
// BLOCKED_POSTPONE). Replicas are never paused. Commands that would be
// rejected (unknown, wrong arity, NOAUTH, ...) are answered at once.
//
// The pause is per purpose (a client's CLIENT PAUSE, a FAILOVER), as in
// Redis; the most restrictive one in force and its end are published in
// two atomics that every loop reads before each command, so an unpaused
// server pays one atomic load per command. When the pause ends (UNPAUSE,
// its timeout, or a purpose lifted) or becomes less restrictive, every
// postponed client is handed back to its home loop and goes on with its
// input, which may pause it again.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/lua"
	"github.com/redshard/redshard/shard"
)

const (
	pauseOff int32 = iota
	pauseWrite
	pauseAll
)

// Pause purposes (Redis's pause_purpose).
const (
	pauseByClient = iota
	pauseByFailover
	pauseByShutdown
	pausePurposes
)

type pauseState struct {
	typ atomic.Int32 // the most restrictive pause in force
	end atomic.Int64 // unix ms when it ends

	mu      sync.Mutex
	purpose [pausePurposes]struct {
		typ int32
		end int64
	}
	postponed []*waiter
	timer     *time.Timer
}

var pauseCommands = []serverCmd{
	{name: "client|pause", exec: cmdClientPause, home: true},
	{name: "client|unpause", exec: cmdClientUnpause, home: true},
}

func cmdClientPause(x *Exec, argv [][]byte) {
	typ := pauseAll
	if len(argv) == 4 {
		switch {
		case shard.EqualFold(argv[3], "write"):
			typ = pauseWrite
		case shard.EqualFold(argv[3], "all"):
		default:
			x.Err("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	} else if len(argv) != 3 {
		x.Err("ERR wrong number of arguments for 'client|pause' command")
		return
	}
	ms, ok := timeoutMs(x, argv[2])
	if !ok {
		return
	}
	x.srv.pauseClients(pauseByClient, time.Now().UnixMilli()+ms, typ)
	x.OK()
}

func cmdClientUnpause(x *Exec, argv [][]byte) {
	x.srv.unpauseClients(pauseByClient)
	x.OK()
}

// pauseClients starts (or extends) a pause for a purpose.
func (srv *Server) pauseClients(purpose int, end int64, typ int32) {
	p := &srv.pause
	p.mu.Lock()
	pp := &p.purpose[purpose]
	pp.typ = max(pp.typ, typ)
	pp.end = max(pp.end, end)
	srv.updatePauseLocked()
}

// unpauseClients lifts a purpose's pause.
func (srv *Server) unpauseClients(purpose int) {
	p := &srv.pause
	p.mu.Lock()
	p.purpose[purpose].typ = pauseOff
	p.purpose[purpose].end = 0
	srv.updatePauseLocked()
}

// updatePauseLocked recomputes the pause in force and releases p.mu; when
// it became less restrictive, the postponed clients go on.
func (srv *Server) updatePauseLocked() {
	p := &srv.pause
	now := time.Now().UnixMilli()
	old := p.typ.Load()
	typ, end := pauseOff, int64(0)
	for i := range p.purpose {
		pp := &p.purpose[i]
		if pp.typ != pauseOff && pp.end < now {
			pp.typ, pp.end = pauseOff, 0
		}
		if pp.typ > typ {
			typ = pp.typ
		}
	}
	for i := range p.purpose {
		if pp := &p.purpose[i]; pp.typ == typ && pp.end > end {
			end = pp.end
		}
	}
	p.end.Store(end)
	p.typ.Store(typ)
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if typ != pauseOff {
		p.timer = time.AfterFunc(time.Duration(end-now+1)*time.Millisecond, func() {
			srv.pause.mu.Lock()
			srv.updatePauseLocked()
		})
	}
	var resume []*waiter
	if typ < old {
		resume, p.postponed = p.postponed, nil
	}
	p.mu.Unlock()
	for _, w := range resume {
		if w.state.CompareAndSwap(wWaiting, wDone) {
			_ = w.cl.loop.post(w.deliverRun)
		}
	}
}

// paused reports whether the pause in force covers the client's command
// argv; the caller then postpones it.
func (cl *Client) paused(argv [][]byte) bool {
	srv := cl.srv
	typ := srv.pause.typ.Load()
	if typ == pauseOff || cl.rep != nil || cl.c == nil && cl.rm == nil { // internal clients go on; a replica's master client pauses, as Redis's
		return false
	}
	if time.Now().UnixMilli() > srv.pause.end.Load() {
		srv.pause.mu.Lock()
		srv.updatePauseLocked()
		if typ = srv.pause.typ.Load(); typ == pauseOff {
			return false
		}
	}
	cmd := cl.lookup(argv)
	if cmd == nil || cl.check(cmd, argv) != "" {
		return false // answered at once
	}
	if typ == pauseAll {
		return true
	}
	return cl.mayReplicate(cmd, argv)
}

// mayReplicate is Redis's is_may_replicate_command for the pause.
func (cl *Client) mayReplicate(cmd *Cmd, argv [][]byte) bool {
	if cmd.fullName == "exec" && cl.multi.active {
		return cl.multi.flags&(flagWrite|flagMayReplicate) != 0
	}
	return cl.effectiveFlags(cmd, argv)&(flagWrite|flagMayReplicate) != 0
}

// effectiveFlags are a command's flags with a script's own (Redis's
// getCommandFlags): EVAL, EVALSHA and FCALL of a script or function that
// declares flags write unless no-writes, deny OOM unless allow-oom, serve
// stale data with allow-stale, and never "may replicate".
func (cl *Client) effectiveFlags(cmd *Cmd, argv [][]byte) cmdFlags {
	f := cmd.flags
	if cmd.script == 0 || len(argv) < 2 {
		return f
	}
	var sf uint64
	switch cmd.fullName {
	case "eval":
		var ok bool
		if sf, ok = lua.ScriptFlags(argv[1]); !ok {
			return f
		}
	case "evalsha":
		e := cl.loop.scriptEntry(argv[1])
		if e == nil {
			return f
		}
		sf = e.flags
	case "fcall":
		cl.loop.functions() // the loop's view of the libraries, no lock
		lf := cl.loop.loopFunc(argv[1])
		if lf == nil {
			return f
		}
		sf = lf.meta.flags
	default:
		return f
	}
	if sf&lua.FlagEvalCompatMode != 0 {
		return f
	}
	// Declared flags replace the command's (Redis's scriptFlagsToCmdFlags).
	f &^= flagWrite | flagMayReplicate | flagDenyOOM | flagStale
	if sf&lua.FlagNoWrites == 0 {
		f |= flagWrite
		if sf&lua.FlagAllowOOM == 0 {
			f |= flagDenyOOM
		}
	}
	if sf&lua.FlagAllowStale != 0 {
		f |= flagStale
	}
	return f
}

// waitPostponed makes the client wait, its command argv left unparsed in
// its input, as a keyless waiter (blocked_clients counts it); whoever
// ends the wait CASes the waiter's state to wDone and hands deliverRun to
// its home loop, which goes on with the input. onEnd runs on the home loop
// when the wait ends, whichever way.
func (cl *Client) waitPostponed(argv [][]byte, onEnd func(w *waiter)) *waiter {
	w := &waiter{cl: cl, cmd: cl.lookup(argv), db: cl.db, proto: cl.proto, postponed: true}
	w.deliverRun = gnet.RunnableFunc(w.deliver)
	w.timeoutRun = gnet.RunnableFunc(w.timedOut)
	w.cancelReply = func(out []byte) []byte { return out } // CLIENT UNBLOCK: it just goes on
	w.onEnd = func() { onEnd(w) }
	cl.srv.blk.clients.Add(1)
	cl.startWait(w)
	return w
}

// postpone makes the client wait for the pause's end with its command
// left in its input (dispatch's process).
func (cl *Client) postpone(argv [][]byte) {
	srv := cl.srv
	w := cl.waitPostponed(argv, srv.pauseDrop)
	p := &srv.pause
	p.mu.Lock()
	if p.typ.Load() == pauseOff {
		// Ended meanwhile: go on at once.
		p.mu.Unlock()
		if w.state.CompareAndSwap(wWaiting, wDone) {
			_ = cl.loop.post(w.deliverRun)
		}
		return
	}
	p.postponed = append(p.postponed, w)
	p.mu.Unlock()
}

// pauseDrop forgets a postponed client that went away.
func (srv *Server) pauseDrop(w *waiter) {
	p := &srv.pause
	p.mu.Lock()
	for i, o := range p.postponed {
		if o == w {
			p.postponed = append(p.postponed[:i], p.postponed[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
}

// keepExpired is the shards' KeepExpired: while clients are paused no key
// expires, actively or on access (Redis 7.0's expireIfNeeded and
// activeExpireCycle), so a paused master sends its replicas nothing; and a
// replica never deletes an expired key itself: it reads as absent until the
// master's DEL comes.
func (srv *Server) keepExpired() bool {
	if srv.repl.isReplica.Load() {
		return true // a replica waits for its master's DELs (Redis's expireIfNeeded)
	}
	return srv.pause.typ.Load() != pauseOff && time.Now().UnixMilli() <= srv.pause.end.Load()
}

// timeoutMs parses a command's timeout in milliseconds as Redis's
// getTimeoutFromObjectOrReply does, answering its errors.
func timeoutMs(x *Exec, arg []byte) (int64, bool) {
	ms, ok := shard.ParseInt(arg)
	if !ok {
		x.Err("ERR timeout is not an integer or out of range")
		return 0, false
	}
	if ms < 0 {
		x.Err("ERR timeout is negative")
		return 0, false
	}
	return ms, true
}
