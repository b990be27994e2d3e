package tests

// Behaviours found by running Redis's own test units against redshard.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Clients' buffers are part of used_memory, so eviction must make room for
// them too: after filling past maxmemory, used_memory stays at the limit
// even while clients keep big reply buffers (Redis's unit/maxmemory "is the
// memory limit honoured?").
func TestMaxmemoryCountsClientBuffers(t *testing.T) {
	s := startServer(t, "--shards", "4", "--maxmemory-policy", "allkeys-lru")
	ctx := context.Background()
	c := s.client(t, 2)
	// Eight connections each keep a reply buffer of about 60 KB.
	if err := c.Set(ctx, "big", strings.Repeat("x", 60_000), 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		rc := s.raw(t)
		rc.write(resp("GET", "big"))
		rc.readN(60_000 + 9)
	}
	c.Del(ctx, "big")
	used := memInfo(t, c)["used_memory"]
	limit := used + 200_000
	if err := c.ConfigSet(ctx, "maxmemory", fmt.Sprint(limit)).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8000; i++ {
		if err := c.SetEx(ctx, fmt.Sprintf("k:%d", i), "x", 1e4*1e9).Err(); err != nil {
			t.Fatal(err)
		}
	}
	m := memInfo(t, c)
	if m["evicted_keys"] == 0 {
		t.Fatalf("nothing evicted: used_memory %d, limit %d", m["used_memory"], limit)
	}
	if m["used_memory"] > limit+4096 {
		t.Errorf("used_memory %d over maxmemory %d (clients hold %d)", m["used_memory"], limit, m["mem_clients_normal"])
	}
}

// A command that arrived in pieces is assembled in a buffer of the
// client's own; once it has run, a big buffer is not kept for the life of
// the connection: as Redis's query buffer, it stays until the cron finds
// the client idle, then goes.
func TestBigQueryBufferIsReleased(t *testing.T) {
	s := startServer(t, "--shards", "2")
	rc := s.raw(t)
	rc.do(resp("CLIENT", "SETNAME", "big"), "+OK\r\n")
	req := resp("SET", "k", strings.Repeat("v", 300_000))
	rc.write(req[:200_000])
	time.Sleep(50 * time.Millisecond) // let the server read the first piece alone
	rc.write(req[200_000:])
	rc.expect("+OK\r\n")
	clientInfo := func() string {
		rc.write(resp("CLIENT", "INFO"))
		n, _ := strconv.Atoi(strings.TrimPrefix(rc.line(), "$"))
		return rc.readN(n + 2)
	}
	qbuf := func(info string) int {
		a, _ := strconv.Atoi(clientField(info, "qbuf"))
		b, _ := strconv.Atoi(clientField(info, "qbuf-free"))
		return a + b
	}
	if info := clientInfo(); qbuf(info) < 300_000 {
		t.Fatalf("CLIENT INFO right after a 300 KB command: %s", info)
	}
	ctl := s.client(t, 2)
	for deadline := time.Now().Add(8 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		l := clientLine(t, ctl, "big")
		if qbuf(l) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("query buffer kept while idle: %s", l)
		}
	}
}

