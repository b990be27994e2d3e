package tests

// The operational side of the AOF: INFO persistence, CONFIG SET appendonly
// and appendfsync at run time, DEBUG LOADAOF, and -LOADING while a large AOF
// loads with the listeners already up.

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// piInfo runs INFO section on c and returns its fields.
func piInfo(t testing.TB, rc *rawConn, section string) map[string]string {
	t.Helper()
	m, loading := piInfoOrLoading(t, rc, section)
	if loading {
		t.Fatalf("INFO %s: -LOADING", section)
	}
	return m
}

// piInfoOrLoading is piInfo that reports a -LOADING reply: the server
// answers it to everything for the few milliseconds it takes to learn its
// event loops, before the AOF even starts loading.
func piInfoOrLoading(t testing.TB, rc *rawConn, section string) (map[string]string, bool) {
	t.Helper()
	rc.write(resp("INFO", section))
	head := rc.line()
	if head == "-LOADING Redis is loading the dataset in memory" {
		return nil, true
	}
	if !strings.HasPrefix(head, "$") {
		t.Fatalf("INFO %s: %q", section, head)
	}
	n, _ := strconv.Atoi(head[1:])
	body := rc.readN(n + 2)
	m := map[string]string{}
	for _, l := range strings.Split(body, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
			m[k] = v
		}
	}
	return m, false
}

func piInfoInt(t testing.TB, m map[string]string, field string) int64 {
	t.Helper()
	v, ok := m[field]
	if !ok {
		t.Fatalf("INFO has no %s", field)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s:%s is not an integer", field, v)
	}
	return n
}

func TestInfoPersistenceAOF(t *testing.T) {
	s := startServer(t, "--appendonly", "yes", "--appendfsync", "always", "--shards", "2")
	rc := s.raw(t)
	m := piInfo(t, rc, "persistence")
	for field, want := range map[string]string{
		"loading":                           "0",
		"async_loading":                     "0",
		"aof_enabled":                       "1",
		"aof_rewrite_in_progress":           "0",
		"aof_rewrite_scheduled":             "0",
		"aof_last_rewrite_time_sec":         "-1",
		"aof_current_rewrite_time_sec":      "-1",
		"aof_last_bgrewrite_status":         "ok",
		"aof_rewrites":                      "0",
		"aof_rewrites_consecutive_failures": "0",
		"aof_last_write_status":             "ok",
		"aof_pending_rewrite":               "0",
		"aof_pending_bio_fsync":             "0",
		"aof_delayed_fsync":                 "0",
		"module_fork_in_progress":           "0",
	} {
		if m[field] != want {
			t.Errorf("INFO persistence %s:%q, want %q", field, m[field], want)
		}
	}
	for _, f := range []string{"loading_start_time", "loading_loaded_perc"} {
		if _, ok := m[f]; ok {
			t.Errorf("INFO persistence shows %s while not loading", f)
		}
	}
	fsyncs := piInfoInt(t, m, "aof_fsyncs")
	groups := piInfoInt(t, m, "aof_groups")
	size := piInfoInt(t, m, "aof_current_size")
	piInfoInt(t, m, "aof_base_size")
	piInfoInt(t, m, "aof_buffer_length")
	piInfoInt(t, m, "aof_batches")
	piInfoInt(t, m, "aof_last_group_batches")
	piInfoInt(t, m, "aof_fsync_avg_usec")

	// One client, one write at a time: under always every write is a group
	// of its own with its own fdatasync.
	const n = 200
	for i := 0; i < n; i++ {
		rc.do(resp("SET", fmt.Sprintf("k%d", i), "v"), "+OK\r\n")
	}
	m = piInfo(t, rc, "persistence")
	if d := piInfoInt(t, m, "aof_fsyncs") - fsyncs; d < n {
		t.Errorf("aof_fsyncs grew by %d over %d writes under appendfsync always, want >= %d", d, n, n)
	}
	if d := piInfoInt(t, m, "aof_groups") - groups; d < n {
		t.Errorf("aof_groups grew by %d over %d writes, want >= %d", d, n, n)
	}
	if got := piInfoInt(t, m, "aof_current_size"); got <= size {
		t.Errorf("aof_current_size %d after %d writes, was %d", got, n, size)
	}
	if piInfoInt(t, m, "aof_last_group_batches") != 1 {
		t.Errorf("aof_last_group_batches:%s after a lone write", m["aof_last_group_batches"])
	}
	if m := piInfo(t, rc, "memory"); m["mem_aof_buffer"] == "" {
		t.Errorf("INFO memory has no mem_aof_buffer")
	}
}

