package tests

// maxmemory end to end: eviction keeps used_memory at the limit, noeviction
// answers -OOM, evicted keys are logged to the AOF as DEL.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func memInfo(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	out, err := c.Info(context.Background(), "memory", "stats", "keyspace").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	for _, line := range strings.Split(out, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				m[k] = n
			}
			if keys, _, ok := strings.Cut(strings.TrimPrefix(v, "keys="), ","); ok && strings.HasPrefix(k, "db") {
				m[k+"_keys"], _ = strconv.ParseInt(keys, 10, 64) // db0:keys=N,...
			}
		}
	}
	return m
}

// fill writes n keys of 100-byte values in pipelines of 1000 and returns
// the errors the writes got.
func fill(t *testing.T, c *redis.Client, prefix string, n int) map[string]int {
	t.Helper()
	ctx := context.Background()
	val := strings.Repeat("v", 100)
	errs := map[string]int{}
	for i := 0; i < n; i += 1000 {
		p := c.Pipeline()
		for j := i; j < i+1000 && j < n; j++ {
			p.Set(ctx, fmt.Sprintf("%s:%d", prefix, j), val, 0)
		}
		cmds, _ := p.Exec(ctx)
		for _, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				errs[err.Error()]++
			}
		}
	}
	return errs
}

func TestMaxmemoryAllkeysLRU(t *testing.T) {
	const limit = 8 << 20
	s := startServer(t, "--shards", "4", "--maxmemory", strconv.Itoa(limit), "--maxmemory-policy", "allkeys-lru")
	c := s.client(t, 2)
	if errs := fill(t, c, "k", 150_000); len(errs) > 0 {
		t.Fatalf("writes failed under allkeys-lru: %v", errs)
	}
	m := memInfo(t, c)
	if m["used_memory"] > limit*105/100 || m["used_memory"] < limit*80/100 {
		t.Errorf("used_memory %d after filling past maxmemory %d", m["used_memory"], limit)
	}
	// Keys and evictions from one INFO (every shard held): the cron may
	// evict between two separate reads.
	n := m["db0_keys"]
	if m["evicted_keys"] == 0 || n+m["evicted_keys"] != 150_000 {
		t.Errorf("%d keys left, %d evicted, of 150000 written", n, m["evicted_keys"])
	}
	// The most recently written keys are the ones kept. The LRU clock has
	// Redis's one-second resolution, so keys written in the same second as
	// the last ones tie with them and a few of those go too; random
	// eviction would keep about a third.
	recent := 0
	for i := 149_000; i < 150_000; i++ {
		if c.Exists(context.Background(), fmt.Sprintf("k:%d", i)).Val() == 1 {
			recent++
		}
	}
	if recent < 950 {
		t.Errorf("only %d of the last 1000 keys written are still there", recent)
	}
	t.Logf("used_memory %d (limit %d), rss %d, %d keys, %d evicted", m["used_memory"], limit, m["used_memory_rss"], n, m["evicted_keys"])
}

func TestMaxmemoryNoeviction(t *testing.T) {
	const limit = 8 << 20
	s := startServer(t, "--shards", "2", "--maxmemory", strconv.Itoa(limit))
	c := s.client(t, 2)
	ctx := context.Background()
	errs := fill(t, c, "k", 100_000)
	const oom = "OOM command not allowed when used memory > 'maxmemory'."
	if errs[oom] == 0 || len(errs) != 1 {
		t.Fatalf("writes past maxmemory under noeviction got %v, want only %q", errs, oom)
	}
	m := memInfo(t, c)
	if m["evicted_keys"] != 0 || m["used_memory"] > limit*105/100 {
		t.Fatalf("noeviction: evicted_keys %d, used_memory %d", m["evicted_keys"], m["used_memory"])
	}
	// Reads and deletes go on; a delete makes room for writes again.
	if v, err := c.Get(ctx, "k:0").Result(); err != nil || len(v) != 100 {
		t.Fatalf("GET under OOM: %q %v", v, err)
	}
	if err := c.Set(ctx, "more", "x", 0).Err(); err == nil || err.Error() != oom {
		t.Fatalf("SET at the limit: %v", err)
	}
	for i := 0; i < 20_000; i++ {
		c.Del(ctx, fmt.Sprintf("k:%d", i))
	}
	if err := c.Set(ctx, "more", "x", 0).Err(); err != nil {
		t.Fatalf("SET after deleting keys: %v", err)
	}
	// CONFIG SET maxmemory 0 lifts the limit.
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if errs := fill(t, c, "after", 50_000); len(errs) > 0 {
		t.Fatalf("writes with maxmemory 0: %v", errs)
	}
}

