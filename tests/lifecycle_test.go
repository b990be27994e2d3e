package tests

// Start, stop and crash like redis-server: the start banner, SHUTDOWN and
// the shutdown signals, the crash report, oom-score-adj.

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startRaw starts redshard-server on a free port with args and returns the
// process and a channel of its stdout lines (closed at EOF). The caller
// kills it.
func startRaw(t *testing.T, args ...string) (*exec.Cmd, int, <-chan string) {
	t.Helper()
	port := freePort(t)
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir()}, args...)
	cmd := exec.Command(serverBin, all...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, port, lines
}

// TestStartBanner: with always-show-logo the banner carries Redis's
// " PID: <pid>" and "Port: <port>" lines, and it is printed only once the
// port accepts connections (the Redis test harness connects as soon as it
// sees the PID line).
func TestStartBanner(t *testing.T) {
	cmd, port, lines := startRaw(t, "--always-show-logo", "yes")
	pidLine := regexp.MustCompile(` PID: (\d+)$`)
	var sawPort bool
	deadline := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("server exited before its PID line")
			}
			if strings.HasSuffix(l, "Port: "+strconv.Itoa(port)) {
				sawPort = true
			}
			m := pidLine.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
			if err != nil {
				t.Fatalf("PID line printed before the port listens: %v", err)
			}
			c.Close()
			if m[1] != strconv.Itoa(cmd.Process.Pid) {
				t.Fatalf("PID line %q, process %d", l, cmd.Process.Pid)
			}
			if !sawPort {
				t.Fatalf("no \"Port: %d\" line before the PID line", port)
			}
			return
		case <-deadline:
			t.Fatal("no PID line within 15s")
		}
	}
}

// TestStartNoBanner: without always-show-logo and with stdout not a
// terminal, Redis logs the one-line form instead of the banner.
func TestStartNoBanner(t *testing.T) {
	_, port, lines := startRaw(t)
	want := "Running mode=standalone, port=" + strconv.Itoa(port) + "."
	deadline := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("server exited")
			}
			if strings.Contains(l, " PID: ") {
				t.Fatalf("banner printed without always-show-logo: %q", l)
			}
			if strings.HasSuffix(l, " * "+want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q line within 15s", want)
		}
	}
}

// waitLog waits up to 5s for the server's log to contain line.
func (s *server) waitLog(t *testing.T, line string) {
	t.Helper()
	waitFor(t, "log line "+strconv.Quote(line), func() bool { return strings.Contains(s.log.String(), line) })
}

// TestShutdownIsPrompt: SIGTERM and SHUTDOWN exit as soon as the AOF is
// flushed and fsynced (they used to wait for gnet's 500 ms poll), and the
// last acknowledged write is in the log.
func TestShutdownIsPrompt(t *testing.T) {
	for _, how := range []string{"SIGTERM", "SHUTDOWN"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			s := startServerIn(t, dir, "--appendonly", "yes", "--appendfsync", "always")
			rc := s.raw(t)
			rc.do(resp("SET", "k", "v1"), "+OK\r\n")
			start := time.Now()
			if how == "SIGTERM" {
				_ = s.cmd.Process.Signal(syscall.SIGTERM)
			} else {
				rc.write(resp("SHUTDOWN"))
			}
			if err := s.exited(10 * time.Second); err != nil {
				t.Fatalf("exit status %v, want 0", err)
			}
			// From the decision to the last line: the flush and fsync, and
			// no more (the old exit waited for gnet's 500 ms poll here).
			// The log's clock, so that the scheduling of a loaded machine
			// around the signal and the process's end does not count.
			if gap := logGap(t, s.log.String(), "# User requested shutdown...", "# Redis is now ready to exit, bye bye..."); gap > 400*time.Millisecond {
				t.Errorf("%s: %v from \"User requested shutdown\" to \"bye bye\"", how, gap)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s took %v to exit", how, took)
			}
			for _, l := range []string{"User requested shutdown...", "Calling fsync() on the AOF file.",
				"Redis is now ready to exit, bye bye..."} {
				if !strings.Contains(s.log.String(), l) {
					t.Errorf("log lacks %q:\n%s", l, s.log.String())
				}
			}
			s2 := startServerIn(t, dir, "--appendonly", "yes")
			s2.raw(t).do(resp("GET", "k"), bulk("v1"))
		})
	}
}

