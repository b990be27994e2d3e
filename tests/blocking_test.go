package tests

// Blocking pops end to end on a 4-shard server: blocked clients on
// different loops are served first blocked, first served by a push from
// another connection; a client blocked on keys of several shards is served
// exactly once; BLMOVE across shards; timeouts, disconnects, CLIENT
// UNBLOCK; and a served BLPOP under appendfsync always survives kill -9.

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedClients reads INFO's blocked_clients.
func blockedClients(t *testing.T, s *server) int {
	t.Helper()
	info, err := s.client(t, 2).Info(ctxT(t), "clients").Result()
	if err != nil {
		t.Fatalf("INFO clients: %v", err)
	}
	m := regexp.MustCompile(`blocked_clients:(\d+)`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no blocked_clients in %q", info)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// waitBlocked waits until n clients are blocked.
func waitBlocked(t *testing.T, s *server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for blockedClients(t, s) != n {
		if time.Now().After(deadline) {
			t.Fatalf("blocked_clients never reached %d (now %d)", n, blockedClients(t, s))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func popReply(key, val string) string { return "*2\r\n" + bulk(key) + bulk(val) }

func TestBlockedClientsOnDifferentLoopsServedFIFO(t *testing.T) {
	s := startServer(t, "--shards", "4")
	// Consecutive connections land on consecutive loops (round robin), so
	// the six waiters sit on every loop, and the key's shard is one of them.
	var conns []*rawConn
	for i := 0; i < 6; i++ {
		rc := s.raw(t)
		rc.write(resp("BLPOP", "queue", "0"))
		waitBlocked(t, s, i+1)
		conns = append(conns, rc)
	}
	c := s.client(t, 2)
	if n, err := c.RPush(ctxT(t), "queue", "a", "b", "c").Result(); err != nil || n != 3 {
		t.Fatalf("RPUSH: %d %v", n, err)
	}
	for _, v := range []string{"d", "e", "f"} {
		if err := c.RPush(ctxT(t), "queue", v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, rc := range conns {
		rc.expect(popReply("queue", string(rune('a'+i))))
	}
	if n := c.Exists(ctxT(t), "queue").Val(); n != 0 {
		t.Errorf("queue still exists after six pops")
	}
	waitBlocked(t, s, 0)
}

func TestBlockedOnSeveralShardsServedExactlyOnce(t *testing.T) {
	s := startServer(t, "--shards", "4")
	keys := spreadKeys("bk", 4, 1)
	if shardsOf(4, keys...) != 4 {
		t.Fatalf("keys %v are not on four shards", keys)
	}
	const waiters = 3
	var conns []*rawConn
	for i := 0; i < waiters; i++ {
		rc := s.raw(t)
		rc.write(resp(append(append([]string{"BLPOP"}, keys...), "0")...))
		conns = append(conns, rc)
	}
	waitBlocked(t, s, waiters)
	// Push one element to every key at once, from four connections.
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func(k, v string) {
			defer wg.Done()
			c := s.client(t, 2)
			if err := c.RPush(ctxT(t), k, v).Err(); err != nil {
				t.Errorf("RPUSH %s: %v", k, err)
			}
		}(k, "v"+strconv.Itoa(i))
	}
	wg.Wait()
	got := map[string]bool{}
	for _, rc := range conns {
		if rc.line() != "*2" {
			t.Fatal("expected a two-element reply")
		}
		rc.line()
		key := rc.line()
		rc.line()
		val := rc.line()
		if got[val] {
			t.Errorf("element %s served twice", val)
		}
		got[val] = true
		if !strings.HasPrefix(key, "bk") {
			t.Errorf("reply key %q", key)
		}
	}
	c := s.client(t, 2)
	left := int64(0)
	for _, k := range keys {
		left += c.LLen(ctxT(t), k).Val()
	}
	if left != 4-waiters {
		t.Errorf("%d elements left in the lists, want %d", left, 4-waiters)
	}
	for _, rc := range conns {
		rc.expectSilent(50 * time.Millisecond) // served once: no second reply
	}
	waitBlocked(t, s, 0)
}

func TestBlmoveAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4")
	keys := spreadKeys("mv", 4, 1)
	src, dst := keys[0], keys[1]
	c := s.client(t, 2)
	c.RPush(ctxT(t), dst, "old")
	rc := s.raw(t)
	rc.write(resp("BLMOVE", src, dst, "LEFT", "RIGHT", "0"))
	waitBlocked(t, s, 1)
	c.RPush(ctxT(t), src, "x", "y")
	rc.expect(bulk("x"))
	if got := c.LRange(ctxT(t), dst, 0, -1).Val(); strings.Join(got, ",") != "old,x" {
		t.Errorf("destination %v, want [old x]", got)
	}
	if got := c.LRange(ctxT(t), src, 0, -1).Val(); strings.Join(got, ",") != "y" {
		t.Errorf("source %v, want [y]", got)
	}
	// BRPOPLPUSH the other way, into a new key on a third shard.
	rc.write(resp("BRPOPLPUSH", keys[2], keys[3], "0"))
	waitBlocked(t, s, 1)
	c.LPush(ctxT(t), keys[2], "z")
	rc.expect(bulk("z"))
	if got := c.LRange(ctxT(t), keys[3], 0, -1).Val(); strings.Join(got, ",") != "z" {
		t.Errorf("BRPOPLPUSH destination %v", got)
	}
	if n := c.Exists(ctxT(t), keys[2]).Val(); n != 0 {
		t.Errorf("BRPOPLPUSH source left behind")
	}
}

func TestBlockingTimeouts(t *testing.T) {
	s := startServer(t, "--shards", "4")
	rc := s.raw(t)
	start := time.Now()
	rc.do(resp("BLPOP", "nokey1", "nokey2", "0.2"), "*-1\r\n")
	if d := time.Since(start); d < 150*time.Millisecond || d > 3*time.Second {
		t.Errorf("BLPOP 0.2 answered after %v", d)
	}
	rc.do(resp("BLMOVE", "nokey1", "x", "LEFT", "LEFT", "0.05"), "*-1\r\n") // Redis 7.0: a null array
	rc.do(resp("BLMPOP", "0.05", "1", "nokey1", "LEFT"), "*-1\r\n")
	r3 := s.raw(t)
	r3.write(resp("HELLO", "3"))
	for r3.line() != "modules" { // skip HELLO's map up to its last field
	}
	r3.line() // the empty modules array
	r3.do(resp("BRPOP", "nokey1", "0.05"), "_\r\n")
	// Errors.
	e := s.raw(t)
	e.do(resp("BLPOP", "k", "-1"), "-ERR timeout is negative\r\n")
	e.do(resp("BLPOP", "k", "abc"), "-ERR timeout is not a float or out of range\r\n")
	e.do(resp("SET", "str", "v"), "+OK\r\n")
	e.do(resp("BLPOP", "str", "0"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	waitBlocked(t, s, 0)
}

func TestBlockedClientDisconnectsOrIsUnblocked(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	// A client that goes away while blocked is not served.
	gone := s.raw(t)
	gone.write(resp("BLPOP", "dq", "0"))
	waitBlocked(t, s, 1)
	gone.c.Close()
	waitBlocked(t, s, 0)
	c.RPush(ctxT(t), "dq", "kept")
	if got := c.LRange(ctxT(t), "dq", 0, -1).Val(); strings.Join(got, ",") != "kept" {
		t.Errorf("list after the blocked client left: %v", got)
	}
	c.Del(ctxT(t), "dq")

	// CLIENT UNBLOCK: as a timeout, then as an error; later commands run.
	rc := s.raw(t)
	rc.write(resp("CLIENT", "ID"))
	idLine := rc.line()
	id := strings.TrimPrefix(idLine, ":")
	rc.write(resp("BLPOP", "uq", "0") + resp("PING"))
	waitBlocked(t, s, 1)
	rc.expectSilent(30 * time.Millisecond) // PING waits behind BLPOP
	if n := c.Do(ctxT(t), "CLIENT", "UNBLOCK", id).Val(); n != int64(1) {
		t.Fatalf("CLIENT UNBLOCK = %v, want 1", n)
	}
	rc.expect("*-1\r\n+PONG\r\n")
	rc.write(resp("BRPOP", "uq", "0"))
	waitBlocked(t, s, 1)
	if n := c.Do(ctxT(t), "CLIENT", "UNBLOCK", id, "ERROR").Val(); n != int64(1) {
		t.Fatalf("CLIENT UNBLOCK ERROR = %v, want 1", n)
	}
	rc.expect("-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")
	if n := c.Do(ctxT(t), "CLIENT", "UNBLOCK", id).Val(); n != int64(0) {
		t.Errorf("CLIENT UNBLOCK of a client not blocked = %v, want 0", n)
	}
	waitBlocked(t, s, 0)
}

func TestServedBlpopSurvivesKill9UnderAppendfsyncAlways(t *testing.T) {
	s := startServer(t, aofArgs("always", "--shards", "4")...)
	keys := spreadKeys("dur", 4, 1)
	c := s.client(t, 2)
	var conns []*rawConn
	for i, k := range keys {
		rc := s.raw(t)
		rc.write(resp("BLPOP", k, "0"))
		waitBlocked(t, s, i+1)
		conns = append(conns, rc)
	}
	for _, k := range keys {
		// Two elements: the served client takes the first, one stays.
		if err := c.RPush(ctxT(t), k, "taken", "kept").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, rc := range conns {
		rc.expect(popReply(keys[i], "taken"))
	}
	s.kill9()
	s2 := startServerIn(t, s.Dir, aofArgs("always", "--shards", "4")...)
	c2 := s2.client(t, 2)
	for _, k := range keys {
		if got := c2.LRange(ctxT(t), k, 0, -1).Val(); strings.Join(got, ",") != "kept" {
			t.Errorf("%s after restart: %v, want [kept] (the served pop must be in the log)", k, got)
		}
	}
}

// A key that expires while the command that made it ready runs (MULTI,
// RPUSH, PEXPIRE, DEBUG SLEEP, EXEC) is checked against the time the
// waiters are served, as Redis's handleClientsBlockedOnKeys does: it is
// expired, its DEL goes to the replication stream after the EXEC, and the
// blocked client stays blocked (unit/type/list's "MULTI + LPUSH + EXPIRE +
// DEBUG SLEEP on blocked client, key already expired").
func TestBlockedClientNotServedAnExpiredKey(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	admin := s.raw(t)
	admin.do(resp("DEBUG", "SET-ACTIVE-EXPIRE", "0"), "+OK\r\n")
	// A raw replica, to read the stream: SYNC without capa eof gets a
	// length-prefixed RDB (after keep-alive newlines, maybe).
	rep := s.raw(t)
	rep.write(resp("SYNC"))
	for rep.readN(1) != "$" {
	}
	size, err := strconv.Atoi(rep.line())
	if err != nil {
		t.Fatal(err)
	}
	rep.readN(size)
	waiter := s.raw(t)
	waiter.write(resp("BRPOP", "k", "0"))
	waitBlocked(t, s, 1)
	admin.do(resp("MULTI"), "+OK\r\n")
	admin.do(resp("RPUSH", "k", "hello"), "+QUEUED\r\n")
	admin.do(resp("PEXPIRE", "k", "100"), "+QUEUED\r\n")
	admin.do(resp("DEBUG", "SLEEP", "0.2"), "+QUEUED\r\n")
	admin.do(resp("EXEC"), "*3\r\n:1\r\n:1\r\n+OK\r\n")
	waiter.expectSilent(300 * time.Millisecond) // still blocked
	admin.do(resp("EXISTS", "k"), ":0\r\n")
	admin.write(resp("CLIENT", "LIST"))
	if list := admin.bulk(); !strings.Contains(list, "cmd=brpop") || !strings.Contains(list, "flags=b") {
		t.Fatalf("the waiter is not blocked any more:\n%s", list)
	}
	// The stream: MULTI, RPUSH, PEXPIREAT, EXEC, then DEL k.
	var cmds []string
	for len(cmds) == 0 || cmds[len(cmds)-1] != "DEL k" {
		l := rep.line()
		if !strings.HasPrefix(l, "*") {
			continue
		}
		argc, _ := strconv.Atoi(l[1:])
		var argv []string
		for i := 0; i < argc; i++ {
			argv = append(argv, rep.bulk())
		}
		if argv[0] != "SELECT" && argv[0] != "PING" && argv[0] != "REPLCONF" {
			key := ""
			if len(argv) > 1 {
				key = argv[1]
			}
			cmds = append(cmds, strings.ToUpper(argv[0])+" "+key)
		}
	}
	if got := strings.Join(cmds, ", "); got != "MULTI , RPUSH k, PEXPIREAT k, EXEC , DEL k" {
		t.Fatalf("replication stream: %s", got)
	}
}

// SWAPDB that makes a waited-for key ready, when that key has expired: as
// Redis, the key's DEL reaches the log after the SWAPDB (Redis's
// scanDatabaseForReadyKeys finds keys without expiring them; serving the
// waiter expires it). The DEL used to go first, and replaying it deleted
// the key that database held before the swap: here db 9's string k, which
// the swap moves to db 1 and which a restart lost.
func TestSwapdbWakeOfExpiredKeyLogOrder(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "yes"}
	s := startServerIn(t, dir, args...)
	admin := s.raw(t)
	admin.do(resp("DEBUG", "SET-ACTIVE-EXPIRE", "0"), "+OK\r\n")
	admin.do(resp("SELECT", "1"), "+OK\r\n")
	admin.do(resp("RPUSH", "k", "hello"), ":1\r\n")
	admin.do(resp("PEXPIRE", "k", "100"), ":1\r\n")
	waiter := s.raw(t)
	waiter.do(resp("SELECT", "9"), "+OK\r\n")
	waiter.write(resp("BRPOP", "k", "0"))
	admin.do(resp("SELECT", "9"), "+OK\r\n")
	waitBlocked(t, s, 1)
	// A string under the waited-for name: the waiter stays blocked.
	admin.do(resp("SET", "k", "keep"), "+OK\r\n")
	time.Sleep(150 * time.Millisecond) // db 1's k expires
	admin.do(resp("SWAPDB", "1", "9"), "+OK\r\n")
	waiter.expectSilent(200 * time.Millisecond) // the list it was given has expired
	admin.do(resp("EXISTS", "k"), ":0\r\n")     // db 9
	admin.do(resp("SELECT", "1"), "+OK\r\n")
	admin.do(resp("GET", "k"), bulk("keep"))
	s.kill9()

	s2 := startServerIn(t, dir, args...)
	rc := s2.raw(t)
	rc.do(resp("SELECT", "1"), "+OK\r\n")
	rc.do(resp("GET", "k"), bulk("keep"))
	rc.do(resp("SELECT", "9"), "+OK\r\n")
	rc.do(resp("EXISTS", "k"), ":0\r\n")
}
