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
	"os"
	"os/exec"
	"path/filepath"
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
			readInFlight := map[string]bool{} // consumers with a read whose reply never came
			for _, kc := range cons {
				if kc.key != k {
					continue
				}
				readInFlight[kc.name] = kc.inflightRead
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
				// A read the server served and logged whose reply was lost in
				// the kill leaves its entries pending, below the highest ID
				// another consumer was shown (its reply went out first).
				if !known[id] && !base && !readInFlight[pel[id]] {
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

// streamInteropCmds build streams with groups, consumers with and without
// pending entries, pending entries whose entry was deleted, deleted and
// trimmed entries, XCLAIM'd entries (delivery count 2), XSETID with
// ENTRIESADDED and MAXDELETEDID, an emptied stream, and a stream of
// several nodes. Explicit IDs, so that both servers hold the same IDs.
func streamInteropCmds() [][]string {
	cmds := [][]string{
		{"XADD", "s1", "1-1", "a", "1", "b", "2"},
		{"XADD", "s1", "1-2", "a", "3"},
		{"XADD", "s1", "2-1", "c", "4", "d", "5"},
		{"XADD", "s1", "2-2", "e", "6"},
		{"XADD", "s1", "3-1", "f", "7"},
		{"XADD", "s1", "3-2", "g", "8"},
		{"XGROUP", "CREATE", "s1", "g1", "0"},
		{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "s1", ">"},
		{"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "s1", ">"},
		{"XACK", "s1", "g1", "1-2"},
		{"XCLAIM", "s1", "g1", "bob", "0", "2-1"},
		{"XGROUP", "CREATECONSUMER", "s1", "g1", "carol"},
		{"XDEL", "s1", "1-1", "3-2"},
		{"XGROUP", "CREATE", "s1", "g2", "2-1"},
		{"XREADGROUP", "GROUP", "g2", "dave", "COUNT", "1", "STREAMS", "s1", ">"},
		{"XADD", "s1", "4-1", "h", "9"},
		{"XSETID", "s1", "10-0", "ENTRIESADDED", "20", "MAXDELETEDID", "5-0"},
		{"XGROUP", "CREATE", "s1", "g3", "$"},
		{"XADD", "s1", "11-1", "i", "10"},

		{"XADD", "s2", "1-1", "x", "1"},
		{"XGROUP", "CREATE", "s2", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "z", "STREAMS", "s2", ">"},
		{"XDEL", "s2", "1-1"},
		{"XSETID", "s2", "7-7"},
	}
	for i := 1; i <= 250; i++ {
		cmds = append(cmds, []string{"XADD", "s3", "1-" + itoa(i), "n", itoa(i), "pad", strings.Repeat("p", i%13)})
	}
	cmds = append(cmds, []string{"XDEL", "s3", "1-5", "1-50", "1-51", "1-52", "1-150", "1-200"},
		[]string{"XTRIM", "s3", "MAXLEN", "=", "230"},
		[]string{"XGROUP", "CREATE", "s3", "g", "1-100"},
		[]string{"XREADGROUP", "GROUP", "g", "w", "COUNT", "10", "STREAMS", "s3", ">"},
		[]string{"XACK", "s3", "g", "1-103"})
	return cmds
}

var streamInteropKeys = []string{"s1", "s2", "s3"}

// xinfoFull returns XINFO STREAM key FULL of each key.
func xinfoFull(t *testing.T, addr string) map[string]rreply {
	t.Helper()
	p := mustDialP(t, addr)
	defer p.close()
	out := map[string]rreply{}
	for _, k := range streamInteropKeys {
		r := p.mustDo(t, "XINFO", "STREAM", k, "FULL", "COUNT", "0") // all entries and pending entries
		if r.typ != '*' {
			t.Fatalf("XINFO STREAM %s FULL: %v", k, r)
		}
		out[k] = r
	}
	return out
}

// normXInfo renders an XINFO STREAM FULL reply one field a line. A
// consumer's seen-time is masked always: redis-server sets it to the time
// it loads the XCLAIM or XGROUP CREATECONSUMER of the AOF (a rewrite does
// not carry it), so after a load it is the load's clock, not the writer's.
// Pending entries' delivery-time is carried by the rewrite (XCLAIM ... TIME)
// and compared, unless maskDelivery (two servers that built the streams at
// different moments).
func normXInfo(r rreply, maskDelivery bool, indent string) string {
	if r.typ != '*' {
		return r.String()
	}
	isMap := len(r.arr) > 0 && len(r.arr)%2 == 0 && r.arr[0].typ == '$' && (r.arr[0].s == "length" || r.arr[0].s == "name")
	var b strings.Builder
	if isMap {
		for i := 0; i+1 < len(r.arr); i += 2 {
			k, v := r.arr[i].s, r.arr[i+1]
			b.WriteString("\n" + indent + k + ": ")
			switch {
			case k == "seen-time" || k == "active-time":
				b.WriteString("<clock>")
			case k == "pending" && maskDelivery && v.typ == '*':
				// [id consumer delivery-time count] or [id delivery-time count]
				var parts []string
				for _, e := range v.arr {
					ea := append([]rreply(nil), e.arr...)
					if len(ea) >= 3 {
						ea[len(ea)-2] = rreply{typ: '+', s: "<clock>"}
					}
					parts = append(parts, normXInfo(rreply{typ: '*', n: int64(len(ea)), arr: ea}, maskDelivery, indent+"  "))
				}
				b.WriteString("[" + strings.Join(parts, " ") + "]")
			default:
				b.WriteString(normXInfo(v, maskDelivery, indent+"  "))
			}
		}
		return b.String()
	}
	parts := make([]string, len(r.arr))
	for i, e := range r.arr {
		parts[i] = normXInfo(e, maskDelivery, indent+"  ")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// diffXInfo reports the lines where got and want differ; with
// STREAM_XINFO_DUMP=<dir> set it also writes both renderings there, for diff.
func diffXInfo(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for _, k := range streamInteropKeys {
		if got[k] != want[k] {
			if d := os.Getenv("STREAM_XINFO_DUMP"); d != "" {
				name := strings.NewReplacer(" ", "_", "'", "", "(", "", ")", "").Replace(what)
				_ = os.WriteFile(filepath.Join(d, name+"."+k+".got"), []byte(got[k]), 0o644)
				_ = os.WriteFile(filepath.Join(d, name+"."+k+".want"), []byte(want[k]), 0o644)
			}
			g, w := strings.Split(got[k], "\n"), strings.Split(want[k], "\n")
			var d []string
			for i := 0; i < max(len(g), len(w)); i++ {
				var gl, wl string
				if i < len(g) {
					gl = g[i]
				}
				if i < len(w) {
					wl = w[i]
				}
				if gl != wl {
					d = append(d, fmt.Sprintf("line %d:\n  got  %s\n  want %s", i, gl, wl))
				}
			}
			if len(d) > 15 {
				d = append(d[:15], fmt.Sprintf("... %d more lines differ", len(d)-15))
			}
			t.Errorf("%s: XINFO STREAM %s FULL differs:\n%s", what, k, strings.Join(d, "\n"))
		}
	}
}

// withoutDeletedPending is an XINFO STREAM FULL reply as it is after the
// stream is loaded from a rewritten AOF: a pending entry whose stream entry
// was deleted is dropped, by redis-server 7.0 too. The rewrite logs each
// pending entry as XCLAIM key group consumer 0 id TIME t RETRYCOUNT n JUSTID
// FORCE, and XCLAIM of an ID that is not in the stream removes it from the
// PEL instead (t_stream.c, xclaimCommand).
func withoutDeletedPending(t *testing.T, r rreply) rreply {
	t.Helper()
	field := func(m rreply, k string) *rreply {
		for i := 0; i+1 < len(m.arr); i += 2 {
			if m.arr[i].s == k {
				return &m.arr[i+1]
			}
		}
		t.Fatalf("no %q in %v", k, m)
		return nil
	}
	out := deepCopyReply(r)
	exists := map[string]bool{}
	for _, e := range field(out, "entries").arr {
		exists[e.arr[0].s] = true
	}
	// filter drops m's pending entries of deleted entries and says whether
	// m had pending entries and none is left.
	filter := func(m rreply) bool {
		pend := field(m, "pending")
		var keep []rreply
		for _, pe := range pend.arr {
			if exists[pe.arr[0].s] {
				keep = append(keep, pe)
			}
		}
		emptied := len(pend.arr) > 0 && len(keep) == 0
		pend.arr, pend.n = keep, int64(len(keep))
		cnt := field(m, "pel-count")
		cnt.n = int64(len(keep))
		return emptied
	}
	for _, g := range field(out, "groups").arr {
		filter(g)
		// A consumer whose pending entries were all deleted is not
		// created by the load: the rewrite logs a consumer as its XCLAIMs
		// (XGROUP CREATECONSUMER only when it has no pending entry), and
		// an XCLAIM of a deleted ID creates no consumer.
		cs := field(g, "consumers")
		var keep []rreply
		for _, c := range cs.arr {
			if !filter(c) {
				keep = append(keep, c)
			}
		}
		cs.arr, cs.n = keep, int64(len(keep))
	}
	return out
}

func deepCopyReply(r rreply) rreply {
	c := r
	if r.arr != nil {
		c.arr = make([]rreply, len(r.arr))
		for i, e := range r.arr {
			c.arr[i] = deepCopyReply(e)
		}
	}
	return c
}

func renderAll(rs map[string]rreply, maskDelivery bool) map[string]string {
	out := map[string]string{}
	for k, r := range rs {
		out[k] = normXInfo(r, maskDelivery, "")
	}
	return out
}

// rewriteAndStop runs BGREWRITEAOF on addr, waits for it, and stops the
// server with stop.
func rewriteAndStop(t *testing.T, addr string, stop func()) {
	t.Helper()
	p := mustDialP(t, addr)
	if r := p.mustDo(t, "BGREWRITEAOF"); r.typ == '-' {
		t.Fatalf("BGREWRITEAOF: %v", r)
	}
	waitRewrite(t, p)
	p.close()
	stop()
}

// TestStreamAOFInteropWithRedis: streams with consumer groups (pending
// entries, deleted entries, XSETID), rewritten by BGREWRITEAOF, load in the
// other server as they load in the server that wrote them, both ways; the
// writer's streams before the rewrite are what is loaded except for pending
// entries of deleted entries (see withoutDeletedPending); and both servers
// build the same streams from the same commands.
func TestStreamAOFInteropWithRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: cannot exchange AOF folders with it")
	}
	cmds := streamInteropCmds()
	redshardArgs := aofArgs("always", "--shards", "2", "--aof-use-rdb-preamble", "no") // RESP bases: the commands Redis's rewrite writes
	var built [2]map[string]string                                                     // by redshard, by redis-server; delivery times masked
	// deletedPending checks that the writer's streams had pending entries
	// of deleted entries, the case the reload drops.
	deletedPending := func(t *testing.T, before map[string]rreply) {
		for _, k := range []string{"s1", "s2"} {
			if normXInfo(before[k], false, "") == normXInfo(withoutDeletedPending(t, before[k]), false, "") {
				t.Errorf("%s has no pending entry of a deleted entry: the commands do not test that case", k)
			}
		}
	}

	t.Run("redshard to redis", func(t *testing.T) {
		dir := t.TempDir()
		s := startServerIn(t, dir, redshardArgs...)
		doAll(t, s.Addr, cmds)
		before := xinfoFull(t, s.Addr)
		deletedPending(t, before)
		built[0] = renderAll(before, true)
		rewriteAndStop(t, s.Addr, s.stop)
		d := folderCopy(t, dir)
		s2 := startServerIn(t, dir, redshardArgs...)
		own := renderAll(xinfoFull(t, s2.Addr), false)
		expect := map[string]rreply{}
		for k, r := range before {
			expect[k] = withoutDeletedPending(t, r)
		}
		diffXInfo(t, "redshard on its own rewritten folder vs before the rewrite", own, renderAll(expect, false))
		r := startRedisServer(t, d, "--appendonly", "yes", "--appenddirname", aofDirName)
		diffXInfo(t, "redis-server on redshard's rewritten folder vs redshard on it", renderAll(xinfoFull(t, r.Addr), false), own)
		if t.Failed() {
			t.Logf("--- redis-server log ---\n%s", logTail(r.log.String(), 20))
		}
	})
	t.Run("redis to redshard", func(t *testing.T) {
		dir := t.TempDir()
		redisArgs := []string{"--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appenddirname", aofDirName}
		r := startRedisServer(t, dir, redisArgs...)
		doAll(t, r.Addr, cmds)
		before := xinfoFull(t, r.Addr)
		deletedPending(t, before)
		built[1] = renderAll(before, true)
		rewriteAndStop(t, r.Addr, func() { r.stop(t) })
		d := folderCopy(t, dir)
		r2 := startRedisServer(t, dir, redisArgs...)
		own := renderAll(xinfoFull(t, r2.Addr), false)
		expect := map[string]rreply{}
		for k, rr := range before {
			expect[k] = withoutDeletedPending(t, rr)
		}
		// redis-server itself: checks withoutDeletedPending's model
		diffXInfo(t, "redis-server on its own rewritten folder vs before the rewrite", own, renderAll(expect, false))
		s := startServerIn(t, d, redshardArgs...)
		diffXInfo(t, "redshard on redis-server's rewritten folder vs redis-server on it", renderAll(xinfoFull(t, s.Addr), false), own)
	})
	if built[0] != nil && built[1] != nil {
		diffXInfo(t, "redshard vs redis-server, same commands (delivery times masked)", built[0], built[1])
	}
}
