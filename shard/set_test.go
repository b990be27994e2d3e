package shard

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The set tests call the handlers directly. The scripts compare exact RESP
// bytes as Redis 7.0.15 replies them; a step marked unordered compares the
// elements of an array reply in any order (a hashtable's order is its own).
// With a real server at hand:
//	REDSHARD_REDIS_ADDR=127.0.0.1:7201 go test -run TestSetScriptsMatchRealRedis ./shard/

var stCmdTable = func() map[string]Command {
	m := map[string]Command{}
	for _, t := range [][]Command{stringCommands, keyCommands, setCommands} {
		for _, cmd := range t {
			m[cmd.Name] = cmd
		}
	}
	return m
}()

func stCtx(nshards int) *Ctx { return ksCtx(nshards) }

// stDo runs one command and returns its reply, leaving the propagation in
// c.Prop. RPUSH makes a list-typed value, CONFIG SET set-max-intset-entries
// and HELLO change the context, as they would on a server.
func stDo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	c.Out = c.Out[:0]
	c.Prop.Reset()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	name := strings.ToLower(args[0])
	switch name {
	case "rpush":
		c.DBOf(argv[1]).SetObj(argv[1], TypeList, EncQuicklist, &ksList{items: args[2:]})
		return num(int64(len(args) - 2))
	case "hello":
		c.Proto, _ = strconv.Atoi(args[1])
		return ""
	case "config":
		n, _ := strconv.Atoi(args[3])
		for _, s := range c.Shards {
			s.Cfg.SetMaxIntsetEntries.Store(int64(n))
		}
		return ok
	case "object":
		name += "|" + strings.ToLower(args[1])
	}
	cmd, found := stCmdTable[name]
	if !found {
		t.Fatalf("no command %q", name)
	}
	cmd.Run(c, argv)
	return string(c.Out)
}

type stStep struct {
	cmd       string
	want      string
	argv      []string
	unordered bool // an array reply whose order is the hashtable's
}

func (s stStep) args() []string {
	if s.argv != nil {
		return s.argv
	}
	return strings.Fields(s.cmd)
}

// sameReply compares two replies, in any element order when unordered.
func stSameReply(got, want string, unordered bool) bool {
	if !unordered {
		return got == want
	}
	norm := func(s string) string {
		head, rest, _ := strings.Cut(s, "\r\n")
		var elems []string
		for rest != "" {
			l, r, _ := strings.Cut(rest, "\r\n")
			v, r2, _ := strings.Cut(r, "\r\n")
			elems = append(elems, l+"\r\n"+v)
			rest = r2
		}
		sort.Strings(elems)
		return head + "|" + strings.Join(elems, "|")
	}
	return norm(got) == norm(want)
}

func stArr(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}
func stSet3(items ...string) string {
	return "~" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}
func stBulks(items ...string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = bulk(s)
	}
	return out
}
func stErr(msg string) string { return "-" + msg + "\r\n" }

