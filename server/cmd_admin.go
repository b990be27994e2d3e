package server

// Server administration commands: COMMAND, CLIENT, CONFIG, DEBUG, TIME,
// LASTSAVE, SHUTDOWN (INFO is in info.go). Replies and errors follow Redis
// 7.0.15 (server.c, networking.c, config.c, debug.c, db.c).
//
// Where each runs (see commands.go and dispatch.go):
//   - home rows touch only the calling client and run on its loop;
//   - allShards rows (INFO, CLIENT LIST, CLIENT KILL, CONFIG RESETSTAT) run
//     with every loop parked, so they may read every loop's clients and
//     counters and every shard;
//   - COMMAND and its subcommands read only the static command table;
//   - DEBUG OBJECT key runs on the key's shard (debugKeys); DEBUG LOADAOF,
//     RELOAD, DIGEST, DIGEST-VALUE, POPULATE, SLEEP (which so stops the
//     whole server, debugSleep) and a CONFIG SET of appendonly run with
//     every loop parked (allShardsIf); the other DEBUG subcommands have no
//     key and run at home.

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redshard/redshard/failpoint"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
	"golang.org/x/sys/unix"
)

// adminCommands is the table of server administration commands.
var adminCommands = []serverCmd{
	{name: "info", exec: cmdInfo, allShards: true},

	{name: "command", exec: cmdCommand},
	{name: "command|count", exec: cmdCommandCount},
	{name: "command|info", exec: cmdCommandInfo},
	{name: "command|docs", exec: cmdCommandDocs},
	{name: "command|list", exec: cmdCommandList},
	{name: "command|getkeys", exec: cmdCommandGetKeys},
	{name: "command|getkeysandflags", exec: cmdCommandGetKeysAndFlags},
	{name: "command|help", exec: cmdCommandHelp},

	{name: "client|id", exec: cmdClientID, home: true},
	{name: "client|setname", exec: cmdClientSetname, home: true},
	{name: "client|getname", exec: cmdClientGetname, home: true},
	{name: "client|info", exec: cmdClientInfo, home: true},
	{name: "client|list", exec: cmdClientList, allShards: true},
	{name: "client|kill", exec: cmdClientKill, allShards: true},
	{name: "client|unblock", exec: cmdClientUnblock, allShards: true},
	{name: "client|reply", exec: cmdClientReply, home: true},
	{name: "client|no-evict", exec: cmdClientNoEvict, home: true},
	{name: "client|no-touch", exec: cmdClientNoTouch, home: true},
	{name: "client|help", exec: cmdClientHelp, home: true},

	{name: "config|get", exec: cmdConfigGet, home: true},
	{name: "config|set", exec: cmdConfigSet, home: true, allShardsIf: configSetParks},
	{name: "config|resetstat", exec: cmdConfigResetstat, allShards: true},
	{name: "config|rewrite", exec: cmdConfigRewrite, home: true},
	{name: "config|help", exec: cmdConfigHelp, home: true},

	{name: "time", exec: cmdTime, home: true},
	{name: "lastsave", exec: cmdLastsave, home: true},
	{name: "shutdown", exec: cmdShutdown, home: true},
	{name: "debug", exec: cmdDebug, keys: debugKeys, allShardsIf: debugAllShards},
}

// CLIENT NO-TOUCH is Redis 7.2's; the 7.0 command metadata lacks it, so its
// metadata (from 7.2's client-no-touch.json) is registered here. It is
// added to the name index only: the generated 7.0 table stays as it is, and
// COMMAND shows it among CLIENT's subcommands because it is implemented.
func init() {
	if LookupMeta("client|no-touch") != nil {
		return
	}
	metaByName["client|no-touch"] = &CommandMeta{
		Name:          "client|no-touch",
		Container:     "client",
		Arity:         3,
		Flags:         []string{"noscript", "loading", "stale"},
		ACLCategories: []string{"@slow", "@connection"},
		Group:         "connection",
		Since:         "7.2.0",
		Summary:       "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
		Args: []Arg{
			{Name: "enabled", Type: "oneof", KeySpecIndex: -1, Args: []Arg{
				{Name: "on", Type: "pure-token", Token: "ON", KeySpecIndex: -1},
				{Name: "off", Type: "pure-token", Token: "OFF", KeySpecIndex: -1},
			}},
		},
	}
}

// ---------------------------------------------------------------------------
// Shared reply helpers
// ---------------------------------------------------------------------------

// addHelp replies like Redis's addReplyHelp: a header naming the command as
// the client typed it (upper-cased), the lines, and the HELP footer.
func addHelp(x *Exec, argv0 []byte, lines []string) {
	x.Array(len(lines) + 3)
	x.Simple(strings.ToUpper(string(argv0)) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		x.Simple(l)
	}
	x.Simple("HELP")
	x.Simple("    Prints this help.")
}

// subcommandSyntaxError is Redis's addReplySubcommandSyntaxError.
func subcommandSyntaxError(x *Exec, argv [][]byte) {
	sub := argv[1]
	if len(sub) > 128 {
		sub = sub[:128]
	}
	x.Err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP.",
		sub, strings.ToUpper(string(argv[0]))))
}

// isLocalClient reports whether a client is connected over a unix socket or
// from 127.0.0.1 / ::1 (Redis's islocalClient).
func isLocalClient(cl *Client) bool {
	if cl == nil || cl.c == nil {
		return false
	}
	switch a := cl.c.RemoteAddr().(type) {
	case *net.UnixAddr:
		return true
	case *net.TCPAddr:
		return a.IP.Equal(net.IPv4(127, 0, 0, 1)) || a.IP.Equal(net.IPv6loopback)
	}
	return false
}

// ---------------------------------------------------------------------------
// CLIENT REPLY support for the dispatcher
// ---------------------------------------------------------------------------

// replyDone runs after each command the client sent, local or rejected
// (dispatch.go): it drops the reply the command appended at cl.out[start:]
// when replies are off or skipped, and moves CLIENT REPLY SKIP's flag on to
// the next command, as Redis's resetClient does.
func (cl *Client) replyDone(start int) {
	if cl.pushed { // pub/sub confirmations are pushes, sent even when replies are off
		cl.pushed = false
		start = len(cl.out)
	}
	if !cl.replyOff && !cl.replySkip && !cl.replySkipNext {
		return
	}
	if (cl.replyOff || cl.replySkip) && start <= len(cl.out) {
		cl.out = cl.out[:start]
	}
	cl.replySkip, cl.replySkipNext = cl.replySkipNext, false
}

// replyModeForHop records, when a run of commands leaves for another loop,
// which of their replies to drop. A run never contains CLIENT REPLY (it runs
// at home and ends runs), so the mode is constant over the run: all replies
// are dropped when replies are off, and the first one when it is skipped.
func (cl *Client) replyModeForHop(h *hop) {
	h.dropAll, h.dropFirst = cl.replyOff, cl.replySkip
	cl.replySkip = false
}

// ---------------------------------------------------------------------------
// COMMAND
// ---------------------------------------------------------------------------

// cmdMeta returns the metadata COMMAND shows for c: a container lists only
// the subcommands that are implemented.
func (srv *Server) cmdMeta(c *Cmd) *CommandMeta {
	if c.subs == nil {
		return c.meta
	}
	m := *c.meta
	m.Subcommands = nil
	for _, sc := range sortedSubs(c) {
		m.Subcommands = append(m.Subcommands, sc.meta)
	}
	return &m
}

