package aof

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/failpoint"
)

// Rewrite without fork.
//
// StartRewrite opens a new incr file, adds it to the manifest (persisted:
// a crash from here on loads the old base, the old incrs and the new incr,
// which is the whole history) and queues a switch marker behind the last
// submitted batch: batches up to the cut go to the old files, later ones to
// the new incr. The server then fills the base with a point-in-time image
// of the data set as of the cut, from any number of goroutines, in small
// steps; chunks of the image are written to a temp file by a background
// goroutine as they fill. Finish writes the rest, fsyncs the temp file,
// renames it to the next base name, replaces the manifest atomically with
// [new base, new incr] and deletes the old base and incrs. Abort deletes the
// temp file; the manifest keeps the new incr, which is still correct (the
// old files plus it hold every record), as Redis does after a failed
// rewrite.

// ErrRewriteInProgress is returned by StartRewrite while another rewrite
// runs.
var ErrRewriteInProgress = errors.New("aof: background append only file rewriting already in progress")

// baseChunk is the size at which a BaseWriter hands a chunk over; each
// chunk is one annotated group of the base file.
const baseChunk = 1 << 20

// baseSyncEvery is the incremental fsync of the base file
// (aof-rewrite-incremental-fsync: Redis's REDIS_AUTOSYNC_BYTES).
const baseSyncEvery = 4 << 20

// Rewrite is a rewrite in progress.
type Rewrite struct {
	l       *Log
	cut     uint64
	incr    ManifestEntry // the new incr file
	tmpPath string
	tmp     tempFile
	child   ChildFile // tmp, when a child process writes it (StartChild)
	// tempIncr: the log waits for its first rewrite, and the records after
	// the cut go to the temp incr file, which Finish renames to incr.
	tempIncr bool
	sw       *switchReq
	started  time.Time

	appendMu sync.Mutex  // guards main
	main     *BaseWriter // used by Rewrite.Append

	mu      sync.Mutex // guards the fields below
	cond    *sync.Cond
	chunks  [][]byte
	pending int64
	sealed  bool
	err     error
	size    int64 // bytes written to the temp file
	state   int   // rwActive, rwEnding, rwDone
	// rdbw writes an RDB base (UseRDB): the chunks are rdb.ChunkWriter
	// runs of keys, and the file ends with EOF and the CRC64.
	rdbw     *rdb.Writer
	bgDone   chan struct{}
	finished chan struct{}
}

// rewriteTempPattern is the base's temp file, with the pid of its writer
// (Redis's temp-rewriteaof-bg-<child pid>.aof).
const rewriteTempPattern = tempPrefix + "rewriteaof-bg-%d" + aofSuffix

const (
	rwActive = iota
	rwEnding
	rwDone
)

// StartRewrite starts a rewrite at a cut: every batch submitted before it
// (sequence <= Cut()) belongs to the image the server writes into the
// Rewrite; every later batch, including records appended to a Producer but
// not yet submitted, goes to the new incr file. It does a little I/O (a file
// creation and a manifest replacement), like Redis's BGREWRITEAOF in its
// main thread.
func (l *Log) StartRewrite() (*Rewrite, error) {
	l.manifestMu.Lock()
	defer l.manifestMu.Unlock()
	l.mu.Lock()
	busy, closing := l.rw != nil, l.closing
	l.mu.Unlock()
	if busy {
		return nil, ErrRewriteInProgress
	}
	if closing {
		return nil, ErrClosed
	}
	tmp, tmpPath, err := openTemp(l.fs, l.dir, rewriteTempPattern, "redshard-aof-rewrite", true)
	if err != nil {
		return nil, fmt.Errorf("aof: opening the temp file for AOF rewrite: %w", err)
	}
	m := l.manifest.clone()
	m.IncrSeq++
	e := ManifestEntry{Name: incrName(l.o.FileName, m.IncrSeq), Seq: m.IncrSeq, Type: typeIncr}
	file := e.Name
	if l.waitRewrite {
		// Waiting for a first rewrite (a Fresh log): a new temp incr file,
		// in place of the one the records before the cut went to, and
		// no manifest until the rewrite succeeds (Finish names it e).
		file = tempIncrName(l.o.FileName)
		_ = l.fs.Remove(l.path(file))
	}
	f, err := l.fs.OpenFile(l.path(file), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		tmp.Close()
		l.fs.Remove(tmpPath)
		return nil, fmt.Errorf("aof: can't open the append-only file %s: %w", file, err)
	}
	if !l.waitRewrite {
		m.Incr = append(m.Incr, e)
		if err := writeManifest(l.fs, l.dir, l.o.FileName, m); err != nil {
			f.Close()
			l.fs.Remove(l.path(e.Name))
			tmp.Close()
			l.fs.Remove(tmpPath)
			return nil, err
		}
		l.manifest = m
	}
	r := &Rewrite{
		l: l, incr: e, tmpPath: tmpPath, tmp: tmp, started: time.Now(),
		tempIncr: l.waitRewrite,
		sw:       &switchReq{file: f, name: file, done: make(chan struct{})},
		bgDone:   make(chan struct{}),
		finished: make(chan struct{}),
	}
	r.cond = sync.NewCond(&r.mu)
	r.child, _ = tmp.(ChildFile)
	r.main = r.NewWriter()
	l.mu.Lock()
	r.cut = l.seq
	l.queue = append(l.queue, batch{sw: r.sw})
	l.rw = r
	l.mu.Unlock()
	l.signal()
	l.o.Logf(LogNotice, "Creating AOF incr file %s on background rewrite", file)
	l.o.Logf(LogNotice, "Background append only file rewriting started")
	go r.bg()
	return r, nil
}

