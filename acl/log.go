package acl

import "sync"

// Context is where a denied command came from.
type Context int

const (
	CtxToplevel Context = iota
	CtxMulti
	CtxLua
)

func (c Context) String() string {
	switch c {
	case CtxToplevel:
		return "toplevel"
	case CtxMulti:
		return "multi"
	case CtxLua:
		return "lua"
	}
	return "unknown"
}

// ReasonString is ACL LOG's "reason".
func ReasonString(r Result) string {
	switch r {
	case DeniedCmd:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// LogEntry is one ACL LOG entry.
type LogEntry struct {
	Count      int64
	Reason     Result
	Context    Context
	Object     string // command name, key, channel or "AUTH"
	Username   string
	Time       int64 // milliseconds of the last update
	ClientInfo string
}

// logGroupMs: an event within this long of a like entry bumps its count.
const logGroupMs = 60000

// Log is the ACL LOG, newest first. Denials come from every loop; the mutex
// is taken only on a denial or an ACL LOG command, never on a permitted one.
type Log struct {
	mu      sync.Mutex
	entries []*LogEntry
}

// Add records an event, merging it into a like entry among the 10 newest
// (same reason, context, object and user, within 60 s), and trims the log
// to max entries.
func (l *Log) Add(e LogEntry, max int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.entries) && i < 10; i++ {
		c := l.entries[i]
		d := c.Time - e.Time
		if d < 0 {
			d = -d
		}
		if c.Reason == e.Reason && c.Context == e.Context && d <= logGroupMs && c.Object == e.Object && c.Username == e.Username {
			c.Count++
			c.Time, c.ClientInfo = e.Time, e.ClientInfo
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = c
			return
		}
	}
	e.Count = 1
	l.entries = append(l.entries, nil)
	copy(l.entries[1:], l.entries)
	l.entries[0] = &e
	l.trim(max)
}

func (l *Log) trim(max int64) {
	if max < 0 {
		max = 0
	}
	for int64(len(l.entries)) > max {
		l.entries[len(l.entries)-1] = nil
		l.entries = l.entries[:len(l.entries)-1]
	}
}

// Trim applies a new acllog-max-len.
func (l *Log) Trim(max int64) {
	l.mu.Lock()
	l.trim(max)
	l.mu.Unlock()
}

// Entries returns copies of the newest n entries.
func (l *Log) Entries(n int) []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > len(l.entries) || n < 0 {
		n = len(l.entries)
	}
	out := make([]LogEntry, n)
	for i := range out {
		out[i] = *l.entries[i]
	}
	return out
}

// Reset empties the log.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}
