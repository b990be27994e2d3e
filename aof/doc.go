// Package aof is redshard's append-only file: Redis 7's multi-part AOF,
// written with group commit, loaded and repaired with checksums.
//
// It owns the AOF folder: the manifest, the base and incremental files, the
// one writer goroutine that appends to the current incremental file and the
// syncer that fsyncs it under everysec. Producer.Append and Producer.Submit
// do no I/O and take no lock but one mutex per batch; an event loop does
// I/O only when it asks to (Log.WriteNow, below). It knows nothing of commands beyond MULTI, EXEC and
// SELECT; what to log (Redis's propagation: PXAT, SET ... KEEPTTL, DEL for
// expired keys) is the server's business, as is holding replies.
//
// # Files
//
// Everything lives in <dir>/<appenddirname> (default "appendonlydir"), with
// Redis 7's names, where F is appendfilename (default "appendonly.aof"):
//
//	F.manifest         the list of files, replaced atomically
//	F.<n>.base.aof     the base: a point-in-time image (at most one)
//	F.<n>.incr.aof     incremental files, loaded in manifest order after the base
//	temp-F.manifest    a manifest being written
//	temp-rewriteaof-bg-<pid>.aof   a base being written by a rewrite
//
// A folder created by redshard starts as redis-server starts one: an empty
// F.1.base.aof, an empty F.1.incr.aof and a manifest listing both. An
// old-style <dir>/F without a folder is moved into it as the base, as Redis
// 7 upgrades it. Base files in RDB format (aof-use-rdb-preamble yes) are not
// supported: Load refuses them by name.
//
// # Manifest
//
// One line per file, '\n'-terminated, base first, then history, then incr:
//
//	file appendonly.aof.2.base.aof seq 2 type b
//	file appendonly.aof.2.incr.aof seq 2 type i
//
// Types are b (base), h (history: to be deleted) and i (incr); incr
// sequences strictly increase. Parsing follows Redis's
// aofLoadManifestFromFile: '#' lines are comments, keys are
// case-insensitive, unknown key/value pairs are ignored, names with spaces
// or unprintable bytes are double-quoted with sdssplitargs escapes, lines
// are at most 1024 bytes. A new manifest is written to temp-F.manifest,
// fsynced, renamed over F.manifest and the folder fsynced, so a crash
// leaves the old or the new one. Open deletes history files.
//
// # Records and annotation lines
//
// The files hold RESP commands exactly as Redis writes them
// ("*<argc>\r\n" then "$<len>\r\n<bytes>\r\n" per argument), with
// "*2\r\n$6\r\nSELECT\r\n$<len>\r\n<db>\r\n" whenever the database changes.
// A new incremental file starts in no database: its first record is always
// preceded by a SELECT.
//
// redshard writes them in groups. Each group is preceded by ONE annotation
// line:
//
//	#B:<len>:<crc>\r\n
//
// where <len> is the decimal byte length of the group that follows the line
// (no sign, no leading zeros) and <crc> the CRC-32C (Castagnoli) of those
// bytes as exactly 8 lower-case hexadecimal digits; for example
//
//	#B:52:dd5d3081\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$2\r\nk0\r\n$2\r\nv0\r\n
//
// The line is at most 34 bytes, well under Redis's 1024-byte limit for
// annotations. A group holds whole batches (a batch is one Producer's
// Submit, so a multi-key command or a MULTI ... EXEC appended in one batch
// is never split), and starts at the beginning of a line. Redis 7.0's
// loader and redis-check-aof skip lines that begin with '#', so these files
// pass redis-check-aof and load in redis-server; files written by
// redis-server (no annotations, maybe "#TS:" lines) load here, and redshard
// appends annotated groups to redis-server's last incremental file. A base
// written by a rewrite is a sequence of such groups of about 1 MiB, each
// starting with its own SELECT.
//
// # Group commit
//
// Producers (one per event loop) encode commands into private buffers and
// Submit them as batches; Submit assigns a sequence number under one mutex,
// so sequence order is file order. One writer goroutine drains every
// submitted batch, builds one group (inserting SELECT between batches when
// the file's database differs from the next batch's first), writes the
// annotation line and the group with one write(2), and under "always"
// calls fdatasync once; then it publishes Written and Durable and calls
// OnDurable. Under "always", before it drains, the writer waits briefly
// (at most half an fsync) until as many commands are pending as the last
// group carried, so the clients that group released share the next fsync
// instead of following the first of them back by a whole fsync
// (gather.go). Under "everysec" it publishes Written right after the write
// (so a kill -9 loses nothing acknowledged) and a syncer goroutine calls
// fdatasync once a second; under "no" nothing is fsynced before Close. A
// failed write or fsync sets Err, reports the group's sequences through
// OnFailed, fails later submissions fast, and retries the kept group with
// backoff after cutting the file back to its last whole group.
//
// An event loop that ends its poll round while no round is under way may
// run the round itself (Log.WriteNow): under "everysec" and "no" the
// write(2); under "always", when it is the only producer (one shard), the
// write and the fdatasync too, as Redis does in beforeSleep — unless the
// smoothed fsync time is over 2 ms, when a slow disk would stall the
// loop's reads and the writer goroutine keeps the rounds. It is still one round at a time, draining every shard: the role
// of the one writer moves, the single fsync per group stays. writer.go
// states the protocol in full: positions, who signals whom, the rewrite
// barrier, what an error does.
//
// # Recovery
//
// Load reads the base and then each incremental file, and Check (the
// redshard-check-aof tool) applies the same rules:
//
//   - A group is accepted only whole: its annotation parses, its <len>
//     bytes are present, their CRC-32C matches, and they parse as whole
//     commands with MULTI/EXEC well nested. Its commands are applied only
//     after all of that is checked.
//   - Bytes outside groups (a file written by redis-server) are read as
//     Redis's loader reads them; "#TS:" lines are skipped. In a file that
//     holds group annotations any other '#' line is damage.
//   - A transaction is applied only when its EXEC has been read; a MULTI
//     still open at the end of the file is dropped (Redis's rule).
//   - The first damaged unit (group, command or line) at offset X decides:
//     if a valid group starts anywhere after X, it is corruption; otherwise
//     it is a torn tail when the file ends inside it (a short group, a cut
//     command, an open MULTI) or when it is a group or follows one (a last
//     group with garbage or zeros, as an unsynced tail may hold after a
//     power loss); a format error among bare commands (written by
//     redis-server) is corruption, as in Redis.
//   - A torn tail of the last file is cut back to the end of the last whole
//     group (or command outside a transaction) when aof-load-truncated is
//     yes, and the log says how many bytes were dropped. With
//     aof-load-truncated no, Load fails and names the file, the offset and
//     "redshard-check-aof --fix <manifest>". A torn tail in any other file is
//     fatal: only the last file can be cut.
//   - Corruption stops the load with the file, the offset of the damaged
//     group or command and the repair command. redshard-check-aof --fix
//     cuts the last file at that offset after saving the bytes it cuts to
//     "<file>.corrupt-<offset>".
//   - Each file starts in database 0, as Redis's loader starts each file
//     with a new client.
package aof
