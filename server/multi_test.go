package server

import (
	"math/bits"
	"strconv"
	"strings"
	"testing"

	"github.com/redshard/redshard/shard"
)

// mxDo runs a command for cl the way process() does (route, with the MULTI
// hook, then the handler), every shard being reachable from this goroutine.
func mxDo(srv *Server, cl *Client, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	start := len(cl.out)
	if cmd, target, _, rejected := cl.route(argv); !rejected {
		cl.loop.runLocal(cl, cmd, argv, target >= 0, false)
	}
	out := string(cl.out[start:])
	cl.out = cl.out[:0]
	return out
}

// keyOn returns a key that routes to shard i of n.
func keyOn(i, n int) string {
	for j := 0; ; j++ {
		k := "k" + strconv.Itoa(j)
		if shard.ShardOf([]byte(k), n) == i {
			return k
		}
	}
}

// EXEC is routed over the union of its commands' shards: inline when that
// is nothing or the home shard, a hop for one other shard, a cross-shard
// transaction for several; home-loop commands add the home shard.
func TestExecPlacement(t *testing.T) {
	const n = 4
	srv := admServer(t, n)
	home := 1
	k := func(i int) string { return keyOn(i, n) }
	cases := []struct {
		name   string
		queue  [][]string
		target int
		mask   uint64
	}{
		{"empty", nil, home, 0},
		{"keyless", [][]string{{"PING"}, {"ECHO", "x"}}, home, 0},
		{"home shard", [][]string{{"SET", k(home), "1"}, {"GET", k(home)}}, home, 0},
		{"one other shard", [][]string{{"SET", k(3), "1"}, {"PING"}, {"INCR", k(3)}}, 3, 0},
		{"two shards", [][]string{{"SET", k(0), "1"}, {"SET", k(2), "1"}}, -1, 0b0101},
		{"a multi-key command", [][]string{{"MSET", k(0), "1", k(3), "2"}}, -1, 0b1001},
		{"SELECT adds home", [][]string{{"SELECT", "2"}, {"SET", k(3), "1"}}, -1, 0b1010},
		{"all shards", [][]string{{"SET", k(0), "1"}, {"DBSIZE"}}, -1, 0b1111},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := admClient(srv, home, 5000)
			if got := mxDo(srv, cl, "MULTI"); got != "+OK\r\n" {
				t.Fatalf("MULTI: %q", got)
			}
			for _, q := range tc.queue {
				if got := mxDo(srv, cl, q...); got != "+QUEUED\r\n" {
					t.Fatalf("%v: %q", q, got)
				}
			}
			cmd, target, mask, rejected := cl.route([][]byte{[]byte("EXEC")})
			if rejected || cmd == nil || target != tc.target || mask != tc.mask {
				t.Fatalf("EXEC routed to target %d mask %04b (rejected %v), want %d %04b", target, mask, rejected, tc.target, tc.mask)
			}
			run := cl.multi.runMask
			if want := tc.mask; (want == 0 && run != 1<<uint(tc.target)) || (want != 0 && run != want) {
				t.Fatalf("runMask %04b", run)
			}
			if bits.OnesCount64(mask) == 1 {
				t.Fatalf("a one-shard EXEC must not be a transaction")
			}
			cl.discardMulti(1 << uint(home))
		})
	}
}

