package shard

import (
	"math/bits"
	"strconv"
	"strings"
	"testing"
)

// SORT tests: scripts with the exact replies of Redis 7.0.15 (replayable
// against a real server: REDSHARD_REDIS_ADDR=127.0.0.1:7901 go test -run
// TestSortScriptsMatchRealRedis ./shard/), then cross-shard patterns and
// their routing, STORE, notifications and propagation.

// sortDo runs one command of the full table (every type is real here) and
// returns its reply; "hello 2|3" switches the protocol.
func sortDo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	if len(args) == 1 {
		args = strings.Fields(args[0])
	}
	c.Out = c.Out[:0]
	c.Prop.Reset()
	name := strings.ToLower(args[0])
	switch name {
	case "hello":
		c.Proto, _ = strconv.Atoi(args[1])
		return ""
	case "object":
		name += "|" + strings.ToLower(args[1])
	}
	cmd, ok := allCmdTable[name]
	if !ok {
		t.Fatalf("no command %q", name)
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	cmd.Run(c, argv)
	return string(c.Out)
}

func sortBulks(items ...string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(items)) + "\r\n")
	for _, it := range items {
		if it == "<nil>" {
			b.WriteString(null2)
			continue
		}
		b.WriteString(bulk(it))
	}
	return b.String()
}

const sortDoubleErr = "-ERR One or more scores can't be converted into double\r\n"

