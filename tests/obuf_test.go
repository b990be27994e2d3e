package tests

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A client that passes its output buffer hard limit in the middle of a
// pipeline whose commands go to every shard is closed with none of its
// replies, also not those of the runs that come back from other shards
// afterwards, and the commands after the one that passed the limit are not
// run (Redis stops processing a client marked CLOSE_ASAP).
func TestObufLimitStopsPipelineAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := ctxT(t)
	big := strings.Repeat("x", 10000)
	keys := spreadKeys("big", 4, 1) // one 10 kB value on each shard
	after := spreadKeys("after", 4, 1)
	for _, k := range keys {
		if err := c.Set(ctx, k, big, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ConfigSet(ctx, "client-output-buffer-limit", "normal 100000 0 0").Err(); err != nil {
		t.Fatal(err)
	}

	rc := s.raw(t)
	rc.do(resp("client", "setname", "piped"), "+OK\r\n")
	// For every shard: 12 GETs of its big value (120 kB, past the limit
	// within the first group), then a SET on the same shard, which lands
	// in the same run (or the same local batch) as the GETs before it.
	var pipe strings.Builder
	for i, k := range keys {
		for j := 0; j < 12; j++ {
			pipe.WriteString(resp("get", k))
		}
		pipe.WriteString(resp("set", after[i], "1"))
	}
	// Let the whole pipeline arrive while the server sleeps, so that it is
	// processed as one batch, as in Redis's test.
	sleeper := s.raw(t)
	sleeper.write(resp("debug", "sleep", "0.2"))
	time.Sleep(20 * time.Millisecond)
	rc.write(pipe.String())

	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(rc.r)
	if len(got) != 0 || err != nil {
		t.Fatalf("client over its hard limit read %d bytes (err %v), want 0 and EOF", len(got), err)
	}
	sleeper.expect("+OK\r\n")
	if list := c.ClientList(ctx).Val(); strings.Contains(list, "name=piped") {
		t.Errorf("client still listed:\n%s", list)
	}
	if n := c.Exists(ctx, after...).Val(); n != 0 {
		t.Errorf("%d of the SETs after the limit ran, want none", n)
	}
	// The server goes on serving, and every value is intact.
	for _, k := range keys {
		if v := c.Get(ctx, k).Val(); v != big {
			t.Fatalf("GET %s: %d bytes", k, len(v))
		}
	}
}

// Unbounded replies stop at the limit: HRANDFIELD with a huge negative
// count (gigabytes of reply) closes the client quickly instead of building
// it, on the key's shard and from a client of another loop alike.
func TestObufLimitStopsHugeReply(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	ctx := ctxT(t)
	if err := c.ConfigSet(ctx, "client-output-buffer-limit", "normal 1000000 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range spreadKeys("h", 4, 1) {
		if err := c.HSet(ctx, k, "a", "b").Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // a fresh connection each time: another loop
			rc := s.raw(t)
			start := time.Now()
			rc.write(resp("hrandfield", k, "-999999999"))
			_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(rc.r)
			if len(got) != 0 || err != nil {
				t.Fatalf("HRANDFIELD %s: read %d bytes (err %v), want 0 and EOF", k, len(got), err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("HRANDFIELD %s took %v to be cut", k, d)
			}
		}
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

// A client closed for its output buffer limit while a command of its runs
// on another shard gets nothing when that command's reply comes back. The
// other shard's loop alone is held (DEBUG SLEEP stops every loop, so the
// reply-write failpoint's sleep holds it: the sleeper's own reply to the
// failpoint's SET waits in it, on its loop), and a publication to the
// client (subscribed in RESP3) passes the pubsub class's hard limit
// meanwhile. Connections go to the loops in turn (round robin), so the
// test finds the loop of the sleeping connection by which shard stalls.
func TestObufKillDropsRepliesOfRunOnOtherShard(t *testing.T) {
	s := startServer(t, "--shards", "4", "--enable-failpoints", "yes")
	hold := resp("debug", "failpoint", "set", "reply-write", "sleep", "500", "COUNT", "1")
	keys := spreadKeys("k", 4, 1) // keys[i] is on shard i
	// Open the connections one by one: loops b, b+1, b+2, b+3 (mod 4).
	conns := make([]*rawConn, 4)
	for i := range conns {
		conns[i] = s.raw(t)
		conns[i].do(resp("ping"), "+PONG\r\n")
	}
	p, sleeper, pub, probe := conns[0], conns[1], conns[2], conns[3]
	pub.do(resp("config", "set", "client-output-buffer-limit", "pubsub 20000 0 0"), "+OK\r\n")
	for _, k := range keys {
		pub.do(resp("set", k, "v"), "+OK\r\n")
	}
	// Which shard sleeps? probe (loop b+3) asks each shard in turn; the one
	// that does not answer at once is loop b+1's.
	sleeper.write(hold)
	time.Sleep(20 * time.Millisecond)
	asleep := -1
	for i, k := range keys {
		probe.write(resp("get", k))
		_ = probe.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := probe.r.ReadByte(); err != nil {
			asleep = i
			break
		}
		_ = probe.r.UnreadByte()
		probe.expect("$1\r\nv\r\n")
	}
	if asleep < 0 {
		t.Fatal("no shard was held by the failpoint's sleep")
	}
	probe.expect("$1\r\nv\r\n")
	sleeper.expect("+OK\r\n")
	p.write(resp("hello", "3") + resp("ping"))
	for p.line() != "+PONG" {
	}
	p.do(resp("subscribe", "ch"), ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")

	// Hold loop b+1, have p's GET wait there, and overflow p meanwhile.
	sleeper.write(hold)
	time.Sleep(20 * time.Millisecond)
	p.write(resp("get", keys[asleep]))
	time.Sleep(20 * time.Millisecond)
	pub.do(resp("publish", "ch", strings.Repeat("x", 30000)), ":1\r\n")

	_ = p.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(p.r)
	if len(got) != 0 || err != nil {
		t.Fatalf("client closed for its limit read %q (err %v), want nothing and EOF", got, err)
	}
	sleeper.expect("+OK\r\n")
}

// A client's reply buffer shrinks back once it no longer needs it, as
// Redis's clientsCronResizeOutputBuffer: after a 40 KB reply its tot-mem
// holds the buffer; within a peak period of small replies (DEBUG
// REPLYBUFFER PEAK-RESET-TIME) the cron shrinks it to 1 KiB
// (reply_buffer_shrinks); with DEBUG REPLYBUFFER RESIZING 0 it stays. rbs
// is 1-16 KiB, as Redis's.
func TestReplyBufferShrinks(t *testing.T) {
	ctx := context.Background()
	s := startServer(t, "--enable-debug-command", "yes")
	c := s.client(t, 2)
	if err := c.Set(ctx, "big", strings.Repeat("x", 40000), 0).Err(); err != nil {
		t.Fatal(err)
	}
	rc := s.raw(t)
	rc.do("CLIENT SETNAME rb\r\n", "+OK\r\n")
	field := func(name string) int64 { // clienteviction_test.go's helpers
		t.Helper()
		n, err := strconv.ParseInt(clientField(clientLine(t, c, "rb"), name), 10, 64)
		if err != nil {
			t.Fatalf("no %s for the client named rb: %v", name, err)
		}
		return n
	}
	getBig := func() {
		rc.write("GET big\r\n")
		rc.expect("$40000\r\n")
		rc.readN(40002)
	}
	for _, resizing := range []string{"0", "1"} {
		if err := c.Do(ctx, "DEBUG", "REPLYBUFFER", "RESIZING", resizing).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Do(ctx, "DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100").Err(); err != nil {
			t.Fatal(err)
		}
		getBig()
		if m, rbs := field("tot-mem"), field("rbs"); m < 40000 || rbs != 16384 {
			t.Fatalf("resizing %s: after a 40 KB reply tot-mem=%d rbs=%d, want the buffer counted and rbs=16384", resizing, m, rbs)
		}
		shrinks, _ := strconv.Atoi(infoField(t, c, "stats", "reply_buffer_shrinks"))
		time.Sleep(500 * time.Millisecond) // five peak periods, five cron ticks
		m, rbs := field("tot-mem"), field("rbs")
		after, _ := strconv.Atoi(infoField(t, c, "stats", "reply_buffer_shrinks"))
		if resizing == "0" {
			if m < 40000 || after != shrinks {
				t.Fatalf("resizing 0: tot-mem=%d after 0.5 s (shrinks %d -> %d), want the buffer kept", m, shrinks, after)
			}
			continue
		}
		if m >= 40000 || rbs != 1024 || after <= shrinks {
			t.Fatalf("idle for 0.5 s: tot-mem=%d rbs=%d reply_buffer_shrinks %d -> %d, want the buffer shrunk to 1 KiB", m, rbs, shrinks, after)
		}
	}
	// With no peak reset, a client that had a large reply keeps its buffer.
	if err := c.Do(ctx, "DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never").Err(); err != nil {
		t.Fatal(err)
	}
	getBig()
	time.Sleep(300 * time.Millisecond)
	if m := field("tot-mem"); m < 40000 {
		t.Fatalf("peak-reset-time never: tot-mem=%d, want the buffer kept", m)
	}
}