// lookupCommandName resolves "name" or "container|sub" (any case) to an
// implemented command, strictly: "get|x" and "config|get|x" are nil (Redis's
// lookupCommandBySds).
func (srv *Server) lookupCommandName(name string) *Cmd {
	parts := strings.Split(name, "|")
	if len(parts) > 2 || name == "" {
		return nil
	}
	base := srv.cmds[strings.ToLower(parts[0])]
	if base == nil || len(parts) == 1 {
		return base
	}
	if base.subs == nil {
		return nil
	}
	return base.subs[strings.ToLower(parts[1])]
}

// lookupCommandArgv resolves a command line to an implemented command, as
// Redis's lookupCommand: a container given alone is the container; an
// unknown subcommand is nil.
func (srv *Server) lookupCommandArgv(argv [][]byte) *Cmd {
	if len(argv) == 0 {
		return nil
	}
	base := srv.cmds[strings.ToLower(string(argv[0]))]
	if base == nil || len(argv) == 1 || base.subs == nil {
		return base
	}
	return base.subs[strings.ToLower(string(argv[1]))]
}

func cmdCommand(x *Exec, argv [][]byte) {
	if len(argv) > 1 {
		// Unreachable: the dispatcher routes COMMAND <sub> to the subcommand.
		subcommandSyntaxError(x, argv)
		return
	}
	commandInfoAll(x)
}

func commandInfoAll(x *Exec) {
	cmds := x.srv.sortedCommands()
	x.Array(len(cmds))
	for _, c := range cmds {
		x.Out = AppendCommandInfo(x.Out, x.srv.cmdMeta(c), x.Proto)
	}
}

func cmdCommandCount(x *Exec, argv [][]byte) { x.Int(int64(len(x.srv.cmds))) }

func cmdCommandInfo(x *Exec, argv [][]byte) {
	if len(argv) == 2 {
		commandInfoAll(x)
		return
	}
	x.Array(len(argv) - 2)
	for _, name := range argv[2:] {
		var m *CommandMeta
		if c := x.srv.lookupCommandName(string(name)); c != nil {
			m = x.srv.cmdMeta(c)
		}
		x.Out = AppendCommandInfo(x.Out, m, x.Proto)
	}
}

func cmdCommandDocs(x *Exec, argv [][]byte) {
	var cmds []*Cmd
	if len(argv) == 2 {
		cmds = x.srv.sortedCommands()
	} else {
		for _, name := range argv[2:] {
			if c := x.srv.lookupCommandName(string(name)); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	x.Map(len(cmds))
	for _, c := range cmds {
		x.BulkStr(c.fullName)
		x.Out = AppendCommandDocs(x.Out, x.srv.cmdMeta(c), x.Proto)
	}
}

// commandListFilter is COMMAND LIST's FILTERBY clause.
type commandListFilter struct {
	kind string // "", "module", "aclcat", "pattern"
	arg  []byte
}

// aclCategories are Redis 7.0's ACL command categories.
var aclCategories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

func (f *commandListFilter) match(c *Cmd) bool {
	switch f.kind {
	case "module":
		return false // no module commands exist
	case "aclcat":
		cat := strings.ToLower(string(f.arg))
		for _, known := range aclCategories {
			if known == cat {
				return c.meta.HasACLCategory(cat)
			}
		}
		return false
	case "pattern":
		return shard.MatchGlob(f.arg, []byte(c.fullName), true)
	}
	return true
}

func cmdCommandList(x *Exec, argv [][]byte) {
	var f commandListFilter
	for i := 2; i < len(argv); i++ {
		more := len(argv) - 1 - i
		if !shard.EqualFold(argv[i], "filterby") || more != 2 {
			x.Err(shard.ErrSyntax)
			return
		}
		kind := strings.ToLower(string(argv[i+1]))
		if kind != "module" && kind != "aclcat" && kind != "pattern" {
			x.Err(shard.ErrSyntax)
			return
		}
		f = commandListFilter{kind: kind, arg: argv[i+2]}
		i += 2
	}
	var names []string
	for _, c := range x.srv.sortedCommands() {
		if f.match(c) {
			names = append(names, c.fullName)
		}
		for _, sc := range sortedSubs(c) {
			if f.match(sc) {
				names = append(names, sc.fullName)
			}
		}
	}
	x.Array(len(names))
	for _, n := range names {
		x.BulkStr(n)
	}
}

func cmdCommandGetKeys(x *Exec, argv [][]byte)         { commandGetKeys(x, argv, false) }
func cmdCommandGetKeysAndFlags(x *Exec, argv [][]byte) { commandGetKeys(x, argv, true) }

// commandGetKeys is Redis's getKeysSubcommandImpl.
func commandGetKeys(x *Exec, argv [][]byte, withFlags bool) {
	args := argv[2:]
	c := x.srv.lookupCommandArgv(args)
	switch {
	case c == nil:
		x.Err("ERR Invalid command specified")
		return
	case !commandHasKeys(c):
		x.Err("ERR The command has no key arguments")
		return
	case (c.arity > 0 && c.arity != len(args)) || len(args) < -c.arity:
		x.Err("ERR Invalid number of arguments specified for command")
		return
	}
	keys := commandKeys(c, args)
	if len(keys) == 0 {
		if c.meta.HasFlag("no_mandatory_keys") {
			x.Array(0)
		} else {
			x.Err("ERR Invalid arguments specified for command")
		}
		return
	}
	x.Array(len(keys))
	for _, k := range keys {
		if !withFlags {
			x.Bulk(args[k.pos])
			continue
		}
		x.Array(2)
		x.Bulk(args[k.pos])
		x.Out = metaAppendKeySpecFlags(x.Out, k.flags.names(), x.Proto)
	}
}

func cmdCommandHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
	})
}

// ---- key extraction (Redis's getKeysFromCommandWithSpecs) ----

// keyFlags is a set of key-spec flags; bit i is metaKeySpecFlagOrder[i].
type keyFlags uint16

const (
	kfRO keyFlags = 1 << iota
	kfRW
	kfOW
	kfRM
	kfAccess
	kfUpdate
	kfInsert
	kfDelete
	kfNotKey
	kfIncomplete
	kfVariableFlags
)

func specFlags(names []string) keyFlags {
	var f keyFlags
	for _, n := range names {
		for i, o := range metaKeySpecFlagOrder {
			if o[0] == n {
				f |= 1 << uint(i)
			}
		}
	}
	return f
}

// names returns the flags as KeySpec.Flags spells them (upper case).
func (f keyFlags) names() []string {
	var out []string
	for i, o := range metaKeySpecFlagOrder {
		if f&(1<<uint(i)) != 0 {
			out = append(out, o[0])
		}
	}
	return out
}

// keyRef is one key of a command line: its argv position and access flags.
type keyRef struct {
	pos   int
	flags keyFlags
}

// commandHasKeys is Redis's doesCommandHaveKeys.
func commandHasKeys(c *Cmd) bool {
	if getkeysProcs[c.fullName] != nil {
		return true
	}
	for i := range c.meta.KeySpecs {
		if specFlags(c.meta.KeySpecs[i].Flags)&kfNotKey == 0 {
			return true
		}
	}
	return false
}

