// Package resp owns redshard's wire protocol: the incremental request parser
// (RESP multibulk and inline commands, with Redis 7.0's exact protocol error
// texts and limits) and the append-style, allocation-free reply encoders for
// RESP2 and RESP3.
//
// Nothing in this package does I/O or knows about commands; the connection
// layer feeds bytes to a Parser and appends replies to its output buffer.
package resp

import (
	"bytes"
	"math"
)

// Limits mirror Redis's request limits.
//
// A zero field means "use the default" (see DefaultLimits), so the zero value
// of Parser is ready to use.
type Limits struct {
	// MaxBulkLen is proto-max-bulk-len: a bulk length above it is
	// "Protocol error: invalid bulk length". Default 512 MB.
	MaxBulkLen int64
	// MaxMultibulkLen is the largest element count accepted in a "*<n>"
	// header from an authenticated client; above it is
	// "Protocol error: invalid multibulk length". Redis 7.0 uses INT_MAX
	// (older versions used 1024*1024), so the default is math.MaxInt32.
	MaxMultibulkLen int64
	// MaxInlineLen is PROTO_INLINE_MAX_SIZE (64 KB): the most bytes Redis
	// buffers while waiting for the end of an inline request, a "*<n>" line
	// or a "$<n>" line.
	MaxInlineLen int
}

const (
	defaultMaxBulkLen      = 512 * 1024 * 1024
	defaultMaxMultibulkLen = math.MaxInt32
	defaultMaxInlineLen    = 64 * 1024

	// Limits Redis applies while authRequired(c) is true.
	unauthMaxMultibulkLen = 10
	unauthMaxBulkLen      = 16384
)

// DefaultLimits returns Redis 7.0's defaults.
func DefaultLimits() Limits {
	return Limits{
		MaxBulkLen:      defaultMaxBulkLen,
		MaxMultibulkLen: defaultMaxMultibulkLen,
		MaxInlineLen:    defaultMaxInlineLen,
	}
}

// ProtocolError is returned by Parser.Next for malformed input. Error()
// returns the message exactly as Redis builds it, without the error code;
// Redis sends it as "-ERR <message>\r\n" (see AppendTo) and then closes the
// connection.
type ProtocolError struct {
	msg string
}

func (e *ProtocolError) Error() string { return e.msg }

// AppendTo appends the reply Redis sends for the error:
// "-ERR " + Error() + "\r\n".
func (e *ProtocolError) AppendTo(b []byte) []byte {
	b = append(b, "-ERR "...)
	b = append(b, e.msg...)
	return append(b, '\r', '\n')
}

var (
	errInvalidMultibulkLen = &ProtocolError{"Protocol error: invalid multibulk length"}
	errUnauthMultibulkLen  = &ProtocolError{"Protocol error: unauthenticated multibulk length"}
	errInvalidBulkLen      = &ProtocolError{"Protocol error: invalid bulk length"}
	errUnauthBulkLen       = &ProtocolError{"Protocol error: unauthenticated bulk length"}
	errTooBigMbulkCount    = &ProtocolError{"Protocol error: too big mbulk count string"}
	errTooBigBulkCount     = &ProtocolError{"Protocol error: too big bulk count string"}
	errTooBigInline        = &ProtocolError{"Protocol error: too big inline request"}
	errUnbalancedQuotes    = &ProtocolError{"Protocol error: unbalanced quotes in request"}
)

// errExpectedDollar builds "Protocol error: expected '$', got 'x'". Redis
// formats it with addReplyErrorFormat, which turns \r and \n into spaces.
func errExpectedDollar(c byte) *ProtocolError {
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return &ProtocolError{"Protocol error: expected '$', got '" + string([]byte{c}) + "'"}
}

// Parser states.
const (
	stIdle      = iota
	stInline    // waiting for '\n' of an inline request
	stMbulk     // waiting for the "*<n>\r\n" line
	stBulkLen   // waiting for a "$<n>\r\n" line
	stBulkData  // waiting for <n> bytes + 2
	stLineBlock // a NUL precedes any line terminator: wait for the size limit
)