func TestInfoPersistenceWithoutAOF(t *testing.T) {
	s := startServer(t)
	m := piInfo(t, s.raw(t), "persistence")
	if m["aof_enabled"] != "0" || m["aof_last_write_status"] != "ok" || m["loading"] != "0" {
		t.Errorf("aof_enabled:%q aof_last_write_status:%q loading:%q", m["aof_enabled"], m["aof_last_write_status"], m["loading"])
	}
	for _, f := range []string{"aof_current_size", "aof_base_size", "aof_buffer_length", "aof_fsyncs"} {
		if _, ok := m[f]; ok {
			t.Errorf("INFO persistence shows %s with appendonly no (Redis shows the AOF block only when it is on)", f)
		}
	}
}

func TestConfigSetAppendfsync(t *testing.T) {
	s := startServer(t, "--appendonly", "yes", "--appendfsync", "everysec")
	rc := s.raw(t)
	rc.do(resp("CONFIG", "GET", "appendfsync"), "*2\r\n"+bulk("appendfsync")+bulk("everysec"))

	writes := func(prefix string, n int) (fsyncs int64) {
		before := piInfoInt(t, piInfo(t, rc, "persistence"), "aof_fsyncs")
		for i := 0; i < n; i++ {
			rc.do(resp("SET", fmt.Sprintf("%s%d", prefix, i), "v"), "+OK\r\n")
		}
		return piInfoInt(t, piInfo(t, rc, "persistence"), "aof_fsyncs") - before
	}

	rc.do(resp("CONFIG", "SET", "appendfsync", "always"), "+OK\r\n")
	rc.do(resp("CONFIG", "GET", "appendfsync"), "*2\r\n"+bulk("appendfsync")+bulk("always"))
	if d := writes("a", 100); d < 100 {
		t.Errorf("after CONFIG SET appendfsync always: %d fsyncs for 100 lone writes, want >= 100", d)
	}

	rc.do(resp("CONFIG", "SET", "appendfsync", "no"), "+OK\r\n")
	rc.do(resp("CONFIG", "GET", "appendfsync"), "*2\r\n"+bulk("appendfsync")+bulk("no"))
	if d := writes("n", 100); d != 0 {
		t.Errorf("after CONFIG SET appendfsync no: %d fsyncs for 100 writes, want 0", d)
	}

	rc.do(resp("CONFIG", "SET", "appendfsync", "everysec"), "+OK\r\n")
	rc.do(resp("CONFIG", "GET", "appendfsync"), "*2\r\n"+bulk("appendfsync")+bulk("everysec"))
	if d := writes("e", 100); d > 10 {
		t.Errorf("after CONFIG SET appendfsync everysec: %d fsyncs for 100 quick writes, want about one a second", d)
	}
	rc.do(resp("CONFIG", "SET", "appendfsync", "sometimes"),
		"-ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no\r\n")
}

