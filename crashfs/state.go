package crashfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// session is one mount's undo state. Every change of the backing folder made
// through the mount, and the undo bookkeeping for it, happen under mu, so the
// undo always describes the backing folder exactly.
type session struct {
	fs     *FS
	server *fuse.Server

	mu       sync.Mutex
	dead     bool               // cut or unmounted: refuse every change with EIO
	grave    int                // O_PATH descriptor of the graveyard
	graveSeq int                // last graveyard name handed out
	files    map[fileID]*record // files with (possibly) unsynced data
	dirs     map[fileID]*dirRef // directories named by pending operations
	ops      []*nsOp            // pending namespace operations, oldest first
}

// fileID names an inode of the backing file system.
type fileID struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), uint64(st.Ino)} }

// record is the undo of one file's data. Invariant: every byte of the file
// below durable that is not covered by saved equals the durable content.
type record struct {
	fd      int   // O_RDWR descriptor of the backing inode, ours
	durable int64 // size at the last fsync
	saved   []span
	first   *span // first write since the last fsync that reached past durable
	dead    bool  // dropped from files; a handle caching it must look again
}

// span is data at an offset: durable bytes saved, or a write.
type span struct {
	off  int64
	data []byte
}

func (sp span) end() int64 { return sp.off + int64(len(sp.data)) }

// save copies the durable bytes of [lo, hi) that are not saved yet, so the
// caller may change them.
func (r *record) save(lo, hi int64) error {
	hi = min(hi, r.durable)
	if lo >= hi {
		return nil
	}
	var gaps [][2]int64
	cur := lo
	for _, sp := range r.saved {
		if sp.end() <= cur {
			continue
		}
		if sp.off >= hi {
			break
		}
		if sp.off > cur {
			gaps = append(gaps, [2]int64{cur, sp.off})
		}
		cur = sp.end()
		if cur >= hi {
			break
		}
	}
	if cur < hi {
		gaps = append(gaps, [2]int64{cur, hi})
	}
	for _, g := range gaps {
		buf := make([]byte, g[1]-g[0])
		for done := 0; done < len(buf); {
			n, err := unix.Pread(r.fd, buf[done:], g[0]+int64(done))
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if n == 0 {
				// Cannot happen while the invariant holds: bytes below
				// durable are either saved or still in the file. Zeros
				// are what a short file reads as.
				break
			}
			done += n
		}
		r.saved = append(r.saved, span{g[0], buf})
	}
	if len(gaps) > 0 {
		sort.Slice(r.saved, func(i, j int) bool { return r.saved[i].off < r.saved[j].off })
	}
	return nil
}

// commit makes the file's present content durable.
func (r *record) commit() error {
	var st unix.Stat_t
	if err := unix.Fstat(r.fd, &st); err != nil {
		return err
	}
	r.durable = st.Size
	r.saved = nil
	r.first = nil
	return nil
}

// dirRef is a directory named by pending operations, held open (O_PATH) so
// that an undo finds it wherever later renames have put it, and so that its
// inode number cannot be reused while we hold it.
type dirRef struct {
	id fileID
	fd int
}

type opKind int

const (
	opCreate   opKind = iota // create, mknod, symlink, link: undo removes the name
	opMkdir                  // undo removes the directory and its subtree
	opRemove                 // unlink, rmdir: undo brings the victim back
	opRename                 // undo renames back and brings the victim back
	opExchange               // RENAME_EXCHANGE: undo exchanges again
)

// nsOp is a namespace operation not yet durable.
type nsOp struct {
	kind   opKind
	dir    *dirRef
	name   string
	dir2   *dirRef // the destination of a rename or exchange
	name2  string
	victim string // graveyard name of the entry removed or replaced, or ""

	wait1, wait2 bool // dir, dir2 not fsynced since
	durable      bool
}

type entry struct {
	dir  fileID
	name string
}

func (op *nsOp) entries() []entry {
	e := []entry{{op.dir.id, op.name}}
	if op.dir2 != nil {
		e = append(e, entry{op.dir2.id, op.name2})
	}
	return e
}

// dirOf returns the dirRef of the directory at path.
func (s *session) dirOf(path string) (*dirRef, syscall.Errno) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, errno(err)
	}
	id := idOf(&st)
	if d, ok := s.dirs[id]; ok {
		unix.Close(fd)
		return d, 0
	}
	d := &dirRef{id: id, fd: fd}
	s.dirs[id] = d
	return d, 0
}

