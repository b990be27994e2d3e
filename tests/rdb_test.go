package tests

// RDB snapshots end to end (go test -run RDB ./tests/): files written by
// BGSAVE and SAVE pass redis-check-rdb and load in redis-server 7.0 with the
// same DEBUG DIGEST and encodings; redis-server's dump.rdb loads in
// redshard; a kill -9 during BGSAVE leaves the previous file; the save at
// SHUTDOWN and SIGTERM, SHUTDOWN NOSAVE, -MISCONF after a failed BGSAVE and
// the save schedule.
//
// Streams are left out of the data sets: the rdb codec reads and writes
// them on branch rdbstream, but the keyspace's conversion (shard/rdbvalue.go,
// ErrStreamRDB) does not yet, so redshard can neither save nor load a
// stream key. Add XADD/XGROUP commands to rdbDataCmds once it does.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// rdbDBs are the databases rdbDataCmds writes.
var rdbDBs = []int{0, 1, 9}

const rdbLib = "#!lua name=rdblib\n" +
	"redis.register_function('echo1', function(keys, args) return args[1] end)\n" +
	"redis.register_function{function_name='ro1', callback=function(keys, args) return 1 end, flags={'no-writes'}}"

// rdbDataCmds builds every type in every encoding Redis 7.0 has, with
// expiries at absolute times expireAt (ms) and later, in several
// databases, and a function library.
func rdbDataCmds(expireAt int64) [][]string {
	var c [][]string
	add := func(a ...string) { c = append(c, a) }
	add("SELECT", "0")
	add("SET", "s:raw", strings.Repeat("raw-string-", 6))      // raw (> 44 bytes)
	add("SET", "s:int", "12345")                               // int
	add("SET", "s:neg", "-987654321")                          // int
	add("SET", "s:emb", "hello world")                         // embstr
	add("SET", "s:big", strings.Repeat("compressible-", 2000)) // LZF-compressed in the file
	add("SET", "s:bin", "\x00\x01\xff\xfe binary \r\n")        // embstr, binary-safe
	add("SET", "s:bigint", "123456789012345678901234567890")   // not a long long
	add("RPUSH", "l:small", "a", "b", "c", "1", "2", "-3")     // one node
	for i := 0; i < 3000; i += 100 {                           // a quicklist of many 8 KB nodes
		a := []string{"RPUSH", "l:big"}
		for j := i; j < i+100; j++ {
			a = append(a, fmt.Sprintf("element-%06d-%s", j, strings.Repeat("x", 30)))
		}
		add(a...)
	}
	add("RPUSH", "l:ints", "1", "2", "3", "9223372036854775807", "-9223372036854775808")
	a := []string{"SADD", "st:int"}
	for i := 0; i < 100; i++ {
		a = append(a, strconv.Itoa(i*37-500))
	}
	add(a...)                                                // intset
	add("SADD", "st:str", "apple", "banana", "cherry", "42") // hashtable
	a = []string{"SADD", "st:bigint"}
	for i := 0; i < 1000; i++ {
		a = append(a, strconv.Itoa(i))
	}
	add(a...) // > set-max-intset-entries: hashtable
	a = []string{"SADD", "st:big"}
	for i := 0; i < 2000; i++ {
		a = append(a, "member-"+strconv.Itoa(i))
	}
	add(a...)
	add("HSET", "h:small", "f1", "v1", "f2", "v2", "n", "3") // listpack
	a = []string{"HSET", "h:big"}
	for i := 0; i < 600; i++ {
		a = append(a, "field-"+strconv.Itoa(i), "value-"+strconv.Itoa(i*i))
	}
	add(a...)                                                         // > 512 fields: hashtable
	add("HSET", "h:longval", "f", strings.Repeat("v", 100), "g", "1") // > 64 bytes: hashtable
	add("ZADD", "z:small", "inf", "pinf", "-inf", "ninf", "1.5", "a", "0.1", "b", "-2.25", "c", "3", "d", "1e-7", "tiny")
	a = []string{"ZADD", "z:big"}
	for i := 0; i < 300; i++ {
		a = append(a, strconv.FormatFloat(float64(i)*0.37-20, 'g', -1, 64), "m"+strconv.Itoa(i))
	}
	add(a...) // > 128 members: skiplist
	add("ZADD", "z:big", "inf", "top", "-inf", "bottom")
	add("ZADD", "z:longmember", "1", strings.Repeat("m", 80), "2", "short") // > 64 bytes: skiplist
	// expiries
	add("SET", "e:str", "expiring")
	add("PEXPIREAT", "e:str", strconv.FormatInt(expireAt, 10))
	add("HSET", "e:h", "a", "1", "b", "2")
	add("PEXPIREAT", "e:h", strconv.FormatInt(expireAt+1000, 10))
	add("ZADD", "e:z", "1", "a")
	add("PEXPIREAT", "e:z", strconv.FormatInt(expireAt+2000, 10))
	add("RPUSH", "e:l", "x")
	add("PEXPIREAT", "e:l", strconv.FormatInt(expireAt+3000, 10))
	add("SELECT", "1")
	add("SET", "db1:k", "one")
	add("SET", "s:int", "777") // the same name as in db 0
	add("RPUSH", "db1:l", "x", "y", "z")
	add("SADD", "db1:s", "1", "2", "3")
	add("SET", "db1:e", "v")
	add("PEXPIREAT", "db1:e", strconv.FormatInt(expireAt+4000, 10))
	add("SELECT", "9")
	add("HSET", "db9:h", "a", "1")
	add("ZADD", "db9:z", "-0.5", "neg", "0", "zero")
	add("SET", "db9:k", "nine")
	add("SELECT", "0")
	add("FUNCTION", "LOAD", rdbLib)
	return c
}

