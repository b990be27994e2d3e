package shard

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The bitmap and HyperLogLog tests call the handlers directly and compare
// the exact RESP bytes, spelled out as Redis 7.0.15's replies (each script
// was checked against redis-server 7.0.15).

var bitsCmdTable = func() map[string]func(*Ctx, [][]byte) {
	m := map[string]func(*Ctx, [][]byte){}
	for _, t := range [][]Command{stringCommands, bitmapCommands, hllCommands} {
		for _, cmd := range t {
			m[cmd.Name] = cmd.Run
		}
	}
	return m
}()

// bitsDo runs one command of the string, bitmap or HLL tables and returns
// its reply, leaving the propagation record in c.Prop. "rpush key x" stores
// a list-typed value, for WRONGTYPE cases.
func bitsDo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	c.Out = c.Out[:0]
	c.Prop.Reset()
	name := strings.ToLower(args[0])
	if name == "rpush" {
		c.DBOf([]byte(args[1])).SetObj([]byte(args[1]), TypeList, EncListpack, &ksList{items: []string{args[2]}})
		return one
	}
	run := bitsCmdTable[name]
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

func runBitsScript(t *testing.T, c *Ctx, steps []step) {
	t.Helper()
	for i, st := range steps {
		if got := bitsDo(t, c, st.args()...); got != st.want {
			t.Errorf("step %d %q: got %q, want %q", i, st.args(), got, st.want)
		}
	}
}

func errReply(msg string) string { return "-" + msg + "\r\n" }

