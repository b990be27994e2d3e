package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/redshard/redshard/aof"
)

// TestExitCodes: 0 for a valid folder, 1 for a torn one, 0 after --fix,
// 1 for bad arguments, as redis-check-aof.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	l, err := aof.Open(aof.Options{Dir: dir, Fsync: aof.FsyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	p := l.NewProducer()
	for i := 0; i < 3; i++ {
		p.Append(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
		p.Submit()
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
	fi, err := os.Stat(incr)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		prep func()
		args []string
		want int
	}{
		{"valid folder", nil, []string{"redshard-check-aof", manifest}, 0},
		{"torn tail", func() { os.Truncate(incr, fi.Size()-1) }, []string{"redshard-check-aof", manifest}, 1},
		{"fix", nil, []string{"redshard-check-aof", "--fix", manifest}, 0},
		{"valid after fix", nil, []string{"redshard-check-aof", manifest}, 0},
		{"no file", nil, []string{"redshard-check-aof"}, 1},
		{"unknown flag", nil, []string{"redshard-check-aof", "--truncate", manifest}, 1},
		{"missing file", nil, []string{"redshard-check-aof", filepath.Join(dir, "nope.manifest")}, 1},
	}
	for _, s := range steps {
		if s.prep != nil {
			s.prep()
		}
		if got := run(s.args); got != s.want {
			t.Fatalf("%s: exit %d, want %d", s.name, got, s.want)
		}
	}
}
