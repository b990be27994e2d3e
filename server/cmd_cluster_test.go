package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redshard/redshard/shard"
)

// clusterServer is admServer with cluster-enabled yes, its nodes.conf in
// dir (a fresh temporary one when dir is "").
func clusterServer(t *testing.T, n int, dir string) *Server {
	t.Helper()
	srv := admServer(t, n)
	if dir == "" {
		dir = t.TempDir()
	}
	srv.cfg.dir.Store(dir)
	srv.cfg.port.Store(7000)
	srv.cfg.clusterEnabled.Store(true)
	if err := srv.initCluster(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.clus.lock.Close() })
	return srv
}

// keyInSlotOtherThan returns a key whose slot differs from k's.
func keyOtherSlot(k string) string {
	for i := 0; ; i++ {
		o := k + "x" + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
		if shard.KeySlot([]byte(o)) != shard.KeySlot([]byte(k)) {
			return o
		}
	}
}

func TestClusterDisabledReplies(t *testing.T) {
	srv := admServer(t, 2)
	cl := admClient(srv, 0, 5000)
	for _, c := range [][]string{{"CLUSTER", "INFO"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "KEYSLOT", "a"}, {"READONLY"}, {"READWRITE"}, {"ASKING"}} {
		if got := admDo(srv, cl, c...); got != "-"+errClusterDisabled+"\r\n" {
			t.Errorf("%v: %q", c, got)
		}
	}
	if got := admDo(srv, cl, "MSET", "a", "1", "b", "2"); got != "+OK\r\n" {
		t.Errorf("MSET across slots without cluster mode: %q", got)
	}
	if got := admDo(srv, cl, "SELECT", "1"); got != "+OK\r\n" {
		t.Errorf("SELECT 1: %q", got)
	}
	if got := admDo(srv, cl, "INFO", "cluster"); !strings.Contains(got, "cluster_enabled:0\r\n") {
		t.Errorf("INFO cluster: %q", got)
	}
}

func TestClusterInfoAndIdentity(t *testing.T) {
	dir := t.TempDir()
	srv := clusterServer(t, 2, dir)
	cl := admClient(srv, 0, 5000)
	id := admDo(srv, cl, "CLUSTER", "MYID")
	m := regexp.MustCompile(`^\$40\r\n([0-9a-f]{40})\r\n$`).FindStringSubmatch(id)
	if m == nil {
		t.Fatalf("MYID %q", id)
	}
	myid := m[1]
	info := admDo(srv, cl, "CLUSTER", "INFO")
	want := "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\n" +
		"cluster_slots_fail:0\r\ncluster_known_nodes:1\r\ncluster_size:1\r\ncluster_current_epoch:0\r\ncluster_my_epoch:0\r\n" +
		"cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n"
	if info != "$"+strconv.Itoa(len(want))+"\r\n"+want+"\r\n" {
		t.Fatalf("CLUSTER INFO %q", info)
	}
	if got := admDo(srv, cl, "INFO", "cluster"); !strings.Contains(got, "cluster_enabled:1\r\n") {
		t.Errorf("INFO cluster: %q", got)
	}
	if got := admDo(srv, cl, "INFO", "server"); !strings.Contains(got, "redis_mode:cluster\r\n") {
		t.Errorf("INFO server: %q", got)
	}
	if got := admDo(srv, cl, "HELLO", "3"); !strings.Contains(got, "$4\r\nmode\r\n$7\r\ncluster\r\n") {
		t.Errorf("HELLO 3: %q", got)
	}
	cl.proto = 2
	data, err := os.ReadFile(filepath.Join(dir, "nodes.conf"))
	wantConf := myid + " :7000@17000 myself,master - 0 0 0 connected 0-16383\nvars currentEpoch 0 lastVoteEpoch 0\n"
	if err != nil || string(data) != wantConf {
		t.Fatalf("nodes.conf %q %v", data, err)
	}
	// The lock: a second node on the same file is refused.
	srv2 := admServer(t, 1)
	srv2.cfg.dir.Store(dir)
	srv2.cfg.clusterEnabled.Store(true)
	if err := srv2.initCluster(); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("second node on one nodes.conf: %v", err)
	}
	// A restart keeps the id, the epochs and the slots.
	if got := admDo(srv, cl, "CLUSTER", "BUMPEPOCH"); got != "+BUMPED 1\r\n" {
		t.Fatalf("BUMPEPOCH %q", got)
	}
	if got := admDo(srv, cl, "CLUSTER", "BUMPEPOCH"); got != "+STILL 1\r\n" {
		t.Fatalf("BUMPEPOCH again %q", got)
	}
	if got := admDo(srv, cl, "CLUSTER", "DELSLOTSRANGE", "100", "199"); got != "+OK\r\n" {
		t.Fatalf("DELSLOTSRANGE %q", got)
	}
	srv.clus.lock.Close()
	srv3 := clusterServer(t, 2, dir)
	cl3 := admClient(srv3, 0, 5001)
	if got := admDo(srv3, cl3, "CLUSTER", "MYID"); got != id {
		t.Fatalf("id after restart %q, was %q", got, id)
	}
	info = admDo(srv3, cl3, "CLUSTER", "INFO")
	for _, f := range []string{"cluster_state:fail", "cluster_slots_assigned:16284", "cluster_current_epoch:1", "cluster_my_epoch:1"} {
		if !strings.Contains(info, f+"\r\n") {
			t.Errorf("after restart: no %s in %q", f, info)
		}
	}
}