// commandKeys returns the keys of a command line (argv[0] is the command):
// from the key specs when they are complete and their flags fixed, else from
// the command's own extraction (Redis's getkeys_proc).
func commandKeys(c *Cmd, argv [][]byte) []keyRef {
	hasSpec, varFlags := false, false
	for i := range c.meta.KeySpecs {
		f := specFlags(c.meta.KeySpecs[i].Flags)
		if f&kfNotKey == 0 {
			hasSpec = true
		}
		if f&kfVariableFlags != 0 {
			varFlags = true
		}
	}
	if hasSpec && !varFlags {
		if keys, ok := keysFromSpecs(c, argv); ok {
			return keys
		}
	}
	if proc := getkeysProcs[c.fullName]; proc != nil {
		return proc(argv)
	}
	return nil
}

// keysFromSpecs is Redis's getKeysUsingKeySpecs (default search flags); ok
// is false when a spec cannot be followed (invalid or incomplete).
func keysFromSpecs(c *Cmd, argv [][]byte) (keys []keyRef, ok bool) {
	argc := len(argv)
	for si := range c.meta.KeySpecs {
		ks := &c.meta.KeySpecs[si]
		flags := specFlags(ks.Flags)
		if flags&kfNotKey != 0 {
			continue
		}
		first := 0
		switch {
		case ks.BeginSearchUnknown:
			return nil, false
		case ks.BeginSearchKeyword != "":
			start, end := ks.BeginSearchStartFrom, argc-1
			if ks.BeginSearchStartFrom <= 0 {
				start, end = argc+ks.BeginSearchStartFrom, 1
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if shard.EqualFold(argv[i], strings.ToLower(ks.BeginSearchKeyword)) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue // keyword not found
			}
		default:
			first = ks.BeginSearchIndex
		}
		var last, step int
		switch {
		case ks.FindKeysUnknown:
			return nil, false
		case ks.FindKeysRange:
			step = ks.KeyStep
			last = rangeLastKey(first, argc, ks.LastKey, ks.Limit)
		default: // keynum
			step = ks.KeyNumStep
			if ks.KeyNumIdx >= argc || first+ks.KeyNumIdx >= argc {
				return nil, false
			}
			n, okn := shard.ParseInt(argv[first+ks.KeyNumIdx])
			if !okn || n < 0 || n > math.MaxInt32 {
				return nil, false
			}
			first += ks.FirstKey
			last = first + int(n) - 1
		}
		if last >= argc || last < first || first >= argc {
			return nil, false
		}
		if step <= 0 {
			step = 1
		}
		for i := first; i <= last; i += step {
			keys = append(keys, keyRef{pos: i, flags: flags})
		}
		if flags&kfIncomplete != 0 {
			return nil, false
		}
	}
	return keys, true
}

// getkeysProcs are the commands whose keys Redis finds with code rather than
// (only) key specs, by full name; their flags are as Redis's procs give them.
var getkeysProcs = map[string]func(argv [][]byte) []keyRef{
	"bitfield":          bitfieldGetKeys,
	"migrate":           migrateGetKeys,
	"sort":              sortGetKeys,
	"sort_ro":           func([][]byte) []keyRef { return []keyRef{{1, kfRO | kfAccess}} },
	"georadius":         georadiusGetKeys,
	"georadiusbymember": georadiusGetKeys,
	"blmpop":            numkeysGetKeys(0, 2, 3),
	"lmpop":             numkeysGetKeys(0, 1, 2),
	"eval":              numkeysGetKeys(0, 2, 3),
	"evalsha":           numkeysGetKeys(0, 2, 3),
	"evalsha_ro":        numkeysGetKeys(0, 2, 3),
	"eval_ro":           numkeysGetKeys(0, 2, 3),
	"fcall":             numkeysGetKeys(0, 2, 3),
	"fcall_ro":          numkeysGetKeys(0, 2, 3),
	"sintercard":        numkeysGetKeys(0, 1, 2),
	"bzmpop":            numkeysGetKeys(0, 2, 3),
	"zdiff":             numkeysGetKeys(0, 1, 2),
	"zdiffstore":        numkeysGetKeys(1, 2, 3),
	"zinter":            numkeysGetKeys(0, 1, 2),
	"zintercard":        numkeysGetKeys(0, 1, 2),
	"zinterstore":       numkeysGetKeys(1, 2, 3),
	"zmpop":             numkeysGetKeys(0, 1, 2),
	"zunion":            numkeysGetKeys(0, 1, 2),
	"zunionstore":       numkeysGetKeys(1, 2, 3),
	"xread":             xreadGetKeys,
	"xreadgroup":        xreadGetKeys,
	"set":               setGetKeys,
}

// cAtoi is C's atoi: leading blanks, an optional sign, then digits.
func cAtoi(b []byte) int64 {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var v int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if v < math.MaxInt32 {
			v = v*10 + int64(b[i]-'0')
		}
	}
	if neg {
		return -v
	}
	return v
}

// numkeysGetKeys is Redis's genericGetKeys for COMMAND [dest] numkeys key...
func numkeysGetKeys(storeOfs, countOfs, firstOfs int) func([][]byte) []keyRef {
	return func(argv [][]byte) []keyRef {
		if countOfs >= len(argv) {
			return nil
		}
		num := cAtoi(argv[countOfs])
		if num < 1 || num > int64(len(argv)-firstOfs) {
			return nil
		}
		keys := make([]keyRef, 0, num+1)
		for i := 0; i < int(num); i++ {
			keys = append(keys, keyRef{pos: firstOfs + i})
		}
		if storeOfs > 0 {
			keys = append(keys, keyRef{pos: storeOfs})
		}
		return keys
	}
}

func sortGetKeys(argv [][]byte) []keyRef {
	keys := []keyRef{{1, kfRO | kfAccess}}
	store := -1
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		switch {
		case shard.EqualFold(a, "limit"):
			i += 2
		case shard.EqualFold(a, "store") && i+1 < len(argv):
			// The last STORE wins, as in SORT itself.
			store = i + 1
		case shard.EqualFold(a, "get"), shard.EqualFold(a, "by"):
			i++
		}
	}
	if store > 0 {
		keys = append(keys, keyRef{store, kfOW | kfUpdate})
	}
	return keys
}

func migrateGetKeys(argv [][]byte) []keyRef {
	first, num := 3, 1
	if len(argv) > 6 {
		for i := 6; i < len(argv); i++ {
			a := argv[i]
			if shard.EqualFold(a, "keys") {
				if len(argv[3]) > 0 {
					num = 0 // syntax error, left to MIGRATE
				} else {
					first = i + 1
					num = len(argv) - first
				}
				break
			}
			switch {
			case shard.EqualFold(a, "auth"):
				i++
			case shard.EqualFold(a, "auth2"):
				i += 2
			}
		}
	}
	keys := make([]keyRef, 0, num)
	for i := 0; i < num; i++ {
		keys = append(keys, keyRef{first + i, kfRW | kfAccess | kfDelete})
	}
	return keys
}

func georadiusGetKeys(argv [][]byte) []keyRef {
	stored := -1
	for i := 5; i < len(argv); i++ {
		if (shard.EqualFold(argv[i], "store") || shard.EqualFold(argv[i], "storedist")) && i+1 < len(argv) {
			stored = i + 1
			i++
		}
	}
	keys := []keyRef{{pos: 1}}
	if stored > 0 {
		keys = append(keys, keyRef{pos: stored})
	}
	return keys
}

