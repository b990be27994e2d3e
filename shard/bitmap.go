package shard

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Bitmap commands (Redis 7.0 bitops.c). A bitmap is a string: bit 0 is the
// most significant bit of the first byte. Commands that write bits grow the
// string with zero bytes as needed and leave it raw-encoded, as Redis's
// dbUnshareStringValue does.

var bitmapCommands = []Command{
	{Name: "setbit", Run: cmdSetbit},
	{Name: "getbit", Run: cmdGetbit},
	{Name: "bitcount", Run: cmdBitcount},
	{Name: "bitpos", Run: cmdBitpos},
	{Name: "bitop", Run: cmdBitop},
	{Name: "bitfield", Run: cmdBitfield},
	{Name: "bitfield_ro", Run: cmdBitfieldRO},
}

const (
	errBitOffset     = "ERR bit offset is not an integer or out of range"
	errBitValue      = "ERR bit is not an integer or out of range"
	errBitArg        = "ERR The bit argument must be 1 or 0."
	errBitfieldType  = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errBitopNot      = "ERR BITOP NOT must be called with a single source key."
	errOverflowType  = "ERR Invalid OVERFLOW type specified"
	errBitfieldROGet = "ERR BITFIELD_RO only supports the GET subcommand"
)

// maxBitmapBytes is the longest string a bit command builds: a value's
// length is stored in 32 bits, so it holds even if proto-max-bulk-len is
// raised past 4GB.
const maxBitmapBytes = math.MaxUint32

// bitOffset parses a bit offset (Redis's getBitOffsetFromArgument). With
// width > 0 an offset written "#N" means N*width (BITFIELD). Offsets must
// address a byte below proto-max-bulk-len, except while loading the log
// (and below maxBitmapBytes always).
func bitOffset(c *Ctx, db *DB, arg []byte, width int) (uint64, bool) {
	hash := width > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	off, ok := ParseInt(arg)
	if ok && hash {
		off *= int64(width) // wraps like Redis's signed multiply
	}
	if !ok || off < 0 || (!db.sh.Loading && off>>3 >= db.sh.Cfg.ProtoMaxBulkLen.Load()) ||
		(off+64)>>3 >= maxBitmapBytes {
		c.Err(errBitOffset)
		return 0, false
	}
	return uint64(off), true
}

// bitString looks key up for a bit write, creating it or zero-padding it so
// that bit maxbit exists (Redis's lookupStringForBitCommand). It returns the
// slot and whether the value was created or grew; slot -1 means WRONGTYPE was
// replied. The value is raw-encoded afterwards.
func bitString(c *Ctx, db *DB, key []byte, maxbit uint64) (slot int32, grew bool) {
	need := int(maxbit>>3) + 1
	slot = db.Write(key)
	if slot < 0 {
		slot = db.SetStr(key, nil, false)
		db.ResizeStr(slot, need)
		return slot, true
	}
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return -1, false
	}
	old := len(db.Str(slot))
	db.ResizeStr(slot, max(old, need))
	return slot, old < need
}

// SETBIT key offset value
func cmdSetbit(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	off, ok := bitOffset(c, db, argv[2], 0)
	if !ok {
		return
	}
	on, ok := ParseInt(argv[3])
	if !ok || on&^1 != 0 {
		c.Err(errBitValue)
		return
	}
	slot, grew := bitString(c, db, key, off)
	if slot < 0 {
		return
	}
	p := db.Str(slot)
	mask := byte(1) << (7 - off&7)
	old := p[off>>3]&mask != 0
	if grew || old != (on == 1) {
		if on == 1 {
			p[off>>3] |= mask
		} else {
			p[off>>3] &^= mask
		}
		db.Notify(NotifyString, "setbit", key)
		c.Dirty(1)
	}
	if old {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

// GETBIT key offset
func cmdGetbit(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	off, ok := bitOffset(c, db, argv[2], 0)
	if !ok {
		return
	}
	slot := db.Read(key)
	if slot < 0 {
		c.Int(0)
		return
	}
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return
	}
	p := db.Str(slot)
	if off>>3 < uint64(len(p)) && p[off>>3]&(1<<(7-off&7)) != 0 {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

// popcount counts the set bits of p, a word at a time.
func popcount(p []byte) int64 {
	var n int
	for len(p) >= 32 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(p)) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[8:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[16:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[24:]))
		p = p[32:]
	}
	for len(p) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	for _, b := range p {
		n += bits.OnesCount8(b)
	}
	return int64(n)
}

// bitpos returns the position of the first bit set to bit in p (Redis's
// redisBitpos): looking for a clear bit past the end finds the first bit
// after p (the string is zero-padded on the right); looking for a set bit
// in all-zero bytes gives -1.
func bitpos(p []byte, bit int) int64 {
	var skip8 byte
	var skip64 uint64
	if bit == 0 {
		skip8, skip64 = 0xff, math.MaxUint64
	}
	i := 0
	for i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:]) == skip64 {
		i += 8
	}
	for i < len(p) && p[i] == skip8 {
		i++
	}
	if i == len(p) {
		if bit == 1 {
			return -1
		}
		return int64(len(p)) * 8
	}
	b := p[i]
	if bit == 0 {
		b = ^b
	}
	return int64(i)*8 + int64(bits.LeadingZeros8(b))
}