func TestClusterTopologyReplies(t *testing.T) {
	srv := clusterServer(t, 2, "")
	cl := admClient(srv, 0, 5000)
	myid := srv.clus.st.Myself.Name
	bulk := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	// The ip is the address the client reached, none being known.
	node := "*4\r\n" + bulk("127.0.0.1") + ":7000\r\n" + bulk(myid) + "*0\r\n"
	if got := admDo(srv, cl, "CLUSTER", "SLOTS"); got != "*1\r\n*3\r\n:0\r\n:16383\r\n"+node {
		t.Fatalf("SLOTS %q", got)
	}
	line := myid + " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected 0-16383\n"
	if got := admDo(srv, cl, "CLUSTER", "NODES"); got != bulk(line) {
		t.Fatalf("NODES %q", got)
	}
	shards := "*1\r\n*4\r\n" + bulk("slots") + "*2\r\n:0\r\n:16383\r\n" + bulk("nodes") + "*1\r\n*14\r\n" +
		bulk("id") + bulk(myid) + bulk("port") + ":7000\r\n" + bulk("ip") + bulk("127.0.0.1") +
		bulk("endpoint") + bulk("127.0.0.1") + bulk("role") + bulk("master") + bulk("replication-offset") + ":0\r\n" +
		bulk("health") + bulk("online")
	if got := admDo(srv, cl, "CLUSTER", "SHARDS"); got != shards {
		t.Fatalf("SHARDS %q\nwant %q", got, shards)
	}
	// cluster-announce-ip and -port, and the slots as ranges.
	srv.cfg.clusterAnnounceIP.Store("10.1.2.3")
	srv.cfg.clusterAnnouncePort.Store(7100)
	srv.cfg.clusterAnnounceBus.Store(7200)
	if got := admDo(srv, cl, "CLUSTER", "DELSLOTS", "5", "7", "6"); got != "+OK\r\n" {
		t.Fatalf("DELSLOTS %q", got)
	}
	node = "*4\r\n" + bulk("10.1.2.3") + ":7100\r\n" + bulk(myid) + "*0\r\n"
	if got := admDo(srv, cl, "CLUSTER", "SLOTS"); got != "*2\r\n*3\r\n:0\r\n:4\r\n"+node+"*3\r\n:8\r\n:16383\r\n"+node {
		t.Fatalf("SLOTS %q", got)
	}
	line = myid + " 10.1.2.3:7100@7200 myself,master - 0 0 0 connected 0-4 8-16383\n"
	if got := admDo(srv, cl, "CLUSTER", "NODES"); got != bulk(line) {
		t.Fatalf("NODES %q", got)
	}
	for _, c := range []struct{ cmd []string }{
		{[]string{"CLUSTER", "LINKS"}},
		{[]string{"CLUSTER", "REPLICAS", myid}},
		{[]string{"CLUSTER", "SLAVES", myid}},
	} {
		if got := admDo(srv, cl, c.cmd...); got != "*0\r\n" {
			t.Errorf("%v: %q", c.cmd, got)
		}
	}
	unknown := strings.Repeat("0", 40)
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"CLUSTER", "COUNT-FAILURE-REPORTS", myid}, ":0\r\n"},
		{[]string{"CLUSTER", "COUNT-FAILURE-REPORTS", unknown}, "-ERR Unknown node " + unknown + "\r\n"},
		{[]string{"CLUSTER", "REPLICAS", "nope"}, "-ERR Unknown node nope\r\n"},
		{[]string{"CLUSTER", "FORGET", myid}, "-ERR I tried hard but I can't forget myself...\r\n"},
		{[]string{"CLUSTER", "FORGET", unknown}, "-ERR Unknown node " + unknown + "\r\n"},
		{[]string{"CLUSTER", "REPLICATE", myid}, "-ERR Can't replicate myself\r\n"},
		{[]string{"CLUSTER", "FAILOVER"}, "-ERR You should send CLUSTER FAILOVER to a replica\r\n"},
		{[]string{"CLUSTER", "FAILOVER", "bogus"}, "-ERR syntax error\r\n"},
		{[]string{"CLUSTER", "MEET", "127.0.0.1", "x"}, "-ERR Invalid TCP base port specified: x\r\n"},
		{[]string{"CLUSTER", "MEET", "nohost", "7001"}, "-ERR Invalid node address specified: nohost:7001\r\n"},
		{[]string{"CLUSTER", "KEYSLOT", "foo"}, ":12182\r\n"},
		{[]string{"CLUSTER", "KEYSLOT", "{user1000}.following"}, ":3443\r\n"},
		{[]string{"CLUSTER", "ADDSLOTS", "0"}, "-ERR Slot 0 is already busy\r\n"},
		{[]string{"CLUSTER", "ADDSLOTS", "5", "5"}, "-ERR Slot 5 specified multiple times\r\n"},
		{[]string{"CLUSTER", "ADDSLOTS", "16384"}, "-ERR Invalid or out of range slot\r\n"},
		{[]string{"CLUSTER", "DELSLOTS", "5"}, "-ERR Slot 5 is already unassigned\r\n"},
		{[]string{"CLUSTER", "ADDSLOTSRANGE", "5", "6", "7"}, "-ERR wrong number of arguments for 'cluster|addslotsrange' command\r\n"},
		{[]string{"CLUSTER", "ADDSLOTSRANGE", "7", "5"}, "-ERR start slot number 7 is greater than end slot number 5\r\n"},
		{[]string{"CLUSTER", "ADDSLOTSRANGE", "5", "7"}, "+OK\r\n"},
		{[]string{"CLUSTER", "SETSLOT", "5", "MIGRATING", unknown}, "-ERR I don't know about node " + unknown + "\r\n"},
		{[]string{"CLUSTER", "SETSLOT", "5", "NODE", unknown}, "-ERR Unknown node " + unknown + "\r\n"},
		{[]string{"CLUSTER", "SETSLOT", "5", "NODE", myid}, "+OK\r\n"},
		{[]string{"CLUSTER", "SETSLOT", "5", "STABLE"}, "+OK\r\n"},
		{[]string{"CLUSTER", "SETSLOT", "5", "BOGUS"}, "-ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP\r\n"},
		{[]string{"CLUSTER", "SET-CONFIG-EPOCH", "-1"}, "-ERR Invalid config epoch specified: -1\r\n"},
		{[]string{"CLUSTER", "SET-CONFIG-EPOCH", "5"}, "+OK\r\n"},
		{[]string{"CLUSTER", "SET-CONFIG-EPOCH", "6"}, "-ERR Node config epoch is already non-zero\r\n"},
		{[]string{"CLUSTER", "SAVECONFIG"}, "+OK\r\n"},
		{[]string{"CLUSTER", "COUNTKEYSINSLOT", "16384"}, "-ERR Invalid slot\r\n"},
		{[]string{"CLUSTER", "COUNTKEYSINSLOT", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"CLUSTER", "GETKEYSINSLOT", "0", "-1"}, "-ERR Invalid slot or number of keys\r\n"},
		{[]string{"CLUSTER", "RESET", "bogus"}, "-ERR syntax error\r\n"},
		{[]string{"READONLY"}, "+OK\r\n"},
		{[]string{"READWRITE"}, "+OK\r\n"},
		{[]string{"ASKING"}, "+OK\r\n"},
	} {
		if got := admDo(srv, cl, c.cmd...); got != c.want {
			t.Errorf("%v: %q, want %q", c.cmd, got, c.want)
		}
	}
	if got := admDo(srv, cl, "CLUSTER", "HELP"); !strings.HasPrefix(got, "*56\r\n+CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+ADDSLOTS") {
		t.Errorf("HELP %q", got[:min(len(got), 120)])
	}
	// Endpoint types and a hostname, as redis-server 7.0.15 answers them.
	srv.cfg.clusterAnnounceHost.Store("host.example")
	admDo(srv, cl, "CLUSTER", "ADDSLOTSRANGE", "5", "7")
	for _, c := range []struct {
		kind int64
		node string
	}{
		{endpointIP, bulk("10.1.2.3") + ":7100\r\n" + bulk(myid) + "*2\r\n" + bulk("hostname") + bulk("host.example")},
		{endpointHostname, bulk("host.example") + ":7100\r\n" + bulk(myid) + "*2\r\n" + bulk("ip") + bulk("10.1.2.3")},
		{endpointUnknown, "$-1\r\n:7100\r\n" + bulk(myid) + "*4\r\n" + bulk("ip") + bulk("10.1.2.3") + bulk("hostname") + bulk("host.example")},
	} {
		srv.cfg.clusterEndpointType.Store(c.kind)
		if got := admDo(srv, cl, "CLUSTER", "SLOTS"); got != "*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n"+c.node {
			t.Errorf("endpoint type %d: SLOTS %q", c.kind, got)
		}
	}
	if got := admDo(srv, cl, "CLUSTER", "NODES"); !strings.Contains(got, " 10.1.2.3:7100@7200,host.example myself,master ") {
		t.Errorf("NODES with a hostname %q", got)
	}
}

