package crashfs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mountT mounts a crashfs over a fresh backing folder for one test and
// unmounts it when the test ends; it skips the test where FUSE cannot mount.
func mountT(t *testing.T) *FS {
	t.Helper()
	if err := Available(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Mount(backing, mnt, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return f
}

func (f *FS) p(name string) string { return filepath.Join(f.mountpoint, name) }

func cut(t *testing.T, f *FS, c Cut) CutReport {
	t.Helper()
	rep, err := f.PowerCut(c)
	if err != nil {
		t.Fatalf("PowerCut: %v", err)
	}
	t.Logf("cut: %+v", rep)
	return rep
}

// create writes data to a new file name through the mount; with sync it
// fsyncs the file.
func create(t *testing.T, path string, data string, sync bool) {
	t.Helper()
	fl, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if _, err := fl.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := fl.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// appendTo appends data to path; with datasync it calls fdatasync.
func appendTo(t *testing.T, path, data string, datasync bool) {
	t.Helper()
	fl, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if _, err := fl.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if datasync {
		if err := unix.Fdatasync(int(fl.Fd())); err != nil {
			t.Fatal(err)
		}
	}
}

func syncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

func wantContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if string(got) != want {
		t.Fatalf("%s = %q, want %q", path, got, want)
	}
}

func wantMissing(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s: got %v, want it gone", path, err)
	}
}

// durable makes a file with content that a cut keeps.
func durable(t *testing.T, f *FS, name, data string) string {
	t.Helper()
	p := f.p(name)
	create(t, p, data, true)
	syncDir(t, filepath.Dir(p))
	return p
}

func TestUnsyncedAppendIsLostSyncedKept(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "log", "synced|")
	appendTo(t, p, "lost", false)
	wantContent(t, p, "synced|lost") // the live view has it
	rep := cut(t, f, Cut{})
	wantContent(t, p, "synced|")
	if rep.Files != 1 || rep.BytesLost != 4 {
		t.Errorf("report %+v, want 1 file, 4 bytes lost", rep)
	}

	appendTo(t, p, "kept", true) // fdatasync
	appendTo(t, p, "+lost", false)
	cut(t, f, Cut{})
	wantContent(t, p, "synced|kept")
}

func TestOverwriteOfSyncedBytesComesBack(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "data", "AAAAAAAAAA")
	fl, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fl.WriteAt([]byte("BBB"), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := fl.WriteAt([]byte("CCCCCC"), 6); err != nil { // over the end too
		t.Fatal(err)
	}
	fl.Close()
	wantContent(t, p, "AABBBACCCCCC")
	cut(t, f, Cut{})
	wantContent(t, p, "AAAAAAAAAA")

	// A truncate, an O_TRUNC open and a rewrite are undone the same way.
	if err := os.Truncate(p, 3); err != nil {
		t.Fatal(err)
	}
	cut(t, f, Cut{})
	wantContent(t, p, "AAAAAAAAAA")
	if err := os.WriteFile(p, []byte("new"), 0o644); err != nil { // O_TRUNC
		t.Fatal(err)
	}
	wantContent(t, p, "new")
	cut(t, f, Cut{})
	wantContent(t, p, "AAAAAAAAAA")
}

func TestCreatedFileNeedsDirFsync(t *testing.T) {
	f := mountT(t)
	create(t, f.p("a"), "fsynced data", true)
	rep := cut(t, f, Cut{})
	wantMissing(t, f.p("a"))
	if rep.NamesUndone != 1 {
		t.Errorf("NamesUndone = %d, want 1", rep.NamesUndone)
	}

	create(t, f.p("b"), "fsynced data", true)
	syncDir(t, f.mountpoint)
	cut(t, f, Cut{})
	wantContent(t, f.p("b"), "fsynced data")

	// The name is durable but the data was never fsynced: an empty file.
	create(t, f.p("c"), "unsynced data", false)
	syncDir(t, f.mountpoint)
	cut(t, f, Cut{})
	wantContent(t, f.p("c"), "")
}