// logGap is the time between the log lines that end with a and b.
func logGap(t *testing.T, log, a, b string) time.Duration {
	t.Helper()
	at := func(suffix string) time.Time {
		for _, l := range strings.Split(log, "\n") {
			if !strings.HasSuffix(l, suffix) {
				continue
			}
			// "<pid>:M 01 Dec 2026 19:10:59.391 # ..."
			f := strings.Fields(l)
			if len(f) < 5 {
				break
			}
			ts, err := time.Parse("02 Jan 2006 15:04:05.000", strings.Join(f[1:5], " "))
			if err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			return ts
		}
		t.Fatalf("no log line ending with %q:\n%s", suffix, log)
		return time.Time{}
	}
	return at(b).Sub(at(a))
}

// TestShutdownSave: redshard cannot write an RDB, so a shutdown asked to
// save fails as a Redis save that fails: SHUTDOWN SAVE gets Redis's error
// and the server goes on; FORCE exits anyway.
// breakSaves points dir at a directory that is then removed: every save
// after it fails, as on a disk that went away.
func breakSaves(t *testing.T, s *server, rc *rawConn) {
	t.Helper()
	gone := filepath.Join(s.Dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	rc.do(resp("CONFIG", "SET", "dir", gone), "+OK\r\n")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownSave: SHUTDOWN SAVE writes dbfilename and exits, and a
// restart loads it; a save that fails keeps the server running unless
// FORCE is given.
func TestShutdownSave(t *testing.T) {
	s := startServer(t, "--enable-protected-configs", "yes")
	rc := s.raw(t)
	rc.do(resp("SET", "k", "v"), "+OK\r\n")
	dir := s.Dir
	breakSaves(t, s, rc)
	rc.do(resp("SHUTDOWN", "SAVE"), "-ERR Errors trying to SHUTDOWN. Check logs.\r\n")
	s.waitLog(t, "# Error trying to save the DB, can't exit.")
	rc.do(resp("PING"), "+PONG\r\n")
	rc.do(resp("SHUTDOWN", "NOSAVE", "SAVE"), "-ERR syntax error\r\n")
	rc.do(resp("SHUTDOWN", "ABORT", "NOW"), "-ERR syntax error\r\n")
	rc.write(resp("SHUTDOWN", "SAVE", "NOW", "FORCE"))
	rc.expectClosed()
	if err := s.exited(10 * time.Second); err != nil {
		t.Fatalf("exit status %v, want 0", err)
	}
	if !strings.Contains(s.log.String(), "# Error trying to save the DB. Exit anyway.") {
		t.Errorf("log:\n%s", s.log.String())
	}
	// A save that works: the file is there, and a restart loads it.
	s = startServerIn(t, dir)
	rc = s.raw(t)
	rc.do(resp("SET", "k", "v2"), "+OK\r\n")
	rc.write(resp("SHUTDOWN", "SAVE"))
	rc.expectClosed()
	if err := s.exited(10 * time.Second); err != nil {
		t.Fatalf("exit status %v, want 0", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatalf("no dump.rdb after SHUTDOWN SAVE: %v\n%s", err, s.log.String())
	}
	s = startServerIn(t, dir)
	s.raw(t).do(resp("GET", "k"), bulk("v2"))
}

// TestShutdownAbortSignal: a SIGTERM held by DEBUG PAUSE-CRON is cancelled
// by SHUTDOWN ABORT (Redis's "SHUTDOWN ABORT can cancel SIGTERM"); a second
// SIGTERM goes through once the cron runs again.
func TestShutdownAbortSignal(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	rc := s.raw(t)
	rc.do(resp("SHUTDOWN", "ABORT"), "-ERR No shutdown in progress.\r\n")
	rc.do(resp("DEBUG", "PAUSE-CRON", "1"), "+OK\r\n")
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	s.waitLog(t, "# Received SIGTERM scheduling shutdown...")
	rc.do(resp("SHUTDOWN", "ABORT"), "+OK\r\n")
	s.waitLog(t, "* Shutdown manually aborted.")
	rc.do(resp("DEBUG", "PAUSE-CRON", "0"), "+OK\r\n")
	rc.do(resp("PING"), "+PONG\r\n")
	rc.do(resp("SHUTDOWN", "ABORT"), "-ERR No shutdown in progress.\r\n")

	rc.do(resp("DEBUG", "PAUSE-CRON", "1"), "+OK\r\n")
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, "a second SIGTERM", func() bool {
		return strings.Count(s.log.String(), "Received SIGTERM scheduling shutdown...") == 2
	})
	rc.do(resp("PING"), "+PONG\r\n") // held while the cron is paused
	rc.write(resp("DEBUG", "PAUSE-CRON", "0"))
	if err := s.exited(10 * time.Second); err != nil {
		t.Fatalf("exit status %v, want 0", err)
	}
}

// TestShutdownOnSignalOptions: shutdown-on-sigterm and shutdown-on-sigint
// take Redis's flags; "save" makes the signal's shutdown fail (no RDB) and
// the server go on, "save force" exits anyway; a second SIGINT while a
// shutdown is pending exits at once with status 1.
func TestShutdownOnSignalOptions(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes", "--shutdown-on-sigint", "nosave", "now", "--enable-protected-configs", "yes")
	rc := s.raw(t)
	breakSaves(t, s, rc)
	rc.do(resp("CONFIG", "GET", "shutdown-on-sigint"), "*2\r\n"+bulk("shutdown-on-sigint")+bulk("nosave now"))
	rc.do(resp("CONFIG", "SET", "shutdown-on-sigterm", "save nosave"),
		"-ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigterm') - shutdown options SAVE and NOSAVE can't be used simultaneously\r\n")
	rc.do(resp("CONFIG", "SET", "shutdown-on-sigterm", "later"),
		"-ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigterm') - argument(s) must be one of the following: default, save, nosave, now, force\r\n")
	rc.do(resp("CONFIG", "SET", "shutdown-on-sigterm", "SAVE"), "+OK\r\n")
	rc.do(resp("CONFIG", "GET", "shutdown-on-sigterm"), "*2\r\n"+bulk("shutdown-on-sigterm")+bulk("save"))
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	s.waitLog(t, "# Error trying to save the DB, can't exit.")
	rc.do(resp("PING"), "+PONG\r\n")

	rc.do(resp("DEBUG", "PAUSE-CRON", "1"), "+OK\r\n")
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	s.waitLog(t, "# Received SIGINT scheduling shutdown...")
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	err := s.exited(10 * time.Second)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit status after a second SIGINT: %v, want 1", err)
	}
	if !strings.Contains(s.log.String(), "# You insist... exiting now.") {
		t.Errorf("log:\n%s", s.log.String())
	}

	s = startServer(t, "--shutdown-on-sigterm", "save force", "--enable-protected-configs", "yes")
	breakSaves(t, s, s.raw(t))
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.exited(10 * time.Second); err != nil {
		t.Fatalf("exit status %v, want 0", err)
	}
	if !strings.Contains(s.log.String(), "# Error trying to save the DB. Exit anyway.") {
		t.Errorf("log:\n%s", s.log.String())
	}
}

// oomScoreAdj reads /proc/<pid>/oom_score_adj.
func oomScoreAdj(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/oom_score_adj")
	if err != nil {
		t.Skipf("no oom_score_adj: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOOMScoreAdj: oom-score-adj and oom-score-adj-values set the process's
// oom_score_adj as Redis 7.0 does (relative to the score it started with,
// or absolute, clamped to 1000), at start, on CONFIG SET and on REPLICAOF
// (the replica class), and "no" restores the original score.
func TestOOMScoreAdj(t *testing.T) {
	base := oomScoreAdj(t, os.Getpid()) // the server inherits ours
	if base > 900 {
		t.Skipf("oom_score_adj %d leaves no room", base)
	}
	s := startServer(t, "--oom-score-adj-values", "10 20 30", "--oom-score-adj", "relative")
	pid := s.cmd.Process.Pid
	if got := oomScoreAdj(t, pid); got != base+10 {
		t.Fatalf("at start: oom_score_adj %d, want %d", got, base+10)
	}
	rc := s.raw(t)
	rc.do(resp("CONFIG", "GET", "oom-score-adj"), "*2\r\n"+bulk("oom-score-adj")+bulk("yes"))
	rc.do(resp("CONFIG", "SET", "oom-score-adj-values", "15 20 30"), "+OK\r\n")
	if got := oomScoreAdj(t, pid); got != base+15 {
		t.Errorf("relative 15: oom_score_adj %d, want %d", got, base+15)
	}
	// A replica takes the second class, and REPLICAOF NO ONE brings the
	// first back (the master it points at need not exist).
	rc.do(resp("REPLICAOF", "127.0.0.1", "1"), "+OK\r\n")
	if got := oomScoreAdj(t, pid); got != base+20 {
		t.Errorf("replica: oom_score_adj %d, want %d", got, base+20)
	}
	rc.do(resp("REPLICAOF", "NO", "ONE"), "+OK\r\n")
	if got := oomScoreAdj(t, pid); got != base+15 {
		t.Errorf("master again: oom_score_adj %d, want %d", got, base+15)
	}
	rc.do(resp("CONFIG", "SET", "oom-score-adj", "absolute", "oom-score-adj-values", "950 950 950"), "+OK\r\n")
	if got := oomScoreAdj(t, pid); got != 950 {
		t.Errorf("absolute 950: oom_score_adj %d, want 950", got)
	}
	rc.do(resp("CONFIG", "SET", "oom-score-adj", "relative", "oom-score-adj-values", "990 990 990"), "+OK\r\n")
	if want := min(base+990, 1000); oomScoreAdj(t, pid) != want {
		t.Errorf("relative 990: oom_score_adj %d, want %d (clamped)", oomScoreAdj(t, pid), want)
	}
	rc.do(resp("CONFIG", "SET", "oom-score-adj-values", "2001 2001 2001"),
		"-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - Invalid oom-score-adj-values, elements must be between -2000 and 2000.\r\n")
	rc.do(resp("CONFIG", "SET", "oom-score-adj", "no"), "+OK\r\n")
	if got := oomScoreAdj(t, pid); got != base {
		t.Errorf("after oom-score-adj no: oom_score_adj %d, want %d", got, base)
	}
	// Disabled, the values don't touch the score.
	rc.do(resp("CONFIG", "SET", "oom-score-adj-values", "40 50 60"), "+OK\r\n")
	if got := oomScoreAdj(t, pid); got != base {
		t.Errorf("values set while disabled: oom_score_adj %d, want %d", got, base)
	}
	const warning = "# The oom-score-adj-values configuration may not work for non-privileged processes! Please consult the documentation."
	if strings.Contains(s.log.String(), warning) {
		t.Errorf("warning for increasing values")
	}
	rc.do(resp("CONFIG", "SET", "oom-score-adj-values", "60 50 40"), "+OK\r\n")
	s.waitLog(t, warning)
}

// noCores keeps a server that is about to crash from dumping a core.
func noCores(s *server) {
	_ = unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil)
}

// diedBy checks that the server died by sig, as Redis does after its
// crash report.
func diedBy(t *testing.T, s *server, sig syscall.Signal) {
	t.Helper()
	err := s.exited(10 * time.Second)
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("exit status %v, want death by %v", err, sig)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != sig {
		t.Fatalf("exit status %v, want death by %v", err, sig)
	}
}

// inOrder checks that log holds each of parts, in this order.
func inOrder(t *testing.T, log string, parts ...string) {
	t.Helper()
	rest := log
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Fatalf("crash report lacks %q (in this place)\n--- log ---\n%s", p, log)
		}
		rest = rest[i+len(p):]
	}
}

// TestCrashReportDebugSegfault: DEBUG SEGFAULT (a real write to a
// read-only page) writes Redis's crash report, with the stack of every
// goroutine (both loops), INFO, the client list and the client being
// served with its command, then the process dies by SIGSEGV.
func TestCrashReportDebugSegfault(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes", "--shards", "2")
	noCores(s)
	rc := s.raw(t)
	rc.do(resp("SET", "foo", "bar"), "+OK\r\n")
	rc.write(resp("DEBUG", "SEGFAULT"))
	rc.expectClosed()
	diedBy(t, s, syscall.SIGSEGV)
	log := s.log.String()
	inOrder(t, log,
		"=== REDSHARD BUG REPORT START: Cut & paste starting from here ===",
		"# Redis 7.0.15 crashed by signal: 11\n",
		"# Accessing address: 0x",
		"\n------ STACK TRACE ------\n",
		"server.debugSegfault(",
		"\n------ INFO OUTPUT ------\n",
		"redis_version:7.0.15",
		"db0:keys=1,",
		"\n------ CLIENT LIST OUTPUT ------\nid=",
		"\n------ CURRENT CLIENT INFO ------\nid=", " cmd=debug ",
		"argv[0]: '\"DEBUG\"'\nargv[1]: '\"SEGFAULT\"'\n",
		"=== REDSHARD BUG REPORT END. Make sure to include from START to END. ===")
	if n := strings.Count(log, "gnet/v2.(*eventloop).orbit("); n < 2 {
		t.Errorf("the stack trace shows %d event loops, want both", n)
	}
}

// TestCrashReportSignals: SIGABRT and SIGSEGV sent to the process write the
// report (no current client: none is being served) and the process dies by
// the signal; with crash-log-enabled no it dies without a report.
func TestCrashReportSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGABRT, syscall.SIGSEGV} {
		s := startServer(t)
		noCores(s)
		s.raw(t).do(resp("PING"), "+PONG\r\n")
		_ = s.cmd.Process.Signal(sig)
		diedBy(t, s, sig)
		log := s.log.String()
		inOrder(t, log, "# Redis 7.0.15 crashed by signal: "+strconv.Itoa(int(sig))+"\n",
			"\n------ STACK TRACE ------\n", "\n------ INFO OUTPUT ------\n", "process_id:",
			"\n------ CLIENT LIST OUTPUT ------\n", "=== REDSHARD BUG REPORT END.")
		if strings.Contains(log, "CURRENT CLIENT INFO") {
			t.Errorf("%v: a current client while none is served:\n%s", sig, log)
		}
	}
	s := startServer(t, "--crash-log-enabled", "no")
	noCores(s)
	_ = s.cmd.Process.Signal(syscall.SIGABRT)
	diedBy(t, s, syscall.SIGABRT)
	if strings.Contains(s.log.String(), "crashed by signal") {
		t.Errorf("crash report with crash-log-enabled no:\n%s", s.log.String())
	}
}

