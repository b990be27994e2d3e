package tests

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Client-side caching against a sharded server: a rueidis client caches
// with CLIENT TRACKING while writers on other connections (other event
// loops) change the keys it caches, on every shard.
//
// The check is the guarantee redshard gives (server/tracking.go): the
// invalidation of a write reaches the tracking connection before the reply
// of anything that connection sends after the writer was answered. So each
// read snapshots the last acknowledged write of its key, makes one round
// trip on the caching connection (a PING: every invalidation sent before
// the writer's reply is processed by then), and then reads through the
// cache: the value must be at least the snapshot, from the server or from
// rueidis's cache alike. The client has exactly one connection
// (PipelineMultiplex -1): rueidis's default is one per two CPUs, each with
// a cache of its own, and a PING on one of them says nothing of the
// invalidations still on their way on another (which is how an earlier
// version of this test saw a few late cache hits, against redis-server
// too).
func TestTrackingClientSideCacheNeverStale(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		optin  bool
		rounds int
	}{
		{"optin", nil, true, 70000},
		{"default-mode", nil, false, 70000},
		{"optin-appendfsync-always", []string{"--appendonly", "yes", "--appendfsync", "always"}, true, 80000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--shards", strconv.Itoa(nShards)}, tc.args...)
			s := startServer(t, args...)
			checkCacheNeverStale(t, s, tc.optin, tc.rounds)
		})
	}
}

func checkCacheNeverStale(t *testing.T, s *server, optin bool, rounds int) {
	ctx := ctxT(t)
	keys := spreadKeys("csc:", nShards, 4)
	if shardsOf(nShards, keys...) != nShards {
		t.Fatal("keys do not cover every shard")
	}
	opt := rueidis.ClientOption{
		InitAddress:       []string{s.Addr},
		PipelineMultiplex: -1, // one connection: the PING and the cache share it
		DisableRetry:      true,
	}
	if !optin {
		opt.ClientTrackingOptions = []string{"NOLOOP"} // default mode, not OPTIN
	}
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatalf("rueidis: %v", err)
	}
	defer rc.Close()

	acked := make([]atomic.Int64, len(keys))
	for i, k := range keys {
		if err := rc.Do(ctx, rc.B().Set().Key(k).Value("0").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		acked[i].Store(0)
	}

	// Writers: one per key group, each on its own connection (the server
	// spreads connections over its loops), values rising per key.
	const writers = 4
	var wg sync.WaitGroup
	var writes atomic.Int64
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for w := 0; w < writers; w++ {
		c := s.client(t, 2)
		wg.Add(1)
		go func(w int, c *redis.Client) {
			defer wg.Done()
			next := make([]int64, len(keys))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := w + writers*(n%(len(keys)/writers))
				next[i]++
				if err := c.Set(ctx, keys[i], next[i], 0).Err(); err != nil {
					errs <- fmt.Errorf("writer %d: SET %s: %v", w, keys[i], err)
					return
				}
				acked[i].Store(next[i])
				writes.Add(1)
				time.Sleep(100 * time.Microsecond) // let reads hit the cache between changes
			}
		}(w, c)
	}

	var reads, hits, stale atomic.Int64
	var firstStale atomic.Value
	const readers = 4
	var rwg sync.WaitGroup
	for r := 0; r < readers; r++ {
		rwg.Add(1)
		go func(r int) {
			defer rwg.Done()
			for n := 0; n < rounds/readers; n++ {
				// Each reader has keys of its own: a read never joins
				// another reader's read in flight (rueidis shares those).
				i := r + readers*(n%(len(keys)/readers))
				want := acked[i].Load()
				if err := rc.Do(ctx, rc.B().Ping().Build()).Error(); err != nil {
					errs <- fmt.Errorf("reader: PING: %v", err)
					return
				}
				res := rc.DoCache(ctx, rc.B().Get().Key(keys[i]).Cache(), time.Minute)
				s, err := res.ToString()
				if err != nil {
					errs <- fmt.Errorf("reader: GET %s: %v", keys[i], err)
					return
				}
				v, _ := strconv.ParseInt(s, 10, 64)
				reads.Add(1)
				hit := res.IsCacheHit()
				if hit {
					hits.Add(1)
				}
				if v >= want {
					continue
				}
				if stale.Add(1) == 1 {
					firstStale.Store(fmt.Sprintf("%s: read %d (from the client's cache: %v) after the write of %d was acknowledged", keys[i], v, hit, want))
				}
			}
		}(r)
	}
	done := make(chan struct{})
	go func() { rwg.Wait(); close(done) }()
	select {
	case <-done:
	case err := <-errs:
		close(stop)
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	total := reads.Load() + writes.Load()
	t.Logf("%d reads (%d from the client's cache) and %d writes over %d keys on %d shards; stale reads: %d",
		reads.Load(), hits.Load(), writes.Load(), len(keys), nShards, stale.Load())
	if stale.Load() > 0 {
		t.Fatalf("%d stale reads; first: %v", stale.Load(), firstStale.Load())
	}
	if total < 100000 {
		t.Fatalf("only %d operations", total)
	}
	// A sanity bound, not a speed figure: with tracking off there are no
	// hits at all. How many reads the cache serves depends on how often the
	// writers get the CPU between reads, which a loaded 2-core machine
	// changes several-fold (5,166 of 70,000 in one CI run), so the bound is
	// 1%.
	if hits.Load() < reads.Load()/100 {
		t.Fatalf("only %d of %d reads were served from the client's cache: tracking is not in use", hits.Load(), reads.Load())
	}
	if writes.Load() < 1000 {
		t.Fatalf("only %d writes: the cache was hardly invalidated", writes.Load())
	}
}