func xreadGetKeys(argv [][]byte) []keyRef {
	streams := -1
loop:
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case shard.EqualFold(a, "block"), shard.EqualFold(a, "count"):
			i++
		case shard.EqualFold(a, "group"):
			i += 2
		case shard.EqualFold(a, "noack"):
		case shard.EqualFold(a, "streams"):
			streams = i
			break loop
		default:
			break loop
		}
	}
	if streams < 0 {
		return nil
	}
	num := len(argv) - streams - 1
	if num == 0 || num%2 != 0 {
		return nil
	}
	num /= 2
	keys := make([]keyRef, 0, num)
	for i := streams + 1; i < len(argv)-num; i++ {
		keys = append(keys, keyRef{pos: i})
	}
	return keys
}

func setGetKeys(argv [][]byte) []keyRef {
	for i := 3; i < len(argv); i++ {
		if shard.EqualFold(argv[i], "get") {
			return []keyRef{{1, kfRW | kfAccess | kfUpdate}}
		}
	}
	return []keyRef{{1, kfOW | kfUpdate}}
}

func bitfieldGetKeys(argv [][]byte) []keyRef {
	readonly := true
	for i := 2; i < len(argv); i++ {
		rem := len(argv) - i - 1
		a := argv[i]
		switch {
		case shard.EqualFold(a, "get") && rem >= 2:
			i += 2
		case (shard.EqualFold(a, "set") || shard.EqualFold(a, "incrby")) && rem >= 3:
			readonly = false
		case shard.EqualFold(a, "overflow") && rem >= 1:
			i++
		default:
			readonly = false
		}
		if !readonly {
			break
		}
	}
	if readonly {
		return []keyRef{{1, kfRO | kfAccess}}
	}
	return []keyRef{{1, kfRW | kfAccess | kfUpdate}}
}

// ---------------------------------------------------------------------------
// CLIENT
// ---------------------------------------------------------------------------

// Client types, numbered as Redis's CLIENT_TYPE_*.
const (
	clientTypeNormal = 0
	clientTypeSlave  = 1
	clientTypePubsub = 2
	clientTypeMaster = 3
)

// clientTypeByName is Redis's getClientTypeByName (-1: unknown).
func clientTypeByName(b []byte) int {
	switch strings.ToLower(string(b)) {
	case "normal":
		return clientTypeNormal
	case "slave", "replica":
		return clientTypeSlave
	case "pubsub":
		return clientTypePubsub
	case "master":
		return clientTypeMaster
	}
	return -1
}

// clientType is the client's class: replica, pubsub while subscribed, else
// normal.
func (cl *Client) clientType() int {
	if cl.rep != nil {
		return clientTypeSlave
	}
	if cl.subscribed() {
		return clientTypePubsub
	}
	return clientTypeNormal
}

