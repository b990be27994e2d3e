package server

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/redshard/redshard/acl"
	"github.com/redshard/redshard/shard"
)

// Cmd is one entry of the command table: a data command from shard's table
// or a server command from serverCommands, joined with its metadata (arity,
// flags, key positions) by name.
type Cmd struct {
	name     string // lower case; "get", or "get" for a subcommand's own name
	fullName string // "config|get" for subcommands
	id       int
	meta     *CommandMeta
	arity    int
	flags    cmdFlags

	first, last, step int
	keys              func(argv [][]byte, dst []int) []int
	shardFn           func(argv [][]byte, n int) int
	allShards         bool
	home              bool // runs on the client's home loop (client state)
	// allShardsIf, when set, says whether this call needs every loop
	// parked after all (DEBUG LOADAOF, CONFIG SET appendonly).
	allShardsIf func(argv [][]byte) bool
	// extraShards, when set, returns the shards a data command's call reads
	// beyond its keys (shard.Command.ExtraShards: SORT's BY/GET patterns).
	extraShards func(argv [][]byte, n int) uint64

	run  func(c *shard.Ctx, argv [][]byte)
	exec func(x *Exec, argv [][]byte)

	script int // scriptEval, scriptEvalSHA, scriptFCall (script.go), or 0
	// resetRDB: FLUSHALL, which stops a BGSAVE before it runs and saves
	// the empty data set after it (snapshot.go's stopBgsaveForFlush and
	// saveAfterFlush, Redis's flushAllDataAndResetRDB).
	resetRDB bool

	subs   map[string]*Cmd
	parent *Cmd

	// The ACL's view (acl.go): its command, whether it has keys, whether
	// they are found without allocating (one index/range key spec with
	// fixed flags, aclKF), and how its channels are found.
	acl        *acl.Command
	aclHasKeys bool
	aclSimple  bool
	aclKF      acl.KeyFlags
	aclChan    uint8
	aclSort    bool // SORT, SORT_RO: BY and GET patterns need every key readable
	// The simple key spec's numbers, copied here so the check reads no
	// key spec (aclSpan): first key, last key (relative, or from the end
	// when negative), step, and limit. aclSet: SET, whose plain
	// three-argument form is one key with the update flag.
	aclFirst, aclLastKey, aclStep, aclLimit int
	aclSet                                  bool
	// aclOneKey: the argv position of the command's only key when it has
	// one simple key spec of one key and no channels (GET, INCR, HSET...):
	// the check's fast accept (acl.Rules.AllowsKey) applies; else 0.
	aclOneKey int
}

type cmdFlags uint32

const (
	flagWrite cmdFlags = 1 << iota
	flagReadonly
	flagDenyOOM
	flagAdmin
	flagNoAuth
	flagLoading
	flagStale
	flagFast
	flagNoScript
	flagPubSub
	flagBlocking
	flagNoMulti
	flagAllowBusy
	flagMayReplicate
	flagNoAsyncLoading
)

// flagByName maps the metadata's flag names to the flags dispatch uses.
var flagByName = map[string]cmdFlags{
	"write": flagWrite, "readonly": flagReadonly, "denyoom": flagDenyOOM,
	"admin": flagAdmin, "no_auth": flagNoAuth, "loading": flagLoading,
	"stale": flagStale, "fast": flagFast, "noscript": flagNoScript,
	"pubsub": flagPubSub, "blocking": flagBlocking, "no_multi": flagNoMulti, "allow_busy": flagAllowBusy,
	"may_replicate": flagMayReplicate, "no_async_loading": flagNoAsyncLoading,
}

// serverCmd is a row of the server command table.
type serverCmd struct {
	name      string // "ping", or "client|list"
	exec      func(x *Exec, argv [][]byte)
	allShards bool // needs every loop parked (INFO, CLIENT LIST, ...)
	home      bool // touches only the client (runs on its home loop)
	// keys returns the argv positions that route the command (DEBUG
	// OBJECT key); nil: the metadata's key positions.
	keys func(argv [][]byte, dst []int) []int
	// allShardsIf: this call needs every loop parked (see Cmd).
	allShardsIf func(argv [][]byte) bool
	// shardFn, when set, names the one shard the call runs on (see Cmd).
	shardFn func(argv [][]byte, n int) int
}