// The RESP3 push of an invalidation, its redirection to a RESP2 subscriber
// on another loop, and BCAST, with the writer on yet another connection.
func TestTrackingInvalidationsAcrossLoops(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	keys := spreadKeys("inv:", nShards, 1)

	tracker := s.raw(t)
	tracker.write(resp("HELLO", "3"))
	drain(tracker)
	tracker.do(resp("CLIENT", "TRACKING", "on"), "+OK\r\n")
	writer := s.raw(t)
	for _, k := range keys {
		writer.do(resp("SET", k, "1"), "+OK\r\n")
		tracker.do(resp("GET", k), "$1\r\n1\r\n")
	}
	for _, k := range keys {
		writer.do(resp("SET", k, "2"), "+OK\r\n")
		// The invalidation comes before the reply of the next command.
		tracker.do(resp("PING"), ">2\r\n$10\r\ninvalidate\r\n*1\r\n"+bulk(k)+"+PONG\r\n")
	}
	// Not tracked any more until read again: no second message.
	writer.do(resp("SET", keys[0], "3"), "+OK\r\n")
	tracker.do(resp("PING"), "+PONG\r\n")

	// REDIRECT to a RESP2 subscriber.
	sub := s.raw(t)
	sub.do(resp("CLIENT", "ID"), "")
	id := strings.TrimSpace(strings.TrimPrefix(sub.line(), ":"))
	sub.do(resp("SUBSCRIBE", "__redis__:invalidate"), "*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n")
	red := s.raw(t)
	red.do(resp("CLIENT", "TRACKING", "on", "REDIRECT", id), "+OK\r\n")
	for _, k := range keys {
		red.do(resp("GET", k), "")
		red.line()
		red.line()
	}
	writer.do(resp("MSET", keys[1], "x", keys[2], "y"), "+OK\r\n")
	got := map[string]bool{}
	for len(got) < 2 {
		sub.expect("*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n")
		l := sub.line()
		k := sub.line()
		if !strings.HasPrefix(l, "$") {
			t.Fatalf("bad key header %q", l)
		}
		got[k] = true
	}
	if !got[keys[1]] || !got[keys[2]] {
		t.Fatalf("redirected invalidations: %v", got)
	}

	// BCAST with a prefix: one message with every key of one command.
	bc := s.raw(t)
	bc.write(resp("HELLO", "3"))
	drain(bc)
	bc.do(resp("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "bc:"), "+OK\r\n")
	writer.do(resp("MSET", "bc:1{t}", "1", "bc:2{t}", "2", "other{t}", "3"), "+OK\r\n")
	bc.do(resp("PING"), ">2\r\n$10\r\ninvalidate\r\n*2\r\n"+bulk("bc:1{t}")+bulk("bc:2{t}")+"+PONG\r\n")

	// FLUSHALL: a null for every tracking client.
	writer.do(resp("FLUSHALL"), "+OK\r\n")
	tracker.do(resp("PING"), ">2\r\n$10\r\ninvalidate\r\n_\r\n+PONG\r\n")
	info := s.client(t, 2).Info(ctxT(t), "stats").Val()
	if !strings.Contains(info, "tracking_total_keys:0") {
		t.Fatalf("after FLUSHALL: %s", info)
	}
}

// drain reads what is left of a reply whose length the test does not care
// about (HELLO's map), by waiting for the connection to go quiet.
func drain(rc *rawConn) {
	_ = rc.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	for {
		if _, err := rc.r.ReadByte(); err != nil {
			break
		}
	}
}

// A client-side cache written here, by the protocol's rules: a push
// "invalidate" drops keys, a reply fills the cache. Two tracking
// connections read (through their caches) keys on every shard while four
// writers change them; before each read the reader snapshots the last
// acknowledged write and makes one round trip (PING), so the cache must
// have dropped every key changed before: no read may be older, ever.
func TestTrackingNeverStaleStrict(t *testing.T) {
	t.Run("no-aof", func(t *testing.T) { checkStrict(t, startServer(t, "--shards", strconv.Itoa(nShards)), false) })
	t.Run("appendfsync-always", func(t *testing.T) {
		checkStrict(t, startServer(t, "--shards", strconv.Itoa(nShards), "--appendonly", "yes", "--appendfsync", "always"), false)
	})
	// As rueidis reads: OPTIN, then CLIENT CACHING yes, MULTI, PTTL, GET,
	// EXEC in one write.
	t.Run("optin-multi", func(t *testing.T) { checkStrict(t, startServer(t, "--shards", strconv.Itoa(nShards)), true) })
}

func checkStrict(t *testing.T, s *server, optinMulti bool) {
	keys := spreadKeys("strict:", nShards, 4)
	acked := make([]atomic.Int64, len(keys))
	stop := make(chan struct{})
	var writes atomic.Int64
	var reads, hits, stale atomic.Int64
	var wg sync.WaitGroup
	pacedWriters(t, s, keys, acked, &reads, &writes, stop, &wg)
	var first atomic.Value
	var rwg sync.WaitGroup
	for r := 0; r < 2; r++ {
		rc := trackingConn(t, s, optinMulti)
		rwg.Add(1)
		go func(r int, rc *rawConn) {
			defer rwg.Done()
			cache := map[string]int64{}
			reply := func() []string { // the next reply; pushes applied on the way
				_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
				for {
					v, push := readRESP3(rc.r)
					if !push {
						return v
					}
					for _, k := range v[1:] {
						delete(cache, k)
					}
				}
			}
			for n := 0; n < 50000; n++ {
				i := (n*5 + r) % len(keys)
				k := keys[i]
				want := acked[i].Load()
				rc.write(resp("PING"))
				reply()
				v, ok := cache[k]
				if ok {
					hits.Add(1)
				} else if optinMulti {
					rc.write(resp("CLIENT", "CACHING", "yes") + resp("MULTI") + resp("PTTL", k) + resp("GET", k) + resp("EXEC"))
					for j := 0; j < 4; j++ {
						reply()
					}
					got := reply()
					v, _ = strconv.ParseInt(got[len(got)-1], 10, 64)
					cache[k] = v
				} else {
					rc.write(resp("GET", k))
					got := reply()
					v, _ = strconv.ParseInt(got[0], 10, 64)
					cache[k] = v
				}
				reads.Add(1)
				if v < want && stale.Add(1) == 1 {
					first.Store(fmt.Sprintf("%s: read %d (cached %v), %d was acknowledged before", k, v, ok, want))
				}
			}
		}(r, rc)
	}
	rwg.Wait()
	close(stop)
	wg.Wait()
	strictVerdict(t, reads.Load(), hits.Load(), writes.Load(), stale.Load(), first.Load())
}

// trackingConn is a RESP3 connection with CLIENT TRACKING on, in OPTIN
// mode if optin.
func trackingConn(t *testing.T, s *server, optin bool) *rawConn {
	rc := s.raw(t)
	rc.write(resp("HELLO", "3"))
	drain(rc)
	if optin {
		rc.do(resp("CLIENT", "TRACKING", "on", "OPTIN"), "+OK\r\n")
	} else {
		rc.do(resp("CLIENT", "TRACKING", "on"), "+OK\r\n")
	}
	return rc
}

// strictVerdict fails a strict run with a stale read, or one that
// exercised too little: under 100,000 operations, a cache that served under
// a tenth of the reads, or under 1,000 writes.
func strictVerdict(t *testing.T, reads, hits, writes, stale int64, first any) {
	t.Helper()
	t.Logf("%d reads (%d from the cache), %d writes, stale: %d", reads, hits, writes, stale)
	if stale > 0 {
		t.Fatalf("%d stale reads; first: %v", stale, first)
	}
	if reads+writes < 100000 || hits < reads/10 || writes < 1000 {
		t.Fatalf("too little exercised: %d reads, %d hits, %d writes", reads, hits, writes)
	}
}

// pacedWriters starts four writers, each on a connection of its own, that
// set keys w, w+4, ... to rising values and store each acknowledged one in
// acked, until stop closes. They are paced by the readers, not the clock:
// one write of the four writers per 8 reads, so a loaded machine that slows
// the readers does not leave every cached key invalidated before its next
// read (a CI run saw 72 hits in 100000).
func pacedWriters(t *testing.T, s *server, keys []string, acked []atomic.Int64, reads, writes *atomic.Int64, stop chan struct{}, wg *sync.WaitGroup) {
	ctx := ctxT(t)
	for w := 0; w < 4; w++ {
		c := s.client(t, 2)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := int64(1); ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := w + 4*int(n%int64(len(keys)/4))
				if err := c.Set(ctx, keys[i], n, 0).Err(); err != nil {
					return
				}
				acked[i].Store(n)
				writes.Add(1)
				for base := reads.Load(); reads.Load() < base+32; {
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Microsecond):
					}
				}
			}
		}(w)
	}
}