// UseRDB makes the base an RDB file (aof-use-rdb-preamble yes), as Redis 7
// writes it: aux fields with aof-base 1, the function libraries, then the
// keys handed over with Hand. Call it right after StartRewrite, before any
// chunk.
func (r *Rewrite) UseRDB(opts rdb.Options, h rdb.Header, functions []string) error {
	h.AOFBase = true
	w, err := rdb.NewWriter(rewriteTmp{r}, opts, h)
	if err == nil {
		for _, code := range functions {
			if err = w.Function(code); err != nil {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("aof: writing the AOF rewrite temp file: %w", err)
	}
	r.mu.Lock()
	r.rdbw = w
	r.mu.Unlock()
	return nil
}

// rewriteTmp is the temp file as an RDB base's writer sees it.
type rewriteTmp struct{ r *Rewrite }

func (t rewriteTmp) Write(b []byte) (int, error) {
	n, err := t.r.tmp.Write(b)
	t.r.mu.Lock()
	t.r.size += int64(n)
	t.r.mu.Unlock()
	return n, err
}

// Fail makes Finish fail with err (a key could not be serialized).
func (r *Rewrite) Fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// Hand queues a chunk of an RDB base (rdb.ChunkWriter's); the rewrite owns
// it.
func (r *Rewrite) Hand(chunk []byte) {
	r.mu.Lock()
	r.chunks = append(r.chunks, chunk)
	r.pending += int64(len(chunk))
	r.mu.Unlock()
	r.cond.Signal()
}

// Cut returns the sequence number of the last batch the image must
// contain.
func (r *Rewrite) Cut() uint64 { return r.cut }

// Pending returns the bytes of the image handed over but not yet written,
// so the server can pace the serialization.
func (r *Rewrite) Pending() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

// Append adds one command of the image, in database db. It is safe for
// concurrent use (a mutex per call); a goroutine that writes much should
// use its own BaseWriter.
func (r *Rewrite) Append(db int, argv [][]byte) {
	r.appendMu.Lock()
	r.main.Append(db, argv)
	r.appendMu.Unlock()
}

// BaseWriter writes part of a rewrite's image from one goroutine, without
// locking, in chunks of about 1 MiB, each an annotated group starting with
// its own SELECT. Flush it before Finish.
type BaseWriter struct {
	r   *Rewrite
	buf []byte
	db  int
}

// NewWriter returns a BaseWriter for one goroutine.
func (r *Rewrite) NewWriter() *BaseWriter { return &BaseWriter{r: r, db: -1} }

// Append adds one command of the image, in database db.
func (b *BaseWriter) Append(db int, argv [][]byte) {
	if len(b.buf) == 0 {
		b.buf = make([]byte, groupHeaderRoom, baseChunk+baseChunk/4)
		b.db = -1
	}
	if db != b.db {
		b.buf = appendSelect(b.buf, db)
		b.db = db
	}
	b.buf = appendCommand(b.buf, argv)
	if len(b.buf)-groupHeaderRoom >= baseChunk {
		b.Flush()
	}
}

// Flush hands the pending chunk to the background writer.
func (b *BaseWriter) Flush() {
	if len(b.buf) <= groupHeaderRoom {
		return
	}
	out := sealGroup(b.buf)
	b.buf, b.db = nil, -1
	r := b.r
	r.mu.Lock()
	r.chunks = append(r.chunks, out)
	r.pending += int64(len(out))
	r.mu.Unlock()
	r.cond.Signal()
}

// bg writes the chunks to the temp file as they come.
func (r *Rewrite) bg() {
	defer close(r.bgDone)
	var sinceSync int64
	for {
		r.mu.Lock()
		for len(r.chunks) == 0 && !r.sealed {
			r.cond.Wait()
		}
		if len(r.chunks) == 0 {
			r.mu.Unlock()
			return
		}
		c := r.chunks[0]
		r.chunks[0] = nil
		r.chunks = r.chunks[1:]
		failed := r.err != nil
		rw := r.rdbw
		r.mu.Unlock()
		var err error
		if rw != nil {
			if !failed {
				err = rw.RawYielding(c) // counts its bytes itself (rewriteTmp)
			}
			n := len(c)
			rdb.ReleaseChunk(c)
			r.mu.Lock()
			r.pending -= int64(n)
			if err != nil && r.err == nil {
				r.err = fmt.Errorf("aof: writing the AOF rewrite temp file: %w", err)
			}
			r.mu.Unlock()
			continue
		}
		if !failed && r.size == 0 && r.l.timestamps.Load() {
			// The base starts with a timestamp, as Redis's rewrite writes.
			ts := appendTimestamp(nil, time.Now().Unix())
			if _, err = r.tmp.Write(ts); err == nil {
				r.mu.Lock()
				r.size += int64(len(ts))
				r.mu.Unlock()
			}
		}
		if !failed && err == nil {
			_, err = r.tmp.Write(c)
			if err == nil {
				sinceSync += int64(len(c))
				if sinceSync >= baseSyncEvery && r.child == nil { // a child fsyncs at its end
					err = r.tmp.Sync()
					sinceSync = 0
				}
			}
		}
		r.mu.Lock()
		r.pending -= int64(len(c))
		if err != nil && r.err == nil {
			r.err = fmt.Errorf("aof: writing the AOF rewrite temp file: %w", err)
		}
		if err == nil && !failed {
			r.size += int64(len(c))
		}
		r.mu.Unlock()
	}
}

// seal stops the background writer after the chunks handed over so far.
func (r *Rewrite) seal() {
	r.mu.Lock()
	r.sealed = true
	r.mu.Unlock()
	r.cond.Broadcast()
	<-r.bgDone
}

// begin moves the rewrite from active to ending; false if it had ended.
func (r *Rewrite) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != rwActive {
		return false
	}
	r.state = rwEnding
	return true
}

func (r *Rewrite) end() {
	r.mu.Lock()
	r.state = rwDone
	r.mu.Unlock()
	l := r.l
	l.mu.Lock()
	if l.rw == r {
		l.rw = nil
	}
	l.mu.Unlock()
	close(r.finished)
}

// Finish completes the rewrite: it writes what is left of the image,
// fsyncs it, waits for the writer to have switched to the new incr file,
// renames the image to the next base name, replaces the manifest
// atomically (temp file, fsync, rename, fsync dir) with [new base, new
// incr], and deletes the old base and incr files. It blocks until then:
// call it off the event loops. On error the rewrite is aborted and the old
// files stay in use.
func (r *Rewrite) Finish() error {
	r.appendMu.Lock()
	r.main.Flush()
	r.appendMu.Unlock()
	if !r.begin() {
		<-r.finished
		return errors.New("aof: rewrite already ended")
	}
	err := r.finish()
	if err != nil {
		r.cleanup()
		r.l.o.Logf(LogWarning, "Background AOF rewrite failed: %v", err)
	}
	r.end()
	return err
}

func (r *Rewrite) finish() error {
	l := r.l
	r.seal()
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err == nil && r.rdbw != nil {
		if err = r.rdbw.Close(); err != nil {
			err = fmt.Errorf("aof: writing the AOF rewrite temp file: %w", err)
		}
	}
	r.mu.Lock()
	size := r.size
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if err := r.tmp.Sync(); err != nil {
		return fmt.Errorf("aof: fsync the AOF rewrite temp file: %w", err)
	}
	if err := r.tmp.Close(); err != nil {
		r.tmp = nil
		return fmt.Errorf("aof: close the AOF rewrite temp file: %w", err)
	}
	r.tmp = nil
	// rewrite-base-written: the base is whole and synced under its temp
	// name, no manifest names it. error stands for the base's write(2)
	// failing (a full disk): the rewrite fails and the old files stay.
	if e := failpoint.Inject(failpoint.RewriteBaseWritten); e != 0 {
		return fmt.Errorf("aof: writing the AOF rewrite temp file: %w", &os.PathError{Op: "write", Path: r.tmpPath, Err: e})
	}
	if r.sw != nil { // nil for a Folder's rewrite, which has no writer
		select {
		case <-r.sw.done:
		case <-l.done:
			select {
			case <-r.sw.done:
			default:
				return ErrClosed
			}
		}
	}

	l.manifestMu.Lock()
	defer l.manifestMu.Unlock()
	m := l.manifest.clone()
	m.BaseSeq++
	name := baseName(l.o.FileName, m.BaseSeq)
	if r.rdbw != nil {
		name = strings.TrimSuffix(name, aofSuffix) + rdbSuffix
	}
	base := ManifestEntry{Name: name, Seq: m.BaseSeq, Type: typeBase}
	if err := l.fs.Rename(r.tmpPath, l.path(base.Name)); err != nil {
		return fmt.Errorf("aof: rename the AOF rewrite temp file to %s: %w", base.Name, err)
	}
	if r.tempIncr {
		// The temp incr file becomes the new incr (the writer appends to
		// it through its descriptor all along); the manifest below names it.
		if err := l.fs.Rename(l.path(tempIncrName(l.o.FileName)), l.path(r.incr.Name)); err != nil {
			l.fs.Remove(l.path(base.Name))
			return fmt.Errorf("aof: rename the temp incr file to %s: %w", r.incr.Name, err)
		}
		m.Incr = append(m.Incr, r.incr)
		m.IncrSeq = r.incr.Seq
	}
	var old []string
	var hist []ManifestEntry // aof-disable-auto-gc: kept, newest first
	if m.Base != nil {
		old = append(old, m.Base.Name)
		hist = append(hist, ManifestEntry{Name: m.Base.Name, Seq: m.Base.Seq, Type: typeHistory})
	}
	for _, e := range m.History {
		old = append(old, e.Name)
	}
	keep := m.Incr[:0:0]
	for _, e := range m.Incr {
		if e.Seq < r.incr.Seq {
			old = append(old, e.Name)
			hist = append([]ManifestEntry{{Name: e.Name, Seq: e.Seq, Type: typeHistory}}, hist...)
		} else {
			keep = append(keep, e)
		}
	}
	if l.disableGC.Load() {
		// As Redis marks them: each at the head of the history list, the
		// base first, then the incr files in order.
		m.History = append(hist, m.History...)
		old = nil
	} else {
		m.History = nil
	}
	m.Base = &base
	m.Incr = keep
	if err := writeManifestAt(l.fs, l.dir, l.o.FileName, m, true); err != nil {
		l.fs.Remove(l.path(base.Name))
		if r.tempIncr { // back to its temp name, which cleanup removes
			l.fs.Rename(l.path(r.incr.Name), l.path(tempIncrName(l.o.FileName)))
		}
		return err
	}
	l.manifest = m
	l.waitRewrite = false
	// rewrite-manifest-renamed: the new manifest is in place and its
	// directory synced; the old base and incrs are still on disk.
	failpoint.Inject(failpoint.RewriteManifestRenamed)
	for _, name := range old {
		l.o.Logf(LogNotice, "Removing the history file %s in the background", name)
		if err := l.fs.Remove(l.path(name)); err != nil {
			l.o.Logf(LogWarning, "Can't remove the history file %s: %v", name, err)
		}
	}
	failpoint.Inject(failpoint.RewriteOldRemoved)
	// The writer switched before (sw.done): otherSize holds the old files.
	l.stats.otherSize.Store(size)
	l.stats.baseSize.Store(size)
	l.o.Logf(LogNotice, "Background AOF rewrite finished successfully in %.3f seconds (base %s, %d bytes)",
		time.Since(r.started).Seconds(), base.Name, size)
	return nil
}

// cleanup deletes the temp file, and a waiting log's temp incr file: the
// records in it are lost, as Redis's are, and the next rewrite starts a
// new one.
func (r *Rewrite) cleanup() {
	if r.tmp != nil {
		r.tmp.Close()
		r.tmp = nil
	}
	r.l.fs.Remove(r.tmpPath)
	if r.tempIncr {
		name := tempIncrName(r.l.o.FileName)
		r.l.o.Logf(LogNotice, "Removing the temp incr aof file %s in the background", name)
		r.l.fs.Remove(r.l.path(name))
	}
}

// Abort stops the rewrite and deletes its temp file. Appends keep going to
// the new incr file, which stays in the manifest after the old ones.
func (r *Rewrite) Abort() {
	if !r.begin() {
		<-r.finished
		return
	}
	r.seal()
	r.cleanup()
	r.l.o.Logf(LogWarning, "Background AOF rewrite aborted")
	r.end()
}

// Child is the child process writing the file (StartChild), or nil.
func (r *Rewrite) Child() ChildFile { return r.child }
