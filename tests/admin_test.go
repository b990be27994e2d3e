package tests

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server administration commands: INFO, CONFIG, CLIENT, COMMAND, DEBUG and
// SHUTDOWN, with Redis's replies and field names.

// infoFields parses an INFO reply into name → value.
func infoFields(info string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(info, "\r\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

func TestINFO(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ctx := ctxT(t)
	ks := spreadKeys("info:", nShards, 1)
	if err := c.MSet(ctx, ks[0], "1", ks[1], "2", ks[2], "3").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Expire(ctx, ks[0], time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	_ = c.Do(ctx, "GET").Err() // one arity error for errorstats

	all, err := c.Info(ctx).Result()
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	for _, section := range []string{"# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication", "# CPU", "# Keyspace"} {
		if !strings.Contains(all, section+"\r\n") {
			t.Errorf("INFO lacks section %q", section)
		}
	}
	f := infoFields(all)
	for name, want := range map[string]string{
		"redis_version": "7.0.15",
		"redis_mode":    "standalone",
		"tcp_port":      strconv.Itoa(s.Port),
		"role":          "master",
		"aof_enabled":   "0",
		"loading":       "0",
	} {
		if f[name] != want {
			t.Errorf("INFO %s = %q, want %q", name, f[name], want)
		}
	}
	for _, name := range []string{"process_id", "uptime_in_seconds", "connected_clients", "used_memory", "total_commands_processed", "total_connections_received", "instantaneous_ops_per_sec", "used_cpu_sys"} {
		if _, err := strconv.ParseFloat(f[name], 64); err != nil {
			t.Errorf("INFO %s = %q, want a number", name, f[name])
		}
	}
	if !regexp.MustCompile(`^keys=3,expires=1,avg_ttl=\d+$`).MatchString(f["db0"]) {
		t.Errorf("INFO db0 = %q, want keys=3,expires=1,avg_ttl=N", f["db0"])
	}

	// sections by name, and commandstats/errorstats (not in the default set)
	ks2, err := c.Info(ctx, "keyspace").Result()
	if err != nil || !strings.HasPrefix(ks2, "# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=") || strings.Contains(ks2, "# Server") {
		t.Errorf("INFO keyspace = %q, %v", ks2, err)
	}
	cs := infoFields(c.Info(ctx, "commandstats").Val())
	if !regexp.MustCompile(`^calls=1,usec=\d+,usec_per_call=[\d.]+,rejected_calls=0,failed_calls=0$`).MatchString(cs["cmdstat_mset"]) {
		t.Errorf("INFO commandstats cmdstat_mset = %q", cs["cmdstat_mset"])
	}
	if !regexp.MustCompile(`^calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0$`).MatchString(cs["cmdstat_get"]) {
		t.Errorf("INFO commandstats cmdstat_get = %q", cs["cmdstat_get"])
	}
	es := infoFields(c.Info(ctx, "errorstats").Val())
	if es["errorstat_ERR"] != "count=1" {
		t.Errorf("INFO errorstats errorstat_ERR = %q, want count=1", es["errorstat_ERR"])
	}
	if got := c.Info(ctx, "nosuchsection").Val(); got != "" {
		t.Errorf("INFO nosuchsection = %q, want empty", got)
	}
	runSteps(t, c, []step{
		cmd("CONFIG", "RESETSTAT").is("OK"),
	})
	cs = infoFields(c.Info(ctx, "commandstats").Val())
	if _, ok := cs["cmdstat_mset"]; ok {
		t.Errorf("cmdstat_mset survives CONFIG RESETSTAT: %q", cs["cmdstat_mset"])
	}
}

func TestCONFIG(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards), "--maxmemory", "10mb")
	c := s.client(t, 2)
	runSteps(t, c, []step{
		cmd("CONFIG", "GET", "maxmemory").is([]any{"maxmemory", "10485760"}),
		cmd("CONFIG", "SET", "maxmemory", "100mb").is("OK"),
		cmd("CONFIG", "GET", "maxmemory").is([]any{"maxmemory", "104857600"}),
		cmd("CONFIG", "SET", "maxmemory", "abc").is(errReply("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value")),
		cmd("CONFIG", "SET", "foo", "bar").is(errReply("ERR Unknown option or number of arguments for CONFIG SET - 'foo'")),
		cmd("CONFIG", "SET", "daemonize", "yes").is(errReply("ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config")),
		cmd("CONFIG", "SET", "shards", "2").is(errReply("ERR CONFIG SET failed (possibly related to argument 'shards') - can't set immutable config")),
		cmd("CONFIG", "GET", "appendonly").is([]any{"appendonly", "no"}),
		cmd("CONFIG", "GET", "save").is([]any{"save", ""}),
		cmd("CONFIG", "GET", "bind").is([]any{"bind", "127.0.0.1"}),
		cmd("CONFIG", "GET", "shards").is([]any{"shards", "4"}),
		cmd("CONFIG", "GET", "nosuchoption").is([]any{}),
		cmd("CONFIG", "SET", "hz", "20", "maxmemory-policy", "allkeys-lru").is("OK"),
		cmd("CONFIG", "GET", "hz").is([]any{"hz", "20"}),
		cmd("CONFIG", "GET", "maxmemory-policy").is([]any{"maxmemory-policy", "allkeys-lru"}),
	})
	t.Run("CONFIG GET pattern", func(t *testing.T) {
		ctx := ctxT(t)
		for pattern, want := range map[string][]string{
			"maxmemory*": {"maxmemory", "maxmemory-clients", "maxmemory-eviction-tenacity", "maxmemory-policy", "maxmemory-samples"},
			"append*":    {"appenddirname", "appendfilename", "appendfsync", "appendonly"},
		} {
			got, err := c.ConfigGet(ctx, pattern).Result()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for k := range got {
				names = append(names, k)
			}
			sort.Strings(names)
			if strings.Join(names, " ") != strings.Join(want, " ") {
				t.Errorf("CONFIG GET %s names %v, want %v", pattern, names, want)
			}
		}
	})
}

func TestCLIENT(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ctx := ctxT(t)
	conn := c.Conn()
	defer conn.Close()

	id, err := conn.ClientID(ctx).Result()
	if err != nil || id <= 0 {
		t.Fatalf("CLIENT ID = %d, %v", id, err)
	}
	for _, st := range []step{
		cmd("CLIENT", "GETNAME").is(null),
		cmd("CLIENT", "SETNAME", "worker-1").is("OK"),
		cmd("CLIENT", "GETNAME").is("worker-1"),
		cmd("CLIENT", "SETNAME", "a b").is(errReply("ERR Client names cannot contain spaces, newlines or special characters.")),
		cmd("CLIENT", "NOPE").is(errReply("ERR unknown subcommand 'NOPE'. Try CLIENT HELP.")),
		cmd("CLIENT", "KILL", "ID", "999999").is(0),
		cmd("CLIENT", "KILL", "127.0.0.1:1").is(errReply("ERR No such client")),
	} {
		checkReply(t, conn.Do(ctx, st.args...), st.args, st.want)
	}
	info, err := conn.Do(ctx, "CLIENT", "INFO").Text()
	if err != nil || !strings.HasPrefix(info, "id="+strconv.FormatInt(id, 10)+" addr=127.0.0.1:") || !strings.Contains(info, " name=worker-1 ") {
		t.Errorf("CLIENT INFO = %q, %v", info, err)
	}

	// a raw connection on (very likely) another loop shows up in CLIENT LIST
	// and can be killed from here
	victim := s.raw(t)
	victim.do(resp("CLIENT", "SETNAME", "victim"), "+OK\r\n")
	victim.write(resp("CLIENT", "ID"))
	victim.expect(":")
	vid := victim.line()
	list, err := conn.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, "id="+vid+" ") || !strings.Contains(list, " name=victim ") || !strings.Contains(list, " name=worker-1 ") {
		t.Errorf("CLIENT LIST lacks the clients:\n%s", list)
	}
	if lines := strings.Count(list, "\n"); lines != 2 {
		t.Errorf("CLIENT LIST has %d lines, want 2 (internal connections must not show):\n%s", lines, list)
	}
	checkReply(t, conn.Do(ctx, "CLIENT", "KILL", "ID", vid), nil, int64(1))
	victim.expectClosed()
}

