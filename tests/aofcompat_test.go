package tests

// The AOF as Redis 7.0 behaves at its edges: timestamp annotations and
// point-in-time recovery with redis-check-aof, BGREWRITEAOF while the AOF
// is off, a rewrite stopped by CONFIG SET appendonly no, and the options
// that read what redshard does.

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// firstLine returns the first line of a file, without its line end.
func firstLine(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return strings.TrimRight(line, "\r\n")
}

// manifestFiles returns the files a manifest lists, by type ('b', 'i').
func manifestFiles(t *testing.T, dataDir string) map[byte][]string {
	t.Helper()
	data, err := os.ReadFile(manifestOf(dataDir))
	if err != nil {
		t.Fatalf("read manifest: %v", err)
	}
	out := map[byte][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) == 6 {
			out[f[5][0]] = append(out[f[5][0]], f[1])
		}
	}
	return out
}

func TestAOFTimestampAnnotations(t *testing.T) {
	s := startServer(t, aofArgs("always", "--aof-use-rdb-preamble", "no")...) // a RESP base carries them
	p := mustDialP(t, s.Addr)
	defer p.close()
	p.mustDo(t, "CONFIG", "SET", "aof-timestamp-enabled", "yes")
	before := time.Now().Unix()
	p.mustDo(t, "SET", "foo1", "bar1")
	incr := filepath.Join(aofDir(s.Dir), manifestFiles(t, s.Dir)['i'][0])
	line := firstLine(t, incr)
	if !strings.HasPrefix(line, "#TS:") {
		t.Fatalf("first line of %s = %q, want a #TS: annotation", incr, line)
	}
	if ts, err := strconv.ParseInt(line[4:], 10, 64); err != nil || ts < before || ts > time.Now().Unix() {
		t.Errorf("timestamp %q is not the time of the write (%d..%d)", line, before, time.Now().Unix())
	}
	// A later second gets its own annotation, before its group.
	time.Sleep(1100 * time.Millisecond)
	p.mustDo(t, "SET", "foo2", "bar2")
	data, _ := os.ReadFile(incr)
	if n := bytes.Count(data, []byte("#TS:")); n != 2 {
		t.Errorf("%d timestamp annotations after writes in two seconds, want 2:\n%q", n, data)
	}
	// A rewrite's base starts with one too.
	p.mustDo(t, "BGREWRITEAOF")
	waitRewrite(t, p)
	base := filepath.Join(aofDir(s.Dir), manifestFiles(t, s.Dir)['b'][0])
	if line := firstLine(t, base); !strings.HasPrefix(line, "#TS:") {
		t.Errorf("first line of the base %s = %q, want a #TS: annotation", base, line)
	}
	// The new incr file starts with its own annotation.
	p.mustDo(t, "SET", "foo2b", "bar2b")
	incr2 := filepath.Join(aofDir(s.Dir), manifestFiles(t, s.Dir)['i'][0])
	t1, err := strconv.ParseInt(strings.TrimPrefix(firstLine(t, incr2), "#TS:"), 10, 64)
	if err != nil {
		t.Fatalf("new incr file %s does not start with a timestamp: %q", incr2, firstLine(t, incr2))
	}
	time.Sleep(1100 * time.Millisecond) // foo3 is a second later
	p.mustDo(t, "SET", "foo3", "bar3")
	s.stop()

	// Point-in-time recovery: redis-check-aof --truncate-to-timestamp
	// cuts our incr file between groups, and redshard loads what is left.
	bin, err := exec.LookPath("redis-check-aof")
	if err != nil {
		t.Skip("redis-check-aof is not installed (package redis-tools)")
	}
	out, err := exec.Command(bin, manifestOf(s.Dir)).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("All AOF files and manifest are valid")) {
		t.Fatalf("redis-check-aof: %v\n%s", err, out)
	}
	// Cut at t1: the base and foo2b stay, foo3 (a second later) goes;
	// redis-check-aof cuts the last file at its first annotation past t1.
	out, err = exec.Command(bin, "--truncate-to-timestamp", strconv.FormatInt(t1, 10), manifestOf(s.Dir)).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("Successfully truncated AOF")) {
		t.Fatalf("redis-check-aof --truncate-to-timestamp: %v\n%s", err, out)
	}
	s2 := startServerIn(t, s.Dir, aofArgs("always")...)
	p2 := mustDialP(t, s2.Addr)
	defer p2.close()
	for k, want := range map[string]string{"foo1": "bar1", "foo2": "bar2", "foo2b": "bar2b"} {
		if r := p2.mustDo(t, "GET", k); r.s != want {
			t.Errorf("GET %s after the truncation = %q, want %q", k, r.s, want)
		}
	}
	if r := p2.mustDo(t, "EXISTS", "foo3"); r.n != 0 {
		t.Errorf("foo3, written after the timestamp, survived the truncation")
	}
}

