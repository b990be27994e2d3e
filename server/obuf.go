package server

// client-output-buffer-limit (Redis 7.0's checkClientOutputBufferLimits and
// closeClientOnOutputBufferLimitReached), for every class.
//
// A client's pending output is what it has not read yet: the replies
// assembled in cl.out and the bytes gnet holds because the socket would not
// take them (Conn.OutboundBuffered): outputUsage, CLIENT LIST's omem. When
// that reaches the hard limit of the client's class (clientType: pubsub while
// subscribed, else normal), or stays at or above the soft limit for more than
// the soft seconds, the client is closed without its pending replies and the
// log says so, as Redis does.
//
// Where it is checked (no configuration load per command):
//   - before writeOut writes a batch's replies (beforeWrite), and when a
//     run's replies come back from another shard (dispatch.go's hopDone);
//   - between the commands of a batch and of a run sent to another shard:
//     process and launch take the room left under the hard limit once
//     (replyRoom, hop.room), and each command compares its reply buffer
//     with it, so a pipeline stops at the command whose reply passes the
//     limit and the commands after it are not run, as Redis stops
//     processing a client marked CLOSE_ASAP;
//   - inside commands whose reply has no bound (KEYS, HRANDFIELD and the
//     like with a negative count), through shard.Ctx.Full (outputFull);
//   - after a pub/sub delivery appends messages (pubsub.go, through
//     checkOutputLimit(true));
//   - once a second from the loop's cron, for the soft limit of clients that
//     get no more traffic (pubsubCron for subscribers, cronOutputLimits for
//     the others), logged as Redis's clientsCron logs it.
//
// Once a client is marked (obs.obufKill), nothing more is written to it:
// beforeWrite drops whatever reaches cl.out afterwards, also the replies of
// a run that was out on another shard when the limit was found.
//
// It costs one configuration load per batch, per run and per write when the
// class has no limit (the normal class's default).

import (
	"time"
)

// pendingOutput is outputUsage as an int64 (INFO, limits). The client's loop
// must be the caller, or parked.
func (cl *Client) pendingOutput() int64 {
	if cl.closed {
		return int64(len(cl.out))
	}
	return int64(cl.outputUsage())
}

// obufClass is the limits class of a client type (masters count as normal).
func obufClass(t int) int {
	switch t {
	case clientTypeSlave:
		return cfgObufSlave
	case clientTypePubsub:
		return cfgObufPubsub
	}
	return cfgObufNormal
}

// overOutputLimit reports whether pending bytes break the class's limits,
// keeping the soft limit's clock (Redis's checkClientOutputBufferLimits).
func (cl *Client) overOutputLimit(class int, pending int64, now time.Time) bool {
	lim := cl.srv.cfg.ClientOutputBufferLimits()[obufClass(class)]
	if lim.HardLimitBytes == 0 && lim.SoftLimitBytes == 0 {
		cl.obs.softSince = 0
		return false
	}
	hard := lim.HardLimitBytes != 0 && uint64(pending) >= lim.HardLimitBytes
	soft := lim.SoftLimitBytes != 0 && uint64(pending) >= lim.SoftLimitBytes
	if soft {
		sec := now.Unix()
		if cl.obs.softSince == 0 {
			cl.obs.softSince = sec
			soft = false
		} else if sec-cl.obs.softSince <= lim.SoftLimitSeconds {
			soft = false
		}
	} else {
		cl.obs.softSince = 0
	}
	return hard || soft
}

// overLimit marks the client to be closed (closing, replies dropped) if its
// pending output breaks the limits of its class, and logs it: async is
// Redis's "scheduled to be closed ASAP" (found while replying), else "closed"
// (found by the cron). The caller closes it (writeOut).
func (cl *Client) overLimit(async bool) bool {
	if cl.c == nil || cl.closed || cl.obs.obufKill {
		return cl.obs.obufKill
	}
	pending := cl.pendingOutput()
	if pending == 0 {
		cl.obs.softSince = 0
		return false
	}
	if !cl.overOutputLimit(cl.clientType(), pending, time.Now()) {
		return false
	}
	cl.killForOutput(async)
	return true
}

