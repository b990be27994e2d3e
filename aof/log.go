package aof

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redshard/redshard/aof/rdb"
)

// Log levels for Options.Logf, in the order of Redis's loglevel option.
const (
	LogDebug = iota
	LogVerbose
	LogNotice
	LogWarning
)

// Fsync policies (appendfsync).
const (
	FsyncAlways   = "always"
	FsyncEverysec = "everysec"
	FsyncNo       = "no"
)

const (
	policyAlways int32 = iota
	policyEverysec
	policyNo
)

// ErrClosed is returned by Err after Close.
var ErrClosed = errors.New("aof: log closed")

// Options configure a Log. Zero values take Redis's defaults.
type Options struct {
	Dir      string // the server's dir; "" is the current directory
	DirName  string // appenddirname, default "appendonlydir"
	FileName string // appendfilename, default "appendonly.aof"
	Fsync    string // appendfsync: "always", "everysec" (default) or "no"
	// LoadTruncated is aof-load-truncated: Load cuts a torn tail of the last
	// file instead of failing.
	LoadTruncated bool
	// Fresh starts a new log for the data set in memory (CONFIG SET
	// appendonly yes), as Redis's AOF_WAIT_REWRITE: there is nothing to
	// Load, the folder and its manifest stay as they are, and records go
	// to a temp incremental file no manifest names, until a rewrite
	// succeeds: its image becomes the next base, its temp incr file the
	// next incr, and the older files go (see WaitingRewrite).
	Fresh bool
	// DisableAutoGC is aof-disable-auto-gc: the files a rewrite replaces
	// stay on disk, named in the manifest as history, until it is turned
	// off again (SetDisableAutoGC).
	DisableAutoGC bool
	// Timestamps is aof-timestamp-enabled: Redis's "#TS:" annotations,
	// at most one a second in incremental files and one at the start of
	// each base (SetTimestamps changes it).
	Timestamps bool
	// RDB reads a file in RDB format (an RDB base) where it stands among
	// the files a load replays; nil refuses one.
	RDB func(r io.Reader) (int64, error)
	// RDBBase makes the empty base a new folder starts with an RDB file
	// (aof-use-rdb-preamble yes).
	RDBBase bool
	// Tap, when set, receives every group once it is as durable as the
	// policy makes it (written; under "always", fsynced), in log order,
	// from whoever runs the writer's round: the group's commands (without
	// the annotation), the database the file was in before them and the one
	// it is in after them, so that a reader keeping its own SELECT state can
	// follow (replication), and the sequence of its last batch. The group
	// holds the batches' replication-only records (AppendReplOnly) in their
	// places; the file does not. The bytes are the writer's: copy what
	// must outlive the call. SetTap changes it.
	Tap  func(group []byte, startDB, endDB int, last uint64)
	FS   FS                                          // nil: the real file system
	Logf func(level int, format string, args ...any) // nil: discard

	// Test hooks. syncEvery is the everysec fsync period (1s); retryMin and
	// retryMax bound the backoff between retries of a failed group (10ms,
	// 1s).
	syncEvery          time.Duration
	retryMin, retryMax time.Duration
}