// readRESP3 reads one reply as a flat list of its strings; push says it
// was a push.
func readRESP3(br *bufio.Reader) (vals []string, push bool) {
	line, err := br.ReadString('\n')
	if err != nil || len(line) < 3 {
		return []string{"<" + fmt.Sprint(err) + ">"}, false
	}
	line = strings.TrimRight(line, "\r\n")
	switch line[0] {
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return []string{""}, false
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return []string{"<short>"}, false
		}
		return []string{string(b[:n])}, false
	case '*', '>', '%', '~':
		n, _ := strconv.Atoi(line[1:])
		if line[0] == '%' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			v, _ := readRESP3(br)
			vals = append(vals, v...)
		}
		return vals, line[0] == '>'
	}
	return []string{line[1:]}, false
}

// As rueidis uses one connection: several readers pipeline on it, and a
// single goroutine reads what comes back. A read in flight keeps its key
// against invalidations (rueidis does not drop a pending entry: a push
// that arrives before a read's reply must be of a change the read saw),
// and the reply fills the cache where it is read, before what follows it.
// So this holds the server to the stronger order rueidis relies on: an
// invalidation never overtakes the reply of a read that ran before the
// change.
func TestTrackingNeverStaleSharedConn(t *testing.T) {
	for _, mode := range []string{"default", "optin-multi"} {
		t.Run(mode, func(t *testing.T) {
			checkStrictShared(t, startServer(t, "--shards", strconv.Itoa(nShards)), mode == "optin-multi")
		})
	}
}

