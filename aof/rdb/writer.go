package rdb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
)

// Options are the settings that shape what the writer produces, named
// after the Redis configuration they stand for. The zero value of a
// threshold is not Redis's default: use DefaultOptions and change it.
type Options struct {
	Compress bool // rdbcompression: LZF for strings longer than 20 bytes
	Checksum bool // rdbchecksum: the CRC64 at the end (0 when off)

	HashMaxListpackEntries int // hash-max-listpack-entries (512: the built-in default; redis.conf says 128)
	HashMaxListpackValue   int // hash-max-listpack-value (64)
	ZSetMaxListpackEntries int // zset-max-listpack-entries (128)
	ZSetMaxListpackValue   int // zset-max-listpack-value (64)
	SetMaxIntsetEntries    int // set-max-intset-entries (512)
	// ListMaxListpackSize is list-max-listpack-size (-2): positive, the
	// most entries of a quicklist node; -1 to -5, a node's most bytes,
	// 4, 8, 16, 32 or 64 KB.
	ListMaxListpackSize int
	// StreamNodeMaxBytes is stream-node-max-bytes (4096): a stream node
	// takes no entry that would bring it to this size (0: no limit but
	// Redis's 1 GB).
	StreamNodeMaxBytes int
	// StreamNodeMaxEntries is stream-node-max-entries (100): the most
	// entries of a stream node (0: no limit).
	StreamNodeMaxEntries int

	// marks, when set (ChunkWriter.Offload), receives the strings to
	// compress later: str then writes them raw.
	marks *[]strMark
}

// DefaultOptions are Redis 7.0's defaults.
func DefaultOptions() Options {
	return Options{
		Compress: true, Checksum: true,
		HashMaxListpackEntries: 512, HashMaxListpackValue: 64,
		ZSetMaxListpackEntries: 128, ZSetMaxListpackValue: 64,
		SetMaxIntsetEntries: 512, ListMaxListpackSize: -2,
		StreamNodeMaxBytes: 4096, StreamNodeMaxEntries: 100,
	}
}

// Header is the file's aux fields, as Redis 7.0's rdbSaveInfoAuxFields
// writes them (redis-ver 7.0.15 and redis-bits 64 are fixed).
type Header struct {
	CTime   int64 // ctime: Unix seconds of the save
	UsedMem int64 // used-mem
	AOFBase bool  // aof-base: the file is an AOF's RDB base
	// Extra aux fields, written after used-mem and before aof-base, in
	// pairs of name and value (Redis: repl-stream-db, repl-id, repl-offset).
	Extra [][2]string
}

// Writer writes an RDB version 10 file as Redis 7.0 does: NewWriter writes
// the magic and aux fields; then Function for each library, then per
// database SelectDB and its keys with Key; Close writes EOF and the CRC64.
type Writer struct {
	w    *bufio.Writer
	opts Options
	crc  uint64
	buf  []byte
	err  error
}

// ErrClosed is a write to a closed Writer.
var ErrClosed = errors.New("rdb: writer closed")

// NewWriter starts an RDB file on w.
func NewWriter(w io.Writer, opts Options, h Header) (*Writer, error) {
	wr := &Writer{w: bufio.NewWriterSize(w, 64<<10), opts: opts}
	b := append(wr.buf[:0], "REDIS0010"...)
	aux := func(name, val string) {
		b = append(b, OpAux)
		b = AppendString(b, []byte(name), opts.Compress)
		b = AppendString(b, []byte(val), opts.Compress)
	}
	aux("redis-ver", "7.0.15")
	aux("redis-bits", "64")
	aux("ctime", strconv.FormatInt(h.CTime, 10))
	aux("used-mem", strconv.FormatInt(h.UsedMem, 10))
	for _, kv := range h.Extra {
		aux(kv[0], kv[1])
	}
	base := "0"
	if h.AOFBase {
		base = "1"
	}
	aux("aof-base", base)
	return wr, wr.flush(b)
}

func (w *Writer) flush(b []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.opts.Checksum {
		w.crc = CRC64(w.crc, b)
	}
	_, w.err = w.w.Write(b)
	w.buf = b[:0]
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return w.err
}

// Function writes a function library's code (OpFunction2).
func (w *Writer) Function(code string) error {
	b := append(w.buf[:0], OpFunction2)
	return w.flush(AppendString(b, []byte(code), w.opts.Compress))
}

// SelectDB starts database db, of size keys of which expires have an
// expiry (RESIZEDB's hints). Redis writes no empty database.
func (w *Writer) SelectDB(db int, size, expires uint64) error {
	b := AppendLen(append(w.buf[:0], OpSelectDB), uint64(db))
	b = AppendLen(append(b, OpResizeDB), size)
	return w.flush(AppendLen(b, expires))
}

