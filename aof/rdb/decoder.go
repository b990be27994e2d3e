package rdb

import (
	"encoding/binary"
	"io"
	"strconv"
)

// chunk is the most a reader-backed decoder buffers or allocates ahead of
// the bytes it has actually read: a declared length is only believed as
// far as the input goes.
const chunk = 1 << 20

// decoder reads RDB items from a []byte (r nil) or an io.Reader, keeping
// the CRC64 of what it consumed.
type decoder struct {
	r      io.Reader
	buf    []byte
	pos    int // next unread byte of buf
	crcPos int // bytes of buf before this are in crc
	crc    uint64
	base   int64 // input offset of buf[0]
	// arena holds the small strings read, one allocation for many: a load
	// of a million keys made one for every key, field and value, and the
	// collector's work came with them. Strings handed out are never
	// overwritten, so they stay valid as long as they are referenced.
	arena []byte
	// scratch holds the elements of a blob only until they are paired or
	// copied (blobValue, quicklist nodes).
	scratch [][]byte
}

const (
	arenaChunk = 64 << 10
	arenaMax   = 256 // strings up to this size come from the arena
)

// small copies p into the arena.
func (d *decoder) small(p []byte) []byte {
	if cap(d.arena)-len(d.arena) < len(p) {
		d.arena = make([]byte, 0, arenaChunk)
	}
	n := len(d.arena)
	d.arena = append(d.arena, p...)
	return d.arena[n : n+len(p) : n+len(p)]
}

func newBytesDecoder(b []byte) *decoder { return &decoder{buf: b} }

func newReaderDecoder(r io.Reader) *decoder {
	return &decoder{r: r, buf: make([]byte, 0, 64<<10)}
}

func (d *decoder) offset() int64 { return d.base + int64(d.pos) }

// checksum is the CRC64 of everything consumed so far.
func (d *decoder) checksum() uint64 {
	d.crc = CRC64(d.crc, d.buf[d.crcPos:d.pos])
	d.crcPos = d.pos
	return d.crc
}

// fill makes n bytes available at d.pos (n at most chunk for a reader).
func (d *decoder) fill(n int) error {
	if len(d.buf)-d.pos >= n {
		return nil
	}
	if d.r == nil {
		return ErrShort
	}
	if d.pos > 0 {
		d.checksum()
		m := copy(d.buf, d.buf[d.pos:])
		d.base += int64(d.pos)
		d.buf, d.pos, d.crcPos = d.buf[:m], 0, 0
	}
	if cap(d.buf) < n {
		nb := make([]byte, len(d.buf), max(n, 2*cap(d.buf)))
		copy(nb, d.buf)
		d.buf = nb
	}
	for len(d.buf) < n {
		k, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+k]
		if err != nil && len(d.buf) < n {
			if err == io.EOF {
				return ErrShort
			}
			return err
		}
	}
	return nil
}

// remaining bounds how many items of at least one byte can follow: the
// bytes left for a []byte input, a buffer's worth for a reader.
func (d *decoder) remaining() int {
	if d.r == nil {
		return len(d.buf) - d.pos
	}
	return 4096
}

// capFor is a safe initial capacity for n items of at least minSize bytes.
func (d *decoder) capFor(n uint64, minSize int) int {
	return int(min(n, uint64(d.remaining()/minSize)))
}

// view returns the next n bytes, valid until the next read.
func (d *decoder) view(n int) ([]byte, error) {
	if err := d.fill(n); err != nil {
		return nil, err
	}
	p := d.buf[d.pos : d.pos+n]
	d.pos += n
	return p, nil
}

func (d *decoder) byte() (byte, error) {
	p, err := d.view(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// bytes returns a copy of the next n bytes, never allocating much more
// than the input actually holds.
func (d *decoder) bytes(n uint64) ([]byte, error) {
	if d.r == nil {
		if n > uint64(len(d.buf)-d.pos) {
			return nil, ErrShort
		}
		var out []byte
		if n <= arenaMax {
			out = d.small(d.buf[d.pos : d.pos+int(n)])
		} else {
			out = make([]byte, n)
			copy(out, d.buf[d.pos:])
		}
		d.pos += int(n)
		return out, nil
	}
	if n <= arenaMax {
		p, err := d.view(int(n))
		if err != nil {
			return nil, err
		}
		return d.small(p), nil
	}
	out := make([]byte, 0, min(n, chunk))
	for n > 0 {
		c := int(min(n, chunk))
		p, err := d.view(c)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
		n -= uint64(c)
	}
	return out, nil
}

// lenEnc reads a length or, with encoded, a special string encoding.
func (d *decoder) lenEnc() (n uint64, encoded bool, err error) {
	if err := d.fill(1); err != nil {
		return 0, false, err
	}
	size := 1
	switch c := d.buf[d.pos]; {
	case c == len32Bit:
		size = 5
	case c == len64Bit:
		size = 9
	case c>>6 == len14Bit:
		size = 2
	}
	if err := d.fill(size); err != nil {
		return 0, false, err
	}
	n, encoded, size, err = ReadLen(d.buf[d.pos : d.pos+size])
	if err != nil {
		return 0, false, err
	}
	d.pos += size
	return n, encoded, nil
}

// length reads a plain length; a special encoding there is corrupt.
func (d *decoder) length() (uint64, error) {
	n, enc, err := d.lenEnc()
	if err == nil && enc {
		err = ErrBadLength
	}
	return n, err
}

// count reads the number of items of a collection, each at least minSize
// bytes, refusing more than the input can hold.
func (d *decoder) count(minSize int) (uint64, error) {
	n, err := d.length()
	if err != nil {
		return 0, err
	}
	if d.r == nil && n > uint64(d.remaining()/minSize) {
		return 0, ErrShort
	}
	return n, nil
}

// str reads an RDB string in any encoding; the bytes are the caller's.
func (d *decoder) str() ([]byte, error) {
	n, enc, err := d.lenEnc()
	if err != nil {
		return nil, err
	}
	if !enc {
		return d.bytes(n)
	}
	switch n {
	case EncInt8, EncInt16, EncInt32:
		size := 1 << n
		p, err := d.view(size)
		if err != nil {
			return nil, err
		}
		var v int64
		switch size {
		case 1:
			v = int64(int8(p[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		return strconv.AppendInt(nil, v, 10), nil
	case EncLZF:
		clen, err := d.length()
		if err != nil {
			return nil, err
		}
		ulen, err := d.length()
		if err != nil {
			return nil, err
		}
		if ulen/lzfMaxRatio > clen {
			// Checked before the compressed bytes are read, so a huge
			// declared length costs nothing.
			return nil, ErrLZF
		}
		c, err := d.bytes(clen)
		if err != nil {
			return nil, err
		}
		if ulen == 0 { // as Redis: lzf_decompress's 0 is taken as the 0 declared
			return []byte{}, nil
		}
		return LZFDecompress(c, int(ulen))
	default:
		return nil, ErrBadEncoding
	}
}

// u64le reads n (4 or 8) bytes little-endian.
func (d *decoder) le(n int) (uint64, error) {
	p, err := d.view(n)
	if err != nil {
		return 0, err
	}
	if n == 4 {
		return uint64(binary.LittleEndian.Uint32(p)), nil
	}
	return binary.LittleEndian.Uint64(p), nil
}