var stScripts = []struct {
	name  string
	steps []stStep
}{
	{"sadd scard sismember smismember smembers", []stStep{
		{cmd: "sadd s 3 1 2", want: num(3)},
		{cmd: "sadd s 2 3 4", want: num(1)},
		{cmd: "scard s", want: num(4)},
		{cmd: "object encoding s", want: bulk("intset")},
		{cmd: "smembers s", want: stArr(stBulks("1", "2", "3", "4")...)},
		{cmd: "sismember s 3", want: one},
		{cmd: "sismember s 03", want: zero},
		{cmd: "sismember s +3", want: zero},
		{cmd: "sismember s x", want: zero},
		{cmd: "smismember s 1 5 x 4", want: stArr(one, zero, zero, one)},
		{cmd: "smismember nokey a b", want: stArr(zero, zero)},
		{cmd: "sismember nokey a", want: zero},
		{cmd: "scard nokey", want: zero},
		{cmd: "smembers nokey", want: "*0\r\n"},
		{cmd: "sadd s a", want: one},
		{cmd: "object encoding s", want: bulk("hashtable")},
		{cmd: "smembers s", want: stArr(stBulks("1", "2", "3", "4", "a")...), unordered: true},
		{cmd: "sismember s 3", want: one},
		{cmd: "srem s a", want: one},
		{cmd: "object encoding s", want: bulk("hashtable")}, // never back
		{cmd: "sadd h foo", want: one},
		{cmd: "object encoding h", want: bulk("hashtable")},
		{cmd: "sadd big 213244124402402314402033402", want: one},
		{cmd: "object encoding big", want: bulk("hashtable")},
		{cmd: "sadd minmax -9223372036854775808 9223372036854775807", want: num(2)},
		{cmd: "object encoding minmax", want: bulk("intset")},
		{cmd: "smembers minmax", want: stArr(stBulks("-9223372036854775808", "9223372036854775807")...)},
		{cmd: "sadd over 9223372036854775808", want: one},
		{cmd: "object encoding over", want: bulk("hashtable")},
		{cmd: "sadd z 0 -0", want: num(2)},
		{cmd: "object encoding z", want: bulk("hashtable")},
	}},
	{"wrong type", []stStep{
		{cmd: "rpush l a", want: one},
		{cmd: "sadd l a", want: wrong},
		{cmd: "srem l a", want: wrong},
		{cmd: "sismember l a", want: wrong},
		{cmd: "smismember l a", want: wrong},
		{cmd: "scard l", want: wrong},
		{cmd: "smembers l", want: wrong},
		{cmd: "spop l", want: wrong},
		{cmd: "spop l 2", want: wrong},
		{cmd: "srandmember l", want: wrong},
		{cmd: "srandmember l 2", want: wrong},
		{cmd: "sscan l 0", want: wrong},
		{cmd: "sadd s a", want: one},
		{cmd: "sinter s l", want: wrong},
		{cmd: "sinter nokey l", want: wrong},
		{cmd: "sintercard 2 s l", want: wrong},
		{cmd: "sunion s l", want: wrong},
		{cmd: "sdiff s l", want: wrong},
		{cmd: "sdiff nokey l", want: wrong},
		{cmd: "sinterstore d s l", want: wrong},
		{cmd: "sunionstore d s l", want: wrong},
		{cmd: "sdiffstore d s l", want: wrong},
		{cmd: "smove l s a", want: wrong},
		{cmd: "smove s l a", want: wrong},
		{cmd: "smove nokey l a", want: zero},
	}},
	{"srem deletes the empty set", []stStep{
		{cmd: "sadd s a b c", want: num(3)},
		{cmd: "srem s x a b", want: num(2)},
		{cmd: "srem s c d", want: one},
		{cmd: "exists s", want: zero},
		{cmd: "srem s c", want: zero},
		{cmd: "sadd i 1 2 3", want: num(3)},
		{cmd: "srem i 1 x 2 3 4", want: num(3)},
		{cmd: "exists i", want: zero},
	}},
	{"spop and srandmember errors", []stStep{
		{cmd: "sadd s a", want: one},
		{cmd: "spop nokey", want: null2},
		{cmd: "spop nokey 3", want: "*0\r\n"},
		{cmd: "spop s 0", want: "*0\r\n"},
		{cmd: "spop s -1", want: stErr(errMustBePositive)},
		{cmd: "spop s x", want: stErr(errMustBePositive)},
		{cmd: "spop nokey x", want: stErr(errMustBePositive)},
		{cmd: "spop s 1 2", want: syntax},
		{cmd: "srandmember nokey", want: null2},
		{cmd: "srandmember nokey 5", want: "*0\r\n"},
		{cmd: "srandmember s 0", want: "*0\r\n"},
		{cmd: "srandmember s x", want: notInt},
		{cmd: "srandmember s -9223372036854775808", want: stErr(errLongRange)},
		{cmd: "srandmember s 9223372036854775807", want: stArr(bulk("a"))},
		{cmd: "srandmember s -3", want: stArr(bulk("a"), bulk("a"), bulk("a"))},
		{cmd: "srandmember s 1 2", want: syntax},
		{cmd: "spop s 5", want: stArr(bulk("a"))},
		{cmd: "exists s", want: zero},
		{cmd: "hello 3"},
		{cmd: "spop nokey", want: null3},
		{cmd: "spop nokey 2", want: "~0\r\n"},
		{cmd: "srandmember nokey", want: null3},
		{cmd: "srandmember nokey 2", want: "*0\r\n"},
		{cmd: "sadd s 7", want: one},
		{cmd: "spop s 1", want: stSet3(bulk("7"))},
	}},
	{"sintercard arguments", []stStep{
		{cmd: "sadd a{t} 1 2 3 x", want: num(4)},
		{cmd: "sadd b{t} 2 3 x y", want: num(4)},
		{cmd: "sintercard 0 a{t}", want: stErr(errNumkeysZero)},
		{cmd: "sintercard -1 a{t}", want: stErr(errNumkeysZero)},
		{cmd: "sintercard x a{t}", want: stErr(errNumkeysZero)},
		{cmd: "sintercard 3 a{t} b{t}", want: stErr(errNumkeysArgs)},
		{cmd: "sintercard 1 a{t} limit -1", want: stErr(errLimitNegative)},
		{cmd: "sintercard 1 a{t} limit x", want: stErr(errLimitNegative)},
		{cmd: "sintercard 1 a{t} limit", want: syntax},
		{cmd: "sintercard 1 a{t} foo 1", want: syntax},
		{cmd: "sintercard 2 a{t} b{t}", want: num(3)},
		{cmd: "sintercard 2 a{t} b{t} limit 0", want: num(3)},
		{cmd: "sintercard 2 a{t} b{t} limit 2", want: num(2)},
		{cmd: "sintercard 2 a{t} b{t} LIMIT 9 limit 1", want: one},
		{cmd: "sintercard 2 a{t} nokey{t}", want: zero},
		{cmd: "sintercard 1 a{t}", want: num(4)},
	}},
	{"sinter sunion sdiff and stores", []stStep{
		{cmd: "sadd a{t} 1 2 3 4", want: num(4)},
		{cmd: "sadd b{t} 3 4 5", want: num(3)},
		{cmd: "sadd c{t} 4 x", want: num(2)},
		{cmd: "sinter a{t} b{t}", want: stArr(stBulks("3", "4")...)},
		{cmd: "sinter a{t} b{t} c{t}", want: stArr(bulk("4"))},
		{cmd: "sinter c{t} a{t}", want: stArr(bulk("4"))},
		{cmd: "sinter a{t} nokey{t}", want: "*0\r\n"},
		{cmd: "sinter a{t} a{t}", want: stArr(stBulks("1", "2", "3", "4")...)},
		{cmd: "sunion a{t} b{t}", want: stArr(stBulks("1", "2", "3", "4", "5")...)},
		{cmd: "sunion a{t} c{t} nokey{t}", want: stArr(stBulks("1", "2", "3", "4", "x")...), unordered: true},
		{cmd: "sunion nokey{t}", want: "*0\r\n"},
		{cmd: "sdiff a{t} b{t}", want: stArr(stBulks("1", "2")...)},
		{cmd: "sdiff a{t} b{t} c{t}", want: stArr(stBulks("1", "2")...)},
		{cmd: "sdiff a{t} a{t}", want: "*0\r\n"},
		{cmd: "sdiff nokey{t} a{t}", want: "*0\r\n"},
		{cmd: "sdiff a{t} nokey{t}", want: stArr(stBulks("1", "2", "3", "4")...)},
		{cmd: "set d{t} string", want: ok},
		{cmd: "expire d{t} 100", want: one},
		{cmd: "sinterstore d{t} a{t} b{t}", want: num(2)},
		{cmd: "type d{t}", want: "+set\r\n"},
		{cmd: "ttl d{t}", want: num(-1)},
		{cmd: "object encoding d{t}", want: bulk("intset")},
		{cmd: "smembers d{t}", want: stArr(stBulks("3", "4")...)},
		{cmd: "sinterstore d{t} a{t} c{t}", want: one},
		{cmd: "sinterstore d{t} a{t} nokey{t}", want: zero},
		{cmd: "exists d{t}", want: zero},
		{cmd: "sunionstore d{t} a{t} c{t}", want: num(5)},
		{cmd: "object encoding d{t}", want: bulk("hashtable")},
		{cmd: "sunionstore d{t} nokey{t}", want: zero},
		{cmd: "exists d{t}", want: zero},
		{cmd: "sdiffstore d{t} c{t} a{t}", want: one},
		{cmd: "smembers d{t}", want: stArr(bulk("x"))},
		{cmd: "sdiffstore d{t} a{t} a{t}", want: zero},
		{cmd: "exists d{t}", want: zero},
		{cmd: "sinterstore a{t} a{t} b{t}", want: num(2)}, // the destination may be a source
		{cmd: "smembers a{t}", want: stArr(stBulks("3", "4")...)},
		{cmd: "hello 3"},
		{cmd: "sinter a{t} b{t}", want: stSet3(stBulks("3", "4")...)},
		{cmd: "smembers a{t}", want: stSet3(stBulks("3", "4")...)},
		{cmd: "sunion a{t}", want: stSet3(stBulks("3", "4")...)},
		{cmd: "sdiff a{t} nokey{t}", want: stSet3(stBulks("3", "4")...)},
		{cmd: "smembers nokey", want: "~0\r\n"},
		{cmd: "sinter nokey{t} a{t}", want: "~0\r\n"},
	}},
	{"sdiff algorithms show in the stored encoding", []stStep{
		// Algorithm 1 (the first set is small): x is never added.
		{cmd: "sadd a{t} 1 x", want: num(2)},
		{cmd: "sadd b{t} x 5 6 7 8 9", want: num(6)},
		{cmd: "sdiffstore d{t} a{t} b{t}", want: one},
		{cmd: "object encoding d{t}", want: bulk("intset")},
		// Algorithm 2 (the first set is large): x is added, then removed.
		{cmd: "sadd c{t} 1 2 3 4 5 6 7 8 x", want: num(9)},
		{cmd: "sadd e{t} x", want: one},
		{cmd: "sadd f{t} y", want: one},
		{cmd: "sdiffstore d{t} c{t} e{t} f{t}", want: num(8)},
		{cmd: "object encoding d{t}", want: bulk("hashtable")},
	}},
	{"smove", []stStep{
		{cmd: "sadd a{t} 1 x y", want: num(3)},
		{cmd: "sadd b{t} 2 3", want: num(2)},
		{cmd: "smove a{t} b{t} 1", want: one},
		{cmd: "object encoding b{t}", want: bulk("intset")},
		{cmd: "smove a{t} b{t} x", want: one},
		{cmd: "object encoding b{t}", want: bulk("hashtable")},
		{cmd: "smove a{t} b{t} nope", want: zero},
		{cmd: "smove a{t} a{t} y", want: one},
		{cmd: "smove a{t} a{t} nope", want: zero},
		{cmd: "smove nokey{t} b{t} 2", want: zero},
		{cmd: "smove a{t} c{t} y", want: one},
		{cmd: "exists a{t}", want: zero},
		{cmd: "object encoding c{t}", want: bulk("hashtable")},
		{cmd: "sadd i{t} 5", want: one},
		{cmd: "smove i{t} n{t} 5", want: one},
		{cmd: "object encoding n{t}", want: bulk("intset")},
		{cmd: "sadd i{t} 5", want: one},
		{cmd: "smove i{t} n{t} 5", want: one}, // already there: only removed from i
		{cmd: "exists i{t}", want: zero},
		{cmd: "scard n{t}", want: one},
	}},
	{"sscan", []stStep{
		{cmd: "sscan nokey 0", want: stArr(bulk("0"), "*0\r\n")},
		{cmd: "sscan nokey 0 foo", want: stArr(bulk("0"), "*0\r\n")},
		{cmd: "sadd i 3 1 2 10", want: num(4)},
		{cmd: "sscan i x", want: stErr(errInvalidCursor)},
		{cmd: "sscan nokey x", want: stErr(errInvalidCursor)},
		{cmd: "sscan i 0", want: stArr(bulk("0"), stArr(stBulks("1", "2", "3", "10")...))},
		{cmd: "sscan i 77 count 1", want: stArr(bulk("0"), stArr(stBulks("1", "2", "3", "10")...))},
		{cmd: "sscan i 0 match 1*", want: stArr(bulk("0"), stArr(stBulks("1", "10")...))},
		{cmd: "sscan i 0 count 0", want: syntax},
		{cmd: "sscan i 0 count x", want: notInt},
		{cmd: "sscan i 0 type set", want: syntax},
		{cmd: "sscan i 0 match", want: syntax},
		{cmd: "sadd h a", want: one},
		{cmd: "sscan h 0", want: stArr(bulk("0"), stArr(bulk("a")))},
		{cmd: "sscan h 0 match b", want: stArr(bulk("0"), "*0\r\n")},
	}},
	{"set-max-intset-entries", []stStep{
		{cmd: "config set set-max-intset-entries 2", want: ok},
		{cmd: "sadd a 1 2", want: num(2)},
		{cmd: "object encoding a", want: bulk("intset")},
		{cmd: "sadd a 3", want: one},
		{cmd: "object encoding a", want: bulk("hashtable")},
		{cmd: "sadd b 1 2 3", want: num(3)},
		{cmd: "object encoding b", want: bulk("hashtable")},
		{cmd: "config set set-max-intset-entries 0", want: ok},
		{cmd: "sadd c 1", want: one},
		{cmd: "object encoding c", want: bulk("hashtable")},
		{cmd: "config set set-max-intset-entries 512", want: ok},
	}},
}

