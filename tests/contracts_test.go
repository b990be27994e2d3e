package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Contract 1: replies come in command order, and every command sees the
// effects of the earlier commands of its connection, whichever shards they
// touched. One connection pipelines 10,000 mixed commands over keys on all
// four shards — single-shard commands that run at home or hop, and
// cross-shard MSET/DEL/EXISTS transactions — in randomly cut writes, and the
// byte stream of replies must equal a model's.
func TestPipelineRepliesInOrderWithReadYourWrites(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	const nCmds = 10000
	keys := spreadKeys("k_", nShards, 16)          // 64 keys, 16 per shard
	counters := spreadKeys("counter_", nShards, 2) // 8 counters

	rng := rand.New(rand.NewSource(1))
	model := map[string]string{}
	var req, want strings.Builder
	for i := 0; i < nCmds; {
		k := keys[rng.Intn(len(keys))]
		switch op := rng.Intn(20); {
		case op < 6: // SET k_i, then GET k_i: read-your-writes on one key
			v := "v" + strconv.Itoa(i)
			req.WriteString(resp("SET", k, v))
			want.WriteString("+OK\r\n")
			req.WriteString(resp("GET", k))
			want.WriteString(bulk(v))
			model[k] = v
			i += 2
		case op < 11: // INCR counter_j
			ctr := counters[rng.Intn(len(counters))]
			n, _ := strconv.Atoi(model[ctr])
			n++
			model[ctr] = strconv.Itoa(n)
			req.WriteString(resp("INCR", ctr))
			want.WriteString(":" + strconv.Itoa(n) + "\r\n")
			i++
		case op < 15: // GET k_i
			req.WriteString(resp("GET", k))
			if v, ok := model[k]; ok {
				want.WriteString(bulk(v))
			} else {
				want.WriteString("$-1\r\n")
			}
			i++
		case op < 17: // MSET over three shards, then MGET them back
			k2, k3 := keys[rng.Intn(len(keys))], keys[rng.Intn(len(keys))]
			v := "m" + strconv.Itoa(i)
			req.WriteString(resp("MSET", k, v+"a", k2, v+"b", k3, v+"c"))
			want.WriteString("+OK\r\n")
			model[k], model[k2], model[k3] = v+"a", v+"b", v+"c"
			req.WriteString(resp("MGET", k, k2, k3))
			want.WriteString(fmt.Sprintf("*3\r\n%s%s%s", bulk(model[k]), bulk(model[k2]), bulk(model[k3])))
			i += 2
		case op < 18: // DEL two keys (likely on two shards)
			k2 := keys[rng.Intn(len(keys))]
			n := 0
			if _, ok := model[k]; ok {
				n++
			}
			if _, ok := model[k2]; ok && k2 != k {
				n++
			}
			delete(model, k)
			delete(model, k2)
			req.WriteString(resp("DEL", k, k2))
			want.WriteString(":" + strconv.Itoa(n) + "\r\n")
			i++
		case op < 19: // EXISTS over four keys
			ks := []string{k, keys[rng.Intn(len(keys))], keys[rng.Intn(len(keys))], counters[0]}
			n := 0
			for _, x := range ks {
				if _, ok := model[x]; ok {
					n++
				}
			}
			req.WriteString(resp(append([]string{"EXISTS"}, ks...)...))
			want.WriteString(":" + strconv.Itoa(n) + "\r\n")
			i++
		default: // a keyless command in between
			req.WriteString("PING\r\n") // inline
			want.WriteString("+PONG\r\n")
			i++
		}
	}

	rc := s.raw(t)
	payload := req.String()
	werr := make(chan error, 1)
	go func() {
		// cut the pipeline at random points, commands split across writes
		wr := rand.New(rand.NewSource(2))
		for len(payload) > 0 {
			n := 1 + wr.Intn(8192)
			if n > len(payload) {
				n = len(payload)
			}
			if _, err := rc.c.Write([]byte(payload[:n])); err != nil {
				werr <- err
				return
			}
			payload = payload[n:]
		}
		werr <- nil
	}()
	got := rc.readN(want.Len())
	if err := <-werr; err != nil {
		t.Fatalf("write: %v", err)
	}
	if got != want.String() {
		w := want.String()
		i := 0
		for i < len(got) && got[i] == w[i] {
			i++
		}
		lo := i - 200
		if lo < 0 {
			lo = 0
		}
		t.Fatalf("replies differ at byte %d of %d:\n got  …%q\n want …%q", i, len(w), got[lo:min(i+100, len(got))], w[lo:min(i+100, len(w))])
	}
	rc.expectSilent(100 * time.Millisecond)

	// The same through go-redis's pipeline, on a fresh connection: every
	// command sees the state the previous connection left.
	c := s.client(t, 2)
	ctx := ctxT(t)
	pipe := c.Pipeline()
	var gets []*redis.StringCmd
	for _, k := range keys {
		gets = append(gets, pipe.Get(ctx, k))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("pipeline: %v", err)
	}
	for i, k := range keys {
		v, err := gets[i].Result()
		mv, ok := model[k]
		if (err == redis.Nil) == ok || v != mv {
			t.Errorf("GET %s = %q, %v; want %q (present %v)", k, v, err, mv, ok)
		}
	}
}

