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

// killProducer is one XADD client of TestStreamKill9Always.
type killProducer struct {
	name    string
	sent    int               // XADDs sent (seq 0..sent-1)
	acked   []string          // key + " " + ID of each acknowledged XADD, by seq
	fields  map[string]string // key + " " + ID -> "name seq"
	failure string
}

// killConsumer is one XREADGROUP/XACK client of TestStreamKill9Always.
type killConsumer struct {
	name, key    string
	delivered    []string        // IDs delivered by ">", in order
	ackedOK      map[string]bool // XACK replied 1
	inflightAck  map[string]bool // XACK sent, no reply
	inflightRead bool            // an XREADGROUP was sent with no reply
	failure      string
}

// TestStreamKill9Always: under appendfsync always, producers pipeline XADD
// to four streams on four shards while consumers pipeline XREADGROUP ">"
// and XACK (acknowledging two entries in three); the server is killed with
// SIGKILL mid-load and restarted on the same folder, three rounds. After
// each restart every acknowledged XADD is there with its fields (and each
// producer's entries are a prefix of what it sent), every XACK that
// returned 1 is out of the PEL, every entry delivered and not acknowledged
// is in the PEL under the consumer that got it, entries pending from
// earlier rounds still are, and each group's last-delivered-id is at least
// the highest ID it delivered.
func TestStreamKill9Always(t *testing.T) {
	args := append([]string{"--shards", strconv.Itoa(nShards)}, aofArgs("always")...)
	dir := t.TempDir()
	keys := spreadKeys("kst:", nShards, 1)
	const group = "g"
	ctx := context.Background()

	mustHave := map[string]map[string]string{} // key -> ID -> "name seq" fields
	pendingBase := map[string]map[string]string{}
	ackedEver := map[string]map[string]bool{}
	maxDelivered := map[string]sid{}
	for _, k := range keys {
		mustHave[k], pendingBase[k], ackedEver[k] = map[string]string{}, map[string]string{}, map[string]bool{}
	}
	rounds := 3
	load := 2 * time.Second
	if testing.Short() {
		rounds, load = 2, time.Second
	}
	for round := 0; round < rounds; round++ {
		s := startServerIn(t, dir, args...)
		if round == 0 {
			c := s.client(t, 2)
			for _, k := range keys {
				if err := c.XGroupCreateMkStream(ctx, k, group, "$").Err(); err != nil {
					t.Fatalf("XGROUP CREATE %s: %v", k, err)
				}
			}
		}
		prods := make([]*killProducer, 4)
		cons := make([]*killConsumer, 2*len(keys))
		var acks, adds atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := range prods {
			kp := &killProducer{name: fmt.Sprintf("r%dp%d", round, i), fields: map[string]string{}}
			prods[i] = kp
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := dialP(s.Addr)
				if err != nil {
					kp.failure = err.Error()
					return
				}
				defer p.close()
				for {
					select {
					case <-stop:
						return
					default:
					}
					first := kp.sent
					var cmds [][]string
					for j := 0; j < 8; j++ {
						seq := kp.sent
						cmds = append(cmds, []string{"XADD", keys[seq%len(keys)], "*", "p", kp.name, "seq", itoa(seq), "pad", strings.Repeat("x", seq%17)})
						kp.sent++
					}
					if p.send(cmds...) != nil {
						return
					}
					for j := range cmds {
						r, err := p.recv()
						if err != nil {
							return
						}
						if r.typ != '$' || r.n < 0 {
							kp.failure = fmt.Sprintf("XADD seq %d: %v", first+j, r)
							return
						}
						ka := cmds[j][1] + " " + r.s
						kp.acked = append(kp.acked, ka)
						kp.fields[ka] = kp.name + " " + itoa(first+j)
						adds.Add(1)
					}
				}
			}()
		}
		for i := range cons {
			kc := &killConsumer{name: fmt.Sprintf("r%dc%d", round, i), key: keys[i%len(keys)],
				ackedOK: map[string]bool{}, inflightAck: map[string]bool{}}
			cons[i] = kc
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := dialP(s.Addr)
				if err != nil {
					kc.failure = err.Error()
					return
				}
				defer p.close()
				var toAck []string
				for {
					select {
					case <-stop:
						return
					default:
					}
					var cmds [][]string
					for _, id := range toAck {
						cmds = append(cmds, []string{"XACK", kc.key, group, id})
						kc.inflightAck[id] = true
					}
					cmds = append(cmds, []string{"XREADGROUP", "GROUP", group, kc.name, "COUNT", "20", "STREAMS", kc.key, ">"})
					kc.inflightRead = true
					if p.send(cmds...) != nil {
						return
					}
					for _, id := range toAck {
						r, err := p.recv()
						if err != nil {
							return
						}
						if r.String() != ":1" {
							kc.failure = fmt.Sprintf("XACK %s %s: %v, want :1 (delivered to us, not acked yet)", kc.key, id, r)
							return
						}
						delete(kc.inflightAck, id)
						kc.ackedOK[id] = true
						acks.Add(1)
					}
					toAck = toAck[:0]
					r, err := p.recv()
					if err != nil {
						return
					}
					kc.inflightRead = false
					if r.isNull() {
						time.Sleep(time.Millisecond)
						continue
					}
					if r.typ != '*' || len(r.arr) != 1 || len(r.arr[0].arr) != 2 || r.arr[0].arr[0].s != kc.key {
						kc.failure = fmt.Sprintf("XREADGROUP reply %v", r)
						return
					}
					for _, e := range r.arr[0].arr[1].arr {
						if len(e.arr) != 2 {
							kc.failure = fmt.Sprintf("XREADGROUP entry %v", e)
							return
						}
						id := e.arr[0].s
						kc.delivered = append(kc.delivered, id)
						if len(kc.delivered)%3 != 0 {
							toAck = append(toAck, id)
						}
					}
				}
			}()
		}
		time.Sleep(load)
		for wait := time.Now().Add(10 * time.Second); (acks.Load() == 0 || adds.Load() == 0) && time.Now().Before(wait); {
			time.Sleep(10 * time.Millisecond)
		}
		s.kill9()
		close(stop)
		wg.Wait()
		if acks.Load() == 0 || adds.Load() == 0 {
			t.Fatalf("round %d: nothing acknowledged before the crash (%d XADDs, %d XACKs)", round, adds.Load(), acks.Load())
		}
		for _, kp := range prods {
			if kp.failure != "" {
				t.Errorf("round %d %s: %s", round, kp.name, kp.failure)
			}
		}
		for _, kc := range cons {
			if kc.failure != "" {
				t.Errorf("round %d %s: %s", round, kc.name, kc.failure)
			}
		}

		s2 := startServerIn(t, dir, args...)
		c := s2.client(t, 2)
		var nEntries, nPending, nDeliv int
		for _, k := range keys {
			msgs, err := c.XRange(ctx, k, "-", "+").Result()
			if err != nil {
				t.Fatalf("XRANGE %s: %v", k, err)
			}
			got := map[string]string{}
			for _, m := range msgs {
				got[m.ID] = fmt.Sprintf("%v %v", m.Values["p"], m.Values["seq"])
			}
			nEntries += len(got)
			for id, f := range mustHave[k] {
				if got[id] != f {
					t.Errorf("round %d: %s %s was %q before, now %q", round, k, id, f, got[id])
				}
			}
			// XPENDING extended form, the whole PEL
			pel := map[string]string{}
			start := "-"
			for {
				ps, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: k, Group: group, Start: start, End: "+", Count: 10000}).Result()
				if err != nil {
					t.Fatalf("XPENDING %s: %v", k, err)
				}
				for _, pe := range ps {
					pel[pe.ID] = pe.Consumer
				}
				if len(ps) < 10000 {
					break
				}
				start = "(" + ps[len(ps)-1].ID
			}
			nPending += len(pel)
			for id, cn := range pendingBase[k] {
				if pel[id] != cn {
					t.Errorf("round %d: %s %s was pending for %s, now %q", round, k, id, cn, pel[id])
				}
			}
			for id := range ackedEver[k] {
				if _, ok := pel[id]; ok {
					t.Errorf("round %d: %s %s acknowledged in an earlier round, pending again", round, k, id)
				}
			}
			hi := maxDelivered[k]
			known := map[string]bool{}
			readInFlight := false
			for _, kc := range cons {
				if kc.key != k {
					continue
				}
				readInFlight = readInFlight || kc.inflightRead
				nDeliv += len(kc.delivered)
				for _, id := range kc.delivered {
					known[id] = true
					if x := parseSID(t, id); hi.less(x) {
						hi = x
					}
					_, pending := pel[id]
					switch {
					case kc.ackedOK[id]:
						if pending {
							t.Errorf("round %d: %s %s: XACK returned 1, still pending (for %s)", round, k, id, pel[id])
						}
					case kc.inflightAck[id]: // either way
					case !pending:
						t.Errorf("round %d: %s %s delivered to %s and not acknowledged, missing from the PEL", round, k, id, kc.name)
					case pel[id] != kc.name:
						t.Errorf("round %d: %s %s delivered to %s, pending for %s", round, k, id, kc.name, pel[id])
					}
					if got[id] == "" {
						t.Errorf("round %d: %s %s was delivered, not in the stream", round, k, id)
					}
				}
			}
			for id := range pel {
				if got[id] == "" {
					t.Errorf("round %d: %s %s pending, not in the stream", round, k, id)
				}
				_, base := pendingBase[k][id]
				if !known[id] && !base && !(readInFlight && hi.less(parseSID(t, id))) {
					t.Errorf("round %d: %s %s pending for %s, never delivered", round, k, id, pel[id])
				}
			}
			gs, err := c.XInfoGroups(ctx, k).Result()
			if err != nil || len(gs) != 1 {
				t.Fatalf("XINFO GROUPS %s: %v %v", k, gs, err)
			}
			last := parseSID(t, gs[0].LastDeliveredID)
			if last.less(hi) {
				t.Errorf("round %d: %s last-delivered-id %s below the highest delivered %s", round, k, last, hi)
			}
			// the model for the next round is what is there now
			mustHave[k], pendingBase[k], maxDelivered[k] = got, pel, last
			for _, kc := range cons {
				if kc.key == k {
					for id := range kc.ackedOK {
						ackedEver[k][id] = true
					}
				}
			}
		}
		// every acknowledged XADD is there, and each producer's entries are
		// a prefix of its XADDs
		var nAcked int
		for _, kp := range prods {
			nAcked += len(kp.acked)
			for _, ka := range kp.acked {
				k, id, _ := strings.Cut(ka, " ")
				if mustHave[k][id] != kp.fields[ka] {
					t.Errorf("round %d: acknowledged XADD %s %s (%s) lost: %q", round, k, id, kp.fields[ka], mustHave[k][id])
				}
			}
			present := map[int]bool{}
			for _, k := range keys {
				for _, f := range mustHave[k] {
					if name, seq, _ := strings.Cut(f, " "); name == kp.name {
						n, _ := strconv.Atoi(seq)
						present[n] = true
					}
				}
			}
			if len(present) < len(kp.acked) || len(present) > kp.sent {
				t.Errorf("round %d %s: %d entries in the streams, %d acknowledged, %d sent", round, kp.name, len(present), len(kp.acked), kp.sent)
			}
			for n := 0; n < len(present); n++ {
				if !present[n] {
					t.Errorf("round %d %s: %d entries in the streams but seq %d missing (not a prefix)", round, kp.name, len(present), n)
					break
				}
			}
		}
		t.Logf("round %d: %d XADDs acknowledged, %d entries delivered, %d XACKs =1; after restart %d entries, %d pending",
			round, nAcked, nDeliv, acks.Load(), nEntries, nPending)
		s2.stop()
	}
}