func TestClusterKeysInSlot(t *testing.T) {
	srv := clusterServer(t, 4, "")
	cl := admClient(srv, 0, 5000)
	keys := []string{"{t}a", "{t}b", "{t}c"}
	for _, k := range keys {
		mxDo(srv, cl, "SET", k, "v")
	}
	mxDo(srv, cl, "SET", "other", "v")
	slot := strconv.Itoa(shard.KeySlot([]byte("t")))
	if got := mxDo(srv, cl, "CLUSTER", "COUNTKEYSINSLOT", slot); got != ":3\r\n" {
		t.Fatalf("COUNTKEYSINSLOT %q", got)
	}
	got := mxDo(srv, cl, "CLUSTER", "GETKEYSINSLOT", slot, "2")
	if !strings.HasPrefix(got, "*2\r\n") || strings.Contains(got, "other") {
		t.Fatalf("GETKEYSINSLOT %q", got)
	}
	if got := mxDo(srv, cl, "CLUSTER", "FLUSHSLOTS"); got != "-ERR DB must be empty to perform CLUSTER FLUSHSLOTS.\r\n" {
		t.Fatalf("FLUSHSLOTS %q", got)
	}
	if got := mxDo(srv, cl, "CLUSTER", "RESET"); got != "-ERR CLUSTER RESET can't be called with master nodes containing keys\r\n" {
		t.Fatalf("RESET %q", got)
	}
	mxDo(srv, cl, "FLUSHALL")
	old := srv.clus.st.Myself.Name
	if got := mxDo(srv, cl, "CLUSTER", "RESET", "HARD"); got != "+OK\r\n" || srv.clus.st.Myself.Name == old {
		t.Fatalf("RESET HARD %q", got)
	}
	if got := mxDo(srv, cl, "CLUSTER", "INFO"); !strings.Contains(got, "cluster_state:fail\r\ncluster_slots_assigned:0\r\n") || !strings.Contains(got, "cluster_size:0\r\n") {
		t.Fatalf("INFO after RESET %q", got)
	}
	if got := mxDo(srv, cl, "GET", "k"); got != "-CLUSTERDOWN Hash slot not served\r\n" {
		t.Fatalf("GET on a node without slots %q", got)
	}
	if got := mxDo(srv, cl, "PING"); got != "+PONG\r\n" {
		t.Fatalf("PING %q", got)
	}
	if got := mxDo(srv, cl, "CLUSTER", "ADDSLOTSRANGE", "0", "16383"); got != "+OK\r\n" {
		t.Fatalf("ADDSLOTSRANGE %q", got)
	}
	if got := mxDo(srv, cl, "GET", "k"); got != "$-1\r\n" {
		t.Fatalf("GET %q", got)
	}
}

