package server

import (
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/shard"
)

// admConn is a gnet.Conn with just the methods the admin commands use.
type admConn struct {
	gnet.Conn
	raddr, laddr net.Addr
	closes       int
}

func (c *admConn) RemoteAddr() net.Addr { return c.raddr }
func (c *admConn) LocalAddr() net.Addr  { return c.laddr }
func (c *admConn) Fd() int              { return -1 }
func (c *admConn) Close() error         { c.closes++; return nil }

// OutboundBuffered: nothing is ever left unsent (CLIENT LIST omem).
func (c *admConn) OutboundBuffered() int { return 0 }

// admServer builds a server with n shards and loops but no network.
func admServer(t testing.TB, n int) *Server {
	t.Helper()
	cfg := DefaultConfig()
	// Files a command writes (SAVE's dump.rdb, drawn by FuzzCommands) go
	// to a directory of the test's, not the package's (no chdir).
	cfg.dir.Store(t.TempDir())
	srv := &Server{cfg: cfg, log: NewLoggerTo(io.Discard, cfg), startTime: time.Now()}
	srv.shut.exitReq = make(chan struct{}, 1)
	srv.lastSave.Store(time.Now().Unix())
	srv.activeExpire.Store(true)
	srv.buildCommandTable()
	srv.initACL()
	srv.initTunables()
	for i := 0; i < n; i++ {
		sh := srv.newShard(i)
		srv.shards = append(srv.shards, sh)
		l := &Loop{id: i, srv: srv, sh: sh, park: make(chan struct{}, 1), clients: make(map[int64]*Client)}
		l.x.loop, l.x.srv = l, srv
		l.stats.init(len(srv.cmdList))
		srv.loops = append(srv.loops, l)
	}
	for _, l := range srv.loops {
		l.x.Shards = srv.shards
	}
	srv.initObs()
	return srv
}

// admClient registers a client on loop i, connected from port.
func admClient(srv *Server, i, port int) *Client {
	cl := &Client{srv: srv, loop: srv.loops[i], proto: 2, authenticated: true}
	cl.c = &admConn{
		raddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port},
		laddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6379},
	}
	cl.id = srv.nextClientID.Add(1)
	cl.created = time.Now()
	cl.lastInteraction = cl.created
	cl.loop.clients[cl.id] = cl
	srv.nclients.Add(1)
	return cl
}

// admDo runs a command for cl as the dispatcher would (checks, then the
// handler with statistics), every shard being reachable from this
// goroutine, and returns the raw reply.
func admDo(srv *Server, cl *Client, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	start := len(cl.out)
	cmd := srv.lookup(argv)
	if msg := cl.check(cmd, argv); msg != "" {
		cl.reject(cmd, msg)
	} else {
		cl.loop.runLocal(cl, cmd, argv, false, false)
	}
	out := string(cl.out[start:])
	cl.out = cl.out[:0]
	return out
}

func admParse(t *testing.T, reply string) *metaTestNode {
	t.Helper()
	// metaTestParse knows no null bulk string: give it an empty array.
	n, rest, err := metaTestParse([]byte(strings.ReplaceAll(reply, "$-1\r\n", "*0\r\n")))
	if err != nil || len(rest) != 0 {
		t.Fatalf("bad reply %q: %v", reply, err)
	}
	return n
}

// infoFields returns the field names of an INFO reply, by section.
func infoFields(t *testing.T, reply string) map[string][]string {
	t.Helper()
	n := admParse(t, reply)
	out := make(map[string][]string)
	sec := ""
	for _, line := range strings.Split(n.str, "\r\n") {
		switch {
		case strings.HasPrefix(line, "# "):
			sec = line[2:]
			if _, dup := out[sec]; dup {
				t.Errorf("section %s twice", sec)
			}
			out[sec] = []string{}
		case line == "":
		default:
			name, _, ok := strings.Cut(line, ":")
			if !ok {
				t.Errorf("bad INFO line %q", line)
			}
			out[sec] = append(out[sec], name)
		}
	}
	return out
}

