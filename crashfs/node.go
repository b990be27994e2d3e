package crashfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is go-fuse's loopback node with every request that changes the
// backing folder taken over, so that its undo is recorded under the
// session's lock together with the change. Requests that change nothing
// (getattr, readlink, statfs, xattrs) are the loopback's own.
type node struct {
	fs.LoopbackNode
	s *session
}

var (
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeWriter         = (*node)(nil)
	_ fs.NodeWritever       = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeAllocater      = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
	_ fs.NodeTmpfiler       = (*node)(nil)
	_ fs.FileReader         = (*handle)(nil)
	_ fs.FileReleaser       = (*handle)(nil)
	_ fs.FileFlusher        = (*handle)(nil)
	_ fs.FileGetattrer      = (*handle)(nil)
	_ fs.FileStatxer        = (*handle)(nil)
	_ fs.FileLseeker        = (*handle)(nil)
	_ fs.FileReaddirenter   = (*dirHandle)(nil)
	_ fs.FileSeekdirer      = (*dirHandle)(nil)
	_ fs.FileReleasedirer   = (*dirHandle)(nil)
	_ fs.FileFsyncdirer     = (*dirHandle)(nil)
)

// path returns the node's path in the backing folder, or false if the node
// has no name any more (an unlinked file still open).
func (n *node) path() (string, bool) {
	root := n.Root()
	var segs []string
	for p := n.EmbeddedInode(); p != root; {
		name, parent := p.Parent()
		if parent == nil {
			return "", false
		}
		segs = append(segs, name)
		p = parent
	}
	slices.Reverse(segs)
	return filepath.Join(append([]string{n.s.fs.backing}, segs...)...), true
}

// hidden says whether name in n is the graveyard.
func (n *node) hidden(name string) bool { return name == GraveyardName && n.IsRoot() }

// begin takes the session lock for a change and the dirRef of n, the
// directory the change is in. On success the caller must unlock.
func (n *node) begin() (*dirRef, syscall.Errno) {
	p, ok := n.path()
	if !ok {
		return nil, syscall.ENOENT
	}
	n.s.mu.Lock()
	if n.s.dead {
		n.s.mu.Unlock()
		return nil, syscall.EIO
	}
	d, e := n.s.dirOf(p)
	if e != 0 {
		n.s.mu.Unlock()
		return nil, e
	}
	return d, 0
}

// chownCaller gives a new entry to the caller, as the loopback does when
// running as root.
func chownCaller(ctx context.Context, dirfd int, name string) {
	if os.Geteuid() != 0 {
		return
	}
	if c, ok := fuse.FromContext(ctx); ok {
		_ = unix.Fchownat(dirfd, name, int(c.Uid), int(c.Gid), unix.AT_SYMLINK_NOFOLLOW)
	}
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.ENOENT
	}
	return n.LoopbackNode.Lookup(ctx, name, out)
}

// openFlags are the flags the backing file is opened with: the kernel
// gives write offsets itself, so O_APPEND goes; truncation is done by us;
// O_SYNC and O_DSYNC are simulated (the handle's sync), so the backing file
// needs neither, nor O_DIRECT's alignment rules.
func openFlags(flags uint32) int {
	return int(flags)&^(unix.O_APPEND|fuse.FMODE_EXEC|unix.O_TRUNC|unix.O_CREAT|unix.O_EXCL|
		unix.O_DIRECT|unix.O_SYNC|unix.O_DSYNC) | unix.O_CLOEXEC
}