func TestClusterDownStates(t *testing.T) {
	srv := clusterServer(t, 2, "")
	cl := admClient(srv, 0, 5000)
	k := "foo" // slot 12182
	mxDo(srv, cl, "CLUSTER", "DELSLOTS", "0")
	if srv.clus.stateOK() {
		t.Fatal("state ok without slot 0")
	}
	if got := mxDo(srv, cl, "GET", k); got != "-CLUSTERDOWN The cluster is down\r\n" {
		t.Fatalf("GET while down %q", got)
	}
	srv.cfg.clusterReadsWhenDown.Store(true)
	if got := mxDo(srv, cl, "GET", k); got != "$-1\r\n" {
		t.Fatalf("GET while down, reads allowed %q", got)
	}
	if got := mxDo(srv, cl, "SET", k, "1"); got != "-CLUSTERDOWN The cluster is down and only accepts read commands\r\n" {
		t.Fatalf("SET while down, reads allowed %q", got)
	}
	srv.cfg.clusterReadsWhenDown.Store(false)
	srv.cfg.clusterFullCoverage.Store(false)
	if got := mxDo(srv, cl, "SET", k, "1"); got != "+OK\r\n" {
		t.Fatalf("SET, full coverage not required %q", got)
	}
	var k0 string
	for i := 0; ; i++ {
		if k0 = "k" + strconv.Itoa(i); shard.KeySlot([]byte(k0)) == 0 {
			break
		}
	}
	if got := mxDo(srv, cl, "GET", k0); got != "-CLUSTERDOWN Hash slot not served\r\n" {
		t.Fatalf("GET in an unserved slot %q", got)
	}
}