func checkStrictShared(t *testing.T, s *server, optinMulti bool) {
	keys := spreadKeys("shared:", nShards, 4)
	acked := make([]atomic.Int64, len(keys))
	stop := make(chan struct{})
	var writes, reads, hits, stale atomic.Int64
	var wg sync.WaitGroup
	pacedWriters(t, s, keys, acked, &reads, &writes, stop, &wg)

	rc := trackingConn(t, s, optinMulti)
	type waiter struct {
		key     string // a read: fill the cache with its value
		replies int    // replies to take (a transaction's QUEUED ones too)
		done    chan []string
	}
	var mu sync.Mutex // the connection's writes, the queue, the cache
	var queue []*waiter
	cache := map[string]int64{}
	pending := map[string]bool{}
	readErr := make(chan error, 1)
	go func() {
		for {
			_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			v, push := readRESP3(rc.r)
			if len(v) > 0 && strings.HasPrefix(v[0], "<") {
				readErr <- fmt.Errorf("read: %v", v)
				return
			}
			mu.Lock()
			if push {
				for _, k := range v[1:] {
					if !pending[k] {
						delete(cache, k)
					}
				}
				mu.Unlock()
				continue
			}
			w := queue[0]
			if w.replies--; w.replies > 0 {
				mu.Unlock()
				continue
			}
			queue = queue[1:]
			if w.key != "" {
				n, _ := strconv.ParseInt(v[len(v)-1], 10, 64)
				cache[w.key] = n
				delete(pending, w.key)
			}
			mu.Unlock()
			w.done <- v
		}
	}()
	send := func(b string, key string, replies int) chan []string {
		w := &waiter{key: key, replies: replies, done: make(chan []string, 1)}
		mu.Lock()
		queue = append(queue, w)
		if key != "" {
			pending[key] = true
		}
		rc.write(b)
		mu.Unlock()
		return w.done
	}
	wait := func(ch chan []string) ([]string, bool) {
		select {
		case v := <-ch:
			return v, true
		case err := <-readErr:
			t.Error(err)
			return nil, false
		}
	}
	var first atomic.Value
	var rwg sync.WaitGroup
	for r := 0; r < 4; r++ {
		rwg.Add(1)
		go func(r int) {
			defer rwg.Done()
			for n := 0; n < 25000; n++ {
				i := r + 4*(n%(len(keys)/4)) // keys of its own, as in the rueidis test
				k := keys[i]
				want := acked[i].Load()
				if _, ok := wait(send(resp("PING"), "", 1)); !ok {
					return
				}
				mu.Lock()
				v, hit := cache[k]
				mu.Unlock()
				if hit {
					hits.Add(1)
				} else {
					var ch chan []string
					if optinMulti {
						ch = send(resp("CLIENT", "CACHING", "yes")+resp("MULTI")+resp("PTTL", k)+resp("GET", k)+resp("EXEC"), k, 5)
					} else {
						ch = send(resp("GET", k), k, 1)
					}
					got, ok := wait(ch)
					if !ok {
						return
					}
					v, _ = strconv.ParseInt(got[len(got)-1], 10, 64)
				}
				reads.Add(1)
				if v < want && stale.Add(1) == 1 {
					first.Store(fmt.Sprintf("%s: read %d (cached %v), %d was acknowledged before", k, v, hit, want))
				}
			}
		}(r)
	}
	rwg.Wait()
	close(stop)
	wg.Wait()
	strictVerdict(t, reads.Load(), hits.Load(), writes.Load(), stale.Load(), first.Load())
}

