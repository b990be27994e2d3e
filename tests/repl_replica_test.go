package tests

// redshard as the replica of a real redis-server 7: full sync (disk-less
// $EOF payload and the $<len> form), the stream under pipelined load with
// MULTI/EXEC blocks applied atomically across shards, partial resync after
// the link is cut, READONLY, MASTERDOWN, ROLE and INFO replication,
// REPLICAOF NO ONE; and a fake master that sends garbage.

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startMaster starts redis-server as a master for a replica test.
func startMaster(t *testing.T, args ...string) (*redisProc, *redis.Client, int) {
	t.Helper()
	all := append([]string{"--appendonly", "no", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"}, args...)
	m := startRedisServer(t, t.TempDir(), all...)
	_, p, _ := net.SplitHostPort(m.Addr)
	port, _ := strconv.Atoi(p)
	mc := (&server{Addr: m.Addr}).client(t, 2)
	return m, mc, port
}

// loadMixed writes a data set of every type over several databases.
func loadMixed(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	ctx := ctxT(t)
	for db := 0; db < 3; db += 2 {
		p := c.Pipeline()
		p.Do(ctx, "SELECT", db)
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("db%d:%d", db, i)
			switch i % 7 {
			case 0:
				p.Set(ctx, "s:"+k, strings.Repeat("v", i%50), 0)
			case 1:
				p.RPush(ctx, "l:"+k, "a", i, "c", strings.Repeat("x", i%300))
			case 2:
				p.HSet(ctx, "h:"+k, "f1", i, "f2", "two", "f3", strings.Repeat("y", i%100))
			case 3:
				p.SAdd(ctx, "set:"+k, i, i+1, "m", "n")
			case 4:
				p.ZAdd(ctx, "z:"+k, redis.Z{Score: float64(i), Member: "a"}, redis.Z{Score: 1.5, Member: "b"})
			case 5:
				p.XAdd(ctx, &redis.XAddArgs{Stream: "x:" + k, Values: []any{"f", i}})
			case 6:
				p.Set(ctx, "e:"+k, i, time.Hour) // an expiry far away
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("loading the data set: %v", err)
		}
	}
	if err := c.Do(ctx, "SELECT", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// writeLoad runs pipelined writes on the master until stop is closed: mixed
// commands, and MULTI/EXEC blocks that move a counter pair (tx:a, tx:b)
// together, so that a replica that applied half a block shows a != b.
func writeLoad(t *testing.T, c *redis.Client, stop chan struct{}, workers int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ctx := context.Background()
			r := rand.New(rand.NewSource(int64(w)))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := c.Pipeline()
				for j := 0; j < 50; j++ {
					k := strconv.Itoa(r.Intn(2000))
					switch r.Intn(8) {
					case 0:
						p.Set(ctx, "ld:s:"+k, r.Int(), 0)
					case 1:
						p.Incr(ctx, "ld:n:"+k)
					case 2:
						p.LPush(ctx, "ld:l:"+k, j)
					case 3:
						p.HIncrBy(ctx, "ld:h:"+k, "f", 1)
					case 4:
						p.SAdd(ctx, "ld:set:"+k, r.Intn(50))
					case 5:
						p.ZIncrBy(ctx, "ld:z:"+k, 1, "m"+strconv.Itoa(r.Intn(10)))
					case 6:
						p.MSet(ctx, "ld:m1:"+k, j, "ld:m2:"+k, j)
					case 7:
						p.Del(ctx, "ld:s:"+k, "ld:l:"+k)
					}
				}
				if _, err := p.Exec(ctx); err != nil {
					t.Errorf("load pipeline: %v", err)
					return
				}
				_, err := c.TxPipelined(ctx, func(tx redis.Pipeliner) error {
					tx.Incr(ctx, "tx:a")
					tx.LPush(ctx, "tx:list", i)
					tx.Incr(ctx, "tx:b")
					return nil
				})
				if err != nil {
					t.Errorf("MULTI/EXEC: %v", err)
					return
				}
			}
		}(w)
	}
	return &wg
}

// waitCaughtUp waits until the replica's link is up and its offset is the
// master's, and returns the offset.
func waitCaughtUp(t *testing.T, m, r *redis.Client, timeout time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		mo := infoField(t, m, "replication", "master_repl_offset")
		ro := infoField(t, r, "replication", "slave_repl_offset")
		link := infoField(t, r, "replication", "master_link_status")
		if link == "up" && mo == ro {
			n, _ := strconv.ParseInt(mo, 10, 64)
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica not caught up after %v: link %s, master offset %s, replica offset %s", timeout, link, mo, ro)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func digestOf(t *testing.T, c *redis.Client) string {
	t.Helper()
	d, err := c.Do(ctxT(t), "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatalf("DEBUG DIGEST: %v", err)
	}
	return d
}

func statInt(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	n, _ := strconv.ParseInt(infoField(t, c, section, field), 10, 64)
	return n
}

// TestReplicaOfRedisServer: full sync, the stream under load, partial
// resync, READONLY, ROLE, INFO, REPLICAOF NO ONE.
func TestReplicaOfRedisServer(t *testing.T) {
	needRedisServer(t)
	_, mc, mport := startMaster(t, "--repl-diskless-sync", "yes", "--repl-backlog-size", "64mb")
	ctx := ctxT(t)
	loadMixed(t, mc, 3000)
	if err := mc.Do(ctx, "DEBUG", "POPULATE", "20000", "pop", "64").Err(); err != nil {
		t.Fatal(err)
	}

	// The load runs while the replica syncs and streams.
	stop := make(chan struct{})
	wg := writeLoad(t, mc, stop, 4)
	time.Sleep(100 * time.Millisecond)

	s := startServer(t, "--shards", "4", "--replicaof", "127.0.0.1", strconv.Itoa(mport), "--enable-debug-command", "yes")
	rc := s.client(t, 2)

	// While the stream is applied, no read sees half a MULTI/EXEC block:
	// tx:a and tx:b (on different shards) move together.
	var torn, checks atomic.Int64
	readStop := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			select {
			case <-readStop:
				return
			default:
			}
			v, err := rc.MGet(context.Background(), "tx:a", "tx:b").Result()
			if err != nil {
				continue // LOADING while the full sync loads
			}
			checks.Add(1)
			if fmt.Sprint(v[0]) != fmt.Sprint(v[1]) {
				torn.Add(1)
			}
		}
	}()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	stopped := time.Now()
	moff := statInt(t, mc, "replication", "master_repl_offset")
	roff := statInt(t, rc, "replication", "slave_repl_offset")
	off := waitCaughtUp(t, mc, rc, 60*time.Second)
	t.Logf("load stopped with the replica %d bytes behind; caught up in %v", moff-roff, time.Since(stopped))
	close(readStop)
	rwg.Wait()
	if torn.Load() != 0 {
		t.Errorf("%d of %d MGET tx:a tx:b on the replica saw half a MULTI/EXEC block", torn.Load(), checks.Load())
	}
	if dm, dr := digestOf(t, mc), digestOf(t, rc); dm != dr {
		t.Fatalf("after the sync and load: master digest %s, replica %s", dm, dr)
	}
	mkeys, _ := mc.DBSize(ctx).Result()
	t.Logf("in sync at offset %d with %d keys in db 0; %d torn-read checks", off, mkeys, checks.Load())

	// INFO and ROLE on the replica.
	info, _ := rc.Info(ctx, "replication").Result()
	for _, want := range []string{"role:slave", "master_host:127.0.0.1", "master_port:" + strconv.Itoa(mport),
		"master_link_status:up", "master_sync_in_progress:0", "slave_read_only:1", "replica_announced:1", "connected_slaves:0"} {
		if !strings.Contains(info, want+"\r\n") {
			t.Errorf("INFO replication lacks %q:\n%s", want, info)
		}
	}
	order := []string{"role:", "master_host:", "master_port:", "master_link_status:", "master_last_io_seconds_ago:",
		"master_sync_in_progress:", "slave_read_repl_offset:", "slave_repl_offset:", "slave_priority:", "slave_read_only:",
		"replica_announced:", "connected_slaves:", "master_failover_state:", "master_replid:"}
	last := -1
	for _, f := range order {
		i := strings.Index(info, "\r\n"+f)
		if i < last {
			t.Errorf("INFO replication: %s out of Redis's order:\n%s", f, info)
		}
		last = i
	}
	role, err := rc.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) != 5 || role[0] != "slave" || role[1] != "127.0.0.1" || role[2] != int64(mport) || role[3] != "connected" || role[4] != off {
		t.Errorf("ROLE on the replica = %v (%v), want [slave 127.0.0.1 %d connected %d]", role, err, mport, off)
	}
	mid := infoField(t, mc, "replication", "master_replid")
	if got := infoField(t, rc, "replication", "master_replid"); got != mid {
		t.Errorf("replica's master_replid %s, master's %s", got, mid)
	}
	hello, err := rc.Do(ctx, "HELLO", "2").Slice()
	if err != nil || fmt.Sprint(hello[11]) != "replica" {
		t.Errorf("HELLO on the replica: %v %v, want role replica", hello, err)
	}

	// READONLY for ordinary clients; reads work.
	if err := rc.Set(ctx, "k", "v", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
		t.Errorf("SET on the replica: %v, want READONLY", err)
	}
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(mport)).Err(); err != nil {
		t.Errorf("REPLICAOF the same master: %v", err)
	} else if v, _ := rc.Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(mport)).Text(); v != "OK Already connected to specified master" {
		t.Errorf("REPLICAOF the same master = %q", v)
	}
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", "70000").Err(); err == nil || err.Error() != "ERR Invalid master port" {
		t.Errorf("REPLICAOF bad port: %v", err)
	}

	// Cut the link, write more (MULTI/EXEC included): the replica comes back
	// by a partial resync.
	partial := statInt(t, mc, "stats", "sync_partial_ok")
	full := statInt(t, mc, "stats", "sync_full")
	if err := mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	stop = make(chan struct{})
	wg = writeLoad(t, mc, stop, 2)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	off2 := waitCaughtUp(t, mc, rc, 30*time.Second)
	if got := statInt(t, mc, "stats", "sync_partial_ok"); got <= partial {
		t.Errorf("sync_partial_ok %d -> %d: no partial resync", partial, got)
	}
	if got := statInt(t, mc, "stats", "sync_full"); got != full {
		t.Errorf("sync_full %d -> %d: the replica synced in full again", full, got)
	}
	if dm, dr := digestOf(t, mc), digestOf(t, rc); dm != dr {
		t.Fatalf("after the partial resync: master digest %s, replica %s", dm, dr)
	}
	t.Logf("partial resync: offset %d -> %d, sync_partial_ok %d -> %d", off, off2, partial, statInt(t, mc, "stats", "sync_partial_ok"))

	// WAIT on the master is answered by the replica's ACK (GETACK).
	if n, err := mc.Do(ctx, "WAIT", "1", "5000").Int(); err != nil || n != 1 {
		t.Errorf("WAIT 1 on the master = %d %v", n, err)
	}

	// Promotion keeps the data and accepts writes. (WAIT's GETACK moved
	// the offset.)
	off2, _ = strconv.ParseInt(infoField(t, rc, "replication", "master_repl_offset"), 10, 64)
	dr := digestOf(t, rc)
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if got := digestOf(t, rc); got != dr {
		t.Errorf("REPLICAOF NO ONE changed the data: %s -> %s", dr, got)
	}
	if err := rc.Set(ctx, "after", "promotion", 0).Err(); err != nil {
		t.Errorf("SET after REPLICAOF NO ONE: %v", err)
	}
	if v := infoField(t, rc, "replication", "role"); v != "master" {
		t.Errorf("role after promotion: %s", v)
	}
	if v := infoField(t, rc, "replication", "master_replid2"); v != mid {
		t.Errorf("master_replid2 after promotion %s, want the old master's %s", v, mid)
	}
	if v := infoField(t, rc, "replication", "second_repl_offset"); v != strconv.FormatInt(off2+1, 10) {
		t.Errorf("second_repl_offset after promotion %s, want %d", v, off2+1)
	}
	role, err = rc.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) != 3 || role[0] != "master" {
		t.Errorf("ROLE after promotion = %v %v", role, err)
	}
}

