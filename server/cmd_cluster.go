package server

// Redis Cluster mode, on one node: CLUSTER, READONLY, READWRITE, ASKING.
//
// With cluster-enabled no (the default) every CLUSTER subcommand, READONLY,
// READWRITE and ASKING answer what Redis 7.0 answers then: "This instance
// has cluster support disabled" (arity and unknown subcommands are checked
// before, as in Redis).
//
// With cluster-enabled yes the server is a Redis Cluster node that knows no
// other node. Its id, epochs and slots are kept in cluster-config-file
// (nodes.conf, in dir; Redis 7.0's format, package cluster), locked with
// flock while the server runs, written at the first start and after every
// change, read at the next start (so the id is stable). A node that starts
// without the file owns all 16384 slots, so that cluster clients (go-redis
// ClusterClient, redis-cli -c, ...) work at once; ADDSLOTS, DELSLOTS,
// ...RANGE, FLUSHSLOTS, SETSLOT <slot> NODE <myid>, RESET change that as in
// Redis, and cluster_state is ok when every slot is served (or, with
// cluster-require-full-coverage no, when some are). The command path's
// checks (CROSSSLOT, CLUSTERDOWN) are in cluster_route.go. Keys stay where
// they are without cluster mode: on shard slot mod N (shard.ShardOf), so a
// cluster client's routing by slot and redshard's agree, and a slot's keys
// are on one shard.
//
// Differences from Redis 7.0, on purpose or not yet done:
//   - a fresh node owns every slot (Redis's owns none until ADDSLOTS or
//     redis-cli --cluster create, whose ADDSLOTS then answer "Slot 0 is
//     already busy");
//   - there is no cluster bus (nothing listens on port+10000): MEET is
//     refused, so no other node can be known; a nodes.conf naming other
//     nodes is refused at start;
//   - the node's ip, when neither cluster-announce-ip nor nodes.conf gives
//     one, is the address the client reached (Redis shows "" until another
//     node tells it its address; a remote client could not use that);
//   - the state is ok at once (Redis waits 2 s after start, to rejoin a
//     cluster that may have moved on: there is none here);
//   - COUNTKEYSINSLOT and GETKEYSINSLOT scan the slot's shard (Redis keeps
//     a slot -> keys index); GETKEYSINSLOT lists keys in the shard's order.
//
// # Joining a Redis Cluster of several nodes (the plan)
//
// The cluster bus. Each node listens on its bus port (cluster-port, or
// port+10000) for Redis 7.0's binary protocol (cluster.h's clusterMsg,
// integers in network byte order): a fixed header (signature "RCmb", total
// length, version 1, port, type, count, currentEpoch, configEpoch,
// replication offset, sender id, the sender's 16384-bit slot bitmap, its
// master's id, its ip, the number of extensions, 30 reserved bytes, pport,
// cport, flags, cluster state, message flags) and a body per type: PING,
// PONG and MEET carry gossip sections (id, ping_sent, pong_received, ip,
// port, cport, flags of some other nodes) and, in 7.0, extensions
// (hostname); FAIL names a failed node; PUBLISH and
// PUBLISHSHARD carry a channel and a message; UPDATE carries a node's
// configEpoch and slot bitmap; FAILOVER_AUTH_REQUEST/ACK and MFSTART run
// failovers. It would be a package of its own (bus/: codec, links, the
// cron that pings a few random nodes every second and any node not pinged
// for node-timeout/2, failure detection PFAIL -> FAIL on a majority of
// masters' reports) that feeds cluster.State through one owner goroutine,
// and publishes the slot map to the loops as an immutable snapshot (as
// clusterState.owned is today), so the command path reads it without a
// lock. Epochs: a node's configEpoch versions its claim on its slots; the
// higher claim wins (clusterUpdateSlotsConfigWith), and colliding epochs
// are resolved by bumping the smaller node id; currentEpoch is the
// greatest seen. cluster.State already keeps all of that, and nodes.conf is
// already written in the format other nodes' files use.
//
// The slot map owned by this node. cluster.State.Owner(slot) is then some
// node, and the route check (cluster_route.go, the one place the command
// path asks) answers -MOVED <slot> <ip>:<port> when it is another, and,
// for a slot this node is migrating (SETSLOT <slot> MIGRATING <id>), -ASK
// <slot> <ip>:<port> when a key of the command is missing here (TRYAGAIN
// when some are here and some are not); for a slot being imported
// (SETSLOT <slot> IMPORTING <id>) a command is served only after ASKING
// (or when RESTORE-ASKING). Blocked clients whose slot moved are
// answered with the redirection (clusterRedirectBlockedClientIfNeeded).
// cluster-allow-cross-slot yes then lets a command mix slots that are all
// served here (still atomically across shards); one that names a slot
// served elsewhere gets -CROSSSLOT, since no single MOVED can name two
// nodes.
//
// Slot migration (redis-cli --cluster reshard, or an operator): on the
// target CLUSTER SETSLOT s IMPORTING <source>, on the source SETSLOT s
// MIGRATING <target>; then the source loops CLUSTER GETKEYSINSLOT s n and
// MIGRATE host port "" 0 timeout KEYS k1 ... kn (redshard has MIGRATE,
// shard/migrate.go), each key moved atomically (DUMP on the source,
// RESTORE-ASKING on the target, then DEL); finally SETSLOT s NODE <target>
// on both, which bumps the target's configEpoch and is spread by the bus.
// Because a key's shard is its slot mod N, every key of a slot lives on
// one shard: GETKEYSINSLOT, COUNTKEYSINSLOT and the MIGRATE of one slot's
// keys run on that shard's loop alone, as a hop, never a cross-shard
// transaction, and the "is the key here?" test of ASK is a lookup on that
// one shard. A per-slot key index on each shard (a list per slot, as
// Redis's slots_to_keys) would make GETKEYSINSLOT cheap for resharding.
//
// Replicas of this node would be redshard's replication (repl.go) with
// the cluster's role change (CLUSTER REPLICATE, FAILOVER) driven by the bus.
//
// What this file's choices keep open: the ids, epochs and nodes.conf are
// Redis's; the check is at one place in the command path and already
// returns Redis's redirection errors; the slot map is per node.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redshard/redshard/cluster"
	"github.com/redshard/redshard/shard"
)

