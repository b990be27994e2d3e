package rdb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc64"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
)

// crcBitwise is Redis's crc64 computed one bit at a time from the
// polynomial as Redis writes it, independent of hash/crc64's table.
func crcBitwise(crc uint64, p []byte) uint64 {
	const poly = 0xad93d23594c935a9
	for _, c := range p {
		for i := 0; i < 8; i++ { // reflected input: low bit first
			bit := (crc>>63)&1 ^ uint64(c>>i)&1
			crc <<= 1
			if bit != 0 {
				crc ^= poly
			}
		}
	}
	// Reflected output.
	var r uint64
	for i := 0; i < 64; i++ {
		r = r<<1 | crc>>i&1
	}
	return r
}

func TestCRC64CheckValue(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("CRC64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	if got := crcBitwise(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("bitwise reference = %#x", got)
	}
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 5000; n += 7 + n/4 {
		p := make([]byte, n)
		rng.Read(p)
		if got, want := CRC64(0, p), crcBitwise(0, p); got != want {
			t.Fatalf("len %d: CRC64 %#x, bitwise %#x", n, got, want)
		}
		// Continuation, as Redis's crc64(crc, ...) continues.
		if got := CRC64(CRC64(0, p[:n/2]), p[n/2:]); got != CRC64(0, p) {
			t.Fatalf("len %d: split CRC %#x", n, got)
		}
		// hash/crc64 over the same table (its own slicing from 2 KiB).
		if got, want := CRC64(0, p), ^crc64.Update(^uint64(0), jones, p); got != want {
			t.Fatalf("len %d: CRC64 %#x, hash/crc64 %#x", n, got, want)
		}
	}
}

func TestLen(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{0, "00"}, {63, "3f"}, {64, "4040"}, {16383, "7fff"}, {16384, "8000004000"},
		{1<<32 - 1, "80ffffffff"}, {1 << 32, "810000000100000000"}, {1<<64 - 1, "81ffffffffffffffff"},
	} {
		b := AppendLen([]byte{0xaa}, c.n)
		if got := hex.EncodeToString(b[1:]); got != c.want {
			t.Errorf("AppendLen(%d) = %s, want %s", c.n, got, c.want)
		}
		n, enc, size, err := ReadLen(append(b[1:], 0xee))
		if err != nil || enc || n != c.n || size != len(b)-1 {
			t.Errorf("ReadLen(%s) = %d %v %d %v", c.want, n, enc, size, err)
		}
		for k := 0; k < len(b)-1; k++ {
			if _, _, _, err := ReadLen(b[1 : 1+k]); err != ErrShort {
				t.Errorf("ReadLen(%x) = %v, want ErrShort", b[1:1+k], err)
			}
		}
	}
	// Longer forms than needed are read too.
	if n, _, size, err := ReadLen([]byte{0x80, 0, 0, 0, 5}); n != 5 || size != 5 || err != nil {
		t.Errorf("32-bit 5: %d %d %v", n, size, err)
	}
	if n, enc, size, err := ReadLen([]byte{0xc3}); n != EncLZF || !enc || size != 1 || err != nil {
		t.Errorf("0xc3: %d %v %d %v", n, enc, size, err)
	}
	for _, c := range []byte{0x82, 0x9f, 0xbf} {
		if _, _, _, err := ReadLen([]byte{c, 0, 0, 0, 0, 0, 0, 0, 0}); err != ErrBadLength {
			t.Errorf("ReadLen(%#x) = %v, want ErrBadLength", c, err)
		}
	}
}