func TestCOMMAND(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 2)
	ctx := ctxT(t)
	count, err := c.Do(ctx, "COMMAND", "COUNT").Int64()
	if err != nil {
		t.Fatalf("COMMAND COUNT: %v", err)
	}
	list, err := c.Do(ctx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatalf("COMMAND LIST: %v", err)
	}
	// COMMAND LIST names subcommands too ("config|get"); COMMAND COUNT
	// counts only the commands themselves.
	top := 0
	for _, n := range list {
		if !strings.Contains(n, "|") {
			top++
		}
	}
	if int64(top) != count || count < 50 {
		t.Errorf("COMMAND COUNT = %d, COMMAND LIST has %d names without '|'", count, top)
	}
	have := map[string]bool{}
	for _, n := range list {
		have[n] = true
	}
	for _, n := range []string{"get", "set", "mset", "del", "scan", "ping", "hello", "info", "config", "config|get", "client", "client|list", "command", "select"} {
		if !have[n] {
			t.Errorf("COMMAND LIST lacks %q", n)
		}
	}
	runSteps(t, c, []step{
		cmd("COMMAND", "INFO", "get").is([]any{[]any{
			"get", int64(2), []any{"readonly", "fast"}, int64(1), int64(1), int64(1),
			[]any{"@read", "@string", "@fast"}, []any{},
			[]any{[]any{"flags", []any{"RO", "access"},
				"begin_search", []any{"type", "index", "spec", []any{"index", int64(1)}},
				"find_keys", []any{"type", "range", "spec", []any{"lastkey", int64(0), "keystep", int64(1), "limit", int64(0)}}}},
			[]any{},
		}}),
		cmd("COMMAND", "INFO", "nosuchcommand").is([]any{nil}),
		cmd("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2").is([]any{"a", "b"}),
		cmd("COMMAND", "GETKEYS", "GET").is(errReply("ERR wrong number of arguments for 'command|getkeys' command")),
		cmd("COMMAND", "FOO").is(errReply("ERR unknown subcommand 'FOO'. Try COMMAND HELP.")),
	})
	// the order of COMMAND LIST is unspecified
	ms, err := c.Do(ctx, "COMMAND", "LIST", "FILTERBY", "PATTERN", "mse*").StringSlice()
	sort.Strings(ms)
	if err != nil || strings.Join(ms, " ") != "mset msetnx" {
		t.Errorf("COMMAND LIST FILTERBY PATTERN mse* = %v, %v", ms, err)
	}
	// COMMAND DOCS, which redis-cli reads for its hints: Redis 7.0's shape and
	// argument specs (the summaries are our own words).
	t.Run("COMMAND DOCS", func(t *testing.T) {
		for name, firstArgs := range map[string][]string{
			"set":  {"key", "value", "condition", "get", "expiration"},
			"get":  {"key"},
			"mset": {"key_value"},
		} {
			docs, err := c.Do(ctx, "COMMAND", "DOCS", name).Slice()
			if err != nil || len(docs) != 2 || docs[0] != name {
				t.Errorf("COMMAND DOCS %s = %#v, %v", name, docs, err)
				continue
			}
			d, ok := docs[1].([]any)
			if !ok || len(d) < 6 || d[0] != "summary" || d[2] != "since" || d[4] != "group" || d[5] != "string" {
				t.Errorf("COMMAND DOCS %s = %#v", name, docs[1])
				continue
			}
			if s, _ := d[1].(string); s == "" {
				t.Errorf("COMMAND DOCS %s has an empty summary", name)
			}
			var args []any
			for i := 0; i+1 < len(d); i += 2 {
				if d[i] == "arguments" {
					args, _ = d[i+1].([]any)
				}
			}
			var names []string
			for _, a := range args {
				fields, _ := a.([]any)
				if len(fields) >= 2 && fields[0] == "name" {
					names = append(names, fields[1].(string))
				}
			}
			if strings.Join(names, " ") != strings.Join(firstArgs, " ") {
				t.Errorf("COMMAND DOCS %s argument names = %v, want %v", name, names, firstArgs)
			}
		}
	})
	// go-redis parses the full COMMAND reply
	cmds, err := c.Command(ctx).Result()
	if err != nil {
		t.Fatalf("COMMAND via go-redis: %v", err)
	}
	if g := cmds["get"]; g == nil || g.Arity != 2 || g.FirstKeyPos != 1 || !g.ReadOnly {
		t.Errorf("COMMAND get = %+v", g)
	}
}

