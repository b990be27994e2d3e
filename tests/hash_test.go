package tests

import (
	"context"
	"os/exec"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Hashes end to end: go-redis against a 4-shard server.

func TestHashCommandsWithGoRedis(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	ctx := context.Background()

	if n, err := c.HSet(ctx, "h", "a", "1", "b", "2").Result(); err != nil || n != 2 {
		t.Fatalf("HSET: %d %v", n, err)
	}
	if v, err := c.HGet(ctx, "h", "a").Result(); err != nil || v != "1" {
		t.Fatalf("HGET: %q %v", v, err)
	}
	if _, err := c.HGet(ctx, "h", "zz").Result(); err != redis.Nil {
		t.Fatalf("HGET missing field: %v, want redis.Nil", err)
	}
	if vs, err := c.HMGet(ctx, "h", "a", "zz", "b").Result(); err != nil || !reflect.DeepEqual(vs, []any{"1", nil, "2"}) {
		t.Fatalf("HMGET: %v %v", vs, err)
	}
	if ok, err := c.HSetNX(ctx, "h", "a", "9").Result(); err != nil || ok {
		t.Fatalf("HSETNX existing: %v %v", ok, err)
	}
	if n, err := c.HIncrBy(ctx, "h", "n", 5).Result(); err != nil || n != 5 {
		t.Fatalf("HINCRBY: %d %v", n, err)
	}
	if f, err := c.HIncrByFloat(ctx, "h", "f", 10.5).Result(); err != nil || f != 10.5 {
		t.Fatalf("HINCRBYFLOAT: %v %v", f, err)
	}
	if err := c.HIncrBy(ctx, "h", "f", 1).Err(); err == nil || err.Error() != "ERR hash value is not an integer" {
		t.Fatalf("HINCRBY on 10.5: %v", err)
	}
	want := map[string]string{"a": "1", "b": "2", "n": "5", "f": "10.5"}
	if m, err := c.HGetAll(ctx, "h").Result(); err != nil || !reflect.DeepEqual(m, want) {
		t.Fatalf("HGETALL: %v %v", m, err)
	}
	if n, err := c.HDel(ctx, "h", "a", "zz").Result(); err != nil || n != 1 {
		t.Fatalf("HDEL: %d %v", n, err)
	}
	if n, err := c.HLen(ctx, "h").Result(); err != nil || n != 3 {
		t.Fatalf("HLEN: %d %v", n, err)
	}
	c.Set(ctx, "str", "x", 0)
	if err := c.HGet(ctx, "str", "a").Err(); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("HGET on a string: %v", err)
	}
	if err := c.HSet(ctx, "h", "a").Err(); err == nil || err.Error() != "ERR wrong number of arguments for 'hset' command" {
		t.Fatalf("HSET odd arguments: %v", err)
	}

	// A big hash on each shard: hashtable encoding, a full HSCAN.
	for i := 0; i < 8; i++ {
		key := "big" + strconv.Itoa(i)
		args := make([]any, 0, 2000)
		for j := 0; j < 1000; j++ {
			args = append(args, "field:"+strconv.Itoa(j), strconv.Itoa(j))
		}
		c.HSet(ctx, key, args...)
		if enc, _ := c.ObjectEncoding(ctx, key).Result(); enc != "hashtable" {
			t.Fatalf("%s: encoding %q", key, enc)
		}
		seen := map[string]string{}
		var cursor uint64
		for {
			kv, next, err := c.HScan(ctx, key, cursor, "field:1*", 50).Result()
			if err != nil {
				t.Fatalf("HSCAN: %v", err)
			}
			for k := 0; k < len(kv); k += 2 {
				seen[kv[k]] = kv[k+1]
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		if len(seen) != 111 || seen["field:123"] != "123" {
			t.Fatalf("HSCAN MATCH field:1* on %s: %d fields", key, len(seen))
		}
		if fs, err := c.HRandField(ctx, key, 5).Result(); err != nil || len(fs) != 5 {
			t.Fatalf("HRANDFIELD 5: %v %v", fs, err)
		}
	}
}

func TestHashRESP3Replies(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 3)
	ctx := context.Background()
	c.HSet(ctx, "h", "a", "1", "b", "2")
	rc := s.raw(t)
	// HELLO 3, then skip its reply up to PING's.
	rc.write("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n")
	for {
		line, err := rc.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "+PONG\r\n" {
			break
		}
	}
	rc.write("*2\r\n$7\r\nHGETALL\r\n$1\r\nh\r\n")
	rc.expect("%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n")
	rc.write("*4\r\n$10\r\nHRANDFIELD\r\n$1\r\nh\r\n$2\r\n-1\r\n$10\r\nWITHVALUES\r\n")
	got := rc.readN(4 + 4)
	if got != "*1\r\n*2\r\n" {
		t.Fatalf("HRANDFIELD -1 WITHVALUES under RESP3 starts %q", got)
	}
	if m, err := c.HGetAll(ctx, "h").Result(); err != nil || !reflect.DeepEqual(m, map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("go-redis RESP3 HGETALL: %v %v", m, err)
	}
}

// hashWrites fills hashes of both encodings on every shard.
func hashWrites(t *testing.T, c *redis.Client) {
	ctx := context.Background()
	for i := 0; i < 12; i++ {
		key := "h" + strconv.Itoa(i)
		n := 3
		if i%3 == 0 {
			n = 700 // hashtable
		}
		for j := 0; j < n; j++ {
			if err := c.HSet(ctx, key, "f"+strconv.Itoa(j), "v"+strconv.Itoa(i*j)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c.HIncrByFloat(ctx, key, "float", 0.1)
		c.HIncrByFloat(ctx, key, "float", 10.5)
		c.HIncrBy(ctx, key, "int", 7)
		c.HDel(ctx, key, "f1")
	}
	c.HSet(ctx, "gone", "a", "1")
	c.HDel(ctx, "gone", "a")
	c.HSet(ctx, "ttl", "a", "1")
	c.PExpireAt(ctx, "ttl", time.Now().Add(time.Hour))
}

// hashState reads every hash key as HGETALL plus its encoding.
func hashState(t *testing.T, addr string) map[string]any {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	out := map[string]any{}
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		m, err := c.HGetAll(ctx, k).Result()
		if err != nil {
			t.Fatalf("HGETALL %s: %v", k, err)
		}
		enc, _ := c.ObjectEncoding(ctx, k).Result()
		ttl, _ := c.PExpireTime(ctx, k).Result()
		out[k] = []any{m, enc, ttl}
	}
	return out
}

// TestHashPersistsWithAOF: hashes written with the AOF on (with a
// BGREWRITEAOF in the middle, so that the base holds Dump's HMSETs) come
// back the same after a restart, and redis-server 7 loads the folder to
// the same hashes.
func TestHashPersistsWithAOF(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, aofArgs("everysec", "--shards", "4")...)
	c := s.client(t, 2)
	hashWrites(t, c)
	p := mustDialP(t, s.Addr)
	if r := p.mustDo(t, "BGREWRITEAOF"); r.typ == '-' {
		t.Fatalf("BGREWRITEAOF: %v", r)
	}
	waitRewrite(t, p)
	ctx := context.Background()
	c.HSet(ctx, "h0", "after", "rewrite")
	c.HIncrByFloat(ctx, "h1", "float", 1.5)
	c.HDel(ctx, "h2", "f0")
	want := hashState(t, s.Addr)
	if len(want) != 13 {
		t.Fatalf("%d keys, want 13", len(want))
	}
	s.stop()

	s2 := startServerIn(t, dir, aofArgs("everysec", "--shards", "4")...)
	if got := hashState(t, s2.Addr); !reflect.DeepEqual(got, want) {
		t.Fatalf("after restart:\n%v\nwant\n%v", got, want)
	}
	s2.stop()

	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: cannot check that it loads our folder")
	}
	r := startRedisServer(t, folderCopy(t, dir), "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	if got := hashState(t, r.Addr); !reflect.DeepEqual(got, want) {
		t.Fatalf("redis-server on our folder:\n%v\nwant\n%v", got, want)
	}
}
