package rdb

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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
	nmarks := 0
	if opts.marks != nil {
		nmarks = len(*opts.marks)
	}
	dst = append(dst, 0) // the type, known once the body is written
	dst = opts.str(dst, key)
	t, out, err := appendValueBody(dst, v, opts)
	if err != nil {
		if opts.marks != nil {
			*opts.marks = (*opts.marks)[:nmarks]
		}
		return dst[:start], err
	}
	out[at] = t
	return out, nil
}

// Raw writes items made by AppendSelectDB and AppendKey (a chunk).
// yieldBytes is how much a background goroutine of an image (the
// compressor of Offload, the file writer of RawYielding) processes between
// two runtime.Gosched calls. With one P (the server pinned to one CPU, or
// GOMAXPROCS 1), a loop's poll round ends in Gosched (gnet) and the P went
// to the compressor it had just woken, which kept it for a whole chunk's
// LZF and the writer after it for its CRC64: GET p99 during a BGSAVE of
// 1M mixed keys under 50 writers was 2.5-6 ms against 0.1-0.3 ms steady
// (go tool trace: 104 waits of the loop goroutine over 0.5 ms, 292 ms in
// all, while the compressor ran 178 ms and the writer 55 ms). 64 KiB is
// 20-60 µs of LZF or CRC64 here.
const yieldBytes = 64 << 10

// RawYielding is Raw in pieces of yieldBytes with a runtime.Gosched after
// each, for a goroutine that must not hold a P the loops need.
func (w *Writer) RawYielding(b []byte) error {
	for len(b) > yieldBytes {
		if err := w.Raw(b[:yieldBytes]); err != nil {
			return err
		}
		b = b[yieldBytes:]
		runtime.Gosched()
	}
	return w.Raw(b)
}

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

	// Offload's: the chunks waiting for the compressor, the strings of
	// buf to compress, and whether the file was given up (Abort).
	jobs    chan chunkJob
	marks   []strMark
	aborted atomic.Bool
	done    func()
}

// strMark is a string written raw into a chunk for compressMarked to
// compress: its length at buf[at:data], its bytes at buf[data:end].
type strMark struct{ at, data, end int }

type chunkJob struct {
	buf   []byte
	marks []strMark
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
// on the loops serving clients. A sync.Pool is emptied by the collections
// a BGSAVE's own writers cause, so a few chunks are also kept in chunkFree,
// which no collection empties (pprof -sample_index=alloc_space: getChunk
// was 26 MB a BGSAVE of 1M mixed keys through the pool alone).
var (
	chunkPool sync.Pool
	chunkFree = make(chan []byte, 8)
)

func getChunk(n int) []byte {
	select {
	case b := <-chunkFree:
		if cap(b) >= n {
			return b[:0]
		}
	default:
	}
	if b, ok := chunkPool.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:0]
	}
	return make([]byte, 0, n)
}

// ReleaseChunk gives a chunk handed over by a ChunkWriter back once it is
// written; it must not be used afterwards.
func ReleaseChunk(b []byte) {
	b = b[:0]
	select {
	case chunkFree <- b:
	default:
		chunkPool.Put(&b)
	}
}

// Flush hands what is buffered over.
func (c *ChunkWriter) Flush() {
	if len(c.buf) > 0 {
		if c.jobs != nil && len(c.marks) > 0 {
			j := chunkJob{c.buf, c.marks}
			select {
			case c.jobs <- j:
				c.marks = getMarks()
			default:
				// The compressor is behind: this chunk is compressed
				// here, so that what waits for it stays bounded.
				c.hand(compressMarked(j.buf, j.marks, false))
				c.marks = c.marks[:0]
			}
		} else {
			c.hand(c.buf)
			c.marks = c.marks[:0]
		}
	}
	c.buf, c.db = nil, -1
}

// Offload moves LZF compression off the caller's goroutine: Key only
// copies the strings (raw, marked), and a goroutine of the ChunkWriter's
// own compresses each full chunk and hands it over, so the bytes handed
// over are the same as without Offload. At most depth chunks wait for it;
// beyond, Flush compresses the chunk itself. Close (or Abort) ends the
// goroutine. It does nothing without Options.Compress.
//
// A BGSAVE's loops serialize their keys between requests, and LZF was
// half of that time (pprof of BGSAVE of 1M mixed keys under 50 writers:
// lzfState.compress 0.56 s of RewriteStep's 1.21 s).
func (c *ChunkWriter) Offload(depth int) {
	if !c.opts.Compress || c.jobs != nil {
		return
	}
	c.jobs = make(chan chunkJob, depth)
	c.marks = getMarks()
	c.opts.marks = &c.marks
	go c.compressor(c.jobs)
}

func (c *ChunkWriter) compressor(jobs chan chunkJob) {
	for j := range jobs {
		if c.aborted.Load() {
			ReleaseChunk(j.buf)
		} else {
			c.hand(compressMarked(j.buf, j.marks, true))
		}
		putMarks(j.marks)
	}
	if !c.aborted.Load() && c.done != nil {
		c.done()
	}
}

// Close flushes and calls done once every chunk has been handed over: at
// once without Offload, else from the compressor's goroutine.
func (c *ChunkWriter) Close(done func()) {
	c.Flush()
	if c.jobs == nil {
		done()
		return
	}
	c.done = done
	close(c.jobs)
	c.jobs = nil
	c.opts.marks = nil
}

// Abort ends an Offload's goroutine without handing anything more over
// (the file is given up); done is not called.
func (c *ChunkWriter) Abort() {
	c.aborted.Store(true)
	if c.jobs != nil {
		close(c.jobs)
		c.jobs = nil
		c.opts.marks = nil
	}
	c.buf = nil
}

// compressMarked returns the chunk src with its marked strings encoded as
// AppendString would have (LZF when it saves 4 bytes, else raw), in a new
// chunk; src goes back to the pool. yield: the compressor's goroutine,
// which gives the P up every yieldBytes (a single string is compressed in
// one go, whatever its size).
func compressMarked(src []byte, marks []strMark, yield bool) []byte {
	// The same capacity as src, not its length: chunks then come back to
	// the pool fit for the loops' next getChunk (size + size/4). Sized by
	// length, the compressed chunks were too small for it and dropped, and
	// the loops made new ones: 50-60 MB of garbage a BGSAVE of 1M keys, a
	// collection whose mark worker held the loop's only P 8-11 ms at a time
	// (GET p99 during BGSAVE 2.7-3.4 ms, GODEBUG=gctrace=1 and go tool trace).
	out := getChunk(cap(src))
	prev, since := 0, 0
	for _, m := range marks {
		out = append(out, src[prev:m.at]...)
		out = AppendString(out, src[m.data:m.end], true)
		since += m.end - prev
		prev = m.end
		if yield && since >= yieldBytes {
			runtime.Gosched()
			since = 0
		}
	}
	out = append(out, src[prev:]...)
	ReleaseChunk(src)
	return out
}

var marksPool sync.Pool

func getMarks() []strMark {
	if m, ok := marksPool.Get().(*[]strMark); ok {
		return (*m)[:0]
	}
	return make([]strMark, 0, 16384)
}

func putMarks(m []strMark) {
	m = m[:0]
	marksPool.Put(&m)
}
