package rdb

import (
	"encoding/binary"
	"errors"
)

// Length-encoding forms: the top two bits of a length's first byte, or the
// whole first byte for the 32- and 64-bit forms.
const (
	len6Bit  = 0    // 00xxxxxx
	len14Bit = 1    // 01xxxxxx xxxxxxxx
	len32Bit = 0x80 // 10000000 + 4 bytes big-endian
	len64Bit = 0x81 // 10000001 + 8 bytes big-endian
	lenEnc   = 3    // 11xxxxxx: a special string encoding
)

// Special string encodings: the low 6 bits of a 11xxxxxx length byte.
const (
	EncInt8  = 0 // 0xC0: 1-byte signed integer
	EncInt16 = 1 // 0xC1: 2-byte little-endian signed integer
	EncInt32 = 2 // 0xC2: 4-byte little-endian signed integer
	EncLZF   = 3 // 0xC3: LZF-compressed string
)

var (
	// ErrShort is returned when the input ends inside an item.
	ErrShort = errors.New("rdb: unexpected end of input")
	// ErrBadLength is an unknown length form (a 10xxxxxx byte other than
	// 0x80 and 0x81); Redis: "Unknown length encoding".
	ErrBadLength = errors.New("rdb: unknown length encoding")
)

// AppendLen appends n to dst in the shortest length form, as Redis's
// rdbSaveLen writes it.
func AppendLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n)|len6Bit<<6)
	case n < 1<<14:
		return append(dst, byte(n>>8)|len14Bit<<6, byte(n))
	case n <= 1<<32-1:
		return binary.BigEndian.AppendUint32(append(dst, len32Bit), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(dst, len64Bit), n)
	}
}

// ReadLen reads a length from the start of b and returns it with the
// number of bytes it took. If the first byte is a special string encoding
// (11xxxxxx), encoded is true and n is the encoding (EncInt8 ...), as Redis's
// rdbLoadLenByRef reports it; callers that want a plain length and no
// encoding (Redis's rdbLoadLen with a NULL isencoded) may ignore encoded.
func ReadLen(b []byte) (n uint64, encoded bool, size int, err error) {
	if len(b) == 0 {
		return 0, false, 0, ErrShort
	}
	switch c := b[0]; {
	case c>>6 == lenEnc:
		return uint64(c & 0x3f), true, 1, nil
	case c>>6 == len6Bit:
		return uint64(c & 0x3f), false, 1, nil
	case c>>6 == len14Bit:
		if len(b) < 2 {
			return 0, false, 0, ErrShort
		}
		return uint64(c&0x3f)<<8 | uint64(b[1]), false, 2, nil
	case c == len32Bit:
		if len(b) < 5 {
			return 0, false, 0, ErrShort
		}
		return uint64(binary.BigEndian.Uint32(b[1:])), false, 5, nil
	case c == len64Bit:
		if len(b) < 9 {
			return 0, false, 0, ErrShort
		}
		return binary.BigEndian.Uint64(b[1:]), false, 9, nil
	default:
		return 0, false, 0, ErrBadLength
	}
}
