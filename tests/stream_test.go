package tests

// End-to-end tests of streams and consumer groups: many producers and
// consumers on a multi-loop server with a consumer that dies and whose
// pending entries the others reclaim with XAUTOCLAIM (TestStreamConsumerGroupE2E),
// kill -9 under appendfsync always with XADD, XREADGROUP and XACK in flight
// (TestStreamKill9Always), and AOF folders with streams, groups and pending
// entries exchanged with redis-server 7 both ways
// (TestStreamAOFInteropWithRedis).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sid is a parsed stream ID, ordered as Redis orders them.
type sid struct{ ms, seq uint64 }

func parseSID(t testing.TB, s string) sid {
	t.Helper()
	a, b, ok := strings.Cut(s, "-")
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("bad stream ID %q", s)
	}
	return sid{ms, seq}
}

func (a sid) less(b sid) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }

func (a sid) String() string { return fmt.Sprintf("%d-%d", a.ms, a.seq) }

// TestStreamConsumerGroupE2E: 3 producers XADD 100,000 entries into one
// stream on a 4-loop server; 8 consumers, each on its own connection, read
// them with XREADGROUP BLOCK and XACK each one; one consumer stops after
// reading some entries without acknowledging them, and the others take its
// pending entries over with XAUTOCLAIM. Every entry must be delivered by
// ">" exactly once, acknowledged successfully (XACK = 1) exactly once, never
// delivered again after its acknowledgement, and the group must end with
// nothing pending, lag 0 and entries-read 100,000.
func TestStreamConsumerGroupE2E(t *testing.T) {
	const (
		total     = 100000
		producers = 3
		consumers = 8
		key       = "e2e:stream"
		group     = "g"
		deadAfter = 300 // entries the dead consumer reads before it stops
	)
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := s.client(t, 2)
	if err := admin.XGroupCreateMkStream(ctx, key, group, "$").Err(); err != nil {
		t.Fatalf("XGROUP CREATE MKSTREAM: %v", err)
	}
	one := func(o *redis.Options) { o.PoolSize = 1; o.MinIdleConns = 1 }

	// shared bookkeeping, all under mu
	var (
		mu         sync.Mutex
		idOf       = make([]string, total)  // n -> entry ID, as delivered
		newDeliv   = make([]int, total)     // deliveries by ">"
		processed  = make([]int, total)     // times a consumer processed n
		ackOK      = make([]int, total)     // XACK replies of 1
		ackedAt    = map[string]time.Time{} // ID -> when its XACK = 1 arrived
		lateDeliv  []string                 // deliveries sent after the ID's ack was seen
		claimed    int                      // entries XAUTOCLAIM delivered
		deadIDs    = map[string]bool{}      // read by the dead consumer, never acked
		failures   []string
		ackedTotal atomic.Int64
	)
	fail := func(format string, a ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	// record notes one delivery of msgs by a command sent at sent.
	record := func(msgs []redis.XMessage, sent time.Time, byNew bool) []int {
		mu.Lock()
		defer mu.Unlock()
		ns := make([]int, 0, len(msgs))
		for _, m := range msgs {
			v, _ := m.Values["n"].(string)
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n >= total {
				failures = append(failures, fmt.Sprintf("entry %s: field n = %q", m.ID, v))
				continue
			}
			if idOf[n] != "" && idOf[n] != m.ID {
				failures = append(failures, fmt.Sprintf("n=%d delivered as %s and as %s", n, idOf[n], m.ID))
			}
			idOf[n] = m.ID
			if byNew {
				newDeliv[n]++
			} else {
				claimed++
			}
			if at, ok := ackedAt[m.ID]; ok && at.Before(sent) {
				lateDeliv = append(lateDeliv, m.ID)
			}
			ns = append(ns, n)
		}
		return ns
	}

	var prodWG sync.WaitGroup
	for p := 0; p < producers; p++ {
		prodWG.Add(1)
		go func(p int) {
			defer prodWG.Done()
			c := s.clientWith(t, one)
			for lo := p; lo < total; {
				pipe := c.Pipeline()
				var cmds []*redis.StringCmd
				for i := 0; i < 200 && lo < total; i++ {
					cmds = append(cmds, pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"n", lo}}))
					lo += producers
				}
				if _, err := pipe.Exec(ctx); err != nil {
					fail("producer %d: %v", p, err)
					return
				}
			}
		}(p)
	}

	// ack acknowledges ns (entries of ids) one XACK each, pipelined.
	ack := func(c *redis.Client, ns []int) error {
		if len(ns) == 0 {
			return nil
		}
		mu.Lock()
		ids := make([]string, len(ns))
		for i, n := range ns {
			ids[i] = idOf[n]
			processed[n]++
		}
		mu.Unlock()
		pipe := c.Pipeline()
		cmds := make([]*redis.IntCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.XAck(ctx, key, group, id)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for i, cmd := range cmds {
			switch cmd.Val() {
			case 1:
				ackOK[ns[i]]++
				ackedAt[ids[i]] = now
				ackedTotal.Add(1)
			case 0:
			default:
				failures = append(failures, fmt.Sprintf("XACK %s: %d", ids[i], cmd.Val()))
			}
		}
		return nil
	}

	var consWG sync.WaitGroup
	deadDone := make(chan struct{})
	for ci := 0; ci < consumers; ci++ {
		consWG.Add(1)
		go func(ci int) {
			defer consWG.Done()
			name := "c" + itoa(ci)
			c := s.clientWith(t, one)
			dead := ci == 0
			if dead {
				defer close(deadDone)
			}
			cursor := "0-0"
			lastClaim := time.Now()
			for ackedTotal.Load() < total && ctx.Err() == nil {
				sent := time.Now()
				res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{
					Group: group, Consumer: name, Streams: []string{key, ">"}, Count: 100, Block: 100 * time.Millisecond,
				}).Result()
				if err != nil && err != redis.Nil {
					fail("%s XREADGROUP: %v", name, err)
					return
				}
				for _, st := range res {
					ns := record(st.Messages, sent, true)
					if dead {
						mu.Lock()
						for _, m := range st.Messages {
							deadIDs[m.ID] = true
						}
						enough := len(deadIDs) >= deadAfter
						mu.Unlock()
						if enough {
							return // killed: its entries stay pending
						}
						continue
					}
					if err := ack(c, ns); err != nil {
						fail("%s XACK: %v", name, err)
						return
					}
				}
				if dead || time.Since(lastClaim) < 50*time.Millisecond {
					continue
				}
				select {
				case <-deadDone:
				default:
					continue // reclaim once the consumer has stopped
				}
				lastClaim = time.Now()
				sent = time.Now()
				msgs, next, err := c.XAutoClaim(ctx, &redis.XAutoClaimArgs{
					Stream: key, Group: group, Consumer: name, MinIdle: 100 * time.Millisecond, Start: cursor, Count: 100,
				}).Result()
				if err != nil {
					fail("%s XAUTOCLAIM: %v", name, err)
					return
				}
				cursor = next
				if err := ack(c, record(msgs, sent, false)); err != nil {
					fail("%s XACK: %v", name, err)
					return
				}
			}
		}(ci)
	}
	prodWG.Wait()
	consWG.Wait()
	if ctx.Err() != nil {
		t.Errorf("not done within 60 s: %d of %d acknowledged", ackedTotal.Load(), total)
	}
	for i, f := range failures {
		if i == 20 {
			t.Errorf("... and %d more failures", len(failures)-20)
			break
		}
		t.Error(f)
	}
	if len(deadIDs) < deadAfter {
		t.Errorf("the dead consumer read only %d entries", len(deadIDs))
	}
	if claimed < len(deadIDs) {
		t.Errorf("XAUTOCLAIM delivered %d entries, fewer than the %d the dead consumer left pending", claimed, len(deadIDs))
	}
	var bad []string
	for n := 0; n < total && len(bad) < 20; n++ {
		if newDeliv[n] != 1 || ackOK[n] != 1 || processed[n] < 1 {
			bad = append(bad, fmt.Sprintf("n=%d (%s): delivered by > %d times, processed %d, XACK=1 %d times",
				n, idOf[n], newDeliv[n], processed[n], ackOK[n]))
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
	if len(lateDeliv) > 0 {
		t.Errorf("%d entries delivered by a command sent after their XACK returned 1, e.g. %v", len(lateDeliv), lateDeliv[:min(5, len(lateDeliv))])
	}

	ctx2 := ctxT(t)
	if n, err := admin.XLen(ctx2, key).Result(); err != nil || n != total {
		t.Errorf("XLEN = %d, %v; want %d", n, err, total)
	}
	p, err := admin.XPending(ctx2, key, group).Result()
	if err != nil || p.Count != 0 {
		t.Errorf("XPENDING summary: %+v, %v; want 0 pending", p, err)
	}
	groups, err := admin.XInfoGroups(ctx2, key).Result()
	if err != nil || len(groups) != 1 {
		t.Fatalf("XINFO GROUPS: %v, %v", groups, err)
	}
	info, err := admin.XInfoStream(ctx2, key).Result()
	if err != nil {
		t.Fatalf("XINFO STREAM: %v", err)
	}
	g := groups[0]
	if g.Name != group || g.Pending != 0 || g.Lag != 0 || g.EntriesRead != total || g.LastDeliveredID != info.LastGeneratedID || g.Consumers != consumers {
		t.Errorf("XINFO GROUPS: %+v; want pending 0, lag 0, entries-read %d, last-delivered-id %s, %d consumers",
			g, total, info.LastGeneratedID, consumers)
	}
	if info.EntriesAdded != total || info.Length != total {
		t.Errorf("XINFO STREAM: length %d, entries-added %d; want %d", info.Length, info.EntriesAdded, total)
	}
	cs, err := admin.XInfoConsumers(ctx2, key, group).Result()
	if err != nil || len(cs) != consumers {
		t.Fatalf("XINFO CONSUMERS: %v, %v", cs, err)
	}
	for _, c := range cs {
		if c.Pending != 0 {
			t.Errorf("consumer %s still has %d pending", c.Name, c.Pending)
		}
	}
	t.Logf("%d entries; the dead consumer left %d pending, XAUTOCLAIM delivered %d", total, len(deadIDs), claimed)
}
