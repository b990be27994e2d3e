package tests

// The client's query buffer as Redis 7.0 manages it: a big argument gets
// its whole size at once, the buffer outlives its command until the cron
// trims it to the recent peak, and client-query-buffer-limit closes the
// client with Redis's log line.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestQueryBufferSizing(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctl := s.client(t, 2)
	rc := s.raw(t)
	rc.do(resp("client", "setname", "qb"), "+OK\r\n")
	field := func(name string) int {
		n, _ := strconv.Atoi(clientField(clientLine(t, ctl, "qb"), name))
		return n
	}

	// The argument's length is known: the buffer is sized for all of it
	// while only a part has come.
	const size = 400 << 10
	rc.write(fmt.Sprintf("*3\r\n$3\r\nset\r\n$1\r\nx\r\n$%d\r\n%s", size, strings.Repeat("A", 1000)))
	waitFor(t, "the first part", func() bool { return field("qbuf") == 1000 })
	if free, argv := field("qbuf-free"), field("argv-mem"); free < size-1000 || argv != 4 {
		t.Fatalf("qbuf-free %d argv-mem %d, want >= %d and 4 (set, x)", free, argv, size-1000)
	}
	rc.write(strings.Repeat("A", size-1000) + "\r\n")
	rc.expect("+OK\r\n")

	// The buffer stays after the command, then shrinks once small
	// commands show a lower peak; it is never 0 while they come.
	if q := field("qbuf") + field("qbuf-free"); q < size {
		t.Fatalf("query buffer %d after the command, want >= %d", q, size)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		rc.do(resp("set", "x", strings.Repeat("A", 100)), "+OK\r\n")
		if q := field("qbuf") + field("qbuf-free"); q < 32<<10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("query buffer not trimmed: %s", clientLine(t, ctl, "qb"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n, _ := ctl.StrLen(context.Background(), "x").Result(); n != 100 {
		t.Fatalf("STRLEN x = %d", n)
	}
}

func TestQueryBufferLimit(t *testing.T) {
	s := startServer(t, "--shards", "2")
	ctl := s.client(t, 2)
	if err := ctl.ConfigSet(context.Background(), "client-query-buffer-limit", "1mb").Err(); err != nil {
		t.Fatal(err)
	}
	rc := s.raw(t)
	rc.write("*1\r\n$2000000\r\n")
	for i := 0; i < 11; i++ {
		_ = rc.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := rc.c.Write([]byte(strings.Repeat("v", 100<<10))); err != nil {
			break
		}
	}
	rc.expectClosed()
	const line = "Closing client that reached max query buffer length: id="
	waitFor(t, "the log line", func() bool { return strings.Contains(s.log.String(), line) })
	log := s.log.String()
	if n := strings.Count(log, line); n != 1 ||
		!strings.Contains(log, `(qbuf initial bytes: "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")`) {
		t.Fatalf("%d query buffer limit lines, or without the first bytes:\n%s", n, log)
	}
	if err := ctl.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestQueryBufferReadRoom: like Redis's, a client that has read holds a
// query buffer of at least 16 KiB (PROTO_IOBUF_LEN), under 32 KiB, until
// the cron finds it idle for more than 2 seconds and frees it; tot-mem
// follows, and is the same whether the client reads it about itself (during
// its own command) or another client does.
func TestQueryBufferReadRoom(t *testing.T) {
	s := startServer(t, "--shards", "2")
	ctl := s.client(t, 2)
	rc := s.raw(t)
	rc.do(resp("client", "setname", "idle"), "+OK\r\n")
	line := clientLine(t, ctl, "idle")
	field := func(line, name string) int {
		n, _ := strconv.Atoi(clientField(line, name))
		return n
	}
	if q := field(line, "qbuf") + field(line, "qbuf-free"); q < 16384 || q >= 32768 {
		t.Fatalf("query buffer %d after a command, want in [16384, 32768): %s", q, line)
	}
	// Its own CLIENT LIST sees what the other client saw.
	rc.write(resp("client", "list"))
	n, _ := strconv.Atoi(strings.TrimPrefix(rc.line(), "$"))
	own := ""
	for _, l := range strings.Split(rc.readN(n+2), "\n") {
		if strings.Contains(l, " name=idle ") {
			own = l
		}
	}
	if a, b := field(line, "tot-mem"), field(own, "tot-mem"); a != b || a == 0 {
		t.Fatalf("tot-mem %d seen from another client, %d from itself:\n%s\n%s", a, b, line, own)
	}
	totBefore := field(clientLine(t, ctl, "idle"), "tot-mem")
	deadline := time.Now().Add(6 * time.Second)
	for {
		l := clientLine(t, ctl, "idle")
		if field(l, "idle") >= 3 && field(l, "qbuf")+field(l, "qbuf-free") == 0 {
			if tot := field(l, "tot-mem"); tot > totBefore-16384 {
				t.Fatalf("tot-mem %d after the query buffer went, %d before", tot, totBefore)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("query buffer not freed after idle: %s", l)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The next read makes the room again.
	rc.do(resp("ping"), "+PONG\r\n")
	l := clientLine(t, ctl, "idle")
	if q := field(l, "qbuf") + field(l, "qbuf-free"); q < 16384 {
		t.Fatalf("query buffer %d after a new read: %s", q, l)
	}
}

// TestBlockedClientQueryBufferFreed: the read room of a client blocked in
// BLPOP goes after 2 idle seconds too, as Redis's cron trims every client.
func TestBlockedClientQueryBufferFreed(t *testing.T) {
	s := startServer(t, "--shards", "2")
	ctl := s.client(t, 2)
	rc := s.raw(t)
	rc.do(resp("client", "setname", "blocked"), "+OK\r\n")
	rc.write(resp("blpop", "nolist", "0"))
	field := func(l, name string) int {
		n, _ := strconv.Atoi(clientField(l, name))
		return n
	}
	waitFor(t, "the client to block", func() bool {
		return strings.Contains(clientLine(t, ctl, "blocked"), "cmd=blpop")
	})
	if l := clientLine(t, ctl, "blocked"); field(l, "qbuf")+field(l, "qbuf-free") < 16384 {
		t.Fatalf("no read room while blocked at first: %s", l)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		l := clientLine(t, ctl, "blocked")
		if field(l, "qbuf")+field(l, "qbuf-free") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("blocked client's query buffer kept: %s", l)
		}
	}
	ctl.RPush(context.Background(), "nolist", "v")
	rc.expect("*2\r\n$6\r\nnolist\r\n$1\r\nv\r\n")
}
