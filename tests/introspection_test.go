package tests

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// CONFIG SET is all or nothing: a value that fails to parse, or an option
// whose apply fails (a port already in use), leaves every option of the
// call as it was, with Redis's error naming the culprit.
func TestConfigSetRollback(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.ConfigSet(ctx, "maxmemory", "10000002").Err(); err != nil {
		t.Fatal(err)
	}
	err := c.Do(ctx, "config", "set", "maxmemory", "10000001", "maxmemory-clients", "200%", "client-query-buffer-limit", "invalid").Err()
	if want := "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100"; err == nil || err.Error() != want {
		t.Errorf("set error: %v", err)
	}
	for k, want := range map[string]string{"maxmemory": "10000002", "maxmemory-clients": "0", "client-query-buffer-limit": "1073741824"} {
		if got := c.ConfigGet(ctx, k).Val()[k]; got != want {
			t.Errorf("after a failed CONFIG SET, %s = %q, want %q", k, got, want)
		}
	}

	busy, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	used := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	err = c.Do(ctx, "config", "set", "maxmemory", "10000001", "port", used, "client-query-buffer-limit", "10m").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port") {
		t.Errorf("apply error: %v", err)
	}
	for k, want := range map[string]string{"maxmemory": "10000002", "port": strconv.Itoa(s.Port), "client-query-buffer-limit": "1073741824"} {
		if got := c.ConfigGet(ctx, k).Val()[k]; got != want {
			t.Errorf("after a failed apply, %s = %q, want %q", k, got, want)
		}
	}
	if err := s.client(t, 2).Ping(ctx).Err(); err != nil {
		t.Errorf("no service on the original port: %v", err)
	}
}

// CONFIG SET port listens on the new port at once; setting the old one
// back closes it again.
func TestConfigSetPortListens(t *testing.T) {
	s := startServer(t, "--shards", "2")
	c := s.client(t, 2)
	ctx := ctxT(t)
	np := freePort(t)
	if err := c.ConfigSet(ctx, "port", strconv.Itoa(np)).Err(); err != nil {
		t.Fatal(err)
	}
	c2 := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", np), MaxRetries: -1, DisableIdentity: true})
	defer c2.Close()
	for i := 0; i < 4; i++ { // connections go to every loop
		if err := c2.Set(ctx, fmt.Sprint("k", i), "v", 0).Err(); err != nil {
			t.Fatalf("on the new port: %v", err)
		}
	}
	if v := c.Get(ctx, "k3").Val(); v != "v" {
		t.Errorf("write on the new port not seen: %q", v)
	}
	if err := c.ConfigSet(ctx, "port", strconv.Itoa(s.Port)).Err(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", np), time.Second); err == nil {
		conn.Close()
		t.Errorf("port %d still accepts after CONFIG SET port back", np)
	}
}

// CONFIG GET takes several names and patterns, reports each option once,
// aliases under their own name; every option CONFIG GET * shows can be set
// back to its value (Redis's "CONFIG sanity" list of exceptions aside).
func TestConfigGetManyAndSanity(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	ctx := ctxT(t)
	res, err := c.Do(ctx, "config", "get", "maxmemory", "maxmemory*", "bind", "*of").Slice()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for i := 0; i+1 < len(res); i += 2 {
		k := res[i].(string)
		if _, dup := seen[k]; dup {
			t.Errorf("%s twice", k)
		}
		seen[k] = res[i+1].(string)
	}
	for _, k := range []string{"maxmemory", "maxmemory-samples", "maxmemory-clients", "bind", "replicaof", "slaveof"} {
		if _, ok := seen[k]; !ok {
			t.Errorf("no %s in %v", k, seen)
		}
	}
	skip := strings.Fields(`rdbchecksum daemonize io-threads-do-reads tcp-backlog always-show-logo syslog-enabled
		cluster-enabled disable-thp aclfile unixsocket pidfile syslog-ident appendfilename appenddirname supervised
		syslog-facility databases io-threads logfile unixsocketperm replicaof slaveof requirepass server_cpulist
		bio_cpulist aof_rewrite_cpulist bgsave_cpulist set-proc-title cluster-config-file cluster-port oom-score-adj
		oom-score-adj-values enable-protected-configs enable-debug-command enable-module-command dbfilename dir
		socket-mark-id`)
	before := c.ConfigGet(ctx, "*").Val()
	if v, ok := before["enable-failpoints"]; !ok || v != "no" {
		t.Errorf("CONFIG GET *: enable-failpoints %q (present %v), want \"no\"", v, ok)
	}
	for k, v := range before {
		if slices.Contains(skip, k) {
			continue
		}
		if err := c.ConfigSet(ctx, k, v).Err(); err != nil {
			t.Errorf("CONFIG SET %s %q: %v", k, v, err)
		}
	}
	after := c.ConfigGet(ctx, "*").Val()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %q became %q", k, v, after[k])
		}
	}
}

