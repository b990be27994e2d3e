package tests

// Scripting end to end (EVAL, EVALSHA, EVAL_RO, FCALL) on a 4-shard
// server: scripts are atomic across shards whether their keys are declared
// or not (an undeclared key on a shard the script does not hold makes it
// stop, roll back and run again holding every shard, server/script.go),
// their effects survive kill -9 whole or not at all, and the usual go-redis
// idioms (Script.Run, locks, rate limiters) work under RESP2 and RESP3.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const scriptInitial = 1000

// Transfer scripts: move ARGV[1] from a to b unless a would go below 0;
// 1 if moved, 0 if refused.
const (
	// both accounts declared
	transferDeclared = `
local n = tonumber(ARGV[1])
local a = tonumber(redis.call('GET', KEYS[1]))
if a < n then return 0 end
redis.call('DECRBY', KEYS[1], n)
redis.call('INCRBY', KEYS[2], n)
return 1
`
	// only a declared; b's name is built from ARGV (undeclared, maybe on
	// another shard)
	transferHalf = `
local n = tonumber(ARGV[1])
local b = ARGV[2] .. ARGV[3]
local a = tonumber(redis.call('GET', KEYS[1]))
if a < n then return 0 end
redis.call('DECRBY', KEYS[1], n)
redis.call('INCRBY', b, n)
return 1
`
	// nothing declared
	transferNone = `
local n = tonumber(ARGV[1])
local a, b = ARGV[2] .. ARGV[3], ARGV[2] .. ARGV[4]
local av = tonumber(redis.call('GET', a))
if av < n then return 0 end
redis.call('DECRBY', a, n)
redis.call('INCRBY', b, n)
return 1
`
	// read-only sums: {sum, min}
	sumDeclared = `
local s, m = 0, nil
for _, k in ipairs(KEYS) do
  local v = tonumber(redis.call('GET', k))
  s = s + v
  if m == nil or v < m then m = v end
end
return {s, m}
`
	sumUndeclared = `
local s, m = 0, nil
for i = 2, #ARGV do
  local v = tonumber(redis.call('GET', ARGV[1] .. ARGV[i]))
  s = s + v
  if m == nil or v < m then m = v end
end
return {s, m}
`
)

// accountSuffixes returns the part of each account name after prefix.
func accountSuffixes(prefix string, accounts []string) []any {
	var out []any
	for _, a := range accounts {
		out = append(out, strings.TrimPrefix(a, prefix))
	}
	return out
}

// freshBody returns body with a unique comment, so that its SHA1 is new:
// a new script is not yet known to reach beyond its declared keys, so its
// first run takes only its declared shards and, when it touches another
// one, is stopped, rolled back and run again holding every shard.
func freshBody(body string, tag string) string {
	return "-- " + tag + "\n" + body
}

// scriptConn is oneConn (blockorder_test.go) speaking RESP proto, with a
// 10 s read timeout.
func scriptConn(t testing.TB, s *server, proto int) *redis.Client {
	return s.clientWith(t, func(o *redis.Options) {
		o.Protocol = proto
		o.PoolSize = 1
		o.ReadTimeout = 10 * time.Second
	})
}