// TestCrashReportDebugPanic: DEBUG PANIC is Redis's serverPanic: the
// "Guru Meditation" lines, the report, and death by SIGABRT.
func TestCrashReportDebugPanic(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	noCores(s)
	rc := s.raw(t)
	rc.write(resp("DEBUG", "PANIC"))
	rc.expectClosed()
	diedBy(t, s, syscall.SIGABRT)
	inOrder(t, s.log.String(), "=== REDSHARD BUG REPORT START",
		"# !!! Software Failure. Press left mouse button to continue\n",
		"# Guru Meditation: DEBUG PANIC called at Unix time ", " #server/crash.go:",
		"\n------ STACK TRACE ------\n", "\n------ INFO OUTPUT ------\n",
		"\n------ CURRENT CLIENT INFO ------\n", "argv[1]: '\"PANIC\"'", "=== REDSHARD BUG REPORT END.")
}

// TestGoFatalOutputInLogFile: what the Go runtime prints when it dies on
// its own (here the goroutine dump of SIGQUIT; an unrecovered panic or a
// fatal error takes the same path) goes to the log file as well as to
// standard error.
func TestGoFatalOutputInLogFile(t *testing.T) {
	s := startServer(t, "--logfile", "server.log")
	noCores(s)
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	_ = s.exited(10 * time.Second)
	b, err := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	if log := string(b); !strings.Contains(log, "SIGQUIT: quit") || !strings.Contains(log, "goroutine ") {
		t.Fatalf("the log file lacks the runtime's dump:\n%s", log)
	}
}