func infoSection(t *testing.T, c *redis.Client, section string) map[string]string {
	t.Helper()
	out, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// INFO fields that used to be constants: repl_backlog_size follows
// repl-backlog-size; total_reads_processed and total_writes_processed count
// reads from and writes to clients, and CONFIG RESETSTAT clears them.
func TestInfoCountersAndBacklogSize(t *testing.T) {
	s := startServer(t, "--shards", "2")
	ctx := context.Background()
	c := s.client(t, 2)
	if v := infoSection(t, c, "replication")["repl_backlog_size"]; v != "1048576" {
		t.Errorf("default repl_backlog_size %q, want 1048576", v)
	}
	if err := c.ConfigSet(ctx, "repl-backlog-size", "2mb").Err(); err != nil {
		t.Fatal(err)
	}
	if v := infoSection(t, c, "replication")["repl_backlog_size"]; v != "2097152" {
		t.Errorf("repl_backlog_size %q after CONFIG SET repl-backlog-size 2mb", v)
	}
	for i := 0; i < 10; i++ {
		c.Set(ctx, fmt.Sprint("k", i), "v", 0)
	}
	st := infoSection(t, c, "stats")
	reads, _ := strconv.Atoi(st["total_reads_processed"])
	writes, _ := strconv.Atoi(st["total_writes_processed"])
	if reads < 10 || writes < 10 {
		t.Errorf("total_reads_processed %d, total_writes_processed %d after 10 commands", reads, writes)
	}
	c.ConfigResetStat(ctx)
	st = infoSection(t, c, "stats")
	if r, _ := strconv.Atoi(st["total_reads_processed"]); r > 2 {
		t.Errorf("total_reads_processed %d after CONFIG RESETSTAT", r)
	}
}

// Under a volatile policy with only persistent keys, writes are refused once
// the server is over maxmemory, not as soon as the first shard fills its
// share (Redis's unit/maxmemory "only allkeys-* should remove non-volatile
// keys"): no -OOM while used_memory is still 4 KB or more below the limit,
// and -OOM once well past it.
func TestMaxmemoryVolatileOOMIsServerWide(t *testing.T) {
	s := startServer(t, "--shards", "4", "--maxmemory-policy", "volatile-lru")
	ctx := context.Background()
	c := s.client(t, 2)
	used, _ := strconv.ParseInt(infoSection(t, c, "memory")["used_memory"], 10, 64)
	limit := used + 100*1024
	if err := c.ConfigSet(ctx, "maxmemory", fmt.Sprint(limit)).Err(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if err := c.Set(ctx, fmt.Sprint("key:", n), "x", 0).Err(); err != nil {
			u := infoSection(t, c, "memory")["used_memory"]
			t.Fatalf("SET number %d: %v, with used_memory %s of maxmemory %d", n, err, u, limit)
		}
		u, _ := strconv.ParseInt(infoSection(t, c, "memory")["used_memory"], 10, 64)
		if u+4096 > limit {
			break
		}
	}
	oom := false
	for i := 0; i < n && !oom; i++ {
		err := c.Set(ctx, fmt.Sprint("more:", i), "x", 0).Err()
		oom = err != nil && strings.Contains(err.Error(), "used memory > 'maxmemory'")
	}
	if !oom {
		t.Errorf("no -OOM after writing %d more keys past maxmemory", n)
	}
}

// Input that clients are still sending is memory too: with clients holding
// big unfinished commands and no write running, the server evicts keys to
// stay within maxmemory (Redis's unit/maxmemory "eviction due to input
// buffer of a dead client").
func TestMaxmemoryEvictsForClientInput(t *testing.T) {
	s := startServer(t, "--shards", "2", "--maxmemory-policy", "allkeys-lru")
	ctx := context.Background()
	c := s.client(t, 2)
	for i := 0; i < 20; i++ {
		if err := c.SetRange(ctx, fmt.Sprint("k", i), 100_000, "x").Err(); err != nil {
			t.Fatal(err)
		}
	}
	used, _ := strconv.ParseInt(infoSection(t, c, "memory")["used_memory"], 10, 64)
	if err := c.ConfigSet(ctx, "maxmemory", fmt.Sprint(used+1_000_000)).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		rc := s.raw(t)
		rc.write("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1000000\r\n" + strings.Repeat("x", 400_000))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := infoSection(t, c, "stats")
		if st["evicted_keys"] != "0" {
			break
		}
		if time.Now().After(deadline) {
			m := infoSection(t, c, "memory")
			t.Fatalf("no key evicted: used_memory %s, mem_clients_normal %s", m["used_memory"], m["mem_clients_normal"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DEBUG POPULATE creates <prefix>:<n> string keys on every shard, skipping
// existing names, values "value:<n>" cut or zero-padded to <size> (Redis's
// debug.c), with Redis's errors.
func TestDebugPopulate(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes")
	ctx := context.Background()
	c := s.client(t, 2)
	c.Set(ctx, "key:5", "mine", 0)
	runSteps(t, c, []step{
		cmd("DEBUG", "POPULATE", "1000").is("OK"),
		cmd("DBSIZE").is(int64(1000)),
		cmd("GET", "key:5").is("mine"),
		cmd("GET", "key:999").is("value:999"),
		cmd("DEBUG", "POPULATE", "10", "k", "3").is("OK"),
		cmd("GET", "k:7").is("val"),
		cmd("DEBUG", "POPULATE", "2", "z", "10").is("OK"),
		cmd("GET", "z:1").is("value:1\x00\x00\x00"),
		cmd("DBSIZE").is(int64(1012)),
		cmd("DEBUG", "POPULATE", "-1").is(errReply("ERR value is out of range, must be positive")),
		cmd("DEBUG", "POPULATE", "x").is(errReply("ERR value is out of range, must be positive")),
		cmd("DEBUG", "POPULATE", "1", "a", "-1").is(errReply("ERR value is out of range, must be positive")),
	})
}