func TestClusterCrossSlot(t *testing.T) {
	srv := clusterServer(t, 4, "")
	cl := admClient(srv, 0, 5000)
	a, b := "a", keyOtherSlot("a")
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"MSET", a, "1", b, "2"}, "-" + errCrossSlot + "\r\n"},
		{[]string{"DEL", a, b}, "-" + errCrossSlot + "\r\n"},
		{[]string{"MSET", "{t}a", "1", "{t}b", "2"}, "+OK\r\n"},
		{[]string{"MSET", a, "1", a, "2"}, "+OK\r\n"},
		{[]string{"EVAL", "return 1", "2", a, b}, "-" + errCrossSlot + "\r\n"},
		{[]string{"SELECT", "1"}, "-" + errClusterSelect + "\r\n"},
		{[]string{"SELECT", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"SELECT", "0"}, "+OK\r\n"},
		{[]string{"MOVE", a, "1"}, "-ERR MOVE is not allowed in cluster mode\r\n"},
		{[]string{"SWAPDB", "0", "1"}, "-ERR SWAPDB is not allowed in cluster mode\r\n"},
		{[]string{"COPY", "{t}a", "{t}c", "DB", "1"}, "-ERR Copying to another database is not allowed in cluster mode\r\n"},
		{[]string{"COPY", "{t}a", "{t}c"}, ":1\r\n"},
		{[]string{"REPLICAOF", "127.0.0.1", "1"}, "-ERR REPLICAOF not allowed in cluster mode.\r\n"},
	} {
		if got := mxDo(srv, cl, c.cmd...); got != c.want {
			t.Errorf("%v: %q, want %q", c.cmd, got, c.want)
		}
	}
	// MULTI: a cross-slot command flags the transaction; commands of
	// different slots make EXEC answer CROSSSLOT and discard it.
	for _, c := range []struct{ cmd, want string }{
		{"MULTI", "+OK\r\n"}, {"MSET " + a + " 1 " + b + " 2", "-" + errCrossSlot + "\r\n"}, {"SET " + a + " 1", "+QUEUED\r\n"},
		{"EXEC", "-" + errExecAbort + "\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET " + a + " 1", "+QUEUED\r\n"}, {"SET " + b + " 1", "+QUEUED\r\n"}, {"PING", "+QUEUED\r\n"},
		{"EXEC", "-" + errCrossSlot + "\r\n"},
		{"EXEC", "-ERR EXEC without MULTI\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET {t}x 1", "+QUEUED\r\n"}, {"GET {t}x", "+QUEUED\r\n"},
		{"EXEC", "*2\r\n+OK\r\n$1\r\n1\r\n"},
	} {
		if got := mxDo(srv, cl, strings.Fields(c.cmd)...); got != c.want {
			t.Errorf("%s: %q, want %q", c.cmd, got, c.want)
		}
	}
	// cluster-allow-cross-slot yes: redshard's atomic cross-shard commands.
	srv.cfg.clusterCrossSlot.Store(true)
	if got := mxDo(srv, cl, "CLUSTER", "KEYSLOT", a); got == mxDo(srv, cl, "CLUSTER", "KEYSLOT", b) {
		t.Fatal("same slot")
	}
	if cmd, _, mask, rejected := cl.route([][]byte{[]byte("MSET"), []byte(a), []byte("1"), []byte(b), []byte("2")}); rejected || cmd == nil ||
		(shard.ShardOf([]byte(a), 4) != shard.ShardOf([]byte(b), 4) && mask == 0) {
		t.Fatalf("MSET across slots with cluster-allow-cross-slot yes: rejected %v mask %b", rejected, mask)
	}
}