// allClients returns every registered client, by id. Every loop must be
// parked (allShards) or there must be a single loop. A client evicted by
// maxmemory-clients while a hop of it is out stays registered until the hop
// is back, but is gone already, as in Redis: it is left out.
func (srv *Server) allClients() []*Client {
	var out []*Client
	for _, l := range srv.loops {
		for _, cl := range l.clients {
			if !cl.evicted {
				out = append(out, cl)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (srv *Server) clientByID(id int64) *Client {
	for _, l := range srv.loops {
		if cl := l.clients[id]; cl != nil && !cl.evicted {
			return cl
		}
	}
	return nil
}

// clientInfoFor is CLIENT LIST's line for cl, as seen by the calling client
// of x. For the caller, Redis shows the command being run and a query buffer
// that still holds it; when the caller's command came here in a transaction
// its bytes have already been consumed, so qbuf is put back together.
func clientInfoFor(x *Exec, cl *Client) string {
	line := cl.infoLine()
	if cl != x.cl || !cl.hopOut {
		return line
	}
	n := len(cl.qbuf)
	for _, argv := range cl.hop.argv {
		n += respSize(argv)
	}
	i := strings.Index(line, " qbuf=")
	if i < 0 {
		return line
	}
	j := strings.IndexByte(line[i+6:], ' ')
	if j < 0 {
		return line
	}
	return line[:i+6] + strconv.Itoa(n) + line[i+6+j:]
}

// respSize is the size of argv sent as a RESP multibulk.
func respSize(argv [][]byte) int {
	n := 1 + len(strconv.Itoa(len(argv))) + 2
	for _, a := range argv {
		n += 1 + len(strconv.Itoa(len(a))) + 2 + len(a) + 2
	}
	return n
}

func cmdClientID(x *Exec, argv [][]byte) { x.Int(x.cl.id) }

func cmdClientSetname(x *Exec, argv [][]byte) {
	if msg := validClientName(argv[2]); msg != "" {
		x.Err(msg)
		return
	}
	x.cl.name = string(argv[2])
	x.OK()
}

func cmdClientGetname(x *Exec, argv [][]byte) {
	if x.cl.name == "" {
		x.Null()
		return
	}
	x.BulkStr(x.cl.name)
}

func cmdClientInfo(x *Exec, argv [][]byte) {
	x.cl.lastCmd = "client|info"
	x.Verbatim([]byte(clientInfoFor(x, x.cl) + "\n"))
}

func cmdClientList(x *Exec, argv [][]byte) {
	x.cl.lastCmd = "client|list"
	var clients []*Client
	switch {
	case len(argv) == 4 && shard.EqualFold(argv[2], "type"):
		t := clientTypeByName(argv[3])
		if t < 0 {
			x.Err(fmt.Sprintf("ERR Unknown client type '%s'", argv[3]))
			return
		}
		for _, cl := range x.srv.allClients() {
			if cl.clientType() == t {
				clients = append(clients, cl)
			}
		}
	case len(argv) > 3 && shard.EqualFold(argv[2], "id"):
		ids := make([]int64, 0, len(argv)-3)
		for _, a := range argv[3:] {
			id, ok := shard.ParseInt(a)
			if !ok {
				x.Err("ERR Invalid client ID")
				return
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if cl := x.srv.clientByID(id); cl != nil {
				clients = append(clients, cl)
			}
		}
	case len(argv) != 2:
		x.Err(shard.ErrSyntax)
		return
	default:
		clients = x.srv.allClients()
	}
	var b strings.Builder
	for _, cl := range clients {
		b.WriteString(clientInfoFor(x, cl))
		b.WriteByte('\n')
	}
	x.Verbatim([]byte(b.String()))
}

// clientKillFilter is CLIENT KILL's set of conditions, all of which a client
// must meet.
type clientKillFilter struct {
	addr, laddr string
	hasAddr     bool
	hasLaddr    bool
	user        string
	hasUser     bool
	typ         int // -1: any
	id          int64
	maxAge      int64 // seconds; 0: any
	skipMe      bool
	oldForm     bool
}

// parseClientKill parses CLIENT KILL's arguments (argv[2:] of the command)
// and returns Redis's error text on failure.
func parseClientKill(args [][]byte, userExists func(string) bool) (f clientKillFilter, errMsg string) {
	f.typ = -1
	f.skipMe = true
	if len(args) == 1 {
		// Old form: CLIENT KILL addr:port, which may kill the caller.
		f.addr, f.hasAddr, f.oldForm, f.skipMe = string(args[0]), true, true, false
		return f, ""
	}
	if len(args) == 0 {
		return f, shard.ErrSyntax
	}
	for i := 0; i < len(args); i += 2 {
		opt := args[i]
		more := i+1 < len(args)
		if !more {
			return f, shard.ErrSyntax
		}
		val := args[i+1]
		switch {
		case shard.EqualFold(opt, "id"):
			id, ok := shard.ParseInt(val)
			if !ok || id < 1 {
				return f, "ERR client-id should be greater than 0"
			}
			f.id = id
		case shard.EqualFold(opt, "type"):
			f.typ = clientTypeByName(val)
			if f.typ < 0 {
				return f, fmt.Sprintf("ERR Unknown client type '%s'", val)
			}
		case shard.EqualFold(opt, "addr"):
			f.addr, f.hasAddr = string(val), true
		case shard.EqualFold(opt, "laddr"):
			f.laddr, f.hasLaddr = string(val), true
		case shard.EqualFold(opt, "user"):
			if !userExists(string(val)) {
				return f, fmt.Sprintf("ERR No such user '%s'", val)
			}
			f.user, f.hasUser = string(val), true
		case shard.EqualFold(opt, "skipme"):
			switch {
			case shard.EqualFold(val, "yes"):
				f.skipMe = true
			case shard.EqualFold(val, "no"):
				f.skipMe = false
			default:
				return f, shard.ErrSyntax
			}
		case shard.EqualFold(opt, "maxage"):
			age, ok := shard.ParseInt(val)
			if !ok {
				return f, "ERR maxage is not an integer or out of range"
			}
			if age <= 0 {
				return f, "ERR maxage should be greater than 0"
			}
			f.maxAge = age
		default:
			return f, shard.ErrSyntax
		}
	}
	return f, ""
}

// matches reports whether cl is to be killed; self is the caller.
func (f *clientKillFilter) matches(cl, self *Client, now time.Time) bool {
	if f.hasAddr && cl.addr() != f.addr {
		return false
	}
	if f.hasLaddr && cl.laddr() != f.laddr {
		return false
	}
	if f.typ >= 0 && cl.clientType() != f.typ {
		return false
	}
	if f.id != 0 && cl.id != f.id {
		return false
	}
	if f.hasUser && cl.userName() != f.user {
		return false
	}
	if f.maxAge != 0 && int64(now.Sub(cl.created).Seconds()) < f.maxAge {
		return false
	}
	if cl == self && f.skipMe {
		return false
	}
	return true
}

// cmdClientKill runs with every loop parked: it may mark any client closing
// and ask gnet to close its connection (Conn.Close is asynchronous and safe
// from any goroutine); the client's own loop runs OnClose later. The caller,
// when it kills itself, is closed after its reply is written.
func cmdClientKill(x *Exec, argv [][]byte) {
	f, msg := parseClientKill(argv[2:], func(name string) bool { return x.srv.acl.Get(name) != nil })
	if msg != "" {
		x.Err(msg)
		return
	}
	now := time.Now()
	killed := 0
	closeSelf := false
	for _, cl := range x.srv.allClients() {
		if cl.closed || !f.matches(cl, x.cl, now) {
			continue
		}
		if cl == x.cl {
			closeSelf = true
		} else {
			cl.killed = true
			cl.closing = true
			// Send the FIN now, as Redis's immediate close does: the
			// asynchronous close below may come after more input has
			// arrived, and closing a socket with unread input resets it.
			// The fd is still open: its loop is parked and has not closed it.
			if fd := cl.c.Fd(); fd > 2 {
				_ = unix.Shutdown(fd, unix.SHUT_WR)
			}
			_ = cl.c.Close()
		}
		killed++
	}
	killed += x.srv.killMasterLink(&f) // a replica's link to its master (replica.go)
	if f.oldForm {
		if killed == 0 {
			x.Err("ERR No such client")
		} else {
			x.OK()
		}
	} else {
		x.Int(int64(killed))
	}
	if closeSelf {
		x.cl.killed = true
		x.cl.closing = true
	}
}

func cmdClientReply(x *Exec, argv [][]byte) {
	cl := x.cl
	switch {
	case shard.EqualFold(argv[2], "on"):
		cl.replyOff, cl.replySkip, cl.replySkipNext = false, false, false
		x.OK()
	case shard.EqualFold(argv[2], "off"):
		cl.replyOff = true
	case shard.EqualFold(argv[2], "skip"):
		if !cl.replyOff {
			cl.replySkipNext = true
		}
	default:
		x.Err(shard.ErrSyntax)
	}
}

func onOff(x *Exec, arg []byte, set func(bool)) {
	switch {
	case shard.EqualFold(arg, "on"):
		set(true)
		x.OK()
	case shard.EqualFold(arg, "off"):
		set(false)
		x.OK()
	default:
		x.Err(shard.ErrSyntax)
	}
}

func cmdClientNoEvict(x *Exec, argv [][]byte) {
	onOff(x, argv[2], func(v bool) { x.cl.noEvict = v })
}

func cmdClientNoTouch(x *Exec, argv [][]byte) {
	onOff(x, argv[2], func(v bool) { x.cl.noTouch = v })
}

// cmdClientHelp is Redis 7.0's text (NO-TOUCH, a 7.2 addition, is
// implemented but not listed, so that the reply matches 7.0's).
func cmdClientHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
	})
}

// ---------------------------------------------------------------------------
// CONFIG
// ---------------------------------------------------------------------------

func cmdConfigGet(x *Exec, argv [][]byte) {
	patterns := make([]string, 0, len(argv)-2)
	for _, a := range argv[2:] {
		patterns = append(patterns, string(a))
	}
	res := x.srv.cfg.Get(patterns)
	x.Map(len(res))
	for _, kv := range res {
		x.BulkStr(kv[0])
		x.BulkStr(kv[1])
	}
}

func cmdConfigSet(x *Exec, argv [][]byte) {
	if len(argv)%2 != 0 {
		x.Err(shard.ErrSyntax)
		return
	}
	pairs := make([][2]string, 0, (len(argv)-2)/2)
	for i := 2; i+1 < len(argv); i += 2 {
		pairs = append(pairs, [2]string{string(argv[i]), string(argv[i+1])})
		// Redis's DENY_LOADING_CONFIG options answer -LOADING while the
		// data set loads.
		if (x.srv.load.active.Load() || x.srv.rs.asyncLoading.Load()) && (shard.EqualFold(argv[i], "appendonly") || shard.EqualFold(argv[i], "dir")) {
			x.Err(loadingError)
			return
		}
	}
	inExec := x.InMulti && configSetAllShards(argv) // every loop is parked
	if inExec {
		x.srv.configInExec = true
	}
	err := x.srv.cfg.SetFromClient(pairs, isLocalClient(x.cl))
	if inExec {
		x.srv.configInExec = false
	}
	if err != nil {
		x.Err(err.Error())
		return
	}
	x.OK()
}

func cmdConfigResetstat(x *Exec, argv [][]byte) {
	x.srv.resetStats()
	x.OK()
}

func cmdConfigRewrite(x *Exec, argv [][]byte) {
	if err := x.srv.cfg.Rewrite(""); err != nil {
		msg := err.Error()
		if strings.HasPrefix(msg, "ERR Rewriting config file: ") {
			x.srv.log.Warningf("CONFIG REWRITE failed: %s", strings.TrimPrefix(msg, "ERR Rewriting config file: "))
		}
		x.Err(msg)
		return
	}
	x.srv.log.Warningf("CONFIG REWRITE executed with success.")
	x.OK()
}

func cmdConfigHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	})
}

