package server

// client-output-buffer-limit (Redis 7.0's checkClientOutputBufferLimits).
//
// A client's pending output is what it has not read yet: the replies
// assembled in cl.out and the bytes gnet holds because the socket would not
// take them (Conn.OutboundBuffered). When that reaches the hard limit of the
// client's class, or stays at or above the soft limit for more than the soft
// seconds, the client is closed without its pending replies and the log
// says so, as Redis does.
//
// The check runs once per write of a batch's replies (writeOut), not per
// command, and once a second from the loop's cron for clients that are over
// a soft limit and get no more traffic. It costs nothing when the class has
// no limit (the normal class's default).
//
// The pub/sub class: code that queues messages to a subscriber calls
// cl.checkOutputLimit(clientTypePubsub) on the subscriber's loop after
// appending them (or relies on writeOut, which checks the client's class as
// clientType reports it).

import (
	"time"
)

// pendingOutput is the client's output not yet written to its socket. Its
// loop must be the caller, or parked.
func (cl *Client) pendingOutput() int64 {
	n := int64(len(cl.out))
	if cl.c != nil && !cl.closed {
		n += int64(cl.c.OutboundBuffered())
	}
	return n
}

// overOutputLimit reports whether pending bytes break the class's limits,
// keeping the soft limit's clock (Redis's checkClientOutputBufferLimits).
func (cl *Client) overOutputLimit(class int, pending int64, now time.Time) bool {
	lims := cl.srv.cfg.ClientOutputBufferLimits()
	if class < 0 || class >= len(lims) || class == clientTypeMaster {
		class = clientTypeNormal
	}
	lim := lims[class]
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

// checkOutputLimit closes the client, dropping its pending replies, if its
// pending output breaks the limits of class (clientTypeNormal,
// clientTypePubsub, ...). It must run on the client's loop. It reports
// whether the client is being closed for it.
func (cl *Client) checkOutputLimit(class int) bool {
	if !cl.overLimit(class) {
		return false
	}
	if !cl.hopOut && !cl.inFlush && !cl.held {
		cl.writeOut() // closes it
	}
	return true
}

// overLimit marks the client to be closed (closing, replies dropped) if its
// pending output breaks the limits of class.
func (cl *Client) overLimit(class int) bool {
	if cl.c == nil || cl.closed || cl.obs.obufKill {
		return cl.obs.obufKill
	}
	pending := cl.pendingOutput()
	if pending == 0 {
		cl.obs.softSince = 0
		return false
	}
	if !cl.overOutputLimit(class, pending, time.Now()) {
		return false
	}
	cl.obs.obufKill = true
	cl.srv.log.Warningf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", cl.infoLine())
	cl.srv.obs.obufDisconnections.Add(1)
	cl.out = cl.out[:0]
	cl.closing = true
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
	if len(cl.out) > 0 && !cl.closed {
		cl.noteOutput()
	}
}

// noteOutput applies the client's class limits before writeOut writes a
// batch's replies; it reports whether the client is to be closed for them.
func (cl *Client) noteOutput() bool {
	lims := cl.srv.cfg.ClientOutputBufferLimits()
	class := cl.clientType()
	if class >= len(lims) || class == clientTypeMaster {
		class = clientTypeNormal
	}
	if lims[class].HardLimitBytes == 0 && lims[class].SoftLimitBytes == 0 {
		return false
	}
	return cl.overLimit(class)
}

// cronOutputLimits runs from the loop's cron: clients over a soft limit
// with no traffic are closed when their time is up.
func (l *Loop) cronOutputLimits() {
	for _, cl := range l.clients {
		if cl.obs.softSince != 0 {
			cl.checkOutputLimit(cl.clientType())
		}
	}
}