// TestManifestSwap is the atomic replace of a manifest: write a temp file,
// fsync it, rename it over the manifest, fsync the directory.
func TestManifestSwap(t *testing.T) {
	for _, dirSync := range []bool{false, true} {
		t.Run(map[bool]string{false: "without dir fsync", true: "with dir fsync"}[dirSync], func(t *testing.T) {
			f := mountT(t)
			m := durable(t, f, "manifest", "old manifest")
			tmp := f.p("temp-manifest")
			create(t, tmp, "new manifest", true)
			if err := os.Rename(tmp, m); err != nil {
				t.Fatal(err)
			}
			if dirSync {
				syncDir(t, f.mountpoint)
			}
			wantContent(t, m, "new manifest")
			cut(t, f, Cut{})
			if dirSync {
				wantContent(t, m, "new manifest")
			} else {
				// The rename and the temp file's creation are both undone.
				wantContent(t, m, "old manifest")
			}
			wantMissing(t, tmp)
			ents, err := os.ReadDir(f.backing)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if want := []string{GraveyardName, "manifest"}; !slices.Equal(names, want) {
				t.Errorf("backing folder holds %v, want %v", names, want)
			}
		})
	}
}

func TestUnlinkNeedsDirFsync(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "f", "durable")
	appendTo(t, p, " and not", false)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	wantMissing(t, p)
	cut(t, f, Cut{})
	wantContent(t, p, "durable")

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	syncDir(t, f.mountpoint)
	cut(t, f, Cut{})
	wantMissing(t, p)
	if ents, _ := os.ReadDir(filepath.Join(f.backing, GraveyardName)); len(ents) != 0 {
		t.Errorf("graveyard not empty after a durable unlink: %v", ents)
	}
}

func TestTornAppendKeepsAPrefix(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "log", strings.Repeat("d", 100))
	rng := rand.New(rand.NewPCG(1, 2))
	tail := make([]byte, 1000)
	for i := range tail {
		tail[i] = byte('a' + rng.IntN(26))
	}
	kept := map[int]bool{}
	for range 8 {
		appendTo(t, p, string(tail), false)
		appendTo(t, p, "second write, never kept", false)
		rep := cut(t, f, Cut{Torn: true, Rand: rng})
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		k := len(got) - 100
		if k < 0 || k >= 1000 {
			t.Fatalf("file is %d bytes after a torn cut, want 100+k with 0<=k<1000", len(got))
		}
		want := strings.Repeat("d", 100) + string(tail[:k])
		if string(got) != want {
			t.Fatalf("torn file is not the durable bytes and a prefix of the write")
		}
		if wantTorn := []string{"log@" + strconv.Itoa(len(got))}; !slices.Equal(rep.Torn, wantTorn) {
			t.Errorf("Torn = %v, want %v", rep.Torn, wantTorn)
		}
		if err := os.Truncate(p, 100); err != nil {
			t.Fatal(err)
		}
		if fl, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			fl.Sync()
			fl.Close()
		}
		kept[k] = true
	}
	if len(kept) < 2 {
		t.Errorf("8 torn cuts kept the same length each time: %v", kept)
	}
}

