package aof

import (
	"bytes"
	"fmt"
	"github.com/redshard/redshard/failpoint"
	"github.com/redshard/redshard/resp"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File naming, as Redis 7 (aof.c): <appendfilename>.<seq>.base.aof,
// <appendfilename>.<seq>.incr.aof, <appendfilename>.manifest, and temp-
// prefixed names for files being written.
const (
	baseSuffix     = ".base"
	incrSuffix     = ".incr"
	aofSuffix      = ".aof"
	rdbSuffix      = ".rdb"
	manifestSuffix = ".manifest"
	tempPrefix     = "temp-"

	// manifestMaxLine is Redis's MANIFEST_MAX_LINE.
	manifestMaxLine = 1024
)

// Manifest file types.
const (
	typeBase    = 'b'
	typeHistory = 'h'
	typeIncr    = 'i'
)

// ManifestEntry is one line of a manifest: "file <name> seq <seq> type <t>".
type ManifestEntry struct {
	Name string
	Seq  int64
	Type byte // 'b' base, 'h' history, 'i' incr
}

// Manifest lists the files of a multi-part AOF: at most one base, then
// history files (to be deleted), then the incremental files in load order.
type Manifest struct {
	Base    *ManifestEntry
	History []ManifestEntry
	Incr    []ManifestEntry
	// BaseSeq and IncrSeq are the highest sequences used so far; new files
	// take the next one.
	BaseSeq, IncrSeq int64
}

// ManifestError is a manifest that Redis would refuse to load, with its
// reason in Redis's words and the offending line.
type ManifestError struct {
	Path   string
	Line   int    // 1-based; 0 if not about one line
	Text   string // the line, trimmed
	Reason string
}

func (e *ManifestError) Error() string {
	if e.Line > 0 {
		// The reason first, in Redis's words, which operators grep: a
		// log line is cut at 1024 bytes, and so is the line quoted here.
		text := e.Text
		if len(text) > 128 {
			text = text[:128] + "..."
		}
		return fmt.Sprintf("aof: %s: manifest %s line %d ('%s')", e.Reason, e.Path, e.Line, text)
	}
	return fmt.Sprintf("aof: manifest %s: %s", e.Path, e.Reason)
}

// ParseManifest parses a manifest with the rules of Redis's
// aofLoadManifestFromFile: lines starting with '#' are comments, every other
// line must end in '\n', hold an even number (≥ 6) of space-separated
// tokens (quoted as sdssplitargs quotes) with keys file, seq and type
// (case-insensitive; unknown keys are ignored), file must be a base name,
// at most one base, incremental sequences strictly increasing.
func ParseManifest(path string, data []byte) (*Manifest, error) {
	m := &Manifest{}
	var maxIncr int64
	if len(data) == 0 {
		return nil, &ManifestError{Path: path, Reason: "Found an empty AOF manifest"}
	}
	linenum := 0
	for len(data) > 0 {
		linenum++
		var raw []byte
		nl := bytes.IndexByte(data, '\n')
		if data[0] == '#' {
			if nl < 0 {
				break
			}
			data = data[nl+1:]
			continue
		}
		if nl < 0 || nl+1 > manifestMaxLine {
			return nil, &ManifestError{Path: path, Line: linenum, Text: trimLine(data), Reason: "The AOF manifest file contains too long line"}
		}
		raw, data = data[:nl+1], data[nl+1:]
		line := trimLine(raw)
		bad := func(reason string) error {
			return &ManifestError{Path: path, Line: linenum, Text: line, Reason: reason}
		}
		if line == "" {
			return nil, bad("Invalid AOF manifest file format")
		}
		argv, ok := splitArgs(line)
		if !ok || len(argv) < 6 || len(argv)%2 != 0 {
			return nil, bad("Invalid AOF manifest file format")
		}
		var e ManifestEntry
		for i := 0; i < len(argv); i += 2 {
			switch strings.ToLower(argv[i]) {
			case "file":
				e.Name = argv[i+1]
				if strings.ContainsRune(e.Name, '/') {
					return nil, bad("File can't be a path, just a filename")
				}
			case "seq":
				e.Seq = atoll(argv[i+1])
			case "type":
				if len(argv[i+1]) > 0 {
					e.Type = argv[i+1][0]
				}
			}
		}
		if e.Name == "" || e.Seq == 0 || e.Type == 0 {
			return nil, bad("Invalid AOF manifest file format")
		}
		switch e.Type {
		case typeBase:
			if m.Base != nil {
				return nil, bad("Found duplicate base file information")
			}
			b := e
			m.Base = &b
			m.BaseSeq = e.Seq
		case typeHistory:
			m.History = append(m.History, e)
		case typeIncr:
			if e.Seq <= maxIncr {
				return nil, bad("Found a non-monotonic sequence number")
			}
			m.Incr = append(m.Incr, e)
			m.IncrSeq = e.Seq
			maxIncr = e.Seq
		default:
			return nil, bad("Unknown AOF file type")
		}
	}
	return m, nil
}

func trimLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	return strings.Trim(string(b), " \t\r\n")
}