// rdbClient is a go-redis client of addr on database db.
func rdbClient(t testing.TB, addr string, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, DB: db, Protocol: 2, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		DialTimeout:              5 * time.Second, ReadTimeout: 60 * time.Second, WriteTimeout: 30 * time.Second,
		MaxRetries: -1, PoolSize: 4,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rdbKeyState is what the tests compare per key.
type rdbKeyState struct {
	enc, digest string
	expireAt    int64 // PEXPIRETIME (-1: none)
}

// rdbSnapshot is a server's data set as compared: DEBUG DIGEST, each key's
// state by "db/key", FUNCTION LIST.
type rdbSnapshot struct {
	digest    string
	keys      map[string]rdbKeyState
	functions string
}

func takeRDBSnapshot(t testing.TB, addr string, dbs []int) rdbSnapshot {
	t.Helper()
	ctx := ctxT(t)
	c0 := rdbClient(t, addr, 0)
	d, err := c0.Do(ctx, "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatalf("%s DEBUG DIGEST: %v", addr, err)
	}
	fl, err := c0.Do(ctx, "FUNCTION", "LIST", "WITHCODE").Result()
	if err != nil {
		t.Fatalf("%s FUNCTION LIST: %v", addr, err)
	}
	snap := rdbSnapshot{digest: d, keys: map[string]rdbKeyState{}, functions: normFunctions(fl)}
	for _, db := range dbs {
		c := rdbClient(t, addr, db)
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatalf("%s KEYS in db %d: %v", addr, db, err)
		}
		for _, k := range keys {
			var st rdbKeyState
			st.enc, err = c.ObjectEncoding(ctx, k).Result()
			if err != nil {
				t.Fatalf("%s OBJECT ENCODING %s: %v", addr, k, err)
			}
			st.digest, err = c.Do(ctx, "DEBUG", "DIGEST-VALUE", k).Text()
			if err != nil {
				// redis-server replies with an array of one
				v, err2 := c.Do(ctx, "DEBUG", "DIGEST-VALUE", k).Slice()
				if err2 != nil || len(v) != 1 {
					t.Fatalf("%s DEBUG DIGEST-VALUE %s: %v / %v", addr, k, err, err2)
				}
				st.digest = fmt.Sprint(v[0])
			}
			st.expireAt, err = c.Do(ctx, "PEXPIRETIME", k).Int64()
			if err != nil {
				t.Fatalf("%s PEXPIRETIME %s: %v", addr, k, err)
			}
			snap.keys[fmt.Sprintf("%d/%s", db, k)] = st
		}
	}
	return snap
}

// normFunctions renders FUNCTION LIST with each library's functions sorted
// (Redis lists them in its dict's order).
func normFunctions(fl any) string {
	libs, _ := fl.([]any)
	for _, l := range libs {
		kv, _ := l.([]any)
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == "functions" {
				fs, _ := kv[i+1].([]any)
				sort.Slice(fs, func(a, b int) bool { return fmt.Sprint(fs[a]) < fmt.Sprint(fs[b]) })
			}
		}
	}
	return fmt.Sprint(libs)
}

