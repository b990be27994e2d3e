package tests

// DUMP, RESTORE and MIGRATE against redis-server 7.0: payloads go both
// ways for every type and encoding with the same replies, and MIGRATE
// moves keys redshard → redis-server and redis-server → redshard.

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// dumpCase builds one key by commands.
type dumpCase struct {
	name string
	cmds [][]any
	enc  string
}

func dumpCases() []dumpCase {
	many := func(cmd string, n int, f func(i int) []any) [][]any {
		var out [][]any
		for i := 0; i < n; i++ {
			out = append(out, append([]any{cmd, "k"}, f(i)...))
		}
		return out
	}
	long := strings.Repeat("x", 100)
	return []dumpCase{
		{"string int", [][]any{{"set", "k", "12345"}}, "int"},
		{"string embstr", [][]any{{"set", "k", "hello world"}}, "embstr"},
		{"string raw", [][]any{{"set", "k", strings.Repeat("abcdefgh", 40)}}, "raw"},
		{"string incompressible", [][]any{{"set", "k", "\x00\x01\x02\xff\xfe\xfd binary ÿ 0123456789"}}, "embstr"},
		{"list", [][]any{{"rpush", "k", "a", "1", "-77", long, ""}}, "quicklist"},
		{"list many nodes", many("rpush", 3000, func(i int) []any { return []any{fmt.Sprint("element-", i)} }), "quicklist"},
		{"set intset", [][]any{{"sadd", "k", "1", "-5", "70000", "9223372036854775807"}}, "intset"},
		{"set hashtable", [][]any{{"sadd", "k", "a", "b", "1", long}}, "hashtable"},
		{"set many ints", many("sadd", 700, func(i int) []any { return []any{i * 7} }), "hashtable"},
		{"zset listpack", [][]any{{"zadd", "k", "1", "a", "-2.5", "b", "inf", "c", "0", "d", "-inf", "e", "3.14159", "pi"}}, "listpack"},
		{"zset skiplist", many("zadd", 300, func(i int) []any { return []any{float64(i%37) / 3, fmt.Sprint("m", i)} }), "skiplist"},
		{"zset long member", [][]any{{"zadd", "k", "1", long, "2", "b"}}, "skiplist"},
		{"hash listpack", [][]any{{"hset", "k", "f", "v", "n", "123", "e", ""}}, "listpack"},
		{"hash hashtable", many("hset", 700, func(i int) []any { return []any{fmt.Sprint("f", i), i} }), "hashtable"},
		{"hash long value", [][]any{{"hset", "k", "f", long, "g", "h"}}, "hashtable"},
	}
}

// dumpReadAll is what the key's read commands answer, unordered types sorted.
func dumpReadAll(t *testing.T, c *redis.Client, key string) []any {
	t.Helper()
	ctx := ctxT(t)
	typ := c.Type(ctx, key).Val()
	enc := c.ObjectEncoding(ctx, key).Val()
	var v any
	switch typ {
	case "string":
		v = c.Get(ctx, key).Val()
	case "list":
		v = c.LRange(ctx, key, 0, -1).Val()
	case "set":
		m := c.SMembers(ctx, key).Val()
		sort.Strings(m)
		v = m
	case "zset":
		v = c.ZRangeWithScores(ctx, key, 0, -1).Val()
	case "hash":
		v = c.HGetAll(ctx, key).Val()
	}
	return []any{typ, enc, v, c.PTTL(ctx, key).Val() > 0}
}

func needRedisServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
}

