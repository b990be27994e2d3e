package aof

import (
	"fmt"
	"os"
)

// repairTail cuts the file at path back to goodUpTo, the end of its last
// whole group (or command), dropping a torn tail, and makes the new size
// durable. It returns how many bytes were dropped. Only the last file of a
// manifest may be cut: the records after a cut in an earlier file would
// follow a gap.
func repairTail(fsys FS, path string, goodUpTo int64) (int64, error) {
	f, err := fsys.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("aof: open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("aof: stat %s: %w", path, err)
	}
	if goodUpTo > fi.Size() || goodUpTo < 0 {
		return 0, fmt.Errorf("aof: cut %s at %d: beyond its size %d", path, goodUpTo, fi.Size())
	}
	if err := f.Truncate(goodUpTo); err != nil {
		return 0, fmt.Errorf("aof: truncate %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("aof: fsync %s: %w", path, err)
	}
	return fi.Size() - goodUpTo, nil
}