const errClusterDisabled = "ERR This instance has cluster support disabled"

// clusterState is this node's cluster configuration (srv.clus; nil with
// cluster-enabled no). CLUSTER subcommands run on their clients' home
// loops (or with every shard taken, those that read keys), so st is
// guarded by mu; the command path reads the published atomics only.
type clusterState struct {
	srv  *Server
	exec *Cmd // EXEC: checked over its queued commands (cluster_route.go)

	mu    sync.Mutex
	st    *cluster.State
	path  string
	lock  *os.File // holds the flock on path
	annIP string   // cluster-announce-ip as last applied to myself

	// Published after every change of the slot map (publish).
	owned   atomic.Pointer[cluster.SlotSet] // the slots this node serves
	allMine atomic.Bool                     // every slot
	anyMine atomic.Bool                     // at least one
}

// initCluster loads or creates the node's configuration (Redis's
// clusterInit) when cluster-enabled is yes.
func (srv *Server) initCluster() error {
	cfg := srv.cfg
	if !cfg.ClusterEnabled() {
		return nil
	}
	if cfg.replHost.Load() != "" {
		return errors.New("replicaof directive not allowed in cluster mode")
	}
	path := cfg.clusterConfigFile.Load()
	if !filepath.IsAbs(path) {
		path = filepath.Join(cfg.Dir(), path) // Redis runs in dir
	}
	lock, err := cluster.Lock(path)
	if err != nil {
		return err
	}
	st, warnings, err := cluster.Load(path)
	if err != nil {
		lock.Close()
		return err
	}
	for _, w := range warnings {
		srv.log.Warningf("%s", w)
	}
	fresh := st == nil
	if fresh {
		st = cluster.New()
		for s := 0; s < cluster.Slots; s++ {
			st.Myself.Slots.Add(s)
		}
		srv.log.Noticef("No cluster configuration found, I'm %s", st.Myself.Name)
	} else {
		srv.log.Noticef("Node configuration loaded, I'm %.40s", st.Myself.Name)
		if len(st.Nodes) > 1 {
			lock.Close()
			return fmt.Errorf("%s names %d other nodes: redshard has no cluster bus yet and serves a cluster of one node only", path, len(st.Nodes)-1)
		}
		if st.Myself.Flags&cluster.FlagMaster == 0 {
			lock.Close()
			return fmt.Errorf("%s: this node is not a master there: redshard serves a cluster of one master only", path)
		}
	}
	cs := &clusterState{srv: srv, st: st, path: path, lock: lock}
	for _, c := range srv.cmdList {
		if c.fullName == "exec" {
			cs.exec = c
		}
	}
	cs.refreshMyself()
	if fresh {
		if err := cs.save(true); err != nil {
			lock.Close()
			return fmt.Errorf("Fatal: can't update cluster config file.")
		}
	}
	cs.publish()
	srv.clus = cs
	srv.clusterCommandRules()
	return nil
}