// newHandle wraps a backing descriptor opened for a request with flags.
func newHandle(fd int, flags uint32) *handle {
	return &handle{fd: fd, sync: flags&unix.O_DSYNC != 0} // O_SYNC includes O_DSYNC
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	p, ok := n.path()
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	fd, err := unix.Open(p, openFlags(flags), 0)
	if err != nil {
		return nil, 0, errno(err)
	}
	h := newHandle(fd, flags)
	if flags&unix.O_TRUNC != 0 {
		if e := n.s.truncate(h, 0); e != 0 {
			unix.Close(fd)
			return nil, 0, e
		}
	}
	return h, 0, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if n.hidden(name) {
		return nil, nil, 0, syscall.EPERM
	}
	d, e := n.begin()
	if e != 0 {
		return nil, nil, 0, e
	}
	defer n.s.mu.Unlock()
	fd, err := unix.Openat(d.fd, name, openFlags(flags)|unix.O_CREAT|unix.O_EXCL, mode)
	created := err == nil
	if err == unix.EEXIST && flags&unix.O_EXCL == 0 {
		// The kernel saw no such name, but it exists now: an open.
		fd, err = unix.Openat(d.fd, name, openFlags(flags), 0)
	}
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	h := newHandle(fd, flags)
	if created {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			n.s.dropRecord(idOf(&st)) // a reused inode number
		}
		chownCaller(ctx, d.fd, name)
		n.s.logOp(&nsOp{kind: opCreate, dir: d, name: name})
	} else if flags&unix.O_TRUNC != 0 {
		if e := n.s.truncateLocked(h, 0); e != 0 {
			unix.Close(fd)
			return nil, nil, 0, e
		}
	}
	child, e := n.LoopbackNode.Lookup(ctx, name, out)
	if e != 0 {
		unix.Close(fd)
		return nil, nil, 0, e
	}
	return child, h, 0, 0
}

// made finishes a request that made the entry name in d: log it and look
// the new entry up for the kernel.
func (n *node) made(ctx context.Context, d *dirRef, kind opKind, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.s.logOp(&nsOp{kind: kind, dir: d, name: name})
	return n.LoopbackNode.Lookup(ctx, name, out)
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.makeEntry(ctx, name, opMkdir, out, func(dirfd int) error { return unix.Mkdirat(dirfd, name, mode) })
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.makeEntry(ctx, name, opCreate, out, func(dirfd int) error {
		if err := unix.Mknodat(dirfd, name, mode, int(rdev)); err != nil {
			return err
		}
		n.s.forget(dirfd, name)
		return nil
	})
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.makeEntry(ctx, name, opCreate, out, func(dirfd int) error { return unix.Symlinkat(target, dirfd, name) })
}

// makeEntry is the shape of mkdir(2), mknod(2) and symlink(2): a hidden name
// is taken, the entry is made in the backing directory by mk under the
// state's lock, given to the caller, and logged as a pending namespace
// operation of kind.
func (n *node) makeEntry(ctx context.Context, name string, kind opKind, out *fuse.EntryOut, mk func(dirfd int) error) (*fs.Inode, syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EEXIST
	}
	d, e := n.begin()
	if e != 0 {
		return nil, e
	}
	defer n.s.mu.Unlock()
	if err := mk(d.fd); err != nil {
		return nil, errno(err)
	}
	chownCaller(ctx, d.fd, name)
	return n.made(ctx, d, kind, name, out)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EEXIST
	}
	t, ok := target.(*node)
	if !ok {
		return nil, syscall.EXDEV
	}
	tp, ok := t.path()
	if !ok {
		return nil, syscall.EXDEV // an unnamed file: LINK carries no descriptor
	}
	d, e := n.begin()
	if e != 0 {
		return nil, e
	}
	defer n.s.mu.Unlock()
	if err := unix.Linkat(unix.AT_FDCWD, tp, d.fd, name, 0); err != nil {
		return nil, errno(err)
	}
	return n.made(ctx, d, opCreate, name, out)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.removeEntry(name, false)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.removeEntry(name, true)
}

