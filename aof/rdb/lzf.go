package rdb

import (
	"errors"
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
	hash := func(i int) uint32 {
		v := uint32(in[i])<<16 | uint32(in[i+1])<<8 | uint32(in[i+2])
		return (v * 2654435761) >> (32 - lzfHLog)
	}
	lit := 0 // bytes in the pending literal run, ending at i
	flush := func(i int) {
		if lit > 0 {
			out = append(out, byte(lit-1))
			out = append(out, in[i-lit:i]...)
			lit = 0
		}
	}
	i := 0
	for i+2 < len(in) {
		h := hash(i)
		ref := -1
		if v := table[h]; v > base {
			ref = int(v - base - 1)
		}
		table[h] = base + uint32(i) + 1
		if ref >= 0 && i-ref <= lzfMaxOff &&
			in[ref] == in[i] && in[ref+1] == in[i+1] && in[ref+2] == in[i+2] {
			// A match of at least 3: extend it (it may overlap i).
			n := 3
			for n < lzfMaxRef && i+n < len(in) && in[ref+n] == in[i+n] {
				n++
			}
			flush(i)
			off := i - ref - 1
			if l := n - 2; l < 7 {
				out = append(out, byte(l<<5|off>>8))
			} else {
				out = append(out, byte(7<<5|off>>8), byte(l-7))
			}
			out = append(out, byte(off))
			// Index the positions the match covers, so later matches can
			// start inside it.
			for j := i + 1; j < i+n && j+2 < len(in); j++ {
				table[hash(j)] = base + uint32(j) + 1
			}
			i += n
			continue
		}
		lit++
		i++
		if lit == lzfMaxLit {
			flush(i)
		}
	}
	// The last one or two bytes cannot start a match.
	for ; i < len(in); i++ {
		lit++
		if lit == lzfMaxLit {
			flush(i + 1)
		}
	}
	flush(len(in))
	if cap(out) <= 1<<20 {
		st.out = out
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