func (srv *Server) buildCommandTable() {
	srv.cmds = make(map[string]*Cmd)
	add := func(full string, c *Cmd) {
		meta := LookupMeta(full)
		if meta == nil {
			panic("server: no metadata for command " + full)
		}
		if old := srv.cmds[full]; old != nil && old.subs != nil && !strings.Contains(full, "|") {
			// A container with a handler of its own (COMMAND with no
			// subcommand) whose subcommands were registered first.
			old.run, old.exec, old.keys = c.run, c.exec, c.keys
			old.allShards, old.home, old.allShardsIf = c.allShards, c.home, c.allShardsIf
			return
		}
		c.fullName = full
		c.meta = meta
		c.arity = meta.Arity
		c.first, c.last, c.step = meta.FirstKey, meta.LastKey, meta.KeyStep
		for _, f := range meta.Flags {
			c.flags |= flagByName[f]
		}
		c.id = len(srv.cmdList)
		srv.cmdList = append(srv.cmdList, c)
		if parent, sub, ok := strings.Cut(full, "|"); ok {
			p := srv.cmds[parent]
			if p == nil {
				p = &Cmd{name: parent}
				pm := LookupMeta(parent)
				if pm == nil {
					panic("server: no metadata for container " + parent)
				}
				p.fullName, p.meta, p.arity = parent, pm, pm.Arity
				p.subs = make(map[string]*Cmd)
				p.id = len(srv.cmdList)
				srv.cmdList = append(srv.cmdList, p)
				srv.cmds[parent] = p
			}
			if p.subs == nil {
				p.subs = make(map[string]*Cmd) // a command that is also a container
			}
			c.name = sub
			c.parent = p
			p.subs[sub] = c
			return
		}
		c.name = full
		srv.cmds[full] = c
	}
	for _, row := range shard.Commands {
		add(row.Name, &Cmd{run: row.Run, keys: row.Keys, shardFn: row.Shard, allShards: row.Route&shard.AllShards != 0,
			extraShards: row.ExtraShards})
	}
	for _, row := range serverCommands {
		add(row.name, &Cmd{exec: row.exec, keys: row.keys, allShards: row.allShards, home: row.home, allShardsIf: row.allShardsIf,
			shardFn: row.shardFn})
	}
	sort.Slice(srv.cmdList, func(i, j int) bool { return srv.cmdList[i].id < srv.cmdList[j].id })
	for name, kind := range map[string]int{"eval": scriptEval, "eval_ro": scriptEval, "evalsha": scriptEvalSHA,
		"evalsha_ro": scriptEvalSHA, "fcall": scriptFCall, "fcall_ro": scriptFCall} {
		srv.cmds[name].script = kind
	}
	srv.cmds["flushall"].resetRDB = true
	if c := srv.cmds["scan"]; c != nil {
		c.shardFn, c.extraShards = nil, srv.scanShards
	}
	// rename-command: the command answers to its new name only ("" hides
	// it); its stats, COMMAND INFO and errors keep the original name, as
	// in Redis. LoadConfig has checked the directives.
	for _, r := range srv.cfg.CommandRenames() {
		from, to := strings.ToLower(r[0]), strings.ToLower(r[1])
		c := srv.cmds[from]
		if c == nil {
			continue
		}
		delete(srv.cmds, from)
		if to != "" {
			srv.cmds[to] = c
		}
	}
	// A data command with movable keys (numkeys, STORE, ...) and no key
	// finder of its own is routed by the same key finding as COMMAND GETKEYS.
	for _, c := range srv.cmdList {
		if c.run != nil && c.keys == nil && c.meta != nil && c.meta.HasFlag("movablekeys") {
			c.keys = func(argv [][]byte, dst []int) []int {
				for _, k := range commandKeys(c, argv) {
					dst = append(dst, k.pos)
				}
				return dst
			}
		}
	}
}

// topCommandNames returns the names of the top-level commands, lower case
// (what rename-command may name).
func topCommandNames() map[string]bool {
	names := make(map[string]bool, len(shard.Commands)+len(serverCommands))
	for _, row := range shard.Commands {
		name, _, _ := strings.Cut(row.Name, "|")
		names[name] = true
	}
	for _, row := range serverCommands {
		name, _, _ := strings.Cut(row.name, "|")
		names[name] = true
	}
	return names
}