func TestAOFRewriteStoppedByAppendonlyNo(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards="+shards, func(t *testing.T) { testAOFRewriteStopped(t, shards) })
	}
}

func testAOFRewriteStopped(t *testing.T, shards string) {
	s := startServer(t, aofArgs("everysec", "--enable-debug-command", "yes", "--shards", shards)...)
	p := mustDialP(t, s.Addr)
	defer p.close()
	p.mustDo(t, "SET", "k", "v")
	// rdb-key-save-delay slows the rewrite down as it slows Redis's child.
	p.mustDo(t, "CONFIG", "SET", "rdb-key-save-delay", "10000000")
	p.mustDo(t, "BGREWRITEAOF")
	if r := p.mustDo(t, "BGREWRITEAOF"); !strings.Contains(r.s, "already in progress") {
		t.Errorf("second BGREWRITEAOF = %q, want the already-in-progress error", r.s)
	}
	if r := p.mustDo(t, "INFO", "persistence"); !strings.Contains(r.s, "aof_rewrite_in_progress:1") {
		t.Fatalf("no rewrite in progress with rdb-key-save-delay set:\n%s", r.s)
	}
	p.mustDo(t, "CONFIG", "SET", "appendonly", "no")
	if r := p.mustDo(t, "INFO", "persistence"); !strings.Contains(r.s, "aof_rewrite_in_progress:0") {
		t.Errorf("the rewrite goes on after appendonly no:\n%s", r.s)
	}
	waitFor(t, "the log line of the stopped rewrite", func() bool {
		return strings.Contains(s.log.String(), "Killing running AOF rewrite child")
	})
	matches, _ := filepath.Glob(filepath.Join(aofDir(s.Dir), "temp-rewriteaof-*"))
	if len(matches) > 0 {
		t.Errorf("temp files left after the rewrite was stopped: %v", matches)
	}
	// With the delay off, a rewrite while the AOF is off completes and
	// leaves the folder with a base alone, which DEBUG LOADAOF loads.
	p.mustDo(t, "CONFIG", "SET", "rdb-key-save-delay", "0")
	p.mustDo(t, "SET", "k2", "v2")
	p.mustDo(t, "BGREWRITEAOF")
	waitRewrite(t, p)
	if files := manifestFiles(t, s.Dir); len(files['b']) != 1 || len(files['i']) != 0 {
		t.Errorf("manifest after a rewrite with the AOF off lists %v, want one base and no incr", files)
	}
	p.mustDo(t, "DEL", "k")
	p.mustDo(t, "DEBUG", "LOADAOF")
	if r := p.mustDo(t, "GET", "k"); r.s != "v" {
		t.Errorf("GET k after DEBUG LOADAOF = %q, want v", r.s)
	}
	if r := p.mustDo(t, "GET", "k2"); r.s != "v2" {
		t.Errorf("GET k2 after DEBUG LOADAOF = %q, want v2", r.s)
	}
}

