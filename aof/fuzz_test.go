package aof

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes as the incr file: Load never panics, and
// whatever it accepts (with aof-load-truncated) it accepts again unchanged
// after the cut.
func FuzzLoad(f *testing.F) {
	grp := func(payload string) string {
		return string(sealGroup(append(make([]byte, groupHeaderRoom), payload...)))
	}
	set := string(appendCommand(nil, args("SET", "k", "v")))
	f.Add([]byte(""))
	f.Add([]byte(grp(string(appendSelect(nil, 1)) + set)))
	f.Add([]byte(grp(set) + grp("*1\r\n$5\r\nMULTI\r\n"+set+"*1\r\n$4\r\nEXEC\r\n")))
	f.Add([]byte(set + "#TS:1\r\n" + set[:7]))
	f.Add([]byte("#B:99999999999999999:00000000\r\n"))
	f.Add([]byte("*999999999\r\n$99999999999\r\n"))
	f.Add([]byte(grp(set)[:20]))
	dir := f.TempDir()
	ad := filepath.Join(dir, "appendonlydir")
	if err := os.MkdirAll(ad, 0o755); err != nil {
		f.Fatal(err)
	}
	manifest := "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
	f.Fuzz(func(t *testing.T, data []byte) {
		os.WriteFile(filepath.Join(ad, "appendonly.aof.manifest"), []byte(manifest), 0o644)
		os.WriteFile(filepath.Join(ad, "appendonly.aof.1.base.aof"), nil, 0o644)
		if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.1.incr.aof"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, truncated := range []bool{false, true} {
			o := testOptions(dir, FsyncNo)
			o.FS = noSyncFS{}
			o.LoadTruncated = truncated
			l, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			_, lerr := l.Load(func(argv [][]byte) error {
				if len(argv) == 0 {
					t.Fatal("empty argv")
				}
				n++
				return nil
			})
			l.Close()
			if truncated && lerr == nil {
				// The cut file loads clean, with the same commands.
				o.LoadTruncated = false
				l2, err := Open(o)
				if err != nil {
					t.Fatal(err)
				}
				m := 0
				if _, err := l2.Load(func([][]byte) error { m++; return nil }); err != nil {
					t.Fatalf("after the cut: %v", err)
				}
				l2.Close()
				if m != n {
					t.Fatalf("after the cut %d commands, before %d", m, n)
				}
			}
		}
	})
}

// noSyncFS is the real file system without fsyncs, to fuzz fast.
type noSyncFS struct{ OSFS }

type noSyncFile struct{ File }

func (noSyncFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := OSFS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (noSyncFile) Sync() error        { return nil }
func (noSyncFS) SyncDir(string) error { return nil }