// Log is an open multi-part AOF: the manifest, the current incremental file
// and the writer goroutine that appends to it. See doc.go for the format
// and writer.go for the group-commit protocol.
type Log struct {
	o            Options
	fs           FS
	dir          string // dir/appenddirname
	manifestPath string

	// loadFiles are the files the manifest listed when Open read it; Load
	// replays them. Set by Open, read by Load.
	loadFiles []ManifestEntry
	loaded    bool
	// rdbBase reads a file in RDB format (an RDB base, Redis's
	// aof-use-rdb-preamble yes): Options.RDB; nil refuses one.
	rdbBase func(r io.Reader) (int64, error)

	// mu guards the submission queue and the error state; producers take
	// it once per batch, the writer once per drain.
	mu         sync.Mutex
	seq        uint64  // highest sequence assigned (guarded by mu)
	queue      []batch // submitted, not yet drained (guarded by mu)
	free       [][]byte
	queueBytes int64       // bytes in queue and in the writer's hands (guarded by mu)
	closing    bool        // Close was called (guarded by mu)
	writeErr   error       // set while a group cannot be written (guarded by mu)
	syncErr    error       // set while the everysec fsync fails (guarded by mu)
	syncRes    *syncResult // the syncer's last result, for the writer (guarded by mu)
	file       File        // current incr file (guarded by mu and fileMu to change)
	rw         *Rewrite    // rewrite in progress (guarded by mu)
	onDurable  func(written, durable uint64)
	onFailed   func(from, to uint64, err error)

	// fileMu is held by the syncer while it fsyncs the current file and by
	// the writer while it replaces it, so a file is never closed under a
	// running fsync.
	fileMu sync.Mutex

	// manifestMu serialises manifest changes (Open, StartRewrite, Finish).
	manifestMu sync.Mutex
	manifest   *Manifest // guarded by manifestMu
	// waitRewrite is set by a Fresh Open and cleared by the first rewrite
	// that succeeds: meanwhile the manifest on disk is the old one and the
	// records go to the temp incr file (tempIncrName), which each rewrite
	// starts anew at its cut and a failed one removes. Guarded by
	// manifestMu.
	waitRewrite bool

	policy     atomic.Int32
	timestamps atomic.Bool  // aof-timestamp-enabled
	disableGC  atomic.Bool  // aof-disable-auto-gc
	flushSleep atomic.Int64 // nanoseconds the writer sleeps before each write (DEBUG AOF-FLUSH-SLEEP)
	written    atomic.Uint64
	durable    atomic.Uint64
	wake       chan struct{} // capacity 1: a pending signal to the writer
	done       chan struct{} // closed when the writer goroutine has exited
	stopSync   chan struct{}
	syncDone   chan struct{}
	closeErr   error // set by the writer before done is closed

	w   writerState // owned by whoever holds wmu: the writer goroutine, or a loop in WriteNow
	wmu sync.Mutex

	// submitted counts the commands submitted so far (changed under mu);
	// gth is the writer's gathering of a group under always (gather.go).
	submitted atomic.Uint64
	// producers counts NewProducer calls: under always only a lone
	// producer's loop fsyncs its own rounds (WriteNow).
	producers atomic.Int32
	gth       gatherState

	stats struct {
		fsyncs, groups, batches, bytes atomic.Uint64
		lastGroupBytes, lastGroupBatch atomic.Int64
		fsyncNanos, fsyncMaxNanos      atomic.Int64
		writeErrors                    atomic.Uint64
		incrSize                       atomic.Int64 // current incr file
		otherSize                      atomic.Int64 // base and the other incr files
		baseSize                       atomic.Int64
		loadLoaded, loadTotal          atomic.Int64
	}
	hist struct { // metrics.go
		fsync, group, groupCmds Hist
	}
	latencyFn atomic.Pointer[func(event string, d time.Duration)] // metrics.go
	tap       atomic.Pointer[func(group []byte, startDB, endDB int, last uint64)]
	// memory: a log without files (OpenMemory), which only orders the
	// batches for the tap.
	memory bool
}

// Stats are counters for INFO persistence and metrics.
type Stats struct {
	Fsyncs           uint64        // fdatasync calls on incr files that returned success
	Groups           uint64        // groups written
	Batches          uint64        // batches written
	Bytes            uint64        // bytes written to incr files, annotations included
	LastGroupBytes   int64         // size of the last group, annotation included
	LastGroupBatches int64         // batches in the last group
	FsyncLatencySum  time.Duration // total time in successful fdatasync calls
	FsyncLatencyMax  time.Duration
	WriteErrors      uint64 // failed write, fsync or ftruncate calls
	CurrentSize      int64  // aof_current_size: base plus incremental files
	BaseSize         int64  // aof_base_size: the base file at load or last rewrite
	PendingBytes     int64  // submitted, not yet written (mem_aof_buffer)
	LastWriteStatus  string // aof_last_write_status: "ok" or "err"
	LastError        string // the error behind "err", "" when ok
	Submitted        uint64 // highest sequence assigned
	Written          uint64
	Durable          uint64
	RewriteActive    bool // aof_rewrite_in_progress
}

