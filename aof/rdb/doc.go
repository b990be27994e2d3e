// Package rdb is redshard's codec for Redis's RDB serialization format, the
// one behind RDB files, DUMP/RESTORE payloads and FUNCTION DUMP/RESTORE. It
// is a leaf package: it knows bytes, not redshard's keyspace or server.
//
// It reads whole RDB files of versions 1 to 10 (Redis 2.6 to 7.0: Read,
// Parse, with a Handler for what they find) and writes version 10 files as
// Redis 7.0 does (Writer); it encodes and decodes DUMP payloads
// (EncodeDump, DecodeDump) and FUNCTION DUMP payloads (DumpFunctions,
// ParseFunctions). Values come and go in a neutral representation (Value:
// a string, a list, a set, a sorted set, a hash or a stream), whatever
// Redis encoding they had; the caller builds its own from it. Redis 7.2's
// RDB 11 and its types are not read (UnsupportedTypeError).
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
// # Files
//
// A file is the magic "REDIS" and the version as 4 ASCII digits
// ("REDIS0010"), then items, each an opcode byte or a value type byte:
//
//	250 AUX           name and value, two strings: redis-ver, redis-bits,
//	                  ctime, used-mem, aof-base (Redis 7.0), repl-* ...
//	254 SELECTDB      a length: the database of the keys that follow
//	251 RESIZEDB      two lengths: the database's keys and keys with expiry
//	252 EXPIRETIME_MS 8 bytes little-endian: the next key's expiry, Unix ms
//	253 EXPIRETIME    4 bytes little-endian: the same in seconds (RDB < 3)
//	248 IDLE          a length: the next key's LRU idle time, seconds
//	249 FREQ          1 byte: the next key's LFU counter
//	245 FUNCTION2     a library's code (see Functions)
//	246 FUNCTION      a library in the 7.0-rc format
//	247 MODULE_AUX    module data outside the keyspace: a length (the module
//	                  id), the "when" as an opcode (2) and a length, then
//	                  annotated data; Read skips it as redis-check-rdb does
//	                  and reports the module's name (Handler.ModuleAux)
//	255 EOF           then, from version 5, the CRC64 of every byte before
//	                  it, 8 bytes little-endian; 0 means rdbchecksum was off
//	0..21 a key       the value type, the key as a string, the value
//
// A module id is 64 bits: 9 characters of 6 bits each
// ("A-Za-z0-9-_") naming the module type, then a 10-bit encoding version.
// Values of module types (6, 7) cannot be loaded without the module: Read
// returns a ModuleValueError naming it.
//
// # Values
//
// Every count and length below is a length (see Lengths), every element a
// string (see Strings), unless said otherwise.
//
//	0  STRING           a string
//	1  LIST             count, elements (Redis < 3.2)
//	2  SET              count, members
//	3  ZSET             count, member and score; a score is a length byte
//	                    and that much ASCII text, or 253 nan, 254 +inf,
//	                    255 -inf (Redis < 4.0)
//	4  HASH             count, field and value
//	5  ZSET_2           count, member and score as 8 bytes little-endian
//	                    IEEE 754; Redis writes the skiplist tail first
//	6, 7 MODULE         module id, then the module's data
//	9  HASH_ZIPMAP      a string holding a zipmap (Redis < 2.6)
//	10 LIST_ZIPLIST     a string holding a ziplist
//	11 SET_INTSET       a string holding an intset
//	12 ZSET_ZIPLIST     a ziplist of member, score (as text or integer), ...
//	13 HASH_ZIPLIST     a ziplist of field, value, ...
//	14 LIST_QUICKLIST   count, then that many ziplists (strings)
//	15 STREAM_LISTPACKS   a stream (see Streams), Redis 5.0 to 6.2
//	19 STREAM_LISTPACKS_2 the same with Redis 7.0's counters
//	21 STREAM_LISTPACKS_3 Redis 7.2: not read
//	16 HASH_LISTPACK    a string holding a listpack of field, value, ...
//	17 ZSET_LISTPACK    a listpack of member, score, ... sorted by score
//	                    then member
//	18 LIST_QUICKLIST_2 count, then per node a length, 2 PACKED (a
//	                    listpack string follows) or 1 PLAIN (one element)
//	20 SET_LISTPACK     Redis 7.2: not read
//
// A listpack: total bytes (4, little-endian), element count (2; 65535
// means "count them"), entries, 0xFF. An entry is an encoding, its data,
// and its backlen (the size of encoding and data, 7 bits a byte, most
// significant first, every byte but the first with the high bit set):
//
//	0xxxxxxx                  7-bit unsigned integer
//	10xxxxxx + data           string of up to 63 bytes
//	110xxxxx yyyyyyyy         13-bit signed integer
//	1110xxxx yyyyyyyy + data  string of up to 4095 bytes
//	11110000 + 4 bytes + data string, 32-bit little-endian length
//	11110001..11110100        16, 24, 32, 64-bit signed integer, little-endian
//
// A ziplist: total bytes (4), offset of the last entry (4), count (2),
// entries, 0xFF. An entry is the previous entry's size (1 byte below 254,
// else 0xFE and 4 bytes), then 00xxxxxx, 01xxxxxx+1 (big-endian) or
// 0x80+4 (big-endian) string lengths and the bytes, or integers: 0xC0
// int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8 (little-endian),
// 0xF1..0xFD the values 0..12. An intset: encoding (4: 2, 4 or 8 bytes an
// integer), count (4), the integers little-endian, strictly ascending. A
// zipmap: a count byte (254 and up: unknown), then per pair the key
// length (1 byte below 254, else 254 and 4 bytes), key, value length, a
// free-bytes count (1 byte), value and the free bytes; then 0xFF.
// Integer entries read back as their decimal text.
//
// Writers store strings that are the canonical decimal text of an int64
// as integers, in the smallest encoding: Redis's lpAppend does, and this
// package's writer too; a zset listpack score that is an integer (within
// ±2^62) is stored as one, any other as its %.17g text ("inf", "-inf").
//
// # Streams
//
// A stream (types 15 and 19) is its entries in listpack nodes, then its
// counters, then its consumer groups:
//
//	count of nodes, then per node:
//	  master ID   a 16-byte string: ms and seq, 8 bytes each, big-endian
//	              (streamEncodeID), so that IDs sort as bytes
//	  listpack    a string holding the node's entries
//	length        the live entries
//	last ID       two lengths, ms and seq: the greatest ID ever added
//	first ID      two lengths (type 19): the first live entry's
//	max-deleted   two lengths (type 19): the greatest ID deleted
//	entries-added a length (type 19): entries ever added
//	count of groups, then per group:
//	  name, last delivered ID (two lengths),
//	  entries-read a length (type 19); -1 (stored as 2^64-1) is unknown
//	  count of pending entries, then per entry its ID (16 raw bytes as
//	  above), the last delivery time (8 bytes little-endian, Unix ms) and
//	  the delivery count (a length)
//	  count of consumers, then per consumer its name, the seen time (8
//	  bytes little-endian, Unix ms), a count and that many 16-byte IDs:
//	  its pending entries, each also in the group's
//
// A node's listpack starts with its master entry: the count of live
// entries, the count of deleted ones, the number of master fields, the
// field names, and 0. Each entry (deleted ones too, in ID order) follows:
//
//	flags        1 DELETED, 2 SAMEFIELDS (its fields are the master's)
//	ms, seq      the differences from the master ID (wrapping, signed)
//	[num-fields, field, value, ...]   without SAMEFIELDS
//	[value, ...]                      with SAMEFIELDS, one per master field
//	lp-count     the elements before it: 3 + num-fields, plus num-fields
//	             and 1 without SAMEFIELDS, to walk the node backwards
//
// Every element but the names and values is an integer (Redis accepts
// one in a string entry too). The master ID is the ID of the first entry
// added to the node, so no entry is before it; deleted entries keep their
// place until the node empties, and an empty node is removed.
//
// Redis makes a node when the stream has none, or the last node's bytes
// plus the new entry's field and value bytes reach stream-node-max-bytes
// (4096; 0 means 1 GB), or it holds stream-node-max-entries entries (100,
// deleted included; 0 means no limit). A SAVE writes the nodes as they
// are, deleted entries and all.
//
// Redis 7.0 loading a type 15 stream sets entries-added to the length,
// max-deleted to 0-0 and the first ID to the first live entry's (the
// maximal ID 2^64-1-2^64-1 for none), and estimates each group's
// entries-read from its last ID (streamEstimateDistanceFromFirstEverEntry):
// 0 when nothing was ever added; entries-added at the stream's last ID (in
// an empty stream, at or before it); -1 after it; when no deletion is
// known past the first entry (max-deleted 0-0 or before the first ID),
// entries-added - length before the first entry and one more at it; else
// -1. The reader does the same. Empty streams are values: they are kept,
// not skipped.
//
// # Reading rules
//
// Read takes an io.Reader and Parse a []byte; both report the same and
// check the same. Every declared length or count is checked against the
// input before anything is allocated: Parse against the bytes left, Read
// by reading at most a megabyte ahead of what it has, so a bogus length
// ends in ErrShort, never in a huge allocation. Blobs are walked entirely:
// sizes, counts, terminators, backlens and prevlens must agree, intsets
// must be sorted; sets, hashes and sorted sets must not repeat a member
// (ErrDuplicate), and scores must not be NaN (ErrNaNScore). Empty
// collections are skipped, as Redis skips them (Summary.Empty); empty
// streams are not. Malformed input is an *Error with the offset of the
// item; nothing panics. Trailing bytes after EOF and its checksum are
// ignored, as Redis ignores them.
//
// A stream is checked as Redis 7.0's loader checks it with deep
// sanitization, and further (ErrBadStream): node keys are 16 bytes and
// distinct, no listpack is empty (a node of no entries, only a master
// entry, loads, as in Redis), every node's structure is walked to its end
// (integers where integers belong, the master entry's terminating 0,
// lp-counts, the live and deleted counts); groups, consumers and a group's
// pending entries must not repeat, a consumer's pending IDs must be in its
// group's PEL, and every pending entry must have a consumer. Beyond Redis,
// the live count and the length must match the entries, IDs must ascend
// within and across nodes from each master ID, the last ID must not be
// before the last entry, and no entry may be pending for two consumers.
// Nodes are taken in master-ID order, pending entries in ID order, as
// Redis's radix trees keep them; groups and consumers in the file's order
// (Redis writes them by name).
//
// # Writing rules
//
// Writer writes what Redis 7.0's rdbSaveRio does: the magic "REDIS0010";
// aux fields redis-ver "7.0.15", redis-bits "64", ctime, used-mem, any
// extra (Header.Extra), aof-base; FUNCTION2 per library; per database
// SELECTDB and RESIZEDB; per key EXPIRETIME_MS if it expires, the type,
// the key and the value; EOF; the CRC64 (0 with Options.Checksum off).
// Encodings are those Redis 7.0 gives a value built by commands under the
// same thresholds (Options, named after the configuration): lists are
// QUICKLIST_2 of listpack nodes filled as Redis's quicklist fills them
// under list-max-listpack-size, with a PLAIN node for an element of 1 GB
// or more; a set is SET_INTSET if its members are all integers and at
// most set-max-intset-entries, else SET; a hash is HASH_LISTPACK within
// hash-max-listpack-entries and -value (field and value lengths), else
// HASH; a sorted set ZSET_LISTPACK within zset-max-listpack-entries and
// -value, else ZSET_2; a stream is STREAM_LISTPACKS_2 with its nodes
// filled as XADD fills them under stream-node-max-bytes and -entries
// (Options.StreamNodeMaxBytes, StreamNodeMaxEntries), no deleted entries,
// groups, consumers and PELs in Redis's order. Strings are integer-encoded and LZF-compressed as
// AppendString says (Options.Compress: rdbcompression). Without
// compression, a DUMP payload from EncodeDump is byte-equal to Redis's
// for every encoding whose order is fixed (all but SET and HASH, which
// follow Redis's hash table order, and streams with deleted entries,
// which Redis keeps in its nodes); this package's LZF is valid but
// finds other matches than Redis's.
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