// lookup finds the command for argv (resolving a container's subcommand)
// without allocating. It returns the container itself when the subcommand
// is unknown or missing, so the caller can answer Redis's errors.
func (srv *Server) lookup(argv [][]byte) *Cmd {
	var buf [32]byte
	name := argv[0]
	if len(name) > len(buf) {
		return nil
	}
	lower := toLower(buf[:0], name)
	c := srv.cmds[string(lower)]
	if c == nil || c.subs == nil || len(argv) < 2 {
		return c
	}
	if len(argv[1]) > len(buf) {
		return c
	}
	if sc := c.subs[string(toLower(buf[:0], argv[1]))]; sc != nil {
		return sc
	}
	return c
}

// cmdCache remembers a loop's last command as it was spelled: pipelines
// repeat one command, and comparing the name's bytes is cheaper than
// lowering it and looking it up in the table (the map lookup was 10% of
// the server's CPU samples at GET -P 16).
type cmdCache struct {
	name [16]byte
	n    int
	cmd  *Cmd
}

// lookup is Server.lookup through the loop's cache. Commands with
// subcommands are not cached, nor are their subcommands (the name is the
// parent's: the next argument decides).
func (cl *Client) lookup(argv [][]byte) *Cmd {
	l := cl.loop
	if l == nil {
		return cl.srv.lookup(argv)
	}
	cc := &l.cmdCache
	if name := argv[0]; cc.cmd != nil && string(name) == string(cc.name[:cc.n]) {
		return cc.cmd
	}
	c := cl.srv.lookup(argv)
	if c != nil && c.subs == nil && c.parent == nil && len(argv[0]) <= len(cc.name) {
		cc.n = copy(cc.name[:], argv[0])
		cc.cmd = c
	}
	return c
}

func toLower(dst, b []byte) []byte {
	for _, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		dst = append(dst, ch)
	}
	return dst
}

// route decides where a command runs. It answers and returns rejected for a
// command that must not run (unknown, wrong arity, not authenticated, ...).
// target is the shard for a single-shard command (-1: the home loop); mask is
// the set of shards for a cross-shard transaction (0: none).
func (cl *Client) route(argv [][]byte) (cmd *Cmd, target int, mask uint64, rejected bool) {
	cmd = cl.lookup(argv)
	if msg := cl.check(cmd, argv); msg != "" {
		if cmd != nil && cmd.parent == nil && cmd.subs == nil {
			cl.lastCmd = cmd.fullName
		}
		// A -NOPERM: its ACL LOG entry, whose client-info names the
		// command, as Redis's does (acl.go).
		cl.aclLogDenied(cmd, argv)
		cl.reject(cmd, msg)
		return nil, 0, 0, true
	}
	if cl.multi.active { // MULTI: queue, or route EXEC over its shards (multi.go)
		if cl.srv.busy.mask.Load() != 0 && cmd.flags&flagAllowBusy == 0 {
			// A script is busy: inside MULTI every command is refused, as in
			// Redis, whatever its keys, so that EXEC answers EXECABORT and
			// none of the transaction runs (busy.go).
			cl.reject(cmd, cl.srv.busyError())
			return nil, 0, 0, true
		}
		target, mask, done := cl.routeMulti(cmd, argv)
		if done {
			return nil, 0, 0, true
		}
		return cmd, target, mask, false
	}
	target, mask = cl.placement(cmd, argv)
	if cl.busyRefused(cmd, target, mask) { // a busy script holds its shard (busy.go)
		return nil, 0, 0, true
	}
	return cmd, target, mask, false
}

// peekRoute is route for a command that may join a run: it reports ok=false
// for anything that would be rejected or must run at home.
func (cl *Client) peekRoute(argv [][]byte) (cmd *Cmd, target int, mask uint64, ok bool) {
	cmd = cl.lookup(argv)
	if cmd == nil || cmd.home || cl.check(cmd, argv) != "" || cl.srv.pause.typ.Load() != pauseOff && cl.paused(argv) {
		return nil, 0, 0, false
	}
	target, mask = cl.placement(cmd, argv)
	if mask == 0 && target < 0 {
		return nil, 0, 0, false
	}
	return cmd, target, mask, true
}

