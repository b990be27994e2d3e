package aof

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultFS is the real file system with counters and injected faults on the
// incremental files (names containing ".incr.aof"). Faults are armed by the
// test and consumed by the writer.
type faultFS struct {
	OSFS
	mu         sync.Mutex
	syncs      map[string]int // fdatasync calls that succeeded, by base name
	failWrites int            // fail the next n writes to incr files; <0: all
	partial    bool           // a failing write first writes half its bytes
	failSyncs  int            // fail the next n fsyncs of incr files; <0: all
	failRename bool           // fail renames onto a manifest
	failTruncs int            // fail the next n ftruncates of incr files; <0: all
	err        error          // the injected error
	syncDelay  time.Duration  // sleep in every incr fsync: a slow disk
	ops        []string       // operations on the manifest, in order
}

func newFaultFS() *faultFS {
	return &faultFS{syncs: map[string]int{}, err: fmt.Errorf("injected: %w", errNoSpace)}
}

type faultFile struct {
	File
	fs   *faultFS
	name string
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(name)
	if strings.Contains(base, manifestSuffix) && flag&os.O_CREATE != 0 {
		f.mu.Lock()
		f.ops = append(f.ops, "create "+base)
		f.mu.Unlock()
	}
	return &faultFile{File: file, fs: f, name: base}, nil
}

func (f *faultFS) Rename(oldpath, newpath string) error {
	f.mu.Lock()
	fail := f.failRename && strings.HasSuffix(newpath, manifestSuffix)
	if !fail {
		f.ops = append(f.ops, "rename "+filepath.Base(oldpath)+" "+filepath.Base(newpath))
	}
	f.mu.Unlock()
	if fail {
		return f.err
	}
	return f.OSFS.Rename(oldpath, newpath)
}

func (f *faultFS) SyncDir(dir string) error {
	f.mu.Lock()
	f.ops = append(f.ops, "syncdir")
	f.mu.Unlock()
	return f.OSFS.SyncDir(dir)
}

func (f *faultFile) incr() bool { return strings.Contains(f.name, incrSuffix+aofSuffix) }

func (f *faultFile) Write(p []byte) (int, error) {
	if f.incr() {
		f.fs.mu.Lock()
		fail := f.fs.failWrites != 0
		if f.fs.failWrites > 0 {
			f.fs.failWrites--
		}
		partial, err := f.fs.partial, f.fs.err
		f.fs.mu.Unlock()
		if fail {
			if partial && len(p) > 1 {
				n, _ := f.File.Write(p[:len(p)/2])
				return n, err
			}
			return 0, err
		}
	}
	return f.File.Write(p)
}

func (f *faultFile) Truncate(size int64) error {
	if f.incr() {
		f.fs.mu.Lock()
		fail := f.fs.failTruncs != 0
		if f.fs.failTruncs > 0 {
			f.fs.failTruncs--
		}
		err := f.fs.err
		f.fs.mu.Unlock()
		if fail {
			return err
		}
	}
	return f.File.Truncate(size)
}

func (f *faultFile) Sync() error {
	if f.incr() {
		f.fs.mu.Lock()
		fail := f.fs.failSyncs != 0
		if f.fs.failSyncs > 0 {
			f.fs.failSyncs--
		}
		delay, err := f.fs.syncDelay, f.fs.err
		f.fs.mu.Unlock()
		if delay > 0 {
			time.Sleep(delay)
		}
		if fail {
			return err
		}
	}
	err := f.File.Sync()
	if err == nil {
		f.fs.mu.Lock()
		f.fs.syncs[f.name]++
		if strings.Contains(f.name, manifestSuffix) {
			f.fs.ops = append(f.fs.ops, "fsync "+f.name)
		}
		f.fs.mu.Unlock()
	}
	return err
}

func (f *faultFS) incrSyncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for name, c := range f.syncs {
		if strings.Contains(name, incrSuffix+aofSuffix) {
			n += c
		}
	}
	return n
}

func (f *faultFS) arm(fn func(f *faultFS)) {
	f.mu.Lock()
	fn(f)
	f.mu.Unlock()
}

// testOptions are fast options for a folder in dir.
func testOptions(dir, fsync string) Options {
	return Options{
		Dir: dir, DirName: "appendonlydir", FileName: "appendonly.aof", Fsync: fsync,
		LoadTruncated: true,
		syncEvery:     5 * time.Millisecond,
		retryMin:      time.Millisecond,
		retryMax:      5 * time.Millisecond,
	}
}

func mustOpen(t testing.TB, o Options) *Log {
	t.Helper()
	l, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// args builds an argv from strings.
func args(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// cmdString renders argv as "SET k v".
func cmdString(argv [][]byte) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = string(a)
	}
	return strings.Join(parts, " ")
}

// loadAll opens the folder and loads it, returning the commands as strings.
func loadAll(t testing.TB, o Options) ([]string, LoadStats, error) {
	t.Helper()
	l, err := Open(o)
	if err != nil {
		return nil, LoadStats{}, err
	}
	defer l.Close()
	var got []string
	st, err := l.Load(func(argv [][]byte) error {
		got = append(got, cmdString(argv))
		return nil
	})
	return got, st, err
}

// withDB turns a command stream into "db:cmd" entries, following SELECT,
// starting each Load in db 0, and dropping the SELECTs.
func withDB(cmds []string) []string {
	db := 0
	var out []string
	for _, c := range cmds {
		if strings.HasPrefix(strings.ToUpper(c), "SELECT ") {
			db, _ = strconv.Atoi(c[len("SELECT "):])
			continue
		}
		out = append(out, strconv.Itoa(db)+":"+c)
	}
	return out
}

// waitFor polls cond until it holds or the test times out.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// stripAnnotations removes '#' lines from an AOF, leaving the commands.
func stripAnnotations(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		if b[0] == '#' {
			i := bytes.IndexByte(b, '\n')
			b = b[i+1:]
			continue
		}
		_, used, _, perr := parseCommand(b, nil)
		if perr != nil || used == 0 {
			return append(out, b...)
		}
		out = append(out, b[:used]...)
		b = b[used:]
	}
	return out
}

func incrPath(dir string, seq int) string {
	return filepath.Join(dir, "appendonlydir", "appendonly.aof."+strconv.Itoa(seq)+".incr.aof")
}

func manifestPath(dir string) string {
	return filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")
}

// groupStarts returns the offsets of the group annotations in an incr file.
func groupStarts(t testing.TB, data []byte) []int {
	t.Helper()
	var starts []int
	for p := 0; p < len(data); {
		if !bytes.HasPrefix(data[p:], []byte(groupPrefix)) {
			t.Fatalf("no group at offset %d", p)
		}
		starts = append(starts, p)
		nl := bytes.IndexByte(data[p:], '\n')
		n, _, ok := parseGroupHeader(data[p : p+nl+1])
		if !ok {
			t.Fatalf("bad group header at %d", p)
		}
		p += nl + 1 + int(n)
	}
	return starts
}
