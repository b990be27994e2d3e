package shard

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeTarget is a MIGRATE target: it reads commands and answers each with
// reply(argv) ("" answers nothing), counting connections.
type fakeTarget struct {
	ln    net.Listener
	conns chan net.Conn
}

func newFakeTarget(t *testing.T, reply func(argv []string) string) *fakeTarget {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ft := &fakeTarget{ln: ln, conns: make(chan net.Conn, 16)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			ft.conns <- conn
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					argv, err := readCommand(r)
					if err != nil {
						return
					}
					if out := reply(argv); out != "" {
						conn.Write([]byte(out))
					}
				}
			}()
		}
	}()
	return ft
}

func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	argv := make([]string, n)
	for i := range argv {
		l, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		sz, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
		b := make([]byte, sz+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		argv[i] = string(b[:sz])
	}
	return argv, nil
}

func (ft *fakeTarget) hostPort() (string, string) {
	h, p, _ := net.SplitHostPort(ft.ln.Addr().String())
	return h, p
}

func TestMigrateTimeoutAndErrors(t *testing.T) {
	c := ksCtx(2)
	rvDo(t, c, "set", "k", "v")
	rvDo(t, c, "set", "k2", "v2")

	// A target that never answers: IOERR reading, the key stays.
	mute := newFakeTarget(t, func([]string) string { return "" })
	h, p := mute.hostPort()
	start := time.Now()
	if got := rvDo(t, c, "migrate", h, p, "k", "0", "200"); got != "-IOERR error or timeout reading to target instance\r\n" {
		t.Fatalf("mute target: %q", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	if rvDo(t, c, "exists", "k") != ":1\r\n" {
		t.Fatal("key gone after a failed MIGRATE")
	}

	// A target that answers RESTORE with an error for k2 only.
	var seen []string
	picky := newFakeTarget(t, func(argv []string) string {
		seen = append(seen, strings.Join(argv[:2], " "))
		if strings.EqualFold(argv[0], "restore") && argv[1] == "k2" {
			return "-BUSYKEY Target key name already exists.\r\n"
		}
		return "+OK\r\n"
	})
	h, p = picky.hostPort()
	got := rvDo(t, c, "migrate", h, p, "", "5", "1000", "keys", "k", "k2", "nokey")
	if got != "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n" {
		t.Fatalf("picky target: %q", got)
	}
	if p := ksProp(&c.Prop); p != "dirty=1 | DEL k" {
		t.Fatalf("propagated %q", p)
	}
	if rvDo(t, c, "exists", "k") != ":0\r\n" || rvDo(t, c, "exists", "k2") != ":1\r\n" {
		t.Fatal("only the acknowledged key must go")
	}
	if strings.Join(seen, ",") != "SELECT 5,RESTORE k,RESTORE k2" {
		t.Fatalf("target saw %q", seen)
	}
	// The connection is cached; after the error SELECT is sent again.
	seen = nil
	if got := rvDo(t, c, "migrate", h, p, "k2", "5", "1000", "copy"); !strings.HasPrefix(got, "-ERR Target") {
		t.Fatalf("again: %q", got)
	}
	if strings.Join(seen, ",") != "SELECT 5,RESTORE k2" || len(picky.conns) != 1 {
		t.Fatalf("target saw %q over %d connections", seen, len(picky.conns))
	}
	if c.Prop.Dirty != 0 {
		t.Fatalf("COPY logged: %+v", c.Prop)
	}
	// Nothing to migrate.
	if got := rvDo(t, c, "migrate", h, p, "missing", "5", "1000"); got != "+NOKEY\r\n" {
		t.Fatalf("missing key: %q", got)
	}
	// Argument errors.
	for args, want := range map[string]string{
		"k2 5 1000 keys a":  "-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string\r\n",
		"k2 5 1000 auth":    "-ERR syntax error\r\n",
		"k2 5 1000 auth2 u": "-ERR syntax error\r\n",
		"k2 5 1000 bogus":   "-ERR syntax error\r\n",
		"k2 x 1000":         "-ERR value is not an integer or out of range\r\n",
		"k2 5 x":            "-ERR value is not an integer or out of range\r\n",
	} {
		if got := rvDo(t, c, append([]string{"migrate", h, p}, strings.Fields(args)...)...); got != want {
			t.Errorf("migrate %s: %q, want %q", args, got, want)
		}
	}
}

// TestMigrateRetriesAClosedCachedConnection: a cached connection the target
// closed is dialed again once, transparently (Redis's may_retry).
func TestMigrateRetriesAClosedCachedConnection(t *testing.T) {
	c := ksCtx(1)
	ok := newFakeTarget(t, func([]string) string { return "+OK\r\n" })
	h, p := ok.hostPort()
	rvDo(t, c, "set", "a", "1")
	if got := rvDo(t, c, "migrate", h, p, "a", "0", "1000", "copy"); got != "+OK\r\n" {
		t.Fatalf("first: %q", got)
	}
	(<-ok.conns).Close() // the target drops the cached connection
	time.Sleep(50 * time.Millisecond)
	if got := rvDo(t, c, "migrate", h, p, "a", "0", "1000"); got != "+OK\r\n" {
		t.Fatalf("after the target closed the connection: %q", got)
	}
	if rvDo(t, c, "exists", "a") != ":0\r\n" {
		t.Fatal("key not deleted")
	}
	if n := MigrateCachedSockets(); n < 1 {
		t.Fatalf("cached sockets %d", n)
	}
	// Idle connections go after 10 seconds.
	migrateCloseIdle(time.Now().Add(11 * time.Second))
	if n := MigrateCachedSockets(); n != 0 {
		t.Fatalf("cached sockets after idling %d", n)
	}
	// A closed port.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	_, cp, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	rvDo(t, c, "set", "b", "1")
	if got := rvDo(t, c, "migrate", "127.0.0.1", cp, "b", "0", "1000"); got != "-IOERR error or timeout connecting to the client\r\n" {
		t.Fatalf("closed port: %q", got)
	}
}
