package aof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// FS is the file system the log uses. Every operation of the package goes
// through it, so tests can count fsyncs and inject faults. A nil Options.FS
// means the real file system (OSFS).
type FS interface {
	// OpenFile opens a file as os.OpenFile does.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Stat(name string) (os.FileInfo, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	MkdirAll(path string, perm os.FileMode) error
	// SyncDir makes the directory entries of dir (creations, renames,
	// removals) durable.
	SyncDir(dir string) error
}

// File is an open file of an FS.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes the file's data durable: fdatasync(2) on the real file
	// system. It is the only call the log uses to make data durable.
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
}

// OSFS is the real file system.
type OSFS struct{}

type osFile struct {
	*os.File
	fd int
}

// OpenFile implements FS.
func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	// Fd puts the descriptor in blocking mode, which is what a regular file
	// is anyway; the value is cached so Sync does not call Fd again.
	return &osFile{File: f, fd: int(f.Fd())}, nil
}

// Sync is fdatasync(2), as Redis's redis_fsync on Linux: the file's size is
// data for fdatasync, so an append is covered.
func (f *osFile) Sync() error {
	for {
		err := unix.Fdatasync(f.fd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
		return nil
	}
}

// Stat implements FS.
func (OSFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(path string, perm os.FileMode) error { return os.MkdirAll(path, perm) }

// MkdirDurable creates dir and any missing parents, as MkdirAll, and then
// fsyncs the parent of every directory it created, deepest first, so the
// new names survive a power cut: a directory entry is durable only once
// its parent directory is fsynced (POSIX; crashfs's strict rules showed a
// first start's whole appendonlydir undone by a cut without it). A dir
// that exists already costs one stat.
func MkdirDurable(fsys FS, dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	var created []string
	for d := dir; ; {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			break // MkdirAll reports what is wrong
		}
		created = append(created, d)
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return err
	}
	for _, d := range created {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			return fmt.Errorf("fsync of %s after creating %s: %w", filepath.Dir(d), filepath.Base(d), err)
		}
	}
	return nil
}

// SyncDir implements FS.
func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return err
	}
	return nil
}

// Strerror is an error's system reason as C's strerror words it ("No such
// file or directory"), for the log lines operators grep; other errors are
// returned as they are.
func Strerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := errno.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// tempFile is what a background job writes its file through: a file of
// the FS, or a child process's (ChildFile).
type tempFile interface {
	io.Writer
	Sync() error
	Close() error
}

// ChildFile is a background job's temp file written by a child process
// (bgchild.Child): Write streams to it, Sync ends the input and waits for
// the child to have written and fsynced the file, Close stops it.
type ChildFile interface {
	tempFile
	Path() string
	Pid() int
	Done() <-chan struct{} // closed when the child has exited, however
	Died() <-chan struct{} // closed if it exited before its input ended
	Err() error            // why it ended early
}

// StartChild, when set (the server's binary sets it), runs the file side
// of background jobs, a BGSAVE's or a rewrite's, in a child process, as
// Redis's fork child: pattern names the file in dir, with %d for the
// child's pid, and title is the process's name. Only jobs on the OS's file
// system use it.
var StartChild func(dir, pattern, title string) (ChildFile, error)

// openTemp opens a background job's temp file, dir/pattern with the pid
// of whoever writes it: a child (StartChild) when bg, else this process.
func openTemp(fs FS, dir, pattern, title string, bg bool) (tempFile, string, error) {
	if _, real := fs.(OSFS); real && bg && StartChild != nil {
		c, err := StartChild(dir, pattern, title)
		if err != nil {
			return nil, "", err
		}
		return c, c.Path(), nil
	}
	path := filepath.Join(dir, fmt.Sprintf(pattern, os.Getpid()))
	f, err := fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}