// TestScriptCrossShardInvariant: accounts on every shard; writers move
// money with transfer scripts whose keys are declared, half declared, or
// not declared at all; readers sum every account with read-only scripts
// (declared keys and undeclared) and with MGET. No reader may see a total
// other than the initial one, or a negative balance.
func TestScriptCrossShardInvariant(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	const perShard = 4
	const prefix = "sacct:"
	accounts := spreadKeys(prefix, nShards, perShard)
	nAcc := len(accounts)
	if shardsOf(nShards, accounts...) != nShards {
		t.Fatalf("accounts %v do not cover the %d shards", accounts, nShards)
	}
	suffixes := accountSuffixes(prefix, accounts)
	ctx := context.Background()
	setup := s.client(t, 2)
	for _, a := range accounts {
		if err := setup.Set(ctx, a, scriptInitial, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	want := int64(nAcc * scriptInitial)

	dur := 60 * time.Second
	if testing.Short() {
		dur = 5 * time.Second
	}
	scripts := []*redis.Script{
		redis.NewScript(transferDeclared),
		redis.NewScript(transferHalf),
		redis.NewScript(transferNone),
	}
	sumD, sumU := redis.NewScript(sumDeclared), redis.NewScript(sumUndeclared)

	stop := make(chan struct{})
	var failed atomic.Value
	fail := func(format string, args ...any) {
		failed.CompareAndSwap(nil, fmt.Errorf(format, args...))
	}
	var byMode [3]atomic.Int64 // transfers applied, per mode
	var refused, fresh atomic.Int64
	var readsD, readsU, readsM atomic.Int64
	var wg sync.WaitGroup

	const writers = 8
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := scriptConn(t, s, 2+w%2)
			rng := rand.New(rand.NewSource(int64(w) + 1))
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				ai, bi := rng.Intn(nAcc), rng.Intn(nAcc)
				if ai == bi {
					continue
				}
				n := rng.Intn(400) + 1
				// half the writers declare both keys; the others declare
				// only a, or nothing
				mode := 0
				if w%2 == 1 {
					mode = 1 + rng.Intn(2)
				}
				var keys []string
				var args []any
				switch mode {
				case 0:
					keys, args = []string{accounts[ai], accounts[bi]}, []any{n}
				case 1:
					keys, args = []string{accounts[ai]}, []any{n, prefix, suffixes[bi]}
				case 2:
					args = []any{n, prefix, suffixes[ai], suffixes[bi]}
				}
				var res *redis.Cmd
				if mode != 0 && seq%8 == 0 {
					// a script not yet known to be wide: the first run is
					// stopped and rolled back when b is elsewhere
					body := []string{transferDeclared, transferHalf, transferNone}[mode]
					res = c.Eval(ctx, freshBody(body, fmt.Sprintf("w%d s%d", w, seq)), keys, args...)
					fresh.Add(1)
				} else {
					res = scripts[mode].Run(ctx, c, keys, args...)
				}
				v, err := res.Int64()
				if err != nil {
					fail("writer %d: transfer mode %d %v %v: %v", w, mode, keys, args, err)
					return
				}
				switch v {
				case 1:
					byMode[mode].Add(1)
				case 0:
					refused.Add(1)
				default:
					fail("writer %d: transfer replied %d", w, v)
					return
				}
			}
		}(w)
	}

	check := func(who string, sum, min int64) bool {
		if sum != want {
			fail("%s: total %d, want %d", who, sum, want)
			return false
		}
		if min < 0 {
			fail("%s: a balance is %d", who, min)
			return false
		}
		return true
	}
	sumReply := func(who string, v any, err error) (int64, int64, bool) {
		arr, ok := v.([]any)
		if err != nil || !ok || len(arr) != 2 {
			fail("%s: reply %#v, %v", who, v, err)
			return 0, 0, false
		}
		sum, ok1 := arr[0].(int64)
		min, ok2 := arr[1].(int64)
		if !ok1 || !ok2 {
			fail("%s: reply %#v", who, v)
			return 0, 0, false
		}
		return sum, min, true
	}
	const readers = 2 // of each kind
	for r := 0; r < readers; r++ {
		wg.Add(3)
		go func(proto int) { // EVALSHA_RO with every account declared
			defer wg.Done()
			c := scriptConn(t, s, proto)
			for {
				select {
				case <-stop:
					return
				default:
				}
				v, err := sumD.RunRO(ctx, c, accounts).Result()
				sum, min, ok := sumReply("EVALSHA_RO (declared)", v, err)
				if !ok || !check("EVALSHA_RO (declared)", sum, min) {
					return
				}
				readsD.Add(1)
			}
		}(2 + r%2)
		go func(proto int) { // EVAL_RO reading undeclared keys
			defer wg.Done()
			c := scriptConn(t, s, proto)
			args := append([]any{prefix}, suffixes...)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var res *redis.Cmd
				if i%16 == 0 {
					res = c.EvalRO(ctx, freshBody(sumUndeclared, fmt.Sprintf("r%d i%d", proto, i)), nil, args...)
				} else {
					res = sumU.RunRO(ctx, c, nil, args...)
				}
				v, err := res.Result()
				sum, min, ok := sumReply("EVAL_RO (undeclared)", v, err)
				if !ok || !check("EVAL_RO (undeclared)", sum, min) {
					return
				}
				readsU.Add(1)
			}
		}(2 + r%2)
		go func(proto int) { // MGET
			defer wg.Done()
			c := scriptConn(t, s, proto)
			for {
				select {
				case <-stop:
					return
				default:
				}
				vals, err := c.MGet(ctx, accounts...).Result()
				if err != nil {
					fail("MGET: %v", err)
					return
				}
				var sum, min int64 = 0, 1 << 62
				for i, v := range vals {
					str, _ := v.(string)
					n, err := strconv.ParseInt(str, 10, 64)
					if err != nil {
						fail("MGET: %s = %#v", accounts[i], v)
						return
					}
					sum += n
					if n < min {
						min = n
					}
				}
				if !check("MGET", sum, min) {
					return
				}
				readsM.Add(1)
			}
		}(2 + r%2)
	}

	start := time.Now()
	lastLog := start
	for failed.Load() == nil && time.Since(start) < dur {
		time.Sleep(20 * time.Millisecond)
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			t.Logf("%v: transfers %d/%d/%d, reads EVALSHA_RO declared %d, EVAL_RO undeclared %d, MGET %d",
				time.Since(start).Round(time.Second), byMode[0].Load(), byMode[1].Load(), byMode[2].Load(),
				readsD.Load(), readsU.Load(), readsM.Load())
		}
	}
	close(stop)
	wg.Wait()
	took := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("after %v: %v", took.Round(time.Millisecond), err)
	}
	var sum int64
	for i, v := range setup.MGet(ctx, accounts...).Val() {
		n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		if err != nil || n < 0 {
			t.Fatalf("final %s = %#v", accounts[i], v)
		}
		sum += n
	}
	if sum != want {
		t.Fatalf("final total %d, want %d", sum, want)
	}
	applied := byMode[0].Load() + byMode[1].Load() + byMode[2].Load()
	reads := readsD.Load() + readsU.Load() + readsM.Load()
	if byMode[0].Load() == 0 || byMode[1].Load() == 0 || byMode[2].Load() == 0 || readsD.Load() == 0 || readsU.Load() == 0 || readsM.Load() == 0 {
		t.Fatalf("no progress of some kind: transfers by mode %d/%d/%d, reads %d/%d/%d",
			byMode[0].Load(), byMode[1].Load(), byMode[2].Load(), readsD.Load(), readsU.Load(), readsM.Load())
	}
	t.Logf("%d accounts on %d shards, %v: %d transfers applied (%.0f/s; declared %d, half declared %d, undeclared %d; %d with a fresh script), %d refused for want of funds; %d consistent reads (%.0f/s; EVALSHA_RO declared %d, EVAL_RO undeclared %d, MGET %d)",
		nAcc, nShards, took.Round(time.Millisecond), applied, float64(applied)/took.Seconds(),
		byMode[0].Load(), byMode[1].Load(), byMode[2].Load(), fresh.Load(), refused.Load(),
		reads, float64(reads)/took.Seconds(), readsD.Load(), readsU.Load(), readsM.Load())
}