var sortScripts = []script{
	{"NumericAscDescAndAlpha", []step{
		{cmd: "RPUSH l 3 10 2 1", want: num(4)},
		{cmd: "SORT l", want: sortBulks("1", "2", "3", "10")},
		{cmd: "SORT l DESC", want: sortBulks("10", "3", "2", "1")},
		{cmd: "SORT l ALPHA", want: sortBulks("1", "10", "2", "3")},
		{cmd: "SORT l ALPHA DESC ASC", want: sortBulks("1", "10", "2", "3")},
		{cmd: "SORT_RO l DESC ALPHA", want: sortBulks("3", "2", "10", "1")},
	}},
	{"LimitClampsLikeRedis", []step{
		{cmd: "RPUSH l 5 4 3 2 1", want: num(5)},
		{cmd: "SORT l LIMIT 1 2", want: sortBulks("2", "3")},
		{cmd: "SORT l LIMIT -10 2", want: sortBulks("1", "2")},
		{cmd: "SORT l LIMIT 3 -1", want: sortBulks("4", "5")},
		{cmd: "SORT l LIMIT 5 1", want: sortBulks()},
		{cmd: "SORT l LIMIT 2 0", want: sortBulks()},
		{cmd: "SORT l LIMIT 2 9223372036854775807", want: sortBulks("3", "4", "5")},
		{cmd: "SORT l LIMIT 1 2 DESC", want: sortBulks("4", "3")},
		{cmd: "SORT l LIMIT x 2", want: notInt},
		{cmd: "SORT l LIMIT 1 9223372036854775808", want: notInt},
		{cmd: "SORT l LIMIT 1", want: syntax},
	}},
	{"SyntaxAndTypes", []step{
		{cmd: "SET s v", want: ok},
		{cmd: "SORT s", want: wrong},
		{cmd: "HSET h f v", want: one},
		{cmd: "SORT h", want: wrong},
		{cmd: "SORT s FOO", want: syntax},
		{cmd: "SORT missing", want: sortBulks()},
		{cmd: "SORT missing BY x GET # LIMIT 0 1", want: sortBulks()},
		{cmd: "SORT l BY", want: syntax},
		{cmd: "SORT l GET", want: syntax},
		{cmd: "SORT l STORE", want: syntax},
		{cmd: "SORT_RO l STORE d", want: syntax},
	}},
	{"ScoresReadAsStrtod", []step{
		{cmd: "RPUSH l 3 2.5 -inf 0x10 1e2", want: num(5)},
		{cmd: "SORT l", want: sortBulks("-inf", "2.5", "3", "0x10", "1e2")},
		{argv: []string{"RPUSH", "w", " 1", "", "0"}, want: num(3)},
		{cmd: "SORT w", want: sortBulks("", "0", " 1")},
		{cmd: "RPUSH bad 1 x", want: num(2)},
		{cmd: "SORT bad", want: sortDoubleErr},
		{cmd: "SORT bad ALPHA", want: sortBulks("1", "x")},
		{cmd: "SORT bad BY nosort", want: sortBulks("1", "x")},
		{cmd: "RPUSH big 1e400", want: one},
		{cmd: "SORT big", want: sortDoubleErr},
		{cmd: "RPUSH nan nan", want: one},
		{cmd: "SORT nan", want: sortDoubleErr},
		{argv: []string{"RPUSH", "trail", "1 "}, want: one},
		{cmd: "SORT trail", want: sortDoubleErr},
		{cmd: "SORT bad STORE dst", want: sortDoubleErr},
		{cmd: "EXISTS dst", want: zero},
	}},
	{"ByPatternAndHashField", []step{
		{cmd: "RPUSH l a b c d", want: num(4)},
		{cmd: "MSET w_a 3 w_b 1 w_c 2", want: ok},
		// d has no weight: it scores 0, first.
		{cmd: "SORT l BY w_*", want: sortBulks("d", "b", "c", "a")},
		{cmd: "SORT l BY w_* DESC", want: sortBulks("a", "c", "b", "d")},
		{cmd: "SORT l BY w_* LIMIT 1 2", want: sortBulks("b", "c")},
		{cmd: "HSET o_a f 30", want: one},
		{cmd: "HSET o_b f 10", want: one},
		{cmd: "HSET o_c g 1", want: one},
		{cmd: "SET o_d 5", want: ok},
		// c's hash has no f and d is no hash: both score 0, ties by element.
		{cmd: "SORT l BY o_*->f", want: sortBulks("c", "d", "b", "a")},
		{cmd: "SORT l BY o_*->f GET # GET o_*->f GET w_*", want: sortBulks(
			"c", "<nil>", "2", "d", "<nil>", "<nil>", "b", "10", "1", "a", "30", "3")},
		// ALPHA by pattern: a missing value sorts first.
		{cmd: "MSET x_a b x_b a", want: ok},
		{cmd: "SORT l BY x_* ALPHA", want: sortBulks("c", "d", "b", "a")},
		// Ties keep the value's order (a stable sort, as glibc's qsort is).
		{cmd: "SORT l BY x_* ALPHA DESC", want: sortBulks("a", "b", "c", "d")},
		{cmd: "MSET x_c z", want: ok},
		{cmd: "SORT l BY x_* ALPHA LIMIT 0 2", want: sortBulks("d", "b")},
		// A bad weight is an error, found or not by the output range.
		{cmd: "SET w_d oops", want: ok},
		{cmd: "SORT l BY w_* LIMIT 0 1", want: sortDoubleErr},
	}},
	{"GetPatterns", []step{
		{cmd: "RPUSH l 2 1", want: num(2)},
		{cmd: "SET v_1 one", want: ok},
		{cmd: "SORT l GET #", want: sortBulks("1", "2")},
		{cmd: "SORT l GET v_*", want: sortBulks("one", "<nil>")},
		{cmd: "SORT l GET const", want: sortBulks("<nil>", "<nil>")},
		{cmd: "SORT l GET # GET v_* DESC", want: sortBulks("2", "<nil>", "1", "one")},
		{cmd: "SORT l BY nosort GET # LIMIT 0 1", want: sortBulks("2")},
		// "->" with nothing after it is part of the key name.
		{cmd: "SET x:1-> 100", want: ok},
		{cmd: "SORT l BY nosort GET x:*->", want: sortBulks("<nil>", "100")},
		// Only the first '*' is replaced.
		{cmd: "SET y_1_* star", want: ok},
		{cmd: "SORT l GET y_*_*", want: sortBulks("star", "<nil>")},
		// A list key is not a string: nothing.
		{cmd: "RPUSH v_2 x", want: one},
		{cmd: "SORT l GET v_*", want: sortBulks("one", "<nil>")},
	}},
	{"NosortKeepsNativeOrder", []step{
		{cmd: "LPUSH l 2 1 4 3 5", want: num(5)},
		{cmd: "SORT l BY nosort", want: sortBulks("5", "3", "4", "1", "2")},
		{cmd: "SORT l BY nosort DESC", want: sortBulks("2", "1", "4", "3", "5")},
		{cmd: "SORT l BY nosort LIMIT 1 3", want: sortBulks("3", "4", "1")},
		{cmd: "SORT l BY nosort LIMIT 1 3 DESC", want: sortBulks("1", "4", "3")},
		{cmd: "SORT l BY nosort LIMIT 5 3", want: sortBulks()},
		{cmd: "ZADD z 1 a 5 b 2 c 10 d 3 e", want: num(5)},
		{cmd: "SORT z BY nosort", want: sortBulks("a", "c", "e", "b", "d")},
		{cmd: "SORT z BY nosort DESC", want: sortBulks("d", "b", "e", "c", "a")},
		{cmd: "SORT z BY nosort ASC LIMIT 0 2", want: sortBulks("a", "c")},
		{cmd: "SORT z BY nosort DESC LIMIT 0 2", want: sortBulks("d", "b")},
		{cmd: "SORT z BY nosort DESC LIMIT 1 2", want: sortBulks("b", "e")},
		{cmd: "SORT z BY nosort LIMIT 5 10", want: sortBulks()},
		{cmd: "SORT z BY nosort LIMIT -10 100", want: sortBulks("a", "c", "e", "b", "d")},
		{cmd: "SORT z ALPHA DESC", want: sortBulks("e", "d", "c", "b", "a")},
		// A later BY with '*' does not undo "don't sort".
		{cmd: "SORT z BY nosort BY w_* DESC", want: sortBulks("d", "b", "e", "c", "a")},
		// Sorting a sorted set turns it into a skiplist (Redis 7.0 does).
		{cmd: "OBJECT ENCODING z", want: bulk("skiplist")},
	}},
	{"SetsSortAndStoreDeterministically", []step{
		{cmd: "SADD s 3 1 2", want: num(3)},
		{cmd: "SORT s", want: sortBulks("1", "2", "3")},
		{cmd: "SORT s DESC LIMIT 0 2", want: sortBulks("3", "2")},
		{cmd: "SADD t b a c", want: num(3)},
		{cmd: "SORT t", want: sortDoubleErr},
		{cmd: "SORT t ALPHA", want: sortBulks("a", "b", "c")},
		{cmd: "MSET score:a 10 score:b 10 score:c 5", want: ok},
		{cmd: "SORT t BY score:*", want: sortBulks("c", "a", "b")},
		{cmd: "SORT t BY score:* DESC", want: sortBulks("b", "a", "c")},
		// BY <constant> with STORE still sorts (ALPHA) a set.
		{cmd: "SORT t BY _ DESC STORE d", want: num(3)},
		{cmd: "LRANGE d 0 -1", want: sortBulks("c", "b", "a")},
	}},
	{"StoreWritesAListOrDeletes", []step{
		{cmd: "RPUSH l 3 1 2", want: num(3)},
		{cmd: "SET d x", want: ok},
		{cmd: "EXPIRE d 100", want: one},
		{cmd: "SORT l STORE d", want: num(3)},
		{cmd: "TYPE d", want: "+list\r\n"},
		{cmd: "TTL d", want: num(-1)},
		{cmd: "OBJECT ENCODING d", want: bulk("quicklist")},
		{cmd: "LRANGE d 0 -1", want: sortBulks("1", "2", "3")},
		{cmd: "SET v_1 one", want: ok},
		{cmd: "SORT l GET # GET v_* STORE d", want: num(6)},
		{cmd: "LRANGE d 0 -1", want: sortBulks("1", "one", "2", "", "3", "")},
		{cmd: "SORT l LIMIT 10 10 STORE d", want: zero},
		{cmd: "EXISTS d", want: zero},
		{cmd: "SORT nokey STORE d", want: zero},
		{cmd: "SORT l STORE x STORE d", want: num(3)},
		{cmd: "EXISTS x", want: zero},
		// Sorting a key into itself.
		{cmd: "SORT l DESC STORE l", want: num(3)},
		{cmd: "LRANGE l 0 -1", want: sortBulks("3", "2", "1")},
	}},
}

