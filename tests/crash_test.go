package tests

// The crash matrix (contracts 4 and 5): pipelined clients write while the
// server is killed with SIGKILL at a random moment; after a restart on the
// same folder every acknowledged write must be there, every client's keys
// must be the effect of a prefix of what it sent (INCR counters, APPEND
// strings and RPUSH lists make a write applied twice visible; HSET writes
// hashes), and a multi-key
// command all there or not at all. Rounds accumulate in one folder, so each
// restart also checks that the data of the earlier rounds is unchanged.

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redshard/redshard/shard"
)

// Long expiries: nothing expires during a test.
const (
	longPX = "100000000" // ms, about 28 hours
	longEX = "1000000"   // s
)

// mval is the modelled state of a key: present with a value, with or
// without an expiry.
type mval struct {
	present bool
	val     string
	ttl     bool
}

func (m mval) String() string {
	if !m.present {
		return "(absent)"
	}
	if m.ttl {
		return strconv.Quote(m.val) + " with TTL"
	}
	return strconv.Quote(m.val)
}

// keyEffect is what an operation leaves in one key.
type keyEffect struct {
	key string
	to  mval
}

// crashOp is one command a client sends, the reply it must get (given
// every earlier command of the client ran once, in order), and its effect.
type crashOp struct {
	argv    []string
	want    string // rreply.String() of the expected reply
	effects []keyEffect
}

// crashClient generates and sends one client's commands over its own keys:
// "{p}:..." keys all live on the shard of the tag p, "p:..." keys are spread
// over the shards, so most commands are single-shard and MSET and DEL cross
// shards.
type crashClient struct {
	prefix   string
	depth    int
	rng      *rand.Rand
	model    map[string]mval
	ops      []crashOp
	uniq     []string // keys set once, candidates for DEL and PEXPIRE
	msetKeys []string
	ctrs     []string

	// filled while running
	sent, acked int
	ackSignal   atomic.Int64     // acked, readable while the client runs
	ackedCtr    map[string]int64 // highest INCR reply acknowledged per counter
	failure     string           // a wrong reply (not a connection error)
	connErr     error
}

func newCrashClient(prefix string, depth, nshards int, seed int64) *crashClient {
	c := &crashClient{
		prefix:   prefix,
		depth:    depth,
		rng:      rand.New(rand.NewSource(seed)),
		model:    map[string]mval{},
		ackedCtr: map[string]int64{},
	}
	tag := c.tagged("m")
	c.msetKeys = []string{tag, keyOnOtherShard(prefix+":m1", tag, nshards), keyOnOtherShard(prefix+":m2", tag, nshards)}
	c.ctrs = []string{c.tagged("ctr"), keyOnOtherShard(prefix+":ctr", tag, nshards)}
	return c
}

func (c *crashClient) tagged(s string) string   { return "{" + c.prefix + "}:" + s }
func (c *crashClient) untagged(s string) string { return c.prefix + ":" + s }

// keyOnOtherShard returns base, or base with a suffix, so that it routes to
// another shard than other when there are several shards.
func keyOnOtherShard(base, other string, nshards int) string {
	if nshards < 2 {
		return base
	}
	o := shard.ShardOf([]byte(other), nshards)
	for i := 0; ; i++ {
		k := base
		if i > 0 {
			k = base + "." + itoa(i)
		}
		if shard.ShardOf([]byte(k), nshards) != o {
			return k
		}
	}
}

func (c *crashClient) set(op *crashOp, key string, v mval) {
	c.model[key] = v
	op.effects = append(op.effects, keyEffect{key, v})
}

