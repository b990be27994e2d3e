package server

// Shutting down like Redis 7.0 (server.c prepareForShutdown, finishShutdown,
// abortShutdown, sigShutdownHandler; db.c shutdownCommand): SHUTDOWN
// [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], SIGTERM and SIGINT with the
// shutdown-on-sigterm and shutdown-on-sigint flags, with Redis's replies and
// log lines.
//
// Redis handles a signal in serverCron, so a SIGTERM waits for the next
// cron tick (up to 1000/hz ms), and SHUTDOWN ABORT can cancel it meanwhile
// (the suite holds the cron with DEBUG PAUSE-CRON to aim at that window).
// redshard acts on the signal at once, unless the cron is paused; then the
// shutdown waits, abortable, until DEBUG PAUSE-CRON 0. Go delivers a signal
// to a goroutine (the runtime's handler, os/signal's loop, signalLoop), not
// inside the loop that serves commands as Redis's handler runs, so a SHUTDOWN
// ABORT sent right after the signal can arrive first on a starved machine
// (Redis's suite waits 10 ms between the two; at a load of 6 on 2 cores that
// was once not enough).
//
// The exit itself parks every loop (no command runs any more, each loop's
// pending log records are submitted), flushes and fsyncs the AOF, and
// returns from Run: the process exits as soon as the log is durable. (It
// used to stop gnet's engine first, whose Stop polls for the end every
// 500 ms: half a second of every shutdown was spent waiting for that tick.)
//
// Replicas (Redis 7.0's shutdown-timeout): unless NOW is given or
// shutdown-timeout is 0, a shutdown with a replica whose ACK is behind
// master_repl_offset does not exit at once. It pauses writes (purpose
// shutdown, pause.go), sends REPLCONF GETACK *, logs "Waiting for replicas
// before shutting down." and shows shutdown_in_milliseconds in INFO; the
// SHUTDOWN clients block (keyless waiters of blocking.go). A watcher
// goroutine finishes the shutdown, with every loop parked, as soon as every
// replica has acknowledged the offset or the timeout is over, logging the
// lagging ones ("Lagging replica ...", "N of M replicas are in sync when
// shutting down."). If the finish fails (the save), or SHUTDOWN ABORT comes
// first, the blocked clients get "-ERR Errors trying to SHUTDOWN. Check
// logs." and the pause is lifted. A SHUTDOWN that runs on its home loop
// (NOSAVE, or one whose routing expected a wait) and must save after all
// goes through the watcher too: a loop cannot park the others.
//
// An initial AOF (CONFIG SET appendonly yes: a rewrite makes the folder's
// first base) is not killed by a shutdown: "Writing initial AOF, can't
// exit." unless FORCE.
//
// RDB: a shutdown saves the data set (snapshot.go's saveParked, every loop
// parked: SHUTDOWN then runs over every shard, a signal's shutdown parks
// them) when save points are set and NOSAVE is not given, or with SAVE. A
// BGSAVE or AOF rewrite in progress is stopped first. A failed save keeps
// the server running ("Error trying to save the DB, can't exit.", and
// SHUTDOWN gets "-ERR Errors trying to SHUTDOWN. Check logs."), unless
// FORCE is given ("Error trying to save the DB. Exit anyway.").

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/resp"
)

// SHUTDOWN flags (server.h).
const (
	shutdownSave   = 1 // save even without save points
	shutdownNosave = 2 // never save
	shutdownNow    = 4 // don't wait for replicas
	shutdownForce  = 8 // errors writing the AOF or the RDB don't prevent the exit
)

// shutdownSigNames is Redis's shutdown_on_sig_enum, in its order.
var shutdownSigNames = []struct {
	name string
	val  int64
}{{"default", 0}, {"save", shutdownSave}, {"nosave", shutdownNosave}, {"now", shutdownNow}, {"force", shutdownForce}}