func TestSortScripts(t *testing.T) {
	for _, sc := range sortScripts {
		t.Run(sc.name, func(t *testing.T) {
			for _, n := range []int{1, 4} {
				c := newStringCtx(n)
				for i, st := range sc.steps {
					if got := sortDo(t, c, st.args()...); st.want != "" && got != st.want {
						t.Errorf("%d shards, step %d %q: got %q, want %q", n, i, st.args(), got, st.want)
					}
				}
			}
		})
	}
}

// TestSortScriptsMatchRealRedis replays the scripts against a real Redis
// when REDSHARD_REDIS_ADDR names one (it is flushed).
func TestSortScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range sortScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("HELLO", "2")
			send("FLUSHALL")
			for i, st := range sc.steps {
				if got := send(st.args()...); st.want != "" && got != st.want {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

func TestSortResp3NullsForMissingGets(t *testing.T) {
	c := newStringCtx(1)
	sortDo(t, c, "RPUSH l 1 2")
	sortDo(t, c, "SET v_2 two")
	sortDo(t, c, "HELLO 3")
	if got, want := sortDo(t, c, "SORT l GET v_* GET #"), "*4\r\n_\r\n$1\r\n1\r\n$3\r\ntwo\r\n$1\r\n2\r\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestSortPatternsReadOtherShards sorts a list on one shard by weights and
// hash fields on the others, and checks that the routing hooks name those
// shards (and only the tag's shard for a tagged pattern).
func TestSortPatternsReadOtherShards(t *testing.T) {
	const n = 4
	c := newStringCtx(n)
	list := keyOnShard("list", 0, n)
	var elems []string
	seen := map[int]bool{}
	for i := 0; len(seen) < n || len(elems) < 12; i++ {
		e := strconv.Itoa(i)
		elems = append(elems, e)
		seen[ShardOf([]byte("w_"+e), n)] = true
	}
	sortDo(t, c, append([]string{"RPUSH", list}, elems...)...)
	want := make([]string, len(elems))
	for i, e := range elems {
		// weights in reverse order of the elements
		sortDo(t, c, "SET", "w_"+e, strconv.Itoa(len(elems)-i))
		sortDo(t, c, "HSET", "h_"+e, "f", strconv.Itoa(len(elems)-i))
		want[len(elems)-1-i] = e
	}
	if got := sortDo(t, c, "SORT", list, "BY", "w_*"); got != sortBulks(want...) {
		t.Errorf("BY w_*: got %q, want %q", got, sortBulks(want...))
	}
	if got := sortDo(t, c, "SORT", list, "BY", "h_*->f"); got != sortBulks(want...) {
		t.Errorf("BY h_*->f: got %q", got)
	}
	dst := keyOnShard("dst", 3, n)
	if got := sortDo(t, c, "SORT", list, "BY", "w_*", "GET", "w_*", "STORE", dst); got != num(int64(len(elems))) {
		t.Fatalf("STORE: got %q", got)
	}
	if got := sortDo(t, c, "LINDEX", dst, "0"); got != bulk("1") {
		t.Errorf("stored first weight %q, want 1", got)
	}

	all := uint64(1<<n - 1)
	tag := uint64(1) << uint(ShardOf([]byte("{u}"), n))
	for _, tc := range []struct {
		cmd   string
		extra uint64
		keys  []int
	}{
		{"SORT l", 0, []int{1}},
		{"SORT l DESC LIMIT 0 10 ALPHA", 0, []int{1}},
		{"SORT l BY nosort GET #", 0, []int{1}},
		{"SORT l GET const", 0, []int{1}},
		{"SORT l BY w_*", all, []int{1}},
		{"SORT l BY nosort GET w_*", all, []int{1}},
		{"SORT l GET # GET h_*->f", all, []int{1}},
		{"SORT l BY {u}w_* GET {u}h_*->f", tag, []int{1}},
		{"SORT l BY {}w_*", all, []int{1}},
		{"SORT l BY w{u}_*", tag, []int{1}},
		{"SORT l BY w{_*}", all, []int{1}},
		{"SORT l BY w_* STORE d", all, []int{1, 5}},
		{"SORT l STORE x STORE d", 0, []int{1, 5}},
		// SORT's grammar, not sortGetKeys': STORE takes "by" as its key.
		{"SORT l STORE by STORE d", 0, []int{1, 5}},
		{"SORT l BY w_* FOO", 0, []int{1}}, // a syntax error reads nothing
	} {
		argv := bytesArgs(strings.Fields(tc.cmd))
		if got := sortExtraShards(argv, n); got != tc.extra {
			t.Errorf("%s: extra shards %04b, want %04b", tc.cmd, got, tc.extra)
		}
		if got := sortKeys(argv, nil); !equalInts(got, tc.keys) {
			t.Errorf("%s: keys %v, want %v", tc.cmd, got, tc.keys)
		}
		if got := sortExtraShards(argv, 1); got != 0 {
			t.Errorf("%s: one shard, extra %b", tc.cmd, got)
		}
	}
	if got := sortROExtraShards(bytesArgs([]string{"SORT_RO", "l", "GET", "x_*"}), n); bits.OnesCount64(got) != n {
		t.Errorf("SORT_RO GET x_*: extra %b", got)
	}
	if got := sortROKeys(bytesArgs([]string{"SORT_RO", "l", "STORE", "d"}), nil); !equalInts(got, []int{1}) {
		t.Errorf("SORT_RO keys %v", got)
	}
}

func bytesArgs(args []string) [][]byte {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return argv
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSortStoreNotifiesAndPropagates(t *testing.T) {
	for _, tc := range []struct {
		setup []string
		cmd   string
		event string
		prop  string
	}{
		{[]string{"RPUSH {t}l 2 1"}, "SORT {t}l STORE {t}d", "sortstore:{t}d", "AS-IS 2"},
		{[]string{"RPUSH {t}l 2 1"}, "SORT {t}l GET # GET # STORE {t}d", "sortstore:{t}d", "AS-IS 4"},
		{[]string{"RPUSH {t}d x"}, "SORT {t}l STORE {t}d", "del:{t}d", "AS-IS 1"},
		{nil, "SORT {t}l STORE {t}d", "", ""},
		{[]string{"RPUSH {t}l 2 1"}, "SORT {t}l", "", ""},
		{[]string{"RPUSH {t}l 2 1"}, "SORT_RO {t}l", "", ""},
	} {
		c := newStringCtx(2)
		var got []string
		for _, s := range c.Shards {
			s.Cfg.NotifyFlags.Store(^uint32(NotifyNew | NotifyKeyMiss)) // what "AKE" selects
		}
		for _, st := range tc.setup {
			sortDo(t, c, st)
		}
		for _, s := range c.Shards {
			s.OnNotify = func(db int, class int, event string, key []byte) {
				got = append(got, event+":"+string(key))
			}
		}
		sortDo(t, c, tc.cmd)
		if g := strings.Join(got, " "); g != tc.event {
			t.Errorf("%s: events %q, want %q", tc.cmd, g, tc.event)
		}
		if g := propString(&c.Prop); g != tc.prop {
			t.Errorf("%s: propagated %q, want %q", tc.cmd, g, tc.prop)
		}
	}
}

// TestSortCountsPatternLookups: every pattern lookup is a read (a
// keyspace hit or miss), as Redis's lookupKeyRead counts it.
func TestSortCountsPatternLookups(t *testing.T) {
	c := newStringCtx(1)
	sortDo(t, c, "RPUSH l 1 2 3")
	sortDo(t, c, "SET w_1 1")
	st := &c.Shards[0].Stats
	h0, m0 := st.KeyspaceHits, st.KeyspaceMisses
	sortDo(t, c, "SORT l BY w_*")
	if h, m := st.KeyspaceHits-h0, st.KeyspaceMisses-m0; h != 2 || m != 2 {
		t.Errorf("hits %d misses %d, want 2 and 2 (the list and w_1; w_2, w_3)", h, m)
	}
}

func TestSortLargeValuesMatchAModel(t *testing.T) {
	c := newStringCtx(2)
	// A big set (hashtable), a big sorted set and a big list, sorted by
	// weights: the result is the elements in weight order.
	const n = 3000
	var want []string
	for i := 0; i < n; i++ {
		e := "e" + strconv.Itoa(i)
		sortDo(t, c, "SADD", "s", e)
		sortDo(t, c, "ZADD", "z", strconv.Itoa(n-i), e)
		sortDo(t, c, "RPUSH", "l", e)
		sortDo(t, c, "SET", "w_"+e, strconv.Itoa((i*7919)%n))
	}
	want = make([]string, n)
	for i := 0; i < n; i++ {
		want[(i*7919)%n] = "e" + strconv.Itoa(i)
	}
	for _, k := range []string{"s", "z", "l"} {
		if got := sortDo(t, c, "SORT", k, "BY", "w_*"); got != sortBulks(want...) {
			t.Errorf("SORT %s BY w_*: wrong order", k)
		}
		if got := sortDo(t, c, "SORT", k, "BY", "w_*", "LIMIT", "100", "3", "DESC"); got != sortBulks(want[n-101], want[n-102], want[n-103]) {
			t.Errorf("SORT %s BY w_* LIMIT DESC: got %q", k, got)
		}
	}
	if got := sortDo(t, c, "SORT", "z", "BY", "nosort", "LIMIT", "0", "2"); got != sortBulks("e2999", "e2998") {
		t.Errorf("zset nosort: got %q", got)
	}
	if got := sortDo(t, c, "SORT", "s", "ALPHA", "LIMIT", "0", "3"); got != sortBulks("e0", "e1", "e10") {
		t.Errorf("set alpha: got %q", got)
	}
}

// TestSortRandomArgumentsNeverPanic runs random SORT argument lists over
// every kind of value (empty, small, big, each type) and checks that each
// gets one well-formed reply.
func TestSortRandomArgumentsNeverPanic(t *testing.T) {
	c := newStringCtx(2)
	sortDo(t, c, "RPUSH l 3 1 2")
	sortDo(t, c, "ZADD z 1 a 2 b 3 c")
	sortDo(t, c, "SADD s 5 4 x")
	sortDo(t, c, "SADD i 5 4 6")
	sortDo(t, c, "SET w_1 2")
	sortDo(t, c, "HSET h_a f 1")
	words := []string{"BY", "nosort", "w_*", "h_*->f", "#", "*", "->", "LIMIT", "0", "-1", "2",
		"9223372036854775807", "-9223372036854775808", "GET", "ASC", "DESC", "ALPHA", "STORE", "d", "l"}
	keys := []string{"l", "z", "s", "i", "none", "w_1"}
	r := uint64(1)
	next := func(n int) int {
		r = r*6364136223846793005 + 1442695040888963407
		return int(r>>33) % n
	}
	for i := 0; i < 5000; i++ {
		args := []string{"SORT", keys[next(len(keys))]}
		if next(2) == 0 {
			args[0] = "SORT_RO"
		}
		for n := next(7); n > 0; n-- {
			args = append(args, words[next(len(words))])
		}
		got := sortDo(t, c, args...)
		if got == "" || !strings.HasSuffix(got, "\r\n") || !strings.ContainsAny(got[:1], "*:-") {
			t.Fatalf("%q: reply %q", args, got)
		}
		if args[1] == "l" && strings.Contains(strings.Join(args, " "), "STORE l") {
			sortDo(t, c, "DEL l")
			sortDo(t, c, "RPUSH l 3 1 2")
		}
	}
}
