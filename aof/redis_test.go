package aof

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Interoperability with Redis 7.0: redis-check-aof (package redis-tools,
// installed in CI) and redis-server (only where installed).

// writeSampleFolder writes, through the Log, a folder with several groups,
// two databases, a transaction and awkward values, and returns the data
// set it holds: db → key → value.
func writeSampleFolder(t *testing.T, dir string) map[int]map[string]string {
	t.Helper()
	o := testOptions(dir, FsyncAlways)
	l := mustOpen(t, o)
	if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[int]map[string]string{0: {}, 3: {}}
	p := l.NewProducer()
	set := func(db int, k, v string) {
		p.Append(db, args("SET", k, v))
		want[db][k] = v
	}
	for i := 0; i < 20; i++ {
		set(i%2*3, fmt.Sprintf("key:%d", i), fmt.Sprintf("value %d", i))
		if i%3 == 0 {
			seq := p.Submit()
			waitFor(t, "durable", func() bool { return l.Durable() >= seq })
		}
	}
	set(0, "crlf", "a\r\nb\r\n")
	set(3, "binary", "\x00\xff#B:1:00000000\r\n*1\r\n")
	set(0, "empty", "")
	p.Append(3, args("MULTI"))
	set(3, "tx1", "1")
	set(3, "tx2", "2")
	p.Append(3, args("EXEC"))
	p.Submit()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

func TestOurFolderPassesRedisCheckAOF(t *testing.T) {
	bin, err := exec.LookPath("redis-check-aof")
	if err != nil {
		t.Skip("redis-check-aof is not installed")
	}
	dir := t.TempDir()
	writeSampleFolder(t, dir)
	// And a rewritten one: a base made of annotated chunks.
	o := testOptions(dir, FsyncAlways)
	l := mustOpen(t, o)
	if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r, err := l.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	r.Append(0, args("SET", "image", "1"))
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	p := l.NewProducer()
	p.Append(2, args("SET", "after", "rewrite"))
	p.Submit()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, manifestPath(dir)).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("All AOF files and manifest are valid")) {
		t.Fatalf("redis-check-aof: %v\n%s", err, out)
	}
	ok, err := Check(manifestPath(dir), false, io.Discard)
	if !ok || err != nil {
		t.Fatalf("our Check: ok=%v err=%v", ok, err)
	}
}

func TestRedisServerLoadsOurFolderWithTheSameKeys(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	want := writeSampleFolder(t, dir)
	srv := startRedis(t, dir)
	for db, kv := range want {
		srv.do(t, "SELECT", strconv.Itoa(db))
		if n := srv.do(t, "DBSIZE"); n != strconv.Itoa(len(kv)) {
			t.Errorf("db %d: DBSIZE = %s, want %d", db, n, len(kv))
		}
		for k, v := range kv {
			if got := srv.do(t, "GET", k); got != v {
				t.Errorf("db %d: GET %q = %q, want %q", db, k, got, v)
			}
		}
	}
}

func TestRedisServerFolderLoadsInOursAndBack(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	srv := startRedis(t, dir)
	srv.do(t, "SET", "a", "1")
	srv.do(t, "SELECT", "2")
	srv.do(t, "RPUSH", "list", "x", "y")
	srv.do(t, "MULTI")
	srv.do(t, "INCR", "n")
	srv.do(t, "SET", "b", "two words")
	srv.do(t, "EXEC")
	srv.do(t, "INCRBYFLOAT", "f", "1.5")
	srv.stop(t)

	o := testOptions(dir, FsyncAlways)
	got, _, err := loadAll(t, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0:SET a 1", "2:RPUSH list x y", "2:MULTI", "2:INCR n", "2:SET b two words", "2:EXEC", "2:SET f 1.5 KEEPTTL"}
	if g := withDB(got); !slices.Equal(g, want) {
		t.Fatalf("loaded %q\nwant %q", g, want)
	}

	// Append to redis-server's incr file and give the folder back.
	l := mustOpen(t, o)
	if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	p := l.NewProducer()
	p.Append(2, args("SET", "ours", "yes"))
	p.Append(0, args("DEL", "a"))
	p.Submit()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	srv = startRedis(t, dir)
	if got := srv.do(t, "EXISTS", "a"); got != "0" {
		t.Errorf("db 0: EXISTS a = %s, want 0", got)
	}
	srv.do(t, "SELECT", "2")
	for k, v := range map[string]string{"ours": "yes", "b": "two words", "n": "1", "f": "1.5"} {
		if got := srv.do(t, "GET", k); got != v {
			t.Errorf("db 2: GET %s = %q, want %q", k, got, v)
		}
	}
}

// redisServer is a redis-server this test started, on a free port.
type redisServer struct {
	cmd  *exec.Cmd
	conn net.Conn
	r    *bufio.Reader
}

func startRedis(t *testing.T, dir string) *redisServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
		"--appenddirname", "appendonlydir", "--appendfilename", "appendonly.aof",
		"--appendfsync", "always", "--save", "", "--daemonize", "no",
		"--logfile", dir+"/redis.log")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &redisServer{cmd: cmd}
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			s.conn, s.r = c, bufio.NewReader(c)
			if reply, err := s.call("PING"); err == nil && reply == "PONG" {
				return s
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(dir + "/redis.log")
			t.Fatalf("redis-server did not come up on port %d:\n%s", port, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server by PID (SIGTERM: it fsyncs the AOF) and waits.
func (s *redisServer) stop(t *testing.T) {
	if s.cmd == nil {
		return
	}
	if s.conn != nil {
		s.conn.Close()
	}
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

func (s *redisServer) do(t *testing.T, a ...string) string {
	t.Helper()
	reply, err := s.call(a...)
	if err != nil {
		t.Fatalf("%v: %v", a, err)
	}
	return reply
}

// call sends one command and reads a reply: simple strings, integers and
// bulks as strings, arrays joined by spaces, errors as errors.
func (s *redisServer) call(a ...string) (string, error) {
	if _, err := s.conn.Write(appendCommand(nil, args(a...))); err != nil {
		return "", err
	}
	return s.read()
}

func (s *redisServer) read() (string, error) {
	line, err := s.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("%s", line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "(nil)", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(s.r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		var parts []string
		for i := 0; i < n; i++ {
			p, err := s.read()
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, " "), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}
