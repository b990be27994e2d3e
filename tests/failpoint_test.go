package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redshard/redshard/shard"
)

// Failpoints (DEBUG FAILPOINT, --failpoint): each test aims a crash or a
// fault at one step and checks what survives.

// fpArgs are a server's flags with failpoints allowed and the log under
// appendfsync always.
func fpArgs(more ...string) []string {
	return append(aofArgs("always", "--enable-failpoints", "yes", "--shards", "2"), more...)
}

// diedByKill waits for a server armed to crash and checks that it died by
// SIGKILL (the crash action), not by an exit or a panic.
func diedByKill(t *testing.T, s *server) {
	t.Helper()
	err := s.exited(15 * time.Second)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("server ended with %v, want death by SIGKILL", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("server ended with %v, want death by SIGKILL\n%s", err, s.log.String())
	}
}

// counterLoad runs clients pipelining INCR on one counter each and counts,
// per client, the INCRs sent and the ones acknowledged with an integer.
type counterLoad struct {
	sent, acked []int64
	wg          sync.WaitGroup
}

func startCounters(t *testing.T, addr string, clients int) *counterLoad {
	cl := &counterLoad{sent: make([]int64, clients), acked: make([]int64, clients)}
	for i := range clients {
		p, err := dialP(addr)
		if err != nil {
			t.Fatal(err)
		}
		p.timeout = 10 * time.Second
		cl.wg.Add(1)
		go func() {
			defer cl.wg.Done()
			defer p.close()
			key := "counter:" + strconv.Itoa(i)
			batch := make([][]string, 16)
			for j := range batch {
				batch[j] = []string{"INCR", key}
			}
			for {
				if p.send(batch...) != nil {
					return
				}
				cl.sent[i] += int64(len(batch))
				for range batch {
					r, err := p.recv()
					if err != nil {
						return // the server died
					}
					if r.typ != ':' {
						t.Errorf("INCR %s: %s", key, r)
						return
					}
					if r.n != cl.acked[i]+1 {
						t.Errorf("INCR %s = %d after %d acknowledged", key, r.n, cl.acked[i])
						return
					}
					cl.acked[i]++
				}
			}
		}()
	}
	return cl
}

// check verifies, on a restarted server, that every acknowledged INCR is
// there and nothing was invented: acked <= value <= sent.
func (cl *counterLoad) check(t *testing.T, s *server) {
	t.Helper()
	p := mustDialP(t, s.Addr)
	for i := range cl.sent {
		key := "counter:" + strconv.Itoa(i)
		r := p.mustDo(t, "GET", key)
		var v int64
		if !r.isNull() {
			v, _ = strconv.ParseInt(r.s, 10, 64)
		}
		if v < cl.acked[i] || v > cl.sent[i] {
			t.Errorf("%s = %d after restart; acknowledged %d, sent %d", key, v, cl.acked[i], cl.sent[i])
		}
	}
}

// TestFailpointCrashInTheLogKeepsEveryAcknowledgedWrite: a SIGKILL before
// the log's write, between write and fsync, between the fsync and the
// durable position's publication, and after it, each under pipelined INCRs
// with appendfsync always. The restart holds every acknowledged INCR and no
// more than were sent.
func TestFailpointCrashInTheLogKeepsEveryAcknowledgedWrite(t *testing.T) {
	for _, point := range []string{"aof-write", "aof-fsync", "aof-publish", "aof-published"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			s := startServerIn(t, dir, fpArgs()...)
			load := startCounters(t, s.Addr, 4)
			time.Sleep(200 * time.Millisecond)
			ctl := mustDialP(t, s.Addr)
			if r, err := ctl.do("DEBUG", "FAILPOINT", "SET", point, "crash"); err == nil && r.String() != "+OK" {
				t.Fatalf("DEBUG FAILPOINT SET %s crash: %s", point, r)
			}
			diedByKill(t, s)
			load.wg.Wait()
			var acked int64
			for _, a := range load.acked {
				acked += a
			}
			if acked == 0 {
				t.Fatal("no INCR acknowledged before the crash: the test proves nothing")
			}
			t.Logf("acknowledged %v, sent %v", load.acked, load.sent)
			s2 := startServerIn(t, dir, aofArgs("always")...)
			load.check(t, s2)
		})
	}
}