// shutdownState is the server's shutdown bookkeeping; mu guards asap,
// lastSig and exiting, and serializes the shutdown decisions.
type shutdownState struct {
	mu      sync.Mutex
	asap    bool      // a signal asked for a shutdown not yet carried out (Redis shutdown_asap)
	lastSig os.Signal // the signal that set asap
	exiting bool      // prepareForShutdown succeeded: the process is exiting
	// saving: the final save runs (under mu); a SIGINT then exits at once
	// without taking mu (Redis's handler runs inside its blocking save).
	saving  atomic.Bool
	paused  atomic.Bool    // DEBUG PAUSE-CRON 1
	exitReq chan struct{}  // Run carries out the exit (capacity 1)
	signals chan os.Signal // SIGTERM and SIGINT

	// A shutdown waiting for replicas (or for the watcher to finish it):
	// waitUntil is its deadline (unix ms; 0: none waits), flags its flags,
	// blocked the SHUTDOWN clients waiting for its end (under mu).
	waitUntil atomic.Int64
	flags     int64
	blocked   []*waiter
	gen       uint64
	waiting   bool // writes are paused for lagging replicas
}

// Results of prepareForShutdown.
const (
	shutFailed  = iota // errors: the server goes on
	shutExit           // the process exits (Run's finishExit)
	shutWaiting        // a watcher finishes it (replicas, or a save a loop cannot make)
)

// initShutdown starts catching SIGTERM and SIGINT (a SIGTERM while the AOF
// opens or loads is a shutdown like any other).
func (srv *Server) initShutdown() {
	st := &srv.shut
	st.exitReq = make(chan struct{}, 1)
	st.signals = make(chan os.Signal, 4)
	signal.Notify(st.signals, syscall.SIGTERM, syscall.SIGINT)
	go srv.signalLoop()
}

// signalLoop is Redis's sigShutdownHandler plus the serverCron step that
// acts on it.
func (srv *Server) signalLoop() {
	st := &srv.shut
	for sig := range st.signals {
		if sig == syscall.SIGINT && st.saving.Load() {
			srv.log.Warningf("You insist... exiting now.")
			aof.RemoveSnapshotTemp()
			os.Exit(1)
		}
		st.mu.Lock()
		if st.exiting {
			st.mu.Unlock()
			continue
		}
		var msg string
		switch sig {
		case syscall.SIGINT:
			msg = "Received SIGINT scheduling shutdown..."
		case syscall.SIGTERM:
			msg = "Received SIGTERM scheduling shutdown..."
		default:
			msg = "Received shutdown signal, scheduling shutdown..."
		}
		if st.asap && sig == syscall.SIGINT {
			// A second Ctrl+C: the user wants out now, without saving.
			srv.log.Warningf("You insist... exiting now.")
			aof.RemoveSnapshotTemp() // a save in progress leaves no temp file (rdbRemoveTempFile)
			os.Exit(1)               // not a clean shutdown
		} else if srv.loading() {
			msg = "Received shutdown signal during loading, scheduling shutdown."
		}
		srv.log.Warningf("%s", msg)
		st.asap = true
		st.lastSig = sig
		st.mu.Unlock()
		// Off this goroutine, so that a second SIGINT during the final save
		// is received (and exits at once).
		go srv.serveShutdownAsap()
	}
}

