package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// childOf returns the pid and title (argv[0]) of the server's child process, or 0 when
// there is none (what `pgrep -P` answers, which Redis's suite and
// operators use).
func childOf(t *testing.T, pid int) (int, string) {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			cpid, _ := strconv.Atoi(c)
			cmdline, _ := os.ReadFile("/proc/" + c + "/cmdline")
			return cpid, strings.SplitN(string(cmdline), "\x00", 2)[0]
		}
	}
	return 0, ""
}

func waitChild(t *testing.T, s *server) (int, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pid, name := childOf(t, s.cmd.Process.Pid); pid != 0 {
			return pid, name
		}
		if time.Now().After(deadline) {
			t.Fatal("no child process during the background job")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A BGSAVE's file is written by a child process, as Redis's is: it shows
// as the server's child, writes temp-<its pid>.rdb, takes the bgchild class
// of oom-score-adj-values, and when it is killed the BGSAVE fails as
// Redis's does: rdb_last_bgsave_status:err, the temp file removed, writes
// refused with -MISCONF (save points are set), reads served. A BGSAVE
// after that succeeds and puts dump.rdb in place.
func TestBgsaveChildKilled(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards), "--save", "3600 1", "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.Do(ctx, "DEBUG", "POPULATE", "2000").Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/oom_score_adj")
	if err != nil {
		t.Skip("no oom_score_adj")
	}
	base, _ := strconv.Atoi(strings.TrimSpace(string(cur)))
	c.ConfigSet(ctx, "oom-score-adj-values", "0 10 30")
	c.ConfigSet(ctx, "oom-score-adj", "yes")
	c.ConfigSet(ctx, "rdb-key-save-delay", "100000") // 100 ms a key
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	pid, name := waitChild(t, s)
	if name != "redshard-rdb-bgsave" {
		t.Errorf("child's name %q", name)
	}
	temp := filepath.Join(s.Dir, "temp-"+strconv.Itoa(pid)+".rdb")
	waitFor(t, "the child's temp file", func() bool { _, err := os.Stat(temp); return err == nil })
	wantOOM := strconv.Itoa(min(base+30, 1000))
	waitFor(t, "the child's oom_score_adj", func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/oom_score_adj")
		return strings.TrimSpace(string(b)) == wantOOM
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, c, "persistence", "rdb_bgsave_in_progress", "0")
	if v := infoField(t, c, "persistence", "rdb_last_bgsave_status"); v != "err" {
		t.Fatalf("rdb_last_bgsave_status:%s after the child was killed", v)
	}
	if _, err := os.Stat(temp); err == nil {
		t.Fatalf("%s left behind", temp)
	}
	if err := c.Set(ctx, "x", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF ") {
		t.Fatalf("SET after a failed BGSAVE: %v", err)
	}
	if err := c.Get(ctx, "key:1").Err(); err != nil {
		t.Fatalf("GET after a failed BGSAVE: %v", err)
	}
	if !strings.Contains(s.log.String(), "Background saving terminated by signal 9") {
		t.Fatalf("log lacks Redis's line:\n%s", s.log.String())
	}
	c.ConfigSet(ctx, "rdb-key-save-delay", "0")
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, c, "persistence", "rdb_bgsave_in_progress", "0")
	if v := infoField(t, c, "persistence", "rdb_last_bgsave_status"); v != "ok" {
		t.Fatalf("rdb_last_bgsave_status:%s after a BGSAVE that ran to its end", v)
	}
	checkRDBFile(t, filepath.Join(s.Dir, "dump.rdb"))
	if err := c.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatalf("SET after a good BGSAVE: %v", err)
	}
}

// Killed rewrite children, as aof-multi-part's "multiple rewrite failures"
// test does: each failure keeps the incremental file its rewrite opened,
// aof_rewrites_consecutive_failures counts them, and a rewrite that then
// completes makes every earlier file history; the data survives a restart.
func TestRewriteChildKilled(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards), "--appendonly", "yes", "--enable-debug-command", "yes",
		"--auto-aof-rewrite-percentage", "0")
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.Do(ctx, "DEBUG", "POPULATE", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	c.ConfigSet(ctx, "rdb-key-save-delay", "100000")
	for i := 1; i <= 3; i++ {
		if err := c.Do(ctx, "BGREWRITEAOF").Err(); err != nil {
			t.Fatal(err)
		}
		pid, name := waitChild(t, s)
		if name != "redshard-aof-rewrite" {
			t.Errorf("child's title %q", name)
		}
		temp := filepath.Join(s.Dir, "appendonlydir", "temp-rewriteaof-bg-"+strconv.Itoa(pid)+".aof")
		waitFor(t, "the child's temp file", func() bool { _, err := os.Stat(temp); return err == nil })
		c.Incr(ctx, "counter")
		syscall.Kill(pid, syscall.SIGKILL)
		waitInfo(t, c, "persistence", "aof_rewrite_in_progress", "0")
		if v := infoField(t, c, "persistence", "aof_rewrites_consecutive_failures"); v != strconv.Itoa(i) {
			t.Fatalf("aof_rewrites_consecutive_failures:%s after %d killed children", v, i)
		}
		if v := infoField(t, c, "persistence", "aof_last_bgrewrite_status"); v != "err" {
			t.Fatalf("aof_last_bgrewrite_status:%s", v)
		}
		if _, err := os.Stat(temp); err == nil {
			t.Fatalf("%s left behind", temp)
		}
	}
	if !strings.Contains(s.log.String(), "Background AOF rewrite terminated by signal 9") {
		t.Fatalf("log lacks Redis's line:\n%s", s.log.String())
	}
	manifest := func() string {
		b, _ := os.ReadFile(filepath.Join(s.Dir, "appendonlydir", "appendonly.aof.manifest"))
		return string(b)
	}
	want := "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n" +
		"file appendonly.aof.2.incr.aof seq 2 type i\nfile appendonly.aof.3.incr.aof seq 3 type i\n" +
		"file appendonly.aof.4.incr.aof seq 4 type i\n"
	if m := manifest(); m != want {
		t.Fatalf("manifest after 3 failures:\n%s\nwant:\n%s", m, want)
	}
	c.ConfigSet(ctx, "rdb-key-save-delay", "0")
	c.Incr(ctx, "counter")
	if err := c.Do(ctx, "BGREWRITEAOF").Err(); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, c, "persistence", "aof_rewrite_in_progress", "0")
	if v := infoField(t, c, "persistence", "aof_last_bgrewrite_status"); v != "ok" {
		t.Fatalf("aof_last_bgrewrite_status:%s after a rewrite that completed", v)
	}
	if m := manifest(); m != "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.5.incr.aof seq 5 type i\n" {
		t.Fatalf("manifest after the good rewrite:\n%s", m)
	}
	c2 := restartSameDigest(t, s, c)
	if v := c2.Get(ctx, "counter").Val(); v != "4" {
		t.Fatalf("counter %q, want 4", v)
	}
}

