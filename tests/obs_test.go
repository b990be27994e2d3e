package tests

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SLOWLOG with slowlog-log-slower-than 0 records every command, whichever
// loop ran it, newest first, with its arguments, the client's address and
// name.
func TestObsSlowlogAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "client", "setname", "slowpoke")
	c.Do(ctx, "slowlog", "reset")
	keys := spreadKeys("sl", 4, 1)
	for i, k := range keys {
		if err := c.Set(ctx, k, strconv.Itoa(i), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", 130)
	c.Set(ctx, keys[0], long, 0)

	v, err := c.Do(ctx, "slowlog", "get", "-1").Slice()
	if err != nil {
		t.Fatal(err)
	}
	// newest first: SET long, SET k3 .. k0, SLOWLOG RESET
	if len(v) != 6 {
		t.Fatalf("slowlog get -1: %d entries, want 6: %v", len(v), v)
	}
	argv := func(e any) []string {
		var out []string
		for _, a := range e.([]any)[3].([]any) {
			out = append(out, a.(string))
		}
		return out
	}
	want0 := []string{"set", keys[0], strings.Repeat("x", 128) + "... (2 more bytes)"}
	if got := argv(v[0]); fmt.Sprint(got) != fmt.Sprint(want0) {
		t.Errorf("newest entry argv %q, want %q", got, want0)
	}
	for i := 0; i < 4; i++ {
		e := v[4-i].([]any)
		want := []string{"set", keys[i], strconv.Itoa(i)}
		if got := argv(e); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("entry for key %d: argv %q, want %q", i, got, want)
		}
		if e[5].(string) != "slowpoke" {
			t.Errorf("client name %q", e[5])
		}
		if !strings.HasPrefix(e[4].(string), "127.0.0.1:") {
			t.Errorf("client addr %q", e[4])
		}
	}
	if got := argv(v[5]); fmt.Sprint(got) != "[slowlog reset]" {
		t.Errorf("oldest entry %q, want slowlog reset", got)
	}
	// ids are unique and decreasing
	for i := 1; i < len(v); i++ {
		if v[i-1].([]any)[0].(int64) <= v[i].([]any)[0].(int64) {
			t.Errorf("ids not decreasing at %d: %v", i, v)
		}
	}
	// SLOWLOG GET logged itself after it ran
	if n, _ := c.Do(ctx, "slowlog", "len").Int64(); n != 7 {
		t.Errorf("slowlog len %d, want 7", n)
	}
	// slowlog-max-len caps the merged log
	c.ConfigSet(ctx, "slowlog-max-len", "3")
	if n, _ := c.Do(ctx, "slowlog", "len").Int64(); n != 3 {
		t.Errorf("slowlog len after max-len 3: %d", n)
	}
	// redaction
	c.Do(ctx, "auth", "secret")
	v, _ = c.Do(ctx, "slowlog", "get", "1").Slice()
	if got := argv(v[0]); fmt.Sprint(got) != "[auth (redacted)]" {
		t.Errorf("auth entry %q", got)
	}
	if err := c.Do(ctx, "slowlog", "get", "-2").Err(); err == nil || err.Error() != "ERR count should be greater than or equal to -1" {
		t.Errorf("slowlog get -2: %v", err)
	}
}

