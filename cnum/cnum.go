// Package cnum reads numbers as the C library does where Redis and its Lua
// take their meaning from it: strtod (decimal and hexadecimal, inf,
// infinity, nan, leading spaces) and strtoull (leading spaces, a sign that
// negates, ERANGE past 64 bits) and strtoll. The shards' score and SORT
// parsers, the stream ID reader, the Lua engine's tonumber and the config
// file's numbers use it.
package cnum

import (
	"math"
	"strconv"
)

// IsSpace is C's isspace in the C locale.
func IsSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func isDec(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDec(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}

// Strtod is C's (glibc's) strtod on b (read as a C string): it skips leading spaces,
// parses the longest number it can, and returns it with the number of bytes
// used (0 if none) and whether the value overflowed or underflowed (ERANGE).
func Strtod(b []byte) (f float64, n int, rangeErr bool) {
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	rest := b[i:]
	sign := 1.0
	if neg {
		sign = -1
	}
	lower := func(k int) []byte {
		if len(rest) < k {
			return nil
		}
		return rest[:k]
	}
	switch {
	case equalFold(lower(8), "infinity"):
		return math.Inf(int(sign)), i + 8, false
	case equalFold(lower(3), "inf"):
		return math.Inf(int(sign)), i + 3, false
	case equalFold(lower(3), "nan"):
		j := i + 3
		if j < len(b) && b[j] == '(' {
			k := j + 1
			for k < len(b) && (b[k] == '_' || b[k] >= '0' && b[k] <= '9' || b[k]|0x20 >= 'a' && b[k]|0x20 <= 'z') {
				k++
			}
			if k < len(b) && b[k] == ')' {
				j = k + 1
			}
		}
		return math.Copysign(math.NaN(), sign), j, false // glibc keeps the sign
	}
	hex := len(rest) > 2 && rest[0] == '0' && rest[1]|0x20 == 'x' &&
		(isHex(rest[2]) || rest[2] == '.' && len(rest) > 3 && isHex(rest[3]))
	digit := isDec
	expChar := byte('e')
	j := i
	if hex {
		digit, expChar = isHex, 'p'
		j += 2
	}
	nd, nonzero := 0, false
	for ; j < len(b) && digit(b[j]); j++ {
		nd++
		nonzero = nonzero || b[j] != '0'
	}
	if j < len(b) && b[j] == '.' {
		for j++; j < len(b) && digit(b[j]); j++ {
			nd++
			nonzero = nonzero || b[j] != '0'
		}
	}
	if nd == 0 {
		return 0, 0, false
	}
	mantEnd := j
	if j < len(b) && b[j]|0x20 == expChar {
		k := j + 1
		if k < len(b) && (b[k] == '+' || b[k] == '-') {
			k++
		}
		if k < len(b) && isDec(b[k]) {
			for k < len(b) && isDec(b[k]) {
				k++
			}
			j = k
		}
	}
	text := string(b[start:j])
	if hex && mantEnd == j {
		text += "p0" // Go wants the binary exponent
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		// ErrRange: ±Inf on overflow
		return v, j, true
	}
	if v == 0 && nonzero {
		return v, j, true // underflow
	}
	return v, j, false
}

// Strtoul is C's strtoull in base 2..36: the value (negated, as strtoull
// does, after a minus sign), the bytes read (0: no digit), and whether it
// overflowed 64 bits (ERANGE; the value is then 2^64-1). A base-16 number
// may start with 0x.
func Strtoul(b []byte, base int) (uint64, int, bool) {
	n, neg, j, over := magnitude(b, base)
	if over {
		return math.MaxUint64, j, true
	}
	if neg {
		n = -n
	}
	return n, j, false
}

// Strtoll is C's strtoll in base 2..36: the value, the bytes read (0: no
// digit), and whether it was out of range (ERANGE; the value is then
// MinInt64 or MaxInt64).
func Strtoll(b []byte, base int) (int64, int, bool) {
	n, neg, j, over := magnitude(b, base)
	if neg {
		if over || n > 1<<63 {
			return math.MinInt64, j, true
		}
		return -int64(n), j, false
	}
	if over || n > math.MaxInt64 {
		return math.MaxInt64, j, true
	}
	return int64(n), j, false
}

// magnitude reads what strtoull and strtoll share: leading spaces, a sign,
// 0x in base 16, then the digits. It returns their value, the sign, the
// bytes read (0: no digit) and whether the value passed 64 bits.
func magnitude(b []byte, base int) (n uint64, neg bool, end int, over bool) {
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if base == 16 && i+2 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x' && digitVal(b[i+2]) < 16 {
		i += 2
	}
	j := i
	for j < len(b) && digitVal(b[j]) < base {
		d := uint64(digitVal(b[j]))
		if n > (math.MaxUint64-d)/uint64(base) {
			over = true
		}
		n = n*uint64(base) + d
		j++
	}
	if j == i {
		return 0, false, 0, false
	}
	return n, neg, j, over
}

// digitVal is a digit's value in bases up to 36, or 99.
func digitVal(c byte) int {
	switch {
	case isDec(c):
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'z':
		return int(c|0x20-'a') + 10
	}
	return 99
}