// Transfer scripts that also log their id to a list; 1 if applied (and
// logged), 0 if refused (nothing written).
const (
	// KEYS: a, b, log; ARGV: n, id
	loggedDeclared = `
local n = tonumber(ARGV[1])
local a = tonumber(redis.call('GET', KEYS[1]))
if a < n then return 0 end
redis.call('DECRBY', KEYS[1], n)
redis.call('INCRBY', KEYS[2], n)
redis.call('RPUSH', KEYS[3], ARGV[2])
return 1
`
	// KEYS: a; ARGV: n, id, b, log (b and the log undeclared)
	loggedUndeclared = `
local n = tonumber(ARGV[1])
local a = tonumber(redis.call('GET', KEYS[1]))
if a < n then return 0 end
redis.call('DECRBY', KEYS[1], n)
redis.call('INCRBY', ARGV[3], n)
redis.call('RPUSH', ARGV[4], ARGV[2])
return 1
`
)

// killClient is one client of TestScriptKill9Always.
type killClient struct {
	applied  []string // ids acknowledged as applied, in order
	inflight string   // the id sent last, whose reply never came
	refused  int
	failure  string // a wrong reply
}

// TestScriptKill9Always: under appendfsync always, transfer scripts (some
// with undeclared keys, some new so that their first run is rolled back)
// each log a unique id; after kill -9 and a restart, every acknowledged id
// is in the logs once, the logs are each client's applied transfers in
// order (plus at most the one in flight), and the balances are exactly
// what the logged transfers make of the initial ones.
func TestScriptKill9Always(t *testing.T) {
	args := append([]string{"--shards", strconv.Itoa(nShards)}, aofArgs("always")...)
	dir := t.TempDir()
	s := startServerIn(t, dir, args...)
	const prefix = "kacct:"
	accounts := spreadKeys(prefix, nShards, 4)
	nAcc := len(accounts)
	ctx := context.Background()
	setup := s.client(t, 2)
	for _, a := range accounts {
		if err := setup.Set(ctx, a, scriptInitial, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	const nClients = 8
	logKey := func(ci int) string { return "klog:" + itoa(ci) }

	decl, undecl := redis.NewScript(loggedDeclared), redis.NewScript(loggedUndeclared)
	clients := make([]*killClient, nClients)
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for ci := 0; ci < nClients; ci++ {
		kc := &killClient{}
		clients[ci] = kc
		wg.Add(1)
		go func(ci int) {
			defer wg.Done()
			c := s.clientWith(t, func(o *redis.Options) {
				o.Protocol = 2 + ci%2
				o.PoolSize = 1
				o.ReadTimeout = 5 * time.Second
			})
			rng := rand.New(rand.NewSource(int64(ci) + 100))
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				ai, bi := rng.Intn(nAcc), rng.Intn(nAcc)
				if ai == bi {
					bi = (bi + 1) % nAcc
				}
				n := rng.Intn(300) + 1
				id := fmt.Sprintf("c%d.%d.%d.%d.%d", ci, seq, ai, bi, n)
				var res *redis.Cmd
				switch {
				case ci%2 == 0:
					res = decl.Run(ctx, c, []string{accounts[ai], accounts[bi], logKey(ci)}, n, id)
				case seq%4 == 0:
					res = c.Eval(ctx, freshBody(loggedUndeclared, id), []string{accounts[ai]}, n, id, accounts[bi], logKey(ci))
				default:
					res = undecl.Run(ctx, c, []string{accounts[ai]}, n, id, accounts[bi], logKey(ci))
				}
				kc.inflight = id
				v, err := res.Int64()
				if err != nil {
					var rerr redis.Error
					if errors.As(err, &rerr) {
						kc.failure = fmt.Sprintf("%s: %v", id, err)
					}
					return // the server is gone
				}
				kc.inflight = ""
				switch v {
				case 1:
					kc.applied = append(kc.applied, id)
					acked.Add(1)
				case 0:
					kc.refused++
				default:
					kc.failure = fmt.Sprintf("%s: reply %d", id, v)
					return
				}
			}
		}(ci)
	}
	load := 3 * time.Second
	if testing.Short() {
		load = time.Second
	}
	time.Sleep(load)
	for wait := time.Now().Add(10 * time.Second); acked.Load() == 0 && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}
	s.kill9()
	close(stop)
	wg.Wait()
	if acked.Load() == 0 {
		t.Fatal("no transfer was acknowledged before the crash")
	}

	s2 := startServerIn(t, dir, args...)
	c := s2.client(t, 2)
	balances := make([]int64, nAcc)
	for i := range balances {
		balances[i] = scriptInitial
	}
	seen := map[string]bool{}
	var logged, inflightKept int
	for ci, kc := range clients {
		if kc.failure != "" {
			t.Errorf("client %d: wrong reply before the crash: %s", ci, kc.failure)
		}
		ids, err := c.LRange(ctx, logKey(ci), 0, -1).Result()
		if err != nil {
			t.Fatalf("LRANGE %s: %v", logKey(ci), err)
		}
		for _, id := range ids {
			if seen[id] {
				t.Errorf("client %d: id %s logged twice", ci, id)
			}
			seen[id] = true
			var cc, seq, ai, bi, n int
			if _, err := fmt.Sscanf(id, "c%d.%d.%d.%d.%d", &cc, &seq, &ai, &bi, &n); err != nil || cc != ci || ai >= nAcc || bi >= nAcc {
				t.Fatalf("client %d: bad id %q in %s", ci, id, logKey(ci))
			}
			balances[ai] -= int64(n)
			balances[bi] += int64(n)
		}
		logged += len(ids)
		// The log is the applied transfers in order, and maybe the one
		// whose reply was lost.
		okLog := len(ids) >= len(kc.applied) && len(ids) <= len(kc.applied)+1 &&
			reflect.DeepEqual(ids[:len(kc.applied)], kc.applied)
		if okLog && len(ids) == len(kc.applied)+1 {
			okLog = ids[len(ids)-1] == kc.inflight && kc.inflight != ""
			inflightKept++
		}
		if !okLog {
			missing := 0
			for _, id := range kc.applied {
				if !seen[id] {
					missing++
				}
			}
			t.Errorf("client %d: log %s holds %d ids, %d acknowledged as applied (%d of them missing), in flight %q; log tail %v, acknowledged tail %v",
				ci, logKey(ci), len(ids), len(kc.applied), missing, kc.inflight, tail(ids, 3), tail(kc.applied, 3))
		}
	}
	got, err := c.MGet(ctx, accounts...).Result()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for i, v := range got {
		n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		if err != nil {
			t.Fatalf("%s = %#v after the restart", accounts[i], v)
		}
		sum += n
		if n < 0 {
			t.Errorf("%s = %d after the restart", accounts[i], n)
		}
		if n != balances[i] {
			t.Errorf("%s = %d after the restart; the logged transfers make it %d", accounts[i], n, balances[i])
		}
	}
	if sum != int64(nAcc*scriptInitial) {
		t.Errorf("after the restart the total is %d, want %d: a script was applied in part", sum, nAcc*scriptInitial)
	}
	refused := 0
	for _, kc := range clients {
		refused += kc.refused
	}
	t.Logf("%v of load then kill -9: %d transfers acknowledged as applied, %d refused, %d logged after the restart (%d in flight at the crash kept)",
		load, acked.Load(), refused, logged, inflightKept)
}