// clusterCommandRules gives the commands that Redis refuses in cluster
// mode their refusals (only DB 0 exists there; replication is the
// cluster's).
func (srv *Server) clusterCommandRules() {
	for _, c := range srv.cmdList {
		switch c.fullName {
		case "move":
			c.run = func(x *shard.Ctx, argv [][]byte) { x.Err("ERR MOVE is not allowed in cluster mode") }
		case "swapdb":
			c.run = func(x *shard.Ctx, argv [][]byte) { x.Err("ERR SWAPDB is not allowed in cluster mode") }
		case "copy":
			run := c.run
			c.run = func(x *shard.Ctx, argv [][]byte) {
				// After the options parse, as Redis's copyCommand.
				db := int64(0)
				for j := 3; j < len(argv); j++ {
					switch {
					case shard.EqualFold(argv[j], "replace"):
					case shard.EqualFold(argv[j], "db") && j+1 < len(argv):
						v, err := strconv.ParseInt(string(argv[j+1]), 10, 32)
						if err != nil {
							run(x, argv)
							return
						}
						db = v
						j++
					default:
						run(x, argv)
						return
					}
				}
				if db != 0 {
					x.Err("ERR Copying to another database is not allowed in cluster mode")
					return
				}
				run(x, argv)
			}
		case "replicaof", "slaveof":
			c.exec = func(x *Exec, argv [][]byte) { x.Err("ERR REPLICAOF not allowed in cluster mode.") }
		case "failover":
			c.exec = func(x *Exec, argv [][]byte) {
				x.Err("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.")
			}
		}
	}
}

// refreshMyself takes myself's address from the config, as Redis's
// deriveAnnouncedPorts and clusterUpdateMyselfIp/Hostname do. Called with
// mu held (or before the server runs).
func (cs *clusterState) refreshMyself() {
	cfg := cs.srv.cfg
	me := cs.st.Myself
	tlsCluster := cfg.tlsCluster.Load()
	port := cfg.Port()
	if tlsCluster {
		port = cfg.TLSPort()
	}
	me.Port, me.PPort = port, 0
	if tlsCluster {
		me.PPort = cfg.Port()
	}
	me.CPort = port + cluster.PortIncr
	if p := int(cfg.clusterPort.Load()); p != 0 {
		me.CPort = p
	}
	if p := int(cfg.clusterAnnounceTLS.Load()); tlsCluster && p != 0 {
		me.Port = p
		me.PPort = int(cfg.clusterAnnouncePort.Load())
	} else if p := int(cfg.clusterAnnouncePort.Load()); p != 0 {
		me.Port = p
	}
	if p := int(cfg.clusterAnnounceBus.Load()); p != 0 {
		me.CPort = p
	}
	// The announced ip replaces the one known when it changes (unset:
	// the address is learned again), as clusterUpdateMyselfIp.
	if ip := cfg.clusterAnnounceIP.Load(); ip != cs.annIP {
		cs.annIP = ip
		me.IP = ip
	}
	me.Hostname = cfg.clusterAnnounceHost.Load()
}

// publish makes the slot map visible to the command path.
func (cs *clusterState) publish() {
	s := cs.st.Myself.Slots
	cs.owned.Store(&s)
	cs.allMine.Store(s.All())
	cs.anyMine.Store(s.Count() > 0)
}

// stateOK is cluster_state:ok (clusterUpdateState, for a lone master).
func (cs *clusterState) stateOK() bool {
	if cs.allMine.Load() {
		return true
	}
	return cs.anyMine.Load() && !cs.srv.cfg.clusterFullCoverage.Load()
}

// save writes nodes.conf (clusterSaveConfig). Called with mu held.
func (cs *clusterState) save(fsync bool) error {
	return cluster.Save(cs.path, cs.st.Marshal(), fsync)
}

// changed publishes and saves after a change of the configuration, as
// clusterDoBeforeSleep(SAVE_CONFIG|UPDATE_STATE). Redis dies when it
// cannot save; redshard logs it and goes on (SAVECONFIG reports it).
func (cs *clusterState) changed() {
	cs.publish()
	if err := cs.save(true); err != nil {
		cs.srv.log.Warningf("Can't update cluster config file %s: %v", cs.path, err)
	}
}

// myIP is the ip this node shows a client: the known one, else the
// address the client reached (see the top of the file).
func (cs *clusterState) myIP(x *Exec) string {
	if ip := cs.st.Myself.IP; ip != "" {
		return ip
	}
	if x.cl != nil && x.cl.c != nil && !x.cl.unixSocket() {
		if a, ok := x.cl.c.LocalAddr().(*net.TCPAddr); ok {
			return a.IP.String()
		}
	}
	return ""
}

// usePPort: a TLS cluster answers a plaintext client with plaintext ports.
func (cs *clusterState) usePPort(x *Exec) bool {
	return cs.srv.cfg.tlsCluster.Load() && x.cl != nil && x.cl.tls == nil
}

// ---------------------------------------------------------------------------
// The commands
// ---------------------------------------------------------------------------

