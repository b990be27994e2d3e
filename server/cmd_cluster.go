package server

// CLUSTER, READONLY, READWRITE and ASKING in a standalone server: redshard
// has no Redis Cluster (cluster-enabled yes is refused at start), so each
// replies what Redis 7.0 replies with cluster-enabled no, whatever the
// subcommand: "This instance has cluster support disabled". Arity and
// unknown subcommands are checked before, as in Redis.

const errClusterDisabled = "ERR This instance has cluster support disabled"

func cmdClusterDisabled(x *Exec, argv [][]byte) { x.Err(errClusterDisabled) }

func init() {
	for _, name := range []string{"readonly", "readwrite", "asking"} {
		serverCommands = append(serverCommands, serverCmd{name: name, exec: cmdClusterDisabled, home: true})
	}
	for _, sub := range LookupMeta("cluster").Subcommands {
		serverCommands = append(serverCommands, serverCmd{name: sub.Name, exec: cmdClusterDisabled, home: true})
	}
}
