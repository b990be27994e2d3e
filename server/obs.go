package server

// Introspection: what Loop.call records after each command for SLOWLOG
// (slowlog.go), LATENCY (latency.go), MONITOR (monitor.go) and the
// Prometheus endpoint (metrics.go).
//
// The hot path pays, per command, two atomic loads (ordinary loads on amd64
// and arm64): whether latency-tracking is on, for one bucket increment in
// the loop's own histogram, and obs.slowNs, the smallest duration that needs
// more (the lower of the slowlog and latency thresholds, or -1 while a
// monitor is connected), kept up to date by CONFIG SET hooks. Anything more
// (an entry, a sample, a monitor line) happens only past that gate.

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/shard"
)

// Per-command introspection flags, from the command metadata.
const (
	obsSkipSlowlog uint8 = 1 << iota // EXEC: its commands are logged instead
	obsSkipMonitor                   // admin commands and those flagged skip_monitor
	obsFast                          // "fast-command" latency event, else "command"
	obsKeyspace                      // read, write or may_replicate: refused to MONITOR clients
)

// histBuckets are the buckets of the Prometheus histograms (metrics.go),
// reduced from the commands' latHists (hdr.go): bucket 0 counts durations
// under 1024 ns, bucket k durations in [2^(9+k), 2^(10+k)) ns, the last one
// everything from about 1 s up.
const histBuckets = 22

// cmdHist is one command's power-of-two latency histogram.
type cmdHist [histBuckets]int64

func histBucket(ns int64) int {
	if ns < 1024 {
		return 0
	}
	b := bits.Len64(uint64(ns)) - 10
	if b >= histBuckets {
		b = histBuckets - 1
	}
	return b
}

// histUpperNs is the exclusive upper bound of bucket k in nanoseconds.
func histUpperNs(k int) int64 { return 1 << uint(10+k) }

// obsState is the server's introspection state.
type obsState struct {
	flags []uint8 // by Cmd.id

	slowID atomic.Int64 // next slowlog entry id, over every loop

	lat latencyMonitor

	// slowNs gates Loop.observe's slow path: a command of at least slowNs
	// nanoseconds is checked against the slowlog and latency thresholds;
	// -1 while a monitor is connected; MaxInt64 when nothing is on.
	slowNs   atomic.Int64
	tracking atomic.Bool // latency-tracking
	gateMu   sync.Mutex  // serialises obsConfigChanged

	monMu    sync.Mutex
	monitors []*Client    // guarded by monMu
	nmon     atomic.Int32 // len(monitors), read without the lock

	obufDisconnections atomic.Int64 // clients closed for their output buffer limits (metrics)
}

// loopObs is one loop's introspection state, touched only by its loop
// (and read by SLOWLOG, LATENCY HISTOGRAM and metrics scrapes as INFO reads
// loopStats: with the loop parked, or on the loop itself).
type loopObs struct {
	lat  []*latHist // by Cmd.id; nil until the command first runs on the loop
	slow slowRing
}

// initObs prepares the introspection state once the command table and the
// loops exist (called by Run).
func (srv *Server) initObs() {
	o := &srv.obs
	o.flags = make([]uint8, len(srv.cmdList))
	for _, c := range srv.cmdList {
		var f uint8
		if m := c.meta; m != nil {
			if m.HasFlag("skip_slowlog") {
				f |= obsSkipSlowlog
			}
			if m.HasFlag("skip_monitor") || m.HasFlag("admin") {
				f |= obsSkipMonitor
			}
			if m.HasFlag("fast") {
				f |= obsFast
			}
			if m.HasFlag("readonly") || m.HasFlag("write") || m.HasFlag("may_replicate") {
				f |= obsKeyspace
			}
		}
		o.flags[c.id] = f
	}
	o.lat.init()
	for _, l := range srv.loops {
		l.obs.lat = make([]*latHist, len(srv.cmdList))
	}
	srv.obsConfigChanged()
	for _, name := range []string{"slowlog-log-slower-than", "latency-monitor-threshold", "latency-tracking"} {
		srv.cfg.OnChange(name, srv.obsConfigChanged)
	}
}

// obsConfigChanged recomputes the hot path's gate from the configuration
// and the monitors.
func (srv *Server) obsConfigChanged() {
	o := &srv.obs
	o.gateMu.Lock()
	defer o.gateMu.Unlock()
	o.tracking.Store(srv.cfg.LatencyTracking())
	gate := int64(math.MaxInt64)
	if us := srv.cfg.SlowlogLogSlowerThan(); us >= 0 {
		gate = us * 1000
	}
	if ms := srv.cfg.LatencyMonitorThreshold(); ms > 0 && ms*1e6 < gate {
		gate = ms * 1e6
	}
	if o.nmon.Load() > 0 {
		gate = -1
	}
	o.slowNs.Store(gate)
}

// recordLatency counts a command's duration in the loop's histogram of it
// (INFO latencystats, LATENCY HISTOGRAM), made at its first call.
func (l *Loop) recordLatency(cmd *Cmd, ns int64) {
	h := l.obs.lat[cmd.id]
	if h == nil {
		h = new(latHist)
		l.obs.lat[cmd.id] = h
	}
	h.record(ns)
}