// clusterSubs are the CLUSTER subcommands; those missing answer
// errClusterDisabled whatever the mode (none are).
var clusterSubs = map[string]serverCmd{
	"help":                  {exec: clusterHelp, home: true},
	"info":                  {exec: clusterInfo, home: true},
	"myid":                  {exec: clusterMyID, home: true},
	"nodes":                 {exec: clusterNodes, home: true},
	"slots":                 {exec: clusterSlots, home: true},
	"shards":                {exec: clusterShards, home: true},
	"links":                 {exec: clusterLinks, home: true},
	"keyslot":               {exec: clusterKeySlot, home: true},
	"countkeysinslot":       {exec: clusterCountKeys, shardFn: slotShard},
	"getkeysinslot":         {exec: clusterGetKeys, shardFn: slotShard},
	"replicas":              {exec: clusterReplicas, home: true},
	"slaves":                {exec: clusterReplicas, home: true},
	"count-failure-reports": {exec: clusterFailureReports, home: true},
	"addslots":              {exec: clusterAddDelSlots, home: true},
	"delslots":              {exec: clusterAddDelSlots, home: true},
	"addslotsrange":         {exec: clusterAddDelSlotsRange, home: true},
	"delslotsrange":         {exec: clusterAddDelSlotsRange, home: true},
	"flushslots":            {exec: clusterFlushSlots, allShards: true},
	"setslot":               {exec: clusterSetSlot, home: true},
	"bumpepoch":             {exec: clusterBumpEpoch, home: true},
	"set-config-epoch":      {exec: clusterSetConfigEpoch, home: true},
	"saveconfig":            {exec: clusterSaveConfig, home: true},
	"meet":                  {exec: clusterMeet, home: true},
	"forget":                {exec: clusterForget, home: true},
	"replicate":             {exec: clusterReplicate, home: true},
	"failover":              {exec: clusterFailover, home: true},
	"reset":                 {exec: clusterReset, allShards: true},
}

func init() {
	serverCommands = append(serverCommands,
		serverCmd{name: "readonly", exec: cmdReadOnly, home: true},
		serverCmd{name: "readwrite", exec: cmdReadOnly, home: true},
		serverCmd{name: "asking", exec: cmdReadOnly, home: true})
	for _, sub := range LookupMeta("cluster").Subcommands {
		_, name, _ := strings.Cut(sub.Name, "|")
		row, ok := clusterSubs[name]
		if !ok {
			row = serverCmd{exec: func(x *Exec, argv [][]byte) { x.Err(errClusterDisabled) }, home: true}
		}
		exec := row.exec
		row.exec = func(x *Exec, argv [][]byte) {
			if x.srv.clus == nil {
				x.Err(errClusterDisabled)
				return
			}
			exec(x, argv)
		}
		row.name = sub.Name
		serverCommands = append(serverCommands, row)
	}
}

// cmdReadOnly is READONLY, READWRITE and ASKING: flags that matter for a
// replica or an importing slot, which this node never is or has.
func cmdReadOnly(x *Exec, argv [][]byte) {
	if x.srv.clus == nil {
		x.Err(errClusterDisabled)
		return
	}
	x.OK()
}

// slotShard routes COUNTKEYSINSLOT and GETKEYSINSLOT to the shard that
// holds the slot's keys; a bad slot is answered at home.
func slotShard(argv [][]byte, n int) int {
	slot, err := strconv.ParseInt(string(argv[2]), 10, 64)
	if err != nil || slot < 0 || slot >= cluster.Slots {
		return -1
	}
	return int(slot) % n
}

var clusterHelpLines = []string{
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
}

func clusterHelp(x *Exec, argv [][]byte) { addHelp(x, argv[0], clusterHelpLines) }

// clusterLocked runs f with the configuration locked and myself's address fresh.
func (x *Exec) clusterLocked(f func(cs *clusterState, st *cluster.State)) {
	cs := x.srv.clus
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.refreshMyself()
	f(cs, cs.st)
}

func clusterInfo(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		assigned := 0
		for s := 0; s < cluster.Slots; s++ {
			if st.Owner(s) != nil {
				assigned++
			}
		}
		state := "fail"
		if cs.stateOK() {
			state = "ok"
		}
		me := st.Myself
		size := st.Size()
		var b strings.Builder
		fmt.Fprintf(&b, "cluster_state:%s\r\n", state)
		fmt.Fprintf(&b, "cluster_slots_assigned:%d\r\n", assigned)
		fmt.Fprintf(&b, "cluster_slots_ok:%d\r\n", assigned)
		b.WriteString("cluster_slots_pfail:0\r\n")
		b.WriteString("cluster_slots_fail:0\r\n")
		fmt.Fprintf(&b, "cluster_known_nodes:%d\r\n", len(st.Nodes))
		fmt.Fprintf(&b, "cluster_size:%d\r\n", size)
		fmt.Fprintf(&b, "cluster_current_epoch:%d\r\n", st.CurrentEpoch)
		fmt.Fprintf(&b, "cluster_my_epoch:%d\r\n", me.ConfigEpoch)
		b.WriteString("cluster_stats_messages_sent:0\r\n")
		b.WriteString("cluster_stats_messages_received:0\r\n")
		b.WriteString("total_cluster_links_buffer_limit_exceeded:0\r\n")
		x.Verbatim([]byte(b.String()))
	})
}