// redisBeside starts redis-server 7.0 (appendonly no, and args) for the
// test, skipping the test where it is not installed, and returns a RESP2
// client.
func redisBeside(t *testing.T, args ...string) *redis.Client {
	t.Helper()
	needRedisServer(t)
	r := startRedisServer(t, t.TempDir(), append([]string{"--appendonly", "no"}, args...)...)
	rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// TestDumpRestoreWithRedis: a payload DUMPed by redis-server RESTOREs in
// redshard to the same replies and encoding, and back; redshard's DUMP
// of a value equals redis-server's byte for byte where the order is fixed.
func TestDumpRestoreWithRedis(t *testing.T) {
	rc := redisBeside(t)
	s := startServer(t, "--shards", "4")
	sc := s.client(t, 2)
	ctx := ctxT(t)
	for _, tc := range dumpCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []*redis.Client{rc, sc} {
				c.FlushAll(ctx)
				for _, args := range tc.cmds {
					if err := c.Do(ctx, args...).Err(); err != nil {
						t.Fatal(err)
					}
				}
				c.PExpire(ctx, "k", time.Hour)
			}
			want := dumpReadAll(t, rc, "k")
			if want[1] != tc.enc {
				t.Fatalf("redis-server built %v, want encoding %s", want[1], tc.enc)
			}
			if got := dumpReadAll(t, sc, "k"); !reflect.DeepEqual(got, want) {
				t.Fatalf("built by commands: redshard %v, redis-server %v", got, want)
			}
			// Byte for byte without LZF (whose matches differ), where the
			// order is fixed (hash tables have their own).
			rc.ConfigSet(ctx, "rdbcompression", "no")
			sc.ConfigSet(ctx, "rdbcompression", "no")
			if rp, sp := rc.Dump(ctx, "k").Val(), sc.Dump(ctx, "k").Val(); tc.enc != "hashtable" && rp != sp {
				i := 0
				for i < min(len(rp), len(sp)) && rp[i] == sp[i] {
					i++
				}
				t.Errorf("uncompressed DUMP differs: %d and %d bytes, from byte %d", len(rp), len(sp), i)
			}
			rc.ConfigSet(ctx, "rdbcompression", "yes")
			sc.ConfigSet(ctx, "rdbcompression", "yes")
			rp := rc.Dump(ctx, "k").Val()
			sp := sc.Dump(ctx, "k").Val()
			// redis-server's payload into redshard, redshard's into redis-server.
			if err := sc.RestoreReplace(ctx, "k2", time.Hour, rp).Err(); err != nil {
				t.Fatalf("redshard RESTORE of redis-server's payload: %v", err)
			}
			if got := dumpReadAll(t, sc, "k2"); !reflect.DeepEqual(got, want) {
				t.Fatalf("restored in redshard %v, want %v", got, want)
			}
			if err := rc.RestoreReplace(ctx, "k2", time.Hour, sp).Err(); err != nil {
				t.Fatalf("redis-server RESTORE of redshard's payload: %v", err)
			}
			if got := dumpReadAll(t, rc, "k2"); !reflect.DeepEqual(got, want) {
				t.Fatalf("restored in redis-server %v, want %v", got, want)
			}
			// And redshard's payload of the restored key back again.
			sp2 := sc.Dump(ctx, "k2").Val()
			if err := rc.RestoreReplace(ctx, "k3", 0, sp2).Err(); err != nil {
				t.Fatalf("redis-server RESTORE of redshard's re-DUMP: %v", err)
			}
			if got, want := dumpReadAll(t, rc, "k3")[:3], want[:3]; !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip %v, want %v", got, want)
			}
		})
	}
	// The same errors.
	rc.Set(ctx, "foo", "bar", 0)
	sc.Set(ctx, "foo", "bar", 0)
	p := rc.Dump(ctx, "foo").Val()
	for _, args := range [][]any{
		{"restore", "foo", 0, p},
		{"restore", "x", -1, p},
		{"restore", "x", "a", p},
		{"restore", "x", 0, p[:len(p)-1] + "!"},
		{"restore", "x", 0, "\x04\x00" + p[len(p)-10:]},
		{"restore", "x", 0, p, "freq", 300},
		{"restore", "x", 0, p, "idletime", -3},
		{"restore", "x", 0, p, "nope"},
	} {
		_, werr := rc.Do(ctx, args...).Result()
		_, gerr := sc.Do(ctx, args...).Result()
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("%v: redshard %v, redis-server %v", args[:3], gerr, werr)
		}
	}
}

