package aof

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// reloadCollect returns an apply function that records every command as text.
func reloadCollect(out *[]string) func([][]byte) error {
	return func(argv [][]byte) error {
		parts := make([]string, len(argv))
		for i, a := range argv {
			parts[i] = string(a)
		}
		*out = append(*out, strings.Join(parts, " "))
		return nil
	}
}

func reloadWaitWritten(t *testing.T, l *Log, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.Written() < seq {
		if time.Now().After(deadline) {
			t.Fatalf("Written %d, want %d", l.Written(), seq)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestReloadReplaysWhatIsWritten(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, testOptions(dir, FsyncEverysec))
	defer l.Close()
	if _, err := l.Reload(func([][]byte) error { return nil }); err == nil {
		t.Fatalf("Reload before Load succeeded")
	}
	if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	p := l.NewProducer()
	p.Append(0, args("SET", "a", "1"))
	p.Append(2, args("SET", "b", "2"))
	seq := p.Submit()
	reloadWaitWritten(t, l, seq)

	var got []string
	st, err := l.Reload(reloadCollect(&got))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SELECT 0", "SET a 1", "SELECT 2", "SET b 2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Reload gave %q, want %q", got, want)
	}
	if st.Commands != int64(len(want)) {
		t.Errorf("LoadStats.Commands %d, want %d", st.Commands, len(want))
	}
	if done, total := l.LoadProgress(); done != total || total == 0 {
		t.Errorf("LoadProgress %d of %d after Reload", done, total)
	}

	// The log goes on, and a second Reload sees the new batch too.
	p.Append(2, args("DEL", "b"))
	seq = p.Submit()
	reloadWaitWritten(t, l, seq)
	got = got[:0]
	if _, err := l.Reload(reloadCollect(&got)); err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, "|"); !strings.HasSuffix(g, "SET b 2|DEL b") {
		t.Fatalf("second Reload gave %q", got)
	}
}

func TestReloadRefusesUnwrittenRecordsAndRewrites(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, FsyncAlways)
	ffs := newFaultFS()
	o.FS = ffs
	l := mustOpen(t, o)
	defer l.Close()
	if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// A group that can't be fsynced stays unwritten: Reload refuses.
	ffs.mu.Lock()
	ffs.failSyncs = -1
	ffs.mu.Unlock()
	p := l.NewProducer()
	p.Append(0, args("SET", "a", "1"))
	p.Submit()
	deadline := time.Now().Add(5 * time.Second)
	for l.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if _, err := l.Reload(func([][]byte) error { return nil }); err == nil {
		t.Fatalf("Reload with a failing log succeeded")
	}
	ffs.mu.Lock()
	ffs.failSyncs = 0
	ffs.mu.Unlock()
	deadline = time.Now().Add(5 * time.Second)
	for l.Err() != nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := l.Reload(func([][]byte) error { return nil }); err != nil {
		t.Fatalf("Reload after the disk recovered: %v", err)
	}

	r, err := l.StartRewrite()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reload(func([][]byte) error { return nil }); !errors.Is(err, ErrRewriteInProgress) {
		t.Fatalf("Reload during a rewrite: %v", err)
	}
	r.Abort()
}
