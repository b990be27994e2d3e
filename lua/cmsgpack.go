package lua

import (
	"encoding/binary"
	"math"

	glua "github.com/yuin/gopher-lua"
)

// The cmsgpack library: lua-cmsgpack 0.4.0 as Redis bundles it
// (deps/lua/src/lua_cmsgpack.c). Numbers equal to an int64 are packed as
// the smallest MessagePack integer, others as a float32 when that is exact,
// else a float64; strings as str (fixstr, str8/16/32); a table whose keys
// are exactly 1..n as an array (the empty one too), any other table as a
// map; tables nested 16 deep, and values of other types, as nil.
// unpack returns every value of a stream; unpack_one and unpack_limit also
// return the offset to resume at (-1 at the end).

const (
	msgpackMaxGap     = 1 << 20 // see hash
	msgpackMaxNesting = 16      // LUACMSGPACK_MAX_NESTING
	msgpackMaxDecode  = 8000    // Lua's C stack, which bounds Redis's recursion
)

func (e *Engine) openCmsgpack() *glua.LTable {
	L := e.vm
	m := &cmsgpack{}
	t := L.CreateTable(0, 8)
	t.RawSetString("pack", L.NewFunction(m.pack))
	t.RawSetString("unpack", L.NewFunction(func(L *glua.LState) int { return m.unpack(L, 0, 0) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *glua.LState) int {
		off := L.OptInt(2, 0)
		L.SetTop(1)
		return m.unpack(L, 1, off)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *glua.LState) int {
		limit := L.CheckInt(2)
		off := L.OptInt(3, 0)
		L.SetTop(1)
		return m.unpack(L, limit, off)
	}))
	t.RawSetString("_NAME", glua.LString("cmsgpack"))
	t.RawSetString("_VERSION", glua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", glua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", glua.LString("MessagePack C implementation for Lua"))
	return t
}

type cmsgpack struct{ buf []byte }

func (m *cmsgpack) pack(L *glua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.ArgError(0, "MessagePack pack needs input.")
	}
	b := m.buf[:0]
	for i := 1; i <= n; i++ {
		b = msgpackAppend(L, b, L.Get(i), 0)
	}
	m.buf = b
	L.Push(glua.LString(b))
	return 1
}

func msgpackAppend(L *glua.LState, b []byte, v glua.LValue, level int) []byte {
	switch v := v.(type) {
	case glua.LString:
		return msgpackAppendStr(b, string(v))
	case glua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case glua.LNumber:
		f := float64(v)
		if !math.IsInf(f, 0) && f >= -9223372036854775808.0 && f < 9223372036854775808.0 && float64(int64(f)) == f {
			return msgpackAppendInt(b, int64(f))
		}
		if f32 := float32(f); float64(f32) == f {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(f32))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case *glua.LTable:
		if level == msgpackMaxNesting {
			return append(b, 0xc0)
		}
		if msgpackIsArray(v) {
			n := L.ObjLen(v)
			b = msgpackAppendHeader(b, 0x90, 0xdc, 0xdd, uint64(n))
			for j := 1; j <= n; j++ {
				b = msgpackAppend(L, b, L.GetTable(v, glua.LNumber(j)), level+1)
			}
			return b
		}
		n := 0
		for k, _ := v.Next(glua.LNil); k != glua.LNil; k, _ = v.Next(k) {
			n++
		}
		b = msgpackAppendHeader(b, 0x80, 0xde, 0xdf, uint64(n))
		for k, val := v.Next(glua.LNil); k != glua.LNil; k, val = v.Next(k) {
			b = msgpackAppend(L, b, k, level+1)
			b = msgpackAppend(L, b, val, level+1)
		}
		return b
	}
	return append(b, 0xc0)
}

// msgpackIsArray is table_is_an_array: keys exactly 1..n, n = count.
func msgpackIsArray(t *glua.LTable) bool {
	count, max := 0, 0
	for k, _ := t.Next(glua.LNil); k != glua.LNil; k, _ = t.Next(k) {
		n, ok := k.(glua.LNumber)
		f := float64(n)
		if !ok || f <= 0 || f > math.MaxInt32 || float64(int32(f)) != f {
			return false
		}
		if int(f) > max {
			max = int(f)
		}
		count++
	}
	return max == count
}

func msgpackAppendStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = append(b, 0xda)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0xdb)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	return append(b, s...)
}

func msgpackAppendHeader(b []byte, fix, c16, c32 byte, n uint64) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		b = append(b, c16)
		return binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, c32)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
}

func msgpackAppendInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

type msgpackCursor struct {
	L     *glua.LState
	s     string
	pos   int
	eof   bool
	bad   bool
	depth int
}