// Contract 3: multi-key commands are atomic across shards. Writers MSET eight
// keys on all four shards to one value while readers MGET them: a reader
// never sees two values at once.
func TestMSETIsAtomicAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	keys := spreadKeys("atom:", nShards, 2) // {a..h}: 2 keys on each shard
	if shardsOf(nShards, keys...) != nShards {
		t.Fatalf("keys not on all shards")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	init := []any{"MSET"}
	for _, k := range keys {
		init = append(init, k, "init")
	}
	if err := c.Do(ctx, init...).Err(); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var writes, reads, torn atomic.Int64
	var firstTorn atomic.Value
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			args := make([]any, 1+2*len(keys))
			args[0] = "MSET"
			for i := 0; ctx.Err() == nil; i++ {
				v := fmt.Sprintf("w%d-%d", w, i)
				for j, k := range keys {
					args[1+2*j], args[2+2*j] = k, v
				}
				if err := c.Do(ctx, args...).Err(); err != nil {
					if ctx.Err() == nil {
						t.Errorf("MSET: %v", err)
					}
					return
				}
				writes.Add(1)
			}
		}(w)
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				vals, err := c.MGet(ctx, keys...).Result()
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("MGET: %v", err)
					}
					return
				}
				reads.Add(1)
				for _, v := range vals {
					if v != vals[0] {
						torn.Add(1)
						firstTorn.CompareAndSwap(nil, fmt.Sprint(vals))
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	if n := torn.Load(); n > 0 {
		t.Errorf("%d of %d MGETs saw a half-applied MSET, e.g. %s", n, reads.Load(), firstTorn.Load())
	}
	if writes.Load() < 50 || reads.Load() < 50 {
		t.Errorf("too little work to judge: %d MSETs, %d MGETs in 2s", writes.Load(), reads.Load())
	}
	t.Logf("%d MSETs, %d MGETs", writes.Load(), reads.Load())
}

// Contract 3 for RENAME: a key renamed back and forth between two shards is
// always in exactly one place.
func TestRenameIsAtomicAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ks := spreadKeys("ren:", nShards, 1)
	a, b := ks[0], ks[1]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Set(ctx, a, "payload", 0).Err(); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var renames, reads, bad atomic.Int64
	var firstBad atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		from, to := a, b
		for ctx.Err() == nil {
			if err := c.Rename(ctx, from, to).Err(); err != nil {
				if ctx.Err() == nil {
					t.Errorf("RENAME %s %s: %v", from, to, err)
				}
				return
			}
			renames.Add(1)
			from, to = to, from
		}
	}()
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for ctx.Err() == nil {
				var desc string
				if r%2 == 0 {
					n, err := c.Exists(ctx, a, b).Result()
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("EXISTS: %v", err)
						}
						return
					}
					if n != 1 {
						desc = fmt.Sprintf("EXISTS %s %s = %d", a, b, n)
					}
				} else {
					vals, err := c.MGet(ctx, a, b).Result()
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("MGET: %v", err)
						}
						return
					}
					if (vals[0] == nil) == (vals[1] == nil) || (vals[0] != nil && vals[0] != "payload") || (vals[1] != nil && vals[1] != "payload") {
						desc = fmt.Sprintf("MGET %s %s = %v", a, b, vals)
					}
				}
				reads.Add(1)
				if desc != "" {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, desc)
				}
			}
		}(r)
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Errorf("%d of %d reads saw the key in zero or two places, e.g. %s", n, reads.Load(), firstBad.Load())
	}
	if renames.Load() < 50 || reads.Load() < 50 {
		t.Errorf("too little work to judge: %d RENAMEs, %d reads in 2s", renames.Load(), reads.Load())
	}
	t.Logf("%d RENAMEs, %d reads", renames.Load(), reads.Load())
}
