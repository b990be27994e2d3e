// Package lua is redshard's Lua scripting engine: Redis 7.0's EVAL and
// FUNCTION runtimes (script_lua.c, eval.c, function_lua.c) on
// github.com/yuin/gopher-lua, a Lua 5.1 like the one Redis embeds.
//
// It owns one interpreter per Engine, created once by New (EVAL) or
// NewFunctions (FUNCTION LOAD, FCALL) and reused for every run; the EVAL
// script cache (bodies compiled once, by SHA1, with their shebang flags;
// at most MaxEvalScripts brought in by EVAL alone, least recently used
// evicted first); Redis 7's sandbox (read-only globals and libraries,
// Redis's errors for unknown globals and for writes); the libraries Redis
// loads (base, table, string, math, bit, struct, cjson, cmsgpack) with
// Redis's encodings; the redis.* API; and the conversions between RESP
// replies and Lua values, both ways, as Redis does them.
//
// It must never do I/O, never block, never import server (or anything that
// knows about connections, shards or the log), and never keep a reference to
// a Host after a run returns. Everything a script asks of the world goes
// through the Host the caller passes to Eval, EvalSHA or FCall. What a
// script may do (flags, OOM, read-only variants, busy time, whether a
// running script may still be killed) is the server's decision; the engine
// reports the flags and carries out Kill.
//
// # Host contract
//
// An Engine is not safe for concurrent use: one event loop owns it (RunID
// and Kill are the exceptions, callable from any goroutine). During a run
// the engine calls the Host synchronously on the caller's goroutine:
//
//   - Call(dst, argv, proto) runs one command for redis.call/redis.pcall and
//     appends exactly one complete RESP reply to dst, encoded for proto (2, or
//     3 after redis.setresp(3)). Errors the server raises before running the
//     command (unknown command, ACL, OOM, noscript, wrong arity...) are
//     replies too ("-ERR ..."): the engine raises or returns them and marks
//     them as already counted in errorstats (Status.Counted). argv and its
//     elements are only valid during the call; the host must copy what it
//     keeps. A malformed reply becomes an error for the script, never a
//     panic.
//   - ACLCheckCmd(argv) answers redis.acl_check_cmd: known is false for an
//     unknown command, allowed says whether the caller's user may run argv.
//   - Log(level, msg) is redis.log after the level was checked (LogDebug ..
//     LogWarning); the host filters by its verbosity.
//   - SetRepl(flags) is redis.set_repl with flags a combination of ReplAOF
//     and ReplReplica, already validated.
//
// A Host must not call back into the Engine.
//
// # Known differences from Redis 7.0
//
// gopher-lua is not PUC Lua: concatenating a number (..) formats it the Go
// way (1e15 as "1000000000000000", 1/3 with 16 digits) where Lua 5.1 uses
// "%.14g" (tostring, string.format, the string library, redis.log and
// cjson do use "%.14g", and tonumber reads as 5.1: coerce.go); a chunk is
// checked by Lua 5.1's own lexer and parser rules first (syntax.go), so
// syntax errors are 5.1's, word for word, and chunks 5.1 refuses are
// refused (gopher-lua alone ran some: "1e", "\300", "{a, ,b}", a leading
// ";"), but gopher-lua still refuses the few 5.1 chunks it cannot compile
// ("goto" as a name, hexadecimal numbers with an exponent, "0x1p4");
// runtime errors lack 5.1's variable names ("attempt to index a nil value"
// without "(local 't')"); cjson and cmsgpack emit map members in insertion
// order, not Lua's hash order; collectgarbage and gcinfo report 0 (the Lua
// heap is the Go heap). string.rep refuses results over 512MB rather than
// letting a script exhaust memory.
package lua
