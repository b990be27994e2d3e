package rdb

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// Files written in pieces: a snapshot taken without fork has its keys
// serialized by several goroutines at once (one per shard), each into
// chunks of its own, and the chunks are written one after the other in
// whatever order they come. A chunk is a run of items that stands alone:
// ChunkWriter starts each one with SELECTDB (the chunk before it may have
// left another database selected) and never splits a key across two. The
// file's header (NewWriter), its functions, the chunks (Writer.Raw) and
// its end (Close) then make a valid RDB file: nothing in the format asks
// for a database's keys to be contiguous, and RESIZEDB is only a hint.

// AppendSelectDB appends a SELECTDB item.
func AppendSelectDB(dst []byte, db int) []byte {
	return AppendLen(append(dst, OpSelectDB), uint64(db))
}

// AppendKey appends a key item: its expiry (expireMS >= 0: absolute Unix
// ms), its value's type, the key and the value, as Writer.Key writes it.
func AppendKey(dst []byte, key []byte, expireMS int64, v *Value, opts *Options) ([]byte, error) {
	start := len(dst)
	if expireMS >= 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, OpExpireTimeMS), uint64(expireMS))
	}
	at := len(dst)
	dst = append(dst, 0) // the type, known once the body is written
	dst = AppendString(dst, key, opts.Compress)
	t, out, err := appendValueBody(dst, v, opts)
	if err != nil {
		return dst[:start], err
	}
	out[at] = t
	return out, nil
}

// Raw writes items made by AppendSelectDB and AppendKey (a chunk).
func (w *Writer) Raw(b []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.opts.Checksum {
		w.crc = CRC64(w.crc, b)
	}
	_, w.err = w.w.Write(b)
	return w.err
}

// ChunkWriter serializes keys into chunks of about size bytes and hands each
// full one to hand, which owns it from then on.
type ChunkWriter struct {
	opts Options
	size int
	hand func([]byte)
	buf  []byte
	db   int
	err  error
}

// Err is the first error of a Key (a value the codec cannot write): the
// file being made is incomplete and must not be used.
func (c *ChunkWriter) Err() error { return c.err }

// NewChunkWriter makes a ChunkWriter.
func NewChunkWriter(opts Options, size int, hand func([]byte)) *ChunkWriter {
	return &ChunkWriter{opts: opts, size: size, hand: hand, db: -1}
}

// Key adds a key of database db.
func (c *ChunkWriter) Key(db int, key []byte, expireMS int64, v *Value) error {
	if c.buf == nil {
		c.buf = getChunk(c.size + c.size/4)
	}
	if c.db != db {
		c.buf = AppendSelectDB(c.buf, db)
		c.db = db
	}
	var err error
	if c.buf, err = AppendKey(c.buf, key, expireMS, v, &c.opts); err != nil {
		if c.err == nil {
			c.err = fmt.Errorf("key '%s': %w", key, err)
		}
		return err
	}
	if len(c.buf) >= c.size {
		c.Flush()
	}
	return nil
}

// chunkPool recycles chunks once written (ReleaseChunk): a BGSAVE of 100 MB
// otherwise left 100 MB of garbage for the collector, whose assists landed
// on the loops serving clients.
var chunkPool sync.Pool

func getChunk(n int) []byte {
	if b, ok := chunkPool.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:0]
	}
	return make([]byte, 0, n)
}

// ReleaseChunk gives a chunk handed over by a ChunkWriter back once it is
// written; it must not be used afterwards.
func ReleaseChunk(b []byte) {
	b = b[:0]
	chunkPool.Put(&b)
}

// Flush hands what is buffered over.
func (c *ChunkWriter) Flush() {
	if len(c.buf) > 0 {
		c.hand(c.buf)
	}
	c.buf, c.db = nil, -1
}
