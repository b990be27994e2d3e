package server

// ACL: users and their permissions (package acl), wired into the server.
//
// Cross-thread design:
//   - srv.acl (an acl.Registry) holds the users. Its mutex guards the user
//     map and serializes changes (SETUSER, DELUSER, LOAD, requirepass);
//     loops never take it on the data path.
//   - A client holds its *acl.User. The check (Client.aclCheck, called from
//     Client.check on the client's home loop before routing) loads the
//     user's rules, an immutable *acl.Rules, with one atomic pointer load;
//     the default all-permissive user stops at its Open flag. A hop to
//     another shard carries the command already checked: no second check.
//   - The check builds nothing for the usual command: a one-key command
//     with no channels is accepted by acl.Rules.AllowsKey from the root
//     selector (a line it does not accept gets the whole check), and a
//     command with one simple key spec gives its key span from numbers
//     copied into Cmd (aclSpan, acl.Rules.CheckSpan). Only the others fill
//     a KeyRef list, on the stack. TestACLFastPathsAgreeWithGenericCheck
//     holds the paths to the same answers.
//   - SETUSER builds new rules and swaps the pointer: a client's next
//     command sees them, a command already routed runs as checked (as in
//     Redis, where the check is made once in processCommand).
//   - ACL SETUSER, DELUSER and LOAD run with every loop parked (allShards)
//     so that they may walk every loop's clients and close those of a
//     deleted user, or the subscribers whose channels were revoked, the way
//     CLIENT KILL does; the caller itself is closed after its reply.
//   - The ACL LOG has its own mutex, taken only on a denial.

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redshard/redshard/acl"
	"github.com/redshard/redshard/shard"
	"golang.org/x/sys/unix"
)

var aclCommands = []serverCmd{
	{name: "acl|cat", exec: cmdACLCat},
	{name: "acl|deluser", exec: cmdACLDelUser, allShards: true},
	{name: "acl|dryrun", exec: cmdACLDryRun},
	{name: "acl|genpass", exec: cmdACLGenPass},
	{name: "acl|getuser", exec: cmdACLGetUser},
	{name: "acl|help", exec: cmdACLHelp},
	{name: "acl|list", exec: cmdACLList},
	{name: "acl|load", exec: cmdACLLoad, allShards: true},
	{name: "acl|log", exec: cmdACLLog},
	{name: "acl|save", exec: cmdACLSave},
	{name: "acl|setuser", exec: cmdACLSetUser, allShards: true},
	{name: "acl|users", exec: cmdACLUsers},
	{name: "acl|whoami", exec: cmdACLWhoAmI, home: true},
}

// Channel kinds of a command for the ACL check.
const (
	aclChanNone uint8 = iota
	aclChanFirst
	aclChanAll
	aclChanAllPatterns
)

// initACL builds the ACL's command table from the server's and the
// registry with the default user; requirepass becomes its password.
func (srv *Server) initACL() {
	rows := make([]acl.CommandInfo, 0, len(srv.cmdList))
	for _, c := range srv.cmdList {
		var cats []string
		if c.meta != nil {
			cats = c.meta.ACLCategories
		}
		rows = append(rows, acl.CommandInfo{Name: c.fullName, Categories: cats, NoAuth: c.flags&flagNoAuth != 0})
	}
	t := acl.NewTable(rows)
	for _, c := range srv.cmdList {
		c.acl = t.Lookup(c.fullName)
		c.aclHasKeys = c.meta != nil && commandHasKeys(c)
		c.aclSimple = c.aclHasKeys && aclSimpleKeys(c)
		if c.aclSimple {
			ks := &c.meta.KeySpecs[0]
			c.aclKF = aclFlags(specFlags(ks.Flags))
			c.aclFirst, c.aclLastKey, c.aclLimit, c.aclStep = ks.BeginSearchIndex, ks.LastKey, ks.Limit, ks.KeyStep
			if c.aclStep <= 0 {
				c.aclStep = 1
			}
		}
		c.aclSet = c.fullName == "set"
		c.aclSort = c.fullName == "sort" || c.fullName == "sort_ro"
		switch c.fullName {
		case "publish", "spublish":
			c.aclChan = aclChanFirst
		case "subscribe", "ssubscribe":
			c.aclChan = aclChanAll
		case "psubscribe":
			c.aclChan = aclChanAllPatterns
		}
		if c.aclSimple && c.aclLastKey == 0 && c.aclChan == aclChanNone {
			c.aclOneKey = c.aclFirst
		}
	}
	srv.acl = acl.NewRegistry(t)
	srv.acl.SetPubsubDefault(srv.cfgValue("acl-pubsub-default") == "allchannels")
	srv.acl.SetDefaultPassword(srv.cfg.RequirePass())
	srv.cfg.OnChange("requirepass", func() { srv.acl.SetDefaultPassword(srv.cfg.RequirePass()) })
	srv.cfg.OnChange("acl-pubsub-default", func() {
		srv.acl.SetPubsubDefault(srv.cfgValue("acl-pubsub-default") == "allchannels")
	})
	srv.cfg.SetACLUsers(func() []string {
		var lines []string
		for _, u := range srv.acl.Users() {
			lines = append(lines, srv.acl.ListLine(u))
		}
		return lines
	})
	srv.cfg.OnChange("acllog-max-len", func() { srv.acl.Log.Trim(srv.cfg.ACLLogMaxLen()) })
}