func tail(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

const (
	lockRelease = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
else
  return 0
end
`
	// KEYS[1]: the window's zset; ARGV: window ms, limit, unique member.
	// Returns {allowed (1/0), requests in the window}.
	rateLimiter = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, count + 1}
end
return {0, count}
`
)

// TestScriptGoRedisLockAndRateLimiter: go-redis's Script.Run (EVALSHA,
// then EVAL on NOSCRIPT) after SCRIPT FLUSH, for a lock release and a
// sliding-window rate limiter, under RESP2 and RESP3.
func TestScriptGoRedisLockAndRateLimiter(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+itoa(proto), func(t *testing.T) {
			ctx := context.Background()
			c := s.client(t, proto)
			p := itoa(proto)
			flush := func() {
				t.Helper()
				if err := c.ScriptFlush(ctx).Err(); err != nil {
					t.Fatalf("SCRIPT FLUSH: %v", err)
				}
				ex, err := c.ScriptExists(ctx, redis.NewScript(lockRelease).Hash(), redis.NewScript(rateLimiter).Hash()).Result()
				if err != nil || !reflect.DeepEqual(ex, []bool{false, false}) {
					t.Fatalf("SCRIPT EXISTS after FLUSH: %v %v", ex, err)
				}
			}
			expect := func(what string, got any, err error, want any) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: got %#v (%T), want %#v (%T)", what, got, got, want, want)
				}
			}

			t.Run("lock", func(t *testing.T) {
				flush()
				release := redis.NewScript(lockRelease)
				noscript := noscriptCount(t, c)
				lock := "lock:" + p
				ok, err := c.SetNX(ctx, lock, "token-A", 30*time.Second).Result()
				if err != nil || !ok {
					t.Fatalf("SET %s token-A NX PX 30000: %v %v", lock, ok, err)
				}
				if ok, _ := c.SetNX(ctx, lock, "token-B", 30*time.Second).Result(); ok {
					t.Fatalf("a second SET NX took the lock")
				}
				// EVALSHA answers NOSCRIPT; Run falls back to EVAL
				v, err := release.Run(ctx, c, []string{lock}, "token-B").Result()
				expect("release with the wrong token", v, err, int64(0))
				if n := noscriptCount(t, c); n != noscript+1 {
					t.Fatalf("errorstat_NOSCRIPT went from %d to %d over the first Run; want one NOSCRIPT (EVALSHA, then EVAL)", noscript, n)
				}
				if got, err := c.Get(ctx, lock).Result(); err != nil || got != "token-A" {
					t.Fatalf("after a wrong release the lock holds %q, %v", got, err)
				}
				if ttl, err := c.PTTL(ctx, lock).Result(); err != nil || ttl <= 0 || ttl > 30*time.Second {
					t.Fatalf("after a wrong release PTTL is %v, %v", ttl, err)
				}
				// loaded now by the fallback's EVAL
				ex, err := c.ScriptExists(ctx, release.Hash()).Result()
				expect("SCRIPT EXISTS after Run", ex, err, []bool{true})
				v, err = release.Run(ctx, c, []string{lock}, "token-A").Result()
				expect("release with the right token", v, err, int64(1))
				if n := noscriptCount(t, c); n != noscript+1 {
					t.Fatalf("errorstat_NOSCRIPT went from %d to %d; the second Run's EVALSHA must find the script", noscript, n)
				}
				if n, err := c.Exists(ctx, lock).Result(); err != nil || n != 0 {
					t.Fatalf("after the release the lock exists (%d, %v)", n, err)
				}
				v, err = release.Run(ctx, c, []string{lock}, "token-A").Result()
				expect("release of a free lock", v, err, int64(0))
				// the key's shard does not matter: a lock on every shard
				for _, k := range spreadKeys("lock:"+p+":", nShards, 1) {
					if err := c.Set(ctx, k, "t", 30*time.Second).Err(); err != nil {
						t.Fatal(err)
					}
					v, err := release.Run(ctx, c, []string{k}, "t").Result()
					expect("release of "+k, v, err, int64(1))
				}
			})

			t.Run("ratelimiter", func(t *testing.T) {
				flush()
				rl := redis.NewScript(rateLimiter)
				const limit = 5
				const window = 600 // ms
				key := "rl:" + p
				member := 0
				call := func() []any {
					t.Helper()
					member++
					v, err := rl.Run(ctx, c, []string{key}, window, limit, "m"+itoa(member)).Result()
					if err != nil {
						t.Fatalf("rate limiter call %d: %v", member, err)
					}
					arr, ok := v.([]any)
					if !ok || len(arr) != 2 {
						t.Fatalf("rate limiter call %d: reply %#v (%T), want a 2-element []interface{}", member, v, v)
					}
					for i, e := range arr {
						if _, ok := e.(int64); !ok {
							t.Fatalf("rate limiter call %d: element %d is %#v (%T), want int64", member, i, e, e)
						}
					}
					return arr
				}
				for round := 0; round < 2; round++ {
					noscript := noscriptCount(t, c)
					start := time.Now()
					for i := 1; i <= limit; i++ {
						if got := call(); !reflect.DeepEqual(got, []any{int64(1), int64(i)}) {
							t.Fatalf("round %d, call %d within the window: %#v, want allowed [1 %d]", round, i, got, i)
						}
					}
					if n := noscriptCount(t, c); n != noscript+1 {
						t.Fatalf("round %d: errorstat_NOSCRIPT went from %d to %d; want one NOSCRIPT after SCRIPT FLUSH", round, noscript, n)
					}
					got := call()
					if el := time.Since(start); el >= window*time.Millisecond {
						t.Skipf("the calls took %v, longer than the window; cannot judge", el)
					}
					if !reflect.DeepEqual(got, []any{int64(0), int64(limit)}) {
						t.Fatalf("round %d, call %d within the window: %#v, want refused [0 %d]", round, limit+1, got, limit)
					}
					if n, err := c.ZCard(ctx, key).Result(); err != nil || n != limit {
						t.Fatalf("ZCARD %s = %d, %v; want %d", key, n, err, limit)
					}
					if ttl, err := c.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > window*time.Millisecond {
						t.Fatalf("PTTL %s = %v, %v; want in (0, %dms]", key, ttl, err, window)
					}
					time.Sleep(window*time.Millisecond + 100*time.Millisecond)
					if round == 0 {
						flush() // the second round falls back to EVAL again
					}
				}
				// the window has passed: allowed again, and the key expired
				if got := call(); !reflect.DeepEqual(got, []any{int64(1), int64(1)}) {
					t.Fatalf("after the window: %#v, want [1 1]", got)
				}
			})

			t.Run("types", func(t *testing.T) {
				// the Lua to RESP conversions as go-redis sees them
				v, err := c.Eval(ctx, "return redis.status_reply('FINE')", nil).Result()
				expect("status reply", v, err, "FINE")
				v, err = c.Eval(ctx, "return {1, 'two', {3}}", nil).Result()
				expect("table", v, err, []any{int64(1), "two", []any{int64(3)}})
				v, err = c.Eval(ctx, "return 3.99", nil).Result()
				expect("number", v, err, int64(3))
				_, err = c.Eval(ctx, "return nil", nil).Result()
				if err != redis.Nil {
					t.Fatalf("return nil: err %v, want redis.Nil", err)
				}
				_, err = c.Eval(ctx, "return redis.error_reply('MYERR boom')", nil).Result()
				if err == nil || err.Error() != "MYERR boom" {
					t.Fatalf("error reply: %v, want MYERR boom", err)
				}
			})
		})
	}
}