// TestFailpointFsyncErrorFailsHeldRepliesAndRecovers: an fdatasync failing
// with EIO turns the held reply into an error (never +OK), later writes get
// -MISCONF, reads go on; when the disk recovers (CLEAR) the writer's retry
// succeeds and writes are accepted again, and the write that failed is
// kept (the data set had applied it).
func TestFailpointFsyncErrorFailsHeldRepliesAndRecovers(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, fpArgs()...)
	p := mustDialP(t, s.Addr)
	p.mustDo(t, "SET", "before", "1")
	if r := p.mustDo(t, "DEBUG", "FAILPOINT", "SET", "aof-fsync", "error", "EIO"); r.String() != "+OK" {
		t.Fatalf("SET aof-fsync error EIO: %s", r)
	}
	if r := p.mustDo(t, "SET", "during", "1"); r.typ != '-' || !strings.HasPrefix(r.s, "MISCONF ") {
		t.Fatalf("SET while fdatasync fails: %s, want a MISCONF error", r)
	}
	if r := p.mustDo(t, "SET", "later", "1"); r.String() != "-MISCONF Errors writing to the AOF file: Input/output error" {
		t.Fatalf("later SET: %s", r)
	}
	if r := p.mustDo(t, "GET", "before"); r.String() != `"1"` {
		t.Fatalf("GET while failing: %s", r)
	}
	if r := p.mustDo(t, "INFO", "persistence"); !strings.Contains(r.s, "aof_last_write_status:err") {
		t.Fatalf("INFO persistence while failing lacks aof_last_write_status:err")
	}
	list := p.mustDo(t, "DEBUG", "FAILPOINT", "LIST")
	if len(list.arr) == 0 || !strings.HasPrefix(list.arr[0].s, "aof-fsync error EIO hits=") || strings.HasSuffix(list.arr[0].s, "fired=0") {
		t.Fatalf("LIST while failing: %s", list)
	}
	p.mustDo(t, "DEBUG", "FAILPOINT", "CLEAR", "aof-fsync")
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := p.mustDo(t, "SET", "after", "1")
		if r.String() == "+OK" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused 10s after the disk recovered: %s", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill9()
	s2 := startServerIn(t, dir, aofArgs("always")...)
	p2 := mustDialP(t, s2.Addr)
	for _, k := range []string{"before", "during", "after"} {
		if r := p2.mustDo(t, "GET", k); r.String() != `"1"` {
			t.Errorf("GET %s after restart: %s", k, r)
		}
	}
	if r := p2.mustDo(t, "EXISTS", "later"); r.String() != ":0" {
		t.Errorf("the write refused with -MISCONF was kept: EXISTS later = %s", r)
	}
}

// TestFailpointCrashDuringRewriteLosesNothing: a SIGKILL at each step of an
// AOF rewrite (cut, base written, temp manifest, rename, old files removed)
// leaves files that load every acknowledged write.
func TestFailpointCrashDuringRewriteLosesNothing(t *testing.T) {
	for _, point := range []string{"rewrite-cut", "rewrite-base-written", "rewrite-manifest-temp", "rewrite-manifest-renamed", "rewrite-old-removed"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			s := startServerIn(t, dir, fpArgs()...)
			p := mustDialP(t, s.Addr)
			var batch [][]string
			for i := range 300 {
				batch = append(batch, []string{"SET", "k" + strconv.Itoa(i), strconv.Itoa(i)})
			}
			if err := p.send(batch...); err != nil {
				t.Fatal(err)
			}
			for range batch {
				if r, err := p.recv(); err != nil || r.String() != "+OK" {
					t.Fatalf("SET: %v %s", err, r)
				}
			}
			p.mustDo(t, "DEBUG", "FAILPOINT", "SET", point, "crash")
			p.send([]string{"BGREWRITEAOF"})
			diedByKill(t, s)
			s2 := startServerIn(t, dir, aofArgs("always")...)
			p2 := mustDialP(t, s2.Addr)
			if r := p2.mustDo(t, "DBSIZE"); r.String() != ":300" {
				t.Fatalf("DBSIZE after restart: %s", r)
			}
			for _, i := range []int{0, 150, 299} {
				if r := p2.mustDo(t, "GET", "k"+strconv.Itoa(i)); r.s != strconv.Itoa(i) {
					t.Fatalf("GET k%d: %s", i, r)
				}
			}
		})
	}
}

