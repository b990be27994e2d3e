package shard

import "github.com/redshard/redshard/resp"

// Ctx is what a command handler runs with: the shards it may touch, the
// client's selected database and protocol, and the reply buffer it appends to.
//
// A single-shard command may touch only the shard its keys route to; a
// multi-key command may touch the shards of all its keys (the dispatcher has
// taken them, in ascending order, for the duration of the command).
type Ctx struct {
	Shards []*Shard
	// Held: the shards this call holds (bit i: shard i), when the
	// dispatcher says so; 0 means only the shard it was routed to. A call
	// that may reach beyond its route (SCAN) reads it.
	Held  uint64
	DB    int
	Proto int    // 2 or 3
	Out   []byte // the reply is appended here

	// Prop collects what the command logs to the AOF instead of itself
	// (Redis's alsoPropagate); nil argv means "log the command as it came".
	// The server drains it after each command.
	Prop Propagation

	// NowMs is the command time snapshot in unix ms.
	NowMs int64

	// InMulti is set while the command runs inside MULTI/EXEC (or a
	// script): blocking commands then behave as if their timeout expired.
	InMulti bool
	// InScript is set while a script runs the command (Redis's
	// CLIENT_SCRIPT): SORT of a set without a sort order sorts anyway.
	InScript bool
	// SortPatternsDenied: the client's ACL user may not read every key, so
	// SORT refuses BY and GET patterns (Redis's user_has_full_key_access).
	SortPatternsDenied bool

	// Blocking commands (the server's side is server/blocking.go). A
	// blocking handler that finds nothing to serve calls Block and replies
	// nothing; the server parks the client. When one of the keys becomes
	// ready, the server runs the command again with ServeKey set: the
	// handler then tries that key only, and calls Block again when it
	// cannot serve it (the key is of another type, or gone).
	ServeKey      []byte
	BlockKeys     [][]byte // set by Block: the keys to wait for
	BlockDeadline int64    // set by Block: unix ms, 0 for no timeout
	// BlockArgv, when set with Block, is the argv the waiter runs again
	// (XREAD's $ resolved to the ID it stood for when the client blocked).
	BlockArgv [][]byte

	// OutputFull, set by the server, reports whether a reply buffer of n
	// bytes puts the client past its output buffer hard limit; if so the
	// client is being closed and gets none of its replies (see Full).
	OutputFull func(n int) bool
}

// Full reports whether the client is being closed for its output buffer
// limit (Redis's CLIENT_CLOSE_ASAP): the reply being built is never sent.
// Commands whose reply has no bound (KEYS, a negative count of HRANDFIELD,
// SRANDMEMBER, ZRANDMEMBER) ask now and then, and stop when it says so,
// leaving a reply that is dropped. It costs nothing when no limit is set.
func (c *Ctx) Full() bool { return c.OutputFull != nil && c.OutputFull(len(c.Out)) }

// fullEvery is how many elements an unbounded reply appends between two
// calls of Full (Redis checks after each batch of about a thousand).
const fullEvery = 1024

// Block asks the server to park the client until one of keys is ready or
// the deadline (unix ms, 0: none) passes. keys may alias argv.
func (c *Ctx) Block(deadline int64, keys [][]byte) {
	c.BlockKeys = keys
	c.BlockDeadline = deadline
	c.BlockArgv = nil
}

// Blocked reports whether the command called Block.
func (c *Ctx) Blocked() bool { return c.BlockKeys != nil }

// Propagation is the list of commands a write logs, in order.
type Propagation struct {
	Custom bool       // Set when the command chose what to log
	Cmds   [][][]byte // each an argv; copied by the server before the next command
	Dirty  int        // how many changes the command made (0: nothing logged)
	// ReplOnly: the command goes to replicas as it came, not to the AOF,
	// and changed nothing (Redis's forceCommandPropagation(PROPAGATE_REPL):
	// PUBLISH).
	ReplOnly bool
}

// Reset clears the propagation record (the server calls it before each command).
func (p *Propagation) Reset() {
	p.Custom = false
	p.Cmds = p.Cmds[:0]
	p.Dirty = 0
	p.ReplOnly = false
}