func TestConfigSetAppendonlyAtRunTime(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "--appendonly", "yes", "--appendfsync", "always", "--shards", "3")
	rc := s.raw(t)
	keys := spreadKeys("before", 3, 20)
	for _, k := range keys {
		rc.do(resp("SET", k, "v-"+k), "+OK\r\n")
	}
	// A client whose write is in the same pipeline as the switch.
	rc.write(resp("SET", "last", "1") + resp("CONFIG", "SET", "appendonly", "no") + resp("SET", "after-0", "x"))
	rc.expect("+OK\r\n+OK\r\n+OK\r\n")
	rc.do(resp("CONFIG", "GET", "appendonly"), "*2\r\n"+bulk("appendonly")+bulk("no"))
	m := piInfo(t, rc, "persistence")
	if m["aof_enabled"] != "0" {
		t.Errorf("aof_enabled:%q after CONFIG SET appendonly no", m["aof_enabled"])
	}
	if _, ok := m["aof_current_size"]; ok {
		t.Errorf("INFO shows aof_current_size with the AOF off")
	}
	// The server goes on without the log: writes from every shard answer.
	afterKeys := spreadKeys("after", 3, 20)
	for _, k := range afterKeys {
		rc.do(resp("SET", k, "x"), "+OK\r\n")
	}
	s.stop()

	// The AOF holds everything up to the switch, and nothing after it.
	s2 := startServerIn(t, dir, "--appendonly", "yes", "--shards", "3")
	rc2 := s2.raw(t)
	for _, k := range keys {
		rc2.do(resp("GET", k), bulk("v-"+k))
	}
	rc2.do(resp("GET", "last"), bulk("1"))
	rc2.do(resp("EXISTS", "after-0"), ":0\r\n")
	rc2.do(resp("DBSIZE"), fmt.Sprintf(":%d\r\n", len(keys)+1))

	// Off, write, on again: the new log starts from the data set in memory
	// (a rewrite), and what an earlier run left is dropped.
	rc2.do(resp("CONFIG", "SET", "appendonly", "no"), "+OK\r\n")
	for _, k := range afterKeys {
		rc2.do(resp("SET", k, "x"), "+OK\r\n")
	}
	rc2.do(resp("DEL", keys[0]), ":1\r\n")
	rc2.do(resp("CONFIG", "SET", "appendonly", "yes"), "+OK\r\n")
	rc2.do(resp("SET", "later", "y"), "+OK\r\n")
	deadline := time.Now().Add(10 * time.Second)
	for piInfo(t, rc2, "persistence")["aof_rewrite_in_progress"] != "0" {
		if time.Now().After(deadline) {
			t.Fatal("the rewrite started by CONFIG SET appendonly yes did not finish in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if m := piInfo(t, rc2, "persistence"); m["aof_enabled"] != "1" || m["aof_last_bgrewrite_status"] != "ok" {
		t.Errorf("after CONFIG SET appendonly yes: aof_enabled:%s aof_last_bgrewrite_status:%s", m["aof_enabled"], m["aof_last_bgrewrite_status"])
	}
	rc2.do(resp("SET", "later2", "z"), "+OK\r\n")
	s2.kill9()
	s3 := startServerIn(t, dir, "--appendonly", "yes", "--shards", "3")
	rc3 := s3.raw(t)
	rc3.do(resp("EXISTS", keys[0]), ":0\r\n")
	for _, k := range keys[1:] {
		rc3.do(resp("GET", k), bulk("v-"+k))
	}
	for _, k := range afterKeys {
		rc3.do(resp("GET", k), bulk("x"))
	}
	rc3.do(resp("GET", "later"), bulk("y"))
	rc3.do(resp("GET", "later2"), bulk("z"))
	rc3.do(resp("DBSIZE"), fmt.Sprintf(":%d\r\n", len(keys)-1+1+len(afterKeys)+2))
}

func TestDebugLoadAOF(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards="+shards, func(t *testing.T) {
			s := startServer(t, "--appendonly", "yes", "--shards", shards, "--enable-debug-command", "yes")
			rc := s.raw(t)
			keys := spreadKeys("k", 4, 10)
			for _, k := range keys {
				rc.do(resp("SET", k, "v-"+k), "+OK\r\n")
			}
			rc.do(resp("INCRBY", "counter", "41"), ":41\r\n")
			rc.do(resp("INCR", "counter"), ":42\r\n")
			rc.do(resp("SET", "ttl", "x", "EX", "1000"), "+OK\r\n")
			rc.do(resp("MSET", keys[0], "m0", keys[len(keys)-1], "m1"), "+OK\r\n")
			rc.do(resp("DEL", keys[1]), ":1\r\n")
			rc.do(resp("SELECT", "3"), "+OK\r\n")
			rc.do(resp("SET", "in3", "three"), "+OK\r\n")
			rc.do(resp("SELECT", "0"), "+OK\r\n")
			// A write in the same pipeline as DEBUG LOADAOF is in the log
			// before the reload.
			rc.write(resp("SET", "piped", "p") + resp("DEBUG", "LOADAOF") + resp("GET", "piped"))
			rc.expect("+OK\r\n+OK\r\n" + bulk("p"))

			rc.do(resp("GET", keys[0]), bulk("m0"))
			rc.do(resp("GET", keys[len(keys)-1]), bulk("m1"))
			rc.do(resp("EXISTS", keys[1]), ":0\r\n")
			for _, k := range keys[2 : len(keys)-1] {
				rc.do(resp("GET", k), bulk("v-"+k))
			}
			rc.do(resp("GET", "counter"), bulk("42"))
			rc.write(resp("TTL", "ttl"))
			if ttl, _ := strconv.Atoi(strings.TrimPrefix(rc.line(), ":")); ttl < 990 || ttl > 1000 {
				t.Errorf("TTL after DEBUG LOADAOF: %d", ttl)
			}
			rc.do(resp("DBSIZE"), fmt.Sprintf(":%d\r\n", len(keys)-1+3))
			rc.do(resp("SELECT", "3"), "+OK\r\n")
			rc.do(resp("GET", "in3"), bulk("three"))
			rc.do(resp("SELECT", "0"), "+OK\r\n")
			// A second reload of the same log changes nothing, and the log
			// goes on.
			rc.do(resp("DEBUG", "LOADAOF"), "+OK\r\n")
			rc.do(resp("GET", "counter"), bulk("42"))
			rc.do(resp("INCR", "counter"), ":43\r\n")
			if !strings.Contains(s.log.String(), "Append Only File loaded by DEBUG LOADAOF") {
				t.Errorf("no log line for DEBUG LOADAOF")
			}
		})
	}
	t.Run("appendonly no", func(t *testing.T) {
		// As Redis 7.0: with the AOF off, BGREWRITEAOF still writes the
		// folder (a base, no incr file) and DEBUG LOADAOF loads it back.
		s := startServer(t, "--enable-debug-command", "yes")
		rc := s.raw(t)
		rc.do(resp("SET", "k", "v"), "+OK\r\n")
		// No folder yet: an error, and the data set is kept.
		rc.do(resp("DEBUG", "LOADAOF"), "-ERR DEBUG LOADAOF: there is no append only file to load (appendonly is no and the AOF folder has no manifest)\r\n")
		rc.do(resp("GET", "k"), bulk("v"))
		rc.do(resp("BGREWRITEAOF"), "+Background append only file rewriting started\r\n")
		p := mustDialP(t, s.Addr)
		defer p.close()
		waitRewrite(t, p)
		m, err := os.ReadFile(manifestOf(s.Dir))
		if err != nil {
			t.Fatalf("no manifest after BGREWRITEAOF with appendonly no: %v", err)
		}
		if want := "file appendonly.aof.1.base.rdb seq 1 type b\n"; string(m) != want {
			t.Errorf("manifest = %q, want %q", m, want)
		}
		// Not logged (the AOF is off): DEBUG LOADAOF drops it.
		rc.do(resp("SET", "later", "x"), "+OK\r\n")
		rc.do(resp("DEBUG", "LOADAOF"), "+OK\r\n")
		rc.do(resp("GET", "k"), bulk("v"))
		rc.do(resp("EXISTS", "later"), ":0\r\n")
		// A second rewrite replaces the base.
		rc.do(resp("BGREWRITEAOF"), "+Background append only file rewriting started\r\n")
		waitRewrite(t, p)
		m, _ = os.ReadFile(manifestOf(s.Dir))
		if want := "file appendonly.aof.2.base.rdb seq 2 type b\n"; string(m) != want {
			t.Errorf("manifest after the second rewrite = %q, want %q", m, want)
		}
		if _, err := os.Stat(filepath.Join(aofDir(s.Dir), "appendonly.aof.1.base.aof")); !os.IsNotExist(err) {
			t.Errorf("the old base is still there: %v", err)
		}
	})
}

