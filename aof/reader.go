package aof

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
)

// This file reads one AOF file (base or incr): annotated groups, bare
// commands as redis-server writes them, and other '#' annotation lines
// (skipped, as Redis does). Load and Check share it, so the tool and the
// server judge a file alike. The recovery rules it implements are stated in
// doc.go ("Recovery").

// problem classes, before the torn/corrupt decision.
type problemClass int

const (
	noProblem       problemClass = iota
	problemEOF                   // the file ends inside a command, a group or a MULTI
	problemFormat                // bytes the format does not allow
	problemChecksum              // a whole group whose CRC does not match
)

// scanResult is what scanFile found in one file.
type scanResult struct {
	Size     int64
	GoodUpTo int64 // end of the last whole group or command outside MULTI
	Groups   int64
	Commands int64
	// Annotated is set once the file holds a group annotation before the
	// problem (or the problem is in a group): a redshard-written file.
	Annotated bool

	Class  problemClass
	BadAt  int64 // offset of the unit (group, command, line) that failed
	Reason string
	// Torn is the verdict for a problem: true when it is a torn tail
	// (repairable by cutting the file at GoodUpTo), false when it is
	// corruption. NextGroup is the offset of the valid group that makes it
	// corruption, or -1.
	Torn      bool
	NextGroup int64
}

func (r *scanResult) ok() bool { return r.Class == noProblem }

// applyError is an error returned by the apply function, with the offset
// of the command that caused it.
type applyError struct {
	at  int64
	err error
}

func (e *applyError) Error() string { return e.err.Error() }
func (e *applyError) Unwrap() error { return e.err }

// window is a sliding read buffer over the first size bytes of a file.
// buf[start:end] holds the file bytes from offset off.
type window struct {
	r          io.Reader
	buf        []byte
	start, end int
	off, size  int64
	read       int64 // bytes read from r so far
	eof        bool
}

const windowChunk = 1 << 20

// fill makes at least n bytes available (fewer only at the end of the
// file) and returns the available bytes. Slices of a previous result are
// invalid afterwards.
func (w *window) fill(n int) ([]byte, error) {
	for w.end-w.start < n && !w.eof {
		if w.start > 0 && (w.start >= len(w.buf)/2 || len(w.buf)-w.start < n) {
			copy(w.buf, w.buf[w.start:w.end])
			w.end -= w.start
			w.start = 0
		}
		if want := w.start + n; want > len(w.buf) {
			size := max(2*len(w.buf), want, windowChunk)
			if left := w.size - w.off; int64(size) > left {
				size = int(max(left, int64(want)))
			}
			nb := make([]byte, size)
			copy(nb, w.buf[w.start:w.end])
			w.end -= w.start
			w.start = 0
			w.buf = nb
		}
		room := int64(len(w.buf) - w.end)
		if left := w.size - w.read; left < room {
			room = left
		}
		if room == 0 {
			w.eof = true
			break
		}
		m, err := w.r.Read(w.buf[w.end : w.end+int(room)])
		w.end += m
		w.read += int64(m)
		if err == io.EOF || (m == 0 && err == nil && w.read >= w.size) {
			w.eof = true
		} else if err != nil {
			return nil, err
		}
	}
	return w.buf[w.start:w.end], nil
}

func (w *window) consume(n int) {
	w.start += n
	w.off += int64(n)
}

// scanner parses one file and hands each command to emit, holding the
// commands of a MULTI back until its EXEC.
type scanner struct {
	emit func(argv [][]byte) error // nil: parse only
	argv [][]byte

	inMulti    bool
	multiAt    int64    // offset of the pending MULTI
	multiArgv  [][]byte // its argv, copied
	txnData    []byte
	txnArgEnds []int
	txnArgc    []int
	txnArgv    [][]byte
}