// Parser is an incremental RESP request parser. The zero value is ready to
// use (with DefaultLimits). A Parser belongs to one connection and is not
// safe for concurrent use.
type Parser struct {
	Limits Limits
	// Unauthenticated applies Redis's limits for clients that still have to
	// AUTH (authRequired): more than 10 elements is "Protocol error:
	// unauthenticated multibulk length", a bulk longer than 16384 bytes is
	// "Protocol error: unauthenticated bulk length".
	Unauthenticated bool

	// Resume state. Everything is an offset into the caller's buffer, which
	// always starts at the first byte of the command being parsed.
	state    uint8
	mbulk    bool           // the command being parsed starts with '*'
	blockErr *ProtocolError // error for stLineBlock once over the limit
	elem     int            // start of the current line / bulk payload
	scan     int            // bytes before this offset contain no terminator
	left     int64          // bulks still to read
	bulkLen  int64          // length of the bulk being read
	seen     int            // len(buf) at the last incomplete call
	offs     []int          // start,end pairs of completed bulks
	scratch  []byte         // decoded inline arguments

	work int // bytes examined by searches (linearity tests)
}

// Reset clears the resume state. Call it when the unconsumed bytes that were
// last passed to Next are discarded; it is not needed after Next returned a
// command or an error (the parser resets itself then).
func (p *Parser) Reset() {
	p.state = stIdle
	p.blockErr = nil
	p.elem, p.scan, p.left, p.bulkLen, p.seen = 0, 0, 0, 0, 0
	p.offs = p.offs[:0]
}

// Pending returns how many more bytes, beyond those passed to the last
// incomplete Next call, the command being parsed needs at least. It is known
// only while the payload of a bulk argument is being received; otherwise it
// is 0. Redis pre-sizes its query buffer for arguments of 32 KB and more;
// callers can do the same by growing their buffer once by Pending() bytes.
func (p *Parser) Pending() int {
	if p.state != stBulkData {
		return 0
	}
	need := int64(p.elem) + p.bulkLen + 2 - int64(p.seen)
	if need <= 0 || need > math.MaxInt {
		return 0
	}
	return int(need)
}

// Progress describes the incomplete multibulk command last passed to Next,
// as Redis's query buffer and argv show it: consumed is where the element
// being received starts (the bytes before it, the count line and the
// complete arguments, are Redis's argv, no longer its query buffer), and
// argvLen the total length of the complete arguments. Both are 0 for an
// inline command or when no command is in progress.
func (p *Parser) Progress() (consumed, argvLen int) {
	if !p.mbulk || (p.state != stBulkLen && p.state != stBulkData) {
		return 0, 0
	}
	for j := 0; j < len(p.offs); j += 2 {
		argvLen += p.offs[j+1] - p.offs[j]
	}
	return p.elem, argvLen
}

// BulkLen is the length of the bulk argument being received, 0 when none is.
func (p *Parser) BulkLen() int64 {
	if p.state != stBulkData {
		return 0
	}
	return p.bulkLen
}

func (p *Parser) limits() (maxBulk, maxMbulk int64, maxInline int) {
	maxBulk, maxMbulk, maxInline = p.Limits.MaxBulkLen, p.Limits.MaxMultibulkLen, p.Limits.MaxInlineLen
	if maxBulk == 0 {
		maxBulk = defaultMaxBulkLen
	}
	if maxMbulk == 0 {
		maxMbulk = defaultMaxMultibulkLen
	}
	if maxInline == 0 {
		maxInline = defaultMaxInlineLen
	}
	return
}

