package aof

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redshard/redshard/aof/rdb"
)

// Check verifies a multi-part AOF (path is its manifest) or a single AOF
// file, as redis-check-aof does, by the rules Load applies: the manifest's
// format, every listed file present, every group's checksum, every command
// whole. It writes a report to out and returns ok when everything is valid
// (or was fixed).
//
// With fix, a damaged tail of the last file is cut back to the end of its
// last whole record, as redis-check-aof --fix does. If whole groups follow
// the damage (corruption rather than a torn tail), the bytes cut off are
// first saved to "<file>.corrupt-<offset>" beside it, so nothing is lost. A
// damaged file that is not the last cannot be fixed by cutting. err is set
// for I/O errors and an unreadable manifest.
func Check(path string, fix bool, out io.Writer) (ok bool, err error) {
	fsys := OSFS{}
	isManifest, err := looksLikeManifest(path)
	if err != nil {
		fmt.Fprintf(out, "Cannot open file %s: %v\n", path, err)
		return false, err
	}
	if !isManifest {
		fmt.Fprintf(out, "Start checking Old-Style AOF\n")
		ok, err := checkOne(fsys, out, path, filepath.Base(path), true, fix)
		if ok && err == nil {
			fmt.Fprintf(out, "AOF %s is valid\n", path)
		}
		return ok, err
	}

	fmt.Fprintf(out, "Start checking Multi Part AOF\n")
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(out, "Cannot open file %s: %v\n", path, err)
		return false, err
	}
	m, err := ParseManifest(path, data)
	if err != nil {
		fmt.Fprintf(out, "*** FATAL AOF MANIFEST FILE ERROR ***\n%v\n", err)
		return false, err
	}
	dir := filepath.Dir(path)
	files := m.files()
	for i, e := range files {
		if i == 0 && m.Base != nil {
			fmt.Fprintf(out, "Start to check BASE AOF (RESP format).\n")
		} else if i == 0 || (i == 1 && m.Base != nil) {
			fmt.Fprintf(out, "Start to check INCR files.\n")
		}
		ok, err := checkOne(fsys, out, filepath.Join(dir, e.Name), e.Name, i == len(files)-1, fix)
		if err != nil || !ok {
			return false, err
		}
		kind := "INCR"
		if e.Type == typeBase {
			kind = "BASE"
		}
		fmt.Fprintf(out, "%s AOF %s is valid\n", kind, e.Name)
	}
	fmt.Fprintf(out, "All AOF files and manifest are valid\n")
	return true, nil
}

// looksLikeManifest reports whether path is a manifest: its name ends in
// ".manifest" or its first line that is not a comment starts with "file ".
func looksLikeManifest(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if strings.HasSuffix(path, manifestSuffix) {
		return true, nil
	}
	buf := make([]byte, 4096)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	for b := buf[:n]; len(b) > 0; {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		return bytes.HasPrefix(line, []byte("file ")), nil
	}
	return false, nil
}

// checkOne checks one file and, with fix, cuts a damaged tail of the last
// file.
func checkOne(fsys FS, out io.Writer, path, name string, last, fix bool) (bool, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		fmt.Fprintf(out, "Cannot open file %s: %v, aborting...\n", path, err)
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	size := fi.Size()
	if size == 0 {
		fmt.Fprintf(out, "AOF %s is empty\n", name)
		return true, nil
	}
	if isRDB(f, size) {
		// An RDB base: read it whole, checksum included.
		sum, err := rdb.Read(bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10), nil)
		if err != nil {
			fmt.Fprintf(out, "RDB preamble of AOF file %s is not valid: %v\n", name, err)
			return false, nil
		}
		fmt.Fprintf(out, "RDB preamble is OK, proceeding with AOF tail...\nAOF analyzed: filename=%s, size=%d, keys=%d, RDB version %d\n", name, size, sum.Keys, sum.Version)
		return true, nil
	}
	res, err := scanFile(f, size, nil, nil)
	if err != nil {
		fmt.Fprintf(out, "Failed to read from AOF %s: %v, aborting...\n", name, err)
		return false, err
	}
	diff := size - res.GoodUpTo
	if res.ok() {
		diff = 0
	}
	fmt.Fprintf(out, "AOF analyzed: filename=%s, size=%d, ok_up_to=%d, groups=%d, commands=%d, diff=%d\n",
		name, size, res.GoodUpTo, res.Groups, res.Commands, diff)
	if res.ok() {
		return true, nil
	}
	what := "Corruption"
	if res.Torn {
		what = "Torn tail"
	}
	fmt.Fprintf(out, "%s at offset %d (0x%x): %s\n", what, res.BadAt, res.BadAt, res.Reason)
	if res.NextGroup >= 0 {
		fmt.Fprintf(out, "A valid group follows at offset %d: records after the damage would be lost by cutting.\n", res.NextGroup)
	}
	if !fix {
		fmt.Fprintf(out, "AOF %s is not valid. Use the --fix option to try fixing it.\n", name)
		return false, nil
	}
	if !last {
		fmt.Fprintf(out, "Failed to truncate AOF %s because it is not the last file\n", name)
		return false, nil
	}
	if !res.Torn {
		save := path + ".corrupt-" + strconv.FormatInt(res.GoodUpTo, 10)
		if err := saveTail(fsys, f, res.GoodUpTo, size, save); err != nil {
			fmt.Fprintf(out, "Failed to save the bytes to be cut to %s: %v\n", save, err)
			return false, err
		}
		fmt.Fprintf(out, "Saved the %d bytes to be cut to %s\n", size-res.GoodUpTo, save)
	}
	fmt.Fprintf(out, "This will shrink the AOF %s from %d bytes, with %d bytes, to %d bytes\n", name, size, diff, res.GoodUpTo)
	if _, err := repairTail(fsys, path, res.GoodUpTo); err != nil {
		fmt.Fprintf(out, "Failed to truncate AOF %s: %v\n", name, err)
		return false, err
	}
	fmt.Fprintf(out, "Successfully truncated AOF %s\n", name)
	return true, nil
}

// saveTail copies bytes [from, to) of f to a new file at path.
func saveTail(fsys FS, f File, from, to int64, path string) error {
	dst, err := fsys.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, io.NewSectionReader(f, from, to-from)); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