// bitRange converts a BITCOUNT/BITPOS range to bytes [start, end] of a
// string of n bytes. In bit units (isBit) it also returns the masks of the
// bits of the first and last byte that lie outside the range. Redis's
// rules: negative indexes count from the end, and are clamped to the string.
func bitRange(start, end, n int64, isBit bool) (s, e int64, firstMask, lastMask byte) {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if isBit && start <= end {
		firstMask = ^byte((1 << (8 - start&7)) - 1)
		lastMask = byte((1 << (7 - end&7)) - 1)
		start >>= 3
		end >>= 3
	}
	return start, end, firstMask, lastMask
}

// parseBitUnit parses BYTE or BIT.
func parseBitUnit(c *Ctx, arg []byte) (isBit, ok bool) {
	switch {
	case EqualFold(arg, "bit"):
		return true, true
	case EqualFold(arg, "byte"):
		return false, true
	}
	c.Err(ErrSyntax)
	return false, false
}

// stringForBitRead looks key up for reading a bitmap: found is false for a
// missing key, and ok is false when the key holds another type (WRONGTYPE
// has been replied).
func stringForBitRead(c *Ctx, db *DB, key []byte) (p []byte, found, ok bool) {
	slot := db.Read(key)
	if slot < 0 {
		return nil, false, true
	}
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return nil, false, false
	}
	return db.Str(slot), true, true
}

// BITCOUNT key [start end [BYTE|BIT]]
func cmdBitcount(c *Ctx, argv [][]byte) {
	p, found, ok := stringForBitRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if !found {
		c.Int(0)
		return
	}
	n := int64(len(p))
	start, end := int64(0), n-1
	var firstMask, lastMask byte
	switch len(argv) {
	case 2:
	case 4, 5:
		if start, ok = ParseInt(argv[2]); !ok {
			c.Err(ErrNotInt)
			return
		}
		if end, ok = ParseInt(argv[3]); !ok {
			c.Err(ErrNotInt)
			return
		}
		if start < 0 && end < 0 && start > end {
			c.Int(0)
			return
		}
		isBit := false
		if len(argv) == 5 {
			if isBit, ok = parseBitUnit(c, argv[4]); !ok {
				return
			}
		}
		start, end, firstMask, lastMask = bitRange(start, end, n, isBit)
	default:
		c.Err(ErrSyntax)
		return
	}
	if start > end {
		c.Int(0)
		return
	}
	count := popcount(p[start : end+1])
	count -= int64(bits.OnesCount8(p[start]&firstMask) + bits.OnesCount8(p[end]&lastMask))
	c.Int(count)
}

// BITPOS key bit [start [end [BYTE|BIT]]]
func cmdBitpos(c *Ctx, argv [][]byte) {
	bit, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if bit != 0 && bit != 1 {
		c.Err(errBitArg)
		return
	}
	p, found, ok := stringForBitRead(c, c.DBOf(argv[1]), argv[1])
	if !ok {
		return
	}
	if !found {
		if bit == 1 {
			c.Int(-1)
		} else {
			c.Int(0)
		}
		return
	}
	n := int64(len(p))
	start, end := int64(0), n-1
	endGiven := false
	var firstMask, lastMask byte
	switch len(argv) {
	case 3:
	case 4, 5, 6:
		if start, ok = ParseInt(argv[3]); !ok {
			c.Err(ErrNotInt)
			return
		}
		isBit := false
		if len(argv) == 6 {
			if isBit, ok = parseBitUnit(c, argv[5]); !ok {
				return
			}
		}
		if len(argv) >= 5 {
			if end, ok = ParseInt(argv[4]); !ok {
				c.Err(ErrNotInt)
				return
			}
			endGiven = true
		}
		start, end, firstMask, lastMask = bitRange(start, end, n, isBit)
	default:
		c.Err(ErrSyntax)
		return
	}
	if start > end {
		c.Int(-1)
		return
	}
	c.Int(bitposRange(p, int(bit), start, end, firstMask, lastMask, endGiven))
}