// Queueing, queue-time errors and EXEC's reply; SELECT inside MULTI stays
// in effect after it.
func TestMultiQueueAndExec(t *testing.T) {
	srv := admServer(t, 4)
	cl := admClient(srv, 0, 5000)
	steps := []struct{ cmd, want string }{
		{"EXEC", "-ERR EXEC without MULTI\r\n"},
		{"MULTI", "+OK\r\n"},
		{"SET a 1", "+QUEUED\r\n"},
		{"INCR a", "+QUEUED\r\n"},
		{"SELECT 3", "+QUEUED\r\n"},
		{"SET a x", "+QUEUED\r\n"},
		{"INCR a", "+QUEUED\r\n"},
		{"MULTI", "-ERR MULTI calls can not be nested\r\n"},
		{"EXEC", "*5\r\n+OK\r\n:2\r\n+OK\r\n+OK\r\n-ERR value is not an integer or out of range\r\n"},
		{"GET a", "$1\r\nx\r\n"},
		{"SELECT 0", "+OK\r\n"},
		{"GET a", "$1\r\n2\r\n"},

		{"MULTI", "+OK\r\n"},
		{"SET b 1", "+QUEUED\r\n"},
		{"GET", "-ERR wrong number of arguments for 'get' command\r\n"},
		{"NOSUCHCMD", "-ERR unknown command 'NOSUCHCMD', with args beginning with: \r\n"},
		{"SAVE", "-ERR Command not allowed inside a transaction\r\n"},
		{"SHUTDOWN", "-ERR Command not allowed inside a transaction\r\n"},
		{"EXEC", "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{"EXISTS b", ":0\r\n"},

		{"MULTI", "+OK\r\n"},
		{"EXEC x", "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"},
		{"DISCARD", "-ERR DISCARD without MULTI\r\n"},
		{"MULTI", "+OK\r\n"},
		{"DEL a", "+QUEUED\r\n"},
		{"DISCARD", "+OK\r\n"},
		{"EXISTS a", ":1\r\n"},
	}
	for _, s := range steps {
		if got := mxDo(srv, cl, strings.Fields(s.cmd)...); got != s.want {
			t.Fatalf("%s:\n got  %q\n want %q", s.cmd, got, s.want)
		}
	}
	if cl.multi.active || len(cl.multi.cmds) != 0 {
		t.Fatalf("multi state left over: %+v", cl.multi)
	}
}

// WATCH: a change by another client fails EXEC with a null array (RESP3
// too), and every way out of a transaction ends the WATCH session.
func TestWatchExec(t *testing.T) {
	srv := admServer(t, 1)
	cl := admClient(srv, 0, 5000)
	other := admClient(srv, 0, 5001)
	do := func(c *Client, cmd, want string) {
		t.Helper()
		if got := mxDo(srv, c, strings.Fields(cmd)...); got != want {
			t.Fatalf("%s:\n got  %q\n want %q", cmd, got, want)
		}
	}
	do(cl, "WATCH a b", "+OK\r\n")
	do(other, "SET b 1", "+OK\r\n")
	do(cl, "MULTI", "+OK\r\n")
	do(cl, "WATCH a", "-ERR WATCH inside MULTI is not allowed\r\n")
	do(cl, "SET a 1", "+QUEUED\r\n")
	do(cl, "EXEC", "*-1\r\n")
	do(cl, "EXISTS a", ":0\r\n")
	if srv.shards[0].Watched() != 0 {
		t.Fatalf("EXEC left %d registrations", srv.shards[0].Watched())
	}

	cl.proto = 3 // as HELLO 3 leaves it
	do(cl, "WATCH a", "+OK\r\n")
	do(other, "SET a 2", "+OK\r\n")
	do(cl, "MULTI", "+OK\r\n")
	do(cl, "EXEC", "_\r\n")

	for _, exit := range []string{"UNWATCH", "RESET", "DISCARD"} {
		if exit == "DISCARD" {
			do(cl, "WATCH a", "+OK\r\n")
			do(cl, "MULTI", "+OK\r\n")
		} else {
			do(cl, "WATCH a", "+OK\r\n")
		}
		mxDo(srv, cl, exit)
		if srv.shards[0].Watched() != 0 || cl.multi.watch != nil {
			t.Fatalf("%s left the WATCH session", exit)
		}
		do(other, "SET a 3", "+OK\r\n")
		do(cl, "MULTI", "+OK\r\n")
		do(cl, "PING", "+QUEUED\r\n")
		if got := mxDo(srv, cl, "EXEC"); !strings.HasSuffix(got, "PONG\r\n") {
			t.Fatalf("EXEC after %s: %q", exit, got)
		}
	}

	// A watched key whose recorded expiry has passed fails EXEC.
	do(other, "SET e 1 PX 50", "+OK\r\n")
	do(cl, "WATCH e", "+OK\r\n")
	do(cl, "MULTI", "+OK\r\n")
	cl.loop.nowMs += 100
	srv.shards[0].SetNow(cl.loop.nowMs)
	if got := mxDo(srv, cl, "EXEC"); got != "*-1\r\n" { // RESET went back to RESP2
		t.Fatalf("EXEC after a watched key expired: %q", got)
	}
}

// maxmemory: while out of memory nothing can be queued (the transaction is
// flagged) but DISCARD works; EXEC is refused as a whole when it holds a
// denyoom command, and runs when it holds only reads.
func TestMultiOOM(t *testing.T) {
	srv := admServer(t, 1)
	cl := admClient(srv, 0, 5000)
	do := func(cmd, want string) {
		t.Helper()
		if got := mxDo(srv, cl, strings.Fields(cmd)...); got != want {
			t.Fatalf("%s:\n got  %q\n want %q", cmd, got, want)
		}
	}
	do("SET x value", "+OK\r\n")
	srv.shardBudget.Store(1) // maxmemory reached, noeviction

	do("MULTI", "+OK\r\n")
	do("SET y 1", "-"+oomError+"\r\n")
	do("DISCARD", "+OK\r\n")
	do("MULTI", "+OK\r\n")
	do("GET x", "-"+oomError+"\r\n")
	do("EXEC", "-EXECABORT Transaction discarded because of previous errors.\r\n")

	srv.shardBudget.Store(0)
	do("MULTI", "+OK\r\n")
	do("GET x", "+QUEUED\r\n")
	do("PING", "+QUEUED\r\n")
	srv.shardBudget.Store(1)
	do("EXEC", "*2\r\n$5\r\nvalue\r\n+PONG\r\n")

	srv.shardBudget.Store(0)
	do("MULTI", "+OK\r\n")
	do("SET x 1", "+QUEUED\r\n")
	do("GET x", "+QUEUED\r\n")
	srv.shardBudget.Store(1)
	do("EXEC", "-EXECABORT Transaction discarded because of: "+oomError+"\r\n")
	srv.shardBudget.Store(0)
	do("GET x", "$5\r\nvalue\r\n")
}