func TestSetScripts(t *testing.T) {
	for _, n := range []int{1, 4} {
		for _, sc := range stScripts {
			t.Run(fmt.Sprintf("%s/shards=%d", sc.name, n), func(t *testing.T) {
				c := stCtx(n)
				for i, st := range sc.steps {
					if got := stDo(t, c, st.args()...); st.want != "" && !stSameReply(got, st.want, st.unordered) {
						t.Errorf("step %d %q: got %q, want %q", i, st.args(), got, st.want)
					}
				}
			})
		}
	}
}

// TestSetScriptsMatchRealRedis replays the scripts against a real Redis when
// REDSHARD_REDIS_ADDR names one (it is flushed).
func TestSetScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range stScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("HELLO", "2")
			send("FLUSHALL")
			send("CONFIG", "SET", "set-max-intset-entries", "512")
			for i, st := range sc.steps {
				got := send(st.args()...)
				if strings.EqualFold(st.args()[0], "hello") {
					continue
				}
				if st.want != "" && !stSameReply(got, st.want, st.unordered) {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

// stOf returns the set at key, or nil.
func stOf(t *testing.T, c *Ctx, key string) *setObj {
	t.Helper()
	db := c.DBOf([]byte(key))
	slot := db.Peek([]byte(key))
	if slot < 0 {
		return nil
	}
	s, ok := db.Obj(slot).(*setObj)
	if !ok {
		t.Fatalf("%s is not a set", key)
	}
	if db.Encoding(slot) != s.enc() {
		t.Fatalf("%s: entry says %s, value is %s", key, EncNames[db.Encoding(slot)], EncNames[s.enc()])
	}
	return s
}

// members returns a set's members, sorted.
func stMembers(s *setObj) []string {
	var out []string
	var buf [20]byte
	for i := 0; i < s.len(); i++ {
		out = append(out, string(s.elem(i, buf[:0])))
	}
	sort.Strings(out)
	return out
}

func TestIntsetWidensAndStaysSorted(t *testing.T) {
	var s intset
	vals := []int64{5, -3, 40000, -70000, 1 << 40, math.MinInt64, math.MaxInt64, 0, 32767, -32768}
	want := map[int64]bool{}
	for i, v := range vals {
		if !s.add(v) {
			t.Fatalf("add %d: not new", v)
		}
		want[v] = true
		if s.add(v) {
			t.Fatalf("add %d twice: new", v)
		}
		wantW := uint8(2)
		for _, u := range vals[:i+1] {
			wantW = max(wantW, intWidth(u))
		}
		if s.w != wantW {
			t.Fatalf("after %d: width %d, want %d", v, s.w, wantW)
		}
	}
	got := make([]int64, s.n)
	for i := range got {
		got[i] = s.get(i)
	}
	if !slices.IsSorted(got) || len(got) != len(want) {
		t.Fatalf("intset %v", got)
	}
	for v := range want {
		if _, found := s.search(v); !found {
			t.Errorf("%d not found", v)
		}
	}
	if _, found := s.search(6); found {
		t.Error("6 found")
	}
}

// TestStrSetAgreesWithMapUnderChurn checks the hashtable (growth, shrink,
// moving the last entry into a hole, arena compaction) against a map.
func TestStrSetAgreesWithMapUnderChurn(t *testing.T) {
	tb := newStrSet(0)
	ref := map[string]bool{}
	rng := uint64(1)
	next := func() uint64 { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng }
	for round := 0; round < 40000; round++ {
		// grow for a while, then shrink, so that both resizes happen
		k := fmt.Sprintf("member-%d-%s", next()%3000, strings.Repeat("x", int(next()%40)))
		if (round/5000)%2 == 0 || next()%4 == 0 {
			if tb.add([]byte(k)) == ref[k] {
				t.Fatalf("round %d: add %q disagrees", round, k)
			}
			ref[k] = true
		} else if len(ref) > 0 {
			// remove something present half of the time
			if next()%2 == 0 {
				i := int32(next() % uint64(len(tb.ents)))
				k = string(tb.member(i))
			}
			if tb.remove([]byte(k)) != ref[k] {
				t.Fatalf("round %d: remove %q disagrees", round, k)
			}
			delete(ref, k)
		}
		if len(tb.ents) != len(ref) {
			t.Fatalf("round %d: %d entries, want %d", round, len(tb.ents), len(ref))
		}
	}
	for k := range ref {
		if tb.find([]byte(k)) < 0 {
			t.Fatalf("%q missing", k)
		}
	}
	live := 0
	for i := range tb.ents {
		live += tb.size(int32(i))
	}
	if len(tb.arena)-tb.garbage != live {
		t.Fatalf("arena accounting: %d - %d garbage != %d live", len(tb.arena), tb.garbage, live)
	}
	if n := len(tb.ents); n > 4 && len(tb.tab[0]) > 16*n {
		t.Fatalf("%d buckets for %d members: not shrunk", len(tb.tab[0]), n)
	}
}

func TestStrSetBigMemberLength(t *testing.T) {
	// A member of 4 GiB or more keeps its length in the arena; exercise that
	// path through an entry marked big without allocating 4 GiB.
	tb := newStrSet(0)
	tb.add([]byte("small"))
	off := uint64(len(tb.arena))
	payload := []byte("pretend-this-is-huge")
	var hdr [8]byte
	for i := range hdr {
		hdr[i] = byte(uint64(len(payload)) >> (8 * i))
	}
	tb.arena = append(append(tb.arena, hdr[:]...), payload...)
	b := memberHash(payload) & uint64(len(tb.tab[0])-1)
	tb.ents = append(tb.ents, setEnt{off: off, n: bigMember, next: tb.tab[0][b]})
	tb.tab[0][b] = int32(len(tb.ents) - 1)
	if got := tb.find(payload); got != 1 || string(tb.member(1)) != string(payload) || tb.size(1) != 8+len(payload) {
		t.Fatalf("big member: find %d, member %q", got, tb.member(1))
	}
	if !tb.remove([]byte("small")) || string(tb.member(0)) != string(payload) {
		t.Fatalf("after moving the big member: %q", tb.member(0))
	}
}

// TestSscanReturnsEveryMemberDespiteGrowth is Redis's SCAN guarantee: a
// member present for the whole scan is returned at least once, however the
// table grows or shrinks between calls.
func TestSscanReturnsEveryMemberDespiteGrowth(t *testing.T) {
	for _, mode := range []string{"grow", "shrink"} {
		t.Run(mode, func(t *testing.T) {
			c := stCtx(1)
			var orig []string
			for i := 0; i < 300; i++ {
				orig = append(orig, "m"+strconv.Itoa(i))
			}
			stDo(t, c, append([]string{"sadd", "s"}, orig...)...)
			if mode == "shrink" {
				for i := 0; i < 5000; i++ {
					stDo(t, c, "sadd", "s", "extra"+strconv.Itoa(i))
				}
			}
			seen := map[string]int{}
			cursor, calls, extra, duringRehash := "0", 0, 0, 0
			for {
				if stOf(t, c, "s").ht.rehashing() {
					duringRehash++
				}
				out := stDo(t, c, "sscan", "s", cursor, "count", "7")
				lines := strings.Split(out, "\r\n")
				cursor = lines[2]
				for i := 5; i+1 < len(lines); i += 2 {
					seen[lines[i]]++
				}
				calls++
				// between calls: the table doubles (or halves) several times
				for j := 0; j < 40; j++ {
					if mode == "grow" {
						stDo(t, c, "sadd", "s", "new"+strconv.Itoa(extra))
					} else if extra < 5000 {
						stDo(t, c, "srem", "s", "extra"+strconv.Itoa(extra))
					}
					extra++
				}
				if cursor == "0" {
					break
				}
				if calls > 100000 {
					t.Fatal("scan does not end")
				}
			}
			for _, m := range orig {
				if seen[m] == 0 {
					t.Errorf("%s never returned (%d calls)", m, calls)
				}
			}
			if s := stOf(t, c, "s"); mode == "grow" && len(s.ht.tab[0]) < 4096 {
				t.Errorf("the table did not grow: %d buckets", len(s.ht.tab[0]))
			}
			if duringRehash < 10 {
				t.Errorf("only %d of %d calls ran during a rehash", duringRehash, calls)
			}
		})
	}
}

// TestSetRehashIsIncremental: growing a large table moves one bucket per
// command, never the whole table at once, and finishes.
func TestSetRehashIsIncremental(t *testing.T) {
	tb := newStrSet(0)
	for i := 0; i < 1<<14; i++ {
		tb.add([]byte("m" + strconv.Itoa(i)))
	}
	if tb.rehashing() || len(tb.tab[0]) != 1<<14 {
		t.Fatalf("table of %d, rehashing %v", len(tb.tab[0]), tb.rehashing())
	}
	tb.add([]byte("one more"))
	if !tb.rehashing() || len(tb.tab[1]) != 1<<15 || tb.rehashIdx > 11 {
		t.Fatalf("after the add that grows: rehashing %v to %d, at bucket %d", tb.rehashing(), len(tb.tab[1]), tb.rehashIdx)
	}
	// Members stay findable mid-rehash, in either table.
	for i := 0; i < 1<<14; i += 97 {
		if !tb.has([]byte("m" + strconv.Itoa(i))) {
			t.Fatalf("m%d lost during the rehash", i)
		}
	}
	for steps := 0; tb.rehashing(); steps++ {
		if steps > 1<<15 {
			t.Fatal("the rehash does not finish")
		}
		tb.step()
	}
	if len(tb.tab[0]) != 1<<15 || tb.find([]byte("one more")) < 0 || tb.find([]byte("m0")) < 0 {
		t.Fatalf("after the rehash: %d buckets", len(tb.tab[0]))
	}
}

// TestSscanBoundsItsWork: on a sparse table a call stops after visiting
// count*10+1 buckets, as Redis's maxiterations does, even if it found less.
func TestSscanBoundsItsWork(t *testing.T) {
	// A table left sparse (SREM shrinks below 10% fill; build it directly).
	tb := newStrSet(2048)
	tb.add([]byte("only"))
	c := stCtx(1)
	c.DBOf([]byte("s")).SetObj([]byte("s"), TypeSet, EncHashtable, &setObj{ht: tb})
	lines := strings.Split(stDo(t, c, "sscan", "s", "0", "count", "1"), "\r\n")
	cur, err := strconv.ParseUint(lines[2], 10, 64)
	if err != nil || cur == 0 {
		t.Fatalf("cursor %q", lines[2])
	}
	// The cursor, bit-reversed, counts the buckets visited.
	if visited := bits.Reverse64(cur) >> (64 - 11); visited > 11 {
		t.Errorf("visited %d buckets for COUNT 1", visited)
	}
	if got := stDo(t, c, "sscan", "s", "0", "count", "100000"); got != stArr(bulk("0"), stArr(bulk("only"))) {
		t.Errorf("full scan: %q", got)
	}
}

func TestSetEncodingFollowsString2ll(t *testing.T) {
	for _, tc := range []struct {
		member string
		enc    string
	}{
		{"0", "intset"}, {"-1", "intset"}, {"123", "intset"},
		{"-9223372036854775808", "intset"}, {"9223372036854775807", "intset"},
		{"01", "hashtable"}, {"+1", "hashtable"}, {"-0", "hashtable"}, {" 1", "hashtable"},
		{"1 ", "hashtable"}, {"1.0", "hashtable"}, {"", "hashtable"}, {"-", "hashtable"},
		{"9223372036854775808", "hashtable"}, {"-9223372036854775809", "hashtable"},
	} {
		c := stCtx(1)
		stDo(t, c, "sadd", "s", tc.member)
		if got := stDo(t, c, "object", "encoding", "s"); got != bulk(tc.enc) {
			t.Errorf("sadd %q: encoding %q, want %s", tc.member, got, tc.enc)
		}
		if got := stDo(t, c, "sismember", "s", tc.member); got != one {
			t.Errorf("sismember %q: %q", tc.member, got)
		}
	}
}

func TestIntsetConvertsPastMaxEntries(t *testing.T) {
	c := stCtx(1)
	args := []string{"sadd", "s"}
	for i := 0; i < 512; i++ {
		args = append(args, strconv.Itoa(i*1000))
	}
	stDo(t, c, args...)
	if s := stOf(t, c, "s"); s.enc() != EncIntset || s.len() != 512 || s.is.w != 4 {
		t.Fatalf("512 members: %s, width %d", EncNames[s.enc()], s.is.w)
	}
	stDo(t, c, "sadd", "s", "1")
	s := stOf(t, c, "s")
	if s.enc() != EncHashtable || s.len() != 513 {
		t.Fatalf("513 members: %s", EncNames[s.enc()])
	}
	if got := stDo(t, c, "sismember", "s", "511000"); got != one {
		t.Errorf("member lost in the conversion: %q", got)
	}
	for i := 0; i < 513; i++ {
		stDo(t, c, "srem", "s", strconv.Itoa(i*1000))
	}
	if s := stOf(t, c, "s"); s.enc() != EncHashtable || s.len() != 1 {
		t.Fatalf("after removals: %s with %d", EncNames[s.enc()], s.len())
	}
}

// setProp renders the propagation like propString, for set commands.
func TestSetCommandsPropagateLikeRedis(t *testing.T) {
	for _, tc := range []struct {
		setup []string
		cmd   string
		want  string
	}{
		{nil, "sadd s a b", "AS-IS 2"},
		{[]string{"sadd s a b"}, "sadd s a b", ""},
		{[]string{"sadd s a b"}, "srem s a c", "AS-IS 1"},
		{[]string{"sadd s a b"}, "srem s c", ""},
		{[]string{"sadd s 7"}, "spop s", "SREM s 7"},
		{nil, "spop s", ""},
		{nil, "spop s 3", ""},
		{[]string{"sadd s 1 2 3"}, "spop s 3", "DEL s"},
		{[]string{"sadd s 1 2 3"}, "spop s 9", "DEL s"},
		{[]string{"sadd s 1 2 3"}, "spop s 0", ""},
		{[]string{"sadd a{t} 1", "sadd b{t} 2"}, "smove a{t} b{t} 1", "AS-IS 2"},
		{[]string{"sadd a{t} 1", "sadd b{t} 1"}, "smove a{t} b{t} 1", "AS-IS 1"},
		{[]string{"sadd a{t} 1"}, "smove a{t} b{t} 2", ""},
		{[]string{"sadd a{t} 1"}, "sinterstore d{t} a{t}", "AS-IS 1"},
		{nil, "sinterstore d{t} a{t}", ""},
		{[]string{"sadd d{t} 1"}, "sinterstore d{t} a{t}", "AS-IS 1"},
		{[]string{"sadd a{t} 1"}, "sunionstore d{t} a{t}", "AS-IS 1"},
		{[]string{"sadd a{t} 1"}, "sdiffstore d{t} a{t} a{t}", ""},
		{[]string{"sadd a{t} 1"}, "sinter a{t}", ""},
	} {
		c := stCtx(4)
		for _, s := range tc.setup {
			stDo(t, c, strings.Fields(s)...)
		}
		stDo(t, c, strings.Fields(tc.cmd)...)
		if got := propString(&c.Prop); got != tc.want {
			t.Errorf("%s: propagated %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestSpopWithCountLogsEachMember covers SPOP's cases 2 (draw members) and
// 3 (keep a few in a new set): one SREM per popped member, in reply order,
// and replaying them leaves what SPOP left.
func TestSpopWithCountLogsEachMember(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []string
		count   int
		enc     string // of what is left
	}{
		{"case 2 intset", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, 3, "intset"},
		{"case 2 hashtable", []string{"a", "b", "c", "d", "e", "f"}, 2, "hashtable"},
		{"case 3 intset", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"}, 11, "intset"},
		// The few members that stay go to a new set, made as SADD would.
		{"case 3 hashtable keeps integers in an intset", []string{"x", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}, 11, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := stCtx(1)
			stDo(t, c, append([]string{"sadd", "s"}, tc.members...)...)
			stDo(t, c, "expire", "s", "100")
			out := stDo(t, c, "spop", "s", strconv.Itoa(tc.count))
			lines := strings.Split(out, "\r\n")
			if lines[0] != "*"+strconv.Itoa(tc.count) {
				t.Fatalf("reply %q", out)
			}
			var popped []string
			for i := 2; i < len(lines); i += 2 {
				popped = append(popped, lines[i])
			}
			logged := slices.Clone(c.Prop.Cmds)
			if len(logged) != tc.count {
				t.Fatalf("logged %d commands, want %d", len(c.Prop.Cmds), tc.count)
			}
			for i, cmd := range logged {
				if len(cmd) != 3 || string(cmd[0]) != "SREM" || string(cmd[1]) != "s" || string(cmd[2]) != popped[i] {
					t.Fatalf("logged %q, popped %q", cmd, popped[i])
				}
			}
			s := stOf(t, c, "s")
			left := stMembers(s)
			all := append(slices.Clone(left), popped...)
			sort.Strings(all)
			want := slices.Clone(tc.members)
			sort.Strings(want)
			if !slices.Equal(all, want) {
				t.Fatalf("left %v + popped %v != %v", left, popped, want)
			}
			if got := stDo(t, c, "ttl", "s"); got != num(100) {
				t.Errorf("TTL after SPOP: %q", got)
			}
			wantEnc := tc.enc
			if wantEnc == "" {
				wantEnc = "hashtable"
				if !slices.Contains(left, "x") {
					wantEnc = "intset"
				}
			}
			if EncNames[s.enc()] != wantEnc {
				t.Errorf("left %v encoded %s, want %s", left, EncNames[s.enc()], wantEnc)
			}
			// The log replays to the same set.
			r := stCtx(1)
			stDo(t, r, append([]string{"sadd", "s"}, tc.members...)...)
			for _, cmd := range logged {
				stDo(t, r, "srem", string(cmd[1]), string(cmd[2]))
			}
			if got := stMembers(stOf(t, r, "s")); !slices.Equal(got, left) {
				t.Errorf("replayed %v, want %v", got, left)
			}
		})
	}
}

func TestSetNotifications(t *testing.T) {
	c := stCtx(4)
	var got []string
	for _, s := range c.Shards {
		s.Cfg.NotifyFlags.Store(^uint32(NotifyNew | NotifyKeyMiss)) // what "AKE" selects
		s.OnNotify = func(db, class int, event string, key []byte) {
			got = append(got, event+" "+string(key))
		}
	}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"sadd s a b", []string{"sadd s"}},
		{"sadd s a", nil},
		{"srem s x", nil},
		{"srem s a", []string{"srem s"}},
		{"srem s b", []string{"srem s", "del s"}},
		{"sadd a{t} 1 2", []string{"sadd a{t}"}},
		{"smove a{t} b{t} 1", []string{"srem a{t}", "sadd b{t}"}},
		{"sadd b{t} 2", []string{"sadd b{t}"}},
		{"smove a{t} b{t} 2", []string{"srem a{t}", "del a{t}"}},
		{"spop b{t}", []string{"spop b{t}"}},
		{"spop b{t}", []string{"spop b{t}", "del b{t}"}},
		{"sadd p 1 2 3", []string{"sadd p"}},
		{"spop p 0", nil},
		{"spop p 1", []string{"spop p"}},
		{"spop p 5", []string{"spop p", "del p"}},
		{"sadd x{t} 1", []string{"sadd x{t}"}},
		{"sinterstore d{t} x{t}", []string{"sinterstore d{t}"}},
		{"sunionstore d{t} x{t}", []string{"sunionstore d{t}"}},
		{"sdiffstore d{t} x{t}", []string{"sdiffstore d{t}"}},
		{"sinterstore d{t} nokey{t}", []string{"del d{t}"}},
		{"sinterstore d{t} nokey{t}", nil},
		{"sunionstore d{t} nokey{t}", nil},
	} {
		got = nil
		stDo(t, c, strings.Fields(tc.cmd)...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: notified %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestSetStoreAcrossShards runs the multi-key commands with their keys on
// different shards of a 4-shard context, as the dispatcher runs them.
func TestSetStoreAcrossShards(t *testing.T) {
	c := stCtx(4)
	a, b, d := keyOnShard("a", 0, 4), keyOnShard("b", 1, 4), keyOnShard("d", 2, 4)
	e := keyOnShard("e", 3, 4)
	stDo(t, c, "sadd", a, "1", "2", "3", "x")
	stDo(t, c, "sadd", b, "2", "3", "4", "x")
	stDo(t, c, "set", d, "string")
	for _, tc := range []struct {
		cmd  []string
		want string
		dst  []string
	}{
		{[]string{"sinterstore", d, a, b}, num(3), []string{"2", "3", "x"}},
		{[]string{"sunionstore", d, a, b}, num(5), []string{"1", "2", "3", "4", "x"}},
		{[]string{"sdiffstore", d, a, b}, num(1), []string{"1"}},
		{[]string{"sdiffstore", d, b, a}, num(1), []string{"4"}},
		{[]string{"sinterstore", d, a, e}, zero, nil},
	} {
		if got := stDo(t, c, tc.cmd...); got != tc.want {
			t.Fatalf("%q: %q, want %q", tc.cmd, got, tc.want)
		}
		s := stOf(t, c, d)
		if tc.dst == nil {
			if s != nil {
				t.Fatalf("%q: destination kept", tc.cmd)
			}
			continue
		}
		if got := stMembers(s); !slices.Equal(got, tc.dst) {
			t.Fatalf("%q: stored %v, want %v", tc.cmd, got, tc.dst)
		}
	}
	if got := stDo(t, c, "sintercard", "2", a, b); got != num(3) {
		t.Errorf("sintercard across shards: %q", got)
	}
	// SMOVE between shards; the destination is created on its own shard.
	if got := stDo(t, c, "smove", a, e, "x"); got != one {
		t.Fatalf("smove: %q", got)
	}
	if got := stMembers(stOf(t, c, e)); !slices.Equal(got, []string{"x"}) || ShardOf([]byte(e), 4) != 3 {
		t.Fatalf("moved to %v", got)
	}
	if c.Shards[3].DBs[0].Peek([]byte(e)) < 0 {
		t.Fatal("destination is not on its shard")
	}
	if got := stMembers(stOf(t, c, a)); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("source left %v", got)
	}
}

func TestSetCopyIsIndependent(t *testing.T) {
	for _, first := range []string{"1", "a"} {
		c := stCtx(1)
		stDo(t, c, "sadd", "s", first, "2", "3")
		stDo(t, c, "srem", "s", "3") // a hole in the hashtable's arena
		stDo(t, c, "copy", "s", "t")
		stDo(t, c, "sadd", "s", "9")
		stDo(t, c, "srem", "s", "2")
		if got := stMembers(stOf(t, c, "t")); !slices.Equal(got, []string{"1", "2"}) && !slices.Equal(got, []string{"2", "a"}) {
			t.Errorf("copy changed with its source: %v", got)
		}
		if got, want := stDo(t, c, "object", "encoding", "t"), stDo(t, c, "object", "encoding", "s"); got != want {
			t.Errorf("copy encoded %q, source %q", got, want)
		}
	}
}

// TestSetDumpRecreatesTheSet checks the rewrite's commands: SADD of at most
// 64 members each, which replayed give the same members and encoding.
func TestSetDumpRecreatesTheSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		pre  string
	}{
		{"intset", 200, ""},
		{"hashtable", 150, "m"},
		{"large intset becomes hashtable", 600, ""},
		{"empty-ish", 1, "m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := stCtx(1)
			for i := 0; i < tc.n; i++ {
				stDo(t, c, "sadd", "s", tc.pre+strconv.Itoa(i-tc.n/2))
			}
			s := stOf(t, c, "s")
			cmds := s.Dump([]byte("s"))
			if want := (tc.n + 63) / 64; len(cmds) != want {
				t.Fatalf("%d commands, want %d", len(cmds), want)
			}
			r := stCtx(1)
			for _, cmd := range cmds {
				if len(cmd)-2 > 64 || string(cmd[0]) != "SADD" || string(cmd[1]) != "s" {
					t.Fatalf("command %q", cmd[:2])
				}
				args := make([]string, len(cmd))
				for i, a := range cmd {
					args[i] = string(a)
				}
				stDo(t, r, args...)
			}
			got := stOf(t, r, "s")
			if !slices.Equal(stMembers(got), stMembers(s)) || got.enc() != s.enc() {
				t.Fatalf("replayed %d members (%s), want %d (%s)", got.len(), EncNames[got.enc()], s.len(), EncNames[s.enc()])
			}
		})
	}
}

func TestSetRewriteSerializesBeforeChange(t *testing.T) {
	c := stCtx(1)
	sh := c.Shards[0]
	stDo(t, c, "sadd", "s", "a", "b")
	var image []string
	sh.StartRewrite(func(db int, argv [][]byte) {
		var w []string
		for _, a := range argv {
			w = append(w, string(a))
		}
		image = append(image, strings.Join(w, " "))
	})
	stDo(t, c, "sadd", "s", "a") // no change: not serialized yet
	if len(image) != 0 {
		t.Fatalf("serialized on a no-op: %q", image)
	}
	stDo(t, c, "sadd", "s", "c")
	sh.RewriteAll()
	if len(image) != 1 {
		t.Fatalf("image %q", image)
	}
	w := strings.Fields(image[0])
	sort.Strings(w[2:])
	if strings.Join(w, " ") != "SADD s a b" {
		t.Fatalf("image %q: not the state at the cut", image)
	}
}

// chiSquare is the statistic of counts against a uniform distribution.
func stChiSquare(counts map[string]int) float64 {
	total := 0
	for _, n := range counts {
		total += n
	}
	exp := float64(total) / float64(len(counts))
	x := 0.0
	for _, n := range counts {
		d := float64(n) - exp
		x += d * d / exp
	}
	return x
}

// TestSrandmemberIsUniform is the TCL suite's histogram check: with 10
// members (9 degrees of freedom) a statistic of 40 has probability 1e-5.
func TestSrandmemberIsUniform(t *testing.T) {
	for _, contents := range [][]string{
		{"1", "5", "10", "50", "125", "MARY", "PATRICIA", "LINDA", "BARBARA", "ELIZABETH"},
		{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
	} {
		c := stCtx(1)
		stDo(t, c, append([]string{"sadd", "s"}, contents...)...)
		for _, count := range []int{-1000, 8, 2} {
			hist := map[string]int{}
			calls := 1
			if count > 0 {
				calls = 1000 / count
			}
			for i := 0; i < calls; i++ {
				lines := strings.Split(stDo(t, c, "srandmember", "s", strconv.Itoa(count)), "\r\n")
				seen := map[string]bool{}
				for j := 2; j < len(lines); j += 2 {
					hist[lines[j]]++
					if count > 0 && seen[lines[j]] {
						t.Fatalf("count %d repeated %s", count, lines[j])
					}
					seen[lines[j]] = true
				}
			}
			if len(hist) != len(contents) {
				t.Fatalf("count %d: drew %d distinct members", count, len(hist))
			}
			if x := stChiSquare(hist); x >= 40 {
				t.Errorf("count %d: chi-square %.1f (%v)", count, x, hist)
			}
		}
	}
}

func TestSrandmemberDistinctPaths(t *testing.T) {
	c := stCtx(1)
	var all []string
	for i := 0; i < 50; i++ {
		all = append(all, "e"+strconv.Itoa(i))
	}
	stDo(t, c, append([]string{"sadd", "s"}, all...)...)
	for _, count := range []int{45, 5, 50, 100} {
		lines := strings.Split(stDo(t, c, "srandmember", "s", strconv.Itoa(count)), "\r\n")
		want := min(count, 50)
		if lines[0] != "*"+strconv.Itoa(want) {
			t.Fatalf("count %d: %q", count, lines[0])
		}
		seen := map[string]bool{}
		for j := 2; j < len(lines); j += 2 {
			if seen[lines[j]] || !slices.Contains(all, lines[j]) {
				t.Fatalf("count %d: bad or repeated %q", count, lines[j])
			}
			seen[lines[j]] = true
		}
	}
}

func TestSetMemTracksSize(t *testing.T) {
	c := stCtx(1)
	stDo(t, c, "sadd", "i", "1")
	stDo(t, c, "sadd", "h", "a")
	i0, h0 := stOf(t, c, "i").Mem(), stOf(t, c, "h").Mem()
	for k := 0; k < 1000; k++ {
		stDo(t, c, "sadd", "i", strconv.Itoa(k*100000))
		stDo(t, c, "sadd", "h", "member-"+strconv.Itoa(k))
	}
	i1, h1 := stOf(t, c, "i").Mem(), stOf(t, c, "h").Mem()
	if i1 < i0+1000*4 || h1 < h0+1000*(16+8) {
		t.Errorf("Mem did not grow: intset %d->%d, hashtable %d->%d", i0, i1, h0, h1)
	}
	for k := 0; k < 1000; k++ {
		stDo(t, c, "srem", "h", "member-"+strconv.Itoa(k))
	}
	if h2 := stOf(t, c, "h").Mem(); h2 > h1/4 {
		t.Errorf("Mem did not shrink: %d -> %d", h1, h2)
	}
}

// TestSetMemAccountingStaysExact runs random set commands and checks the
// shard's memory total against a recount: every change of a set's Mem
// happens after db.Modify (or on a new value), as accounting requires.
func TestSetMemAccountingStaysExact(t *testing.T) {
	c := stCtx(1)
	s := c.Shards[0]
	r := rand.New(rand.NewPCG(1, 2))
	key := func() string { return "k" + strconv.Itoa(r.IntN(4)) }
	mem := func() string {
		if r.IntN(3) == 0 {
			return strconv.Itoa(r.IntN(3000))
		}
		return "m" + strconv.Itoa(r.IntN(3000))
	}
	for i := 0; i < 20000; i++ {
		switch r.IntN(12) {
		case 0, 1, 2:
			stDo(t, c, "sadd", key(), mem(), mem(), mem())
		case 3, 4:
			stDo(t, c, "srem", key(), mem(), mem())
		case 5:
			stDo(t, c, "smove", key(), key(), mem())
		case 6:
			stDo(t, c, "spop", key(), strconv.Itoa(r.IntN(50)))
		case 7:
			stDo(t, c, "spop", key())
		case 8:
			stDo(t, c, "sinterstore", key(), key(), key())
		case 9:
			stDo(t, c, "sunionstore", key(), key(), key())
		case 10: // reads must not change Mem (a rehash step could)
			stDo(t, c, "sismember", key(), mem())
			stDo(t, c, "sinter", key(), key())
			stDo(t, c, "smismember", key(), mem(), mem())
		case 11:
			stDo(t, c, "sdiffstore", key(), key(), key())
		}
		s.settleMem()
		if i%100 == 0 {
			got := s.objMem
			s.recountMem()
			if got != s.objMem {
				t.Fatalf("step %d: accounted %d bytes, recount %d", i, got, s.objMem)
			}
		}
	}
}

func TestSetReadsDoNotAllocate(t *testing.T) {
	c := stCtx(1)
	stDo(t, c, "sadd", "i", "1", "2", "3")
	stDo(t, c, "sadd", "h", "a", "b", "c")
	for _, args := range [][]string{
		{"sismember", "i", "2"}, {"sismember", "h", "b"}, {"sadd", "h", "a"}, {"sadd", "i", "3"},
		{"scard", "h"}, {"smembers", "h"}, {"smembers", "i"}, {"smismember", "h", "a", "z"},
	} {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		run := stCmdTable[args[0]].Run
		c.Out = make([]byte, 0, 1024)
		if n := testing.AllocsPerRun(100, func() {
			c.Out = c.Out[:0]
			c.Prop.Reset()
			run(c, argv)
		}); n != 0 {
			t.Errorf("%v: %.1f allocations per run", args, n)
		}
	}
}

func TestSetCommandTableNamesEveryCommand(t *testing.T) {
	want := []string{"sadd", "srem", "smove", "sismember", "smismember", "scard", "spop", "srandmember",
		"sinter", "sintercard", "sinterstore", "sunion", "sunionstore", "sdiff", "sdiffstore", "smembers", "sscan"}
	var got []string
	for _, c := range setCommands {
		got = append(got, c.Name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("set commands %v, want %v", got, want)
	}
	found := false
	for _, c := range Commands {
		found = found || c.Name == "sadd"
	}
	if !found {
		t.Error("setCommands not in Commands")
	}
}