// serveShutdownAsap carries out a shutdown a signal asked for, unless the
// cron is paused (serverCron's shutdown_asap step).
func (srv *Server) serveShutdownAsap() {
	st := &srv.shut
	if st.paused.Load() {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.asap || st.exiting {
		return
	}
	var flags int64
	switch st.lastSig {
	case syscall.SIGINT:
		flags = srv.cfg.ShutdownOnSigint()
	case syscall.SIGTERM:
		flags = srv.cfg.ShutdownOnSigterm()
	}
	if srv.prepareForShutdownLocked(flags, false, false) == shutFailed {
		if srv.loading() {
			srv.log.Warningf("SIGTERM received but errors trying to shut down the server, check the logs for more information")
		}
		st.asap = false
		st.lastSig = nil
	}
}

// prepareForShutdown is Redis's prepareForShutdown and finishShutdown up to
// the exit: it logs, decides, and says whether the server exits, waits for
// its replicas or goes on. On shutExit Run carries out the exit
// (finishExit); on shutFailed the errors are logged and the server goes
// on. parked: the caller holds every loop; onLoop: the caller is a loop
// (that does not hold the others), which cannot save.
func (srv *Server) prepareForShutdown(flags int64, parked, onLoop bool) int {
	srv.shut.mu.Lock()
	defer srv.shut.mu.Unlock()
	return srv.prepareForShutdownLocked(flags, parked, onLoop)
}

func (srv *Server) prepareForShutdownLocked(flags int64, parked, onLoop bool) int {
	st := &srv.shut
	if st.exiting {
		return shutExit
	}
	if st.waitUntil.Load() != 0 {
		return shutWaiting // initiated already: its watcher ends it (Redis's C_ERR)
	}
	if srv.loading() {
		// Never save half a data set.
		flags = flags&^shutdownSave | shutdownNosave
	}
	srv.log.Warningf("User requested shutdown...")
	srv.sdNotify("STOPPING=1")
	timeout := srv.cfg.intOr("shutdown-timeout", 10)
	// With replicas, the watcher decides: whether they are in sync is
	// known only once the log has streamed every write submitted.
	wait := flags&shutdownNow == 0 && timeout != 0 && srv.repl.attached() > 0
	if wait || onLoop && !parked && srv.shutdownSaves(flags) {
		now := time.Now().UnixMilli()
		until := now + 1
		st.waiting = false
		if wait {
			until = now + timeout*1000
			if !srv.replicasInSync() {
				srv.waitForReplicasLocked()
			}
		}
		st.flags = flags
		st.gen++
		st.waitUntil.Store(until)
		go srv.watchShutdown(st.gen, wait)
		return shutWaiting
	}
	if srv.finishShutdownLocked(flags, parked) {
		return shutExit
	}
	return shutFailed
}

// waitForReplicasLocked starts the wait for lagging replicas: writes
// paused, REPLCONF GETACK * sent (Redis's prepareForShutdown); st.mu is
// held.
func (srv *Server) waitForReplicasLocked() {
	st := &srv.shut
	if st.waiting {
		return
	}
	st.waiting = true
	if srv.pause.typ.Load() == pauseOff {
		srv.repl.appendRaw(getackCmd)
	}
	srv.pauseClients(pauseByShutdown, time.Now().UnixMilli()+10*365*24*3600*1000, pauseWrite)
	srv.log.Noticef("Waiting for replicas before shutting down.")
}

// shutdownSaves tells whether a shutdown with flags makes the final save.
func (srv *Server) shutdownSaves(flags int64) bool {
	return flags&shutdownSave != 0 || flags&shutdownNosave == 0 && len(srv.cfg.SaveParams()) > 0
}

// replicasInSync is Redis's isReadyToShutdown: every replica acknowledged
// master_repl_offset.
func (srv *Server) replicasInSync() bool {
	rp := &srv.repl
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, r := range rp.m.replicas {
		if !r.rdbOnly && r.ack.Load() != rp.off {
			return false
		}
	}
	return true
}

// finishShutdownLocked is Redis's finishShutdown: the lagging replicas
// logged, the final save, then the exit is requested; false if it fails.
func (srv *Server) finishShutdownLocked(flags int64, parked bool) bool {
	st := &srv.shut
	force := flags&shutdownForce != 0
	srv.logLaggingReplicas()
	if ps := srv.aofLog(); ps != nil && ps.log.WaitingRewrite() { // Redis's AOF_WAIT_REWRITE
		if !force {
			srv.log.Warningf("Writing initial AOF, can't exit.")
			srv.log.Warningf("Errors trying to shut down the server. Check the logs for more information.")
			srv.sdNotify("READY=1") // the shutdown is abandoned: running again
			st.asap = false
			st.lastSig = nil
			return false
		}
		srv.log.Warningf("Writing initial AOF. Exit anyway.")
	}
	if srv.shutdownSaves(flags) {
		srv.log.Noticef("Saving the final RDB snapshot before exiting.")
		st.saving.Store(true)
		err := srv.saveForShutdown(parked)
		st.saving.Store(false)
		if err != nil {
			if !force {
				srv.log.Warningf("Error trying to save the DB, can't exit.")
				srv.log.Warningf("Errors trying to shut down the server. Check the logs for more information.")
				srv.sdNotify("READY=1") // the shutdown is abandoned: running again
				st.asap = false
				st.lastSig = nil
				return false
			}
			srv.log.Warningf("Error trying to save the DB. Exit anyway.")
		}
	}
	st.exiting = true
	st.asap = false
	srv.stopping.Store(true)
	select {
	case st.exitReq <- struct{}{}:
	default:
	}
	return true
}

// logLaggingReplicas is finishShutdown's account of the replicas.
func (srv *Server) logLaggingReplicas() {
	rp := &srv.repl
	rp.mu.Lock()
	now := time.Now().UnixMilli()
	var lines []string
	n, lagging := 0, 0
	for _, r := range rp.m.replicas {
		if r.rdbOnly {
			continue
		}
		n++
		if ack := r.ack.Load(); ack != rp.off {
			lagging++
			st, lag := "wait_bgsave", int64(0)
			switch r.state.Load() {
			case repOnline:
				st = "online"
				if t := r.ackTime.Load(); t > 0 {
					lag = (now - t) / 1000
				}
			case repSendBulk:
				st = "send_bulk"
			}
			lines = append(lines, fmt.Sprintf("Lagging replica %s reported offset %d behind master, lag=%d, state=%s.", r.name(), rp.off-ack, lag, st))
		}
	}
	rp.mu.Unlock()
	for _, l := range lines {
		srv.log.Warningf("%s", l)
	}
	if n > 0 {
		srv.log.Noticef("%d of %d replicas are in sync when shutting down.", n-lagging, n)
	}
}

// watchShutdown finishes a shutdown that waits (serverCron's
// isShutdownInitiated step): when every replica is in sync or the time is
// over, with every loop parked.
func (srv *Server) watchShutdown(gen uint64, replicas bool) {
	st := &srv.shut
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-srv.stopCh:
				return
			case <-tick.C:
			}
		}
		if replicas && time.Now().UnixMilli() < st.waitUntil.Load() && !srv.replicasInSync() {
			continue
		}
		// st.mu is taken with every loop parked: a loop may be waiting
		// for it (SHUTDOWN ABORT), and a parked one holds it not.
		done := false
		_ = srv.parkAll(func() {
			st.mu.Lock()
			defer st.mu.Unlock()
			if st.gen != gen || st.waitUntil.Load() == 0 || st.exiting {
				done = true
				return
			}
			if replicas && time.Now().UnixMilli() < st.waitUntil.Load() {
				// Every write submitted reaches the stream first.
				_ = srv.waitWritten(srv.submitAll(), 10*time.Second)
				if !srv.replicasInSync() {
					srv.waitForReplicasLocked()
					return // not yet
				}
			}
			if !srv.finishShutdownLocked(st.flags, true) {
				srv.cancelShutdownLocked()
			}
			done = true
		})
		if done {
			return
		}
	}
}