// TestEvictionIsLogged: evicted keys are logged as DEL, so the data set after
// a restart is the one that was in memory.
func TestEvictionIsLogged(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--shards", "2", "--maxmemory", strconv.Itoa(8 << 20), "--maxmemory-policy", "allkeys-random", "--appendonly", "yes"}
	s := startServerIn(t, dir, args...)
	c := s.client(t, 2)
	if errs := fill(t, c, "k", 80_000); len(errs) > 0 {
		t.Fatalf("writes failed: %v", errs)
	}
	if ev := memInfo(t, c)["evicted_keys"]; ev == 0 {
		t.Fatal("nothing was evicted")
	}
	// Lift the limit before counting: the cron may still evict a few keys
	// while memory settles (client buffers are freed or trimmed later).
	if err := c.ConfigSet(context.Background(), "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	before, _ := c.DBSize(context.Background()).Result()
	s.stop()
	s = startServerIn(t, dir, "--shards", "2", "--appendonly", "yes")
	c = s.client(t, 2)
	if after, _ := c.DBSize(context.Background()).Result(); after != before {
		t.Fatalf("%d keys after the restart, %d before", after, before)
	}
}

// TestConfigSetMaxmemoryEvictsAtOnce: lowering maxmemory evicts without
// waiting for a write, and a limit below what the server holds at startup
// leaves room for nothing (Redis's CONFIG SET maxmemory 1).
func TestConfigSetMaxmemoryEvictsAtOnce(t *testing.T) {
	s := startServer(t, "--shards", "2", "--maxmemory-policy", "allkeys-lru")
	c := s.client(t, 2)
	ctx := context.Background()
	if errs := fill(t, c, "k", 20_000); len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.DBSize(ctx).Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d keys left 5s after CONFIG SET maxmemory 1", c.DBSize(ctx).Val())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Set(ctx, "x", "y", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM ") {
		t.Fatalf("SET under maxmemory 1: %v", err)
	}
}

// TestMaxmemoryLimitHonoured is Redis's "is the memory limit honoured?":
// with maxmemory 100 KiB above what is used, filled, as many keys again
// leave used_memory under the limit plus 4 KiB, under every policy and
// however the budget is split over shards. The same connection writes and
// reads INFO, so its own memory must be counted the same way in both.
func TestMaxmemoryLimitHonoured(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards="+shards, func(t *testing.T) {
			s := startServer(t, "--shards", shards)
			c := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
			ctx := context.Background()
			used := func() int64 { return memInfo(t, c)["used_memory"] }
			for _, policy := range []string{"allkeys-random", "allkeys-lru", "allkeys-lfu",
				"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
				c.FlushAll(ctx)
				c.ConfigResetStat(ctx)
				limit := used() + 100<<10
				c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10))
				c.ConfigSet(ctx, "maxmemory-policy", policy)
				n := 0
				for used()+4096 <= limit {
					if err := c.SetEx(ctx, fmt.Sprintf("key:%d:%d", n, time.Now().UnixNano()), "x", time.Hour).Err(); err != nil {
						t.Fatalf("%s: SETEX while filling: %v", policy, err)
					}
					n++
				}
				if n <= 10 {
					t.Fatalf("%s: only %d keys fill 100 KiB", policy, n)
				}
				for j := 0; j < n; j++ {
					c.SetEx(ctx, fmt.Sprintf("again:%d", j), "x", time.Hour)
				}
				m := memInfo(t, c)
				if m["used_memory"] >= limit+4096 || m["evicted_keys"] == 0 {
					t.Errorf("%s: used_memory %d, limit %d (+4096), %d evicted", policy, m["used_memory"], limit, m["evicted_keys"])
				}
			}
		})
	}
}