// Open reads the manifest in Dir/DirName (or creates the folder, an empty
// base file and the manifest, as redis-server does on its first start),
// deletes history files, and opens the last incremental file for appending
// (creating one if the manifest has none). It starts the writer; call Load
// before the first Submit.
func Open(o Options) (*Log, error) {
	l, err := newLog(o)
	if err != nil {
		return nil, err
	}
	o = l.o
	if err := l.SetFsync(o.Fsync); err != nil {
		return nil, err
	}
	if err := MkdirDurable(l.fs, l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("aof: can't open or create append-only dir %s: %w", l.dir, err)
	}
	m, err := readManifest(l.fs, l.manifestPath)
	dirty := false
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m = &Manifest{}
		if up, err := l.upgrade(m); err != nil {
			return nil, err
		} else if up {
			dirty = true
		}
	case err != nil:
		return nil, err
	case m.Base != nil && len(m.Incr) == 0 && m.Base.Name == o.FileName:
		// An upgrade interrupted after the manifest was written and before
		// the old file moved into the folder: finish it (Redis's
		// loadAppendOnlyFiles, third case of its upgrade rule).
		if _, err := l.fs.Stat(l.path(o.FileName)); errors.Is(err, fs.ErrNotExist) {
			if up, err := l.upgrade(m); err != nil {
				return nil, err
			} else if up {
				dirty = true
			}
		}
	}
	if o.Fresh {
		l.loaded = true
	} else {
		l.loadFiles = m.files()
	}
	var loadTotal int64
	for _, e := range l.loadFiles {
		st, err := l.fs.Stat(l.path(e.Name))
		if err != nil {
			return nil, fmt.Errorf("aof: The append log file %s doesn't exist: %s", e.Name, Strerror(err))
		}
		loadTotal += st.Size()
	}
	// LoadProgress is meaningful from here on: 0 of what Load will read.
	l.stats.loadTotal.Store(loadTotal)

	// History files are leftovers of a finished rewrite (Redis deletes them
	// in the background): drop them, unless aof-disable-auto-gc keeps them.
	if len(m.History) > 0 && !o.DisableAutoGC {
		l.removeHistory(m)
		dirty = true
	}

	// An empty folder gets an empty base file, as redis-server creates one
	// when it starts with an empty dataset. A Fresh log gets its base from
	// the rewrite that follows at once.
	if m.Base == nil && len(m.Incr) == 0 && !o.Fresh {
		m.BaseSeq++
		name := baseName(o.FileName, m.BaseSeq)
		if o.RDBBase {
			name = strings.TrimSuffix(name, aofSuffix) + rdbSuffix
		}
		f, err := l.fs.OpenFile(l.path(name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("aof: create base file %s: %w", name, err)
		}
		if o.RDBBase {
			// An empty RDB base, as Redis writes with aof-use-rdb-preamble yes.
			w, err := rdb.NewWriter(f, rdb.DefaultOptions(), rdb.Header{CTime: time.Now().Unix(), AOFBase: true})
			if err == nil {
				err = w.Close()
			}
			if err == nil {
				err = f.Sync()
			}
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("aof: write base file %s: %w", name, err)
			}
		}
		f.Close()
		m.Base = &ManifestEntry{Name: name, Seq: m.BaseSeq, Type: typeBase}
		dirty = true
		o.Logf(LogNotice, "Creating AOF base file %s on server start", name)
	}

	var incr string
	created := false
	if o.Fresh {
		incr = tempIncrName(o.FileName)
		_ = l.fs.Remove(l.path(incr)) // a new inode, whatever was there
	} else if n := len(m.Incr); n > 0 {
		incr = m.Incr[n-1].Name
	} else {
		m.IncrSeq++
		incr = incrName(o.FileName, m.IncrSeq)
		m.Incr = append(m.Incr, ManifestEntry{Name: incr, Seq: m.IncrSeq, Type: typeIncr})
		dirty = true
		created = true
	}
	f, err := l.fs.OpenFile(l.path(incr), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("aof: can't open the append-only file %s: %w", incr, err)
	}
	if dirty {
		if err := writeManifest(l.fs, l.dir, o.FileName, m); err != nil {
			f.Close()
			return nil, err
		}
	}
	if o.Fresh {
		l.waitRewrite = true
		o.Logf(LogNotice, "Creating AOF incr file %s on background rewrite", incr)
	} else if created {
		o.Logf(LogNotice, "Creating AOF incr file %s on server start", incr)
	} else {
		o.Logf(LogNotice, "Opening AOF incr file %s on server start", incr)
	}
	l.manifest = m
	l.file = f
	l.w.init(l, f)
	if err := l.refreshSizes(); err != nil {
		f.Close()
		return nil, err
	}
	go l.run()
	go l.syncer()
	return l, nil
}

