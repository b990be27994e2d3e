package tests

// The order of blocked clients on a 4-shard server (issue 4): clients on
// different loops that block one after the other are served in that
// order, on every shard; a client blocked on keys of two shards that are
// pushed to at the same moment takes exactly one element and the other
// stays; a cross-shard BLMOVE keeps its place in line while it is served;
// chains of BLMOVE across shards lose and duplicate nothing.

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var blockedRe = regexp.MustCompile(`blocked_clients:(\d+)`)

// awaitBlocked waits until INFO on c says n clients are blocked.
func awaitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := c.Info(ctxT(t), "clients").Result()
		if err != nil {
			t.Fatalf("INFO clients: %v", err)
		}
		m := blockedRe.FindStringSubmatch(info)
		if m == nil {
			t.Fatalf("no blocked_clients in %q", info)
		}
		if got, _ := strconv.Atoi(m[1]); got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("blocked_clients stayed %s, want %d", m[1], n)
		}
		time.Sleep(time.Millisecond)
	}
}

// oneConn is a go-redis client with a single connection (one loop).
func oneConn(t *testing.T, s *server) *redis.Client {
	return s.clientWith(t, func(o *redis.Options) { o.PoolSize = 1 })
}

// TestBlockOrderIsFirstBlockedFirstServed: eight clients, two per loop,
// block on one key one after the other; eight pushes serve them in that
// order. Done for a key on each of the four shards.
func TestBlockOrderIsFirstBlockedFirstServed(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctl := s.client(t, 2)
	const n = 8
	waiters := make([]*redis.Client, n)
	for i := range waiters {
		waiters[i] = oneConn(t, s)
		waiters[i].Ping(ctxT(t)) // connect now: connections go round robin over the loops
	}
	for _, key := range spreadKeys("fifo", 4, 1) {
		got := make([]chan string, n)
		for i, w := range waiters {
			got[i] = make(chan string, 1)
			go func(w *redis.Client, ch chan string) {
				r, err := w.BLPop(context.Background(), 10*time.Second, key).Result()
				if err != nil {
					ch <- "error: " + err.Error()
					return
				}
				ch <- r[1]
			}(w, got[i])
			awaitBlocked(t, ctl, i+1) // i is in line before i+1 blocks
		}
		for i := 0; i < n; i++ {
			if err := ctl.RPush(ctxT(t), key, "v"+strconv.Itoa(i)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range got {
			select {
			case v := <-got[i]:
				if want := "v" + strconv.Itoa(i); v != want {
					t.Errorf("key %s: waiter %d (blocked %d-th) got %q, want %q", key, i, i+1, v, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("key %s: waiter %d never served", key, i)
			}
		}
		if n := ctl.Exists(ctxT(t), key).Val(); n != 0 {
			t.Errorf("key %s left behind", key)
		}
	}
}

// TestBlockedOnTwoShardsTakesOneOfTwoSimultaneousPushes: clients wait on
// keys of two shards, and both keys are pushed to at the same moment from
// two connections, as many elements each as there are clients; every
// client must get exactly one element, and the others must stay (one
// client: one of the two elements stays; eight: eight of sixteen, with the
// two shards serving the same clients at once). Many rounds.
func TestBlockedOnTwoShardsTakesOneOfTwoSimultaneousPushes(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctl := s.client(t, 2)
	keys := spreadKeys("twin", 4, 1)
	k1, k2 := keys[0], keys[1]
	var ws []*rawConn
	for i := 0; i < 8; i++ {
		ws = append(ws, s.raw(t))
	}
	p1, p2 := oneConn(t, s), oneConn(t, s)
	p1.Ping(ctxT(t))
	p2.Ping(ctxT(t))
	rounds := 120
	if testing.Short() {
		rounds = 30
	}
	for r := 0; r < rounds; r++ {
		nw := 1
		if r%2 == 1 {
			nw = len(ws)
		}
		for i := 0; i < nw; i++ {
			ws[i].write(resp("BLPOP", k1, k2, "0"))
		}
		awaitBlocked(t, ctl, nw)
		var as, bs []any
		for i := 0; i < nw; i++ {
			as = append(as, fmt.Sprintf("a%d.%d", r, i))
			bs = append(bs, fmt.Sprintf("b%d.%d", r, i))
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); <-start; p1.RPush(context.Background(), k1, as...) }()
		go func() { defer wg.Done(); <-start; p2.RPush(context.Background(), k2, bs...) }()
		close(start)
		wg.Wait()
		served := map[string]bool{}
		for i := 0; i < nw; i++ {
			ws[i].expect("*2\r\n")
			ws[i].line()
			key := ws[i].line()
			ws[i].line()
			val := ws[i].line()
			if !(key == k1 && val[0] == 'a' || key == k2 && val[0] == 'b') {
				t.Fatalf("round %d: served %s=%s", r, key, val)
			}
			if served[val] {
				t.Fatalf("round %d: %s served twice", r, val)
			}
			served[val] = true
		}
		left1 := ctl.LRange(ctxT(t), k1, 0, -1).Val()
		left2 := ctl.LRange(ctxT(t), k2, 0, -1).Val()
		if len(left1)+len(left2)+len(served) != 2*nw {
			t.Fatalf("round %d (%d waiters): served %v, left %v %v: an element was lost or doubled", r, nw, served, left1, left2)
		}
		for _, v := range append(left1, left2...) {
			if served[v] {
				t.Fatalf("round %d: %s both served and still in the list", r, v)
			}
		}
		ctl.Del(ctxT(t), k1, k2)
	}
	for _, w := range ws {
		w.expectSilent(20 * time.Millisecond) // nobody was served twice
	}
	awaitBlocked(t, ctl, 0)
}

// TestCrossShardBlmoveKeepsItsPlace: a BLMOVE whose destination lives on
// another shard blocks first, a BLPOP on the same source second; the first
// push goes to the BLMOVE (into its destination), the second to the BLPOP.
func TestCrossShardBlmoveKeepsItsPlace(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctl := s.client(t, 2)
	keys := spreadKeys("hold", 4, 1)
	mover, popper := s.raw(t), s.raw(t)
	for r := 0; r < 20; r++ {
		src, dst := keys[r%4], keys[(r+1+r/4)%4]
		if src == dst {
			dst = keys[(r+2)%4]
		}
		mover.write(resp("BLMOVE", src, dst, "LEFT", "RIGHT", "0"))
		awaitBlocked(t, ctl, 1)
		popper.write(resp("BLPOP", src, "0"))
		awaitBlocked(t, ctl, 2)
		x, y := "x"+strconv.Itoa(r), "y"+strconv.Itoa(r)
		ctl.RPush(ctxT(t), src, x)
		mover.expect(bulk(x))
		if got := ctl.LRange(ctxT(t), dst, 0, -1).Val(); len(got) != 1 || got[0] != x {
			t.Fatalf("round %d: destination %v, want [%s]", r, got, x)
		}
		popper.expectSilent(10 * time.Millisecond)
		ctl.RPush(ctxT(t), src, y)
		popper.expect(popReply(src, y))
		ctl.Del(ctxT(t), src, dst)
	}
	awaitBlocked(t, ctl, 0)
}

// TestBlmoveChainAcrossShardsLosesNothing: elements pushed into the first
// of four keys (one per shard) travel to the last through three stages of
// two movers each (BLMOVE and BRPOPLPUSH); every element arrives once.
func TestBlmoveChainAcrossShardsLosesNothing(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctl := s.client(t, 2)
	keys := spreadKeys("chain", 4, 1)
	const m = 150
	var moved [3]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for stage := 0; stage < 3; stage++ {
		for j := 0; j < 2; j++ {
			c := oneConn(t, s)
			wg.Add(1)
			go func(stage, j int, c *redis.Client) {
				defer wg.Done()
				src, dst := keys[stage], keys[stage+1]
				deadline := time.Now().Add(20 * time.Second)
				for moved[stage].Load() < m && time.Now().Before(deadline) {
					var err error
					if j == 0 {
						err = c.Do(context.Background(), "BLMOVE", src, dst, "LEFT", "RIGHT", "0.2").Err()
					} else {
						err = c.Do(context.Background(), "BRPOPLPUSH", src, dst, "0.2").Err()
					}
					switch err {
					case nil:
						moved[stage].Add(1)
					case redis.Nil:
					default:
						errs <- fmt.Errorf("stage %d mover %d: %v", stage, j, err)
						return
					}
				}
			}(stage, j, c)
		}
	}
	want := make([]string, m)
	for i := range want {
		want[i] = "e" + strconv.Itoa(i)
		if err := ctl.RPush(ctxT(t), keys[0], want[i]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := ctl.LRange(ctxT(t), keys[3], 0, -1).Val()
	for _, k := range keys[:3] {
		if rest := ctl.LRange(ctxT(t), k, 0, -1).Val(); len(rest) != 0 {
			t.Errorf("%s still holds %v", k, rest)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the last key holds %d elements, want the %d pushed (lost or doubled):\n got  %v", len(got), m, got)
	}
	for i := range moved {
		if moved[i].Load() != m {
			t.Errorf("stage %d moved %d, want %d", i, moved[i].Load(), m)
		}
	}
}
