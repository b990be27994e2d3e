// Package lua is redshard's Lua scripting engine: Redis 7.0's EVAL runtime
// (script_lua.c, eval.c) on github.com/yuin/gopher-lua, a Lua 5.1 like the
// one Redis embeds.
//
// It owns one interpreter per Engine, created once by New and reused for
// every script run; the script cache (bodies compiled once, by SHA1, as
// Redis's f_<sha> functions); Redis 7's sandbox (read-only globals and
// libraries, Redis's errors for unknown globals and for writes); the
// libraries Redis loads (base, table, string, math, bit, struct, cjson,
// cmsgpack) with Redis's encodings; the redis.* API; and the conversions
// between RESP replies and Lua values, both ways, as Redis does them.
//
// It must never do I/O, never block, never import server (or anything that
// knows about connections, shards or the log), and never keep a reference to
// a Host after a run returns. Everything a script asks of the world goes
// through the Host the caller passes to Run.
//
// # Host contract
//
// An Engine is not safe for concurrent use: one event loop owns it. During
// Run the engine calls the Host synchronously on the caller's goroutine:
//
//   - Call(dst, argv, proto) runs one command for redis.call/redis.pcall and
//     appends exactly one complete RESP reply to dst, encoded for proto (2, or
//     3 after redis.setresp(3)). Errors the server raises before running the
//     command (unknown command, ACL, OOM, noscript, wrong arity...) are
//     replies too ("-ERR ..."): the engine raises or returns them and marks
//     them as already counted in errorstats. argv and its elements are only
//     valid during the call; the host must copy what it keeps.
//   - ACLCheckCmd(argv) answers redis.acl_check_cmd: known is false for an
//     unknown command, allowed says whether the caller's user may run argv.
//   - Log(level, msg) is redis.log after the level was checked (LogDebug ..
//     LogWarning); the host filters by its verbosity.
//   - SetRepl(flags) is redis.set_repl with flags a combination of ReplAOF
//     and ReplReplica, already validated.
//
// A Host must not call back into the Engine.
package lua