// TestReplicaDiskSyncAndStale: the $<len> payload form, and
// replica-serve-stale-data no while the master is gone.
func TestReplicaDiskSyncAndStale(t *testing.T) {
	needRedisServer(t)
	m, mc, mport := startMaster(t, "--repl-diskless-sync", "no")
	ctx := ctxT(t)
	loadMixed(t, mc, 2000)
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes", "--replica-serve-stale-data", "no")
	rc := s.client(t, 2)
	if v := infoField(t, rc, "replication", "role"); v != "master" {
		t.Fatalf("role before REPLICAOF: %s", v)
	}
	if err := rc.Do(ctx, "SLAVEOF", "127.0.0.1", strconv.Itoa(mport)).Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, mc, rc, 30*time.Second)
	if dm, dr := digestOf(t, mc), digestOf(t, rc); dm != dr {
		t.Fatalf("master digest %s, replica %s", dm, dr)
	}
	if !strings.Contains(s.log.String(), "receiving ") || !strings.Contains(s.log.String(), "bytes from master to disk") {
		t.Errorf("no $<len> transfer in the log:\n%s", logTail(s.log.String(), 20))
	}
	if err := rc.Do(ctx, "CONFIG", "GET", "replicaof").Err(); err != nil {
		t.Error(err)
	}
	if v, _ := rc.ConfigGet(ctx, "replicaof").Result(); v["replicaof"] != "127.0.0.1 "+strconv.Itoa(mport) {
		t.Errorf("CONFIG GET replicaof = %v", v)
	}
	m.stop(t)
	deadline := time.Now().Add(10 * time.Second)
	for infoField(t, rc, "replication", "master_link_status") != "down" {
		if time.Now().After(deadline) {
			t.Fatal("the link stays up after the master stopped")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rc.Get(ctx, "s:db0:0").Err(); err == nil || err.Error() != "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'." {
		t.Errorf("GET with the link down: %v, want MASTERDOWN", err)
	}
	info, err := rc.Info(ctx, "replication").Result()
	if err != nil || !strings.Contains(info, "master_link_down_since_seconds:") {
		t.Errorf("INFO with the link down: %v\n%s", err, info)
	}
	role, err := rc.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) != 5 || role[4] != int64(-1) {
		t.Errorf("ROLE with the link down = %v %v", role, err)
	}
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Get(ctx, "s:db0:0").Err(); err != nil {
		t.Errorf("GET after promotion: %v", err)
	}
}