// MONITOR streams the commands of other connections, in the order each
// sent them, in Redis's format.
func TestObsMonitor(t *testing.T) {
	s := startServer(t, "--shards", "4")
	mon := s.raw(t)
	mon.do(resp("monitor"), "+OK\r\n")
	c := s.client(t, 2)
	ctx := ctxT(t)
	keys := spreadKeys("mon", 4, 2)
	for _, k := range keys {
		c.Set(ctx, k, "v\n\"x", 0)
	}
	c.Get(ctx, keys[0])
	c.Do(ctx, "config", "get", "port") // admin: not shown
	c.Do(ctx, "auth", "pw")            // shown redacted (and fails)

	re := regexp.MustCompile(`^\+\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] (.*)$`)
	var got []string
	for len(got) < len(keys)+2 {
		l := mon.line()
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("monitor line %q", l)
		}
		if strings.HasPrefix(m[1], `"hello"`) || strings.HasPrefix(m[1], `"client"`) {
			continue // go-redis's connection set-up
		}
		got = append(got, m[1])
	}
	for i, k := range keys {
		if want := fmt.Sprintf(`"set" "%s" "v\n\"x"`, k); got[i] != want {
			t.Errorf("line %d: %s, want %s", i, got[i], want)
		}
	}
	if want := fmt.Sprintf(`"get" "%s"`, keys[0]); got[len(keys)] != want {
		t.Errorf("get line %s, want %s", got[len(keys)], want)
	}
	if want := `"auth" "(redacted)"`; got[len(keys)+1] != want {
		t.Errorf("auth line %s, want %s", got[len(keys)+1], want)
	}
	// CLIENT LIST shows the monitor with flag O
	list, _ := c.ClientList(ctx).Result()
	if !strings.Contains(list, " flags=O ") || !strings.Contains(list, "cmd=monitor") {
		t.Errorf("client list has no monitor: %s", list)
	}
	// A monitor may not touch the keyspace (Redis's monitors are replicas);
	// its other commands are answered, then shown to it.
	mon.do(resp("get", keys[0]), "-ERR Replica can't interact with the keyspace\r\n")
	mon.write(resp("info", "server")) // runs with every loop parked
	n, _ := strconv.Atoi(strings.TrimPrefix(mon.line(), "$"))
	if body := mon.readN(n + 2); !strings.Contains(body, "redis_version:") {
		t.Errorf("info reply %q", body)
	}
	if l := mon.line(); !strings.HasSuffix(l, `] "info" "server"`) {
		t.Errorf("monitor's own command: %q", l)
	}
	// RESET ends it
	mon.write(resp("reset"))
	for {
		if l := mon.line(); l == "+RESET" {
			break
		}
	}
	c.Set(ctx, keys[0], "after", 0)
	mon.do(resp("ping"), "+PONG\r\n")
}

// CLIENT LIST has Redis 7.0's fields in its order.
func TestObsClientListFields(t *testing.T) {
	s := startServer(t, "--shards", "2")
	c := s.client(t, 3)
	ctx := ctxT(t)
	c.Do(ctx, "client", "setname", "lister")
	line, err := c.Do(ctx, "client", "info").Text()
	if err != nil {
		t.Fatal(err)
	}
	fields := []string{"id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub",
		"ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem",
		"tot-mem", "events", "cmd", "user", "redir", "resp"}
	parts := strings.Fields(line)
	if len(parts) < len(fields) {
		t.Fatalf("client info: %q", line)
	}
	vals := map[string]string{}
	for i, f := range fields {
		k, v, ok := strings.Cut(parts[i], "=")
		if !ok || k != f {
			t.Fatalf("field %d is %q, want %s=: %s", i, parts[i], f, line)
		}
		vals[k] = v
	}
	checks := map[string]string{"name": "lister", "flags": "N", "db": "0", "sub": "0", "multi": "-1",
		"qbuf": "26", "obl": "0", "oll": "0", "omem": "0", "events": "r", "cmd": "client|info",
		"user": "default", "redir": "-1", "resp": "3"}
	for k, want := range checks {
		if vals[k] != want {
			t.Errorf("%s=%s, want %s (%s)", k, vals[k], want, line)
		}
	}
	for _, k := range []string{"id", "fd", "age", "idle", "qbuf-free", "tot-mem"} {
		if _, err := strconv.Atoi(vals[k]); err != nil {
			t.Errorf("%s=%q is not a number", k, vals[k])
		}
	}
	if !strings.HasPrefix(vals["addr"], "127.0.0.1:") || vals["laddr"] != s.Addr {
		t.Errorf("addr %s laddr %s", vals["addr"], vals["laddr"])
	}
}

