package resp

import (
	"math"
	"strconv"
)

// Reply encoders. Each appends one RESP value (or an aggregate header) to b
// and returns the extended slice; none allocates beyond growing b. Functions
// taking proto emit RESP3 when proto >= 3 and RESP2 otherwise, like Redis's
// addReply* helpers do for c->resp.

func appendCRLF(b []byte) []byte { return append(b, '\r', '\n') }

func appendPrefixInt(b []byte, prefix byte, n int64) []byte {
	b = append(b, prefix)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// appendLine appends s with every \r and \n replaced by a space, so the
// result can never break the line-based framing.
func appendLine(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\r' || c == '\n' {
			b = append(b, s[:i]...)
			for ; i < len(s); i++ {
				c := s[i]
				if c == '\r' || c == '\n' {
					c = ' '
				}
				b = append(b, c)
			}
			return b
		}
	}
	return append(b, s...)
}

// AppendSimple appends a simple string "+s\r\n" (addReplyStatus). Any \r or
// \n in s is written as a space.
func AppendSimple(b []byte, s string) []byte {
	b = append(b, '+')
	b = appendLine(b, s)
	return appendCRLF(b)
}

// AppendOK appends "+OK\r\n".
func AppendOK(b []byte) []byte { return append(b, "+OK\r\n"...) }

// AppendError appends an error reply "-msg\r\n". msg carries its own code,
// e.g. "ERR syntax error" or "WRONGTYPE Operation against a key holding the
// wrong kind of value"; a leading '-' is accepted and not doubled. Like
// addReplyErrorFormat, \r and \n are trimmed from both ends of msg and the
// remaining ones are written as spaces.
func AppendError(b []byte, msg string) []byte {
	for len(msg) > 0 && (msg[0] == '\r' || msg[0] == '\n') {
		msg = msg[1:]
	}
	for len(msg) > 0 && (msg[len(msg)-1] == '\r' || msg[len(msg)-1] == '\n') {
		msg = msg[:len(msg)-1]
	}
	if len(msg) > 0 && msg[0] == '-' {
		msg = msg[1:]
	}
	b = append(b, '-')
	b = appendLine(b, msg)
	return appendCRLF(b)
}

// AppendInt appends an integer reply ":n\r\n".
func AppendInt(b []byte, n int64) []byte { return appendPrefixInt(b, ':', n) }

// AppendBulk appends a bulk string "$len\r\n<v>\r\n". A nil v is still an
// empty bulk string; use AppendNull for a null reply.
func AppendBulk(b []byte, v []byte) []byte {
	b = appendPrefixInt(b, '$', int64(len(v)))
	b = append(b, v...)
	return appendCRLF(b)
}

// AppendBulkString is AppendBulk for a string.
func AppendBulkString(b []byte, s string) []byte {
	b = appendPrefixInt(b, '$', int64(len(s)))
	b = append(b, s...)
	return appendCRLF(b)
}

// AppendBulkInt appends n formatted in decimal as a bulk string
// (addReplyBulkLongLong).
func AppendBulkInt(b []byte, n int64) []byte {
	var tmp [24]byte
	s := strconv.AppendInt(tmp[:0], n, 10)
	return AppendBulk(b, s)
}

// AppendArrayLen appends an array header "*n\r\n".
func AppendArrayLen(b []byte, n int) []byte { return appendPrefixInt(b, '*', int64(n)) }

// AppendNull appends a null: "$-1\r\n" (RESP2 null bulk) or "_\r\n".
func AppendNull(b []byte, proto int) []byte {
	if proto >= 3 {
		return append(b, "_\r\n"...)
	}
	return append(b, "$-1\r\n"...)
}

// AppendNullArray appends a null array: "*-1\r\n" (RESP2) or "_\r\n".
func AppendNullArray(b []byte, proto int) []byte {
	if proto >= 3 {
		return append(b, "_\r\n"...)
	}
	return append(b, "*-1\r\n"...)
}

// AppendMapLen appends a map header of n key/value pairs: "%n\r\n", or in
// RESP2 a flat array header "*<2n>\r\n".
func AppendMapLen(b []byte, n int, proto int) []byte {
	if proto >= 3 {
		return appendPrefixInt(b, '%', int64(n))
	}
	return appendPrefixInt(b, '*', 2*int64(n))
}

