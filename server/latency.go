package server

// LATENCY (Redis 7.0's latency.c): the latency monitor keeps, for each
// event, the last 160 samples (one per second at most: a second's sample is
// the worst of it) and the all-time maximum, for everything that took at
// least latency-monitor-threshold milliseconds. Events recorded:
//
//	command, fast-command  a command over the threshold (Loop.observe)
//	expire-cycle           a shard's active expiry cycle (background.go)
//	aof-write              the AOF writer's write(2) of a group (aof hook)
//	aof-fsync-always       its fdatasync under appendfsync always
//	aof-fsync-everysec     the everysec fsync
//
// Samples are rare (only over the threshold), so the store is one mutex.
// LATENCY HISTOGRAM reports the per-command histograms each loop keeps in
// Loop.observe (obs.go), summed with every loop parked.

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

const latencyTSLen = 160 // LATENCY_TS_LEN

var latencyCommands = []serverCmd{
	{name: "latency|latest", exec: cmdLatencyLatest, home: true},
	{name: "latency|history", exec: cmdLatencyHistory, home: true},
	{name: "latency|reset", exec: cmdLatencyReset, home: true},
	{name: "latency|graph", exec: cmdLatencyGraph, home: true},
	{name: "latency|doctor", exec: cmdLatencyDoctor, home: true},
	{name: "latency|histogram", exec: cmdLatencyHistogram, allShards: true},
	{name: "latency|help", exec: cmdLatencyHelp, home: true},
}

type latencySample struct {
	time    int64 // unix seconds; 0: empty
	latency int64 // milliseconds
}

// latencySeries is one event's history.
type latencySeries struct {
	idx     int
	max     int64
	samples [latencyTSLen]latencySample
}

type latencyMonitor struct {
	mu     sync.Mutex
	events map[string]*latencySeries
	order  []string // events in the order they first appeared
	now    func() int64
}

func (m *latencyMonitor) init() {
	m.events = make(map[string]*latencySeries)
	if m.now == nil {
		m.now = func() int64 { return time.Now().Unix() }
	}
}

// add records a sample (Redis's latencyAddSample).
func (m *latencyMonitor) add(event string, ms int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.init()
	}
	ts := m.events[event]
	if ts == nil {
		ts = &latencySeries{}
		m.events[event] = ts
		m.order = append(m.order, event)
	}
	now := m.now()
	if ms > ts.max {
		ts.max = ms
	}
	prev := (ts.idx + latencyTSLen - 1) % latencyTSLen
	if ts.samples[prev].time == now {
		if ms > ts.samples[prev].latency {
			ts.samples[prev].latency = ms
		}
		return
	}
	ts.samples[ts.idx] = latencySample{now, ms}
	ts.idx = (ts.idx + 1) % latencyTSLen
}

// reset forgets an event (all of them for ""), returning how many it reset.
func (m *latencyMonitor) reset(event string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if event == "" {
		n := len(m.events)
		m.events = make(map[string]*latencySeries)
		m.order = nil
		return n
	}
	if _, ok := m.events[event]; !ok {
		return 0
	}
	delete(m.events, event)
	for i, e := range m.order {
		if e == event {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	return 1
}

// history returns an event's samples, oldest first (nil: no such event).
func (m *latencyMonitor) history(event string) ([]latencySample, int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[event]
	if ts == nil {
		return nil, 0, false
	}
	var out []latencySample
	for j := 0; j < latencyTSLen; j++ {
		s := ts.samples[(ts.idx+j)%latencyTSLen]
		if s.time != 0 {
			out = append(out, s)
		}
	}
	return out, ts.max, true
}

type latencyLatest struct {
	event     string
	time, lat int64
	max       int64
}

func (m *latencyMonitor) latest() []latencyLatest {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]latencyLatest, 0, len(m.order))
	for _, e := range m.order {
		ts := m.events[e]
		last := ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
		out = append(out, latencyLatest{e, last.time, last.latency, ts.max})
	}
	return out
}

// addLatency records a sample for event if it reached
// latency-monitor-threshold (Redis's latencyAddSampleIfNeeded). Any
// goroutine may call it.
func (srv *Server) addLatency(event string, d time.Duration) {
	t := srv.cfg.LatencyMonitorThreshold()
	if ms := d.Milliseconds(); t > 0 && ms >= t {
		srv.obs.lat.add(event, ms)
	}
}

func cmdLatencyLatest(x *Exec, argv [][]byte) {
	l := x.srv.obs.lat.latest()
	x.Array(len(l))
	for _, e := range l {
		x.Array(4)
		x.BulkStr(e.event)
		x.Int(e.time)
		x.Int(e.lat)
		x.Int(e.max)
	}
}

