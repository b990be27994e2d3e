package tests

// maxmemory-clients end to end (Redis 7.0's client eviction): with the
// clients' total memory over the limit, the biggest clients are
// disconnected, whatever loop they live on, while small clients and a
// CLIENT NO-EVICT client stay.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clientLine is the CLIENT LIST line of the client named name, "" if none.
func clientLine(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(list, "\n") {
		if strings.Contains(l, " name="+name+" ") {
			return l
		}
	}
	return ""
}

func clientField(line, field string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, field+"="); ok {
			return v
		}
	}
	return ""
}

func TestClientEviction(t *testing.T) {
	t.Run("appendonly no", func(t *testing.T) { testClientEviction(t) })
	// Under always, replies wait for the log: an evicted client may have
	// some held.
	t.Run("appendfsync always", func(t *testing.T) {
		testClientEviction(t, "--appendonly", "yes", "--appendfsync", "always")
	})
}

func testClientEviction(t *testing.T, args ...string) {
	s := startServer(t, append([]string{"--shards", "4"}, args...)...)
	ctx := context.Background()
	ctl := s.clientWith(t, func(o *redis.Options) {
		o.PoolSize = 1
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			return cn.Do(ctx, "client", "no-evict", "on").Err()
		}
	})
	if err := ctl.Do(ctx, "config", "set", "maxmemory-clients", "1mb").Err(); err != nil {
		t.Fatal(err)
	}

	// Small clients, spread over the loops (connections are dealt round
	// robin), each with a name to find it by.
	var small []*rawConn
	for i := 0; i < 8; i++ {
		rc := s.raw(t)
		rc.do(resp("client", "setname", fmt.Sprintf("small%d", i)), "+OK\r\n")
		small = append(small, rc)
	}

	// A protected client with a 500 KB argument on its way (its query
	// buffer is sized for all of it at once, as Redis's is), then one more
	// without protection with a 600 KB argument: together they are over
	// the limit, and the unprotected one is the biggest that may go.
	prot := s.raw(t)
	prot.do(resp("client", "setname", "protected"), "+OK\r\n")
	prot.do(resp("client", "no-evict", "on"), "+OK\r\n")
	prot.write(fmt.Sprintf("*3\r\n$3\r\nset\r\n$1\r\np\r\n$%d\r\n%s", 500<<10, strings.Repeat("v", 400<<10)))
	waitFor(t, "protected client's query buffer", func() bool {
		return clientField(clientLine(t, ctl, "protected"), "qbuf") == fmt.Sprint(400<<10)
	})
	big := s.raw(t)
	big.do(resp("client", "setname", "bigq"), "+OK\r\n")
	big.write(fmt.Sprintf("*3\r\n$3\r\nset\r\n$1\r\nb\r\n$%d\r\n%s", 600<<10, strings.Repeat("v", 300<<10)))
	big.expectClosed()
	if clientLine(t, ctl, "bigq") != "" {
		t.Fatal("the client with the big query buffer is still listed")
	}
	line := clientLine(t, ctl, "protected")
	if line == "" || !strings.Contains(clientField(line, "flags"), "e") {
		t.Fatalf("protected client gone or without the e flag: %q", line)
	}

	// A client that reads none of its replies: its output piles up in the
	// server until it is the biggest and goes.
	if err := ctl.SetRange(ctx, "k", 200000, "v").Err(); err != nil {
		t.Fatal(err)
	}
	out := s.raw(t)
	out.do(resp("client", "setname", "bigout"), "+OK\r\n")
	deadline := time.Now().Add(10 * time.Second)
	for clientLine(t, ctl, "bigout") != "" {
		if time.Now().After(deadline) {
			t.Fatalf("client with unread replies not evicted: %s", clientLine(t, ctl, "bigout"))
		}
		_ = out.c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := out.c.Write([]byte(strings.Repeat(resp("get", "k"), 10))); err != nil {
			break // closed by the server
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, "bigout to leave CLIENT LIST", func() bool { return clientLine(t, ctl, "bigout") == "" })

	// The small clients are all there and working; the protected one still
	// holds its input and finishes its command.
	for i, rc := range small {
		rc.do(resp("ping"), "+PONG\r\n")
		if clientLine(t, ctl, fmt.Sprintf("small%d", i)) == "" {
			t.Fatalf("small%d not listed", i)
		}
	}
	prot.write(strings.Repeat("v", 100<<10) + "\r\n")
	prot.expect("+OK\r\n")
	if n, err := ctl.StrLen(ctx, "p").Result(); err != nil || n != 500<<10 {
		t.Fatalf("STRLEN p = %d, %v", n, err)
	}
	stats := memInfo(t, ctl)
	if stats["evicted_clients"] != 2 {
		t.Fatalf("evicted_clients = %d, want 2", stats["evicted_clients"])
	}
	if n := strings.Count(s.log.String(), "Evicting client: "); n != 2 {
		t.Fatalf("%d 'Evicting client' log lines, want 2", n)
	}

	// The protected client's buffer is let go by the cron once its peak
	// is past.
	waitFor(t, "the protected client's query buffer to shrink", func() bool {
		var n int
		fmt.Sscan(clientField(clientLine(t, ctl, "protected"), "tot-mem"), &n)
		return n > 0 && n < 64<<10
	})

	// Lowering the limit evicts at once, before CONFIG SET replies.
	big2 := s.raw(t)
	big2.do(resp("client", "setname", "big2"), "+OK\r\n")
	big2.write(fmt.Sprintf("*2\r\n$4\r\necho\r\n$%d\r\n%s", 400<<10, strings.Repeat("v", 300<<10)))
	waitFor(t, "big2's query buffer", func() bool {
		return clientField(clientLine(t, ctl, "big2"), "qbuf") == fmt.Sprint(300<<10)
	})
	if err := ctl.Do(ctx, "config", "set", "maxmemory-clients", "2mb").Err(); err != nil {
		t.Fatal(err)
	}
	if clientLine(t, ctl, "big2") == "" {
		t.Fatal("big2 evicted under a 2mb limit")
	}
	if err := ctl.Do(ctx, "config", "set", "maxmemory-clients", "300kb").Err(); err != nil {
		t.Fatal(err)
	}
	if l := clientLine(t, ctl, "big2"); l != "" {
		t.Fatalf("big2 still listed after CONFIG SET: %s", l)
	}
	for _, rc := range small {
		rc.do(resp("ping"), "+PONG\r\n")
	}
	if got := ctl.ConfigGet(ctx, "maxmemory-clients").Val()["maxmemory-clients"]; got != "307200" {
		t.Fatalf("CONFIG GET maxmemory-clients = %q", got)
	}
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClosedClientsLeaveNoMemory: a client whose last command and
// disconnection arrive together is flushed after it has gone; its memory
// must not come back into the accounting, or the clients that stay are
// evicted for memory nobody holds.
func TestClosedClientsLeaveNoMemory(t *testing.T) {
	s := startServer(t, "--shards", "2")
	ctl := s.client(t, 2)
	ctx := context.Background()
	if err := ctl.ConfigSet(ctx, "maxmemory-clients", "1mb").Err(); err != nil {
		t.Fatal(err)
	}
	ctl.Do(ctx, "client", "no-evict", "on")
	for i := 0; i < 300; i++ {
		rc := s.raw(t)
		rc.write(resp("set", fmt.Sprintf("k%d", i), "v"))
		rc.c.Close()
		if i%20 == 19 {
			// At most 20 of them at once (18 KB each, against 1 MB): a
			// loaded CI machine that lagged behind the closes had 56 alive
			// together, and evicting one of those was right.
			waitFor(t, "the clients to go", func() bool {
				n, _ := strconv.Atoi(infoSection(t, ctl, "clients")["connected_clients"])
				return n == 1
			})
		}
	}
	waitFor(t, "the clients to go", func() bool {
		n, _ := strconv.Atoi(infoSection(t, ctl, "clients")["connected_clients"])
		return n == 1
	})
	// New clients well within the limit stay connected.
	for i := 0; i < 5; i++ {
		rc := s.raw(t)
		rc.do(resp("client", "setname", fmt.Sprintf("stay%d", i)), "+OK\r\n")
		rc.do(resp("ping"), "+PONG\r\n")
	}
	if n := infoSection(t, ctl, "stats")["evicted_clients"]; n != "0" {
		t.Fatalf("%s clients evicted after 300 clients closed (mem_clients_normal %s)", n, infoSection(t, ctl, "memory")["mem_clients_normal"])
	}
}

// TestWatchAndSubscriptionsEvictTheirClient is Redis's "client evicted due
// to watched key list" and "... pubsub subscriptions": the memory of what a
// client watches or subscribes to, its copies of the names included, is in
// its tot-mem, so it is the client evicted, not the idle ones (here the
// controlling connection itself may be evicted, as the test's own is).
func TestWatchAndSubscriptionsEvictTheirClient(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctl := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	if err := ctl.ConfigSet(ctx, "maxmemory-clients", "600000").Err(); err != nil {
		t.Fatal(err)
	}
	var idle []*rawConn
	for i := 0; i < 4; i++ {
		rc := s.raw(t)
		rc.do(resp("client", "setname", fmt.Sprintf("idle%d", i)), "+OK\r\n")
		idle = append(idle, rc)
	}
	name := strings.Repeat("n", 100)
	for _, cmd := range []string{"watch", "psubscribe", "subscribe", "ssubscribe"} {
		rc := s.raw(t)
		rc.do(resp("client", "setname", "holder"), "+OK\r\n")
		field := "multi-mem"
		if cmd != "watch" {
			field = "tot-mem"
		}
		var before int
		for i := 0; ; i++ {
			rc.write(resp(cmd, fmt.Sprintf("%s:%d", name, i)))
			l, err := rc.r.ReadString('\n')
			if err != nil {
				break // evicted
			}
			if cmd != "watch" { // the rest of the confirmation
				for j := 0; j < 5; j++ {
					if l, err = rc.r.ReadString('\n'); err != nil {
						t.Fatalf("%s: %v", cmd, err)
					}
				}
			}
			if i == 999 {
				fmt.Sscan(clientField(clientLine(t, ctl, "holder"), field), &before)
				if before < 1000*(48+100) {
					t.Fatalf("%s: %s %d with 1000 names of 100 bytes", cmd, field, before)
				}
			}
			if i > 10_000 {
				t.Fatalf("%s: not evicted after %d names: %s", cmd, i, clientLine(t, ctl, "holder"))
			}
			_ = l
		}
		if before == 0 {
			t.Fatalf("%s: evicted before 1000 names", cmd)
		}
		if l := clientLine(t, ctl, "holder"); l != "" {
			t.Fatalf("%s: the holder is still there: %s", cmd, l)
		}
		for i, rc := range idle {
			rc.do(resp("ping"), "+PONG\r\n")
			if clientLine(t, ctl, fmt.Sprintf("idle%d", i)) == "" {
				t.Fatalf("%s: idle%d gone", cmd, i)
			}
		}
	}
	if n := infoSection(t, ctl, "stats")["evicted_clients"]; n != "4" {
		t.Fatalf("evicted_clients %s, want 4 (the holders)", n)
	}
}

// TestNoClientSeenOverTheLimit is Redis's "client evicted due to output
// buf": a client that reads none of its replies is evicted before any other
// client's command can see the clients over maxmemory-clients, also when
// its replies of one poll round are still waiting to be written.
func TestNoClientSeenOverTheLimit(t *testing.T) {
	for _, shards := range []string{"1", "2"} {
		t.Run("shards="+shards, func(t *testing.T) {
			s := startServer(t, "--shards", shards)
			ctl := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
			ctx := context.Background()
			const limit = 3_000_000
			ctl.ConfigSet(ctx, "maxmemory-clients", strconv.Itoa(limit))
			ctl.SetRange(ctx, "k", 200_000, "v")
			rc := s.raw(t)
			rc.do(resp("client", "setname", "unread"), "+OK\r\n")
			for i := 0; ; i++ {
				l := clientLine(t, ctl, "unread")
				if l == "" {
					break
				}
				var mem int
				fmt.Sscan(clientField(l, "tot-mem"), &mem)
				if mem >= limit {
					t.Fatalf("after %d GETs, a client over maxmemory-clients is listed: %s", i, l)
				}
				if i > 1000 {
					t.Fatalf("not evicted after %d unread replies of 200 KB: %s", i, l)
				}
				_ = rc.c.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := rc.c.Write([]byte(resp("get", "k"))); err != nil {
					break
				}
			}
			if n := infoSection(t, ctl, "stats")["evicted_clients"]; n != "1" {
				t.Fatalf("evicted_clients %s, want 1", n)
			}
		})
	}
}

// TestOutputLimitBeforeClientEviction is Redis's "avoid client eviction
// when client is freed by output buffer limit": clients whose replies pass
// their output buffer limit are closed for it at once, before the next
// client is served, so their memory never makes another client evicted.
func TestOutputLimitBeforeClientEviction(t *testing.T) {
	s := startServer(t, "--shards", "1")
	ctl := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	ctl.ConfigSet(ctx, "maxmemory-clients", "10mb")
	ctl.ConfigSet(ctx, "client-output-buffer-limit", "normal 3mb 0 0")
	const obuf = 4 << 20
	ctl.SetRange(ctx, "k", obuf, "v")
	qb := s.raw(t)
	qb.do(resp("client", "setname", "qbuf-client"), "+OK\r\n")
	var obufs []*rawConn
	for i := 0; i < 2; i++ {
		rc := s.raw(t)
		rc.do(resp("client", "setname", fmt.Sprintf("obuf-client%d", i)), "+OK\r\n")
		obufs = append(obufs, rc)
	}
	n := 10<<20 - obuf
	qb.write(fmt.Sprintf("*1\r\n$%d\r\n%s", n, strings.Repeat("v", n)))
	waitFor(t, "the query buffer", func() bool { return clientField(clientLine(t, ctl, "qbuf-client"), "qbuf") == strconv.Itoa(n) })
	// Both GETs are read in one poll round.
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for _, rc := range obufs {
		rc.write(resp("get", "k"))
	}
	time.Sleep(50 * time.Millisecond)
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if l := clientLine(t, ctl, fmt.Sprintf("obuf-client%d", i)); l != "" {
			t.Fatalf("obuf-client%d still listed: %s", i, l)
		}
	}
	if clientLine(t, ctl, "qbuf-client") == "" {
		t.Fatal("qbuf-client evicted")
	}
	if n := infoSection(t, ctl, "stats")["evicted_clients"]; n != "0" {
		t.Fatalf("evicted_clients %s, want 0", n)
	}
	if n := strings.Count(s.log.String(), "for overcoming of output buffer limits."); n != 2 {
		t.Fatalf("%d clients closed for their output buffer limits, want 2:\n%s", n, s.log.String())
	}
}
