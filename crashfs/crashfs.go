package crashfs

import (
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// GraveyardName is the folder at the top of the backing folder where removed
// entries wait until their removal is durable. The mount hides it.
const GraveyardName = ".crashfs-graveyard"

// Options configure a mount.
type Options struct {
	Logf func(format string, args ...any) // optional
}

// Cut describes a power loss.
type Cut struct {
	Torn bool       // keep a random-length prefix of each file's first unsynced write
	Rand *rand.Rand // source for Torn (math/rand/v2); nil means a time-seeded one
}

// CutReport says what a power cut dropped.
type CutReport struct {
	Files       int      // files (still named after the cut) whose data was reverted
	BytesLost   int64    // unsynced bytes dropped: beyond the durable size, plus overwrites undone, minus torn prefixes kept
	NamesUndone int      // namespace operations undone
	Torn        []string // "file@offset" of each tear: the file's path in the folder and its length after the cut
}

// Stats count the requests seen through the mount since Mount, across cuts.
type Stats struct {
	Writes       int64 // WRITE requests
	BytesWritten int64 // bytes they wrote
	Fsyncs       int64 // FSYNC of files (fsync and fdatasync)
	DirFsyncs    int64 // FSYNCDIR
	NamespaceOps int64 // creates, mkdirs, renames, unlinks, ... that succeeded
	Cuts         int64 // PowerCut calls
}

// FS is a mounted crashfs.
type FS struct {
	backing    string
	mountpoint string
	opts       Options

	mu sync.Mutex // serializes PowerCut and Unmount
	s  *session   // the current mount, nil once unmounted

	writes, bytesWritten, fsyncs, dirFsyncs, nsOps, cuts atomic.Int64
}

var (
	availOnce sync.Once
	availErr  error
)

// Available reports whether a crashfs can be mounted here (nil), or why not
// (no /dev/fuse, not root and no fusermount, mount refused...). Tests and the
// tool skip with this reason. The answer comes from one trial mount, made
// once per process.
func Available() error {
	availOnce.Do(func() { availErr = probe() })
	return availErr
}

func probe() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("crashfs: needs Linux, this is %s", runtime.GOOS)
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("crashfs: no usable /dev/fuse: %w", err)
	}
	f.Close()
	if os.Geteuid() != 0 {
		if _, err := fusermount(); err != nil {
			return errors.New("crashfs: not root and no fusermount3 or fusermount in PATH")
		}
	}
	dir, err := os.MkdirTemp("", "crashfs-probe-")
	if err != nil {
		return fmt.Errorf("crashfs: %w", err)
	}
	defer os.RemoveAll(dir)
	backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(backing, 0o755); err != nil {
		return fmt.Errorf("crashfs: %w", err)
	}
	if err := os.Mkdir(mnt, 0o755); err != nil {
		return fmt.Errorf("crashfs: %w", err)
	}
	c, err := Mount(backing, mnt, Options{})
	if err != nil {
		return fmt.Errorf("crashfs: mount refused: %w", err)
	}
	if err := c.Unmount(); err != nil {
		return fmt.Errorf("crashfs: unmount of the trial mount: %w", err)
	}
	return nil
}

func fusermount() (string, error) {
	if p, err := exec.LookPath("fusermount3"); err == nil {
		return p, nil
	}
	return exec.LookPath("fusermount")
}

// Mount serves backing (an existing real folder) at mountpoint (an existing
// empty folder). As root it mounts with mount(2) itself; otherwise through
// fusermount. A graveyard left in backing by a crashfs that never unmounted
// is deleted: its entries' removals are taken as done.
func Mount(backing, mountpoint string, opts Options) (*FS, error) {
	b, err := realDir(backing)
	if err != nil {
		return nil, err
	}
	m, err := realDir(mountpoint)
	if err != nil {
		return nil, err
	}
	if within(b, m) || within(m, b) {
		return nil, fmt.Errorf("crashfs: backing %s and mountpoint %s must not contain each other", b, m)
	}
	f := &FS{backing: b, mountpoint: m, opts: opts}
	s, err := f.mount()
	if err != nil {
		return nil, err
	}
	f.s = s
	return f, nil
}

func realDir(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("crashfs: %w", err)
	}
	a, err = filepath.EvalSymlinks(a)
	if err != nil {
		return "", fmt.Errorf("crashfs: %w", err)
	}
	st, err := os.Stat(a)
	if err != nil {
		return "", fmt.Errorf("crashfs: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("crashfs: %s is not a directory", a)
	}
	return a, nil
}

func within(parent, p string) bool {
	return p == parent || strings.HasPrefix(p, parent+string(filepath.Separator))
}

func (f *FS) logf(format string, args ...any) {
	if f.opts.Logf != nil {
		f.opts.Logf(format, args...)
	}
}

// logWriter sends go-fuse's own log lines to Options.Logf.
type logWriter struct{ f *FS }

