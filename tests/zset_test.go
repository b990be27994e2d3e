package tests

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Sorted sets end to end: go-redis against a 4-shard server, STOREs whose
// keys are spread over the shards, ZSCAN of a large set, and the AOF: a
// restart (with a rewrite in the middle) and redis-server loading our folder
// hold the same sorted sets with the same scores.

func TestZsetWithGoRedis(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := s.client(t, proto)
			c.FlushAll(ctx)
			if n := c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 0.1, Member: "b"}, redis.Z{Score: math.Inf(1), Member: "c"}).Val(); n != 3 {
				t.Fatalf("ZADD: %d", n)
			}
			got := c.ZRangeWithScores(ctx, "z", 0, -1).Val()
			want := []redis.Z{{Score: 0.1, Member: "b"}, {Score: 1, Member: "a"}, {Score: math.Inf(1), Member: "c"}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ZRANGE WITHSCORES: %v", got)
			}
			if v := c.ZIncrBy(ctx, "z", 2.5, "a").Val(); v != 3.5 {
				t.Fatalf("ZINCRBY: %v", v)
			}
			if r := c.ZRank(ctx, "z", "a").Val(); r != 1 {
				t.Fatalf("ZRANK: %d", r)
			}
			if err := c.Do(ctx, "ZADD", "z", "NX", "XX", 1, "a").Err(); err == nil ||
				err.Error() != "ERR XX and NX options at the same time are not compatible" {
				t.Fatalf("ZADD NX XX: %v", err)
			}
			if v := c.ZRangeByScore(ctx, "z", &redis.ZRangeBy{Min: "(0.1", Max: "+inf", Offset: 0, Count: 1}).Val(); !reflect.DeepEqual(v, []string{"a"}) {
				t.Fatalf("ZRANGEBYSCORE LIMIT: %v", v)
			}
			if v := c.ZPopMin(ctx, "z").Val(); !reflect.DeepEqual(v, []redis.Z{{Score: 0.1, Member: "b"}}) {
				t.Fatalf("ZPOPMIN: %v", v)
			}
			key, zs, err := c.ZMPop(ctx, "max", 5, "nokey", "z").Result()
			if err != nil || key != "z" || !reflect.DeepEqual(zs, []redis.Z{{Score: math.Inf(1), Member: "c"}, {Score: 3.5, Member: "a"}}) {
				t.Fatalf("ZMPOP: %q %v %v", key, zs, err)
			}
			if n := c.Exists(ctx, "z").Val(); n != 0 {
				t.Fatalf("emptied zset still exists")
			}
			c.ZAdd(ctx, "r", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
			if v := c.ZRandMemberWithScores(ctx, "r", 5).Val(); !reflect.DeepEqual(v, []redis.Z{{Score: 2, Member: "y"}, {Score: 1, Member: "x"}}) {
				t.Fatalf("ZRANDMEMBER 5 WITHSCORES: %v", v)
			}
			if v := c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"r", "r"}, Weights: []float64{1, 2}}).Val(); !reflect.DeepEqual(v, []redis.Z{{Score: 3, Member: "x"}, {Score: 6, Member: "y"}}) {
				t.Fatalf("ZUNION WITHSCORES: %v", v)
			}
		})
	}
}

// TestZsetStoreAcrossShards: eight source keys (spread over the four
// shards) combined into destinations on other shards.
func TestZsetStoreAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctx := context.Background()
	c := s.client(t, 2)
	var keys []string
	for i := 0; i < 8; i++ {
		k := "src" + strconv.Itoa(i)
		keys = append(keys, k)
		c.ZAdd(ctx, k, redis.Z{Score: float64(i), Member: "m" + strconv.Itoa(i)}, redis.Z{Score: 1, Member: "common"})
	}
	if n := c.ZUnionStore(ctx, "dst", &redis.ZStore{Keys: keys}).Val(); n != 9 {
		t.Fatalf("ZUNIONSTORE: %d", n)
	}
	if v := c.ZScore(ctx, "dst", "common").Val(); v != 8 {
		t.Fatalf("common summed to %v", v)
	}
	if n := c.ZInterStore(ctx, "inter", &redis.ZStore{Keys: keys, Aggregate: "MAX"}).Val(); n != 1 {
		t.Fatalf("ZINTERSTORE: %d", n)
	}
	if v := c.ZRangeWithScores(ctx, "inter", 0, -1).Val(); !reflect.DeepEqual(v, []redis.Z{{Score: 1, Member: "common"}}) {
		t.Fatalf("ZINTERSTORE result: %v", v)
	}
	if n := c.ZDiffStore(ctx, "diff", keys...).Val(); n != 1 {
		t.Fatalf("ZDIFFSTORE: %d", n)
	}
	if n := c.ZRangeStore(ctx, "top", redis.ZRangeArgs{Key: "dst", Start: 0, Stop: 2, Rev: true}).Val(); n != 3 {
		t.Fatalf("ZRANGESTORE: %d", n)
	}
	if v := c.ZRange(ctx, "top", 0, -1).Val(); !reflect.DeepEqual(v, []string{"m6", "m7", "common"}) {
		t.Fatalf("ZRANGESTORE result: %v", v)
	}
	if n := c.ZInterCard(ctx, 0, keys...).Val(); n != 1 {
		t.Fatalf("ZINTERCARD: %d", n)
	}
}