func clusterMyID(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) { x.BulkStr(st.Myself.Name) })
}

// clusterNodes is CLUSTER NODES: nodes.conf's lines, with myself's ip as
// the client sees it when none is known.
func clusterNodes(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		me := st.Myself
		ip := me.IP
		me.IP = cs.myIP(x)
		text := st.NodesText(cs.usePPort(x))
		me.IP = ip
		x.Verbatim([]byte(text))
	})
}

// clusterSlots is CLUSTER SLOTS (clusterReplyMultiBulkSlots): one entry per
// range of slots served by one node.
func clusterSlots(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		ranges := st.Myself.Slots.Ranges()
		x.Array(len(ranges))
		for _, r := range ranges {
			x.Array(3)
			x.Int(int64(r[0]))
			x.Int(int64(r[1]))
			cs.nodeReply(x, st.Myself)
		}
	})
}

// nodeReply is addNodeToNodeReply: endpoint, port, id, and a map of the
// other endpoints.
func (cs *clusterState) nodeReply(x *Exec, n *cluster.Node) {
	cfg := cs.srv.cfg
	kind := int(cfg.clusterEndpointType.Load())
	ip := cs.myIP(x)
	x.Array(4)
	switch kind {
	case endpointIP:
		x.BulkStr(ip)
	case endpointHostname:
		if n.Hostname != "" {
			x.BulkStr(n.Hostname)
		} else {
			x.BulkStr("?")
		}
	default:
		x.Null()
	}
	port := n.Port
	if cs.usePPort(x) && n.PPort != 0 {
		port = n.PPort
	}
	x.Int(int64(port))
	x.BulkStr(n.Name)
	extra := 0
	if kind != endpointIP {
		extra++
	}
	if kind != endpointHostname && n.Hostname != "" {
		extra++
	}
	x.Map(extra)
	if kind != endpointIP {
		x.BulkStr("ip")
		x.BulkStr(ip)
	}
	if kind != endpointHostname && n.Hostname != "" {
		x.BulkStr("hostname")
		x.BulkStr(n.Hostname)
	}
}

// preferredEndpoint is getPreferredEndpoint.
func (cs *clusterState) preferredEndpoint(x *Exec, n *cluster.Node) string {
	switch cs.srv.cfg.clusterEndpointType.Load() {
	case endpointIP:
		return cs.myIP(x)
	case endpointHostname:
		if n.Hostname != "" {
			return n.Hostname
		}
		return "?"
	}
	return ""
}

// clusterShards is CLUSTER SHARDS (clusterReplyShards): one shard, this
// master, with its slot ranges.
func clusterShards(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		me := st.Myself
		ranges := me.Slots.Ranges()
		x.Array(1)
		x.Map(2)
		x.BulkStr("slots")
		x.Array(2 * len(ranges))
		for _, r := range ranges {
			x.Int(int64(r[0]))
			x.Int(int64(r[1]))
		}
		x.BulkStr("nodes")
		x.Array(1)
		tlsCluster := cs.srv.cfg.tlsCluster.Load()
		plain, tlsPort := me.Port, 0
		if tlsCluster {
			plain, tlsPort = me.PPort, me.Port
		}
		n := 6
		if plain != 0 {
			n++
		}
		if tlsPort != 0 {
			n++
		}
		if me.Hostname != "" {
			n++
		}
		x.Map(n)
		x.BulkStr("id")
		x.BulkStr(me.Name)
		if plain != 0 {
			x.BulkStr("port")
			x.Int(int64(plain))
		}
		if tlsPort != 0 {
			x.BulkStr("tls-port")
			x.Int(int64(tlsPort))
		}
		x.BulkStr("ip")
		x.BulkStr(cs.myIP(x))
		x.BulkStr("endpoint")
		x.BulkStr(cs.preferredEndpoint(x, me))
		if me.Hostname != "" {
			x.BulkStr("hostname")
			x.BulkStr(me.Hostname)
		}
		_, _, off, _ := cs.srv.repl.ids()
		x.BulkStr("role")
		x.BulkStr("master")
		x.BulkStr("replication-offset")
		x.Int(off)
		x.BulkStr("health")
		x.BulkStr("online")
	})
}

// clusterLinks is CLUSTER LINKS: no other node, no link.
func clusterLinks(x *Exec, argv [][]byte) { x.Array(0) }

