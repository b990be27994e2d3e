package server

// The command path in cluster mode: Redis 7.0's getNodeByQuery for a node
// that serves its slots alone.
//
// Where. Client.check (commands.go) calls clusterRefusal for every command
// before it runs or is queued, after the arity, auth and ACL checks and
// before the write refusals, where Redis's processCommand redirects. With
// cluster-enabled no, srv.clus is nil and the cost is that one nil test. A
// refusal is an ordinary rejection (Client.reject): rejected_calls and
// errorstats count it; inside MULTI it flags the transaction (EXEC then
// answers -EXECABORT), and for EXEC itself the transaction is discarded
// and the refusal is EXEC's answer (multiReject keeps it bare), as Redis's
// discardTransaction + clusterRedirectClient. The master's stream
// (replication) is never refused (mustObeyClient).
//
// What. A command with keys (or EXEC, over its queued commands) is
// refused when
//   - its first key's slot is served by nobody: -CLUSTERDOWN Hash slot not served;
//   - another key hashes to another slot: -CROSSSLOT, unless
//     cluster-allow-cross-slot yes (redshard's own option: the command then
//     runs atomically across shards, as without cluster mode; each slot
//     it touches must still be served);
//   - the cluster state is fail: -CLUSTERDOWN The cluster is down, or with
//     cluster-allow-reads-when-down yes, writes only, -CLUSTERDOWN The
//     cluster is down and only accepts read commands (sharded pub/sub
//     passes while cluster-allow-pubsubshard-when-down yes).
// Fast path: while this node serves every slot (the state is then ok),
// a one-key command, or any command with cluster-allow-cross-slot yes,
// cannot be refused, and is let through without hashing.
//
// Scripts (Redis's scriptVerifyClusterState, for each redis.call): the same
// check on the called command, its refusals worded for scripts ("Script
// attempted to access a non local key in a cluster node", ...), and, unless
// the script may cross slots (an EVAL without shebang, the
// allow-cross-slot-keys flag, or cluster-allow-cross-slot yes), every key
// it touches must hash to the slot of the first key it declared or
// touched: "Script attempted to access keys that do not hash to the same
// slot".
//
// Later, with other nodes: this is where MOVED and ASK are answered (the
// first key's slot served by another node, or migrating away with a key
// missing here; an ASKING client's command on an importing slot), and
// TRYAGAIN for multi-key commands on a slot in migration. See the top of
// cmd_cluster.go.

import (
	"github.com/redshard/redshard/lua"
	"github.com/redshard/redshard/shard"
)

const (
	errCrossSlot     = "CROSSSLOT Keys in request don't hash to the same slot"
	errDownUnbound   = "CLUSTERDOWN Hash slot not served"
	errDownState     = "CLUSTERDOWN The cluster is down"
	errDownROState   = "CLUSTERDOWN The cluster is down and only accepts read commands"
	errClusterSelect = "ERR SELECT is not allowed in cluster mode"
)

// clusterRefusal returns the error a command gets in cluster mode before
// it runs, or "" (see the top of the file). srv.clus is not nil.
func (cl *Client) clusterRefusal(cmd *Cmd, argv [][]byte) string {
	if cl.rm != nil {
		return "" // the master's stream is obeyed
	}
	cs := cl.srv.clus
	cross := cl.srv.cfg.clusterCrossSlot.Load()
	if cmd == cs.exec {
		tx := &cl.multi
		if !tx.active || len(tx.cmds) == 0 {
			return ""
		}
		if cs.allMine.Load() && cross {
			return ""
		}
		slot, msg := -1, ""
		for i, argv := range tx.build() {
			if slot, msg = cs.query(tx.cmds[i], argv, slot, cross); msg != "" {
				return msg
			}
		}
		return cs.downRefusal(slot, cmd)
	}
	if cmd.keys == nil && cmd.first <= 0 {
		return "" // no keys
	}
	if cs.allMine.Load() && (cross || cmd.keys == nil && cmd.first == cmd.last) {
		return ""
	}
	slot, msg := cs.query(cmd, argv, -1, cross)
	if msg != "" {
		return msg
	}
	return cs.downRefusal(slot, cmd)
}

// query hashes the keys of one command, going on from slot (the slot of
// the keys seen so far, -1 for none). It returns the slot and, when the
// command cannot be served here, the redirection error.
func (cs *clusterState) query(cmd *Cmd, argv [][]byte, slot int, cross bool) (int, string) {
	owned := cs.owned.Load()
	var kbuf [16]int
	for _, k := range cmd.keyPositions(argv, kbuf[:0]) {
		s := shard.KeySlot(argv[k])
		switch {
		case slot < 0:
			slot = s
			if !owned.Has(s) {
				return s, errDownUnbound
			}
		case s != slot:
			if !cross {
				return slot, errCrossSlot
			}
			if !owned.Has(s) {
				return slot, errDownUnbound
			}
		}
	}
	return slot, ""
}

// downRefusal is getNodeByQuery's check of the cluster state for a
// command whose keys are all served here (slot < 0: it has none).
func (cs *clusterState) downRefusal(slot int, cmd *Cmd) string {
	if slot < 0 || cs.stateOK() {
		return ""
	}
	cfg := cs.srv.cfg
	switch {
	case cmd.fullName == "ssubscribe" || cmd.fullName == "sunsubscribe" || cmd.fullName == "spublish":
		if !cfg.clusterPubsubWhenDown.Load() {
			return errDownState
		}
	case !cfg.clusterReadsWhenDown.Load():
		return errDownState
	case cmd.flags&flagWrite != 0:
		return errDownROState
	}
	return ""
}

// clusterBegin sets up a script's slot check (see the top of the file):
// the slot of its first declared key, and whether it may cross slots.
func (r *scriptRun) clusterBegin(flags uint64, argv [][]byte) {
	r.slot = -1
	r.crossSlot = flags&(lua.FlagEvalCompatMode|lua.FlagAllowCrossSlot) != 0 || r.l.srv.cfg.clusterCrossSlot.Load()
	var kbuf [1]int
	if k := evalKeys(argv, kbuf[:0]); len(k) > 0 {
		r.slot = shard.KeySlot(argv[k[0]])
	}
}

// clusterCheck is scriptVerifyClusterState for one redis.call.
func (r *scriptRun) clusterCheck(cmd *Cmd, argv [][]byte) string {
	cs := r.l.srv.clus
	cross := r.l.srv.cfg.clusterCrossSlot.Load()
	slot, msg := -1, ""
	if cmd.keys != nil || cmd.first > 0 {
		slot, msg = cs.query(cmd, argv, -1, cross)
	}
	if msg == "" {
		msg = cs.downRefusal(slot, cmd)
	}
	switch msg {
	case "":
	case errDownROState:
		return "ERR Script attempted to execute a write command while the cluster is down and readonly"
	case errDownState:
		return "ERR Script attempted to execute a command while the cluster is down"
	default:
		return "ERR Script attempted to access a non local key in a cluster node"
	}
	if slot >= 0 && !r.crossSlot {
		if r.slot < 0 {
			r.slot = slot
		} else if r.slot != slot {
			return "ERR Script attempted to access keys that do not hash to the same slot"
		}
	}
	return ""
}

// isClusterRedirect reports whether a rejection is one of clusterRefusal's
// (EXEC answers it bare, multiReject).
func isClusterRedirect(msg string) bool {
	return msg == errCrossSlot || msg == errDownUnbound || msg == errDownState || msg == errDownROState
}