// TestEvictionBeforeAnyCommand: as Redis's processCommand, every command
// evicts when used memory is over maxmemory, not only writes: clients whose
// input grows push the keys out by the next INFO, without waiting for the
// cron (hz 1 here) or a write.
func TestEvictionBeforeAnyCommand(t *testing.T) {
	s := startServer(t, "--shards", "2", "--hz", "1", "--maxmemory", "4mb", "--maxmemory-policy", "allkeys-random")
	c := s.client(t, 2)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		c.SetRange(ctx, fmt.Sprintf("k%d", i), 100_000, "x")
	}
	before := memInfo(t, c)
	if before["evicted_keys"] != 0 {
		t.Fatalf("%d keys evicted before the clients came", before["evicted_keys"])
	}
	// Ten clients each send most of a 300 KB command and stop (the input of
	// "dead" clients, 3 MB in all).
	for i := 0; i < 10; i++ {
		rc := s.raw(t)
		rc.write("*2\r\n$3\r\nget\r\n$300000\r\n" + strings.Repeat("x", 290_000))
	}
	var m map[string]int64
	waitFor(t, "the clients' input", func() bool {
		m = memInfo(t, c)
		return m["mem_clients_normal"] > 2_500_000
	})
	if m["evicted_keys"] == 0 || m["used_memory"] > 4<<20+4096 {
		t.Fatalf("INFO seeing %d bytes of clients: %d keys evicted, used_memory %d (maxmemory %d)",
			m["mem_clients_normal"], m["evicted_keys"], m["used_memory"], 4<<20)
	}
}

// TestShardOverItsShareAloneDoesNotEvict is Redis's "Don't rehash if used
// memory exceeds maxmemory after rehash" with the budget split over shards:
// a shard past its share while the server is within maxmemory evicts
// nothing (keys never hash so evenly that every share fills alike; here
// all of them share a hash tag, so one shard holds them all).
func TestShardOverItsShareAloneDoesNotEvict(t *testing.T) {
	s := startServer(t, "--shards", "4", "--maxmemory-policy", "allkeys-random")
	c := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	p := c.Pipeline()
	for i := 0; i < 4096; i++ {
		p.Set(ctx, fmt.Sprintf("{tag}:%d", i), "value", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	limit := memInfo(t, c)["used_memory"] + 10<<10
	c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10))
	c.Set(ctx, "{tag}:k1", "v1", 0)
	c.Set(ctx, "{tag}:k2", "v2", 0)
	if n := c.DBSize(ctx).Val(); n != 4098 {
		m := memInfo(t, c)
		t.Fatalf("dbsize %d, want 4098: used_memory %d, maxmemory %d, %d evicted", n, m["used_memory"], limit, m["evicted_keys"])
	}
	// Past maxmemory, the shard does evict.
	for i := 0; i < 400; i++ {
		c.Set(ctx, fmt.Sprintf("{tag}:more:%d", i), "value", 0)
	}
	if m := memInfo(t, c); m["evicted_keys"] == 0 || m["used_memory"] > limit+4096 {
		t.Fatalf("past maxmemory: %d evicted, used_memory %d, maxmemory %d", m["evicted_keys"], m["used_memory"], limit)
	}
}