// Redis 7.0.15's INFO fields, in order (Linux, standalone, AOF off, no
// replicas; without used_cpu_*_main_thread).
var redisInfoFields = map[string]string{
	"Server":      "redis_version redis_git_sha1 redis_git_dirty redis_build_id redis_mode os arch_bits monotonic_clock multiplexing_api atomicvar_api gcc_version process_id process_supervised run_id tcp_port server_time_usec uptime_in_seconds uptime_in_days hz configured_hz lru_clock executable config_file io_threads_active",
	"Clients":     "connected_clients cluster_connections maxclients client_recent_max_input_buffer client_recent_max_output_buffer blocked_clients tracking_clients clients_in_timeout_table",
	"Memory":      "used_memory used_memory_human used_memory_rss used_memory_rss_human used_memory_peak used_memory_peak_human used_memory_peak_perc used_memory_overhead used_memory_startup used_memory_dataset used_memory_dataset_perc allocator_allocated allocator_active allocator_resident total_system_memory total_system_memory_human used_memory_lua used_memory_vm_eval used_memory_lua_human used_memory_scripts_eval number_of_cached_scripts number_of_functions number_of_libraries used_memory_vm_functions used_memory_vm_total used_memory_vm_total_human used_memory_functions used_memory_scripts used_memory_scripts_human maxmemory maxmemory_human maxmemory_policy allocator_frag_ratio allocator_frag_bytes allocator_rss_ratio allocator_rss_bytes rss_overhead_ratio rss_overhead_bytes mem_fragmentation_ratio mem_fragmentation_bytes mem_not_counted_for_evict mem_replication_backlog mem_total_replication_buffers mem_clients_slaves mem_clients_normal mem_cluster_links mem_aof_buffer mem_allocator active_defrag_running lazyfree_pending_objects lazyfreed_objects",
	"Persistence": "loading async_loading current_cow_peak current_cow_size current_cow_size_age current_fork_perc current_save_keys_processed current_save_keys_total rdb_changes_since_last_save rdb_bgsave_in_progress rdb_last_save_time rdb_last_bgsave_status rdb_last_bgsave_time_sec rdb_current_bgsave_time_sec rdb_saves rdb_last_cow_size rdb_last_load_keys_expired rdb_last_load_keys_loaded aof_enabled aof_rewrite_in_progress aof_rewrite_scheduled aof_last_rewrite_time_sec aof_current_rewrite_time_sec aof_last_bgrewrite_status aof_rewrites aof_rewrites_consecutive_failures aof_last_write_status aof_last_cow_size module_fork_in_progress module_fork_last_cow_size",
	"Stats":       "total_connections_received total_commands_processed instantaneous_ops_per_sec total_net_input_bytes total_net_output_bytes total_net_repl_input_bytes total_net_repl_output_bytes instantaneous_input_kbps instantaneous_output_kbps instantaneous_input_repl_kbps instantaneous_output_repl_kbps rejected_connections sync_full sync_partial_ok sync_partial_err expired_keys expired_stale_perc expired_time_cap_reached_count expire_cycle_cpu_milliseconds evicted_keys evicted_clients total_eviction_exceeded_time current_eviction_exceeded_time keyspace_hits keyspace_misses pubsub_channels pubsub_patterns pubsubshard_channels latest_fork_usec total_forks migrate_cached_sockets slave_expires_tracked_keys active_defrag_hits active_defrag_misses active_defrag_key_hits active_defrag_key_misses total_active_defrag_time current_active_defrag_time tracking_total_keys tracking_total_items tracking_total_prefixes unexpected_error_replies total_error_replies dump_payload_sanitizations total_reads_processed total_writes_processed io_threaded_reads_processed io_threaded_writes_processed reply_buffer_shrinks reply_buffer_expands",
	"Replication": "role connected_slaves master_failover_state master_replid master_replid2 master_repl_offset second_repl_offset repl_backlog_active repl_backlog_size repl_backlog_first_byte_offset repl_backlog_histlen",
	"CPU":         "used_cpu_sys used_cpu_user used_cpu_sys_children used_cpu_user_children used_cpu_sys_main_thread used_cpu_user_main_thread",
	"Modules":     "",
	"Errorstats":  "",
	"Cluster":     "cluster_enabled",
	"Keyspace":    "",
}

func TestInfoSectionsAndFields(t *testing.T) {
	srv := admServer(t, 3)
	cl := admClient(srv, 0, 5000)
	got := infoFields(t, admDo(srv, cl, "INFO"))
	order := []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules", "Errorstats", "Cluster", "Keyspace"}
	if len(got) != len(order) {
		t.Fatalf("default INFO sections: %v", got)
	}
	for _, sec := range order {
		want := strings.Fields(redisInfoFields[sec])
		fields, ok := got[sec]
		if !ok {
			t.Errorf("missing section %s", sec)
			continue
		}
		if sec == "Server" {
			// redshard's own fields follow Redis's.
			if strings.Join(fields[len(want):], " ") != "redshard_version shards" {
				t.Errorf("server extras: %v", fields[len(want):])
			}
			fields = fields[:len(want)]
		}
		if strings.Join(fields, " ") != strings.Join(want, " ") {
			t.Errorf("section %s fields:\n got %v\nwant %v", sec, fields, want)
		}
	}
	// The reply starts with the first header and separates sections with a
	// blank line.
	text := admParse(t, admDo(srv, cl, "info", "server", "clients")).str
	if !strings.HasPrefix(text, "# Server\r\nredis_version:7.0.15\r\n") || !strings.Contains(text, "\r\n\r\n# Clients\r\n") ||
		strings.HasSuffix(text, "\r\n\r\n") {
		t.Errorf("INFO layout: %q", text)
	}
	if !strings.Contains(text, "shards:3\r\n") || !strings.Contains(text, "connected_clients:1\r\n") {
		t.Errorf("INFO values: %q", text)
	}
}