// scanFile reads the first size bytes of f.
func scanFile(f File, size int64, emit func(argv [][]byte) error, progress func(int64)) (scanResult, error) {
	s := &scanner{emit: emit}
	res := scanResult{Size: size, NextGroup: -1}
	w := &window{r: io.NewSectionReader(f, 0, size), size: size}
	fail := func(c problemClass, at int64, format string, args ...any) {
		res.Class, res.BadAt, res.Reason = c, at, fmt.Sprintf(format, args...)
	}
	var lastProgress int64
	var nextGroup groupCache
	// afterGroup: the last whole unit read was a group (or the unit being
	// read is one), so damage here is in redshard's tail, not in commands
	// redis-server appended after it.
	afterGroup := false
	for res.Class == noProblem {
		if progress != nil && w.off-lastProgress >= windowChunk {
			progress(w.off - lastProgress)
			lastProgress = w.off
		}
		b, err := w.fill(1)
		if err != nil {
			return res, err
		}
		if len(b) == 0 {
			break
		}
		start := w.off
		switch b[0] {
		case '#':
			if b, err = w.fill(maxAnnotationLine); err != nil {
				return res, err
			}
			lim := min(len(b), maxAnnotationLine)
			nl := bytes.IndexByte(b[:lim], '\n')
			if nl < 0 {
				if lim < maxAnnotationLine {
					fail(problemEOF, start, "incomplete annotation line")
				} else {
					fail(problemFormat, start, "annotation line longer than %d bytes", maxAnnotationLine)
				}
				break
			}
			line := b[:nl+1]
			if !bytes.HasPrefix(line, []byte(groupPrefix)) {
				// Redis's loader skips every '#' line; Redis 7.0 writes only
				// "#TS:". In a file with group annotations any other '#' line
				// is a damaged group annotation, whose group would otherwise
				// be loaded unchecked.
				if !bytes.HasPrefix(line, []byte(tsPrefix)) {
					annotated := res.Annotated
					if !annotated {
						g, err := nextGroup.after(f, start, size)
						if err != nil {
							return res, err
						}
						annotated = g >= 0
					}
					if annotated {
						fail(problemFormat, start, "unknown annotation line %q in a file with group annotations", bytes.TrimRight(line, "\r\n"))
						break
					}
				}
				w.consume(nl + 1)
				break
			}
			res.Annotated = true
			afterGroup = true // the damage, if any, is in this group
			n, crc, ok := parseGroupHeader(line)
			if !ok {
				fail(problemFormat, start, "malformed group annotation %q", bytes.TrimRight(line, "\r\n"))
				break
			}
			hl := int64(nl + 1)
			if left := size - start - hl; n > left {
				fail(problemEOF, start, "group of %d bytes is cut short (%d bytes missing)", n, n-left)
				break
			}
			if b, err = w.fill(int(hl + n)); err != nil {
				return res, err
			}
			if int64(len(b)) < hl+n {
				fail(problemEOF, start, "group of %d bytes is cut short", n)
				break
			}
			payload := b[hl : hl+n]
			if got := checksum(payload); got != crc {
				fail(problemChecksum, start, "checksum mismatch in group of %d bytes (annotation says %08x, data has %08x)", n, crc, got)
				break
			}
			// Validate the whole group before applying any of it, so a group
			// is applied entirely or not at all.
			if at, reason := s.check(payload); reason != "" {
				fail(problemFormat, start+hl+int64(at), "bad command in group at offset %d: %s", start, reason)
				break
			}
			cmds, err := s.apply(payload, start+hl)
			if err != nil {
				return res, err
			}
			w.consume(int(hl + n))
			res.Groups++
			res.Commands += int64(cmds)
			if !s.inMulti {
				res.GoodUpTo = w.off
			}
		case '*':
			need := 0
			for {
				argv, used, more, perr := parseCommand(b, s.argv[:0])
				if perr != nil {
					fail(problemFormat, start+int64(perr.at), "%s", perr.reason)
					break
				}
				if used == 0 {
					if int64(more) > size-start || w.eof {
						fail(problemEOF, start, "unexpected end of file inside a command")
						break
					}
					need = more
					if b, err = w.fill(need); err != nil {
						return res, err
					}
					continue
				}
				s.argv = argv
				if reason := s.multiState(argv); reason != "" {
					fail(problemFormat, start, "%s", reason)
					break
				}
				if err := s.deliver(argv, start); err != nil {
					return res, err
				}
				w.consume(used)
				afterGroup = false
				res.Commands++
				if !s.inMulti {
					res.GoodUpTo = w.off
				}
				break
			}
		default:
			fail(problemFormat, start, "expected '*' or '#', got %q", b[0])
		}
	}
	if progress != nil {
		progress(w.off - lastProgress)
	}
	if res.Class == noProblem && s.inMulti {
		// Everything parsed, but the last transaction has no EXEC: a torn
		// tail by Redis's rule, cut back to before its MULTI.
		fail(problemEOF, s.multiAt, "MULTI without EXEC at the end of the file")
		res.Torn = true
		return res, nil
	}
	if res.Class != noProblem {
		next, err := validGroupAfter(f, res.BadAt, size)
		if err != nil {
			return res, err
		}
		res.NextGroup = next
		switch {
		case next >= 0:
			res.Torn = false
		case res.Class == problemEOF:
			res.Torn = true
		default:
			// A damaged last group of a redshard file: an unsynced tail after
			// a power loss may hold garbage or zeros. Bytes written by
			// redis-server follow Redis: a format error is fatal.
			res.Torn = afterGroup
		}
	}
	return res, nil
}