// OpenMemory returns a log without a folder or files: producers submit
// and the writer orders the batches into groups exactly as for a file, and
// hands each group to the tap, but nothing is written or fsynced (policy
// "no", Written as soon as the group is made). The server runs one when
// something reads the ordered stream (replicas) while appendonly is no.
func OpenMemory(o Options) *Log {
	o.Fsync = FsyncNo
	l, err := newLog(o)
	if err != nil {
		panic(err) // only a bad appendfilename fails, and it has none
	}
	_ = l.SetFsync(FsyncNo)
	l.memory = true
	l.loaded = true
	l.manifest = &Manifest{}
	l.file = discardFile{}
	l.w.init(l, l.file)
	go l.run()
	go l.syncer()
	return l
}

// Memory reports whether the log has no files (OpenMemory).
func (l *Log) Memory() bool { return l != nil && l.memory }

// SetTap replaces Options.Tap; nil removes it.
func (l *Log) SetTap(fn func(group []byte, startDB, endDB int, last uint64)) {
	if fn == nil {
		l.tap.Store(nil)
		return
	}
	l.tap.Store(&fn)
}

// discardFile is a memory log's file.
type discardFile struct{}

func (discardFile) Read([]byte) (int, error)          { return 0, io.EOF }
func (discardFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (discardFile) Write(p []byte) (int, error)       { return len(p), nil }
func (discardFile) Close() error                      { return nil }
func (discardFile) Sync() error                       { return nil }
func (discardFile) Truncate(int64) error              { return nil }
func (discardFile) Stat() (os.FileInfo, error)        { return nil, errors.New("aof: memory log") }

// newLog applies Options' defaults and builds a Log that has not opened
// anything yet.
func newLog(o Options) (*Log, error) {
	if o.DirName == "" {
		o.DirName = "appendonlydir"
	}
	if o.FileName == "" {
		o.FileName = "appendonly.aof"
	}
	if o.Fsync == "" {
		o.Fsync = FsyncEverysec
	}
	if o.FS == nil {
		o.FS = OSFS{}
	}
	if o.Logf == nil {
		o.Logf = func(int, string, ...any) {}
	}
	if o.syncEvery == 0 {
		o.syncEvery = time.Second
	}
	if o.retryMin == 0 {
		o.retryMin = 10 * time.Millisecond
	}
	if o.retryMax == 0 {
		o.retryMax = time.Second
	}
	if filepath.Base(o.FileName) != o.FileName {
		return nil, fmt.Errorf("aof: appendfilename %q can't be a path, just a filename", o.FileName)
	}
	l := &Log{
		o:        o,
		rdbBase:  o.RDB,
		fs:       o.FS,
		dir:      filepath.Join(o.Dir, o.DirName),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		stopSync: make(chan struct{}),
		syncDone: make(chan struct{}),
	}
	l.manifestPath = filepath.Join(l.dir, o.FileName+manifestSuffix)
	l.timestamps.Store(o.Timestamps)
	l.disableGC.Store(o.DisableAutoGC)
	if o.Tap != nil {
		l.SetTap(o.Tap)
	}
	return l, nil
}

// upgrade moves an old-style Dir/FileName into the folder as its base file
// when the folder has no manifest, as Redis's aofUpgradePrepare.
func (l *Log) upgrade(m *Manifest) (bool, error) {
	old := filepath.Join(l.o.Dir, l.o.FileName)
	st, err := l.fs.Stat(old)
	if err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	if m.Base == nil { // else an interrupted upgrade named it already
		m.Base = &ManifestEntry{Name: l.o.FileName, Seq: 1, Type: typeBase}
		m.BaseSeq = 1
	}
	if err := writeManifest(l.fs, l.dir, l.o.FileName, m); err != nil {
		return false, err
	}
	if err := l.fs.Rename(old, l.path(l.o.FileName)); err != nil {
		return false, fmt.Errorf("aof: move the old AOF file %s into dir %s: %w", old, l.dir, err)
	}
	l.o.Logf(LogNotice, "Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", l.o.FileName, l.o.DirName)
	return true, nil
}

func (l *Log) path(name string) string { return filepath.Join(l.dir, name) }

// removeHistory deletes the history files m names and drops them from it.
func (l *Log) removeHistory(m *Manifest) {
	for _, h := range m.History {
		l.o.Logf(LogNotice, "Removing the history file %s in the background", h.Name)
		if err := l.fs.Remove(l.path(h.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.o.Logf(LogWarning, "Can't remove the history file %s: %v", h.Name, err)
		}
	}
	m.History = nil
}

// SetDisableAutoGC is CONFIG SET aof-disable-auto-gc: turned off, the
// history files the manifest keeps are deleted at once and the manifest
// rewritten without them, as Redis's aofDelHistoryFiles.
func (l *Log) SetDisableAutoGC(on bool) error {
	l.disableGC.Store(on)
	if on {
		return nil
	}
	l.manifestMu.Lock()
	defer l.manifestMu.Unlock()
	if l.manifest == nil || len(l.manifest.History) == 0 {
		return nil
	}
	m := l.manifest.clone()
	hist := &Manifest{History: m.History}
	m.History = nil
	if err := writeManifestAt(l.fs, l.dir, l.o.FileName, m, true); err != nil {
		return err
	}
	l.manifest = m
	l.removeHistory(hist)
	return nil
}

// WaitingRewrite reports whether the log waits for its first rewrite (a
// Fresh log, Redis's AOF_WAIT_REWRITE): until one succeeds the records are
// in a file no manifest names, and the server retries a failed one.
func (l *Log) WaitingRewrite() bool {
	l.manifestMu.Lock()
	defer l.manifestMu.Unlock()
	return l.waitRewrite
}

// ManifestPath returns the path of the manifest, for messages and the
// repair command.
func (l *Log) ManifestPath() string { return l.manifestPath }

// refreshSizes recomputes the file sizes from the manifest. Called by Open
// and Load, before the writer appends anything.
func (l *Log) refreshSizes() error {
	l.manifestMu.Lock()
	m := l.manifest
	l.manifestMu.Unlock()
	var other, base int64
	files := m.files()
	if l.waitRewrite {
		// The current file (the temp incr, new) is none of them.
		files = append(files, ManifestEntry{Name: tempIncrName(l.o.FileName)})
	}
	for i, e := range files {
		st, err := l.fs.Stat(l.path(e.Name))
		if err != nil {
			return fmt.Errorf("aof: stat %s: %w", e.Name, err)
		}
		if i == len(files)-1 {
			l.w.off = st.Size()
			l.stats.incrSize.Store(st.Size())
			continue
		}
		other += st.Size()
		if m.Base != nil && e.Name == m.Base.Name {
			base = st.Size()
		}
	}
	l.stats.otherSize.Store(other)
	l.stats.baseSize.Store(base)
	return nil
}

// SetFsync changes the fsync policy at run time (CONFIG SET appendfsync).
// Switching to "always" makes the next group's fdatasync cover everything
// written before.
func (l *Log) SetFsync(policy string) error {
	switch policy {
	case FsyncAlways:
		l.policy.Store(policyAlways)
	case FsyncEverysec:
		l.policy.Store(policyEverysec)
	case FsyncNo:
		l.policy.Store(policyNo)
	default:
		return fmt.Errorf("aof: unknown appendfsync policy %q", policy)
	}
	return nil
}

// SetTimestamps turns Redis's timestamp annotations on or off
// (CONFIG SET aof-timestamp-enabled).
func (l *Log) SetTimestamps(on bool) { l.timestamps.Store(on) }

// SetFlushSleep makes every write of a group wait d first, as Redis's
// DEBUG AOF-FLUSH-SLEEP, so tests can widen the window between a group's
// commands and its write; 0 turns it off.
func (l *Log) SetFlushSleep(d time.Duration) { l.flushSleep.Store(int64(d)) }

// Written returns the highest sequence whose batch is in the file: its
// write(2) returned (under "always", its fdatasync too: a group whose
// fsync failed is cut from the file and written again).
func (l *Log) Written() uint64 { return l.written.Load() }

// Durable returns the highest sequence covered by a completed fdatasync.
// Under "no" it advances only at Close.
func (l *Log) Durable() uint64 { return l.durable.Load() }

// OnDurable sets the function the writer calls after each group it writes
// and after each everysec fsync, with the new positions. It runs on the
// writer goroutine and must not block. Set it before the first Submit.
func (l *Log) OnDurable(fn func(written, durable uint64)) {
	l.mu.Lock()
	l.onDurable = fn
	l.mu.Unlock()
}

// OnFailed sets the function the writer calls with a range of sequences
// whose group could not be written or fsynced (each sequence is reported
// once), and with the sequences submitted while the log is in the error
// state. The records are kept and written once the disk recovers, in order,
// so the file never misses a record that the data set holds; but a reply
// held for them must become an error. Runs on the writer goroutine.
func (l *Log) OnFailed(fn func(from, to uint64, err error)) {
	l.mu.Lock()
	l.onFailed = fn
	l.mu.Unlock()
}

// Err returns the error state: non-nil while writes to the AOF fail (the
// server answers writes "-MISCONF Errors writing to the AOF file: <reason>"
// and sets aof_last_write_status:err), nil again once a retry succeeds.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writeErr != nil {
		return l.writeErr
	}
	return l.syncErr
}

