package tests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/redshard/redshard/shard"
)

// serverBin is the redshard-server binary built once by TestMain, and
// checkAOFBin the redshard-check-aof binary built beside it.
var serverBin, checkAOFBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "redshard-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBin = filepath.Join(dir, "redshard-server")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goBin, "build", "-o", serverBin, "github.com/redshard/redshard/cmd/redshard-server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: building redshard-server:", err)
		return 1
	}
	checkAOFBin = filepath.Join(dir, "redshard-check-aof")
	build = exec.Command(goBin, "build", "-o", checkAOFBin, "github.com/redshard/redshard/cmd/redshard-check-aof")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: building redshard-check-aof:", err)
		return 1
	}
	return m.Run()
}

// server is a running redshard-server process.
type server struct {
	t    testing.TB
	Port int
	Addr string
	Dir  string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, valid after done

	stopped bool // stop has run
}

// syncBuffer collects the server's stdout and stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort returns a port on 127.0.0.1 that was free a moment ago: one
// the system picks, or with REDSHARD_TEST_PORTS=lo-hi one in that range
// (for machines where tests must keep to some ports).
func freePort(t testing.TB) int {
	t.Helper()
	if lo, hi, ok := strings.Cut(os.Getenv("REDSHARD_TEST_PORTS"), "-"); ok {
		l, _ := strconv.Atoi(lo)
		h, _ := strconv.Atoi(hi)
		for i := 0; l > 0 && h >= l && i < 1000; i++ {
			p := l + mrand.Intn(h-l+1)
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
				ln.Close()
				return p
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startServer starts redshard-server on a free 127.0.0.1 port with no
// persistence and a private directory, plus args (e.g. "--shards", "4"),
// waits until it answers PING, and stops it (SIGTERM, then SIGKILL) when the
// test ends; if the test failed, the server's log is reported.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	return startServerIn(t, "", args...)
}

// startServerIn is startServer on the data directory dir ("" for a new
// private one), so that a test can restart a server on the files an
// earlier one left.
func startServerIn(t testing.TB, dir string, args ...string) *server {
	t.Helper()
	var last *server
	for attempt := 0; attempt < 3; attempt++ {
		s, err := tryStart(t, dir, args)
		if err == nil {
			return s
		}
		last = s
		if s != nil && strings.Contains(strings.ToLower(s.log.String()), "address already in use") {
			continue // lost a race for the port; pick another
		}
		if s != nil && strings.Contains(s.log.String(), "could not reach every event loop") {
			// Seen once in CI under load (2026-12-01), not understood yet:
			// the start-up probe found only some loops in 10 s. Logged, and
			// tried again on a new port, so that the tests still run.
			t.Logf("start-up probe failed, trying again: %v", err)
			continue
		}
		t.Fatalf("starting redshard-server %s: %v\n--- server log ---\n%s", strings.Join(args, " "), err, s.log.String())
	}
	t.Fatalf("starting redshard-server: no free port after 3 attempts\n--- server log ---\n%s", last.log.String())
	return nil
}

func tryStart(t testing.TB, dir string, extra []string) (*server, error) {
	if dir == "" {
		dir = t.TempDir()
	}
	port := freePort(t)
	var args []string
	if len(extra) > 0 && strings.HasPrefix(extra[0], confPrefix) {
		// a config file comes first, as redis-server takes it
		args = append(args, strings.TrimPrefix(extra[0], confPrefix))
		extra = extra[1:]
	}
	args = append(args,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
	)
	args = append(args, extra...)
	s := &server{
		t:    t,
		Port: port,
		Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Dir:  dir,
		log:  &syncBuffer{},
		done: make(chan struct{}),
	}
	s.cmd = exec.Command(serverBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return s, err
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(15 * time.Second); err != nil {
		s.kill()
		return s, err
	}
	t.Cleanup(s.stop)
	return s, nil
}

// confPrefix marks startServer's first argument as a config file path.
const confPrefix = "\x00config:"

func configFileArg(path string) string { return confPrefix + path }

// waitReady waits until the server answers PING with +PONG.
func (s *server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("server exited: %v", s.err)
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err == nil && line == "+PONG\r\n" {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within %v", timeout)
}

func (s *server) kill() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-s.done
}

// kill9 kills the server with SIGKILL (a crash), waits for it to exit, and
// leaves nothing for stop to do.
func (s *server) kill9() {
	s.stopped = true
	s.kill()
}

// exited waits up to d for the process to exit on its own (SHUTDOWN) and
// returns its exit status; it fails the test and kills the process if it
// does not exit. stop has nothing left to do afterwards.
func (s *server) exited(d time.Duration) error {
	s.t.Helper()
	s.stopped = true
	select {
	case <-s.done:
		return s.err
	case <-time.After(d):
		s.t.Errorf("redshard-server still running %v after it was asked to exit", d)
		s.kill()
		return s.err
	}
}

// stop sends SIGTERM to the server's PID and waits for it to exit (SIGKILL
// after 10 seconds). A server that needs SIGKILL, or exits non-zero, fails
// the test: Redis exits 0 on SIGTERM.
func (s *server) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	t := s.t
	select {
	case <-s.done:
		t.Errorf("redshard-server exited before the end of the test: %v", s.err)
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
			if s.err != nil {
				t.Errorf("redshard-server exited with %v after SIGTERM (Redis exits 0)", s.err)
			}
		case <-time.After(10 * time.Second):
			// SIGQUIT makes the Go runtime print every goroutine's stack
			// to the log before we kill the process.
			t.Errorf("redshard-server did not exit within 10s of SIGTERM; goroutine dump in the log, then killed")
			_ = s.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-s.done:
			case <-time.After(3 * time.Second):
				s.kill()
			}
		}
	}
	if t.Failed() {
		t.Logf("--- redshard-server log (%s) ---\n%s", strings.Join(s.cmd.Args[1:], " "), s.log.String())
	}
}

