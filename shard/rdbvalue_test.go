package shard

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redshard/redshard/aof/rdb"
)

// rvDo runs any data command and returns its reply (propagation in c.Prop).
func rvDo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	c.Out = c.Out[:0]
	c.Prop.Reset()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	name := strings.ToLower(args[0])
	if name == "object" || name == "memory" || name == "xgroup" || name == "xinfo" {
		name += "|" + strings.ToLower(args[1])
	}
	cmd, ok := allCmdTable[name]
	if !ok {
		t.Fatalf("no command %q", name)
	}
	cmd.Run(c, argv)
	return string(c.Out)
}

// rvBulk is the payload of a bulk reply.
func rvBulk(t testing.TB, reply string) string {
	t.Helper()
	if !strings.HasPrefix(reply, "$") {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	i := strings.Index(reply, "\r\n")
	n, _ := strconv.Atoi(reply[1:i])
	return reply[i+2 : i+2+n]
}

// rvReadAll is what the read commands of a key's type answer, members of
// unordered types sorted.
func rvReadAll(t testing.TB, c *Ctx, key string) string {
	t.Helper()
	typ := rvDo(t, c, "type", key)
	var out string
	switch typ {
	case "+string\r\n":
		out = rvDo(t, c, "get", key)
	case "+list\r\n":
		out = rvDo(t, c, "lrange", key, "0", "-1")
	case "+set\r\n":
		parts := strings.Split(rvDo(t, c, "smembers", key), "\r\n")
		slices.Sort(parts)
		out = strings.Join(parts, "|")
	case "+zset\r\n":
		out = rvDo(t, c, "zrange", key, "0", "-1", "withscores")
	case "+hash\r\n":
		parts := strings.Split(rvDo(t, c, "hgetall", key), "\r\n")
		slices.Sort(parts)
		out = strings.Join(parts, "|")
	}
	return typ + rvDo(t, c, "object", "encoding", key) + out
}

type rvCase struct {
	name  string
	setup [][]string
	enc   string
}

func rvCases() []rvCase {
	many := func(cmd, key string, n int, f func(i int) []string) [][]string {
		var cmds [][]string
		for i := 0; i < n; i++ {
			cmds = append(cmds, append([]string{cmd, key}, f(i)...))
		}
		return cmds
	}
	long := strings.Repeat("x", 100)
	return []rvCase{
		{"string int", [][]string{{"set", "k", "12345"}}, "int"},
		{"string negative int", [][]string{{"set", "k", "-9223372036854775808"}}, "int"},
		{"string embstr", [][]string{{"set", "k", "hello"}}, "embstr"},
		{"string raw", [][]string{{"set", "k", strings.Repeat("abc", 50)}}, "raw"},
		{"string binary", [][]string{{"set", "k", "\x00\xff\r\n"}}, "embstr"},
		{"list small", [][]string{{"rpush", "k", "a", "1", "-2", long}}, "quicklist"},
		{"list many nodes", many("rpush", "k", 2000, func(i int) []string { return []string{fmt.Sprint("e", i)} }), "quicklist"},
		{"set intset", [][]string{{"sadd", "k", "1", "-5", "70000", "9223372036854775807"}}, "intset"},
		{"set hashtable strings", [][]string{{"sadd", "k", "a", "b", "1"}}, "hashtable"},
		{"set hashtable many ints", many("sadd", "k", 600, func(i int) []string { return []string{fmt.Sprint(i)} }), "hashtable"},
		{"zset listpack", [][]string{{"zadd", "k", "1", "a", "-2.5", "b", "inf", "c", "0", "d", "-inf", "e"}}, "listpack"},
		{"zset skiplist many", many("zadd", "k", 200, func(i int) []string { return []string{fmt.Sprint(i * 3 % 17), fmt.Sprint("m", i)} }), "skiplist"},
		{"zset skiplist long member", [][]string{{"zadd", "k", "1", long, "2", "b"}}, "skiplist"},
		{"hash listpack", [][]string{{"hset", "k", "f", "v", "n", "123", "e", ""}}, "listpack"},
		{"hash hashtable many", many("hset", "k", 600, func(i int) []string { return []string{fmt.Sprint("f", i), fmt.Sprint(i)} }), "hashtable"},
		{"hash hashtable long value", [][]string{{"hset", "k", "f", long, "g", "h"}}, "hashtable"},
	}
}

// TestRDBValueRoundTrip builds every type and encoding by commands, goes
// object → Value → object (directly and through DUMP/RESTORE) and compares
// the replies, the encoding and the memory.
func TestRDBValueRoundTrip(t *testing.T) {
	for _, tc := range rvCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := ksCtx(3)
			for _, cmd := range tc.setup {
				rvDo(t, c, cmd...)
			}
			want := rvReadAll(t, c, "k")
			if !strings.Contains(want, "$"+strconv.Itoa(len(tc.enc))+"\r\n"+tc.enc+"\r\n") {
				t.Fatalf("setup built %q, want encoding %s", want, tc.enc)
			}
			// Directly, onto another shard.
			src := c.DBOf([]byte("k"))
			v := src.RDBValue(src.Lookup([]byte("k")))
			dst := c.DBOf([]byte("other"))
			if _, err := dst.AddValue([]byte("other"), &v); err != nil {
				t.Fatal(err)
			}
			if got := rvReadAll(t, c, "other"); got != want {
				t.Fatalf("AddValue(RDBValue) = %q, want %q", got, want)
			}
			// Through a payload.
			p := rvBulk(t, rvDo(t, c, "dump", "k"))
			if r := rvDo(t, c, "restore", "k2", "0", p); r != "+OK\r\n" {
				t.Fatalf("restore: %q", r)
			}
			if got := rvReadAll(t, c, "k2"); got != want {
				t.Fatalf("after DUMP/RESTORE %q, want %q", got, want)
			}
			if p2 := rvBulk(t, rvDo(t, c, "dump", "k2")); p2 != p && tc.enc != "hashtable" {
				t.Fatalf("payload changed through RESTORE")
			}
			mk := rvDo(t, c, "memory", "usage", "k")
			mk2 := rvDo(t, c, "memory", "usage", "k2")
			a, _ := strconv.Atoi(strings.Trim(mk, ":\r\n"))
			b, _ := strconv.Atoi(strings.Trim(mk2, ":\r\n"))
			t.Logf("memory usage: %d by commands, %d restored", a, b)
			if a == 0 || b == 0 || b > a+a/4+64 || a > b+b/4+64 {
				t.Fatalf("memory usage %d built by commands, %d restored", a, b)
			}
		})
	}
}

