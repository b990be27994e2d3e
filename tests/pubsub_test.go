package tests

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pub/Sub and keyspace notifications on a sharded server: subscribers live
// on every event loop, and every message must reach each of them, in the
// order its publisher sent it.

func TestPubSubFanOutToEveryLoopInPublishOrder(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	ctx := ctxT(t)
	const (
		nSubs    = 2 * nShards // round-robin places them on every loop
		nPats    = 2
		nPubs    = 3
		perPub   = 150
		channel  = "fan"
		patt     = "f?n"
		received = nSubs + nPats
	)
	var subs []*redis.PubSub
	for i := 0; i < nSubs+nPats; i++ {
		c := s.client(t, 2)
		var ps *redis.PubSub
		if i < nSubs {
			ps = c.Subscribe(ctx, channel)
		} else {
			ps = c.PSubscribe(ctx, patt)
		}
		if _, err := ps.Receive(ctx); err != nil { // the confirmation
			t.Fatalf("subscribe: %v", err)
		}
		t.Cleanup(func() { ps.Close() })
		subs = append(subs, ps)
	}
	admin := s.client(t, 2)
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(list, "flags=P"); n != nSubs+nPats {
		t.Fatalf("CLIENT LIST shows %d subscribed clients, want %d:\n%s", n, nSubs+nPats, list)
	}
	if got := admin.PubSubNumSub(ctx, channel).Val()[channel]; got != nSubs {
		t.Fatalf("PUBSUB NUMSUB = %d, want %d", got, nSubs)
	}
	if got := admin.PubSubNumPat(ctx).Val(); got != 1 {
		t.Fatalf("PUBSUB NUMPAT = %d, want 1", got)
	}

	// Every subscriber collects what it gets, concurrently with publishing.
	results := make([][]string, len(subs))
	var wg sync.WaitGroup
	for i, ps := range subs {
		wg.Add(1)
		go func(i int, ps *redis.PubSub) {
			defer wg.Done()
			for len(results[i]) < nPubs*perPub {
				m, err := ps.ReceiveTimeout(ctx, 10*time.Second)
				if err != nil {
					t.Errorf("subscriber %d after %d messages: %v", i, len(results[i]), err)
					return
				}
				msg, ok := m.(*redis.Message)
				if !ok {
					t.Errorf("subscriber %d: unexpected %T %v", i, m, m)
					return
				}
				if msg.Channel != channel || (i >= nSubs && msg.Pattern != patt) {
					t.Errorf("subscriber %d: message %+v", i, msg)
					return
				}
				results[i] = append(results[i], msg.Payload)
			}
		}(i, ps)
	}
	var pwg sync.WaitGroup
	for p := 0; p < nPubs; p++ {
		pwg.Add(1)
		go func(p int) {
			defer pwg.Done()
			c := s.client(t, 2)
			for n := 0; n < perPub; n++ {
				got, err := c.Publish(ctx, channel, fmt.Sprintf("%d:%d", p, n)).Result()
				if err != nil || got != received {
					t.Errorf("PUBLISH = %d, %v; want %d", got, err, received)
					return
				}
			}
		}(p)
	}
	pwg.Wait()
	wg.Wait()
	for i, msgs := range results {
		next := make([]int, nPubs)
		for _, m := range msgs {
			p, n, _ := strings.Cut(m, ":")
			pi, _ := strconv.Atoi(p)
			ni, _ := strconv.Atoi(n)
			if ni != next[pi] {
				t.Fatalf("subscriber %d: publisher %d's message %d arrived when %d was due", i, pi, ni, next[pi])
			}
			next[pi]++
		}
	}
	info := admin.Info(ctx, "stats").Val()
	if !strings.Contains(info, "pubsub_channels:1\r\n") || !strings.Contains(info, "pubsub_patterns:1\r\n") {
		t.Fatalf("INFO stats pubsub fields wrong:\n%s", info)
	}
}

