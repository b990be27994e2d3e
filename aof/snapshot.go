package aof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/failpoint"
)

// Snapshots: an RDB file (dump.rdb) written without fork.
//
// StartSnapshot opens a temp file beside the target (temp-<pid>.rdb in the
// same dir, Redis's name) and writes the
// header and the function libraries. The server then serializes a
// point-in-time image of the data set into chunks (rdb.ChunkWriter), from
// as many goroutines as it likes; Hand queues each chunk and a background
// goroutine writes them in arrival order, feeding the checksum. Finish
// writes EOF and the CRC64, fsyncs, closes, renames the temp file over the
// target and fsyncs the dir: a crash at any moment leaves either the old
// file or the new one, whole. Abort removes the temp file.

// Snapshot is an RDB file being written.
type Snapshot struct {
	fs      FS
	path    string
	tmpPath string
	tmp     tempFile
	child   ChildFile // tmp, when a child process writes it (StartChild)
	out     io.Writer // tmp, or the stream of StartStream
	w       *rdb.Writer

	mu      sync.Mutex
	cond    *sync.Cond
	chunks  [][]byte
	pending int64 // bytes handed over and not written yet
	sealed  bool
	err     error
	size    int64
	bgDone  chan struct{}

	// endMu makes Finish and Abort exclude each other: whichever comes
	// first decides the file's fate (Finish puts it in place, Abort
	// removes it), and the other, waiting for it, does nothing. Without
	// it an Abort racing a Finish could remove or truncate the temp file
	// the next snapshot (same name) is writing.
	endMu sync.Mutex
	ended bool

	// background: the image is made while the loops serve clients
	// (BGSAVE): the writer gives its P up between pieces of a chunk
	// (rdb.Writer.RawYielding). A SAVE's loops are parked, so yielding
	// would only let the serializer outrun the writer and pile chunks up.
	background atomic.Bool
}

// Background marks the snapshot as written while the loops serve clients
// (see the field).
func (s *Snapshot) Background() { s.background.Store(true) }

// errAborted is Finish's answer after Abort.
var errAborted = errors.New("the snapshot was aborted")

// snapTemp is the temp file of the snapshot being written, if any.
var snapTemp atomic.Pointer[string]

// RemoveSnapshotTemp removes the temp file of a snapshot in progress, for
// an exit that cannot wait for it (a second SIGINT).
func RemoveSnapshotTemp() {
	if p := snapTemp.Load(); p != nil {
		_ = os.Remove(*p)
	}
}

// StartSnapshot begins an RDB file at path; bg is a BGSAVE's, whose file a
// child process writes when the server has one (StartChild).
func StartSnapshot(fs FS, path string, bg bool, opts rdb.Options, h rdb.Header, functions []string) (*Snapshot, error) {
	if fs == nil {
		fs = OSFS{}
	}
	s := &Snapshot{fs: fs, path: path, bgDone: make(chan struct{})}
	// One snapshot at a time (the server's saves exclude each other), so
	// Redis's name: temp-<pid>.rdb, the pid of the process writing it.
	f, tmpPath, err := openTemp(fs, filepath.Dir(path), "temp-%d.rdb", "redshard-rdb-bgsave", bg)
	if err != nil {
		if tmpPath == "" {
			tmpPath = "temp-<child>.rdb"
		}
		return nil, fmt.Errorf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %w",
			filepath.Base(tmpPath), filepath.Dir(path), unwrapPath(err))
	}
	s.tmpPath = tmpPath
	snapTemp.Store(&s.tmpPath)
	s.tmp, s.out = f, f
	s.child, _ = f.(ChildFile)
	if err := s.begin(opts, h, functions); err != nil {
		_ = f.Close()
		_ = fs.Remove(s.tmpPath)
		return nil, fmt.Errorf("Write error saving DB on disk: %w", unwrapPath(err))
	}
	return s, nil
}

