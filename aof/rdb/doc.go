// Package rdb is redshard's codec for Redis's RDB serialization format, the
// one behind RDB files, DUMP/RESTORE payloads and FUNCTION DUMP/RESTORE. It
// is a leaf package: it knows bytes, not redshard's keyspace or server.
//
// For now it holds the building blocks and what FUNCTION DUMP and FUNCTION
// RESTORE need (DumpFunctions, ParseFunctions), byte-compatible with Redis
// 7.0 (RDB version 10). The rest of the codec (value types, whole files)
// grows on the same blocks.
//
// # Lengths
//
// A length is 1, 2, 5 or 9 bytes; the top two bits of the first byte say
// which (AppendLen, ReadLen):
//
//	00xxxxxx                      6-bit length, 0..63
//	01xxxxxx xxxxxxxx             14-bit length, big-endian, 64..16383
//	10000000 + 4 bytes            32-bit length, big-endian
//	10000001 + 8 bytes            64-bit length, big-endian
//	11xxxxxx                      not a length: a special string encoding,
//	                              the low 6 bits name it (EncInt8 ...)
//
// Any other 10xxxxxx byte is corrupt. Redis always writes the shortest
// form; readers accept any form.
//
// # Strings
//
// A string is a length then that many raw bytes, or one of the special
// encodings (AppendString, ReadString):
//
//	0xC0 + 1 byte                 EncInt8: a signed 8-bit integer
//	0xC1 + 2 bytes little-endian  EncInt16
//	0xC2 + 4 bytes little-endian  EncInt32
//	0xC3 <clen> <len> <clen bytes> EncLZF: LZF-compressed, clen bytes that
//	                              decompress to exactly len bytes
//
// An integer-encoded string stands for the integer's decimal text. Redis
// (rdbSaveRawString) integer-encodes strings of at most 11 bytes that are
// the canonical decimal form of an integer in the 32-bit range, and, with
// rdbcompression on (the default), LZF-compresses strings longer than 20
// bytes when that saves at least 4 bytes; everything else is raw. Readers
// must accept all four forms whatever the writer chose.
//
// LZF (LZFCompress, LZFDecompress) is Marc Lehmann's byte-oriented LZ77: a
// control byte below 32 starts a literal run of ctrl+1 bytes; otherwise its
// top 3 bits are a match length minus 2 (7 meaning "add the next byte"),
// and its low 5 bits with the following byte are the distance back minus 1
// (up to 8192). Matches may overlap the bytes they produce.
//
// # Payloads
//
// DUMP and FUNCTION DUMP frame an RDB body with a footer (AppendFooter,
// CheckFooter):
//
//	<body> <RDB version, 2 bytes little-endian> <CRC64, 8 bytes little-endian>
//
// The CRC covers everything before it, version included. A payload shorter
// than the footer, or of a version newer than Version (10, Redis 7.0), or
// with a wrong CRC is refused with one error, ErrDumpPayload.
//
// The CRC is Redis's crc64 (CRC64): the "Jones" polynomial
// 0xad93d23594c935a9, reflected input and output, initial value 0, no final
// xor; the CRC of "123456789" is 0xe9c6d914c4b8d9ca. Go's hash/crc64 runs
// the same reflected algorithm but with ^0 in and out, and takes the
// polynomial bit-reversed (0x95ac9329ac4bc9b5), so CRC64 wraps it in two
// complements.
//
// # Functions
//
// A FUNCTION DUMP body is, for each library, the opcode OpFunction2 (245)
// and the library's source as a string (DumpFunctions). ParseFunctions also
// reads OpFunction (246), the format of Redis 7.0 release candidates:
// library name, engine name, a description-present length and the
// description if present, then the code without its "#!" line, which it
// rebuilds as Redis does ("#!<engine> name=<name>\n" + code).
package rdb
