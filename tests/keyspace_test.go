package tests

import (
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Strings and keys on a 4-shard server: every multi-key command below names
// keys on different shards, and the replies must be Redis's.

const nShards = 4

func TestStringCommandsAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)

	k := spreadKeys("str:", nShards, 2) // 8 keys, 2 on each shard
	if got := shardsOf(nShards, k...); got != nShards {
		t.Fatalf("keys %v cover %d shards, want %d", k, got, nShards)
	}
	a, b, cc, d, e, f, g, h := k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]

	runSteps(t, c, []step{
		cmd("SET", a, "hello").is("OK"),
		cmd("GET", a).is("hello"),
		cmd("GET", "missing").is(null),
		cmd("SET", a, "x", "NX").is(null),
		cmd("SET", a, "world", "XX", "GET").is("hello"),
		cmd("GET", a).is("world"),
		cmd("SETNX", a, "y").is(0),
		cmd("STRLEN", a).is(5),
		cmd("APPEND", a, "!!").is(7),
		cmd("APPEND", b, "new").is(3),
		cmd("GET", a).is("world!!"),
		cmd("GETRANGE", a, 1, 3).is("orl"),
		cmd("SETRANGE", b, 5, "z").is(6),
		cmd("GET", b).is("new\x00\x00z"),
		cmd("INCR", cc).is(1),
		cmd("INCR", cc).is(2),
		cmd("INCRBY", cc, 10).is(12),
		cmd("DECR", cc).is(11),
		cmd("DECRBY", cc, 20).is(-9),
		cmd("INCR", a).is(errReply("ERR value is not an integer or out of range")),
		cmd("SET", d, "10.5").is("OK"),
		cmd("INCRBYFLOAT", d, "0.1").is("10.6"),
		cmd("INCRBYFLOAT", a, "1").is(errReply("ERR value is not a valid float")),
		cmd("GETSET", d, "v").is("10.6"),
		cmd("GETDEL", d).is("v"),
		cmd("GET", d).is(null),
		cmd("TYPE", a).is("string"),
		cmd("TYPE", d).is("none"),
		cmd("SET", a).is(errReply("ERR wrong number of arguments for 'set' command")),
		cmd("SET", a, "v", "BOGUS").is(errReply("ERR syntax error")),

		// multi-key commands spanning all four shards
		cmd("MSET", a, "1", b, "2", cc, "3", d, "4", e, "5", f, "6", g, "7", h, "8").is("OK"),
		cmd("MGET", a, b, cc, d, "missing", e, f, g, h).is([]any{"1", "2", "3", "4", nil, "5", "6", "7", "8"}),
		cmd("MSET", a, "1", b).is(errReply("ERR wrong number of arguments for 'mset' command")),
		cmd("MSETNX", "fresh:1", "x", a, "y").is(0),
		cmd("EXISTS", "fresh:1").is(0),
		cmd("GET", a).is("1"),
		cmd("MSETNX", "fresh:1", "x", "fresh:2", "y", "fresh:3", "z").is(1),
		cmd("MGET", "fresh:1", "fresh:2", "fresh:3").is([]any{"x", "y", "z"}),
		cmd("EXISTS", a, b, cc, d, "missing").is(4),
		cmd("EXISTS", a, a, a).is(3),
		cmd("DEL", a, b, "missing", cc).is(3),
		cmd("EXISTS", a, b, cc, d).is(1),
		cmd("UNLINK", d, e).is(2),
		cmd("TOUCH", f, g, "missing").is(2),

		// RENAME / RENAMENX / COPY between shards
		cmd("RENAME", f, a).is("OK"),
		cmd("GET", a).is("6"),
		cmd("EXISTS", f).is(0),
		cmd("RENAME", f, b).is(errReply("ERR no such key")),
		cmd("RENAME", a, a).is("OK"),
		cmd("RENAMENX", a, g).is(0),
		cmd("RENAMENX", a, b).is(1),
		cmd("MGET", a, b, g).is([]any{nil, "6", "7"}),
		cmd("COPY", b, cc).is(1),
		cmd("COPY", b, g).is(0),
		cmd("COPY", b, g, "REPLACE").is(1),
		cmd("MGET", b, cc, g).is([]any{"6", "6", "6"}),
	})
}