func TestStringEncodings(t *testing.T) {
	for _, c := range []struct {
		s, want string // want: hex of the encoding without compression
	}{
		{"", "00"},
		{"0", "c000"}, {"-1", "c0ff"}, {"127", "c07f"}, {"-128", "c080"},
		{"128", "c18000"}, {"-32768", "c10080"}, {"32767", "c1ff7f"},
		{"32768", "c200800000"}, {"2147483647", "c2ffffff7f"}, {"-2147483648", "c200000080"},
		// Not canonical 32-bit integers: raw.
		{"2147483648", "0a" + hex.EncodeToString([]byte("2147483648"))},
		{"-0", "022d30"}, {"+1", "022b31"}, {"01", "023031"}, {" 1", "022031"}, {"1 ", "023120"},
		{"abc", "03616263"},
	} {
		b := AppendString(nil, []byte(c.s), true)
		if got := hex.EncodeToString(b); got != c.want {
			t.Errorf("AppendString(%q) = %s, want %s", c.s, got, c.want)
		}
		s, size, err := ReadString(append(b, 0xee))
		if err != nil || string(s) != c.s || size != len(b) {
			t.Errorf("ReadString(%s) = %q %d %v", c.want, s, size, err)
		}
		for k := 0; k < len(b); k++ {
			if _, _, err := ReadString(b[:k]); err == nil {
				t.Errorf("ReadString(%x) of a cut %q: no error", b[:k], c.s)
			}
		}
	}
	if _, _, err := ReadString([]byte{0xc4, 0}); err != ErrBadEncoding {
		t.Errorf("0xc4: %v, want ErrBadEncoding", err)
	}
}

func TestStringCompression(t *testing.T) {
	long := []byte(strings.Repeat("hello world ", 20))
	b := AppendString(nil, long, true)
	if b[0] != 0xc3 || len(b) >= len(long) {
		t.Fatalf("%d bytes not compressed: % x", len(long), b[:8])
	}
	if s, size, err := ReadString(b); err != nil || !bytes.Equal(s, long) || size != len(b) {
		t.Fatalf("ReadString(compressed) = %q %d %v", s, size, err)
	}
	if b := AppendString(nil, long, false); b[0] == 0xc3 {
		t.Fatal("compressed without the flag")
	}
	// 20 bytes are never compressed (Redis's threshold), nor data that
	// does not save 4 bytes.
	if b := AppendString(nil, []byte(strings.Repeat("a", 20)), true); b[0] != 20 {
		t.Fatalf("20 bytes: % x", b)
	}
	rnd := make([]byte, 100)
	rand.New(rand.NewSource(2)).Read(rnd)
	if b := AppendString(nil, rnd, true); b[0] == 0xc3 {
		t.Fatal("random bytes compressed")
	}
	// A declared length of 0 takes any compressed bytes, as Redis does.
	if s, size, err := ReadString([]byte{0xc3, 2, 0, 0xff, 0xff, 0xee}); err != nil || len(s) != 0 || size != 5 {
		t.Fatalf("ulen 0: %q %d %v", s, size, err)
	}
	// A declared length no LZF input of that size can reach.
	if _, _, err := ReadString([]byte{0xc3, 1, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0}); err != ErrLZF {
		t.Fatalf("huge ulen: %v", err)
	}
}

func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	inputs := [][]byte{nil, []byte("a"), []byte("ab"), []byte("abc"), []byte("aaaa"),
		bytes.Repeat([]byte("a"), 100000), bytes.Repeat([]byte("abcdefgh"), 3000)}
	for n := 0; n < 2000; n += 37 {
		p := make([]byte, n)
		for i := range p { // a small alphabet, so there are matches
			p[i] = "abcd"[rng.Intn(4)]
		}
		inputs = append(inputs, p)
		q := make([]byte, n)
		rng.Read(q)
		inputs = append(inputs, q)
	}
	// Matches far back: at and beyond the 8192-byte window.
	far := make([]byte, 20000)
	rng.Read(far[:100])
	copy(far[8192:], far[:100])
	copy(far[8193+100:], far[:100])
	inputs = append(inputs, far)
	for _, in := range inputs {
		c := LZFCompress(in)
		out, err := LZFDecompress(c, len(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("len %d: round trip failed: %v", len(in), err)
		}
		if len(in) > 0 {
			if _, err := LZFDecompress(c, len(in)-1); err != ErrLZF {
				t.Fatalf("len %d: short output: %v", len(in), err)
			}
			if _, err := LZFDecompress(c, len(in)+1); err != ErrLZF {
				t.Fatalf("len %d: long output: %v", len(in), err)
			}
		}
	}
	if c := LZFCompress(bytes.Repeat([]byte("a"), 100000)); len(c) > 100000/lzfMaxRef*3+8 { // 3 bytes per maximal match
		t.Fatalf("100000 a's compress to %d bytes", len(c))
	}
	for _, bad := range []string{
		"01",         // literal of 2, 1 byte of input
		"2000",       // match before the start
		"e0",         // match without its offset byte
		"e0ff",       // extended match without its offset byte
		"0061200001", // a, then a match of 3 at distance 1, then a stray literal control
	} {
		in, _ := hex.DecodeString(bad)
		if out, err := LZFDecompress(in, 100); err != ErrLZF {
			t.Errorf("LZFDecompress(%s) = %q %v, want ErrLZF", bad, out, err)
		}
	}
	// An overlapping match: "a" then 9 more from distance 1.
	if out, err := LZFDecompress([]byte{0x00, 'a', 7 << 5, 0, 0}, 10); err != nil || string(out) != "aaaaaaaaaa" {
		t.Errorf("overlap: %q %v", out, err)
	}
}