// bitposRange finds the first bit equal to bit in bytes [start, end] of p,
// ignoring the bits the masks mark in the first and last byte (Redis's
// bitposCommand after the range is parsed). With an explicit end, a clear
// bit found only past the range is no match (-1): the string is not
// zero-padded inside a range the user bounded.
func bitposRange(p []byte, bit int, start, end int64, firstMask, lastMask byte, endGiven bool) int64 {
	// Out-of-range bits are forced to the value not looked for.
	fix := func(b, mask byte) byte {
		if bit == 1 {
			return b &^ mask
		}
		return b | mask
	}
	var one [1]byte
	bytes := end - start + 1
	pos := int64(-1)
	done := false
	if firstMask != 0 {
		one[0] = fix(p[start], firstMask)
		if lastMask != 0 && bytes == 1 {
			one[0] = fix(one[0], lastMask)
		}
		pos = bitpos(one[:], bit)
		if bytes == 1 || (pos != -1 && pos != 8) {
			done = true
		} else {
			start++
			bytes--
		}
	}
	if !done {
		cur := bytes
		if lastMask != 0 {
			cur--
		}
		if cur > 0 {
			pos = bitpos(p[start:start+cur], bit)
			if bytes == cur || (pos != -1 && pos != cur<<3) {
				done = true
			} else {
				start += cur
				bytes -= cur
			}
		}
	}
	if !done {
		one[0] = fix(p[end], lastMask)
		pos = bitpos(one[:], bit)
	}
	if endGiven && bit == 0 && pos == bytes<<3 {
		return -1
	}
	if pos != -1 {
		pos += start << 3
	}
	return pos
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
//
// The keys may live on different shards: the dispatcher holds them all.
func cmdBitop(c *Ctx, argv [][]byte) {
	op := argv[1]
	const (
		opAnd = iota
		opOr
		opXor
		opNot
	)
	var kind int
	switch {
	case EqualFold(op, "and"):
		kind = opAnd
	case EqualFold(op, "or"):
		kind = opOr
	case EqualFold(op, "xor"):
		kind = opXor
	case EqualFold(op, "not"):
		kind = opNot
	default:
		c.Err(ErrSyntax)
		return
	}
	if kind == opNot && len(argv) != 4 {
		c.Err(errBitopNot)
		return
	}
	srcKeys := argv[3:]
	var stack [8][]byte
	srcs := stack[:0]
	maxLen := 0
	for _, k := range srcKeys {
		db := c.DBOf(k)
		slot := db.Read(k)
		if slot < 0 {
			srcs = append(srcs, nil)
			continue
		}
		if db.Type(slot) != TypeString {
			c.Err(ErrWrongType)
			return
		}
		s := db.Str(slot)
		srcs = append(srcs, s)
		maxLen = max(maxLen, len(s))
	}

	dest := argv[2]
	ddb := c.DBOf(dest)
	if maxLen == 0 {
		if slot := ddb.Write(dest); slot >= 0 {
			ddb.Delete(slot)
			ddb.Notify(NotifyGeneric, "del", dest)
			c.Dirty(1)
		}
		c.Int(0)
		return
	}

	// The sources alias slab memory (one may be the destination), so the
	// result is built apart and stored afterwards. Bytes past the end of a
	// shorter source count as zero.
	res := make([]byte, maxLen)
	copy(res, srcs[0])
	if kind == opNot {
		i := 0
		for ; i+8 <= maxLen; i += 8 {
			binary.LittleEndian.PutUint64(res[i:], ^binary.LittleEndian.Uint64(res[i:]))
		}
		for ; i < maxLen; i++ {
			res[i] = ^res[i]
		}
	}
	for _, s := range srcs[1:] {
		switch kind {
		case opAnd:
			i := 0
			for ; i+8 <= len(s); i += 8 {
				binary.LittleEndian.PutUint64(res[i:], binary.LittleEndian.Uint64(res[i:])&binary.LittleEndian.Uint64(s[i:]))
			}
			for ; i < len(s); i++ {
				res[i] &= s[i]
			}
			clear(res[len(s):])
		case opOr:
			i := 0
			for ; i+8 <= len(s); i += 8 {
				binary.LittleEndian.PutUint64(res[i:], binary.LittleEndian.Uint64(res[i:])|binary.LittleEndian.Uint64(s[i:]))
			}
			for ; i < len(s); i++ {
				res[i] |= s[i]
			}
		case opXor:
			i := 0
			for ; i+8 <= len(s); i += 8 {
				binary.LittleEndian.PutUint64(res[i:], binary.LittleEndian.Uint64(res[i:])^binary.LittleEndian.Uint64(s[i:]))
			}
			for ; i < len(s); i++ {
				res[i] ^= s[i]
			}
		}
	}
	ddb.Write(dest) // expire a stale destination first, as setKey does
	slot := ddb.SetStr(dest, res, false)
	ddb.SetEncoding(slot, EncRaw) // Redis stores the result as a raw string
	ddb.Notify(NotifyString, "set", dest)
	c.Dirty(1)
	c.Int(int64(maxLen))
}

// Bitfield overflow behaviours.
const (
	overflowWrap = iota
	overflowSat
	overflowFail
)

// bitfieldOp is one GET, SET or INCRBY of a BITFIELD command.
type bitfieldOp struct {
	offset   uint64
	value    int64 // SET value or INCRBY increment
	op       byte  // 'g', 's' or 'i'
	overflow int
	width    int
	signed   bool
}

// bitfieldType parses i1..i64 and u1..u63.
func bitfieldType(c *Ctx, arg []byte) (signed bool, width int, ok bool) {
	if len(arg) == 0 || (arg[0] != 'i' && arg[0] != 'u') {
		c.Err(errBitfieldType)
		return false, 0, false
	}
	signed = arg[0] == 'i'
	n, ok := ParseInt(arg[1:])
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		c.Err(errBitfieldType)
		return false, 0, false
	}
	return signed, int(n), true
}