// logOp appends a pending operation; a rename within one directory waits
// for that directory alone.
func (s *session) logOp(op *nsOp) {
	op.wait1 = true
	if op.dir2 != nil && op.dir2.id == op.dir.id {
		op.dir2 = op.dir
	}
	op.wait2 = op.dir2 != nil && op.dir2 != op.dir
	s.ops = append(s.ops, op)
	s.fs.nsOps.Add(1)
}

// graveName hands out a fresh name in the graveyard.
func (s *session) graveName() string {
	s.graveSeq++
	return strconv.Itoa(s.graveSeq)
}

// fsyncDir makes durable the pending operations that waited for dir, and
// every earlier one they were built on (sharing a directory entry).
func (s *session) fsyncDir(id fileID) {
	for _, op := range s.ops {
		if op.dir.id == id {
			op.wait1 = false
		}
		if op.dir2 != nil && op.dir2.id == id {
			op.wait2 = false
		}
		if !op.wait1 && !op.wait2 {
			op.durable = true
		}
	}
	forced := map[entry]bool{}
	for i := len(s.ops) - 1; i >= 0; i-- {
		op := s.ops[i]
		if !op.durable {
			for _, e := range op.entries() {
				if forced[e] {
					op.durable = true
					break
				}
			}
		}
		if op.durable {
			for _, e := range op.entries() {
				forced[e] = true
			}
		}
	}
	keep := s.ops[:0]
	for _, op := range s.ops {
		if op.durable {
			s.bury(op)
		} else {
			keep = append(keep, op)
		}
	}
	clear(s.ops[len(keep):])
	s.ops = keep
}

// bury deletes for real the victim of a durable operation.
func (s *session) bury(op *nsOp) {
	if op.victim == "" {
		return
	}
	var st unix.Stat_t
	if err := unix.Fstatat(s.grave, op.victim, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		s.fs.logf("crashfs: graveyard %s: %v", op.victim, err)
		return
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := os.RemoveAll(s.gravePath(op.victim)); err != nil {
			s.fs.logf("crashfs: graveyard %s: %v", op.victim, err)
		}
		return
	}
	if err := unix.Unlinkat(s.grave, op.victim, 0); err != nil {
		s.fs.logf("crashfs: graveyard %s: %v", op.victim, err)
		return
	}
	if st.Nlink <= 1 {
		s.dropRecord(idOf(&st))
	}
}

func (s *session) gravePath(name string) string {
	return filepath.Join(s.fs.backing, GraveyardName, name)
}

func (s *session) dropRecord(id fileID) {
	if r, ok := s.files[id]; ok {
		r.dead = true
		unix.Close(r.fd)
		delete(s.files, id)
	}
}

// recordOf returns the record of the inode open at fd (a descriptor of
// ours), making one if there is none: then the file holds only durable
// data, so its present size is the durable size.
func (s *session) recordOf(fd int) (*record, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	id := idOf(&st)
	if r, ok := s.files[id]; ok {
		return r, nil
	}
	// Our own read-write descriptor: the writer's may be write-only, and
	// its file may have no name any more. /proc reopens the inode itself.
	rfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	r := &record{fd: rfd, durable: st.Size}
	s.files[id] = r
	return r, nil
}

// forget drops a stale record of an inode number that now names a new file.
func (s *session) forget(dirfd int, name string) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		s.dropRecord(idOf(&st))
	}
}

func (s *session) closeFds() {
	for _, r := range s.files {
		r.dead = true
		unix.Close(r.fd)
	}
	for _, d := range s.dirs {
		unix.Close(d.fd)
	}
	s.files, s.dirs = map[fileID]*record{}, map[fileID]*dirRef{}
	if s.grave >= 0 {
		unix.Close(s.grave)
		s.grave = -1
	}
}