func clusterKeySlot(x *Exec, argv [][]byte) { x.Int(int64(shard.KeySlot(argv[2]))) }

// parseLongArg is getLongLongFromObjectOrReply.
func parseLongArg(x *Exec, b []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		x.Err(shard.ErrNotInt)
		return 0, false
	}
	return v, true
}

// slotKeys calls f with each key of slot in database 0 (on the slot's
// shard, which the command runs on), until f returns false.
func slotKeys(x *Exec, slot int, f func(key []byte) bool) {
	db := x.Shards[slot%len(x.Shards)].DBs[0]
	for s, n := int32(0), db.Slots(); s < n; s++ {
		if !db.Live(s) {
			continue
		}
		if k := db.Key(s); shard.KeySlot(k) == slot && !f(k) {
			return
		}
	}
}

// countKeysInSlot counts the keys of slot, expired ones not yet reclaimed
// included (as Redis's index of a slot's keys holds them).
func countKeysInSlot(x *Exec, slot int) int {
	n := 0
	slotKeys(x, slot, func([]byte) bool { n++; return true })
	return n
}

func clusterCountKeys(x *Exec, argv [][]byte) {
	slot, ok := parseLongArg(x, argv[2])
	if !ok {
		return
	}
	if slot < 0 || slot >= cluster.Slots {
		x.Err("ERR Invalid slot")
		return
	}
	x.Int(int64(countKeysInSlot(x, int(slot))))
}

func clusterGetKeys(x *Exec, argv [][]byte) {
	slot, ok := parseLongArg(x, argv[2])
	if !ok {
		return
	}
	max, ok := parseLongArg(x, argv[3])
	if !ok {
		return
	}
	if slot < 0 || slot >= cluster.Slots || max < 0 {
		x.Err("ERR Invalid slot or number of keys")
		return
	}
	var keys [][]byte
	slotKeys(x, int(slot), func(k []byte) bool {
		if int64(len(keys)) >= max {
			return false
		}
		keys = append(keys, k)
		return true
	})
	x.Array(len(keys))
	for _, k := range keys {
		x.Bulk(k)
	}
}

// lookupNode answers "Unknown node" and returns nil for an id this node
// does not know.
func lookupNode(x *Exec, st *cluster.State, id []byte) *cluster.Node {
	n := st.Lookup(string(id))
	if n == nil {
		x.Err("ERR Unknown node " + string(id))
	}
	return n
}

func clusterReplicas(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		n := lookupNode(x, st, argv[2])
		if n == nil {
			return
		}
		if !n.IsMaster() {
			x.Err("ERR The specified node is not a master")
			return
		}
		var lines []string
		for _, r := range st.Nodes {
			if r.Master == n.Name {
				lines = append(lines, st.Describe(r, cs.usePPort(x)))
			}
		}
		x.Array(len(lines))
		for _, l := range lines {
			x.BulkStr(l)
		}
	})
}

func clusterFailureReports(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		if lookupNode(x, st, argv[2]) != nil {
			x.Int(0) // no other node: nobody reports failures
		}
	})
}

// getSlot is getSlotOrReply.
func getSlot(x *Exec, b []byte) int {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || v < 0 || v >= cluster.Slots {
		x.Err("ERR Invalid or out of range slot")
		return -1
	}
	return int(v)
}

// checkSlots is checkSlotAssignmentsOrReply over [start, end].
func checkSlots(x *Exec, st *cluster.State, seen []byte, del bool, start, end int) bool {
	for s := start; s <= end; s++ {
		owner := st.Owner(s)
		if del && owner == nil {
			x.Err(fmt.Sprintf("ERR Slot %d is already unassigned", s))
			return false
		} else if !del && owner != nil {
			x.Err(fmt.Sprintf("ERR Slot %d is already busy", s))
			return false
		}
		seen[s]++
		if seen[s] == 2 {
			x.Err(fmt.Sprintf("ERR Slot %d specified multiple times", s))
			return false
		}
	}
	return true
}

// updateSlots is clusterUpdateSlots: seen's slots are added to myself, or
// unassigned.
func (cs *clusterState) updateSlots(seen []byte, del bool) {
	me := cs.st.Myself
	for s, n := range seen {
		if n == 0 {
			continue
		}
		delete(cs.st.Importing, s)
		if del {
			if o := cs.st.Owner(s); o != nil {
				o.Slots.Del(s)
			}
			delete(cs.st.Migrating, s)
		} else {
			me.Slots.Add(s)
		}
	}
	cs.changed()
}

func clusterAddDelSlots(x *Exec, argv [][]byte) {
	del := shard.EqualFold(argv[1], "delslots")
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		for _, a := range argv[2:] {
			if getSlot(x, a) < 0 {
				return
			}
		}
		seen := make([]byte, cluster.Slots)
		for _, a := range argv[2:] {
			s := getSlot(x, a)
			if !checkSlots(x, st, seen, del, s, s) {
				return
			}
		}
		cs.updateSlots(seen, del)
		x.OK()
	})
}