// getBits reads width bits at bit offset off of p as an unsigned integer;
// bits past the end of p read as zero.
func getBits(p []byte, off uint64, width int) uint64 {
	var v uint64
	for j := 0; j < width; j++ {
		byteIdx := (off + uint64(j)) >> 3
		var b byte
		if byteIdx < uint64(len(p)) {
			b = p[byteIdx]
		}
		v = v<<1 | uint64(b>>(7-(off+uint64(j))&7)&1)
	}
	return v
}

// setBits writes the low width bits of v at bit offset off of p, which is
// long enough.
func setBits(p []byte, off uint64, width int, v uint64) {
	for j := 0; j < width; j++ {
		bit := byte(v>>(width-1-j)) & 1
		o := off + uint64(j)
		shift := 7 - o&7
		p[o>>3] = p[o>>3]&^(1<<shift) | bit<<shift
	}
}

// signExtend interprets the low width bits of v as a two's complement number.
func signExtend(v uint64, width int) int64 {
	if width < 64 && v&(1<<(width-1)) != 0 {
		v |= math.MaxUint64 << width
	}
	return int64(v)
}

// unsignedOverflow reports whether value+incr leaves the range of a width-bit
// unsigned integer (Redis's checkUnsignedBitfieldOverflow) and the value to
// store instead under wrap or sat.
func unsignedOverflow(value uint64, incr int64, width int, ow int) (over bool, limit uint64) {
	maxv := uint64(1)<<width - 1
	maxincr := int64(maxv - value)
	minincr := -int64(value)
	wrap := func() uint64 { return (value + uint64(incr)) & maxv }
	switch {
	case value > maxv || (incr > 0 && incr > maxincr):
		if ow == overflowWrap {
			return true, wrap()
		}
		return true, maxv
	case incr < 0 && incr < minincr:
		if ow == overflowWrap {
			return true, wrap()
		}
		return true, 0
	}
	return false, 0
}

// signedOverflow is Redis's checkSignedBitfieldOverflow.
func signedOverflow(value, incr int64, width int, ow int) (over bool, limit int64) {
	maxv := int64(math.MaxInt64)
	if width < 64 {
		maxv = 1<<(width-1) - 1
	}
	minv := -maxv - 1
	maxincr := int64(uint64(maxv) - uint64(value))
	minincr := minv - value
	wrap := func() int64 {
		s := uint64(value) + uint64(incr)
		if width < 64 {
			mask := uint64(math.MaxUint64) << width
			if s&(1<<(width-1)) != 0 {
				s |= mask
			} else {
				s &^= mask
			}
		}
		return int64(s)
	}
	switch {
	case value > maxv || (width != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr):
		if ow == overflowWrap {
			return true, wrap()
		}
		return true, maxv
	case value < minv || (width != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr):
		if ow == overflowWrap {
			return true, wrap()
		}
		return true, minv
	}
	return false, 0
}