// TestRestoreEncodingRules checks the load rules: compact RDB types stay
// compact whatever the value lengths (only the count converts), plain
// types are compact only within both limits.
func TestRestoreEncodingRules(t *testing.T) {
	c := ksCtx(1)
	db := c.DBOf([]byte("k"))
	long := []byte(strings.Repeat("v", 100))
	opts := rdb.DefaultOptions()
	opts.HashMaxListpackValue = 1000
	opts.ZSetMaxListpackValue = 1000
	enc := func(v rdb.Value, o rdb.Options) string {
		p, err := rdb.EncodeDump(&v, o)
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	hv := rdb.Value{Kind: rdb.KindHash, Hash: []rdb.HashField{{Field: []byte("f"), Value: long}}}
	zv := rdb.Value{Kind: rdb.KindZSet, ZSet: []rdb.ZMember{{Member: long, Score: 1}}}
	for _, tc := range []struct {
		payload, enc string
	}{
		{enc(hv, opts), "listpack"},                  // HASH_LISTPACK with a long value: kept
		{enc(hv, rdb.DefaultOptions()), "hashtable"}, // HASH with a long value
		{enc(zv, opts), "listpack"},
		{enc(zv, rdb.DefaultOptions()), "skiplist"},
	} {
		rvDo(t, c, "del", "k")
		if r := rvDo(t, c, "restore", "k", "0", tc.payload); r != "+OK\r\n" {
			t.Fatalf("restore: %q", r)
		}
		if got := rvDo(t, c, "object", "encoding", "k"); got != "$"+strconv.Itoa(len(tc.enc))+"\r\n"+tc.enc+"\r\n" {
			t.Fatalf("encoding %q, want %s", got, tc.enc)
		}
	}
	// A listpack hash over the entry limit converts.
	db.sh.Cfg = DefaultTunables()
	db.sh.Cfg.HashMaxListpackEntries.Store(1)
	two := rdb.Value{Kind: rdb.KindHash, Hash: []rdb.HashField{{Field: []byte("a"), Value: []byte("1")}, {Field: []byte("b"), Value: []byte("2")}}}
	rvDo(t, c, "del", "k")
	rvDo(t, c, "restore", "k", "0", enc(two, rdb.DefaultOptions()))
	if got := rvDo(t, c, "object", "encoding", "k"); got != "$9\r\nhashtable\r\n" {
		t.Fatalf("encoding %q, want hashtable", got)
	}
	// Sets: integers within set-max-intset-entries are an intset.
	db.sh.Cfg.SetMaxIntsetEntries.Store(2)
	for _, tc := range []struct {
		items []string
		enc   string
	}{{[]string{"1", "2"}, "intset"}, {[]string{"1", "2", "3"}, "hashtable"}, {[]string{"1", "x"}, "hashtable"}} {
		var items [][]byte
		for _, s := range tc.items {
			items = append(items, []byte(s))
		}
		rvDo(t, c, "del", "k")
		rvDo(t, c, "restore", "k", "0", enc(rdb.Value{Kind: rdb.KindSet, Items: items}, rdb.DefaultOptions()))
		if got := rvDo(t, c, "object", "encoding", "k"); !strings.Contains(got, tc.enc) {
			t.Fatalf("%v: encoding %q, want %s", tc.items, got, tc.enc)
		}
	}
}

func TestRestoreErrorsAndOptions(t *testing.T) {
	c := ksCtx(2)
	rvDo(t, c, "set", "foo", "bar")
	p := rvBulk(t, rvDo(t, c, "dump", "foo"))
	bad := []byte(p)
	bad[len(bad)-1] ^= 1
	empty := rdb.AppendFooter([]byte{rdb.TypeSet, 0})
	garbage := rdb.AppendFooter([]byte{rdb.TypeHashListpack, 3, 1, 2, 3})
	unknown := rdb.AppendFooter([]byte{99, 0})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", "foo", "0", p}, "-BUSYKEY Target key name already exists.\r\n"},
		{[]string{"restore", "x", "0", p, "bogus"}, "-ERR syntax error\r\n"},
		{[]string{"restore", "x", "0", p, "idletime"}, "-ERR syntax error\r\n"},
		{[]string{"restore", "x", "0", p, "idletime", "a"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"restore", "x", "0", p, "idletime", "-1"}, "-ERR Invalid IDLETIME value, must be >= 0\r\n"},
		{[]string{"restore", "x", "0", p, "freq", "256"}, "-ERR Invalid FREQ value, must be >= 0 and <= 255\r\n"},
		{[]string{"restore", "x", "0", p, "freq", "1", "idletime", "1"}, "-ERR syntax error\r\n"},
		{[]string{"restore", "x", "-1", p}, "-ERR Invalid TTL value, must be >= 0\r\n"},
		{[]string{"restore", "x", "1.5", p}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"restore", "x", "0", string(bad)}, "-ERR DUMP payload version or checksum are wrong\r\n"},
		{[]string{"restore", "x", "0", "short"}, "-ERR DUMP payload version or checksum are wrong\r\n"},
		{[]string{"restore", "x", "0", string(empty)}, "-ERR Bad data format\r\n"},
		{[]string{"restore", "x", "0", string(garbage)}, "-ERR Bad data format\r\n"},
		{[]string{"restore", "x", "0", string(unknown)}, "-ERR Bad data format\r\n"},
		{[]string{"restore-asking", "x", "0", p}, "+OK\r\n"},
		{[]string{"dump", "nokey"}, "$-1\r\n"},
	} {
		if got := rvDo(t, c, tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args[:min(len(tc.args), 3)], got, tc.want)
		}
	}
	if got := rvDo(t, c, "exists", "x"); got != ":1\r\n" {
		t.Fatalf("restore-asking did not add the key: %q", got)
	}
}

