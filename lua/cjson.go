package lua

import (
	"math"
	"strconv"
	"unicode/utf8"

	glua "github.com/yuin/gopher-lua"
)

// The cjson library: Lua CJSON 2.1.0 as Redis bundles it
// (deps/lua/src/lua_cjson.c), with its defaults: numbers encoded with
// "%.14g", NaN and Inf refused, '/' escaped as "\/", a table whose keys are
// all integers >= 1 encoded as an array (holes as null, excessively sparse
// arrays refused), any other table (the empty one too) as an object, and
// nesting limited to 1000 levels both ways.
//
// Object members come out in the table's insertion order (gopher-lua's
// iteration order), where Redis follows its Lua hash order.

type cjsonConfig struct {
	sparseConvert  bool
	sparseRatio    int
	sparseSafe     int
	encodeMaxDepth int
	decodeMaxDepth int
	encodeInvalid  int // 0 off, 1 on, 2 null
	decodeInvalid  bool
	keepBuffer     bool
	precision      int
}

// cjsonDefaults are lua_cjson.c's DEFAULT_* settings.
var cjsonDefaults = cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000,
	decodeInvalid: true, keepBuffer: true, precision: 14}

type cjson struct {
	cfg  cjsonConfig
	null *glua.LUserData
	buf  []byte // the encode buffer, kept between calls (encode_keep_buffer)
}

func (e *Engine) openCjson() *glua.LTable {
	L := e.vm
	c := &cjson{cfg: cjsonDefaults, null: L.NewUserData()}
	if e.cjson == nil {
		e.cjson = c // the module's own; cjson.new() makes others
	}
	t := L.CreateTable(0, 16)
	for name, fn := range map[string]glua.LGFunction{
		"encode":                  c.encode,
		"decode":                  c.decode,
		"encode_sparse_array":     c.cfgSparse,
		"encode_max_depth":        intOption(&c.cfg.encodeMaxDepth, 1, math.MaxInt32),
		"decode_max_depth":        intOption(&c.cfg.decodeMaxDepth, 1, math.MaxInt32),
		"encode_number_precision": intOption(&c.cfg.precision, 1, 14),
		"encode_keep_buffer":      boolOption(&c.cfg.keepBuffer),
		"decode_invalid_numbers":  boolOption(&c.cfg.decodeInvalid),
		"encode_invalid_numbers":  c.cfgEncodeInvalid,
	} {
		t.RawSetString(name, L.NewFunction(fn))
	}
	t.RawSetString("new", L.NewFunction(func(L *glua.LState) int { L.Push(e.openCjson()); return 1 }))
	t.RawSetString("null", c.null)
	t.RawSetString("_NAME", glua.LString("cjson"))
	t.RawSetString("_VERSION", glua.LString("2.1.0"))
	return t
}

func cfgArgs(L *glua.LState, max int) {
	if L.GetTop() > max {
		L.ArgError(max+1, "found too many arguments")
	}
}

func intOption(v *int, min, max int) glua.LGFunction {
	return func(L *glua.LState) int {
		cfgArgs(L, 1)
		if L.Get(1) != glua.LNil {
			n := L.CheckInt(1)
			if n < min || n > max {
				L.ArgError(1, "expected integer between "+strconv.Itoa(min)+" and "+strconv.Itoa(max))
			}
			*v = n
		}
		L.Push(glua.LNumber(*v))
		return 1
	}
}

func optionIndex(L *glua.LState, i int, options []string) int {
	s := L.CheckString(i)
	for j, o := range options {
		if o == s {
			return j
		}
	}
	L.ArgError(i, "invalid option '"+s+"'")
	return 0
}

func boolOption(v *bool) glua.LGFunction {
	return func(L *glua.LState) int {
		cfgArgs(L, 1)
		switch a := L.Get(1).(type) {
		case *glua.LNilType:
		case glua.LBool:
			*v = bool(a)
		default:
			*v = optionIndex(L, 1, []string{"off", "on"}) == 1
		}
		L.Push(glua.LBool(*v))
		return 1
	}
}

func (c *cjson) cfgEncodeInvalid(L *glua.LState) int {
	cfgArgs(L, 1)
	options := []string{"off", "on", "null"}
	switch a := L.Get(1).(type) {
	case *glua.LNilType:
	case glua.LBool:
		c.cfg.encodeInvalid = 0
		if a {
			c.cfg.encodeInvalid = 1
		}
	default:
		c.cfg.encodeInvalid = optionIndex(L, 1, options)
	}
	if c.cfg.encodeInvalid <= 1 {
		L.Push(glua.LBool(c.cfg.encodeInvalid == 1))
	} else {
		L.Push(glua.LString(options[c.cfg.encodeInvalid]))
	}
	return 1
}

