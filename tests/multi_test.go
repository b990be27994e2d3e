package tests

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MULTI/EXEC and WATCH end to end, on a 4-shard server.

// soakDuration is how long the concurrency tests run: REDSHARD_SOAK_SECONDS
// (default 3 s, for CI).
func soakDuration() time.Duration {
	if s := os.Getenv("REDSHARD_SOAK_SECONDS"); s != "" {
		if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
			return time.Duration(n * float64(time.Second))
		}
	}
	return 3 * time.Second
}

// multiTarget starts a 4-shard redshard, or returns REDSHARD_MULTI_ADDR
// when it is set, so that the same test can be run by hand against
// redis-server for comparison.
func multiTarget(t *testing.T) string {
	if a := os.Getenv("REDSHARD_MULTI_ADDR"); a != "" {
		return a
	}
	return startServer(t, "--shards", strconv.Itoa(nShards)).Addr
}

func multiClient(t *testing.T, addr string, proto int) *redis.Client {
	t.Helper()
	s := &server{Addr: addr}
	return s.client(t, proto)
}

// Contract 3 for MULTI/EXEC: accounts spread over every shard; writers move
// money between random pairs with MULTI DECRBY a / INCRBY b EXEC while
// readers read every account in one MULTI/EXEC, or with one MGET; no reader
// may ever see a total other than the initial one.
func TestMultiExecTransfersKeepTheSum(t *testing.T) {
	addr := multiTarget(t)
	const nAccounts, initial = 32, 1000
	accounts := spreadKeys("acct:", nShards, nAccounts/nShards)
	ctx := context.Background()
	setup := multiClient(t, addr, 2)
	for _, a := range accounts {
		if err := setup.Set(ctx, a, initial, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	want := int64(nAccounts * initial)

	dur := soakDuration()
	stop := make(chan struct{})
	var transfers, reads atomic.Int64
	var failed atomic.Value
	fail := func(err error) {
		failed.CompareAndSwap(nil, err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(seed int64, proto int) {
			defer wg.Done()
			c := multiClient(t, addr, proto)
			rng := rand.New(rand.NewSource(seed))
			for {
				select {
				case <-stop:
					return
				default:
				}
				a, b := accounts[rng.Intn(nAccounts)], accounts[rng.Intn(nAccounts)]
				n := int64(rng.Intn(50) + 1)
				cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.DecrBy(ctx, a, n)
					p.IncrBy(ctx, b, n)
					return nil
				})
				if err != nil || len(cmds) != 2 {
					fail(errors.New("transfer: " + errString(err)))
					return
				}
				transfers.Add(1)
			}
		}(int64(w), 2+w%2)
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(useMGET bool) {
			defer wg.Done()
			c := multiClient(t, addr, 2)
			for {
				select {
				case <-stop:
					return
				default:
				}
				var vals []string
				if useMGET {
					res, err := c.MGet(ctx, accounts...).Result()
					if err != nil {
						fail(err)
						return
					}
					for _, v := range res {
						s, _ := v.(string)
						vals = append(vals, s)
					}
				} else {
					cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
						for _, a := range accounts {
							p.Get(ctx, a)
						}
						return nil
					})
					if err != nil {
						fail(err)
						return
					}
					for _, cmd := range cmds {
						vals = append(vals, cmd.(*redis.StringCmd).Val())
					}
				}
				var sum int64
				for _, v := range vals {
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						fail(errors.New("bad balance " + strconv.Quote(v)))
						return
					}
					sum += n
				}
				if sum != want {
					fail(errors.New("a reader saw a total of " + strconv.FormatInt(sum, 10) + ", want " + strconv.FormatInt(want, 10) + " (mget=" + strconv.FormatBool(useMGET) + ")"))
					return
				}
				reads.Add(1)
			}
		}(r == 1)
	}
	start := time.Now()
	select {
	case <-time.After(dur):
	case <-func() chan struct{} {
		ch := make(chan struct{})
		go func() {
			for failed.Load() == nil && time.Since(start) < dur {
				time.Sleep(10 * time.Millisecond)
			}
			close(ch)
		}()
		return ch
	}():
	}
	close(stop)
	wg.Wait()
	took := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, v := range setup.MGet(ctx, accounts...).Val() {
		n, _ := strconv.ParseInt(v.(string), 10, 64)
		sum += n
	}
	if sum != want {
		t.Fatalf("final total %d, want %d", sum, want)
	}
	if transfers.Load() == 0 || reads.Load() == 0 {
		t.Fatalf("no progress: %d transfers, %d reads", transfers.Load(), reads.Load())
	}
	t.Logf("%s: %d transfers (%.0f/s), %d consistent reads (%.0f/s) in %v", addr,
		transfers.Load(), float64(transfers.Load())/took.Seconds(),
		reads.Load(), float64(reads.Load())/took.Seconds(), took.Round(time.Millisecond))
}

