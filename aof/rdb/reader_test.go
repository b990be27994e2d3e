package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Test-only encoders of the formats Redis 7.0 no longer writes.

// ziplist builds a ziplist of items, integers in Redis's encodings.
func ziplist(items ...string) []byte {
	b := make([]byte, 10)
	prev, last := 0, 10
	for _, s := range items {
		start := len(b)
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(prev))
		}
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(v, 10) == s {
			switch {
			case v >= 0 && v <= 12:
				b = append(b, 0xf1+byte(v))
			case v >= math.MinInt8 && v <= math.MaxInt8:
				b = append(b, 0xfe, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				b = binary.LittleEndian.AppendUint16(append(b, 0xc0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				b = append(b, 0xf0, byte(v), byte(v>>8), byte(v>>16))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				b = binary.LittleEndian.AppendUint32(append(b, 0xd0), uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(append(b, 0xe0), uint64(v))
			}
		} else {
			switch l := len(s); {
			case l < 64:
				b = append(b, byte(l))
			case l < 16384:
				b = append(b, 0x40|byte(l>>8), byte(l))
			default:
				b = binary.BigEndian.AppendUint32(append(b, 0x80), uint32(l))
			}
			b = append(b, s...)
		}
		prev, last = len(b)-start, start
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(last))
	binary.LittleEndian.PutUint16(b[8:], uint16(min(len(items), 0xffff)))
	return b
}

// zipmap builds a zipmap of alternating keys and values, with free bytes.
func zipmap(kv ...string) []byte {
	b := []byte{byte(len(kv) / 2)}
	zl := func(l int) {
		if l < 254 {
			b = append(b, byte(l))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 254), uint32(l))
		}
	}
	for i := 0; i < len(kv); i += 2 {
		zl(len(kv[i]))
		b = append(b, kv[i]...)
		zl(len(kv[i+1]))
		b = append(b, 2)
		b = append(b, kv[i+1]...)
		b = append(b, 0, 0)
	}
	return append(b, 0xff)
}

func listpack(items ...string) []byte {
	lp := newListpack(len(items))
	for _, s := range items {
		lp = lpAppend(lp, []byte(s))
	}
	return lpFinish(lp, len(items))
}

func rawStr(b []byte, s string) []byte { return AppendString(b, []byte(s), false) }

// file frames a body as an RDB file of version ver, with a CRC from 5 on.
func file(ver int, body []byte) []byte {
	b := append([]byte("REDIS"+strings.Repeat("0", 4-len(strconv.Itoa(ver)))+strconv.Itoa(ver)), body...)
	b = append(b, OpEOF)
	if ver >= 5 {
		b = binary.LittleEndian.AppendUint64(b, CRC64(0, b))
	}
	return b
}

// oldFile is every item and encoding Redis 2.6 to 6.2 could write.
func oldFile(ver int) ([]byte, []fixtureKey) { return oldFileSized(ver, 20000, true) }

