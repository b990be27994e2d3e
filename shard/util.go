package shard

import "math/big"

// ParseInt parses a signed 64-bit decimal integer with Redis's string2ll
// rules: no spaces, no '+', no leading zeros, at most 20 characters.
func ParseInt(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg = true
		i = 1
		if n == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1)/10 || v*10 > 1<<64-1-d {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// EqualFold reports whether b equals the lower-case ASCII word s, ignoring case.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// Long doubles. Redis keeps INCRBYFLOAT and HINCRBYFLOAT values in a C long
// double, which on x86-64 is the x87 80-bit format: a 64-bit mantissa and a
// 15-bit exponent. Go has no such type, and float64 is not enough to match
// Redis's replies (10.5 + 0.1 is "10.6" in Redis but "10.59999999999999964"
// in float64 printed as "%.17f"), so these helpers emulate it with a
// big.Float of 64-bit precision, rounding to nearest even like the FPU.

const (
	ldPrec    = 64
	ldMaxExp  = 16384  // |x| < 2^16384 (MantExp's exponent) or it is infinite
	ldZeroExp = -16446 // |x| < 2^-16446 (half the least subnormal) rounds to 0
	ldMaxLen  = 5*1024 - 1
)

// ParseLongDouble parses b as Redis's string2ld does with glibc's strtold:
// the whole of b must be a decimal or hexadecimal ("0x") floating-point
// number or "inf"/"infinity" (case-insensitive, optional sign); no spaces, no
// NaN, no overflow, no underflow to zero, fewer than 5120 bytes. The result
// may be an infinity.
func ParseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) > ldMaxLen {
		return nil, false
	}
	z := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven)
	i := 0
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		i = 1
	}
	rest := b[i:]
	if EqualFold(rest, "inf") || EqualFold(rest, "infinity") {
		return z.SetInf(neg), true
	}
	base := 10
	digit := isDecDigit
	expChar := byte('e')
	if len(rest) > 1 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		base, digit, expChar = 0, isHexDigit, 'p'
		i += 2
	}
	// mantissa: digits with at most one '.', at least one digit
	nd := 0
	for ; i < len(b) && digit(b[i]); i++ {
		nd++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && digit(b[i]); i++ {
			nd++
		}
	}
	if nd == 0 {
		return nil, false
	}
	if i < len(b) && (b[i]|0x20) == expChar {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		ne := 0
		for ; i < len(b) && isDecDigit(b[i]); i++ {
			ne++
		}
		if ne == 0 {
			return nil, false
		}
	}
	if i != len(b) {
		return nil, false
	}
	if _, _, err := z.Parse(string(b), base); err != nil {
		return nil, false
	}
	if z.Sign() != 0 {
		if e := z.MantExp(nil); e > ldMaxExp || e <= ldZeroExp {
			return nil, false // strtold: ERANGE with HUGE_VAL or 0
		}
	}
	return z, true
}

func isDecDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

// AddLongDouble returns x+y rounded to a long double; ok is false when the
// sum is NaN or infinite (either operand infinite, or overflow).
func AddLongDouble(x, y *big.Float) (sum *big.Float, ok bool) {
	if x.IsInf() || y.IsInf() {
		return nil, false
	}
	z := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(x, y)
	if z.Sign() != 0 && z.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return z, true
}

// AppendLongDouble appends x as Redis's ld2string(LD_STR_HUMAN) prints a long
// double: printf("%.17Lf") without trailing zeros or a trailing '.', "-0" as
// "0", and "inf"/"-inf" for infinities.
func AppendLongDouble(dst []byte, x *big.Float) []byte {
	if x.IsInf() {
		if x.Sign() < 0 {
			return append(dst, "-inf"...)
		}
		return append(dst, "inf"...)
	}
	start := len(dst)
	dst = x.Append(dst, 'f', 17)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if len(dst)-start == 2 && dst[start] == '-' && dst[start+1] == '0' {
		dst = append(dst[:start], '0')
	}
	return dst
}
