// Package crashtest is redshard-crashtest: it crashes a Redis-compatible
// server under pipelined load, restarts it on the same folder and checks
// what survived. It is a black-box client — it imports nothing of the
// server (no server, shard or aof), speaks RESP2 through a small client of
// its own (requests encoded with the leaf package resp), and runs unchanged
// against redis-server. It may import crashfs, the FUSE layer that cuts the
// power.
//
// # The model
//
// Each writer is one client on its own connection, at pipeline depth 1 or
// 16, with a sequence of ops it generates as it goes. An op is one command
// or one MULTI ... EXEC block:
//
//	SET k v, SET k v PX <long>, INCR n, RPUSH l v, HSET h f v, XADD x <i+1>-0 f v,
//	DEL key, EXPIRE key <long>, MSET over three hash tags, MULTI INCR/RPUSH/HSET
//	EXEC over three tags, EVAL of a script that SETs one tag's key and RPUSHes
//	another's.
//
// A client's keys are "{c<id><tag>}:<kind>" for four tags and five kinds
// (string, counter, list, hash, stream); the kind is in the name, so every
// key is read with the command of its type. Multi-key ops use keys of
// different tags, so with several shards they span shards. The value of op
// i of client c is "c<c>.o<i>": every value is unique and names its op.
// TTLs are a day or more, so nothing expires while the tool runs; a key's
// state includes whether it has a TTL. The last tag's list, hash and stream
// are never deleted, so the middle of the log holds values still served.
//
// The model keeps, per op, the state each key it touches is left in: a
// 64-bit digest of the value (a list's or stream's chains its elements in
// order; a hash's sums its fields', so field order does not matter) and the
// TTL flag. The model never stores long values, and a state read back from
// the server compares with a model state in O(1). Every reply is checked
// against the model while the load runs (INCR's count, RPUSH's length,
// EXEC's array...): a reply the model does not expect fails the row.
//
// Readers read random keys of random clients and record every present
// value they are shown, with the time of the reply.
//
// For each writer the run counts: sent, the ops whose bytes went to the
// socket (no later op can have been applied), and the moment each reply
// arrived (acked ops; replies come in order, so the acked ops are a
// prefix).
//
// # The check
//
// After the restart every key of every client is read with its PTTL. For
// each client the check looks for a prefix length k with
//
//	need <= k <= sent
//
// whose model state equals what the server holds, key by key. need is the
// larger of: the number of acked ops, and i+1 for every op i whose value a
// reader saw. The walk is linear: k goes up from 0, applying op k's effects
// to the model and keeping the count of keys whose model state differs from
// the server's; every k where that count is 0 matches. A multi-key op is one
// step, so a half-applied MSET, MULTI/EXEC or script matches no prefix. A
// value a reader saw that no op wrote fails the row.
//
// The fsync policy decides need:
//
//   - always: every acked op and every value a reader saw (margin 0).
//   - everysec: only those acknowledged (or shown) more than --margin
//     (default 2 s) before the crash: Redis promises about one second, and a
//     write may wait up to two behind a slow background fsync. The crash
//     moment is when SIGKILL was sent, or when the process was seen to exit
//     for a failpoint.
//   - no: as everysec for crashes of the process; a power cut is allowed to
//     lose anything (need 0: only the prefix and atomicity are checked).
//
// The verdict of a kill-like row (kill, failpoints, torn-tail, rewrite-kill,
// corrupt-middle) under everysec and no is the policy's, as above, so that
// the tool gives redis-server its documented promise. Each row also reports
// the strict count — acknowledged ops lost, whatever the margin — in its
// "acked lost" column and detail; --strict makes that strict check the
// verdict of every row but power loss. redshard promises it (replies wait
// for write(2) under everysec too), so its CI runs with --strict;
// redis-server under everysec does not (with a background fsync running, it
// postpones write(2) up to two seconds while it still replies).
//
// # The scenarios
//
// Each row starts the server on a fresh folder, runs the load, crashes it
// and restarts it:
//
//   - kill: SIGKILL (to the process group) at a random moment under load.
//   - failpoint:<name>: DEBUG FAILPOINT SET <name> crash [SKIP n] under
//     load; a rewrite point gets a BGREWRITEAOF, an RDB point a BGSAVE;
//     load-record kills, then restarts once with --failpoint "load-record=crash
//     SKIP n" (the load dies part way), then restarts plainly. A server that
//     answers DEBUG FAILPOINT LIST with an error has none: those rows skip.
//   - power, power-torn: the server's {dir} is a crashfs mount; after the
//     SIGKILL the file system forgets what was not fsynced (power-torn keeps
//     a random part of the first lost write) and the server restarts on what
//     a disk would have kept. Readers watch throughout. Before the load the
//     tool fsyncs {dir} once, as a journal commit would soon after the first
//     start, so these rows test the steady state.
//   - power-rewrite: a BGREWRITEAOF runs to its end under load, the load
//     goes on (at least the margin and a second more), then the power is
//     cut: the new base, manifest and incremental file must all be durable.
//   - power-first-start: power without that fsync: it passes only if the
//     server made its new log folder's name durable itself.
//   - torn-tail: after a kill, the first part of a record (half the time
//     behind a redshard annotation line) is appended to the last incremental
//     file; the restart must cut it and lose nothing acknowledged, and the
//     torn record's key must not exist.
//   - corrupt-middle: the writers stop, every op is acknowledged, then a
//     SIGKILL, and one byte of a value the server still serves, in the middle
//     third of the largest log file, is flipped. Passing means refusing to
//     start (the log's last line names the problem) or starting with data
//     that passes the check; serving a value nobody wrote fails.
//   - rewrite-kill: BGREWRITEAOF, slowed with rdb-key-save-delay to last
//     about half a second, then SIGKILL at a random moment within it.
//
// Power rows skip with crashfs.Available's reason where FUSE is missing.
package crashtest