// TestCrossDirRenameNeedsBothDirs: a rename from one directory to another
// is durable once both have been fsynced.
func TestCrossDirRenameNeedsBothDirs(t *testing.T) {
	f := mountT(t)
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(f.p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	syncDir(t, f.mountpoint)
	create(t, f.p("a/x"), "x", true)
	syncDir(t, f.p("a"))
	if err := os.Rename(f.p("a/x"), f.p("b/x")); err != nil {
		t.Fatal(err)
	}
	syncDir(t, f.p("b")) // the destination alone
	cut(t, f, Cut{})
	wantContent(t, f.p("a/x"), "x")
	wantMissing(t, f.p("b/x"))

	if err := os.Rename(f.p("a/x"), f.p("b/x")); err != nil {
		t.Fatal(err)
	}
	syncDir(t, f.p("a"))
	syncDir(t, f.p("b"))
	cut(t, f, Cut{})
	wantMissing(t, f.p("a/x"))
	wantContent(t, f.p("b/x"), "x")
}

// TestNewDirNeedsParentFsync: fsyncing a new directory and its file does not
// make the directory's own name durable.
func TestNewDirNeedsParentFsync(t *testing.T) {
	f := mountT(t)
	if err := os.Mkdir(f.p("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	create(t, f.p("d/f"), "data", true)
	syncDir(t, f.p("d"))
	cut(t, f, Cut{})
	wantMissing(t, f.p("d"))

	if err := os.Mkdir(f.p("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	syncDir(t, f.mountpoint)
	create(t, f.p("d/f"), "data", true)
	syncDir(t, f.p("d"))
	cut(t, f, Cut{})
	wantContent(t, f.p("d/f"), "data")

	// rmdir of the directory, once emptied, is undone too.
	if err := os.Remove(f.p("d/f")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.p("d")); err != nil {
		t.Fatal(err)
	}
	cut(t, f, Cut{})
	wantContent(t, f.p("d/f"), "data")
}

// TestLaterOpOnSameNameCommitsEarlier: a durable change of a name commits
// the pending changes of that name before it, so the undo never meets an
// occupied name.
func TestLaterOpOnSameNameCommitsEarlier(t *testing.T) {
	f := mountT(t)
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(f.p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	syncDir(t, f.mountpoint)
	durable(t, f, "a/x", "old")
	if err := os.Rename(f.p("a/x"), f.p("b/x")); err != nil {
		t.Fatal(err)
	}
	create(t, f.p("a/x"), "new", true)
	syncDir(t, f.p("a")) // commits the create of a/x, hence the rename out of a
	cut(t, f, Cut{})
	wantContent(t, f.p("a/x"), "new")
	wantContent(t, f.p("b/x"), "old")
}

func TestGraveyardIsHidden(t *testing.T) {
	f := mountT(t)
	durable(t, f, "f", "x")
	if err := os.Remove(f.p("f")); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(f.mountpoint)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("mount lists %v, want nothing", ents)
	}
	if _, err := os.Stat(f.p(GraveyardName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of the graveyard through the mount: %v, want ENOENT", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(f.backing, GraveyardName)); len(ents) != 1 {
		t.Errorf("graveyard holds %v, want the unlinked file", ents)
	}
}

func TestStatsCount(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "f", "x")
	appendTo(t, p, "yy", true)
	st := f.Stats()
	if st.Writes != 2 || st.BytesWritten != 3 || st.Fsyncs != 2 || st.DirFsyncs != 1 || st.NamespaceOps != 1 {
		t.Errorf("Stats = %+v, want 2 writes of 3 bytes, 2 fsyncs, 1 dir fsync, 1 namespace op", st)
	}
}

// BenchmarkAppend compares small appends, each followed by fdatasync or
// not, through the mount and on the backing folder directly. Through the
// mount an fdatasync is bookkeeping only (the backing file is not synced), so
// "fdatasync" is faster there than on the disk: the point is the cost of a
// write, and that an append costs no copy.
func BenchmarkAppend(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	rec := bytes.Repeat([]byte("x"), 64)
	run := func(b *testing.B, dir string, sync bool) {
		fl, err := os.OpenFile(filepath.Join(dir, "log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		defer fl.Close()
		b.ResetTimer()
		for range b.N {
			if _, err := fl.Write(rec); err != nil {
				b.Fatal(err)
			}
			if sync {
				if err := unix.Fdatasync(int(fl.Fd())); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	dir := b.TempDir()
	backing, mnt, direct := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt"), filepath.Join(dir, "direct")
	for _, d := range []string{backing, mnt, direct} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	f, err := Mount(backing, mnt, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Unmount()
	for _, sync := range []bool{false, true} {
		name := map[bool]string{false: "write", true: "write+fdatasync"}[sync]
		b.Run(name+"/direct", func(b *testing.B) { run(b, direct, sync) })
		b.Run(name+"/crashfs", func(b *testing.B) { run(b, mnt, sync) })
	}
}

// TestOSyncWriteIsDurable: a write through an O_DSYNC descriptor is durable
// when it returns, with no fsync.
func TestOSyncWriteIsDurable(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "f", "a")
	fl, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|unix.O_DSYNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fl.WriteString("b"); err != nil {
		t.Fatal(err)
	}
	fl.Close()
	appendTo(t, p, "c", false)
	cut(t, f, Cut{})
	wantContent(t, p, "ab")
}

// TestCutWithDescriptorStillOpen: a descriptor left open in the mount does
// not hang the cut (the mount is detached), and writes through it after
// the cut fail instead of reaching the disk.
func TestCutWithDescriptorStillOpen(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "f", "durable")
	fl, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if _, err := fl.WriteString("+lost"); err != nil {
		t.Fatal(err)
	}
	cut(t, f, Cut{})
	if _, err := fl.WriteString("+after the cut"); err == nil {
		t.Error("a write through a descriptor of the cut mount succeeded")
	}
	wantContent(t, p, "durable")
	wantContent(t, filepath.Join(f.backing, "f"), "durable")
}

// TestHardLinkSharesData: data is per inode, names are per directory entry.
func TestHardLinkSharesData(t *testing.T) {
	f := mountT(t)
	p := durable(t, f, "f", "one")
	if err := os.Link(p, f.p("g")); err != nil {
		t.Fatal(err)
	}
	appendTo(t, f.p("g"), "+two", true)
	cut(t, f, Cut{}) // the link was never made durable
	wantMissing(t, f.p("g"))
	wantContent(t, p, "one+two")
}

func TestPunchHoleOfSyncedBytesComesBack(t *testing.T) {
	f := mountT(t)
	data := strings.Repeat("0123456789abcdef", 1024) // 16 KiB
	p := durable(t, f, "f", data)
	fl, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Fallocate(int(fl.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 4096, 8192)
	fl.Close()
	if err != nil {
		t.Skipf("fallocate punch-hole: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) == data {
		t.Fatal("the punch changed nothing")
	}
	cut(t, f, Cut{})
	wantContent(t, p, data)
}

func TestRenameExchangeAndDirectoryReplace(t *testing.T) {
	f := mountT(t)
	durable(t, f, "a", "A")
	durable(t, f, "b", "B")
	if err := unix.Renameat2(unix.AT_FDCWD, f.p("a"), unix.AT_FDCWD, f.p("b"), unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f.p("a"), "B")
	cut(t, f, Cut{})
	wantContent(t, f.p("a"), "A")
	wantContent(t, f.p("b"), "B")

	// A directory renamed over an empty one; then a symlink made.
	for _, d := range []string{"d1", "d2"} {
		if err := os.Mkdir(f.p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	create(t, f.p("d1/x"), "x", true)
	syncDir(t, f.p("d1"))
	syncDir(t, f.mountpoint)
	// unix.Rename: os.Rename refuses any existing directory as target.
	if err := unix.Rename(f.p("d2"), f.p("d1")); err != unix.ENOTEMPTY {
		t.Fatalf("rename over a non-empty directory: %v, want ENOTEMPTY", err)
	}
	if err := unix.Rename(f.p("d1"), f.p("d2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d2/x", f.p("link")); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f.p("link"), "x")
	cut(t, f, Cut{})
	wantContent(t, f.p("d1/x"), "x")
	wantMissing(t, f.p("link"))
	if st, err := os.Stat(f.p("d2")); err != nil || !st.IsDir() {
		t.Fatalf("the replaced empty directory d2 did not come back: %v", err)
	}
}