// TestFailpointFullDiskFailsTheRewriteCleanly: ENOSPC at the base's write
// fails the rewrite as a full disk would; the old files stay in use, writes
// go on, and a later rewrite succeeds.
func TestFailpointFullDiskFailsTheRewriteCleanly(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, fpArgs()...)
	p := mustDialP(t, s.Addr)
	p.mustDo(t, "SET", "a", "1")
	p.mustDo(t, "DEBUG", "FAILPOINT", "SET", "rewrite-base-written", "error", "ENOSPC", "COUNT", "1")
	p.mustDo(t, "BGREWRITEAOF")
	fpWaitInfo(t, p, "aof_rewrite_in_progress:0", "aof_last_bgrewrite_status:err")
	if r := p.mustDo(t, "SET", "b", "2"); r.String() != "+OK" {
		t.Fatalf("SET after a failed rewrite: %s", r)
	}
	if !strings.Contains(strings.ToLower(s.log.String()), "no space left on device") {
		t.Errorf("the log does not say why the rewrite failed")
	}
	p.mustDo(t, "BGREWRITEAOF")
	fpWaitInfo(t, p, "aof_rewrite_in_progress:0", "aof_last_bgrewrite_status:ok")
	s.kill9()
	s2 := startServerIn(t, dir, aofArgs("always")...)
	p2 := mustDialP(t, s2.Addr)
	if r := p2.mustDo(t, "MGET", "a", "b"); r.String() != `["1" "2"]` {
		t.Fatalf("MGET after restart: %s", r)
	}
}

// fpWaitInfo waits until INFO persistence shows every one of want.
func fpWaitInfo(t *testing.T, p *pconn, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info := p.mustDo(t, "INFO", "persistence").s
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(info, w+"\r\n")
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO persistence never showed %v:\n%s", want, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFailpointCrashBeforeTheRDBRenameKeepsThePreviousDump: a SIGKILL with
// the new RDB written and synced under its temp name leaves the previous
// dump.rdb intact, and it loads.
func TestFailpointCrashBeforeTheRDBRenameKeepsThePreviousDump(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "--enable-failpoints", "yes")
	p := mustDialP(t, s.Addr)
	p.mustDo(t, "SET", "k", "old")
	if r := p.mustDo(t, "SAVE"); r.String() != "+OK" {
		t.Fatalf("SAVE: %s", r)
	}
	before, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	p.mustDo(t, "SET", "k", "new")
	p.mustDo(t, "DEBUG", "FAILPOINT", "SET", "rdb-temp-written", "crash")
	p.send([]string{"SAVE"})
	diedByKill(t, s)
	after, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil || string(after) != string(before) {
		t.Fatalf("dump.rdb changed by a save that crashed before its rename (err %v)", err)
	}
	s2 := startServerIn(t, dir, "--dbfilename", "dump.rdb")
	if r := mustDialP(t, s2.Addr).mustDo(t, "GET", "k"); r.String() != `"old"` {
		t.Fatalf("GET k after restart: %s", r)
	}
}

// TestFailpointCrashInTheMiddleOfLoading: --failpoint load-record=crash
// SKIP n kills the server after n commands replayed; the files are
// untouched and a start without it loads everything.
func TestFailpointCrashInTheMiddleOfLoading(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, aofArgs("everysec")...)
	p := mustDialP(t, s.Addr)
	var batch [][]string
	for i := range 2000 {
		batch = append(batch, []string{"SET", "k" + strconv.Itoa(i), strconv.Itoa(i)})
	}
	for _, c := range [][][]string{batch[:1000], batch[1000:]} {
		if err := p.send(c...); err != nil {
			t.Fatal(err)
		}
		for range c {
			if r, err := p.recv(); err != nil || r.String() != "+OK" {
				t.Fatalf("SET: %v %s", err, r)
			}
		}
	}
	s.stop()

	args := []string{"--port", strconv.Itoa(freePort(t)), "--bind", "127.0.0.1", "--save", "", "--dir", dir,
		"--appendonly", "yes", "--enable-failpoints", "yes", "--failpoint", "load-record=crash SKIP 500"}
	cmd := exec.Command(serverBin, args...)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("server with load-record=crash ended with %v, want SIGKILL\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("server with load-record=crash SKIP 500 did not die while loading\n%s", out.String())
	}
	if !strings.Contains(out.String(), "Failpoint armed: load-record=crash SKIP 500") {
		t.Errorf("the log does not say which failpoint was armed:\n%s", out.String())
	}

	s2 := startServerIn(t, dir, aofArgs("everysec")...)
	p2 := mustDialP(t, s2.Addr)
	if r := p2.mustDo(t, "DBSIZE"); r.String() != ":2000" {
		t.Fatalf("DBSIZE after a crash mid-load and a restart: %s", r)
	}
}

