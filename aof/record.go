package aof

import (
	"bytes"
	"hash/crc32"
	"strconv"
)

// Group annotation: "#B:<len>:<crc>\r\n", where <len> is the decimal number
// of bytes of the group that follow the line and <crc> the CRC-32C
// (Castagnoli) of those bytes as 8 lower-case hex digits. See doc.go.
const (
	groupPrefix = "#B:"
	// maxAnnotationLine is Redis's AOF_ANNOTATION_LINE_MAX_LEN: the loader
	// reads '#' lines with fgets into a buffer of this size, so a longer
	// line would be cut and its tail parsed as a command.
	maxAnnotationLine = 1024
	// groupHeaderRoom is the space reserved in front of a group's payload
	// for its annotation line, len("#B:") + 20 digits + ":" + 8 + "\r\n" =
	// 34 bytes, and for a timestamp annotation in front of it
	// (aof-timestamp-enabled): "#TS:" + up to 20 digits + "\r\n".
	groupHeaderRoom = 64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// appendGroupHeader appends the annotation line for a payload of n bytes
// with checksum crc.
func appendGroupHeader(b []byte, n int, crc uint32) []byte {
	b = append(b, groupPrefix...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ':')
	const hex = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hex[(crc>>uint(shift))&0xf])
	}
	return append(b, '\r', '\n')
}

// parseGroupHeader parses a whole annotation line (ending in "\n") that
// starts with "#B:". It is strict: decimal digits without sign or leading
// zeros, exactly 8 lower-case hex digits, then "\r\n".
func parseGroupHeader(line []byte) (n int64, crc uint32, ok bool) {
	if !bytes.HasPrefix(line, []byte(groupPrefix)) {
		return 0, 0, false
	}
	p := line[len(groupPrefix):]
	i := 0
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		if i >= 18 {
			return 0, 0, false
		}
		n = n*10 + int64(p[i]-'0')
		i++
	}
	if i == 0 || (i > 1 && p[0] == '0') || i >= len(p) || p[i] != ':' {
		return 0, 0, false
	}
	p = p[i+1:]
	if len(p) != 8+2 || p[8] != '\r' || p[9] != '\n' {
		return 0, 0, false
	}
	for _, c := range p[:8] {
		switch {
		case c >= '0' && c <= '9':
			crc = crc<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			crc = crc<<4 | uint32(c-'a'+10)
		default:
			return 0, 0, false
		}
	}
	return n, crc, true
}

// appendCommand appends argv as a RESP multibulk, as Redis's
// catAppendOnlyGenericCommand.
func appendCommand(b []byte, argv [][]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(argv)), 10)
	b = append(b, '\r', '\n')
	for _, a := range argv {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// appendSelect appends "SELECT <db>" exactly as Redis's feedAppendOnlyFile
// writes it.
func appendSelect(b []byte, db int) []byte {
	var num [20]byte
	d := strconv.AppendInt(num[:0], int64(db), 10)
	b = append(b, "*2\r\n$6\r\nSELECT\r\n$"...)
	b = strconv.AppendInt(b, int64(len(d)), 10)
	b = append(b, '\r', '\n')
	b = append(b, d...)
	return append(b, '\r', '\n')
}

// sealGroup writes the annotation line for buf[groupHeaderRoom:] into the
// room reserved in front of it and returns the bytes to write: the
// annotation line immediately followed by the payload.
func sealGroup(buf []byte) []byte { return sealGroupTS(buf, 0) }

// sealGroupTS is sealGroup with, when ts > 0, Redis's timestamp annotation
// "#TS:<unix seconds>\r\n" in front of the group's annotation line, so
// that redis-check-aof --truncate-to-timestamp cuts files between groups.
func sealGroupTS(buf []byte, ts int64) []byte {
	payload := buf[groupHeaderRoom:]
	var hdr [groupHeaderRoom]byte
	h := hdr[:0]
	if ts > 0 {
		h = appendTimestamp(h, ts)
	}
	h = appendGroupHeader(h, len(payload), checksum(payload))
	start := groupHeaderRoom - len(h)
	copy(buf[start:], h)
	return buf[start:]
}

// appendTimestamp appends Redis's timestamp annotation line.
func appendTimestamp(b []byte, ts int64) []byte {
	b = append(b, tsPrefix...)
	b = strconv.AppendInt(b, ts, 10)
	return append(b, '\r', '\n')
}