// TestAOFRDBPreambleBothWays: with aof-use-rdb-preamble yes a rewrite
// writes an RDB base (appendonly.aof.N.base.rdb) that redshard reloads
// (DEBUG LOADAOF, a restart) and redis-server 7.0 loads with the same DEBUG
// DIGEST; with no, a RESP base, loaded the same.
func TestAOFRDBPreambleBothWays(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--aof-use-rdb-preamble", "yes", "--enable-debug-command", "yes", "--shards", "4"}
	s := startServerIn(t, dir, args...)
	p := mustDialP(t, s.Addr)
	p.mustDo(t, "DEBUG", "POPULATE", "3000")
	p.mustDo(t, "RPUSH", "l", "a", "b", "1", "2")
	p.mustDo(t, "ZADD", "z", "1", "a", "2.5", "b", "inf", "c")
	p.mustDo(t, "HSET", "h", "f", "v", "g", "1")
	p.mustDo(t, "SADD", "s", "1", "2", "x")
	p.mustDo(t, "SET", "ttl", "v", "PX", "1000000")
	p.mustDo(t, "XADD", "st", "1-1", "f", "v")
	p.mustDo(t, "FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)")
	if r := p.mustDo(t, "CONFIG", "GET", "aof-use-rdb-preamble"); r.String() != `["aof-use-rdb-preamble" "yes"]` {
		t.Errorf("CONFIG GET aof-use-rdb-preamble = %s", r)
	}
	p.mustDo(t, "BGREWRITEAOF")
	waitRewrite(t, p)
	p.mustDo(t, "SET", "after", "rewrite")
	want := p.mustDo(t, "DEBUG", "DIGEST").s
	if b := manifestFiles(t, dir)['b']; len(b) != 1 || !strings.HasSuffix(b[0], ".base.rdb") {
		t.Fatalf("base files %v, want one .base.rdb", b)
	}
	digest := func(addr, what string) {
		t.Helper()
		q := mustDialP(t, addr)
		defer q.close()
		if got := q.mustDo(t, "DEBUG", "DIGEST").s; got != want {
			t.Errorf("%s: digest %s, want %s", what, got, want)
		}
		if r := q.mustDo(t, "FCALL", "f1", "0"); r.n != 1 {
			t.Errorf("%s: FCALL f1 = %v", what, r)
		}
	}
	p.mustDo(t, "DEBUG", "LOADAOF")
	digest(s.Addr, "after DEBUG LOADAOF")
	p.close()
	s.stop()
	s = startServerIn(t, dir, args...)
	digest(s.Addr, "redshard restarted")
	if _, err := exec.LookPath("redis-server"); err == nil {
		r := startRedisServer(t, folderCopy(t, dir), "--appendonly", "yes", "--enable-debug-command", "yes")
		digest(r.Addr, "redis-server on redshard's folder")
	}
	// And back to RESP bases.
	p = mustDialP(t, s.Addr)
	defer p.close()
	p.mustDo(t, "CONFIG", "SET", "aof-use-rdb-preamble", "no")
	p.mustDo(t, "BGREWRITEAOF")
	waitRewrite(t, p)
	if b := manifestFiles(t, dir)['b']; len(b) != 1 || !strings.HasSuffix(b[0], ".base.aof") {
		t.Fatalf("base files %v, want one .base.aof", b)
	}
	s.stop()
	s = startServerIn(t, dir, args...)
	digest(s.Addr, "redshard restarted on a RESP base")
	if r := mustDialP(t, s.Addr).mustDo(t, "CONFIG", "SET", "aof-use-rdb-preamble", "maybe"); !strings.Contains(r.s, "argument must be 'yes' or 'no'") {
		t.Errorf("CONFIG SET aof-use-rdb-preamble maybe = %q", r.s)
	}
}

// TestDebugAOFFlushSleepHoldsReplies: DEBUG AOF-FLUSH-SLEEP delays every
// write of the log, and under always a write's reply still waits for it
// (the barrier Redis's "AOF fsync always barrier issue" test probes).
func TestDebugAOFFlushSleepHoldsReplies(t *testing.T) {
	s := startServer(t, aofArgs("always", "--enable-debug-command", "yes")...)
	p := mustDialP(t, s.Addr)
	defer p.close()
	p.mustDo(t, "SET", "warm", "up")
	p.mustDo(t, "DEBUG", "AOF-FLUSH-SLEEP", "300000")
	incr := filepath.Join(aofDir(s.Dir), manifestFiles(t, s.Dir)['i'][0])
	st, _ := os.Stat(incr)
	t0 := time.Now()
	if r := p.mustDo(t, "INCR", "n"); r.n != 1 {
		t.Fatalf("INCR = %v", r)
	}
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("INCR answered after %v, before the 300 ms flush sleep ended", d)
	}
	if st2, _ := os.Stat(incr); st2.Size() <= st.Size() {
		t.Errorf("INCR answered before its write reached the file (size %d -> %d)", st.Size(), st2.Size())
	}
	p.mustDo(t, "DEBUG", "AOF-FLUSH-SLEEP", "0")
	t0 = time.Now()
	p.mustDo(t, "INCR", "n")
	if d := time.Since(t0); d > 250*time.Millisecond {
		t.Errorf("INCR took %v with the flush sleep off", d)
	}
}