// cancelShutdownLocked ends a waiting shutdown that will not exit: the
// SHUTDOWN clients get their error, the pause is lifted (Redis's
// cancelShutdown); st.mu is held.
func (srv *Server) cancelShutdownLocked() {
	st := &srv.shut
	st.gen++
	st.flags = 0
	st.waiting = false
	st.waitUntil.Store(0)
	st.asap = false
	st.lastSig = nil
	for _, w := range st.blocked {
		failShutdownWaiter(w)
	}
	st.blocked = nil
	srv.unpauseClients(pauseByShutdown)
	srv.sdNotify("READY=1") // after STOPPING=1: running again
}

const errShutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs."

// failShutdownWaiter answers a blocked SHUTDOWN with the error, on its
// home loop, unless its wait ended otherwise.
func failShutdownWaiter(w *waiter) {
	if w.state.CompareAndSwap(wWaiting, wClaimed) {
		w.out = resp.AppendError(w.out[:0], errShutdownFailed)
		w.state.Store(wDone)
		_ = w.cl.loop.post(w.deliverRun)
	}
}

// shutdownBlocked is the registration of a SHUTDOWN's waiter (blocking.go).
func (srv *Server) shutdownBlocked(w *waiter) {
	st := &srv.shut
	w.cancelReply = func(out []byte) []byte { return resp.AppendError(out, errShutdownFailed) }
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.waitUntil.Load() == 0 && !st.exiting {
		failShutdownWaiter(w) // ended before the client blocked
		return
	}
	st.blocked = append(st.blocked, w)
	w.onEnd = func() {
		st.mu.Lock()
		for i, o := range st.blocked {
			if o == w {
				st.blocked = append(st.blocked[:i], st.blocked[i+1:]...)
				break
			}
		}
		st.mu.Unlock()
	}
}

// loading tells whether the data set is not loaded yet: the AOF loads, or
// the server has not started loading it (clients get -LOADING either way).
func (srv *Server) loading() bool { return !srv.ready.Load() || srv.load.active.Load() }