// removeEntry is unlink(2) (dir false) or rmdir(2) (dir true) of name: the
// type checked as the kernel would, then the entry moved to the graveyard
// by remove, so a cut before the directory's fsync can bring it back.
func (n *node) removeEntry(name string, dir bool) syscall.Errno {
	if n.hidden(name) {
		return syscall.ENOENT
	}
	d, e := n.begin()
	if e != 0 {
		return e
	}
	defer n.s.mu.Unlock()
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return errno(err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	switch {
	case !dir && isDir:
		return syscall.EISDIR
	case dir && !isDir:
		return syscall.ENOTDIR
	case dir:
		if e := emptyDir(d.fd, name); e != 0 {
			return e
		}
	}
	return n.s.remove(d, name)
}

// emptyDir answers ENOTEMPTY unless the directory name in dirfd is empty.
func emptyDir(dirfd int, name string) syscall.Errno {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return errno(err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, _ := f.Readdirnames(1)
	if len(names) > 0 {
		return syscall.ENOTEMPTY
	}
	return 0
}

// remove moves name in d to the graveyard and logs the removal.
func (s *session) remove(d *dirRef, name string) syscall.Errno {
	g := s.graveName()
	if err := unix.Renameat(d.fd, name, s.grave, g); err != nil {
		return errno(err)
	}
	s.logOp(&nsOp{kind: opRemove, dir: d, name: name, victim: g})
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if n.hidden(name) || np.hidden(newName) {
		return syscall.EPERM
	}
	p2, ok := np.path()
	if !ok {
		return syscall.ENOENT
	}
	d1, e := n.begin()
	if e != 0 {
		return e
	}
	defer n.s.mu.Unlock()
	d2, e := n.s.dirOf(p2)
	if e != 0 {
		return e
	}
	op := &nsOp{kind: opRename, dir: d1, name: name, dir2: d2, name2: newName}
	switch {
	case flags&unix.RENAME_WHITEOUT != 0:
		return syscall.EINVAL
	case flags&unix.RENAME_EXCHANGE != 0:
		if err := unix.Renameat2(d1.fd, name, d2.fd, newName, unix.RENAME_EXCHANGE); err != nil {
			return errno(err)
		}
		op.kind = opExchange
	case flags&unix.RENAME_NOREPLACE != 0:
		if err := unix.Renameat2(d1.fd, name, d2.fd, newName, unix.RENAME_NOREPLACE); err != nil {
			return errno(err)
		}
	default:
		var src, dst unix.Stat_t
		if err := unix.Fstatat(d1.fd, name, &src, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return errno(err)
		}
		err := unix.Fstatat(d2.fd, newName, &dst, unix.AT_SYMLINK_NOFOLLOW)
		if err != nil && err != unix.ENOENT {
			return errno(err)
		}
		if err == nil {
			if idOf(&src) == idOf(&dst) {
				return 0 // two links to one file: rename(2) does nothing
			}
			srcDir := src.Mode&unix.S_IFMT == unix.S_IFDIR
			dstDir := dst.Mode&unix.S_IFMT == unix.S_IFDIR
			switch {
			case dstDir && !srcDir:
				return syscall.EISDIR
			case srcDir && !dstDir:
				return syscall.ENOTDIR
			case dstDir:
				if e := emptyDir(d2.fd, newName); e != 0 {
					return e
				}
			}
			// The entry replaced must come back if the rename is undone.
			op.victim = n.s.graveName()
			if err := unix.Renameat(d2.fd, newName, n.s.grave, op.victim); err != nil {
				return errno(err)
			}
		}
		if err := unix.Renameat(d1.fd, name, d2.fd, newName); err != nil {
			if op.victim != "" {
				_ = unix.Renameat(n.s.grave, op.victim, d2.fd, newName)
			}
			return errno(err)
		}
	}
	n.s.logOp(op)
	return 0
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	p, ok := n.path()
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, errno(err)
	}
	ds, e := fs.NewLoopbackDirStreamFd(fd)
	if e != 0 {
		unix.Close(fd)
		return nil, 0, e
	}
	return &dirHandle{ds: ds, fd: fd, s: n.s, hideGrave: n.IsRoot()}, 0, 0
}

func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	return n.Writev(ctx, f, [][]byte{data}, off)
}