func TestExpiry(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ctx := ctxT(t)
	keys := spreadKeys("exp:", nShards, 1)

	runSteps(t, c, []step{
		cmd("SET", keys[0], "v", "PX", 50).is("OK"),
		cmd("EXISTS", keys[0]).is(1),
		cmd("SET", keys[1], "v", "EX", 0).is(errReply("ERR invalid expire time in 'set' command")),
		cmd("SET", keys[1], "v").is("OK"),
		cmd("TTL", keys[1]).is(-1),
		cmd("TTL", "missing").is(-2),
		cmd("PTTL", "missing").is(-2),
		cmd("EXPIRE", "missing", 10).is(0),
		cmd("EXPIRE", keys[1], 100).is(1),
		cmd("TTL", keys[1]).is(100),
		cmd("PERSIST", keys[1]).is(1),
		cmd("PERSIST", keys[1]).is(0),
		cmd("TTL", keys[1]).is(-1),
		cmd("SET", keys[2], "v", "EX", 100).is("OK"),
		cmd("SET", keys[2], "w", "KEEPTTL").is("OK"),
		cmd("TTL", keys[2]).is(100),
		cmd("SET", keys[2], "w").is("OK"),
		cmd("TTL", keys[2]).is(-1),
		cmd("EXPIREAT", keys[2], 1).is(1), // a time in the past deletes the key
		cmd("EXISTS", keys[2]).is(0),
	})

	pttl, err := c.Do(ctx, "PTTL", keys[0]).Int64()
	if err == nil && (pttl > 50 || pttl < -2) {
		t.Errorf("PTTL after SET PX 50 = %d, want <= 50", pttl)
	}
	time.Sleep(120 * time.Millisecond)
	runSteps(t, c, []step{
		cmd("GET", keys[0]).is(null),
		cmd("EXISTS", keys[0]).is(0),
		cmd("PTTL", keys[0]).is(-2),
	})

	// Active expiry: keys that are never touched again still leave the
	// keyspace (Redis's expire cycle runs 10 times a second).
	var mset []any
	mset = append(mset, "MSET")
	for i := 0; i < 200; i++ {
		mset = append(mset, "active:"+strconv.Itoa(i), "v")
	}
	checkReply(t, c.Do(ctx, mset...), mset[:1], "OK")
	for i := 0; i < 200; i++ {
		checkReply(t, c.Do(ctx, "PEXPIRE", "active:"+strconv.Itoa(i), 30), nil, int64(1))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatalf("DBSIZE: %v", err)
		}
		if n == 1 { // keys[1] only
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("DBSIZE = %d 5s after 200 keys expired untouched, want 1 (active expiry)", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestScanSmallDataSetInOneCall: with several shards, SCAN 0 over a data
// set of fewer keys than its COUNT returns them all with cursor 0, as
// Redis's does (it used to return one shard's keys and the next shard's
// cursor), and reclaims the expired keys of every shard it meets
// (unit/expire's "SCAN: Lazy-expire should not be wrapped in MULTI/EXEC");
// over a large data set each call still stays on one shard.
func TestScanSmallDataSetInOneCall(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	keys := spreadKeys("small", 4, 2) // two keys on each shard
	for _, k := range keys {
		c.Set(ctx, k, "v", 0)
	}
	got, cursor, err := c.Scan(ctx, 0, "", 0).Result()
	if err != nil || cursor != 0 || len(got) != len(keys) {
		t.Fatalf("SCAN 0 over %d keys on 4 shards: %d keys, cursor %d, %v", len(keys), len(got), cursor, err)
	}
	// Expired keys, met by one SCAN 0, are deleted on every shard.
	c.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	for _, k := range keys {
		c.PExpire(ctx, k, time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if got, cursor, err := c.Scan(ctx, 0, "", 0).Result(); err != nil || cursor != 0 || len(got) != 0 {
		t.Fatalf("SCAN 0 over expired keys: %v, cursor %d, %v", got, cursor, err)
	}
	if n := c.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("DBSIZE %d after SCAN 0 met every key expired", n)
	}
	// A large data set: COUNT 10 calls return about ten keys each.
	if err := c.Do(ctx, "DEBUG", "POPULATE", "20000").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the loops' cron publishes their key counts
	got, cursor, err = c.Scan(ctx, 0, "", 10).Result()
	if err != nil || cursor == 0 || len(got) > 20 {
		t.Fatalf("SCAN 0 COUNT 10 over 20000 keys: %d keys, cursor %d, %v", len(got), cursor, err)
	}
}

func TestScanReturnsEveryKey(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ctx := ctxT(t)
	const n = 10000
	want := map[string]bool{}
	for i := 0; i < n; i += 500 {
		args := []any{"MSET"}
		for j := i; j < i+500; j++ {
			k := fmt.Sprintf("scan:%05d", j)
			want[k] = true
			args = append(args, k, j)
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("MSET: %v", err)
		}
	}
	// one more key that MATCH must filter out
	if err := c.Set(ctx, "other", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		match string
		count int64
	}{
		{"count 10", "", 10},
		{"count 100", "", 100},
		{"count 1000 match", "scan:*", 1000},
		{"default count match", "scan:*", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]int{}
			var cursor uint64
			calls := 0
			for {
				keys, next, err := c.Scan(ctx, cursor, tc.match, tc.count).Result()
				if err != nil {
					t.Fatalf("SCAN %d: %v", cursor, err)
				}
				for _, k := range keys {
					seen[k]++
				}
				calls++
				if next == 0 {
					break
				}
				if calls > 20*n {
					t.Fatalf("SCAN did not finish after %d calls", calls)
				}
				cursor = next
			}
			for k := range want {
				if seen[k] == 0 {
					t.Errorf("SCAN never returned %q", k)
				}
			}
			if tc.match == "" {
				if seen["other"] == 0 {
					t.Errorf("SCAN never returned %q", "other")
				}
				if len(seen) != n+1 {
					t.Errorf("SCAN returned %d distinct keys, want %d", len(seen), n+1)
				}
			} else if seen["other"] != 0 {
				t.Errorf("SCAN MATCH %q returned %q", tc.match, "other")
			}
		})
	}

	runSteps(t, c, []step{
		cmd("SCAN", "abc").is(errReply("ERR invalid cursor")),
		cmd("SCAN", 0, "COUNT", 0).is(errReply("ERR syntax error")),
	})
}

func TestKeysDBSizeFlushall(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ctx := ctxT(t)

	users := spreadKeys("user:", nShards, 3)
	args := []any{"MSET"}
	for _, k := range users {
		args = append(args, k, "1")
	}
	args = append(args, "hello", "1", "hallo", "1", "hxllo", "1", "heeeello", "1")
	checkReply(t, c.Do(ctx, args...), args[:1], "OK")

	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"user:*", users},
		{"h?llo", []string{"hallo", "hello", "hxllo"}},
		{"h*llo", []string{"hallo", "heeeello", "hello", "hxllo"}},
		{"h[ae]llo", []string{"hallo", "hello"}},
		{"nomatch*", []string{}},
		{"hello", []string{"hello"}},
	} {
		t.Run("KEYS "+tc.pattern, func(t *testing.T) {
			got, err := c.Keys(ctx, tc.pattern).Result()
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			want := append([]string{}, tc.want...)
			sort.Strings(want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("KEYS %s = %v, want %v", tc.pattern, got, want)
			}
		})
	}

	runSteps(t, c, []step{cmd("DBSIZE").is(len(users) + 4)})
	if k, err := c.RandomKey(ctx).Result(); err != nil || c.Exists(ctx, k).Val() != 1 {
		t.Errorf("RANDOMKEY = %q, %v: want an existing key", k, err)
	}
	runSteps(t, c, []step{
		cmd("SELECT", 1).is("OK"),
		cmd("SET", "in-db1", "x").is("OK"),
		cmd("DBSIZE").is(1),
		cmd("FLUSHDB").is("OK"),
		cmd("DBSIZE").is(0),
		cmd("SET", "in-db1", "x").is("OK"),
		cmd("SELECT", 0).is("OK"),
		cmd("DBSIZE").is(len(users) + 4),
		cmd("FLUSHALL").is("OK"),
		cmd("DBSIZE").is(0),
		cmd("KEYS", "*").is([]any{}),
		cmd("RANDOMKEY").is(null),
		cmd("SELECT", 1).is("OK"),
		cmd("DBSIZE").is(0),
		cmd("FLUSHALL", "ASYNC").is("OK"),
		cmd("FLUSHALL", "BOGUS").is(errReply("ERR syntax error")),
	})
}

