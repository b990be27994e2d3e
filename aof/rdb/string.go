package rdb

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// ErrBadEncoding is a special string encoding other than EncInt8, EncInt16,
// EncInt32 and EncLZF; Redis: "Unknown RDB string encoding type".
var ErrBadEncoding = errors.New("rdb: unknown string encoding")

// lzfMaxRatio bounds how many bytes one byte of LZF input can produce: a
// 3-byte maximal match yields 264. A declared length beyond it cannot
// decompress, so ReadString refuses it before allocating.
const lzfMaxRatio = lzfMaxRef / 3

// AppendString appends s as an RDB string, choosing the encoding as Redis's
// rdbSaveRawString does: an integer encoding for the canonical decimal text
// of a 32-bit integer, else, if compress (Redis's rdbcompression) and s is
// longer than 20 bytes, LZF when that saves at least 4 bytes, else raw.
func AppendString(dst []byte, s []byte, compress bool) []byte {
	if len(s) <= 11 {
		if v, ok := canonicalInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			switch {
			case v >= -1<<7 && v < 1<<7:
				return append(dst, lenEnc<<6|EncInt8, byte(v))
			case v >= -1<<15 && v < 1<<15:
				return binary.LittleEndian.AppendUint16(append(dst, lenEnc<<6|EncInt16), uint16(v))
			default:
				return binary.LittleEndian.AppendUint32(append(dst, lenEnc<<6|EncInt32), uint32(v))
			}
		}
	}
	if compress && len(s) > 20 {
		st := lzfPool.Get().(*lzfState)
		if c := st.compress(s); len(c) <= len(s)-4 {
			dst = append(dst, lenEnc<<6|EncLZF)
			dst = AppendLen(dst, uint64(len(c)))
			dst = AppendLen(dst, uint64(len(s)))
			dst = append(dst, c...)
			lzfPool.Put(st)
			return dst
		}
		lzfPool.Put(st)
	}
	dst = AppendLen(dst, uint64(len(s)))
	return append(dst, s...)
}

// ReadString reads an RDB string in any encoding from the start of b and
// returns its bytes and the number of bytes of b it took. A raw string's
// bytes alias b; integer and LZF strings are new. Every declared length is
// checked against what is left of b before anything is allocated.
func ReadString(b []byte) (s []byte, size int, err error) {
	n, encoded, size, err := ReadLen(b)
	if err != nil {
		return nil, 0, err
	}
	rest := b[size:]
	if !encoded {
		if n > uint64(len(rest)) {
			return nil, 0, ErrShort
		}
		return rest[:n:n], size + int(n), nil
	}
	switch n {
	case EncInt8:
		if len(rest) < 1 {
			return nil, 0, ErrShort
		}
		return strconv.AppendInt(nil, int64(int8(rest[0])), 10), size + 1, nil
	case EncInt16:
		if len(rest) < 2 {
			return nil, 0, ErrShort
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(rest))), 10), size + 2, nil
	case EncInt32:
		if len(rest) < 4 {
			return nil, 0, ErrShort
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(rest))), 10), size + 4, nil
	case EncLZF:
		clen, _, k, err := ReadLen(rest)
		if err != nil {
			return nil, 0, err
		}
		size += k
		ulen, _, k, err := ReadLen(rest[k:])
		if err != nil {
			return nil, 0, err
		}
		size += k
		rest = b[size:]
		if clen > uint64(len(rest)) {
			return nil, 0, ErrShort
		}
		size += int(clen)
		if ulen == 0 {
			// Redis takes lzf_decompress's 0 (its failure value) as the
			// declared 0 bytes, whatever the compressed bytes are.
			return []byte{}, size, nil
		}
		if ulen > clen*lzfMaxRatio {
			return nil, 0, ErrLZF
		}
		out, err := LZFDecompress(rest[:clen], int(ulen))
		if err != nil {
			return nil, 0, err
		}
		return out, size, nil
	default:
		return nil, 0, ErrBadEncoding
	}
}

// str appends s as AppendString does with o.Compress; with o.marks set, a
// string LZF would be tried on is written raw and marked instead, for
// compressMarked to finish (the same bytes, later and elsewhere).
func (o *Options) str(dst, s []byte) []byte {
	if o.marks != nil && o.Compress && len(s) > 20 {
		at := len(dst)
		dst = AppendLen(dst, uint64(len(s)))
		*o.marks = append(*o.marks, strMark{at: at, data: len(dst), end: len(dst) + len(s)})
		return append(dst, s...)
	}
	return AppendString(dst, s, o.Compress)
}