func TestRestorePropagation(t *testing.T) {
	c := ksCtx(2)
	rvDo(t, c, "set", "foo", "bar")
	p := rvBulk(t, rvDo(t, c, "dump", "foo"))
	// No TTL: as it came.
	rvDo(t, c, "restore", "a", "0", p)
	if c.Prop.Custom || c.Prop.Dirty != 1 {
		t.Fatalf("plain restore: %+v", c.Prop)
	}
	// A relative TTL is logged absolute, with ABSTTL.
	rvDo(t, c, "restore", "b", "5000", p, "replace")
	if got := ksProp(&c.Prop); got != fmt.Sprintf("dirty=1 | restore b %d %s replace ABSTTL", ksNow+5000, p) {
		t.Fatalf("propagated %q", got)
	}
	if got := rvDo(t, c, "pttl", "b"); got != ":5000\r\n" {
		t.Fatalf("pttl %q", got)
	}
	// ABSTTL as it came.
	rvDo(t, c, "restore", "c", strconv.FormatInt(ksNow+100, 10), p, "absttl")
	if c.Prop.Custom || c.Prop.Dirty != 1 {
		t.Fatalf("absttl restore: %+v", c.Prop)
	}
	// Already expired: replacing deletes, logged as DEL; else nothing.
	if got := rvDo(t, c, "restore", "c", strconv.FormatInt(ksNow-1, 10), p, "absttl", "replace"); got != "+OK\r\n" {
		t.Fatalf("expired restore: %q", got)
	}
	if got := ksProp(&c.Prop); got != "dirty=1 | DEL c" {
		t.Fatalf("propagated %q", got)
	}
	if got := rvDo(t, c, "exists", "c"); got != ":0\r\n" {
		t.Fatalf("exists %q", got)
	}
	rvDo(t, c, "restore", "d", "1", p, "absttl")
	if c.Prop.Dirty != 0 {
		t.Fatalf("expired restore of a new key logged: %+v", c.Prop)
	}
}

