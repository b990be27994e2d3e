package tests

import (
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SORT end to end on a 4-shard server: BY and GET patterns name keys spread
// over every shard (the dispatcher must take them all), a SORT BY is atomic
// against cross-shard writes, and SORT ... STORE replays from the AOF (and
// in redis-server) to the same list.

const sortElems = 40 // enough keys that every shard holds some

func TestSortPatternsAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := s.client(t, proto)
			c.FlushAll(ctx)
			var elems, want, wantW []string
			for i := 0; i < sortElems; i++ {
				elems = append(elems, strconv.Itoa(i))
			}
			c.RPush(ctx, "list", elems)
			c.SAdd(ctx, "set", elems)
			for i, e := range elems {
				w := strconv.Itoa(sortElems - i) // reverse order
				c.Set(ctx, "w_"+e, w, 0)
				c.HSet(ctx, "h_"+e, "f", w)
				want = append([]string{e}, want...)
				wantW = append([]string{w}, wantW...)
			}
			for _, key := range []string{"list", "set"} {
				if got := c.Sort(ctx, key, &redis.Sort{By: "w_*"}).Val(); !reflect.DeepEqual(got, want) {
					t.Fatalf("SORT %s BY w_*: %v", key, got)
				}
				if got := c.SortRO(ctx, key, &redis.Sort{By: "h_*->f", Offset: 2, Count: 3, Order: "DESC"}).Val(); !reflect.DeepEqual(got, []string{"2", "3", "4"}) {
					t.Fatalf("SORT_RO %s BY h_*->f LIMIT 2 3 DESC: %v", key, got)
				}
			}
			got := c.Sort(ctx, "list", &redis.Sort{By: "nosort", Get: []string{"#", "w_*", "h_*->f", "missing_*"}, Count: 2}).Val()
			if wantGot := []string{"0", "40", "40", "", "1", "39", "39", ""}; !reflect.DeepEqual(got, wantGot) {
				t.Fatalf("SORT BY nosort GET ...: %v", got)
			}
			// The nulls are RESP nulls in both protocols.
			raw := c.Do(ctx, "SORT", "list", "BY", "nosort", "GET", "missing_*", "LIMIT", "0", "1").Val()
			if v, ok := raw.([]interface{}); !ok || len(v) != 1 || v[0] != nil {
				t.Fatalf("GET of a missing key: %#v", raw)
			}
			if n := c.SortStore(ctx, "set", "dest", &redis.Sort{By: "w_*", Get: []string{"w_*"}}).Val(); n != sortElems {
				t.Fatalf("SORT STORE: %d", n)
			}
			if got := c.LRange(ctx, "dest", 0, -1).Val(); !reflect.DeepEqual(got, wantW) {
				t.Fatalf("stored list: %v", got)
			}
			// A bad weight on some shard is found.
			c.Set(ctx, "w_7", "x", 0)
			if err := c.Sort(ctx, "list", &redis.Sort{By: "w_*"}).Err(); err == nil || err.Error() != "ERR One or more scores can't be converted into double" {
				t.Fatalf("bad weight: %v", err)
			}
			if n := c.SortStore(ctx, "nokey", "dest", &redis.Sort{By: "w_*"}).Val(); n != 0 || c.Exists(ctx, "dest").Val() != 0 {
				t.Fatalf("empty SORT STORE: %d, dest exists %d", n, c.Exists(ctx, "dest").Val())
			}
		})
	}
}