// AppendSetLen appends a set header: "~n\r\n", or "*n\r\n" in RESP2.
func AppendSetLen(b []byte, n int, proto int) []byte {
	if proto >= 3 {
		return appendPrefixInt(b, '~', int64(n))
	}
	return appendPrefixInt(b, '*', int64(n))
}

// AppendPushLen appends a push header: ">n\r\n", or "*n\r\n" in RESP2 (how
// pub/sub messages reach RESP2 clients).
func AppendPushLen(b []byte, n int, proto int) []byte {
	if proto >= 3 {
		return appendPrefixInt(b, '>', int64(n))
	}
	return appendPrefixInt(b, '*', int64(n))
}

// AppendBool appends a boolean: "#t\r\n"/"#f\r\n", or ":1\r\n"/":0\r\n" in
// RESP2.
func AppendBool(b []byte, v bool, proto int) []byte {
	switch {
	case proto >= 3 && v:
		return append(b, "#t\r\n"...)
	case proto >= 3:
		return append(b, "#f\r\n"...)
	case v:
		return append(b, ":1\r\n"...)
	default:
		return append(b, ":0\r\n"...)
	}
}

// AppendVerbatim appends text as a verbatim string of format "txt":
// "=<len+4>\r\ntxt:<text>\r\n", or a bulk string in RESP2.
func AppendVerbatim(b []byte, text []byte, proto int) []byte {
	if proto < 3 {
		return AppendBulk(b, text)
	}
	b = appendPrefixInt(b, '=', int64(len(text))+4)
	b = append(b, "txt:"...)
	b = append(b, text...)
	return appendCRLF(b)
}

// AppendBigNumber appends num (decimal digits, optional '-') as a big
// number "(num\r\n", or a bulk string in RESP2 (addReplyBigNum).
func AppendBigNumber(b []byte, num string, proto int) []byte {
	if proto < 3 {
		return AppendBulkString(b, num)
	}
	b = append(b, '(')
	b = append(b, num...)
	return appendCRLF(b)
}

// AppendG17 appends f like C's printf("%.17g"), as glibc prints it: "inf",
// "-inf", "nan", "-nan" for the special values.
func AppendG17(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// AppendDouble appends f as Redis 7.0's addReplyDouble does: in RESP2 a bulk
// string with printf("%.17g") text ("inf"/"-inf" for infinities), in RESP3
// ",<%.17g>\r\n" (",inf\r\n", ",-inf\r\n").
func AppendDouble(b []byte, f float64, proto int) []byte {
	if proto >= 3 {
		b = append(b, ',')
		b = AppendG17(b, f)
		return appendCRLF(b)
	}
	var tmp [32]byte
	return AppendBulk(b, AppendG17(tmp[:0], f))
}

// FormatLongDouble appends f as Redis's ld2string(..., LD_STR_HUMAN) prints
// it (the text INCRBYFLOAT and HINCRBYFLOAT store and return): printf
// "%.17Lf" with trailing zeros and a trailing '.' removed, "-0" turned into
// "0", and "inf"/"-inf" for infinities. For a float64 value the text equals
// what Redis prints for the same value held in a long double.
func FormatLongDouble(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', 17, 64)
	// Precision 17 always produces a '.', so trailing zeros are fractional.
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if len(b)-start == 2 && b[start] == '-' && b[start+1] == '0' {
		b = append(b[:start], '0')
	}
	return b
}

// AppendHumanDouble appends f as addReplyHumanLongDouble does (GEOPOS and
// GEO* WITHCOORD): FormatLongDouble text as a bulk string in RESP2, or as a
// RESP3 double ",<text>\r\n".
func AppendHumanDouble(b []byte, f float64, proto int) []byte {
	if proto >= 3 {
		b = append(b, ',')
		b = FormatLongDouble(b, f)
		return appendCRLF(b)
	}
	var tmp [352]byte // longest: "-" + 309 digits + "." + 17 digits
	return AppendBulk(b, FormatLongDouble(tmp[:0], f))
}
