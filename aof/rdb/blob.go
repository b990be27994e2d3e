package rdb

import (
	"encoding/binary"
	"slices"
	"strconv"
)

// The in-memory encodings Redis stores whole, as one RDB string: ziplist,
// listpack, intset and zipmap. Parsers check every size against the blob
// and return ErrBadBlob for anything malformed; elements alias the blob.

// parseListpack returns the elements of a listpack.
func parseListpack(b []byte) ([][]byte, error) { return parseListpackInto(nil, b) }

// parseListpackInto is parseListpack appending to dst.
func parseListpackInto(dst [][]byte, b []byte) ([][]byte, error) {
	if len(b) < 7 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xff {
		return nil, ErrBadBlob
	}
	n := int(binary.LittleEndian.Uint16(b[4:]))
	out := slices.Grow(dst, min(n, len(b)/2))
	var ints []byte // the text of integer elements (intText)
	p := 6
	for b[p] != 0xff {
		start := p
		c := b[p]
		var elem []byte
		var v int64
		isInt := true
		need := func(k int) bool { return p+k <= len(b)-1 }
		switch {
		case c&0x80 == 0: // 7-bit unsigned
			v = int64(c)
			p++
		case c&0xc0 == 0x80: // 6-bit string length
			l := int(c & 0x3f)
			if !need(1 + l) {
				return nil, ErrBadBlob
			}
			elem, isInt = b[p+1:p+1+l], false
			p += 1 + l
		case c&0xe0 == 0xc0: // 13-bit signed
			if !need(2) {
				return nil, ErrBadBlob
			}
			u := int64(c&0x1f)<<8 | int64(b[p+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			v = u
			p += 2
		case c&0xf0 == 0xe0: // 12-bit string length
			if !need(2) {
				return nil, ErrBadBlob
			}
			l := int(c&0x0f)<<8 | int(b[p+1])
			if !need(2 + l) {
				return nil, ErrBadBlob
			}
			elem, isInt = b[p+2:p+2+l], false
			p += 2 + l
		case c == 0xf0: // 32-bit string length
			if !need(5) {
				return nil, ErrBadBlob
			}
			l := uint64(binary.LittleEndian.Uint32(b[p+1:]))
			if l > uint64(len(b)) || !need(5+int(l)) {
				return nil, ErrBadBlob
			}
			elem, isInt = b[p+5:p+5+int(l)], false
			p += 5 + int(l)
		case c >= 0xf1 && c <= 0xf4:
			size := [...]int{2, 3, 4, 8}[c-0xf1]
			if !need(1 + size) {
				return nil, ErrBadBlob
			}
			v = leSigned(b[p+1 : p+1+size])
			p += 1 + size
		default:
			return nil, ErrBadBlob
		}
		// The backlen: the entry's size, 7 bits a byte, read backwards.
		l := p - start
		bl := backlenSize(l)
		if !need(bl) {
			return nil, ErrBadBlob
		}
		var got uint64
		for i := 0; i < bl; i++ {
			got |= uint64(b[p+bl-1-i]&127) << (7 * i)
		}
		if got != uint64(l) {
			return nil, ErrBadBlob
		}
		p += bl
		if isInt {
			elem = intText(&ints, v)
		}
		out = append(out, elem)
	}
	if p != len(b)-1 || (n != 0xffff && n != len(out)) {
		return nil, ErrBadBlob
	}
	return out, nil
}

func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// parseZiplist returns the elements of a ziplist (Redis < 7.0).
func parseZiplist(b []byte) ([][]byte, error) { return parseZiplistInto(nil, b) }

// parseZiplistInto is parseZiplist appending to dst.
func parseZiplistInto(dst [][]byte, b []byte) ([][]byte, error) {
	if len(b) < 11 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xff {
		return nil, ErrBadBlob
	}
	tail := int(binary.LittleEndian.Uint32(b[4:]))
	n := int(binary.LittleEndian.Uint16(b[8:]))
	out := slices.Grow(dst, min(n, len(b)/2))
	var ints []byte // the text of integer elements (intText)
	p, prev, last := 10, 0, 10
	for b[p] != 0xff {
		start := p
		// prevlen: 1 byte, or 0xfe and 4 bytes little-endian.
		var pl int
		if b[p] < 0xfe {
			pl = int(b[p])
			p++
		} else if b[p] == 0xfe && p+5 < len(b) {
			pl = int(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
		} else {
			return nil, ErrBadBlob
		}
		if pl != prev {
			return nil, ErrBadBlob
		}
		need := func(k int) bool { return p+k <= len(b)-1 }
		c := b[p]
		var elem []byte
		var v int64
		isInt := true
		switch {
		case c>>6 == 0:
			l := int(c & 0x3f)
			if !need(1 + l) {
				return nil, ErrBadBlob
			}
			elem, isInt = b[p+1:p+1+l], false
			p += 1 + l
		case c>>6 == 1:
			if !need(2) {
				return nil, ErrBadBlob
			}
			l := int(c&0x3f)<<8 | int(b[p+1])
			if !need(2 + l) {
				return nil, ErrBadBlob
			}
			elem, isInt = b[p+2:p+2+l], false
			p += 2 + l
		case c == 0x80:
			if !need(5) {
				return nil, ErrBadBlob
			}
			l := uint64(binary.BigEndian.Uint32(b[p+1:]))
			if l > uint64(len(b)) || !need(5+int(l)) {
				return nil, ErrBadBlob
			}
			elem, isInt = b[p+5:p+5+int(l)], false
			p += 5 + int(l)
		case c == 0xc0 || c == 0xd0 || c == 0xe0 || c == 0xf0 || c == 0xfe:
			size := ziplistIntSize(c)
			if !need(1 + size) {
				return nil, ErrBadBlob
			}
			v = leSigned(b[p+1 : p+1+size])
			p += 1 + size
		case c >= 0xf1 && c <= 0xfd: // immediate 0..12
			v = int64(c&0x0f) - 1
			p++
		default:
			return nil, ErrBadBlob
		}
		if isInt {
			elem = intText(&ints, v)
		}
		out = append(out, elem)
		prev, last = p-start, start
	}
	if p != len(b)-1 || (n != 0xffff && n != len(out)) || (len(out) > 0 && tail != last) || (len(out) == 0 && tail != 10) {
		return nil, ErrBadBlob
	}
	return out, nil
}

// parseIntset returns the decimal members of an intset, which must be
// strictly ascending.
func parseIntset(b []byte) ([][]byte, error) {
	if len(b) < 8 {
		return nil, ErrBadBlob
	}
	enc := binary.LittleEndian.Uint32(b)
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if (enc != 2 && enc != 4 && enc != 8) || n*uint64(enc)+8 != uint64(len(b)) {
		return nil, ErrBadBlob
	}
	out := make([][]byte, 0, n)
	var ints []byte // the text of integer elements (intText)
	var prev int64
	for i := 0; i < int(n); i++ {
		p := b[8+i*int(enc):]
		var v int64
		switch enc {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= prev {
			return nil, ErrBadBlob
		}
		prev = v
		out = append(out, intText(&ints, v))
	}
	return out, nil
}

// parseZipmap returns the keys and values, alternating, of a zipmap (Redis
// < 2.6): a count byte, then key and value each after its length (1 byte
// below 254, or 254 and 4 bytes little-endian), the value followed by a
// count of free bytes to skip, then 0xff.
func parseZipmap(b []byte) ([][]byte, error) {
	if len(b) < 2 || b[len(b)-1] != 0xff {
		return nil, ErrBadBlob
	}
	var out [][]byte
	p := 1
	zlen := func() (int, bool) {
		if p >= len(b)-1 {
			return 0, false
		}
		if c := b[p]; c < 254 {
			p++
			return int(c), true
		} else if c == 254 && p+5 < len(b) {
			l := int(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
			return l, l <= len(b)
		}
		return 0, false
	}
	for b[p] != 0xff {
		kl, ok := zlen()
		if !ok || p+kl > len(b)-1 {
			return nil, ErrBadBlob
		}
		key := b[p : p+kl]
		p += kl
		vl, ok := zlen()
		if !ok || p+1+vl > len(b)-1 {
			return nil, ErrBadBlob
		}
		free := int(b[p])
		p++
		val := b[p : p+vl]
		p += vl + free
		if p > len(b)-1 {
			return nil, ErrBadBlob
		}
		out = append(out, key, val)
	}
	if p != len(b)-1 {
		return nil, ErrBadBlob
	}
	if c := int(b[0]); c < 254 && c != len(out)/2 {
		return nil, ErrBadBlob
	}
	return out, nil
}

// leSigned is a little-endian two's-complement integer of 1 to 8 bytes.
func leSigned(b []byte) int64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	shift := 64 - 8*len(b)
	return int64(u<<shift) >> shift
}

// ziplistIntSize is the size of a ziplist integer of encoding byte c
// (0xc0, 0xd0, 0xe0, 0xf0 or 0xfe).
func ziplistIntSize(c byte) int {
	switch c {
	case 0xc0:
		return 2
	case 0xd0:
		return 4
	case 0xe0:
		return 8
	case 0xf0:
		return 3
	}
	return 1
}

// intText appends the decimal text of v to *buf, a chunk shared by the
// integer elements of one blob, and returns it: an allocation per element
// was 5% of the CPU of a load of 1M mixed keys (sorted sets' integer
// scores, pprof).
func intText(buf *[]byte, v int64) []byte {
	if cap(*buf)-len(*buf) < 20 {
		*buf = make([]byte, 0, 160)
	}
	at := len(*buf)
	*buf = strconv.AppendInt(*buf, v, 10)
	return (*buf)[at:len(*buf):len(*buf)]
}