// INFO latencystats: the percentiles come from an HDR histogram with two
// significant digits, so they lie within 1% above the real durations
// (which each client round trip bounds from above).
func TestLatencyStatsPrecision(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	c.ConfigSet(ctx, "latency-tracking-info-percentiles", "0 50 100")
	c.ConfigResetStat(ctx)
	var rtts []float64
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		if err := c.Do(ctx, "debug", "sleep", "0.02").Err(); err != nil {
			t.Fatal(err)
		}
		rtts = append(rtts, float64(time.Since(t0).Microseconds()))
	}
	slices.Sort(rtts)
	info := c.Info(ctx, "latencystats").Val()
	m := regexp.MustCompile(`latency_percentiles_usec_debug:p0=([0-9.]+),p50=([0-9.]+),p100=([0-9.]+)\r\n`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no debug line in\n%s", info)
	}
	for i, rtt := range []float64{rtts[0], rtts[2], rtts[4]} {
		got, _ := strconv.ParseFloat(m[i+1], 64)
		// p0 is the lowest value of its counter, as hdr_value_at_percentile
		// gives it: up to one counter's width (1/128) below the duration.
		lo := 20000.0
		if i == 0 {
			lo *= 1 - 1.0/128
		}
		if got < lo || got > rtt*1.01 {
			t.Errorf("%s percentile %.3f µs: want within [%.0f, %.0f×1.01] (round trips %v)", []string{"p0", "p50", "p100"}[i], got, lo, rtt, rtts)
		}
	}
}

