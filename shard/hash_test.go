package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The hash tests call the handlers directly and compare exact RESP bytes,
// spelled out as Redis 7.0.15 replies. The scripts can be replayed against
// a real server:
//	REDSHARD_REDIS_ADDR=127.0.0.1:7797 go test -run TestHashScriptsMatchRealRedis ./shard/

var hashCmdTable = func() map[string]func(*Ctx, [][]byte) {
	m := map[string]func(*Ctx, [][]byte){}
	for _, cmd := range Commands {
		m[cmd.Name] = cmd.Run
	}
	return m
}()

// hDo runs one command and returns its reply, leaving the propagation record
// in c.Prop. "hello N" switches the protocol; "config set
// hash-max-listpack-entries|value N" sets every shard's tunable, and
// "object encoding key" answers from the keyspace.
func hDo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	c.Out = c.Out[:0]
	c.Prop.Reset()
	name := strings.ToLower(args[0])
	switch {
	case name == "hello":
		c.Proto, _ = strconv.Atoi(args[1])
		return ""
	case name == "config" && strings.EqualFold(args[1], "set"):
		v, _ := strconv.ParseInt(args[3], 10, 64)
		for _, s := range c.Shards {
			switch args[2] {
			case "hash-max-listpack-entries", "hash-max-ziplist-entries":
				s.Cfg.HashMaxListpackEntries.Store(v)
			case "hash-max-listpack-value", "hash-max-ziplist-value":
				s.Cfg.HashMaxListpackValue.Store(v)
			default:
				t.Fatalf("config %s", args[2])
			}
		}
		return ok
	case name == "object" || name == "memory":
		name += "|" + strings.ToLower(args[1])
	}
	run := hashCmdTable[name]
	if run == nil {
		t.Fatalf("no command %q", name)
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	run(c, argv)
	return string(c.Out)
}

func runHashScript(t *testing.T, c *Ctx, sc script) {
	t.Helper()
	for i, st := range sc.steps {
		if got := hDo(t, c, st.args()...); st.want != "" && got != st.want {
			t.Errorf("step %d %q: got %q, want %q", i, st.args(), got, st.want)
		}
	}
}

// bulkArr renders a RESP2 array of bulk strings.
func bulkArr(items ...string) string {
	s := "*" + strconv.Itoa(len(items)) + "\r\n"
	for _, it := range items {
		s += bulk(it)
	}
	return s
}

// resp3Map renders a RESP3 map of bulk strings (pairs).
func resp3Map(items ...string) string {
	s := "%" + strconv.Itoa(len(items)/2) + "\r\n"
	for _, it := range items {
		s += bulk(it)
	}
	return s
}