// noscriptCount is INFO errorstats' count of NOSCRIPT error replies.
func noscriptCount(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "errorstats").Result()
	if err != nil {
		t.Fatalf("INFO errorstats: %v", err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "errorstat_NOSCRIPT:count="); ok {
			n, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				t.Fatalf("INFO errorstats: %q", line)
			}
			return n
		}
	}
	return 0
}

// TestScriptFunctionsSurviveRestart: FUNCTION LOAD is logged to the AOF
// and written by a rewrite, so FCALL works after a restart and after
// BGREWRITEAOF and a restart.
func TestScriptFunctionsSurviveRestart(t *testing.T) {
	args := append([]string{"--shards", strconv.Itoa(nShards)}, aofArgs("always")...)
	dir := t.TempDir()
	s := startServerIn(t, dir, args...)
	ctx := context.Background()
	const lib = "#!lua name=slib\n" +
		"redis.register_function('sincr', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)\n" +
		"redis.register_function{function_name='sget', callback=function(keys, args) return redis.call('GET', keys[1]) end, flags={'no-writes'}}\n"
	c := s.client(t, 2)
	if v, err := c.FunctionLoad(ctx, lib).Result(); err != nil || v != "slib" {
		t.Fatalf("FUNCTION LOAD: %q %v", v, err)
	}
	keys := spreadKeys("fn:", nShards, 1)
	for _, k := range keys {
		if v, err := c.FCall(ctx, "sincr", []string{k}, 5).Int64(); err != nil || v != 5 {
			t.Fatalf("FCALL sincr %s: %d %v", k, v, err)
		}
	}
	check := func(s *server, when string, want int64) {
		t.Helper()
		c := s.client(t, 2)
		libs, err := c.FunctionList(ctx, redis.FunctionListQuery{}).Result()
		if err != nil || len(libs) != 1 || libs[0].Name != "slib" || len(libs[0].Functions) != 2 {
			t.Fatalf("%s: FUNCTION LIST: %+v %v", when, libs, err)
		}
		for _, k := range keys {
			if v, err := c.FCallRO(ctx, "sget", []string{k}).Text(); err != nil || v != strconv.FormatInt(want, 10) {
				t.Fatalf("%s: FCALL_RO sget %s: %q %v, want %d", when, k, v, err, want)
			}
			if v, err := c.FCall(ctx, "sincr", []string{k}, 1).Int64(); err != nil || v != want+1 {
				t.Fatalf("%s: FCALL sincr %s: %d %v, want %d", when, k, v, err, want+1)
			}
		}
	}
	s.stop()
	s = startServerIn(t, dir, args...)
	check(s, "after a restart", 5)

	p := mustDialP(t, s.Addr)
	if r := p.mustDo(t, "BGREWRITEAOF"); r.typ != '+' {
		t.Fatalf("BGREWRITEAOF: %v", r)
	}
	waitRewrite(t, p)
	p.close()
	s.stop()
	s = startServerIn(t, dir, args...)
	check(s, "after BGREWRITEAOF and a restart", 6)

	// and a kill -9 after the rewrite keeps the libraries and the writes
	// (appendfsync always)
	s.kill9()
	s = startServerIn(t, dir, args...)
	c = s.client(t, 2)
	if v, err := c.FCallRO(ctx, "sget", []string{keys[0]}).Text(); err != nil || v != "7" {
		t.Fatalf("after kill -9: FCALL_RO sget: %q %v, want 7", v, err)
	}
}