// check returns the error a command gets before it runs, or "".
func (cl *Client) check(cmd *Cmd, argv [][]byte) string {
	if msg := cl.checkAccess(cmd, argv); msg != "" {
		return msg
	}
	if cl.srv.clus != nil {
		if msg := cl.clusterRefusal(cmd, argv); msg != "" { // CROSSSLOT, CLUSTERDOWN (cluster_route.go)
			return msg
		}
	}
	return cl.checkState(cmd, argv)
}

// checkAccess is the first part of check, the one that comes before -BUSY
// too (busy.go): unknown command, arity, NOAUTH, no_multi and -NOPERM, in
// Redis's order.
func (cl *Client) checkAccess(cmd *Cmd, argv [][]byte) string {
	if cmd == nil {
		return unknownCommandError(argv)
	}
	if cmd.subs != nil && (len(argv) > 1 || (cmd.exec == nil && cmd.run == nil)) {
		if len(argv) < 2 {
			return fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.fullName)
		}
		return fmt.Sprintf("ERR unknown subcommand '%.128s'. Try %s HELP.", argv[1], strings.ToUpper(cmd.fullName))
	}
	if (cmd.arity > 0 && len(argv) != cmd.arity) || len(argv) < -cmd.arity {
		return fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.fullName)
	}
	if !cl.authenticated && cmd.flags&flagNoAuth == 0 {
		return "NOAUTH Authentication required."
	}
	if cmd.flags&flagNoMulti != 0 && cl.multi.active {
		return errNoMulti
	}
	if u := cl.user; u != nil && !u.Load().Open() {
		if msg := cl.aclCheck(cmd, argv); msg != "" { // acl.go
			return msg
		}
	}
	return ""
}

// staleReplica reports whether this server is a replica whose link with
// its master is down and that serves no stale data (replica-serve-stale-data
// no): then only commands flagged stale run, from clients and from scripts.
func (srv *Server) staleReplica() bool {
	return srv.repl.isReplica.Load() && srv.rs.state.Load() != rlConnected && !srv.rs.serveStale.Load()
}

// checkState is the rest of check: what the server's state refuses.
func (cl *Client) checkState(cmd *Cmd, argv [][]byte) string {
	replica := cl.srv.repl.isReplica.Load()
	wflags := cmd.flags
	if cmd.script != 0 && (cl.srv.repl.m.tooFewGood.Load() || replica && cl.srv.rs.readOnly.Load()) {
		// Only then can a script's declared flags change the answer
		// (pause.go): the lookup is not paid per EVAL otherwise.
		wflags = cl.effectiveFlags(cmd, argv)
	}
	if cl.multi.active && cmd.fullName == "exec" {
		// EXEC is checked with its queued commands' flags, as Redis's
		// processCommand does: the state may have changed since they
		// were queued (a write refused by min-replicas, a stale replica,
		// a load). The answer is EXECABORT (multiReject).
		wflags = cl.multi.execFlags(wflags)
	}
	if (wflags&flagWrite != 0 || cl.srv.save.failed.Load() && cmd.fullName == "ping") && cl.rm == nil {
		// The master's writes are applied whatever (replica.go); RDB
		// errors refuse writes on a master only, as Redis's
		// writeCommandsDeniedByDiskError.
		if msg := cl.srv.writesRefused(); msg != "" && !replica { // snapshot.go
			return msg
		}
		if cl.srv.repl.m.tooFewGood.Load() && wflags&flagWrite != 0 && cl.rep == nil { // repl_master.go
			return "NOREPLICAS Not enough good replicas to write."
		}
		if msg := cl.srv.logError(); msg != "" {
			return msg
		}
	}
	if replica && wflags&flagWrite != 0 && cl.rm == nil && cl.srv.rs.readOnly.Load() {
		return "READONLY You can't write against a read only replica."
	}
	if cl.ps != nil {
		if msg := cl.pubsubCheck(cmd); msg != "" { // subscribed RESP2 client (pubsub.go)
			return msg
		}
	}
	if replica && wflags&flagStale == 0 && cl.rm == nil && cl.srv.staleReplica() {
		return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	}
	if wflags&flagLoading == 0 && cl.srv.load.active.Load() ||
		cmd.flags&flagNoAsyncLoading != 0 && cl.srv.rs.asyncLoading.Load() { // replica_load.go
		return loadingError
	}
	if cl.obs.monitor || cl.rep != nil {
		return cl.monitorCheck(cmd) // monitor.go
	}
	return ""
}