// TestFailpointCommands: SET, LIST (armed points first, COUNT spending a
// point), CLEAR, PROBABILITY, HELP, and the refusals.
func TestFailpointCommands(t *testing.T) {
	s := startServer(t, "--enable-failpoints", "yes", "--shards", "2")
	p := mustDialP(t, s.Addr)
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"DEBUG", "FAILPOINT", "SET", "exec-locked", "sleep", "0", "COUNT", "2"}, "+OK"},
		{[]string{"DEBUG", "FAILPOINT", "SET", "no-such", "crash"}, "-ERR unknown failpoint 'no-such' (DEBUG FAILPOINT HELP lists them)"},
		{[]string{"DEBUG", "FAILPOINT", "SET", "aof-publish", "error", "EIO"}, "-ERR failpoint 'aof-publish' stands for no system call: use crash, panic or sleep"},
		{[]string{"DEBUG", "FAILPOINT", "SET", "aof-write", "explode"}, "-ERR failpoint: unknown action 'explode' (crash, panic, sleep <ms>, error <errno>)"},
		{[]string{"DEBUG", "FAILPOINT", "SET", "aof-write", "crash", "PROBABILITY", "2"}, "-ERR failpoint: bad PROBABILITY '2' (0 <= p <= 1)"},
		{[]string{"DEBUG", "FAILPOINT", "CLEAR", "no-such"}, "-ERR unknown failpoint 'no-such'"},
	} {
		if r := p.mustDo(t, c.argv...); r.String() != c.want {
			t.Errorf("%s: %s, want %s", fmtArgs(c.argv), r, c.want)
		}
	}
	if r := p.mustDo(t, "DEBUG", "FAILPOINT", "LIST"); len(r.arr) != 16 || r.arr[0].s != "exec-locked sleep 0 COUNT 2 hits=0 fired=0" || r.arr[1].s != "aof-write off" {
		t.Fatalf("LIST: %s", r)
	}
	keys := spreadKeys("fp", 2, 2)
	for range 3 {
		if r := p.mustDo(t, "MSET", keys[0], "1", keys[1], "1", keys[2], "1", keys[3], "1"); r.String() != "+OK" {
			t.Fatalf("MSET: %s", r)
		}
	}
	list := p.mustDo(t, "DEBUG", "FAILPOINT", "LIST")
	var got string
	for _, l := range list.arr {
		if strings.HasPrefix(l.s, "exec-locked ") {
			got = l.s
		}
	}
	if got != "exec-locked off sleep 0 COUNT 2 hits=2 fired=2" {
		t.Fatalf("after COUNT 2 and 3 cross-shard MSETs: %q", got)
	}

	p.mustDo(t, "DEBUG", "FAILPOINT", "SET", "reply-written", "sleep", "0", "PROBABILITY", "0.5")
	for range 400 {
		p.mustDo(t, "PING")
	}
	list = p.mustDo(t, "DEBUG", "FAILPOINT", "LIST")
	var hits, fired int
	if _, err := fmt.Sscanf(list.arr[0].s, "reply-written sleep 0 PROBABILITY 0.5 hits=%d fired=%d", &hits, &fired); err != nil {
		t.Fatalf("LIST[0] = %q: %v", list.arr[0].s, err)
	}
	if hits < 400 || fired < hits/4 || fired > 3*hits/4 {
		t.Fatalf("PROBABILITY 0.5: hits=%d fired=%d", hits, fired)
	}
	if r := p.mustDo(t, "DEBUG", "FAILPOINT", "CLEAR"); r.String() != "+OK" {
		t.Fatalf("CLEAR: %s", r)
	}
	for _, l := range p.mustDo(t, "DEBUG", "FAILPOINT", "LIST").arr {
		if !strings.HasSuffix(l.s, " off") {
			t.Fatalf("after CLEAR: %q", l.s)
		}
	}
	if r := p.mustDo(t, "DEBUG", "FAILPOINT", "HELP"); len(r.arr) < 15 || !strings.Contains(r.String(), "load-record: ") {
		t.Fatalf("HELP: %s", r)
	}
	// DEBUG FAILPOINT needs enable-failpoints only; other DEBUG
	// subcommands still need enable-debug-command.
	if r := p.mustDo(t, "DEBUG", "SLEEP", "0"); !strings.HasPrefix(r.s, "ERR DEBUG command not allowed") {
		t.Fatalf("DEBUG SLEEP with failpoints only: %s", r)
	}
}