// TestMigrateWithRedis: MIGRATE from redshard to redis-server and back,
// single keys and KEYS over several shards, COPY, REPLACE, TTLs, NOKEY,
// the target's errors and AUTH.
func TestMigrateWithRedis(t *testing.T) {
	needRedisServer(t)
	r := startRedisServer(t, t.TempDir(), "--appendonly", "no")
	rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2})
	defer rc.Close()
	s := startServer(t, "--shards", "4")
	sc := s.client(t, 2)
	ctx := ctxT(t)
	rhost, rport, _ := strings.Cut(r.Addr, ":")
	shost, sport, _ := strings.Cut(s.Addr, ":")

	// redshard → redis-server, every type.
	keys := spreadKeys("mig", 8, 2)
	for i, k := range keys {
		switch i % 5 {
		case 0:
			sc.Set(ctx, k, "v"+k, 0)
		case 1:
			sc.RPush(ctx, k, "a", "b", k)
		case 2:
			sc.SAdd(ctx, k, 1, 2, k)
		case 3:
			sc.ZAdd(ctx, k, redis.Z{Score: 1.5, Member: k})
		case 4:
			sc.HSet(ctx, k, "f", k)
		}
	}
	sc.PExpire(ctx, keys[0], time.Hour)
	want := map[string][]any{}
	for _, k := range keys {
		want[k] = dumpReadAll(t, sc, k)
	}
	args := []any{"migrate", rhost, rport, "", 3, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, "missing")
	if v, err := sc.Do(ctx, args...).Result(); err != nil || v != "OK" {
		t.Fatalf("MIGRATE KEYS: %v %v", v, err)
	}
	rc.Do(ctx, "select", 3)
	r3 := redis.NewClient(&redis.Options{Addr: r.Addr, DB: 3, Protocol: 2})
	defer r3.Close()
	for _, k := range keys {
		if got := dumpReadAll(t, r3, k); !reflect.DeepEqual(got, want[k]) {
			t.Errorf("%s on redis-server: %v, want %v", k, got, want[k])
		}
		if n := sc.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("%s still on redshard after MIGRATE", k)
		}
	}
	if ttl := r3.PTTL(ctx, keys[0]).Val(); ttl < 50*time.Minute {
		t.Errorf("TTL not carried: %v", ttl)
	}
	// Nothing left: NOKEY.
	if v, err := sc.Do(ctx, "migrate", rhost, rport, keys[1], 3, 5000).Result(); err != nil || v != "NOKEY" {
		t.Fatalf("MIGRATE of a missing key: %v %v", v, err)
	}
	// The target refuses an existing key unless REPLACE; COPY keeps ours.
	sc.Set(ctx, keys[0], "new", 0)
	_, err := sc.Do(ctx, "migrate", rhost, rport, keys[0], 3, 5000, "copy").Result()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Target instance replied with error: BUSYKEY") {
		t.Fatalf("MIGRATE onto an existing key: %v", err)
	}
	if v, err := sc.Do(ctx, "migrate", rhost, rport, keys[0], 3, 5000, "copy", "replace").Result(); err != nil || v != "OK" {
		t.Fatalf("MIGRATE COPY REPLACE: %v %v", v, err)
	}
	if sc.Get(ctx, keys[0]).Val() != "new" || r3.Get(ctx, keys[0]).Val() != "new" {
		t.Fatalf("COPY REPLACE: ours %q, theirs %q", sc.Get(ctx, keys[0]).Val(), r3.Get(ctx, keys[0]).Val())
	}
	if n := sc.Info(ctx, "stats").Val(); !strings.Contains(n, "migrate_cached_sockets:1") {
		t.Errorf("INFO after MIGRATE: no cached socket")
	}

	// redis-server → redshard, every type, with KEYS over several shards.
	for i, k := range keys {
		r3.Del(ctx, k)
		switch i % 3 {
		case 0:
			r3.HSet(ctx, k, "a", 1, "b", 2)
		case 1:
			r3.ZAdd(ctx, k, redis.Z{Score: 2, Member: "x"}, redis.Z{Score: 1, Member: "y"})
		case 2:
			r3.SAdd(ctx, k, "p", "q")
		}
		want[k] = dumpReadAll(t, r3, k)
	}
	args = []any{"migrate", shost, sport, "", 0, 5000, "REPLACE", "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	if v, err := r3.Do(ctx, args...).Result(); err != nil || v != "OK" {
		t.Fatalf("redis-server MIGRATE into redshard: %v %v", v, err)
	}
	for _, k := range keys {
		if got := dumpReadAll(t, sc, k); !reflect.DeepEqual(got, want[k]) {
			t.Errorf("%s on redshard: %v, want %v", k, got, want[k])
		}
	}

	// AUTH: a wrong password is the target's error, the right one works.
	rc.ConfigSet(ctx, "requirepass", "secret")
	defer func() {
		ac := redis.NewClient(&redis.Options{Addr: r.Addr, Password: "secret", Protocol: 2})
		ac.ConfigSet(ctx, "requirepass", "")
		ac.Close()
	}()
	// (The cached connection stays authenticated from before requirepass,
	// so the RESTORE after the failed AUTH may succeed, as with Redis.)
	_, err = sc.Do(ctx, "migrate", rhost, rport, keys[1], 0, 5000, "copy", "auth", "wrong").Result()
	if err == nil || !strings.Contains(err.Error(), "Target instance replied with error: WRONGPASS") {
		t.Fatalf("MIGRATE AUTH wrong: %v", err)
	}
	if v, err := sc.Do(ctx, "migrate", rhost, rport, keys[1], 0, 5000, "replace", "auth2", "default", "secret").Result(); err != nil || v != "OK" {
		t.Fatalf("MIGRATE AUTH2: %v %v", v, err)
	}
	ac := redis.NewClient(&redis.Options{Addr: r.Addr, Password: "secret", Protocol: 2})
	defer ac.Close()
	if sc.Exists(ctx, keys[1]).Val() != 0 || ac.Exists(ctx, keys[1]).Val() != 1 {
		t.Fatalf("MIGRATE AUTH2 did not move the key")
	}
	// A closed port: connecting fails.
	p := freePort(t)
	sc.Set(ctx, "lonely", "1", 0)
	_, err = sc.Do(ctx, "migrate", "127.0.0.1", strconv.Itoa(p), "lonely", 0, 1000).Result()
	if err == nil || err.Error() != "IOERR error or timeout connecting to the client" {
		t.Fatalf("MIGRATE to a closed port: %v", err)
	}
}

