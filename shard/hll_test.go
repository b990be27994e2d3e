package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"
)

// seqArgs returns cmd key followed by the decimal numbers from..to, as
// redis-cli's `pfadd key $(seq from to)`.
func seqArgs(cmd, key string, from, to int) []string {
	args := []string{cmd, key}
	for i := from; i <= to; i++ {
		args = append(args, strconv.Itoa(i))
	}
	return args
}

func getValue(t *testing.T, c *Ctx, key string) []byte {
	t.Helper()
	db := c.DBOf([]byte(key))
	slot := db.Peek([]byte(key))
	if slot < 0 {
		t.Fatalf("%s missing", key)
	}
	return append([]byte(nil), db.Str(slot)...)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestHLLBytesMatchRedis pins values written by redis-server 7.0.15 (with
// the default hll-sparse-max-bytes 3000), obtained with redis-cli:
//
//	pfadd v1 a b c; get v1; pfcount v1; get v1
//	pfadd v2 $(seq 1 1000); get v2 | sha256sum; pfcount v2; get v2 | sha256sum
//	pfadd v3 $(seq 1 20000); strlen v3; pfcount v3; get v3 | sha256sum
//	pfmerge v4 v1 v2; get v4 | sha256sum; pfcount v4; pfcount v1 v3
//
// so that a value copied between redshard and Redis counts the same.
func TestHLLBytesMatchRedis(t *testing.T) {
	c := newStringCtx(4)
	if got := bitsDo(t, c, "PFADD", "v1", "a", "b", "c"); got != one {
		t.Fatalf("PFADD: %q", got)
	}
	v1 := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80`\xf3\x80P\xb1\x84K\xfb\x80BZ"
	if got := string(getValue(t, c, "v1")); got != v1 {
		t.Fatalf("v1 = %q, want %q", got, v1)
	}
	if got := bitsDo(t, c, "PFCOUNT", "v1"); got != num(3) {
		t.Fatalf("PFCOUNT v1: %q", got)
	}
	// The count is cached in the header, its stale bit cleared.
	v1 = "HYLL\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00`\xf3\x80P\xb1\x84K\xfb\x80BZ"
	if got := string(getValue(t, c, "v1")); got != v1 {
		t.Fatalf("v1 after PFCOUNT = %q, want %q", got, v1)
	}

	bitsDo(t, c, seqArgs("PFADD", "v2", 1, 1000)...)
	v2 := getValue(t, c, "v2")
	if len(v2) != 1922 || sha(v2) != "998c3d36535da261f151fe9394d3518473438c690d0065f4a44c822e830f0b5b" {
		t.Fatalf("v2: %d bytes, sha256 %s", len(v2), sha(v2))
	}
	if got := bitsDo(t, c, "PFCOUNT", "v2"); got != num(1001) {
		t.Fatalf("PFCOUNT v2: %q", got)
	}
	if v2 := getValue(t, c, "v2"); sha(v2) != "719dd6d68459551c0ffe9f675882cee133adeaf55feed3f7ef33f0f0df867a33" {
		t.Fatalf("v2 after PFCOUNT: sha256 %s", sha(v2))
	}

	bitsDo(t, c, seqArgs("PFADD", "v3", 1, 20000)...)
	if got := bitsDo(t, c, "PFCOUNT", "v3"); got != num(19891) {
		t.Fatalf("PFCOUNT v3: %q", got)
	}
	if v3 := getValue(t, c, "v3"); len(v3) != hllDenseSize || sha(v3) != "1fc50199908c34e342745e5f6e112913556c2b6435fd0f3aea20d5f552b046c8" {
		t.Fatalf("v3: %d bytes, sha256 %s", len(v3), sha(v3))
	}

	if got := bitsDo(t, c, "PFMERGE", "v4", "v1", "v2"); got != ok {
		t.Fatalf("PFMERGE: %q", got)
	}
	if v4 := getValue(t, c, "v4"); len(v4) != 1927 || sha(v4) != "cf94113be8ac5dcc71473278c871b61762b6a96a97771879d7bc94f76d10105d" {
		t.Fatalf("v4: %d bytes, sha256 %s", len(v4), sha(v4))
	}
	if got := bitsDo(t, c, "PFCOUNT", "v4"); got != num(1004) {
		t.Fatalf("PFCOUNT v4: %q", got)
	}
	if got := bitsDo(t, c, "PFCOUNT", "v1", "v3"); got != num(19894) {
		t.Fatalf("PFCOUNT v1 v3: %q", got)
	}
}

// TestMurmurHash64ACoversEveryTailLength pins the registers redis-server
// 7.0.15 sets for elements of 0 to 17 bytes (every tail length of the
// 8-byte hash loop), from redis-cli:
//
//	pfadd mh "" 1 12 123 1234 12345 123456 1234567 12345678 123456789 abcdefghijklmnopq
//	pfdebug decode mh
func TestMurmurHash64ACoversEveryTailLength(t *testing.T) {
	c := newStringCtx(1)
	bitsDo(t, c, "PFADD", "mh", "", "1", "12", "123", "1234", "12345", "123456", "1234567", "12345678", "123456789", "abcdefghijklmnopq")
	want := "Z:1067 v:1,1 Z:905 v:1,1 Z:1922 v:1,1 Z:374 v:1,1 Z:1666 v:2,1 Z:1588 v:1,1 Z:1765 v:2,1 Z:1033 v:3,1 Z:251 v:3,1 Z:4124 v:1,1 Z:892 v:2,1 Z:786"
	if got := bitsDo(t, c, "PFDEBUG", "DECODE", "mh"); got != bulk(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

var hllScripts = []script{
	{"PfaddReportsChanges", []step{
		{cmd: "PFADD h", want: one}, // creating the key is a change
		{cmd: "PFADD h", want: zero},
		{cmd: "PFADD h a b c", want: one},
		{cmd: "PFADD h a b c", want: zero},
		{cmd: "PFCOUNT h", want: num(3)},
		{cmd: "PFCOUNT nokey", want: zero},
		{cmd: "PFCOUNT h nokey", want: num(3)},
		{cmd: "PFDEBUG ENCODING h", want: "+sparse\r\n"},
		{cmd: "PFDEBUG DECODE h", want: bulk("Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603")},
		{cmd: "PFDEBUG TODENSE h", want: one},
		{cmd: "PFDEBUG TODENSE h", want: zero},
		{cmd: "PFDEBUG ENCODING h", want: "+dense\r\n"},
		{cmd: "PFDEBUG DECODE h", want: errReply("ERR HLL encoding is not sparse")},
		{cmd: "PFCOUNT h", want: num(3)},
	}},
	{"PfmergeUnionsAndCreates", []step{
		{cmd: "PFADD a 1 2 3", want: one},
		{cmd: "PFADD b 3 4 5", want: one},
		{cmd: "PFMERGE d a b nokey", want: ok},
		{cmd: "PFCOUNT d", want: num(5)},
		{cmd: "PFMERGE e", want: ok}, // no sources: an empty HLL
		{cmd: "PFCOUNT e", want: zero},
		{cmd: "PFMERGE a b", want: ok}, // the destination is a source too
		{cmd: "PFCOUNT a", want: num(5)},
	}},
	{"HLLCommandsCheckTheValue", []step{
		{cmd: "rpush l x", want: one},
		{cmd: "PFADD l a", want: wrong},
		{cmd: "PFCOUNT l", want: wrong},
		{cmd: "PFMERGE d l", want: wrong},
		{cmd: "PFDEBUG ENCODING l", want: wrong},
		{cmd: "SET s foo", want: ok},
		{cmd: "PFADD s a", want: errReply(errHLLWrongType)},
		{cmd: "PFCOUNT s", want: errReply(errHLLWrongType)},
		{cmd: "PFCOUNT s nokey", want: errReply(errHLLWrongType)},
		{cmd: "PFMERGE s", want: errReply(errHLLWrongType)},
		{cmd: "SET s HYLLxxxxxxxxxxxxxxxxx", want: ok}, // bad encoding byte
		{cmd: "PFADD s a", want: errReply(errHLLWrongType)},
		{argv: []string{"SET", "s", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"}, want: ok}, // dense, short
		{cmd: "PFCOUNT s", want: errReply(errHLLWrongType)},
		// A sparse value whose opcodes cover too few registers (8000).
		{argv: []string{"SET", "s", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x5f\x3f"}, want: ok},
		{cmd: "PFCOUNT s", want: errReply(errHLLInvalid)},
		{cmd: "PFCOUNT s s", want: errReply(errHLLInvalid)},
		{cmd: "PFADD s z", want: errReply(errHLLInvalid)}, // register 8581 is past them
		{cmd: "PFDEBUG GETREG s", want: errReply(errHLLInvalid)},
		{cmd: "PFDEBUG ENCODING nokey", want: errReply("ERR The specified key does not exist")},
		{cmd: "PFADD h a", want: one},
		{cmd: "PFDEBUG FOO h", want: errReply("ERR Unknown PFDEBUG subcommand 'FOO'")},
	}},
}

func TestHLLScripts(t *testing.T) {
	for _, sc := range hllScripts {
		t.Run(sc.name, func(t *testing.T) {
			runBitsScript(t, newStringCtx(1), sc.steps)
		})
	}
}

// TestHLLScriptsMatchRealRedis replays the scripts against a Redis server
// when REDSHARD_REDIS_ADDR names one (it is flushed).
func TestHLLScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range hllScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("FLUSHALL")
			for i, st := range sc.steps {
				if got := send(st.args()...); got != st.want {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

func TestPfcountRefreshesCacheAndPropagates(t *testing.T) {
	c := newStringCtx(1)
	if bitsDo(t, c, "PFADD", "h", "a", "b"); c.Prop.Dirty != 3 || c.Prop.Custom {
		t.Fatalf("PFADD of a new key: dirty %d (want 1 + one per changed register)", c.Prop.Dirty)
	}
	if bitsDo(t, c, "PFADD", "h", "a"); c.Prop.Dirty != 0 {
		t.Fatalf("PFADD of nothing new: dirty %d", c.Prop.Dirty)
	}
	// A stale cache is refreshed: the PFCOUNT itself is logged.
	if got := bitsDo(t, c, "PFCOUNT", "h"); got != num(2) || c.Prop.Dirty != 1 || c.Prop.Custom {
		t.Fatalf("first PFCOUNT: %q dirty %d", got, c.Prop.Dirty)
	}
	if got := bitsDo(t, c, "PFCOUNT", "h"); got != num(2) || c.Prop.Dirty != 0 {
		t.Fatalf("cached PFCOUNT: %q dirty %d", got, c.Prop.Dirty)
	}
	// A forged cached value is returned as it is, as Redis does.
	db := c.DBOf([]byte("h"))
	v := db.Str(db.Peek([]byte("h")))
	v[8] = 42
	if got := bitsDo(t, c, "PFCOUNT", "h"); got != num(42) {
		t.Fatalf("forged cache: %q", got)
	}
	if bitsDo(t, c, "PFCOUNT", "h", "h"); c.Prop.Dirty != 0 {
		t.Fatal("PFCOUNT of several keys changes nothing")
	}
	if bitsDo(t, c, "PFMERGE", "h"); c.Prop.Dirty != 1 {
		t.Fatal("PFMERGE is logged")
	}
}

func TestHLLAcrossShards(t *testing.T) {
	c := newStringCtx(4)
	var keys []string
	seen := map[int]bool{}
	for i := 0; len(keys) < 4; i++ {
		k := "hll" + strconv.Itoa(i)
		if s := ShardOf([]byte(k), 4); !seen[s] {
			seen[s] = true
			keys = append(keys, k)
		}
	}
	bitsDo(t, c, seqArgs("PFADD", keys[1], 1, 1000)...)
	bitsDo(t, c, seqArgs("PFADD", keys[2], 501, 1500)...)
	bitsDo(t, c, seqArgs("PFADD", keys[3], 1, 20000)...) // dense
	if got := bitsDo(t, c, "PFMERGE", keys[0], keys[1], keys[2]); got != ok {
		t.Fatalf("PFMERGE: %q", got)
	}
	union := bitsDo(t, c, "PFCOUNT", keys[1], keys[2])
	if got := bitsDo(t, c, "PFCOUNT", keys[0]); got != union {
		t.Fatalf("merged count %q, union count %q", got, union)
	}
	if got := bitsDo(t, c, "PFDEBUG", "ENCODING", keys[0]); got != "+sparse\r\n" {
		t.Fatalf("merge of sparse HLLs: %q", got)
	}
	// A dense source makes the destination dense.
	bitsDo(t, c, "PFMERGE", keys[0], keys[3])
	if got := bitsDo(t, c, "PFDEBUG", "ENCODING", keys[0]); got != "+dense\r\n" {
		t.Fatalf("merge with a dense HLL: %q", got)
	}
	if got, want := bitsDo(t, c, "PFCOUNT", keys[0]), bitsDo(t, c, "PFCOUNT", keys[1], keys[2], keys[3]); got != want {
		t.Fatalf("merged count %q, union count %q", got, want)
	}
}

func TestSparseBecomesDenseAtConfiguredSize(t *testing.T) {
	for _, maxBytes := range []int64{0, 100, 3000, 20000} {
		c := newStringCtx(1)
		c.Shards[0].Cfg.HLLSparseMaxBytes.Store(maxBytes)
		d := newStringCtx(1) // always dense, for comparison
		bitsDo(t, d, "PFADD", "h")
		bitsDo(t, d, "PFDEBUG", "TODENSE", "h")
		for i := 0; i < 3000; i += 50 {
			args := seqArgs("PFADD", "h", i, i+49)
			bitsDo(t, c, args...)
			bitsDo(t, d, args...)
			v := getValue(t, c, "h")
			if v[4] == hllSparse && int64(len(v)) > max(maxBytes, int64(len(hllEmpty))) {
				t.Fatalf("max %d: sparse value of %d bytes", maxBytes, len(v))
			}
			if got, want := bitsDo(t, c, "PFCOUNT", "h"), bitsDo(t, d, "PFCOUNT", "h"); got != want {
				t.Fatalf("max %d after %d: sparse count %q, dense %q", maxBytes, i+50, got, want)
			}
		}
		bitsDo(t, c, "PFDEBUG", "TODENSE", "h")
		if got, want := getValue(t, c, "h"), getValue(t, d, "h"); string(got) != string(want) {
			t.Fatalf("max %d: registers differ after conversion", maxBytes)
		}
	}
}

func TestSparseRegisterAbove32PromotesToDense(t *testing.T) {
	c := newStringCtx(1)
	bitsDo(t, c, "PFADD", "h", "a")
	db := c.DBOf([]byte("h"))
	v := hllValueFor(db, "h")
	if r := v.set(7, 33); r != 1 {
		t.Fatalf("set: %d", r)
	}
	v.close()
	if got := bitsDo(t, c, "PFDEBUG", "ENCODING", "h"); got != "+dense\r\n" {
		t.Fatalf("encoding %q", got)
	}
	out := bitsDo(t, c, "PFDEBUG", "GETREG", "h")
	if want := ":33\r\n"; len(out) < 100 || out[len("*16384\r\n")+7*len(":0\r\n"):][:len(want)] != want {
		t.Fatalf("register 7 not 33")
	}
}

func hllValueFor(db *DB, key string) hllValue { return openHLL(db, db.Peek([]byte(key))) }

func TestHLLErrorStaysWithinRedisBounds(t *testing.T) {
	c := newStringCtx(1)
	relerr := 1.04 / math.Sqrt(hllRegisters)
	n := 0
	for _, card := range []int{10, 100, 1000, 10000, 100000} {
		bitsDo(t, c, seqArgs("PFADD", "h", n+1, card)...)
		n = card
		reply := bitsDo(t, c, "PFCOUNT", "h")
		got, _ := strconv.Atoi(reply[1 : len(reply)-2])
		if math.Abs(float64(got-card)) > math.Ceil(relerr*6*float64(card)) {
			t.Fatalf("cardinality %d estimated %d", card, got)
		}
	}
}

func TestPfselftest(t *testing.T) {
	if testing.Short() {
		t.Skip("ten million elements")
	}
	c := newStringCtx(1)
	if got := bitsDo(t, c, "PFSELFTEST"); got != ok {
		t.Fatalf("PFSELFTEST: %q", got)
	}
}

// TestBitAndHLLNotifications: the keyspace events match those redis-server
// 7.0.15 published for the same commands (psubscribe '__keyevent*').
func TestBitAndHLLNotifications(t *testing.T) {
	c := newStringCtx(2)
	var got []string
	for _, s := range c.Shards {
		s.Cfg.NotifyFlags.Store(^uint32(NotifyNew | NotifyKeyMiss)) // what "AKE" selects
		s.OnNotify = func(db int, class int, event string, key []byte) {
			got = append(got, event+" "+string(key))
		}
	}
	for _, cmd := range []string{
		"SETBIT a 1 1", "SETBIT a 1 1", "BITOP OR b a", "BITOP OR b nokey", "BITFIELD c SET u8 0 1",
		"PFADD h x", "PFADD h x", "PFCOUNT h", "PFMERGE h2 h",
	} {
		bitsDo(t, c, strings.Fields(cmd)...)
	}
	want := "setbit a,set b,del b,setbit c,pfadd h,pfadd h2"
	if strings.Join(got, ",") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, ","), want)
	}
}