// Key writes a key and its value; expireMS is its absolute expiry in Unix
// ms, or negative for none.
func (w *Writer) Key(key []byte, expireMS int64, v *Value) error {
	b := w.buf[:0]
	if expireMS >= 0 {
		b = binary.LittleEndian.AppendUint64(append(b, OpExpireTimeMS), uint64(expireMS))
	}
	t, body, err := appendValueBody(nil, v, &w.opts)
	if err != nil {
		return err
	}
	b = append(b, t)
	b = AppendString(b, key, w.opts.Compress)
	if err := w.flush(b); err != nil {
		return err
	}
	return w.flush(body)
}

// Close writes EOF and the checksum and flushes; it does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.flush([]byte{OpEOF}); err != nil {
		return err
	}
	sum := uint64(0)
	if w.opts.Checksum {
		sum = w.crc
	}
	if _, err := w.w.Write(binary.LittleEndian.AppendUint64(nil, sum)); err != nil {
		return err
	}
	if err := w.w.Flush(); err != nil {
		return err
	}
	w.err = ErrClosed
	return nil
}

// AppendValue appends v's type byte and body in the encoding Redis 7.0
// would give it under opts.
func AppendValue(dst []byte, v *Value, opts Options) ([]byte, error) {
	t, body, err := appendValueBody(nil, v, &opts)
	if err != nil {
		return dst, err
	}
	return append(append(dst, t), body...), nil
}

// EncodeDump returns v's DUMP payload: type, body, version and CRC64.
func EncodeDump(v *Value, opts Options) ([]byte, error) {
	b, err := AppendValue(nil, v, opts)
	if err != nil {
		return nil, err
	}
	return AppendFooter(b), nil
}

// DecodeDump decodes a DUMP payload (of any RDB version up to Version)
// into its value. The footer is checked as RESTORE checks it
// (ErrDumpPayload); a value that does not decode, or is empty, is an
// *Error.
func DecodeDump(payload []byte) (Value, error) {
	if _, err := CheckFooter(payload); err != nil {
		return Value{}, err
	}
	d := newBytesDecoder(payload[:len(payload)-footerLen])
	t, err := d.byte()
	if err != nil {
		return Value{}, &Error{Err: err}
	}
	v, err := readValue(d, t)
	if err == nil && v.empty() {
		err = ErrEmptyValue
	}
	if err != nil {
		return Value{}, &Error{Offset: d.offset(), Err: err}
	}
	return v, nil
}