func clusterAddDelSlotsRange(x *Exec, argv [][]byte) {
	del := shard.EqualFold(argv[1], "delslotsrange")
	if len(argv)%2 == 1 {
		x.Err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", "cluster|"+strings.ToLower(string(argv[1]))))
		return
	}
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		seen := make([]byte, cluster.Slots)
		for j := 2; j < len(argv); j += 2 {
			start := getSlot(x, argv[j])
			if start < 0 {
				return
			}
			end := getSlot(x, argv[j+1])
			if end < 0 {
				return
			}
			if start > end {
				x.Err(fmt.Sprintf("ERR start slot number %d is greater than end slot number %d", start, end))
				return
			}
			if !checkSlots(x, st, seen, del, start, end) {
				return
			}
		}
		cs.updateSlots(seen, del)
		x.OK()
	})
}

// dbEmpty reports whether database 0 holds no key (the command runs with
// every shard taken).
func dbEmpty(x *Exec) bool {
	for _, sh := range x.Shards {
		if sh.DBs[0].Len() != 0 {
			return false
		}
	}
	return true
}

func clusterFlushSlots(x *Exec, argv [][]byte) {
	if !dbEmpty(x) {
		x.Err("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
		return
	}
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		st.Myself.Slots = cluster.SlotSet{}
		cs.changed()
		x.OK()
	})
}

func clusterSetSlot(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		slot := getSlot(x, argv[2])
		if slot < 0 {
			return
		}
		me := st.Myself
		action := strings.ToLower(string(argv[3]))
		switch {
		case action == "migrating" && len(argv) == 5:
			if st.Owner(slot) != me {
				x.Err(fmt.Sprintf("ERR I'm not the owner of hash slot %d", slot))
				return
			}
			n := st.Lookup(string(argv[4]))
			if n == nil {
				x.Err("ERR I don't know about node " + string(argv[4]))
				return
			}
			// Redis would take its own id (and then send -ASK to itself).
			x.Err(fmt.Sprintf("ERR Can't migrate hash slot %d to myself", slot))
			return
		case action == "importing" && len(argv) == 5:
			if st.Owner(slot) == me {
				x.Err(fmt.Sprintf("ERR I'm already the owner of hash slot %d", slot))
				return
			}
			n := st.Lookup(string(argv[4]))
			if n == nil {
				x.Err("ERR I don't know about node " + string(argv[4]))
				return
			}
			x.Err(fmt.Sprintf("ERR Can't import hash slot %d from myself", slot))
			return
		case action == "stable" && len(argv) == 4:
			delete(st.Importing, slot)
			delete(st.Migrating, slot)
		case action == "node" && len(argv) == 5:
			n := st.Lookup(string(argv[4]))
			if n == nil {
				x.Err("ERR Unknown node " + string(argv[4]))
				return
			}
			if !n.IsMaster() {
				x.Err("ERR Target node is not a master")
				return
			}
			// n is myself: the slot becomes (or stays) ours.
			if o := st.Owner(slot); o != nil {
				o.Slots.Del(slot)
			}
			me.Slots.Add(slot)
			if _, ok := st.Importing[slot]; ok {
				if st.BumpEpoch() {
					cs.srv.log.Warningf("configEpoch updated after importing slot %d", slot)
				}
				delete(st.Importing, slot)
			}
		default:
			x.Err("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
			return
		}
		cs.changed()
		x.OK()
	})
}

func clusterBumpEpoch(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		word := "STILL"
		if st.BumpEpoch() {
			word = "BUMPED"
			cs.changed()
		}
		x.Simple(fmt.Sprintf("%s %d", word, st.Myself.ConfigEpoch))
	})
}

func clusterSetConfigEpoch(x *Exec, argv [][]byte) {
	epoch, ok := parseLongArg(x, argv[2])
	if !ok {
		return
	}
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		switch {
		case epoch < 0:
			x.Err(fmt.Sprintf("ERR Invalid config epoch specified: %d", epoch))
		case len(st.Nodes) > 1:
			x.Err("ERR The user can assign a config epoch only when the node does not know any other node.")
		case st.Myself.ConfigEpoch != 0:
			x.Err("ERR Node config epoch is already non-zero")
		default:
			st.Myself.ConfigEpoch = uint64(epoch)
			cs.srv.log.Warningf("configEpoch set to %d via CLUSTER SET-CONFIG-EPOCH", epoch)
			if st.CurrentEpoch < uint64(epoch) {
				st.CurrentEpoch = uint64(epoch)
			}
			cs.changed()
			x.OK()
		}
	})
}