// loadACLUsers applies redis.conf's user directives, or the aclfile, at
// startup; the two together are Redis's fatal error.
func (srv *Server) loadACLUsers() error {
	file := srv.cfgValue("aclfile")
	users := srv.cfg.Users()
	if file != "" && len(users) > 0 {
		return fmt.Errorf("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	seen := map[string]bool{}
	var cus []acl.ConfigUser
	for _, argv := range users {
		cu, err := srv.acl.CheckConfigUser(argv, seen)
		if err != nil {
			return fmt.Errorf("Error in user declaration '%s': %s", strings.Join(argv, " "), err)
		}
		cus = append(cus, cu)
	}
	disabled, err := srv.acl.LoadConfigUsers(cus)
	if err != nil {
		return fmt.Errorf("%s", err)
	}
	for _, d := range disabled {
		srv.log.Noticef("The user '%s' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.", d)
	}
	if file != "" {
		text, err := os.ReadFile(srv.aclPath(file))
		if err != nil {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: Error loading ACLs, opening file '%s': %s", file, errnoText(err))
		}
		if _, errs := srv.acl.LoadFile(string(text), file); errs != "" {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %s", errs)
		}
	}
	return nil
}

// aclPath is the aclfile's path: a relative one is relative to dir, the
// working directory (config.go changes into it, as Redis).
func (srv *Server) aclPath(file string) string { return file }

func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		if en, ok := pe.Err.(unix.Errno); ok {
			s := en.Error()
			return strings.ToUpper(s[:1]) + s[1:]
		}
		return pe.Err.Error()
	}
	return err.Error()
}

// aclSimpleKeys: one key spec, found by index and range with fixed flags,
// and no key finder of the command's own: its keys need no allocation.
func aclSimpleKeys(c *Cmd) bool {
	if len(c.meta.KeySpecs) != 1 || getkeysProcs[c.fullName] != nil || c.keys != nil {
		return false
	}
	ks := &c.meta.KeySpecs[0]
	f := specFlags(ks.Flags)
	return f&(kfNotKey|kfIncomplete|kfVariableFlags) == 0 && !ks.BeginSearchUnknown && ks.BeginSearchKeyword == "" &&
		ks.BeginSearchIndex > 0 && ks.FindKeysRange && !ks.FindKeysUnknown
}

func aclFlags(f keyFlags) acl.KeyFlags {
	var out acl.KeyFlags
	if f&kfAccess != 0 {
		out |= acl.KeyAccess
	}
	if f&kfInsert != 0 {
		out |= acl.KeyInsert
	}
	if f&kfDelete != 0 {
		out |= acl.KeyDelete
	}
	if f&kfUpdate != 0 {
		out |= acl.KeyUpdate
	}
	return out
}

// aclSpan is where a simple key spec finds its keys in a line of argc
// arguments: argv[first..last] by aclStep, none when last < first (Redis's
// getKeysUsingKeySpecs for an index begin-search and a range find-keys).
func aclSpan(c *Cmd, argc int) (first, last int) {
	first = c.aclFirst
	last = rangeLastKey(first, argc, c.aclLastKey, c.aclLimit)
	if last >= argc || last < first || first >= argc {
		return 1, 0
	}
	return first, last
}