// ---------------------------------------------------------------------------
// TIME, LASTSAVE, SHUTDOWN
// ---------------------------------------------------------------------------

func cmdTime(x *Exec, argv [][]byte) {
	now := time.Now()
	x.Array(2)
	x.Out = resp.AppendBulkInt(x.Out, now.Unix())
	x.Out = resp.AppendBulkInt(x.Out, int64(now.Nanosecond()/1000))
}

func cmdLastsave(x *Exec, argv [][]byte) { x.Int(x.srv.lastSave.Load()) }

// cmdShutdown is SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] (Redis's
// shutdownCommand, see shutdown.go). On success nothing is replied: the
// connection closes as the process exits, as when Redis exits.
func cmdShutdown(x *Exec, argv [][]byte) {
	var flags int64
	abort := false
	for _, a := range argv[1:] {
		switch {
		case shard.EqualFold(a, "nosave"):
			flags |= shutdownNosave
		case shard.EqualFold(a, "save"):
			flags |= shutdownSave
		case shard.EqualFold(a, "now"):
			flags |= shutdownNow
		case shard.EqualFold(a, "force"):
			flags |= shutdownForce
		case shard.EqualFold(a, "abort"):
			abort = true
		default:
			x.Err(shard.ErrSyntax)
			return
		}
	}
	if (abort && flags != 0) || (flags&shutdownNosave != 0 && flags&shutdownSave != 0) {
		x.Err(shard.ErrSyntax)
		return
	}
	if abort {
		if x.srv.abortShutdown() {
			x.OK()
		} else {
			x.Err("ERR No shutdown in progress.")
		}
		return
	}
	if x.srv.busy.mask.Load() != 0 {
		// A script past busy-reply-threshold holds loops (a client of a
		// free loop got here): as Redis, only SHUTDOWN NOSAVE, which
		// exits without waiting for the script, as from a stuck loop
		// (busy.go); a shutdown that saves would wait for it.
		if flags&shutdownNosave == 0 {
			x.Err(x.srv.busyError())
			return
		}
		x.srv.busyShutdown()
	}
	// It runs on its home loop, which holds every shard only when there
	// is one; a save with more goes through the watcher (shutdown.go).
	switch x.srv.prepareForShutdown(flags, len(x.srv.loops) == 1, true) {
	case shutFailed:
		x.Err(errShutdownFailed)
	case shutExit:
		// No reply, and nothing more from this client: the connection
		// ends with the process, once the log is closed and any child
		// is gone (finishExit), as Redis's exit(0) inside the command.
		// A client that sees it closed then finds the port closed too.
		x.Block(0, [][]byte{})
	case shutWaiting:
		x.Block(0, [][]byte{})
		x.shutWait = true
	}
}

// ---------------------------------------------------------------------------
// DEBUG
// ---------------------------------------------------------------------------

// debugAllShards routes DEBUG LOADAOF, RELOAD, DIGEST, DIGEST-VALUE,
// POPULATE and SLEEP (debugSleep) over every shard.
func debugAllShards(argv [][]byte) bool {
	if len(argv) < 2 {
		return false
	}
	sub := argv[1]
	return (len(argv) == 2 && shard.EqualFold(sub, "loadaof")) || shard.EqualFold(sub, "reload") ||
		(len(argv) == 3 && shard.EqualFold(sub, "sleep")) ||
		(len(argv) == 2 && shard.EqualFold(sub, "digest")) || shard.EqualFold(sub, "digest-value") ||
		(len(argv) >= 3 && len(argv) <= 5 && shard.EqualFold(sub, "populate"))
}

// debugKeys routes DEBUG OBJECT key to the key's shard; every other DEBUG
// subcommand but LOADAOF has no key and runs at home.
func debugKeys(argv [][]byte, dst []int) []int {
	if len(argv) == 3 && shard.EqualFold(argv[1], "object") {
		return append(dst, 2)
	}
	return dst
}

const errFailpointsDisabled = "ERR failpoints are disabled; start the server with enable-failpoints yes"

// debugFailpoint is DEBUG FAILPOINT SET|LIST|CLEAR|HELP (package failpoint).
// The points are process-wide, so it runs at home like the other keyless
// DEBUG subcommands.
func debugFailpoint(x *Exec, argv [][]byte) {
	if len(argv) < 3 {
		x.Err("ERR wrong number of arguments for 'debug|failpoint' command")
		return
	}
	sub := argv[2]
	switch {
	case shard.EqualFold(sub, "set") && len(argv) >= 5:
		words := make([]string, 0, len(argv)-4)
		for _, a := range argv[4:] {
			words = append(words, string(a))
		}
		if err := failpoint.Set(string(argv[3]), words); err != nil {
			x.Err("ERR " + err.Error())
			return
		}
		x.OK()
	case shard.EqualFold(sub, "list") && len(argv) == 3:
		l := failpoint.List()
		x.Array(len(l))
		for _, s := range l {
			x.Bulk([]byte(s))
		}
	case shard.EqualFold(sub, "clear") && len(argv) <= 4:
		name := ""
		if len(argv) == 4 {
			name = string(argv[3])
		}
		if err := failpoint.Clear(name); err != nil {
			x.Err("ERR " + err.Error())
			return
		}
		x.OK()
	case shard.EqualFold(sub, "help") && len(argv) == 3:
		lines := []string{
			"SET <point> crash|panic|sleep <ms>|error <errno> [COUNT <n>] [SKIP <k>] [PROBABILITY <p>]",
			"    Arm a point. errno: EIO, ENOSPC, EROFS, EDQUOT, ENOMEM or a number.",
			"LIST",
			"    One line per point, armed ones first: <point> <action> ... hits=<h> fired=<f>.",
			"CLEAR [<point>]",
			"    Disarm one point, or all.",
			"Points:",
		}
		for _, h := range failpoint.Help() {
			lines = append(lines, "    "+h)
		}
		x.Array(len(lines))
		for _, l := range lines {
			x.Simple(l)
		}
	default:
		x.Err("ERR unknown DEBUG FAILPOINT subcommand or wrong number of arguments for '" + string(sub) + "'. Try DEBUG FAILPOINT HELP.")
	}
}

// countRejected counts the running call of c as rejected, not failed:
// Redis refuses a protected command (DEBUG, MODULE LOAD, ...) before
// running it, and call() adds 1 to calls and failed after the command
// returns its error.
func (x *Exec) countRejected(c *Cmd) {
	if x.loop != nil && c != nil && c.id < len(x.loop.stats.cmds) {
		st := &x.loop.stats.cmds[c.id]
		st.calls--
		st.failed--
		st.rejected++
	}
}

const errDebugNotAllowed = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