// TestNoEvictClientsMemoryEvictsKeys: the memory of a client that may not
// be evicted (CLIENT NO-EVICT) counts in full against maxmemory, also over
// maxmemory-clients, so keys make room for it, as in Redis.
func TestNoEvictClientsMemoryEvictsKeys(t *testing.T) {
	s := startServer(t, "--shards", "2", "--maxmemory-policy", "allkeys-lru")
	c := s.clientWith(t, func(o *redis.Options) {
		o.PoolSize = 1
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			return cn.Do(ctx, "client", "no-evict", "on").Err()
		}
	})
	ctx := context.Background()
	fill(t, c, "k", 5000)
	limit := memInfo(t, c)["used_memory"] + 600<<10
	c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10))
	big := s.raw(t)
	big.do(resp("client", "setname", "big"), "+OK\r\n")
	big.do(resp("client", "no-evict", "on"), "+OK\r\n")
	c.ConfigSet(ctx, "maxmemory-clients", "200000")
	big.write("*2\r\n$3\r\nget\r\n$1000000\r\n" + strings.Repeat("x", 1000))
	var m map[string]int64
	waitFor(t, "keys evicted for the protected client", func() bool {
		m = memInfo(t, c)
		return m["evicted_keys"] > 0
	})
	if m["evicted_clients"] != 0 || clientLine(t, c, "big") == "" {
		t.Fatalf("the protected client went: %d clients evicted", m["evicted_clients"])
	}
}

// TestClientEvictionBeforeKeys is Redis's "eviction due to output buffers
// of many MGET clients, client eviction: true": with maxmemory-clients set,
// clients that pile up replies are evicted, and no key goes for the memory
// they are about to give back, however many are over the limit at once.
func TestClientEvictionBeforeKeys(t *testing.T) {
	s := startServer(t, "--shards", "4", "--maxmemory", "11mb", "--maxmemory-policy", "allkeys-lru")
	c := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	c.ConfigSet(ctx, "maxmemory-clients", "3mb")
	c.Do(ctx, "client", "no-evict", "on")
	for j := 0; j < 50; j++ {
		c.SetRange(ctx, strconv.Itoa(j), 100_000, "x")
	}
	var conns []*rawConn
	for j := 0; j < 20; j++ {
		conns = append(conns, s.raw(t))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := memInfo(t, c)
		if m["evicted_keys"] != 0 {
			t.Fatalf("%d keys evicted (%d clients): used_memory %d", m["evicted_keys"], m["evicted_clients"], m["used_memory"])
		}
		if m["evicted_clients"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no client evicted")
		}
		for _, rc := range conns {
			_ = rc.c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = rc.c.Write([]byte(resp("mget", "1")))
		}
	}
	if n := c.DBSize(ctx).Val(); n != 50 {
		t.Fatalf("dbsize %d, want 50", n)
	}
}

// TestNoevictionRefusesOnEveryShard: under noeviction, once used_memory is
// over maxmemory every write is refused, also one to a shard still within
// its share of the budget (here all the data shares a hash tag, so one
// shard holds it all).
func TestNoevictionRefusesOnEveryShard(t *testing.T) {
	s := startServer(t, "--shards", "2")
	c := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	limit := memInfo(t, c)["used_memory"] + 200<<10
	c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10))
	const oom = "OOM command not allowed when used memory > 'maxmemory'."
	// Keys of the other shard than {a}'s: find one.
	other := ""
	for i := 0; other == ""; i++ {
		k := fmt.Sprintf("{b%d}", i)
		if shardsOf(2, "{a}", k) == 2 {
			other = k
		}
	}
	refused := false
	for i := 0; i < 10_000 && !refused; i++ {
		err := c.Set(ctx, fmt.Sprintf("{a}:%d", i), strings.Repeat("v", 100), 0).Err()
		if err != nil {
			if err.Error() != oom {
				t.Fatal(err)
			}
			refused = true
		}
	}
	if !refused {
		t.Fatal("no write refused")
	}
	if m := memInfo(t, c); m["used_memory"] <= limit {
		t.Fatalf("refused at used_memory %d, maxmemory %d", m["used_memory"], limit)
	}
	if err := c.Set(ctx, other, "x", 0); err.Err() == nil || err.Err().Error() != oom {
		t.Fatalf("SET on the other shard past maxmemory: %v", err.Err())
	}
}

