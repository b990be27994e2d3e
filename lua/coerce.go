package lua

// Numbers and strings as Lua 5.1 converts them (Redis's interpreter), where
// gopher-lua's base library converts its own way:
//
//   - tonumber is luaB_tonumber: in base 10 a string is a number when C's
//     strtod reads all of it but trailing spaces (exponents, "inf", "nan",
//     hexadecimal "0x1F" and "-0x10" included; gopher-lua returned nil for
//     "1e2"), else strtoul's digits in bases 2 to 36 ("base out of range"
//     outside).
//   - a number where the string library wants a string (string.len(1/3),
//     string.format("%s", x), string.gsub's replacement, ...) is formatted
//     "%.14g", as lua_tolstring does; gopher-lua printed Go's shortest
//     digits (0.3333333333333333 for 0.33333333333333).
//   - string.format is Lua 5.1's str_format: its conversions, flags, and
//     errors ("bad argument #2 to 'format' (no value)", "invalid option
//     '%k' to 'format'", "number expected, got string"), where gopher-lua
//     printed Go's "%!d(MISSING)" or "0"; %g's default precision is C's
//     6; %q quotes as Lua 5.1 (a newline becomes a backslash and a
//     newline, NUL "\000", CR "\r"); %s of a number is "%.14g".
//   - string.char refuses a code outside 0..255 ("invalid value"),
//     math.max and math.min with no argument, and table.insert with a
//     wrong number of arguments, as 5.1 does (gopher-lua wrapped the byte,
//     said "wrong number of arguments", or inserted).
//
// What stays gopher-lua's: the ".." operator formats numbers inside the
// VM, with no hook to reach it (1/3 .. "" is 0.3333333333333333 there).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"github.com/redshard/redshard/cnum"
)

// cStrtod is C's strtod on s: the value and the bytes read (0: none).
func cStrtod(s string) (float64, int) {
	f, n, _ := cnum.Strtod([]byte(s))
	return f, n
}

// cStrtoul is C's strtoull on s in base 2..36: the value (2^64-1 past the
// range, negated after a minus sign) and the bytes read (0: no digit).
func cStrtoul(s string, base int) (uint64, int) {
	v, n, _ := cnum.Strtoul([]byte(s), base)
	return v, n
}

// str2number is luaO_str2d: a number when strtod (or, stopped at an 'x',
// strtoul in base 16) reads s up to trailing spaces. C sees s up to a NUL.
func str2number(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	f, n := cStrtod(s)
	if n == 0 {
		return 0, false
	}
	if n < len(s) && (s[n] == 'x' || s[n] == 'X') {
		u, m := cStrtoul(s, 16)
		f, n = float64(u), m
	}
	for n < len(s) && cnum.IsSpace(s[n]) {
		n++
	}
	return f, n == len(s)
}

func luaTonumber(L *glua.LState) int {
	base := 10
	if L.GetTop() >= 2 && L.Get(2) != glua.LNil {
		base = L.CheckInt(2)
	}
	if base == 10 {
		switch v := L.CheckAny(1).(type) {
		case glua.LNumber:
			L.Push(v)
			return 1
		case glua.LString:
			if f, ok := str2number(string(v)); ok {
				L.Push(glua.LNumber(f))
				return 1
			}
		}
		L.Push(glua.LNil)
		return 1
	}
	s := luaCheckString(L, 1)
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if u, n := cStrtoul(s, base); n > 0 {
		for n < len(s) && cnum.IsSpace(s[n]) {
			n++
		}
		if n == len(s) {
			L.Push(glua.LNumber(float64(u)))
			return 1
		}
	}
	L.Push(glua.LNil)
	return 1
}

// luaCheckString is luaL_checkstring: a number becomes its "%.14g" text.
func luaCheckString(L *glua.LState, n int) string {
	if v, ok := L.Get(n).(glua.LNumber); ok {
		return formatLuaNumber(float64(v))
	}
	return L.CheckString(n)
}

// numbersAsStrings wraps a string library function: the arguments at the
// given positions that are numbers are passed as their "%.14g" text.
func numbersAsStrings(orig glua.LGFunction, at ...int) glua.LGFunction {
	return func(L *glua.LState) int {
		for _, i := range at {
			if v, ok := L.Get(i).(glua.LNumber); ok && i <= L.GetTop() {
				L.Replace(i, glua.LString(formatLuaNumber(float64(v))))
			}
		}
		return orig(L)
	}
}