// rangeLastKey is the index of the last key a key spec's range find-keys
// names, given its first key in a line of argc arguments: lastkey counted
// from first when not negative, from the end when limit is 0, else from
// first over 1/limit of the arguments (Redis's getKeysUsingKeySpecs).
func rangeLastKey(first, argc, lastKey, limit int) int {
	switch {
	case lastKey >= 0:
		return first + lastKey
	case limit == 0:
		return argc + lastKey
	default:
		return first + ((argc-first)/limit + lastKey)
	}
}

// aclKeys appends the command's keys with their flags to dst.
func aclKeys(c *Cmd, argv [][]byte, dst []acl.KeyRef) []acl.KeyRef {
	if !c.aclHasKeys {
		return dst
	}
	if c.aclSimple {
		first, last := aclSpan(c, len(argv))
		for i := first; i <= last; i += c.aclStep {
			dst = append(dst, acl.KeyRef{Pos: i, Flags: c.aclKF})
		}
		return dst
	}
	if c.aclSet && len(argv) == 3 {
		return append(dst, acl.KeyRef{Pos: 1, Flags: acl.KeyUpdate})
	}
	for _, k := range commandKeys(c, argv) {
		dst = append(dst, acl.KeyRef{Pos: k.pos, Flags: aclFlags(k.flags)})
	}
	return dst
}

func aclChannels(c *Cmd, argv [][]byte, dst []acl.ChannelRef) []acl.ChannelRef {
	switch c.aclChan {
	case aclChanFirst:
		if len(argv) > 1 {
			dst = append(dst, acl.ChannelRef{Pos: 1})
		}
	case aclChanAll, aclChanAllPatterns:
		for i := 1; i < len(argv); i++ {
			dst = append(dst, acl.ChannelRef{Pos: i, Pattern: c.aclChan == aclChanAllPatterns})
		}
	}
	return dst
}

// aclCheckRules checks a command line against rules; pos is the argv
// position of the key or channel denied.
func aclCheckRules(r *acl.Rules, c *Cmd, argv [][]byte) (acl.Result, int) {
	if r.Open() {
		return acl.OK, 0
	}
	if c.acl == nil {
		return acl.OK, 0
	}
	// The usual command: keys from its one simple key spec (or SET's
	// plain form), no channels to check. Its keys need no list.
	if c.aclChan == aclChanNone || !r.NeedsChannels() {
		switch {
		case !r.NeedsKeys() || !c.aclHasKeys:
			return r.CheckSpan(c.acl, argv, 1, 0, 1, 0)
		case c.aclSimple:
			first, last := aclSpan(c, len(argv))
			return r.CheckSpan(c.acl, argv, first, last, c.aclStep, c.aclKF)
		case c.aclSet && len(argv) == 3:
			return r.CheckSpan(c.acl, argv, 1, 1, 1, acl.KeyUpdate)
		}
	}
	var kbuf [8]acl.KeyRef
	var cbuf [4]acl.ChannelRef
	keys := kbuf[:0]
	if r.NeedsKeys() {
		keys = aclKeys(c, argv, keys)
	}
	chans := cbuf[:0]
	if c.aclChan != aclChanNone && r.NeedsChannels() {
		chans = aclChannels(c, argv, chans)
	}
	return r.Check(c.acl, argv, keys, chans)
}

// aclCheck is the client's check before routing: "" or the -NOPERM text;
// the denial is kept for route to log (peekRoute checks too, and must not).
func (cl *Client) aclCheck(c *Cmd, argv [][]byte) string {
	u := cl.user
	if u == nil {
		return ""
	}
	r := u.Load()
	if r.Open() {
		return ""
	}
	// The fast accept of a one-key command (SET's plain form too); a
	// line it does not accept gets the whole check.
	if c.acl != nil {
		if k := c.aclOneKey; k > 0 && k < len(argv) && r.AllowsKey(c.acl, argv[k], c.aclKF) ||
			c.aclSet && len(argv) == 3 && r.AllowsKey(c.acl, argv[1], acl.KeyUpdate) {
			return ""
		}
	}
	res, pos := aclCheckRules(r, c, argv)
	if res == acl.OK {
		return ""
	}
	cl.aclDenied, cl.aclPos = res, pos
	return acl.ErrorText(res, c.fullName)
}

// aclLogDenied records the denial aclCheck kept.
func (cl *Client) aclLogDenied(c *Cmd, argv [][]byte) {
	res := cl.aclDenied
	if res == acl.OK {
		return
	}
	cl.aclDenied = acl.OK
	ctx := acl.CtxToplevel
	if cl.multi.active {
		ctx = acl.CtxMulti
	}
	cl.srv.aclLog(cl, res, ctx, aclObject(res, c, argv, cl.aclPos), "")
}

