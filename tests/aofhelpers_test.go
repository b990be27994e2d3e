package tests

// Helpers for the durability tests (crash_test.go, aof_test.go): a RESP
// connection that reports errors instead of failing the test (the server
// may be killed under it), the AOF folder's files, and a redis-server
// process for the interoperability tests.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// aofArgs are the flags for a server logging with appendfsync fsync.
func aofArgs(fsync string, more ...string) []string {
	return append([]string{"--appendonly", "yes", "--appendfsync", fsync}, more...)
}

// Files of the AOF folder as redshard names them by default.
const (
	aofDirName  = "appendonlydir"
	incr1Name   = "appendonly.aof.1.incr.aof"
	manifestNme = "appendonly.aof.manifest"
)

func aofDir(dataDir string) string     { return filepath.Join(dataDir, aofDirName) }
func manifestOf(dataDir string) string { return filepath.Join(dataDir, aofDirName, manifestNme) }
func incrFileOf(dataDir string) string { return filepath.Join(dataDir, aofDirName, incr1Name) }
func fmtArgs(argv []string) string     { return strings.Join(argv, " ") }
func itoa(n int) string                { return strconv.Itoa(n) }
func i64toa(n int64) string            { return strconv.FormatInt(n, 10) }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// copyTree copies the regular files and folders under src to dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// ---------------------------------------------------------------------------
// A RESP connection that returns errors
// ---------------------------------------------------------------------------

// rreply is one RESP2 reply.
type rreply struct {
	typ byte   // '+', '-', ':', '$' or '*'
	s   string // status, error text or bulk
	n   int64  // integer; bulk or array length, -1 for null
	arr []rreply
}

// String renders a reply compactly: +OK, -ERR ..., :5, "bulk", (nil), [a b].
func (r rreply) String() string {
	switch r.typ {
	case '+', '-':
		return string(r.typ) + r.s
	case ':':
		return ":" + i64toa(r.n)
	case '$':
		if r.n < 0 {
			return "(nil)"
		}
		return strconv.Quote(r.s)
	case '*':
		if r.n < 0 {
			return "(nil array)"
		}
		parts := make([]string, len(r.arr))
		for i, a := range r.arr {
			parts[i] = a.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("?%c", r.typ)
}

func (r rreply) isNull() bool { return (r.typ == '$' || r.typ == '*') && r.n < 0 }

// pconn is a RESP connection for pipelines; its methods return errors
// rather than failing the test, because the server may die under it.
type pconn struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte
	// timeout bounds each send and each reply read (default 20s).
	timeout time.Duration
}

func dialP(addr string) (*pconn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &pconn{c: c, r: bufio.NewReaderSize(c, 64<<10), timeout: 20 * time.Second}, nil
}

func mustDialP(t testing.TB, addr string) *pconn {
	t.Helper()
	p, err := dialP(addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { p.close() })
	return p
}

func (p *pconn) close() { _ = p.c.Close() }

// send writes the commands in one write.
func (p *pconn) send(cmds ...[]string) error {
	p.buf = p.buf[:0]
	for _, argv := range cmds {
		p.buf = append(p.buf, '*')
		p.buf = strconv.AppendInt(p.buf, int64(len(argv)), 10)
		p.buf = append(p.buf, '\r', '\n')
		for _, a := range argv {
			p.buf = append(p.buf, '$')
			p.buf = strconv.AppendInt(p.buf, int64(len(a)), 10)
			p.buf = append(p.buf, '\r', '\n')
			p.buf = append(p.buf, a...)
			p.buf = append(p.buf, '\r', '\n')
		}
	}
	_ = p.c.SetWriteDeadline(time.Now().Add(p.timeout))
	_, err := p.c.Write(p.buf)
	return err
}

// recv reads one reply, waiting at most p.timeout.
func (p *pconn) recv() (rreply, error) {
	return p.recvWithin(p.timeout)
}

func (p *pconn) recvWithin(d time.Duration) (rreply, error) {
	_ = p.c.SetReadDeadline(time.Now().Add(d))
	return readRReply(p.r)
}

// do sends one command and reads its reply.
func (p *pconn) do(argv ...string) (rreply, error) {
	if err := p.send(argv); err != nil {
		return rreply{}, err
	}
	return p.recv()
}

// mustDo is do that fails the test on a connection error.
func (p *pconn) mustDo(t testing.TB, argv ...string) rreply {
	t.Helper()
	r, err := p.do(argv...)
	if err != nil {
		t.Fatalf("%s: %v", fmtArgs(argv), err)
	}
	return r
}

func readRReply(r *bufio.Reader) (rreply, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return rreply{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return rreply{}, fmt.Errorf("bad reply line %q", line)
	}
	typ, body := line[0], line[1:len(line)-2]
	switch typ {
	case '+', '-':
		return rreply{typ: typ, s: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return rreply{}, fmt.Errorf("bad integer reply %q", line)
		}
		return rreply{typ: typ, n: n}, nil
	case '$':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return rreply{}, fmt.Errorf("bad bulk length %q", line)
		}
		if n < 0 {
			return rreply{typ: typ, n: -1}, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return rreply{}, err
		}
		return rreply{typ: typ, n: n, s: string(b[:n])}, nil
	case '*':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return rreply{}, fmt.Errorf("bad array length %q", line)
		}
		rep := rreply{typ: typ, n: n}
		for i := int64(0); i < n; i++ {
			e, err := readRReply(r)
			if err != nil {
				return rreply{}, err
			}
			rep.arr = append(rep.arr, e)
		}
		return rep, nil
	}
	return rreply{}, fmt.Errorf("unknown reply type in %q", line)
}