func (n *node) Writev(ctx context.Context, f fs.FileHandle, data [][]byte, off int64) (uint32, syscall.Errno) {
	h, ok := f.(*handle)
	if !ok {
		return 0, syscall.EBADF
	}
	return n.s.write(h, data, off)
}

func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	h, ok := f.(*handle)
	if !ok {
		return syscall.EBADF
	}
	return n.s.fsync(h)
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	h, _ := f.(*handle)
	p, named := n.path()
	if h == nil && !named {
		return syscall.ENOENT
	}
	if sz, ok := in.GetSize(); ok {
		th := h
		if th == nil {
			fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			if err != nil {
				return errno(err)
			}
			defer unix.Close(fd)
			th = &handle{fd: fd}
		}
		if e := n.s.truncate(th, int64(sz)); e != 0 {
			return e
		}
	}
	if m, ok := in.GetMode(); ok {
		var err error
		if h != nil {
			err = unix.Fchmod(h.fd, m)
		} else {
			err = unix.Fchmodat(unix.AT_FDCWD, p, m, 0)
		}
		if err != nil {
			return errno(err)
		}
	}
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if uok || gok {
		u, g := -1, -1
		if uok {
			u = int(uid)
		}
		if gok {
			g = int(gid)
		}
		var err error
		if h != nil {
			err = unix.Fchown(h.fd, u, g)
		} else {
			err = unix.Fchownat(unix.AT_FDCWD, p, u, g, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil {
			return errno(err)
		}
	}
	mtime, mok := in.GetMTime()
	atime, aok := in.GetATime()
	if mok || aok {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if aok {
			ts[0] = unix.NsecToTimespec(atime.UnixNano())
		}
		if mok {
			ts[1] = unix.NsecToTimespec(mtime.UnixNano())
		}
		var err error
		if h != nil {
			err = unix.UtimesNanoAt(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(h.fd), ts, 0)
		} else {
			err = unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil {
			return errno(err)
		}
	}
	var st syscall.Stat_t
	var err error
	if h != nil {
		err = syscall.Fstat(h.fd, &st)
	} else {
		err = syscall.Lstat(p, &st)
	}
	if err != nil {
		return errno(err)
	}
	out.FromStat(&st)
	return 0
}

func (n *node) Allocate(ctx context.Context, f fs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	h, ok := f.(*handle)
	if !ok {
		return syscall.EBADF
	}
	return n.s.allocate(h, int64(off), int64(size), mode)
}

// CopyFileRange is refused with ENOSYS: the kernel then copies with reads
// and writes, which the undo sees.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, len uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

// Tmpfile is refused: an O_TMPFILE file cannot be linked through go-fuse's
// loopback anyway, and programs fall back to a named temp file.
func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// handle is an open file: a descriptor of the backing file, with the record
// of its inode remembered after the first change.
type handle struct {
	fd   int
	sync bool // opened O_SYNC or O_DSYNC: every write is durable when it returns
	rec  *record
}

func (h *handle) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return fuse.ReadResultFd(uintptr(h.fd), off, len(buf)), 0
}

func (h *handle) Release(ctx context.Context) syscall.Errno { return errno(unix.Close(h.fd)) }

// Flush makes nothing durable: close(2) is no sync.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Fstat(h.fd, &st); err != nil {
		return errno(err)
	}
	out.FromStat(&st)
	return 0
}

func (h *handle) Statx(ctx context.Context, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	var st unix.Statx_t
	if err := unix.Statx(h.fd, "", int(flags)|unix.AT_EMPTY_PATH, int(mask), &st); err != nil {
		return errno(err)
	}
	out.FromStatx(&st)
	return 0
}

func (h *handle) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	n, err := unix.Seek(h.fd, int64(off), int(whence))
	return uint64(n), errno(err)
}