// StartStream begins an RDB image written to w instead of a file (a
// replica's disk-less full sync): Finish ends it with EOF and the CRC64
// and nothing else; there is no file to sync or rename.
func StartStream(w io.Writer, opts rdb.Options, h rdb.Header, functions []string) (*Snapshot, error) {
	s := &Snapshot{out: w, bgDone: make(chan struct{})}
	if err := s.begin(opts, h, functions); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Snapshot) begin(opts rdb.Options, h rdb.Header, functions []string) error {
	s.cond = sync.NewCond(&s.mu)
	w, err := rdb.NewWriter(countingWriter{s}, opts, h)
	if err == nil {
		for _, code := range functions {
			if err = w.Function(code); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	s.w = w
	go s.bg()
	return nil
}

// countingWriter is the temp file as the rdb.Writer sees it.
type countingWriter struct{ s *Snapshot }

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.s.out.Write(b)
	c.s.mu.Lock()
	c.s.size += int64(n)
	c.s.mu.Unlock()
	return n, err
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Hand queues a chunk of serialized keys; the snapshot owns it.
func (s *Snapshot) Hand(chunk []byte) {
	s.mu.Lock()
	s.chunks = append(s.chunks, chunk)
	s.pending += int64(len(chunk))
	s.mu.Unlock()
	s.cond.Signal()
}

// Pending is the size of the chunks handed over and not yet written: the
// memory the image holds beyond the data set.
func (s *Snapshot) Pending() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// Size is what has been written so far.
func (s *Snapshot) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

func (s *Snapshot) bg() {
	defer close(s.bgDone)
	for {
		s.mu.Lock()
		for len(s.chunks) == 0 && !s.sealed {
			s.cond.Wait()
		}
		if len(s.chunks) == 0 {
			s.mu.Unlock()
			return
		}
		c := s.chunks[0]
		s.chunks[0] = nil
		s.chunks = s.chunks[1:]
		failed := s.err != nil
		s.mu.Unlock()
		var err error
		if !failed {
			if s.background.Load() {
				err = s.w.RawYielding(c)
			} else {
				err = s.w.Raw(c)
			}
		}
		n := len(c)
		rdb.ReleaseChunk(c)
		s.mu.Lock()
		s.pending -= int64(n)
		if err != nil && s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
}

func (s *Snapshot) seal() {
	s.mu.Lock()
	s.sealed = true
	s.mu.Unlock()
	s.cond.Broadcast()
	<-s.bgDone
}

// Finish writes the end of the file and puts it in place. It blocks until
// the file is durable: call it off the event loops. On error the temp file
// is removed and the old file stays.
func (s *Snapshot) Finish() error {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	if s.ended {
		return errAborted
	}
	s.ended = true
	s.seal()
	err := s.err
	if err == nil {
		err = s.w.Close()
	}
	if s.tmp == nil { // a stream
		return err
	}
	if err == nil {
		err = s.tmp.Sync()
	}
	if cerr := s.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = s.fs.Remove(s.tmpPath)
		return fmt.Errorf("Write error saving DB on disk: %w", unwrapPath(err))
	}
	// rdb-temp-written: the new RDB is whole and synced under its temp
	// name; the previous file is untouched. error stands for the rename(2)
	// failing.
	rename := s.fs.Rename
	if e := failpoint.Inject(failpoint.RDBTempWritten); e != 0 {
		rename = func(o, n string) error { return &os.LinkError{Op: "rename", Old: o, New: n, Err: e} }
	}
	snapTemp.Store(nil)
	if err := rename(s.tmpPath, s.path); err != nil {
		_ = s.fs.Remove(s.tmpPath)
		return fmt.Errorf("Error moving temp DB file %s on the final destination %s (in server root dir %s): %w",
			filepath.Base(s.tmpPath), filepath.Base(s.path), filepath.Dir(s.path), unwrapPath(err))
	}
	if err := s.fs.SyncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("Failed to fsync the directory after renaming %s: %w", filepath.Base(s.path), unwrapPath(err))
	}
	failpoint.Inject(failpoint.RDBRenamed)
	return nil
}

// Fail makes Finish fail with err (a key could not be serialized).
func (s *Snapshot) Fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// Abort stops the snapshot and removes the temp file; after a Finish (or
// while one runs: it waits for it) it does nothing.
func (s *Snapshot) Abort() {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	s.seal()
	if s.tmp == nil {
		return
	}
	snapTemp.Store(nil)
	_ = s.tmp.Close()
	_ = s.fs.Remove(s.tmpPath)
}

// Child is the child process writing the file (StartChild), or nil.
func (s *Snapshot) Child() ChildFile { return s.child }