// ---------------------------------------------------------------------------
// Reading a whole data set
// ---------------------------------------------------------------------------

// kstate is a string key's state: its value and its absolute expiry in
// Unix ms (PEXPIRETIME; -1 for none).
type kstate struct {
	val string
	at  int64
}

// dumpDBs returns every key of the databases dbs of the server at addr
// (redshard or redis-server) with its value and PEXPIRETIME. Only string
// keys are supported.
func dumpDBs(t testing.TB, addr string, dbs ...int) map[int]map[string]kstate {
	t.Helper()
	p := mustDialP(t, addr)
	defer p.close()
	out := map[int]map[string]kstate{}
	for _, db := range dbs {
		if r := p.mustDo(t, "SELECT", itoa(db)); r.String() != "+OK" {
			t.Fatalf("SELECT %d: %v", db, r)
		}
		keys := p.mustDo(t, "KEYS", "*")
		m := map[string]kstate{}
		var names []string
		for _, k := range keys.arr {
			names = append(names, k.s)
		}
		for _, chunk := range chunks(names, 256) {
			var cmds [][]string
			for _, k := range chunk {
				cmds = append(cmds, []string{"GET", k}, []string{"PEXPIRETIME", k})
			}
			if err := p.send(cmds...); err != nil {
				t.Fatalf("dump: %v", err)
			}
			for _, k := range chunk {
				v, err1 := p.recv()
				at, err2 := p.recv()
				if err1 != nil || err2 != nil {
					t.Fatalf("dump %s: %v %v", k, err1, err2)
				}
				if v.typ != '$' || at.typ != ':' {
					t.Fatalf("dump %s: GET %v, PEXPIRETIME %v", k, v, at)
				}
				m[k] = kstate{val: v.s, at: at.n}
			}
		}
		out[db] = m
	}
	p.mustDo(t, "SELECT", "0")
	return out
}

// diffDumps describes the differences between two dumps ("" if equal),
// listing at most 20.
func diffDumps(got, want map[int]map[string]kstate) string {
	var diffs []string
	dbs := map[int]bool{}
	for db := range got {
		dbs[db] = true
	}
	for db := range want {
		dbs[db] = true
	}
	for db := range dbs {
		for k, w := range want[db] {
			g, ok := got[db][k]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("db %d: %q missing (want %q, expires %d)", db, k, w.val, w.at))
			case g != w:
				diffs = append(diffs, fmt.Sprintf("db %d: %q = %q expires %d, want %q expires %d", db, k, g.val, g.at, w.val, w.at))
			}
		}
		for k, g := range got[db] {
			if _, ok := want[db][k]; !ok {
				diffs = append(diffs, fmt.Sprintf("db %d: unexpected key %q = %q", db, k, g.val))
			}
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 20 {
		diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
	}
	return strings.Join(diffs, "\n")
}