// piWriteRedisAOF writes an AOF folder as redis-server 7 would (no
// annotations): a base file with n SETs and an empty incr file.
func piWriteRedisAOF(t *testing.T, dir string, n int) int64 {
	t.Helper()
	ad := filepath.Join(dir, "appendonlydir")
	if err := os.MkdirAll(ad, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(ad, "appendonly.aof.1.base.aof"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(resp("SELECT", "0"))
	val := strings.Repeat("v", 40)
	for i := 0; i < n; i++ {
		w.WriteString(resp("SET", "key:"+strconv.Itoa(i), val))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.1.incr.aof"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
	if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.manifest"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// piStartNoWait starts redshard-server on dir without waiting for it to be
// ready; stop runs at the end of the test.
func piStartNoWait(t *testing.T, dir string, extra ...string) *server {
	t.Helper()
	port := freePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir}, extra...)
	s := &server{t: t, Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir,
		log: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(serverBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.stop)
	return s
}

// TestDebugLoadAOFAnswersLOADING: while DEBUG LOADAOF replays a slow script
// of a Redis 6 style log, every other client is answered -LOADING (Redis's
// processEventsWhileBlocked during a load), and the caller gets +OK when
// the data set is back (integration/aof's "EVAL timeout with slow verbatim
// Lua script from AOF").
func TestDebugLoadAOFAnswersLOADING(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards="+shards, func(t *testing.T) {
			dir := t.TempDir()
			ad := filepath.Join(dir, "appendonlydir")
			if err := os.MkdirAll(ad, 0o755); err != nil {
				t.Fatal(err)
			}
			incr := resp("SELECT", "9") +
				resp("EVAL", "redis.call('set',KEYS[1],'y'); for i=1,1500000 do redis.call('ping') end return 'ok'", "1", "x")
			if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.1.incr.aof"), []byte(incr), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := startServerIn(t, dir, "--appendonly", "yes", "--shards", shards, "--enable-debug-command", "yes",
				"--busy-reply-threshold", "1", "--aof-use-rdb-preamble", "no")
			others := []*rawConn{s.raw(t), s.raw(t), s.raw(t), s.raw(t)} // on several loops with --shards 4
			for _, rc := range others {
				rc.do(resp("PING"), "+PONG\r\n")
			}
			loader := s.raw(t)
			loader.write(resp("DEBUG", "LOADAOF"))
			// Ping once the replay is under way (its slow-script line is
			// logged once the loops are stuck): a PING that a loop has read
			// but not run when it parks waits for the load, to keep its
			// client's order, and on a loaded machine the first PING could
			// land in that moment and see only PONGs after it.
			deadline := time.Now().Add(5 * time.Second)
			for strings.Count(s.log.String(), "Slow script detected") < 2 {
				if time.Now().After(deadline) {
					t.Fatal("DEBUG LOADAOF's slow script was never logged")
				}
				time.Sleep(2 * time.Millisecond)
			}
			for seen := 0; seen < len(others); {
				rc := others[seen]
				rc.write(resp("PING"))
				switch l := rc.line(); l {
				case "-LOADING Redis is loading the dataset in memory":
					seen++
					continue
				case "PONG", "+PONG":
				default:
					t.Fatalf("PING during DEBUG LOADAOF answered %q", l)
				}
				if time.Now().After(deadline) {
					t.Fatalf("client %d never got -LOADING while DEBUG LOADAOF replayed a slow script", seen)
				}
				time.Sleep(2 * time.Millisecond)
			}
			loader.expect("+OK\r\n")
			for _, rc := range others {
				rc.do(resp("PING"), "+PONG\r\n")
			}
			loader.do(resp("SELECT", "9"), "+OK\r\n")
			loader.do(resp("GET", "x"), bulk("y"))
			if !strings.Contains(s.log.String(), "Slow script detected") {
				t.Errorf("no 'Slow script detected' in the log")
			}
		})
	}
}