// canonicalInt reports whether s is the canonical decimal text of an
// int64 (Redis's string2ll), and its value.
func canonicalInt(s []byte) (int64, bool) {
	// By hand: strconv.ParseInt allocates an error for every string that is
	// not a number, most of a SAVE's allocations.
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	neg := s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if len(d) == 0 || len(d) > 19 || d[0] == '0' && len(d) > 1 || neg && d[0] == '0' {
		return 0, false
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true // -u wraps to MinInt64 for 1<<63
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

var errNaN = errors.New("rdb: sorted set score is NaN")

// appendValueBody appends v's body to dst and returns its type.
func appendValueBody(dst []byte, v *Value, o *Options) (byte, []byte, error) {
	switch v.Kind {
	case KindString:
		return TypeString, o.str(dst, v.Str), nil
	case KindList:
		return TypeListQuicklist2, appendQuicklist(dst, v.Items, o), nil
	case KindSet:
		if len(v.Items) <= o.SetMaxIntsetEntries {
			if b, ok := appendIntset(dst, v.Items, o); ok {
				return TypeSetIntset, b, nil
			}
		}
		dst = AppendLen(dst, uint64(len(v.Items)))
		for _, m := range v.Items {
			dst = o.str(dst, m)
		}
		return TypeSet, dst, nil
	case KindZSet:
		for _, m := range v.ZSet {
			if math.IsNaN(m.Score) {
				return 0, dst, errNaN
			}
		}
		byScore := func(a, b ZMember) int {
			if a.Score != b.Score {
				if a.Score < b.Score {
					return -1
				}
				return 1
			}
			return bytes.Compare(a.Member, b.Member)
		}
		z := v.ZSet
		if !slices.IsSortedFunc(z, byScore) { // a sorted set's own walk is
			z = slices.Clone(z)
			slices.SortFunc(z, byScore)
		}
		small := len(z) <= o.ZSetMaxListpackEntries
		for i := 0; small && i < len(z); i++ {
			small = len(z[i].Member) <= o.ZSetMaxListpackValue
		}
		if small {
			n := 0
			for _, m := range z {
				n += len(m.Member) + 16
			}
			sp := scratchListpack(n)
			lp := *sp
			for _, m := range z {
				lp = lpAppend(lp, m.Member)
				lp = lpAppendScore(lp, m.Score)
			}
			dst = o.str(dst, lpFinish(lp, 2*len(z)))
			releaseListpack(sp, lp)
			return TypeZSetListpack, dst, nil
		}
		// As Redis, from the skiplist's tail to its head.
		dst = AppendLen(dst, uint64(len(z)))
		for i := len(z) - 1; i >= 0; i-- {
			dst = o.str(dst, z[i].Member)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(z[i].Score))
		}
		return TypeZSet2, dst, nil
	case KindHash:
		small := len(v.Hash) <= o.HashMaxListpackEntries
		for i := 0; small && i < len(v.Hash); i++ {
			small = len(v.Hash[i].Field) <= o.HashMaxListpackValue && len(v.Hash[i].Value) <= o.HashMaxListpackValue
		}
		if small {
			n := 0
			for _, f := range v.Hash {
				n += len(f.Field) + len(f.Value) + 12
			}
			sp := scratchListpack(n)
			lp := *sp
			for _, f := range v.Hash {
				lp = lpAppend(lpAppend(lp, f.Field), f.Value)
			}
			dst = o.str(dst, lpFinish(lp, 2*len(v.Hash)))
			releaseListpack(sp, lp)
			return TypeHashListpack, dst, nil
		}
		dst = AppendLen(dst, uint64(len(v.Hash)))
		for _, f := range v.Hash {
			dst = o.str(o.str(dst, f.Field), f.Value)
		}
		return TypeHash, dst, nil
	case KindStream:
		if v.Strm == nil {
			return 0, dst, errors.New("rdb: stream value without a Stream")
		}
		b, err := appendStream(dst, v.Strm, o)
		return TypeStreamListpacks2, b, err
	}
	return 0, dst, errors.New("rdb: unknown value kind " + v.Kind.String())
}

// plainThreshold is Redis's packed_threshold: an element this big gets a
// PLAIN quicklist node of its own.
const plainThreshold = 1 << 30

// appendQuicklist appends a QUICKLIST_2 of PACKED listpack nodes, filled
// as Redis 7.0's quicklist push fills them (_quicklistNodeAllowInsert)
// under list-max-listpack-size, and PLAIN nodes for huge elements. The
// nodes are built one after the other in one pooled scratch buffer (a
// slice of nodes and a listpack per list were a BGSAVE's biggest
// allocation after its chunks).
func appendQuicklist(dst []byte, items [][]byte, o *Options) []byte {
	fill := o.ListMaxListpackSize
	levels := [...]int{4096, 8192, 16384, 32768, 65536}
	allow := func(nodeSz, count, sz int) bool {
		newSz := nodeSz + sz + 8 // SIZE_ESTIMATE_OVERHEAD
		if fill < 0 && -fill-1 < len(levels) {
			return newSz <= levels[-fill-1]
		}
		return newSz <= 8192 && count < fill // SIZE_SAFETY_LIMIT
	}
	type node struct {
		start, end int    // a listpack at buf[start:end], or
		elem       []byte // a PLAIN node of elem (end 0)
		count      int
	}
	total := 0
	for _, it := range items {
		total += len(it) + 7
	}
	sp := scratchListpack(total)
	buf := (*sp)[:0]
	var nodesArr [8]node
	nodes := nodesArr[:0]
	cur := -1 // the node being filled
	end := func() {
		if cur >= 0 {
			n := &nodes[cur]
			buf = append(buf, 0xff)
			n.end = len(buf)
			binary.LittleEndian.PutUint32(buf[n.start:], uint32(n.end-n.start))
			binary.LittleEndian.PutUint16(buf[n.start+4:], uint16(min(n.count, 0xffff)))
			cur = -1
		}
	}
	for _, it := range items {
		if len(it) >= plainThreshold {
			end()
			nodes = append(nodes, node{elem: it, count: 1})
			continue
		}
		if cur < 0 || !allow(len(buf)-nodes[cur].start+1, nodes[cur].count, len(it)) {
			end()
			nodes = append(nodes, node{start: len(buf)})
			cur = len(nodes) - 1
			buf = append(buf, 0, 0, 0, 0, 0, 0)
		}
		buf = lpAppend(buf, it)
		nodes[cur].count++
	}
	end()
	dst = AppendLen(dst, uint64(len(nodes)))
	for _, n := range nodes {
		if n.end == 0 {
			dst = AppendLen(dst, quicklistPlain)
			dst = o.str(dst, n.elem)
			continue
		}
		dst = AppendLen(dst, quicklistPacked)
		dst = o.str(dst, buf[n.start:n.end])
	}
	releaseListpack(sp, buf)
	return dst
}

// appendIntset appends members as an intset string if they all are
// canonical integers (sorted; the smallest of 16, 32, 64 bits that holds
// them all).
func appendIntset(dst []byte, members [][]byte, o *Options) ([]byte, bool) {
	enc := 2
	for _, m := range members { // before anything is allocated
		v, ok := canonicalInt(m)
		if !ok {
			return dst, false
		}
		switch {
		case v < math.MinInt32 || v > math.MaxInt32:
			enc = 8
		case (v < math.MinInt16 || v > math.MaxInt16) && enc < 4:
			enc = 4
		}
	}
	var arr [64]int64
	vals := arr[:0]
	if len(members) > len(arr) {
		vals = make([]int64, 0, len(members))
	}
	for _, m := range members {
		v, _ := canonicalInt(m)
		vals = append(vals, v)
	}
	slices.Sort(vals)
	vals = slices.Compact(vals)
	sp := scratchListpack(8 + enc*len(vals))
	b := (*sp)[:0]
	b = binary.LittleEndian.AppendUint32(b, uint32(enc))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
	for _, v := range vals {
		switch enc {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	dst = o.str(dst, b)
	releaseListpack(sp, b)
	return dst, true
}

// listpackPool holds the scratch listpacks of hashes and sorted sets, which
// are copied into the output once finished.
var listpackPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// scratchListpack is a started listpack with room for about n bytes.
func scratchListpack(n int) *[]byte {
	sp := listpackPool.Get().(*[]byte)
	if cap(*sp) < n+7 {
		*sp = make([]byte, 0, n+7)
	}
	*sp = (*sp)[:6]
	return sp
}

func releaseListpack(sp *[]byte, lp []byte) {
	if cap(lp) <= 64<<10 {
		*sp = lp[:0]
		listpackPool.Put(sp)
	}
}

// newListpack starts a listpack: 6 header bytes, filled by lpFinish.
func newListpack(n int) []byte { return make([]byte, 6, 7+n*2) }

// lpFinish terminates a listpack of n entries and fills its header.
func lpFinish(lp []byte, n int) []byte {
	lp = append(lp, 0xff)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	binary.LittleEndian.PutUint16(lp[4:], uint16(min(n, 0xffff)))
	return lp
}

// lpAppend appends s as a listpack entry: an integer encoding when s is a
// canonical integer, as Redis's lpAppend chooses, else a string.
func lpAppend(lp []byte, s []byte) []byte {
	if v, ok := canonicalInt(s); ok {
		return lpAppendInt(lp, v)
	}
	start := len(lp)
	switch l := len(s); {
	case l < 64:
		lp = append(lp, 0x80|byte(l))
	case l < 4096:
		lp = append(lp, 0xe0|byte(l>>8), byte(l))
	default:
		lp = binary.LittleEndian.AppendUint32(append(lp, 0xf0), uint32(l))
	}
	lp = append(lp, s...)
	return lpAppendBacklen(lp, len(lp)-start)
}

func lpAppendInt(lp []byte, v int64) []byte {
	start := len(lp)
	switch {
	case v >= 0 && v <= 127:
		lp = append(lp, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		lp = append(lp, 0xc0|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		lp = binary.LittleEndian.AppendUint16(append(lp, 0xf1), uint16(v))
	case v >= -1<<23 && v < 1<<23:
		lp = append(lp, 0xf2, byte(v), byte(v>>8), byte(v>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		lp = binary.LittleEndian.AppendUint32(append(lp, 0xf3), uint32(v))
	default:
		lp = binary.LittleEndian.AppendUint64(append(lp, 0xf4), uint64(v))
	}
	return lpAppendBacklen(lp, len(lp)-start)
}

// lpAppendScore appends a zset score as Redis's zzlInsertAt: an integer
// when the double is one (double2ll), else d2string's text.
func lpAppendScore(lp []byte, f float64) []byte {
	if f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == math.Trunc(f) {
		return lpAppendInt(lp, int64(f))
	}
	var s string
	switch {
	case math.IsInf(f, 1):
		s = "inf"
	case math.IsInf(f, -1):
		s = "-inf"
	default:
		s = strconv.FormatFloat(f, 'g', 17, 64)
	}
	return lpAppend(lp, []byte(s))
}

func lpAppendBacklen(lp []byte, l int) []byte {
	n := backlenSize(l)
	for i := n - 1; i >= 0; i-- {
		c := byte(l>>(7*i)) & 127
		if i < n-1 {
			c |= 128
		}
		lp = append(lp, c)
	}
	return lp
}