// TestSIGTERMDuringLoading: a SIGTERM while the AOF loads is logged with
// Redis's words for it and ends the process (status 0) without saving.
func TestSIGTERMDuringLoading(t *testing.T) {
	dir := t.TempDir()
	piWriteRedisAOF(t, dir, 300000)
	s := piStartNoWait(t, dir, "--appendonly", "yes", "--shards", "2", "--shutdown-on-sigterm", "save")
	var c net.Conn
	waitFor(t, "the port", func() bool {
		var err error
		c, err = net.DialTimeout("tcp", s.Addr, 100*time.Millisecond)
		return err == nil
	})
	rc := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
	t.Cleanup(func() { c.Close() })
	rc.write(resp("GET", "key:1"))
	if l := rc.line(); l != "-LOADING Redis is loading the dataset in memory" {
		t.Skipf("the load ended before the test could see it (%q)", l)
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.exited(10 * time.Second); err != nil {
		t.Fatalf("exit status %v, want 0\n%s", err, s.log.String())
	}
	log := s.log.String()
	if strings.Contains(log, "DB loaded from append only file") {
		t.Skip("the load ended before the signal")
	}
	// shutdown-on-sigterm save is overridden: a half-loaded data set is never saved.
	inOrder(t, log, "# Received shutdown signal during loading, scheduling shutdown.",
		"# User requested shutdown...", "# Redis is now ready to exit, bye bye...")
	if strings.Contains(log, "Saving the final RDB snapshot") {
		t.Errorf("a save was attempted while loading:\n%s", log)
	}
}
