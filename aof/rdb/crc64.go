package rdb

import "hash/crc64"

// jones is hash/crc64's table for Redis's polynomial 0xad93d23594c935a9,
// which hash/crc64 wants bit-reversed.
var jones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// CRC64 continues Redis's crc64 over p from crc (0 to start), as Redis's
// crc64(crc, p, len): reflected, no initial or final complement. Go's
// crc64.Update complements on the way in and out, so undo both.
func CRC64(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jones, p)
}
