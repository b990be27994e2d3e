package tests

import (
	"context"
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
	// connection that arrives while a loop is blocked waits for it.
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
			// Made before the script: a connection that arrives while
			// its loop is blocked waits for it.
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
			busy := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
			deadline := time.Now().Add(5 * time.Second)
			for {
				admin.write(resp("PING"))
				if admin.line() == strings.TrimSuffix(busy, "\r\n") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("PING never answered BUSY")
				}
				time.Sleep(10 * time.Millisecond)
			}
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