// client returns a go-redis client speaking RESP protocol proto (2 or 3).
// It sends only HELLO on connect (no CLIENT SETINFO / MAINT_NOTIFICATIONS),
// so that the commands under test are the only ones the server sees.
func (s *server) client(t testing.TB, proto int) *redis.Client {
	t.Helper()
	return s.clientWith(t, func(o *redis.Options) { o.Protocol = proto })
}

// clientWith is client with options changed by set (RESP2 unless set says
// otherwise).
func (s *server) clientWith(t testing.TB, set func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{
		Addr:            s.Addr,
		Protocol:        2,
		DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
		DialTimeout:  5 * time.Second,
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 30 * time.Second,
		PoolSize:     32,
		MaxRetries:   -1, // a failure must show, not be retried away
	}
	set(o)
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rawConn is a plain TCP connection for exact bytes.
type rawConn struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

func (s *server) raw(t testing.TB) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, r: bufio.NewReaderSize(c, 64<<10)}
}

func (rc *rawConn) write(b string) {
	rc.t.Helper()
	_ = rc.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.c.Write([]byte(b)); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// readN reads exactly n bytes.
func (rc *rawConn) readN(n int) string {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, n)
	if got, err := io.ReadFull(rc.r, buf); err != nil {
		rc.t.Fatalf("read %d bytes: got %q: %v", n, buf[:got], err)
	}
	return string(buf)
}

// expect reads len(want) bytes and compares them with want.
func (rc *rawConn) expect(want string) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, len(want))
	n, err := io.ReadFull(rc.r, buf)
	if string(buf[:n]) != want {
		rc.t.Fatalf("reply:\n got  %q (err %v)\n want %q", buf[:n], err, want)
	}
}

// do writes b and expects exactly want back.
func (rc *rawConn) do(b, want string) {
	rc.t.Helper()
	rc.write(b)
	rc.expect(want)
}

// expectClosed checks that the server closes the connection with nothing
// more to read.
func (rc *rawConn) expectClosed() {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := rc.r.ReadByte()
	if err == nil {
		rest, _ := rc.r.Peek(rc.r.Buffered())
		rc.t.Fatalf("connection still open: read %q", append([]byte{b}, rest...))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		rc.t.Fatalf("connection not closed within 5s")
	}
}

