package tests

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redshard/redshard/shard"
)

// A script past busy-reply-threshold (server/busy.go): commands that need
// a shard it holds, and commands without keys, get -BUSY from clients of
// every loop (those of the loop it blocks are answered by the watchdog);
// commands whose keys are on a shard it does not hold are served to
// clients of the free loop, which Redis does not do; SCRIPT KILL, sent from
// any client, stops it.
func TestScriptBusy(t *testing.T) {
	s := startServer(t, "--shards", "2")
	ctx := context.Background()
	var held, free string
	for _, k := range spreadKeys("busy:", 2, 1) {
		if shard.ShardOf([]byte(k), 2) == 0 {
			held = k
		} else {
			free = k
		}
	}
	admin := s.client(t, 2)
	if err := admin.Set(ctx, free, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "busy-reply-threshold", "50").Err(); err != nil {
		t.Fatal(err)
	}
	// Connections are spread over the two loops: some live on the one the
	// script will block, some on the free one. They are made first: a
	// connection made while a loop is blocked goes to the free one
	// (TestConnectWhileScriptBusy).
	var conns []*redis.Client
	for i := 0; i < 6; i++ {
		conns = append(conns, s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1; o.ReadTimeout = 2 * time.Second }))
	}
	for _, c := range conns { // one connection each, made now
		_ = c.Get(ctx, free).Err()
	}
	runner := s.clientWith(t, func(o *redis.Options) { o.ReadTimeout = -1; o.PoolSize = 1 })
	if err := runner.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- runner.Eval(ctx, "while true do end", []string{held}).Err()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := admin.Ping(ctx).Err()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PING did not answer BUSY while the script runs: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	served, busy := 0, 0
	for i, c := range conns {
		if err := c.Get(ctx, held).Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY ") {
			t.Fatalf("conn %d: GET of a key the busy script holds: %v, want BUSY", i, err)
		}
		if err := c.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY ") {
			t.Fatalf("conn %d: PING while busy: %v, want BUSY", i, err)
		}
		v, err := c.Get(ctx, free).Result()
		switch {
		case err == nil && v == "v":
			served++
		case err != nil && strings.HasPrefix(err.Error(), "BUSY "):
			busy++ // a client of the blocked loop, answered by the watchdog
		default:
			t.Fatalf("conn %d: GET of a key on the free shard: %q %v", i, v, err)
		}
	}
	if served == 0 || busy == 0 {
		t.Fatalf("GET on the free shard: %d served, %d BUSY; want both (clients of both loops)", served, busy)
	}
	// SCRIPT KILL from a client of the blocked loop, answered by the watchdog.
	killed := false
	for _, c := range conns {
		if c.Get(ctx, free).Err() != nil { // on the blocked loop
			if err := c.ScriptKill(ctx).Err(); err != nil {
				t.Fatalf("SCRIPT KILL: %v", err)
			}
			killed = true
			break
		}
	}
	if !killed {
		t.Fatal("no client of the blocked loop found")
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "Script killed by user with SCRIPT KILL") {
			t.Fatalf("the killed script answered %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the script was not killed")
	}
	for i, c := range conns {
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("conn %d: PING after the kill: %v", i, err)
		}
		if v, err := c.Get(ctx, free).Result(); err != nil || v != "v" {
			t.Fatalf("conn %d: GET after the kill: %q %v", i, v, err)
		}
	}
	// A script that wrote cannot be killed.
	go func() {
		done <- runner.Eval(ctx, "redis.call('set', KEYS[1], 'w') local t = redis.call('time') while true do local n = redis.call('time') if tonumber(n[1]) > tonumber(t[1]) + 2 then break end end return 1", []string{held}).Err()
	}()
	// Its own deadline: a loaded CI machine took the whole of the first
	// one above, and SCRIPT KILL went out before the script had started.
	sawBusy := false
	for end := time.Now().Add(5 * time.Second); !sawBusy && time.Now().Before(end); {
		err := admin.Ping(ctx).Err()
		sawBusy = err != nil && strings.HasPrefix(err.Error(), "BUSY ")
		if !sawBusy {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !sawBusy {
		t.Fatal("the writing script never made the loop answer BUSY")
	}
	if err := admin.ScriptKill(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "UNKILLABLE ") {
		t.Fatalf("SCRIPT KILL of a script that wrote: %v, want UNKILLABLE", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the unkillable script: %v", err)
	}
}

// MULTI while a script is busy, as Redis (unit/multi's script timeout
// tests): MULTI is allowed, a command queued meanwhile is refused with
// -BUSY and makes EXEC answer EXECABORT, an EXEC refused ends the
// transaction; nothing of it runs, whichever loop the client lives on (the
// script's, answered by the watchdog, or a free one, where redshard serves
// other commands whose keys the script does not hold).
func TestMultiWhileScriptBusy(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards-"+shards, func(t *testing.T) {
			s := startServer(t, "--shards", shards)
			admin := s.raw(t)
			admin.do(resp("CONFIG", "SET", "busy-reply-threshold", "10"), "+OK\r\n")
			admin.do(resp("SET", "xx", "1"), "+OK\r\n")
			// Made before the script, so that some live on the loop it
			// blocks.
			var txs []*rawConn
			for i := 0; i < 4; i++ {
				txs = append(txs, s.raw(t))
				txs[i].do(resp("PING"), "+PONG\r\n")
			}
			// txs[2] and txs[3] queue a command before the script starts.
			for _, c := range txs[2:] {
				c.do(resp("MULTI"), "+OK\r\n")
				c.do(resp("INCR", "xx"), "+QUEUED\r\n")
			}
			runner := s.raw(t)
			runner.write(resp("EVAL", "while true do end", "0"))
			busy := waitBusy(t, admin)
			for _, c := range txs[:2] {
				c.do(resp("MULTI"), "+OK\r\n")
				c.do(resp("INCR", "xx"), busy)
			}
			txs[2].do(resp("INCR", "xx"), busy)
			txs[3].do(resp("EXEC"), "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n")
			admin.do(resp("SCRIPT", "KILL"), "+OK\r\n")
			if l := runner.line(); !strings.HasPrefix(l, "-ERR Error running script") && !strings.Contains(l, "killed") {
				t.Fatalf("the script's reply: %q", l)
			}
			txs[0].do(resp("INCR", "xx"), "+QUEUED\r\n")
			txs[0].do(resp("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n")
			txs[1].do(resp("DISCARD"), "+OK\r\n")
			txs[2].do(resp("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n")
			txs[3].do(resp("PING"), "+PONG\r\n")       // its refused EXEC ended its MULTI
			admin.do(resp("GET", "xx"), "$1\r\n1\r\n") // nothing of any transaction ran
		})
	}
}

// Connections made while a script is busy (server/hold.go), as Redis
// accepts them during processEventsWhileBlocked: with one shard every loop
// is stuck, and they are served by the server until the script ends (AUTH,
// HELLO, SCRIPT KILL, QUIT; NOAUTH, -NOPERM and -BUSY as in Redis), then
// handed to the loop with their id, name, protocol and a command begun;
// with two shards they go to the loop the script does not block, and are
// served there. Clients of the blocked loop made before the script get the
// same checks: NOAUTH before -BUSY, no SCRIPT KILL without AUTH.
func TestConnectWhileScriptBusy(t *testing.T) {
	for _, shards := range []int{1, 2} {
		t.Run(fmt.Sprintf("shards-%d", shards), func(t *testing.T) {
			dir := t.TempDir()
			sock := filepath.Join(dir, "redshard.sock")
			s := startServerIn(t, dir, "--shards", strconv.Itoa(shards), "--unixsocket", sock)
			held, free := "busy:0", "busy:1"
			if shards == 2 {
				for _, k := range spreadKeys("busy:", 2, 1) {
					if shard.ShardOf([]byte(k), 2) == 0 {
						held = k
					} else {
						free = k
					}
				}
			}
			admin := s.raw(t)
			admin.do(resp("CONFIG", "SET", "requirepass", "pw"), "+OK\r\n")
			admin.do(resp("CONFIG", "SET", "busy-reply-threshold", "50"), "+OK\r\n")
			admin.do(resp("ACL", "SETUSER", "lim", "on", ">lp", "+get", "~*"), "+OK\r\n")
			admin.do(resp("SET", free, "v"), "+OK\r\n")
			early := s.raw(t) // made before the script, never authenticated
			early.do(resp("PING"), "-NOAUTH Authentication required.\r\n")
			watcher := s.raw(t) // made before the script, watching a key
			watcher.do(resp("AUTH", "pw"), "+OK\r\n")
			watcher.do(resp("WATCH", free), "+OK\r\n")
			runner := s.raw(t)
			runner.do(resp("AUTH", "pw"), "+OK\r\n")
			runner.write(resp("EVAL", "while true do end", "1", held))
			busy := waitBusy(t, admin)
			early.do(resp("PING"), "-NOAUTH Authentication required.\r\n")
			early.do(resp("SCRIPT", "KILL"), "-NOAUTH Authentication required.\r\n")
			early.do(resp("NOSUCH", "a"), "-ERR unknown command 'NOSUCH', with args beginning with: 'a' \r\n")
			watcher.do(resp("UNWATCH"), "+OK\r\n") // allowed while busy, as in Redis

			// Connections made now.
			var fresh []*rawConn
			for i := 0; i < 6; i++ {
				c := s.raw(t)
				c.do(resp("PING"), "-NOAUTH Authentication required.\r\n")
				c.do(resp("AUTH", "pw"), "+OK\r\n")
				c.do(resp("PING"), busy) // no keys: -BUSY, as Redis
				c.write(resp("GET", free))
				if got := c.line(); shards == 1 && got+"\r\n" != busy || shards == 2 && got != "$1" {
					t.Fatalf("conn %d: GET of a key the script does not hold: %q", i, got)
				}
				if shards == 2 {
					c.expect("v\r\n") // on the free loop, served
				}
				fresh = append(fresh, c)
			}
			uc, err := net.DialTimeout("unix", sock, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { uc.Close() })
			u := &rawConn{t: t, c: uc, r: bufio.NewReader(uc)}
			u.do(resp("AUTH", "pw"), "+OK\r\n")
			u.do(resp("PING"), busy)

			// HELLO 3 on a new connection, and the start of a command.
			h := s.raw(t)
			h.write(resp("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "early-bird"))
			if l := h.line(); l != "%7" {
				t.Fatalf("HELLO 3: %q", l)
			}
			id := h.helloReply()
			if !strings.HasPrefix(id, ":") {
				t.Fatalf("HELLO's id: %q", id)
			}
			h.write("*2\r\n$4\r\nECHO\r\n$5\r\nhel")

			lim := s.raw(t)
			lim.do(resp("AUTH", "lim", "lp"), "+OK\r\n")
			lim.do(resp("SCRIPT", "KILL"), "-NOPERM this user has no permissions to run the 'script|kill' command\r\n")
			lim.do(resp("SHUTDOWN", "NOSAVE"), "-NOPERM this user has no permissions to run the 'shutdown' command\r\n")
			q := s.raw(t)
			q.do(resp("QUIT"), "+OK\r\n")
			q.expectClosed()

			k := s.raw(t)
			k.do(resp("AUTH", "pw"), "+OK\r\n")
			k.do(resp("SHUTDOWN"), busy) // only SHUTDOWN NOSAVE, as Redis
			k.do(resp("SCRIPT", "KILL"), "+OK\r\n")
			if l := runner.line(); !strings.Contains(l, "Script killed by user with SCRIPT KILL") {
				t.Fatalf("the killed script answered %q", l)
			}

			// The connections served meanwhile go on with their loop.
			h.write("lo\r\n")
			h.expect("$5\r\nhello\r\n")
			h.do(resp("CLIENT", "ID"), id+"\r\n")
			h.do(resp("CLIENT", "GETNAME"), "$10\r\nearly-bird\r\n")
			for _, c := range append(fresh, u, k) {
				c.do(resp("PING"), "+PONG\r\n")
				c.do(resp("GET", free), "$1\r\nv\r\n")
			}
			early.do(resp("PING"), "-NOAUTH Authentication required.\r\n")
			// The key the watcher no longer watches changes: its
			// transaction runs.
			admin.do(resp("SET", free, "v"), "+OK\r\n")
			watcher.do(resp("MULTI"), "+OK\r\n")
			watcher.do(resp("GET", free), "+QUEUED\r\n")
			watcher.do(resp("EXEC"), "*1\r\n$1\r\nv\r\n")
			// A held connection with nothing to send is handed to its
			// loop at its goroutine's next look, within 20 ms.
			list := ""
			for end := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				admin.write(resp("CLIENT", "LIST"))
				list = admin.bulk()
				if strings.Count(strings.TrimSpace(list), "\n") == 13 || time.Now().After(end) {
					break
				}
			}
			if !strings.Contains(list, "name=early-bird") || !strings.Contains(list, "user=lim") || strings.Count(strings.TrimSpace(list), "\n") != 13 {
				t.Fatalf("CLIENT LIST after the script, want 14 clients, early-bird and lim among them:\n%s", list)
			}
			admin.write(resp("ACL", "LOG", "1"))
			var entry []string
			for l := ""; l != "client-info"; {
				l = admin.line()
				entry = append(entry, l)
			}
			entry = append(entry, admin.line(), admin.line())
			if log := strings.Join(entry, " "); !strings.Contains(log, "object $8 shutdown") || !strings.Contains(log, "username $3 lim") {
				t.Fatalf("ACL LOG after the denied SHUTDOWN: %q", log)
			}
			// The listening sockets are gnet's again: new connections
			// are served as usual.
			time.Sleep(100 * time.Millisecond)
			for i := 0; i < 8; i++ {
				c := s.raw(t)
				c.do(resp("AUTH", "pw"), "+OK\r\n")
				c.do(resp("GET", free), "$1\r\nv\r\n")
			}
		})
	}
}

// SHUTDOWN NOSAVE while a script is busy, from a client of a loop the
// script does not block (a connection made meanwhile goes there): the
// server exits without waiting for the script, as from the blocked loop.
func TestShutdownNosaveWhileScriptBusyFreeLoop(t *testing.T) {
	s := startServer(t, "--shards", "2")
	var held string
	for _, k := range spreadKeys("busy:", 2, 1) {
		if shard.ShardOf([]byte(k), 2) == 0 {
			held = k
		}
	}
	admin := s.raw(t)
	admin.do(resp("CONFIG", "SET", "busy-reply-threshold", "50"), "+OK\r\n")
	runner := s.raw(t)
	runner.write(resp("EVAL", "while true do end", "1", held))
	busy := waitBusy(t, admin)
	c := s.raw(t)
	c.write(resp("GET", "nosuchkey:{x}"))
	if l := c.line(); l+"\r\n" != busy && l != "$-1" {
		t.Fatalf("GET: %q", l)
	}
	c.do(resp("SHUTDOWN"), busy)
	c.write(resp("SHUTDOWN", "NOSAVE"))
	if err := s.exited(5 * time.Second); err != nil {
		t.Fatalf("exit status after SHUTDOWN NOSAVE: %v", err)
	}
	if !strings.Contains(s.log.String(), "Lua script running: exiting without waiting for it.") {
		t.Fatalf("log:\n%s", s.log.String())
	}
}

// busyReply is Redis's -BUSY for a script (not a function).
const busyReply = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"

// waitBusy sends PING on rc until it answers -BUSY (a script has passed
// busy-reply-threshold), and returns that reply.
func waitBusy(t *testing.T, rc *rawConn) string {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		rc.write(resp("PING"))
		if rc.line()+"\r\n" == busyReply {
			return busyReply
		}
		if time.Now().After(end) {
			t.Fatal("PING never answered BUSY")
		}
	}
}