// abortShutdown is Redis's abortShutdown: it cancels a shutdown a signal
// asked for and that has not started yet.
func (srv *Server) abortShutdown() bool {
	st := &srv.shut
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.exiting {
		return false
	}
	if st.waitUntil.Load() != 0 {
		srv.cancelShutdownLocked()
	} else if !st.asap {
		return false
	}
	st.asap = false
	st.lastSig = nil
	srv.log.Noticef("Shutdown manually aborted.")
	return true
}

// setCronPaused is DEBUG PAUSE-CRON: while the cron is paused, a signal's
// shutdown waits (and can be aborted); unpausing carries it out.
func (srv *Server) setCronPaused(p bool) {
	srv.shut.paused.Store(p)
	if !p {
		go srv.serveShutdownAsap()
	}
}

// finishExit is the end of Redis's finishShutdown, run by Run: every loop
// parked, the AOF flushed and fsynced, the pid file removed.
func (srv *Server) finishExit() {
	srv.waitLoader() // it gives up at once, or finishes its swap
	end := func() {
		// prepareForShutdown's kill of a child: its job stops and its
		// temp file goes (rdbRemoveTempFile, aofRemoveTempFile).
		if srv.save.cur.Load() != nil {
			srv.log.Warningf("There is a child saving an .rdb. Killing it!")
			srv.abortSnapshot()
		}
		if srv.rw.cur.Load() != nil {
			srv.log.Warningf("There is a child rewriting the AOF. Killing it!")
			srv.abortRewrite()
		}
		srv.closeLog()
	}
	if err := srv.parkAll(end); err != nil {
		srv.closeLog()
	}
	if srv.cfg.Daemonize() || srv.cfg.PidFile() != "" {
		srv.log.Noticef("Removing the pid file.")
		if pf := srv.cfg.PidFile(); pf != "" {
			_ = os.Remove(pf)
		}
	}
	srv.log.Warningf("Redis is now ready to exit, bye bye...")
}

// cfgSetShutdownOnSig parses shutdown-on-sigint and shutdown-on-sigterm:
// Redis's multi-argument enum of flags (configEnumGetValue) checked by
// isValidShutdownOnSigFlags.
func cfgSetShutdownOnSig(field func(*Config) *atomic.Int64) func(*Config, []string, *cfgLoadState) string {
	return func(c *Config, args []string, _ *cfgLoadState) string {
		var v int64
		for _, a := range args {
			matched := false
			for _, e := range shutdownSigNames {
				if strings.EqualFold(a, e.name) {
					v |= e.val
					matched = true
				}
			}
			if !matched {
				v = -1
				break
			}
		}
		if len(args) == 0 || v < 0 {
			return "argument(s) must be one of the following: default, save, nosave, now, force"
		}
		if v&shutdownSave != 0 && v&shutdownNosave != 0 {
			return "shutdown options SAVE and NOSAVE can't be used simultaneously"
		}
		field(c).Store(v)
		return ""
	}
}

// shutdownSigName is Redis's configEnumGetName for a flags enum.
func shutdownSigName(v int64) string {
	var names []string
	left := v
	for _, e := range shutdownSigNames {
		if v == e.val {
			return e.name
		}
		if e.val != 0 && left&e.val == e.val {
			names = append(names, e.name)
			left &^= e.val
		}
	}
	if len(names) == 0 || left != 0 {
		return "unknown"
	}
	return strings.Join(names, " ")
}

func cfgShutdownOnSigOpt(name string, field func(*Config) *atomic.Int64) *cfgOption {
	return cfgSpecialOpt(name, cfgMutable|cfgMultiArg, "default", cfgSetShutdownOnSig(field),
		func(c *Config) string { return shutdownSigName(field(c).Load()) },
		func(c *Config, o *cfgOption, rw *cfgRewriteState) {
			v := field(c).Load()
			rw.rewriteLine(o.name, o.name+" "+shutdownSigName(v), v != 0)
		})
}

// ShutdownOnSigint and ShutdownOnSigterm are the SHUTDOWN flags a signal's
// shutdown uses.
func (c *Config) ShutdownOnSigint() int64  { return c.shutdownOnSigint.Load() }
func (c *Config) ShutdownOnSigterm() int64 { return c.shutdownOnSigterm.Load() }
