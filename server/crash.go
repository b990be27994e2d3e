package server

// The crash report, as Redis 7.0's debug.c writes it (sigsegvHandler,
// _serverPanic, printCrashReport, bugReportEnd): on SIGSEGV, SIGBUS,
// SIGFPE, SIGILL or SIGABRT sent to the process, on DEBUG SEGFAULT (a real
// write to a read-only page), on DEBUG PANIC (a Go panic), and on any Go
// panic while a loop serves a client's input or runs a hop or transaction
// for one, the log gets
//
//	=== REDSHARD BUG REPORT START ... ===
//	Redis 7.0.15 crashed by signal: 11         (or the "Guru Meditation" of a panic)
//	------ STACK TRACE ------                  every goroutine: loops, log writer, ...
//	------ INFO OUTPUT ------                  INFO all
//	------ CLIENT LIST OUTPUT ------
//	------ CURRENT CLIENT INFO ------          the client being served and its argv
//	------ MODULES INFO OUTPUT ------          empty: redshard has no modules
//	=== REDSHARD BUG REPORT END ... ===        and where to report it
//
// and the process dies by the signal (a panic by SIGABRT, as Redis's
// abort()), so that a core is dumped where cores are enabled. With
// crash-log-enabled no the process dies the same way without the report.
//
// The INFO and client list sections read every loop's state, so the other
// loops are first stopped (each runs a task that never returns); a loop
// that does not stop within a second (say it is parked in the transaction
// that crashed) leaves those sections out, with a line saying so.
//
// A fatal error of the Go runtime (a panic on a goroutine that no guard
// covers, a concurrent map write, running out of memory) cannot be
// recovered: the runtime prints it and exits with status 2. Its output goes
// to standard error and, through debug.SetCrashOutput, to the log file too
// (to standard output when the log is there and standard error is not).
//
// What Go cannot give: the si_code and sender of a signal (Go's signal
// channel carries only its number), registers and the code around the
// faulting instruction; those lines of Redis's report are not written.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/resp"
)

// crashSignals are the signals Redis's setupSigSegvHandlers catches.
var crashSignals = []os.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGABRT}

// crashState makes sure only one crash report is written.
type crashState struct {
	mu     sync.Mutex
	frozen chan struct{} // never closed: stopped loops wait on it
}

// initCrashHandlers catches the crash signals sent to the process (a fault
// in Go code is a panic, handled where it happens).
func (srv *Server) initCrashHandlers() {
	srv.crash.frozen = make(chan struct{})
	srv.setCrashOutput()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, crashSignals...)
	go func() {
		sig := (<-ch).(syscall.Signal)
		srv.crashReport(crashInfo{sig: sig})
	}()
}

// setCrashOutput sends the Go runtime's fatal error output to the log as
// well as to standard error.
func (srv *Server) setCrashOutput() {
	if path := srv.cfg.LogFile(); path != "" {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666); err == nil {
			_ = debug.SetCrashOutput(f, debug.CrashOptions{})
			f.Close()
		}
		return
	}
	if !sameFile(os.Stdout, os.Stderr) {
		_ = debug.SetCrashOutput(os.Stdout, debug.CrashOptions{})
	}
}

// sameFile tells whether a and b are open on the same file.
func sameFile(a, b *os.File) bool {
	sa, err1 := a.Stat()
	sb, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// crashInfo describes a crash.
type crashInfo struct {
	sig      syscall.Signal // the signal the process dies by
	addr     uintptr        // the faulting address, if known
	hasAddr  bool
	panicMsg string // a panic: its "Guru Meditation" message and site
	loop     *Loop  // the loop that crashed (it is not stopped), or nil
	cl       *Client
	argv     [][]byte
}

// crashReport writes the report and kills the process by ci.sig. It never
// returns.
func (srv *Server) crashReport(ci crashInfo) {
	srv.crash.mu.Lock() // a second crash waits here until the process is gone
	if !srv.cfg.CrashLogEnabled() {
		dieBySignal(ci.sig)
	}
	lg := srv.log
	lg.Raw(LogLevelWarning, "\n\n=== REDSHARD BUG REPORT START: Cut & paste starting from here ===\n")
	if ci.panicMsg != "" {
		lg.Warningf("------------------------------------------------")
		lg.Warningf("!!! Software Failure. Press left mouse button to continue")
		lg.Warningf("Guru Meditation: %s", ci.panicMsg)
	} else {
		lg.Warningf("Redis %s crashed by signal: %d", RedisVersion, ci.sig)
		if ci.hasAddr {
			lg.Warningf("Accessing address: %#x", ci.addr)
		}
	}

	lg.Raw(LogLevelWarning, "\n------ STACK TRACE ------\n")
	lg.Raw(LogLevelWarning, "\nBacktrace:\n"+string(allStacks()))

	stopped := srv.stopOtherLoops(ci.loop, time.Second)
	lg.Raw(LogLevelWarning, "\n------ INFO OUTPUT ------\n")
	if stopped {
		lg.Raw(LogLevelWarning, crashSafe(func() string {
			sel := parseInfoSections([][]byte{[]byte("all")})
			return string(srv.genInfo(&sel, time.Now()))
		}))
		lg.Raw(LogLevelWarning, "\n------ CLIENT LIST OUTPUT ------\n")
		lg.Raw(LogLevelWarning, crashSafe(func() string {
			var b strings.Builder
			for _, cl := range srv.allClients() {
				b.WriteString(cl.infoLine())
				b.WriteByte('\n')
			}
			return b.String()
		}))
	} else {
		lg.Raw(LogLevelWarning, "(left out: an event loop did not stop within a second, its state cannot be read safely)\n")
	}
	if ci.cl != nil {
		if len(ci.argv) > 0 {
			// Redis shows the command being run as the client's cmd=.
			if c := srv.cmds[strings.ToLower(string(ci.argv[0]))]; c != nil {
				ci.cl.lastCmd = c.fullName
			}
		}
		lg.Raw(LogLevelWarning, "\n------ CURRENT CLIENT INFO ------\n")
		lg.Raw(LogLevelWarning, crashSafe(func() string {
			var b strings.Builder
			b.WriteString(ci.cl.infoLine())
			b.WriteByte('\n')
			for j, a := range ci.argv {
				if len(a) > 128 {
					a = a[:128]
				}
				fmt.Fprintf(&b, "argv[%d]: '%s'\n", j, resp.AppendRepr(nil, a))
			}
			return b.String()
		}))
	}
	lg.Raw(LogLevelWarning, "\n------ MODULES INFO OUTPUT ------\n")

	lg.Raw(LogLevelWarning, "\n=== REDSHARD BUG REPORT END. Make sure to include from START to END. ===\n\n"+
		"       Please report the crash by opening an issue in redshard's\n"+
		"       issue tracker, with this report and the output of\n"+
		"       redshard-server --version.\n\n"+
		"  redshard is not Redis: please do not report it to the Redis project.\n\n"+
		"  Suspect RAM error? redshard has no --test-memory: use a memory tester\n"+
		"  such as memtester to verify it.\n")
	if srv.cfg.Daemonize() && srv.cfg.Supervised() == "no" && srv.cfg.PidFile() != "" {
		_ = os.Remove(srv.cfg.PidFile())
	}
	dieBySignal(ci.sig)
}

// allStacks is the stack of every goroutine.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// crashSafe runs fn and returns its text, or a line saying that it failed:
// a report section must not keep the others from being written.
func crashSafe(fn func() string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("(this section failed: %v)\n", r)
		}
	}()
	return fn()
}