// killForOutput marks the client to be closed for its output buffer limits
// and logs it (see overLimit): its pending replies are dropped, and so is
// every reply that comes later (beforeWrite), also those of a run on other
// shards still out.
func (cl *Client) killForOutput(async bool) {
	if cl.obs.obufKill {
		return
	}
	info := cl.infoLine()
	if async {
		cl.srv.log.Warningf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info)
	} else {
		cl.srv.log.Warningf("Client %s closed for overcoming of output buffer limits.", info)
	}
	cl.obs.obufKill = true
	cl.srv.obs.obufDisconnections.Add(1)
	cl.out = cl.out[:0]
	cl.closing = true
}

// checkOutputLimit closes the client if its pending output is over its
// class's limits (Redis's closeClientOnOutputBufferLimitReached; async: found
// while delivering, else from the cron). It must run on the client's loop.
// It reports whether it closed the client.
func (cl *Client) checkOutputLimit(async bool) bool {
	if cl.c == nil || cl.closing || cl.closed {
		return false
	}
	if !cl.overLimit(async) {
		return false
	}
	cl.writeOut() // closes it (after a hop in flight comes back)
	return true
}

// beforeWrite runs when writeOut is about to write the client's replies: it
// adds the MONITOR lines held while the client's own replies were pending
// (monitor.go), then applies the output buffer limits (dropping the
// replies if the client is to be closed).
func (cl *Client) beforeWrite() {
	if len(cl.obs.monHeld) > 0 {
		if !cl.closed && !cl.closing {
			cl.out = append(cl.out, cl.obs.monHeld...)
		}
		cl.obs.monHeld = cl.obs.monHeld[:0]
	}
	if cl.obs.obufKill {
		// Closed for its limits: nothing more is sent, also not the
		// replies of a run that was out on other shards meanwhile.
		cl.out = cl.out[:0]
		return
	}
	if len(cl.out) > 0 && !cl.closed {
		cl.noteOutput()
	}
}

// replyRoom is how many bytes cl.out may hold before the client reaches
// the hard limit of its class (what gnet still holds counts), at least 1;
// 0 if the class has no hard limit. process and launch take it once
// per batch and per run (one configuration load), so that a pipeline stops
// at the command whose reply passes the limit, as Redis stops processing a
// client marked CLOSE_ASAP, at the cost of one comparison per command.
func (cl *Client) replyRoom() int {
	if cl.c == nil {
		return 0
	}
	hard := cl.srv.cfg.ClientOutputBufferLimits()[obufClass(cl.clientType())].HardLimitBytes
	if hard == 0 {
		return 0
	}
	room := int64(hard) - int64(cl.c.OutboundBuffered())
	if room < 1 {
		room = 1
	}
	return int(room)
}

// outputFull is the Ctx.OutputFull of a loop's Exec: whether a reply
// buffer of n bytes puts the running command's client past its hard limit.
// On the client's own loop (x.Out is cl.out's buffer) the check is exact
// and marks the client to be closed. In a run on another loop it compares
// with the room the run left with (hop.room) and records the cut: hopDone
// closes the client, whose reply is now incomplete.
func (x *Exec) outputFull(n int) bool {
	cl := x.cl
	if cl == nil || cl.c == nil {
		return false
	}
	if h := x.hop; h != nil {
		if h.room > 0 && n >= h.room {
			h.cut = true
			return true
		}
		return false
	}
	if cl.obs.obufKill {
		return true
	}
	hard := x.srv.cfg.ClientOutputBufferLimits()[obufClass(cl.clientType())].HardLimitBytes
	if hard == 0 || uint64(n+cl.c.OutboundBuffered()) < hard {
		return false
	}
	cl.killForOutput(true)
	return true
}

// noteOutput applies the client's class limits to its pending replies; it
// reports whether the client is to be closed for them.
func (cl *Client) noteOutput() bool {
	lim := cl.srv.cfg.ClientOutputBufferLimits()[obufClass(cl.clientType())]
	if lim.HardLimitBytes == 0 && lim.SoftLimitBytes == 0 {
		return false
	}
	return cl.overLimit(true)
}

// cronOutputLimits runs from the loop's cron: clients over a soft limit
// with no traffic are closed when their time is up (subscribers are
// pubsubCron's).
func (l *Loop) cronOutputLimits() {
	for _, cl := range l.clients {
		if cl.obs.softSince != 0 && cl.ps == nil {
			cl.checkOutputLimit(false)
		}
	}
}