func arr(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

var bitmapScripts = []script{
	{"SetbitReturnsOldBitAndGrowsWithZeros", []step{
		{cmd: "SETBIT k 1 1", want: zero},
		{cmd: "SETBIT k 1 1", want: one},
		{cmd: "GET k", want: bulk("@")},
		{cmd: "SETBIT k 17 1", want: zero},
		{cmd: "GET k", want: bulk("@\x00@")},
		{cmd: "STRLEN k", want: num(3)},
		{cmd: "SETBIT k 1 0", want: one},
		{cmd: "GETBIT k 1", want: zero},
		{cmd: "GETBIT k 17", want: one},
		{cmd: "GETBIT k 1000", want: zero},
		{cmd: "GETBIT nokey 0", want: zero},
	}},
	{"SetbitValidatesArguments", []step{
		{cmd: "SETBIT k -1 1", want: errReply(errBitOffset)},
		{cmd: "SETBIT k 4294967296 1", want: errReply(errBitOffset)},
		{cmd: "SETBIT k abc 1", want: errReply(errBitOffset)},
		{cmd: "SETBIT k 0 2", want: errReply(errBitValue)},
		{cmd: "SETBIT k 0 -1", want: errReply(errBitValue)},
		{cmd: "SETBIT k 0 x", want: errReply(errBitValue)},
		{cmd: "GETBIT k -1", want: errReply(errBitOffset)},
	}},
	{"BitCommandsRejectOtherTypes", []step{
		{cmd: "rpush l x", want: one},
		{cmd: "SETBIT l 0 1", want: wrong},
		{cmd: "GETBIT l 0", want: wrong},
		{cmd: "BITCOUNT l", want: wrong},
		{cmd: "BITPOS l 1", want: wrong},
		{cmd: "BITOP AND d l", want: wrong},
		{cmd: "BITFIELD l GET u8 0", want: wrong},
		{cmd: "BITFIELD l SET u8 0 1", want: wrong},
		{cmd: "BITFIELD_RO l GET u8 0", want: wrong},
		// Argument errors come before the type check.
		{cmd: "SETBIT l -1 1", want: errReply(errBitOffset)},
		{cmd: "BITPOS l 2", want: errReply(errBitArg)},
	}},
	{"BitsOfIntEncodedStringsAreItsDigits", []step{
		{cmd: "SET k 1", want: ok},
		{cmd: "BITCOUNT k", want: num(3)}, // '1' = 0x31
		{cmd: "GETBIT k 2", want: one},
		{cmd: "BITPOS k 1", want: num(2)},
	}},
	{"BitcountRanges", []step{
		{cmd: "SET k foobar", want: ok},
		{cmd: "BITCOUNT k", want: num(26)},
		{cmd: "BITCOUNT k 0 0", want: num(4)},
		{cmd: "BITCOUNT k 1 1", want: num(6)},
		{cmd: "BITCOUNT k 1 1 BYTE", want: num(6)},
		{cmd: "BITCOUNT k 5 30 BIT", want: num(17)},
		{cmd: "BITCOUNT k -2 -1", want: num(7)},
		{cmd: "BITCOUNT k -1 -2", want: zero},
		{cmd: "BITCOUNT k 2 1", want: zero},
		{cmd: "BITCOUNT k 0 1000", want: num(26)},
		{cmd: "BITCOUNT k 0", want: syntax},
		{cmd: "BITCOUNT k 0 1 WORD", want: syntax},
		{cmd: "BITCOUNT k a 1", want: notInt},
		{cmd: "BITCOUNT nokey 0", want: zero}, // a missing key wins over syntax
	}},
	{"BitposFindsFirstSetOrClearBit", []step{
		{cmd: "BITPOS nokey 1", want: num(-1)},
		{cmd: "BITPOS nokey 0", want: zero},
		{argv: []string{"SET", "k", "\xff\xf0\x00"}, want: ok},
		{cmd: "BITPOS k 0", want: num(12)},
		{argv: []string{"SET", "k", "\x00\xff\xf0"}, want: ok},
		{cmd: "BITPOS k 1 0", want: num(8)},
		{cmd: "BITPOS k 1 2", want: num(16)},
		{cmd: "BITPOS k 1 2 -1 BYTE", want: num(16)},
		{cmd: "BITPOS k 1 7 15 BIT", want: num(8)},
		{cmd: "BITPOS k 1 7 -3 BIT", want: num(8)},
		{cmd: "BITPOS k 1 3 2", want: num(-1)},
		{argv: []string{"SET", "k", "\xff\xff\xff"}, want: ok},
		{cmd: "BITPOS k 0", want: num(24)},      // zero padding past the end
		{cmd: "BITPOS k 0 0", want: num(24)},    // still padded without an end
		{cmd: "BITPOS k 0 0 -1", want: num(-1)}, // not with an explicit end
		{cmd: "BITPOS k 0 0 -1 BIT", want: num(-1)},
		{cmd: "BITPOS k 2", want: errReply(errBitArg)},
		{cmd: "BITPOS k x", want: notInt},
		{cmd: "BITPOS k 1 0 1 WORD", want: syntax},
		{argv: []string{"SET", "k", ""}, want: ok},
		{cmd: "BITPOS k 0", want: num(-1)},
		{cmd: "BITPOS k 1", want: num(-1)},
	}},
	{"BitopComputesAndStoresRaw", []step{
		{cmd: "SET a foobar", want: ok},
		{cmd: "SET b abcdef", want: ok},
		{cmd: "BITOP AND d a b", want: num(6)},
		{cmd: "GET d", want: bulk("`bc`ab")},
		{cmd: "BITOP OR d a b", want: num(6)},
		{cmd: "GET d", want: bulk("goofev")},
		{cmd: "BITOP XOR d a b", want: num(6)},
		{argv: []string{"GET", "d"}, want: bulk("\x07\x0d\x0c\x06\x04\x14")},
		{cmd: "SET x 1", want: ok},
		{cmd: "BITOP NOT d x", want: num(1)},
		{argv: []string{"GET", "d"}, want: bulk("\xce")},
		{cmd: "BITOP AND d a nokey", want: num(6)},
		{argv: []string{"GET", "d"}, want: bulk("\x00\x00\x00\x00\x00\x00")},
		{cmd: "BITOP OR d nokey1 nokey2", want: zero},
		{cmd: "GET d", want: null2}, // an empty result deletes the destination
		{cmd: "BITOP NOT d a b", want: errReply(errBitopNot)},
		{cmd: "BITOP NAND d a b", want: syntax},
		{cmd: "BITOP OR a a b", want: num(6)}, // the destination may be a source
		{cmd: "GET a", want: bulk("goofev")},
	}},
	{"BitfieldGetSetIncrby", []step{
		{cmd: "BITFIELD k SET i8 0 100 GET i8 0 INCRBY u4 8 3 GET u16 0", want: arr(zero, num(100), num(3), num(100<<8|3<<4))},
		{cmd: "BITFIELD k SET u8 #1 255 GET u8 8", want: arr(num(48), num(255))},
		{cmd: "BITFIELD k GET i8 8", want: arr(num(-1))},
		{cmd: "BITFIELD k GET i64 0 GET u63 0", want: arr(num(0x64ff000000000000), num(0x64ff000000000000>>1))},
		{cmd: "BITFIELD k", want: "*0\r\n"},
		{cmd: "BITFIELD_RO k GET u8 0 GET u8 #1", want: arr(num(100), num(255))},
		{cmd: "BITFIELD_RO nokey GET i8 0", want: arr(zero)},
		{cmd: "BITFIELD_RO k SET u8 0 1", want: errReply(errBitfieldROGet)},
		{cmd: "BITFIELD k GET u64 0", want: errReply(errBitfieldType)},
		{cmd: "BITFIELD k GET i65 0", want: errReply(errBitfieldType)},
		{cmd: "BITFIELD k GET i0 0", want: errReply(errBitfieldType)},
		{cmd: "BITFIELD k GET I8 0", want: errReply(errBitfieldType)},
		{cmd: "BITFIELD k GET u8 -1", want: errReply(errBitOffset)},
		{cmd: "BITFIELD k GET u8 #-1", want: errReply(errBitOffset)},
		{cmd: "BITFIELD k GET u8 4294967296", want: errReply(errBitOffset)},
		{cmd: "BITFIELD k GET u8", want: syntax},
		{cmd: "BITFIELD k FOO u8 0", want: syntax},
		{cmd: "BITFIELD k OVERFLOW foo", want: errReply(errOverflowType)},
		{cmd: "BITFIELD k SET u8 0 x", want: notInt},
		{cmd: "BITFIELD k GET u8 4294967295", want: arr(zero)},
	}},
	{"BitfieldOverflowWrapSatFail", []step{
		{cmd: "BITFIELD k SET u2 0 1 INCRBY u2 0 5", want: arr(zero, num(2))},
		{cmd: "BITFIELD k OVERFLOW SAT INCRBY u2 0 5 INCRBY u2 0 -9", want: arr(num(3), zero)},
		{cmd: "BITFIELD k OVERFLOW FAIL INCRBY u2 0 4 INCRBY u2 0 3 GET u2 0", want: arr(null2, num(3), num(3))},
		{cmd: "BITFIELD k SET i8 8 127 INCRBY i8 8 1", want: arr(zero, num(-128))},
		{cmd: "BITFIELD k OVERFLOW SAT INCRBY i8 8 -1000 INCRBY i8 8 1000", want: arr(num(-128), num(127))},
		{cmd: "BITFIELD k OVERFLOW FAIL SET i8 8 128 SET i8 8 -128", want: arr(null2, num(127))},
		{cmd: "BITFIELD k SET i8 8 128 GET i8 8", want: arr(num(-128), num(-128))},
		{cmd: "BITFIELD k OVERFLOW SAT SET u8 16 -1 GET u8 16", want: arr(zero, num(255))},
		{cmd: "BITFIELD k SET i64 24 9223372036854775807 INCRBY i64 24 1", want: arr(zero, num(-9223372036854775808))},
		{cmd: "BITFIELD k OVERFLOW SAT INCRBY i64 24 -1 INCRBY i64 24 9223372036854775807", want: arr(num(math.MinInt64), num(-1))},
	}},
}

func TestBitmapScripts(t *testing.T) {
	for _, sc := range bitmapScripts {
		t.Run(sc.name, func(t *testing.T) {
			runBitsScript(t, newStringCtx(1), sc.steps)
		})
	}
}

// TestBitmapScriptsMatchRealRedis replays the scripts against a Redis server
// when REDSHARD_REDIS_ADDR names one (it is flushed).
func TestBitmapScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range bitmapScripts {
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

func TestSetbitMakesRawStringAndPropagatesOnlyChanges(t *testing.T) {
	c := newStringCtx(1)
	db := c.DBOf([]byte("k"))
	bitsDo(t, c, "SET", "k", "1")
	if db.Encoding(db.Peek([]byte("k"))) != EncInt {
		t.Fatal("SET 1 should be int-encoded")
	}
	// Bit 2 of '1' (0x31) is already set: no change, nothing logged, but
	// the value is unshared to raw as in Redis.
	if got := bitsDo(t, c, "SETBIT", "k", "2", "1"); got != one || c.Prop.Dirty != 0 {
		t.Fatalf("SETBIT no-op: reply %q dirty %d", got, c.Prop.Dirty)
	}
	if enc := db.Encoding(db.Peek([]byte("k"))); enc != EncRaw {
		t.Fatalf("encoding %s, want raw", EncNames[enc])
	}
	if bitsDo(t, c, "SETBIT", "k", "7", "0"); c.Prop.Dirty != 1 || c.Prop.Custom {
		t.Fatalf("SETBIT change: dirty %d custom %v", c.Prop.Dirty, c.Prop.Custom)
	}
	// Growing with a zero bit is a change too.
	if bitsDo(t, c, "SETBIT", "k", "100", "0"); c.Prop.Dirty != 1 {
		t.Fatalf("SETBIT growth: dirty %d", c.Prop.Dirty)
	}
	// BITFIELD counts each changed field; a failed overflow writes nothing.
	bitsDo(t, c, "BITFIELD", "k", "SET", "u8", "0", "0", "SET", "u8", "8", "7", "SET", "u8", "8", "7")
	if c.Prop.Dirty != 2 {
		t.Fatalf("BITFIELD dirty %d, want 2", c.Prop.Dirty)
	}
	bitsDo(t, c, "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "256")
	if c.Prop.Dirty != 0 {
		t.Fatalf("failed BITFIELD dirty %d, want 0", c.Prop.Dirty)
	}
}

func TestBitOffsetsObeyProtoMaxBulkLen(t *testing.T) {
	c := newStringCtx(1)
	c.Shards[0].Cfg.ProtoMaxBulkLen.Store(1024 * 1024)
	if got := bitsDo(t, c, "SETBIT", "k", strconv.Itoa(8*1024*1024), "1"); got != errReply(errBitOffset) {
		t.Fatalf("past the limit: %q", got)
	}
	if got := bitsDo(t, c, "SETBIT", "k", strconv.Itoa(8*1024*1024-1), "1"); got != zero {
		t.Fatalf("last bit: %q", got)
	}
	if got := bitsDo(t, c, "STRLEN", "k"); got != num(1024*1024) {
		t.Fatalf("STRLEN %q", got)
	}
	// The log is replayed whatever the limit is now.
	c.Shards[0].Loading = true
	defer func() { c.Shards[0].Loading = false }()
	if got := bitsDo(t, c, "SETBIT", "k", strconv.Itoa(8*1024*1024), "1"); got != zero {
		t.Fatalf("while loading: %q", got)
	}
}

func TestBitopAcrossShards(t *testing.T) {
	c := newStringCtx(4)
	// Find keys on four different shards.
	var keys []string
	seen := map[int]bool{}
	for i := 0; len(keys) < 4; i++ {
		k := "k" + strconv.Itoa(i)
		if s := ShardOf([]byte(k), 4); !seen[s] {
			seen[s] = true
			keys = append(keys, k)
		}
	}
	dest, a, b, x := keys[0], keys[1], keys[2], keys[3]
	bitsDo(t, c, "SET", a, "\xf0\x0f\xff")
	bitsDo(t, c, "SET", b, "\x3c")
	if got := bitsDo(t, c, "BITOP", "OR", dest, a, b); got != num(3) {
		t.Fatalf("BITOP OR: %q", got)
	}
	if got := bitsDo(t, c, "GET", dest); got != bulk("\xfc\x0f\xff") {
		t.Fatalf("dest: %q", got)
	}
	if enc := c.DBOf([]byte(dest)).Encoding(c.DBOf([]byte(dest)).Peek([]byte(dest))); enc != EncRaw {
		t.Fatalf("encoding %s", EncNames[enc])
	}
	if got := bitsDo(t, c, "BITOP", "AND", dest, a, b, x); got != num(3) {
		t.Fatalf("BITOP AND: %q", got)
	}
	if got := bitsDo(t, c, "GET", dest); got != bulk("\x00\x00\x00") {
		t.Fatalf("dest: %q", got)
	}
	if got := bitsDo(t, c, "BITOP", "XOR", dest, x); got != zero || c.Prop.Dirty != 1 {
		t.Fatalf("BITOP of missing keys: %q dirty %d", got, c.Prop.Dirty)
	}
	if c.DBOf([]byte(dest)).Peek([]byte(dest)) >= 0 {
		t.Fatal("empty BITOP result should delete the destination")
	}
	if bitsDo(t, c, "BITOP", "XOR", dest, x); c.Prop.Dirty != 0 {
		t.Fatal("deleting nothing should not be logged")
	}
}

// naiveBit is the reference the word-at-a-time code is checked against.
func naiveBit(p []byte, i int64) int {
	if i/8 >= int64(len(p)) {
		return 0
	}
	return int(p[i/8]>>(7-i%8)) & 1
}

func TestBitcountAndBitposMatchBitByBitScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := newStringCtx(1)
	for iter := 0; iter < 3000; iter++ {
		n := r.IntN(80)
		p := make([]byte, n)
		for i := range p {
			switch r.IntN(3) {
			case 0:
				p[i] = 0
			case 1:
				p[i] = 0xff
			default:
				p[i] = byte(r.Uint32())
			}
		}
		bitsDo(t, c, "SET", "k", string(p))
		isBit := r.IntN(2) == 0
		unit := "BYTE"
		total := int64(n)
		if isBit {
			unit = "BIT"
			total *= 8
		}
		start, end := int64(r.IntN(2*n+20)-n-10), int64(r.IntN(2*n+20)-n-10)
		if isBit {
			start, end = int64(r.IntN(16*n+20)-8*n-10), int64(r.IntN(16*n+20)-8*n-10)
		}
		// The reference range, in bits.
		s, e := start, end
		if s < 0 {
			s += total
		}
		if e < 0 {
			e += total
		}
		s, e = max(s, 0), min(max(e, 0), total-1)
		lo, hi := s, e
		if !isBit {
			lo, hi = s*8, e*8+7
		}
		var want int64
		if !(start < 0 && end < 0 && start > end) {
			for i := lo; i <= hi; i++ {
				want += int64(naiveBit(p, i))
			}
		}
		args := []string{"BITCOUNT", "k", strconv.FormatInt(start, 10), strconv.FormatInt(end, 10), unit}
		if got := bitsDo(t, c, args...); got != num(want) {
			t.Fatalf("%q on %x: got %q, want %d", args, p, got, want)
		}
		for bit := 0; bit <= 1; bit++ {
			wantPos := int64(-1)
			for i := lo; i <= hi; i++ {
				if naiveBit(p, i) == bit {
					wantPos = i
					break
				}
			}
			args := []string{"BITPOS", "k", strconv.Itoa(bit), strconv.FormatInt(start, 10), strconv.FormatInt(end, 10), unit}
			if got := bitsDo(t, c, args...); got != num(wantPos) {
				t.Fatalf("%q on %x: got %q, want %d", args, p, got, wantPos)
			}
		}
		// Whole string: a clear bit past the end is found in the padding.
		wantPos := int64(-1)
		for i := int64(0); i < int64(n)*8; i++ {
			if naiveBit(p, i) == 0 {
				wantPos = i
				break
			}
		}
		if wantPos < 0 && n > 0 {
			wantPos = int64(n) * 8
		}
		if got := bitsDo(t, c, "BITPOS", "k", "0"); got != num(wantPos) {
			t.Fatalf("BITPOS k 0 on %x: got %q, want %d", p, got, wantPos)
		}
		var ones int
		for _, b := range p {
			ones += bits.OnesCount8(b)
		}
		if got := bitsDo(t, c, "BITCOUNT", "k"); got != num(int64(ones)) {
			t.Fatalf("BITCOUNT on %x: got %q", p, got)
		}
	}
}

func TestBitfieldMatchesSetbit(t *testing.T) {
	// Fields written with BITFIELD read back bit by bit with GETBIT.
	r := rand.New(rand.NewPCG(3, 4))
	c := newStringCtx(1)
	for iter := 0; iter < 500; iter++ {
		width := 1 + r.IntN(63)
		off := r.IntN(100)
		v := r.Uint64() & (1<<width - 1)
		bitsDo(t, c, "BITFIELD", "k", "SET", "u"+strconv.Itoa(width), strconv.Itoa(off), strconv.FormatUint(v, 10))
		for j := 0; j < width; j++ {
			want := zero
			if v>>(width-1-j)&1 == 1 {
				want = one
			}
			if got := bitsDo(t, c, "GETBIT", "k", strconv.Itoa(off+j)); got != want {
				t.Fatalf("u%d at %d = %d: bit %d is %q", width, off, v, j, got)
			}
		}
		if got := bitsDo(t, c, "BITFIELD_RO", "k", "GET", "u"+strconv.Itoa(width), strconv.Itoa(off)); got != arr(num(int64(v))) {
			t.Fatalf("GET u%d %d: %q, want %d", width, off, got, v)
		}
	}
}