// LoadProgress returns the bytes loaded so far and the total, for INFO's
// loading_loaded_bytes / loading_total_bytes while Load runs.
func (l *Log) LoadProgress() (loaded, total int64) {
	return l.stats.loadLoaded.Load(), l.stats.loadTotal.Load()
}

// Stats returns the log's counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	pending := l.queueBytes
	err := l.writeErr
	if err == nil {
		err = l.syncErr
	}
	seq := l.seq
	rw := l.rw != nil
	l.mu.Unlock()
	s := Stats{
		Fsyncs:           l.stats.fsyncs.Load(),
		Groups:           l.stats.groups.Load(),
		Batches:          l.stats.batches.Load(),
		Bytes:            l.stats.bytes.Load(),
		LastGroupBytes:   l.stats.lastGroupBytes.Load(),
		LastGroupBatches: l.stats.lastGroupBatch.Load(),
		FsyncLatencySum:  time.Duration(l.stats.fsyncNanos.Load()),
		FsyncLatencyMax:  time.Duration(l.stats.fsyncMaxNanos.Load()),
		WriteErrors:      l.stats.writeErrors.Load(),
		CurrentSize:      l.stats.otherSize.Load() + l.stats.incrSize.Load(),
		BaseSize:         l.stats.baseSize.Load(),
		PendingBytes:     pending,
		LastWriteStatus:  "ok",
		Submitted:        seq,
		Written:          l.written.Load(),
		Durable:          l.durable.Load(),
		RewriteActive:    rw,
	}
	if err != nil {
		s.LastWriteStatus = "err"
		s.LastError = err.Error()
	}
	return s
}

// Close writes everything submitted, fsyncs the file (whatever the
// policy, as Redis does at SHUTDOWN), stops the writer and closes the file.
// A rewrite in progress is aborted. Submissions after Close are never
// written.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.done
		return l.closeErr
	}
	l.closing = true
	rw := l.rw
	l.mu.Unlock()
	if rw != nil {
		rw.Abort()
	}
	close(l.stopSync)
	<-l.syncDone
	l.signal()
	<-l.done
	return l.closeErr
}

// signal wakes the writer without blocking.
func (l *Log) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func maxStore(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

func maxStoreInt(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}