func TestDEBUG(t *testing.T) {
	t.Run("not allowed by default", func(t *testing.T) {
		s := startServer(t, "--shards", "2")
		runSteps(t, s.client(t, 2), []step{
			cmd("DEBUG", "SLEEP", "0").is(errReply("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")),
		})
	})
	t.Run("enabled", func(t *testing.T) {
		s := startServer(t, "--shards", strconv.Itoa(nShards), "--enable-debug-command", "yes")
		c := s.client(t, 2)
		start := time.Now()
		runSteps(t, c, []step{
			cmd("DEBUG", "SLEEP", "0").is("OK"),
			cmd("DEBUG", "SLEEP", "0.2").is("OK"),
		})
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("DEBUG SLEEP 0.2 returned after %v", d)
		}
		// with active expiry off, an expired key stays counted until touched
		runSteps(t, c, []step{
			cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0").is("OK"),
			cmd("SET", "k", "v", "PX", 1).is("OK"),
		})
		time.Sleep(300 * time.Millisecond)
		runSteps(t, c, []step{
			cmd("DBSIZE").is(1),
			cmd("GET", "k").is(null),
			cmd("DBSIZE").is(0),
			cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1").is("OK"),
			cmd("DEBUG", "NOSUCH").is(errReply("ERR unknown subcommand or wrong number of arguments for 'NOSUCH'. Try DEBUG HELP.")),
		})
	})
}

// SHUTDOWN NOSAVE closes the connection and ends the process with status 0.
func TestSHUTDOWN(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	rc := s.raw(t)
	rc.write(resp("SHUTDOWN", "NOSAVE"))
	rc.expectClosed()
	select {
	case <-s.done:
		if s.err != nil {
			t.Errorf("exit status after SHUTDOWN: %v, want 0", s.err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("server still running 10s after SHUTDOWN NOSAVE")
	}
	s.stopped = true // stop has nothing left to do
	select {
	case <-s.done:
	default:
		s.kill()
	}
}
