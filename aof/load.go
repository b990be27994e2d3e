package aof

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// LoadStats describes a Load.
type LoadStats struct {
	Files    int   // files in the manifest (empty ones included)
	Commands int64 // commands passed to apply, SELECT, MULTI and EXEC included
	Groups   int64 // annotated groups read
	Bytes    int64 // bytes read (after any cut)
	// Truncated is set when a torn tail was cut (aof-load-truncated yes).
	Truncated     bool
	TruncatedFile string
	TruncatedAt   int64 // the file's new size
	DroppedBytes  int64
	Duration      time.Duration
}

// LoadError is a file that cannot be loaded as it is: the file, the offset
// and what to do, in Redis's words.
type LoadError struct {
	File     string // file name in the AOF folder
	Offset   int64  // offset of the damaged record
	GoodUpTo int64  // end of the last whole record before it
	Reason   string
	// Torn is set for an unexpected end of file (a torn tail), which
	// aof-load-truncated yes or redshard-check-aof --fix repairs; unset for
	// corruption before the tail.
	Torn bool
	// NotLast is set for a torn file that is not the last of the manifest:
	// only the last file may be cut.
	NotLast  bool
	Manifest string // path of the manifest, for the repair command
}

func (e *LoadError) Error() string {
	fix := "redshard-check-aof --fix " + e.Manifest
	switch {
	case e.NotLast:
		return fmt.Sprintf("aof: Fatal error: the truncated file is not the last file: unexpected end of file reading the append only file %s at offset %d (%s). Make a backup of your AOF folder, then inspect it with %s",
			e.File, e.Offset, e.Reason, "redshard-check-aof "+e.Manifest)
	case e.Torn:
		return fmt.Sprintf("aof: Unexpected end of file reading the append only file %s at offset %d (%s; the last whole record ends at offset %d). You can: 1) Make a backup of your AOF file, then use %s. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.",
			e.File, e.Offset, e.Reason, e.GoodUpTo, fix)
	default:
		return fmt.Sprintf("aof: Bad file format reading the append only file %s at offset %d (%s): make a backup of your AOF file, then use %s",
			e.File, e.Offset, e.Reason, fix)
	}
}

// Load replays the base file, then the incremental files, in manifest
// order (the files listed when Open read the manifest), calling apply with
// each command's argv. argv aliases Load's buffers: apply must copy what it
// keeps. SELECT, MULTI and EXEC are passed on as they are in the file; a
// transaction is passed only once its EXEC has been read, so apply never
// sees half of one. Every file starts in database 0, as Redis's loader
// starts each file with a fresh client: if a file does not begin with
// SELECT while the previous file left another database selected, apply
// first gets a SELECT 0 that is not in the file.
//
// Load verifies every group's checksum. A torn tail of the last file is cut
// back to the last whole group (or, in a file written by redis-server, the
// last whole command) when LoadTruncated is set, and the cut is logged;
// otherwise, and for corruption before the tail, Load returns a *LoadError
// naming the file, the offset and the repair command. An error returned by
// apply stops Load and is returned with the file and offset.
//
// Load must be called at most once, before the first Submit.
func (l *Log) Load(apply func(argv [][]byte) error) (LoadStats, error) {
	l.mu.Lock()
	if l.loaded || l.seq > 0 {
		l.mu.Unlock()
		return LoadStats{}, errors.New("aof: Load must be called once, before the first Submit")
	}
	l.loaded = true
	l.mu.Unlock()
	st, err := l.replay(l.loadFiles, apply, true)
	if err != nil {
		return st, err
	}
	if err := l.refreshSizes(); err != nil {
		return st, err
	}
	return st, nil
}

// Reload replays the files of the current manifest again, from the start,
// as Load does (DEBUG LOADAOF: the server empties its data set and loads it
// back from the log). It must run while nothing is submitted, after
// everything submitted before has been written (Written() has reached the
// last sequence): it refuses otherwise, and while a rewrite is in progress,
// while the log is in the error state and after Close. It reads the files
// as they are and never cuts one: a damaged file is a *LoadError.
func (l *Log) Reload(apply func(argv [][]byte) error) (LoadStats, error) {
	l.mu.Lock()
	var err error
	switch {
	case l.closing:
		err = ErrClosed
	case !l.loaded:
		err = errors.New("aof: Reload before Load")
	case l.rw != nil:
		err = ErrRewriteInProgress
	case l.writeErr != nil:
		err = l.writeErr
	case len(l.queue) > 0 || l.written.Load() < l.seq:
		err = errors.New("aof: Reload with records not yet written")
	}
	l.mu.Unlock()
	if err != nil {
		return LoadStats{}, err
	}
	l.manifestMu.Lock()
	files := l.manifest.files()
	l.manifestMu.Unlock()
	return l.replay(files, apply, false)
}