// next generates the client's next command from the model.
func (c *crashClient) next() crashOp {
	j := len(c.ops)
	js := itoa(j)
	var op crashOp
	if y := c.rng.Intn(100); y < 14 {
		// Hashes and lists: HSET overwrites a field, RPUSH appends (a
		// push applied twice shows in the list).
		if y < 7 {
			k := c.tagged("h")
			if y%2 == 1 {
				k = c.untagged("h")
			}
			m := c.model[k]
			fields := hashModel(m.val)
			f := "f" + itoa(j%7)
			op.want = ":0"
			if _, ok := fields[f]; !ok {
				op.want = ":1"
			}
			fields[f] = js
			op.argv = []string{"HSET", k, f, js}
			c.set(&op, k, mval{true, hashCanon(fields), m.ttl})
		} else {
			k := c.untagged("l")
			m := c.model[k]
			v := m.val + js + ","
			op.argv = []string{"RPUSH", k, js}
			op.want = ":" + itoa(strings.Count(v, ","))
			c.set(&op, k, mval{true, v, m.ttl})
		}
		c.ops = append(c.ops, op)
		return op
	}
	switch x := c.rng.Intn(100); {
	case x < 28: // INCR a counter
		k := c.ctrs[0]
		if x%3 == 0 {
			k = c.ctrs[1]
		}
		m := c.model[k]
		n, _ := strconv.ParseInt(m.val, 10, 64)
		n++
		op.argv = []string{"INCR", k}
		op.want = ":" + i64toa(n)
		c.set(&op, k, mval{true, i64toa(n), m.ttl})
	case x < 44: // SET a new key
		k := c.tagged("s:" + js)
		if j%2 == 1 {
			k = c.untagged("s:" + js)
		}
		op.argv = []string{"SET", k, "v" + js}
		op.want = "+OK"
		c.set(&op, k, mval{present: true, val: "v" + js})
		c.uniq = append(c.uniq, k)
	case x < 49: // SET ... PX a new key
		k := c.untagged("px:" + js)
		op.argv = []string{"SET", k, "v" + js, "PX", longPX}
		op.want = "+OK"
		c.set(&op, k, mval{true, "v" + js, true})
		c.uniq = append(c.uniq, k)
	case x < 54: // overwrite one key
		k := c.tagged("last")
		op.argv = []string{"SET", k, js}
		op.want = "+OK"
		c.set(&op, k, mval{present: true, val: js})
	case x < 64: // APPEND: the value lists every append once, in order
		k := c.untagged("app")
		m := c.model[k]
		v := m.val + js + ","
		op.argv = []string{"APPEND", k, js + ","}
		op.want = ":" + itoa(len(v))
		c.set(&op, k, mval{true, v, m.ttl})
	case x < 71 && len(c.uniq) >= 2: // DEL two earlier keys, maybe on two shards
		a, b := c.uniq[c.rng.Intn(len(c.uniq))], c.uniq[c.rng.Intn(len(c.uniq))]
		op.argv = []string{"DEL", a, b}
		n := 0
		if c.model[a].present {
			n++
		}
		if b != a && c.model[b].present {
			n++
		}
		op.want = ":" + itoa(n)
		c.set(&op, a, mval{})
		c.set(&op, b, mval{})
	case x < 78 && len(c.uniq) > 0: // PEXPIRE an earlier key
		k := c.uniq[c.rng.Intn(len(c.uniq))]
		m := c.model[k]
		op.argv = []string{"PEXPIRE", k, longPX}
		if m.present {
			op.want = ":1"
			m.ttl = true
		} else {
			op.want = ":0"
		}
		c.set(&op, k, m)
	case x < 81: // EXPIRE a counter (INCR keeps the TTL)
		k := c.ctrs[j%2]
		m := c.model[k]
		op.argv = []string{"EXPIRE", k, longEX}
		if m.present {
			op.want = ":1"
			m.ttl = true
		} else {
			op.want = ":0"
		}
		c.set(&op, k, m)
	default: // MSET across shards: all or nothing
		op.argv = []string{"MSET"}
		for _, k := range c.msetKeys {
			op.argv = append(op.argv, k, js)
		}
		op.want = "+OK"
		for _, k := range c.msetKeys {
			c.set(&op, k, mval{present: true, val: js})
		}
	}
	c.ops = append(c.ops, op)
	return op
}