func (w logWriter) Write(p []byte) (int, error) {
	w.f.logf("crashfs: go-fuse: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// mount makes a fresh graveyard and session and mounts it.
func (f *FS) mount() (*session, error) {
	grave := filepath.Join(f.backing, GraveyardName)
	if err := os.RemoveAll(grave); err != nil {
		return nil, fmt.Errorf("crashfs: clear graveyard: %w", err)
	}
	if err := os.Mkdir(grave, 0o700); err != nil {
		return nil, fmt.Errorf("crashfs: make graveyard: %w", err)
	}
	gfd, err := unix.Open(grave, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("crashfs: open graveyard: %w", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f.backing, &st); err != nil {
		unix.Close(gfd)
		return nil, fmt.Errorf("crashfs: %w", err)
	}
	s := &session{
		fs:    f,
		grave: gfd,
		files: map[fileID]*record{},
		dirs:  map[fileID]*dirRef{},
	}
	root := &fs.LoopbackRoot{Path: f.backing, Dev: uint64(st.Dev)}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, s: s}
	}
	rn := &node{LoopbackNode: fs.LoopbackNode{RootData: root}, s: s}
	root.RootNode = rn

	logger := log.New(io.Discard, "", 0)
	if f.opts.Logf != nil {
		logger = log.New(logWriter{f}, "", 0)
	}
	zero := time.Duration(0)
	o := &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName:      f.backing,
			Name:        "crashfs",
			DirectMount: true,
			// Passthrough would let the kernel write the backing file
			// without asking us; the undo would miss those writes.
			DisabledCapabilities: fuse.CAP_PASSTHROUGH,
			Logger:               logger,
		},
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		Logger:          logger,
	}
	server, err := fs.Mount(f.mountpoint, rn, o)
	if err != nil {
		s.closeFds()
		os.RemoveAll(grave)
		return nil, fmt.Errorf("crashfs: mount %s: %w", f.mountpoint, err)
	}
	s.server = server
	return s, nil
}

// unmount kills s and takes it off the mountpoint. The writers are dead, so
// a plain unmount normally succeeds; if the kernel still says busy (a
// descriptor still open in the mount), the mount is detached lazily and the
// dead session refuses whatever still comes.
func (f *FS) unmount(s *session) error {
	s.mu.Lock()
	s.dead = true
	s.mu.Unlock()
	var err error
	if os.Geteuid() == 0 {
		// The killed writers' last RELEASE requests may still be on
		// their way: a busy mount gets a few short retries.
		for try, delay := 0, 5*time.Millisecond; try < 4; try, delay = try+1, 4*delay {
			if err = syscall.Unmount(f.mountpoint, 0); err != syscall.EBUSY {
				break
			}
			time.Sleep(delay)
		}
		if err == nil {
			waitServer(s.server)
			return nil
		}
		f.logf("crashfs: unmount %s: %v; detaching lazily", f.mountpoint, err)
		err = syscall.Unmount(f.mountpoint, syscall.MNT_DETACH)
	} else {
		if err = s.server.Unmount(); err == nil {
			return nil
		}
		f.logf("crashfs: unmount %s: %v; detaching lazily", f.mountpoint, err)
		var bin string
		if bin, err = fusermount(); err == nil {
			err = exec.Command(bin, "-u", "-z", f.mountpoint).Run()
		}
	}
	if err != nil {
		return fmt.Errorf("crashfs: unmount %s: %w", f.mountpoint, err)
	}
	// Whatever still holds the detached mount gets EIO for every change
	// (s is dead), and a change in flight finished under s.mu before dead
	// was set: nothing reaches the backing folder after this point.
	return nil
}

// waitServer waits for the serve loop of an unmounted server to end, so that
// no request is still being answered; it gives up after a while, since a
// dead session refuses changes anyway.
func waitServer(srv *fuse.Server) {
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// Unmount unmounts cleanly: no power is lost, everything the mount showed is
// kept, and removed entries waiting in the graveyard are deleted.
func (f *FS) Unmount() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.s
	if s == nil {
		return nil
	}
	if err := f.unmount(s); err != nil {
		return err
	}
	f.s = nil
	s.closeFds()
	if err := os.RemoveAll(filepath.Join(f.backing, GraveyardName)); err != nil {
		return fmt.Errorf("crashfs: clear graveyard: %w", err)
	}
	return nil
}

// PowerCut simulates a power loss. Every process writing through the mount
// must already be dead (SIGKILLed). It unmounts, reverts the backing folder to
// what a disk would have kept — every byte written since the file's last
// fsync/fdatasync is lost, every namespace change (create, mkdir, rename,
// unlink, rmdir, link, symlink) not followed by an fsync of its directory is
// undone — optionally keeps a random prefix of the first lost write of one or
// more files (Torn), and mounts again at the same place. The package doc
// states the rules exactly.
func (f *FS) PowerCut(c Cut) (CutReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.s
	if s == nil {
		return CutReport{}, errors.New("crashfs: not mounted")
	}
	f.cuts.Add(1)
	if err := f.unmount(s); err != nil {
		return CutReport{}, err
	}
	f.s = nil
	if c.Torn && c.Rand == nil {
		seed := uint64(time.Now().UnixNano())
		c.Rand = rand.New(rand.NewPCG(seed, seed>>1|1))
	}
	rep, err := s.revert(c)
	s.closeFds()
	if err != nil {
		return rep, err
	}
	ns, err := f.mount()
	if err != nil {
		return rep, err
	}
	f.s = ns
	f.logf("crashfs: power cut: %d files reverted, %d bytes lost, %d names undone, torn %v",
		rep.Files, rep.BytesLost, rep.NamesUndone, rep.Torn)
	return rep, nil
}

// Stats returns the counts of requests seen so far.
func (f *FS) Stats() Stats {
	return Stats{
		Writes:       f.writes.Load(),
		BytesWritten: f.bytesWritten.Load(),
		Fsyncs:       f.fsyncs.Load(),
		DirFsyncs:    f.dirFsyncs.Load(),
		NamespaceOps: f.nsOps.Load(),
		Cuts:         f.cuts.Load(),
	}
}

// Mountpoint returns the absolute path where the folder is served.
func (f *FS) Mountpoint() string { return f.mountpoint }

// Backing returns the absolute path of the backing folder.
func (f *FS) Backing() string { return f.backing }