func TestSelectIsolatesDatabases(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ctx := ctxT(t)
	k := spreadKeys("db:", nShards, 1)

	// go-redis pins one connection per call; a Conn keeps the SELECT.
	conn := c.Conn()
	defer conn.Close()
	steps := []step{
		cmd("MSET", k[0], "db0", k[1], "db0").is("OK"),
		cmd("SELECT", 1).is("OK"),
		cmd("MGET", k[0], k[1]).is([]any{nil, nil}),
		cmd("MSET", k[0], "db1", k[2], "db1").is("OK"),
		cmd("DBSIZE").is(2),
		cmd("RENAME", k[2], k[3]).is("OK"),
		cmd("SELECT", 0).is("OK"),
		cmd("MGET", k[0], k[1], k[2], k[3]).is([]any{"db0", "db0", nil, nil}),
		cmd("DBSIZE").is(2),
		cmd("MOVE", k[1], 1).is(1),
		cmd("MOVE", k[0], 1).is(0), // exists in db 1 already
		cmd("EXISTS", k[1]).is(0),
		cmd("SELECT", 1).is("OK"),
		cmd("MGET", k[0], k[1], k[3]).is([]any{"db1", "db0", "db1"}),
		cmd("SELECT", 16).is(errReply("ERR DB index is out of range")),
		cmd("SELECT", -1).is(errReply("ERR DB index is out of range")),
		cmd("SELECT", "x").is(errReply("ERR value is not an integer or out of range")),
		cmd("GET", k[0]).is("db1"), // still in db 1
		cmd("SWAPDB", 0, 1).is("OK"),
		cmd("GET", k[0]).is("db0"),
	}
	for _, st := range steps {
		checkReply(t, conn.Do(ctx, st.args...), st.args, st.want)
	}

	// A client configured for db 2 sees only db 2.
	c2 := s.clientWith(t, func(o *redis.Options) { o.DB = 2 })
	runSteps(t, c2, []step{
		cmd("DBSIZE").is(0),
		cmd("SET", k[0], "db2").is("OK"),
	})
	runSteps(t, c, []step{cmd("GET", k[0]).is("db1")}) // db 0 after SWAPDB holds db 1's data
}