func (c *cjson) cfgSparse(L *glua.LState) int {
	cfgArgs(L, 3)
	switch a := L.Get(1).(type) {
	case *glua.LNilType:
	case glua.LBool:
		c.cfg.sparseConvert = bool(a)
	default:
		c.cfg.sparseConvert = optionIndex(L, 1, []string{"off", "on"}) == 1
	}
	if L.Get(2) != glua.LNil {
		c.cfg.sparseRatio = L.CheckInt(2)
	}
	if L.Get(3) != glua.LNil {
		c.cfg.sparseSafe = L.CheckInt(3)
	}
	L.Push(glua.LBool(c.cfg.sparseConvert))
	L.Push(glua.LNumber(c.cfg.sparseRatio))
	L.Push(glua.LNumber(c.cfg.sparseSafe))
	return 3
}

func (c *cjson) encode(L *glua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	buf := c.buf[:0]
	buf = c.appendValue(L, buf, L.Get(1), 0)
	L.Push(glua.LString(buf))
	if c.cfg.keepBuffer {
		c.buf = buf
	} else {
		c.buf = nil
	}
	return 1
}

func cjsonError(L *glua.LState, v glua.LValue, reason string) {
	L.RaiseError("Cannot serialise %s: %s", v.Type().String(), reason)
}

func (c *cjson) appendValue(L *glua.LState, b []byte, v glua.LValue, depth int) []byte {
	switch v := v.(type) {
	case glua.LString:
		return appendJSONString(b, string(v))
	case glua.LNumber:
		return c.appendNumber(L, b, v)
	case glua.LBool:
		if v {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case *glua.LNilType:
		return append(b, "null"...)
	case *glua.LUserData:
		if v == c.null {
			return append(b, "null"...)
		}
	case *glua.LTable:
		depth++
		if depth > c.cfg.encodeMaxDepth {
			L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := c.arrayLength(L, v); n > 0 {
			b = append(b, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b = append(b, ',')
				}
				b = c.appendValue(L, b, v.RawGetInt(i), depth)
			}
			return append(b, ']')
		}
		b = append(b, '{')
		first := true
		for k, val := v.Next(glua.LNil); k != glua.LNil; k, val = v.Next(k) {
			if !first {
				b = append(b, ',')
			}
			first = false
			switch k := k.(type) {
			case glua.LString:
				b = appendJSONString(b, string(k))
			case glua.LNumber:
				b = append(b, '"')
				b = c.appendNumber(L, b, k)
				b = append(b, '"')
			default:
				cjsonError(L, k, "table key must be a number or string")
			}
			b = append(b, ':')
			b = c.appendValue(L, b, val, depth)
		}
		return append(b, '}')
	}
	cjsonError(L, v, "type not supported")
	return b
}

// arrayLength is lua_array_length: the largest key if every key is an
// integer >= 1, else -1 (an object); 0 for the empty table (an object).
func (c *cjson) arrayLength(L *glua.LState, t *glua.LTable) int {
	max, items := 0, 0
	for k, _ := t.Next(glua.LNil); k != glua.LNil; k, _ = t.Next(k) {
		n, ok := k.(glua.LNumber)
		f := float64(n)
		if !ok || f == 0 || math.Floor(f) != f || f < 1 {
			return -1
		}
		if f > float64(max) {
			max = int(f)
		}
		items++
	}
	if c.cfg.sparseRatio > 0 && max > items*c.cfg.sparseRatio && max > c.cfg.sparseSafe {
		if !c.cfg.sparseConvert {
			cjsonError(L, t, "excessively sparse array")
		}
		return -1
	}
	return max
}

func (c *cjson) appendNumber(L *glua.LState, b []byte, n glua.LNumber) []byte {
	f := float64(n)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch c.cfg.encodeInvalid {
		case 0:
			cjsonError(L, n, "must not be NaN or Inf")
		case 1:
			if math.IsNaN(f) {
				return append(b, "nan"...)
			}
			if f > 0 {
				return append(b, "inf"...)
			}
			return append(b, "-inf"...)
		default:
			return append(b, "null"...)
		}
	}
	return strconv.AppendFloat(b, f, 'g', c.cfg.precision, 64)
}