func TestInfoSelection(t *testing.T) {
	srv := admServer(t, 2)
	cl := admClient(srv, 0, 5000)
	admDo(srv, cl, "set", "k", "v")
	for _, arg := range [][]string{nil, {"all"}, {"default"}, {"everything"}} {
		text := admParse(t, admDo(srv, cl, append([]string{"info"}, arg...)...)).str
		if !strings.Contains(text, "redis_version") || !strings.Contains(text, "used_cpu_user") || !strings.Contains(text, "used_memory") {
			t.Errorf("INFO %v lacks default sections", arg)
		}
		all := len(arg) == 1 && (arg[0] == "all" || arg[0] == "everything")
		if strings.Contains(text, "rejected_calls") != all {
			t.Errorf("INFO %v: commandstats present=%v", arg, !all)
		}
	}
	text := admParse(t, admDo(srv, cl, "info", "commandSTATS")).str
	if strings.Contains(text, "used_memory") || !strings.Contains(text, "cmdstat_set:calls=1,") {
		t.Errorf("INFO commandstats: %q", text)
	}
	text = admParse(t, admDo(srv, cl, "info", "cpu", "all")).str
	if strings.Count(text, "used_cpu_user_children") != 1 || !strings.Contains(text, "master_repl_offset") {
		t.Errorf("INFO cpu all repeats or misses sections")
	}
	text = admParse(t, admDo(srv, cl, "info", "cpu", "default")).str
	if strings.Count(text, "used_cpu_user_children") != 1 || strings.Contains(text, "rejected_calls") {
		t.Errorf("INFO cpu default")
	}
	if r := admDo(srv, cl, "info", "sentinel"); r != "$0\r\n\r\n" {
		t.Errorf("INFO sentinel: %q", r)
	}
	text = admParse(t, admDo(srv, cl, "info", "keyspace")).str
	if text != "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n" {
		t.Errorf("INFO keyspace: %q", text)
	}
	cl.proto = 3
	if r := admDo(srv, cl, "info", "cluster"); r != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Errorf("INFO RESP3: %q", r)
	}
}