func chunks(s []string, n int) [][]string {
	var out [][]string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if len(s) > 0 {
		out = append(out, s)
	}
	return out
}

// ---------------------------------------------------------------------------
// The AOF file's groups
// ---------------------------------------------------------------------------

// aofGroup is one annotated group of an incr file: the annotation line
// starts at start, the payload at body, and the group ends at end.
type aofGroup struct {
	start, body, end int64
	cmds             [][]string
}

// parseGroups splits a file written by redshard into its groups and their
// commands; it fails the test on anything else.
func parseGroups(t testing.TB, data []byte) []aofGroup {
	t.Helper()
	gs, err := splitGroups(data)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func splitGroups(data []byte) ([]aofGroup, error) {
	var gs []aofGroup
	off := 0
	for off < len(data) {
		if data[off] != '#' {
			return gs, fmt.Errorf("offset %d: expected an annotation line, found %q", off, data[off:min(len(data), off+20)])
		}
		nl := bytes.Index(data[off:], []byte("\r\n"))
		if nl < 0 {
			return gs, fmt.Errorf("offset %d: unterminated annotation", off)
		}
		line := string(data[off : off+nl])
		parts := strings.Split(line, ":")
		n, err := 0, error(nil)
		if len(parts) == 3 && parts[0] == "#B" {
			n, err = strconv.Atoi(parts[1])
		}
		if len(parts) != 3 || parts[0] != "#B" || err != nil {
			return gs, fmt.Errorf("offset %d: annotation %q", off, line)
		}
		g := aofGroup{start: int64(off), body: int64(off + nl + 2)}
		g.end = g.body + int64(n)
		if g.end > int64(len(data)) {
			return gs, fmt.Errorf("offset %d: group runs past the end of the file", off)
		}
		if g.cmds, err = parseCommands(data[g.body:g.end]); err != nil {
			return gs, fmt.Errorf("group at offset %d: %v", off, err)
		}
		gs = append(gs, g)
		off = int(g.end)
	}
	return gs, nil
}

// parseCommands parses RESP multibulk commands.
func parseCommands(b []byte) ([][]string, error) {
	var cmds [][]string
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		rep, err := readRReply(r)
		if err == io.EOF {
			return cmds, nil
		}
		if err != nil || rep.typ != '*' {
			return cmds, fmt.Errorf("parse commands: %v %v", rep, err)
		}
		var argv []string
		for _, a := range rep.arr {
			argv = append(argv, a.s)
		}
		cmds = append(cmds, argv)
	}
}

// ---------------------------------------------------------------------------
// redis-server
// ---------------------------------------------------------------------------

// redisProc is a redis-server started by a test.
type redisProc struct {
	cmd  *exec.Cmd
	Addr string
	log  *syncBuffer
	done chan struct{}
	err  error
}

// startRedisServer starts redis-server on a free 127.0.0.1 port in dir
// with args, waits for PING, and stops it by PID (SIGTERM) at the end of
// the test. The caller must have checked that redis-server is installed.
func startRedisServer(t testing.TB, dir string, args ...string) *redisProc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		all := append([]string{"--port", itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--protected-mode", "no"}, args...)
		r := &redisProc{cmd: exec.Command("redis-server", all...), log: &syncBuffer{}, done: make(chan struct{}),
			Addr: net.JoinHostPort("127.0.0.1", itoa(port))}
		r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
		if err := r.cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		go func() { r.err = r.cmd.Wait(); close(r.done) }()
		s := &server{Addr: r.Addr, done: r.done}
		err := s.waitReady(15 * time.Second)
		if err == nil {
			t.Cleanup(func() { r.stop(t) })
			return r
		}
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.done
		if attempt < 2 && strings.Contains(r.log.String(), "Address already in use") {
			continue
		}
		t.Fatalf("redis-server %s: %v\n%s", strings.Join(all, " "), err, r.log.String())
	}
}

// stop ends redis-server with SIGTERM (it flushes its AOF) and waits.
func (r *redisProc) stop(t testing.TB) {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Errorf("redis-server did not exit within 10s of SIGTERM; killed")
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.done
	}
}

// logTail returns the last n lines of a log.
func logTail(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