func errString(err error) string {
	if err == nil {
		return "short reply"
	}
	return err.Error()
}

// WATCH races: clients increment a counter with the optimistic
// WATCH/GET/MULTI/SET/EXEC loop, watching keys on two shards and writing
// both; every increment must count exactly once.
func TestWatchOptimisticIncrementsAreExact(t *testing.T) {
	addr := multiTarget(t)
	keys := spreadKeys("watched:", nShards, 1)
	counter, shadow := keys[0], keys[2]
	ctx := context.Background()
	setup := multiClient(t, addr, 2)
	setup.Del(ctx, counter, shadow)

	const clients, each = 6, 60
	var retries atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(proto int) {
			defer wg.Done()
			c := multiClient(t, addr, proto)
			for n := 0; n < each; {
				err := c.Watch(ctx, func(tx *redis.Tx) error {
					v, err := tx.Get(ctx, counter).Int64()
					if err != nil && err != redis.Nil {
						return err
					}
					_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Set(ctx, counter, v+1, 0)
						p.Incr(ctx, shadow)
						return nil
					})
					return err
				}, counter, shadow)
				if err == redis.TxFailedErr {
					retries.Add(1)
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				n++
			}
		}(2 + i%2)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	got, _ := setup.Get(ctx, counter).Int()
	gotShadow, _ := setup.Get(ctx, shadow).Int()
	if got != clients*each || gotShadow != clients*each {
		t.Fatalf("counter=%d shadow=%d, want %d each", got, gotShadow, clients*each)
	}
	if retries.Load() == 0 {
		t.Logf("no EXEC failed: the race was not exercised this time")
	}
	t.Logf("%d increments, %d retries after a failed EXEC", clients*each, retries.Load())
}