// oldFileSized is oldFile with a ziplist string of big bytes, and the
// empty set if empty.
func oldFileSized(ver, big int, empty bool) ([]byte, []fixtureKey) {
	var b []byte
	var want []fixtureKey
	key := func(db int, t byte, name string, v Value, exp int64) {
		b = rawStr(append(b, t), name)
		want = append(want, fixtureKey{db, name, v, exp, t})
	}
	b = rawStr(rawStr(append(b, OpAux), "redis-ver"), "6.2.0")
	b = AppendLen(append(b, OpSelectDB), 0)
	b = AppendLen(AppendLen(append(b, OpResizeDB), 10), 1)
	// LIST, in elements.
	key(0, TypeList, "list", list(strs("a", "12", "")), -1)
	b = AppendLen(b, 3)
	b = AppendString(AppendString(AppendString(b, []byte("a"), false), []byte("12"), false), nil, false)
	// ZSET with text scores, the special lengths too.
	key(0, TypeZSet, "zset", zset(strs("a", "b", "c", "d"), func(i int) float64 { return []float64{1.5, math.Inf(1), math.Inf(-1), -3}[i] }), -1)
	b = AppendLen(b, 4)
	b = append(rawStr(b, "a"), 3, '1', '.', '5')
	b = append(rawStr(b, "b"), 254)
	b = append(rawStr(b, "c"), 255)
	b = append(rawStr(b, "d"), 2, '-', '3')
	// EXPIRETIME in seconds, then a zipmap hash.
	b = binary.LittleEndian.AppendUint32(append(b, OpExpireTime), 2000000000)
	key(0, TypeHashZipmap, "zipmap", hash(2, func(i int) (string, string) {
		return []string{"f1", strings.Repeat("k", 300)}[i], []string{"v1", strings.Repeat("v", 260)}[i]
	}), 2000000000000)
	b = rawStr(b, string(zipmap("f1", "v1", strings.Repeat("k", 300), strings.Repeat("v", 260))))
	items := []string{"0", "12", "13", "-1", "127", "-128", "300", "-32768", "70000", "-8388608", "2147483647", "-9000000000", "x", strings.Repeat("y", 70), strings.Repeat("z", big)}
	key(0, TypeListZiplist, "ziplist", list(strs(items...)), -1)
	b = rawStr(b, string(ziplist(items...)))
	key(0, TypeZSetZiplist, "zsetzl", zset(strs("a", "b"), func(i int) float64 { return []float64{-2, 0.25}[i] }), -1)
	b = rawStr(b, string(ziplist("a", "-2", "b", "0.25")))
	key(0, TypeHashZiplist, "hashzl", hash(2, func(i int) (string, string) { return []string{"a", "b"}[i], []string{"1", "two"}[i] }), -1)
	b = rawStr(b, string(ziplist("a", "1", "b", "two")))
	// QUICKLIST (1) of two ziplists.
	key(0, TypeListQuicklist, "quicklist", list(strs("1", "2", "three", "4")), -1)
	b = AppendLen(b, 2)
	b = rawStr(rawStr(b, string(ziplist("1", "2"))), string(ziplist("three", "4")))
	// Databases, IDLE and FREQ (version 9 and on).
	b = AppendLen(append(b, OpSelectDB), 3)
	b = AppendLen(append(b, OpIdle), 12345)
	key(3, TypeString, "idle", str("v"), -1)
	b = rawStr(b, "v")
	b = append(b, OpFreq, 7)
	b = binary.LittleEndian.AppendUint64(append(b, OpExpireTimeMS), 4102444800123)
	key(3, TypeSetIntset, "intset", set(strs("-70000", "1", "5")), 4102444800123)
	is := binary.LittleEndian.AppendUint32(nil, 4)
	is = binary.LittleEndian.AppendUint32(is, 3)
	for _, v := range []int32{-70000, 1, 5} {
		is = binary.LittleEndian.AppendUint32(is, uint32(v))
	}
	b = rawStr(b, string(is))
	// 7.0's listpack types, and QUICKLIST_2 with a PLAIN node.
	key(3, TypeHashListpack, "hashlp", hash(1, func(int) (string, string) { return "f", "-5000" }), -1)
	b = rawStr(b, string(listpack("f", "-5000")))
	key(3, TypeZSetListpack, "zsetlp", zset(strs("m"), func(int) float64 { return 1e-3 }), -1)
	b = rawStr(b, string(listpack("m", "0.001")))
	key(3, TypeListQuicklist2, "quicklist2", list(strs("a", "plain", "b")), -1)
	b = AppendLen(b, 3)
	b = rawStr(AppendLen(b, quicklistPacked), string(listpack("a")))
	b = rawStr(AppendLen(b, quicklistPlain), "plain")
	b = rawStr(AppendLen(b, quicklistPacked), string(listpack("b")))
	// An empty set is skipped, as Redis skips it.
	if empty {
		b = AppendLen(rawStr(append(b, TypeSet), "emptyset"), 0)
	}
	return file(ver, b), want
}