// observe runs after every command Loop.call ran, with its duration in
// nanoseconds (0 when commands are not timed).
func (l *Loop) observe(x *Exec, cmd *Cmd, argv [][]byte, ns int64) {
	srv := l.srv
	if cmd.id >= len(l.obs.lat) {
		return // initObs has not run (tests that build a bare Server)
	}
	if srv.obs.tracking.Load() {
		l.recordLatency(cmd, ns)
	}
	if ns < srv.obs.slowNs.Load() {
		return
	}
	f := srv.obs.flags[cmd.id]
	if t := srv.cfg.SlowlogLogSlowerThan(); t >= 0 && ns/1000 >= t && f&obsSkipSlowlog == 0 {
		l.slowlogPush(x, cmd, argv, ns/1000)
	}
	if t := srv.cfg.LatencyMonitorThreshold(); t > 0 && ns/1e6 >= t {
		ev := "command"
		if f&obsFast != 0 {
			ev = "fast-command"
		}
		srv.obs.lat.add(ev, ns/1e6)
	}
	if srv.obs.nmon.Load() > 0 && f&obsSkipMonitor == 0 {
		who := x.cl
		if x.InScript {
			who = scriptMonitorClient // "[0 lua]", as Redis shows a script's commands
			if l.lua.run.active {
				// Held with the script's own line until it ends (feedScript).
				if !srv.load.active.Load() {
					l.lua.mon = monitorLine(l.lua.mon, time.Now(), x.DB, who, argv, redactions(cmd, argv))
				}
				return
			}
		}
		srv.feedMonitors(who, x.DB, cmd, argv)
	}
}

// redactedArg is what SLOWLOG and MONITOR show instead of a secret.
const redactedArg = "(redacted)"

// redactions returns the argv positions whose values SLOWLOG and MONITOR
// hide, as Redis's redactClientCommandArgument calls do: AUTH's
// arguments, HELLO's AUTH user and password, MIGRATE's AUTH/AUTH2
// credentials, CONFIG SET of sensitive options, ACL SETUSER's rules.
func redactions(cmd *Cmd, argv [][]byte) []int {
	var out []int
	switch cmd.fullName {
	case "auth":
		for i := 1; i < len(argv); i++ {
			out = append(out, i)
		}
	case "hello":
		for j := 2; j < len(argv); j++ {
			more := len(argv) - 1 - j
			switch {
			case shard.EqualFold(argv[j], "auth") && more >= 2:
				out = append(out, j+1, j+2)
				j += 2
			case shard.EqualFold(argv[j], "setname") && more >= 1:
				j++
			}
		}
	case "migrate":
		for j := 6; j < len(argv); j++ {
			more := len(argv) - 1 - j
			switch {
			case shard.EqualFold(argv[j], "auth") && more >= 1:
				out = append(out, j+1)
				j++
			case shard.EqualFold(argv[j], "auth2") && more >= 2:
				out = append(out, j+1, j+2)
				j += 2
			case shard.EqualFold(argv[j], "keys"):
				j = len(argv)
			}
		}
	case "config|set":
		for j := 2; j+1 < len(argv); j += 2 {
			// Redis's SENSITIVE_CONFIG options
			if shard.EqualFold(argv[j], "masterauth") || shard.EqualFold(argv[j], "masteruser") ||
				shard.EqualFold(argv[j], "requirepass") {
				out = append(out, j+1)
			}
		}
	case "acl|setuser":
		for i := 2; i < len(argv); i++ {
			out = append(out, i)
		}
	}
	return out
}

// peerID is the client's ip:port as Redis's getClientPeerId shows it,
// computed once.
func (cl *Client) peerID() string {
	if cl.obs.peer == "" {
		if cl.c == nil {
			return ""
		}
		cl.obs.peer = cl.addr()
	}
	return cl.obs.peer
}

// clientObs is a client's introspection state.
type clientObs struct {
	peer string // cached ip:port

	monitor   bool          // in MONITOR mode
	monBuf    []byte        // lines waiting for the client's loop (guarded by srv.obs.monMu)
	monQueued bool          // a flush task is queued (guarded by srv.obs.monMu)
	monHeld   []byte        // lines waiting for the client's pending replies (its loop only)
	monRun    gnet.Runnable // flushMonitor, bound once

	softSince int64 // unix seconds when the soft output limit was first exceeded; 0: under it
	obufKill  bool  // closed for overcoming its output buffer limit (flag A)
}

// recordUnblocked is for blocking commands when they are finally served
// (Redis's updateStatsOnUnblock): the command's latency histogram and the
// slowlog get its total duration then. Redis skips both at the first,
// blocking call (the command is still shown to MONITOR then, once); code
// that blocks a client should make Loop.observe's first call count only for
// MONITOR, or accept that the blocking call is counted too.
func (l *Loop) recordUnblocked(x *Exec, cmd *Cmd, argv [][]byte, ns int64) {
	srv := l.srv
	if cmd.id >= len(l.obs.lat) {
		return
	}
	if srv.obs.tracking.Load() {
		l.recordLatency(cmd, ns)
	}
	if t := srv.cfg.SlowlogLogSlowerThan(); t >= 0 && ns/1000 >= t && srv.obs.flags[cmd.id]&obsSkipSlowlog == 0 {
		l.slowlogPush(x, cmd, argv, ns/1000)
	}
}