func readHex(t *testing.T, name string) []byte {
	t.Helper()
	h, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The two libraries of testdata/*.hex, loaded with FUNCTION LOAD into a
// redis-server 7.0.15 and dumped with FUNCTION DUMP: "long" (first in
// Redis's order) is LZF-compressed under rdbcompression yes, "short" is
// not (compression would not save 4 bytes).
func redisLibraries(t *testing.T) []string {
	var codes []string
	for _, name := range []string{"long.lua", "short.lua"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, string(b))
	}
	return codes
}

func TestParseRedisFunctionDump(t *testing.T) {
	want := redisLibraries(t)
	payload := readHex(t, "function-dump-7.0.15.hex")
	if payload[0] != OpFunction2 || payload[1] != 0xc3 {
		t.Fatalf("the fixture's first library is not LZF-compressed: % x", payload[:2])
	}
	got, err := ParseFunctions(payload)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseFunctions = %q, %v; want %q", got, err, want)
	}
	// With rdbcompression no, Redis writes exactly what DumpFunctions does.
	plain := readHex(t, "function-dump-7.0.15-rdbcompression-no.hex")
	if got, err := ParseFunctions(plain); err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseFunctions(rdbcompression no) = %q, %v", got, err)
	}
	if mine := DumpFunctions(want); !bytes.Equal(mine, plain) {
		t.Fatalf("DumpFunctions differs from redis-server's rdbcompression-no dump:\n%x\n%x", mine, plain)
	}
}

func TestDumpFunctionsRoundTrip(t *testing.T) {
	for _, codes := range [][]string{
		{},
		{"#!lua name=a\nredis.register_function('f', function() return 1 end)"},
		{"1", "-5", "", strings.Repeat("x", 20000), "#!lua name=b\n"},
	} {
		p := DumpFunctions(codes)
		if v := binary.LittleEndian.Uint16(p[len(p)-10:]); v != 10 {
			t.Fatalf("version %d", v)
		}
		got, err := ParseFunctions(p)
		if err != nil || !slices.Equal(got, codes) {
			t.Fatalf("round trip of %d codes: %d codes, %v", len(codes), len(got), err)
		}
	}
	// Readers take every string form: integers and LZF too.
	var body []byte
	for _, s := range []string{"12", strings.Repeat("abc", 30)} {
		body = AppendString(append(body, OpFunction2), []byte(s), true)
	}
	if got, err := ParseFunctions(AppendFooter(body)); err != nil || !slices.Equal(got, []string{"12", strings.Repeat("abc", 30)}) {
		t.Fatalf("encoded strings: %q %v", got, err)
	}
}

func TestParseFunctionsOld(t *testing.T) {
	old := func(desc bool) []byte {
		b := []byte{OpFunction}
		b = AppendString(b, []byte("mylib"), false)
		b = AppendString(b, []byte("LUA"), false)
		if desc {
			b = AppendLen(b, 1)
			b = AppendString(b, []byte("a description"), false)
		} else {
			b = AppendLen(b, 0)
		}
		return AppendString(b, []byte("redis.register_function('f', function() return 1 end)"), true)
	}
	want := "#!LUA name=mylib\nredis.register_function('f', function() return 1 end)"
	for _, desc := range []bool{false, true} {
		body := append(old(desc), OpFunction2, 2, 'h', 'i')
		got, err := ParseFunctions(AppendFooter(body))
		if err != nil || !slices.Equal(got, []string{want, "hi"}) {
			t.Fatalf("desc %v: %q %v", desc, got, err)
		}
	}
	// Each field cut short names itself, as Redis's rdbFunctionLoad does.
	full := old(true)
	for _, c := range []struct {
		cut  int
		want error
	}{
		{1, ErrLibraryName}, {1 + 6, ErrEngineName}, {1 + 6 + 4, ErrDescIndicator},
		{1 + 6 + 4 + 1, ErrDescription}, {1 + 6 + 4 + 1 + 14, ErrLibraryBlob},
	} {
		// Bytes the field cannot take: a bad length form and no more
		// (the footer's bytes are read too, as Redis reads them).
		body := append(slices.Clone(full[:c.cut]), 0x82)
		if _, err := ParseFunctions(AppendFooter(body)); err != c.want {
			t.Errorf("cut at %d: %v, want %v", c.cut, err, c.want)
		}
	}
}

func TestParseFunctionsErrors(t *testing.T) {
	good := DumpFunctions([]string{"#!lua name=a\nredis.register_function('f', function() return 1 end)"})
	badCRC := slices.Clone(good)
	badCRC[3] ^= 1
	v11 := slices.Clone(good[:len(good)-10])
	v11 = binary.LittleEndian.AppendUint16(v11, 11)
	v11 = binary.LittleEndian.AppendUint64(v11, CRC64(0, v11))
	v9 := slices.Clone(good[:len(good)-10])
	v9 = binary.LittleEndian.AppendUint16(v9, 9)
	v9 = binary.LittleEndian.AppendUint64(v9, CRC64(0, v9))
	for _, c := range []struct {
		name    string
		payload []byte
		want    error
	}{
		{"empty", nil, ErrDumpPayload},
		{"9 bytes", good[len(good)-9:], ErrDumpPayload},
		{"bad crc", badCRC, ErrDumpPayload},
		{"version 11", v11, ErrDumpPayload},
		{"version 9", v9, nil}, // older versions are accepted
		{"footer only", AppendFooter(nil), nil},
		{"not a function", AppendFooter([]byte{0}), ErrNotFunction},
		{"a string value", AppendFooter([]byte{0, 1, 'k', 1, 'v'}), ErrNotFunction},
		{"function2 bad length", AppendFooter([]byte{OpFunction2, 0x82}), ErrLibraryPayload},
		{"function2 too long", AppendFooter([]byte{OpFunction2, 0x3f, 'x'}), ErrLibraryPayload},
		{"function2 bad lzf", AppendFooter([]byte{OpFunction2, 0xc3, 2, 5, 0x01, 'x'}), ErrLibraryPayload},
	} {
		_, err := ParseFunctions(c.payload)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if ErrDumpPayload.Error() != "ERR DUMP payload version or checksum are wrong" {
		t.Fatal(ErrDumpPayload)
	}
}

// FuzzParseFunctions: ParseFunctions never panics, and whatever it accepts
// survives DumpFunctions and ParseFunctions unchanged. The fuzzer also
// frames the input with a valid footer, so the body parser is reached.
func FuzzParseFunctions(f *testing.F) {
	f.Add([]byte{})
	f.Add(DumpFunctions([]string{"#!lua name=a\n", "x"}))
	for _, name := range []string{"function-dump-7.0.15.hex", "function-dump-7.0.15-rdbcompression-no.hex"} {
		h, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := hex.DecodeString(strings.TrimSpace(string(h)))
		f.Add(b)
		f.Add(b[:len(b)-10]) // a body, to be framed below
	}
	f.Add([]byte{OpFunction2, 0xc3, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{OpFunction, 1, 'n', 1, 'e', 0xc3, 1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range [][]byte{data, AppendFooter(slices.Clone(data))} {
			codes, err := ParseFunctions(p)
			if err != nil {
				continue
			}
			again, err := ParseFunctions(DumpFunctions(codes))
			if err != nil || !slices.Equal(again, codes) {
				t.Fatalf("re-dump of %q: %q %v", codes, again, err)
			}
		}
		// The string reader on its own, at every offset.
		for i := 0; i < len(data) && i < 64; i++ {
			if s, n, err := ReadString(data[i:]); err == nil && (n <= 0 || n > len(data)-i || len(s) > 264*len(data)) {
				t.Fatalf("ReadString(%x) took %d bytes, %d out", data[i:], n, len(s))
			}
		}
	})
}