// TestRestoreMigrateLogged: the AOF gets RESTORE with an absolute TTL and
// ABSTTL, an expired RESTORE REPLACE as DEL, MIGRATE as DEL of the moved
// keys and nothing for MIGRATE COPY; a restart replays it to the same keys.
func TestRestoreMigrateLogged(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, append(aofArgs("always"), "--shards", "2")...)
	dst := startServer(t)
	c := s.client(t, 2)
	ctx := ctxT(t)
	c.Set(ctx, "src", "value", 0)
	p := c.Dump(ctx, "src").Val()
	c.Do(ctx, "restore", "a", 100000, p)
	c.Do(ctx, "restore", "src", 1, p, "absttl", "replace")
	c.Set(ctx, "m1", "1", 0)
	c.Set(ctx, "m2", "2", 0)
	dh, dp, _ := strings.Cut(dst.Addr, ":")
	if v, err := c.Do(ctx, "migrate", dh, dp, "m1", 0, 5000, "copy").Result(); err != nil || v != "OK" {
		t.Fatalf("MIGRATE COPY: %v %v", v, err)
	}
	if v, err := c.Do(ctx, "migrate", dh, dp, "", 0, 5000, "replace", "keys", "m1", "m2").Result(); err != nil || v != "OK" {
		t.Fatalf("MIGRATE: %v %v", v, err)
	}
	var logged []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ := os.ReadFile(incrFileOf(dir))
		gs, _ := splitGroups(data)
		logged = logged[:0]
		for _, g := range gs {
			for _, cmd := range g.cmds {
				if !strings.EqualFold(cmd[0], "select") && !strings.EqualFold(cmd[0], "set") {
					if strings.EqualFold(cmd[0], "restore") {
						cmd = append([]string{cmd[0], cmd[1], cmd[2], "<payload>"}, cmd[4:]...)
						if n, err := strconv.ParseInt(cmd[2], 10, 64); err == nil && n > time.Now().UnixMilli() {
							cmd[2] = "<future>"
						}
					}
					logged = append(logged, strings.Join(cmd, " "))
				}
			}
		}
		if len(logged) >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := []string{"restore a <future> <payload> ABSTTL", "DEL src", "DEL m1 m2"}
	if !reflect.DeepEqual(logged, want) {
		t.Fatalf("logged %q, want %q", logged, want)
	}
	s.stop()
	s2 := startServerIn(t, dir, append(aofArgs("always"), "--shards", "2")...)
	c2 := s2.client(t, 2)
	if v := c2.Get(ctx, "a").Val(); v != "value" {
		t.Fatalf("after replay a = %q", v)
	}
	if ttl := c2.PTTL(ctx, "a").Val(); ttl < 90*time.Second {
		t.Fatalf("after replay TTL %v", ttl)
	}
	if n := c2.Exists(ctx, "src", "m1", "m2").Val(); n != 0 {
		t.Fatalf("after replay %d of src, m1, m2 exist", n)
	}
}