func aclObject(res acl.Result, c *Cmd, argv [][]byte, pos int) string {
	switch res {
	case acl.DeniedCmd:
		return c.fullName
	case acl.DeniedKey, acl.DeniedChannel:
		if pos < len(argv) {
			return string(argv[pos])
		}
	case acl.DeniedAuth:
		return string(argv[0])
	}
	return ""
}

// aclLog adds an ACL LOG entry for cl (the script's caller for scripts).
func (srv *Server) aclLog(cl *Client, res acl.Result, ctx acl.Context, object, username string) {
	if username == "" {
		username = cl.userName()
	}
	info := ""
	if cl != nil {
		info = cl.clientInfoString()
	}
	srv.acl.Log.Add(acl.LogEntry{Reason: res, Context: ctx, Object: object, Username: username,
		Time: time.Now().UnixMilli(), ClientInfo: info}, srv.cfg.ACLLogMaxLen())
}

func (cl *Client) userName() string {
	if cl == nil || cl.user == nil {
		return "default"
	}
	return cl.user.Name
}

// defaultAuthenticated: a new connection (or RESET) is authenticated when
// the default user is on and needs no password (Redis's authRequired).
func (srv *Server) defaultAuthenticated() bool {
	r := srv.acl.Default().Load()
	return r.NoPass() && r.Enabled()
}

// closeClient closes another client as CLIENT KILL does (every loop is
// parked), or marks the caller to close after its reply.
func closeClient(cl, self *Client) {
	if cl.closed {
		return
	}
	cl.killed = true
	cl.closing = true
	if cl == self {
		return
	}
	if cl.c != nil {
		if fd := cl.c.Fd(); fd > 2 {
			_ = unix.Shutdown(fd, unix.SHUT_WR)
		}
		_ = cl.c.Close()
	}
}

// closeUsersClients closes the clients authenticated as the users.
func (srv *Server) closeUsersClients(users []*acl.User, self *Client) {
	if len(users) == 0 {
		return
	}
	gone := make(map[*acl.User]bool, len(users))
	for _, u := range users {
		gone[u] = true
	}
	for _, cl := range srv.allClients() {
		if cl.user != nil && gone[cl.user] {
			closeClient(cl, self)
		}
	}
}

// closeRevokedSubscribers closes the subscribers of u that hold a channel
// or pattern the new rules deny (Redis's ACLKillPubsubClientsIfNeeded).
func (srv *Server) closeRevokedSubscribers(u *acl.User, old, now *acl.Rules, self *Client) {
	if old == nil || !acl.ChannelsRevoked(old, now) {
		return
	}
	for _, cl := range srv.allClients() {
		if cl.user != u || cl.ps == nil {
			continue
		}
		kill := false
		for _, p := range cl.ps.patterns {
			if !now.SubscriberAllowed([]byte(p), true) {
				kill = true
			}
		}
		for ch := range cl.ps.channels {
			if !now.SubscriberAllowed([]byte(ch), false) {
				kill = true
			}
		}
		for ch := range cl.ps.shardChs {
			if !now.SubscriberAllowed([]byte(ch), false) {
				kill = true
			}
		}
		if kill {
			closeClient(cl, self)
		}
	}
}

func cmdACLSetUser(x *Exec, argv [][]byte) {
	u, old, now, msg := x.srv.acl.SetUser(string(argv[2]), argv[3:])
	if msg != "" {
		x.Err("ERR " + msg)
		return
	}
	x.srv.closeRevokedSubscribers(u, old, now, x.cl)
	x.OK()
}

func cmdACLDelUser(x *Exec, argv [][]byte) {
	names := make([]string, 0, len(argv)-2)
	for _, a := range argv[2:] {
		names = append(names, string(a))
	}
	removed, msg := x.srv.acl.DelUser(names)
	if msg != "" {
		x.Err("ERR " + msg)
		return
	}
	x.srv.closeUsersClients(removed, x.cl)
	x.Int(int64(len(removed)))
}

