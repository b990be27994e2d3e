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
// Replicas: redshard has none, so there is never anyone to wait for and
// NOW and shutdown-timeout change nothing (Redis without replicas behaves
// the same way).
//
// RDB: a shutdown saves the data set (snapshot.go's saveParked, every loop
// parked: SHUTDOWN then runs over every shard, a signal's shutdown parks
// them) when save points are set and NOSAVE is not given, or with SAVE. A
// BGSAVE or AOF rewrite in progress is stopped first. A failed save keeps
// the server running ("Error trying to save the DB, can't exit.", and
// SHUTDOWN gets "-ERR Errors trying to SHUTDOWN. Check logs."), unless
// FORCE is given ("Error trying to save the DB. Exit anyway.").

import (
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/redshard/redshard/aof"
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
}

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
	if !srv.prepareForShutdownLocked(flags, false) {
		if srv.loading() {
			srv.log.Warningf("SIGTERM received but errors trying to shut down the server, check the logs for more information")
		}
		st.asap = false
		st.lastSig = nil
	}
}

// prepareForShutdown is Redis's prepareForShutdown and finishShutdown up to
// the exit: it logs, decides, and returns whether the server exits. On true
// Run carries out the exit (finishExit); on false the errors are logged and
// the server goes on.
func (srv *Server) prepareForShutdown(flags int64, parked bool) bool {
	srv.shut.mu.Lock()
	defer srv.shut.mu.Unlock()
	return srv.prepareForShutdownLocked(flags, parked)
}

func (srv *Server) prepareForShutdownLocked(flags int64, parked bool) bool {
	st := &srv.shut
	if st.exiting {
		return true
	}
	if srv.loading() {
		// Never save half a data set.
		flags = flags&^shutdownSave | shutdownNosave
	}
	srv.log.Warningf("User requested shutdown...")
	force := flags&shutdownForce != 0
	if flags&shutdownSave != 0 || flags&shutdownNosave == 0 && len(srv.cfg.SaveParams()) > 0 {
		srv.log.Noticef("Saving the final RDB snapshot before exiting.")
		st.saving.Store(true)
		err := srv.saveForShutdown(parked)
		st.saving.Store(false)
		if err != nil {
			if !force {
				srv.log.Warningf("Error trying to save the DB, can't exit.")
				srv.log.Warningf("Errors trying to shut down the server. Check the logs for more information.")
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

// loading tells whether the data set is not loaded yet: the AOF loads, or
// the server has not started loading it (clients get -LOADING either way).
func (srv *Server) loading() bool { return !srv.ready.Load() || srv.load.active.Load() }

// abortShutdown is Redis's abortShutdown: it cancels a shutdown a signal
// asked for and that has not started yet.
func (srv *Server) abortShutdown() bool {
	st := &srv.shut
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.asap || st.exiting {
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
	if err := srv.parkAll(srv.closeLog); err != nil {
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