// luaQuoted is string.format's %q of Lua 5.1 (addquoted).
func luaQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString("\\\n")
		case '\r':
			b.WriteString("\\r")
		case 0:
			b.WriteString("\\000")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (e *Engine) openCoercions() {
	L := e.vm
	e.realG.RawSetString("tonumber", L.NewFunction(luaTonumber))
	str := e.realG.RawGetString("string").(*glua.LTable)
	wrap := func(name string, at ...int) {
		if orig, ok := str.RawGetString(name).(*glua.LFunction); ok && orig.GFunction != nil {
			str.RawSetString(name, L.NewFunction(numbersAsStrings(orig.GFunction, at...)))
		}
	}
	wrap("len", 1)
	wrap("sub", 1)
	wrap("upper", 1)
	wrap("lower", 1)
	wrap("reverse", 1)
	wrap("byte", 1)
	wrap("rep", 1)
	wrap("find", 1, 2)
	wrap("match", 1, 2)
	wrap("gmatch", 1, 2)
	wrap("gsub", 1, 2, 3)
	str.RawSetString("format", L.NewFunction(luaStrFormat))
	str.RawSetString("char", L.NewFunction(luaStrChar))
	math := e.realG.RawGetString("math").(*glua.LTable)
	math.RawSetString("max", L.NewFunction(luaMathMinMax("max", 1)))
	math.RawSetString("min", L.NewFunction(luaMathMinMax("min", -1)))
	tab := e.realG.RawGetString("table").(*glua.LTable)
	if orig, ok := tab.RawGetString("insert").(*glua.LFunction); ok && orig.GFunction != nil {
		tab.RawSetString("insert", L.NewFunction(luaTableInsert(orig.GFunction)))
	}
}

// luaTypeName is luaL_typename.
func luaTypeName(v glua.LValue) string {
	switch v.Type() {
	case glua.LTNil:
		return "nil"
	case glua.LTBool:
		return "boolean"
	case glua.LTNumber:
		return "number"
	case glua.LTString:
		return "string"
	case glua.LTTable:
		return "table"
	case glua.LTFunction:
		return "function"
	case glua.LTThread:
		return "thread"
	}
	return "userdata"
}

// checkNumber is luaL_checknumber for function fn: a number, or a string
// that converts.
func checkNumber(L *glua.LState, n int, fn string) float64 {
	v := L.Get(n)
	switch x := v.(type) {
	case glua.LNumber:
		return float64(x)
	case glua.LString:
		if f, ok := str2number(string(x)); ok {
			return f
		}
	}
	got := luaTypeName(v)
	if n > L.GetTop() {
		got = "no value"
	}
	L.RaiseError("bad argument #%d to '%s' (number expected, got %s)", n, fn, got)
	return 0
}

// checkString is luaL_checklstring for function fn.
func checkString(L *glua.LState, n int, fn string) string {
	switch x := L.Get(n).(type) {
	case glua.LString:
		return string(x)
	case glua.LNumber:
		return formatLuaNumber(float64(x))
	}
	got := luaTypeName(L.Get(n))
	if n > L.GetTop() {
		got = "no value"
	}
	L.RaiseError("bad argument #%d to '%s' (string expected, got %s)", n, fn, got)
	return ""
}

// pad is C's field width for a converted item.
func pad(s string, width int, left bool) string {
	if len(s) >= width {
		return s
	}
	if left {
		return s + strings.Repeat(" ", width-len(s))
	}
	return strings.Repeat(" ", width-len(s)) + s
}

func cDigit(c byte) bool { return c >= '0' && c <= '9' }

