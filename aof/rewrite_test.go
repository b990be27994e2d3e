package aof

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// dataset applies SET and DEL commands (with SELECT) to db → key → value.
type dataset map[int]map[string]string

func (d dataset) apply(cmds []string) {
	db := 0
	for _, c := range cmds {
		f := strings.SplitN(c, " ", 3)
		switch f[0] {
		case "SELECT":
			fmt.Sscan(f[1], &db)
		case "SET":
			if d[db] == nil {
				d[db] = map[string]string{}
			}
			d[db][f[1]] = f[2]
		case "DEL":
			delete(d[db], f[1])
		}
	}
}

func (d dataset) String() string {
	var lines []string
	for db, kv := range d {
		for k, v := range kv {
			lines = append(lines, fmt.Sprintf("%d:%s=%s", db, k, v))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, " ")
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "appendonlydir"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestRewriteReplacesBaseAndIncrAtomically: after Finish the folder holds
// the new base and the new incr only, the manifest says so and was replaced
// by temp file, fsync, rename and directory fsync; loading gives the image
// followed by the commands submitted after the cut, and Redis's tools
// accept the folder.
func TestRewriteReplacesBaseAndIncrAtomically(t *testing.T) {
	dir := t.TempDir()
	ffs := newFaultFS()
	o := testOptions(dir, FsyncAlways)
	o.FS = ffs
	l := mustOpen(t, o)
	if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	p := l.NewProducer()
	live := dataset{}
	var before []string
	for i := 0; i < 30; i++ {
		db := i % 3
		c := []string{"SELECT " + fmt.Sprint(db), fmt.Sprintf("SET k%d v%d", i%10, i)}
		p.Append(db, args("SET", fmt.Sprintf("k%d", i%10), fmt.Sprintf("v%d", i)))
		live.apply(c)
		before = append(before, c...)
		if i%7 == 0 {
			p.Submit()
		}
	}
	p.Append(0, args("DEL", "k0"))
	live.apply([]string{"SELECT 0", "DEL k0"})
	last := p.Submit()
	// Appended before the cut but submitted after it: belongs to the new incr.
	p.Append(1, args("SET", "late", "1"))

	r, err := l.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	if r.Cut() != last {
		t.Fatalf("Cut() = %d, want the last submitted sequence %d", r.Cut(), last)
	}
	if _, err := l.StartRewrite(); !errors.Is(err, ErrRewriteInProgress) {
		t.Fatalf("second StartRewrite: %v", err)
	}
	late := p.Submit()
	if late <= r.Cut() {
		t.Fatalf("batch submitted after StartRewrite got seq %d <= cut %d", late, r.Cut())
	}
	var after []string = []string{"SELECT 1", "SET late 1"}

	// The image, from two goroutines: one BaseWriter each, plus Append.
	image := dataset{}
	for db, kv := range live {
		image[db] = map[string]string{}
		for k, v := range kv {
			image[db][k] = v
		}
	}
	// Parts 0 and 1 use their own BaseWriter, part 2 the shared Append.
	var wg sync.WaitGroup
	for part := 0; part < 3; part++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bw := r.NewWriter()
			for db, kv := range image {
				for k, v := range kv {
					if (db+int(k[len(k)-1]))%3 != part {
						continue
					}
					if part == 2 {
						r.Append(db, args("SET", k, v))
					} else {
						bw.Append(db, args("SET", k, v))
					}
				}
			}
			bw.Flush()
		}()
	}
	wg.Wait()
	for i := 0; i < 3; i++ {
		p.Append(2, args("SET", fmt.Sprintf("during%d", i), "x"))
		p.Submit()
		after = append(after, "SELECT 2", fmt.Sprintf("SET during%d x", i))
	}
	opsBefore := len(ffs.ops)
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if got := ffs.ops[opsBefore:]; !slices.Equal(got, []string{
		fmt.Sprintf("rename temp-rewriteaof-bg-%d.aof appendonly.aof.2.base.aof", os.Getpid()),
		"create temp-appendonly.aof.manifest",
		"fsync temp-appendonly.aof.manifest",
		"rename temp-appendonly.aof.manifest appendonly.aof.manifest",
		"syncdir",
	}) {
		t.Fatalf("manifest replacement did %q", got)
	}
	p.Append(0, args("SET", "final", "y"))
	p.Submit()
	after = append(after, "SELECT 0", "SET final y")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	m, _ := os.ReadFile(manifestPath(dir))
	if want := "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"; string(m) != want {
		t.Fatalf("manifest:\n%s\nwant:\n%s", m, want)
	}
	if got, want := dirFiles(t, dir), []string{"appendonly.aof.2.base.aof", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"}; !slices.Equal(got, want) {
		t.Fatalf("folder holds %q, want %q", got, want)
	}

	o.FS = nil
	got, _, err := loadAll(t, o)
	if err != nil {
		t.Fatal(err)
	}
	// The base holds the image, in any order; the incr what came after.
	nImage := 0
	for _, kv := range image {
		nImage += len(kv)
	}
	loadedImage := dataset{}
	baseCmds := 0
	for i, c := range got {
		if !strings.HasPrefix(c, "SELECT") {
			baseCmds++
		}
		if baseCmds == nImage {
			loadedImage.apply(got[:i+1])
			if g, w := withDB(got[i+1:]), withDB(after); !slices.Equal(g, w) {
				t.Fatalf("after the image: %q, want %q", g, w)
			}
			break
		}
	}
	if loadedImage.String() != image.String() {
		t.Fatalf("base holds %s\nwant %s", loadedImage, image)
	}
	final := dataset{}
	final.apply(before)
	final.apply([]string{"SELECT 0", "DEL k0"})
	final.apply(after)
	loaded := dataset{}
	loaded.apply(got)
	if loaded.String() != final.String() {
		t.Fatalf("loaded %s\nwant %s", loaded, final)
	}
	if ok, err := Check(manifestPath(dir), false, &bytes.Buffer{}); !ok || err != nil {
		t.Fatalf("Check: %v %v", ok, err)
	}
	if bin, err := exec.LookPath("redis-check-aof"); err == nil {
		if out, err := exec.Command(bin, manifestPath(dir)).CombinedOutput(); err != nil {
			t.Fatalf("redis-check-aof: %v\n%s", err, out)
		}
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		srv := startRedis(t, dir)
		for db, kv := range final {
			srv.do(t, "SELECT", fmt.Sprint(db))
			if n := srv.do(t, "DBSIZE"); n != fmt.Sprint(len(kv)) {
				t.Errorf("redis-server db %d: DBSIZE %s, want %d", db, n, len(kv))
			}
			for k, v := range kv {
				if g := srv.do(t, "GET", k); g != v {
					t.Errorf("redis-server db %d: GET %s = %q, want %q", db, k, g, v)
				}
			}
		}
	}
}

