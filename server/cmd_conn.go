package server

import (
	"strconv"
	"strings"

	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// serverCommands is the server command table: commands about the connection
// and the server rather than keys. Each file keeps its rows beside its
// handlers.
var serverCommands = concatServerCommands(connCommands, adminCommands, persistCommands, snapshotCommands, memoryServerCommands, pubsubCommands,
	multiCommands, aclCommands, slowlogCommands, latencyCommands, monitorCommands, replMasterCommands, replicaCommands, pauseCommands, failoverCommands, scriptCommands, functionCommands, trackingCommands, moduleCommands, lolwutCommands)

func concatServerCommands(tables ...[]serverCmd) []serverCmd {
	var all []serverCmd
	for _, t := range tables {
		all = append(all, t...)
	}
	return all
}

var connCommands = []serverCmd{
	{name: "ping", exec: cmdPing},
	{name: "echo", exec: cmdEcho},
	{name: "quit", exec: cmdQuit, home: true},
	{name: "reset", exec: cmdReset, home: true},
	{name: "select", exec: cmdSelect, home: true},
	{name: "auth", exec: cmdAuth, home: true},
	{name: "hello", exec: cmdHello, home: true},
}

func cmdPing(x *Exec, argv [][]byte) {
	if len(argv) > 2 {
		x.Err("ERR wrong number of arguments for 'ping' command")
		return
	}
	if x.cl != nil && x.Proto == 2 && x.cl.subscribed() {
		// Pub/Sub mode in RESP2: ["pong", arg] (pubsub.go)
		x.Array(2)
		x.BulkStr("pong")
		if len(argv) == 2 {
			x.Bulk(argv[1])
		} else {
			x.BulkStr("")
		}
		return
	}
	if len(argv) == 2 {
		x.Bulk(argv[1])
		return
	}
	x.Out = append(x.Out, "+PONG\r\n"...)
}

func cmdEcho(x *Exec, argv [][]byte) { x.Bulk(argv[1]) }

func cmdQuit(x *Exec, argv [][]byte) {
	x.OK()
	x.cl.closing = true
}

func cmdReset(x *Exec, argv [][]byte) {
	cl := x.cl
	x.pubsubReset() // unsubscribe from everything (pubsub.go)
	cl.multiReset() // leave MULTI, UNWATCH (multi.go)
	cl.db = 0
	cl.proto = 2
	cl.name = ""
	cl.replyOff, cl.replySkip = false, false
	cl.noEvict, cl.noTouch = false, false
	cl.user = cl.srv.acl.Default()
	cl.setAuthenticated(cl.srv.defaultAuthenticated())
	cl.stopMonitor()
	cl.disableTracking() // tracking.go
	x.Simple("RESET")
}

func cmdSelect(x *Exec, argv [][]byte) {
	id, err := strconv.ParseInt(string(argv[1]), 10, 64)
	if err != nil {
		x.Err(shard.ErrNotInt)
		return
	}
	if x.srv.clus != nil && id != 0 {
		x.Err(errClusterSelect)
		return
	}
	if id < 0 || id >= int64(len(x.srv.shards[0].DBs)) {
		x.Err(shard.ErrDBIndex)
		return
	}
	x.cl.db = int(id)
	x.OK()
}

const errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."

func cmdAuth(x *Exec, argv [][]byte) {
	if len(argv) > 3 {
		x.Err(shard.ErrSyntax)
		return
	}
	var user, pass []byte
	if len(argv) == 2 {
		pass = argv[1]
		user = []byte("default")
		if x.srv.acl.Default().Load().NoPass() {
			x.Err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return
		}
	} else {
		user, pass = argv[1], argv[2]
	}
	if !x.authenticate(argv[0], user, pass) { // acl.go
		x.srv.log.Verbosef("auth failed for client %s", x.cl.addr())
		x.Err(errWrongPass)
		return
	}
	x.OK()
}

func cmdHello(x *Exec, argv [][]byte) {
	cl := x.cl
	proto := cl.proto
	i := 1
	if len(argv) >= 2 {
		v, err := strconv.ParseInt(string(argv[1]), 10, 64)
		if err != nil {
			x.Err("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			x.Err("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
		i = 2
	}
	var setName []byte
	authed := false
	for ; i < len(argv); i++ {
		more := len(argv) - i - 1
		opt := strings.ToLower(string(argv[i]))
		switch {
		case opt == "auth" && more >= 2:
			if !x.authenticate(argv[0], argv[i+1], argv[i+2]) {
				x.Err(errWrongPass)
				return
			}
			authed = true
			i += 2
		case opt == "setname" && more >= 1:
			if msg := validClientName(argv[i+1]); msg != "" {
				x.Err(msg)
				return
			}
			setName = argv[i+1]
			i++
		default:
			x.Err("ERR Syntax error in HELLO option '" + string(argv[i]) + "'")
			return
		}
	}
	if !cl.authenticated && !authed {
		x.Err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName != nil {
		cl.name = string(setName)
	}
	cl.proto = proto
	x.Proto = proto
	x.Map(7)
	x.BulkStr("server")
	x.BulkStr("redis")
	x.BulkStr("version")
	x.BulkStr(RedisVersion)
	x.BulkStr("proto")
	x.Int(int64(proto))
	x.BulkStr("id")
	x.Int(cl.id)
	x.BulkStr("mode")
	x.BulkStr(x.srv.redisMode()) // "cluster" in cluster mode (cmd_cluster.go)
	x.BulkStr("role")
	if x.srv.repl.isReplica.Load() {
		x.BulkStr("replica")
	} else {
		x.BulkStr("master")
	}
	x.BulkStr("modules")
	x.Out = resp.AppendArrayLen(x.Out, 0)
}

// validClientName returns Redis's error for a name with spaces or newlines.
func validClientName(name []byte) string {
	for _, c := range name {
		if c < '!' || c > '~' {
			return "ERR Client names cannot contain spaces, newlines or special characters."
		}
	}
	return ""
}
