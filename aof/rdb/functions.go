package rdb

import (
	"encoding/binary"
	"errors"
)

// Version is the RDB version redshard writes: 10, Redis 7.0's.
const Version = 10

// Opcodes of function libraries in an RDB body.
const (
	OpFunction2 = 245 // RDB_OPCODE_FUNCTION2: the library's code
	OpFunction  = 246 // RDB_OPCODE_FUNCTION: 7.0-rc1/rc2 name, engine, description, code
)

// footerLen is the DUMP payload footer: 2 bytes of version, 8 of CRC64.
const footerLen = 10

// Errors of FUNCTION RESTORE, with Redis 7.0's reply texts
// (functionRestoreCommand and rdbFunctionLoad).
var (
	ErrDumpPayload     = errors.New("ERR DUMP payload version or checksum are wrong")
	ErrReadType        = errors.New("ERR can not read data type") // unreachable: a type is read only while bytes remain
	ErrNotFunction     = errors.New("ERR given type is not a function")
	ErrLibraryPayload  = errors.New("ERR Failed loading library payload")
	ErrLibraryName     = errors.New("ERR Failed loading library name")
	ErrEngineName      = errors.New("ERR Failed loading engine name")
	ErrDescIndicator   = errors.New("ERR Failed loading library description indicator")
	ErrDescription     = errors.New("ERR Failed loading library description")
	ErrLibraryBlob     = errors.New("ERR Failed loading library blob")
	ErrFunctionPayload = errors.New("ERR failed loading the given functions payload") // a library that fails to load without saying why
)

// AppendFooter appends the DUMP footer to the body dst: the version
// (Version) and the CRC64 of everything before the CRC, both little-endian.
func AppendFooter(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, CRC64(0, dst))
}

// CheckFooter verifies payload's footer as Redis's verifyDumpPayload does
// and returns the payload's RDB version: a payload shorter than the
// footer, of a version newer than Version, or with a wrong CRC is
// ErrDumpPayload.
func CheckFooter(payload []byte) (version uint16, err error) {
	if len(payload) < footerLen {
		return 0, ErrDumpPayload
	}
	footer := payload[len(payload)-footerLen:]
	version = binary.LittleEndian.Uint16(footer)
	if version > Version {
		return version, ErrDumpPayload
	}
	if CRC64(0, payload[:len(payload)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return version, ErrDumpPayload
	}
	return version, nil
}

// DumpFunctions returns the FUNCTION DUMP payload of the libraries whose
// codes are given, in that order: each as OpFunction2 and its code as a
// raw string, then the footer. (Redis LZF-compresses long codes under
// rdbcompression; raw is as valid, and FUNCTION RESTORE reads both.)
func DumpFunctions(codes []string) []byte {
	var b []byte
	for _, code := range codes {
		b = append(b, OpFunction2)
		b = AppendLen(b, uint64(len(code)))
		b = append(b, code...)
	}
	return AppendFooter(b)
}

// ParseFunctions returns the library codes of a FUNCTION DUMP payload, in
// payload order, or the error FUNCTION RESTORE replies with. It checks
// the footer, then reads libraries as Redis's functionRestoreCommand does:
// while more than the footer's 10 bytes are left. Like Redis it reads
// items from the whole payload, so a last item may run into the footer's
// bytes. An OpFunction library comes back as Redis rebuilds it:
// "#!<engine> name=<name>\n" + code. Compiling the codes, and refusing
// duplicates, is the caller's business.
func ParseFunctions(payload []byte) ([]string, error) {
	if _, err := CheckFooter(payload); err != nil {
		return nil, err
	}
	codes := []string{}
	for p := 0; len(payload)-p > footerLen; {
		op := payload[p]
		p++
		switch op {
		case OpFunction2:
			code, n, err := ReadString(payload[p:])
			if err != nil {
				return nil, ErrLibraryPayload
			}
			p += n
			codes = append(codes, string(code))
		case OpFunction:
			d := newBytesDecoder(payload[p:])
			code, err := readOldFunction(d)
			if err != nil {
				return nil, err
			}
			p += d.pos
			codes = append(codes, code)
		default:
			return nil, ErrNotFunction
		}
	}
	return codes, nil
}

// readOldFunction reads the body of an OpFunction library (Redis 7.0-rc1
// and rc2): name, engine name, a length that is non-zero when a
// description follows, the description, and the code. The description is
// dropped, as Redis drops it.
func readOldFunction(d *decoder) (code string, err error) {
	name, err := d.str()
	if err != nil {
		return "", ErrLibraryName
	}
	engine, err := d.str()
	if err != nil {
		return "", ErrEngineName
	}
	hasDesc, _, err := d.lenEnc() // as Redis's rdbLoadLen: an encoding byte is its low bits
	if err != nil {
		return "", ErrDescIndicator
	}
	if hasDesc != 0 {
		if _, err = d.str(); err != nil {
			return "", ErrDescription
		}
	}
	blob, err := d.str()
	if err != nil {
		return "", ErrLibraryBlob
	}
	return "#!" + string(engine) + " name=" + string(name) + "\n" + string(blob), nil
}