func cmdLatencyHistory(x *Exec, argv [][]byte) {
	s, _, _ := x.srv.obs.lat.history(string(argv[2]))
	x.Array(len(s))
	for _, e := range s {
		x.Array(2)
		x.Int(e.time)
		x.Int(e.latency)
	}
}

func cmdLatencyReset(x *Exec, argv [][]byte) {
	if len(argv) == 2 {
		x.Int(int64(x.srv.obs.lat.reset("")))
		return
	}
	n := 0
	for _, e := range argv[2:] {
		if len(e) == 0 {
			continue
		}
		n += x.srv.obs.lat.reset(string(e))
	}
	x.Int(int64(n))
}

func cmdLatencyGraph(x *Exec, argv [][]byte) {
	event := string(argv[2])
	s, max, ok := x.srv.obs.lat.history(event)
	if !ok {
		x.Err(fmt.Sprintf("ERR No samples available for event '%s'", event))
		return
	}
	x.Verbatim([]byte(latencyGraph(event, s, max, time.Now().Unix())))
}

// latencyGraph renders an event's samples as Redis's sparkline (rows of
// '_', 'o', '#' and '|' filling up to each sample's height, four rows, 80
// columns per block), labelled with how long ago each sample was.
func latencyGraph(event string, s []latencySample, allMax, now int64) string {
	var b strings.Builder
	var min, max int64
	labels := make([]string, len(s))
	for i, e := range s {
		if i == 0 || e.latency < min {
			min = e.latency
		}
		if i == 0 || e.latency > max {
			max = e.latency
		}
		el := now - e.time
		switch {
		case el < 60:
			labels[i] = fmt.Sprintf("%ds", el)
		case el < 3600:
			labels[i] = fmt.Sprintf("%dm", el/60)
		case el < 3600*24:
			labels[i] = fmt.Sprintf("%dh", el/3600)
		default:
			labels[i] = fmt.Sprintf("%dd", el/(3600*24))
		}
	}
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, max, min, allMax)
	b.WriteString(strings.Repeat("-", 80))
	b.WriteByte('\n')
	for j := 0; j < len(s); j += 80 {
		if j != 0 {
			b.WriteByte('\n')
		}
		end := j + 80
		if end > len(s) {
			end = len(s)
		}
		sparkline(&b, s[j:end], labels[j:end], min, max)
	}
	return b.String()
}

// sparkline is Redis's sparklineRenderRange with 4 rows and the fill
// charset, followed by one blank line and the labels written vertically.
func sparkline(b *strings.Builder, s []latencySample, labels []string, min, max int64) {
	const rows = 4
	const charset = "_o#"
	steps := len(charset) * rows
	relmax := float64(max - min)
	if relmax == 0 {
		relmax = 1
	}
	line := make([]byte, len(s))
	for row := 0; ; row++ {
		more := false
		for j := range line {
			line[j] = ' '
		}
		for j, e := range s {
			if row < rows {
				step := int(float64(e.latency-min) * float64(steps) / relmax)
				if step >= steps {
					step = steps - 1
				}
				idx := step - (rows-row-1)*len(charset)
				more = true
				if idx >= 0 && idx < len(charset) {
					line[j] = charset[idx]
				} else if idx >= len(charset) {
					line[j] = '|'
				}
				continue
			}
			if row-rows < 1 { // the blank line between graph and labels
				more = true
				break
			}
			if k := row - rows - 1; k < len(labels[j]) {
				more = true
				line[j] = labels[j][k]
			}
		}
		if !more {
			return
		}
		b.Write(line)
		b.WriteByte('\n')
	}
}

func cmdLatencyDoctor(x *Exec, argv [][]byte) {
	x.Verbatim([]byte(x.srv.latencyReport(time.Now().Unix())))
}