func cmdDebug(x *Exec, argv [][]byte) {
	if shard.EqualFold(argv[1], "failpoint") {
		// Allowed by enable-failpoints alone, so that a crash tester needs
		// one option; enable-debug-command does not allow it.
		if !x.srv.cfg.EnableFailpoints() {
			x.Err(errFailpointsDisabled)
			return
		}
		debugFailpoint(x, argv)
		return
	}
	if !x.srv.cfg.DebugCommandAllowed(isLocalClient(x.cl)) {
		x.countRejected(x.srv.cmds["debug"])
		x.Err(errDebugNotAllowed)
		return
	}
	sub := argv[1]
	switch {
	case len(argv) == 2 && shard.EqualFold(sub, "help"):
		addHelp(x, argv[0], []string{
			"CONFIG-REWRITE-FORCE-ALL",
			"    Like CONFIG REWRITE but writes all configuration options, including",
			"    keywords not listed in original configuration file or default values.",
			"DIGEST",
			"    Output a hex signature representing the current DB content.",
			"DIGEST-VALUE <key> [<key> ...]",
			"    Output a hex signature of the values of all the specified keys.",
			"FAILPOINT SET|LIST|CLEAR|HELP ...",
			"    Crash-test failpoints (needs enable-failpoints yes, not enable-debug-command).",
			"LOADAOF",
			"    Flush the AOF buffers on disk and reload the AOF in memory.",
			"OBJECT <key>",
			"    Show low level info about `key` and associated value.",
			"POPULATE <count> [<prefix>] [<size>]",
			"    Create <count> string keys named key:<num>. If <prefix> is specified then",
			"    it is used instead of the 'key' prefix. These are not propagated to",
			"    replicas. Cluster slots are not respected so keys not belonging to the",
			"    current node can be created in cluster mode.",
			"REPLICATE <command> [<arg> ...]",
			"    Send <command> and its arguments to the replicas in the replication stream,",
			"    without running it here.",
			"RELOAD [option ...]",
			"    Save the data set (here: the AOF rewrite's image of it, in memory), flush",
			"    and reload it. Options MERGE, NOFLUSH and NOSAVE are accepted.",
			"PROTOCOL <type>",
			"    Reply with a test value of the specified type. <type> can be: string,",
			"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
			"    true, false.",
			"AOF-FLUSH-SLEEP <microsec>",
			"    Server will sleep before flushing the AOF, this is used for testing.",
			"SET-ACTIVE-EXPIRE <0|1>",
			"    Setting it to 0 disables expiring keys in background when they are not",
			"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
			"    default.",
			"SET-DISABLE-DENY-SCRIPTS <0|1>",
			"    Enable/disable the check that prevents scripts from calling commands",
			"    flagged noscript (for testing).",
			"PANIC",
			"    Crash the server simulating a panic.",
			"PAUSE-CRON <0|1>",
			"    Stop periodic cron job processing.",
			"SEGFAULT",
			"    Crash the server with sigsegv.",
			"SET-SKIP-CHECKSUM-VALIDATION <0|1>",
			"    Enables or disables checksum checks for RDB files and RESTORE's payload.",
			"SLEEP <seconds>",
			"    Stop the server for <seconds>. Decimals allowed.",
		})
	case len(argv) == 2 && shard.EqualFold(sub, "loadaof"):
		debugLoadAOF(x)
	case shard.EqualFold(sub, "reload"):
		debugReload(x, argv)
	case len(argv) == 2 && shard.EqualFold(sub, "digest"):
		debugDigest(x)
	case shard.EqualFold(sub, "digest-value"):
		debugDigestValue(x, argv[2:])
	case len(argv) == 3 && shard.EqualFold(sub, "object"):
		if x.srv.load.active.Load() {
			x.Err(loadingError) // the shards are not loaded yet
			return
		}
		debugObject(x, argv[2])
	case len(argv) >= 3 && len(argv) <= 5 && shard.EqualFold(sub, "populate"):
		debugPopulate(x, argv)
	case len(argv) == 3 && shard.EqualFold(sub, "protocol"):
		debugProtocol(x, argv[2])
	case len(argv) == 3 && shard.EqualFold(sub, "log"):
		x.srv.log.Warningf("DEBUG LOG: %s", argv[2])
		x.OK()
	case len(argv) == 3 && shard.EqualFold(sub, "sleep"):
		debugSleep(x, argv[2])
	case len(argv) == 3 && shard.EqualFold(sub, "aof-flush-sleep"):
		// Microseconds the log's writer sleeps before each write; kept by
		// the server so that a log opened later gets it too.
		us := cAtoi(argv[2])
		x.srv.aofFlushSleep.Store(us)
		if ps := x.srv.persist; ps != nil {
			ps.log.SetFlushSleep(time.Duration(us) * time.Microsecond)
		}
		x.OK()
	case len(argv) == 2 && shard.EqualFold(sub, "segfault"):
		debugSegfault(x, argv) // crash.go
	case len(argv) == 2 && shard.EqualFold(sub, "panic"):
		debugPanic()
	case len(argv) >= 3 && shard.EqualFold(sub, "replicate"):
		// The rest of the arguments, as a command in the replication
		// stream alone (not the AOF, not run here): Redis's test knob for
		// a replica that diverges. Without a stream (no replica, no
		// backlog) nothing moves, the offset included, as in Redis.
		b := resp.AppendArrayLen(nil, len(argv)-2)
		for _, a := range argv[2:] {
			b = resp.AppendBulk(b, a)
		}
		rp := &x.srv.repl
		rp.mu.Lock()
		active := rp.active
		rp.mu.Unlock()
		if active {
			rp.appendRaw(b)
		}
		x.OK()
	case len(argv) == 3 && shard.EqualFold(sub, "pause-cron"):
		x.srv.setCronPaused(cAtoi(argv[2]) != 0)
		x.OK()
	case len(argv) == 2 && shard.EqualFold(sub, "config-rewrite-force-all"):
		if err := x.srv.cfg.RewriteForceAll(""); err != nil {
			x.Err("ERR CONFIG-REWRITE-FORCE-ALL failed: " + strings.TrimPrefix(strings.TrimPrefix(err.Error(), "ERR Rewriting config file: "), "ERR "))
			return
		}
		x.OK()
	case len(argv) == 3 && shard.EqualFold(sub, "set-disable-deny-scripts"):
		// Redis's test knob: scripts may call the commands flagged
		// noscript (DEBUG PROTOCOL, CLIENT LIST, ...), at the caller's risk.
		x.srv.denyScriptsOff.Store(cAtoi(argv[2]) != 0)
		x.OK()
	case len(argv) == 3 && shard.EqualFold(sub, "set-active-expire"):
		x.srv.activeExpire.Store(cAtoi(argv[2]) != 0)
		x.OK()
	case len(argv) == 3 && shard.EqualFold(sub, "set-skip-checksum-validation"):
		// RESTORE then checks a payload's version, not its CRC.
		x.srv.tun.SkipChecksumValidation.Store(cAtoi(argv[2]) != 0)
		x.OK()
	case len(argv) == 4 && shard.EqualFold(sub, "replybuffer"):
		debugReplyBuffer(x, argv) // clientmem.go
	case len(argv) == 3 && shard.EqualFold(sub, "quicklist-packed-threshold"):
		// Elements this large get a list node of their own (quicklist.go).
		sz, ok := cfgMemToULL(string(argv[2]))
		if !ok || !shard.SetPackedThreshold(sz) {
			x.Err("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
			return
		}
		x.OK()
	default:
		subcommandSyntaxError(x, argv)
	}
}

// debugSleep is DEBUG SLEEP <seconds>: the whole server stops for that
// long, as Redis's one thread does in nanosleep. Redis's tests rely on it:
// a master that sends no newline lets a replica's handshake time out, a
// MIGRATE target that answers nothing times the MIGRATE out, a pipeline
// sent meanwhile is read at once when the server wakes up.
//
// How. debugAllShards routes it over every shard, so it runs as a
// cross-shard transaction (dispatch.go): the chain of tasks parks loops 0
// to N-2 in ascending order, and the last loop, the executor, sleeps here.
// With one shard it runs inline on the only loop. No loop runs a command of
// any client, nor its cron (expiry, blocked clients' timeouts, loop 0's
// replCron with its PINGs and newlines to replicas), until the executor
// releases them; input waits in the sockets, as Redis's does, and is read
// when they go on. DEBUG SLEEP 0 parks and releases every loop too: it
// pauses nothing, and serves as a barrier. Inside MULTI it makes EXEC's
// mask every shard (multi.go), so the EXEC is that transaction.
//
// What goes on meanwhile, as Redis's kernel buffers and sockets would: the
// log's writer writes and syncs what was submitted before, replicas'
// sender goroutines stream it, a replica's link goroutine reads the
// master's stream until its chunks in flight to loop 0 are all queued
// (and sends its REPLCONF ACKs, of an offset that does not move), gnet
// accepts connections and queues them to the loops, TLS handshakes finish
// in their own goroutines.
//
// Why no deadlock can form. The executor waits for nothing but the clock
// (or the server stopping), so no cycle of waiting goes through it; all
// that waits for a parked loop only waits longer:
//   - a loop whose client has a hop or transaction out never waits for it:
//     the client's parsing pauses, the loop goes on and is parked like any
//     other; the hop's task waits in its target's queue and its replies in
//     the home loop's until the release;
//   - a blocked client holds no loop, only a waiter on its keys' shards;
//     the push that serves it and its timeout run after the release;
//   - a running script, and a MULTI ... EXEC or multi-key command with
//     shards taken, hold their loops without waiting for anything but
//     loops of higher shards; DEBUG SLEEP's chain takes every shard in the
//     same ascending order, so it waits for them at the first of their
//     loops it reaches and they never wait for it (the transaction rule of
//     dispatch.go). A script past busy-reply-threshold makes DEBUG SLEEP
//     -BUSY, as in Redis, since DEBUG may not run while busy; the busy
//     watchdog serves only the loops a busy script holds, and DEBUG LOADAOF's,
//     never those parked here;
//   - the log's writer never waits for a loop: it tells the loops of
//     durable positions by tasks (wakeHeld), which wait in their queues;
//   - gnet's Enroll of an accepted or TLS socket returns at once; the
//     registration is a task of the loop;
//   - the goroutines that run something on loop 0 or on every loop (the
//     replica link's onLoop0, the parkAll of BGSAVE's or a rewrite's cut, a
//     full sync, FAILOVER) queue behind this transaction and hold nothing a
//     parked loop or the executor needs.
func debugSleep(x *Exec, arg []byte) {
	if d := time.Duration(cStrtod(arg) * float64(time.Second)); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-x.srv.stopCh:
			// Shutting down: the parked loops are leaving their park
			// already (dispatch.go); nothing is left to hold.
			t.Stop()
		}
	}
	x.OK()
}