func (m *cmsgpack) unpack(L *glua.LState, limit, offset int) int {
	s := L.CheckString(1)
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
	}
	if offset > len(s) {
		L.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
	}
	all := limit == 0 && offset == 0
	if all {
		limit = math.MaxInt32
	}
	c := &msgpackCursor{L: L, s: s, pos: offset}
	cnt := 0
	for ; c.pos < len(s) && cnt < limit; cnt++ {
		v := c.decode()
		if c.eof {
			L.RaiseError("Missing bytes in input.")
		}
		if c.bad {
			L.RaiseError("Bad data format in input.")
		}
		L.Push(v)
	}
	if !all {
		next := c.pos
		if next >= len(s) {
			next = -1
		}
		L.Insert(glua.LNumber(next), 2)
		cnt++
	}
	return cnt
}

func (c *msgpackCursor) need(n int) bool {
	if len(c.s)-c.pos < n {
		c.eof = true
		return false
	}
	return true
}

func (c *msgpackCursor) decode() glua.LValue {
	if !c.need(1) {
		return glua.LNil
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > msgpackMaxDecode {
		c.L.RaiseError("stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
	}
	s := c.s[c.pos:]
	t := s[0]
	fixed := func(n int) string {
		if !c.need(1 + n) {
			return ""
		}
		c.pos += 1 + n
		return s[1 : 1+n]
	}
	u := func(n int) uint64 {
		p := fixed(n)
		var v uint64
		for i := 0; i < len(p); i++ {
			v = v<<8 | uint64(p[i])
		}
		return v
	}
	switch t {
	case 0xcc:
		return glua.LNumber(u(1))
	case 0xcd:
		return glua.LNumber(u(2))
	case 0xce:
		return glua.LNumber(u(4))
	case 0xcf:
		return glua.LNumber(float64(int64(u(8))))
	case 0xd0:
		return glua.LNumber(int8(u(1)))
	case 0xd1:
		return glua.LNumber(int16(u(2)))
	case 0xd2:
		return glua.LNumber(int32(u(4)))
	case 0xd3:
		return glua.LNumber(float64(int64(u(8))))
	case 0xc0:
		c.pos++
		return glua.LNil
	case 0xc3:
		c.pos++
		return glua.LTrue
	case 0xc2:
		c.pos++
		return glua.LFalse
	case 0xca:
		return glua.LNumber(math.Float32frombits(uint32(u(4))))
	case 0xcb:
		return glua.LNumber(math.Float64frombits(u(8)))
	case 0xd9, 0xda, 0xdb:
		size := map[byte]int{0xd9: 1, 0xda: 2, 0xdb: 4}[t]
		n := int(u(size))
		if c.eof || !c.need(n) {
			return glua.LNil
		}
		v := c.s[c.pos : c.pos+n]
		c.pos += n
		return glua.LString(v)
	case 0xdc, 0xdd:
		n := u(map[byte]int{0xdc: 2, 0xdd: 4}[t])
		if c.eof {
			return glua.LNil
		}
		return c.array(n)
	case 0xde, 0xdf:
		n := u(map[byte]int{0xde: 2, 0xdf: 4}[t])
		if c.eof {
			return glua.LNil
		}
		return c.hash(n)
	}
	switch {
	case t&0x80 == 0:
		c.pos++
		return glua.LNumber(t)
	case t&0xe0 == 0xe0:
		c.pos++
		return glua.LNumber(int8(t))
	case t&0xe0 == 0xa0:
		return glua.LString(fixed(int(t & 0x1f)))
	case t&0xf0 == 0x90:
		c.pos++
		return c.array(uint64(t & 0xf))
	case t&0xf0 == 0x80:
		c.pos++
		return c.hash(uint64(t & 0xf))
	}
	c.bad = true
	return glua.LNil
}

func (c *msgpackCursor) array(n uint64) glua.LValue {
	t := c.L.NewTable()
	for i := uint64(1); i <= n; i++ {
		v := c.decode()
		if c.eof || c.bad {
			return glua.LNil
		}
		t.RawSetInt(int(i), v)
	}
	return t
}

func (c *msgpackCursor) hash(n uint64) glua.LValue {
	t := c.L.NewTable()
	for ; n > 0; n-- {
		k := c.decode()
		if c.eof || c.bad {
			return glua.LNil
		}
		v := c.decode()
		if c.eof || c.bad {
			return glua.LNil
		}
		switch k := k.(type) {
		case *glua.LNilType:
			c.L.RaiseError("table index is nil")
		case glua.LNumber:
			if math.IsNaN(float64(k)) {
				c.L.RaiseError("table index is NaN")
			}
			// gopher-lua keeps every integer key below MaxArrayIndex
			// (2^26) in the table's array part, filling the gap with nils:
			// one map entry {[60000000]=1} of a few bytes would allocate
			// ~1GB. Redis's Lua puts such a key in the hash part; here it
			// is refused.
			if f := float64(k); f >= 1 && f < float64(glua.MaxArrayIndex) && f == math.Trunc(f) && int(f) > t.Len()+msgpackMaxGap {
				c.L.RaiseError("cmsgpack: integer map key %d too sparse for this Lua (gap over %d)", int(f), msgpackMaxGap)
			}
		}
		t.RawSet(k, v)
	}
	return t
}