func TestRestoreIdleAndFreq(t *testing.T) {
	c := ksCtx(1)
	rvDo(t, c, "set", "foo", "bar")
	p := rvBulk(t, rvDo(t, c, "dump", "foo"))
	rvDo(t, c, "restore", "a", "0", p, "idletime", "1000")
	if got := rvDo(t, c, "object", "idletime", "a"); got != ":1000\r\n" {
		t.Fatalf("idletime %q", got)
	}
	c.Shards[0].Cfg = DefaultTunables()
	c.Shards[0].Cfg.MaxmemoryPolicy.Store(PolicyAllkeysLFU)
	rvDo(t, c, "restore", "b", "0", p, "freq", "100")
	if got := rvDo(t, c, "object", "freq", "b"); got != ":100\r\n" {
		t.Fatalf("freq %q", got)
	}
}

// TestBuildValueRefusesBadValues: duplicates and NaN never become keys.
// A hash's or sorted set's repeated member is the decoder's to refuse
// (objectFromValue): its payload, compact or not, must not decode.
func TestBuildValueRefusesBadValues(t *testing.T) {
	db := ksCtx(1).DBOf([]byte("k"))
	a := []byte("a")
	for _, v := range []rdb.Value{
		{Kind: rdb.KindSet, Items: [][]byte{a, a}},
		{Kind: rdb.KindSet, Items: [][]byte{[]byte("1"), []byte("1")}},
		{Kind: rdb.KindList},
		{Kind: rdb.KindStream},
	} {
		if _, err := db.BuildValue(&v); err == nil {
			t.Errorf("%v %v: built", v.Kind, v.Len())
		}
	}
	big := make([]byte, 100) // over *-max-listpack-value: the plain types
	for _, m := range [][]byte{a, big} {
		for _, v := range []rdb.Value{
			{Kind: rdb.KindHash, Hash: []rdb.HashField{{Field: m, Value: a}, {Field: []byte("b"), Value: a}, {Field: m, Value: a}}},
			{Kind: rdb.KindZSet, ZSet: []rdb.ZMember{{Member: m, Score: 1}, {Member: []byte("b"), Score: 2}, {Member: m, Score: 3}}},
		} {
			p, err := rdb.EncodeDump(&v, rdb.Options{Checksum: true})
			if err != nil {
				t.Fatal(err)
			}
			if d, err := rdb.DecodeDump(p); !errors.Is(err, rdb.ErrDuplicate) {
				t.Errorf("%v of %d-byte members: decoded %v, %v", v.Kind, len(m), d.Len(), err)
			}
		}
	}
}

