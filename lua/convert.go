package lua

import (
	"math"
	"strconv"

	glua "github.com/yuin/gopher-lua"

	"github.com/redshard/redshard/resp"
)

// maxReplyDepth bounds the nesting of replies converted either way. Redis
// stops at its Lua C stack (LUAI_MAXCSTACK, 8000 slots, a few per level);
// a bound is what matters here: a self-referencing table or a hostile
// reply must end in an error, not in a stack overflow.
const maxReplyDepth = 1000

// replyToLua converts the RESP reply at b[pos:] to a Lua value as
// redisProtocolToLuaType does, and returns the position after it. ok is
// false for a truncated or malformed reply (the host broke its contract);
// it never panics, whatever b holds.
//
//	integer          number
//	bulk, verbatim   string (RESP3 verbatim: {verbatim_string={string=,format=}})
//	null bulk/array  false
//	array, push      table 1..n
//	status           {ok=s}
//	error            {err="CODE msg", ignore_error_stats_update=true}
//	RESP3 map        {map={k=v,...}}
//	RESP3 set        {set={m=true,...}}
//	RESP3 null       nil
//	RESP3 boolean    true/false
//	RESP3 double     {double=n}
//	RESP3 big number {big_number="digits"}
//	attribute        skipped; the reply after it is converted
func (e *Engine) replyToLua(b []byte, pos, depth int) (glua.LValue, int, bool) {
	L := e.vm
	if depth > maxReplyDepth || pos >= len(b) {
		return glua.LNil, 0, false
	}
	typ := b[pos]
	line, next, ok := replyLine(b, pos+1)
	if !ok {
		return glua.LNil, 0, false
	}
	switch typ {
	case '+':
		t := e.statusTable()
		t.RawSetString("ok", e.statusString(line))
		return t, next, true
	case '-':
		t := errorTable(L, "-"+string(line))
		t.RawSetString("ignore_error_stats_update", glua.LTrue)
		return t, next, true
	case ':':
		n, ok := parseInt(line)
		return glua.LNumber(float64(n)), next, ok
	case '_':
		return glua.LNil, next, true
	case '#':
		if len(line) != 1 || (line[0] != 't' && line[0] != 'f') {
			return glua.LNil, 0, false
		}
		return glua.LBool(line[0] == 't'), next, true
	case ',':
		f, err := strconv.ParseFloat(string(line), 64)
		if err != nil && !isRangeErr(err) {
			return glua.LNil, 0, false
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("double", glua.LNumber(f))
		return t, next, true
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", glua.LString(line))
		return t, next, true
	case '$', '=':
		n, ok := parseInt(line)
		if !ok {
			return glua.LNil, 0, false
		}
		if n < 0 {
			if typ == '=' {
				return glua.LNil, 0, false
			}
			return glua.LFalse, next, true
		}
		if n > int64(len(b)-next-2) || b[next+int(n)] != '\r' || b[next+int(n)+1] != '\n' {
			return glua.LNil, 0, false
		}
		body := b[next : next+int(n)]
		end := next + int(n) + 2
		if typ == '$' {
			return e.intern.str(body), end, true
		}
		if len(body) < 4 || body[3] != ':' {
			return glua.LNil, 0, false
		}
		v := L.CreateTable(0, 2)
		v.RawSetString("string", glua.LString(body[4:]))
		v.RawSetString("format", glua.LString(body[:3]))
		t := L.CreateTable(0, 1)
		t.RawSetString("verbatim_string", v)
		return t, end, true
	case '*', '>', '~', '%', '|':
		n, ok := parseInt(line)
		if !ok {
			return glua.LNil, 0, false
		}
		if n < 0 {
			if typ != '*' {
				return glua.LNil, 0, false
			}
			return glua.LFalse, next, true
		}
		// Every element takes at least 3 bytes; a header claiming more
		// than the buffer can hold is malformed.
		if n > int64(len(b)-next)/3 {
			return glua.LNil, 0, false
		}
		pos = next
		switch typ {
		case '|':
			for i := int64(0); i < 2*n; i++ {
				if pos, ok = resp.SkipReply(b, pos, depth+1); !ok {
					return glua.LNil, 0, false
				}
			}
			return e.replyToLua(b, pos, depth+1)
		case '%', '~':
			inner := L.CreateTable(0, int(n))
			for i := int64(0); i < n; i++ {
				var k, v glua.LValue = glua.LNil, glua.LTrue
				if k, pos, ok = e.replyToLua(b, pos, depth+1); !ok {
					return glua.LNil, 0, false
				}
				if typ == '%' {
					if v, pos, ok = e.replyToLua(b, pos, depth+1); !ok {
						return glua.LNil, 0, false
					}
				}
				setField(inner, k, v)
			}
			name := "map"
			if typ == '~' {
				name = "set"
			}
			t := L.CreateTable(0, 1)
			t.RawSetString(name, inner)
			return t, pos, true
		default:
			t := L.CreateTable(int(n), 0)
			for i := int64(0); i < n; i++ {
				var v glua.LValue
				if v, pos, ok = e.replyToLua(b, pos, depth+1); !ok {
					return glua.LNil, 0, false
				}
				t.RawSetInt(int(i)+1, v)
			}
			return t, pos, true
		}
	}
	return glua.LNil, 0, false
}

// statusTable returns a table for a status reply ({ok=...}). An EVAL
// interpreter reuses the ones of earlier runs: a run can keep nothing
// (globals and libraries are read-only, and a script's chunk has no
// upvalues), so the tables a run got are free when it ends; each is handed
// out once per run, and only while it is still exactly {ok=...} as made.
// The profile of EVALSHA GET/compare/SET put 13% of the server's CPU in
// building SET's {ok="OK"} (a table and its Go map per call). A function's
// library can keep tables in its upvalues across calls: FCALL gets new ones.
func (e *Engine) statusTable() *glua.LTable {
	if e.functions {
		return e.vm.CreateTable(0, 1)
	}
	for e.statusUsed < len(e.statusPool) {
		t := e.statusPool[e.statusUsed]
		e.statusUsed++
		if t.Metatable == glua.LNil && t.Len() == 0 {
			if k, _ := t.Next(glua.LNil); k == glua.LString("ok") {
				if k2, _ := t.Next(k); k2 == glua.LNil {
					return t
				}
			}
		}
		// Changed by the script that had it: replace it.
		t = e.vm.CreateTable(0, 1)
		e.statusPool[e.statusUsed-1] = t
		return t
	}
	t := e.vm.CreateTable(0, 1)
	if len(e.statusPool) < maxStatusPool {
		e.statusPool = append(e.statusPool, t)
		e.statusUsed++
	}
	return t
}

// maxStatusPool bounds the status tables an interpreter keeps.
const maxStatusPool = 64

// statusString returns line as a Lua string, from the cache for the short
// status texts commands answer over and over.
func (e *Engine) statusString(line []byte) glua.LValue {
	if v, ok := e.statusCache[string(line)]; ok {
		return v
	}
	v := glua.LValue(glua.LString(line))
	if len(line) <= 32 && len(e.statusCache) < 64 {
		e.statusCache[string(line)] = v
	}
	return v
}

// setField is lua_settable for a converted key: a nil or NaN key (which
// Lua refuses) drops the pair.
func setField(t *glua.LTable, k, v glua.LValue) {
	switch k := k.(type) {
	case *glua.LNilType:
		return
	case glua.LNumber:
		if math.IsNaN(float64(k)) {
			return
		}
	}
	t.RawSet(k, v)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func replyLine(b []byte, pos int) ([]byte, int, bool) {
	for i := pos; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return b[pos:i], i + 2, true
		}
	}
	return nil, 0, false
}