// multiState tracks MULTI/EXEC as redis-check-aof does and reports what
// neither Redis's loader nor its checker accepts: a nested MULTI, an EXEC
// without MULTI.
func (s *scanner) multiState(argv [][]byte) string {
	if len(argv) == 0 {
		return ""
	}
	switch {
	case bytes.EqualFold(argv[0], []byte("multi")):
		if s.inMulti {
			return "unexpected MULTI inside MULTI"
		}
	case bytes.EqualFold(argv[0], []byte("exec")):
		if !s.inMulti {
			return "unexpected EXEC without MULTI"
		}
	}
	return ""
}

// check validates a group's payload without delivering anything: whole
// commands only, MULTI/EXEC well nested (a MULTI may stay open at the end of
// a group). It returns the offset in the payload and the reason of the
// first problem.
func (s *scanner) check(payload []byte) (int, string) {
	inMulti := s.inMulti
	var argv [][]byte
	for p := 0; p < len(payload); {
		a, used, _, perr := parseCommand(payload[p:], argv[:0])
		if perr != nil {
			return p + perr.at, perr.reason
		}
		if used == 0 {
			return p, "the group ends inside a command"
		}
		argv = a
		if len(a) > 0 {
			switch {
			case bytes.EqualFold(a[0], []byte("multi")):
				if inMulti {
					return p, "unexpected MULTI inside MULTI"
				}
				inMulti = true
			case bytes.EqualFold(a[0], []byte("exec")):
				if !inMulti {
					return p, "unexpected EXEC without MULTI"
				}
				inMulti = false
			}
		}
		p += used
	}
	return 0, ""
}

// apply delivers the commands of a checked payload that starts at file
// offset base and returns how many there were.
func (s *scanner) apply(payload []byte, base int64) (int, error) {
	n := 0
	for p := 0; p < len(payload); n++ {
		argv, used, _, _ := parseCommand(payload[p:], s.argv[:0])
		s.argv = argv
		if err := s.deliver(argv, base+int64(p)); err != nil {
			return n, err
		}
		p += used
	}
	return n, nil
}