// BITFIELD key [GET type offset] [SET type offset value]
// [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] ...
func cmdBitfield(c *Ctx, argv [][]byte) { bitfield(c, argv, false) }

// BITFIELD_RO key [GET type offset ...]
func cmdBitfieldRO(c *Ctx, argv [][]byte) { bitfield(c, argv, true) }

func bitfield(c *Ctx, argv [][]byte, readOnly bool) {
	key := argv[1]
	db := c.DBOf(key)
	var stack [8]bitfieldOp
	ops := stack[:0]
	ow := overflowWrap
	writes := false
	var highest uint64
	for j := 2; j < len(argv); j++ {
		rem := len(argv) - j - 1
		sub := argv[j]
		var op byte
		switch {
		case EqualFold(sub, "get") && rem >= 2:
			op = 'g'
		case EqualFold(sub, "set") && rem >= 3:
			op = 's'
		case EqualFold(sub, "incrby") && rem >= 3:
			op = 'i'
		case EqualFold(sub, "overflow") && rem >= 1:
			j++
			switch t := argv[j]; {
			case EqualFold(t, "wrap"):
				ow = overflowWrap
			case EqualFold(t, "sat"):
				ow = overflowSat
			case EqualFold(t, "fail"):
				ow = overflowFail
			default:
				c.Err(errOverflowType)
				return
			}
			continue
		default:
			c.Err(ErrSyntax)
			return
		}
		signed, width, ok := bitfieldType(c, argv[j+1])
		if !ok {
			return
		}
		off, ok := bitOffset(c, db, argv[j+2], width)
		if !ok {
			return
		}
		var v int64
		if op != 'g' {
			writes = true
			highest = max(highest, off+uint64(width)-1)
			if v, ok = ParseInt(argv[j+3]); !ok {
				c.Err(ErrNotInt)
				return
			}
			j++
		}
		ops = append(ops, bitfieldOp{offset: off, value: v, op: op, overflow: ow, width: width, signed: signed})
		j += 2
	}

	var slot int32 = -1
	grew := false
	if !writes {
		slot = db.Read(key)
		if slot >= 0 && db.Type(slot) != TypeString {
			c.Err(ErrWrongType)
			return
		}
	} else {
		if readOnly {
			c.Err(errBitfieldROGet)
			return
		}
		if slot, grew = bitString(c, db, key, highest); slot < 0 {
			return
		}
	}

	c.Array(len(ops))
	changes := 0
	for _, o := range ops {
		var p []byte
		if slot >= 0 {
			p = db.Str(slot)
		}
		if o.op == 'g' {
			v := getBits(p, o.offset, o.width)
			if o.signed {
				c.Int(signExtend(v, o.width))
			} else {
				c.Int(int64(v))
			}
			continue
		}
		old := getBits(p, o.offset, o.width)
		var newv, ret uint64
		var over bool
		if o.signed {
			oldv := signExtend(old, o.width)
			var nv, limit int64
			if o.op == 'i' {
				over, limit = signedOverflow(oldv, o.value, o.width, o.overflow)
				nv = oldv + o.value
				if over {
					nv = limit
				}
				ret = uint64(nv)
			} else {
				nv = o.value
				if over, limit = signedOverflow(nv, 0, o.width, o.overflow); over {
					nv = limit
				}
				ret = uint64(oldv)
			}
			newv = uint64(nv)
		} else {
			var limit uint64
			if o.op == 'i' {
				newv = old + uint64(o.value)
				over, limit = unsignedOverflow(old, o.value, o.width, o.overflow)
				ret = newv
				if over {
					newv, ret = limit, limit
				}
			} else {
				newv = uint64(o.value)
				if over, limit = unsignedOverflow(newv, 0, o.width, o.overflow); over {
					newv = limit
				}
				ret = old
			}
		}
		if over && o.overflow == overflowFail {
			c.Null()
			continue
		}
		c.Int(int64(ret))
		setBits(p, o.offset, o.width, newv)
		if grew || getBitsMask(old, o.width) != getBitsMask(newv, o.width) {
			changes++
		}
	}
	if changes > 0 {
		db.Notify(NotifyString, "setbit", key)
		c.Dirty(changes)
	}
}

// getBitsMask keeps the low width bits of v.
func getBitsMask(v uint64, width int) uint64 {
	if width == 64 {
		return v
	}
	return v & (1<<width - 1)
}
