package lua

import (
	"math"
	"math/bits"

	glua "github.com/yuin/gopher-lua"
)

// The bit library: LuaBitOp 1.0 as Redis bundles it (deps/lua/src/lua_bit.c).
// Operands are taken modulo 2^32 and results are signed 32-bit numbers.

func (e *Engine) openBit() *glua.LTable {
	L := e.vm
	t := L.CreateTable(0, 12)
	for name, fn := range map[string]glua.LGFunction{
		"tobit":   func(L *glua.LState) int { return bitRet(L, bitArg(L, 1)) },
		"bnot":    func(L *glua.LState) int { return bitRet(L, ^bitArg(L, 1)) },
		"band":    bitFold(func(a, b uint32) uint32 { return a & b }),
		"bor":     bitFold(func(a, b uint32) uint32 { return a | b }),
		"bxor":    bitFold(func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  bitShift(func(b uint32, n uint) uint32 { return b << n }),
		"rshift":  bitShift(func(b uint32, n uint) uint32 { return b >> n }),
		"arshift": bitShift(func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) }),
		"rol":     bitShift(func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, int(n)) }),
		"ror":     bitShift(func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, -int(n)) }),
		"bswap":   func(L *glua.LState) int { return bitRet(L, bits.ReverseBytes32(bitArg(L, 1))) },
		"tohex":   bitTohex,
	} {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bitArg is LuaBitOp's barg: the number plus 2^52+2^51, whose low 32
// mantissa bits are the operand rounded to an integer modulo 2^32.
func bitArg(L *glua.LState, i int) uint32 {
	n := float64(L.CheckNumber(i))
	return uint32(math.Float64bits(n + 6755399441055744.0))
}

func bitRet(L *glua.LState, b uint32) int {
	L.Push(glua.LNumber(int32(b)))
	return 1
}

func bitFold(op func(a, b uint32) uint32) glua.LGFunction {
	return func(L *glua.LState) int {
		b := bitArg(L, 1)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, bitArg(L, i))
		}
		return bitRet(L, b)
	}
}

func bitShift(op func(b uint32, n uint) uint32) glua.LGFunction {
	return func(L *glua.LState) int {
		b := bitArg(L, 1)
		n := uint(bitArg(L, 2) & 31)
		return bitRet(L, op(b, n))
	}
}

func bitTohex(L *glua.LState) int {
	b := bitArg(L, 1)
	n := int32(8)
	if L.GetTop() >= 2 && L.Get(2) != glua.LNil {
		n = int32(bitArg(L, 2))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	var buf [8]byte
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(glua.LString(buf[:n]))
	return 1
}
