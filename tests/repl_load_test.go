package tests

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func waitInfo(t *testing.T, c *redis.Client, section, field, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if infoField(t, c, section, field) == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s stayed %q, want %q", field, infoField(t, c, section, field), want)
}

// repl-diskless-load swapdb: the replica parses the master's RDB from the
// socket beside its data. With another history (a new master) it is
// LOADING meanwhile and keeps its old data if the sync fails; with the
// same history (a later full sync from its master) it serves the old data
// meanwhile (async_loading), refuses REPLICAOF, and swaps at the end.
func TestReplicaDisklessLoadSwapdb(t *testing.T) {
	ctx := context.Background()
	m := startServer(t, "--shards", "4", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	r := startServer(t, "--shards", "4", "--enable-debug-command", "yes", "--repl-diskless-load", "swapdb", "--replica-read-only", "no")
	mc, rc := m.client(t, 2), r.client(t, 2)
	mustDo := func(c *redis.Client, args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	mustDo(mc, "DEBUG", "POPULATE", 2000, "master", 1000)
	mustDo(rc, "DEBUG", "POPULATE", 200, "replica", 10)
	mustDo(rc, "SET", "mykey", "myvalue")

	// A new history, aborted: LOADING, then the old data.
	mustDo(mc, "CONFIG", "SET", "rdb-key-save-delay", 2000) // 2 ms a key: 4 s
	mustDo(rc, "REPLICAOF", "127.0.0.1", m.Port)
	waitInfo(t, rc, "persistence", "loading", "1")
	if got := infoField(t, rc, "persistence", "async_loading"); got != "0" {
		t.Errorf("async_loading %s while loading another history", got)
	}
	if err := rc.Get(ctx, "mykey").Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Errorf("GET while loading: %v", err)
	}
	mustDo(mc, "CONFIG", "SET", "repl-diskless-sync-delay", 5) // the next sync waits: the replica is caught between two
	mustDo(mc, "CLIENT", "KILL", "TYPE", "replica")
	waitInfo(t, rc, "persistence", "loading", "0")
	if got := rc.Get(ctx, "mykey").Val(); got != "myvalue" {
		t.Errorf("mykey after the failed sync = %q", got)
	}
	if n := rc.DBSize(ctx).Val(); n != 201 {
		t.Errorf("dbsize after the failed sync = %d, want 201", n)
	}
	// Then it succeeds: the master's data set.
	mustDo(mc, "CONFIG", "SET", "rdb-key-save-delay", 0)
	mustDo(mc, "CONFIG", "SET", "repl-diskless-sync-delay", 0)
	waitInSync(t, mc, rc)
	if n := rc.DBSize(ctx).Val(); n != 2000 {
		t.Errorf("dbsize after the sync = %d, want 2000", n)
	}

	// The same history: a full sync forced by a backlog too short.
	mustDo(rc, "SET", "mykey", "myvalue")
	mustDo(mc, "CONFIG", "SET", "rdb-key-save-delay", 2000)
	mustDo(mc, "CONFIG", "SET", "repl-backlog-size", 16384)
	p := mc.TxPipeline()
	p.Do(ctx, "CLIENT", "KILL", "TYPE", "replica")
	for i := 0; i < 10; i++ {
		p.Set(ctx, "big:"+string(rune('a'+i)), strings.Repeat("A", 16384), 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, rc, "persistence", "async_loading", "1")
	if got := infoField(t, rc, "persistence", "loading"); got != "0" {
		t.Errorf("loading %s during an asynchronous load", got)
	}
	if got := rc.Get(ctx, "mykey").Val(); got != "myvalue" {
		t.Errorf("mykey during the asynchronous load = %q", got)
	}
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Errorf("REPLICAOF NO ONE during the asynchronous load: %v", err)
	}
	if err := rc.Do(ctx, "CONFIG", "SET", "appendonly", "yes").Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Errorf("CONFIG SET appendonly during the asynchronous load: %v", err)
	}
	mustDo(mc, "CONFIG", "SET", "rdb-key-save-delay", 0)
	waitInfo(t, rc, "persistence", "async_loading", "0")
	waitInSync(t, mc, rc)
	if n := rc.Exists(ctx, "mykey").Val(); n != 0 {
		t.Errorf("the replica's own key survived the swap")
	}
	if n := rc.DBSize(ctx).Val(); n != 2010 {
		t.Errorf("dbsize after the swap = %d, want 2010", n)
	}
}

// SHUTDOWN on a master whose replica is behind waits for it (writes
// paused, shutdown_in_milliseconds in INFO), and the write the replica
// lacked reaches it before the master exits; SHUTDOWN ABORT meanwhile
// answers the waiting SHUTDOWN with Redis's error. A client that wrote
// before CONFIG SET appendonly yes gets its reply (the log that ordered
// the stream is replaced by the file log).
func TestShutdownWaitsForReplica(t *testing.T) {
	ctx := context.Background()
	m := startServer(t, "--shards", "4", "--repl-diskless-sync-delay", "0", "--save", "", "--enable-debug-command", "yes")
	r := startServer(t, "--shards", "2", "--enable-debug-command", "yes")
	mc, rc := m.client(t, 2), r.client(t, 2)
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", m.Port).Err(); err != nil {
		t.Fatal(err)
	}
	mc.Set(ctx, "k", "1", 0)
	waitInSync(t, mc, rc)

	// ABORT first.
	_ = r.cmd.Process.Signal(syscall.SIGSTOP)
	mc.Incr(ctx, "k")
	sd := make(chan error, 1)
	go func() { sd <- m.client(t, 2).Do(ctx, "SHUTDOWN").Err() }()
	waitInfoPositive(t, mc, "server", "shutdown_in_milliseconds")
	if err := mc.Do(ctx, "SHUTDOWN", "ABORT").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-sd:
		if err == nil || err.Error() != "ERR Errors trying to SHUTDOWN. Check logs." {
			t.Fatalf("the waiting SHUTDOWN after ABORT: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting SHUTDOWN got no reply after ABORT")
	}
	if err := mc.Incr(ctx, "k").Err(); err != nil {
		t.Fatalf("write after the aborted shutdown: %v", err)
	}
	// The log that orders the stream gives way to the file log: the
	// writer's next reply is not held for ever.
	done := make(chan error, 1)
	go func() { done <- mc.ConfigSet(ctx, "appendonly", "yes").Err() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CONFIG SET appendonly yes after a write got no reply")
	}
	waitInfo(t, mc, "persistence", "aof_rewrite_in_progress", "0")

	// Then a shutdown that waits for the replica to catch up.
	go func() { sd <- m.client(t, 2).Do(ctx, "SHUTDOWN").Err() }()
	waitInfoPositive(t, mc, "server", "shutdown_in_milliseconds")
	paused := make(chan error, 1)
	go func() { paused <- m.client(t, 2).Set(ctx, "paused", "1", 0).Err() }()
	select {
	case err := <-paused:
		t.Fatalf("a write during the shutdown's wait was not paused: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	_ = r.cmd.Process.Signal(syscall.SIGCONT)
	_ = m.exited(20 * time.Second)
	if got := rc.Get(ctx, "k").Val(); got != "3" {
		t.Errorf("k on the replica = %q, want 3 (the master exited before its replica caught up)", got)
	}
	if n := rc.Exists(ctx, "paused").Val(); n != 0 {
		t.Errorf("a write paused by the shutdown reached the replica")
	}
}

func waitInfoPositive(t *testing.T, c *redis.Client, section, field string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if v := infoField(t, c, section, field); v != "" && v != "0" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", field)
}