// stopOtherLoops makes every loop but except run a task that never
// returns, and reports whether all of them did within timeout.
func (srv *Server) stopOtherLoops(except *Loop, timeout time.Duration) bool {
	var wg sync.WaitGroup
	for _, l := range srv.loops {
		if l == except || l.el == nil {
			continue
		}
		wg.Add(1)
		var once sync.Once
		err := l.post(gnet.RunnableFunc(func(context.Context) error {
			once.Do(wg.Done)
			<-srv.crash.frozen
			return nil
		}))
		if err != nil {
			return false
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// crashFromPanic reports a panic recovered on loop l (nil if unknown) as
// Redis reports a serverPanic, or, for a memory fault, as a crash by
// SIGSEGV; then the process dies. The loops' entry points (OnTraffic, the
// hop and transaction runnables) defer a recover that calls it.
func (srv *Server) crashFromPanic(r any, l *Loop) {
	ci := crashInfo{sig: syscall.SIGABRT, loop: l}
	if l != nil {
		ci.cl, ci.argv = l.curCl, l.curArgv
	}
	if e, ok := r.(interface{ Addr() uintptr }); ok {
		ci.sig, ci.addr, ci.hasAddr = syscall.SIGSEGV, e.Addr(), true
	} else {
		ci.panicMsg = fmt.Sprintf("%v #%s", r, panicSite())
	}
	srv.crashReport(ci)
}

// panicSite is the file:line that panicked: the first frame past
// runtime.gopanic (or the runtime's panic helpers).
func panicSite() string {
	pc := make([]uintptr, 64)
	n := runtime.Callers(2, pc)
	frames := runtime.CallersFrames(pc[:n])
	seen := false
	for {
		f, more := frames.Next()
		if seen && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s:%d", trimPath(f.File), f.Line)
		}
		if f.Function == "runtime.gopanic" {
			seen = true
		}
		if !more {
			return "?:0"
		}
	}
}

// trimPath keeps the last two elements of a source path (package/file.go).
func trimPath(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		if j := strings.LastIndexByte(p[:i], '/'); j >= 0 {
			return p[j+1:]
		}
	}
	return p
}

// debugSegfault is DEBUG SEGFAULT: like Redis, it writes to a read-only
// page, a real SIGSEGV; the Go runtime turns it into a panic on this
// goroutine (SetPanicOnFault), which becomes the crash report of signal 11
// with the client and its command as the current client.
func debugSegfault(x *Exec, argv [][]byte) {
	page, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		x.Err("ERR " + err.Error())
		return
	}
	defer func() {
		r := recover()
		ci := crashInfo{sig: syscall.SIGSEGV, loop: x.loop, cl: x.cl, argv: argv}
		if e, ok := r.(interface{ Addr() uintptr }); ok {
			ci.addr, ci.hasAddr = e.Addr(), true
		}
		x.srv.crashReport(ci)
	}()
	debug.SetPanicOnFault(true)
	page[0] = 'x'
}

// debugPanic is DEBUG PANIC: Redis's serverPanic with its message, here a
// real Go panic on the loop, caught and reported by crashFromPanic.
func debugPanic() {
	panic(fmt.Sprintf("DEBUG PANIC called at Unix time %d", time.Now().Unix()))
}