// TestReplicaFakeMasterGarbage: a master that answers the handshake and
// then sends arbitrary bytes (as replies, as the payload, as the stream)
// makes the replica drop the link and try again; it never crashes and
// keeps serving.
func TestReplicaFakeMasterGarbage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	var conns atomic.Int64
	r := rand.New(rand.NewSource(1))
	var mu sync.Mutex
	garbage := func() []byte {
		mu.Lock()
		defer mu.Unlock()
		shapes := []string{
			"+FULLRESYNC 0123456789012345678901234567890123456789 0\r\n$EOF:0123456789012345678901234567890123456789\r\n",
			"+FULLRESYNC 0123456789012345678901234567890123456789 0\r\n$10\r\nREDIS0009\xff",
			"+CONTINUE\r\n",
			"+CONTINUE 9876543210987654321098765432109876543210\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$5\r\nMULTI",
			"+CONTINUE\r\n*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n",
			"+CONTINUE\r\n*-5\r\n",
			"+CONTINUE\r\n*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n*1\r\n$4\r\nPING\r\n",
			"-ERR no\r\n",
			"+FULLRESYNC x y\r\n",
			"",
		}
		b := []byte(shapes[r.Intn(len(shapes))])
		n := r.Intn(3000)
		for i := 0; i < n; i++ {
			b = append(b, "*$\r\n+-:0123456789abcdefSETMULTIEXEC \x00\xff"[r.Intn(38)])
		}
		return b
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				// PING, REPLCONF, REPLCONF, PSYNC: answer the first three.
				for i := 0; i < 3; i++ {
					if _, err := readCommand(br); err != nil {
						return
					}
					_, _ = c.Write([]byte("+OK\r\n"))
				}
				if _, err := readCommand(br); err != nil {
					return
				}
				_, _ = c.Write(garbage())
				_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				for {
					if _, err := br.ReadByte(); err != nil {
						return
					}
				}
			}(c)
		}
	}()
	s := startServer(t, "--shards", "4", "--replicaof", "127.0.0.1", strconv.Itoa(port), "--repl-timeout", "1")
	rc := s.client(t, 2)
	deadline := time.Now().Add(20 * time.Second)
	for conns.Load() < 8 && time.Now().Before(deadline) {
		if err := rc.Ping(ctxT(t)).Err(); err != nil {
			t.Fatalf("PING while the master sends garbage: %v\n%s", err, logTail(s.log.String(), 30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if conns.Load() < 8 {
		t.Errorf("only %d connections to the fake master in 20s", conns.Load())
	}
	if err := rc.Do(ctxT(t), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctxT(t), "alive", "1", 0).Err(); err != nil {
		t.Errorf("SET after the garbage: %v", err)
	}
	t.Logf("%d links to the fake master", conns.Load())
}

// readCommand reads one RESP array command.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	var args []string
	for i := 0; i < n; i++ {
		if _, err := br.ReadString('\n'); err != nil {
			return nil, err
		}
		a, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args = append(args, strings.TrimRight(a, "\r\n"))
	}
	return args, nil
}

// TestReplicaAOFAndAuth: a replica of a master with requirepass (masterauth)
// under appendonly yes / appendfsync always logs what it applies: after a
// full sync (which rewrites its AOF) and a stream under load, the replica
// restarted without replicaof loads the master's data set from its AOF.
func TestReplicaAOFAndAuth(t *testing.T) {
	needRedisServer(t)
	m := startRedisServer(t, t.TempDir(), "--appendonly", "no", "--enable-debug-command", "yes",
		"--repl-diskless-sync-delay", "0")
	_, p, _ := net.SplitHostPort(m.Addr)
	if err := (&server{Addr: m.Addr}).client(t, 2).ConfigSet(ctxT(t), "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	mc := (&server{Addr: m.Addr}).clientWith(t, func(o *redis.Options) { o.Password = "s3cret" })
	loadMixed(t, mc, 1500)
	s := startServer(t, aofArgs("always", "--shards", "4", "--enable-debug-command", "yes",
		"--masterauth", "s3cret", "--replicaof", "127.0.0.1", p)...)
	rc := s.client(t, 2)
	stop := make(chan struct{})
	wg := writeLoad(t, mc, stop, 2)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	waitCaughtUp(t, mc, rc, 60*time.Second)
	want := digestOf(t, mc)
	if got := digestOf(t, rc); got != want {
		t.Fatalf("master digest %s, replica %s", want, got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for infoField(t, rc, "persistence", "aof_rewrite_in_progress") != "0" || infoField(t, rc, "persistence", "aof_rewrite_scheduled") == "1" {
		if time.Now().After(deadline) {
			t.Fatal("the AOF rewrite after the full sync does not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.log.String(), "Background AOF rewrite finished successfully") {
		t.Errorf("no AOF rewrite after the full sync:\n%s", logTail(s.log.String(), 20))
	}
	s.stop()
	s2 := startServerIn(t, s.Dir, aofArgs("always", "--shards", "4", "--enable-debug-command", "yes")...)
	if got := digestOf(t, s2.client(t, 2)); got != want {
		t.Errorf("the replica's AOF loads digest %s, the master had %s", got, want)
	}
}

// TestReplicaLogsErrorsToMaster: a command of the master's stream that
// fails on the replica (a command it does not know, sent with DEBUG
// REPLICATE; a write its own data makes fail, on a writable replica) is
// logged as Redis's "== CRITICAL ==" line and counted in
// unexpected_error_replies; with propagation-error-behavior panic a
// read-only replica stops with a crash report instead.
func TestReplicaLogsErrorsToMaster(t *testing.T) {
	ctx := context.Background()
	m := startServer(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	r := startServer(t, "--enable-debug-command", "yes", "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	mc, rc := m.client(t, 2), r.client(t, 2)
	mc.Set(ctx, "foo", "bar", 0)
	waitInSync(t, mc, rc)

	if err := mc.Do(ctx, "DEBUG", "REPLICATE", "fake-command-1").Err(); err != nil {
		t.Fatal(err)
	}
	mc.Set(ctx, "foo", "bar2", 0)
	if n := mc.Do(ctx, "WAIT", 1, 2000).Val(); n != int64(1) {
		t.Fatalf("WAIT = %v", n)
	}
	if v := mc.Exists(ctx, "fake-command-1").Val(); v != 0 || mc.Get(ctx, "foo").Val() != "bar2" {
		t.Errorf("the master ran or kept something of DEBUG REPLICATE")
	}
	r.waitLog(t, "== CRITICAL == This replica is sending an error to its master: 'ERR unknown command 'fake-command-1', with args beginning with: ' after processing the command '<unknown>'")
	if got := infoField(t, rc, "stats", "unexpected_error_replies"); got != "1" {
		t.Errorf("unexpected_error_replies = %q, want 1", got)
	}
	if rc.Get(ctx, "foo").Val() != "bar2" {
		t.Errorf("the stream did not go on after the error")
	}

	if err := rc.ConfigSet(ctx, "replica-read-only", "no").Err(); err != nil {
		t.Fatal(err)
	}
	rc.Set(ctx, "number2", "foo", 0)
	mc.IncrBy(ctx, "number2", 1)
	mc.Do(ctx, "WAIT", 1, 2000)
	if v := rc.Get(ctx, "number2").Val(); v != "foo" {
		t.Errorf("replica's number2 = %q, want its own foo", v)
	}
	r.waitLog(t, "This replica is sending an error to its master: 'ERR value is not an integer or out of range' after processing the command 'incrby'")
	if got := infoField(t, rc, "stats", "unexpected_error_replies"); got != "2" {
		t.Errorf("unexpected_error_replies = %q, want 2", got)
	}

	if err := rc.ConfigSet(ctx, "replica-read-only", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.ConfigSet(ctx, "propagation-error-behavior", "panic").Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.Do(ctx, "DEBUG", "REPLICATE", "fake-command-2").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.exited(10 * time.Second); err == nil {
		t.Errorf("the replica exited 0 after its panic")
	}
	r.waitLog(t, "This replica panicked sending an error to its master after processing the command '<unknown>'")
}

// A replica whose master closed the link (CLIENT KILL TYPE replica) shows
// the link down in INFO and ROLE at once, even while its link's goroutine
// has not read the close yet (the repl-feed failpoint holds it in a read):
// Redis reads the master link before a request that came after, so a
// client that saw the master drop the link never reads "up" from the
// replica afterwards (Redis's suite waits for "up" right after such a kill
// and then expects the new data set).
func TestReplicaShowsClosedLinkDown(t *testing.T) {
	ctx := context.Background()
	m := startServer(t, "--repl-diskless-sync-delay", "0", "--save", "")
	r := startServer(t, "--enable-debug-command", "yes", "--enable-failpoints", "yes", "--save", "",
		"--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	mc, rc := m.client(t, 2), r.client(t, 2)
	waitFor(t, "the link up", func() bool { return infoField(t, rc, "replication", "master_link_status") == "up" })
	if err := mc.ConfigSet(ctx, "repl-diskless-sync-delay", "5").Err(); err != nil { // no quick new sync
		t.Fatal(err)
	}
	if err := rc.Do(ctx, "DEBUG", "FAILPOINT", "SET", "repl-feed", "sleep", "1000", "COUNT", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the replica's link is in the failpoint now
	if err := mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the FIN reaches the replica's socket
	if got := infoField(t, rc, "replication", "master_link_status"); got != "down" {
		t.Errorf("master_link_status %s after the master closed the link", got)
	}
	if role := rc.Do(ctx, "ROLE").Val().([]any); role[3] != "connect" || role[4] != int64(-1) {
		t.Errorf("ROLE %v after the master closed the link", role)
	}
}