// CONFIG SET appendonly yes during a BGSAVE, as Redis's AOF_WAIT_REWRITE:
// the rewrite is scheduled (aof_rewrite_scheduled:1), writes go to the temp
// incr file and no manifest exists yet; when the BGSAVE ends the rewrite
// runs, the folder is base 1 and incr 1, and a restart finds every write.
func TestAppendonlyYesDuringBgsave(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards), "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.Do(ctx, "DEBUG", "POPULATE", "2000").Err(); err != nil {
		t.Fatal(err)
	}
	c.ConfigSet(ctx, "rdb-key-save-delay", "3000") // 2000 keys: about 1.5 s over 4 shards
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if v := infoField(t, c, "persistence", "aof_rewrite_scheduled"); v != "1" {
		t.Fatalf("aof_rewrite_scheduled:%s during the BGSAVE", v)
	}
	s.waitLog(t, "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.")
	if v := infoField(t, c, "persistence", "aof_rewrite_in_progress"); v != "0" {
		t.Fatalf("aof_rewrite_in_progress:%s during the BGSAVE", v)
	}
	manifest := filepath.Join(s.Dir, "appendonlydir", "appendonly.aof.manifest")
	if _, err := os.Stat(manifest); err == nil {
		t.Fatal("a manifest before the first rewrite")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "appendonlydir", "temp-appendonly.aof.incr")); err != nil {
		t.Fatalf("no temp incr file: %v", err)
	}
	c.Set(ctx, "during", "bgsave", 0)
	c.ConfigSet(ctx, "rdb-key-save-delay", "0") // the image keeps its delay; the rewrite after it does not
	waitScheduledRewrite(t, c, manifest, func(b []byte) bool {
		return string(b) == "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
	})
	c.Set(ctx, "after", "rewrite", 0)
	restartSameDigest(t, s, c)
}

// CONFIG SET appendonly yes inside EXEC, as Redis's startAppendOnly with
// server.in_exec: no rewrite starts inside the transaction; it is scheduled,
// logged so, and the cron starts it; a restart finds every write.
func TestAppendonlyYesInExec(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards), "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.Do(ctx, "DEBUG", "POPULATE", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	rewrites := infoField(t, c, "persistence", "aof_rewrites")
	rc := s.raw(t)
	rc.write(resp("MULTI") + resp("SET", "foo", "bar") + resp("CONFIG", "SET", "appendonly", "yes") + resp("EXEC"))
	rc.expect("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+OK\r\n")
	s.waitLog(t, "AOF was enabled during a transaction. An AOF background was scheduled to start when possible.")
	manifest := filepath.Join(s.Dir, "appendonlydir", "appendonly.aof.manifest")
	waitScheduledRewrite(t, c, manifest, func(b []byte) bool {
		return len(b) > 0 && infoField(t, c, "persistence", "aof_rewrites") != rewrites
	})
	c.Set(ctx, "after", "rewrite", 0)
	c2 := restartSameDigest(t, s, c)
	if v := c2.Get(ctx, "foo").Val(); v != "bar" {
		t.Fatalf("foo = %q after the restart", v)
	}
}

// waitScheduledRewrite waits up to 30 s for a scheduled rewrite to have
// run: done accepts the manifest and no rewrite is in progress; then
// nothing is scheduled any more.
func waitScheduledRewrite(t *testing.T, c *redis.Client, manifest string, done func(manifest []byte) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(manifest)
		if done(b) && infoField(t, c, "persistence", "aof_rewrite_in_progress") == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scheduled rewrite did not run; manifest:\n%s", b)
		}
	}
	if v := infoField(t, c, "persistence", "aof_rewrite_scheduled"); v != "0" {
		t.Fatalf("aof_rewrite_scheduled:%s after the rewrite", v)
	}
}

// restartSameDigest kills s with SIGKILL, starts a server with the AOF on
// in its dir, and checks that DEBUG DIGEST is what c saw before; it
// returns a client of the new server.
func restartSameDigest(t *testing.T, s *server, c *redis.Client) *redis.Client {
	t.Helper()
	ctx := ctxT(t)
	digest := c.Do(ctx, "DEBUG", "DIGEST").Val()
	s.kill9()
	s2 := startServerIn(t, s.Dir, "--shards", strconv.Itoa(nShards), "--appendonly", "yes", "--enable-debug-command", "yes")
	c2 := s2.client(t, 1)
	if d := c2.Do(ctx, "DEBUG", "DIGEST").Val(); d != digest {
		t.Fatalf("digest after restart %v, want %v", d, digest)
	}
	return c2
}