func cmdACLGetUser(x *Exec, argv [][]byte) {
	u := x.srv.acl.Get(string(argv[2]))
	if u == nil {
		x.Null()
		return
	}
	r := u.Load()
	t := x.srv.acl.Table()
	x.Map(6)
	x.BulkStr("flags")
	flags := r.FlagNames()
	x.Set(len(flags))
	for _, f := range flags {
		x.BulkStr(f)
	}
	x.BulkStr("passwords")
	x.Array(len(r.Passwords()))
	for _, p := range r.Passwords() {
		x.BulkStr(p)
	}
	root, more := r.Selectors()
	describe := func(s *acl.Selector) {
		x.BulkStr("commands")
		x.BulkStr(s.CommandRules(t))
		x.BulkStr("keys")
		x.BulkStr(s.KeysString())
		x.BulkStr("channels")
		x.BulkStr(s.ChannelsString())
	}
	describe(root)
	x.BulkStr("selectors")
	x.Array(len(more))
	for _, s := range more {
		x.Map(3)
		describe(s)
	}
}

func cmdACLList(x *Exec, argv [][]byte) {
	users := x.srv.acl.Users()
	x.Array(len(users))
	for _, u := range users {
		x.BulkStr(x.srv.acl.ListLine(u))
	}
}

func cmdACLUsers(x *Exec, argv [][]byte) {
	users := x.srv.acl.Users()
	x.Array(len(users))
	for _, u := range users {
		x.BulkStr(u.Name)
	}
}

func cmdACLWhoAmI(x *Exec, argv [][]byte) { x.BulkStr(x.cl.userName()) }

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func cmdACLLoad(x *Exec, argv [][]byte) {
	file := x.srv.cfgValue("aclfile")
	if file == "" {
		x.Err(errNoACLFile)
		return
	}
	text, err := os.ReadFile(x.srv.aclPath(file))
	if err != nil {
		x.Err(fmt.Sprintf("ERR Error loading ACLs, opening file '%s': %s", file, errnoText(err)))
		return
	}
	removed, errs := x.srv.acl.LoadFile(string(text), file)
	if errs != "" {
		x.Err("ERR " + errs)
		return
	}
	x.srv.closeUsersClients(removed, x.cl)
	x.OK()
}

func cmdACLSave(x *Exec, argv [][]byte) {
	file := x.srv.cfgValue("aclfile")
	if file == "" {
		x.Err(errNoACLFile)
		return
	}
	if err := writeFileAtomic(x.srv.aclPath(file), []byte(x.srv.acl.FileText())); err != nil {
		x.srv.log.Warningf("Writing ACL file for ACL SAVE: %s", err)
		x.Err("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	x.OK()
}

// writeFileAtomic writes a temporary file beside path and renames it over.
func writeFileAtomic(path string, data []byte) error {
	tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), time.Now().UnixMilli())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func cmdACLCat(x *Exec, argv [][]byte) {
	if len(argv) > 3 {
		x.Err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try ACL HELP.", argv[1]))
		return
	}
	if len(argv) == 2 {
		x.Array(len(acl.Categories))
		for _, c := range acl.Categories {
			x.BulkStr(c)
		}
		return
	}
	names, ok := x.srv.acl.Table().InCategory(string(argv[2]))
	if !ok {
		a := argv[2]
		if len(a) > 128 {
			a = a[:128]
		}
		x.Err(fmt.Sprintf("ERR Unknown category '%s'", a))
		return
	}
	x.Array(len(names))
	for _, n := range names {
		x.BulkStr(n)
	}
}

func cmdACLGenPass(x *Exec, argv [][]byte) {
	bits := int64(256)
	if len(argv) > 3 {
		x.Err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try ACL HELP.", argv[1]))
		return
	}
	if len(argv) == 3 {
		v, ok := shard.ParseInt(argv[2])
		if !ok {
			x.Err(shard.ErrNotInt)
			return
		}
		bits = v
	}
	if bits <= 0 || bits > 4096 {
		x.Err("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
		return
	}
	x.BulkStr(acl.GenPass(int(bits)))
}

func cmdACLLog(x *Exec, argv [][]byte) {
	if len(argv) > 3 {
		x.Err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try ACL HELP.", argv[1]))
		return
	}
	count := int64(10)
	if len(argv) == 3 {
		if shard.EqualFold(argv[2], "reset") {
			x.srv.acl.Log.Reset()
			x.OK()
			return
		}
		v, ok := shard.ParseInt(argv[2])
		if !ok {
			x.Err(shard.ErrNotInt)
			return
		}
		if v < 0 {
			v = 0
		}
		count = v
	}
	if count > 1<<30 {
		count = 1 << 30
	}
	entries := x.srv.acl.Log.Entries(int(count))
	now := time.Now().UnixMilli()
	x.Array(len(entries))
	for _, e := range entries {
		x.Map(7)
		x.BulkStr("count")
		x.Int(e.Count)
		x.BulkStr("reason")
		x.BulkStr(acl.ReasonString(e.Reason))
		x.BulkStr("context")
		x.BulkStr(e.Context.String())
		x.BulkStr("object")
		x.BulkStr(e.Object)
		x.BulkStr("username")
		x.BulkStr(e.Username)
		x.BulkStr("age-seconds")
		x.Double(float64(now-e.Time) / 1000)
		x.BulkStr("client-info")
		x.BulkStr(e.ClientInfo)
	}
}

func cmdACLDryRun(x *Exec, argv [][]byte) {
	u := x.srv.acl.Get(string(argv[2]))
	if u == nil {
		x.Err(fmt.Sprintf("ERR User '%s' not found", argv[2]))
		return
	}
	line := argv[3:]
	c := x.srv.lookup(line)
	if c == nil || (c.subs != nil && len(line) > 1) {
		x.Err(fmt.Sprintf("ERR Command '%s' not found", argv[3]))
		return
	}
	if (c.arity > 0 && len(line) != c.arity) || len(line) < -c.arity {
		x.Err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", c.fullName))
		return
	}
	res, pos := aclCheckRules(u.Load(), c, line)
	switch res {
	case acl.OK:
		x.OK()
	case acl.DeniedCmd:
		x.BulkStr(fmt.Sprintf("This user has no permissions to run the '%s' command", c.fullName))
	case acl.DeniedKey:
		x.BulkStr(fmt.Sprintf("This user has no permissions to access the '%s' key", line[pos]))
	default:
		x.BulkStr(fmt.Sprintf("This user has no permissions to access the '%s' channel", line[pos]))
	}
}

func cmdACLHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	})
}