// TestStreamRDBValueRoundTrip: a stream with deleted entries, groups,
// consumers and pending entries goes to neutral form and back to the same
// XINFO STREAM FULL, XRANGE and XPENDING.
func TestStreamRDBValueRoundTrip(t *testing.T) {
	c := ksCtx(2)
	for i := 1; i <= 250; i++ {
		args := []string{"xadd", "s", fmt.Sprintf("%d-%d", 1000+i/3, i), "f", strconv.Itoa(i)}
		if i%7 == 0 {
			args = append(args, "other", "x")
		}
		rvDo(t, c, args...)
	}
	rvDo(t, c, "xdel", "s", "1001-3", "1010-30")
	rvDo(t, c, "xgroup", "create", "s", "g1", "0")
	rvDo(t, c, "xgroup", "create", "s", "g0", "$")
	rvDo(t, c, "xreadgroup", "group", "g1", "alice", "count", "20", "streams", "s", ">")
	rvDo(t, c, "xreadgroup", "group", "g1", "bob", "count", "5", "streams", "s", ">")
	rvDo(t, c, "xack", "s", "g1", "1001-4", "1002-7")
	rvDo(t, c, "xgroup", "createconsumer", "s", "g0", "carol")
	reads := func(key string) string {
		return rvDo(t, c, "xinfo", "stream", key, "full") + rvDo(t, c, "xrange", key, "-", "+") +
			rvDo(t, c, "xpending", key, "g1", "-", "+", "100") + rvDo(t, c, "object", "encoding", key)
	}
	want := reads("s")
	src := c.DBOf([]byte("s"))
	v := src.RDBValue(src.Lookup([]byte("s")))
	if v.Kind != rdb.KindStream || len(v.Strm.Entries) != 248 || len(v.Strm.Groups) != 2 {
		t.Fatalf("neutral form: %v, %d entries", v.Kind, len(v.Strm.Entries))
	}
	for _, key := range []string{"s2", "other"} {
		if _, err := c.DBOf([]byte(key)).AddValue([]byte(key), &v); err != nil {
			t.Fatal(err)
		}
		if got := reads(key); got != want {
			t.Fatalf("%s: %q\nwant %q", key, got, want)
		}
	}
	// An empty stream with a group is a value too.
	rvDo(t, c, "xtrim", "s", "maxlen", "0")
	v = src.RDBValue(src.Lookup([]byte("s")))
	if _, err := c.DBOf([]byte("e")).AddValue([]byte("e"), &v); err != nil {
		t.Fatal(err)
	}
	if got, want := rvDo(t, c, "xinfo", "stream", "e"), rvDo(t, c, "xinfo", "stream", "s"); got != want {
		t.Fatalf("empty stream: %q, want %q", got, want)
	}
}

func TestStreamFromRDBRefusesInconsistencies(t *testing.T) {
	db := ksCtx(1).DBOf([]byte("k"))
	f := [][]byte{[]byte("f"), []byte("v")}
	id := func(ms uint64) rdb.StreamID { return rdb.StreamID{Ms: ms} }
	ok := func() *rdb.Stream {
		return &rdb.Stream{
			Entries: []rdb.StreamEntry{{ID: id(1), Fields: f}, {ID: id(2), Fields: f}},
			LastID:  id(2), FirstID: id(1), EntriesAdded: 2,
			Groups: []rdb.StreamGroup{{Name: []byte("g"), LastID: id(2), EntriesRead: 2,
				Pending:   []rdb.StreamNACK{{ID: id(1), DeliveryTime: 5, DeliveryCount: 1}},
				Consumers: []rdb.StreamConsumer{{Name: []byte("c"), Pending: []rdb.StreamID{id(1)}}}}},
		}
	}
	if _, err := db.BuildValue(&rdb.Value{Kind: rdb.KindStream, Strm: ok()}); err != nil {
		t.Fatalf("consistent stream refused: %v", err)
	}
	for name, spoil := range map[string]func(s *rdb.Stream){
		"entries out of order": func(s *rdb.Stream) { s.Entries[1].ID = id(1) },
		"odd fields":           func(s *rdb.Stream) { s.Entries[0].Fields = f[:1] },
		"no fields":            func(s *rdb.Stream) { s.Entries[0].Fields = nil },
		"last ID too small":    func(s *rdb.Stream) { s.LastID = id(1) },
		"group twice":          func(s *rdb.Stream) { s.Groups = append(s.Groups, s.Groups[0]) },
		"NACK twice": func(s *rdb.Stream) {
			s.Groups[0].Pending = append(s.Groups[0].Pending, s.Groups[0].Pending[0])
		},
		"NACK without consumer": func(s *rdb.Stream) { s.Groups[0].Consumers[0].Pending = nil },
		"consumer's ID not pending": func(s *rdb.Stream) {
			s.Groups[0].Consumers[0].Pending = []rdb.StreamID{id(2)}
		},
		"NACK owned twice": func(s *rdb.Stream) {
			s.Groups[0].Consumers = append(s.Groups[0].Consumers, rdb.StreamConsumer{Name: []byte("d"), Pending: []rdb.StreamID{id(1)}})
		},
		"consumer twice": func(s *rdb.Stream) {
			s.Groups[0].Consumers = append(s.Groups[0].Consumers, rdb.StreamConsumer{Name: []byte("c")})
		},
	} {
		s := ok()
		spoil(s)
		if _, err := db.BuildValue(&rdb.Value{Kind: rdb.KindStream, Strm: s}); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}