// TestRewriteThatCannotSwapTheManifestKeepsTheOldFiles: if the manifest
// cannot be replaced, Finish fails, the old manifest (old files plus the
// new incr) stays, nothing is deleted, and every record still loads.
func TestRewriteThatCannotSwapTheManifestKeepsTheOldFiles(t *testing.T) {
	dir := t.TempDir()
	ffs := newFaultFS()
	o := testOptions(dir, FsyncAlways)
	o.FS = ffs
	l := mustOpen(t, o)
	p := l.NewProducer()
	p.Append(0, args("SET", "a", "1"))
	p.Submit()
	r, err := l.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	r.Append(0, args("SET", "a", "1"))
	p.Append(0, args("SET", "b", "2"))
	p.Submit()
	ffs.arm(func(f *faultFS) { f.failRename = true })
	if err := r.Finish(); err == nil {
		t.Fatal("Finish succeeded without a manifest")
	}
	ffs.arm(func(f *faultFS) { f.failRename = false })
	if l.Stats().RewriteActive {
		t.Fatal("rewrite still active after a failed Finish")
	}
	p.Append(0, args("SET", "c", "3"))
	p.Submit()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	m, _ := os.ReadFile(manifestPath(dir))
	want := "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
	if string(m) != want {
		t.Fatalf("manifest:\n%s\nwant:\n%s", m, want)
	}
	if got, want := dirFiles(t, dir), []string{"appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"}; !slices.Equal(got, want) {
		t.Fatalf("folder holds %q, want %q", got, want)
	}
	o.FS = nil
	got, _, err := loadAll(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := withDB(got), []string{"0:SET a 1", "0:SET b 2", "0:SET c 3"}; !slices.Equal(g, w) {
		t.Fatalf("loaded %q, want %q", g, w)
	}
}

// TestAbortedRewriteKeepsEveryRecord: after Abort the temp file is gone and
// the old files plus the new incr load every record once; a later rewrite
// works and removes all of them.
func TestAbortedRewriteKeepsEveryRecord(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, FsyncEverysec)
	l := mustOpen(t, o)
	p := l.NewProducer()
	p.Append(0, args("SET", "a", "1"))
	p.Submit()
	r, err := l.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	r.Append(0, args("SET", "a", "1"))
	r.Abort()
	p.Append(0, args("SET", "b", "2"))
	p.Submit()
	if got := dirFiles(t, dir); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "temp-") }) {
		t.Fatalf("temp file left after Abort: %q", got)
	}
	r, err = l.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	r.Append(0, args("SET", "a", "1"))
	r.Append(0, args("SET", "b", "2"))
	p.Append(0, args("SET", "c", "3"))
	p.Submit()
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := dirFiles(t, dir), []string{"appendonly.aof.2.base.aof", "appendonly.aof.3.incr.aof", "appendonly.aof.manifest"}; !slices.Equal(got, want) {
		t.Fatalf("folder holds %q, want %q", got, want)
	}
	got, _, err := loadAll(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := withDB(got), []string{"0:SET a 1", "0:SET b 2", "0:SET c 3"}; !slices.Equal(g, w) {
		t.Fatalf("loaded %q, want %q", g, w)
	}
	if st := l.Stats(); st.BaseSize == 0 || st.CurrentSize <= st.BaseSize {
		t.Fatalf("sizes after rewrite: %+v", st)
	}
}