// TestEvictionTakesTheServersView: with several shards, eviction stops as
// soon as used_memory is back within maxmemory, however unevenly the keys
// fall on the shards (unit/maxmemory's tracking feedback-loop test allows
// 10 to 50 keys evicted for 40 KB over). Here most keys share a hash tag,
// so one shard holds far more than its share of maxmemory: evicting it
// down to its share would take about a hundred keys.
func TestEvictionTakesTheServersView(t *testing.T) {
	s := startServer(t, "--shards", "4", "--maxmemory-policy", "allkeys-lru")
	c := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	name := func(prefix string, i int) string { return fmt.Sprintf("%s%d%s", prefix, i, strings.Repeat("x", 1000)) }
	p := c.Pipeline()
	for i := 0; i < 200; i++ {
		p.Set(ctx, name("{tag}", i), "x", 0)
	}
	for i := 0; i < 100; i++ {
		p.Set(ctx, name("spread", i), "x", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	limit := memInfo(t, c)["used_memory"] - 40000
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	var m map[string]int64
	waitFor(t, "eviction", func() bool {
		m = memInfo(t, c)
		return m["used_memory"] <= limit
	})
	// 40000 bytes are about 38 keys of 1 KB names.
	if ev := m["evicted_keys"]; ev < 30 || ev > 50 {
		t.Fatalf("%d keys evicted for 40000 bytes over maxmemory (used_memory %d, maxmemory %d)", ev, m["used_memory"], limit)
	}
	// Writes to any shard keep used_memory within maxmemory: those within
	// their share evict too while the whole is over.
	for i := 0; i < 200; i++ {
		c.Set(ctx, name("more", i), "x", 0)
	}
	if m := memInfo(t, c); m["used_memory"] > limit+4096 {
		t.Fatalf("used_memory %d after more writes, maxmemory %d", m["used_memory"], limit)
	}
}

// Under a volatile policy, a command whose shard has no key with an expiry
// while used_memory is over maxmemory evicts from the shards that have one
// before it runs, as Redis's performEvictions before every command; the
// invalidation of the evicted key reaches the tracking client before the
// command's reply (unit/tracking's "eviction keys should be before
// response", at 4 shards). Each round puts the two keys on other shards,
// from a new connection (so from any loop).
func TestEvictionElsewhereBeforeReply(t *testing.T) {
	s := startServer(t, "--shards", "4", "--maxmemory-policy", "volatile-random")
	c := s.client(t, 2)
	ctx := context.Background()
	for round := 0; round < 8; round++ {
		vol := fmt.Sprintf("volatile-%d", round)
		big := ""
		for i := 0; big == ""; i++ {
			if k := fmt.Sprintf("big-%d-%d", round, i); shardsOf(4, vol, k) == 2 {
				big = k
			}
		}
		if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
		rc := s.raw(t)
		rc.write(resp("HELLO", "3"))
		drain(rc)
		rc.do(resp("CLIENT", "TRACKING", "on"), "+OK\r\n")
		used := memInfo(t, c)["used_memory"]
		if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+100*1024, 10)).Err(); err != nil {
			t.Fatal(err)
		}
		rc.do(resp("SETEX", vol, "10000", "x"), "+OK\r\n")
		rc.do(resp("GET", vol), "$1\r\nx\r\n")
		rc.do(resp("SETBIT", big, "1600000", "0"), ":0\r\n") // 200 KB: over maxmemory
		push := fmt.Sprintf(">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n", len(vol), vol)
		rc.do(resp("GETBIT", big, "0"), push+":0\r\n")
		rc.expectSilent(50 * time.Millisecond)
		if n := c.Exists(ctx, vol).Val(); n != 0 {
			t.Fatalf("round %d: %s still there", round, vol)
		}
		c.Del(ctx, big)
		rc.c.Close()
	}
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
}
