package lua

import (
	"encoding/binary"
	"math"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// The struct library: Roberto Ierusalimschy's lua_struct.c as Redis
// bundles it (deps/lua/src/lua_struct.c), with the sizes and alignment of
// x86-64 Linux, where Redis runs: native little endian, b/B 1, h/H 2,
// i/I 4 (or iN/IN, N <= 32), l/L and T 8, f 4, d 8, x a pad byte, cN a
// fixed string (c0: all of it, or sized by the previous value on unpack),
// s a zero-terminated string, < > for endianness, !N for alignment.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

func (e *Engine) openStruct() *glua.LTable {
	L := e.vm
	t := L.CreateTable(0, 3)
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

type structHeader struct {
	little bool
	align  int
}

type structFmt struct {
	L   *glua.LState
	s   string
	pos int
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (f *structFmt) getnum(df int) int {
	if f.pos >= len(f.s) || !isDigit(f.s[f.pos]) {
		return df
	}
	a := 0
	for f.pos < len(f.s) && isDigit(f.s[f.pos]) {
		d := int(f.s[f.pos] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			f.L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		f.pos++
	}
	return a
}

func (f *structFmt) optsize(opt byte) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return f.getnum(1)
	case 'i', 'I':
		sz := f.getnum(4)
		if sz > structMaxIntSize {
			f.L.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

func structToAlign(n int, h *structHeader, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

func (f *structFmt) control(opt byte, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := f.getnum(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			f.L.RaiseError("alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		f.L.ArgError(1, "invalid format option '"+string(opt)+"'")
	}
}

func structPutInt(b []byte, n float64, little bool, size int) []byte {
	var v uint64
	if n < 0 {
		v = uint64(int64(n))
	} else {
		v = uint64(n)
	}
	var buf [structMaxIntSize]byte
	for i := 0; i < size; i++ {
		j := i
		if !little {
			j = size - 1 - i
		}
		buf[j] = byte(v)
		v >>= 8
	}
	return append(b, buf[:size]...)
}

func structPack(L *glua.LState) int {
	f := &structFmt{L: L, s: L.CheckString(1)}
	h := structHeader{little: true, align: 1}
	arg := 2
	var b []byte
	for f.pos < len(f.s) {
		opt := f.s[f.pos]
		f.pos++
		size := f.optsize(opt)
		pad := structToAlign(len(b), &h, opt, size)
		b = append(b, make([]byte, pad)...)
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			b = structPutInt(b, float64(L.CheckNumber(arg)), h.little, size)
			arg++
		case 'x':
			b = append(b, 0)
		case 'f':
			v := math.Float32bits(float32(L.CheckNumber(arg)))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint32(b, v)
			} else {
				b = binary.BigEndian.AppendUint32(b, v)
			}
		case 'd':
			v := math.Float64bits(float64(L.CheckNumber(arg)))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint64(b, v)
			} else {
				b = binary.BigEndian.AppendUint64(b, v)
			}
		case 'c', 's':
			s := L.CheckString(arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				L.ArgError(arg, "string too short")
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			f.control(opt, &h)
		}
	}
	L.Push(glua.LString(b))
	return 1
}

func structGetInt(p string, little, signed bool, size int) float64 {
	var l uint64
	for i := 0; i < size; i++ {
		j := i
		if little {
			j = size - 1 - i
		}
		l = l<<8 | uint64(p[j])
	}
	if !signed {
		return float64(l)
	}
	if shift := uint(size*8 - 1); shift < 64 {
		mask := ^uint64(0) << shift
		if l&mask != 0 {
			l |= mask
		}
	}
	return float64(int64(l))
}

func structUnpack(L *glua.LState) int {
	f := &structFmt{L: L, s: L.CheckString(1)}
	data := L.CheckString(2)
	pos := L.OptInt(3, 1)
	if pos <= 0 {
		L.ArgError(3, "offset must be 1 or greater")
	}
	pos--
	h := structHeader{little: true, align: 1}
	ld := len(data)
	n := 0
	for f.pos < len(f.s) {
		opt := f.s[f.pos]
		f.pos++
		size := f.optsize(opt)
		pos += structToAlign(pos, &h, opt, size)
		if !(size <= ld && pos <= ld-size) {
			L.ArgError(2, "data string too short")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := 'a' <= opt && opt <= 'z'
			L.Push(glua.LNumber(structGetInt(data[pos:pos+size], h.little, signed, size)))
			n++
		case 'x':
		case 'f':
			v := binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			if !h.little {
				v = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			}
			L.Push(glua.LNumber(math.Float32frombits(v)))
			n++
		case 'd':
			v := binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			if !h.little {
				v = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			L.Push(glua.LNumber(math.Float64frombits(v)))
			n++
		case 'c':
			if size == 0 {
				prev, ok := L.Get(-1).(glua.LNumber)
				if n == 0 || !ok {
					L.RaiseError("format 'c0' needs a previous size")
				}
				size = int(prev)
				L.Pop(1)
				n--
				if !(size >= 0 && size <= ld && pos <= ld-size) {
					L.ArgError(2, "data string too short")
				}
			}
			L.Push(glua.LString(data[pos : pos+size]))
			n++
		case 's':
			i := strings.IndexByte(data[pos:], 0)
			if i < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = i + 1
			L.Push(glua.LString(data[pos : pos+i]))
			n++
		default:
			f.control(opt, &h)
		}
		pos += size
	}
	L.Push(glua.LNumber(pos + 1))
	return n + 1
}

func structSize(L *glua.LState) int {
	f := &structFmt{L: L, s: L.CheckString(1)}
	h := structHeader{little: true, align: 1}
	pos := 0
	for f.pos < len(f.s) {
		opt := f.s[f.pos]
		f.pos++
		size := f.optsize(opt)
		pos += structToAlign(pos, &h, opt, size)
		if opt == 's' {
			L.ArgError(1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			L.ArgError(1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.control(opt, &h)
		}
		pos += size
	}
	L.Push(glua.LNumber(pos))
	return 1
}

func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }
