package rdb

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync"
)

// LZF limits: a literal run is 1..32 bytes, a match 3..264 bytes at a
// distance of 1..8192.
const (
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = 1<<8 + 1<<3
	lzfHLog   = 14 // log2 of the compressor's hash table size
)

// ErrLZF is a compressed string that does not decompress to exactly its
// declared length; Redis: "Invalid LZF compressed string".
var ErrLZF = errors.New("rdb: invalid LZF compressed string")

// LZFCompress returns in compressed in LZF's format. The output may be
// longer than the input (incompressible data costs one byte per 32);
// callers that want a saving check the length, as AppendString does.
func LZFCompress(in []byte) []byte {
	st := lzfPool.Get().(*lzfState)
	out := append([]byte(nil), st.compress(in)...)
	lzfPool.Put(st)
	return out
}

// lzfState is a compressor's hash table, reused across calls without
// being cleared: an entry holds base+position+1, and only entries above
// the current base belong to this call (a 64 KB table cleared for every
// 100-byte value was most of a SAVE's time).
type lzfState struct {
	table [1 << lzfHLog]uint32
	base  uint32
	out   []byte
}

var lzfPool = sync.Pool{New: func() any { return new(lzfState) }}

// compress compresses in into st.out, which it returns (valid until the
// next call).
//
// Only the first and the last two positions of a match go into the hash
// table, as liblzf's VERY_FAST mode does: indexing every position a match
// covers made a 100-byte value of one repeated byte (redis-benchmark's)
// cost a hash per byte. A match is extended 8 bytes at a time. Both cut a
// BGSAVE's LZF time (BenchmarkLZFCompress: 100-byte values 200-220 ns before).
func (st *lzfState) compress(in []byte) []byte {
	if uint64(st.base)+uint64(len(in))+2 >= 1<<32 {
		st.table = [1 << lzfHLog]uint32{}
		st.base = 0
	}
	base := st.base
	st.base += uint32(len(in)) + 1
	table := &st.table
	out := st.out[:0]
	if need := len(in) + len(in)/lzfMaxLit + 1; cap(out) < need {
		out = make([]byte, 0, need)
	}
	n := len(in)
	lits := 0 // start of the pending literal run, which ends at i
	i := 0
	for i+2 < n {
		v := uint32(in[i]) | uint32(in[i+1])<<8 | uint32(in[i+2])<<16
		h := lzfHash(v)
		e := table[h]
		table[h] = base + uint32(i) + 1
		if e > base {
			ref := int(e - base - 1)
			if i-ref <= lzfMaxOff && uint32(in[ref])|uint32(in[ref+1])<<8|uint32(in[ref+2])<<16 == v {
				// A match of at least 3 (it may overlap i).
				out = appendLZFLiterals(out, in[lits:i])
				limit := min(lzfMaxRef, n-i)
				m := 3
				for m < limit {
					if m+8 <= limit {
						x := binary.LittleEndian.Uint64(in[i+m:]) ^ binary.LittleEndian.Uint64(in[ref+m:])
						if x == 0 {
							m += 8
							continue
						}
						m += bits.TrailingZeros64(x) >> 3
						break
					}
					if in[ref+m] != in[i+m] {
						break
					}
					m++
				}
				off := i - ref - 1
				if l := m - 2; l < 7 {
					out = append(out, byte(l<<5|off>>8), byte(off))
				} else {
					out = append(out, byte(7<<5|off>>8), byte(l-7), byte(off))
				}
				i += m
				lits = i
				for j := i - 2; j < i && j+2 < n; j++ {
					table[lzfHash(uint32(in[j])|uint32(in[j+1])<<8|uint32(in[j+2])<<16)] = base + uint32(j) + 1
				}
				continue
			}
		}
		i++
		if i-lits == lzfMaxLit {
			out = append(out, lzfMaxLit-1)
			out = append(out, in[lits:i]...)
			lits = i
		}
	}
	// The last one or two bytes cannot start a match.
	out = appendLZFLiterals(out, in[lits:])
	if cap(out) <= 1<<20 {
		st.out = out
	}
	return out
}

func lzfHash(v uint32) uint32 { return (v * 2654435761) >> (32 - lzfHLog) }

// appendLZFLiterals appends lit as literal runs of at most lzfMaxLit bytes.
func appendLZFLiterals(out, lit []byte) []byte {
	for len(lit) > 0 {
		k := min(len(lit), lzfMaxLit)
		out = append(out, byte(k-1))
		out = append(out, lit[:k]...)
		lit = lit[k:]
	}
	return out
}

// LZFDecompress decompresses in, which must produce exactly outLen bytes
// (as Redis's loader requires of lzf_decompress); anything else, a run or
// match past outLen, a match before the start, input that ends inside an
// item, is ErrLZF. outLen bounds the allocation: callers reading untrusted
// input bound it first (ReadString does).
func LZFDecompress(in []byte, outLen int) ([]byte, error) {
	out := make([]byte, 0, outLen)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < lzfMaxLit { // literal run of ctrl+1 bytes
			n := ctrl + 1
			if len(out)+n > outLen || i+n > len(in) {
				return nil, ErrLZF
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		// Match: length ctrl>>5 (+ next byte when 7) + 2, distance from
		// the low 5 bits and the next byte, + 1.
		n := ctrl >> 5
		if i >= len(in) {
			return nil, ErrLZF
		}
		if n == 7 {
			n += int(in[i])
			i++
			if i >= len(in) {
				return nil, ErrLZF
			}
		}
		n += 2
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		if len(out)+n > outLen || ref < 0 {
			return nil, ErrLZF
		}
		for k := 0; k < n; k++ { // byte by byte: the match may overlap
			out = append(out, out[ref+k])
		}
	}
	if len(out) != outLen {
		return nil, ErrLZF
	}
	return out, nil
}