func TestInfoStatsAndResetstat(t *testing.T) {
	srv := admServer(t, 2)
	cl := admClient(srv, 0, 5000)
	admDo(srv, cl, "set", "a", "1")
	admDo(srv, cl, "get", "a")
	admDo(srv, cl, "get", "nosuch")
	admDo(srv, cl, "set", "a")   // rejected: arity
	admDo(srv, cl, "incr", "k1") // ok
	admDo(srv, cl, "set", "s", "x")
	admDo(srv, cl, "incr", "s") // failed
	admDo(srv, cl, "nosuchcommand")
	text := admParse(t, admDo(srv, cl, "info", "stats", "commandstats", "errorstats", "persistence")).str
	for _, want := range []string{
		"keyspace_hits:1\r\n", "keyspace_misses:1\r\n", "total_error_replies:3\r\n",
		"cmdstat_set:calls=2,", "rejected_calls=1,failed_calls=0\r\n",
		"cmdstat_incr:calls=2,", "rejected_calls=0,failed_calls=1\r\n",
		"cmdstat_get:calls=2,", "errorstat_ERR:count=3\r\n",
		"rdb_changes_since_last_save:3\r\n", "total_commands_processed:6\r\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("INFO lacks %q:\n%s", want, text)
		}
	}
	if r := admDo(srv, cl, "config", "resetstat"); r != "+OK\r\n" {
		t.Fatalf("CONFIG RESETSTAT: %q", r)
	}
	text = admParse(t, admDo(srv, cl, "info", "stats", "commandstats", "errorstats", "persistence")).str
	for _, want := range []string{
		"keyspace_hits:0\r\n", "keyspace_misses:0\r\n", "total_error_replies:0\r\n",
		"# Commandstats\r\ncmdstat_config|resetstat:calls=1,",
		"rdb_changes_since_last_save:3\r\n", // the dirty counter is not a statistic
	} {
		if !strings.Contains(text, want) {
			t.Errorf("after RESETSTAT INFO lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "cmdstat_set") || !strings.HasSuffix(text, "# Errorstats\r\n") {
		t.Errorf("commandstats not reset")
	}
}

func TestBytesToHuman(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 1024: "1.00K", 916376: "894.90K", 12242944: "11.68M", 25276502016: "23.54G"} {
		if got := bytesToHuman(n); got != want {
			t.Errorf("bytesToHuman(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseClientKill(t *testing.T) {
	args := func(s string) [][]byte {
		var out [][]byte
		for _, f := range strings.Fields(s) {
			out = append(out, []byte(f))
		}
		return out
	}
	for in, want := range map[string]string{
		"id 10 wrong_arg":          "ERR syntax error",
		"id str":                   "ERR client-id should be greater than 0",
		"id -1":                    "ERR client-id should be greater than 0",
		"id 0":                     "ERR client-id should be greater than 0",
		"type wrong_type":          "ERR Unknown client type 'wrong_type'",
		"user wrong_user":          "ERR No such user 'wrong_user'",
		"skipme yes_or_no":         "ERR syntax error",
		"maxage 0":                 "ERR maxage should be greater than 0",
		"maxage x":                 "ERR maxage is not an integer or out of range",
		"foo bar":                  "ERR syntax error",
		"id 0 type wrong":          "ERR client-id should be greater than 0",
		"type normal":              "",
		"TYPE Replica SKIPME no":   "",
		"addr 1.2.3.4:5 laddr x:1": "",
		"user default maxage 5":    "",
		"1.2.3.4:5":                "",
	} {
		f, msg := parseClientKill(args(in), func(n string) bool { return n == "default" })
		if msg != want {
			t.Errorf("CLIENT KILL %s: %q, want %q", in, msg, want)
		}
		if in == "1.2.3.4:5" && (!f.oldForm || f.skipMe || f.addr != "1.2.3.4:5") {
			t.Errorf("old form parsed as %+v", f)
		}
		if in == "TYPE Replica SKIPME no" && (f.typ != clientTypeSlave || f.skipMe) {
			t.Errorf("new form parsed as %+v", f)
		}
	}
}

func TestClientKillAcrossLoops(t *testing.T) {
	srv := admServer(t, 3)
	me := admClient(srv, 0, 5000)
	b := admClient(srv, 1, 5001)
	c := admClient(srv, 2, 5002)
	if r := admDo(srv, me, "client", "kill", "127.0.0.1:5001"); r != "+OK\r\n" {
		t.Fatalf("old form: %q", r)
	}
	if !b.closing || !b.killed || b.c.(*admConn).closes != 1 {
		t.Errorf("victim not closed: %+v", b)
	}
	if r := admDo(srv, me, "client", "kill", "127.0.0.1:9"); r != "-ERR No such client\r\n" {
		t.Errorf("old form, no match: %q", r)
	}
	b.closed = true // its loop ran OnClose
	delete(b.loop.clients, b.id)
	if r := admDo(srv, me, "client", "kill", "skipme", "yes"); r != ":1\r\n" || !c.closing || me.closing {
		t.Errorf("skipme yes: %q", r)
	}
	if r := admDo(srv, me, "client", "kill", "id", "999"); r != ":0\r\n" {
		t.Errorf("no such id: %q", r)
	}
	if r := admDo(srv, me, "client", "kill", "laddr", "127.0.0.1:6379", "skipme", "no"); r != ":2\r\n" || !me.closing {
		t.Errorf("skipme no: %q closing=%v", r, me.closing)
	}
}

func TestClientListAndInfo(t *testing.T) {
	srv := admServer(t, 2)
	me := admClient(srv, 0, 5000)
	other := admClient(srv, 1, 5001)
	other.name = "worker"
	list := admParse(t, admDo(srv, me, "client", "list")).str
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "id=1 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 ") ||
		!strings.Contains(lines[0], " cmd=client|list ") || !strings.Contains(lines[1], " name=worker ") {
		t.Errorf("CLIENT LIST:\n%s", list)
	}
	list = admParse(t, admDo(srv, me, "client", "list", "id", "2", "77", "1")).str
	if !strings.HasPrefix(list, "id=2 ") || !strings.Contains(list, "\nid=1 ") || strings.Count(list, "\n") != 2 {
		t.Errorf("CLIENT LIST ID: %q", list)
	}
	if r := admDo(srv, me, "client", "list", "type", "master"); r != "$0\r\n\r\n" {
		t.Errorf("CLIENT LIST TYPE master: %q", r)
	}
	for args, want := range map[string]string{
		"client list type foo":      "-ERR Unknown client type 'foo'\r\n",
		"client list id abc":        "-ERR Invalid client ID\r\n",
		"client list foo":           "-ERR syntax error\r\n",
		"client list type normal x": "-ERR syntax error\r\n",
	} {
		if r := admDo(srv, me, strings.Fields(args)...); r != want {
			t.Errorf("%s: %q, want %q", args, r, want)
		}
	}
	info := admParse(t, admDo(srv, me, "client", "info")).str
	if !strings.HasPrefix(info, "id=1 ") || !strings.HasSuffix(info, "\n") || !strings.Contains(info, "cmd=client|info") {
		t.Errorf("CLIENT INFO: %q", info)
	}
	if r := admDo(srv, me, "client", "setname", "a b"); r != "-ERR Client names cannot contain spaces, newlines or special characters.\r\n" {
		t.Errorf("SETNAME: %q", r)
	}
	admDo(srv, me, "client", "setname", "mine")
	if r := admDo(srv, me, "client", "getname"); r != "$4\r\nmine\r\n" {
		t.Errorf("GETNAME: %q", r)
	}
	admDo(srv, me, "client", "setname", "")
	if r := admDo(srv, me, "client", "getname"); r != "$-1\r\n" {
		t.Errorf("GETNAME unset: %q", r)
	}
	if r := admDo(srv, me, "client", "id"); r != ":1\r\n" {
		t.Errorf("CLIENT ID: %q", r)
	}
	admDo(srv, me, "client", "no-touch", "on")
	admDo(srv, me, "client", "no-evict", "on")
	if !me.noTouch || !me.noEvict || admDo(srv, me, "client", "no-evict", "maybe") != "-ERR syntax error\r\n" {
		t.Errorf("NO-TOUCH / NO-EVICT")
	}
}

func TestClientReplyModes(t *testing.T) {
	srv := admServer(t, 1)
	cl := admClient(srv, 0, 5000)
	do := func(args ...string) string { return admDo(srv, cl, args...) }
	if do("client", "reply", "off") != "" || do("ping") != "" || do("nosuchcommand") != "" {
		t.Errorf("REPLY OFF does not silence")
	}
	if r := do("client", "reply", "on"); r != "+OK\r\n" {
		t.Errorf("REPLY ON: %q", r)
	}
	if do("client", "reply", "skip") != "" || do("ping", "a") != "" || do("ping", "b") != "$1\r\nb\r\n" {
		t.Errorf("REPLY SKIP skips other than the next reply")
	}
	do("client", "reply", "skip")
	if r := do("client", "reply", "on"); r != "+OK\r\n" {
		t.Errorf("REPLY ON after SKIP: %q", r)
	}
	if r := do("ping"); r != "+PONG\r\n" {
		t.Errorf("after ON: %q", r)
	}
	if r := do("client", "reply", "maybe"); r != "-ERR syntax error\r\n" {
		t.Errorf("REPLY bad: %q", r)
	}

	// A run of commands sent to another loop drops the replies the same way.
	var h hop
	cl.replyOff = true
	cl.replyModeForHop(&h)
	if !h.dropAll {
		t.Errorf("hop ignores REPLY OFF")
	}
	cl.replyOff, cl.replySkip = false, true
	cl.replyModeForHop(&h)
	if h.dropAll || !h.dropFirst || cl.replySkip {
		t.Errorf("hop ignores REPLY SKIP: %+v", h)
	}
}

func TestCommandGetKeys(t *testing.T) {
	srv := admServer(t, 1)
	cl := admClient(srv, 0, 5000)
	keys := func(args ...string) string {
		r := admDo(srv, cl, args...)
		if strings.HasPrefix(r, "-") {
			return r
		}
		var out []string
		for _, k := range admParse(t, r).kids {
			if len(k.kids) == 0 {
				out = append(out, k.str)
				continue
			}
			s := k.kids[0].str
			for _, f := range k.kids[1].kids {
				s += " " + f.str
			}
			out = append(out, "{"+s+"}")
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct{ args, want string }{
		{"command getkeys get key", "key"},
		{"command getkeys mset a 1 b 2", "a,b"},
		{"command getkeys del a b c", "a,b,c"},
		{"command getkeys object encoding k", "k"},
		{"command getkeysandflags set k1 v1", "{k1 OW update}"},
		{"command getkeysandflags set k1 v1 GET", "{k1 RW access update}"},
		{"command getkeysandflags mset k1 v1 k2 v2", "{k1 OW update},{k2 OW update}"},
		{"command getkeysandflags rename a b", "{a RW access delete},{b OW update}"},
		{"command getkeys nosuch k", "-ERR Invalid command specified\r\n"},
		{"command getkeys config nosuch", "-ERR Invalid command specified\r\n"},
		{"command getkeys config get", "-ERR The command has no key arguments\r\n"},
		{"command getkeys config", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"command getkeys ping x", "-ERR The command has no key arguments\r\n"},
		{"command getkeys lastsave", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"command getkeys get a b", "-ERR Invalid number of arguments specified for command\r\n"},
		{"command getkeys mset a 1 b", "a,b"},
	} {
		if got := keys(strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
	}

	// Commands that need Redis's own extraction code, checked against
	// redis-server 7.0.15 whether implemented here or not.
	for _, tc := range []struct{ args, want string }{
		{"zunionstore d 2 a b weights 1 2", "d:OW|UPDATE a:RO|ACCESS b:RO|ACCESS"},
		{"sort k by x get y store d limit 0 1", "k:RO|ACCESS d:OW|UPDATE"},
		{"sort k store d1 store d2", "k:RO|ACCESS d2:OW|UPDATE"},
		{"sort_ro k", "k:RO|ACCESS"},
		{"eval s 2 a b c", "a:RW|ACCESS|UPDATE b:RW|ACCESS|UPDATE"},
		{"evalsha s 0", ""},
		{"xread count 1 streams s1 s2 0 0", "s1:RO|ACCESS s2:RO|ACCESS"},
		{"xreadgroup group g c streams s1 0", "s1:RO|ACCESS"},
		{"lmove a b left right", "a:RW|ACCESS|DELETE b:RW|INSERT"},
		{"migrate h p k 0 1", "k:RW|ACCESS|DELETE"},
		{"migrate h p  0 1 auth pw keys a b", "a:RW|ACCESS|DELETE b:RW|ACCESS|DELETE"},
		{"bitfield k get u8 0", "k:RO|ACCESS"},
		{"bitfield k set u8 0 1", "k:RW|ACCESS|UPDATE"},
		{"georadius k 0 0 1 km store d", "k:RO|ACCESS d:OW|UPDATE"},
		{"blmpop 0 2 a b left", "a:RW|ACCESS|DELETE b:RW|ACCESS|DELETE"},
		{"zunionstore d 0 a", ""},
		{"lmpop 0 a left", ""},
		{"xgroup create k g $", "k:RW|INSERT"},
		{"memory usage k", "k:RO"},
		{"msetnx a 1 b 2", "a:OW|INSERT b:OW|INSERT"},
	} {
		argv := [][]byte{}
		for _, f := range strings.Split(tc.args, " ") {
			argv = append(argv, []byte(f))
		}
		name := strings.ToLower(string(argv[0]))
		if m := LookupMeta(name); m != nil && len(m.Subcommands) > 0 {
			name += "|" + strings.ToLower(string(argv[1]))
		}
		c := &Cmd{fullName: name, meta: LookupMeta(name)}
		if c.meta == nil || !commandHasKeys(c) {
			t.Errorf("%s: no keys", name)
			continue
		}
		var got []string
		for _, k := range commandKeys(c, argv) {
			got = append(got, string(argv[k.pos])+":"+strings.Join(k.flags.names(), "|"))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, strings.Join(got, " "), tc.want)
		}
	}
}

func TestCommandIntrospection(t *testing.T) {
	srv := admServer(t, 1)
	cl := admClient(srv, 0, 5000)
	if r := admDo(srv, cl, "command", "count"); r != ":"+strconv.Itoa(len(srv.cmds))+"\r\n" {
		t.Errorf("COMMAND COUNT %q vs %d", r, len(srv.cmds))
	}
	all := admParse(t, admDo(srv, cl, "command"))
	if len(all.kids) != len(srv.cmds) {
		t.Errorf("COMMAND: %d entries for %d commands", len(all.kids), len(srv.cmds))
	}
	info := admParse(t, admDo(srv, cl, "command", "info", "client", "get|key", "config|get|key", "CONFIG|GET", "nosuch"))
	if len(info.kids) != 5 || info.kids[1].typ != '*' || info.kids[2].typ != '*' || info.kids[4].typ != '*' ||
		info.kids[3].kids[0].str != "config|get" {
		t.Fatalf("COMMAND INFO shape: %+v", info)
	}
	subs := info.kids[0].kids[9].kids
	for _, s := range subs {
		name := s.kids[0].str
		sub := strings.TrimPrefix(name, "client|")
		if srv.cmds["client"].subs[sub] == nil {
			t.Errorf("COMMAND INFO client lists unimplemented %s", name)
		}
	}
	if len(subs) != len(srv.cmds["client"].subs) {
		t.Errorf("COMMAND INFO client: %d subcommands, %d implemented", len(subs), len(srv.cmds["client"].subs))
	}
	docs := admParse(t, admDo(srv, cl, "command", "docs", "get", "nosuch", "config|set"))
	if len(docs.kids) != 4 || docs.kids[0].str != "get" || docs.kids[2].str != "config|set" {
		t.Errorf("COMMAND DOCS: %+v", docs)
	}
	list := admParse(t, admDo(srv, cl, "command", "list", "filterby", "pattern", "config|*re*"))
	var names []string
	for _, k := range list.kids {
		names = append(names, k.str)
	}
	if strings.Join(names, " ") != "config|resetstat config|rewrite" {
		t.Errorf("COMMAND LIST PATTERN: %v", names)
	}
	list = admParse(t, admDo(srv, cl, "command", "list"))
	found := map[string]bool{}
	for _, k := range list.kids {
		found[k.str] = true
	}
	if !found["set"] || !found["client|list"] || !found["command"] || !found["command|list"] {
		t.Errorf("COMMAND LIST misses entries")
	}
	for args, want := range map[string]string{
		"command list bad_arg":                   "-ERR syntax error\r\n",
		"command list filterby bad_arg":          "-ERR syntax error\r\n",
		"command list filterby bad_arg bad_arg2": "-ERR syntax error\r\n",
		"command list filterby aclcat nosuchcat": "*0\r\n",
		"command list filterby module m":         "*0\r\n",
		"command nosuch":                         "-ERR unknown subcommand 'nosuch'. Try COMMAND HELP.\r\n",
	} {
		if r := admDo(srv, cl, strings.Fields(args)...); r != want {
			t.Errorf("%s: %q, want %q", args, r, want)
		}
	}
	help := admParse(t, admDo(srv, cl, "command", "help"))
	if help.kids[0].str != "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" || help.kids[len(help.kids)-1].str != "    Prints this help." {
		t.Errorf("COMMAND HELP: %+v", help.kids[0])
	}
}

func TestConfigAndMisc(t *testing.T) {
	srv := admServer(t, 1)
	cl := admClient(srv, 0, 5000)
	for _, tc := range [][2]string{
		{"config get maxmemory", "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n"},
		{"config set foo bar", "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n"},
		{"config set maxmemory 1 x", "-ERR syntax error\r\n"},
		{"config set daemonize yes", "-ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config\r\n"},
		{"config set hz 20", "+OK\r\n"},
		{"config get hz", "*2\r\n$2\r\nhz\r\n$2\r\n20\r\n"},
		{"config rewrite", "-ERR The server is running without a config file\r\n"},
		{"config resetstat x", "-ERR wrong number of arguments for 'config|resetstat' command\r\n"},
		{"config", "-ERR wrong number of arguments for 'config' command\r\n"},
		{"lastsave x", "-ERR wrong number of arguments for 'lastsave' command\r\n"},
		{"shutdown abort", "-ERR No shutdown in progress.\r\n"},
		{"shutdown nosave save", "-ERR syntax error\r\n"},
		{"shutdown abort now", "-ERR syntax error\r\n"},
		{"shutdown foo", "-ERR syntax error\r\n"},
		{"debug help", "-" + errDebugNotAllowed + "\r\n"},
		{"client nosuch", "-ERR unknown subcommand 'nosuch'. Try CLIENT HELP.\r\n"},
		{"debug", "-ERR wrong number of arguments for 'debug' command\r\n"},
		{"command getkeysandflags get a b", "-ERR Invalid number of arguments specified for command\r\n"},
		{"command getkeys", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"client kill", "-ERR wrong number of arguments for 'client|kill' command\r\n"},
		{"client reply on extra", "-ERR wrong number of arguments for 'client|reply' command\r\n"},
		{"command info nosuch", "*1\r\n$-1\r\n"},
	} {
		if r := admDo(srv, cl, strings.Fields(tc[0])...); r != tc[1] {
			t.Errorf("%s: %q, want %q", tc[0], r, tc[1])
		}
	}
	if r := admParse(t, admDo(srv, cl, "time")); len(r.kids) != 2 || r.kids[1].typ != '$' {
		t.Errorf("TIME: %+v", r)
	}
	if st := srv.loops[0].stats.cmds[srv.cmds["debug"].id]; st.rejected != 2 || st.failed != 0 || st.calls != 0 {
		t.Errorf("refused DEBUG counted as %+v", st)
	}
	// A save that fails (dir does not exist): SHUTDOWN SAVE takes Redis's
	// path for a failed save, and the server goes on; FORCE exits anyway.
	// (Not while loading, which ready=false stands for: then nothing is
	// saved.)
	srv.cfg.dir.Store(filepath.Join(t.TempDir(), "missing"))
	srv.ready.Store(true)
	if r := admDo(srv, cl, "shutdown", "save"); r != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" || cl.closing {
		t.Errorf("SHUTDOWN SAVE: %q", r)
	}
	select {
	case <-srv.shut.exitReq:
		t.Errorf("SHUTDOWN SAVE stopped the server")
	default:
	}
	// A signal's shutdown held by DEBUG PAUSE-CRON can be aborted.
	srv.shut.paused.Store(true)
	srv.shut.asap = true
	if r := admDo(srv, cl, "shutdown", "abort"); r != "+OK\r\n" {
		t.Errorf("SHUTDOWN ABORT of a pending shutdown: %q", r)
	}
	if r := admDo(srv, cl, "shutdown", "abort"); r != "-ERR No shutdown in progress.\r\n" {
		t.Errorf("second SHUTDOWN ABORT: %q", r)
	}
	srv.shut.paused.Store(false)
	if r := admDo(srv, cl, "shutdown", "save", "force"); r != "" || cl.blocked == nil { // no reply: the exit ends the connection
		t.Errorf("SHUTDOWN SAVE FORCE: %q", r)
	}
	select {
	case <-srv.shut.exitReq:
	default:
		t.Errorf("SHUTDOWN did not stop the server")
	}
}

func TestDebugCommand(t *testing.T) {
	srv := admServer(t, 4)
	if err := srv.cfg.loadString("enable-debug-command local", &cfgLoadState{}); err != nil {
		t.Fatal(err)
	}
	cl := admClient(srv, 0, 5000)
	remote := admClient(srv, 1, 5001)
	remote.c.(*admConn).raddr = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 5001}
	if r := admDo(srv, remote, "debug", "help"); r != "-"+errDebugNotAllowed+"\r\n" {
		t.Errorf("DEBUG from a non-local client: %q", r)
	}
	for _, kv := range [][2]string{{"a", "hello"}, {"n", "123"}, {"big", "12345678901"}, {"s", strings.Repeat("x", 100)}} {
		admDo(srv, cl, "set", kv[0], kv[1])
	}
	for key, want := range map[string]string{
		"a":   "refcount:1 encoding:embstr serializedlength:6 ",
		"n":   "refcount:2147483647 encoding:int serializedlength:2 ",
		"big": "refcount:1 encoding:int serializedlength:12 ",
		"s":   "refcount:1 encoding:raw serializedlength:102 ",
	} {
		r := admDo(srv, cl, "debug", "object", key)
		if !strings.HasPrefix(r, "+Value at:0x") || !strings.Contains(r, want) || !strings.Contains(r, " lru_seconds_idle:") {
			t.Errorf("DEBUG OBJECT %s: %q", key, r)
		}
	}
	for args, want := range map[string]string{
		"debug object nokey":        "-ERR no such key\r\n",
		"debug jmap":                "-ERR unknown subcommand or wrong number of arguments for 'jmap'. Try DEBUG HELP.\r\n",
		"debug OBJECT a b":          "-ERR unknown subcommand or wrong number of arguments for 'OBJECT'. Try DEBUG HELP.\r\n",
		"debug sleep 0":             "+OK\r\n",
		"debug sleep abc":           "+OK\r\n",
		"debug set-active-expire 0": "+OK\r\n",
	} {
		if r := admDo(srv, cl, strings.Fields(args)...); r != want {
			t.Errorf("%s: %q, want %q", args, r, want)
		}
	}
	if srv.activeExpire.Load() {
		t.Errorf("SET-ACTIVE-EXPIRE 0 ignored")
	}
	admDo(srv, cl, "debug", "set-active-expire", "1")
	if !srv.activeExpire.Load() {
		t.Errorf("SET-ACTIVE-EXPIRE 1 ignored")
	}
	start := time.Now()
	admDo(srv, cl, "debug", "sleep", "0.05")
	if time.Since(start) < 50*time.Millisecond {
		t.Errorf("DEBUG SLEEP did not sleep")
	}
	// DEBUG OBJECT routes to the key's shard; DEBUG SLEEP takes every
	// shard (it stops the whole server); the rest stays at home.
	c := srv.cmds["debug"]
	if t1, m := cl.placement(c, [][]byte{[]byte("debug"), []byte("object"), []byte("a")}); m != 0 || t1 != shard.ShardOf([]byte("a"), 4) {
		t.Errorf("DEBUG OBJECT placement %d %d", t1, m)
	}
	if t1, m := cl.placement(c, [][]byte{[]byte("debug"), []byte("sleep"), []byte("0")}); m != 0xf || t1 != -1 {
		t.Errorf("DEBUG SLEEP placement %d %#x", t1, m)
	}
	if t1, m := cl.placement(c, [][]byte{[]byte("debug"), []byte("log"), []byte("x")}); m != 0 || t1 != -1 {
		t.Errorf("DEBUG LOG placement %d %#x", t1, m)
	}
}

func TestRDBStringLenAndStrtod(t *testing.T) {
	for s, want := range map[string]int{"123": 2, "-128": 2, "1000": 3, "100000": 5, "12345678901": 12, "bar": 4, "0123": 5, strings.Repeat("a", 64): 66} {
		if got := rdbStringLen([]byte(s)); got != want {
			t.Errorf("rdbStringLen(%q) = %d, want %d", s, got, want)
		}
	}
	for s, want := range map[string]float64{"0.5": 0.5, " 2x": 2, "abc": 0, "1e-1": 0.1, "": 0} {
		if got := cStrtod([]byte(s)); got != want {
			t.Errorf("cStrtod(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]int64{"1": 1, " 7z": 7, "-3": -3, "x": 0} {
		if got := cAtoi([]byte(s)); got != want {
			t.Errorf("cAtoi(%q) = %v", s, got)
		}
	}
}