// appendJSONString appends s quoted with cjson's char2escape table.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"':
			b = append(b, '\\', '"')
		case ch == '\\':
			b = append(b, '\\', '\\')
		case ch == '/':
			b = append(b, '\\', '/')
		case ch == '\b':
			b = append(b, '\\', 'b')
		case ch == '\t':
			b = append(b, '\\', 't')
		case ch == '\n':
			b = append(b, '\\', 'n')
		case ch == '\f':
			b = append(b, '\\', 'f')
		case ch == '\r':
			b = append(b, '\\', 'r')
		case ch < 0x20 || ch == 0x7f:
			b = append(b, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&15])
		default:
			b = append(b, ch)
		}
	}
	return append(b, '"')
}

// Token names as cjson reports them in decode errors.
const (
	tObjBegin = "T_OBJ_BEGIN"
	tObjEnd   = "T_OBJ_END"
	tArrBegin = "T_ARR_BEGIN"
	tArrEnd   = "T_ARR_END"
	tString   = "T_STRING"
	tNumber   = "T_NUMBER"
	tBoolean  = "T_BOOLEAN"
	tNull     = "T_NULL"
	tColon    = "T_COLON"
	tComma    = "T_COMMA"
	tEnd      = "T_END"
)

var jsonSimpleTokens = [256]string{'{': tObjBegin, '}': tObjEnd, '[': tArrBegin, ']': tArrEnd, ':': tColon, ',': tComma}

type jsonToken struct {
	typ   string // a T_* name, or the error text for an invalid token
	bad   bool
	index int
	value glua.LValue
}

type jsonParser struct {
	c     *cjson
	L     *glua.LState
	data  string
	pos   int
	depth int
}

func (c *cjson) decode(L *glua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	s := L.CheckString(1)
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		L.RaiseError("JSON parser does not support UTF-16 or UTF-32")
	}
	p := &jsonParser{c: c, L: L, data: s}
	tok := p.next()
	v := p.value(tok)
	tok = p.next()
	if tok.typ != tEnd || tok.bad {
		p.fail("the end", tok)
	}
	L.Push(v)
	return 1
}

func (p *jsonParser) fail(expected string, tok jsonToken) {
	p.L.RaiseError("Expected %s but found %s at character %d", expected, tok.typ, tok.index+1)
}

func (p *jsonParser) descend() {
	p.depth++
	if p.depth > p.c.cfg.decodeMaxDepth {
		p.L.RaiseError("Found too many nested data structures (%d) at character %d", p.depth, p.pos)
	}
}

func (p *jsonParser) value(tok jsonToken) glua.LValue {
	if tok.bad {
		p.fail("value", tok)
	}
	switch tok.typ {
	case tString, tNumber, tBoolean, tNull:
		return tok.value
	case tObjBegin:
		p.descend()
		t := p.L.NewTable()
		tok = p.next()
		if tok.typ == tObjEnd && !tok.bad {
			p.depth--
			return t
		}
		for {
			if tok.typ != tString || tok.bad {
				p.fail("object key string", tok)
			}
			key := tok.value
			if tok = p.next(); tok.typ != tColon || tok.bad {
				p.fail("colon", tok)
			}
			t.RawSet(key, p.value(p.next()))
			tok = p.next()
			if tok.typ == tObjEnd && !tok.bad {
				p.depth--
				return t
			}
			if tok.typ != tComma || tok.bad {
				p.fail("comma or object end", tok)
			}
			tok = p.next()
		}
	case tArrBegin:
		p.descend()
		t := p.L.NewTable()
		tok = p.next()
		if tok.typ == tArrEnd && !tok.bad {
			p.depth--
			return t
		}
		for i := 1; ; i++ {
			t.RawSetInt(i, p.value(tok))
			tok = p.next()
			if tok.typ == tArrEnd && !tok.bad {
				p.depth--
				return t
			}
			if tok.typ != tComma || tok.bad {
				p.fail("comma or array end", tok)
			}
			tok = p.next()
		}
	}
	p.fail("value", tok)
	return glua.LNil
}