func TestPubSubPatternsAndUnsubscribeReplies(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	rc := s.raw(t)
	pub := s.client(t, 2)
	ctx := ctxT(t)

	rc.do(resp("PSUBSCRIBE", "news.*", "h?llo"),
		"*3\r\n$10\r\npsubscribe\r\n$6\r\nnews.*\r\n:1\r\n*3\r\n$10\r\npsubscribe\r\n$5\r\nh?llo\r\n:2\r\n")
	rc.do(resp("SUBSCRIBE", "news.it"), "*3\r\n$9\r\nsubscribe\r\n$7\r\nnews.it\r\n:3\r\n")
	// The channel subscription and the matching pattern each count.
	if n := pub.Publish(ctx, "news.it", "x").Val(); n != 2 {
		t.Fatalf("PUBLISH news.it = %d, want 2", n)
	}
	rc.expect("*3\r\n$7\r\nmessage\r\n$7\r\nnews.it\r\n$1\r\nx\r\n" +
		"*4\r\n$8\r\npmessage\r\n$6\r\nnews.*\r\n$7\r\nnews.it\r\n$1\r\nx\r\n")
	if n := pub.Publish(ctx, "hello", "y").Val(); n != 1 {
		t.Fatalf("PUBLISH hello = %d, want 1", n)
	}
	rc.expect("*4\r\n$8\r\npmessage\r\n$5\r\nh?llo\r\n$5\r\nhello\r\n$1\r\ny\r\n")
	if n := pub.Publish(ctx, "other", "z").Val(); n != 0 {
		t.Fatalf("PUBLISH other = %d, want 0", n)
	}
	// PUNSUBSCRIBE with no argument: every pattern, in subscription order.
	rc.do(resp("PUNSUBSCRIBE"),
		"*3\r\n$12\r\npunsubscribe\r\n$6\r\nnews.*\r\n:2\r\n*3\r\n$12\r\npunsubscribe\r\n$5\r\nh?llo\r\n:1\r\n")
	rc.do(resp("PUNSUBSCRIBE"), "*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:1\r\n")
	rc.do(resp("UNSUBSCRIBE", "nope"), "*3\r\n$11\r\nunsubscribe\r\n$4\r\nnope\r\n:1\r\n")
	rc.do(resp("UNSUBSCRIBE"), "*3\r\n$11\r\nunsubscribe\r\n$7\r\nnews.it\r\n:0\r\n")
	rc.do(resp("UNSUBSCRIBE"), "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n")
	// No longer subscribed: ordinary commands work again.
	rc.do(resp("PING"), "+PONG\r\n")
	if n := pub.PubSubNumPat(ctx).Val(); n != 0 {
		t.Fatalf("PUBSUB NUMPAT = %d, want 0", n)
	}

	// Shard channels are a namespace of their own.
	rc.do(resp("SSUBSCRIBE", "news.it"), "*3\r\n$10\r\nssubscribe\r\n$7\r\nnews.it\r\n:1\r\n")
	if n := pub.Publish(ctx, "news.it", "a").Val(); n != 0 {
		t.Fatalf("PUBLISH to a shard channel = %d, want 0", n)
	}
	if n := pub.SPublish(ctx, "news.it", "b").Val(); n != 1 {
		t.Fatalf("SPUBLISH = %d, want 1", n)
	}
	rc.expect("*3\r\n$8\r\nsmessage\r\n$7\r\nnews.it\r\n$1\r\nb\r\n")
	if got := pub.Do(ctx, "PUBSUB", "SHARDCHANNELS").String(); got != "PUBSUB SHARDCHANNELS: [news.it]" {
		t.Fatalf("%s", got)
	}
}

func TestPubSubSubscribedStateRESP2(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	rc := s.raw(t)
	rc.do(resp("SUBSCRIBE", "c"), "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n")
	rc.do(resp("GET", "k"), "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n")
	rc.do(resp("CONFIG", "GET", "port"), "-ERR Can't execute 'config|get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n")
	rc.do(resp("PING"), "*2\r\n$4\r\npong\r\n$0\r\n\r\n")
	rc.do(resp("PING", "hi"), "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n")
	// RESET leaves the subscribed state (and the subscriptions).
	rc.do(resp("RESET"), "+RESET\r\n")
	rc.do(resp("GET", "k"), "$-1\r\n")
	pub := s.client(t, 2)
	if n := pub.Publish(ctxT(t), "c", "m").Val(); n != 0 {
		t.Fatalf("PUBLISH after RESET = %d, want 0", n)
	}
	// A subscriber that disconnects is gone from the registry.
	rc2 := s.raw(t)
	rc2.do(resp("SUBSCRIBE", "gone"), "*3\r\n$9\r\nsubscribe\r\n$4\r\ngone\r\n:1\r\n")
	rc2.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for pub.PubSubNumSub(ctxT(t), "gone").Val()["gone"] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a closed subscriber is still counted")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPubSubRESP3PushesBetweenReplies(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	rc := s.raw(t)
	rc.write(resp("HELLO", "3"))
	rc.expect("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:")
	rc.line()
	rc.expect("$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n")
	rc.do(resp("SUBSCRIBE", "c3"), ">3\r\n$9\r\nsubscribe\r\n$2\r\nc3\r\n:1\r\n")
	// Ordinary commands are allowed while subscribed in RESP3, and keys on
	// every shard are reachable.
	for _, k := range spreadKeys("r3:", nShards, 1) {
		rc.do(resp("SET", k, "v"), "+OK\r\n")
		rc.do(resp("GET", k), "$1\r\nv\r\n")
	}
	rc.do(resp("PING"), "+PONG\r\n")
	pub := s.client(t, 2)
	if n := pub.Publish(ctxT(t), "c3", "hello").Val(); n != 1 {
		t.Fatalf("PUBLISH = %d, want 1", n)
	}
	rc.expect(">3\r\n$7\r\nmessage\r\n$2\r\nc3\r\n$5\r\nhello\r\n")
	rc.do(resp("GET", "missing"), "_\r\n")
	rc.do(resp("UNSUBSCRIBE"), ">3\r\n$11\r\nunsubscribe\r\n$2\r\nc3\r\n:0\r\n")
	rc.do(resp("UNSUBSCRIBE"), ">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n")
}

