package tests

import (
	"context"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redshard/redshard/shard"
)

// setKeyOn returns a key with prefix that routes to shard i of n.
func setKeyOn(prefix string, i, n int) string {
	for j := 0; ; j++ {
		k := prefix + itoa(j)
		if shard.ShardOf([]byte(k), n) == i {
			return k
		}
	}
}

// setState is what the set tests compare: per key, its type, encoding,
// sorted members and absolute expiry.
func setState(t *testing.T, ctx context.Context, rdb *redis.Client, keys []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		typ := rdb.Type(ctx, k).Val()
		if typ == "none" {
			out[k] = "none"
			continue
		}
		ms, err := rdb.SMembers(ctx, k).Result()
		if err != nil {
			t.Fatalf("SMEMBERS %s: %v", k, err)
		}
		sort.Strings(ms)
		enc := rdb.ObjectEncoding(ctx, k).Val()
		at := rdb.Do(ctx, "PEXPIRETIME", k).Val()
		out[k] = typ + " " + enc + " " + strings.Join(ms, ",") + " @" + toStr(at)
	}
	return out
}

func toStr(v any) string {
	switch x := v.(type) {
	case int64:
		return i64toa(x)
	case string:
		return x
	}
	return "?"
}

func diffStates(got, want map[string]string) string {
	var d []string
	for k, w := range want {
		if got[k] != w {
			d = append(d, k+": got "+got[k]+", want "+w)
		}
	}
	sort.Strings(d)
	return strings.Join(d, "\n")
}