// deliver hands one command to emit, or queues it while a MULTI is open:
// the whole transaction is delivered at its EXEC, so a MULTI cut by the end
// of the file is never applied (Redis's rule: revert an incomplete
// MULTI/EXEC).
func (s *scanner) deliver(argv [][]byte, at int64) error {
	isMulti := len(argv) > 0 && bytes.EqualFold(argv[0], []byte("multi"))
	isExec := len(argv) > 0 && bytes.EqualFold(argv[0], []byte("exec"))
	switch {
	case isMulti:
		s.inMulti, s.multiAt = true, at
		s.multiArgv = s.multiArgv[:0]
		for _, a := range argv {
			s.multiArgv = append(s.multiArgv, append([]byte(nil), a...))
		}
		s.txnData, s.txnArgEnds, s.txnArgc = s.txnData[:0], s.txnArgEnds[:0], s.txnArgc[:0]
	case s.inMulti && !isExec:
		if s.emit == nil {
			return nil
		}
		s.txnArgc = append(s.txnArgc, len(argv))
		for _, a := range argv {
			s.txnData = append(s.txnData, a...)
			s.txnArgEnds = append(s.txnArgEnds, len(s.txnData))
		}
		return nil
	}
	if s.emit == nil {
		if isExec {
			s.inMulti = false
		}
		return nil
	}
	if isExec {
		s.inMulti = false
		if err := s.emitOne(s.multiArgv, s.multiAt); err != nil {
			return err
		}
		arg, startByte := 0, 0
		for _, argc := range s.txnArgc {
			s.txnArgv = s.txnArgv[:0]
			for i := 0; i < argc; i++ {
				end := s.txnArgEnds[arg]
				s.txnArgv = append(s.txnArgv, s.txnData[startByte:end:end])
				startByte = end
				arg++
			}
			if err := s.emitOne(s.txnArgv, at); err != nil {
				return err
			}
		}
		return s.emitOne(argv, at)
	}
	if isMulti {
		return nil // delivered with its EXEC
	}
	return s.emitOne(argv, at)
}

func (s *scanner) emitOne(argv [][]byte, at int64) error {
	if err := s.emit(argv); err != nil {
		return &applyError{at: at, err: err}
	}
	return nil
}

// parseError is a format error at offset at of the parsed bytes.
type parseError struct {
	at     int
	reason string
}

// parseCommand parses the RESP multibulk command at the start of b, as
// Redis's loader reads one ("*<argc>\r\n" then argc "$<len>\r\n<bytes>\r\n"),
// but strictly: every line ends in "\r\n" and every bulk is followed by
// "\r\n". It returns used > 0 and argv (sub-slices of b, appended to argv)
// for a whole command; used == 0 and need, a lower bound of the bytes the
// command takes, when b ends inside it; or a parse error.
func parseCommand(b []byte, argv [][]byte) (out [][]byte, used int, need int, perr *parseError) {
	if len(b) == 0 {
		return argv, 0, 1, nil
	}
	if b[0] != '*' {
		return argv, 0, 0, &parseError{0, fmt.Sprintf("expected '*', got %q", b[0])}
	}
	argc, p, need, perr := parseLen(b, 0, "multibulk count")
	if perr != nil || need > 0 {
		return argv, 0, need, perr
	}
	if argc < 1 {
		return argv, 0, 0, &parseError{0, "multibulk count " + strconv.FormatInt(argc, 10) + " is not positive"}
	}
	for i := int64(0); i < argc; i++ {
		if p >= len(b) {
			return argv, 0, p + 1, nil
		}
		if b[p] != '$' {
			return argv, 0, 0, &parseError{p, fmt.Sprintf("expected '$', got %q", b[p])}
		}
		n, q, need, perr := parseLen(b, p, "bulk length")
		if perr != nil || need > 0 {
			return argv, 0, need, perr
		}
		if n < 0 {
			return argv, 0, 0, &parseError{p, "negative bulk length"}
		}
		end := int64(q) + n + 2
		if end > int64(len(b)) {
			if end > 1<<62 {
				return argv, 0, 0, &parseError{p, "bulk length out of range"}
			}
			return argv, 0, int(end), nil
		}
		if b[end-2] != '\r' || b[end-1] != '\n' {
			return argv, 0, 0, &parseError{int(end - 2), "expected \\r\\n after a bulk"}
		}
		argv = append(argv, b[q:int64(q)+n:int64(q)+n])
		p = int(end)
	}
	return argv, p, 0, nil
}

