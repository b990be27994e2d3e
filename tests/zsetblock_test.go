package tests

// Blocking sorted set pops end to end on a 4-shard server: clients blocked
// (on every loop) in BZPOPMIN are served first blocked, first served by a
// ZADD from another connection; BZMPOP with COUNT and BZPOPMAX on keys of
// several shards; RESP3 shapes; timeouts; and the served pops are logged as
// ZPOPMIN/ZPOPMAX, so that a restart holds what is left.

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func zpopReply(key, member, score string) string {
	return "*3\r\n" + bulk(key) + bulk(member) + bulk(score)
}

func TestBzpopminServedFIFOAcrossLoops(t *testing.T) {
	s := startServer(t, "--shards", "4")
	// Consecutive connections land on consecutive loops (round robin), so
	// the waiters sit on every loop.
	var conns []*rawConn
	for i := 0; i < 6; i++ {
		rc := s.raw(t)
		rc.write(resp("BZPOPMIN", "zq", "0"))
		waitBlocked(t, s, i+1)
		conns = append(conns, rc)
	}
	c := s.client(t, 2)
	if n, err := c.ZAdd(ctxT(t), "zq", redis.Z{Score: 3, Member: "c"}, redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Result(); err != nil || n != 3 {
		t.Fatalf("ZADD: %d %v", n, err)
	}
	for i, m := range []string{"d", "e", "f"} {
		if err := c.ZAdd(ctxT(t), "zq", redis.Z{Score: float64(4 + i), Member: m}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, rc := range conns {
		m := string(rune('a' + i))
		rc.expect(zpopReply("zq", m, string(rune('1'+i))))
	}
	if n := c.Exists(ctxT(t), "zq").Val(); n != 0 {
		t.Errorf("zq still exists after six pops")
	}
	waitBlocked(t, s, 0)
}

func TestBzmpopAndBzpopmaxAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	keys := []string{"zk0", "zk1", "zk2", "zk3", "zk4", "zk5", "zk6", "zk7"}
	// BZMPOP with COUNT, in RESP3: key [[member score] ...].
	r3 := s.raw(t)
	r3.write(resp("HELLO", "3"))
	for r3.line() != "modules" {
	}
	r3.line()
	r3.write(resp("BZMPOP", "0", "2", "zk0", "zk1", "MAX", "COUNT", "2"))
	waitBlocked(t, s, 1)
	c.ZAdd(ctxT(t), "zk1", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2.5, Member: "y"}, redis.Z{Score: 3, Member: "z"})
	r3.expect("*2\r\n" + bulk("zk1") + "*2\r\n*2\r\n" + bulk("z") + ",3\r\n*2\r\n" + bulk("y") + ",2.5\r\n")
	if got := c.ZRange(ctxT(t), "zk1", 0, -1).Val(); strings.Join(got, ",") != "x" {
		t.Errorf("zk1 after BZMPOP: %v", got)
	}
	// Three clients blocked on eight keys (spread over the shards) are
	// served once each by ZADDs to three of them.
	var conns []*rawConn
	for i := 0; i < 3; i++ {
		rc := s.raw(t)
		rc.write(resp(append(append([]string{"BZPOPMAX"}, keys[2:]...), "0")...))
		conns = append(conns, rc)
	}
	waitBlocked(t, s, 3)
	for _, k := range []string{"zk7", "zk3", "zk5"} {
		if err := c.ZAdd(ctxT(t), k, redis.Z{Score: 1, Member: "m-" + k}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for _, rc := range conns {
		if l := rc.line(); l != "*3" {
			t.Fatalf("reply %q, want a three-element array", l)
		}
		rc.line()
		key := rc.line()
		rc.line()
		member := rc.line()
		rc.line()
		if score := rc.line(); score != "1" || member != "m-"+key || got[key] {
			t.Errorf("served %s %s %s (seen %v)", key, member, score, got[key])
		}
		got[key] = true
	}
	for _, rc := range conns {
		rc.expectSilent(30 * time.Millisecond)
	}
	waitBlocked(t, s, 0)
}

func TestBzpopTimeoutsAndErrors(t *testing.T) {
	s := startServer(t, "--shards", "4")
	rc := s.raw(t)
	start := time.Now()
	rc.do(resp("BZPOPMIN", "nokey1", "nokey2", "0.2"), "*-1\r\n")
	if d := time.Since(start); d < 150*time.Millisecond || d > 3*time.Second {
		t.Errorf("BZPOPMIN 0.2 answered after %v", d)
	}
	rc.do(resp("BZMPOP", "0.05", "1", "nokey1", "MIN"), "*-1\r\n")
	r3 := s.raw(t)
	r3.write(resp("HELLO", "3"))
	for r3.line() != "modules" {
	}
	r3.line()
	r3.do(resp("BZPOPMAX", "nokey1", "0.05"), "_\r\n")
	rc.do(resp("BZPOPMIN", "k", "-1"), "-ERR timeout is negative\r\n")
	rc.do(resp("BZMPOP", "0", "0", "k", "MIN"), "-ERR numkeys should be greater than 0\r\n")
	rc.do(resp("RPUSH", "lst", "v"), ":1\r\n")
	rc.do(resp("BZPOPMIN", "lst", "0"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	// A list pushed to a key a BZPOPMIN waits on does not serve it.
	w := s.raw(t)
	w.write(resp("BZPOPMIN", "mixed", "0"))
	waitBlocked(t, s, 1)
	rc.do(resp("RPUSH", "mixed", "v"), ":1\r\n")
	w.expectSilent(50 * time.Millisecond)
	rc.do(resp("DEL", "mixed"), ":1\r\n")
	rc.do(resp("ZADD", "mixed", "7", "m"), ":1\r\n")
	w.expect(zpopReply("mixed", "m", "7"))
	waitBlocked(t, s, 0)
}

func TestServedBzpopLoggedAsZpop(t *testing.T) {
	s := startServer(t, aofArgs("always", "--shards", "4")...)
	c := s.client(t, 2)
	rc := s.raw(t)
	rc.write(resp("BZPOPMIN", "zl", "0"))
	waitBlocked(t, s, 1)
	c.ZAdd(ctxT(t), "zl", redis.Z{Score: 1, Member: "taken"}, redis.Z{Score: 2, Member: "kept"})
	rc.expect(zpopReply("zl", "taken", "1"))
	rc.write(resp("BZMPOP", "0", "1", "zm", "MAX", "COUNT", "5"))
	waitBlocked(t, s, 1)
	c.ZAdd(ctxT(t), "zm", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	rc.expect("*2\r\n" + bulk("zm") + "*2\r\n*2\r\n" + bulk("b") + bulk("2") + "*2\r\n" + bulk("a") + bulk("1"))
	s.kill9()
	data, err := os.ReadFile(incrFileOf(s.Dir))
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	if !strings.Contains(log, "ZPOPMIN\r\n$2\r\nzl\r\n") || !strings.Contains(log, "ZPOPMAX\r\n$2\r\nzm\r\n$1\r\n2\r\n") || strings.Contains(log, "BZ") {
		t.Errorf("the log does not hold ZPOPMIN zl and ZPOPMAX zm 2:\n%q", log)
	}
	s2 := startServerIn(t, s.Dir, aofArgs("always", "--shards", "4")...)
	c2 := s2.client(t, 2)
	if got := c2.ZRange(ctxT(t), "zl", 0, -1).Val(); strings.Join(got, ",") != "kept" {
		t.Errorf("zl after restart: %v, want [kept]", got)
	}
	if n := c2.Exists(ctxT(t), "zm").Val(); n != 0 {
		t.Errorf("zm after restart exists")
	}
}