// atoll is C's atoll: optional sign and leading digits, 0 if none.
func atoll(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(s[:j], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Encode returns the manifest text: base first, then history, then incr,
// one "file <name> seq <n> type <t>\n" line each (getAofManifestAsString).
func (m *Manifest) Encode() []byte {
	var b []byte
	add := func(e ManifestEntry) {
		b = append(b, "file "...)
		b = appendRepr(b, e.Name)
		b = append(b, " seq "...)
		b = strconv.AppendInt(b, e.Seq, 10)
		b = append(b, " type "...)
		b = append(b, e.Type, '\n')
	}
	if m.Base != nil {
		add(*m.Base)
	}
	for _, e := range m.History {
		add(e)
	}
	for _, e := range m.Incr {
		add(e)
	}
	return b
}

func (m *Manifest) clone() *Manifest {
	c := &Manifest{BaseSeq: m.BaseSeq, IncrSeq: m.IncrSeq}
	if m.Base != nil {
		b := *m.Base
		c.Base = &b
	}
	c.History = append([]ManifestEntry(nil), m.History...)
	c.Incr = append([]ManifestEntry(nil), m.Incr...)
	return c
}

// files returns the files to load, in order: base, then incrs.
func (m *Manifest) files() []ManifestEntry {
	var fs []ManifestEntry
	if m.Base != nil {
		fs = append(fs, *m.Base)
	}
	return append(fs, m.Incr...)
}

func baseName(filename string, seq int64) string {
	return filename + "." + strconv.FormatInt(seq, 10) + baseSuffix + aofSuffix
}

func incrName(filename string, seq int64) string {
	return filename + "." + strconv.FormatInt(seq, 10) + incrSuffix + aofSuffix
}

// tempIncrName is the incremental file of a log waiting for its first
// rewrite (Redis's temp-appendonly.aof.incr): no manifest names it.
func tempIncrName(filename string) string { return tempPrefix + filename + incrSuffix }

// readManifest reads and parses the manifest at path. It returns
// os.ErrNotExist (wrapped) when there is none.
func readManifest(fsys FS, path string) (*Manifest, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("aof: read manifest %s: %w", path, err)
	}
	return ParseManifest(path, buf.Bytes())
}

// writeManifest replaces the manifest atomically, as Redis's
// writeAofManifestFile: write a temp file, fsync it, rename it over the
// manifest, fsync the directory. A crash at any point leaves either the old
// or the new manifest.
func writeManifest(fsys FS, dir, filename string, m *Manifest) error {
	return writeManifestAt(fsys, dir, filename, m, false)
}

// writeManifestAt is writeManifest; the end of a rewrite passes rewrite
// true to reach the rewrite-manifest-temp failpoint.
func writeManifestAt(fsys FS, dir, filename string, m *Manifest, rewrite bool) error {
	path := filepath.Join(dir, filename+manifestSuffix)
	tmp := filepath.Join(dir, tempPrefix+filename+manifestSuffix)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("aof: can't open the AOF manifest file %s: %w", tmp, err)
	}
	data := m.Encode()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("aof: write temporary AOF manifest file %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("aof: fsync temporary AOF manifest file %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("aof: close temporary AOF manifest file %s: %w", tmp, err)
	}
	rename := fsys.Rename
	if rewrite {
		// rewrite-manifest-temp: the temp manifest is synced, the old one
		// still in place. error stands for the rename(2) failing.
		if e := failpoint.Inject(failpoint.RewriteManifestTemp); e != 0 {
			rename = func(o, n string) error { return &os.LinkError{Op: "rename", Old: o, New: n, Err: e} }
		}
	}
	if err := rename(tmp, path); err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("aof: rename temporary AOF manifest file %s into %s: %w", tmp, path, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("aof: fsync AOF directory %s: %w", dir, err)
	}
	return nil
}

// splitArgs splits a manifest line as Redis's sdssplitargs.
func splitArgs(line string) ([]string, bool) { return resp.SplitArgs(line) }

// appendRepr appends s as Redis's manifest writer does: verbatim if it needs
// no quoting (sdsneedsrepr), else as sdscatrepr's quoted form.
func appendRepr(b []byte, s string) []byte {
	needs := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c == '"' || c == '\n' || c == '\r' || c == '\t' || c == '\a' || c == '\b' ||
			c < 0x20 || c > 0x7e || c == ' ' || c == '\v' || c == '\f' {
			needs = true
			break
		}
	}
	if !needs {
		return append(b, s...)
	}
	return resp.AppendRepr(b, s)
}