// compareRDBSnapshots reports every difference of got from want;
// encodings too when withEnc.
func compareRDBSnapshots(t testing.TB, what string, got, want rdbSnapshot, withEnc bool) {
	t.Helper()
	if got.digest != want.digest {
		t.Errorf("%s: DEBUG DIGEST %s, want %s", what, got.digest, want.digest)
	}
	if got.digest == strings.Repeat("0", 40) {
		t.Errorf("%s: DEBUG DIGEST is all zeros: the data set is empty", what)
	}
	if got.functions != want.functions {
		t.Errorf("%s: FUNCTION LIST WITHCODE\n got %s\nwant %s", what, got.functions, want.functions)
	}
	var names []string
	for k := range want.keys {
		names = append(names, k)
	}
	for k := range got.keys {
		if _, ok := want.keys[k]; !ok {
			t.Errorf("%s: extra key %s", what, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		w := want.keys[k]
		g, ok := got.keys[k]
		switch {
		case !ok:
			t.Errorf("%s: key %s missing", what, k)
		case g.digest != w.digest:
			t.Errorf("%s: key %s: DIGEST-VALUE %s, want %s", what, k, g.digest, w.digest)
		case g.expireAt != w.expireAt:
			t.Errorf("%s: key %s: PEXPIRETIME %d, want %d", what, k, g.expireAt, w.expireAt)
		case withEnc && g.enc != w.enc:
			t.Errorf("%s: key %s: OBJECT ENCODING %s, want %s", what, k, g.enc, w.enc)
		}
	}
}

// infoField returns an INFO field ("" if absent).
func infoField(t testing.TB, c *redis.Client, section, field string) string {
	t.Helper()
	s, err := c.Info(ctxT(t), section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// waitBgsave waits for rdb_bgsave_in_progress:0 and returns
// rdb_last_bgsave_status.
func waitBgsave(t testing.TB, c *redis.Client, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if infoField(t, c, "persistence", "rdb_bgsave_in_progress") == "0" {
			return infoField(t, c, "persistence", "rdb_last_bgsave_status")
		}
		if time.Now().After(deadline) {
			t.Fatalf("BGSAVE still in progress after %v", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bgsaveOK runs BGSAVE and waits for it to succeed.
func bgsaveOK(t testing.TB, c *redis.Client) {
	t.Helper()
	before := infoField(t, c, "persistence", "rdb_saves")
	if r, err := c.BgSave(ctxT(t)).Result(); err != nil || r != "Background saving started" {
		t.Fatalf("BGSAVE: %q %v", r, err)
	}
	if st := waitBgsave(t, c, 60*time.Second); st != "ok" {
		t.Fatalf("rdb_last_bgsave_status:%s after BGSAVE, want ok", st)
	}
	if after := infoField(t, c, "persistence", "rdb_saves"); after == before {
		t.Fatalf("rdb_saves still %s after a successful BGSAVE", after)
	}
}

// checkRDBFile runs redis-check-rdb on path; it must say the file is OK.
func checkRDBFile(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command("redis-check-rdb", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb %s: %v\n%s", path, err, out)
	}
}

// copyFile copies src to dst.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("read %s: %v", src, err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatalf("write %s: %v", dst, err)
	}
}

func needRedisTools(t *testing.T) {
	for _, b := range []string{"redis-server", "redis-check-rdb"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

// loadInRedis starts redis-server on a copy of the RDB file at path and
// returns its snapshot of dbs.
func loadInRedis(t *testing.T, path string, dbs []int) rdbSnapshot {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, path, filepath.Join(dir, "dump.rdb"))
	r := startRedisServer(t, dir, "--enable-debug-command", "yes", "--appendonly", "no")
	if !strings.Contains(r.log.String(), "DB loaded from disk") {
		t.Fatalf("redis-server did not load %s:\n%s", path, r.log.String())
	}
	snap := takeRDBSnapshot(t, r.Addr, dbs)
	r.stop(t)
	return snap
}

// TestRDBSaveLoadsInRedis: what redshard's BGSAVE and SAVE write passes
// redis-check-rdb and loads in redis-server with the same DEBUG DIGEST, the
// same keys, values, expiry times and encodings, and the same functions.
func TestRDBSaveLoadsInRedis(t *testing.T) {
	needRedisTools(t)
	dir := t.TempDir()
	s := startServerIn(t, dir, "--shards", "4", "--enable-debug-command", "yes")
	doAll(t, s.Addr, rdbDataCmds(time.Now().Add(time.Hour).UnixMilli()))
	c := s.client(t, 2)
	want := takeRDBSnapshot(t, s.Addr, rdbDBs)
	if len(want.keys) < 30 {
		t.Fatalf("only %d keys built", len(want.keys))
	}
	// the data set has every encoding
	for k, enc := range map[string]string{
		"0/s:raw": "raw", "0/s:int": "int", "0/s:emb": "embstr", "0/l:small": "quicklist", "0/l:big": "quicklist",
		"0/st:int": "intset", "0/st:str": "hashtable", "0/st:bigint": "hashtable", "0/h:small": "listpack",
		"0/h:big": "hashtable", "0/h:longval": "hashtable", "0/z:small": "listpack", "0/z:big": "skiplist",
		"0/z:longmember": "skiplist",
	} {
		if got := want.keys[k].enc; got != enc {
			t.Errorf("redshard's OBJECT ENCODING of %s is %q, want %q", k, got, enc)
		}
	}
	path := filepath.Join(dir, "dump.rdb")

	bgsaveOK(t, c)
	checkRDBFile(t, path)
	compareRDBSnapshots(t, "redis-server loading redshard's BGSAVE", loadInRedis(t, path, rdbDBs), want, true)

	// SAVE, after more writes (and a deleted key), replaces the file.
	doAll(t, s.Addr, [][]string{{"SET", "after:bgsave", "1"}, {"DEL", "s:emb"}, {"HSET", "h:small", "f9", "v9"}})
	want = takeRDBSnapshot(t, s.Addr, rdbDBs)
	if r, err := c.Save(ctxT(t)).Result(); err != nil || r != "OK" {
		t.Fatalf("SAVE: %q %v", r, err)
	}
	if v := infoField(t, c, "persistence", "rdb_changes_since_last_save"); v != "0" {
		t.Errorf("rdb_changes_since_last_save:%s after SAVE, want 0", v)
	}
	checkRDBFile(t, path)
	got := loadInRedis(t, path, rdbDBs)
	compareRDBSnapshots(t, "redis-server loading redshard's SAVE", got, want, true)
	if _, ok := got.keys["0/after:bgsave"]; !ok {
		t.Errorf("the SAVE's file lacks the key written after the BGSAVE")
	}
}

// TestRDBFromRedisLoads: redis-server's dump.rdb of the same data set loads
// in redshard (appendonly no) with the same digest, functions, expiry times
// and encodings.
func TestRDBFromRedisLoads(t *testing.T) {
	needRedisTools(t)
	rdir := t.TempDir()
	r := startRedisServer(t, rdir, "--enable-debug-command", "yes", "--appendonly", "no")
	doAll(t, r.Addr, rdbDataCmds(time.Now().Add(time.Hour).UnixMilli()))
	// an already expired key, dropped by the load
	doAll(t, r.Addr, [][]string{{"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, {"SET", "gone", "x", "PX", "100"}})
	time.Sleep(150 * time.Millisecond)
	built := takeRDBSnapshot(t, r.Addr, rdbDBs)
	if err := rdbClient(t, r.Addr, 0).Save(ctxT(t)).Err(); err != nil {
		t.Fatalf("redis SAVE: %v", err)
	}
	r.stop(t)
	path := filepath.Join(rdir, "dump.rdb")
	checkRDBFile(t, path)
	// The expected state is redis-server's own load of the file (its
	// DEBUG DIGEST counted "gone", expired but not deleted, before the
	// save); but for the digest it is what redis-server built.
	want := loadInRedis(t, path, rdbDBs)
	built.digest = want.digest
	compareRDBSnapshots(t, "redis-server loading its own dump.rdb", want, built, true)
	dir := t.TempDir()
	copyFile(t, path, filepath.Join(dir, "dump.rdb"))
	s := startServerIn(t, dir, "--shards", "4", "--enable-debug-command", "yes")
	got := takeRDBSnapshot(t, s.Addr, rdbDBs)
	compareRDBSnapshots(t, "redshard loading redis-server's dump.rdb", got, want, true)
	c := s.client(t, 2)
	if v := infoField(t, c, "persistence", "rdb_last_load_keys_loaded"); v != strconv.Itoa(len(want.keys)) {
		t.Errorf("rdb_last_load_keys_loaded:%s, want %d", v, len(want.keys))
	}
	if v := infoField(t, c, "persistence", "rdb_last_load_keys_expired"); v != "1" {
		t.Errorf("rdb_last_load_keys_expired:%s, want 1", v)
	}
	if !strings.Contains(s.log.String(), "DB loaded from disk") {
		t.Errorf("no 'DB loaded from disk' in the log")
	}
	// the loaded function runs
	if v, err := c.FCall(ctxT(t), "echo1", nil, "hi").Text(); err != nil || v != "hi" {
		t.Errorf("FCALL echo1 after the load: %q %v", v, err)
	}
	// TTLs count down from the file's absolute times
	if ttl, err := rdbClient(t, s.Addr, 0).PTTL(ctxT(t), "e:str").Result(); err != nil || ttl < 50*time.Minute || ttl > time.Hour {
		t.Errorf("PTTL e:str = %v %v, want about an hour", ttl, err)
	}
}

// TestRDBKill9DuringBGSAVE: a kill -9 in the middle of a (slowed) BGSAVE
// leaves the previous dump.rdb whole; it loads, in redshard and in
// redis-server, with the digest it had; the temp file is never loaded.
func TestRDBKill9DuringBGSAVE(t *testing.T) {
	needRedisTools(t)
	dir := t.TempDir()
	args := []string{"--shards", "4", "--enable-debug-command", "yes"}
	s := startServerIn(t, dir, args...)
	c := s.client(t, 2)
	doAll(t, s.Addr, rdbDataCmds(time.Now().Add(time.Hour).UnixMilli()))
	if err := c.Save(ctxT(t)).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	want := takeRDBSnapshot(t, s.Addr, rdbDBs)
	path := filepath.Join(dir, "dump.rdb")
	checkRDBFile(t, path)
	before, _ := os.ReadFile(path)

	if err := c.Do(ctxT(t), "DEBUG", "POPULATE", "20000", "more").Err(); err != nil {
		t.Fatalf("DEBUG POPULATE: %v", err)
	}
	// 20,000 keys over 4 shards at 1 ms a key: about 5 s
	if err := c.ConfigSet(ctxT(t), "rdb-key-save-delay", "1000").Err(); err != nil {
		t.Fatalf("CONFIG SET rdb-key-save-delay: %v", err)
	}
	if err := c.BgSave(ctxT(t)).Err(); err != nil {
		t.Fatalf("BGSAVE: %v", err)
	}
	time.Sleep(700 * time.Millisecond)
	if v := infoField(t, c, "persistence", "rdb_bgsave_in_progress"); v != "1" {
		t.Fatalf("rdb_bgsave_in_progress:%s 0.7 s into a slowed BGSAVE, want 1", v)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb"))
	if len(temps) == 0 {
		t.Errorf("no temp-*.rdb in the dir during the BGSAVE")
	}
	s.kill9()

	after, err := os.ReadFile(path)
	if err != nil || string(after) != string(before) {
		t.Fatalf("dump.rdb changed by the killed BGSAVE (err %v, %d bytes, was %d)", err, len(after), len(before))
	}
	checkRDBFile(t, path)
	s2 := startServerIn(t, dir, args...)
	compareRDBSnapshots(t, "redshard restarted after kill -9", takeRDBSnapshot(t, s2.Addr, rdbDBs), want, true)
	if n, err := s2.client(t, 2).DBSize(ctxT(t)).Result(); err != nil || n != int64(len(want.keys)-countDB(want, 1)-countDB(want, 9)) {
		t.Errorf("DBSIZE %d %v after the restart, want db 0's %d keys", n, err, len(want.keys)-countDB(want, 1)-countDB(want, 9))
	}
	compareRDBSnapshots(t, "redis-server loading the dump.rdb left by the kill -9", loadInRedis(t, path, rdbDBs), want, true)
}

func countDB(s rdbSnapshot, db int) int {
	n := 0
	for k := range s.keys {
		if strings.HasPrefix(k, strconv.Itoa(db)+"/") {
			n++
		}
	}
	return n
}

// TestRDBShutdownSavesAndMisconf: with save points, SHUTDOWN and SIGTERM
// write dump.rdb and a restart loads it, SHUTDOWN NOSAVE does not; a failed
// BGSAVE turns writes into -MISCONF (reads still work) until a BGSAVE
// succeeds, unless stop-writes-on-bgsave-error is no.
func TestRDBShutdownSavesAndMisconf(t *testing.T) {
	args := []string{"--shards", "4", "--save", "3600 1", "--enable-debug-command", "yes", "--enable-protected-configs", "yes"}
	t.Run("SHUTDOWN and SIGTERM save", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "dump.rdb")
		s := startServerIn(t, dir, args...)
		c := s.client(t, 2)
		doAll(t, s.Addr, rdbDataCmds(time.Now().Add(time.Hour).UnixMilli()))
		want := takeRDBSnapshot(t, s.Addr, rdbDBs)
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("dump.rdb exists before any save")
		}
		_ = c.Shutdown(ctxT(t)).Err() // the connection closes
		if err := s.exited(20 * time.Second); err != nil {
			t.Fatalf("exit status after SHUTDOWN: %v", err)
		}
		checkRDBFile(t, path)
		s2 := startServerIn(t, dir, args...)
		compareRDBSnapshots(t, "restart after SHUTDOWN", takeRDBSnapshot(t, s2.Addr, rdbDBs), want, true)

		// SIGTERM saves too
		doAll(t, s2.Addr, [][]string{{"SET", "by:sigterm", "1"}})
		want = takeRDBSnapshot(t, s2.Addr, rdbDBs)
		s2.stop() // SIGTERM, exit status 0 checked
		s3 := startServerIn(t, dir, args...)
		compareRDBSnapshots(t, "restart after SIGTERM", takeRDBSnapshot(t, s3.Addr, rdbDBs), want, true)

		// SHUTDOWN NOSAVE leaves the file as it was
		doAll(t, s3.Addr, [][]string{{"SET", "not:saved", "1"}})
		before, _ := os.ReadFile(path)
		_ = s3.client(t, 2).ShutdownNoSave(ctxT(t)).Err()
		if err := s3.exited(20 * time.Second); err != nil {
			t.Fatalf("exit status after SHUTDOWN NOSAVE: %v", err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("SHUTDOWN NOSAVE rewrote dump.rdb")
		}
		s4 := startServerIn(t, dir, args...)
		if n, err := s4.client(t, 2).Exists(ctxT(t), "not:saved", "by:sigterm").Result(); err != nil || n != 1 {
			t.Errorf("after SHUTDOWN NOSAVE and a restart EXISTS not:saved by:sigterm = %d %v, want 1 (by:sigterm only)", n, err)
		}
	})

	t.Run("MISCONF", func(t *testing.T) {
		dir := t.TempDir()
		s := startServerIn(t, dir, args...)
		c := s.client(t, 2)
		ctx := ctxT(t)
		doAll(t, s.Addr, [][]string{{"SET", "k", "v"}})
		gone := filepath.Join(t.TempDir(), "gone")
		if err := os.Mkdir(gone, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.ConfigSet(ctx, "dir", gone).Err(); err != nil {
			t.Fatalf("CONFIG SET dir: %v", err)
		}
		if err := os.Remove(gone); err != nil {
			t.Fatal(err)
		}
		fail := func() {
			t.Helper()
			err := c.BgSave(ctx).Err() // refused at once, or failing in the background
			if st := waitBgsave(t, c, 30*time.Second); st != "err" {
				t.Fatalf("rdb_last_bgsave_status:%s after a BGSAVE into a removed dir (BGSAVE: %v), want err", st, err)
			}
		}
		fail()
		if err := c.Set(ctx, "k", "v2", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF ") {
			t.Errorf("SET after the failed BGSAVE: %v, want -MISCONF", err)
		}
		if err := c.Incr(ctx, "n").Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF ") {
			t.Errorf("INCR after the failed BGSAVE: %v, want -MISCONF", err)
		}
		if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
			t.Errorf("GET after the failed BGSAVE: %q %v, want v", v, err)
		}
		// Redis refuses PING too (processCommand: is_write_command ||
		// c->cmd->proc == pingCommand)
		if err := c.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF ") {
			t.Errorf("PING after the failed BGSAVE: %v, want -MISCONF as Redis", err)
		}
		if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 1 {
			t.Errorf("EXISTS after the failed BGSAVE: %d %v", n, err)
		}
		// a good BGSAVE ends it
		if err := c.ConfigSet(ctx, "dir", dir).Err(); err != nil {
			t.Fatalf("CONFIG SET dir back: %v", err)
		}
		bgsaveOK(t, c)
		if err := c.Set(ctx, "k", "v3", 0).Err(); err != nil {
			t.Errorf("SET after a good BGSAVE: %v", err)
		}
		// stop-writes-on-bgsave-error no: writes go on after a failure
		if err := c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "no").Err(); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(gone, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.ConfigSet(ctx, "dir", gone).Err(); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(gone)
		fail()
		if err := c.Set(ctx, "k", "v4", 0).Err(); err != nil {
			t.Errorf("SET after a failed BGSAVE with stop-writes-on-bgsave-error no: %v", err)
		}
		// SAVE into the removed dir fails too, and writes stay allowed
		if err := c.Save(ctx).Err(); err == nil {
			t.Errorf("SAVE into a removed dir succeeded")
		}
		if err := c.ConfigSet(ctx, "dir", dir).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v4" {
			t.Errorf("GET k = %q %v, want v4", v, err)
		}
	})
}

// TestRDBSaveSchedule: with save "1 1" a write is followed within a few
// seconds by a BGSAVE of the server's own, logged as Redis logs it, and
// the file has the write.
func TestRDBSaveSchedule(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "--shards", "4", "--save", "1 1")
	c := s.client(t, 2)
	ctx := ctxT(t)
	// whatever the start did, no changes are pending
	time.Sleep(1200 * time.Millisecond)
	saves0 := infoField(t, c, "persistence", "rdb_saves")
	time.Sleep(1200 * time.Millisecond)
	if v := infoField(t, c, "persistence", "rdb_saves"); v != saves0 {
		t.Fatalf("rdb_saves went from %s to %s without a write", saves0, v)
	}
	if err := c.Set(ctx, "scheduled", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for infoField(t, c, "persistence", "rdb_saves") == saves0 {
		if time.Now().After(deadline) {
			t.Fatalf("no BGSAVE within 3 s of a write with save \"1 1\" (rdb_saves:%s)", saves0)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := waitBgsave(t, c, 10*time.Second); st != "ok" {
		t.Fatalf("rdb_last_bgsave_status:%s", st)
	}
	if !strings.Contains(s.log.String(), "1 changes in 1 seconds. Saving...") {
		t.Errorf("the log lacks \"1 changes in 1 seconds. Saving...\":\n%s", logTail(s.log.String(), 20))
	}
	if v := infoField(t, c, "persistence", "rdb_changes_since_last_save"); v != "0" {
		t.Errorf("rdb_changes_since_last_save:%s after the scheduled save, want 0", v)
	}
	s.kill9() // no save at shutdown: the file is the schedule's
	s2 := startServerIn(t, dir, "--shards", "4")
	if v, err := s2.client(t, 2).Get(ctx, "scheduled").Result(); err != nil || v != "1" {
		t.Errorf("after kill -9 and a restart GET scheduled = %q %v, want 1 (saved by the schedule)", v, err)
	}
}

// TestRDBStreamKeyNotLost: a BGSAVE or SAVE of a data set with a stream
// either writes the stream (redis-server loads it) or fails; it never
// reports success with the stream left out of the file (it did: the key's
// serialization error was dropped, rdb_last_bgsave_status:ok).
func TestRDBStreamKeyNotLost(t *testing.T) {
	needRedisTools(t)
	dir := t.TempDir()
	s := startServerIn(t, dir, "--shards", "4")
	c := s.client(t, 2)
	ctx := ctxT(t)
	doAll(t, s.Addr, [][]string{{"SET", "k", "v"}, {"XADD", "st", "1-1", "a", "1"}, {"XADD", "st", "2-1", "b", "2"}})
	path := filepath.Join(dir, "dump.rdb")
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%s failed but wrote dump.rdb", what)
			}
			return
		}
		checkRDBFile(t, path)
		rdir := t.TempDir()
		copyFile(t, path, filepath.Join(rdir, "dump.rdb"))
		r := startRedisServer(t, rdir, "--appendonly", "no")
		if n, err := rdbClient(t, r.Addr, 0).XLen(ctx, "st").Result(); err != nil || n != 2 {
			t.Errorf("%s succeeded but redis-server loads XLEN st = %d %v, want 2", what, n, err)
		}
		r.stop(t)
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatalf("BGSAVE: %v", err)
	}
	st := waitBgsave(t, c, 30*time.Second)
	check("BGSAVE", st == "ok")
	check("SAVE", c.Save(ctx).Err() == nil)
}

// TestRDBFlushallResetsDumpFile: with save points, FLUSHALL saves the empty
// data set to dump.rdb at once (Redis 7.0's flushAllDataAndResetRDB), so a
// kill -9 and a restart do not bring the flushed keys back from the older
// file; the function libraries, which FLUSHALL keeps, are in it, and
// rdb_changes_since_last_save is 0. Without save points dump.rdb is left
// alone and the changes stay counted.
func TestRDBFlushallResetsDumpFile(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	args := []string{"--shards", "4", "--save", "900 1", "--appendonly", "no"}
	s := startServerIn(t, dir, args...)
	c := s.client(t, 0)
	for i := 0; i < 100; i++ {
		if err := c.Set(ctx, fmt.Sprintf("k%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.FunctionLoad(ctx, rdbLib).Err(); err != nil {
		t.Fatalf("FUNCTION LOAD: %v", err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	saves := infoField(t, c, "persistence", "rdb_saves")
	if err := c.Set(ctx, "after-save", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if r, err := c.FlushAll(ctx).Result(); err != nil || r != "OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	if v := infoField(t, c, "persistence", "rdb_changes_since_last_save"); v != "0" {
		t.Errorf("rdb_changes_since_last_save:%s after FLUSHALL with save points, want 0", v)
	}
	if v := infoField(t, c, "persistence", "rdb_saves"); v == saves {
		t.Errorf("rdb_saves still %s after FLUSHALL with save points, want one more", v)
	}
	s.kill9()
	s2 := startServerIn(t, dir, args...)
	c2 := s2.client(t, 0)
	if n, err := c2.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("DBSIZE %d %v after FLUSHALL, kill -9 and a restart, want 0 (the old dump.rdb came back)", n, err)
	}
	if r, err := c2.FCall(ctx, "echo1", nil, "x").Result(); err != nil || r != "x" {
		t.Errorf("FCALL echo1 after the restart: %v %v, want x (FLUSHALL keeps the functions, so does its save)", r, err)
	}

	// Without save points: the file is not touched and the changes count.
	if err := c2.ConfigSet(ctx, "save", "").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c2.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if v := infoField(t, c2, "persistence", "rdb_changes_since_last_save"); v == "0" || v == "" {
		t.Errorf("rdb_changes_since_last_save:%s after FLUSHALL without save points, want more than 0", v)
	}
	if st2, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil || !st2.ModTime().Equal(st.ModTime()) || st2.Size() != st.Size() {
		t.Errorf("dump.rdb rewritten by FLUSHALL without save points")
	}
}

// TestRDBFlushallStopsBgsave: FLUSHALL during a (slowed) BGSAVE stops it
// (Redis's killRDBChild) before saving the empty data set: the BGSAVE
// never puts the old data set in place afterwards, no temp file is left,
// and the status stays ok.
func TestRDBFlushallStopsBgsave(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	args := []string{"--shards", "2", "--save", "900 1", "--appendonly", "no", "--enable-debug-command", "yes"}
	s := startServerIn(t, dir, args...)
	c := s.client(t, 0)
	if err := c.Do(ctx, "DEBUG", "POPULATE", "5000").Err(); err != nil {
		t.Fatal(err)
	}
	// 5,000 keys over 2 shards at 1 ms a key: about 2.5 s
	if err := c.ConfigSet(ctx, "rdb-key-save-delay", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatalf("BGSAVE: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if v := infoField(t, c, "persistence", "rdb_bgsave_in_progress"); v != "1" {
		t.Fatalf("rdb_bgsave_in_progress:%s 0.3 s into a slowed BGSAVE, want 1", v)
	}
	start := time.Now()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatalf("FLUSHALL: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("FLUSHALL took %v during the BGSAVE: it serialized the keys instead of stopping it", d)
	}
	if v := infoField(t, c, "persistence", "rdb_bgsave_in_progress"); v != "0" {
		t.Errorf("rdb_bgsave_in_progress:%s after FLUSHALL, want 0", v)
	}
	if v := infoField(t, c, "persistence", "rdb_last_bgsave_status"); v != "ok" {
		t.Errorf("rdb_last_bgsave_status:%s after FLUSHALL stopped the BGSAVE, want ok", v)
	}
	time.Sleep(3 * time.Second) // past the time the BGSAVE would have taken
	if temps, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb")); len(temps) > 0 {
		t.Errorf("temp files left: %v", temps)
	}
	s.kill9()
	s2 := startServerIn(t, dir, args...)
	if n, err := s2.client(t, 0).DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("DBSIZE %d %v after FLUSHALL during a BGSAVE, kill -9 and a restart, want 0", n, err)
	}
}

// rdbFileOf is an RDB file (version 9, no checksum) of db 0 holding items,
// each a type byte, a key and the value's encoded bytes.
func rdbFileOf(items ...[]byte) []byte {
	b := []byte("REDIS0009\xfe\x00")
	for _, it := range items {
		b = append(b, it...)
	}
	return append(b, "\xff\x00\x00\x00\x00\x00\x00\x00\x00"...)
}

// TestRDBLoadSkipsEmptyKeys: empty collections in dump.rdb (an old Redis
// bug could save them) are skipped as Redis 7.0 skips them, each named in
// the log, and the count closes the load's summary line.
func TestRDBLoadSkipsEmptyKeys(t *testing.T) {
	dir := t.TempDir()
	file := rdbFileOf(
		[]byte("\x02\x06emptys\x00"),    // set, 0 members
		[]byte("\x04\x06emptyh\x00"),    // hash, 0 fields
		[]byte("\x00\x04kept\x05value"), // a string
	)
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerIn(t, dir, "--appendonly", "no")
	c := s.client(t, 0)
	if n, err := c.DBSize(ctxT(t)).Result(); err != nil || n != 1 {
		t.Fatalf("DBSIZE %d %v, want 1 (the string; the empty set and hash skipped)", n, err)
	}
	log := s.log.String()
	for _, want := range []string{"rdbLoadObject skipping empty key: emptys", "rdbLoadObject skipping empty key: emptyh",
		"Done loading RDB, keys loaded: 1, keys expired: 0, empty keys skipped: 2."} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, logTail(log, 20))
		}
	}
}

// TestRDBLoadCorruptValueStops: a value that fails its integrity check in
// dump.rdb stops the start with Redis's lines: the reason for its type, the
// report redis-check-rdb adds (the key and its type) and "Terminating
// server after rdb file reading failure.", exit status 1.
func TestRDBLoadCorruptValueStops(t *testing.T) {
	dir := t.TempDir()
	file := rdbFileOf(
		[]byte("\x00\x02ok\x01v"),
		[]byte("\x0c\x04bad!\x03\x01\x02\x03"), // zset ziplist of 3 bytes: no ziplist
	)
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(serverBin, "--port", strconv.Itoa(freePort(t)), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the server still runs 20 s after loading a corrupt dump.rdb:\n%s", out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
	log := string(out)
	if n := strings.Count(log, "Zset ziplist integrity check failed."); n < 2 {
		t.Errorf("\"Zset ziplist integrity check failed.\" %d times in the log, want the reason and the check's report:\n%s", n, logTail(log, 12))
	}
	for _, want := range []string{"--- RDB ERROR DETECTED ---", "[additional info] Reading key 'bad!'",
		"[additional info] Reading type 12 (zset-ziplist)", "# Terminating server after rdb file reading failure."} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, logTail(log, 12))
		}
	}
	if n := strings.Count(log, "Terminating server after rdb file reading failure."); n != 1 {
		t.Errorf("\"Terminating server ...\" %d times, want 1", n)
	}
}