// An error reply from CLIENT UNBLOCK ... ERROR is a failed call of the
// blocked command, counted in errorstats.
func TestErrorStatsUnblocked(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	ctx := ctxT(t)
	c.ConfigResetStat(ctx)
	bc := s.client(t, 2)
	id := bc.ClientID(ctx).Val()
	done := make(chan error, 1)
	go func() { done <- bc.BLPop(ctx, 0, "list1{t}").Err() }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(c.Info(ctx, "clients").Val(), "blocked_clients:1") {
		if time.Now().After(deadline) {
			t.Fatal("client never blocked")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := c.ClientUnblockWithError(ctx, id).Val(); n != 1 {
		t.Fatalf("client unblock: %d", n)
	}
	if err := <-done; err == nil || !strings.HasPrefix(err.Error(), "UNBLOCKED") {
		t.Errorf("blpop: %v", err)
	}
	info := c.Info(ctx, "errorstats", "commandstats", "stats").Val()
	for _, re := range []string{`errorstat_UNBLOCKED:count=1\r\n`, `cmdstat_blpop:calls=1,[^\r]*,rejected_calls=0,failed_calls=1\r\n`, `total_error_replies:1\r\n`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("no %s in\n%s", re, info)
		}
	}
}

// rename-command: the command answers to its new name only, keeps its
// original name in INFO commandstats, and a CONFIG REWRITE keeps the
// directive, so the rename survives a restart.
func TestRenameCommandSurvivesRewrite(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/redis.conf"
	if err := os.WriteFile(conf, []byte("rename-command flushdb badger\nrename-command flushall \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerIn(t, dir, configFileArg(conf), "--shards", "2")
	c := s.client(t, 2)
	ctx := ctxT(t)
	runSteps(t, c, []step{
		cmd("set", "k", "v").is("OK"),
		cmd("flushdb").is(errReply("ERR unknown command 'flushdb', with args beginning with: ")),
		cmd("flushall").is(errReply("ERR unknown command 'flushall', with args beginning with: ")),
		cmd("badger").is("OK"),
		cmd("dbsize").is(int64(0)),
		cmd("config", "rewrite").is("OK"),
	})
	if st := c.Info(ctx, "commandstats").Val(); !strings.Contains(st, "cmdstat_flushdb:calls=1,") || strings.Contains(st, "cmdstat_badger") {
		t.Errorf("commandstats after BADGER:\n%s", st)
	}
	s.stop()
	s = startServerIn(t, dir, configFileArg(conf), "--shards", "2")
	c = s.client(t, 2)
	runSteps(t, c, []step{
		cmd("flushdb").is(errReply("ERR unknown command 'flushdb', with args beginning with: ")),
		cmd("badger").is("OK"),
	})
}

// DEBUG CONFIG-REWRITE-FORCE-ALL writes every option, defaults included,
// and the server starts again from the file with the same configuration;
// shutdown-on-sigint/sigterm take SHUTDOWN's flags.
func TestDebugConfigRewriteForceAll(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/redis.conf"
	if err := os.WriteFile(conf, []byte("enable-debug-command yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerIn(t, dir, configFileArg(conf))
	c := s.client(t, 2)
	ctx := ctxT(t)
	runSteps(t, c, []step{
		cmd("config", "set", "shutdown-on-sigterm", "nosave now").is("OK"),
		cmd("config", "get", "shutdown-on-sigterm").is([]any{"shutdown-on-sigterm", "nosave now"}),
		cmd("config", "set", "shutdown-on-sigint", "save nosave").is(errReply("ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigint') - shutdown options SAVE and NOSAVE can't be used simultaneously")),
		cmd("debug", "config-rewrite-force-all").is("OK"),
	})
	before := c.ConfigGet(ctx, "*").Val()
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"\nhz 10\n", "\nshutdown-on-sigint default\n", "\nshutdown-on-sigterm nosave now\n", "\nmaxmemory-policy noeviction\n"} {
		if !strings.Contains(string(data), line) {
			t.Errorf("rewritten file lacks %q", line)
		}
	}
	s.stop()
	s = startServerIn(t, dir, configFileArg(conf))
	after := s.client(t, 2).ConfigGet(ctx, "*").Val()
	for k, v := range before {
		if k == "port" {
			continue // the harness picks a new one
		}
		if after[k] != v {
			t.Errorf("after restart %s = %q, was %q", k, after[k], v)
		}
	}
}

// CLUSTER and the cluster connection commands answer as a standalone Redis
// 7.0 does (cluster-enabled no), after the usual arity and subcommand
// checks; COMMAND LIST shows them, as redis-server lists them.
func TestClusterCommandsInStandaloneMode(t *testing.T) {
	s := startServer(t, "--shards", "2")
	c := s.client(t, 2)
	const disabled = errReply("ERR This instance has cluster support disabled")
	runSteps(t, c, []step{
		cmd("cluster").is(errReply("ERR wrong number of arguments for 'cluster' command")),
		cmd("cluster", "help").is(disabled),
		cmd("cluster", "info").is(disabled),
		cmd("cluster", "keyslot", "x").is(disabled),
		cmd("cluster", "info", "x").is(errReply("ERR wrong number of arguments for 'cluster|info' command")),
		cmd("cluster", "foo").is(errReply("ERR unknown subcommand 'foo'. Try CLUSTER HELP.")),
		cmd("readonly").is(disabled),
		cmd("readwrite").is(disabled),
		cmd("asking").is(disabled),
		cmd("command", "list", "filterby", "pattern", "cluster|h*").is([]any{"cluster|help"}),
	})
}

// MODULE answers as a Redis with no module loaded: redshard loads none.
// LOAD, LOADEX and UNLOAD are protected by enable-module-command, as in
// Redis; LIST and HELP are not.
func TestModuleCommand(t *testing.T) {
	ctx := ctxT(t)
	off := startServer(t).client(t, 2)
	const notAllowed = `ERR MODULE command not allowed. If the enable-module-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`
	for _, args := range [][]any{{"module", "load", "/x.so"}, {"module", "loadex", "/x.so"}, {"module", "unload", "x"}} {
		if err := off.Do(ctx, args...).Err(); err == nil || err.Error() != notAllowed {
			t.Errorf("%v without enable-module-command: %v", args, err)
		}
	}
	if v, err := off.Do(ctx, "module", "list").Slice(); err != nil || len(v) != 0 {
		t.Errorf("MODULE LIST: %v %v", v, err)
	}

	s := startServer(t, "--enable-module-command", "yes")
	c := s.client(t, 2)
	if v, err := c.Do(ctx, "module", "list").Slice(); err != nil || len(v) != 0 {
		t.Errorf("MODULE LIST: %v %v", v, err)
	}
	for _, args := range [][]any{{"module", "load", "/x.so", "a"}, {"module", "loadex", "/x.so", "CONFIG", "a", "b", "ARGS", "c"}} {
		if err := c.Do(ctx, args...).Err(); err == nil || err.Error() != "ERR Error loading the extension. Please check the server logs." {
			t.Errorf("%v: %v", args, err)
		}
	}
	// The log reaches the test through the server's stdout, after the reply.
	waitFor(t, "the log line of the failed load", func() bool {
		return strings.Contains(s.log.String(), "Module /x.so failed to load: redshard does not load Redis modules")
	})
	if err := c.Do(ctx, "module", "unload", "x").Err(); err == nil || err.Error() != "ERR Error unloading module: no such module with that name" {
		t.Errorf("MODULE UNLOAD: %v", err)
	}
	if v, err := c.Do(ctx, "module", "help").StringSlice(); err != nil || len(v) != 11 || v[1] != "LIST" {
		t.Errorf("MODULE HELP: %q %v", v, err)
	}
}

// LOLWUT is Redis 7.0's: the version line by default, and with VERSION 5
// Georg Nees's "Schotter" drawn exactly as redis-server draws it where
// nothing is random (two rows of squares: the randomness starts at the
// third), VERSION 6 a skyline of the size asked.
func TestLolwut(t *testing.T) {
	ctx := ctxT(t)
	c := startServer(t).client(t, 2)
	if v, err := c.Do(ctx, "lolwut").Text(); err != nil || v != "Redis ver. 7.0.15\n" {
		t.Errorf("LOLWUT: %q %v", v, err)
	}
	if err := c.Do(ctx, "lolwut", "version", "x").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
		t.Errorf("LOLWUT VERSION x: %v", err)
	}
	sky, err := c.Do(ctx, "lolwut", "version", "6", "30", "7").Text()
	lines := strings.Split(sky, "\n")
	if err != nil || len(lines) != 10 || strings.Count(lines[0], "\033[0m") != 30 || !strings.HasSuffix(sky, "Plaguemon by hikikomori. Redis ver. 7.0.15\n") {
		t.Errorf("LOLWUT VERSION 6 30 7: %q %v", sky, err)
	}
	rc := redisBeside(t)
	for _, args := range [][]any{{"lolwut", "version", "5", "40", "5", "2"}, {"lolwut", "version", "5", "7", "1", "1"}, {"lolwut", "version", "4"}, {"lolwut", "version", "5", "0", "-3", "-9"}} {
		got, err1 := c.Do(ctx, args...).Text()
		want, err2 := rc.Do(ctx, args...).Text()
		if err1 != nil || err2 != nil {
			t.Fatalf("%v: %v %v", args, err1, err2)
		}
		if got != want {
			t.Errorf("%v:\nredshard:\n%s\nredis-server:\n%s", args, got, want)
		}
	}
	// The default drawing: the first two rows of squares (8 lines of
	// text) are not random.
	got, _ := c.Do(ctx, "lolwut", "version", "5").Text()
	want, _ := rc.Do(ctx, "lolwut", "version", "5").Text()
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	if len(gl) != len(wl) || strings.Join(gl[:8], "\n") != strings.Join(wl[:8], "\n") {
		t.Errorf("LOLWUT VERSION 5: %d lines, redis-server %d; first lines:\n%s\n%s", len(gl), len(wl), strings.Join(gl[:8], "\n"), strings.Join(wl[:8], "\n"))
	}
}