// TestZscanLargeSet: a skiplist-encoded set scanned in steps returns every
// member with its score.
func TestZscanLargeSet(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctx := context.Background()
	c := s.client(t, 3)
	var zs []redis.Z
	for i := 0; i < 1000; i++ {
		zs = append(zs, redis.Z{Score: float64(i) / 4, Member: "m" + strconv.Itoa(i)})
	}
	c.ZAdd(ctx, "big", zs...)
	if enc := c.ObjectEncoding(ctx, "big").Val(); enc != "skiplist" {
		t.Fatalf("encoding %s", enc)
	}
	seen := map[string]string{}
	var cursor uint64
	for calls := 0; ; calls++ {
		page, next, err := c.ZScan(ctx, "big", cursor, "", 50).Result()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(page); i += 2 {
			seen[page[i]] = page[i+1]
		}
		if cursor = next; cursor == 0 {
			break
		}
		if calls > 1000 {
			t.Fatal("ZSCAN does not end")
		}
	}
	if len(seen) != 1000 || seen["m3"] != "0.75" || seen["m999"] != "249.75" {
		t.Fatalf("ZSCAN: %d members, m3=%q", len(seen), seen["m3"])
	}
}

// zsetState is every sorted set of db 0: ZRANGE WITHSCORES as text, and the
// encoding.
func zsetState(t *testing.T, addr string) map[string][]string {
	t.Helper()
	p := mustDialP(t, addr)
	defer p.close()
	out := map[string][]string{}
	keys := p.mustDo(t, "KEYS", "*")
	for _, k := range keys.arr {
		r := p.mustDo(t, "ZRANGE", k.s, "0", "-1", "WITHSCORES")
		var items []string
		for _, e := range r.arr {
			items = append(items, e.s)
		}
		items = append(items, "enc="+p.mustDo(t, "OBJECT", "ENCODING", k.s).s)
		out[k.s] = items
	}
	return out
}

// TestZsetAOFRestartAndInterop: sorted sets written with the AOF on (and a
// rewrite in the middle) come back identical after a restart, and in
// redis-server 7 started on a copy of the folder.
func TestZsetAOFRestartAndInterop(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, aofArgs("always", "--shards", "4")...)
	var big []string
	for i := 0; i < 300; i++ {
		big = append(big, strconv.FormatFloat(float64(i)*0.1, 'g', -1, 64), "member"+strconv.Itoa(i))
	}
	before := [][]string{
		{"ZADD", "small", "1", "a", "0.1", "b", "inf", "c", "-inf", "d", "1e-300", "e"},
		append([]string{"ZADD", "big"}, big...),
		{"ZINCRBY", "small", "0.2", "b"},
		{"ZADD", "long", "1", "x", "2", string(make([]byte, 100))},
	}
	after := [][]string{
		{"ZREMRANGEBYSCORE", "big", "(10", "20"},
		{"ZPOPMIN", "small"},
		{"ZMPOP", "2", "nokey", "big", "MAX", "COUNT", "3"},
		{"ZUNIONSTORE", "u", "2", "small", "big", "WEIGHTS", "1", "3"},
		{"ZRANGESTORE", "rs", "big", "5", "(7", "BYSCORE"},
		{"ZADD", "gone", "1", "a"},
		{"ZREM", "gone", "a"},
		{"ZADD", "small", "INCR", "1", "a"},
	}
	doAll(t, s.Addr, before)
	p := mustDialP(t, s.Addr)
	if r := p.mustDo(t, "BGREWRITEAOF"); r.typ == '-' {
		t.Fatalf("BGREWRITEAOF: %v", r)
	}
	waitRewrite(t, p)
	p.close()
	doAll(t, s.Addr, after)
	want := zsetState(t, s.Addr)
	if len(want) != 5 {
		t.Fatalf("keys before restart: %v", want)
	}
	s.stop()

	s2 := startServerIn(t, dir, aofArgs("always", "--shards", "4")...)
	if got := zsetState(t, s2.Addr); !reflect.DeepEqual(got, want) {
		t.Errorf("after restart:\n got %v\nwant %v", brief(got), brief(want))
	}
	s2.stop()

	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: cannot check that it loads our folder")
	}
	r := startRedisServer(t, folderCopy(t, dir), "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	if got := zsetState(t, r.Addr); !reflect.DeepEqual(got, want) {
		t.Errorf("redis-server on our folder:\n got %v\nwant %v", brief(got), brief(want))
	}
}

// brief shortens a state for a failure message.
func brief(m map[string][]string) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for _, k := range keys {
		v := m[k]
		if len(v) > 8 {
			v = append(append(v[:4:4], "..."), v[len(v)-3:]...)
		}
		out += fmt.Sprintf("%s=%v ", k, v)
	}
	return out
}