var hashScripts = []script{
	{"hset-hget-basics", []step{
		{cmd: "HSET h a 1 b 2", want: num(2)},
		{cmd: "HSET h a 10 c 3", want: num(1)},
		{cmd: "HGET h a", want: bulk("10")},
		{cmd: "HGET h zz", want: null2},
		{cmd: "HGET nokey a", want: null2},
		{cmd: "HLEN h", want: num(3)},
		{cmd: "HLEN nokey", want: zero},
		{cmd: "HMGET h a zz c", want: "*3\r\n" + bulk("10") + null2 + bulk("3")},
		{cmd: "HMGET nokey a b", want: "*2\r\n" + null2 + null2},
		{cmd: "HKEYS h", want: bulkArr("a", "b", "c")},
		{cmd: "HVALS h", want: bulkArr("10", "2", "3")},
		{cmd: "HGETALL h", want: bulkArr("a", "10", "b", "2", "c", "3")},
		{cmd: "HKEYS nokey", want: "*0\r\n"},
		{cmd: "HGETALL nokey", want: "*0\r\n"},
		{cmd: "HEXISTS h a", want: one},
		{cmd: "HEXISTS h zz", want: zero},
		{cmd: "HEXISTS nokey a", want: zero},
		{cmd: "HSTRLEN h a", want: num(2)},
		{cmd: "HSTRLEN h zz", want: zero},
		{cmd: "HSTRLEN nokey a", want: zero},
		{cmd: "OBJECT ENCODING h", want: bulk("listpack")},
	}},
	{"hset-arity-and-hmset", []step{
		{cmd: "HSET h a 1 b", want: errReply("ERR wrong number of arguments for 'hset' command")},
		{cmd: "HMSET h a 1 b", want: errReply("ERR wrong number of arguments for 'hmset' command")},
		{cmd: "EXISTS h", want: zero},
		{cmd: "HMSET h a 1 b 2", want: ok},
		{cmd: "HGETALL h", want: bulkArr("a", "1", "b", "2")},
	}},
	{"hsetnx", []step{
		{cmd: "HSETNX h a 1", want: one},
		{cmd: "HSETNX h a 2", want: zero},
		{cmd: "HGET h a", want: bulk("1")},
		{cmd: "SET s x", want: ok},
		{cmd: "HSETNX s a 1", want: wrong},
	}},
	{"hdel-removes-key-when-empty", []step{
		{cmd: "HDEL nokey a", want: zero},
		{cmd: "HSET h a 1 b 2 c 3", want: num(3)},
		{cmd: "HDEL h a a zz", want: one},
		{cmd: "HDEL h b c d", want: num(2)},
		{cmd: "EXISTS h", want: zero},
		{cmd: "TYPE h", want: "+none\r\n"},
	}},
	{"wrongtype", []step{
		{cmd: "SET s x", want: ok},
		{cmd: "HSET s a 1", want: wrong},
		{cmd: "HGET s a", want: wrong},
		{cmd: "HMGET s a", want: wrong},
		{cmd: "HDEL s a", want: wrong},
		{cmd: "HLEN s", want: wrong},
		{cmd: "HSTRLEN s a", want: wrong},
		{cmd: "HKEYS s", want: wrong},
		{cmd: "HVALS s", want: wrong},
		{cmd: "HGETALL s", want: wrong},
		{cmd: "HEXISTS s a", want: wrong},
		{cmd: "HINCRBY s a 1", want: wrong},
		{cmd: "HINCRBYFLOAT s a 1", want: wrong},
		{cmd: "HRANDFIELD s", want: wrong},
		{cmd: "HRANDFIELD s 2", want: wrong},
		{cmd: "HSCAN s 0", want: wrong},
		{cmd: "HSCAN s x", want: errReply("ERR invalid cursor")},
		{cmd: "HSCAN s 0 COUNT 0", want: wrong},
		{cmd: "TYPE s", want: "+string\r\n"},
	}},
	{"hincrby", []step{
		{cmd: "HINCRBY h n 5", want: num(5)},
		{cmd: "HINCRBY h n -7", want: num(-2)},
		{cmd: "HINCRBY h n x", want: notInt},
		{argv: []string{"HSET", "h", "s", "abc", "big", "9223372036854775807", "sp", " 1"}, want: num(3)},
		{cmd: "HINCRBY h s 1", want: errReply("ERR hash value is not an integer")},
		{cmd: "HINCRBY h sp 1", want: errReply("ERR hash value is not an integer")},
		{cmd: "HINCRBY h big 1", want: overflw},
		{cmd: "HINCRBY h big -1", want: num(9223372036854775806)},
		{cmd: "HINCRBY h n -9223372036854775806", want: ":-9223372036854775808\r\n"},
		{cmd: "HINCRBY h n -1", want: overflw},
		{cmd: "HGET h big", want: bulk("9223372036854775806")},
	}},
	{"hincrbyfloat", []step{
		{cmd: "HINCRBYFLOAT h f 10.5", want: bulk("10.5")},
		{cmd: "HINCRBYFLOAT h f 0.1", want: bulk("10.6")},
		{cmd: "HINCRBYFLOAT h f 1.23e2", want: bulk("133.60000000000000001")},
		{cmd: "HINCRBYFLOAT h f abc", want: notFlt},
		{cmd: "HINCRBYFLOAT h f +inf", want: errReply("ERR value is NaN or Infinity")},
		{cmd: "HINCRBYFLOAT nokey f inf", want: errReply("ERR value is NaN or Infinity")},
		{cmd: "EXISTS nokey", want: zero},
		{cmd: "HSET h s abc", want: one},
		{cmd: "HINCRBYFLOAT h s 1", want: errReply("ERR hash value is not a float")},
		{argv: []string{"HSET", "h", "z", "1\x002"}, want: one},
		{cmd: "HINCRBYFLOAT h z 1", want: errReply("ERR hash value is not a float")},
		{cmd: "HSET h i 5", want: one},
		{cmd: "HINCRBYFLOAT h i 1.5", want: bulk("6.5")},
		{cmd: "HINCRBYFLOAT h m 1.23", want: bulk("1.23")},
		{cmd: "HINCRBYFLOAT h m 0.77", want: bulk("2")},
		{cmd: "HINCRBYFLOAT h m -0.1", want: bulk("1.9")},
	}},
	{"hrandfield-replies", []step{
		{cmd: "HRANDFIELD nokey", want: null2},
		{cmd: "HRANDFIELD nokey 5", want: "*0\r\n"},
		{cmd: "HRANDFIELD nokey -5 WITHVALUES", want: "*0\r\n"},
		{cmd: "HSET h a 1 b 2 c 3", want: num(3)},
		{cmd: "HRANDFIELD h 0", want: "*0\r\n"},
		{cmd: "HRANDFIELD h 3", want: bulkArr("a", "b", "c")},
		{cmd: "HRANDFIELD h 10 WITHVALUES", want: bulkArr("a", "1", "b", "2", "c", "3")},
		{cmd: "HRANDFIELD h x", want: notInt},
		{cmd: "HRANDFIELD h 1 WITHVALUE", want: syntax},
		{cmd: "HRANDFIELD h 1 WITHVALUES x", want: syntax},
		{cmd: "HRANDFIELD h -9223372036854770000 WITHVALUES", want: errReply("ERR value is out of range")},
		{cmd: "HRANDFIELD h -9223372036854775808 WITHVALUES",
			want: errReply("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")},
		{cmd: "HRANDFIELD h -9223372036854775808",
			want: errReply("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")},
		{cmd: "HSET one a 1", want: one},
		{cmd: "HRANDFIELD one", want: bulk("a")},
		{cmd: "HRANDFIELD one -3", want: bulkArr("a", "a", "a")},
		{cmd: "HRANDFIELD one -2 WITHVALUES", want: bulkArr("a", "1", "a", "1")},
		{cmd: "HRANDFIELD one 1 WITHVALUES", want: bulkArr("a", "1")},
		{cmd: "HELLO 3"},
		{cmd: "HRANDFIELD one -2 WITHVALUES", want: "*2\r\n*2\r\n" + bulk("a") + bulk("1") + "*2\r\n" + bulk("a") + bulk("1")},
		{cmd: "HRANDFIELD one -2", want: bulkArr("a", "a")},
		{cmd: "HRANDFIELD nokey", want: null3},
		{cmd: "HRANDFIELD nokey 3", want: "*0\r\n"},
	}},
	{"resp3", []step{
		{cmd: "HELLO 3"},
		{cmd: "HSET h a 1 b 2", want: num(2)},
		{cmd: "HGETALL h", want: resp3Map("a", "1", "b", "2")},
		{cmd: "HGETALL nokey", want: "%0\r\n"},
		{cmd: "HKEYS h", want: bulkArr("a", "b")},
		{cmd: "HGET h zz", want: null3},
		{cmd: "HMGET h a zz", want: "*2\r\n" + bulk("1") + null3},
		{cmd: "HSCAN h 0", want: "*2\r\n" + bulk("0") + bulkArr("a", "1", "b", "2")},
	}},
	{"hscan-listpack", []step{
		{cmd: "HSCAN nokey 0", want: "*2\r\n" + bulk("0") + "*0\r\n"},
		{cmd: "HSET h foo 1 bar 2 fab 3", want: num(3)},
		{cmd: "HSCAN h 0", want: "*2\r\n" + bulk("0") + bulkArr("foo", "1", "bar", "2", "fab", "3")},
		{cmd: "HSCAN h 7 COUNT 1", want: "*2\r\n" + bulk("0") + bulkArr("foo", "1", "bar", "2", "fab", "3")},
		{cmd: "HSCAN h 0 MATCH f*", want: "*2\r\n" + bulk("0") + bulkArr("foo", "1", "fab", "3")},
		{cmd: "HSCAN h 0 MATCH * COUNT 100", want: "*2\r\n" + bulk("0") + bulkArr("foo", "1", "bar", "2", "fab", "3")},
		{cmd: "HSCAN h 0 COUNT 0", want: syntax},
		{cmd: "HSCAN h 0 COUNT x", want: notInt},
		{cmd: "HSCAN h 0 TYPE hash", want: syntax},
		{cmd: "HSCAN h 0 MATCH", want: syntax},
		{cmd: "HSCAN h x", want: errReply("ERR invalid cursor")},
		{cmd: "HSCAN nokey x", want: errReply("ERR invalid cursor")},
	}},
	{"encoding-thresholds", []step{
		{cmd: "CONFIG SET hash-max-listpack-value 8"},
		{cmd: "HSET small tmp 0", want: one},
		{cmd: "HINCRBYFLOAT small tmp 0.000005", want: bulk("0.000005")},
		{cmd: "OBJECT ENCODING small", want: bulk("listpack")},
		{cmd: "HSET big tmp 0", want: one},
		{cmd: "HINCRBYFLOAT big tmp 0.0000005", want: bulk("0.0000005")},
		{cmd: "OBJECT ENCODING big", want: bulk("hashtable")},
		{cmd: "HINCRBYFLOAT f8 abcdefgh 1", want: bulk("1")},
		{cmd: "OBJECT ENCODING f8", want: bulk("listpack")},
		{cmd: "HINCRBYFLOAT f9 abcdefghi 1", want: bulk("1")},
		{cmd: "OBJECT ENCODING f9", want: bulk("hashtable")},
		{cmd: "HSET v a 1 b 123456789", want: num(2)},
		{cmd: "OBJECT ENCODING v", want: bulk("hashtable")},
		{cmd: "HSETNX w abcdefghi 1", want: one},
		{cmd: "OBJECT ENCODING w", want: bulk("hashtable")},
		{cmd: "CONFIG SET hash-max-listpack-entries 2"},
		{cmd: "HSET e a 1 b 2", want: num(2)},
		{cmd: "OBJECT ENCODING e", want: bulk("listpack")},
		{cmd: "HSET e c 3", want: one},
		{cmd: "OBJECT ENCODING e", want: bulk("hashtable")},
		{cmd: "HDEL e a b", want: num(2)},
		{cmd: "OBJECT ENCODING e", want: bulk("hashtable")},
		{cmd: "HGETALL e", want: bulkArr("c", "3")},
		{cmd: "CONFIG SET hash-max-listpack-entries 0"},
		{cmd: "HSET z a 1", want: one},
		{cmd: "OBJECT ENCODING z", want: bulk("hashtable")},
	}},
}