func (p *jsonParser) next() jsonToken {
	d := p.data
	for p.pos < len(d) && (d[p.pos] == ' ' || d[p.pos] == '\t' || d[p.pos] == '\n' || d[p.pos] == '\r') {
		p.pos++
	}
	tok := jsonToken{index: p.pos}
	if p.pos >= len(d) {
		tok.typ = tEnd
		return tok
	}
	ch := d[p.pos]
	if t := jsonSimpleTokens[ch]; t != "" {
		p.pos++
		tok.typ = t
		return tok
	}
	switch {
	case ch == '"':
		return p.str(tok)
	case ch == '-' || ('0' <= ch && ch <= '9'):
		return p.number(tok)
	case hasPrefix(d[p.pos:], "true"):
		p.pos += 4
		tok.typ, tok.value = tBoolean, glua.LTrue
		return tok
	case hasPrefix(d[p.pos:], "false"):
		p.pos += 5
		tok.typ, tok.value = tBoolean, glua.LFalse
		return tok
	case hasPrefix(d[p.pos:], "null"):
		p.pos += 4
		tok.typ, tok.value = tNull, p.c.null
		return tok
	case p.c.cfg.decodeInvalid && (hasPrefixFold(d[p.pos:], "inf") || hasPrefixFold(d[p.pos:], "nan")):
		return p.number(tok)
	}
	tok.typ, tok.bad = "invalid token", true
	return tok
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func hasPrefixFold(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if s[i]|0x20 != p[i] {
			return false
		}
	}
	return true
}

// number scans what strtod would take, in one pass: [-]digits[.digits]
// [e[+-]digits], or inf/nan when decode_invalid_numbers is on; hex
// numbers are refused, as json_is_invalid_number does.
func (p *jsonParser) number(tok jsonToken) jsonToken {
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	rest := d[i:]
	if len(rest) > 1 && rest[0] == '0' && rest[1]|0x20 == 'x' {
		tok.typ, tok.bad = "invalid number", true
		return tok
	}
	if p.c.cfg.decodeInvalid && (hasPrefixFold(rest, "inf") || hasPrefixFold(rest, "nan")) {
		end := i + 3
		if hasPrefixFold(rest, "infinity") {
			end = i + 8
		}
		f, _ := strconv.ParseFloat(d[p.pos:end], 64)
		p.pos = end
		tok.typ, tok.value = tNumber, glua.LNumber(f)
		return tok
	}
	digits := func(i int) int {
		for i < len(d) && isDigit(d[i]) {
			i++
		}
		return i
	}
	start := i
	i = digits(i)
	intEnd := i
	if i < len(d) && d[i] == '.' {
		i = digits(i + 1)
	}
	if i == start || (intEnd == start && i == start+1) {
		tok.typ, tok.bad = "invalid number", true
		return tok
	}
	if i < len(d) && d[i]|0x20 == 'e' {
		j := i + 1
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	f, err := strconv.ParseFloat(d[p.pos:i], 64)
	if err != nil && !isRangeErr(err) {
		tok.typ, tok.bad = "invalid number", true
		return tok
	}
	p.pos = i
	tok.typ, tok.value = tNumber, glua.LNumber(f)
	return tok
}

func isAlpha(c byte) bool { return ('a' <= c|0x20 && c|0x20 <= 'z') }

func (p *jsonParser) str(tok jsonToken) jsonToken {
	d := p.data
	p.pos++ // opening quote
	var out []byte
	for {
		if p.pos >= len(d) {
			tok.typ, tok.bad = "unexpected end of string", true
			return tok
		}
		ch := d[p.pos]
		if ch == '"' {
			p.pos++
			tok.typ, tok.value = tString, glua.LString(out)
			return tok
		}
		if ch != '\\' {
			out = append(out, ch)
			p.pos++
			continue
		}
		if p.pos+1 >= len(d) {
			tok.typ, tok.bad = "unexpected end of string", true
			return tok
		}
		esc := d[p.pos+1]
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n, ok := decodeUnicodeEscape(d[p.pos:])
			if !ok {
				tok.typ, tok.bad = "invalid unicode escape code", true
				return tok
			}
			out = utf8.AppendRune(out, r)
			p.pos += n
			continue
		default:
			tok.typ, tok.bad = "invalid escape code", true
			return tok
		}
		p.pos += 2
	}
}

// decodeUnicodeEscape decodes \uXXXX (or a surrogate pair \uD8xx\uDCxx) at
// the start of s and returns the rune and the bytes used.
func decodeUnicodeEscape(s string) (rune, int, bool) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(s[2:6], 16, 32)
		return rune(n), err == nil
	}
	r, ok := hex4(s)
	if !ok {
		return 0, 0, false
	}
	if r >= 0xDC00 && r <= 0xDFFF {
		return 0, 0, false
	}
	if r >= 0xD800 && r <= 0xDBFF {
		lo, ok := hex4(s[6:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0, false
		}
		return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, true
	}
	return r, 6, true
}