// A client that does not read its replies is closed once its pending
// output passes the hard limit; another client is not disturbed.
func TestObsOutputBufferLimit(t *testing.T) {
	s := startServer(t, "--shards", "2", "--client-output-buffer-limit", "normal 1mb 512kb 1")
	c := s.client(t, 2)
	ctx := ctxT(t)
	big := strings.Repeat("b", 256<<10)
	if err := c.Set(ctx, "big", big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The slow client asks for 64 MB of replies and reads none.
	slow, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if tc, ok := slow.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	req := strings.Repeat(resp("get", "big"), 16)
	deadline := time.Now().Add(10 * time.Second)
	closed := false
	for i := 0; i < 16 && time.Now().Before(deadline); i++ {
		_ = slow.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if _, err := slow.Write([]byte(req)); err != nil {
			closed = true
			break
		}
	}
	for !closed && time.Now().Before(deadline) {
		if !strings.Contains(s.log.String(), "for overcoming of output buffer limits") {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		closed = true
	}
	if !closed {
		t.Fatalf("slow client not closed; log:\n%s", s.log.String())
	}
	// The client may see its connection closed before the line reaches
	// the log (a CI run read the log 11 ms early).
	for !strings.Contains(s.log.String(), "scheduled to be closed ASAP for overcoming of output buffer limits") {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Errorf("log does not say why:\n%s", s.log.String())
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Reading from the slow client ends in EOF (or reset) before 64 MB.
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _ := io.Copy(io.Discard, slow)
	if n >= 64<<20 {
		t.Errorf("slow client got all %d bytes", n)
	}
	// The other client still works, with replies over the soft limit too.
	for i := 0; i < 3; i++ {
		if v, err := c.Get(ctx, "big").Result(); err != nil || len(v) != len(big) {
			t.Fatalf("other client: %d bytes, %v", len(v), err)
		}
	}
	if list, _ := c.ClientList(ctx).Result(); strings.Count(list, "\n") != 1 {
		t.Errorf("client list after the kill:\n%s", list)
	}
}

// The metrics endpoint serves the expected series with plausible values.
func TestObsMetricsEndpoint(t *testing.T) {
	mport := freePort(t)
	s := startServer(t, "--shards", "2", "--metrics-port", strconv.Itoa(mport))
	c := s.client(t, 2)
	ctx := ctxT(t)
	if v, _ := c.ConfigGet(ctx, "metrics-port").Result(); v["metrics-port"] != strconv.Itoa(mport) {
		t.Errorf("config get metrics-port: %v", v)
	}
	if v, _ := c.ConfigGet(ctx, "metrics-bind").Result(); v["metrics-bind"] != "127.0.0.1" {
		t.Errorf("config get metrics-bind: %v", v)
	}
	keys := spreadKeys("m", 2, 5)
	for _, k := range keys {
		c.Set(ctx, k, "v", 0)
	}
	c.Expire(ctx, keys[0], time.Hour)
	for i := 0; i < 7; i++ {
		c.Get(ctx, keys[1])
	}
	c.Do(ctx, "incr", keys[2]) // fails: not an integer
	c.Do(ctx, "nosuchcommand")

	res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	text := string(body)
	want := map[string]float64{
		`redshard_commands_total{cmd="set"}`:                               float64(len(keys)),
		`redshard_commands_total{cmd="get"}`:                               7,
		`redshard_command_errors_total{cmd="incr",kind="failed"}`:          1,
		`redshard_command_duration_seconds_count{cmd="get"}`:               7,
		`redshard_command_duration_seconds_bucket{cmd="get",le="+Inf"}`:    7,
		`redshard_keys{db="0"}`:                                            float64(len(keys)),
		`redshard_expires{db="0"}`:                                         1,
		`redshard_connected_clients`:                                       1,
		`redshard_aof_enabled`:                                             0,
		`redshard_aof_last_write_ok`:                                       1,
		`redshard_rejected_connections_total`:                              0,
		`redshard_expired_keys_total`:                                      0,
		`redshard_evicted_keys_total`:                                      0,
		`redshard_aof_rewrite_in_progress`:                                 0,
		`redshard_aof_rewrites_total`:                                      0,
		`redshard_aof_last_rewrite_ok`:                                     1,
		`redshard_maxmemory_bytes`:                                         0,
		`redshard_client_output_buffer_limit_disconnections_total`:         0,
		`redshard_command_errors_total{cmd="incr",kind="rejected"}`:        0,
		`redshard_command_duration_seconds_bucket{cmd="set",le="+Inf"}`:    float64(len(keys)),
		`redshard_command_duration_seconds_count{cmd="set"}`:               float64(len(keys)),
		`redshard_command_errors_total{cmd="expire",kind="failed"}`:        0,
		`redshard_commands_total{cmd="expire"}`:                            1,
		`redshard_command_duration_seconds_bucket{cmd="expire",le="+Inf"}`: 1,
	}
	got := map[string]float64{}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err == nil {
			got[l[:i]] = v
		}
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("missing %s", k)
		} else if g != v {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
	if got["redshard_used_memory_bytes"] <= 0 {
		t.Errorf("used memory %v", got["redshard_used_memory_bytes"])
	}
	if sum := got[`redshard_command_duration_seconds_sum{cmd="get"}`]; sum <= 0 || sum > 1 {
		t.Errorf("get duration sum %v", sum)
	}
	if !strings.Contains(text, "# TYPE redshard_command_duration_seconds histogram") {
		t.Errorf("no histogram type line")
	}
}

// With appendonly yes the AOF series appear and count fsyncs and groups.
func TestObsMetricsAOF(t *testing.T) {
	mport := freePort(t)
	s := startServer(t, "--shards", "2", "--metrics-port", strconv.Itoa(mport),
		"--appendonly", "yes", "--appendfsync", "always")
	c := s.client(t, 2)
	ctx := ctxT(t)
	for i := 0; i < 20; i++ {
		c.Set(ctx, "k"+strconv.Itoa(i), "v", 0)
	}
	res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	text := string(body)
	count := func(name string) float64 {
		m := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("missing %s", name)
			return -1
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	if n := count("redshard_aof_fsync_duration_seconds_count"); n < 20 {
		t.Errorf("fsyncs %v, want >= 20", n)
	}
	if n := count("redshard_aof_group_commit_batches_count"); n < 20 {
		t.Errorf("groups %v, want >= 20", n)
	}
	// one client, one SET at a time: every group holds one command
	if n := count("redshard_aof_group_commit_commands_sum"); n != count("redshard_aof_group_commit_commands_count") || n < 20 {
		t.Errorf("commands in groups: sum %v, count %v", n, count("redshard_aof_group_commit_commands_count"))
	}
	if n := count("redshard_aof_enabled"); n != 1 {
		t.Errorf("aof enabled %v", n)
	}
	if n := count("redshard_aof_write_errors_total"); n != 0 {
		t.Errorf("write errors %v", n)
	}
}

// LATENCY: events over the threshold, history, reset, and the per-command
// histograms summed over the loops.
func TestObsLatency(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	c.ConfigSet(ctx, "latency-monitor-threshold", "10")
	if err := c.Do(ctx, "debug", "sleep", "0.03").Err(); err != nil {
		t.Fatal(err)
	}
	v, err := c.Do(ctx, "latency", "latest").Slice()
	if err != nil || len(v) != 1 {
		t.Fatalf("latency latest: %v %v", v, err)
	}
	e := v[0].([]any)
	if e[0] != "command" || e[2].(int64) < 30 || e[3].(int64) < 30 || e[1].(int64) < time.Now().Unix()-60 {
		t.Errorf("latest %v", e)
	}
	h, _ := c.Do(ctx, "latency", "history", "command").Slice()
	if len(h) != 1 || h[0].([]any)[1].(int64) < 30 {
		t.Errorf("history %v", h)
	}
	if g, _ := c.Do(ctx, "latency", "graph", "command").Text(); !strings.HasPrefix(g, "command - high ") {
		t.Errorf("graph %q", g)
	}
	if err := c.Do(ctx, "latency", "graph", "nosuch").Err(); err == nil || err.Error() != "ERR No samples available for event 'nosuch'" {
		t.Errorf("graph of an unknown event: %v", err)
	}
	if n, _ := c.Do(ctx, "latency", "reset").Int64(); n != 1 {
		t.Errorf("reset: %d", n)
	}
	if v, _ := c.Do(ctx, "latency", "latest").Slice(); len(v) != 0 {
		t.Errorf("latest after reset: %v", v)
	}

	c.Do(ctx, "config", "resetstat")
	keys := spreadKeys("lh", 4, 3)
	for _, k := range keys {
		c.Set(ctx, k, "v", 0)
	}
	m, err := c.Do(ctx, "latency", "histogram", "set", "config").Slice()
	if err != nil {
		t.Fatal(err)
	}
	hist := map[string][]any{}
	for i := 0; i+1 < len(m); i += 2 {
		hist[m[i].(string)] = m[i+1].([]any)
	}
	if len(hist) != 2 || hist["set"] == nil || hist["config|resetstat"] == nil {
		t.Fatalf("histogram: %v", m)
	}
	if hist["set"][0] != "calls" || hist["set"][1].(int64) != int64(len(keys)) || hist["set"][2] != "histogram_usec" {
		t.Errorf("set histogram %v", hist["set"])
	}
	buckets := hist["set"][3].([]any)
	if last := buckets[len(buckets)-1].(int64); last != int64(len(keys)) {
		t.Errorf("cumulative count ends at %d, want %d: %v", last, len(keys), buckets)
	}
	info, _ := c.Info(ctx, "latencystats").Result()
	if !regexp.MustCompile(`latency_percentiles_usec_set:p50=[0-9.]+,p99=[0-9.]+,p99\.9=[0-9.]+`).MatchString(info) {
		t.Errorf("info latencystats:\n%s", info)
	}
}

// MONITOR shows a script once, then the commands it called, also when it
// reached keys of other shards and ran again over every shard (its first
// run did not happen), as Redis shows EVAL and FCALL (integration test
// "MONITOR can log commands issued by functions").
func TestMonitorShowsAScriptOnce(t *testing.T) {
	s := startServer(t, "--shards", "4")
	mon := s.raw(t)
	mon.do(resp("monitor"), "+OK\r\n")
	rc := s.raw(t)
	keys := spreadKeys("scr", 4, 1) // one per shard: whatever rc's loop, some are elsewhere
	body := "redis.call('set', '" + strings.Join(keys, "', 'v') redis.call('set', '") + "', 'v')"
	rc.do(resp("function", "load", "#!lua name=lib\nredis.register_function('f', function() "+body+" return 1 end)"), bulk("lib"))
	rc.do(resp("fcall", "f", "0"), ":1\r\n")
	rc.do(resp("eval", body+" return 2", "0"), ":2\r\n")
	rc.do(resp("ping"), "+PONG\r\n")

	re := regexp.MustCompile(`^\+\d+\.\d{6} \[0 (lua|127\.0\.0\.1:\d+)\] (.*)$`)
	var got []string
	for {
		l := mon.line()
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("monitor line %q", l)
		}
		if m[2] == `"ping"` {
			break
		}
		if m[1] == "lua" {
			m[2] = "lua " + m[2]
		}
		got = append(got, m[2])
	}
	var want []string
	want = append(want, got[0]) // FUNCTION LOAD
	want = append(want, `"fcall" "f" "0"`)
	for _, k := range keys {
		want = append(want, fmt.Sprintf(`lua "set" "%s" "v"`, k))
	}
	want = append(want, fmt.Sprintf(`"eval" "%s return 2" "0"`, body))
	for _, k := range keys {
		want = append(want, fmt.Sprintf(`lua "set" "%s" "v"`, k))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("monitor lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