func TestHashScripts(t *testing.T) {
	for _, n := range []int{1, 3} {
		for _, sc := range hashScripts {
			t.Run(fmt.Sprintf("%s/shards=%d", sc.name, n), func(t *testing.T) {
				runHashScript(t, newStringCtx(n), sc)
			})
		}
	}
}

// TestHashScriptsMatchRealRedis replays the scripts against a real Redis
// when REDSHARD_REDIS_ADDR names one (it is flushed, and its hash
// thresholds are reset).
func TestHashScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range hashScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("HELLO", "2")
			send("FLUSHALL")
			send("CONFIG", "SET", "hash-max-listpack-entries", "512")
			send("CONFIG", "SET", "hash-max-listpack-value", "64")
			for i, st := range sc.steps {
				got := send(st.args()...)
				if strings.EqualFold(st.args()[0], "hello") || strings.EqualFold(st.args()[0], "config") {
					continue
				}
				if st.want != "" && got != st.want {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
	send("CONFIG", "SET", "hash-max-listpack-entries", "512")
	send("CONFIG", "SET", "hash-max-listpack-value", "64")
}

func TestHashCommandsPropagateLikeRedis(t *testing.T) {
	for _, tc := range []struct {
		setup []string
		cmd   string
		want  string
	}{
		{cmd: "HSET h a 1 b 2", want: "AS-IS 2"},
		{cmd: "HMSET h a 1", want: "AS-IS 1"},
		{setup: []string{"HSET h a 1"}, cmd: "HSETNX h a 2", want: ""},
		{cmd: "HSETNX h a 2", want: "AS-IS 1"},
		{setup: []string{"HSET h a 1 b 2"}, cmd: "HDEL h a b c", want: "AS-IS 2"},
		{cmd: "HDEL h a", want: ""},
		{cmd: "HINCRBY h a 3", want: "AS-IS 1"},
		{setup: []string{"HSET h a x"}, cmd: "HINCRBY h a 3", want: ""},
		{cmd: "HINCRBYFLOAT h a 1.5", want: "HSET h a 1.5"},
		{setup: []string{"HSET h a 2"}, cmd: "HINCRBYFLOAT h a 0.1", want: "HSET h a 2.1"},
		{cmd: "HGETALL h", want: ""},
	} {
		c := newStringCtx(2)
		for _, s := range tc.setup {
			hDo(t, c, strings.Fields(s)...)
		}
		hDo(t, c, strings.Fields(tc.cmd)...)
		t.Run(tc.cmd, func(t *testing.T) { wantProp(t, c, tc.want) })
	}
}

func TestHashNotificationsWhereRedisFiresThem(t *testing.T) {
	c := newStringCtx(1)
	var got []string
	for _, s := range c.Shards {
		s.Cfg.NotifyFlags.Store(^uint32(NotifyNew | NotifyKeyMiss)) // what "AKE" selects
		s.OnNotify = func(db int, class int, event string, key []byte) {
			got = append(got, fmt.Sprintf("%s:%s", event, key))
		}
	}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"HSET h a 1 b 2", []string{"hset:h"}},
		{"HSETNX h a 1", nil},
		{"HSETNX h c 1", []string{"hset:h"}},
		{"HMSET h d 1", []string{"hset:h"}},
		{"HINCRBY h n 1", []string{"hincrby:h"}},
		{"HINCRBY h a x", nil},
		{"HINCRBYFLOAT h n 1.5", []string{"hincrbyfloat:h"}},
		{"HDEL h zz", nil},
		{"HDEL h a b", []string{"hdel:h"}},
		{"HDEL h c d n", []string{"hdel:h", "del:h"}},
		{"HGET h a", nil},
	} {
		got = nil
		hDo(t, c, strings.Fields(tc.cmd)...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: notified %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// hashOf returns the hash at key.
func hashOf(t *testing.T, c *Ctx, key string) *hashObj {
	t.Helper()
	db := c.DBOf([]byte(key))
	slot := db.Peek([]byte(key))
	if slot < 0 {
		t.Fatalf("no key %s", key)
	}
	return db.Obj(slot).(*hashObj)
}

// contents returns a hash's pairs as a map, checking its count.
func contents(t *testing.T, h *hashObj) map[string]string {
	t.Helper()
	m := map[string]string{}
	h.each(func(f, v []byte) bool {
		if _, dup := m[string(f)]; dup {
			t.Fatalf("field %q twice", f)
		}
		m[string(f)] = string(v)
		return true
	})
	if len(m) != h.Len() {
		t.Fatalf("iterated %d pairs, Len %d", len(m), h.Len())
	}
	return m
}

// TestHashMatchesMapModel runs random writes against both encodings and
// a Go map, checking lookups, counts and iteration; large and small values
// exercise multi-byte lengths, and deletes exercise shrinking and the
// table's rebuilds.
func TestHashMatchesMapModel(t *testing.T) {
	for _, entries := range []int64{1 << 20, 0} { // listpack only; hashtable at once
		t.Run(fmt.Sprintf("entries=%d", entries), func(t *testing.T) {
			c := newStringCtx(1)
			c.Shards[0].Cfg.HashMaxListpackEntries.Store(entries)
			c.Shards[0].Cfg.HashMaxListpackValue.Store(1 << 20)
			r := rand.New(rand.NewPCG(1, 2))
			model := map[string]string{}
			for i := 0; i < 20000; i++ {
				// The field space widens as it goes, so that the table
				// grows again and again with deleted entries in its chunks.
				f := "f" + strconv.Itoa(r.IntN(600+i/4))
				switch op := r.IntN(10); {
				case op < 6:
					v := strings.Repeat("v", r.IntN(4)) + strconv.Itoa(i)
					if r.IntN(50) == 0 {
						v = strings.Repeat("x", 200+r.IntN(20000))
					}
					want := one
					if _, ok := model[f]; ok {
						want = zero
					}
					if got := hDo(t, c, "HSET", "h", f, v); got != want {
						t.Fatalf("HSET %s: %q, want %q", f, got, want)
					}
					model[f] = v
				case op < 9:
					want := zero
					if _, ok := model[f]; ok {
						want = one
						delete(model, f)
					}
					if got := hDo(t, c, "HDEL", "h", f); got != want {
						t.Fatalf("HDEL %s: %q, want %q", f, got, want)
					}
				default:
					want := null2
					if v, ok := model[f]; ok {
						want = bulk(v)
					}
					if got := hDo(t, c, "HGET", "h", f); got != want {
						t.Fatalf("HGET %s: %.40q, want %.40q", f, got, want)
					}
				}
				if i%1000 == 999 && len(model) > 0 {
					got := contents(t, hashOf(t, c, "h"))
					if len(got) != len(model) {
						t.Fatalf("step %d: %d fields, want %d", i, len(got), len(model))
					}
					for f, v := range model {
						if got[f] != v {
							t.Fatalf("step %d: field %s differs", i, f)
						}
					}
				}
			}
			// Delete everything: the table shrinks, the key goes.
			for f := range model {
				hDo(t, c, "HDEL", "h", f)
			}
			if got := hDo(t, c, "EXISTS", "h"); got != zero {
				t.Fatalf("EXISTS after deleting all: %q", got)
			}
		})
	}
}

func TestHashTableShrinksAndCompacts(t *testing.T) {
	c := newStringCtx(1)
	for i := 0; i < 1000; i++ {
		hDo(t, c, "HSET", "h", "field:"+strconv.Itoa(i), "value:"+strconv.Itoa(i))
	}
	h := hashOf(t, c, "h")
	if n := len(h.ht.heads); n != 1024 {
		t.Fatalf("%d buckets for 1000 fields, want 1024", n)
	}
	for i := 0; i < 990; i++ {
		hDo(t, c, "HDEL", "h", "field:"+strconv.Itoa(i))
	}
	if n := len(h.ht.heads); n > 64 {
		t.Errorf("%d buckets for 10 fields, want a shrunk table", n)
	}
	if g := h.ht.used - h.ht.live; g > 1024 && g > h.ht.live/2 {
		t.Errorf("garbage %d for %d live bytes", g, h.ht.live)
	}
	// Rewriting values of other sizes again and again keeps garbage bounded.
	for i := 0; i < 10000; i++ {
		hDo(t, c, "HSET", "h", "field:995", strings.Repeat("y", i%50))
	}
	if g := h.ht.used - h.ht.live; g > 1024 && g > h.ht.live/2 {
		t.Errorf("garbage %d for %d live bytes", g, h.ht.live)
	}
	if h.Mem() < h.ht.live {
		t.Errorf("Mem %d below the live bytes %d", h.Mem(), h.ht.live)
	}
}

// hscanAll runs HSCAN from cursor 0 to the end, calling between(i) before
// call i, and returns the fields seen.
func hscanAll(t *testing.T, c *Ctx, key string, count int, between func(i int)) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	cur := "0"
	for i := 0; ; i++ {
		between(i)
		reply := hDo(t, c, "HSCAN", key, cur, "COUNT", strconv.Itoa(count))
		lines := strings.Split(reply, "\r\n")
		cur = lines[2]
		// lines: *2, $n, cursor, *m, then $len/value pairs
		for j := 5; j < len(lines)-1; j += 4 {
			seen[lines[j]] = true
		}
		if cur == "0" {
			return seen
		}
		if i > 100000 {
			t.Fatal("HSCAN does not end")
		}
	}
}

// TestHscanGuaranteesAcrossResize checks SCAN's guarantee: every field
// present for the whole scan is returned, while the table grows (fields
// added between calls) or shrinks (other fields deleted).
func TestHscanGuaranteesAcrossResize(t *testing.T) {
	c := newStringCtx(1)
	hDo(t, c, "CONFIG", "SET", "hash-max-listpack-entries", "16")
	const n = 300
	for i := 0; i < n; i++ {
		hDo(t, c, "HSET", "h", "keep:"+strconv.Itoa(i), "v")
	}
	seen := hscanAll(t, c, "h", 5, func(i int) {
		for j := 0; j < 50 && i < 60; j++ {
			hDo(t, c, "HSET", "h", fmt.Sprintf("new:%d:%d", i, j), "v")
		}
	})
	for i := 0; i < n; i++ {
		if !seen["keep:"+strconv.Itoa(i)] {
			t.Fatalf("growth: keep:%d never returned", i)
		}
	}
	if b := len(hashOf(t, c, "h").ht.heads); b < 2048 {
		t.Fatalf("the table did not grow much (%d buckets)", b)
	}

	// Shrink: delete the new fields while scanning.
	var extra []string
	hashOf(t, c, "h").each(func(f, v []byte) bool {
		if strings.HasPrefix(string(f), "new:") {
			extra = append(extra, string(f))
		}
		return true
	})
	seen = hscanAll(t, c, "h", 5, func(i int) {
		for j := 0; j < 200 && len(extra) > 0; j++ {
			hDo(t, c, "HDEL", "h", extra[len(extra)-1])
			extra = extra[:len(extra)-1]
		}
	})
	for i := 0; i < n; i++ {
		if !seen["keep:"+strconv.Itoa(i)] {
			t.Fatalf("shrink: keep:%d never returned", i)
		}
	}
	if b := len(hashOf(t, c, "h").ht.heads); b > 1024 {
		t.Fatalf("the table did not shrink (%d buckets)", b)
	}
}

func TestHscanMatchAndCountOnHashtable(t *testing.T) {
	c := newStringCtx(1)
	for i := 0; i < 1000; i++ {
		hDo(t, c, "HSET", "h", "k"+strconv.Itoa(i), strconv.Itoa(i))
	}
	// COUNT bounds the pairs collected per call (a bucket is never split).
	reply := hDo(t, c, "HSCAN", "h", "0", "COUNT", "10")
	if n, _ := strconv.Atoi(strings.Split(reply, "\r\n")[3][1:]); n < 20 || n > 40 {
		t.Errorf("COUNT 10 returned %d elements", n)
	}
	// MATCH filters fields; values follow their field.
	seen := map[string]bool{}
	cur := "0"
	for {
		lines := strings.Split(hDo(t, c, "HSCAN", "h", cur, "MATCH", "k1*", "COUNT", "100"), "\r\n")
		cur = lines[2]
		for j := 5; j < len(lines)-1; j += 4 {
			if !strings.HasPrefix(lines[j], "k1") || lines[j+2] != lines[j][1:] {
				t.Fatalf("pair %q %q", lines[j], lines[j+2])
			}
			seen[lines[j]] = true
		}
		if cur == "0" {
			break
		}
	}
	if len(seen) != 111 {
		t.Errorf("MATCH k1* found %d fields, want 111", len(seen))
	}
}

// chiSquare is the Redis test suite's chi_square_value of a sample.
func chiSquare(sample []string) float64 {
	counts := map[string]int{}
	for _, s := range sample {
		counts[s]++
	}
	p := float64(len(sample) / len(counts))
	x := 0.0
	for _, n := range counts {
		d := float64(n) - p
		x += d * d / p
	}
	return x
}

func TestHrandfieldIsUniform(t *testing.T) {
	for _, enc := range []string{"listpack", "hashtable"} {
		t.Run(enc, func(t *testing.T) {
			c := newStringCtx(1)
			if enc == "hashtable" {
				hDo(t, c, "CONFIG", "SET", "hash-max-listpack-entries", "0")
			}
			for i := 0; i < 10; i++ {
				hDo(t, c, "HSET", "h", "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
			}
			if got := hDo(t, c, "OBJECT", "ENCODING", "h"); got != bulk(enc) {
				t.Fatalf("encoding %q", got)
			}
			reply := hDo(t, c, "HRANDFIELD", "h", "-10000")
			lines := strings.Split(reply, "\r\n")
			var sample []string
			for j := 2; j < len(lines)-1; j += 2 {
				sample = append(sample, lines[j])
			}
			if len(sample) != 10000 {
				t.Fatalf("%d fields, want 10000", len(sample))
			}
			// df = 9: 40 is the suite's bound (p = 0.00001).
			if x := chiSquare(sample); x > 40 {
				t.Errorf("chi-square %.1f", x)
			}
			// Distinct counts: every field eventually, no duplicates.
			all := map[string]bool{}
			for i := 0; i < 200; i++ {
				lines := strings.Split(hDo(t, c, "HRANDFIELD", "h", "2", "WITHVALUES"), "\r\n")
				f1, v1, f2 := lines[2], lines[4], lines[6]
				if f1 == f2 || v1 != "v"+f1[1:] {
					t.Fatalf("HRANDFIELD 2 WITHVALUES: %q", lines)
				}
				all[f1], all[f2] = true, true
			}
			if len(all) != 10 {
				t.Errorf("HRANDFIELD 2 returned %d distinct fields in 200 calls", len(all))
			}
			lines = strings.Split(hDo(t, c, "HRANDFIELD", "h", "8"), "\r\n")
			got := map[string]bool{}
			for j := 2; j < len(lines)-1; j += 2 {
				got[lines[j]] = true
			}
			if len(got) != 8 {
				t.Errorf("HRANDFIELD 8 gave %d distinct fields", len(got))
			}
		})
	}
}

// TestHashDumpAndCopyRecreateIt replays Dump's commands into another shard
// and checks the copy of COPY is independent of the original.
func TestHashDumpAndCopyRecreateIt(t *testing.T) {
	for _, n := range []int{5, 200} { // listpack, hashtable (64-pair commands)
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			c := newStringCtx(1)
			hDo(t, c, "CONFIG", "SET", "hash-max-listpack-entries", "128")
			for i := 0; i < n; i++ {
				hDo(t, c, "HSET", "h", "f"+strconv.Itoa(i), strings.Repeat("v", i))
			}
			h := hashOf(t, c, "h")
			want := contents(t, h)
			cmds := h.Dump([]byte("h"))
			if len(cmds) != (n+63)/64 {
				t.Fatalf("%d commands for %d pairs", len(cmds), n)
			}
			c2 := newStringCtx(1)
			hDo(t, c2, "CONFIG", "SET", "hash-max-listpack-entries", "128")
			for _, cmd := range cmds {
				if len(cmd) > 2+2*64 || string(cmd[0]) != "HMSET" || string(cmd[1]) != "h" {
					t.Fatalf("command %q...", cmd[:2])
				}
				args := make([]string, len(cmd))
				for i, a := range cmd {
					args[i] = string(a)
				}
				if got := hDo(t, c2, args...); got != ok {
					t.Fatalf("replay: %q", got)
				}
			}
			if got := contents(t, hashOf(t, c2, "h")); !mapsEqual(got, want) {
				t.Fatalf("replayed hash differs")
			}
			if a, b := hDo(t, c, "OBJECT", "ENCODING", "h"), hDo(t, c2, "OBJECT", "ENCODING", "h"); a != b {
				t.Errorf("encoding %q, replayed %q", a, b)
			}

			if got := hDo(t, c, "COPY", "h", "h2"); got != one {
				t.Fatalf("COPY: %q", got)
			}
			hDo(t, c, "HSET", "h", "f0", "changed", "new", "x")
			hDo(t, c, "HDEL", "h", "f1")
			if got := contents(t, hashOf(t, c, "h2")); !mapsEqual(got, want) {
				t.Fatalf("the copy changed with the original")
			}
			if a, b := hDo(t, c, "OBJECT", "ENCODING", "h"), hDo(t, c, "OBJECT", "ENCODING", "h2"); a != b {
				t.Errorf("encoding %q, copy %q", a, b)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestHashRewriteSerializesOldState checks db.Modify is called before a
// change: a rewrite in progress sees the hash as it was at the cut.
func TestHashRewriteSerializesOldState(t *testing.T) {
	c := newStringCtx(1)
	hDo(t, c, "HSET", "h", "a", "1", "b", "2")
	hDo(t, c, "HSET", "g", "a", "1")
	var got []string
	sh := c.Shards[0]
	sh.StartRewrite(func(db int, argv [][]byte) {
		var w []string
		for _, a := range argv {
			w = append(w, string(a))
		}
		got = append(got, strings.Join(w, " "))
	})
	hDo(t, c, "HSET", "h", "a", "changed")
	hDo(t, c, "HDEL", "g", "a")
	hDo(t, c, "HINCRBY", "n", "x", "1") // created after the cut: not in the image
	sh.RewriteAll()
	slices.Sort(got)
	want := []string{"HMSET g a 1", "HMSET h a 1 b 2"}
	if !slices.Equal(got, want) {
		t.Errorf("image %q, want %q", got, want)
	}
}

func TestHashMemTracksSize(t *testing.T) {
	c := newStringCtx(1)
	hDo(t, c, "HSET", "h", "a", "1")
	small := hashOf(t, c, "h").Mem()
	for i := 0; i < 2000; i++ {
		hDo(t, c, "HSET", "h", "f"+strconv.Itoa(i), strings.Repeat("v", 30))
	}
	big := hashOf(t, c, "h").Mem()
	if small <= 0 || big < 2000*30 || big > 2000*30*4 {
		t.Errorf("Mem %d for one field, %d for 2000 fields of ~36 bytes", small, big)
	}
	db := c.DBOf([]byte("h"))
	if want := db.MemUsage(db.Peek([]byte("h"))); hDo(t, c, "MEMORY", "USAGE", "h") != num(want) || want < int64(big) {
		t.Errorf("MEMORY USAGE %q, want %d (value %d)", hDo(t, c, "MEMORY", "USAGE", "h"), want, big)
	}
	if got := hDo(t, c, "MEMORY", "USAGE", "nokey"); got != null2 {
		t.Errorf("MEMORY USAGE nokey %q", got)
	}
	if got := hDo(t, c, "MEMORY", "USAGE", "h", "SAMPLES", "-1"); got != syntax {
		t.Errorf("MEMORY USAGE SAMPLES -1 %q", got)
	}
}

func TestHashHotPathsDoNotAllocate(t *testing.T) {
	c := newStringCtx(1)
	for i := 0; i < 600; i++ { // a hashtable
		hDo(t, c, "HSET", "big", "f"+strconv.Itoa(i), "v")
	}
	hDo(t, c, "HSET", "small", "a", "1", "b", "2")
	for _, args := range [][]string{
		{"HGET", "big", "f10"}, {"HGET", "small", "b"}, {"HEXISTS", "big", "f1"},
		{"HSET", "big", "f10", "w"}, {"HSET", "small", "a", "9"}, {"HGETALL", "big"}, {"HGETALL", "small"},
		{"HMGET", "big", "f1", "zz"}, {"HINCRBY", "big", "n", "1"}, {"HDEL", "big", "zz"},
	} {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		run := hashCmdTable[strings.ToLower(args[0])]
		c.Out = make([]byte, 0, 64<<10)
		if n := testing.AllocsPerRun(100, func() {
			c.Out = c.Out[:0]
			c.Prop.Reset()
			run(c, argv)
		}); n > 0 {
			t.Errorf("%q: %.1f allocations", args, n)
		}
	}
}

// PrefetchFields walks the bucket heads and chain heads of a big
// hashtable-encoded hash only: on a small hash, a listpack, a string or a
// missing key it reads nothing (returns 0), and it never changes the hash.
func TestPrefetchFieldsOnlyOnBigHashes(t *testing.T) {
	c := newStringCtx(1)
	db := c.Shards[0].DBs[0]
	args := []string{"HSET", "big"}
	for i := 0; i < 70000; i++ {
		args = append(args, "f"+strconv.Itoa(i), "v")
	}
	hDo(t, c, args...)
	hDo(t, c, "HSET", "small", "f1", "v", "f2", "v")
	hDo(t, c, "SET", "str", "v")
	fields := [][]byte{[]byte("f1"), []byte("f2"), []byte("f69999"), []byte("absent")}
	if db.PrefetchFields([]byte("big"), fields) == 0 {
		t.Fatal("no bucket of a 70k-field hash was read")
	}
	for _, k := range []string{"small", "str", "missing"} {
		if got := db.PrefetchFields([]byte(k), fields); got != 0 {
			t.Errorf("PrefetchFields(%s) read something: %d", k, got)
		}
	}
	if got := hDo(t, c, "HLEN", "big"); got != ":70000\r\n" {
		t.Fatalf("HLEN big after prefetching: %q", got)
	}
	if got := hDo(t, c, "HGET", "big", "f69999"); got != "$1\r\nv\r\n" {
		t.Fatalf("HGET big f69999: %q", got)
	}
}