// luaStrFormat is Lua 5.1's string.format (str_format), with C's printf
// for each conversion.
func luaStrFormat(L *glua.LState) int {
	top := L.GetTop()
	f := checkString(L, 1, "format")
	arg := 1
	var b []byte
	for i := 0; i < len(f); {
		if f[i] != '%' {
			b = append(b, f[i])
			i++
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			b = append(b, '%')
			i++
			continue
		}
		arg++
		if arg > top {
			L.RaiseError("bad argument #%d to 'format' (no value)", arg)
		}
		p := i
		for p < len(f) && strings.IndexByte("-+ #0", f[p]) >= 0 {
			p++
		}
		if p-i >= 6 {
			L.RaiseError("invalid format (repeated flags)")
		}
		flags := f[i:p]
		w := p
		for k := 0; k < 2 && p < len(f) && cDigit(f[p]); k++ {
			p++
		}
		width, _ := strconv.Atoi(f[w:p])
		prec, hasPrec := "", false
		if p < len(f) && f[p] == '.' {
			p++
			hasPrec = true
			q := p
			for k := 0; k < 2 && p < len(f) && cDigit(f[p]); k++ {
				p++
			}
			prec = f[q:p]
		}
		if p < len(f) && cDigit(f[p]) {
			L.RaiseError("invalid format (width or precision too long)")
		}
		spec := "%" + flags + f[w:p]
		if hasPrec && prec == "" {
			spec += "0" // C's "%.f" is precision 0
		}
		var conv byte
		if p < len(f) {
			conv = f[p]
			p++
		}
		i = p
		left := strings.IndexByte(flags, '-') >= 0
		switch conv {
		case 'c':
			c := byte(int32(int64(checkNumber(L, arg, "format"))))
			item := pad(string([]byte{c}), width, left)
			if k := strings.IndexByte(item, 0); k >= 0 {
				item = item[:k] // Lua adds strlen(buff) bytes
			}
			b = append(b, item...)
		case 'd', 'i':
			n := checkNumber(L, arg, "format")
			b = append(b, fmtNumber(spec, 'd', n)...)
		case 'o', 'u', 'x', 'X':
			n := uint64(int64(checkNumber(L, arg, "format")))
			verb := conv
			if conv == 'u' {
				verb = 'd'
			}
			s := spec
			if n == 0 && (conv == 'x' || conv == 'X') {
				s = strings.ReplaceAll(s, "#", "") // C prints no 0x for zero
			}
			b = append(b, fmtUnsigned(s, verb, n)...)
		case 'e', 'E', 'f', 'g', 'G':
			n := checkNumber(L, arg, "format")
			s := spec
			if !hasPrec && (conv == 'g' || conv == 'G') {
				s += ".6" // Go's %g has no default precision; C's is 6
			}
			b = append(b, fmtFloat(s, conv, n, width, flags)...)
		case 'q':
			b = append(b, luaQuoted(checkString(L, arg, "format"))...)
		case 's':
			s := checkString(L, arg, "format")
			if !hasPrec && len(s) >= 100 {
				b = append(b, s...) // Lua pushes a long string whole
				continue
			}
			if k := strings.IndexByte(s, 0); k >= 0 {
				s = s[:k] // C's %s stops at a NUL
			}
			if hasPrec {
				if n, _ := strconv.Atoi(prec); n < len(s) {
					s = s[:n]
				}
			}
			b = append(b, pad(s, width, left)...)
		default:
			if conv == 0 {
				L.RaiseError("%s", "invalid option '%' to 'format'")
			}
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	L.Push(glua.LString(b))
	return 1
}

func fmtNumber(spec string, verb byte, n float64) string {
	return fmt.Sprintf(spec+string(verb), int64(n))
}

func fmtUnsigned(spec string, verb byte, n uint64) string {
	return fmt.Sprintf(spec+string(verb), n)
}

// fmtFloat is C's %e %f %g (and upper case) of n; Go's fmt agrees but for
// infinities and NaN, which C prints "inf" and "nan" ("INF", "NAN").
func fmtFloat(spec string, verb byte, n float64, width int, flags string) string {
	if !math.IsInf(n, 0) && !math.IsNaN(n) {
		return fmt.Sprintf(spec+string(verb), n)
	}
	s := "inf"
	if math.IsNaN(n) {
		s = "nan"
	}
	switch {
	case math.Signbit(n):
		s = "-" + s
	case strings.IndexByte(flags, '+') >= 0:
		s = "+" + s
	case strings.IndexByte(flags, ' ') >= 0:
		s = " " + s
	}
	if verb == 'E' || verb == 'G' {
		s = strings.ToUpper(s)
	}
	return pad(s, width, strings.IndexByte(flags, '-') >= 0)
}

// luaStrChar is Lua 5.1's string.char.
func luaStrChar(L *glua.LState) int {
	n := L.GetTop()
	b := make([]byte, n)
	for i := 1; i <= n; i++ {
		c := int64(int32(int64(checkNumber(L, i, "char"))))
		if c < 0 || c > 255 {
			L.RaiseError("bad argument #%d to 'char' (invalid value)", i)
		}
		b[i-1] = byte(c)
	}
	L.Push(glua.LString(b))
	return 1
}

// luaMathMinMax is Lua 5.1's math.max (sign 1) or math.min (-1).
func luaMathMinMax(name string, sign float64) glua.LGFunction {
	return func(L *glua.LState) int {
		n := L.GetTop()
		best := checkNumber(L, 1, name)
		for i := 2; i <= n; i++ {
			if d := checkNumber(L, i, name); (d-best)*sign > 0 {
				best = d
			}
		}
		L.Push(glua.LNumber(best))
		return 1
	}
}

// luaTableInsert refuses what Lua 5.1's table.insert refuses: a first
// argument that is not a table, and other than two or three arguments.
func luaTableInsert(orig glua.LGFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		if _, ok := L.Get(1).(*glua.LTable); !ok {
			got := luaTypeName(L.Get(1))
			if L.GetTop() < 1 {
				got = "no value"
			}
			L.RaiseError("bad argument #1 to 'insert' (table expected, got %s)", got)
		}
		if n := L.GetTop(); n != 2 && n != 3 {
			L.RaiseError("wrong number of arguments to 'insert'")
		}
		return orig(L)
	}
}