// The replies of MULTI/EXEC/DISCARD/WATCH, byte for byte as Redis 7.0 sends
// them, with keys on several shards.
func TestMultiExecReplies(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	k := spreadKeys("mx:", nShards, 1)
	a, b, c, d := k[0], k[1], k[2], k[3]
	rc := s.raw(t)

	// Queue-time errors abort the transaction; nothing of it runs.
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("SET", a, "1"), "+QUEUED\r\n")
	rc.do(resp("NOSUCH", "x"), "-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n")
	rc.do(resp("GET"), "-ERR wrong number of arguments for 'get' command\r\n")
	rc.do(resp("SET", b, "2"), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n")
	rc.do(resp("EXISTS", a, b), ":0\r\n")

	// Run-time errors do not roll back; replies are in queue order.
	rc.do(resp("SET", c, "notanumber"), "+OK\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("SET", a, "1"), "+QUEUED\r\n")
	rc.do(resp("INCR", c), "+QUEUED\r\n")
	rc.do(resp("MSET", b, "2", d, "4"), "+QUEUED\r\n")
	rc.do(resp("PING"), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "*4\r\n+OK\r\n-ERR value is not an integer or out of range\r\n+OK\r\n+PONG\r\n")
	rc.do(resp("MGET", a, b, c, d), "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$10\r\nnotanumber\r\n$1\r\n4\r\n")

	// Errors outside and inside MULTI.
	rc.do(resp("EXEC"), "-ERR EXEC without MULTI\r\n")
	rc.do(resp("DISCARD"), "-ERR DISCARD without MULTI\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("MULTI"), "-ERR MULTI calls can not be nested\r\n")
	rc.do(resp("WATCH", a), "-ERR WATCH inside MULTI is not allowed\r\n")
	rc.do(resp("SHUTDOWN"), "-ERR Command not allowed inside a transaction\r\n")
	rc.do(resp("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n")
	rc.do(resp("EXEC", "x"), "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("DEL", a), "+QUEUED\r\n")
	rc.do(resp("DISCARD"), "+OK\r\n")
	rc.do(resp("GET", a), "$1\r\n1\r\n")

	// SELECT inside MULTI changes the database of later commands, and stays.
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("SELECT", "5"), "+QUEUED\r\n")
	rc.do(resp("SET", a, "in5"), "+QUEUED\r\n")
	rc.do(resp("GET", b), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "*3\r\n+OK\r\n+OK\r\n$-1\r\n")
	rc.do(resp("GET", a), "$3\r\nin5\r\n")
	rc.do(resp("SELECT", "0"), "+OK\r\n")

	// WATCH: a write by another client fails EXEC with a null array (RESP2
	// *-1, RESP3 _), and EXEC unwatches either way.
	other := s.raw(t)
	rc.do(resp("WATCH", a, b, c), "+OK\r\n")
	other.do(resp("SET", c, "x"), "+OK\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("SET", a, "w"), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "*-1\r\n")
	rc.do(resp("GET", a), "$1\r\n1\r\n")
	rc3 := s.raw(t)
	rc3.write(resp("HELLO", "3") + resp("PING"))
	for rc3.line() != "+PONG" { // HELLO's map is not under test here
	}
	rc3.do(resp("WATCH", d), "+OK\r\n")
	other.do(resp("DEL", d), ":1\r\n")
	rc3.do(resp("MULTI"), "+OK\r\n")
	rc3.do(resp("PING"), "+QUEUED\r\n")
	rc3.do(resp("EXEC"), "_\r\n")
	// Watching a key that is not written, then UNWATCH after a write.
	rc.do(resp("WATCH", b), "+OK\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("GET", b), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "*1\r\n$1\r\n2\r\n")
	rc.do(resp("WATCH", b), "+OK\r\n")
	other.do(resp("SET", b, "3"), "+OK\r\n")
	rc.do(resp("UNWATCH"), "+OK\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("GET", b), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "*1\r\n$1\r\n3\r\n")
	// FLUSHALL touches watched keys that exist.
	rc.do(resp("WATCH", b), "+OK\r\n")
	other.do(resp("FLUSHALL"), "+OK\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("PING"), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "*-1\r\n")

	// CLIENT LIST shows flags=x and the queue length.
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("PING"), "+QUEUED\r\n")
	info := strings.Fields(stringOf(t, s, "CLIENT", "LIST"))
	found := false
	for _, f := range info {
		if f == "multi=1" {
			found = true
		}
	}
	if !found || !strings.Contains(strings.Join(info, " "), "flags=x") {
		t.Errorf("CLIENT LIST does not show a client in MULTI: %v", info)
	}
	rc.do(resp("DISCARD"), "+OK\r\n")
	// RESET leaves MULTI.
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("RESET"), "+RESET\r\n")
	rc.do(resp("EXEC"), "-ERR EXEC without MULTI\r\n")
}

func stringOf(t *testing.T, s *server, args ...any) string {
	t.Helper()
	c := s.client(t, 2)
	v, err := c.Do(context.Background(), args...).Text()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// Contract 5 for MULTI/EXEC: under load of cross-shard transfers (each also
// counting itself on a third key), kill -9 and restart: the log must hold
// whole transactions only (the total is intact) and every acknowledged one.
func TestMultiExecCrashRecoveryIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, append([]string{"--shards", strconv.Itoa(nShards)}, aofArgs("always")...)...)
	const nAccounts, initial = 16, 1000
	accounts := spreadKeys("crash:acct:", nShards, nAccounts/nShards)
	txCount := "crash:txcount"
	ctx := context.Background()
	setup := s.client(t, 2)
	for _, a := range accounts {
		if err := setup.Set(ctx, a, initial, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			c := s.clientWith(t, func(o *redis.Options) { o.ReadTimeout = 5 * time.Second })
			rng := rand.New(rand.NewSource(seed))
			for {
				select {
				case <-stop:
					return
				default:
				}
				a, b := accounts[rng.Intn(nAccounts)], accounts[rng.Intn(nAccounts)]
				_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.DecrBy(ctx, a, 7)
					p.IncrBy(ctx, b, 7)
					p.Incr(ctx, txCount)
					return nil
				})
				if err != nil {
					return // the server is gone
				}
				acked.Add(1)
			}
		}(int64(w))
	}
	time.Sleep(700 * time.Millisecond)
	s.kill9()
	close(stop)
	wg.Wait()
	if acked.Load() == 0 {
		t.Fatal("no transaction was acknowledged before the crash")
	}

	s2 := startServerIn(t, dir, append([]string{"--shards", strconv.Itoa(nShards)}, aofArgs("always")...)...)
	c := s2.client(t, 2)
	var sum int64
	for _, v := range c.MGet(ctx, accounts...).Val() {
		n, _ := strconv.ParseInt(v.(string), 10, 64)
		sum += n
	}
	if sum != nAccounts*initial {
		t.Fatalf("after the crash the total is %d, want %d: a transaction was half applied", sum, nAccounts*initial)
	}
	n, _ := c.Get(ctx, txCount).Int64()
	if n < acked.Load() {
		t.Fatalf("after the crash %d transactions are in the data, but %d were acknowledged", n, acked.Load())
	}
	t.Logf("%d transactions acknowledged before kill -9, %d recovered", acked.Load(), n)

	// Every transaction is one MULTI ... EXEC block in the file.
	data, err := os.ReadFile(incrFileOf(dir))
	if err != nil {
		t.Fatal(err)
	}
	// The tail may be torn by the crash: what parses is enough.
	cmds, _ := parseCommands(stripAnnotations(data))
	in := false
	blocks := 0
	for _, cmd := range cmds {
		switch strings.ToUpper(cmd[0]) {
		case "MULTI":
			if in {
				t.Fatal("nested MULTI in the AOF")
			}
			in = true
		case "EXEC":
			if !in {
				t.Fatal("EXEC without MULTI in the AOF")
			}
			in = false
			blocks++
		case "DECRBY", "INCRBY", "INCR":
			if !in {
				t.Fatalf("%v logged outside a MULTI block", cmd)
			}
		}
	}
	if int64(blocks) < acked.Load() {
		t.Fatalf("%d MULTI blocks in the AOF, %d transactions acknowledged", blocks, acked.Load())
	}
}

// stripAnnotations drops the group annotation lines (#...) of an AOF file.
func stripAnnotations(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b
		if i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// The AOF holds an EXEC's writes as Redis 7.0 propagates them: one MULTI ...
// EXEC block when it logs more than one command (with SELECT inside when
// the database changes), the command alone when it logs one, nothing when
// it logs nothing; the file passes redis-check-aof, loads back in redshard
// and, where installed, in redis-server with the same data.
func TestMultiExecAOFBlocks(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, aofArgs("always", "--shards", strconv.Itoa(nShards))...)
	k := spreadKeys("aofmx:", nShards, 1)
	a, b, c := k[0], k[1], k[2]
	rc := s.raw(t)
	for _, step := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"SET", a, "1"}, "+QUEUED\r\n"},
		{[]string{"GET", a}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*2\r\n+OK\r\n$1\r\n1\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"GET", a}, "+QUEUED\r\n"},
		{[]string{"DEL", "nosuchkey"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*2\r\n$1\r\n1\r\n:0\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"INCR", a}, "+QUEUED\r\n"},
		{[]string{"SET", b, "x"}, "+QUEUED\r\n"},
		{[]string{"SELECT", "2"}, "+QUEUED\r\n"},
		{[]string{"SET", c, "y"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*4\r\n:2\r\n+OK\r\n+OK\r\n+OK\r\n"},
		{[]string{"SELECT", "0"}, "+OK\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"SET", "foo", "bar"}, "+QUEUED\r\n"},
		{[]string{"FLUSHALL"}, "+QUEUED\r\n"},
		{[]string{"SET", a, "after"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*3\r\n+OK\r\n+OK\r\n+OK\r\n"},
	} {
		rc.do(resp(step.cmd...), step.want)
	}
	s.stop()

	data, err := os.ReadFile(incrFileOf(dir))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := parseCommands(stripAnnotations(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cmd := range cmds {
		got = append(got, strings.Join(cmd, " "))
	}
	want := []string{
		"SELECT 0", "SET " + a + " 1",
		"MULTI", "INCR " + a, "SET " + b + " x", "SELECT 2", "SET " + c + " y", "EXEC",
		"SELECT 0", "MULTI", "SET foo bar", "FLUSHALL", "SET " + a + " after", "EXEC",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("AOF commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if bin, err := exec.LookPath("redis-check-aof"); err == nil {
		out, err := exec.Command(bin, manifestOf(dir)).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("All AOF files and manifest are valid")) {
			t.Errorf("redis-check-aof: %v\n%s", err, out)
		}
	}
	s = startServerIn(t, dir, aofArgs("always", "--shards", strconv.Itoa(nShards))...)
	wantData := dumpDBs(t, s.Addr, 0, 2)
	if len(wantData[0]) != 1 || len(wantData[2]) != 0 {
		t.Fatalf("after reload: %v", wantData)
	}
	s.stop()
	if _, err := exec.LookPath("redis-server"); err == nil {
		r := startRedisServer(t, dir, "--appendonly", "yes")
		if diff := diffDumps(dumpDBs(t, r.Addr, 0, 2), wantData); diff != "" {
			t.Errorf("redis-server loads different data:\n%s", diff)
		}
	}
}

// BGREWRITEAOF inside EXEC is scheduled after the EXEC, as in Redis: the
// rewrite's image and the new log must not both hold the transaction's
// writes (an INCR would count twice after a restart).
func TestMultiExecWithBGREWRITEAOF(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, aofArgs("always", "--shards", strconv.Itoa(nShards))...)
	k := spreadKeys("aofrw:", nShards, 1)
	rc := s.raw(t)
	rc.do(resp("SET", k[0], "10"), "+OK\r\n")
	rc.do(resp("MULTI"), "+OK\r\n")
	rc.do(resp("INCR", k[0]), "+QUEUED\r\n")
	rc.do(resp("INCR", k[1]), "+QUEUED\r\n")
	rc.do(resp("BGREWRITEAOF"), "+QUEUED\r\n")
	rc.do(resp("INCR", k[2]), "+QUEUED\r\n")
	rc.do(resp("INCR", k[0]), "+QUEUED\r\n")
	rc.do(resp("EXEC"), "*5\r\n:11\r\n:1\r\n+Background append only file rewriting scheduled\r\n:1\r\n:12\r\n")
	c := s.client(t, 2)
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:0") {
		if time.Now().After(deadline) {
			t.Fatal("the scheduled rewrite did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_last_bgrewrite_status:ok") {
		t.Fatalf("rewrite failed:\n%s", c.Info(ctx, "persistence").Val())
	}
	rc.do(resp("INCR", k[1]), ":2\r\n")
	s.stop()
	s = startServerIn(t, dir, aofArgs("always", "--shards", strconv.Itoa(nShards))...)
	got := s.client(t, 2).MGet(ctx, k[0], k[1], k[2]).Val()
	if len(got) != 3 || got[0] != "12" || got[1] != "2" || got[2] != "1" {
		t.Fatalf("after the restart %v, want [12 2 1]", got)
	}
}

// EXEC is checked with its queued commands' flags when it runs, as
// Redis's processCommand does: a change of state since they were queued
// aborts the transaction (unit/multi's "exec with write commands and state
// change" and "exec with read commands and stale replica state change").
func TestExecChecksStateOfQueuedCommands(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards-"+shards, func(t *testing.T) {
			s := startServer(t, "--shards", shards)
			c, admin := s.raw(t), s.raw(t)
			c.do(resp("SET", "xx", "1"), "+OK\r\n")

			// A write, then min-replicas-to-write can't be met.
			c.do(resp("MULTI"), "+OK\r\n")
			c.do(resp("INCR", "xx"), "+QUEUED\r\n")
			admin.do(resp("CONFIG", "SET", "min-replicas-to-write", "2"), "+OK\r\n")
			c.do(resp("EXEC"), "-EXECABORT Transaction discarded because of: NOREPLICAS Not enough good replicas to write.\r\n")
			// Reads only: served.
			c.do(resp("MULTI"), "+OK\r\n")
			c.do(resp("GET", "xx"), "+QUEUED\r\n")
			c.do(resp("EXEC"), "*1\r\n$1\r\n1\r\n")
			admin.do(resp("CONFIG", "SET", "min-replicas-to-write", "0"), "+OK\r\n")

			// Reads, then the server turns into a stale replica.
			admin.do(resp("CONFIG", "SET", "replica-serve-stale-data", "no"), "+OK\r\n")
			masterDown := "-EXECABORT Transaction discarded because of: MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"
			for _, cmd := range [][]string{{"GET", "xx"}, {"PING"}} {
				c.do(resp("MULTI"), "+OK\r\n")
				c.do(resp(cmd...), "+QUEUED\r\n")
				admin.do(resp("REPLICAOF", "127.0.0.1", "1"), "+OK\r\n")
				c.do(resp("EXEC"), masterDown)
				admin.do(resp("REPLICAOF", "NO", "ONE"), "+OK\r\n")
			}
			// MULTI is allowed on a stale replica; the queued GET runs once
			// the server is a master again.
			admin.do(resp("REPLICAOF", "127.0.0.1", "1"), "+OK\r\n")
			c.do(resp("MULTI"), "+OK\r\n")
			admin.do(resp("REPLICAOF", "NO", "ONE"), "+OK\r\n")
			c.do(resp("GET", "xx"), "+QUEUED\r\n")
			c.do(resp("EXEC"), "*1\r\n$1\r\n1\r\n")
		})
	}
}