// TestFailpointsRefusedWhenDisabled: without enable-failpoints, DEBUG
// FAILPOINT answers an error even with enable-debug-command yes, and
// --failpoint stops the start.
func TestFailpointsRefusedWhenDisabled(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	p := mustDialP(t, s.Addr)
	for _, sub := range [][]string{{"LIST"}, {"SET", "aof-write", "crash"}, {"CLEAR"}} {
		argv := append([]string{"DEBUG", "FAILPOINT"}, sub...)
		if r := p.mustDo(t, argv...); r.String() != "-ERR failpoints are disabled; start the server with enable-failpoints yes" {
			t.Errorf("%s: %s", fmtArgs(argv), r)
		}
	}
	code, _, stderr := runBinary(t, "--port", strconv.Itoa(freePort(t)), "--failpoint", "load-record=crash")
	if code != 1 || !strings.Contains(stderr, "failpoint 'load-record=crash' given but failpoints are disabled: add enable-failpoints yes") {
		t.Fatalf("--failpoint without enable-failpoints: exit %d, stderr %q", code, stderr)
	}
}

// TestFailpointCrashWithShardsTakenKeepsTransactionsWhole: a SIGKILL while
// a cross-shard MSET holds its shards leaves, after restart, every pair of
// keys equal (all of each MSET or none) and every acknowledged one there.
func TestFailpointCrashWithShardsTakenKeepsTransactionsWhole(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, fpArgs()...)
	var on [2][]string // 4 keys on each of the 2 shards
	for _, k := range spreadKeys("pair", 2, 4) {
		sh := shard.ShardOf([]byte(k), 2)
		on[sh] = append(on[sh], k)
	}
	const clients = 4
	acked := make([]int64, clients)
	var wg sync.WaitGroup
	for i := range clients {
		p, err := dialP(s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.close()
			a, b := on[0][i], on[1][i]
			for v := int64(1); ; v += 8 {
				var batch [][]string
				for j := range int64(8) {
					batch = append(batch, []string{"MSET", a, i64toa(v + j), b, i64toa(v + j)})
				}
				if p.send(batch...) != nil {
					return
				}
				for range batch {
					r, err := p.recv()
					if err != nil {
						return
					}
					if r.String() != "+OK" {
						t.Errorf("MSET: %s", r)
						return
					}
					acked[i]++
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	mustDialP(t, s.Addr).send([]string{"DEBUG", "FAILPOINT", "SET", "exec-locked", "crash", "SKIP", "100"})
	diedByKill(t, s)
	wg.Wait()
	s2 := startServerIn(t, dir, aofArgs("always")...)
	p := mustDialP(t, s2.Addr)
	for i := range clients {
		r := p.mustDo(t, "MGET", on[0][i], on[1][i])
		if len(r.arr) != 2 || r.arr[0].s != r.arr[1].s {
			t.Fatalf("half a cross-shard MSET after restart: %s", r)
		}
		if v, _ := strconv.ParseInt(r.arr[0].s, 10, 64); v < acked[i] {
			t.Fatalf("client %d: value %d after restart, %d MSETs acknowledged", i, v, acked[i])
		}
	}
}