func unknownCommandError(argv [][]byte) string {
	var args strings.Builder
	for i := 1; i < len(argv) && args.Len() < 128; i++ {
		a := argv[i]
		if room := 128 - args.Len(); len(a) > room {
			a = a[:room]
		}
		args.WriteByte('\'')
		args.Write(a)
		args.WriteString("' ")
	}
	name := argv[0]
	if len(name) > 128 {
		name = name[:128]
	}
	return fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", name, args.String())
}

// keyPositions returns the argv positions of a command's keys: from its
// key finder, or from the metadata's (first, last, step).
func (cmd *Cmd) keyPositions(argv [][]byte, dst []int) []int {
	if cmd.keys != nil {
		return cmd.keys(argv, dst)
	}
	if cmd.first <= 0 {
		return dst
	}
	last := cmd.last
	if last < 0 {
		last = len(argv) + last
	}
	step := cmd.step
	if step <= 0 {
		step = 1
	}
	for i := cmd.first; i <= last && i < len(argv); i += step {
		dst = append(dst, i)
	}
	return dst
}

// placement computes where a checked command runs.
func (cl *Client) placement(cmd *Cmd, argv [][]byte) (target int, mask uint64) {
	if cmd.script != 0 && len(cl.srv.shards) > 1 && cl.scriptWide(cmd, argv) {
		return -1, 1<<uint(len(cl.srv.shards)) - 1 // learned: it needs every shard (script.go)
	}
	target, mask = cl.srv.placement(cmd, argv)
	if cl.rm != nil && mask == 0 && target >= 0 && len(cl.srv.shards) > 1 {
		// The master client's stream runs in transactions over the shards
		// a run of commands touches, not in a hop per command (replica.go).
		return -1, 1 << uint(target)
	}
	return target, mask
}

// scanShards routes SCAN: the cursor's shard, and with it the shards after
// it when they hold, as their loops last published, no more keys in all
// than the call's COUNT. Then one call can walk to the end of the
// iteration (shard/keys.go's cmdScan), as Redis's SCAN 0 over a small data
// set returns every key and cursor 0; over a large one each call stays on
// one shard. A stale count only changes how far one call goes.
func (srv *Server) scanShards(argv [][]byte, n int) uint64 {
	first, count := shard.ScanRoute(argv, n)
	var keys int64
	for s := first; s < n; s++ {
		keys += srv.shards[s].PublishedKeys()
	}
	if keys > count {
		return 1 << uint(first)
	}
	return (1<<uint(n) - 1) &^ (1<<uint(first) - 1)
}

// placement computes where a command runs, from its arguments alone.
func (srv *Server) placement(cmd *Cmd, argv [][]byte) (target int, mask uint64) {
	n := len(srv.shards)
	if cmd.allShardsIf != nil && cmd.allShardsIf(argv) {
		if n == 1 {
			return 0, 0
		}
		return -1, 1<<uint(n) - 1
	}
	if cmd.home {
		return -1, 0
	}
	if cmd.allShards {
		if n == 1 {
			return 0, 0
		}
		return -1, 1<<uint(n) - 1
	}
	if cmd.shardFn != nil {
		return cmd.shardFn(argv, n), 0
	}
	if n == 1 {
		return 0, 0
	}
	if cmd.extraShards != nil {
		if extra := cmd.extraShards(argv, n); extra != 0 {
			// The keys' shards and the ones the call reads besides.
			var kbuf [16]int
			for _, k := range cmd.keyPositions(argv, kbuf[:0]) {
				extra |= 1 << uint(shard.ShardOf(argv[k], n))
			}
			if extra&(extra-1) == 0 {
				return bits.TrailingZeros64(extra), 0
			}
			return -1, extra
		}
	}
	if cmd.keys == nil && cmd.first > 0 && cmd.first == cmd.last && cmd.first < len(argv) {
		return shard.ShardOf(argv[cmd.first], n), 0 // one key: the common case
	}
	var kbuf [16]int
	keys := cmd.keyPositions(argv, kbuf[:0])
	if len(keys) == 0 {
		return -1, 0
	}
	for _, k := range keys {
		mask |= 1 << uint(shard.ShardOf(argv[k], n))
	}
	if mask&(mask-1) == 0 {
		t := 0
		for mask>>uint(t) != 1 {
			t++
		}
		return t, 0
	}
	return -1, mask
}