// Next parses the next command at the start of buf.
//
//   - Complete command: args holds the arguments (appended to argv[:0]) and
//     n > 0 is the number of bytes consumed. Multibulk arguments are
//     sub-slices of buf. Inline arguments are sub-slices of buf or of a
//     scratch buffer owned by the Parser; the latter are valid only until
//     the next call to Next, so copy anything that must outlive the command.
//   - Empty command (empty inline line, "*0\r\n", "*-1\r\n"): len(args) == 0
//     and n > 0; the caller skips n bytes.
//   - Incomplete: args == nil, n == 0, err == nil. The caller must call Next
//     again with the same unconsumed bytes at buf[0:] followed by new data
//     (buf may be reallocated). Parsing resumes where it stopped, so a large
//     command arriving in small reads costs linear time in total.
//   - Malformed input: err is a *ProtocolError, n == 0. Redis replies with
//     the error and closes the connection.
func (p *Parser) Next(buf []byte, argv [][]byte) (args [][]byte, n int, err error) {
	if p.state != stIdle && (len(buf) < p.seen || len(buf) == 0 || (buf[0] == '*') != p.mbulk) {
		// The caller did not keep the unconsumed bytes: start over.
		p.Reset()
	}
	if len(buf) == 0 {
		return nil, 0, nil
	}
	if p.state == stIdle {
		p.elem, p.scan = 0, 0
		p.mbulk = buf[0] == '*'
		if p.mbulk {
			p.state = stMbulk
		} else {
			p.state = stInline
		}
	}
	maxBulk, maxMbulk, maxInline := p.limits()

	switch p.state {
	case stLineBlock:
		return p.blocked(buf, maxInline)
	case stInline:
		return p.inline(buf, argv, maxInline)
	case stMbulk:
		i, ok := p.findLine(buf, '\r', errTooBigMbulkCount)
		if !ok {
			return p.incomplete(buf, maxInline)
		}
		if i+2 > len(buf) {
			// "\r" is the last byte: the line still needs its "\n".
			return p.incomplete(buf, maxInline)
		}
		ll, ok := parseInt(buf[1:i])
		if !ok || ll > maxMbulk {
			p.Reset()
			return nil, 0, errInvalidMultibulkLen
		}
		if ll > unauthMaxMultibulkLen && p.Unauthenticated {
			p.Reset()
			return nil, 0, errUnauthMultibulkLen
		}
		if ll <= 0 {
			p.Reset()
			return argv[:0], i + 2, nil
		}
		p.left = ll
		p.offs = p.offs[:0]
		p.state = stBulkLen
		p.elem, p.scan = i+2, i+2
	}

	for {
		if p.state == stBulkLen {
			i, ok := p.findLine(buf, '\r', errTooBigBulkCount)
			if !ok {
				return p.incomplete(buf, maxInline)
			}
			if i+2 > len(buf) {
				return p.incomplete(buf, maxInline)
			}
			if buf[p.elem] != '$' {
				c := buf[p.elem]
				p.Reset()
				return nil, 0, errExpectedDollar(c)
			}
			ll, ok := parseInt(buf[p.elem+1 : i])
			if !ok || ll < 0 || ll > maxBulk {
				p.Reset()
				return nil, 0, errInvalidBulkLen
			}
			if ll > unauthMaxBulkLen && p.Unauthenticated {
				p.Reset()
				return nil, 0, errUnauthBulkLen
			}
			p.bulkLen = ll
			p.elem = i + 2
			p.state = stBulkData
		}
		// stBulkData. Like Redis, the two bytes after the payload are
		// skipped without checking that they are "\r\n".
		if int64(len(buf)-p.elem)-2 < p.bulkLen {
			p.seen = len(buf)
			return nil, 0, nil
		}
		end := p.elem + int(p.bulkLen)
		p.offs = append(p.offs, p.elem, end)
		p.elem = end + 2
		p.scan = p.elem
		p.left--
		if p.left == 0 {
			break
		}
		p.state = stBulkLen
	}

	args = argv[:0]
	for j := 0; j < len(p.offs); j += 2 {
		args = append(args, buf[p.offs[j]:p.offs[j+1]:p.offs[j+1]])
	}
	n = p.elem
	p.Reset()
	return args, n, nil
}

const shortScan = 24

// findLine looks for the terminator c of the line starting at p.elem,
// resuming at p.scan. Like Redis's strchr on the NUL-terminated query
// buffer, a NUL byte before the terminator hides it forever: the parser then
// switches to stLineBlock and can only fail with blockErr once the line is
// over the size limit.
func (p *Parser) findLine(buf []byte, c byte, blockErr *ProtocolError) (int, bool) {
	from := p.scan
	rest := buf[from:]
	// Protocol lines ("*3", "$5") are a few bytes: one pass over the first
	// shortScan bytes looking for the terminator and for a NUL costs less
	// than two IndexByte calls. A NUL, or a longer line, takes the general
	// path below.
	short := rest
	if len(short) > shortScan {
		short = short[:shortScan]
	}
	for i, b := range short {
		if b == c {
			p.work += 2 * (i + 1)
			p.scan = from + i
			return from + i, true
		}
		if b == 0 {
			break
		}
	}
	i := bytes.IndexByte(rest, c)
	if i < 0 {
		p.work += len(rest)
		if bytes.IndexByte(rest, 0) >= 0 {
			p.state = stLineBlock
			p.blockErr = blockErr
		}
		p.scan = len(buf)
		return 0, false
	}
	p.work += 2 * (i + 1)
	if bytes.IndexByte(rest[:i], 0) >= 0 {
		p.state = stLineBlock
		p.blockErr = blockErr
		p.scan = len(buf)
		return 0, false
	}
	p.scan = from + i
	return from + i, true
}

// incomplete records progress and applies Redis's limit on how much may be
// buffered while a line has no terminator yet.
func (p *Parser) incomplete(buf []byte, maxInline int) ([][]byte, int, error) {
	if p.state == stLineBlock {
		return p.blocked(buf, maxInline)
	}
	if p.scan == len(buf) && len(buf)-p.elem > maxInline {
		// No terminator anywhere in the rest of the buffer.
		var err error = errTooBigBulkCount
		switch p.state {
		case stMbulk:
			err = errTooBigMbulkCount
		case stInline:
			err = errTooBigInline
		}
		p.Reset()
		return nil, 0, err
	}
	p.seen = len(buf)
	return nil, 0, nil
}