// parseLen parses "<prefix><digits>\r\n" at b[p:]. It returns the value
// and the offset after the line, or need > 0 if b ends first.
func parseLen(b []byte, p int, what string) (v int64, next int, need int, perr *parseError) {
	const maxDigits = 18
	i := p + 1
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if digits++; digits > maxDigits {
			return 0, 0, 0, &parseError{p, what + " out of range"}
		}
		v = v*10 + int64(b[i]-'0')
	}
	if i+1 >= len(b) {
		if i < len(b) && b[i] != '\r' {
			return 0, 0, 0, &parseError{p, fmt.Sprintf("bad %s", what)}
		}
		return 0, 0, i + 2, nil
	}
	if digits == 0 || b[i] != '\r' || b[i+1] != '\n' {
		return 0, 0, 0, &parseError{p, fmt.Sprintf("bad %s", what)}
	}
	if neg {
		v = -v
	}
	return v, i + 2, 0, nil
}

// validGroupAfter returns the offset of the first valid group (annotation
// line at the start of a line, whole payload, matching checksum) that
// starts after offset from, or -1.
func validGroupAfter(f File, from, size int64) (int64, error) {
	const chunk = 1 << 20
	pat := []byte("\n" + groupPrefix)
	if from >= size {
		return -1, nil
	}
	buf := make([]byte, min(int64(chunk+len(pat)), size-from))
	for pos := from; pos < size; pos += chunk {
		n := int64(len(buf))
		if pos+n > size {
			n = size - pos
		}
		m, err := f.ReadAt(buf[:n], pos)
		if err != nil && err != io.EOF {
			return -1, err
		}
		b := buf[:m]
		for i := 0; ; {
			j := bytes.Index(b[i:], pat)
			if j < 0 {
				break
			}
			cand := pos + int64(i+j) + 1
			i += j + 1
			if cand <= from {
				continue
			}
			ok, err := validGroupAt(f, cand, size)
			if err != nil {
				return -1, err
			}
			if ok {
				return cand, nil
			}
		}
	}
	return -1, nil
}

func validGroupAt(f File, at, size int64) (bool, error) {
	var hdr [groupHeaderRoom + 8]byte
	n, err := f.ReadAt(hdr[:min(int64(len(hdr)), size-at)], at)
	if err != nil && err != io.EOF {
		return false, err
	}
	nl := bytes.IndexByte(hdr[:n], '\n')
	if nl < 0 {
		return false, nil
	}
	plen, crc, ok := parseGroupHeader(hdr[:nl+1])
	if !ok {
		return false, nil
	}
	start := at + int64(nl+1)
	if plen > size-start {
		return false, nil
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, start, plen)); err != nil {
		return false, err
	}
	return h.Sum32() == crc, nil
}

// tsPrefix starts Redis's timestamp annotation (aof-timestamp-enabled).
const tsPrefix = "#TS:"

// groupCache remembers the answer of validGroupAfter for later offsets:
// the first valid group after x is also the first after any y in [x, g).
type groupCache struct {
	valid    bool
	from, at int64 // at: first valid group after from, or -1
}

func (c *groupCache) after(f File, x, size int64) (int64, error) {
	if c.valid && x >= c.from && (c.at < 0 || x < c.at) {
		return c.at, nil
	}
	g, err := validGroupAfter(f, x, size)
	if err != nil {
		return -1, err
	}
	*c = groupCache{valid: true, from: x, at: g}
	return g, nil
}