func parseInt(b []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// appendErrorLine appends "-msg\r\n" as addReplyErrorFormat("-%s", msg):
// \r and \n trimmed from the ends and written as spaces inside.
func appendErrorLine(dst []byte, msg string) []byte {
	return resp.AppendError(dst, "-"+msg)
}

// appendLuaReply converts the value a script returned to a reply for a
// client speaking proto, as luaReplyToRedisReply does:
//
//	string            bulk
//	number            integer (truncated toward zero)
//	boolean           RESP2 script: true :1, false null; after setresp(3):
//	                  a boolean (#t/#f, or :1/:0 for a RESP2 client)
//	{err=s}           error "-s"
//	{ok=s}            status "+s"
//	{double=n}        double
//	{big_number=s}    big number
//	{verbatim_string={format=,string=}} verbatim string
//	{map={...}}       map
//	{set={...}}       set
//	other table       array of t[1], t[2], ... up to the first nil
//	anything else     null
func (e *Engine) appendLuaReply(dst []byte, v glua.LValue, proto, depth int) []byte {
	if depth > maxReplyDepth {
		return resp.AppendError(dst, "ERR reached lua stack limit")
	}
	switch v := v.(type) {
	case glua.LString:
		return resp.AppendBulkString(dst, string(v))
	case glua.LBool:
		if e.resp == 2 {
			if v {
				return resp.AppendInt(dst, 1)
			}
			return resp.AppendNull(dst, proto)
		}
		return resp.AppendBool(dst, bool(v), proto)
	case glua.LNumber:
		return resp.AppendInt(dst, luaNumberToInt(float64(v)))
	case *glua.LTable:
		return e.appendLuaTable(dst, v, proto, depth)
	}
	return resp.AppendNull(dst, proto)
}

// luaNumberToInt is C's (long long) cast of a double as x86-64 does it:
// truncation, and the "integer indefinite" value for NaN and out of range.
func luaNumberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

func (e *Engine) appendLuaTable(dst []byte, t *glua.LTable, proto, depth int) []byte {
	if s, ok := t.RawGetString("err").(glua.LString); ok {
		return appendErrorLine(dst, string(s))
	}
	if s, ok := t.RawGetString("ok").(glua.LString); ok {
		return resp.AppendSimple(dst, string(s))
	}
	if n, ok := t.RawGetString("double").(glua.LNumber); ok {
		return resp.AppendDouble(dst, float64(n), proto)
	}
	if s, ok := t.RawGetString("big_number").(glua.LString); ok {
		return resp.AppendBigNumber(dst, mapCRLF(string(s)), proto)
	}
	if vt, ok := t.RawGetString("verbatim_string").(*glua.LTable); ok {
		if f, ok := vt.RawGetString("format").(glua.LString); ok {
			if s, ok := vt.RawGetString("string").(glua.LString); ok {
				return appendVerbatim(dst, string(s), string(f), proto)
			}
		}
	}
	if m, ok := t.RawGetString("map").(*glua.LTable); ok {
		n := 0
		for k, _ := m.Next(glua.LNil); k != glua.LNil; k, _ = m.Next(k) {
			n++
		}
		dst = resp.AppendMapLen(dst, n, proto)
		for k, v := m.Next(glua.LNil); k != glua.LNil; k, v = m.Next(k) {
			dst = e.appendLuaReply(dst, k, proto, depth+1)
			dst = e.appendLuaReply(dst, v, proto, depth+1)
		}
		return dst
	}
	if s, ok := t.RawGetString("set").(*glua.LTable); ok {
		n := 0
		for k, _ := s.Next(glua.LNil); k != glua.LNil; k, _ = s.Next(k) {
			n++
		}
		dst = resp.AppendSetLen(dst, n, proto)
		for k, _ := s.Next(glua.LNil); k != glua.LNil; k, _ = s.Next(k) {
			dst = e.appendLuaReply(dst, k, proto, depth+1)
		}
		return dst
	}
	n := 0
	for t.RawGetInt(n+1) != glua.LNil {
		n++
	}
	dst = resp.AppendArrayLen(dst, n)
	for i := 1; i <= n; i++ {
		dst = e.appendLuaReply(dst, t.RawGetInt(i), proto, depth+1)
	}
	return dst
}

// appendVerbatim is addReplyVerbatim: "=<len>\r\n<fmt>:<s>\r\n" in RESP3
// (the format cut or padded to 3 bytes, as Redis copies 3), bulk in RESP2.
func appendVerbatim(dst []byte, s, format string, proto int) []byte {
	if proto < 3 {
		return resp.AppendBulkString(dst, s)
	}
	var f [3]byte
	copy(f[:], format)
	dst = append(dst, '=')
	dst = strconv.AppendInt(dst, int64(len(s)+4), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, f[:]...)
	dst = append(dst, ':')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

func mapCRLF(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}