// expectSilent checks that nothing arrives for d and the connection stays
// open.
func (rc *rawConn) expectSilent(d time.Duration) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(d))
	b, err := rc.r.ReadByte()
	if err == nil {
		rc.t.Fatalf("unexpected reply byte %q", b)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		rc.t.Fatalf("connection closed: %v", err)
	}
}

// resp encodes a command as a RESP multibulk request.
func resp(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// bulk encodes a RESP bulk string reply.
func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Expected replies in step tables. A string, int64 or []any is compared with
// what go-redis returns (status and bulk strings both arrive as string);
// errReply is an error reply's exact text; null is the null reply.
type (
	errReply string
	nullT    struct{}
)

var null = nullT{}

type step struct {
	args []any
	want any
}

// cmd builds a step: cmd("SET", "k", "v").is("OK").
func cmd(args ...any) step { return step{args: args} }

func (s step) is(want any) step { s.want = want; return s }

// runSteps runs each step in order on c and checks its reply.
func runSteps(t *testing.T, c *redis.Client, steps []step) {
	t.Helper()
	ctx := ctxT(t)
	for _, s := range steps {
		checkReply(t, c.Do(ctx, s.args...), s.args, s.want)
	}
}

func checkReply(t testing.TB, r *redis.Cmd, args []any, want any) {
	t.Helper()
	got, err := r.Result()
	switch w := want.(type) {
	case errReply:
		if err == nil || err == redis.Nil || err.Error() != string(w) {
			t.Errorf("%v:\n got  %#v (err %v)\n want error %q", args, got, err, string(w))
		}
	case nullT:
		if err != redis.Nil {
			t.Errorf("%v:\n got  %#v (err %v)\n want null", args, got, err)
		}
	case int:
		checkReply(t, r, args, int64(w))
	default:
		if err != nil {
			t.Errorf("%v:\n got  error %v\n want %#v", args, err, want)
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\n got  %#v\n want %#v", args, got, want)
		}
	}
}

// spreadKeys returns perShard keys named prefix+N on each of n shards, so
// that a test knows its keys really are on different shards.
func spreadKeys(prefix string, n, perShard int) []string {
	count := make([]int, n)
	var keys []string
	for i := 0; len(keys) < n*perShard; i++ {
		k := prefix + strconv.Itoa(i)
		sh := shard.ShardOf([]byte(k), n)
		if count[sh] < perShard {
			count[sh]++
			keys = append(keys, k)
		}
	}
	return keys
}

// shardsOf returns how many distinct shards of n the keys map to.
func shardsOf(n int, keys ...string) int {
	seen := map[int]bool{}
	for _, k := range keys {
		seen[shard.ShardOf([]byte(k), n)] = true
	}
	return len(seen)
}

// bulk reads a bulk string reply and returns its payload.
func (rc *rawConn) bulk() string {
	rc.t.Helper()
	l := rc.line()
	n, err := strconv.Atoi(strings.TrimPrefix(l, "$"))
	if err != nil || !strings.HasPrefix(l, "$") || n < 0 {
		rc.t.Fatalf("want a bulk string, got %q", l)
	}
	return rc.readN(n + 2)[:n]
}

// helloReply reads the reply of a HELLO (any protocol) and returns its id
// field as sent (":<id>" in RESP3).
func (rc *rawConn) helloReply() string {
	rc.t.Helper()
	id := ""
	for l := ""; l != "*0"; { // up to the empty modules array, the last field
		if l = rc.line(); l == "id" {
			id = rc.line()
		}
	}
	return id
}

// line reads up to "\r\n" and returns the line without it.
func (rc *rawConn) line() string {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := rc.r.ReadString('\n')
	if err != nil || !strings.HasSuffix(l, "\r\n") {
		rc.t.Fatalf("read line: %q, %v", l, err)
	}
	return l[:len(l)-2]
}