func TestHashTagsKeepKeysTogether(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)

	if shardsOf(nShards, "{user1}.a", "{user1}.b", "user1") != 1 {
		t.Fatalf("{user1}.a, {user1}.b and user1 are not on one shard")
	}
	// find a plain key on another shard, to mix tagged and untagged keys
	other := spreadKeys("plain:", nShards, 1)
	var far string
	for _, k := range other {
		if shardsOf(nShards, k, "user1") == 2 {
			far = k
		}
	}
	runSteps(t, c, []step{
		cmd("MSET", "{user1}.a", "1", "{user1}.b", "2").is("OK"),
		cmd("MGET", "{user1}.a", "{user1}.b").is([]any{"1", "2"}),
		cmd("RENAME", "{user1}.a", "{user1}.c").is("OK"),
		cmd("MGET", "{user1}.a", "{user1}.b", "{user1}.c").is([]any{nil, "2", "1"}),
		cmd("MSETNX", "{user1}.a", "x", "{user1}.b", "y").is(0),
		cmd("RENAME", "{user1}.c", far).is("OK"),
		cmd("MGET", "{user1}.c", far).is([]any{nil, "1"}),
		cmd("RENAME", far, "{user1}.a").is("OK"),
		cmd("DEL", "{user1}.a", "{user1}.b", far).is(2),
		// an empty tag is not a tag: "{}" keys hash whole
		cmd("MSET", "{}.a", "1", "{}.b", "2").is("OK"),
		cmd("MGET", "{}.a", "{}.b").is([]any{"1", "2"}),
	})
}