// revert turns the backing folder into what the disk kept (the package
// doc's three steps). The mount is gone: nothing else touches the folder.
func (s *session) revert(c Cut) (CutReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rep CutReport
	var errs []error

	// 1. Names, newest first.
	for i := len(s.ops) - 1; i >= 0; i-- {
		op := s.ops[i]
		if gone(op.dir) || (op.dir2 != nil && gone(op.dir2)) {
			s.fs.logf("crashfs: cut: a directory of a pending operation on %q was removed for good; its entries are lost", op.name)
			continue
		}
		if err := s.undo(op); err != nil {
			errs = append(errs, fmt.Errorf("crashfs: undo %v of %q: %w", op.kind, op.name, err))
			continue
		}
		rep.NamesUndone++
		s.fs.logf("crashfs: cut: undid %s", s.describe(op))
	}
	s.ops = nil

	// 2. The graveyard.
	if err := os.RemoveAll(filepath.Join(s.fs.backing, GraveyardName)); err != nil {
		errs = append(errs, fmt.Errorf("crashfs: clear graveyard: %w", err))
	}

	// 3. Data of the files still named, in name order so that a seeded
	// Rand tears the same way every time.
	type named struct {
		name string
		r    *record
	}
	var files []named
	for _, r := range s.files {
		if name, ok := s.nameOf(r.fd); ok {
			files = append(files, named{name, r})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	for _, nf := range files {
		lost, torn, err := nf.r.revert(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("crashfs: revert %s: %w", nf.name, err))
			continue
		}
		if lost == 0 && torn < 0 {
			continue
		}
		rep.Files++
		rep.BytesLost += lost
		if torn >= 0 {
			rep.Torn = append(rep.Torn, nf.name+"@"+strconv.FormatInt(torn, 10))
		}
	}
	return rep, errors.Join(errs...)
}

func gone(d *dirRef) bool {
	var st unix.Stat_t
	return unix.Fstat(d.fd, &st) != nil || st.Nlink == 0
}

// nameOf returns the path, relative to the backing folder, of the inode
// open at fd, or false if it has no name any more.
func (s *session) nameOf(fd int) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || strings.HasSuffix(p, " (deleted)") {
		return "", false
	}
	rel, err := filepath.Rel(s.fs.backing, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

func (s *session) undo(op *nsOp) error {
	switch op.kind {
	case opCreate:
		return unix.Unlinkat(op.dir.fd, op.name, 0)
	case opMkdir:
		return os.RemoveAll(fdPath(op.dir.fd, op.name))
	case opRemove:
		return unix.Renameat(s.grave, op.victim, op.dir.fd, op.name)
	case opRename:
		if err := unix.Renameat(op.dir2.fd, op.name2, op.dir.fd, op.name); err != nil {
			return err
		}
		if op.victim != "" {
			return unix.Renameat(s.grave, op.victim, op.dir2.fd, op.name2)
		}
		return nil
	case opExchange:
		return unix.Renameat2(op.dir.fd, op.name, op.dir2.fd, op.name2, unix.RENAME_EXCHANGE)
	}
	return fmt.Errorf("unknown operation %d", op.kind)
}

// describe names op by its directories' present paths in the folder.
func (s *session) describe(op *nsOp) string {
	d := func(r *dirRef, name string) string {
		if p, ok := dirPath(r); ok {
			if rel, err := filepath.Rel(s.fs.backing, p); err == nil {
				return filepath.Join(rel, name)
			}
		}
		return name
	}
	if op.dir2 != nil {
		return fmt.Sprintf("%v %s -> %s", op.kind, d(op.dir, op.name), d(op.dir2, op.name2))
	}
	return fmt.Sprintf("%v %s", op.kind, d(op.dir, op.name))
}

func dirPath(r *dirRef) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(r.fd))
	return p, err == nil
}

func (k opKind) String() string {
	return [...]string{"create", "mkdir", "remove", "rename", "exchange"}[k]
}

// fdPath is a path that reaches name in the directory open at fd, wherever
// that directory is now.
func fdPath(fd int, name string) string {
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + name
}

// revert puts the file back to its durable content, keeping a torn prefix of
// its first unsynced write if c says so. It returns the bytes lost and the
// file's length after a tear, or -1 if there was none.
func (r *record) revert(c Cut) (lost, torn int64, err error) {
	torn = -1
	var st unix.Stat_t
	if err := unix.Fstat(r.fd, &st); err != nil {
		return 0, -1, err
	}
	if st.Size == r.durable && len(r.saved) == 0 && r.first == nil {
		return 0, -1, nil
	}
	lost = max(0, st.Size-r.durable)
	if err := unix.Ftruncate(r.fd, r.durable); err != nil {
		return 0, -1, err
	}
	for _, sp := range r.saved {
		if err := pwriteAll(r.fd, sp.data, sp.off); err != nil {
			return 0, -1, err
		}
		lost += int64(len(sp.data))
	}
	if c.Torn && r.first != nil {
		start := max(r.first.off, r.durable)
		var part []byte
		if skip := start - r.first.off; skip < int64(len(r.first.data)) {
			part = r.first.data[skip:] // a short write may end below durable
		}
		if len(part) > 0 {
			k := c.Rand.IntN(len(part))
			torn = r.durable
			if k > 0 {
				if err := pwriteAll(r.fd, part[:k], start); err != nil {
					return 0, -1, err
				}
				torn = start + int64(k)
				lost -= int64(k)
			}
		}
	}
	return max(lost, 0), torn, nil
}

func pwriteAll(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}
