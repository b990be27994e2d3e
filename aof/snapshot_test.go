package aof

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/redshard/redshard/aof/rdb"
)

// TestSnapshotFinishAbortExclusive: whichever of Finish and Abort comes
// first decides the file's fate, and the other does nothing: an Abort
// after (or racing) a Finish leaves the new file in place and removes no
// temp file a later snapshot (same name) may be writing; a Finish after an
// Abort puts nothing in place.
func TestSnapshotFinishAbortExclusive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	start := func() *Snapshot {
		s, err := StartSnapshot(nil, path, false, rdb.DefaultOptions(), rdb.Header{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Finish, then Abort: the file stays.
	s := start()
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	next := start() // the same temp name as s's
	s.Abort()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Abort after Finish removed the file: %v", err)
	}
	if _, err := os.Stat(next.tmpPath); err != nil {
		t.Fatalf("Abort after Finish removed the next snapshot's temp file: %v", err)
	}
	next.Abort()

	// Abort, then Finish: Finish fails and puts nothing in place.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s = start()
	s.Abort()
	if err := s.Finish(); !errors.Is(err, errAborted) {
		t.Fatalf("Finish after Abort: %v, want errAborted", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("Finish after Abort put a file in place: %v", err)
	}

	// Racing: either outcome, never both, never a panic.
	for i := 0; i < 20; i++ {
		s := start()
		var wg sync.WaitGroup
		var ferr error
		wg.Add(2)
		go func() { defer wg.Done(); ferr = s.Finish() }()
		go func() { defer wg.Done(); s.Abort() }()
		wg.Wait()
		_, serr := os.Stat(path)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("round %d: Finish %v, file %v", i, ferr, serr)
		}
		_ = os.Remove(path)
	}
}