// A lowered tracking-table-max-keys takes effect at the next command, as
// Redis's processCommand trims the table before each command: with the cron
// paused, a tracking client inside MULTI gets the invalidation of the
// evicted key before the reply of its next command (unit/tracking's
// "Regression test for #11715").
func TestTrackingMaxKeysAtNextCommand(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	admin, c := s.raw(t), s.raw(t)
	admin.do(resp("CONFIG", "SET", "tracking-table-max-keys", "2"), "+OK\r\n")
	admin.do(resp("DEBUG", "PAUSE-CRON", "1"), "+OK\r\n")
	c.write(resp("HELLO", "3"))
	c.helloReply()
	c.do(resp("CLIENT", "TRACKING", "on"), "+OK\r\n")
	c.do(resp("MGET", "1{tag}", "2{tag}"), "*2\r\n_\r\n_\r\n")
	c.do(resp("MULTI"), "+OK\r\n")
	admin.do(resp("CONFIG", "SET", "tracking-table-max-keys", "1"), "+OK\r\n")
	c.write(resp("PING"))
	if l := c.line(); l != ">2" {
		t.Fatalf("before QUEUED: %q, want an invalidation push", l)
	}
	if l := c.line(); l != "$10" || c.line() != "invalidate" {
		t.Fatalf("push: %q", l)
	}
	if l := c.line(); l != "*1" {
		t.Fatalf("invalidated keys: %q", l)
	}
	if l := c.line(); l != "$6" {
		t.Fatalf("key: %q", l)
	}
	if k := c.line(); k != "1{tag}" && k != "2{tag}" {
		t.Fatalf("invalidated %q", k)
	}
	c.expect("+QUEUED\r\n")
	c.do(resp("EXEC"), "*1\r\n+PONG\r\n")
	admin.do(resp("DEBUG", "PAUSE-CRON", "0"), "+OK\r\n")
}

