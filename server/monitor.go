package server

// MONITOR (Redis 7.0's monitorCommand and replicationFeedMonitors). Every
// command that runs, on any loop, is shown to the monitoring clients as
//
//	+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
//
// after it ran, except admin commands and those flagged skip_monitor (as
// Redis's call()), with AUTH/HELLO/... secrets redacted.
//
// Feeding: the loop that ran the command formats the line and, under one
// mutex, appends it to each monitor's pending buffer and queues (once) a
// flush task on the monitor's own loop, which writes the buffer to the
// connection. A connection's commands run one after the other (dispatch.go
// never has two in flight), so they take the mutex, and reach every
// monitor, in the order the connection sent them. A script's lines (its
// EVAL or FCALL, then the commands it calls) are fed together when it
// ends, as Redis writes nothing while a script runs: a run that stops to
// take more shards did not happen, and its lines are dropped with it
// (script.go). With no monitor the cost
// is one atomic load per command (obs.nmon in Loop.observe).

import (
	"context"
	"strconv"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/resp"
)

var monitorCommands = []serverCmd{
	{name: "monitor", exec: cmdMonitor, home: true},
}

func cmdMonitor(x *Exec, argv [][]byte) {
	cl := x.cl
	if cl.obs.monitor {
		return // already a monitor: Redis ignores it (no reply)
	}
	if x.InMulti {
		x.Err("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	srv := x.srv
	o := &srv.obs
	o.monMu.Lock()
	cl.obs.monitor = true
	o.monitors = append(o.monitors, cl)
	o.nmon.Store(int32(len(o.monitors)))
	o.monMu.Unlock()
	srv.obsConfigChanged()
	x.OK()
}

// monitorCheck is the error a MONITOR client or a replica gets for a
// command that reads, writes or may replicate: Redis's monitors are
// replicas, and replicas can't touch the keyspace (processCommand). "" when
// the command may run.
func (cl *Client) monitorCheck(cmd *Cmd) string {
	if !cl.obs.monitor && cl.rep == nil {
		return ""
	}
	if f := cl.srv.obs.flags; cmd.id < len(f) && f[cmd.id]&obsKeyspace != 0 {
		return "ERR Replica can't interact with the keyspace"
	}
	return ""
}

// stopMonitor removes the client from the monitors (close, RESET).
func (cl *Client) stopMonitor() {
	if !cl.obs.monitor {
		return
	}
	o := &cl.srv.obs
	o.monMu.Lock()
	for i, m := range o.monitors {
		if m == cl {
			o.monitors = append(o.monitors[:i], o.monitors[i+1:]...)
			break
		}
	}
	o.nmon.Store(int32(len(o.monitors)))
	cl.obs.monitor = false
	cl.obs.monBuf = nil
	o.monMu.Unlock()
	cl.srv.obsConfigChanged()
}

// feedMonitors sends one command to every monitor.
func (srv *Server) feedMonitors(cl *Client, db int, cmd *Cmd, argv [][]byte) {
	if srv.load.active.Load() {
		return // Redis feeds nothing while loading
	}
	srv.sendMonitors(monitorLine(nil, time.Now(), db, cl, argv, redactions(cmd, argv)))
}

// sendMonitors appends lines (whole monitor lines) to every monitor's
// pending buffer and queues its flush.
func (srv *Server) sendMonitors(line []byte) {
	o := &srv.obs
	o.monMu.Lock()
	for _, m := range o.monitors {
		m.obs.monBuf = append(m.obs.monBuf, line...)
		if !m.obs.monQueued && m.loop != nil && m.loop.el != nil {
			m.obs.monQueued = true
			if m.obs.monRun == nil {
				mm := m
				m.obs.monRun = gnet.RunnableFunc(func(context.Context) error {
					mm.flushMonitor()
					return nil
				})
			}
			_ = m.loop.post(m.obs.monRun)
		}
	}
	o.monMu.Unlock()
}

// flushMonitor runs on the monitor's loop: it writes the pending lines, after
// any reply of the client's own that is still on its way.
func (cl *Client) flushMonitor() {
	o := &cl.srv.obs
	o.monMu.Lock()
	buf := cl.obs.monBuf
	cl.obs.monBuf = nil
	cl.obs.monQueued = false
	o.monMu.Unlock()
	if cl.closed || cl.closing || len(buf) == 0 {
		return
	}
	// Held until the client's next write (beforeWrite), so that the lines
	// come after the replies it is waiting for: those of a hop in flight,
	// of a batch being delivered or held for the log.
	cl.obs.monHeld = append(cl.obs.monHeld, buf...)
	if !cl.inFlush && !cl.held && !cl.hopOut {
		cl.writeOut()
	}
}

// monitorLine appends Redis's monitor line for a command.
func monitorLine(b []byte, now time.Time, db int, cl *Client, argv [][]byte, redact []int) []byte {
	b = append(b, '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(us), 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	if cl != nil && cl.c == nil {
		b = append(b, "lua"...) // an internal client (Redis: scripts)
	} else if cl != nil {
		b = append(b, cl.peerID()...)
	}
	b = append(b, "] "...)
	for j, a := range argv {
		if isRedacted(redact, j) {
			a = []byte(redactedArg)
		}
		b = resp.AppendRepr(b, a)
		if j != len(argv)-1 {
			b = append(b, ' ')
		}
	}
	return append(b, "\r\n"...)
}
