package tests

import (
	"net"
	"strings"
	"testing"
	"time"
)

// DEBUG SLEEP stops the whole server, as it stops Redis's one thread: a
// PING from a client of another loop, sent while the sleep runs, is
// answered only once it has ended (Redis's tests need this: a master that
// sends no newline lets a replica's handshake time out, a MIGRATE target
// that answers nothing times the MIGRATE out). The same inside MULTI.
func TestDebugSleepStopsEveryLoop(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes", "--enable-failpoints", "yes")
	// Consecutive connections go to consecutive loops (round robin); the
	// test checks that these two did land on different loops: with the
	// sleeper's loop alone held (its own reply of the failpoint's SET
	// waits 400 ms in reply-write, on its loop), the other's PING is
	// answered at once.
	sleeper, other := s.raw(t), s.raw(t)
	sleeper.do(resp("ping"), "+PONG\r\n")
	other.do(resp("ping"), "+PONG\r\n")
	sleeper.write(resp("debug", "failpoint", "set", "reply-write", "sleep", "400", "COUNT", "1"))
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	other.do(resp("ping"), "+PONG\r\n")
	if d := time.Since(t0); d > 250*time.Millisecond {
		t.Fatalf("PING answered after %v while one loop was held: the two clients share a loop", d)
	}
	sleeper.expect("+OK\r\n")

	for _, sleep := range [][]string{
		{resp("debug", "sleep", "1"), "+OK\r\n"},
		{resp("multi") + resp("debug", "sleep", "1") + resp("exec"), "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n"},
	} {
		start := time.Now()
		sleeper.write(sleep[0])
		time.Sleep(100 * time.Millisecond)
		other.do(resp("ping"), "+PONG\r\n")
		if d := time.Since(start); d < time.Second {
			t.Errorf("%q: another loop's PING answered %v after the sleep was sent, before it ended", sleep[0], d)
		}
		sleeper.expect(sleep[1])
	}
}

// A replica in its handshake times out when the master stops in DEBUG
// SLEEP, as Redis's replication test "Slave is able to detect timeout
// during handshake" expects: the master, waiting to start a disk-less sync
// (repl-diskless-sync-delay), keeps the replica's link alive with a newline
// a second from loop 0's cron, and a sleeping master sends none, whichever
// loop the sleeping client is on. The replica says Redis's words.
func TestReplicaHandshakeTimesOutWhileMasterSleeps(t *testing.T) {
	master := startServer(t, "--shards", "4", "--enable-debug-command", "yes",
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1000")
	replica := startServer(t, "--shards", "2", "--repl-timeout", "2")
	ctx := ctxT(t)
	rc := replica.client(t, 2)
	host, port, _ := net.SplitHostPort(master.Addr)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replica's handshake", func() bool {
		role, _ := rc.Do(ctx, "ROLE").Slice()
		return len(role) == 5 && role[3] == "handshake"
	})
	// A newline a second keeps the link alive past repl-timeout until the
	// master sleeps.
	time.Sleep(2500 * time.Millisecond)
	const timeout = "Timeout connecting to the MASTER..."
	if strings.Contains(replica.log.String(), timeout) {
		t.Fatalf("the handshake timed out before the master slept:\n%s", logTail(replica.log.String(), 20))
	}
	sleeper := master.raw(t)
	sleeper.write(resp("debug", "sleep", "3"))
	waitFor(t, "the replica's handshake timeout", func() bool {
		return strings.Contains(replica.log.String(), timeout)
	})
	sleeper.expect("+OK\r\n")
}