// debugProtocol is DEBUG PROTOCOL <type>: a sample reply of each RESP type.
func debugProtocol(x *Exec, name []byte) {
	switch strings.ToLower(string(name)) {
	case "string":
		x.BulkStr("Hello World")
	case "integer":
		x.Int(12345)
	case "double":
		x.Double(3.141)
	case "bignum":
		x.Out = resp.AppendBigNumber(x.Out, "1234567999999999999999999999999999999", x.Proto)
	case "null":
		x.Null()
	case "array", "set":
		if shard.EqualFold(name, "set") {
			x.Set(3)
		} else {
			x.Array(3)
		}
		for j := int64(0); j < 3; j++ {
			x.Int(j)
		}
	case "map":
		x.Map(3)
		for j := int64(0); j < 3; j++ {
			x.Int(j)
			x.Bool(j == 1)
		}
	case "attrib":
		if x.Proto >= 3 {
			x.Out = append(x.Out, "|1\r\n"...)
			x.BulkStr("key-popularity")
			x.Array(2)
			x.BulkStr("key:123")
			x.Int(90)
		}
		x.BulkStr("Some real reply following the attribute")
	case "push":
		if x.Proto < 3 {
			x.Err("ERR RESP2 is not supported by this command")
			return
		}
		x.Out = resp.AppendPushLen(x.Out, 2, x.Proto)
		x.BulkStr("server-cpu-usage")
		x.Int(42)
		x.BulkStr("Some real reply following the push reply")
	case "true":
		x.Bool(true)
	case "false":
		x.Bool(false)
	case "verbatim":
		x.Verbatim([]byte("This is a verbatim\nstring"))
	default:
		x.Err("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// debugObject is DEBUG OBJECT key. It looks the key up without expiring it,
// as Redis does. serializedlength is the RDB size without compression (LZF
// is not implemented); for values other than strings it is 0.
func debugObject(x *Exec, key []byte) {
	db := x.DBOf(key)
	slot := db.Peek(key)
	if slot < 0 {
		x.Err(shard.ErrNoSuchKey)
		return
	}
	typ, enc := db.Type(slot), db.Encoding(slot)
	encName := "unknown"
	if int(enc) < len(shard.EncNames) {
		encName = shard.EncNames[enc]
	}
	refcount := int64(1)
	serLen := 0
	if typ == shard.TypeString {
		val := db.Str(slot)
		if enc == shard.EncInt {
			if v, ok := shard.ParseInt(val); ok && v >= 0 && v < 10000 {
				refcount = math.MaxInt32 // a shared integer
			}
		}
		serLen = rdbStringLen(val)
	}
	lru := int64(db.LRU(slot))
	idle := x.NowMs/1000 - lru
	if idle < 0 {
		idle = 0
	}
	addr := uint64(0x7f)<<40 | uint64(db.ID&0xff)<<32 | uint64(uint32(slot))<<4
	addr += uint64(x.Shards[shard.ShardOf(key, len(x.Shards))].ID) << 36
	x.Simple(fmt.Sprintf("Value at:0x%x refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		addr, refcount, encName, serLen, lru&(1<<24-1), idle))
}

// rdbStringLen is the size of a string in an RDB file without compression:
// small integers take an encoded form, others a length prefix.
func rdbStringLen(s []byte) int {
	if len(s) <= 11 {
		if v, ok := shard.ParseInt(s); ok {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return 2
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return 3
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return 5
			}
		}
	}
	n := len(s)
	switch {
	case n < 1<<6:
		return 1 + n
	case n < 1<<14:
		return 2 + n
	case n <= math.MaxUint32:
		return 5 + n
	}
	return 9 + n
}

// cStrtod is C's strtod on a decimal number: the longest prefix (after
// blanks) that is a number; 0 if there is none.
func cStrtod(b []byte) float64 {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	if len(s) > 64 {
		s = s[:64]
	}
	for n := len(s); n > 0; n-- {
		if v, err := strconv.ParseFloat(s[:n], 64); err == nil || isRangeErr(err) {
			return v
		}
	}
	return 0
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