// latencyReport is LATENCY DOCTOR's text (Redis's createLatencyReport): a
// statistics line per event and the advice that applies to the events seen.
func (srv *Server) latencyReport(now int64) string {
	latest := srv.obs.lat.latest()
	threshold := srv.cfg.LatencyMonitorThreshold()
	if len(latest) == 0 && threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	var b strings.Builder
	var slowlogEnable, slowlogTuning, slowlogInspect, scheduler, relaxFsync, hz, largeObjects bool
	advices := 0
	for i, e := range latest {
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		s, max, _ := srv.obs.lat.history(e.event)
		var sum, oldest int64
		for _, x := range s {
			sum += x.latency
			if oldest == 0 || x.time < oldest {
				oldest = x.time
			}
		}
		var avg, mad, period int64
		if len(s) > 0 {
			avg = sum / int64(len(s))
			period = now - oldest
			if period == 0 {
				period = 1
			}
			var dev int64
			for _, x := range s {
				d := x.latency - avg
				if d < 0 {
					d = -d
				}
				dev += d
			}
			mad = dev / int64(len(s))
		}
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, e.event, len(s), avg, mad, float64(period)/float64(len(s)), max)
		switch e.event {
		case "command":
			if us := srv.cfg.SlowlogLogSlowerThan(); us < 0 {
				slowlogEnable = true
				advices++
			} else if us/1000 > threshold {
				slowlogTuning = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		case "aof-fsync-always":
			relaxFsync = true
			advices++
		case "expire-cycle":
			hz, largeObjects = true, true
			advices += 2
		}
		b.WriteByte('\n')
	}
	switch {
	case len(latest) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		if slowlogEnable {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", threshold*1000)
		}
		if slowlogTuning {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
		}
		if slowlogInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if scheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
				"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
		}
		if relaxFsync && srv.cfg.AppendFsync() == "always" {
			b.WriteString("- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n")
		}
		if hz && srv.cfg.Hz() < 100 {
			b.WriteString("- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n")
		}
		if largeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
	}
	return b.String()
}

func cmdLatencyHistogram(x *Exec, argv [][]byte) {
	srv := x.srv
	var cmds []*Cmd
	if len(argv) == 2 {
		for _, c := range srv.sortedCommands() {
			cmds = append(cmds, c)
			cmds = append(cmds, sortedSubs(c)...)
		}
	} else {
		seen := make(map[*Cmd]bool)
		for _, a := range argv[2:] {
			name := strings.ToLower(string(a))
			c := srv.lookupCommandName(name)
			if c == nil || seen[c] {
				continue
			}
			seen[c] = true
			if c.subs != nil && c.run == nil && c.exec == nil {
				cmds = append(cmds, sortedSubs(c)...)
				continue
			}
			cmds = append(cmds, c)
			if !strings.Contains(name, "|") {
				cmds = append(cmds, sortedSubs(c)...)
			}
		}
	}
	type row struct {
		c *Cmd
		h latHist
	}
	var rows []row
	for _, c := range cmds {
		r := row{c: c}
		srv.mergeLatency(c, &r.h)
		if r.h.total > 0 {
			rows = append(rows, r)
		}
	}
	x.Map(len(rows))
	for _, r := range rows {
		x.BulkStr(r.c.fullName)
		x.Map(2)
		x.BulkStr("calls")
		x.Int(r.h.total)
		x.BulkStr("histogram_usec")
		nb := 0
		r.h.logBuckets(func(int64, int64) { nb++ })
		x.Map(nb)
		r.h.logBuckets(func(usec, cum int64) {
			x.Int(usec)
			x.Int(cum)
		})
	}
}

// mergeLatency adds every loop's histogram of c into h. The loops must be
// parked (or the caller runs with every shard taken).
func (srv *Server) mergeLatency(c *Cmd, h *latHist) {
	for _, l := range srv.loops {
		if c.id < len(l.obs.lat) {
			h.add(l.obs.lat[c.id])
		}
	}
}

func cmdLatencyHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	})
}

// infoLatencyStats writes INFO latencystats: for each command run since the
// last CONFIG RESETSTAT, the latency-tracking-info-percentiles of its
// latency in microseconds, from the loops' histograms merged (Redis's
// fillPercentileDistributionLatencies). Every loop must be parked.
func (srv *Server) infoLatencyStats(w *infoWriter) {
	if !srv.cfg.LatencyTracking() {
		return
	}
	pcts := srv.cfg.LatencyTrackingInfoPercentiles()
	var h latHist
	for _, c := range srv.sortedCommands() {
		for _, cc := range append([]*Cmd{c}, sortedSubs(c)...) {
			h.reset()
			srv.mergeLatency(cc, &h)
			if h.total == 0 {
				continue
			}
			w.b = append(w.b, "latency_percentiles_usec_"...)
			w.b = append(w.b, safeInfoString(cc.fullName)...)
			w.b = append(w.b, ':')
			for j, p := range pcts {
				if j > 0 {
					w.b = append(w.b, ',')
				}
				w.b = append(w.b, 'p')
				w.b = append(w.b, cfgFormatPercentile(p)...)
				w.b = append(w.b, '=')
				w.b = strconv.AppendFloat(w.b, float64(h.valueAtPercentile(p))/1000, 'f', 3, 64)
			}
			w.b = append(w.b, "\r\n"...)
		}
	}
}