// dirHandle is an open directory: the loopback's stream, without the
// graveyard at the top, and with FSYNCDIR.
type dirHandle struct {
	ds        fs.DirStream
	fd        int
	s         *session
	hideGrave bool
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	r := d.ds.(fs.FileReaddirenter)
	for {
		de, e := r.Readdirent(ctx)
		if e != 0 || de == nil || !d.hideGrave || de.Name != GraveyardName {
			return de, e
		}
	}
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.ds.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	d.ds.(fs.FileReleasedirer).Releasedir(ctx, flags)
}

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return errno(err)
	}
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	if d.s.dead {
		return syscall.EIO
	}
	d.s.fs.dirFsyncs.Add(1)
	d.s.fsyncDir(idOf(&st))
	return 0
}

// handleRecord is recordOf for an open handle, remembered in it.
func (s *session) handleRecord(h *handle) (*record, error) {
	if h.rec != nil && !h.rec.dead {
		return h.rec, nil
	}
	r, err := s.recordOf(h.fd)
	if err != nil {
		return nil, err
	}
	h.rec = r
	return r, nil
}

// write writes data at off, saving first what it overwrites of the durable
// content and, if it is the first write past the durable size since the
// last fsync, a copy of it for a tear.
func (s *session) write(h *handle, data [][]byte, off int64) (uint32, syscall.Errno) {
	var total int64
	for _, b := range data {
		total += int64(len(b))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return 0, syscall.EIO
	}
	r, err := s.handleRecord(h)
	if err != nil {
		return 0, errno(err)
	}
	if err := r.save(off, off+total); err != nil {
		return 0, errno(err)
	}
	first := r.first == nil && off+total > r.durable
	n, err := unix.Pwritev(h.fd, data, off)
	if n > 0 {
		s.fs.writes.Add(1)
		s.fs.bytesWritten.Add(int64(n))
		if first {
			buf := make([]byte, 0, n)
			for _, b := range data {
				buf = append(buf, b[:min(len(b), n-len(buf))]...)
			}
			r.first = &span{off: off, data: buf}
		}
		if h.sync {
			if err := r.commit(); err != nil {
				return 0, errno(err)
			}
		}
	}
	if err != nil && n <= 0 {
		return 0, errno(err)
	}
	return uint32(n), 0
}

// fsync makes the file's present content durable. The backing file is not
// synced: the simulated disk is the record.
func (s *session) fsync(h *handle) syscall.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(h.fd, &st); err != nil {
		return errno(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return syscall.EIO
	}
	s.fs.fsyncs.Add(1)
	if r, ok := s.files[idOf(&st)]; ok {
		if err := r.commit(); err != nil {
			return errno(err)
		}
	}
	return 0
}

// truncate sets the size of h's file, saving first the durable bytes a
// shrink drops.
func (s *session) truncate(h *handle, size int64) syscall.Errno {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return syscall.EIO
	}
	return s.truncateLocked(h, size)
}

func (s *session) truncateLocked(h *handle, size int64) syscall.Errno {
	r, err := s.handleRecord(h)
	if err != nil {
		return errno(err)
	}
	if err := r.save(size, r.durable); err != nil {
		return errno(err)
	}
	return errno(unix.Ftruncate(r.fd, size))
}

// allocate is fallocate(2), saving first the durable bytes the mode changes:
// plain allocation changes no byte; punching or zeroing changes its range;
// collapsing or inserting shifts everything after off.
func (s *session) allocate(h *handle, off, size int64, mode uint32) syscall.Errno {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return syscall.EIO
	}
	r, err := s.handleRecord(h)
	if err != nil {
		return errno(err)
	}
	switch mode &^ unix.FALLOC_FL_KEEP_SIZE {
	case 0:
	case unix.FALLOC_FL_PUNCH_HOLE, unix.FALLOC_FL_ZERO_RANGE:
		err = r.save(off, off+size)
	default:
		err = r.save(off, r.durable)
	}
	if err != nil {
		return errno(err)
	}
	return errno(unix.Fallocate(h.fd, mode, off, size))
}