// TestTwoServersShareADirWithTheirOwnAppendfilename: two servers in one
// dir with different appendfilename keep separate manifests and files in
// the one folder, upgrade their own old single files, rewrite and restart
// without touching each other's (Redis 7.0's "two redis share the same
// server dir").
func TestTwoServersShareADirWithTheirOwnAppendfilename(t *testing.T) {
	dir := t.TempDir()
	// Old single files of both, as redis-server 6 left them.
	old := func(k, v string) string { return resp("SET", k, v) }
	os.WriteFile(filepath.Join(dir, "appendonly.aof"), []byte(old("k1", "v1")), 0o644)
	os.WriteFile(filepath.Join(dir, "appendonly.aof2"), []byte(old("k4", "v4")), 0o644)
	a := startServerIn(t, dir, "--appendonly", "yes")
	b := startServerIn(t, dir, "--appendonly", "yes", "--appendfilename", "appendonly.aof2")
	pa, pb := mustDialP(t, a.Addr), mustDialP(t, b.Addr)
	check := func(p *pconn, has, hasNot string) {
		t.Helper()
		if r := p.mustDo(t, "EXISTS", has); r.n != 1 {
			t.Errorf("%s missing", has)
		}
		if r := p.mustDo(t, "EXISTS", hasNot); r.n != 0 {
			t.Errorf("%s, the other server's key, is here", hasNot)
		}
	}
	check(pa, "k1", "k4")
	check(pb, "k4", "k1")
	pa.mustDo(t, "SET", "a", "1")
	pb.mustDo(t, "SET", "b", "2")
	pa.mustDo(t, "BGREWRITEAOF")
	waitRewrite(t, pa)
	pb.mustDo(t, "BGREWRITEAOF")
	waitRewrite(t, pb)
	pa.close()
	pb.close()
	a.stop()
	b.stop()
	for _, name := range []string{"appendonly.aof.manifest", "appendonly.aof2.manifest"} {
		if _, err := os.Stat(filepath.Join(aofDir(dir), name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	a = startServerIn(t, dir, "--appendonly", "yes")
	b = startServerIn(t, dir, "--appendonly", "yes", "--appendfilename", "appendonly.aof2")
	pa, pb = mustDialP(t, a.Addr), mustDialP(t, b.Addr)
	defer pa.close()
	defer pb.close()
	check(pa, "a", "b")
	check(pb, "b", "a")
	check(pa, "k1", "k4")
	check(pb, "k4", "k1")
}

// TestBadManifestLogsAfterTheBanner: as Redis, which prints its logo before
// it reads the manifest, the banner's PID line comes first and the reason
// the start stops is the log's last line (Redis's suite reads it there).
func TestBadManifestLogsAfterTheBanner(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(aofDir(dir), 0o755)
	os.WriteFile(manifestOf(dir), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644)
	code, stdout, stderr := runBinary(t, "--port", strconv.Itoa(freePort(t)), "--dir", dir, "--appendonly", "yes", "--always-show-logo", "yes")
	out := strings.TrimRight(stdout+stderr, "\n")
	pid := strings.Index(out, " PID: ")
	last := out[strings.LastIndex(out, "\n")+1:]
	if code != 1 || pid < 0 || !strings.Contains(last, "The append log file appendonly.aof.1.incr.aof doesn't exist: No such file or directory") {
		t.Fatalf("exit %d, PID line at %d, last line %q; want 1, a PID line, and the missing file last\n%s", code, pid, last, out)
	}
}

// TestAOFOldSingleFileWithRDBPreamble: a Redis 4-6 appendonly.aof is an
// RDB preamble followed by commands; redshard upgrades it to a folder and
// loads both parts.
func TestAOFOldSingleFileWithRDBPreamble(t *testing.T) {
	src := t.TempDir()
	s := startServerIn(t, src, "--appendonly", "no")
	p := mustDialP(t, s.Addr)
	p.mustDo(t, "SET", "k1", "v1")
	p.mustDo(t, "RPUSH", "l", "a", "b")
	p.mustDo(t, "SAVE")
	p.close()
	s.stop()
	preamble, err := os.ReadFile(filepath.Join(src, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tail := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$2\r\nk3\r\n$2\r\nv3\r\n*3\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\nc\r\n"
	if err := os.WriteFile(filepath.Join(dir, "appendonly.aof"), append(preamble, tail...), 0o644); err != nil {
		t.Fatal(err)
	}
	s = startServerIn(t, dir, "--appendonly", "yes")
	p = mustDialP(t, s.Addr)
	defer p.close()
	for k, want := range map[string]string{"k1": "v1", "k3": "v3"} {
		if r := p.mustDo(t, "GET", k); r.s != want {
			t.Errorf("GET %s = %q, want %q", k, r.s, want)
		}
	}
	if r := p.mustDo(t, "LRANGE", "l", "0", "-1"); r.String() != `["a" "b" "c"]` {
		t.Errorf("LRANGE l = %s", r)
	}
}
