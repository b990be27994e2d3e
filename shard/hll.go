package shard

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
)

// HyperLogLog commands (Redis 7.0 hyperloglog.c). An HLL is a string in
// Redis's exact representation, so that values move between redshard and
// redis-server (GET/SET, AOF, replication) and count the same:
//
//	+------+---+-----+----------+---------------------------+
//	| HYLL | E | N/U | Cardin.  | registers ...             |
//	+------+---+-----+----------+---------------------------+
//
// a 16-byte header (magic "HYLL"; E the encoding, 0 dense or 1 sparse; three
// unused zero bytes; the cached cardinality, 64-bit little endian, whose most
// significant bit set means "stale"), then the 16384 6-bit registers.
//
// Dense: the registers packed in 12288 bytes, register i at bit 6*i, least
// significant bits first. Sparse: a run-length sequence of opcodes, ZERO
// (00xxxxxx: 1..64 zero registers), XZERO (01xxxxxx yyyyyyyy: 1..16384 zero
// registers) and VAL (1vvvvvxx: 1..4 registers of value 1..32). A sparse HLL
// becomes dense when a register exceeds 32 or it would grow past
// hll-sparse-max-bytes.
//
// Elements are hashed with MurmurHash64A and Redis's seed; the low 14 bits
// pick the register, the run of zeros in the rest (plus one) is its value.
// Counts use the estimator of Otmar Ertl's "New cardinality estimation
// algorithms for HyperLogLog sketches", as Redis 7 does.

var hllCommands = []Command{
	{Name: "pfadd", Run: cmdPfadd},
	{Name: "pfcount", Run: cmdPfcount},
	{Name: "pfmerge", Run: cmdPfmerge},
	{Name: "pfdebug", Run: cmdPfdebug},
	{Name: "pfselftest", Run: cmdPfselftest},
}

const (
	hllP          = 14
	hllQ          = 64 - hllP
	hllRegisters  = 1 << hllP
	hllPMask      = hllRegisters - 1
	hllBits       = 6
	hllRegMax     = 1<<hllBits - 1
	hllHdrSize    = 16
	hllDenseSize  = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense      = 0
	hllSparse     = 1
	hllAlphaInf   = 0.721347520444481703680 // 0.5/ln(2)
	hllSeed       = 0xadc83b19
	sparseValMax  = 32
	sparseValLen  = 4
	sparseZeroLen = 64
	sparseXZeroLn = 16384

	errHLLWrongType = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errHLLInvalid   = "INVALIDOBJ Corrupted HLL object detected"
)

// hllEmpty is a new HLL: sparse, with one XZERO opcode covering every
// register and a valid cached cardinality of 0.
var hllEmpty = []byte{'H', 'Y', 'L', 'L', hllSparse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x40 | byte((hllRegisters-1)>>8), byte((hllRegisters - 1) & 0xff)}

