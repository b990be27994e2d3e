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
