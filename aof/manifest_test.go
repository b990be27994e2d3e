package aof

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestIsParsedAsRedisParsesIt: the accepted forms and the errors,
// with Redis's messages (aofLoadManifestFromFile).
func TestManifestIsParsedAsRedisParsesIt(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    string // re-encoded manifest, or "" with err
		wantErr string
	}{
		{"redis-server's own", "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n",
			"file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n", ""},
		{"comments, keys in any case and order, unknown keys",
			"# a comment\nTYPE b SEQ 2 FILE a.2.base.rdb\nfile a.3.incr.aof seq 3 type i future yes\nfile a.5.incr.aof seq 5 type i\n",
			"file a.2.base.rdb seq 2 type b\nfile a.3.incr.aof seq 3 type i\nfile a.5.incr.aof seq 5 type i\n", ""},
		{"history lines", "file a.1.base.aof seq 1 type b\nfile a.1.incr.aof seq 1 type h\nfile a.2.incr.aof seq 2 type i\n",
			"file a.1.base.aof seq 1 type b\nfile a.1.incr.aof seq 1 type h\nfile a.2.incr.aof seq 2 type i\n", ""},
		{"quoted file name", "file \"my file\\x41.aof\" seq 1 type i\n", "file \"my fileA.aof\" seq 1 type i\n", ""},
		{"empty", "", "", "Found an empty AOF manifest"},
		{"no newline at the end", "file a seq 1 type i", "", "The AOF manifest file contains too long line"},
		{"too long line", "file " + strings.Repeat("a", 1100) + " seq 1 type i\n", "", "too long line"},
		{"blank line", "file a seq 1 type i\n\n", "", "Invalid AOF manifest file format"},
		{"odd token count", "file a seq 1 type\n", "", "Invalid AOF manifest file format"},
		{"missing seq", "file a seq 0 type i\n", "", "Invalid AOF manifest file format"},
		{"a path", "file ../a seq 1 type i\n", "", "File can't be a path, just a filename"},
		{"two bases", "file a seq 1 type b\nfile b seq 2 type b\n", "", "Found duplicate base file information"},
		{"non-monotonic incr", "file a seq 2 type i\nfile b seq 2 type i\n", "", "Found a non-monotonic sequence number"},
		{"unknown type", "file a seq 1 type x\n", "", "Unknown AOF file type"},
		{"unbalanced quote", "file \"a seq 1 type i\n", "", "Invalid AOF manifest file format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest("m", []byte(tc.text))
			if tc.wantErr != "" {
				var me *ManifestError
				if !errors.As(err, &me) || !strings.Contains(me.Reason, tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(m.Encode()); got != tc.want {
				t.Fatalf("encoded\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestOpenCreatesRedisLayout: an empty dir gets the folder redis-server
// creates: an empty base, an incr and the manifest listing both.
func TestOpenCreatesRedisLayout(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, testOptions(dir, FsyncEverysec))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	m, _ := os.ReadFile(manifestPath(dir))
	if want := "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"; string(m) != want {
		t.Fatalf("manifest %q, want %q", m, want)
	}
	for _, f := range []string{"appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof"} {
		if fi, err := os.Stat(filepath.Join(dir, "appendonlydir", f)); err != nil || fi.Size() != 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

// TestOpenMigratesAnOldStyleAOF: a dir/appendonly.aof without a folder
// becomes the folder's base, as Redis 7 upgrades it.
func TestOpenMigratesAnOldStyleAOF(t *testing.T) {
	dir := t.TempDir()
	old := append(appendSelect(nil, 0), appendCommand(nil, args("SET", "old", "1"))...)
	if err := os.WriteFile(filepath.Join(dir, "appendonly.aof"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := loadAll(t, testOptions(dir, FsyncEverysec))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != "SET old 1" {
		t.Fatalf("loaded %q", got)
	}
	m, _ := os.ReadFile(manifestPath(dir))
	if !strings.HasPrefix(string(m), "file appendonly.aof seq 1 type b\n") {
		t.Fatalf("manifest %q", m)
	}
}

// TestOpenFinishesAnInterruptedUpgrade: the manifest names the old file
// as its base but the file is still in dir (a crash between the manifest
// and the move): Open moves it and loads it, as Redis 7 does.
func TestOpenFinishesAnInterruptedUpgrade(t *testing.T) {
	dir := t.TempDir()
	old := appendCommand(nil, args("SET", "old", "1"))
	if err := os.WriteFile(filepath.Join(dir, "appendonly.aof"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "appendonlydir"), 0o755)
	os.WriteFile(manifestPath(dir), []byte("file appendonly.aof seq 1 type b\n"), 0o644)
	got, _, err := loadAll(t, testOptions(dir, FsyncEverysec))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "SET old 1" {
		t.Fatalf("loaded %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "appendonly.aof")); !os.IsNotExist(err) {
		t.Fatalf("the old file is still in dir: %v", err)
	}
	m, _ := os.ReadFile(manifestPath(dir))
	if want := "file appendonly.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"; string(m) != want {
		t.Fatalf("manifest %q, want %q", m, want)
	}
}

// TestOpenErrorsUseRedisWords: the reasons operators grep for lead the
// message, in Redis's words and strerror's.
func TestOpenErrorsUseRedisWords(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "appendonlydir"), 0o755)
	os.WriteFile(manifestPath(dir), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644)
	_, err := Open(testOptions(dir, FsyncEverysec))
	if err == nil || !strings.Contains(err.Error(), "The append log file appendonly.aof.1.incr.aof doesn't exist: No such file or directory") {
		t.Fatalf("Open with a missing file = %v", err)
	}
	long := strings.Repeat("file appendonly.aof.1.base.aof seq 1 type b ", 40) + "\n"
	os.WriteFile(manifestPath(dir), []byte(long), 0o644)
	_, err = Open(testOptions(dir, FsyncEverysec))
	if err == nil || !strings.HasPrefix(err.Error(), "aof: The AOF manifest file contains too long line: ") || len(err.Error()) > 400 {
		t.Fatalf("Open with a long manifest line = %v", err)
	}
}

// TestOpenRemovesHistoryFiles: history entries (left by a rewrite) are
// deleted and dropped from the manifest.
func TestOpenRemovesHistoryFiles(t *testing.T) {
	dir := t.TempDir()
	ad := filepath.Join(dir, "appendonlydir")
	os.MkdirAll(ad, 0o755)
	for _, f := range []string{"appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof", "appendonly.aof.2.base.aof", "appendonly.aof.2.incr.aof"} {
		os.WriteFile(filepath.Join(ad, f), nil, 0o644)
	}
	os.WriteFile(manifestPath(dir), []byte("file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.1.base.aof seq 1 type h\nfile appendonly.aof.1.incr.aof seq 1 type h\nfile appendonly.aof.2.incr.aof seq 2 type i\n"), 0o644)
	l := mustOpen(t, testOptions(dir, FsyncEverysec))
	l.Close()
	if got := dirFiles(t, dir); strings.Contains(strings.Join(got, " "), ".1.") {
		t.Fatalf("history files left: %q", got)
	}
	m, _ := os.ReadFile(manifestPath(dir))
	if want := "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"; string(m) != want {
		t.Fatalf("manifest %q", m)
	}
}

// TestOpenRefusesAManifestThatListsAMissingFile, as Redis does.
func TestOpenRefusesAManifestThatListsAMissingFile(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "appendonlydir"), 0o755)
	os.WriteFile(manifestPath(dir), []byte("file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644)
	if _, err := Open(testOptions(dir, FsyncEverysec)); err == nil || !strings.Contains(err.Error(), "appendonly.aof.1.base.aof") {
		t.Fatalf("Open = %v", err)
	}
}

// A Fresh log (CONFIG SET appendonly yes) is Redis's AOF_WAIT_REWRITE:
// the folder and its manifest stay as an earlier run left them, and the
// records go to temp-appendonly.aof.incr, until a rewrite succeeds. A failed
// rewrite removes the temp incr file and leaves the manifest alone; the
// next starts a new temp incr at its cut; the one that succeeds makes the
// image the next base and its temp incr the next incr, and the old files
// go. Without a folder before, that is base 1 and incr 1, as redis-server.
func TestFreshLogWaitsForItsFirstRewrite(t *testing.T) {
	for _, before := range []bool{false, true} {
		dir := t.TempDir()
		wantOld := ""
		if before { // an earlier run's folder: base 1, incr 1 with "stale"
			l := mustOpen(t, testOptions(dir, FsyncAlways))
			if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
				t.Fatal(err)
			}
			p := l.NewProducer()
			p.Append(0, args("SET", "stale", "1"))
			seq := p.Submit()
			waitFor(t, "the record written", func() bool { return l.Written() >= seq })
			l.Close()
			b, _ := os.ReadFile(manifestPath(dir))
			wantOld = string(b)
		}
		manifest := func() string { b, _ := os.ReadFile(manifestPath(dir)); return string(b) }
		o := testOptions(dir, FsyncAlways)
		o.Fresh = true
		l := mustOpen(t, o)
		if !l.WaitingRewrite() {
			t.Fatal("a Fresh log does not wait for its rewrite")
		}
		submit := func(argv [][]byte) uint64 {
			p := l.NewProducer()
			p.Append(0, argv)
			return p.Submit()
		}
		submit(args("SET", "lost", "1"))
		if m := manifest(); m != wantOld {
			t.Fatalf("manifest after a Fresh Open %q, want %q", m, wantOld)
		}
		// A rewrite that fails: the temp incr goes, the manifest stays.
		r, err := l.StartRewrite()
		if err != nil {
			t.Fatal(err)
		}
		seq := submit(args("SET", "lost", "2"))
		waitFor(t, "the record written", func() bool { return l.Written() >= seq })
		r.Abort()
		if _, err := os.Stat(filepath.Join(dir, "appendonlydir", "temp-appendonly.aof.incr")); err == nil {
			t.Fatal("the failed rewrite left the temp incr file")
		}
		if m := manifest(); m != wantOld || !l.WaitingRewrite() {
			t.Fatalf("after a failed rewrite: manifest %q (want %q), waiting %v", m, wantOld, l.WaitingRewrite())
		}
		// The one that succeeds.
		submit(args("SET", "before", "cut"))
		r, err = l.StartRewrite()
		if err != nil {
			t.Fatal(err)
		}
		seq = submit(args("SET", "after", "cut"))
		r.Append(0, args("SET", "image", "1"))
		if err := r.Finish(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the record written", func() bool { return l.Written() >= seq })
		if l.WaitingRewrite() {
			t.Fatal("still waiting after a rewrite succeeded")
		}
		seq = submit(args("SET", "later", "1"))
		waitFor(t, "the record written", func() bool { return l.Written() >= seq })
		l.Close()
		want := "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
		if before {
			want = "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
		}
		if m := manifest(); m != want {
			t.Fatalf("manifest %q, want %q", m, want)
		}
		if got := strings.Join(dirFiles(t, dir), " "); strings.Contains(got, "temp-") || (before && strings.Contains(got, ".1.")) {
			t.Fatalf("files left: %s", got)
		}
		got, _, err := loadAll(t, testOptions(dir, FsyncEverysec))
		if err != nil {
			t.Fatal(err)
		}
		if j := strings.Join(got, "|"); !strings.Contains(j, "SET image 1|") || !strings.HasSuffix(j, "SET after cut|SET later 1") ||
			strings.Contains(j, "lost") || strings.Contains(j, "before") || strings.Contains(j, "stale") {
			t.Fatalf("loaded %q", got)
		}
		// The next rewrite is an ordinary one.
		l = mustOpen(t, testOptions(dir, FsyncAlways))
		if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		r, err = l.StartRewrite()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Finish(); err != nil {
			t.Fatal(err)
		}
		l.Close()
		want = "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
		if before {
			want = "file appendonly.aof.3.base.aof seq 3 type b\nfile appendonly.aof.3.incr.aof seq 3 type i\n"
		}
		if m := manifest(); m != want {
			t.Fatalf("next rewrite: manifest %q, want %q", m, want)
		}
	}
}
