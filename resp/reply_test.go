package resp

import (
	"math"
	"testing"
)

func TestReplyEncodersWriteRedisProtocol(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"simple", AppendSimple(nil, "OK"), "+OK\r\n"},
		{"simple replaces newlines", AppendSimple(nil, "a\r\nb"), "+a  b\r\n"},
		{"ok", AppendOK(nil), "+OK\r\n"},
		{"error", AppendError(nil, "ERR foo"), "-ERR foo\r\n"},
		{"error with dash", AppendError(nil, "-WRONGTYPE x"), "-WRONGTYPE x\r\n"},
		{"error replaces inner newlines", AppendError(nil, "ERR a\nb\rc"), "-ERR a b c\r\n"},
		{"error trims outer newlines", AppendError(nil, "\r\nERR a\r\n"), "-ERR a\r\n"},
		{"int", AppendInt(nil, -42), ":-42\r\n"},
		{"int zero", AppendInt(nil, 0), ":0\r\n"},
		{"int min", AppendInt(nil, math.MinInt64), ":-9223372036854775808\r\n"},
		{"bulk", AppendBulk(nil, []byte("foo")), "$3\r\nfoo\r\n"},
		{"bulk empty", AppendBulk(nil, nil), "$0\r\n\r\n"},
		{"bulk binary", AppendBulk(nil, []byte("a\r\n\x00")), "$4\r\na\r\n\x00\r\n"},
		{"bulk string", AppendBulkString(nil, "hello"), "$5\r\nhello\r\n"},
		{"bulk int", AppendBulkInt(nil, -123), "$4\r\n-123\r\n"},
		{"array len", AppendArrayLen(nil, 3), "*3\r\n"},
		{"array len zero", AppendArrayLen(nil, 0), "*0\r\n"},
		{"null resp2", AppendNull(nil, 2), "$-1\r\n"},
		{"null resp3", AppendNull(nil, 3), "_\r\n"},
		{"null array resp2", AppendNullArray(nil, 2), "*-1\r\n"},
		{"null array resp3", AppendNullArray(nil, 3), "_\r\n"},
		{"map resp2", AppendMapLen(nil, 2, 2), "*4\r\n"},
		{"map resp3", AppendMapLen(nil, 2, 3), "%2\r\n"},
		{"set resp2", AppendSetLen(nil, 5, 2), "*5\r\n"},
		{"set resp3", AppendSetLen(nil, 5, 3), "~5\r\n"},
		{"push resp2", AppendPushLen(nil, 3, 2), "*3\r\n"},
		{"push resp3", AppendPushLen(nil, 3, 3), ">3\r\n"},
		{"bool true resp2", AppendBool(nil, true, 2), ":1\r\n"},
		{"bool false resp2", AppendBool(nil, false, 2), ":0\r\n"},
		{"bool true resp3", AppendBool(nil, true, 3), "#t\r\n"},
		{"bool false resp3", AppendBool(nil, false, 3), "#f\r\n"},
		{"verbatim resp2", AppendVerbatim(nil, []byte("a\nb"), 2), "$3\r\na\nb\r\n"},
		{"verbatim resp3", AppendVerbatim(nil, []byte("This is a verbatim\nstring"), 3), "=29\r\ntxt:This is a verbatim\nstring\r\n"},
		{"bignum resp2", AppendBigNumber(nil, "1234567999999999999999999999999999999", 2), "$37\r\n1234567999999999999999999999999999999\r\n"},
		{"bignum resp3", AppendBigNumber(nil, "1234567999999999999999999999999999999", 3), "(1234567999999999999999999999999999999\r\n"},
		{"appends to existing", AppendInt([]byte("x"), 1), "x:1\r\n"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// Expected texts were produced by glibc printf("%.17g") and by Redis's
// ld2string(LD_STR_HUMAN) logic on x86-64 for the same values.
var doubleCases = []struct {
	f     float64
	g     string // %.17g
	human string // LD_STR_HUMAN
}{
	{0, "0", "0"},
	{math.Copysign(0, -1), "-0", "0"},
	{1, "1", "1"},
	{-1, "-1", "-1"},
	{0.1, "0.10000000000000001", "0.10000000000000001"},
	{1.5, "1.5", "1.5"},
	{100, "100", "100"},
	{1e17, "1e+17", "100000000000000000"},
	{1e16, "10000000000000000", "10000000000000000"},
	{123456789012345678, "1.2345678901234568e+17", "123456789012345680"},
	{1e-5, "1.0000000000000001e-05", "0.00001"},
	{0.0001, "0.0001", "0.0001"},
	{0.0001234, "0.00012339999999999999", "0.0001234"},
	{5e-324, "4.9406564584124654e-324", "0"},
	{3.0000000000000004, "3.0000000000000004", "3.00000000000000044"},
	{1e21, "1e+21", "1000000000000000000000"},
	{2.5, "2.5", "2.5"},
	{0.5e-17, "5.0000000000000004e-18", "0.00000000000000001"},
	{2.5e-17, "2.4999999999999999e-17", "0.00000000000000002"},
	{-1e-20, "-9.9999999999999995e-21", "0"},
	{10.5, "10.5", "10.5"},
	{3.14, "3.1400000000000001", "3.14000000000000012"},
	{math.Inf(1), "inf", "inf"},
	{math.Inf(-1), "-inf", "-inf"},
	{math.NaN(), "nan", "nan"},
	{math.MaxFloat64, "1.7976931348623157e+308", "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368"},
}

func TestAppendDoubleMatchesAddReplyDouble(t *testing.T) {
	for _, c := range doubleCases {
		if got, want := string(AppendDouble(nil, c.f, 3)), ","+c.g+"\r\n"; got != want {
			t.Errorf("RESP3 %v: got %q, want %q", c.f, got, want)
		}
		if got, want := string(AppendDouble(nil, c.f, 2)), string(AppendBulkString(nil, c.g)); got != want {
			t.Errorf("RESP2 %v: got %q, want %q", c.f, got, want)
		}
	}
}

func TestFormatLongDoubleMatchesLdStrHuman(t *testing.T) {
	for _, c := range doubleCases {
		if got := string(FormatLongDouble([]byte("x"), c.f)); got != "x"+c.human {
			t.Errorf("%v: got %q, want %q", c.f, got, "x"+c.human)
		}
		if got, want := string(AppendHumanDouble(nil, c.f, 3)), ","+c.human+"\r\n"; got != want {
			t.Errorf("RESP3 %v: got %q, want %q", c.f, got, want)
		}
		if got, want := string(AppendHumanDouble(nil, c.f, 2)), string(AppendBulkString(nil, c.human)); got != want {
			t.Errorf("RESP2 %v: got %q, want %q", c.f, got, want)
		}
	}
}

func TestReplyEncodersDoNotAllocate(t *testing.T) {
	b := make([]byte, 0, 4096)
	v := []byte("value")
	a := testing.AllocsPerRun(100, func() {
		o := b[:0]
		o = AppendSimple(o, "OK")
		o = AppendError(o, "ERR a\nb")
		o = AppendInt(o, 12345)
		o = AppendBulk(o, v)
		o = AppendBulkString(o, "s")
		o = AppendBulkInt(o, 7)
		o = AppendArrayLen(o, 2)
		o = AppendMapLen(o, 2, 2)
		o = AppendNull(o, 3)
		o = AppendDouble(o, 3.14, 2)
		o = AppendDouble(o, 3.14, 3)
		o = AppendHumanDouble(o, math.MaxFloat64, 2)
		o = AppendHumanDouble(o, 1.5, 3)
		o = AppendVerbatim(o, v, 3)
		o = AppendBigNumber(o, "123", 3)
		_ = AppendBool(o, true, 3)
	})
	if a != 0 {
		t.Fatalf("%v allocs", a)
	}
}
