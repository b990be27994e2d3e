package resp

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// result is one outcome of parsing a stream: a command or the final error.
type result struct {
	args []string // nil for an empty command
	err  string
}

// parseWhole parses every complete command in input and stops at the first
// error or at an incomplete tail. It returns the outcomes and the number of
// bytes consumed.
func parseWhole(p *Parser, input []byte) ([]result, int) {
	p.Reset()
	var out []result
	var argv [][]byte
	pos := 0
	for pos < len(input) {
		args, n, err := p.Next(input[pos:], argv)
		if err != nil {
			return append(out, result{err: err.Error()}), pos
		}
		if n == 0 {
			break
		}
		out = append(out, toResult(args))
		argv = args
		pos += n
	}
	return out, pos
}

// parseChunked feeds input in the given chunk sizes, appending each chunk to
// a buffer that keeps the unconsumed bytes (reallocating it as it grows), as
// a connection read loop does.
func parseChunked(p *Parser, input []byte, sizes func() int) ([]result, int) {
	p.Reset()
	var out []result
	var argv [][]byte
	var buf []byte
	consumed, fed := 0, 0
	for fed < len(input) {
		k := sizes()
		if k > len(input)-fed {
			k = len(input) - fed
		}
		buf = append(buf, input[fed:fed+k]...)
		fed += k
		start := 0
		for start < len(buf) {
			args, n, err := p.Next(buf[start:], argv)
			if err != nil {
				return append(out, result{err: err.Error()}), consumed
			}
			if n == 0 {
				break
			}
			if n > len(buf)-start {
				panic("consumed more than the buffer")
			}
			out = append(out, toResult(args))
			argv = args
			consumed += n
			start += n
		}
		if start > 0 {
			// Move the unconsumed bytes to a fresh buffer, so that any
			// state kept as slices instead of offsets would be caught.
			buf = append([]byte(nil), buf[start:]...)
		}
	}
	return out, consumed
}

func toResult(args [][]byte) result {
	if len(args) == 0 {
		return result{}
	}
	r := result{args: make([]string, len(args))}
	for i, a := range args {
		r.args[i] = string(a)
	}
	return r
}

func cmd(args ...string) result { return result{args: args} }

func mbulk(args ...string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.String()
}