func TestReadOldEncodings(t *testing.T) {
	for _, ver := range []int{4, 9} {
		b, want := oldFile(ver)
		for _, stream := range []bool{false, true} {
			fc := collect(t, b, stream)
			checkContents(t, fc, want, true)
			if fc.summary.Version != ver || fc.summary.Checked != (ver >= 5) || fc.summary.Empty != 1 || fc.aux["redis-ver"] != "6.2.0" {
				t.Errorf("v%d: %+v %q", ver, fc.summary, fc.aux)
			}
		}
	}
	// IDLE and FREQ reach the key they precede, and only it.
	b, _ := oldFile(9)
	var idle, freq []int64
	Parse(b, &Handler{Key: func(e *Entry) error {
		idle, freq = append(idle, e.Idle), append(freq, int64(e.Freq))
		return nil
	}})
	if !slices.Equal(idle[7:9], []int64{12345, -1}) || !slices.Equal(freq[7:9], []int64{-1, 7}) {
		t.Errorf("idle %v freq %v", idle, freq)
	}
}

func TestReadOpcodes(t *testing.T) {
	// MODULE_AUX is skipped and reported; FUNCTION (7.0-rc) is rebuilt.
	var b []byte
	id := uint64(0)
	for _, c := range "mymodule1" {
		id = id<<6 | uint64(strings.IndexRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", c))
	}
	id = id<<10 | 3
	b = AppendLen(append(b, OpModuleAux), id)
	b = AppendLen(AppendLen(b, moduleOpUInt), 2)
	b = AppendLen(AppendLen(b, moduleOpSInt), 5)
	b = append(AppendLen(b, moduleOpFloat), 0, 0, 0, 0)
	b = append(AppendLen(b, moduleOpDouble), make([]byte, 8)...)
	b = rawStr(AppendLen(b, moduleOpString), "data")
	b = AppendLen(b, moduleOpEOF)
	b = rawStr(rawStr(append(b, OpFunction), "lib"), "LUA")
	b = rawStr(AppendLen(b, 0), "redis.register_function('f', function() return 1 end)")
	var mods []string
	var funcs []string
	s, err := Parse(file(10, b), &Handler{
		ModuleAux: func(mid uint64, name string) error { mods = append(mods, name); return nil },
		Function:  func(code string) error { funcs = append(funcs, code); return nil },
	})
	if err != nil || !slices.Equal(mods, []string{"mymodule1"}) || !slices.Equal(funcs, []string{"#!LUA name=lib\nredis.register_function('f', function() return 1 end)"}) {
		t.Fatalf("%+v %v %q %q", s, err, mods, funcs)
	}
	// A module value is refused, naming the module.
	mv := AppendLen(rawStr([]byte{TypeModule2}, "k"), id)
	_, err = Parse(file(10, mv), nil)
	var me *ModuleValueError
	if !errors.As(err, &me) || me.Name != "mymodule1" || !strings.Contains(err.Error(), "mymodule1") {
		t.Fatalf("module value: %v", err)
	}
	// Redis 7.2's types are a typed, named "unsupported".
	for _, typ := range []byte{TypeStreamListpacks3, TypeSetListpack, 8, 30} {
		_, err = Parse(file(10, rawStr([]byte{typ}, "k")), nil)
		var ue *UnsupportedTypeError
		if !errors.As(err, &ue) || ue.Type != typ {
			t.Fatalf("type %d: %v", typ, err)
		}
	}
	if _, err := Parse(file(10, rawStr([]byte{TypeStreamListpacks3}, "k")), nil); !strings.Contains(err.Error(), "stream-listpacks-3") {
		t.Fatal(err)
	}
	// Handler errors come back as they are.
	stop := errors.New("stop")
	if _, err := Parse(file(10, append(rawStr([]byte{0}, "k"), 0)), &Handler{Key: func(*Entry) error { return stop }}); err != stop {
		t.Fatal(err)
	}
}

func TestReadErrors(t *testing.T) {
	good, _ := oldFile(9)
	bad := func(name string, b []byte, want error) {
		t.Helper()
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = Read(bytes.NewReader(b), nil)
			} else {
				_, err = Parse(b, nil)
			}
			var e *Error
			if err == nil || !errors.As(err, &e) || (want != nil && !errors.Is(err, want)) {
				t.Errorf("%s (stream %v): %v, want %v", name, stream, err, want)
			}
		}
	}
	bad("empty", nil, ErrShort)
	bad("magic", []byte("RADIS0009\xff"), ErrMagic)
	bad("version 11", []byte("REDIS0011\xff"), ErrVersion)
	bad("version 0", []byte("REDIS0000\xff"), ErrVersion)
	flipped := slices.Clone(good)
	flipped[len(flipped)-1] ^= 1
	bad("checksum", flipped, ErrChecksum)
	// A zero checksum is "disabled".
	zero := slices.Clone(good)
	copy(zero[len(zero)-8:], make([]byte, 8))
	if s, err := Parse(zero, nil); err != nil || s.Checked {
		t.Errorf("zero checksum: %+v %v", s, err)
	}
	// Every truncation fails cleanly.
	for n := 0; n < len(good); n++ {
		if _, err := Parse(good[:n], nil); err == nil {
			t.Fatalf("truncated at %d accepted", n)
		}
	}
	// Huge counts and lengths fail before allocating.
	for name, body := range map[string][]byte{
		"huge list":   AppendLen(rawStr([]byte{TypeList}, "k"), 1<<62),
		"huge string": AppendLen(rawStr([]byte{TypeString}, "k"), 1<<62),
		"huge lzf":    append(rawStr([]byte{TypeString}, "k"), 0xc3, 2, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0),
		"huge hash":   AppendLen(rawStr([]byte{TypeHash}, "k"), 1<<40),
		"huge zset":   AppendLen(rawStr([]byte{TypeZSet2}, "k"), 1<<40),
		"huge nodes":  AppendLen(rawStr([]byte{TypeListQuicklist2}, "k"), 1<<40),
	} {
		bad(name, file(10, body), nil)
	}
	// Malformed values.
	dup := AppendLen(rawStr([]byte{TypeSet}, "k"), 2)
	dup = rawStr(rawStr(dup, "a"), "a")
	bad("duplicate set member", file(10, dup), ErrDuplicate)
	bad("duplicate hash field", file(10, rawStr(rawStr([]byte{TypeHashListpack}, "k"), string(listpack("a", "1", "a", "2")))), ErrDuplicate)
	nan := append(AppendLen(rawStr([]byte{TypeZSet2}, "k"), 1), 1, 'm')
	nan = binary.LittleEndian.AppendUint64(nan, math.Float64bits(math.NaN()))
	bad("nan score", file(10, nan), ErrNaNScore)
	bad("nan text score", file(10, append(AppendLen(rawStr([]byte{TypeZSet}, "k"), 1), 1, 'm', 253)), ErrNaNScore)
	bad("odd hash listpack", file(10, rawStr(rawStr([]byte{TypeHashListpack}, "k"), string(listpack("a")))), ErrBadBlob)
	unsorted := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 2), 2)
	unsorted = binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(unsorted, 5), 1)
	bad("unsorted intset", file(10, rawStr(rawStr([]byte{TypeSetIntset}, "k"), string(unsorted))), ErrBadBlob)
	lp := listpack("abc", "def")
	lp[len(lp)-2] ^= 1 // a backlen
	bad("listpack backlen", file(10, rawStr(rawStr([]byte{TypeHashListpack}, "k"), string(lp))), ErrBadBlob)
	zl := ziplist("abc", "def")
	zl[8] = 3 // the count
	bad("ziplist count", file(10, rawStr(rawStr([]byte{TypeListZiplist}, "k"), string(zl))), ErrBadBlob)
	bad("quicklist container", file(10, rawStr(AppendLen(AppendLen(rawStr([]byte{TypeListQuicklist2}, "k"), 1), 3), string(listpack("a")))), nil)
	bad("unknown string encoding", file(10, append(rawStr([]byte{TypeString}, "k"), 0xc5)), ErrBadEncoding)
	bad("bad module aux when", file(10, AppendLen(AppendLen(append([]byte{}, OpModuleAux), 1), 3)), nil)
	// Errors carry the offset of the failing item.
	_, err := Parse(file(10, append(rawStr([]byte{0}, "k"), 0xc5)), nil)
	if e := (*Error)(nil); !errors.As(err, &e) || e.Offset != 9 {
		t.Errorf("offset: %v", err)
	}
}