// DEBUG SET-DISABLE-DENY-SCRIPTS, Redis's test knob: while on, scripts may
// call commands flagged noscript (Redis's suite calls DEBUG PROTOCOL from
// scripts to check the RESP3 conversions); off again, they are refused.
func TestDebugSetDisableDenyScripts(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	c := s.raw(t)
	script := "return redis.call('debug', 'protocol', 'bignum')"
	c.write(resp("EVAL", script, "0"))
	if l := c.line(); !strings.Contains(l, "This Redis command is not allowed from script") {
		t.Fatalf("DEBUG from a script: %q", l)
	}
	c.do(resp("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"), "+OK\r\n")
	// RESP2: the big number becomes a bulk string, as in Redis.
	c.do(resp("EVAL", script, "0"), "$37\r\n1234567999999999999999999999999999999\r\n")
	// Lua speaking RESP3 to a RESP2 client: still a bulk string.
	c.do(resp("EVAL", "redis.setresp(3) "+script, "0"), "$37\r\n1234567999999999999999999999999999999\r\n")
	// To a RESP3 client: a big number.
	c.write(resp("HELLO", "3"))
	c.helloReply()
	c.do(resp("EVAL", "redis.setresp(3) "+script, "0"), "(1234567999999999999999999999999999999\r\n")
	c.do(resp("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"), "+OK\r\n")
	c.write(resp("EVAL", script, "0"))
	if l := c.line(); !strings.Contains(l, "This Redis command is not allowed from script") {
		t.Fatalf("DEBUG from a script after the knob is off: %q", l)
	}
}