// run sends commands depth at a time until the connection fails or stop is
// closed, checking every reply.
func (c *crashClient) run(addr string, stop <-chan struct{}) {
	p, err := dialP(addr)
	if err != nil {
		c.connErr = err
		return
	}
	defer p.close()
	p.timeout = 30 * time.Second
	for {
		select {
		case <-stop:
			return
		default:
		}
		first := len(c.ops)
		var cmds [][]string
		for i := 0; i < c.depth; i++ {
			cmds = append(cmds, c.next().argv)
		}
		c.sent = len(c.ops)
		if err := p.send(cmds...); err != nil {
			c.connErr = err
			return
		}
		for i := first; i < len(c.ops); i++ {
			r, err := p.recv()
			if err != nil {
				c.connErr = err
				return
			}
			op := c.ops[i]
			if r.String() != op.want {
				c.failure = fmt.Sprintf("command #%d %s: reply %v, want %s", i, fmtArgs(op.argv), r, op.want)
				return
			}
			c.acked = i + 1
			c.ackSignal.Store(int64(c.acked))
			if op.argv[0] == "INCR" {
				c.ackedCtr[op.argv[1]] = r.n
			}
		}
	}
}

// universe returns every key the client's sent commands touched.
func (c *crashClient) universe() []string {
	seen := map[string]bool{}
	var keys []string
	for _, op := range c.ops[:c.sent] {
		for _, e := range op.effects {
			if !seen[e.key] {
				seen[e.key] = true
				keys = append(keys, e.key)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// hashModel parses a hash's modelled value, "f0=3;f2=9;" (fields sorted).
func hashModel(v string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(v, ";") {
		if f, val, ok := strings.Cut(kv, "="); ok {
			m[f] = val
		}
	}
	return m
}

// hashCanon renders a hash as its modelled value.
func hashCanon(m map[string]string) string {
	var fs []string
	for f := range m {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f + "=" + m[f] + ";")
	}
	return b.String()
}

// readKeys reads the state of keys: value and whether it has an expiry.
// Keys ending in ":h" are hashes and ":l" lists, read into their modelled
// form (hashCanon; elements each followed by a comma).
func readKeys(t testing.TB, addr string, keys []string) map[string]mval {
	t.Helper()
	p := mustDialP(t, addr)
	defer p.close()
	got := map[string]mval{}
	for _, chunk := range chunks(keys, 256) {
		var cmds [][]string
		for _, k := range chunk {
			read := []string{"GET", k}
			switch {
			case strings.HasSuffix(k, ":h"):
				read = []string{"HGETALL", k}
			case strings.HasSuffix(k, ":l"):
				read = []string{"LRANGE", k, "0", "-1"}
			}
			cmds = append(cmds, read, []string{"PTTL", k})
		}
		if err := p.send(cmds...); err != nil {
			t.Fatalf("read keys: %v", err)
		}
		for _, k := range chunk {
			v, err1 := p.recv()
			ttl, err2 := p.recv()
			if err1 != nil || err2 != nil {
				t.Fatalf("read %s: %v %v", k, err1, err2)
			}
			if v.typ == '*' { // a hash or a list; empty when absent
				val := ""
				if strings.HasSuffix(k, ":h") {
					m := map[string]string{}
					for i := 0; i+1 < len(v.arr); i += 2 {
						m[v.arr[i].s] = v.arr[i+1].s
					}
					val = hashCanon(m)
				} else {
					for _, e := range v.arr {
						val += e.s + ","
					}
				}
				switch {
				case len(v.arr) == 0 && ttl.typ == ':' && ttl.n == -2:
					got[k] = mval{}
				case len(v.arr) > 0 && ttl.typ == ':' && (ttl.n == -1 || ttl.n > 0):
					got[k] = mval{present: true, val: val, ttl: ttl.n > 0}
				default:
					t.Fatalf("read %s: %v, PTTL %v", k, v, ttl)
				}
				continue
			}
			switch {
			case v.typ == '$' && v.n < 0 && ttl.typ == ':' && ttl.n == -2:
				got[k] = mval{}
			case v.typ == '$' && v.n >= 0 && ttl.typ == ':' && (ttl.n == -1 || ttl.n > 0):
				got[k] = mval{present: true, val: v.s, ttl: ttl.n > 0}
			default:
				t.Fatalf("read %s: GET %v, PTTL %v", k, v, ttl)
			}
		}
	}
	return got
}

// checkPrefix checks that the state read after the restart is the effect
// of the client's first P commands for some P with acked <= P <= sent, and
// returns "" or what is wrong.
func (c *crashClient) checkPrefix(got map[string]mval) (msg string, bad []string) {
	// mismatch counts the keys whose state differs from the model after
	// the first P commands; it is updated per command, so every P costs
	// only its own effects.
	model := map[string]mval{}
	mismatch := 0
	for _, k := range c.universe() {
		if got[k].present {
			mismatch++
		}
	}
	var ok []int
	best, bestP := mismatch, 0
	if mismatch == 0 {
		ok = append(ok, 0)
	}
	for p := 1; p <= c.sent; p++ {
		for _, e := range c.ops[p-1].effects {
			g := got[e.key]
			if model[e.key] != g {
				mismatch--
			}
			model[e.key] = e.to
			if e.to != g {
				mismatch++
			}
		}
		if mismatch == 0 {
			ok = append(ok, p)
		}
		if mismatch < best || (mismatch == best && p <= c.acked) {
			best, bestP = mismatch, p
		}
	}
	for _, p := range ok {
		if p >= c.acked {
			return "", nil
		}
	}
	// Describe the nearest prefix that is allowed.
	var b strings.Builder
	fmt.Fprintf(&b, "client %s (depth %d): the data is not the effect of a prefix of P commands with acked=%d <= P <= sent=%d",
		c.prefix, c.depth, c.acked, c.sent)
	if len(ok) > 0 {
		fmt.Fprintf(&b, "; it matches P in %v (acknowledged writes lost)", shortInts(ok))
	} else {
		fmt.Fprintf(&b, "; it matches no prefix at all; the closest is P=%d with %d keys differing", bestP, best)
	}
	p := c.acked
	if len(ok) == 0 {
		p = bestP
	}
	model = map[string]mval{}
	for _, op := range c.ops[:p] {
		for _, e := range op.effects {
			model[e.key] = e.to
		}
	}
	n := 0
	for _, k := range c.universe() {
		if model[k] != got[k] {
			if n++; n <= 12 {
				fmt.Fprintf(&b, "\n    %s: have %v, after %d commands want %v (last writes: %s)", k, got[k], p, model[k], c.lastWrites(k, 3))
				bad = append(bad, k)
			}
		}
	}
	return b.String(), bad
}

// lastWrites lists the last n sent commands that changed key.
func (c *crashClient) lastWrites(key string, n int) string {
	var out []string
	for i := c.sent - 1; i >= 0 && len(out) < n; i-- {
		for _, e := range c.ops[i].effects {
			if e.key == key {
				ack := "acked"
				if i >= c.acked {
					ack = "not acked"
				}
				out = append(out, fmt.Sprintf("#%d %s (%s)", i, fmtArgs(c.ops[i].argv), ack))
				break
			}
		}
	}
	return strings.Join(out, "; ")
}

func shortInts(v []int) string {
	if len(v) <= 6 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("[%d %d %d ... %d %d]", v[0], v[1], v[2], v[len(v)-2], v[len(v)-1])
}

// checkClient runs the explicit checks (counters, MSET groups) and the
// prefix check on one client's keys, after a restart.
func (c *crashClient) check(t testing.TB, got map[string]mval, seen map[string]int64, dir string) {
	t.Helper()
	if c.failure != "" {
		t.Errorf("client %s: wrong reply during the load: %s", c.prefix, c.failure)
		return
	}
	// Counters: a value acknowledged or a later one sent, and at least
	// what any reader was shown.
	for _, k := range c.ctrs {
		var sentMax int64
		for _, op := range c.ops[:c.sent] {
			if op.argv[0] == "INCR" && op.argv[1] == k {
				sentMax++
			}
		}
		have, _ := strconv.ParseInt(got[k].val, 10, 64)
		if acked := c.ackedCtr[k]; have < acked || have > sentMax {
			t.Errorf("client %s: counter %s = %d after the restart; acknowledged up to %d, sent up to %d", c.prefix, k, have, acked, sentMax)
		}
		if s := seen[k]; have < s {
			t.Errorf("client %s: counter %s = %d after the restart, but a reader was shown %d before the crash (a reply revealed a write the log did not hold)", c.prefix, k, have, s)
		}
	}
	// MSET: all keys of the group equal, or all absent.
	var vals []string
	for _, k := range c.msetKeys {
		vals = append(vals, got[k].String())
	}
	for _, v := range vals[1:] {
		if v != vals[0] {
			t.Errorf("client %s: MSET %v is half applied after the restart: %v", c.prefix, c.msetKeys, vals)
			break
		}
	}
	if msg, bad := c.checkPrefix(got); msg != "" {
		t.Error(msg + logRecordsOf(dir, bad))
	}
}

// crashConfig is one cell of the matrix.
type crashConfig struct {
	fsync   string
	shards  int  // 0: the default
	rewrite bool // BGREWRITEAOF at a random moment before the kill
}

func (cc crashConfig) args() []string {
	a := aofArgs(cc.fsync)
	if cc.shards > 0 {
		a = append(a, "--shards", itoa(cc.shards))
	}
	return a
}

// how a round ends the server
type endHow int

const (
	endKill9 endHow = iota
	endShutdown
	endSIGTERM
)

// crashRun is a sequence of rounds on one folder.
type crashRun struct {
	t       *testing.T
	cfg     crashConfig
	nshards int
	dir     string
	srv     *server
	rng     *rand.Rand
	// state of earlier rounds' keys, which later restarts must not change
	frozen map[string]mval
	// every key any round may have written
	known map[string]bool
}

func newCrashRun(t *testing.T, cfg crashConfig, seed int64) *crashRun {
	r := &crashRun{t: t, cfg: cfg, dir: t.TempDir(), rng: rand.New(rand.NewSource(seed)),
		frozen: map[string]mval{}, known: map[string]bool{}}
	r.srv = startServerIn(t, r.dir, cfg.args()...)
	r.nshards = serverShards(t, r.srv)
	return r
}

// serverShards returns how many shards the server runs, from its start
// line ("..., pid N, 2 shards"); CONFIG GET shards says 0 for the default.
func serverShards(t testing.TB, s *server) int {
	t.Helper()
	m := regexp.MustCompile(`pid \d+, (\d+) shards`).FindStringSubmatch(s.log.String())
	if m == nil {
		t.Fatalf("the log does not say how many shards run:\n%s", s.log.String())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// round runs one round: clients write, the server ends (how), it restarts
// on the same folder and everything is checked.
func (r *crashRun) round(round int, how endHow) {
	t := r.t
	nClients := 6
	var clients []*crashClient
	for i := 0; i < nClients; i++ {
		depth := 1
		if i%2 == 1 {
			depth = 16
		}
		clients = append(clients, newCrashClient(fmt.Sprintf("r%dc%d", round, i), depth, r.nshards, r.rng.Int63()))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); c.run(r.srv.Addr, stop) }()
	}
	// A reader reads the counters: a value it is shown must survive.
	seen := map[string]int64{}
	var readerErr string
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		p, err := dialP(r.srv.Addr)
		if err != nil {
			return
		}
		defer p.close()
		rng := rand.New(rand.NewSource(int64(round)))
		for {
			select {
			case <-stop:
				return
			default:
			}
			k := clients[rng.Intn(len(clients))].ctrs[rng.Intn(2)]
			rep, err := p.do("GET", k)
			if err != nil {
				return
			}
			if rep.isNull() {
				continue
			}
			n, err := strconv.ParseInt(rep.s, 10, 64)
			if err != nil {
				readerErr = fmt.Sprintf("GET %s: %v", k, rep)
				return
			}
			if n > seen[k] {
				seen[k] = n
			}
		}
	}()

	delay := time.Duration(50+r.rng.Intn(351)) * time.Millisecond
	// Every other round the rewrite starts just before the kill, so that
	// the kill lands inside it; the others start it anywhere earlier.
	rewriteAt := time.Duration(r.rng.Int63n(int64(delay)))
	if round%2 == 0 {
		rewriteAt = delay - time.Duration(r.rng.Int63n(int64(4*time.Millisecond)))
	}
	rewriteReply := make(chan string, 1)
	if r.cfg.rewrite {
		go func() {
			time.Sleep(rewriteAt)
			p, err := dialP(r.srv.Addr)
			if err != nil {
				rewriteReply <- err.Error()
				return
			}
			defer p.close()
			rep, err := p.do("BGREWRITEAOF")
			if err != nil {
				rewriteReply <- err.Error()
				return
			}
			rewriteReply <- rep.String()
		}()
	}
	time.Sleep(delay)
	// A busy machine may not have answered anything yet (a slow first
	// fsync): the kill waits for a first acknowledgement, for up to 10 s,
	// so that a round always tests something — and a server that answers
	// nothing in 10 s still fails below.
	for wait := time.Now().Add(10 * time.Second); time.Now().Before(wait); time.Sleep(5 * time.Millisecond) {
		acked := int64(0)
		for _, c := range clients {
			acked += c.ackSignal.Load()
		}
		if acked > 0 {
			break
		}
	}
	old := r.srv
	switch how {
	case endKill9:
		old.kill9()
	case endSIGTERM:
		old.stop() // SIGTERM; fails the test unless it exits 0
	case endShutdown:
		p, err := dialP(old.Addr)
		if err != nil {
			t.Fatalf("dial for SHUTDOWN: %v", err)
		}
		_ = p.send([]string{"SHUTDOWN"})
		if rep, err := p.recvWithin(10 * time.Second); err == nil {
			t.Errorf("SHUTDOWN answered %v (Redis closes the connection)", rep)
		}
		p.close()
		if err := old.exited(10 * time.Second); err != nil {
			t.Errorf("exit status after SHUTDOWN: %v, want 0", err)
		}
	}
	close(stop)
	wg.Wait()
	<-readerDone

	totalAcked, totalSent := 0, 0
	for _, c := range clients {
		totalAcked += c.acked
		totalSent += c.sent
	}
	t.Logf("round %d: stopped after %v (or the first acknowledgement): %d commands sent, %d acknowledged", round, delay, totalSent, totalAcked)
	if r.cfg.rewrite {
		rep := <-rewriteReply
		state := "was still running"
		if m := regexp.MustCompile(`Background AOF rewrite finished successfully in [0-9.]+ seconds`).FindString(old.log.String()); m != "" {
			state = "had finished (" + m + ")"
		}
		t.Logf("round %d: BGREWRITEAOF at %v: %s; at the kill the rewrite %s", round, rewriteAt, rep, state)
		if !strings.HasPrefix(rep, "+") && !strings.Contains(rep, "already in progress") && !isConnErrText(rep) {
			t.Errorf("BGREWRITEAOF: %s", rep)
		}
	}
	if totalAcked == 0 {
		t.Errorf("round %d: no command was acknowledged in %v", round, delay)
	}
	if readerErr != "" {
		t.Errorf("reader: %s", readerErr)
	}

	r.srv = startServerIn(t, r.dir, r.cfg.args()...)
	failedBefore := t.Failed()
	// This round's clients.
	var all []string
	for _, c := range clients {
		all = append(all, c.universe()...)
	}
	got := readKeys(t, r.srv.Addr, all)
	for _, c := range clients {
		c.check(t, got, seen, r.dir)
	}
	// Earlier rounds: unchanged.
	var old2 []string
	for k := range r.frozen {
		old2 = append(old2, k)
	}
	again := readKeys(t, r.srv.Addr, old2)
	n := 0
	for _, k := range old2 {
		if again[k] != r.frozen[k] {
			if n++; n <= 10 {
				t.Errorf("key %q of an earlier round changed across this restart: %v, was %v", k, again[k], r.frozen[k])
			}
		}
	}
	// Nothing else in the data set.
	for _, k := range all {
		r.known[k] = true
	}
	p := mustDialP(t, r.srv.Addr)
	keys := p.mustDo(t, "KEYS", "*")
	p.close()
	n = 0
	for _, k := range keys.arr {
		if !r.known[k.s] {
			if n++; n <= 10 {
				t.Errorf("unexpected key %q after the restart", k.s)
			}
		}
	}
	for _, k := range all {
		r.frozen[k] = got[k]
	}
	if !failedBefore && t.Failed() {
		t.Logf("--- log of the server before the restart (tail) ---\n%s", logTail(old.log.String(), 30))
		t.Logf("--- log of the restarted server ---\n%s", logTail(r.srv.log.String(), 30))
	}
}

// TestCrashMatrix kills the server with SIGKILL under pipelined load, for
// appendfsync always and everysec, with 2 shards and the default, and
// checks every acknowledged write after each restart; two more cells start
// a BGREWRITEAOF at a random moment before the kill, so that some kills
// land during a rewrite and some after it. Under everysec too
// redshard writes every record before its reply, so a process crash (not
// a power loss) loses nothing acknowledged.
func TestCrashMatrix(t *testing.T) {
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	for i, cfg := range []crashConfig{
		{"always", 2, false}, {"always", 0, false}, {"everysec", 2, false}, {"everysec", 0, false},
		{"always", 2, true}, {"everysec", 0, true},
	} {
		name := "appendfsync=" + cfg.fsync + "/shards="
		if cfg.shards == 0 {
			name += "default"
		} else {
			name += itoa(cfg.shards)
		}
		if cfg.rewrite {
			name += "/rewrite"
		}
		t.Run(name, func(t *testing.T) {
			r := newCrashRun(t, cfg, seed+int64(i))
			t.Logf("%d shards", r.nshards)
			for round := 0; round < rounds && !t.Failed(); round++ {
				r.round(round, endKill9)
			}
		})
	}
}

// TestShutdownFlushesEverysec: under everysec, writes acknowledged before
// SHUTDOWN or SIGTERM (sent while clients are writing) are all there after
// the restart, and nothing is applied twice.
func TestShutdownFlushesEverysec(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	for _, how := range []struct {
		name string
		how  endHow
	}{{"SHUTDOWN", endShutdown}, {"SIGTERM", endSIGTERM}} {
		t.Run(how.name, func(t *testing.T) {
			r := newCrashRun(t, crashConfig{"everysec", 2, false}, seed)
			for round := 0; round < 2 && !t.Failed(); round++ {
				r.round(round, how.how)
			}
		})
	}
}

// logRecordsOf lists, for diagnosis, the records of the AOF files that name
// one of keys: the file, the group's offset and the command.
func logRecordsOf(dir string, keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var b strings.Builder
	b.WriteString("\n  their records in the AOF (file@group offset: command):")
	man, err := os.ReadFile(manifestOf(dir))
	if err != nil {
		return b.String() + " " + err.Error()
	}
	for _, line := range strings.Split(string(man), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "file" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(aofDir(dir), f[1]))
		if err != nil {
			fmt.Fprintf(&b, "\n    %s: %v", f[1], err)
			continue
		}
		gs, err := splitGroups(data)
		if err != nil {
			fmt.Fprintf(&b, "\n    %s: cannot parse: %v", f[1], err)
		}
		for _, g := range gs {
			for _, argv := range g.cmds {
				for _, a := range argv[1:] {
					if want[a] {
						fmt.Fprintf(&b, "\n    %s@%d: %s", f[1], g.start, fmtArgs(argv))
						break
					}
				}
			}
		}
	}
	return b.String()
}

// isConnErrText says whether a BGREWRITEAOF outcome is the kill arriving
// first (the connection broke).
func isConnErrText(s string) bool {
	return strings.Contains(s, "EOF") || strings.Contains(s, "reset") || strings.Contains(s, "refused") || strings.Contains(s, "broken pipe")
}