func TestParserParsesPipelinedCommands(t *testing.T) {
	input := mbulk("SET", "key", "value") + "PING\r\n" + mbulk("GET", "key") +
		"\r\n" + "*0\r\n" + "echo \"a b\"\n" + mbulk("MSET", "a", "", "b", "\r\n")
	var p Parser
	got, n := parseWhole(&p, []byte(input))
	want := []result{
		cmd("SET", "key", "value"), cmd("PING"), cmd("GET", "key"),
		{}, {}, cmd("echo", "a b"), cmd("MSET", "a", "", "b", "\r\n"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if n != len(input) {
		t.Fatalf("consumed %d of %d bytes", n, len(input))
	}
}

func TestParserReturnsSubslicesOfBuffer(t *testing.T) {
	input := []byte(mbulk("SET", "k", "v") + "GET k\r\n")
	var p Parser
	args, n, err := p.Next(input, nil)
	if err != nil || n != 27 || len(args) != 3 {
		t.Fatalf("got %q %d %v", args, n, err)
	}
	if &args[2][0] != &input[24] {
		t.Fatal("multibulk argument is not a sub-slice of the buffer")
	}
	if cap(args[1]) != len(args[1]) {
		t.Fatal("argument capacity exposes the rest of the buffer")
	}
	args2, _, _ := p.Next(input[n:], args)
	if &args2[0] != &args[0] {
		t.Fatal("argv slice was not reused")
	}
	if &args2[1][0] != &input[n+4] {
		t.Fatal("unquoted inline argument is not a sub-slice of the buffer")
	}
}

func TestParserReturnsEmptyCommands(t *testing.T) {
	for _, in := range []string{"\r\n", "\n", "   \r\n", " \t \n", "*0\r\n", "*-1\r\n", "*-10\r\n", "*-3000000000\r\n"} {
		var p Parser
		args, n, err := p.Next([]byte(in+"PING\r\n"), nil)
		if err != nil || n != len(in) || len(args) != 0 {
			t.Errorf("%q: got args %q n %d err %v, want empty command of %d bytes", in, args, n, err, len(in))
		}
	}
}

func TestParserResumesAtEverySplitPoint(t *testing.T) {
	input := []byte(mbulk("SET", "key", strings.Repeat("v", 100)) + "PING\r\n" +
		"set \"quoted\\x41\" 'single'\n" + mbulk("GET", "key") + "\r\n" + "*0\r\n" +
		mbulk("HSET", "h", "f1", "1", "f2", ""))
	var p Parser
	want, wantN := parseWhole(&p, input)
	if wantN != len(input) || len(want) != 7 {
		t.Fatalf("whole input: %d commands, %d of %d bytes", len(want), wantN, len(input))
	}
	for k := 0; k <= len(input); k++ {
		// Two chunks split at k.
		first := true
		got, n := parseChunked(&p, input, func() int {
			if first {
				first = false
				return k
			}
			return len(input)
		})
		if !reflect.DeepEqual(got, want) || n != len(input) {
			t.Fatalf("split at %d: got %q (%d bytes), want %q", k, got, n, want)
		}
	}
	got, n := parseChunked(&p, input, func() int { return 1 })
	if !reflect.DeepEqual(got, want) || n != len(input) {
		t.Fatalf("byte by byte: got %q (%d bytes), want %q", got, n, want)
	}
}

func TestParserResumesWithSameBufferGrowingInPlace(t *testing.T) {
	input := []byte(mbulk("SET", "k", strings.Repeat("x", 1000)))
	var p Parser
	for k := 1; k < len(input); k++ {
		if args, n, err := p.Next(input[:k], nil); args != nil || n != 0 || err != nil {
			t.Fatalf("prefix %d: got %q %d %v, want incomplete", k, args, n, err)
		}
	}
	args, n, err := p.Next(input, nil)
	if err != nil || n != len(input) || len(args) != 3 || len(args[2]) != 1000 {
		t.Fatalf("got %d args, n %d, err %v", len(args), n, err)
	}
}

func TestParserProtocolErrors(t *testing.T) {
	big := strings.Repeat("1", 64*1024+1)
	desync := func(prefix string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for b.Len() <= 64*1024 {
			b.WriteString(strings.Repeat("A", 1024) + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"rejects out of range multibulk length", "*3000000000\r\n", "Protocol error: invalid multibulk length"},
		{"rejects multibulk length above INT_MAX", "*2147483648\r\n", "Protocol error: invalid multibulk length"},
		{"rejects non-numeric multibulk length", "*abc\r\n", "Protocol error: invalid multibulk length"},
		{"rejects empty multibulk length", "*\r\n", "Protocol error: invalid multibulk length"},
		{"rejects multibulk length with plus sign", "*+1\r\n", "Protocol error: invalid multibulk length"},
		{"rejects multibulk length with leading zero", "*01\r\n", "Protocol error: invalid multibulk length"},
		{"rejects multibulk length with space", "*1 \r\n", "Protocol error: invalid multibulk length"},
		{"rejects multibulk length ended by LF only", "*1\n$1\r\na\r\n", "Protocol error: invalid multibulk length"},
		{"rejects wrong multibulk payload header", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", "Protocol error: expected '$', got 'f'"},
		{"rejects multibulk not followed by bulk", "*1\r\nfoo\r\n", "Protocol error: expected '$', got 'f'"},
		{"reports CR as space in expected dollar", "*1\r\n\r\n", "Protocol error: expected '$', got ' '"},
		{"reports LF as space in expected dollar", "*1\r\n\n\r\n", "Protocol error: expected '$', got ' '"},
		{"rejects negative bulk length", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$-10\r\n", "Protocol error: invalid bulk length"},
		{"rejects bulk length above proto-max-bulk-len", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$2000000000\r\n", "Protocol error: invalid bulk length"},
		{"rejects non-numeric bulk length", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$blabla\r\n", "Protocol error: invalid bulk length"},
		{"rejects empty bulk length", "*1\r\n$\r\n", "Protocol error: invalid bulk length"},
		{"rejects minus zero bulk length", "*1\r\n$-0\r\n", "Protocol error: invalid bulk length"},
		{"rejects overflowing bulk length", "*1\r\n$99999999999999999999\r\n", "Protocol error: invalid bulk length"},
		{"rejects unbalanced quotes", "set \"\"\"test-key\"\"\" test-value\r\nping\r\n", "Protocol error: unbalanced quotes in request"},
		{"rejects unterminated double quote", "set \"foo\r\n", "Protocol error: unbalanced quotes in request"},
		{"rejects unterminated single quote", "set 'foo\r\n", "Protocol error: unbalanced quotes in request"},
		{"rejects text after closing quote", "set \"foo\"bar\r\n", "Protocol error: unbalanced quotes in request"},
		{"rejects text after closing single quote", "set 'foo'bar\r\n", "Protocol error: unbalanced quotes in request"},
		{"rejects too big mbulk count string", "*" + big, "Protocol error: too big mbulk count string"},
		{"rejects too big bulk count string", "*1\r\n$" + big, "Protocol error: too big bulk count string"},
		{"rejects too big inline request", "set" + big, "Protocol error: too big inline request"},
		{"desync regression NUL inline", desync("\x00"), "Protocol error: too big inline request"},
		{"desync regression NUL after star", desync("*\x00"), "Protocol error: too big mbulk count string"},
		{"desync regression NUL after dollar", desync("$\x00"), "Protocol error: too big inline request"},
		{"desync regression NUL in bulk count", "*1\r\n" + desync("$\x00"), "Protocol error: too big bulk count string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			got, _ := parseWhole(&p, []byte(tt.input))
			if len(got) == 0 || got[len(got)-1].err != tt.want {
				t.Fatalf("got %q, want error %q", got, tt.want)
			}
			// The same error must come out when the input trickles in.
			got, _ = parseChunked(&p, []byte(tt.input), func() int { return 1000 })
			if len(got) == 0 || got[len(got)-1].err != tt.want {
				t.Fatalf("chunked: got %q, want error %q", got, tt.want)
			}
		})
	}
}

func TestParserErrorIsProtocolError(t *testing.T) {
	var p Parser
	_, n, err := p.Next([]byte("*x\r\n"), nil)
	var pe *ProtocolError
	if !errors.As(err, &pe) || n != 0 {
		t.Fatalf("got %T %v n=%d", err, err, n)
	}
	if got := string(pe.AppendTo(nil)); got != "-ERR Protocol error: invalid multibulk length\r\n" {
		t.Fatalf("AppendTo = %q", got)
	}
}

func TestParserLimitsAreInclusive(t *testing.T) {
	at := strings.Repeat("1", 64*1024) // exactly PROTO_INLINE_MAX_SIZE bytes
	tests := []struct {
		name  string
		input string
	}{
		{"inline of exactly 64KB without newline waits", at},
		{"mbulk line of exactly 64KB waits", "*" + at[1:]},
		{"bulk count line of exactly 64KB waits", "*1\r\n$" + at[1:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			args, n, err := p.Next([]byte(tt.input), nil)
			if args != nil || n != 0 || err != nil {
				t.Fatalf("got %q %d %v, want incomplete", args, n, err)
			}
		})
	}
}

func TestParserAcceptsLongInlineLineWhenNewlineIsBuffered(t *testing.T) {
	// Redis applies the inline limit only while no newline is buffered.
	long := "echo " + strings.Repeat("a", 100*1024) + "\r\n"
	var p Parser
	args, n, err := p.Next([]byte(long), nil)
	if err != nil || n != len(long) || len(args) != 2 {
		t.Fatalf("got %d args n %d err %v", len(args), n, err)
	}
}

func TestParserAppliesConfiguredLimits(t *testing.T) {
	lim := Limits{MaxBulkLen: 10, MaxMultibulkLen: 3, MaxInlineLen: 8}
	tests := []struct {
		name, input string
		want        string // error, or "" for success
	}{
		{"bulk at MaxBulkLen", mbulk("0123456789"), ""},
		{"bulk above MaxBulkLen", mbulk("0123456789a"), "Protocol error: invalid bulk length"},
		{"multibulk at MaxMultibulkLen", mbulk("a", "b", "c"), ""},
		{"multibulk above MaxMultibulkLen", mbulk("a", "b", "c", "d"), "Protocol error: invalid multibulk length"},
		{"inline above MaxInlineLen", "123456789", "Protocol error: too big inline request"},
		{"mbulk line above MaxInlineLen", "*12345678", "Protocol error: too big mbulk count string"},
		{"bulk line above MaxInlineLen", "*1\r\n$12345678", "Protocol error: too big bulk count string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parser{Limits: lim}
			got, _ := parseWhole(&p, []byte(tt.input))
			if tt.want == "" {
				if len(got) != 1 || got[0].err != "" {
					t.Fatalf("got %q, want one command", got)
				}
				return
			}
			if len(got) != 1 || got[0].err != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParserZeroLimitsMeanDefaults(t *testing.T) {
	if (Parser{}).Limits != (Limits{}) {
		t.Fatal("unexpected")
	}
	d := DefaultLimits()
	if d.MaxBulkLen != 512*1024*1024 || d.MaxMultibulkLen != 1<<31-1 || d.MaxInlineLen != 64*1024 {
		t.Fatalf("DefaultLimits() = %+v", d)
	}
	var p Parser
	if _, _, err := p.Next([]byte("*1\r\n$536870912\r\n"), nil); err != nil {
		t.Fatalf("512MB bulk rejected: %v", err)
	}
	p.Reset()
	if _, _, err := p.Next([]byte("*1\r\n$536870913\r\n"), nil); err == nil || err.Error() != "Protocol error: invalid bulk length" {
		t.Fatalf("512MB+1 bulk: %v", err)
	}
}

func TestParserAppliesUnauthenticatedLimits(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"ten elements allowed", "*10\r\n", ""},
		{"eleven elements rejected", "*11\r\n", "Protocol error: unauthenticated multibulk length"},
		{"bulk of 16384 allowed", "*1\r\n$16384\r\n", ""},
		{"bulk of 16385 rejected", "*1\r\n$16385\r\n", "Protocol error: unauthenticated bulk length"},
		{"invalid length checked first", "*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parser{Unauthenticated: true}
			_, _, err := p.Next([]byte(tt.input), nil)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParserSkipsBulkTerminatorWithoutCheckingLikeRedis(t *testing.T) {
	// Redis skips the two bytes after a payload and after a '\r' without
	// looking at them.
	input := "*2\rX$3\rXfooYZ$1\r\nb\r\n"
	var p Parser
	args, n, err := p.Next([]byte(input), nil)
	if err != nil || n != len(input) || len(args) != 2 || string(args[0]) != "foo" || string(args[1]) != "b" {
		t.Fatalf("got %q %d %v", args, n, err)
	}
}

func TestParserWaitsForByteAfterCR(t *testing.T) {
	var p Parser
	for _, in := range []string{"*1\r", "*1\r\n$3\r", "*1\r\n$3\r\nfoo\r"} {
		p.Reset()
		if args, n, err := p.Next([]byte(in), nil); args != nil || n != 0 || err != nil {
			t.Fatalf("%q: got %q %d %v, want incomplete", in, args, n, err)
		}
	}
}

func TestParserInlineNULHidesNewlineLikeRedis(t *testing.T) {
	// strchr on the query buffer stops at NUL: the line never completes.
	var p Parser
	buf := []byte("foo\x00bar\r\nPING\r\n")
	if args, n, err := p.Next(buf, nil); args != nil || n != 0 || err != nil {
		t.Fatalf("got %q %d %v, want incomplete", args, n, err)
	}
	buf = append(buf, strings.Repeat("x", 64*1024)...)
	if _, _, err := p.Next(buf, nil); err == nil || err.Error() != "Protocol error: too big inline request" {
		t.Fatalf("got %v", err)
	}
	// A NUL after the newline does not matter.
	p.Reset()
	args, n, err := p.Next([]byte("PING\r\n\x00"), nil)
	if err != nil || n != 6 || len(args) != 1 {
		t.Fatalf("got %q %d %v", args, n, err)
	}
	// NUL inside a bulk payload is data.
	in := mbulk("SET", "k", "a\x00b")
	args, n, err = p.Next([]byte(in), nil)
	if err != nil || n != len(in) || string(args[2]) != "a\x00b" {
		t.Fatalf("got %q %d %v", args, n, err)
	}
}

func TestParserSplitsInlineLikeSdssplitargs(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"set foo bar", []string{"set", "foo", "bar"}},
		{"  set   foo\t\tbar  ", []string{"set", "foo", "bar"}},
		{"\v\fset\vfoo", []string{"set\vfoo"}}, // isspace skips \v\f, but only " \n\r\t" end a token
		{"a\rb", []string{"a", "b"}},
		{`"hello world"`, []string{"hello world"}},
		{`""`, []string{""}},
		{`"" ''`, []string{"", ""}},
		{`"\x41\x4a\x4b\xff"`, []string{"AJK\xff"}},
		{`"\x4g"`, []string{"x4g"}},
		{`"\x4"`, []string{"x4"}},
		{`"\n\r\t\b\a\\\"\q"`, []string{"\n\r\t\b\a\\\"q"}},
		{`'it\'s' 'a\nb' 'c\\d'`, []string{"it's", `a\nb`, `c\\d`}},
		{`foo"bar baz"`, []string{"foobar baz"}},
		{`foo'bar baz' x`, []string{"foobar baz", "x"}},
		{"\"a\"\tb", []string{"a", "b"}},
		{"\"a\"\vb", []string{"a", "b"}},
		{`"a\"b" c`, []string{`a"b`, "c"}},
		{`a\x41`, []string{`a\x41`}},
		{"'\"' \"'\"", []string{`"`, `'`}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			var p Parser
			for _, eol := range []string{"\r\n", "\n"} {
				input := tt.line + eol
				args, n, err := p.Next([]byte(input), nil)
				if err != nil || n != len(input) {
					t.Fatalf("%q: n %d err %v", input, n, err)
				}
				if got := toResult(args).args; !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("%q: got %q, want %q", input, got, tt.want)
				}
			}
		})
	}
}

func TestParserInlineStripsOnlyOneCR(t *testing.T) {
	var p Parser
	args, n, err := p.Next([]byte("\"a\r\"\r\n"), nil)
	if err != nil || n != 6 || len(args) != 1 || string(args[0]) != "a\r" {
		t.Fatalf("got %q %d %v", args, n, err)
	}
}

func TestParserPendingReportsMissingBulkBytes(t *testing.T) {
	var p Parser
	buf := []byte("*2\r\n$3\r\nSET\r\n$100000\r\n")
	if p.Pending() != 0 {
		t.Fatal("Pending before parsing")
	}
	if _, n, _ := p.Next(buf, nil); n != 0 {
		t.Fatal("unexpected command")
	}
	if got := p.Pending(); got != 100002 {
		t.Fatalf("Pending = %d, want 100002", got)
	}
	buf = append(buf, make([]byte, 40000)...)
	p.Next(buf, nil)
	if got := p.Pending(); got != 60002 {
		t.Fatalf("Pending = %d, want 60002", got)
	}
	buf = append(buf, make([]byte, 60002)...)
	if _, n, err := p.Next(buf, nil); n != len(buf) || err != nil {
		t.Fatalf("n = %d err %v", n, err)
	}
	if p.Pending() != 0 {
		t.Fatal("Pending after completion")
	}
	// A bulk length line still in progress is not known.
	p.Next([]byte("*1\r\n$10"), nil)
	if p.Pending() != 0 {
		t.Fatal("Pending while reading a length")
	}
}

func TestParserResetDiscardsPartialCommand(t *testing.T) {
	var p Parser
	p.Next([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nva"), nil)
	p.Reset()
	args, n, err := p.Next([]byte("PING\r\n"), nil)
	if err != nil || n != 6 || len(args) != 1 || string(args[0]) != "PING" {
		t.Fatalf("got %q %d %v", args, n, err)
	}
}

func TestParserRestartsWhenCallerDropsBytes(t *testing.T) {
	// Misuse must not panic: fewer bytes or another request type restart.
	var p Parser
	p.Next([]byte("*2\r\n$3\r\nGET\r\n$1\r\n"), nil)
	args, n, err := p.Next([]byte("PING\r\n"), nil)
	if err != nil || n != 6 || string(args[0]) != "PING" {
		t.Fatalf("got %q %d %v", args, n, err)
	}
	p.Next([]byte("PIN"), nil)
	args, n, err = p.Next([]byte(mbulk("GET", "k")), nil)
	if err != nil || n != 20 || len(args) != 2 {
		t.Fatalf("got %q %d %v", args, n, err)
	}
}

// TestParserBigBulkInSmallReadsIsLinear feeds a 64 MB bulk in 4 KB pieces and
// checks the work done structurally: the bytes examined by line searches and
// the per-call work must not depend on how much has been buffered.
func TestParserBigBulkInSmallReadsIsLinear(t *testing.T) {
	const size = 64 << 20
	header := "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$" + strconv.Itoa(size) + "\r\n"
	input := make([]byte, 0, len(header)+size+2)
	input = append(input, header...)
	input = input[:len(header)+size]
	input = append(input, '\r', '\n')

	var p Parser
	calls := 0
	for k := 4096; ; k += 4096 {
		if k > len(input) {
			k = len(input)
		}
		before := p.work
		args, n, err := p.Next(input[:k], nil)
		calls++
		if err != nil {
			t.Fatal(err)
		}
		if delta := p.work - before; delta > 2*len(header)+16 {
			t.Fatalf("call %d examined %d bytes", calls, delta)
		}
		if n != 0 {
			if n != len(input) || len(args[2]) != size || &args[2][0] != &input[len(header)] {
				t.Fatalf("bad result: n %d", n)
			}
			break
		}
		if k >= len(header)+4096 {
			if want := len(input) - k; p.Pending() != want {
				t.Fatalf("Pending = %d, want %d", p.Pending(), want)
			}
		}
	}
	if p.work > 2*len(header)+16 {
		t.Fatalf("examined %d bytes in total for a %d byte header", p.work, len(header))
	}
	if calls != (len(input)+4095)/4096 {
		t.Fatalf("%d calls", calls)
	}
}

// TestParserManyArgsInSmallReadsIsLinear covers the other shape: many small
// arguments in one command arriving in pieces must not be rescanned.
func TestParserManyArgsInSmallReadsIsLinear(t *testing.T) {
	args := make([]string, 200000)
	for i := range args {
		args[i] = strconv.Itoa(i)
	}
	input := []byte(mbulk(args...))
	var p Parser
	var got [][]byte
	for k := 1000; ; k += 1000 {
		if k > len(input) {
			k = len(input)
		}
		a, n, err := p.Next(input[:k], nil)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			got = a
			break
		}
	}
	if len(got) != len(args) || string(got[123456]) != "123456" {
		t.Fatalf("got %d args", len(got))
	}
	if p.work > 2*len(input) {
		t.Fatalf("examined %d bytes for %d input bytes", p.work, len(input))
	}
}

func TestParserLongInlineInSmallReadsIsLinear(t *testing.T) {
	input := []byte("echo " + strings.Repeat("a", 60000) + "\r\n")
	var p Parser
	for k := 10; ; k += 10 {
		if k > len(input) {
			k = len(input)
		}
		_, n, err := p.Next(input[:k], nil)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			break
		}
	}
	if p.work > 2*len(input) {
		t.Fatalf("examined %d bytes for %d input bytes", p.work, len(input))
	}
}

func TestParserSteadyStateDoesNotAllocate(t *testing.T) {
	multi := []byte(strings.Repeat(mbulk("SET", "key:000001", strings.Repeat("v", 100)), 4))
	inline := []byte("SET key \"quoted value\" 'x'\r\nGET key\r\n")
	var p Parser
	argv := make([][]byte, 0, 8)
	run := func(buf []byte) {
		for len(buf) > 0 {
			args, n, err := p.Next(buf, argv)
			if err != nil || n == 0 {
				t.Fatal("parse failed")
			}
			argv = args
			buf = buf[n:]
		}
	}
	run(multi)
	run(inline)
	if a := testing.AllocsPerRun(100, func() { run(multi) }); a != 0 {
		t.Fatalf("multibulk: %v allocs", a)
	}
	if a := testing.AllocsPerRun(100, func() { run(inline) }); a != 0 {
		t.Fatalf("inline: %v allocs", a)
	}
	// Resuming a partial command does not allocate either.
	half := multi[:70]
	if a := testing.AllocsPerRun(100, func() {
		p.Reset()
		p.Next(half, argv)
		p.Next(multi, argv)
	}); a != 0 {
		t.Fatalf("resume: %v allocs", a)
	}
}

func TestParseIntMatchesString2ll(t *testing.T) {
	tests := []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false}, {"", 0, false}, {"-", 0, false}, {"-0", 0, false},
		{"00", 0, false}, {"01", 0, false}, {"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false},
		{"1a", 0, false}, {"99999999999999999999", 0, false}, {"-00000000000000000001", 0, false},
	}
	for _, tt := range tests {
		v, ok := parseInt([]byte(tt.in))
		if v != tt.v || ok != tt.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tt.in, v, ok, tt.v, tt.ok)
		}
	}
}

func FuzzParser(f *testing.F) {
	seeds := []string{
		mbulk("SET", "k", "v") + "PING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n",
		"*1\r\nfoo\r\n",
		"set \"\"\"test-key\"\"\" test-value\r\nping\r\n",
		"set \"a\\x41\\n\" 'b\\'c'\n\r\n*0\r\n*-1\r\n",
		"\x00AAAA\n", "*\x00", "$\x00",
		"*2\rX$3\rXfooYZ$1\r\nb\r\n",
		"*3000000000\r\n", "*1\r\n$-1\r\n", "*1\r\n$2\r\nab",
	}
	for i, s := range seeds {
		f.Add([]byte(s), int64(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed int64) {
		// Default limits: the input is below every size limit, so chunking
		// cannot change the outcome.
		if len(data) <= 64*1024 {
			var p Parser
			whole, wn := parseWhole(&p, data)
			r := rand.New(rand.NewSource(seed))
			p2 := Parser{}
			chunked, cn := parseChunked(&p2, data, func() int { return 1 + r.Intn(16) })
			if !reflect.DeepEqual(whole, chunked) || wn != cn {
				t.Fatalf("whole %q (%d bytes) != chunked %q (%d bytes)", whole, wn, chunked, cn)
			}
			one, on := parseChunked(&p2, data, func() int { return 1 })
			if !reflect.DeepEqual(whole, one) || wn != on {
				t.Fatalf("whole %q != byte by byte %q", whole, one)
			}
		}
		// Tiny limits exercise the limit paths: no panic, n within bounds.
		p := Parser{Limits: Limits{MaxBulkLen: 4, MaxMultibulkLen: 3, MaxInlineLen: 5}, Unauthenticated: seed&1 == 1}
		var argv [][]byte
		buf := data
		for len(buf) > 0 {
			args, n, err := p.Next(buf, argv)
			if n < 0 || n > len(buf) {
				t.Fatalf("n = %d for %d bytes", n, len(buf))
			}
			if err != nil || n == 0 {
				break
			}
			for _, a := range args {
				if len(a) > len(buf) {
					t.Fatal("argument longer than the buffer")
				}
			}
			argv = args
			buf = buf[n:]
		}
		// Multibulk arguments must be sub-slices of the input.
		var p3 Parser
		if len(data) > 0 && data[0] == '*' {
			if args, n, err := p3.Next(data, nil); err == nil && n > 0 {
				for _, a := range args {
					if len(a) > 0 && !within(data[:n], a) {
						t.Fatal("argument outside the consumed bytes")
					}
				}
			}
		}
	})
}

func within(buf, a []byte) bool {
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	return a0 >= b0 && a0+uintptr(len(a)) <= b0+uintptr(len(buf))
}

func BenchmarkParserPipeline(b *testing.B) {
	var in bytes.Buffer
	for i := 0; i < 16; i++ {
		in.WriteString(mbulk("SET", "key:"+strconv.Itoa(100000+i), strings.Repeat("v", 100)))
	}
	buf := in.Bytes()
	var p Parser
	argv := make([][]byte, 0, 8)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rest := buf
		for len(rest) > 0 {
			args, n, err := p.Next(rest, argv)
			if err != nil || n == 0 {
				b.Fatal("parse failed")
			}
			argv = args
			rest = rest[n:]
		}
	}
}

func TestAppendReprRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", "q\"uo\\te", "\n\r\t\a\b", "\x00\x7f\xff", "é"} {
		got := string(AppendRepr(nil, s))
		if got != string(AppendRepr(nil, []byte(s))) {
			t.Fatalf("string and []byte forms differ for %q", s)
		}
		args, ok := SplitArgs(got)
		if !ok || len(args) != 1 || args[0] != s {
			t.Errorf("SplitArgs(AppendRepr(%q)) = %q, %v", s, args, ok)
		}
	}
	if got := string(AppendRepr(nil, "a\"b\\c\n\x01\xff")); got != `"a\"b\\c\n\x01\xff"` {
		t.Errorf("AppendRepr = %s", got)
	}
}