// authenticate is AUTH's and HELLO AUTH's check: the client becomes the
// user, or the failure is logged (reason auth, object the command's name).
func (x *Exec) authenticate(argv0, user, pass []byte) bool {
	u := x.srv.acl.Authenticate(user, pass)
	if u == nil {
		ctx := acl.CtxToplevel
		if x.cl.multi.active {
			ctx = acl.CtxMulti
		}
		x.srv.aclLog(x.cl, acl.DeniedAuth, ctx, string(argv0), string(user))
		return false
	}
	x.cl.user = u
	x.cl.setAuthenticated(true)
	return true
}

func (srv *Server) cfgValue(name string) string {
	v, _ := srv.cfg.GetValue(name)
	return v
}

// aclRecheck is EXEC's check of a queued command: the rules may have
// changed since it was queued (Redis's execCommand).
func (cl *Client) aclRecheck(c *Cmd, argv [][]byte) string {
	if cl.user == nil {
		return ""
	}
	r := cl.user.Load()
	if r.Open() {
		return ""
	}
	res, pos := aclCheckRules(r, c, argv)
	if res == acl.OK {
		return ""
	}
	cl.srv.aclLog(cl, res, acl.CtxMulti, aclObject(res, c, argv, pos), "")
	reason := "no permission"
	switch res {
	case acl.DeniedCmd:
		reason = "no permission to execute the command or subcommand"
	case acl.DeniedKey:
		reason = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// aclScriptCheck is redis.call's check against the script's caller
// (context lua).
func (cl *Client) aclScriptCheck(c *Cmd, argv [][]byte) string {
	res, pos := aclCheckRules(cl.user.Load(), c, argv)
	if res == acl.OK {
		return ""
	}
	cl.srv.aclLog(cl, res, acl.CtxLua, aclObject(res, c, argv, pos), "")
	return "ERR " + acl.ScriptErrorText(res)
}

// sortPatternsDenied: the client's user may not read every key with this
// SORT line (Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess with
// CMD_KEY_ACCESS).
func sortPatternsDenied(cl *Client, c *Cmd, argv [][]byte) bool {
	if cl.user == nil || c.acl == nil {
		return false
	}
	r := cl.user.Load()
	if r.Open() {
		return false
	}
	var kbuf [8]acl.KeyRef
	return !r.AllowedWithAllKeys(c.acl, argv, aclKeys(c, argv, kbuf[:0]), nil, acl.KeyAccess)
}