// Dirty records that the command changed the dataset and logs as it came.
func (c *Ctx) Dirty(n int) { c.Prop.Dirty += n }

// Propagate records a command to log in place of the one that ran; call it
// once per command to log, in order.
func (c *Ctx) Propagate(argv ...[]byte) {
	c.Prop.Custom = true
	c.Prop.Dirty++
	c.Prop.Cmds = append(c.Prop.Cmds, argv)
}

// DBOf returns the database that holds key (on the key's shard).
func (c *Ctx) DBOf(key []byte) *DB {
	return c.Shards[ShardOf(key, len(c.Shards))].DBs[c.DB]
}

// Now is the command time snapshot in unix ms.
func (c *Ctx) Now() int64 { return c.NowMs }

// Reply helpers: thin wrappers that keep handlers short.

func (c *Ctx) Err(msg string)    { c.Out = resp.AppendError(c.Out, msg) }
func (c *Ctx) OK()               { c.Out = append(c.Out, "+OK\r\n"...) }
func (c *Ctx) Simple(s string)   { c.Out = resp.AppendSimple(c.Out, s) }
func (c *Ctx) Int(n int64)       { c.Out = resp.AppendInt(c.Out, n) }
func (c *Ctx) Bulk(b []byte)     { c.Out = resp.AppendBulk(c.Out, b) }
func (c *Ctx) BulkStr(s string)  { c.Out = resp.AppendBulkString(c.Out, s) }
func (c *Ctx) Null()             { c.Out = resp.AppendNull(c.Out, c.Proto) }
func (c *Ctx) NullArray()        { c.Out = resp.AppendNullArray(c.Out, c.Proto) }
func (c *Ctx) Array(n int)       { c.Out = resp.AppendArrayLen(c.Out, n) }
func (c *Ctx) Map(n int)         { c.Out = resp.AppendMapLen(c.Out, n, c.Proto) }
func (c *Ctx) Set(n int)         { c.Out = resp.AppendSetLen(c.Out, n, c.Proto) }
func (c *Ctx) Double(f float64)  { c.Out = resp.AppendDouble(c.Out, f, c.Proto) }
func (c *Ctx) Bool(b bool)       { c.Out = resp.AppendBool(c.Out, b, c.Proto) }
func (c *Ctx) Verbatim(b []byte) { c.Out = resp.AppendVerbatim(c.Out, b, c.Proto) }

// Redis's shared error replies.
const (
	ErrWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrSyntax     = "ERR syntax error"
	ErrNotInt     = "ERR value is not an integer or out of range"
	ErrNotFloat   = "ERR value is not a valid float"
	ErrOverflow   = "ERR increment or decrement would overflow"
	ErrNoSuchKey  = "ERR no such key"
	ErrDBIndex    = "ERR DB index is out of range"
	ErrInvalidExp = "ERR invalid expire time in '%s' command"
)

// Flags of a command's routing, beyond its key positions.
const (
	// AllShards: the command reads or writes every shard (DBSIZE, KEYS,
	// FLUSHALL, SWAPDB, RANDOMKEY): all shards are taken for it.
	AllShards = 1 << iota
)

// Command is one row of the data command table: the handler and how to find
// the shards it needs. Arity, flags and key positions come from the command
// metadata in server, joined by name.
type Command struct {
	Name  string
	Run   func(c *Ctx, argv [][]byte)
	Route int // AllShards or 0
	// Keys returns the argv positions of the keys, when the metadata's
	// (first, last, step) does not say it (nil: use the metadata).
	Keys func(argv [][]byte, dst []int) []int
	// Shard picks the shard directly (SCAN: from its cursor); nil: by keys.
	Shard func(argv [][]byte, nshards int) int
	// ExtraShards, when set, returns the shards (bit i: shard i of nshards)
	// this call reads beyond its keys, 0 for none: SORT's BY and GET
	// patterns name keys built from the sorted values. The dispatcher
	// takes them with the keys' shards, so the handler may read any key on
	// them through DBOf.
	ExtraShards func(argv [][]byte, nshards int) uint64
}