// keyspaceEvents reads n messages from ps as "channel payload" lines.
func keyspaceEvents(t *testing.T, ps *redis.PubSub, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		m, err := ps.ReceiveTimeout(ctxT(t), 5*time.Second)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		msg, ok := m.(*redis.Message)
		if !ok {
			t.Fatalf("unexpected %T %v", m, m)
		}
		got = append(got, msg.Channel+" "+msg.Payload)
	}
	return got
}

func TestKeyspaceNotifications(t *testing.T) {
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"no-aof", nil},
		{"aof-always", []string{"--appendonly", "yes", "--appendfsync", "always"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			s := startServer(t, append([]string{"--shards", strconv.Itoa(nShards), "--hz", "50"}, mode.args...)...)
			ctx := ctxT(t)
			c := s.client(t, 2)
			if err := c.ConfigSet(ctx, "notify-keyspace-events", "KEA").Err(); err != nil {
				t.Fatal(err)
			}
			ps := s.client(t, 2).PSubscribe(ctx, "__key*__:*")
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			defer ps.Close()
			// Keys on different shards: the events still arrive in command order.
			keys := spreadKeys("ks:", nShards, 1)
			a, b := keys[0], keys[1]
			c.Set(ctx, a, "1", 0)
			c.Expire(ctx, a, 100*time.Second)
			c.Set(ctx, b, "2", 0)
			c.Del(ctx, a)
			c.IncrBy(ctx, b, 5)
			c.Rename(ctx, b, a)
			want := []string{
				"__keyspace@0__:" + a + " set", "__keyevent@0__:set " + a,
				"__keyspace@0__:" + a + " expire", "__keyevent@0__:expire " + a,
				"__keyspace@0__:" + b + " set", "__keyevent@0__:set " + b,
				"__keyspace@0__:" + a + " del", "__keyevent@0__:del " + a,
				"__keyspace@0__:" + b + " incrby", "__keyevent@0__:incrby " + b,
				"__keyspace@0__:" + b + " rename_from", "__keyevent@0__:rename_from " + b,
				"__keyspace@0__:" + a + " rename_to", "__keyevent@0__:rename_to " + a,
			}
			if got := keyspaceEvents(t, ps, len(want)); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}

			// A key with a short TTL yields "expired" (active expiry).
			if err := c.ConfigSet(ctx, "notify-keyspace-events", "Exn").Err(); err != nil {
				t.Fatal(err)
			}
			c.Set(ctx, b, "x", 50*time.Millisecond)
			want = []string{"__keyevent@0__:new " + b, "__keyevent@0__:expired " + b}
			if got := keyspaceEvents(t, ps, len(want)); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// keymiss (m) on a read of a missing key.
			if err := c.ConfigSet(ctx, "notify-keyspace-events", "Em").Err(); err != nil {
				t.Fatal(err)
			}
			c.Get(ctx, "nokey")
			if got := keyspaceEvents(t, ps, 1); got[0] != "__keyevent@0__:keymiss nokey" {
				t.Fatalf("keymiss event: %v", got)
			}
		})
	}
}

func TestPubSubSlowSubscriberIsDisconnected(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	ctx := ctxT(t)
	c := s.client(t, 2)
	if err := c.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 512kb 1").Err(); err != nil {
		t.Fatal(err)
	}
	rc := s.raw(t)
	rc.do(resp("SUBSCRIBE", "flood"), "*3\r\n$9\r\nsubscribe\r\n$5\r\nflood\r\n:1\r\n")
	// Never read again: the kernel buffers fill, then the server's.
	payload := strings.Repeat("x", 64<<10)
	gone := false
	for i := 0; i < 4000 && !gone; i++ {
		n, err := c.Publish(ctx, "flood", payload).Result()
		if err != nil {
			t.Fatal(err)
		}
		gone = n == 0
	}
	if !gone {
		t.Fatal("the subscriber was never disconnected")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.log.String(), "for overcoming of output buffer limits") {
		if time.Now().After(deadline) {
			t.Fatalf("no output buffer limit line in the log:\n%s", s.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.PubSubNumSub(ctx, "flood").Val()["flood"]; got != 0 {
		t.Fatalf("NUMSUB = %d after the disconnect", got)
	}
}