func clusterSaveConfig(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		if err := cs.save(true); err != nil {
			msg := err.Error()
			var pe *os.PathError
			if errors.As(err, &pe) {
				msg = pe.Err.Error()
				if msg != "" {
					msg = strings.ToUpper(msg[:1]) + msg[1:]
				}
			}
			x.Err("ERR error saving the cluster node config: " + msg)
			return
		}
		x.OK()
	})
}

// clusterMeet is CLUSTER MEET: its arguments are checked as Redis checks
// them; meeting needs the cluster bus, which redshard does not run yet.
func clusterMeet(x *Exec, argv [][]byte) {
	if len(argv) != 4 && len(argv) != 5 {
		subcommandSyntaxError(x, argv)
		return
	}
	port, err := strconv.ParseInt(string(argv[3]), 10, 64)
	if err != nil {
		x.Err("ERR Invalid TCP base port specified: " + string(argv[3]))
		return
	}
	cport := port + cluster.PortIncr
	if len(argv) == 5 {
		if cport, err = strconv.ParseInt(string(argv[4]), 10, 64); err != nil {
			x.Err("ERR Invalid TCP bus port specified: " + string(argv[4]))
			return
		}
	}
	if net.ParseIP(string(argv[2])) == nil || port < 0 || port > 65535 || cport < 0 || cport > 65535 {
		x.Err(fmt.Sprintf("ERR Invalid node address specified: %s:%s", argv[2], argv[3]))
		return
	}
	x.Err("ERR redshard does not run the cluster bus yet: this node cannot meet other nodes")
}

func clusterForget(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		if n := lookupNode(x, st, argv[2]); n != nil {
			x.Err("ERR I tried hard but I can't forget myself...") // the only node known
		}
	})
}

func clusterReplicate(x *Exec, argv [][]byte) {
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		if n := lookupNode(x, st, argv[2]); n != nil {
			x.Err("ERR Can't replicate myself") // the only node known
		}
	})
}

func clusterFailover(x *Exec, argv [][]byte) {
	if len(argv) == 3 && !shard.EqualFold(argv[2], "force") && !shard.EqualFold(argv[2], "takeover") {
		x.Err(shard.ErrSyntax)
		return
	}
	x.Err("ERR You should send CLUSTER FAILOVER to a replica")
}

func clusterReset(x *Exec, argv [][]byte) {
	hard := false
	if len(argv) == 3 {
		switch {
		case shard.EqualFold(argv[2], "hard"):
			hard = true
		case shard.EqualFold(argv[2], "soft"):
		default:
			x.Err(shard.ErrSyntax)
			return
		}
	}
	if !dbEmpty(x) {
		x.Err("ERR CLUSTER RESET can't be called with master nodes containing keys")
		return
	}
	x.clusterLocked(func(cs *clusterState, st *cluster.State) {
		st.Reset(hard)
		if hard {
			cs.srv.log.Warningf("configEpoch set to 0 via CLUSTER RESET HARD")
			cs.srv.log.Noticef("Node hard reset, now I'm %.40s", st.Myself.Name)
		}
		cs.changed()
		x.OK()
	})
}

// clusterVerifyData is verifyClusterConfigWithData for the shards a load
// at start filled (owned by the loader, not yet swapped in): keys in a
// database other than 0 stop the start; a slot that holds keys and is
// served by nobody is taken. Nothing to do without cluster mode.
func (srv *Server) clusterVerifyData(shards []*shard.Shard) error {
	cs := srv.clus
	if cs == nil {
		return nil
	}
	var have cluster.SlotSet
	for _, sh := range shards {
		for i, db := range sh.DBs {
			if i > 0 {
				if db.Len() > 0 {
					return errors.New("You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.")
				}
				continue
			}
			for s, n := int32(0), db.Slots(); s < n; s++ {
				if db.Live(s) {
					have.Add(shard.KeySlot(db.Key(s)))
				}
			}
		}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	update := false
	for s := 0; s < cluster.Slots; s++ {
		if !have.Has(s) || cs.st.Owner(s) != nil {
			continue
		}
		srv.log.Warningf("I have keys for unassigned slot %d. Taking responsibility for it.", s)
		cs.st.Myself.Slots.Add(s)
		update = true
	}
	if update {
		cs.publish()
		if err := cs.save(true); err != nil {
			return errors.New("Fatal: can't update cluster config file.")
		}
	}
	return nil
}

// infoClusterEnabled is INFO's cluster_enabled.
func (srv *Server) infoClusterEnabled() int64 {
	if srv.clus != nil {
		return 1
	}
	return 0
}

// redisMode is INFO's redis_mode and the banner's mode.
func (srv *Server) redisMode() string {
	if srv.clus != nil {
		return "cluster"
	}
	return "standalone"
}