func (p *Parser) blocked(buf []byte, maxInline int) ([][]byte, int, error) {
	if len(buf)-p.elem > maxInline {
		err := p.blockErr
		p.Reset()
		return nil, 0, err
	}
	p.seen = len(buf)
	return nil, 0, nil
}

func (p *Parser) inline(buf []byte, argv [][]byte, maxInline int) ([][]byte, int, error) {
	i, ok := p.findLine(buf, '\n', errTooBigInline)
	if !ok {
		return p.incomplete(buf, maxInline)
	}
	n := i + 1
	if i > 0 && buf[i-1] == '\r' {
		i--
	}
	p.Reset()
	args, ok := p.splitArgs(buf[:i], argv[:0])
	if !ok {
		return nil, 0, errUnbalancedQuotes
	}
	return args, n, nil
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// SplitArgs splits a line as Redis's sdssplitargs does (config files, AOF
// manifests, inline requests): tokens separated by spaces, "double quoted"
// with \n \r \t \b \a \\ \" \xHH escapes, or 'single quoted' with \'; a
// closing quote must be followed by a space or the end. ok is false for
// unbalanced quotes.
func SplitArgs(line string) (args []string, ok bool) {
	var p Parser
	argv, ok := p.splitArgs([]byte(line), nil)
	if !ok {
		return nil, false
	}
	args = make([]string, len(argv))
	for i, a := range argv {
		args[i] = string(a)
	}
	return args, true
}

// splitArgs splits an inline request like Redis's sdssplitargs. line holds
// no NUL byte (findLine guarantees it). Tokens without quotes are returned
// as sub-slices of line; quoted ones are decoded into p.scratch.
func (p *Parser) splitArgs(line []byte, args [][]byte) ([][]byte, bool) {
	if cap(p.scratch) < len(line) {
		p.scratch = make([]byte, 0, len(line))
	}
	sc := p.scratch[:0]
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			p.scratch = sc
			return args, true
		}
		start := i
		// Fast path: unquoted token.
		for i < len(line) {
			c := line[i]
			if c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '"' || c == '\'' {
				break
			}
			i++
		}
		if i == len(line) || (line[i] != '"' && line[i] != '\'') {
			args = append(args, line[start:i:i])
			if i < len(line) {
				i++ // the separator
			}
			continue
		}
		// Slow path: the token contains quotes; decode into scratch.
		tokStart := len(sc)
		sc = append(sc, line[start:i]...)
		inq, insq := false, false
		for done := false; !done; {
			switch {
			case inq:
				if i >= len(line) {
					return nil, false // unterminated quotes
				}
				c := line[i]
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]) {
					sc = append(sc, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 3
				} else if c == '\\' && i+1 < len(line) {
					i++
					switch e := line[i]; e {
					case 'n':
						sc = append(sc, '\n')
					case 'r':
						sc = append(sc, '\r')
					case 't':
						sc = append(sc, '\t')
					case 'b':
						sc = append(sc, '\b')
					case 'a':
						sc = append(sc, '\a')
					default:
						sc = append(sc, e)
					}
				} else if c == '"' {
					// The closing quote must be followed by a space or
					// nothing at all.
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				} else {
					sc = append(sc, c)
				}
			case insq:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					i++
					sc = append(sc, '\'')
				} else if c == '\'' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				} else {
					sc = append(sc, c)
				}
			default:
				if i >= len(line) {
					done = true
					break
				}
				switch c := line[i]; c {
				case ' ', '\n', '\r', '\t':
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					sc = append(sc, c)
				}
			}
			if i < len(line) {
				i++
			}
		}
		args = append(args, sc[tokStart:len(sc):len(sc)])
	}
}

// parseInt is Redis's string2ll: optional '-', no leading zeros (except
// "0" itself), no '+', no spaces, fits in int64, at most 20 bytes.
func parseInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) >= 21 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
		if len(s) == 0 {
			return 0, false
		}
	}
	if s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		if v > math.MaxUint64-uint64(c-'0') {
			return 0, false
		}
		v += uint64(c - '0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// AppendRepr appends s as Redis's sdscatrepr quotes it, the form SplitArgs
// reads back: double quotes, \\ \" \n \r \t \a \b escaped, other bytes
// outside 0x20-0x7e as \xHH (lowercase).
func AppendRepr[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if c >= 0x20 && c <= 0x7e {
				b = append(b, c)
			} else {
				b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			}
		}
	}
	return append(b, '"')
}