// replay reads files in order into apply (see Load). cut allows cutting a
// torn tail of the last file (with LoadTruncated); Reload never cuts, the
// writer owning the file.
func (l *Log) replay(files []ManifestEntry, apply func(argv [][]byte) error, cut bool) (LoadStats, error) {
	var st LoadStats
	start := time.Now()
	var total int64
	for _, e := range files {
		fi, err := l.fs.Stat(l.path(e.Name))
		if err != nil {
			return st, fmt.Errorf("aof: The append log file %s doesn't exist: %s", e.Name, Strerror(err))
		}
		total += fi.Size()
	}
	l.stats.loadLoaded.Store(0)
	l.stats.loadTotal.Store(total)

	db := 0
	fileStart := true
	emit := func(argv [][]byte) error {
		isSelect := len(argv) == 2 && bytes.EqualFold(argv[0], []byte("select"))
		if fileStart && db != 0 && !isSelect {
			if err := apply(select0); err != nil {
				return err
			}
			db = 0
		}
		fileStart = false
		if isSelect {
			if n, err := strconv.Atoi(string(argv[1])); err == nil {
				db = n
			}
		}
		st.Commands++
		return apply(argv)
	}
	progress := func(n int64) { l.stats.loadLoaded.Add(n) }

	for i, e := range files {
		last := i == len(files)-1
		kind := "incr"
		if e.Type == typeBase {
			kind = "base"
		}
		t0 := time.Now()
		fileStart = true
		res, err := l.loadFile(e.Name, emit, progress)
		st.Files++
		if err != nil {
			return st, err
		}
		st.Groups += res.Groups
		st.Bytes += res.Size
		if !res.ok() {
			lerr := &LoadError{File: e.Name, Offset: res.BadAt, GoodUpTo: res.GoodUpTo, Reason: res.Reason,
				Torn: res.Torn, Manifest: l.manifestPath}
			switch {
			case !res.Torn:
				return st, lerr
			case !last:
				lerr.NotLast = true
				return st, lerr
			case !cut || !l.o.LoadTruncated:
				return st, lerr
			}
			l.o.Logf(LogWarning, "!!! Warning: short read while loading the AOF file %s!!!", e.Name)
			l.o.Logf(LogWarning, "!!! Truncating the AOF %s at offset %d: %d bytes dropped (%s at offset %d) !!!",
				e.Name, res.GoodUpTo, res.Size-res.GoodUpTo, res.Reason, res.BadAt)
			dropped, err := repairTail(l.fs, l.path(e.Name), res.GoodUpTo)
			if err != nil {
				l.o.Logf(LogWarning, "Error truncating the AOF file %s: %v", e.Name, err)
				return st, err
			}
			l.o.Logf(LogWarning, "AOF %s loaded anyway because aof-load-truncated is enabled", e.Name)
			st.Truncated = true
			st.TruncatedFile = e.Name
			st.TruncatedAt = res.GoodUpTo
			st.DroppedBytes = dropped
			st.Bytes -= dropped
		}
		l.o.Logf(LogNotice, "DB loaded from %s file %s: %.3f seconds", kind, e.Name, time.Since(t0).Seconds())
	}
	st.Duration = time.Since(start)
	return st, nil
}

var select0 = [][]byte{[]byte("SELECT"), []byte("0")}

// loadFile scans one file of the folder.
func (l *Log) loadFile(name string, emit func([][]byte) error, progress func(int64)) (scanResult, error) {
	path := l.path(name)
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return scanResult{}, fmt.Errorf("aof: can't open the append log file %s for reading: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return scanResult{}, fmt.Errorf("aof: stat %s: %w", name, err)
	}
	size := fi.Size()
	if isRDB(f, size) {
		if l.rdbBase == nil {
			return scanResult{}, fmt.Errorf("aof: %s is in RDB format (aof-use-rdb-preamble yes) and this load takes RESP files only", name)
		}
		// An RDB base as Redis 7 writes it (aof-use-rdb-preamble yes), or
		// the RDB preamble of a Redis 4-6 single-file AOF, whose commands
		// follow it.
		n, err := l.rdbBase(bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10))
		if err != nil {
			return scanResult{}, fmt.Errorf("aof: Bad file format reading the append only file %s (RDB preamble): %w", name, err)
		}
		progress(n)
		if n >= size {
			return scanResult{Size: size, GoodUpTo: size}, nil
		}
		res, err := scanFile(&offsetFile{File: f, off: n}, size-n, emit, progress)
		res.Size += n
		res.GoodUpTo += n
		if !res.ok() {
			res.BadAt += n
		}
		if res.NextGroup >= 0 {
			res.NextGroup += n
		}
		if err != nil {
			return res, fmt.Errorf("aof: Unrecoverable error reading the append only file %s: %w", name, err)
		}
		return res, nil
	}
	res, err := scanFile(f, size, emit, progress)
	if err != nil {
		var ae *applyError
		if errors.As(err, &ae) {
			return res, fmt.Errorf("aof: loading %s, command at offset %d: %w", name, ae.at, ae.err)
		}
		return res, fmt.Errorf("aof: Unrecoverable error reading the append only file %s: %w", name, err)
	}
	return res, nil
}

// offsetFile is a File seen from off on (ReadAt, which scanFile uses): the
// commands after an RDB preamble.
type offsetFile struct {
	File
	off int64
}

func (o *offsetFile) ReadAt(p []byte, at int64) (int, error) { return o.File.ReadAt(p, at+o.off) }

// isRDB reports whether the file starts with the RDB signature, as
// Redis's loader checks for an RDB base or preamble.
func isRDB(f File, size int64) bool {
	if size < 5 {
		return false
	}
	var sig [5]byte
	if _, err := f.ReadAt(sig[:], 0); err != nil {
		return false
	}
	return string(sig[:]) == "REDIS"
}