// TestSetsAcrossShardsSurviveRestart drives the set commands on a 4-shard
// server with keys spread over the shards (cross-shard SMOVE and STORE
// commands are atomic multi-shard commands there), then checks that the
// AOF replays to the same sets, that a rewrite's image does too, and that
// redis-server loads our folder with the same sets.
func TestSetsAcrossShardsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	args := aofArgs("always", "--shards", "4")
	s := startServerIn(t, dir, args...)
	rdb := s.client(t, 2)

	a, b := setKeyOn("a", 0, 4), setKeyOn("b", 1, 4)
	d, e := setKeyOn("d", 2, 4), setKeyOn("e", 3, 4)
	big, pop := setKeyOn("big", 1, 4), setKeyOn("pop", 2, 4)
	keys := []string{a, b, d, e, big, pop, "u", "x", "ints"}

	must := func(cmd redis.Cmder) {
		t.Helper()
		if err := cmd.Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", cmd.Args(), err)
		}
	}
	must(rdb.SAdd(ctx, a, "1", "2", "3", "x", "y"))
	must(rdb.SAdd(ctx, b, "2", "3", "4", "y"))
	must(rdb.SAdd(ctx, "ints", 5, 3, 1))
	if got := rdb.ObjectEncoding(ctx, "ints").Val(); got != "intset" {
		t.Errorf("ints encoded %q", got)
	}

	// SMOVE between shards: both sides change at once.
	if n := rdb.SMove(ctx, a, e, "x").Val(); !n {
		t.Fatal("SMOVE returned false")
	}
	if got := rdb.SMembers(ctx, e).Val(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("SMOVE destination %v", got)
	}
	if rdb.SIsMember(ctx, a, "x").Val() {
		t.Fatal("SMOVE left the member in the source")
	}

	// STORE forms with sources and destination on different shards; the
	// destination held a string with a TTL, which the result replaces.
	must(rdb.Set(ctx, d, "string", 0))
	must(rdb.Expire(ctx, d, time.Hour))
	if n := rdb.SInterStore(ctx, d, a, b).Val(); n != 3 {
		t.Fatalf("SINTERSTORE = %d", n)
	}
	if ttl := rdb.TTL(ctx, d).Val(); ttl != -1 {
		t.Errorf("SINTERSTORE kept the TTL: %v", ttl)
	}
	got := rdb.SMembers(ctx, d).Val()
	sort.Strings(got)
	if !slices.Equal(got, []string{"2", "3", "y"}) {
		t.Fatalf("SINTERSTORE stored %v", got)
	}
	if n := rdb.SInterCard(ctx, 0, a, b).Val(); n != 3 {
		t.Errorf("SINTERCARD = %d", n)
	}
	if n := rdb.SUnionStore(ctx, "u", a, b, e).Val(); n != 6 {
		t.Errorf("SUNIONSTORE = %d", n)
	}
	if n := rdb.SDiffStore(ctx, "x", a, b).Val(); n != 1 {
		t.Errorf("SDIFFSTORE = %d", n)
	}
	if got := rdb.SDiff(ctx, a, b).Val(); !slices.Equal(got, []string{"1"}) {
		t.Errorf("SDIFF = %v", got)
	}
	if n := rdb.SInterStore(ctx, "gone", a, "nokey").Val(); n != 0 {
		t.Errorf("SINTERSTORE with a missing key = %d", n)
	}
	// WRONGTYPE from another shard's key.
	must(rdb.Set(ctx, "str", "v", 0))
	if err := rdb.SUnion(ctx, a, "str").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Errorf("SUNION with a string: %v", err)
	}

	// A hashtable large enough for several SSCAN calls; SPOP with a count
	// (logged as SREMs in MULTI/EXEC) and with the whole set (logged as DEL).
	var members []any
	for i := 0; i < 700; i++ {
		members = append(members, "m"+itoa(i))
	}
	must(rdb.SAdd(ctx, big, members...))
	seen := map[string]bool{}
	var cursor uint64
	for {
		ms, next, err := rdb.SScan(ctx, big, cursor, "", 50).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			seen[m] = true
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if len(seen) != 700 {
		t.Errorf("SSCAN saw %d of 700 members", len(seen))
	}
	must(rdb.SAdd(ctx, pop, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
	if got := rdb.SPopN(ctx, pop, 3).Val(); len(got) != 3 {
		t.Errorf("SPOP 3 = %v", got)
	}
	if got := rdb.SPopN(ctx, big, 690).Val(); len(got) != 690 {
		t.Errorf("SPOP 690 = %d members", len(got))
	}
	must(rdb.SPop(ctx, pop))
	must(rdb.Expire(ctx, pop, time.Hour))
	must(rdb.SAdd(ctx, "ints", 9))
	if got := rdb.SPopN(ctx, "ints", 10).Val(); len(got) != 4 {
		t.Errorf("SPOP of the whole set = %v", got)
	}

	want := setState(t, ctx, rdb, keys)
	if want["ints"] != "none" || !strings.HasPrefix(want[pop], "set intset ") || !strings.HasPrefix(want[big], "set hashtable ") {
		t.Fatalf("state before restart: %v", want)
	}
	s.stop()
	logged := folderCopy(t, dir) // the commands as logged, before any rewrite

	// The log replays to the same sets.
	s = startServerIn(t, dir, args...)
	rdb = s.client(t, 2)
	if diff := diffStates(setState(t, ctx, rdb, keys), want); diff != "" {
		t.Fatalf("after restart:\n%s", diff)
	}

	// So does a rewrite's image (the sets dumped as SADD commands).
	p := mustDialP(t, s.Addr)
	if r := p.mustDo(t, "BGREWRITEAOF"); r.typ == '-' {
		t.Fatalf("BGREWRITEAOF: %v", r)
	}
	waitRewrite(t, p)
	p.close()
	s.stop()
	s = startServerIn(t, dir, args...)
	rdb = s.client(t, 2)
	if diff := diffStates(setState(t, ctx, rdb, keys), want); diff != "" {
		t.Fatalf("after rewrite and restart:\n%s", diff)
	}
	s.stop()

	t.Run("redis-server loads our sets", func(t *testing.T) {
		if _, err := exec.LookPath("redis-server"); err != nil {
			t.Skip("redis-server is not installed")
		}
		for name, folder := range map[string]string{"logged": logged, "rewritten": folderCopy(t, dir)} {
			r := startRedisServer(t, folder, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
			rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2, DisableIdentity: true})
			if diff := diffStates(setState(t, ctx, rc, keys), want); diff != "" {
				t.Errorf("redis-server on our %s folder:\n%s", name, diff)
			}
			rc.Close()
			r.stop(t)
		}
	})
}

// TestSetRepliesAreSetsInRESP3 checks the RESP3 reply types: sets for
// SMEMBERS, SINTER, SUNION, SDIFF and SPOP with a count, arrays for
// SRANDMEMBER and SMISMEMBER.
func TestSetRepliesAreSetsInRESP3(t *testing.T) {
	s := startServer(t, "--shards", "4")
	rc := s.raw(t)
	rc.write(resp("HELLO", "3"))
	rc.write(resp("PING")) // skip HELLO's map: read up to PING's reply
	for {
		line, err := rc.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "+PONG\r\n" {
			break
		}
	}
	rc.do(resp("SADD", "{k}a", "7"), ":1\r\n")
	rc.do(resp("SADD", "{k}b", "7", "8"), ":2\r\n")
	rc.do(resp("SMEMBERS", "{k}a"), "~1\r\n$1\r\n7\r\n")
	rc.do(resp("SINTER", "{k}a", "{k}b"), "~1\r\n$1\r\n7\r\n")
	rc.do(resp("SUNION", "{k}a", "{k}a"), "~1\r\n$1\r\n7\r\n")
	rc.do(resp("SDIFF", "{k}b", "{k}a"), "~1\r\n$1\r\n8\r\n")
	rc.do(resp("SMEMBERS", "nokey"), "~0\r\n")
	rc.do(resp("SRANDMEMBER", "{k}a", "-2"), "*2\r\n$1\r\n7\r\n$1\r\n7\r\n")
	rc.do(resp("SRANDMEMBER", "nokey", "2"), "*0\r\n")
	rc.do(resp("SRANDMEMBER", "nokey"), "_\r\n")
	rc.do(resp("SMISMEMBER", "{k}a", "7", "8"), "*2\r\n:1\r\n:0\r\n")
	rc.do(resp("SPOP", "{k}a", "1"), "~1\r\n$1\r\n7\r\n")
	rc.do(resp("SPOP", "{k}a", "1"), "~0\r\n")
}
