package aof

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFolderRewriteWithTheAOFOff: with the AOF off a rewrite writes a new
// base, the manifest names it alone, the old base and incr files go, and
// Load replays the base (BGREWRITEAOF and DEBUG LOADAOF with appendonly
// no, as Redis 7.0).
func TestFolderRewriteWithTheAOFOff(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, FsyncEverysec)
	f := OpenFolder(o)
	if f.HasManifest() {
		t.Fatal("HasManifest on an empty dir")
	}
	if _, err := f.Load(func([][]byte) error { return nil }); !errors.Is(err, ErrNoAOF) {
		t.Fatalf("Load without a manifest = %v, want ErrNoAOF", err)
	}
	// A log of an earlier run: base 1 and incr 1.
	l := mustOpen(t, o)
	p := l.NewProducer()
	p.Append(0, args("SET", "old", "1"))
	p.Submit()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := f.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	r.Append(0, args("SET", "k", "v"))
	r.Append(3, args("SET", "k3", "v3"))
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	m, _ := os.ReadFile(manifestPath(dir))
	if want := "file appendonly.aof.2.base.aof seq 2 type b\n"; string(m) != want {
		t.Fatalf("manifest %q, want %q", m, want)
	}
	if got := strings.Join(dirFiles(t, dir), " "); strings.Contains(got, ".1.") || strings.Contains(got, "temp-") {
		t.Fatalf("old or temp files left: %s", got)
	}
	var got []string
	if _, err := f.Load(func(argv [][]byte) error { got = append(got, cmdString(argv)); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := "SELECT 0|SET k v|SELECT 3|SET k3 v3"; strings.Join(got, "|") != want {
		t.Fatalf("loaded %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestFolderRewriteAbortLeavesTheFolder: an aborted rewrite deletes its
// temp file and changes nothing else.
func TestFolderRewriteAbortLeavesTheFolder(t *testing.T) {
	dir := t.TempDir()
	f := OpenFolder(testOptions(dir, FsyncEverysec))
	r, err := f.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	r.Append(0, args("SET", "k", "v"))
	r.Abort()
	matches, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*"))
	if len(matches) != 0 {
		t.Fatalf("files left after Abort: %v", matches)
	}
}

// TestMkdirDurableSyncsEveryNewParent: each directory MkdirDurable creates
// has its parent fsynced afterwards (a new name is durable only then), and
// a directory that exists costs no fsync.
func TestMkdirDurableSyncsEveryNewParent(t *testing.T) {
	top := t.TempDir()
	fs := newFaultFS()
	dir := filepath.Join(top, "a", "b", "appendonlydir")
	if err := MkdirDurable(fs, dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("%s not created: %v", dir, err)
	}
	if got := strings.Join(fs.ops, ","); got != "syncdir,syncdir,syncdir" {
		t.Fatalf("ops = %q, want three directory fsyncs (b, a, top)", got)
	}
	fs.ops = nil
	if err := MkdirDurable(fs, dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(fs.ops) != 0 {
		t.Fatalf("an existing directory cost %v", fs.ops)
	}
}