func TestLoadingAnswersLOADING(t *testing.T) {
	dir := t.TempDir()
	const n = 300000
	size := piWriteRedisAOF(t, dir, n)
	s := piStartNoWait(t, dir, "--appendonly", "yes", "--shards", "2")

	// Connect as soon as the port opens.
	var c net.Conn
	deadline := time.Now().Add(15 * time.Second)
	for {
		var err error
		c, err = net.DialTimeout("tcp", s.Addr, 100*time.Millisecond)
		if err == nil {
			break
		}
		select {
		case <-s.done:
			t.Fatalf("server exited: %v\n%s", s.err, s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the port never opened\n%s", s.log.String())
		}
		time.Sleep(time.Millisecond)
	}
	rc := &rawConn{t: t, c: c, r: bufio.NewReaderSize(c, 64<<10)}
	t.Cleanup(func() { c.Close() })

	sawLoading, sawInfo := false, false
	extra := 0 // the probe SET x, when the load ended just before it
	for {
		rc.write(resp("GET", "key:1"))
		l := rc.line()
		if l == "-LOADING Redis is loading the dataset in memory" {
			sawLoading = true
			// INFO has the loading flag: it answers, with the progress.
			m, _ := piInfoOrLoading(t, rc, "persistence")
			if m["loading"] == "1" {
				sawInfo = true
				if got := piInfoInt(t, m, "loading_total_bytes"); got != size {
					t.Errorf("loading_total_bytes:%d, want %d", got, size)
				}
				if p, err := strconv.ParseFloat(m["loading_loaded_perc"], 64); err != nil || p < 0 || p > 100 {
					t.Errorf("loading_loaded_perc:%q", m["loading_loaded_perc"])
				}
				for _, f := range []string{"loading_start_time", "loading_loaded_bytes", "loading_eta_seconds", "loading_rdb_used_mem"} {
					piInfoInt(t, m, f)
				}
				// Writes are refused too, and so is PING (no loading flag),
				// unless the load ended since the INFO.
				rc.write(resp("SET", "x", "y"))
				if l := rc.line(); l != "-LOADING Redis is loading the dataset in memory" {
					if m2, loading := piInfoOrLoading(t, rc, "persistence"); l != "+OK" || loading || m2["loading"] != "0" {
						t.Errorf("SET while loading answered %q", l)
					}
					extra = 1
				}
			}
			time.Sleep(time.Millisecond)
			continue
		}
		if l != "$40" {
			t.Fatalf("GET key:1 answered %q", l)
		}
		rc.expect(strings.Repeat("v", 40) + "\r\n")
		break
	}
	if !sawLoading {
		t.Errorf("a client connected as the port opened never got -LOADING (the load of %d bytes ended first?)", size)
	}
	if sawLoading && !sawInfo {
		t.Errorf("INFO persistence never showed loading:1 while commands got -LOADING")
	}
	rc.do(resp("DBSIZE"), fmt.Sprintf(":%d\r\n", n+extra))
	rc.do(resp("GET", fmt.Sprintf("key:%d", n-1)), bulk(strings.Repeat("v", 40)))
	m := piInfo(t, rc, "persistence")
	if m["loading"] != "0" {
		t.Errorf("loading:%q after the load", m["loading"])
	}
	if !strings.Contains(s.log.String(), "DB loaded from append only file") {
		t.Errorf("no 'DB loaded from append only file' in the log")
	}
	// The log goes on where the load stopped.
	rc.do(resp("SET", "new", "1"), "+OK\r\n")
}

// TestSmallLoadAnswersWhenLoaded: a client that connects while a data set
// smaller than loading-process-events-interval-bytes loads at start is
// answered when it is loaded, as by Redis (which serves no event before
// then), not -LOADING; with the interval below the file's size it gets
// -LOADING, as from Redis's first events pass. Each record's replay is
// slowed by the load-record failpoint so that the load outlasts the connect.
func TestSmallLoadAnswersWhenLoaded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval string
		loading  bool
	}{{"small", "2097152", false}, {"over-the-interval", "1024", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			const n = 100
			piWriteRedisAOF(t, dir, n)
			s := piStartNoWait(t, dir, "--appendonly", "yes", "--shards", "2",
				"--enable-failpoints", "yes", "--failpoint", "load-record=sleep 5",
				"--loading-process-events-interval-bytes", tc.interval)
			var c net.Conn
			waitFor(t, "the port", func() bool {
				var err error
				c, err = net.DialTimeout("tcp", s.Addr, 100*time.Millisecond)
				return err == nil
			})
			t.Cleanup(func() { c.Close() })
			rc := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
			_ = c.SetDeadline(time.Now().Add(15 * time.Second))
			// The last record's key: its value proves the answer came
			// after the whole file was loaded.
			rc.write(resp("GET", fmt.Sprintf("key:%d", n-1)))
			l := rc.line()
			if tc.loading {
				if l != "-LOADING Redis is loading the dataset in memory" {
					t.Fatalf("GET while %d records load over the interval answered %q", n, l)
				}
				return
			}
			if l != "$40" {
				t.Fatalf("GET while a small AOF loads answered %q, want the value once loaded", l)
			}
			rc.expect(strings.Repeat("v", 40) + "\r\n")
			rc.do(resp("DBSIZE"), fmt.Sprintf(":%d\r\n", n))
		})
	}
}

func TestSigtermWhileLoading(t *testing.T) {
	dir := t.TempDir()
	const n = 300000
	piWriteRedisAOF(t, dir, n)
	s := piStartNoWait(t, dir, "--appendonly", "yes")
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the port never opened\n%s", s.log.String())
		}
		time.Sleep(time.Millisecond)
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.exited(10 * time.Second); err != nil {
		t.Fatalf("SIGTERM while loading: exit %v\n%s", err, s.log.String())
	}
	// The files are as they were: the next start loads everything.
	s2 := startServerIn(t, dir, "--appendonly", "yes")
	s2.raw(t).do(resp("DBSIZE"), fmt.Sprintf(":%d\r\n", n))
}