// TestSortByIsAtomic: while a writer MSETs every weight to one generation
// at a time (a cross-shard atomic command), SORT ... GET w_* sees the
// weights of one generation only. The weights are chosen on shards other
// than the list's (DEBUG OBJECT tells a key's shard), so that only the
// SORT's own routing can keep it from running beside a half-done MSET.
func TestSortByIsAtomic(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes")
	ctx := context.Background()
	c := s.client(t, 2)
	shardOf := func(key string) uint64 {
		c.SetNX(ctx, key, "0", 0)
		obj := c.DebugObject(ctx, key).Val()
		var addr uint64
		if _, err := fmt.Sscanf(obj, "Value at:0x%x", &addr); err != nil {
			t.Fatalf("DEBUG OBJECT %s: %q", key, obj)
		}
		return addr >> 36 & 0xf
	}
	home := shardOf("list-home")
	var elems []string
	for i := 0; len(elems) < sortElems; i++ {
		if e := strconv.Itoa(i); shardOf("w_"+e) != home {
			elems = append(elems, e)
		}
	}
	c.Del(ctx, "list-home")
	c.RPush(ctx, "{list-home}", elems)
	if shardOf("{list-home}x") != home {
		t.Fatal("a hash tag moved the list")
	}
	mset := func(gen int) []interface{} {
		var kv []interface{}
		for i, e := range elems {
			kv = append(kv, "w_"+e, strconv.Itoa(gen*1000+i))
		}
		return kv
	}
	c.MSet(ctx, mset(0)...)
	stop := time.Now().Add(700 * time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := s.client(t, 2)
		for gen := 1; time.Now().Before(stop); gen++ {
			if err := w.MSet(ctx, mset(gen)...).Err(); err != nil {
				t.Errorf("MSET: %v", err)
				return
			}
		}
	}()
	sorts := 0
	bad := ""
	for ; bad == "" && time.Now().Before(stop); sorts++ {
		got, err := c.Sort(ctx, "{list-home}", &redis.Sort{By: "w_*", Get: []string{"w_*"}}).Result()
		if err != nil {
			bad = fmt.Sprintf("SORT: %v", err)
			break
		}
		first, _ := strconv.Atoi(got[0])
		gen := first / 1000
		for i, v := range got {
			if v != strconv.Itoa(gen*1000+i) {
				bad = fmt.Sprintf("SORT saw a half-applied MSET: %v", got)
				break
			}
		}
	}
	wg.Wait()
	if bad != "" {
		t.Fatal(bad)
	}
	if sorts == 0 {
		t.Fatal("no SORT ran")
	}
}

// TestSortStoreReplaysFromAOF: SORT ... BY ... STORE is logged as it came;
// replayed (by our loader, which must see the weights written before it on
// other shards and not those written after) and in redis-server, it builds
// the same list.
func TestSortStoreReplaysFromAOF(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, aofArgs("always", "--shards", "4")...)
	var cmds [][]string
	push := []string{"RPUSH", "{t}l"}
	for i := 0; i < sortElems; i++ {
		push = append(push, strconv.Itoa(i))
	}
	cmds = append(cmds, push)
	for round := 0; round < 3; round++ {
		for i := 0; i < sortElems; i++ {
			w := strconv.Itoa((i*7 + round*13) % sortElems)
			cmds = append(cmds, []string{"SET", "w_" + strconv.Itoa(i), w}, []string{"HSET", "h_" + strconv.Itoa(i), "f", w})
		}
		r := strconv.Itoa(round)
		// The first SORT's keys are on one shard: only its patterns make
		// it a cross-shard command. The commands after it on that shard
		// fill a loader batch, which then runs before the other shards'
		// batches holding the weights unless the loader honours them.
		cmds = append(cmds, []string{"SORT", "{t}l", "BY", "w_*", "STORE", "{t}by" + r})
		for i := 0; i < 300; i++ {
			cmds = append(cmds, []string{"INCR", "{t}n"})
		}
		cmds = append(cmds, []string{"SORT", "{t}l", "BY", "h_*->f", "GET", "#", "GET", "w_*", "DESC", "STORE", "d" + r})
	}
	doAll(t, s.Addr, cmds)
	state := func(addr string) map[string][]string {
		p := mustDialP(t, addr)
		defer p.close()
		out := map[string][]string{}
		for r := 0; r < 3; r++ {
			for _, k := range []string{"{t}by" + strconv.Itoa(r), "d" + strconv.Itoa(r)} {
				var items []string
				for _, e := range p.mustDo(t, "LRANGE", k, "0", "-1").arr {
					items = append(items, e.s)
				}
				out[k] = items
			}
		}
		return out
	}
	want := state(s.Addr)
	if len(want["{t}by0"]) != sortElems || reflect.DeepEqual(want["{t}by0"], want["{t}by1"]) {
		t.Fatalf("unexpected lists before restart: %v", want)
	}
	s.stop()

	s2 := startServerIn(t, dir, aofArgs("always", "--shards", "4")...)
	if got := state(s2.Addr); !reflect.DeepEqual(got, want) {
		t.Errorf("after restart:\n got %v\nwant %v", got, want)
	}
	s2.stop()

	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: cannot check that it loads our folder")
	}
	r := startRedisServer(t, folderCopy(t, dir), "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	if got := state(r.Addr); !reflect.DeepEqual(got, want) {
		t.Errorf("redis-server on our folder:\n got %v\nwant %v", got, want)
	}
}