// murmurHash64A is Austin Appleby's MurmurHash64A, reading the input as
// little-endian words as Redis does on every architecture.
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register an element maps to and the length of the
// 000..1 pattern of its hash (1..Q+1).
func hllPatLen(ele []byte) (index int, count uint8) {
	hash := murmurHash64A(ele, hllSeed)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ // the loop ends by Q+1
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// denseGet returns dense register i of regs (the bytes after the header).
func denseGet(regs []byte, i int) uint8 {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	v := uint(regs[b]) >> fb
	if b+1 < len(regs) {
		v |= uint(regs[b+1]) << (8 - fb)
	}
	return uint8(v & hllRegMax)
}

// denseSetReg sets dense register i to v.
func denseSetReg(regs []byte, i int, v uint8) {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	regs[b] &^= byte(hllRegMax << fb)
	regs[b] |= byte(uint(v) << fb)
	if b+1 < len(regs) {
		regs[b+1] &^= byte(hllRegMax >> (8 - fb))
		regs[b+1] |= byte(uint(v) >> (8 - fb))
	}
}

// denseSet raises register i to count; it reports whether it changed.
func denseSet(regs []byte, i int, count uint8) bool {
	if count > denseGet(regs, i) {
		denseSetReg(regs, i, count)
		return true
	}
	return false
}

// Sparse opcodes.
func spIsZero(b byte) bool  { return b&0xc0 == 0 }
func spIsXZero(b byte) bool { return b&0xc0 == 0x40 }
func spIsVal(b byte) bool   { return b&0x80 != 0 }
func spZeroLen(b byte) int  { return int(b&0x3f) + 1 }
func spXZeroLen(b0, b1 byte) int {
	return (int(b0&0x3f)<<8 | int(b1)) + 1
}
func spValValue(b byte) int { return int(b>>2&0x1f) + 1 }
func spValLen(b byte) int   { return int(b&3) + 1 }
func spVal(v, n int) byte   { return byte((v-1)<<2|(n-1)) | 0x80 }

// spZeros appends the opcode for a run of n zero registers.
func spZeros(seq []byte, n int) []byte {
	if n > sparseZeroLen {
		return append(seq, 0x40|byte((n-1)>>8), byte((n-1)&0xff))
	}
	return append(seq, byte(n-1))
}

// sparseToDense converts a sparse HLL to a new dense one, keeping the header
// (magic and cached cardinality); ok is false if the opcodes do not cover
// exactly the 16384 registers.
func sparseToDense(h []byte) (dense []byte, ok bool) {
	dense = make([]byte, hllDenseSize)
	copy(dense, h[:hllHdrSize])
	dense[4] = hllDense
	regs := dense[hllHdrSize:]
	idx := 0
	p := h[hllHdrSize:]
	for i := 0; i < len(p); {
		switch b := p[i]; {
		case spIsZero(b):
			idx += spZeroLen(b)
			i++
		case spIsXZero(b):
			var b1 byte // past the end Redis reads the string's NUL terminator
			if i+1 < len(p) {
				b1 = p[i+1]
			}
			idx += spXZeroLen(b, b1)
			i += 2
		default:
			n, v := spValLen(b), spValValue(b)
			if idx+n > hllRegisters {
				return nil, false
			}
			for ; n > 0; n-- {
				denseSetReg(regs, idx, uint8(v))
				idx++
			}
			i++
		}
	}
	if idx != hllRegisters {
		return nil, false
	}
	return dense, true
}

// sparseSet raises register index to count in the sparse HLL h[:n]; h has at
// least 3 spare bytes after n (a split grows the opcodes by up to 3). It
// returns the new length and 1 if the register changed, 0 if not, -1 if the
// opcodes are corrupt, or 2 if the HLL must become dense first (the value
// does not fit a VAL opcode, or the result would pass maxBytes). It is
// Redis's hllSparseSet, so that the bytes come out the same.
func sparseSet(h []byte, n int, index int, count uint8, maxBytes int) (int, int) {
	if count > sparseValMax {
		return n, 2
	}
	end := n
	pos := hllHdrSize
	first, span := 0, 0
	prev := -1
	for pos < end {
		oplen := 1
		b := h[pos]
		switch {
		case spIsZero(b):
			span = spZeroLen(b)
		case spIsVal(b):
			span = spValLen(b)
		default:
			if pos+1 >= end {
				return n, -1
			}
			span = spXZeroLen(b, h[pos+1])
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = pos
		pos += oplen
		first += span
	}
	if span == 0 || pos >= end {
		return n, -1
	}
	b := h[pos]
	isZero, isXZero := spIsZero(b), spIsXZero(b)
	var runlen int
	switch {
	case isZero:
		runlen = spZeroLen(b)
	case isXZero:
		runlen = spXZeroLen(b, h[pos+1])
	default:
		runlen = spValLen(b)
		if uint8(spValValue(b)) >= count {
			return n, 0
		}
	}
	if (!isZero && !isXZero && runlen == 1) || (isZero && runlen == 1) {
		h[pos] = spVal(int(count), 1)
	} else {
		// Split the opcode into up to three.
		var seqBuf [5]byte
		seq := seqBuf[:0]
		last := first + span - 1
		if isZero || isXZero {
			if index != first {
				seq = spZeros(seq, index-first)
			}
			seq = append(seq, spVal(int(count), 1))
			if index != last {
				seq = spZeros(seq, last-index)
			}
		} else {
			cur := spValValue(b)
			if index != first {
				seq = append(seq, spVal(cur, index-first))
			}
			seq = append(seq, spVal(int(count), 1))
			if index != last {
				seq = append(seq, spVal(cur, last-index))
			}
		}
		oldlen := 1
		if isXZero {
			oldlen = 2
		}
		delta := len(seq) - oldlen
		if delta > 0 && n+delta > maxBytes {
			return n, 2
		}
		if delta != 0 {
			copy(h[pos+oldlen+delta:end+delta], h[pos+oldlen:end])
		}
		copy(h[pos:], seq)
		end += delta
	}

	// Merge adjacent VAL opcodes of the same value, scanning up to five
	// opcodes from the one before the change.
	p := hllHdrSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < end && scan > 0; scan-- {
		b := h[p]
		if spIsXZero(b) {
			p += 2
			continue
		}
		if spIsZero(b) {
			p++
			continue
		}
		if p+1 < end && spIsVal(h[p+1]) {
			v1, v2 := spValValue(b), spValValue(h[p+1])
			if v1 == v2 {
				if l := spValLen(b) + spValLen(h[p+1]); l <= sparseValLen {
					h[p+1] = spVal(v1, l)
					copy(h[p:end-1], h[p+1:end])
					end--
					continue // try to merge the result with its right neighbour too
				}
			}
		}
		p++
	}
	h[15] |= 0x80 // invalidate the cached cardinality
	return end, 1
}

// hllHisto adds the register values of h into histo; ok is false when a
// sparse h does not cover exactly 16384 registers.
func hllHisto(h []byte, histo *[64]int) (ok bool) {
	if h[4] == hllDense {
		regs := h[hllHdrSize:]
		// 16 registers per 12 bytes.
		for r := 0; r+12 <= len(regs); r += 12 {
			w0 := uint64(regs[r]) | uint64(regs[r+1])<<8 | uint64(regs[r+2])<<16 | uint64(regs[r+3])<<24 |
				uint64(regs[r+4])<<32 | uint64(regs[r+5])<<40
			w1 := uint64(regs[r+6]) | uint64(regs[r+7])<<8 | uint64(regs[r+8])<<16 | uint64(regs[r+9])<<24 |
				uint64(regs[r+10])<<32 | uint64(regs[r+11])<<40
			for k := 0; k < 8; k++ {
				histo[w0>>(6*k)&63]++
				histo[w1>>(6*k)&63]++
			}
		}
		return true
	}
	idx := 0
	p := h[hllHdrSize:]
	for i := 0; i < len(p); {
		switch b := p[i]; {
		case spIsZero(b):
			n := spZeroLen(b)
			idx += n
			histo[0] += n
			i++
		case spIsXZero(b):
			var b1 byte
			if i+1 < len(p) {
				b1 = p[i+1]
			}
			n := spXZeroLen(b, b1)
			idx += n
			histo[0] += n
			i += 2
		default:
			n := spValLen(b)
			idx += n
			histo[spValValue(b)] += n
			i++
		}
	}
	return idx == hllRegisters
}

// hllSigma and hllTau are the helper functions of Ertl's estimator.
func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y := 1.0
	z := x
	for {
		x *= x
		zPrime := z
		z += x * y
		y += y
		if zPrime == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y := 1.0
	z := 1 - x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		d := 1 - x
		z -= d * d * y
		if zPrime == z {
			return z / 3
		}
	}
}

// hllEstimate turns a register histogram into the cardinality estimate.
func hllEstimate(histo *[64]int) uint64 {
	m := float64(hllRegisters)
	z := m * hllTau((m-float64(histo[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * hllSigma(float64(histo[0])/m)
	return uint64(math.Round(hllAlphaInf * m * m / z))
}

// hllCount estimates the cardinality of h; ok is false if it is corrupt.
func hllCount(h []byte) (uint64, bool) {
	var histo [64]int
	ok := hllHisto(h, &histo)
	return hllEstimate(&histo), ok
}

// hllMerge raises each of regs to the matching register of h; ok is false
// if a sparse h is corrupt.
func hllMerge(regs *[hllRegisters]uint8, h []byte) bool {
	if h[4] == hllDense {
		d := h[hllHdrSize:]
		for i := range regs {
			if v := denseGet(d, i); v > regs[i] {
				regs[i] = v
			}
		}
		return true
	}
	idx := 0
	p := h[hllHdrSize:]
	for i := 0; i < len(p); {
		switch b := p[i]; {
		case spIsZero(b):
			idx += spZeroLen(b)
			i++
		case spIsXZero(b):
			var b1 byte
			if i+1 < len(p) {
				b1 = p[i+1]
			}
			idx += spXZeroLen(b, b1)
			i += 2
		default:
			n, v := spValLen(b), uint8(spValValue(b))
			if idx+n > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				regs[idx] = max(regs[idx], v)
				idx++
			}
			i++
		}
	}
	return idx == hllRegisters
}

// isHLL checks that slot holds a string in HLL format, replying with the
// error when not (Redis's isHLLObjectOrReply).
func isHLL(c *Ctx, db *DB, slot int32) bool {
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return false
	}
	h := db.Str(slot)
	if len(h) < hllHdrSize || string(h[:4]) != "HYLL" || h[4] > hllSparse ||
		(h[4] == hllDense && len(h) != hllDenseSize) || db.Encoding(slot) == EncInt {
		c.Err(errHLLWrongType)
		return false
	}
	return true
}

// hllValue is an HLL being changed in place in its slot. Sparse changes
// reserve room for the growth of one register update at a time.
type hllValue struct {
	db   *DB
	slot int32
	h    []byte // the value: h[:n] is the HLL, h[n:] spare room
	n    int
}

func openHLL(db *DB, slot int32) hllValue {
	db.Modify(slot)
	db.SetEncoding(slot, EncRaw) // Redis unshares the value as a raw string
	h := db.Str(slot)
	return hllValue{db: db, slot: slot, h: h, n: len(h)}
}

// set raises register index to count, promoting to dense when needed; it
// returns 1 if the register changed, 0 if not and -1 if the HLL is corrupt.
func (v *hllValue) set(index int, count uint8) int {
	if v.h[4] == hllDense {
		if denseSet(v.h[hllHdrSize:v.n], index, count) {
			return 1
		}
		return 0
	}
	if len(v.h) < v.n+3 {
		v.h = v.db.ResizeStr(v.slot, v.n+3)
	}
	n, r := sparseSet(v.h, v.n, index, count, int(v.db.sh.Cfg.HLLSparseMaxBytes.Load()))
	v.n = n
	if r != 2 {
		return r
	}
	if !v.toDense() {
		return -1
	}
	denseSet(v.h[hllHdrSize:], index, count)
	return 1
}

// toDense converts a sparse value to dense; false if it is corrupt.
func (v *hllValue) toDense() bool {
	if v.h[4] == hllDense {
		return true
	}
	dense, ok := sparseToDense(v.h[:v.n])
	if !ok {
		return false
	}
	v.h = v.db.ResizeStr(v.slot, hllDenseSize)
	copy(v.h, dense)
	v.n = hllDenseSize
	return true
}

// close trims the value to its length.
func (v *hllValue) close() {
	if len(v.h) != v.n {
		v.h = v.db.ResizeStr(v.slot, v.n)
	}
}

// newHLL stores an empty HLL at key.
func newHLL(db *DB, key []byte) int32 {
	slot := db.SetStr(key, hllEmpty, false)
	db.SetEncoding(slot, EncRaw)
	return slot
}

// PFADD key [element ...]
func cmdPfadd(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Write(key)
	updated := 0
	if slot < 0 {
		slot = newHLL(db, key)
		updated++
	} else if !isHLL(c, db, slot) {
		return
	}
	v := openHLL(db, slot)
	for _, ele := range argv[2:] {
		switch v.set(hllPatLen(ele)) {
		case 1:
			updated++
		case -1:
			v.close()
			c.Err(errHLLInvalid)
			return
		}
	}
	v.close()
	if updated > 0 {
		v.h[15] |= 0x80
		db.Notify(NotifyString, "pfadd", key)
		c.Dirty(updated)
		c.Int(1)
	} else {
		c.Int(0)
	}
}

// PFCOUNT key [key ...]
//
// With one key the cached cardinality is refreshed when stale, which
// changes the value: Redis then propagates the PFCOUNT itself. With several
// keys (on any shards) their union is counted and nothing changes.
func cmdPfcount(c *Ctx, argv [][]byte) {
	if len(argv) > 2 {
		var regs [hllRegisters]uint8
		for _, key := range argv[1:] {
			db := c.DBOf(key)
			slot := db.Read(key)
			if slot < 0 {
				continue
			}
			if !isHLL(c, db, slot) {
				return
			}
			if !hllMerge(&regs, db.Str(slot)) {
				c.Err(errHLLInvalid)
				return
			}
		}
		var histo [64]int
		for _, r := range regs {
			histo[r]++
		}
		c.Int(int64(hllEstimate(&histo)))
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Read(key)
	if slot < 0 {
		c.Int(0)
		return
	}
	if !isHLL(c, db, slot) {
		return
	}
	db.SetEncoding(slot, EncRaw) // Redis unshares the value here
	h := db.Str(slot)
	if h[15]&0x80 == 0 {
		c.Int(int64(binary.LittleEndian.Uint64(h[8:16])))
		return
	}
	card, ok := hllCount(h)
	if !ok {
		c.Err(errHLLInvalid)
		return
	}
	db.Modify(slot)
	binary.LittleEndian.PutUint64(db.Str(slot)[8:16], card)
	c.Dirty(1)
	c.Int(int64(card))
}

// PFMERGE destkey [sourcekey ...]
//
// The sources may live on other shards than the destination.
func cmdPfmerge(c *Ctx, argv [][]byte) {
	var regs [hllRegisters]uint8
	useDense := false
	for _, key := range argv[1:] {
		db := c.DBOf(key)
		slot := db.Read(key)
		if slot < 0 {
			continue
		}
		if !isHLL(c, db, slot) {
			return
		}
		h := db.Str(slot)
		if h[4] == hllDense {
			useDense = true
		}
		if !hllMerge(&regs, h) {
			c.Err(errHLLInvalid)
			return
		}
	}
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Write(key)
	if slot < 0 {
		slot = newHLL(db, key)
	}
	v := openHLL(db, slot)
	if useDense && !v.toDense() {
		v.close()
		c.Err(errHLLInvalid)
		return
	}
	for i, r := range regs {
		if r != 0 {
			v.set(i, r)
		}
	}
	v.close()
	v.h[15] |= 0x80
	db.Notify(NotifyString, "pfadd", key)
	c.Dirty(1)
	c.OK()
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
func cmdPfdebug(c *Ctx, argv [][]byte) {
	sub, key := argv[1], argv[2]
	db := c.DBOf(key)
	slot := db.Write(key)
	if slot < 0 {
		c.Err("ERR The specified key does not exist")
		return
	}
	if !isHLL(c, db, slot) {
		return
	}
	db.SetEncoding(slot, EncRaw)
	known := EqualFold(sub, "getreg") || EqualFold(sub, "decode") || EqualFold(sub, "encoding") || EqualFold(sub, "todense")
	if !known {
		c.Err("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
		return
	}
	if len(argv) != 3 {
		c.Err("ERR Wrong number of arguments for the '" + string(sub) + "' subcommand")
		return
	}
	h := db.Str(slot)
	switch {
	case EqualFold(sub, "getreg"), EqualFold(sub, "todense"):
		conv := h[4] == hllSparse
		if conv {
			v := openHLL(db, slot)
			if !v.toDense() {
				c.Err(errHLLInvalid)
				return
			}
			c.Dirty(1) // the encoding change is propagated
			h = v.h
		}
		if EqualFold(sub, "todense") {
			if conv {
				c.Int(1)
			} else {
				c.Int(0)
			}
			return
		}
		regs := h[hllHdrSize:]
		c.Array(hllRegisters)
		for i := 0; i < hllRegisters; i++ {
			c.Int(int64(denseGet(regs, i)))
		}
	case EqualFold(sub, "decode"):
		if h[4] != hllSparse {
			c.Err("ERR HLL encoding is not sparse")
			return
		}
		var out []byte
		p := h[hllHdrSize:]
		for i := 0; i < len(p); {
			if len(out) > 0 {
				out = append(out, ' ')
			}
			switch b := p[i]; {
			case spIsZero(b):
				out = append(out, "z:"...)
				out = strconv.AppendInt(out, int64(spZeroLen(b)), 10)
				i++
			case spIsXZero(b):
				var b1 byte
				if i+1 < len(p) {
					b1 = p[i+1]
				}
				out = append(out, "Z:"...)
				out = strconv.AppendInt(out, int64(spXZeroLen(b, b1)), 10)
				i += 2
			default:
				out = append(out, "v:"...)
				out = strconv.AppendInt(out, int64(spValValue(b)), 10)
				out = append(out, ',')
				out = strconv.AppendInt(out, int64(spValLen(b)), 10)
				i++
			}
		}
		c.Bulk(out)
	case EqualFold(sub, "encoding"):
		if h[4] == hllDense {
			c.Simple("dense")
		} else {
			c.Simple("sparse")
		}
	}
}

// PFSELFTEST checks the dense register packing and that sparse and dense
// HLLs agree, within Redis's error bounds, on up to ten million elements.
func cmdPfselftest(c *Ctx, argv [][]byte) {
	if msg := hllSelfTest(int(c.Shards[0].Cfg.HLLSparseMaxBytes.Load())); msg != "" {
		c.Err(msg)
		return
	}
	c.OK()
}

// hllSelfTest returns "" on success, else the error to reply.
func hllSelfTest(maxBytes int) string {
	dense := make([]byte, hllDenseSize)
	copy(dense, "HYLL")
	regs := dense[hllHdrSize:]
	var want [hllRegisters]uint8
	for cycle := 0; cycle < 1000; cycle++ {
		for i := range want {
			want[i] = uint8(rand.Uint32() & hllRegMax)
			denseSetReg(regs, i, want[i])
		}
		for i := range want {
			if got := denseGet(regs, i); got != want[i] {
				return "TESTFAILED Register " + strconv.Itoa(i) + " should be " + strconv.Itoa(int(want[i])) +
					" but is " + strconv.Itoa(int(got))
			}
		}
	}
	clear(regs)
	sparse := append(make([]byte, 0, maxBytes+8), hllEmpty...)
	sparse = sparse[:cap(sparse)]
	n := len(hllEmpty)
	var sparseDense []byte // the sparse HLL once promoted
	relerr := 1.04 / math.Sqrt(hllRegisters)
	checkpoint := uint64(1)
	seed := rand.Uint64()
	var ele [8]byte
	for j := uint64(1); j <= 10_000_000; j++ {
		binary.LittleEndian.PutUint64(ele[:], j^seed)
		idx, count := hllPatLen(ele[:])
		denseSet(regs, idx, count)
		if sparseDense != nil {
			denseSet(sparseDense[hllHdrSize:], idx, count)
		} else {
			if len(sparse) < n+3 {
				sparse = append(sparse, 0, 0, 0)
			}
			var r int
			n, r = sparseSet(sparse, n, idx, count, maxBytes)
			if r == 2 {
				sparseDense, _ = sparseToDense(sparse[:n])
				denseSet(sparseDense[hllHdrSize:], idx, count)
			}
		}
		if j != checkpoint {
			continue
		}
		if j < uint64(maxBytes/2) && sparseDense != nil {
			return "TESTFAILED sparse encoding not used"
		}
		other := sparse[:n]
		if sparseDense != nil {
			other = sparseDense
		}
		card, _ := hllCount(dense)
		if card2, _ := hllCount(other); card != card2 {
			return "TESTFAILED dense/sparse disagree"
		}
		abserr := int64(checkpoint) - int64(card)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			return "TESTFAILED Too big error. card:" + strconv.FormatUint(checkpoint, 10) +
				" abserr:" + strconv.FormatInt(abserr, 10)
		}
		checkpoint *= 10
	}
	return ""
}