// TestBlobRoundTrip: the listpack and intset encoders against the parsers,
// for every integer boundary and string length class.
func TestBlobRoundTrip(t *testing.T) {
	var items []string
	for _, v := range []int64{0, 1, 127, 128, -1, -4096, 4095, -4097, 4096, math.MinInt16, math.MaxInt16, math.MaxInt16 + 1,
		-1 << 23, 1<<23 - 1, 1 << 23, math.MinInt32, math.MaxInt32, math.MaxInt32 + 1, math.MinInt64, math.MaxInt64} {
		items = append(items, strconv.FormatInt(v, 10))
	}
	items = append(items, "", "-0", "01", "+1", "1.5", strings.Repeat("a", 63), strings.Repeat("b", 64), strings.Repeat("c", 4095), strings.Repeat("d", 4096), strings.Repeat("e", 70000))
	got, err := parseListpack(listpack(items...))
	if err != nil || len(got) != len(items) {
		t.Fatalf("listpack: %d items, %v", len(got), err)
	}
	for i := range items {
		if string(got[i]) != items[i] {
			t.Fatalf("listpack item %d: %.40q, want %.40q", i, got[i], items[i])
		}
	}
	if got, err := parseZiplist(ziplist(items...)); err != nil || len(got) != len(items) || string(got[len(got)-1]) != items[len(items)-1] {
		t.Fatalf("ziplist: %v", err)
	}
	// A listpack of more than 65535 entries has the "unknown" count.
	many := make([]string, 70000)
	for i := range many {
		many[i] = "e"
	}
	if got, err := parseListpack(listpack(many...)); err != nil || len(got) != 70000 {
		t.Fatalf("big listpack: %d %v", len(got), err)
	}
	for _, members := range [][]string{{"1", "-1"}, {"40000", "0"}, {"-5000000000", "3"}} {
		b, ok := appendIntset(nil, strs(members...), &Options{})
		if !ok {
			t.Fatal(members)
		}
		blob, _, _ := ReadString(b)
		got, err := parseIntset(blob)
		want := slices.Clone(members)
		slices.SortFunc(want, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
		if err != nil || !slices.Equal(func() []string {
			var s []string
			for _, g := range got {
				s = append(s, string(g))
			}
			return s
		}(), want) {
			t.Fatalf("intset %v: %q %v", members, got, err)
		}
	}
	if _, ok := appendIntset(nil, strs("1", "01"), &Options{}); ok {
		t.Fatal("01 in an intset")
	}
}

// TestEncodingChoice: the writer's type for each kind and threshold.
func TestEncodingChoice(t *testing.T) {
	o := DefaultOptions()
	o.HashMaxListpackEntries, o.HashMaxListpackValue = 2, 3
	o.ZSetMaxListpackEntries, o.ZSetMaxListpackValue = 2, 3
	o.SetMaxIntsetEntries = 2
	for _, c := range []struct {
		v    Value
		want byte
	}{
		{str("x"), TypeString},
		{list(strs("a")), TypeListQuicklist2},
		{set(strs("1", "2")), TypeSetIntset},
		{set(strs("1", "2", "3")), TypeSet},
		{set(strs("1", "a")), TypeSet},
		{hash(2, func(i int) (string, string) { return strconv.Itoa(i), "abc" }), TypeHashListpack},
		{hash(3, func(i int) (string, string) { return strconv.Itoa(i), "abc" }), TypeHash},
		{hash(1, func(i int) (string, string) { return "abcd", "v" }), TypeHash},
		{zset(strs("a", "b"), func(i int) float64 { return 1 }), TypeZSetListpack},
		{zset(strs("a", "b", "c"), func(i int) float64 { return 1 }), TypeZSet2},
		{zset(strs("abcd"), func(i int) float64 { return 1 }), TypeZSet2},
	} {
		p, err := EncodeDump(&c.v, o)
		if err != nil || p[0] != c.want {
			t.Errorf("%s: type %s, want %s (%v)", describe(c.v), TypeName(p[0]), TypeName(c.want), err)
			continue
		}
		v, err := DecodeDump(p)
		if err != nil || !valuesEqual(v, c.v) {
			t.Errorf("%s: decodes to %s %v", describe(c.v), describe(v), err)
		}
	}
	// Quicklist fill: positive counts, and each byte level.
	items := seq(1000, func(i int) string { return strings.Repeat("x", i%50) })
	for _, fill := range []int{1, 7, 128, -1, -2, -3, -4, -5, -6, 0} {
		o := DefaultOptions()
		o.ListMaxListpackSize = fill
		v := list(items)
		p, _ := EncodeDump(&v, o)
		got, err := DecodeDump(p)
		if err != nil || !valuesEqual(got, v) {
			t.Fatalf("fill %d: %v", fill, err)
		}
	}
	nan := zset(strs("a"), func(int) float64 { return math.NaN() })
	if _, err := EncodeDump(&nan, o); err == nil {
		t.Error("NaN score encoded")
	}
	// Zset listpack scores: integers as integers, the rest as %.17g.
	z := zset(strs("a", "b", "c", "d", "e"), func(i int) float64 { return []float64{3, -0.0, 0.1, math.Inf(1), 1e300}[i] })
	p, _ := EncodeDump(&z, DefaultOptions())
	blob, _, _ := ReadString(p[1:])
	lp, _ := parseListpack(blob)
	if got := strings.Join(func() []string {
		var s []string
		for _, x := range lp {
			s = append(s, string(x))
		}
		return s
	}(), " "); got != "b 0 c 0.10000000000000001 a 3 e 1.0000000000000001e+300 d inf" {
		t.Errorf("zset listpack: %s", got)
	}
}

func TestDecodeDumpErrors(t *testing.T) {
	v := str("x")
	p, _ := EncodeDump(&v, DefaultOptions())
	if _, err := DecodeDump(p[:5]); err != ErrDumpPayload {
		t.Error(err)
	}
	empty := AppendFooter(AppendLen([]byte{TypeSet}, 0))
	if _, err := DecodeDump(empty); !errors.Is(err, ErrEmptyValue) {
		t.Error(err)
	}
	if _, err := DecodeDump(AppendFooter([]byte{TypeString, 5, 'a'})); !errors.Is(err, ErrShort) {
		t.Error(err)
	}
}

// TestReadLarge: values bigger than the reader's buffer and read-ahead
// (chunk), through Read, come back whole.
func TestReadLarge(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16+5)
	big[12345] = 'x'
	keys := []fixtureKey{
		{0, "big", Value{Kind: KindString, Str: big}, -1, TypeString},
		{0, "list", list(seq(200000, func(i int) string { return strconv.Itoa(i % 1000) })), -1, TypeListQuicklist2},
		{0, "hash", hash(1, func(int) (string, string) { return "f", string(big[:2<<20]) }), -1, TypeHash},
	}
	for _, compress := range []bool{false, true} {
		o := DefaultOptions()
		o.Compress = compress
		b := writeFixture(t, o, keys)
		for _, stream := range []bool{false, true} {
			fc := &fileContents{}
			var err error
			h := &Handler{Key: func(e *Entry) error {
				fc.keys = append(fc.keys, fixtureKey{e.DB, string(e.Key), e.Value, -1, e.Value.Type})
				return nil
			}}
			if stream {
				_, err = Read(bytes.NewReader(b), h)
			} else {
				_, err = Parse(b, h)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkContents(t, fc, keys, true)
		}
	}
}
