package tests

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Cluster mode on one node (cluster-enabled yes): cluster clients and
// tools, unchanged, against redshard with 4 shards.

func startCluster(t *testing.T, extra ...string) *server {
	t.Helper()
	return startServer(t, append([]string{"--shards", strconv.Itoa(nShards), "--cluster-enabled", "yes"}, extra...)...)
}

func clusterClient(t *testing.T, s *server) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:           []string{s.Addr},
		DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
		DialTimeout:  5 * time.Second,
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 30 * time.Second,
		MaxRedirects: 0, // one node owns every slot: a redirection is a bug
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestClusterGoRedisClusterClient(t *testing.T) {
	s := startCluster(t)
	c := clusterClient(t, s)
	ctx := ctxT(t)

	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil || len(slots) != 1 || slots[0].Start != 0 || slots[0].End != 16383 || len(slots[0].Nodes) != 1 ||
		slots[0].Nodes[0].Addr != s.Addr {
		t.Fatalf("CLUSTER SLOTS %+v %v", slots, err)
	}
	// Keys spread over every shard and many slots.
	keys := spreadKeys("cc:", nShards, 50)
	for i, k := range keys {
		if err := c.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	for i, k := range keys {
		if v, err := c.Get(ctx, k).Int(); err != nil || v != i {
			t.Fatalf("GET %s: %v %v", k, v, err)
		}
	}
	// A pipeline over many slots (go-redis sends it to the one node).
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Incr(ctx, k)
		}
		return nil
	})
	if err != nil || len(cmds) != len(keys) {
		t.Fatalf("pipeline: %d %v", len(cmds), err)
	}
	for i, cmd := range cmds {
		if v, _ := cmd.(*redis.IntCmd).Result(); v != int64(i+1) {
			t.Fatalf("pipeline INCR %s: %d", keys[i], v)
		}
	}
	// Multi-key commands: one hash tag is one slot, so one shard.
	if err := c.MSet(ctx, "{user:1}:name", "ann", "{user:1}:age", "33").Err(); err != nil {
		t.Fatalf("MSET with a hash tag: %v", err)
	}
	if vals, err := c.MGet(ctx, "{user:1}:name", "{user:1}:age").Result(); err != nil || vals[0] != "ann" || vals[1] != "33" {
		t.Fatalf("MGET %v %v", vals, err)
	}
	// Across slots: CROSSSLOT, as Redis Cluster answers.
	err = c.MSet(ctx, "a", "1", "b", "2").Err()
	if err == nil || err.Error() != "CROSSSLOT Keys in request don't hash to the same slot" {
		t.Fatalf("MSET across slots: %v", err)
	}
	if n, err := c.Exists(ctx, "a", "b").Result(); n != 0 || err != nil && !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		// go-redis may split EXISTS per slot; either way nothing was written.
		t.Fatalf("EXISTS a b after the refused MSET: %d %v", n, err)
	}
	// A transaction on one slot.
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "{tx}a", "1", 0)
		p.Incr(ctx, "{tx}a")
		return nil
	})
	if err != nil {
		t.Fatalf("MULTI/EXEC on one slot: %v", err)
	}
	if v, _ := c.Get(ctx, "{tx}a").Result(); v != "2" {
		t.Fatalf("{tx}a = %q", v)
	}
	// A script on one slot.
	if v, err := c.Eval(ctx, "return redis.call('incr', KEYS[1])", []string{"{tx}a"}).Int(); err != nil || v != 3 {
		t.Fatalf("EVAL: %v %v", v, err)
	}
	// CLUSTER INFO, NODES, SHARDS through the client.
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_assigned:16384") {
		t.Fatalf("CLUSTER INFO %q %v", info, err)
	}
	nodes, err := c.ClusterNodes(ctx).Result()
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{40} 127\.0\.0\.1:`+strconv.Itoa(s.Port)+`@`+strconv.Itoa(s.Port+10000)+` myself,master - 0 0 0 connected 0-16383\n$`).MatchString(nodes) {
		t.Fatalf("CLUSTER NODES %q %v", nodes, err)
	}
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil || len(shards) != 1 || len(shards[0].Nodes) != 1 || shards[0].Nodes[0].Port != int64(s.Port) || shards[0].Nodes[0].Role != "master" {
		t.Fatalf("CLUSTER SHARDS %+v %v", shards, err)
	}
	if n, err := c.DBSize(ctx).Result(); err != nil || n != int64(len(keys)+3) {
		t.Fatalf("DBSIZE %d %v", n, err)
	}
}

// cluster-allow-cross-slot yes: redshard's atomic cross-shard multi-key
// commands, for clients that know they talk to one redshard.
func TestClusterAllowCrossSlot(t *testing.T) {
	s := startCluster(t, "--cluster-allow-cross-slot", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	keys := spreadKeys("x:", 4, 1) // one key per shard
	if shardsOf(nShards, keys...) != nShards {
		t.Fatal("keys not spread")
	}
	args := []any{}
	for _, k := range keys {
		args = append(args, k, "v")
	}
	if err := c.MSet(ctx, args...).Err(); err != nil {
		t.Fatalf("MSET across shards: %v", err)
	}
	if n, err := c.Exists(ctx, keys...).Result(); err != nil || n != int64(len(keys)) {
		t.Fatalf("EXISTS %d %v", n, err)
	}
	if err := c.Do(ctx, "CONFIG", "SET", "cluster-allow-cross-slot", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.MSet(ctx, args...).Err(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		t.Fatalf("MSET after CONFIG SET cluster-allow-cross-slot no: %v", err)
	}
	if err := c.Do(ctx, "SELECT", "1").Err(); err == nil || err.Error() != "ERR SELECT is not allowed in cluster mode" {
		t.Fatalf("SELECT 1: %v", err)
	}
}

// The node id is kept in nodes.conf, in Redis's format, across restarts.
func TestClusterNodesConfRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "--shards", "2", "--cluster-enabled", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil || len(id) != 40 {
		t.Fatalf("MYID %q %v", id, err)
	}
	if err := c.Do(ctx, "CLUSTER", "DELSLOTSRANGE", "0", "99").Err(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "nodes.conf"))
	want := id + " :" + strconv.Itoa(s.Port) + "@" + strconv.Itoa(s.Port+10000) + " myself,master - 0 0 0 connected 100-16383\nvars currentEpoch 0 lastVoteEpoch 0\n"
	if err != nil || string(data) != want {
		t.Fatalf("nodes.conf %q, want %q (%v)", data, want, err)
	}
	s.stop()
	s2 := startServerIn(t, dir, "--shards", "2", "--cluster-enabled", "yes")
	c2 := s2.client(t, 2)
	if id2, err := c2.Do(ctx, "CLUSTER", "MYID").Text(); err != nil || id2 != id {
		t.Fatalf("MYID after restart %q, was %q (%v)", id2, id, err)
	}
	info, _ := c2.Do(ctx, "CLUSTER", "INFO").Text()
	if !strings.Contains(info, "cluster_state:fail\r\n") || !strings.Contains(info, "cluster_slots_assigned:16284\r\n") {
		t.Fatalf("CLUSTER INFO after restart %q", info)
	}
	if err := c2.Get(ctx, "foo").Err(); err == nil || err.Error() != "CLUSTERDOWN The cluster is down" {
		t.Fatalf("GET with slots 0-99 unassigned: %v", err)
	}
	if err := c2.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "99").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c2.Get(ctx, "foo").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET once every slot is served: %v", err)
	}
}

func TestClusterRedisCLI(t *testing.T) {
	cli := redisCLI(t)
	s := startCluster(t)
	p := strconv.Itoa(s.Port)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "set", "foo", "bar"}, "OK\n"},
		{[]string{"-c", "get", "foo"}, "bar\n"},
		{[]string{"-c", "mset", "{t}a", "1", "{t}b", "2"}, "OK\n"},
		{[]string{"-c", "mget", "{t}a", "{t}b"}, "1\n2\n"},
		{[]string{"-c", "mset", "a", "1", "b", "2"}, "CROSSSLOT Keys in request don't hash to the same slot\n\n"},
		{[]string{"-c", "cluster", "keyslot", "foo"}, "12182\n"},
		{[]string{"-c", "cluster", "countkeysinslot", "12182"}, "1\n"},
		{[]string{"-c", "cluster", "getkeysinslot", "12182", "10"}, "foo\n"},
	} {
		out, err := runCLI(t, cli, nil, append([]string{"-h", "127.0.0.1", "-p", p}, tc.args...)...)
		if err != nil || out != tc.want {
			t.Errorf("redis-cli %v: %q, want %q (%v)", tc.args, out, tc.want, err)
		}
	}
	out, err := runCLI(t, cli, nil, "--cluster", "check", "127.0.0.1:"+p)
	if err != nil || !strings.Contains(out, "[OK] All nodes agree about slots configuration.") ||
		!strings.Contains(out, "[OK] All 16384 slots covered.") || !strings.Contains(out, "0 keys") && !strings.Contains(out, "keys |") {
		t.Fatalf("redis-cli --cluster check: %v\n%s", err, out)
	}
	out, err = runCLI(t, cli, nil, "--cluster", "info", "127.0.0.1:"+p)
	if err != nil || !strings.Contains(out, "16384 slots") {
		t.Fatalf("redis-cli --cluster info: %v\n%s", err, out)
	}
}

// At start, keys loaded into slots that no node serves are taken (Redis's
// verifyClusterConfigWithData), and keys in a database other than 0 stop
// the start.
func TestClusterVerifyDataAtStart(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--shards", "2", "--cluster-enabled", "yes", "--appendonly", "yes"}
	s := startServerIn(t, dir, args...)
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.Set(ctx, "foo", "bar", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "CLUSTER", "DELSLOTS", "12182").Err(); err != nil {
		t.Fatal(err)
	}
	s.stop()
	s2 := startServerIn(t, dir, args...)
	c2 := s2.client(t, 2)
	if v, err := c2.Get(ctx, "foo").Result(); err != nil || v != "bar" {
		t.Fatalf("GET foo after the restart: %q %v", v, err)
	}
	if !strings.Contains(s2.log.String(), "I have keys for unassigned slot 12182. Taking responsibility for it.") {
		t.Fatalf("no log line for the slot taken\n%s", s2.log.String())
	}
	s2.stop()
	data, _ := os.ReadFile(filepath.Join(dir, "nodes.conf"))
	if !strings.Contains(string(data), " connected 0-16383\n") {
		t.Fatalf("nodes.conf %q", data)
	}

	// Keys in db 1, written without cluster mode.
	dir2 := t.TempDir()
	s3 := startServerIn(t, dir2, "--appendonly", "yes")
	c3 := s3.clientWith(t, func(o *redis.Options) { o.DB = 1 })
	if err := c3.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s3.stop()
	s4, err := tryStart(t, dir2, []string{"--cluster-enabled", "yes", "--appendonly", "yes"})
	if err == nil {
		s4.stop()
		t.Fatal("started in cluster mode with keys in db 1")
	}
	if !strings.Contains(s4.log.String(), "You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.") {
		t.Fatalf("log:\n%s", s4.log.String())
	}
}