func TestClusterScripts(t *testing.T) {
	srv := clusterServer(t, 1, "")
	cl := admClient(srv, 0, 5000)
	errSame := "Script attempted to access keys that do not hash to the same slot"
	for _, c := range []struct {
		args []string
		want string // a prefix of the reply
	}{
		{[]string{"EVAL", "#!lua\nredis.call('set', 'foo', 'bar')\nredis.call('set', 'bar', 'foo')\nreturn 'OK'", "0"}, "-ERR " + errSame},
		{[]string{"EVAL", "redis.call('set', 'foo', 'bar'); redis.call('set', 'bar', 'foo')", "0"}, "$-1"},
		{[]string{"EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('set', 'foo', 'bar'); redis.call('set', 'bar', 'foo')", "0"}, "$-1"},
		{[]string{"EVAL", "#!lua\nredis.call('set', 'foo', 'bar')\nreturn 'OK'", "1", "bar"}, "-ERR " + errSame},
		{[]string{"EVAL", "#!lua\nredis.call('set', KEYS[1], 'bar')\nreturn 'OK'", "1", "bar"}, "$2\r\nOK"},
		{[]string{"EVAL", "return redis.call('mset', 'foo', 1, 'bar', 2)", "0"}, "-ERR Script attempted to access a non local key in a cluster node"},
		{[]string{"EVAL", "#!lua flags=no-cluster\nreturn 1", "0"}, "-ERR Can not run script on cluster, 'no-cluster' flag is set."},
		{[]string{"EVAL", "return redis.call('select', '1')", "0"}, "-" + errClusterSelect},
	} {
		if got := mxDo(srv, cl, c.args...); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %q, want %q...", c.args[1], got, c.want)
		}
	}
	// Functions cross no slot unless flagged.
	lib := "#!lua name=crossslot\nlocal function f(keys, args)\nredis.call('set', 'foo', 'bar')\nredis.call('set', 'bar', 'foo')\nreturn 'OK'\nend\n"
	if got := mxDo(srv, cl, "FUNCTION", "LOAD", "REPLACE", lib+"redis.register_function('test_cross_slot', f)"); !strings.HasPrefix(got, "$9") {
		t.Fatalf("FUNCTION LOAD %q", got)
	}
	if got := mxDo(srv, cl, "FCALL", "test_cross_slot", "0"); !strings.HasPrefix(got, "-ERR "+errSame) {
		t.Fatalf("FCALL %q", got)
	}
	mxDo(srv, cl, "FUNCTION", "LOAD", "REPLACE", lib+"redis.register_function{function_name='test_cross_slot', callback=f, flags={'allow-cross-slot-keys'}}")
	if got := mxDo(srv, cl, "FCALL", "test_cross_slot", "0"); got != "$2\r\nOK\r\n" {
		t.Fatalf("FCALL allow-cross-slot-keys %q", got)
	}
	srv.cfg.clusterCrossSlot.Store(true)
	if got := mxDo(srv, cl, "EVAL", "#!lua\nredis.call('set', 'foo', 'bar')\nreturn redis.call('mset', 'foo', 1, 'bar', 2)", "0"); got != "+OK\r\n" {
		t.Fatalf("cluster-allow-cross-slot yes: %q", got)
	}
}

// The slot map's owner is the shard that cluster clients route to: a
// slot's keys are on one shard.
func TestKeySlotAgreesWithShardOf(t *testing.T) {
	for i := 0; i < 5000; i++ {
		k := []byte("key:" + strconv.Itoa(i))
		if i%3 == 0 {
			k = []byte("{user" + strconv.Itoa(i%17) + "}:" + strconv.Itoa(i))
		}
		for _, n := range []int{1, 2, 3, 4, 7, 64} {
			if shard.KeySlot(k)%n != shard.ShardOf(k, n) {
				t.Fatalf("%s: slot %d, shard %d of %d", k, shard.KeySlot(k), shard.ShardOf(k, n), n)
			}
		}
	}
	if shard.KeySlot([]byte("{}x")) != shard.KeySlot([]byte("{}x")) || shard.KeySlot([]byte("a{b}c")) != shard.KeySlot([]byte("b")) {
		t.Fatal("hash tags")
	}
}
