package server

// SLOWLOG (Redis 7.0's slowlog.c). Commands run on several loops, so each
// loop keeps its own ring of entries, written only by that loop and only for
// a command over slowlog-log-slower-than; entry ids come from one atomic
// counter, so SLOWLOG GET (which runs with every loop parked, as INFO does)
// merges the rings newest first by id. Each ring keeps at most
// slowlog-max-len entries, which is enough: the newest slowlog-max-len
// entries of all loops are among the newest slowlog-max-len of each ring.

import (
	"sort"
	"strconv"
	"time"

	"github.com/redshard/redshard/shard"
)

const (
	slowlogMaxArgc = 32  // SLOWLOG_ENTRY_MAX_ARGC
	slowlogMaxArg  = 128 // SLOWLOG_ENTRY_MAX_STRING
)

var slowlogCommands = []serverCmd{
	{name: "slowlog|get", exec: cmdSlowlogGet, allShards: true},
	{name: "slowlog|len", exec: cmdSlowlogLen, allShards: true},
	{name: "slowlog|reset", exec: cmdSlowlogReset, allShards: true},
	{name: "slowlog|help", exec: cmdSlowlogHelp, home: true},
}

// slowEntry is one logged command.
type slowEntry struct {
	id, unix, usec int64
	argv           [][]byte
	peer, name     string
}

// slowRing holds a loop's newest entries, oldest first from start.
type slowRing struct {
	buf   []slowEntry
	start int
	n     int
}

func (r *slowRing) push(e slowEntry, max int) {
	if max <= 0 {
		r.reset()
		return
	}
	if len(r.buf) != max {
		r.resize(max)
	}
	if r.n < max {
		r.buf[(r.start+r.n)%max] = e
		r.n++
		return
	}
	r.buf[r.start] = e
	r.start = (r.start + 1) % max
}

// resize keeps the newest min(n, max) entries in a buffer of max.
func (r *slowRing) resize(max int) {
	old := r.entries()
	if len(old) > max {
		old = old[len(old)-max:]
	}
	r.buf = make([]slowEntry, max)
	copy(r.buf, old)
	r.start, r.n = 0, len(old)
}

// entries returns the entries, oldest first.
func (r *slowRing) entries() []slowEntry {
	out := make([]slowEntry, 0, r.n)
	for i := 0; i < r.n; i++ {
		out = append(out, r.buf[(r.start+i)%len(r.buf)])
	}
	return out
}

func (r *slowRing) reset() { r.buf, r.start, r.n = nil, 0, 0 }

// slowlogArgv is the argument vector an entry keeps: at most 32 arguments
// (the last replaced by "... (N more arguments)"), each cut at 128 bytes
// ("... (N more bytes)"), secrets redacted. It copies: argv points into
// buffers that are reused.
func slowlogArgv(argv [][]byte, redact []int) [][]byte {
	argc := len(argv)
	if argc > slowlogMaxArgc {
		argc = slowlogMaxArgc
	}
	out := make([][]byte, argc)
	for j := 0; j < argc; j++ {
		switch {
		case argc != len(argv) && j == argc-1:
			out[j] = []byte("... (" + strconv.Itoa(len(argv)-argc+1) + " more arguments)")
		case isRedacted(redact, j):
			out[j] = []byte(redactedArg)
		case len(argv[j]) > slowlogMaxArg:
			b := make([]byte, 0, slowlogMaxArg+32)
			b = append(b, argv[j][:slowlogMaxArg]...)
			b = append(b, "... ("...)
			b = strconv.AppendInt(b, int64(len(argv[j])-slowlogMaxArg), 10)
			b = append(b, " more bytes)"...)
			out[j] = b
		default:
			out[j] = append([]byte(nil), argv[j]...)
		}
	}
	return out
}

func isRedacted(pos []int, j int) bool {
	for _, p := range pos {
		if p == j {
			return true
		}
	}
	return false
}

// slowlogPush records the command x just ran (usec long) on this loop.
func (l *Loop) slowlogPush(x *Exec, cmd *Cmd, argv [][]byte, usec int64) {
	srv := l.srv
	e := slowEntry{
		id:   srv.obs.slowID.Add(1) - 1,
		unix: time.Now().Unix(),
		usec: usec,
	}
	e.argv = slowlogArgv(argv, redactions(cmd, argv))
	if cl := x.cl; cl != nil {
		e.peer = cl.peerID()
		e.name = cl.name
	}
	l.obs.slow.push(e, int(srv.cfg.SlowlogMaxLen()))
}

// slowlogMerged returns every loop's entries, newest first, at most
// slowlog-max-len of them. Every loop must be parked.
func (srv *Server) slowlogMerged() []slowEntry {
	var all []slowEntry
	max := int(srv.cfg.SlowlogMaxLen())
	for _, l := range srv.loops {
		if l.obs.slow.n > max {
			l.obs.slow.resize(max) // slowlog-max-len was lowered
		}
		all = append(all, l.obs.slow.entries()...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id > all[j].id })
	if len(all) > max {
		all = all[:max]
	}
	return all
}

func cmdSlowlogGet(x *Exec, argv [][]byte) {
	entries := x.srv.slowlogMerged()
	count := int64(10)
	if len(argv) == 3 {
		n, ok := shard.ParseInt(argv[2])
		if !ok || n < -1 {
			x.Err("ERR count should be greater than or equal to -1")
			return
		}
		count = n
		if n == -1 {
			count = int64(len(entries))
		}
	} else if len(argv) > 3 {
		subcommandSyntaxError(x, argv)
		return
	}
	if count < int64(len(entries)) {
		entries = entries[:count]
	}
	x.Array(len(entries))
	for _, e := range entries {
		x.Array(6)
		x.Int(e.id)
		x.Int(e.unix)
		x.Int(e.usec)
		x.Array(len(e.argv))
		for _, a := range e.argv {
			x.Bulk(a)
		}
		x.BulkStr(e.peer)
		x.BulkStr(e.name)
	}
}

func cmdSlowlogLen(x *Exec, argv [][]byte) {
	x.Int(int64(len(x.srv.slowlogMerged())))
}

func cmdSlowlogReset(x *Exec, argv [][]byte) {
	for _, l := range x.srv.loops {
		l.obs.slow.reset()
	}
	x.OK()
}

func cmdSlowlogHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	})
}