// TestTrackingMaxKeysAcrossShards: the tracking table is per shard, and a
// lowered tracking-table-max-keys takes effect at a tracking client's next
// command on every shard, not only on its home loop's: the loop that reads
// it asks the others to evict theirs at once. With the cron paused, the
// invalidations of the keys on other shards used to wait for it.
func TestTrackingMaxKeysAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes")
	admin, c := s.raw(t), s.raw(t)
	admin.do(resp("DEBUG", "PAUSE-CRON", "1"), "+OK\r\n")
	t.Cleanup(func() { admin.do(resp("DEBUG", "PAUSE-CRON", "0"), "+OK\r\n") })
	c.write(resp("HELLO", "3"))
	c.helloReply()
	c.do(resp("CLIENT", "TRACKING", "on"), "+OK\r\n")
	keys := spreadKeys("trk", 4, 1) // one key on each shard
	for _, k := range keys {
		c.do(resp("GET", k), "_\r\n")
	}
	admin.do(resp("CONFIG", "SET", "tracking-table-max-keys", "1"), "+OK\r\n")
	c.write(resp("PING"))
	// Three of the four keys must go: their invalidations (pushes) arrive
	// beside the PONG, in whatever order the loops send them.
	invalidated := map[string]bool{}
	pong := false
	deadline := time.Now().Add(2 * time.Second)
	for !pong || len(invalidated) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("after 2 s: PONG %v, invalidated %v (want 3 of %v)", pong, invalidated, keys)
		}
		switch l := c.line(); l {
		case "+PONG":
			pong = true
		case ">2":
			if l := c.line(); l != "$10" || c.line() != "invalidate" {
				t.Fatalf("push: %q", l)
			}
			n, err := strconv.Atoi(strings.TrimPrefix(c.line(), "*"))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				c.line() // $len
				invalidated[c.line()] = true
			}
		default:
			t.Fatalf("unexpected %q", l)
		}
	}
	for k := range invalidated {
		if !slices.Contains(keys, k) {
			t.Fatalf("invalidated %q, not a tracked key", k)
		}
	}
}