// On a stale replica (replica-serve-stale-data no, link down), a script
// allowed to run there (allow-stale) may call only commands flagged stale:
// another answers Redis's "Can not execute the command on a stale replica"
// (scriptVerifyAllowStale); a script without the flag gets MASTERDOWN.
func TestScriptOnStaleReplica(t *testing.T) {
	s := startServer(t)
	c := s.raw(t)
	lib := "#!lua name=stale\n" +
		"redis.register_function{function_name='f1', callback=function() return 'hello' end, flags={'no-writes'}}\n" +
		"redis.register_function{function_name='f2', callback=function() return 'hello' end, flags={'allow-stale', 'no-writes'}}\n" +
		"redis.register_function{function_name='f3', callback=function() return redis.call('get', 'x') end, flags={'allow-stale', 'no-writes'}}\n" +
		"redis.register_function{function_name='f4', callback=function() return redis.call('info', 'server') end, flags={'allow-stale', 'no-writes'}}\n"
	c.do(resp("FUNCTION", "LOAD", lib), "$5\r\nstale\r\n")
	c.do(resp("CONFIG", "SET", "replica-serve-stale-data", "no"), "+OK\r\n")
	c.do(resp("REPLICAOF", "127.0.0.1", "1"), "+OK\r\n")
	c.do(resp("FCALL", "f1", "0"), "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n")
	c.do(resp("FCALL", "f2", "0"), "$5\r\nhello\r\n")
	for _, call := range [][]string{{"FCALL", "f3", "0"}, {"EVAL", "#!lua flags=allow-stale,no-writes\nreturn redis.call('get', 'x')", "0"}} {
		c.write(resp(call...))
		if l := c.line(); !strings.HasPrefix(l, "-ERR Can not execute the command on a stale replica. The command is allowed to run only if it has the 'STALE' flag.") {
			t.Fatalf("%s: %q", call[0], l)
		}
	}
	c.write(resp("FCALL", "f4", "0")) // INFO is allowed on a stale replica
	if !strings.Contains(c.bulk(), "redis_version:") {
		t.Fatal("FCALL f4: INFO without redis_version")
	}
	c.do(resp("REPLICAOF", "NO", "ONE"), "+OK\r\n")
	c.do(resp("FCALL", "f3", "0"), "$-1\r\n")
}
