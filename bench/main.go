// Command bench compares redshard-server with redis-server.
//
//	go run ./bench [-quick] [-profile] [flags]
//
// It builds redshard into a temporary directory, starts it and a
// redis-server with equivalent settings on free 127.0.0.1 ports, drives both
// with redis-benchmark (alternating redshard, redis, redshard, redis ... for
// every figure) and reports the medians and the ratio redshard/redis as a
// Markdown table (stdout and bench/results/<date>-<host>.md) and an SVG bar
// chart of the ratios (bench/results/<date>-<host>.svg).
//
// With -profile it instead runs a SET/GET load against redshard alone with
// REDSHARD_CPUPROFILE and REDSHARD_MEMPROFILE set and prints
// "go tool pprof -top" of the profiles the server wrote.
//
// See bench/README.md.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redshard/redshard/shard"
)

// Server kinds: index 0 is always redshard, 1 is redis-server.
const (
	rs = 0
	rd = 1
)

var kindName = [2]string{"redshard", "redis"}

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat. It is
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// ---------------------------------------------------------------------------
// Options

type options struct {
	quick      bool
	profile    bool
	rounds     int
	n          int
	clients    int
	serverCPUs string
	clientCPUs string
	only       string
	outDir     string
	redshard   string
	verbose    bool
	fsyncTool  string
}

// sizes holds the request counts and data sizes of a mode.
type sizes struct {
	p1, p16             int // throughput runs at -P 1 and -P 16
	alwaysP1, alwaysP16 int // appendfsync always runs
	everyP1, everyP16   int // appendfsync everysec runs
	memKeys             int // strings loaded for the memory and AOF-load figures
	memHashes           int // hashes loaded for the memory figure
	flushWait           time.Duration
	bigLoad, bigRange   int // requests and key range loading ~5M keys
	benchTimeout        time.Duration
}

func sizesFor(quick bool, n int) sizes {
	s := sizes{
		p1: 100000, p16: 1000000,
		alwaysP1: 50000, alwaysP16: 200000,
		everyP1: 100000, everyP16: 1000000,
		memKeys: 1000000, memHashes: 200000,
		flushWait: 60 * time.Second,
		bigLoad:   7000000, bigRange: 10000000, // 1-e^-0.7 of 10M ≈ 5.03M distinct keys
		benchTimeout: 10 * time.Minute,
	}
	if quick {
		s = sizes{
			p1: 20000, p16: 100000,
			alwaysP1: 5000, alwaysP16: 20000,
			everyP1: 20000, everyP16: 100000,
			memKeys: 200000, memHashes: 50000,
			flushWait:    10 * time.Second,
			benchTimeout: 2 * time.Minute,
		}
	}
	if n > 0 {
		s.p1, s.p16 = n, 10*n
		s.alwaysP1, s.alwaysP16 = max(n/2, 1), 2*n
		s.everyP1, s.everyP16 = n, 10*n
	}
	return s
}

var groupNames = []string{"throughput", "scripting", "aof", "memory", "restart", "bigkeys", "scaling", "streams", "rdb", "repl", "acl", "tls", "tracking"}

// ---------------------------------------------------------------------------
// Processes: every child is registered by PID and stopped by PID on exit,
// error or signal.

type proc struct {
	name    string
	cmd     *exec.Cmd
	pid     int
	started time.Time
	done    chan struct{}
	err     error
}

var reg = struct {
	sync.Mutex
	procs   map[int]*proc
	dirs    []string
	closing bool
}{procs: map[int]*proc{}}

var errClosing = errors.New("shutting down")

var tasksetPath string

// startProc starts bin with args, under "taskset -c cpus" when cpus is not
// empty (taskset execs, so the PID is the program's). stdout and stderr go
// to out (nil: /dev/null). The child gets its own process group so that a
// terminal Ctrl-C reaches only the harness, which then stops it by PID.
func startProc(name, cpus string, env []string, out io.Writer, bin string, args ...string) (*proc, error) {
	argv := append([]string{bin}, args...)
	if cpus != "" {
		if tasksetPath == "" {
			return nil, errors.New("taskset is needed for CPU pinning but is not installed (apt-get install -y util-linux)")
		}
		argv = append([]string{tasksetPath, "-c", cpus}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	reg.Lock()
	defer reg.Unlock()
	if reg.closing {
		return nil, errClosing
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, pid: cmd.Process.Pid, started: time.Now(), done: make(chan struct{})}
	reg.procs[p.pid] = p
	go func() {
		p.err = cmd.Wait()
		reg.Lock()
		delete(reg.procs, p.pid)
		reg.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends sig and waits up to timeout before SIGKILL.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) {
	if !p.alive() {
		return
	}
	_ = syscall.Kill(p.pid, sig)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		<-p.done
	}
}

// wait waits up to timeout for the process to exit, then kills it.
func (p *proc) wait(timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return p.err
	case <-t.C:
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("%s timed out after %v", p.name, timeout)
	}
}

func registerDir(d string) {
	reg.Lock()
	reg.dirs = append(reg.dirs, d)
	reg.Unlock()
}

// guarded runs fn (which creates files or dirs under the temp dir) unless
// cleanup has begun, so that nothing is created after the temp dirs are gone.
func guarded(fn func() error) error {
	reg.Lock()
	defer reg.Unlock()
	if reg.closing {
		return errClosing
	}
	return fn()
}

func isClosing() bool {
	reg.Lock()
	defer reg.Unlock()
	return reg.closing
}

// cleanup stops every live child (SIGTERM, SIGKILL after 10 s) and removes
// every temp dir. Safe to call more than once and from the signal handler.
func cleanup() {
	reg.Lock()
	reg.closing = true
	ps := make([]*proc, 0, len(reg.procs))
	for _, p := range reg.procs {
		ps = append(ps, p)
	}
	reg.Unlock()
	for _, p := range ps {
		_ = syscall.Kill(p.pid, syscall.SIGTERM)
	}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	for _, p := range ps {
		select {
		case <-p.done:
		case <-t.C:
			for _, q := range ps {
				if q.alive() {
					_ = syscall.Kill(q.pid, syscall.SIGKILL)
				}
			}
			<-p.done
		}
	}
	reg.Lock()
	defer reg.Unlock()
	for _, d := range reg.dirs {
		_ = os.RemoveAll(d)
	}
}

func fatalf(format string, a ...any) {
	if isClosing() {
		select {} // the signal handler is cleaning up and will exit
	}
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...)
	cleanup()
	os.Exit(1)
}

// ---------------------------------------------------------------------------
// RESP client (just enough for PING, INFO, DBSIZE, FLUSHALL and probes).

type respError string

func (e respError) Error() string { return string(e) }

func query(port int, args ...string) (any, error) {
	return queryWithin(port, 2*time.Minute, args...)
}

// queryWithin is query with a deadline of d.
func queryWithin(port int, d time.Duration, args ...string) (any, error) {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write(encodeCommand(args...)); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(c))
}

// encodeCommand is a command as a RESP array of bulk strings.
func encodeCommand(args ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, respError(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		arr := make([]any, n)
		for i := range arr {
			v, err := readReply(r)
			if err != nil {
				var re respError
				if !errors.As(err, &re) {
					return nil, err
				}
				v = re
			}
			arr[i] = v
		}
		return arr, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

func info(port int, section string) (map[string]string, error) {
	v, err := query(port, "INFO", section)
	if err != nil {
		return nil, err
	}
	s, _ := v.(string)
	return parseInfo(s), nil
}

// parseInfo parses an INFO reply into name → value.
func parseInfo(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if k, val, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
			m[k] = val
		}
	}
	return m
}

func infoInt(port int, section, field string) (int64, error) {
	m, err := info(port, section)
	if err != nil {
		return 0, err
	}
	v, ok := m[field]
	if !ok {
		return 0, fmt.Errorf("INFO %s has no %s", section, field)
	}
	return strconv.ParseInt(v, 10, 64)
}

func dbsize(port int) (int64, error) {
	v, err := query(port, "DBSIZE")
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("DBSIZE replied %v", v)
	}
	return n, nil
}

// ---------------------------------------------------------------------------
// /proc

// cpuSeconds is utime+stime of pid (all threads, live and dead).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("bad /proc stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("bad utime/stime")
	}
	return float64(ut+st) / clockTicks, nil
}

func statusField(path, field string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// rssBytes is VmRSS of pid.
func rssBytes(pid int) (float64, error) {
	v := statusField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS")
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0, fmt.Errorf("no VmRSS for pid %d", pid)
	}
	kb, err := strconv.ParseFloat(f[0], 64)
	return kb * 1024, err
}

func memAvailable() float64 {
	f := strings.Fields(statusField("/proc/meminfo", "MemAvailable"))
	if len(f) == 0 {
		return 0
	}
	kb, _ := strconv.ParseFloat(f[0], 64)
	return kb * 1024
}

// parseCPUList expands "0-3,6" into [0 1 2 3 6].
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

func cpuListString(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

func allowedCPUs() []int {
	if l, err := parseCPUList(statusField("/proc/self/status", "Cpus_allowed_list")); err == nil && len(l) > 0 {
		return l
	}
	out := make([]int, runtime.NumCPU())
	for i := range out {
		out[i] = i
	}
	return out
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
// freePort picks a free 127.0.0.1 port: from BENCH_PORT_LO..BENCH_PORT_HI
// when both are set (a shared machine's allotted range), else any.
func freePort() (int, error) {
	lo, _ := strconv.Atoi(os.Getenv("BENCH_PORT_LO"))
	hi, _ := strconv.Atoi(os.Getenv("BENCH_PORT_HI"))
	if lo > 0 && hi >= lo {
		for p := lo + int(time.Now().UnixNano()%int64(hi-lo+1)); ; {
			for i := 0; i <= hi-lo; i++ {
				port := lo + (p-lo+i)%(hi-lo+1)
				if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
					l.Close()
					return port, nil
				}
			}
			return 0, fmt.Errorf("no free port in %d-%d", lo, hi)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ---------------------------------------------------------------------------
// Figures

type fmtKind int

const (
	fOps fmtKind = iota
	fMicros
	fMillis
	fBytes
	fMB
	fSeconds
	fCount
	fRate
	fPercent // a relative change, v = 0.02 for +2%
)

func format(k fmtKind, v float64) string {
	switch k {
	case fOps:
		return humanNum(v) + " ops/s"
	case fMicros:
		return fmt.Sprintf("%.2f µs", v*1e6)
	case fMillis:
		return fmt.Sprintf("%.3f ms", v)
	case fBytes:
		return fmt.Sprintf("%.0f B", v)
	case fMB:
		return fmt.Sprintf("%.1f MB", v/(1<<20))
	case fSeconds:
		return fmt.Sprintf("%.2f s", v)
	case fRate:
		return humanNum(v) + "/s"
	case fPercent:
		return fmt.Sprintf("%+.1f%%", v*100)
	}
	return humanNum(v)
}

func humanNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

type figure struct {
	name      string
	section   string
	kind      fmtKind
	vals      [2][]float64
	na        [2]string
	cmp       string // ">=", "<=" or "" (no target)
	target    float64
	plausible bool // a throughput: a redshard rate >10x redis is an error
	// flag is appended to a server's cell (e.g. "no AOF written").
	flag [2]string
	// targetText is shown when there is no cmp target and no check.
	targetText string
	// check, when set, replaces cmp/target (scaling figures).
	check func() (text string, met, ok bool)
}

func (f *figure) add(k int, v float64) { f.vals[k] = append(f.vals[k], v) }

// fail marks the server's value n/a; the first reason wins.
func (f *figure) fail(k int, why string) {
	if f.na[k] == "" {
		f.na[k] = why
	}
}

func (f *figure) median(k int) (float64, bool) {
	if f.na[k] != "" || len(f.vals[k]) == 0 {
		return 0, false
	}
	return median(f.vals[k]), true
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

type results struct {
	list    []*figure
	byName  map[string]*figure
	section string
	notes   []string
}

func (r *results) sec(name string) { r.section = name }

func (r *results) fig(name string, kind fmtKind, cmp string, target float64) *figure {
	if f, ok := r.byName[name]; ok {
		return f
	}
	f := &figure{name: name, section: r.section, kind: kind, cmp: cmp, target: target}
	r.list = append(r.list, f)
	r.byName[name] = f
	return f
}

func (r *results) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	for _, o := range r.notes {
		if o == n {
			return
		}
	}
	r.notes = append(r.notes, n)
}

// row is one evaluated figure.
type row struct {
	section   bool
	name      string
	cells     [2]string
	ratio     float64
	hasRatio  bool
	target    string
	targetVal float64 // ratio to mark in the chart, 0 = none
	met       string
	state     int // 0 no target, 1 met, 2 not met, 3 n/a
	ratioText string
}

func (f *figure) row() row {
	r := row{name: f.name, met: "—"}
	var v [2]float64
	var ok [2]bool
	for k := 0; k < 2; k++ {
		v[k], ok[k] = f.median(k)
		switch {
		case ok[k]:
			r.cells[k] = format(f.kind, v[k])
			if f.flag[k] != "" {
				r.cells[k] += " (" + f.flag[k] + ")"
			}
		case f.na[k] != "":
			r.cells[k] = f.na[k]
		default:
			r.cells[k] = "n/a"
		}
	}
	if f.plausible && ok[rs] && ok[rd] && v[rd] > 0 && v[rs] > 10*v[rd] {
		r.cells[rs] = fmt.Sprintf("n/a (implausible: %s)", format(f.kind, v[rs]))
		ok[rs] = false
	}
	if ok[rs] && ok[rd] && v[rd] != 0 {
		r.ratio, r.hasRatio = v[rs]/v[rd], true
		r.ratioText = fmt.Sprintf("%.2f×", r.ratio)
	} else {
		r.ratioText = "n/a"
	}
	switch {
	case f.check != nil:
		text, met, evaluated := f.check()
		r.target = text
		switch {
		case !evaluated:
			r.met, r.state = "n/a", 3
		case met:
			r.met, r.state = "yes", 1
		default:
			r.met, r.state = "**no**", 2
		}
	case f.cmp != "":
		r.target = fmt.Sprintf("%s%.1f×", map[string]string{">=": "≥", "<=": "≤"}[f.cmp], f.target)
		r.targetVal = f.target
		switch {
		case !r.hasRatio:
			r.met, r.state = "n/a", 3
		case (f.cmp == ">=" && r.ratio >= f.target) || (f.cmp == "<=" && r.ratio <= f.target):
			r.met, r.state = "yes", 1
		default:
			r.met, r.state = "**no**", 2
		}
	case f.targetText != "":
		r.target = f.targetText
	default:
		r.target = "—"
	}
	return r
}

func (r *results) rows() []row {
	var out []row
	sec := ""
	for _, f := range r.list {
		if f.section != sec {
			sec = f.section
			out = append(out, row{section: true, name: sec})
		}
		out = append(out, f.row())
	}
	return out
}

// ---------------------------------------------------------------------------
// Harness

type harness struct {
	opt     options
	sz      sizes
	root    string
	tmp     string
	bin     string
	redisSv string
	redisBm string
	perf    string
	strace  string
	res     *results
	groups  map[string]bool
	allowed []int
	started time.Time
	// supported[k][test] is "" when the server accepts the command, else
	// the reason it is n/a.
	supported [2]map[string]string
	seq       int
}

func (h *harness) logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(h.started).Seconds(), fmt.Sprintf(format, a...))
}

func (h *harness) mkdir(prefix string) string {
	h.seq++
	d := filepath.Join(h.tmp, fmt.Sprintf("%s-%d", prefix, h.seq))
	if err := guarded(func() error { return os.MkdirAll(d, 0o755) }); err != nil {
		fatalf("%v", err)
	}
	return d
}

type server struct {
	kind    int
	port    int
	dir     string
	log     string
	p       *proc
	readyIn time.Duration
}

type srvOpts struct {
	aof    string // "", "always" or "everysec"
	shards int
	dir    string // reuse this data dir (restart); "" = a new one
	cpus   string // "" = -server-cpus
	env    []string
	extra  []string // more arguments (replication)
}

func (h *harness) startServer(kind int, o srvOpts) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := o.dir
	if dir == "" {
		dir = h.mkdir(kindName[kind] + "-data")
	}
	h.seq++
	logPath := filepath.Join(h.tmp, fmt.Sprintf("%s-%d.log", kindName[kind], h.seq))
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir, "--daemonize", "no"}
	if o.aof != "" {
		// Automatic rewrites are off on both so that the AOF figures
		// measure appends and fsyncs (not a background rewrite) and the
		// load figure replays a plain command log on both servers.
		args = append(args, "--appendonly", "yes", "--appendfsync", o.aof, "--auto-aof-rewrite-percentage", "0")
	} else {
		args = append(args, "--appendonly", "no")
	}
	bin := h.redisSv
	if kind == rs {
		bin = h.bin
		if o.shards > 0 {
			args = append(args, "--shards", strconv.Itoa(o.shards))
		}
	}
	args = append(args, o.extra...)
	cpus := o.cpus
	if cpus == "" {
		cpus = h.opt.serverCPUs
	}
	var lf *os.File
	if err := guarded(func() (err error) { lf, err = os.Create(logPath); return err }); err != nil {
		return nil, err
	}
	p, err := startProc(kindName[kind], cpus, o.env, lf, bin, args...)
	lf.Close()
	if err != nil {
		return nil, err
	}
	s := &server{kind: kind, port: port, dir: dir, log: logPath, p: p}
	if s.readyIn, err = s.waitReady(3 * time.Minute); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls until PING answers PONG and INFO persistence says
// loading:0; it returns the time since the process was started.
func (s *server) waitReady(timeout time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	for {
		if !s.p.alive() {
			return 0, fmt.Errorf("%s exited at start-up (%v); log:\n%s", kindName[s.kind], s.p.err, tail(s.log, 15))
		}
		if v, err := query(s.port, "PING"); err == nil && v == "PONG" {
			if m, err := info(s.port, "persistence"); err == nil && m["loading"] != "1" {
				return time.Since(s.p.started), nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s not ready after %v; log:\n%s", kindName[s.kind], timeout, tail(s.log, 15))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits (a server with an AOF flushes it first).
func (s *server) stop() {
	if s != nil && s.p != nil {
		s.p.stop(syscall.SIGTERM, time.Minute)
	}
}

// ---------------------------------------------------------------------------
// redis-benchmark

type benchSpec struct {
	tests      string   // -t value
	custom     []string // or a custom command
	n, pipe    int
	rnd, data  int
	csv        bool     // --csv output; otherwise the full report (for p99.9)
	clientCPUs string   // "" = -client-cpus
	fsync      string   // fsync counting method, see fsyncMethod
	port       int      // the port to drive, if not the server's plaintext one (tls.go)
	extra      []string // more redis-benchmark options (--tls ...)
}

type benchResult struct {
	rps, p50, p99, p999 float64
	cpuPerOp            float64 // server CPU seconds per request
	fsyncs              float64 // -1: not counted
	elapsed             time.Duration
}

// errUnsupported is returned when the server answered an error reply.
type errUnsupported struct{ msg string }

func (e errUnsupported) Error() string { return e.msg }

func naReason(err error) string {
	var u errUnsupported
	if errors.As(err, &u) {
		if strings.Contains(strings.ToLower(u.msg), "unknown command") {
			return "n/a (unsupported)"
		}
		return "n/a (error reply)"
	}
	return "n/a (failed)"
}

var errorLineRE = regexp.MustCompile(`(?m)^(Error from server: .*|Error: .*|ERROR.*)$`)

func (h *harness) runBench(s *server, b benchSpec) (benchResult, error) {
	res := benchResult{fsyncs: -1}
	if !s.p.alive() {
		return res, fmt.Errorf("%s is not running; log:\n%s", kindName[s.kind], tail(s.log, 10))
	}
	port := s.port
	if b.port != 0 {
		port = b.port
	}
	args := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-c", strconv.Itoa(h.opt.clients),
		"-n", strconv.Itoa(b.n), "-P", strconv.Itoa(b.pipe)}
	args = append(args, b.extra...)
	if b.rnd > 0 {
		args = append(args, "-r", strconv.Itoa(b.rnd))
	}
	if b.data > 0 {
		args = append(args, "-d", strconv.Itoa(b.data))
	}
	if b.csv {
		args = append(args, "--csv")
	}
	if b.tests != "" {
		args = append(args, "-t", b.tests)
	} else {
		args = append(args, b.custom...)
	}
	cpus := b.clientCPUs
	if cpus == "" {
		cpus = h.opt.clientCPUs
	}

	fc, err := h.startFsyncCount(s, b.fsync)
	if err != nil {
		h.logf("  fsync counting (%s) failed: %v", b.fsync, err)
		fc = nil
	}
	cpu0, _ := cpuSeconds(s.p.pid)
	var out bytes.Buffer
	t0 := time.Now()
	p, err := startProc("redis-benchmark", cpus, nil, &out, h.redisBm, args...)
	if err != nil {
		fc.abort()
		return res, err
	}
	werr := p.wait(h.sz.benchTimeout)
	res.elapsed = time.Since(t0)
	cpu1, cerr := cpuSeconds(s.p.pid)
	if fc != nil {
		res.fsyncs, err = fc.finish()
		if err != nil {
			h.logf("  fsync counting (%s) failed: %v", b.fsync, err)
			res.fsyncs = -1
		}
	}
	text := strings.ReplaceAll(out.String(), "\r", "\n")
	if h.opt.verbose {
		fmt.Fprintf(os.Stderr, "--- redis-benchmark %s\n%s\n---\n", strings.Join(args, " "), strings.TrimSpace(text))
	}
	if m := errorLineRE.FindString(text); m != "" {
		return res, errUnsupported{strings.TrimSpace(strings.TrimPrefix(m, "Error from server:"))}
	}
	if werr != nil {
		return res, fmt.Errorf("redis-benchmark: %v: %s", werr, lastLines(text, 3))
	}
	if b.csv {
		err = parseCSV(text, &res)
	} else {
		err = parseFull(text, &res)
	}
	if err != nil {
		return res, fmt.Errorf("%v; output: %s", err, lastLines(text, 3))
	}
	if res.rps <= 0 {
		return res, errors.New("redis-benchmark reported 0 requests per second")
	}
	if !s.p.alive() {
		return res, fmt.Errorf("%s exited during the run; log:\n%s", kindName[s.kind], tail(s.log, 10))
	}
	if cerr == nil {
		res.cpuPerOp = (cpu1 - cpu0) / float64(b.n)
	}
	return res, nil
}

func lastLines(s string, n int) string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ls = append(ls, l)
		}
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}

// parseCSV reads the --csv report:
//
//	"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
//	"SET","87719.30","0.359","0.128","0.295","0.815","1.255","2.103"
func parseCSV(text string, res *benchResult) error {
	var header []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, `"`) {
			continue
		}
		rec, err := csv.NewReader(strings.NewReader(l)).Read()
		if err != nil {
			continue
		}
		if header == nil {
			if len(rec) > 1 && rec[0] == "test" {
				header = rec
			}
			continue
		}
		get := func(name string) float64 {
			for i, h := range header {
				if h == name && i < len(rec) {
					v, _ := strconv.ParseFloat(rec[i], 64)
					return v
				}
			}
			return 0
		}
		res.rps, res.p50, res.p99 = get("rps"), get("p50_latency_ms"), get("p99_latency_ms")
		return nil
	}
	return errors.New("no CSV result in redis-benchmark output")
}

var (
	pctLineRE   = regexp.MustCompile(`^([0-9.]+)% <= ([0-9.]+) milliseconds`)
	throughRE   = regexp.MustCompile(`throughput summary: ([0-9.]+) requests per second`)
	summaryHdRE = regexp.MustCompile(`^avg\s+min\s+p50`)
)

// parseFull reads the default (non-CSV) report, which unlike --csv has the
// percentile distribution needed for p99.9.
func parseFull(text string, res *benchResult) error {
	m := throughRE.FindStringSubmatch(text)
	if m == nil {
		return errors.New("no throughput summary in redis-benchmark output")
	}
	res.rps, _ = strconv.ParseFloat(m[1], 64)
	lines := strings.Split(text, "\n")
	inPct := false
	res.p999 = -1
	var lastPct float64
	for i, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Latency by percentile distribution"):
			inPct = true
			continue
		case strings.HasPrefix(l, "Cumulative distribution"):
			inPct = false
		case summaryHdRE.MatchString(l) && i+1 < len(lines):
			hdr := strings.Fields(l)
			vals := strings.Fields(lines[i+1])
			for j, name := range hdr {
				if j >= len(vals) {
					break
				}
				v, _ := strconv.ParseFloat(vals[j], 64)
				switch name {
				case "p50":
					res.p50 = v
				case "p99":
					res.p99 = v
				}
			}
		}
		if inPct {
			if pm := pctLineRE.FindStringSubmatch(l); pm != nil {
				pct, _ := strconv.ParseFloat(pm[1], 64)
				ms, _ := strconv.ParseFloat(pm[2], 64)
				lastPct = ms
				if res.p999 < 0 && pct >= 99.9 {
					res.p999 = ms
				}
			}
		}
	}
	if res.p999 < 0 {
		res.p999 = lastPct
	}
	if res.p999 <= 0 {
		return errors.New("no latency distribution in redis-benchmark output")
	}
	return nil
}

// ---------------------------------------------------------------------------
// fsync counting

// fsyncMethod picks how fsyncs of s are counted: "info:<field>" when the
// server reports a counter in INFO persistence, else "perf" (tracepoints
// syscalls:sys_enter_fsync/fdatasync, negligible overhead) when usable,
// else "strace" for redis-server (a separate, slowed, traced pass), else "".
func (h *harness) fsyncMethod(s *server) string {
	if m, err := info(s.port, "persistence"); err == nil {
		if f := fsyncCounterField(m); f != "" {
			return "info:" + f
		}
	}
	if h.perf != "" {
		return "perf"
	}
	if s.kind == rd && h.strace != "" {
		return "strace"
	}
	return ""
}

func fsyncCounterField(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lk := strings.ToLower(k)
		if !strings.Contains(lk, "fsync") || lk == "aof_pending_bio_fsync" || lk == "aof_delayed_fsync" {
			continue
		}
		if _, err := strconv.ParseInt(m[k], 10, 64); err != nil {
			continue
		}
		if strings.Contains(lk, "count") || strings.Contains(lk, "total") || strings.HasSuffix(lk, "fsyncs") {
			return k
		}
	}
	return ""
}

type fsyncCount struct {
	method string
	s      *server
	before int64
	p      *proc
	out    string
}

func (h *harness) startFsyncCount(s *server, method string) (*fsyncCount, error) {
	switch {
	case method == "":
		return nil, nil
	case strings.HasPrefix(method, "info:"):
		v, err := infoInt(s.port, "persistence", strings.TrimPrefix(method, "info:"))
		if err != nil {
			return nil, err
		}
		return &fsyncCount{method: method, s: s, before: v}, nil
	case method == "perf" || method == "strace":
		h.seq++
		// perf stat -p counts threads created later too (inherited
		// counters); strace -f follows them.
		fc := &fsyncCount{method: method, s: s, out: filepath.Join(h.tmp, fmt.Sprintf("%s-%d.txt", method, h.seq))}
		var err error
		if method == "perf" {
			fc.p, err = startProc("perf", "", nil, nil, h.perf, "stat", "-x,", "-o", fc.out,
				"-e", "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync", "-p", strconv.Itoa(s.p.pid))
		} else {
			fc.p, err = startProc("strace", "", nil, nil, h.strace, "-c", "-f", "-e", "trace=fsync,fdatasync",
				"-o", fc.out, "-p", strconv.Itoa(s.p.pid))
		}
		if err != nil {
			return nil, err
		}
		time.Sleep(400 * time.Millisecond) // attach
		if !fc.p.alive() {
			return nil, fmt.Errorf("%s exited at once: %v", method, fc.p.err)
		}
		return fc, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

func (fc *fsyncCount) abort() {
	if fc != nil && fc.p != nil {
		fc.p.stop(syscall.SIGINT, 5*time.Second)
	}
}

func (fc *fsyncCount) finish() (float64, error) {
	if strings.HasPrefix(fc.method, "info:") {
		v, err := infoInt(fc.s.port, "persistence", strings.TrimPrefix(fc.method, "info:"))
		return float64(v - fc.before), err
	}
	fc.p.stop(syscall.SIGINT, 10*time.Second)
	b, err := os.ReadFile(fc.out)
	if err != nil {
		return 0, err
	}
	var total float64
	found := false
	for _, l := range strings.Split(string(b), "\n") {
		if fc.method == "perf" {
			// 745,,syscalls:sys_enter_fdatasync,336025291,100.00,,
			f := strings.Split(l, ",")
			if len(f) > 2 && strings.HasPrefix(f[2], "syscalls:sys_enter_") {
				v, err := strconv.ParseFloat(f[0], 64)
				if err != nil {
					return 0, fmt.Errorf("perf: %s", l)
				}
				total += v
				found = true
			}
		} else {
			// % time seconds usecs/call calls [errors] syscall
			f := strings.Fields(l)
			if len(f) >= 5 && (f[len(f)-1] == "fsync" || f[len(f)-1] == "fdatasync") {
				v, err := strconv.ParseFloat(f[3], 64)
				if err == nil {
					total += v
				}
			}
			if len(f) >= 2 && f[len(f)-1] == "total" {
				found = true
			}
		}
	}
	if !found {
		if fc.method == "strace" && total == 0 {
			return 0, nil // strace prints no table when nothing was traced
		}
		return 0, fmt.Errorf("no counts in %s output: %s", fc.method, lastLines(string(b), 3))
	}
	return total, nil
}

// perfUsable checks that perf can count the syscall tracepoints.
func perfUsable(perf string) bool {
	var out bytes.Buffer
	p, err := startProc("perf", "", nil, &out, perf, "stat", "-x,", "-e", "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync", "--", "true")
	if err != nil {
		return false
	}
	if p.wait(20*time.Second) != nil {
		return false
	}
	return strings.Contains(out.String(), "syscalls:sys_enter_fdatasync") && !strings.Contains(out.String(), "<not")
}

// ---------------------------------------------------------------------------
// Probing commands

var probes = map[string][][]string{
	"set":   {{"SET", "__bench_probe", "x"}},
	"get":   {{"GET", "__bench_probe"}},
	"incr":  {{"INCR", "__bench_probe_n"}},
	"lpush": {{"LPUSH", "__bench_probe_l", "x"}},
	"hset":  {{"HSET", "__bench_probe_h", "f", "v"}},
	"zadd":  {{"ZADD", "__bench_probe_z", "1", "m"}},
	"mset":  {{"MSET", "__bench_probe_a", "x", "__bench_probe_b", "y"}},
	// streams group
	"xadd":      {{"XADD", "__bench_probe_x", "*", "f", "v"}},
	"geoadd":    {{"GEOADD", "__bench_probe_g", "13.4", "52.5", "m"}},
	"geosearch": {{"GEOSEARCH", "__bench_probe_g", "FROMLONLAT", "13.4", "52.5", "BYRADIUS", "1", "km", "ASC", "COUNT", "10"}},
}

// probe sends the command once; "" means supported, else the n/a text.
func probe(port int, test string) string {
	for _, c := range probes[test] {
		_, err := query(port, c...)
		var re respError
		if errors.As(err, &re) {
			if strings.Contains(strings.ToLower(string(re)), "unknown command") {
				return "n/a (unsupported)"
			}
			return "n/a (error reply)"
		}
		if err != nil {
			return "n/a (failed)"
		}
	}
	_, _ = query(port, "DEL", "__bench_probe", "__bench_probe_n", "__bench_probe_l", "__bench_probe_h",
		"__bench_probe_z", "__bench_probe_a", "__bench_probe_b", "__bench_probe_s", "__bench_probe_t",
		"__bench_probe_x", "__bench_probe_g")
	return ""
}

func (h *harness) isSupported(s *server, test string) string {
	m := h.supported[s.kind]
	if why, ok := m[test]; ok {
		return why
	}
	why := probe(s.port, test)
	m[test] = why
	if why != "" {
		h.logf("  %s: %s %s", kindName[s.kind], strings.ToUpper(test), why)
	}
	return why
}

// ---------------------------------------------------------------------------
// Figure groups

var throughputTests = []struct{ test, label string }{
	{"set", "SET"}, {"get", "GET"}, {"incr", "INCR"}, {"lpush", "LPUSH"},
	{"hset", "HSET"}, {"zadd", "ZADD"}, {"mset", "MSET(10)"},
}

func (h *harness) roundsLabel(r int) string { return fmt.Sprintf("round %d/%d", r+1, h.opt.rounds) }

func (h *harness) startPair(o srvOpts) ([2]*server, error) {
	var srv [2]*server
	for k := 0; k < 2; k++ {
		s, err := h.startServer(k, o)
		if err != nil {
			if k == 1 {
				srv[0].stop()
			}
			return srv, err
		}
		srv[k] = s
	}
	return srv, nil
}

func (h *harness) throughputGroup() {
	r := h.res
	type figs struct{ thr, cpu, p50, p99, p999 *figure }
	fs := map[string]*figs{}
	r.sec("throughput (-c 50 -r 1000000 -d 100)")
	for _, t := range throughputTests {
		for _, P := range []int{1, 16} {
			f := r.fig(fmt.Sprintf("%s -P %d", t.label, P), fOps, ">=", 1.0)
			f.plausible = true
			fs[fmt.Sprintf("%s/%d", t.test, P)] = &figs{thr: f}
		}
	}
	r.sec("server CPU per operation (utime+stime / requests)")
	for _, t := range throughputTests {
		for _, P := range []int{1, 16} {
			cmp := ""
			if t.test == "set" || t.test == "get" {
				cmp = "<="
			}
			fs[fmt.Sprintf("%s/%d", t.test, P)].cpu = r.fig(fmt.Sprintf("%s -P %d CPU/op", t.label, P), fMicros, cmp, 1.0)
		}
	}
	r.sec("latency at -P 1 (-c 50)")
	for _, t := range throughputTests {
		f := fs[t.test+"/1"]
		f.p50 = r.fig(t.label+" p50", fMillis, "", 0)
		f.p99 = r.fig(t.label+" p99", fMillis, "<=", 1.0)
		f.p999 = r.fig(t.label+" p99.9", fMillis, "", 0)
	}
	all := func(t string, P int, k int, why string) {
		f := fs[fmt.Sprintf("%s/%d", t, P)]
		for _, x := range []*figure{f.thr, f.cpu, f.p50, f.p99, f.p999} {
			if x != nil {
				x.fail(k, why)
			}
		}
	}

	srv, err := h.startPair(srvOpts{})
	if err != nil {
		h.logf("throughput: %v", err)
		for _, t := range throughputTests {
			for _, P := range []int{1, 16} {
				all(t.test, P, rs, "n/a (server failed)")
				all(t.test, P, rd, "n/a (server failed)")
			}
		}
		return
	}
	defer srv[0].stop()
	defer srv[1].stop()
	for round := 0; round < h.opt.rounds; round++ {
		for _, t := range throughputTests {
			for _, P := range []int{1, 16} {
				for k := 0; k < 2; k++ {
					if why := h.isSupported(srv[k], t.test); why != "" {
						all(t.test, P, k, why)
						continue
					}
					n := h.sz.p1
					if P > 1 {
						n = h.sz.p16
					}
					res, err := h.runBench(srv[k], benchSpec{tests: t.test, n: n, pipe: P, rnd: 1000000, data: 100, csv: P > 1})
					if err != nil {
						h.logf("throughput %s -P %d %s: %v", t.label, P, kindName[k], err)
						all(t.test, P, k, naReason(err))
						continue
					}
					f := fs[fmt.Sprintf("%s/%d", t.test, P)]
					f.thr.add(k, res.rps)
					f.cpu.add(k, res.cpuPerOp)
					if P == 1 {
						f.p50.add(k, res.p50)
						f.p99.add(k, res.p99)
						f.p999.add(k, res.p999)
					}
					h.logf("%s %-8s -P %-2d %-8s %s  %.2f µs CPU/op  p99 %.3f ms", h.roundsLabel(round), t.label, P, kindName[k],
						format(fOps, res.rps), res.cpuPerOp*1e6, res.p99)
				}
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Scripting

// The one-key script reads, compares and writes: redis-benchmark gives the
// key and ARGV[1] independent __rand_int__ values, so the stored value
// differs from ARGV[1] (and the SET runs) on all but about 1 call in 10^6.
const scriptCAS = "local v = redis.call('GET', KEYS[1]) if v ~= ARGV[1] then redis.call('SET', KEYS[1], ARGV[1]) end return 1"

// The two-key script moves ARGV[1] from KEYS[1] to KEYS[2]; every call
// writes both keys.
const scriptMove = "redis.call('DECRBY', KEYS[1], ARGV[1]) return redis.call('INCRBY', KEYS[2], ARGV[1])"

// moveKeys are the fixed keys of the two-key script, on different shards of
// a --shards 2 redshard (shard.ShardOf(key, 2) is 1 and 0; checked before
// the runs). redis-benchmark's __rand_int__ cannot choose a shard.
var moveKeys = [2]string{"bench:transfer:a", "bench:transfer:b"}

func sha1Hex(s string) string {
	d := sha1.Sum([]byte(s))
	return hex.EncodeToString(d[:])
}

func init() {
	probes["evalsha1"] = [][]string{{"SCRIPT", "LOAD", scriptCAS}, {"EVALSHA", sha1Hex(scriptCAS), "1", "__bench_probe_s", "x"}}
	probes["evalsha2"] = [][]string{{"SCRIPT", "LOAD", scriptMove}, {"EVALSHA", sha1Hex(scriptMove), "2", "__bench_probe_s", "__bench_probe_t", "1"}}
}

type scriptBench struct {
	test    string // probe name
	section string
	label   string
	script  string
	keys    []string
	args    []string
	rnd     int
	shards  int // redshard --shards; 0 = default
	cmp     string
	target  float64
}

func (h *harness) scriptingGroup() {
	h.scriptFigures(scriptBench{
		test:    "evalsha1",
		section: "scripting: EVALSHA, one key, GET + compare + SET (-c 50 -r 1000000)",
		label:   "EVALSHA GET/cmp/SET 1 key",
		script:  scriptCAS, keys: []string{"key:__rand_int__"}, args: []string{"__rand_int__"},
		rnd: 1000000, cmp: ">=", target: 1.0,
	})
	h.scriptFigures(scriptBench{
		test: "evalsha2",
		section: fmt.Sprintf("scripting: EVALSHA, two keys on two shards, DECRBY + INCRBY (redshard --shards 2; -c 50, keys %s, %s)",
			moveKeys[0], moveKeys[1]),
		label:  "EVALSHA DECRBY/INCRBY 2 keys",
		script: scriptMove, keys: moveKeys[:], args: []string{"1"},
		shards: 2,
	})
}

// scriptFigures loads sb.script with SCRIPT LOAD on a fresh pair of servers
// and drives both with "EVALSHA <sha> <numkeys> <keys> <args>" at -P 1 and
// -P 16, alternating servers each round.
func (h *harness) scriptFigures(sb scriptBench) {
	r := h.res
	r.sec(sb.section)
	type figs struct{ thr, cpu *figure }
	fs := map[int]*figs{}
	for _, P := range []int{1, 16} {
		thr := r.fig(fmt.Sprintf("%s -P %d", sb.label, P), fOps, sb.cmp, sb.target)
		thr.plausible = true
		fs[P] = &figs{thr: thr, cpu: r.fig(fmt.Sprintf("%s -P %d CPU/call", sb.label, P), fMicros, "", 0)}
	}
	failAll := func(k int, why string) {
		for _, f := range fs {
			f.thr.fail(k, why)
			f.cpu.fail(k, why)
		}
	}
	if sb.shards > 1 {
		a, b := shard.ShardOf([]byte(sb.keys[0]), sb.shards), shard.ShardOf([]byte(sb.keys[1]), sb.shards)
		if a == b {
			failAll(rs, fmt.Sprintf("n/a (%s and %s on one shard)", sb.keys[0], sb.keys[1]))
		} else {
			r.note("%s: %s is on shard %d and %s on shard %d of %d (shard.ShardOf); redshard reported `shards:%d` in INFO server before the runs.",
				sb.label, sb.keys[0], a, sb.keys[1], b, sb.shards, sb.shards)
		}
	}
	srv, err := h.startPair(srvOpts{shards: sb.shards})
	if err != nil {
		h.logf("%s: %v", sb.label, err)
		failAll(rs, "n/a (server failed)")
		failAll(rd, "n/a (server failed)")
		return
	}
	defer srv[0].stop()
	defer srv[1].stop()
	if sb.shards > 0 {
		if n, err := infoInt(srv[rs].port, "server", "shards"); err != nil || int(n) != sb.shards {
			h.logf("%s: redshard INFO server shards = %d (%v), want %d", sb.label, n, err, sb.shards)
			failAll(rs, fmt.Sprintf("n/a (not %d shards)", sb.shards))
		}
	}
	want := sha1Hex(sb.script)
	var sha [2]string
	for k := 0; k < 2; k++ {
		if why := h.isSupported(srv[k], sb.test); why != "" {
			failAll(k, why)
			continue
		}
		v, err := query(srv[k].port, "SCRIPT", "LOAD", sb.script)
		s, _ := v.(string)
		if err != nil || s == "" {
			h.logf("%s: SCRIPT LOAD on %s: %v %v", sb.label, kindName[k], v, err)
			failAll(k, "n/a (SCRIPT LOAD failed)")
			continue
		}
		sha[k] = s
		if s != want {
			r.note("%s: %s's SCRIPT LOAD returned %s, not the SHA1 of the script (%s); its runs use its own SHA.", sb.label, kindName[k], s, want)
		}
		if len(sb.keys) > 1 || !strings.Contains(sb.keys[0], "__rand_int__") {
			_, _ = query(srv[k].port, append([]string{"DEL"}, sb.keys...)...)
		}
	}
	if sha[rs] != "" && sha[rs] == sha[rd] {
		r.note("%s: `%s` loaded with SCRIPT LOAD on both servers (SHA1 %s, the same on both); driven with `redis-benchmark -c %d%s EVALSHA %s %d %s %s`.",
			sb.label, sb.script, sha[rs], h.opt.clients, map[bool]string{true: fmt.Sprintf(" -r %d", sb.rnd)}[sb.rnd > 0],
			sha[rs], len(sb.keys), strings.Join(sb.keys, " "), strings.Join(sb.args, " "))
	}
	var calls0 [2]map[string]int64
	for k := 0; k < 2; k++ {
		calls0[k] = cmdCalls(srv[k].port)
	}
	for round := 0; round < h.opt.rounds; round++ {
		for _, P := range []int{1, 16} {
			for k := 0; k < 2; k++ {
				if fs[P].thr.na[k] != "" {
					continue
				}
				n := h.sz.p1
				if P > 1 {
					n = h.sz.p16
				}
				cmd := append([]string{"EVALSHA", sha[k], strconv.Itoa(len(sb.keys))}, sb.keys...)
				cmd = append(cmd, sb.args...)
				res, err := h.runBench(srv[k], benchSpec{custom: cmd, n: n, pipe: P, rnd: sb.rnd, csv: true})
				if err != nil {
					h.logf("%s -P %d %s: %v", sb.label, P, kindName[k], err)
					fs[P].thr.fail(k, naReason(err))
					fs[P].cpu.fail(k, naReason(err))
					continue
				}
				fs[P].thr.add(k, res.rps)
				fs[P].cpu.add(k, res.cpuPerOp)
				h.logf("%s %s -P %-2d %-8s %s  %.2f µs CPU/call", h.roundsLabel(round), sb.label, P, kindName[k],
					format(fOps, res.rps), res.cpuPerOp*1e6)
			}
		}
	}
	// How often the scripts' writes ran, from INFO commandstats where the
	// server counts the commands a script calls.
	for k := 0; k < 2; k++ {
		c1 := cmdCalls(srv[k].port)
		ev := c1["evalsha"] - calls0[k]["evalsha"]
		if ev <= 0 {
			continue
		}
		var parts []string
		for _, c := range []string{"get", "set", "decrby", "incrby"} {
			if d := c1[c] - calls0[k][c]; d > 0 {
				parts = append(parts, fmt.Sprintf("%s %.1f%%", strings.ToUpper(c), 100*float64(d)/float64(ev)))
			}
		}
		if len(parts) > 0 {
			r.note("%s: calls per EVALSHA on %s (INFO commandstats over the runs): %s.", sb.label, kindName[k], strings.Join(parts, ", "))
		}
		// Every call moved 1: the two keys must sum to 0, the second
		// holding the number of calls.
		if len(sb.keys) == 2 && !strings.Contains(sb.keys[0], "__rand_int__") {
			v, err := query(srv[k].port, "MGET", sb.keys[0], sb.keys[1])
			a, _ := v.([]any)
			if err != nil || len(a) != 2 {
				h.logf("%s: MGET %s %s on %s: %v %v", sb.label, sb.keys[0], sb.keys[1], kindName[k], v, err)
				continue
			}
			x, _ := a[0].(string)
			y, _ := a[1].(string)
			xi, err1 := strconv.ParseInt(x, 10, 64)
			yi, err2 := strconv.ParseInt(y, 10, 64)
			if err1 != nil || err2 != nil || xi+yi != 0 || yi != ev {
				h.logf("%s: %s ends with %s=%q %s=%q after %d EVALSHA calls", sb.label, kindName[k], sb.keys[0], x, sb.keys[1], y, ev)
				r.note("%s: on %s the keys end at %s=%s, %s=%s after %d EVALSHA calls (expected -%d and %d).", sb.label, kindName[k],
					sb.keys[0], x, sb.keys[1], y, ev, ev, ev)
			} else {
				h.logf("%s: %s ends with %s=%d %s=%d after %d EVALSHA calls (consistent)", sb.label, kindName[k], sb.keys[0], xi, sb.keys[1], yi, ev)
			}
		}
	}
}

// cmdCalls reads calls=N of every cmdstat_<name> in INFO commandstats.
func cmdCalls(port int) map[string]int64 {
	out := map[string]int64{}
	m, err := info(port, "commandstats")
	if err != nil {
		return out
	}
	for k, v := range m {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if c, ok := strings.CutPrefix(f, "calls="); ok {
				out[strings.ToLower(name)], _ = strconv.ParseInt(c, 10, 64)
			}
		}
	}
	return out
}

func (h *harness) aofGroup() {
	r := h.res
	for _, mode := range []string{"always", "everysec"} {
		r.sec("appendonly yes, appendfsync " + mode + " (SET, -c 50 -r 1000000 -d 100)")
		type figs struct{ thr, fps, cpf *figure }
		fs := map[int]*figs{}
		for _, P := range []int{1, 16} {
			target := 1.0
			if mode == "always" && P == 16 {
				target = 1.2
			}
			thr := r.fig(fmt.Sprintf("%s SET -P %d", mode, P), fOps, ">=", target)
			thr.plausible = true
			fs[P] = &figs{thr: thr,
				fps: r.fig(fmt.Sprintf("%s SET -P %d fsyncs/s", mode, P), fRate, "", 0),
				cpf: r.fig(fmt.Sprintf("%s SET -P %d commands/fsync", mode, P), fCount, "", 0)}
		}
		srv, err := h.startPair(srvOpts{aof: mode})
		if err != nil {
			h.logf("aof %s: %v", mode, err)
			for _, f := range fs {
				for k := 0; k < 2; k++ {
					f.thr.fail(k, "n/a (server failed)")
					f.fps.fail(k, "n/a (server failed)")
					f.cpf.fail(k, "n/a (server failed)")
				}
			}
			continue
		}
		var method [2]string
		for k := 0; k < 2; k++ {
			method[k] = h.fsyncMethod(srv[k])
			switch {
			case method[k] == "":
				for _, f := range fs {
					f.fps.fail(k, "n/a")
					f.cpf.fail(k, "n/a")
				}
			case method[k] == "perf":
				r.note("fsyncs of %s counted with `perf stat -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync -p PID` during the measured runs.", kindName[k])
			case method[k] == "strace":
				r.note("fsyncs of redis-server counted with `strace -c -f` in a separate traced pass (one per -P): strace slows the server, so its fsyncs/s and commands/fsync describe the slowed run.")
			default:
				r.note("fsyncs of %s read from INFO persistence field `%s`.", kindName[k], strings.TrimPrefix(method[k], "info:"))
			}
		}
		if method[rs] == "" {
			r.note("redshard reports no fsync counter in INFO persistence (e.g. `aof_fsyncs`) and perf is not in use: its fsync figures are n/a.")
		}
		nFor := func(P int) int {
			switch {
			case mode == "always" && P == 1:
				return h.sz.alwaysP1
			case mode == "always":
				return h.sz.alwaysP16
			case P == 1:
				return h.sz.everyP1
			}
			return h.sz.everyP16
		}
		// fsyncs/s and commands/fsync are totals over the rounds (an
		// everysec run may see 0 or 1 fsync), not medians.
		type tally struct {
			fsyncs, cmds, secs float64
			counted            bool
		}
		var acc [17][2]tally
		record := func(P, k, n int, res benchResult) {
			if res.fsyncs < 0 {
				fs[P].fps.fail(k, "n/a (count failed)")
				fs[P].cpf.fail(k, "n/a (count failed)")
				return
			}
			t := &acc[P][k]
			t.fsyncs += res.fsyncs
			t.cmds += float64(n)
			t.secs += float64(n) / res.rps
			t.counted = true
		}
		for round := 0; round < h.opt.rounds; round++ {
			for _, P := range []int{1, 16} {
				for k := 0; k < 2; k++ {
					if why := h.isSupported(srv[k], "set"); why != "" {
						fs[P].thr.fail(k, why)
						continue
					}
					m := method[k]
					if m == "strace" {
						m = "" // counted in a separate pass below
					}
					n := nFor(P)
					res, err := h.runBench(srv[k], benchSpec{tests: "set", n: n, pipe: P, rnd: 1000000, data: 100, csv: true, fsync: m})
					if err != nil {
						h.logf("aof %s -P %d %s: %v", mode, P, kindName[k], err)
						fs[P].thr.fail(k, naReason(err))
						continue
					}
					fs[P].thr.add(k, res.rps)
					if method[k] != "" && method[k] != "strace" {
						record(P, k, n, res)
					}
					extra := ""
					if res.fsyncs > 0 {
						extra = fmt.Sprintf("  %.0f fsyncs (%.1f commands/fsync)", res.fsyncs, float64(n)/res.fsyncs)
					}
					h.logf("%s %-8s -P %-2d %-8s %s%s", h.roundsLabel(round), mode, P, kindName[k], format(fOps, res.rps), extra)
				}
			}
		}
		for k := 0; k < 2; k++ {
			if method[k] != "strace" {
				continue
			}
			for _, P := range []int{1, 16} {
				n := nFor(P)
				res, err := h.runBench(srv[k], benchSpec{tests: "set", n: n, pipe: P, rnd: 1000000, data: 100, csv: true, fsync: "strace"})
				if err != nil {
					fs[P].fps.fail(k, "n/a")
					fs[P].cpf.fail(k, "n/a")
					continue
				}
				record(P, k, n, res)
				h.logf("strace pass %s -P %d %s: %s (traced), %.0f fsyncs", mode, P, kindName[k], format(fOps, res.rps), res.fsyncs)
			}
		}
		for _, P := range []int{1, 16} {
			for k := 0; k < 2; k++ {
				if t := acc[P][k]; t.counted {
					fs[P].fps.add(k, t.fsyncs/t.secs)
					if t.fsyncs > 0 {
						fs[P].cpf.add(k, t.cmds/t.fsyncs)
					} else {
						fs[P].cpf.fail(k, "n/a (0 fsyncs)")
					}
				}
			}
		}
		srv[0].stop()
		srv[1].stop()
		for k := 0; k < 2; k++ {
			if dirSize(srv[k].dir) == 0 {
				for _, f := range fs {
					f.thr.flag[k] = "no AOF written"
				}
				r.note("%s wrote nothing to its data dir during the appendfsync %s runs: its figures there measure a server that does not persist.", kindName[k], mode)
			}
		}
	}
}

func (h *harness) memoryGroup() {
	r := h.res
	nk, nh := h.sz.memKeys, h.sz.memHashes
	r.sec("memory")
	fRSS := r.fig(fmt.Sprintf("RSS/key, %s keys × 100 B", humanCount(nk)), fBytes, "<=", 0.9)
	fUsed := r.fig(fmt.Sprintf("used_memory/key, %s keys × 100 B", humanCount(nk)), fBytes, "", 0)
	fHRSS := r.fig(fmt.Sprintf("RSS/hash, %s hashes × 10 fields", humanCount(nh)), fBytes, "<=", 0.9)
	fHUsed := r.fig(fmt.Sprintf("used_memory/hash, %s hashes × 10 fields", humanCount(nh)), fBytes, "", 0)
	fFlush := r.fig(fmt.Sprintf("RSS %.0f s after FLUSHALL of %s keys", h.sz.flushWait.Seconds(), humanCount(nk)), fMB, "", 0)
	r.note("Per-key memory is (value after loading − value before) / DBSIZE. Keys are loaded with `redis-benchmark -t set -n %d -r 100000000 -d 100 -P 32`; hashes with `HSET hash:__rand_int__ f0 <16 B> … f9 <16 B>` (-n %d -r 100000000 -P 32).", nk, nh)

	var keep [2]*server
	var flushAt [2]time.Time
	defer func() {
		for _, s := range keep {
			s.stop()
		}
	}()
	hashCmd := []string{"HSET", "hash:__rand_int__"}
	for i := 0; i < 10; i++ {
		hashCmd = append(hashCmd, fmt.Sprintf("f%d", i), "vvvvvvvvvvvvvvvv")
	}
	for round := 0; round < h.opt.rounds; round++ {
		last := round == h.opt.rounds-1
		for k := 0; k < 2; k++ {
			s, err := h.startServer(k, srvOpts{})
			if err != nil {
				h.logf("memory: %v", err)
				for _, f := range []*figure{fRSS, fUsed, fFlush} {
					f.fail(k, "n/a (server failed)")
				}
				continue
			}
			before, used0 := h.memSample(s)
			res, err := h.runBench(s, benchSpec{tests: "set", n: nk, pipe: 32, rnd: 100000000, data: 100, csv: true})
			if err != nil {
				h.logf("memory load %s: %v", kindName[k], err)
				for _, f := range []*figure{fRSS, fUsed, fFlush} {
					f.fail(k, naReason(err))
				}
				s.stop()
				continue
			}
			keys, _ := dbsize(s.port)
			after, used1 := h.memSample(s)
			if keys > 0 {
				fRSS.add(k, (after-before)/float64(keys))
				if used0 >= 0 && used1 >= 0 {
					fUsed.add(k, (used1-used0)/float64(keys))
				} else {
					fUsed.fail(k, "n/a (no used_memory)")
				}
			}
			h.logf("%s memory %-8s %d keys loaded at %s: RSS %.1f→%.1f MB (%.0f B/key), used_memory %.0f B/key",
				h.roundsLabel(round), kindName[k], keys, format(fOps, res.rps), before/(1<<20), after/(1<<20),
				(after-before)/float64(max(keys, 1)), (used1-used0)/float64(max(keys, 1)))
			if last {
				if _, err := query(s.port, "FLUSHALL"); err != nil {
					fFlush.fail(k, "n/a (FLUSHALL failed)")
					s.stop()
				} else {
					flushAt[k], keep[k] = time.Now(), s
				}
			} else {
				s.stop()
			}
		}
		for k := 0; k < 2; k++ {
			s, err := h.startServer(k, srvOpts{})
			if err != nil {
				fHRSS.fail(k, "n/a (server failed)")
				fHUsed.fail(k, "n/a (server failed)")
				continue
			}
			if why := h.isSupported(s, "hset"); why != "" {
				fHRSS.fail(k, why)
				fHUsed.fail(k, why)
				s.stop()
				continue
			}
			before, used0 := h.memSample(s)
			_, err = h.runBench(s, benchSpec{custom: hashCmd, n: nh, pipe: 32, rnd: 100000000, csv: true})
			if err != nil {
				h.logf("memory hashes %s: %v", kindName[k], err)
				fHRSS.fail(k, naReason(err))
				fHUsed.fail(k, naReason(err))
				s.stop()
				continue
			}
			keys, _ := dbsize(s.port)
			after, used1 := h.memSample(s)
			if keys > 0 {
				fHRSS.add(k, (after-before)/float64(keys))
				if used0 >= 0 && used1 >= 0 {
					fHUsed.add(k, (used1-used0)/float64(keys))
				}
			}
			h.logf("%s memory %-8s %d hashes: %.0f B RSS/hash", h.roundsLabel(round), kindName[k], keys, (after-before)/float64(max(keys, 1)))
			s.stop()
		}
	}
	for k := 0; k < 2; k++ {
		if keep[k] == nil {
			continue
		}
		if d := time.Until(flushAt[k].Add(h.sz.flushWait)); d > 0 {
			h.logf("memory: waiting %.0f s for %s's RSS after FLUSHALL", d.Seconds(), kindName[k])
			time.Sleep(d)
		}
		if v, err := rssBytes(keep[k].p.pid); err == nil && keep[k].p.alive() {
			fFlush.add(k, v)
		} else {
			fFlush.fail(k, "n/a (server gone)")
		}
		keep[k].stop()
		keep[k] = nil
	}
}

// memSample returns RSS and INFO used_memory (-1 if absent).
func (h *harness) memSample(s *server) (float64, float64) {
	rss, _ := rssBytes(s.p.pid)
	used := -1.0
	if v, err := infoInt(s.port, "memory", "used_memory"); err == nil {
		used = float64(v)
	}
	return rss, used
}

func (h *harness) restartGroup() {
	r := h.res
	nk := h.sz.memKeys
	r.sec("restart")
	f := r.fig(fmt.Sprintf("AOF load, %s keys (to PING + loading:0)", humanCount(nk)), fSeconds, "<=", 1.0)
	var dirs [2]string
	var keys [2]int64
	for k := 0; k < 2; k++ {
		s, err := h.startServer(k, srvOpts{aof: "everysec"})
		if err != nil {
			h.logf("restart: %v", err)
			f.fail(k, "n/a (server failed)")
			continue
		}
		if _, err := h.runBench(s, benchSpec{tests: "set", n: nk, pipe: 32, rnd: 100000000, data: 100, csv: true}); err != nil {
			h.logf("restart load %s: %v", kindName[k], err)
			f.fail(k, naReason(err))
			s.stop()
			continue
		}
		keys[k], _ = dbsize(s.port)
		s.stop()
		size := dirSize(s.dir)
		h.logf("restart: %s wrote %.1f MB for %d keys", kindName[k], float64(size)/(1<<20), keys[k])
		if size == 0 {
			f.fail(k, "n/a (no AOF written)")
			continue
		}
		dirs[k] = s.dir
	}
	r.note("AOF load: each server loads %s keys with appendfsync everysec, is stopped with SIGTERM, and is restarted on the same dir; the time is from exec until PING answers PONG and INFO persistence says loading:0.", humanCount(nk))
	for round := 0; round < h.opt.rounds; round++ {
		for k := 0; k < 2; k++ {
			if dirs[k] == "" || f.na[k] != "" {
				continue
			}
			s, err := h.startServer(k, srvOpts{aof: "everysec", dir: dirs[k]})
			if err != nil {
				h.logf("restart %s: %v", kindName[k], err)
				f.fail(k, "n/a (restart failed)")
				continue
			}
			got, _ := dbsize(s.port)
			s.stop()
			if float64(got) < 0.99*float64(keys[k]) {
				f.fail(k, fmt.Sprintf("n/a (AOF not loaded: %d of %d keys)", got, keys[k]))
				continue
			}
			f.add(k, s.readyIn.Seconds())
			h.logf("%s restart %-8s loaded %d keys in %.3f s", h.roundsLabel(round), kindName[k], got, s.readyIn.Seconds())
		}
	}
}

func (h *harness) bigKeysGroup() {
	r := h.res
	r.sec("latency with ~5M keys loaded (-P 1, -c 50)")
	fget := r.fig("GET p99.9, 5M keys", fMillis, "<=", 2.0)
	fset := r.fig("SET p99.9, 5M keys", fMillis, "<=", 2.0)
	figs := map[string]*figure{"get": fget, "set": fset}
	failAll := func(why string) {
		for _, f := range figs {
			f.fail(rs, why)
			f.fail(rd, why)
		}
	}
	if h.opt.quick {
		failAll("n/a (full mode only)")
		return
	}
	if need := 6.0 * (1 << 30); memAvailable() < need {
		failAll("n/a (needs 6 GB free memory)")
		return
	}
	srv, err := h.startPair(srvOpts{})
	if err != nil {
		h.logf("5M keys: %v", err)
		failAll("n/a (server failed)")
		return
	}
	defer srv[0].stop()
	defer srv[1].stop()
	var keys [2]int64
	for k := 0; k < 2; k++ {
		h.logf("5M keys: loading %s", kindName[k])
		if _, err := h.runBench(srv[k], benchSpec{tests: "set", n: h.sz.bigLoad, pipe: 32, rnd: h.sz.bigRange, data: 100, csv: true}); err != nil {
			h.logf("5M keys load %s: %v", kindName[k], err)
			for _, f := range figs {
				f.fail(k, naReason(err))
			}
			continue
		}
		keys[k], _ = dbsize(srv[k].port)
	}
	r.note("5M keys: `redis-benchmark -t set -n %d -r %d -d 100 -P 32` left %d keys in redshard and %d in redis; GET/SET then use -r %d (about half the GETs hit).",
		h.sz.bigLoad, h.sz.bigRange, keys[rs], keys[rd], h.sz.bigRange)
	for round := 0; round < h.opt.rounds; round++ {
		for _, t := range []string{"get", "set"} {
			for k := 0; k < 2; k++ {
				if figs[t].na[k] != "" {
					continue
				}
				res, err := h.runBench(srv[k], benchSpec{tests: t, n: h.sz.p1, pipe: 1, rnd: h.sz.bigRange, data: 100})
				if err != nil {
					h.logf("5M keys %s %s: %v", t, kindName[k], err)
					figs[t].fail(k, naReason(err))
					continue
				}
				figs[t].add(k, res.p999)
				h.logf("%s 5M keys %-4s %-8s p99.9 %.3f ms (%s)", h.roundsLabel(round), strings.ToUpper(t), kindName[k], res.p999, format(fOps, res.rps))
			}
		}
	}
}

// scalePin returns the server and client CPU lists for n shards.
func (h *harness) scalePin(n int) (string, string) {
	pool := h.allowed
	if h.opt.serverCPUs != "" {
		pool, _ = parseCPUList(h.opt.serverCPUs)
	}
	server := pool[:n]
	if h.opt.serverCPUs == "" && h.opt.clientCPUs == "" && n == len(h.allowed) {
		return "", "" // no spare core: nothing to pin apart
	}
	client := h.opt.clientCPUs
	if client == "" {
		in := map[int]bool{}
		for _, c := range server {
			in[c] = true
		}
		var rest []int
		for _, c := range h.allowed {
			if !in[c] {
				rest = append(rest, c)
			}
		}
		client = cpuListString(rest)
	}
	return cpuListString(server), client
}

func (h *harness) scalingGroup() {
	r := h.res
	r.sec("scaling (-P 16, -c 50 -r 1000000 -d 100; redis-server is the reference)")
	maxN := len(h.allowed)
	if h.opt.serverCPUs != "" {
		l, _ := parseCPUList(h.opt.serverCPUs)
		maxN = len(l)
	}
	if tasksetPath == "" {
		r.note("taskset is not installed: the scaling runs are not pinned.")
	}
	var base [2]*figure
	type key struct {
		t string
		n int
	}
	figs := map[key]*figure{}
	for ti, t := range []string{"SET", "GET"} {
		for n := 1; n <= maxN; n++ {
			f := r.fig(fmt.Sprintf("%s -P 16 --shards %d", t, n), fOps, "", 0)
			f.plausible = true
			figs[key{strings.ToLower(t), n}] = f
			if n == 1 {
				base[ti] = f
				f.targetText = "(base for shards=N)"
				continue
			}
			b, n := base[ti], n
			// The target is for machines with cores to spare: with a
			// shard on every CPU the client has none of its own, and the
			// figure is shown but not judged.
			spare := h.opt.clientCPUs != "" || n < len(h.allowed)
			f.check = func() (string, bool, bool) {
				v1, ok1 := b.median(rs)
				vn, okn := f.median(rs)
				if !ok1 || !okn || v1 == 0 {
					return fmt.Sprintf("≥%.1f× shards=1", 0.7*float64(n)), false, false
				}
				if !spare {
					return fmt.Sprintf("≥%.1f× shards=1 with a spare core for the client; none here (got %.2f×)", 0.7*float64(n), vn/v1), false, false
				}
				return fmt.Sprintf("≥%.1f× shards=1 (got %.2f×)", 0.7*float64(n), vn/v1), vn >= 0.7*float64(n)*v1, true
			}
		}
	}
	var redisCPUs string
	if h.opt.serverCPUs != "" {
		redisCPUs = h.opt.serverCPUs
	}
	redis, err := h.startServer(rd, srvOpts{cpus: redisCPUs})
	if err != nil {
		h.logf("scaling: %v", err)
		for _, f := range figs {
			f.fail(rd, "n/a (server failed)")
		}
	}
	defer redis.stop()
	for n := 1; n <= maxN; n++ {
		scpus, ccpus := h.scalePin(n)
		if tasksetPath == "" {
			scpus, ccpus = "", ""
		}
		if scpus != "" || ccpus != "" {
			r.note("scaling --shards %d: server on CPUs %s, client on CPUs %s (redis-server re-pinned to the server CPUs).", n, orAll(scpus), orAll(ccpus))
		}
		pin := scpus
		if pin == "" {
			pin = cpuListString(h.allowed)
		}
		if redis != nil && tasksetPath != "" {
			var out bytes.Buffer
			if p, err := startProc("taskset", "", nil, &out, tasksetPath, "-a", "-p", "-c", pin, strconv.Itoa(redis.p.pid)); err == nil {
				_ = p.wait(10 * time.Second)
			}
		}
		s, err := h.startServer(rs, srvOpts{shards: n, cpus: scpus})
		if err != nil {
			h.logf("scaling --shards %d: %v", n, err)
			figs[key{"set", n}].fail(rs, "n/a (server failed)")
			figs[key{"get", n}].fail(rs, "n/a (server failed)")
			continue
		}
		srv := [2]*server{s, redis}
		for round := 0; round < h.opt.rounds; round++ {
			for _, t := range []string{"set", "get"} {
				for k := 0; k < 2; k++ {
					f := figs[key{t, n}]
					if srv[k] == nil || f.na[k] != "" {
						continue
					}
					if why := h.isSupported(srv[k], t); why != "" {
						f.fail(k, why)
						continue
					}
					res, err := h.runBench(srv[k], benchSpec{tests: t, n: h.sz.p16, pipe: 16, rnd: 1000000, data: 100, csv: true, clientCPUs: ccpus})
					if err != nil {
						h.logf("scaling %s shards=%d %s: %v", t, n, kindName[k], err)
						f.fail(k, naReason(err))
						continue
					}
					f.add(k, res.rps)
					h.logf("%s scaling %-3s shards=%d %-8s %s", h.roundsLabel(round), strings.ToUpper(t), n, kindName[k], format(fOps, res.rps))
				}
			}
		}
		s.stop()
	}
}

func orAll(s string) string {
	if s == "" {
		return "all"
	}
	return s
}

func humanCount(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return fmt.Sprintf("%dM", n/1000000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// ---------------------------------------------------------------------------
// Profile mode

func (h *harness) profileMode() int {
	dir := h.mkdir("profile")
	cpuFile, memFile := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	s, err := h.startServer(rs, srvOpts{env: []string{"REDSHARD_CPUPROFILE=" + cpuFile, "REDSHARD_MEMPROFILE=" + memFile}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	h.logf("profile: redshard pid %d, REDSHARD_CPUPROFILE=%s REDSHARD_MEMPROFILE=%s", s.p.pid, cpuFile, memFile)
	for _, P := range []int{1, 16} {
		for _, t := range []string{"set", "get"} {
			n := h.sz.p1
			if P > 1 {
				n = h.sz.p16
			}
			res, err := h.runBench(s, benchSpec{tests: t, n: n, pipe: P, rnd: 1000000, data: 100, csv: true})
			if err != nil {
				h.logf("profile %s -P %d: %v", t, P, err)
				continue
			}
			h.logf("profile %-3s -P %-2d %s  %.2f µs CPU/op", strings.ToUpper(t), P, format(fOps, res.rps), res.cpuPerOp*1e6)
		}
	}
	s.stop()
	keepDir := filepath.Join(h.root, "bench", "tmp", "profile-"+time.Now().Format("20060102-150405"))
	rc := 0
	for _, pf := range []struct{ file, kind string }{{cpuFile, "CPU"}, {memFile, "heap"}} {
		fi, err := os.Stat(pf.file)
		if err != nil || fi.Size() == 0 {
			fmt.Printf("\nredshard wrote no %s profile (%s).\nThe server must honour REDSHARD_CPUPROFILE (CPU profile from start until SIGTERM) and REDSHARD_MEMPROFILE (heap profile at exit).\n", pf.kind, pf.file)
			rc = 1
			continue
		}
		if err := os.MkdirAll(keepDir, 0o755); err == nil {
			if b, err := os.ReadFile(pf.file); err == nil {
				_ = os.WriteFile(filepath.Join(keepDir, filepath.Base(pf.file)), b, 0o644)
			}
		}
		var views [][]string
		if pf.kind == "CPU" {
			views = [][]string{{"-top", "-nodecount=40"}}
		} else {
			views = [][]string{{"-top", "-nodecount=25", "-sample_index=alloc_space"}, {"-top", "-nodecount=15", "-sample_index=inuse_space"}}
		}
		for _, v := range views {
			args := append([]string{"tool", "pprof"}, v...)
			args = append(args, h.bin, pf.file)
			fmt.Printf("\n### go %s\n\n", strings.Join(args, " "))
			var out bytes.Buffer
			p, err := startProc("go tool pprof", "", nil, &out, "go", args...)
			if err == nil {
				err = p.wait(2 * time.Minute)
			}
			fmt.Print(out.String())
			if err != nil {
				fmt.Printf("(pprof failed: %v)\n", err)
				rc = 1
			}
		}
	}
	if _, err := os.Stat(keepDir); err == nil {
		if b, err := os.ReadFile(h.bin); err == nil {
			_ = os.WriteFile(filepath.Join(keepDir, "redshard-server"), b, 0o755)
		}
		fmt.Printf("\nProfiles and binary kept in %s (e.g. go tool pprof -http=: %s/redshard-server %s/cpu.prof)\n", keepDir, keepDir, keepDir)
	}
	return rc
}

// ---------------------------------------------------------------------------
// Output

func (h *harness) machineInfo() []string {
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return []string{
		fmt.Sprintf("machine: %s, %d CPUs usable (%s), Linux %s, %.1f GB free", cpu, len(h.allowed), cpuListString(h.allowed),
			strings.TrimSpace(string(kernel)), memAvailable()/(1<<30)),
	}
}

func cmdLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func (h *harness) markdown(title string, header []string, rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	for _, l := range header {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	b.WriteString("\n| figure | redshard | redis | ratio | target | met? |\n|---|---:|---:|---:|---|---|\n")
	met, missed, na := 0, 0, 0
	for _, r := range rows {
		if r.section {
			fmt.Fprintf(&b, "| **%s** | | | | | |\n", mdEscape(r.name))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(r.name), mdEscape(r.cells[rs]), mdEscape(r.cells[rd]),
			r.ratioText, mdEscape(r.target), r.met)
		switch r.state {
		case 1:
			met++
		case 2:
			missed++
		case 3:
			na++
		}
	}
	fmt.Fprintf(&b, "\nTargets: %d met, %d missed, %d n/a.\n", met, missed, na)
	if len(h.res.notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range h.res.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// svgChart draws one horizontal bar per figure: the ratio redshard/redis on
// a linear axis with a dashed line at 1.0 and a tick at the target. Green:
// target met, red: missed, grey: no target.
func svgChart(title string, rows []row) string {
	const (
		labelW = 330
		chartW = 460
		valueW = 90
		rowH   = 17
		top    = 62
		left   = 10
	)
	xmax := 2.0
	for _, r := range rows {
		if r.hasRatio && r.ratio*1.1 > xmax {
			xmax = r.ratio * 1.1
		}
	}
	xmax = math.Min(math.Ceil(xmax*2)/2, 5)
	x0 := float64(left + labelW)
	x := func(v float64) float64 { return x0 + math.Min(v, xmax)/xmax*chartW }
	height := top + len(rows)*rowH + 60
	width := left + labelW + chartW + valueW + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", left, xmlEscaper.Replace(title))
	fmt.Fprintf(&b, `<text x="%d" y="36" fill="#555">ratio redshard / redis-server (throughput: higher is better; CPU, latency, memory, load time: lower is better)</text>`+"\n", left)
	bottom := top + len(rows)*rowH
	step := 0.5
	if xmax > 3 {
		step = 1
	}
	for v := 0.0; v <= xmax+1e-9; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>`+"\n", x(v), top-4, x(v), bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%g×</text>`+"\n", x(v), top-8, v)
	}
	colors := map[int]string{0: "#9a9a9a", 1: "#3b9a4c", 2: "#c9483b", 3: "#9a9a9a"}
	for i, r := range rows {
		y := top + i*rowH
		if r.section {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f0f0f0"/>`+"\n", left, y+1, width-2*left, rowH-2)
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left+2, y+12, xmlEscaper.Replace(truncate(r.name, 120)))
			continue
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", left+8, y+12, xmlEscaper.Replace(truncate(r.name, 52)))
		if !r.hasRatio {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#999">n/a</text>`+"\n", x0+4, y+12)
			continue
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0, y+3, x(r.ratio)-x0, rowH-5, colors[r.state])
		label := fmt.Sprintf("%.2f×", r.ratio)
		if r.ratio > xmax {
			label = "▶ " + label
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", x0+chartW+6, y+12, label)
		if r.targetVal > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222" stroke-width="2"/>`+"\n", x(r.targetVal), y+1, x(r.targetVal), y+rowH-1)
		}
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" stroke-dasharray="4,3"/>`+"\n", x(1), top-4, x(1), bottom)
	ly := bottom + 24
	legend := []struct{ c, t string }{{colors[1], "target met"}, {colors[2], "target missed"}, {colors[0], "no target / n/a"}}
	lx := left + 8
	for _, l := range legend {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx, ly-9, l.c, lx+16, ly, l.t)
		lx += 120
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#222" stroke-width="2"/><text x="%d" y="%d">target</text>`+"\n", lx+5, ly-10, lx+5, ly+1, lx+12, ly)
	lx += 70
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black" stroke-dasharray="4,3"/><text x="%d" y="%d">1.0× = redis-server</text>`+"\n", lx+5, ly-10, lx+5, ly+1, lx+12, ly)
	b.WriteString("</svg>\n")
	return b.String()
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ---------------------------------------------------------------------------
// main

func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/redshard/redshard") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the redshard repository (no go.mod of github.com/redshard/redshard found)")
		}
		dir = parent
	}
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-tracking-driver" {
		trackingDriver(os.Args[2]) // the tracking group's client (tracking.go)
		return
	}
	var o options
	flag.BoolVar(&o.quick, "quick", false, "one round, fewer requests, no 5M-key figure: finishes in under a minute")
	flag.BoolVar(&o.profile, "profile", false, "profile redshard under a SET/GET load (REDSHARD_CPUPROFILE/REDSHARD_MEMPROFILE) and print pprof -top")
	flag.IntVar(&o.rounds, "rounds", 0, "rounds per figure (default 3, 1 with -quick)")
	flag.IntVar(&o.n, "n", 0, "requests per -P 1 run (default 100000, 20000 with -quick; -P 16 runs use 10x)")
	flag.IntVar(&o.clients, "c", 50, "redis-benchmark clients")
	flag.StringVar(&o.serverCPUs, "server-cpus", "", "pin every server with taskset -c `LIST`")
	flag.StringVar(&o.clientCPUs, "client-cpus", "", "pin every redis-benchmark with taskset -c `LIST`")
	flag.StringVar(&o.only, "only", "", "comma-separated figure groups to run: "+strings.Join(groupNames, ","))
	flag.StringVar(&o.outDir, "out", "", "results directory (default bench/results in the repository)")
	flag.StringVar(&o.redshard, "redshard", "", "use this redshard-server binary instead of building one")
	flag.BoolVar(&o.verbose, "v", false, "print every redis-benchmark output")
	flag.StringVar(&o.fsyncTool, "fsync-counter", "auto", "how to count fsyncs when INFO has no counter: auto (perf, else strace for redis-server), perf, strace, none")
	flag.Parse()
	if flag.NArg() > 0 {
		fatalf("unexpected arguments %q", flag.Args())
	}
	if o.rounds <= 0 {
		o.rounds = 3
		if o.quick {
			o.rounds = 1
		}
	}
	h := &harness{opt: o, sz: sizesFor(o.quick, o.n), started: time.Now(), allowed: allowedCPUs(),
		res: &results{byName: map[string]*figure{}}, groups: map[string]bool{}}
	h.supported = [2]map[string]string{{}, {}}
	for _, g := range strings.Split(o.only, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		if !contains(groupNames, g) {
			fatalf("unknown group %q in -only (have %s)", g, strings.Join(groupNames, ","))
		}
		h.groups[g] = true
	}
	if len(h.groups) == 0 {
		for _, g := range groupNames {
			h.groups[g] = true
		}
	}
	for _, l := range []string{o.serverCPUs, o.clientCPUs} {
		if l == "" {
			continue
		}
		if _, err := parseCPUList(l); err != nil {
			fatalf("%v", err)
		}
	}

	var err error
	if h.root, err = findRoot(); err != nil {
		fatalf("%v", err)
	}
	missing := false
	if h.redisSv, err = exec.LookPath("redis-server"); err != nil && !o.profile {
		missing = true
	}
	if h.redisBm, err = exec.LookPath("redis-benchmark"); err != nil {
		missing = true
	}
	if missing {
		fatalf("redis-server and redis-benchmark are needed (Redis 7.0 was used to write this harness).\nInstall them with:  sudo apt-get install -y redis-server redis-tools\n(on Debian/Ubuntu; then stop the system service if it starts: sudo systemctl disable --now redis-server)")
	}
	tasksetPath, _ = exec.LookPath("taskset")
	if tasksetPath == "" && (o.serverCPUs != "" || o.clientCPUs != "") {
		fatalf("-server-cpus/-client-cpus need taskset: sudo apt-get install -y util-linux")
	}
	switch o.fsyncTool {
	case "auto", "perf", "strace", "none":
	default:
		fatalf("-fsync-counter must be auto, perf, strace or none")
	}
	if o.fsyncTool == "auto" || o.fsyncTool == "perf" {
		if p, err := exec.LookPath("perf"); err == nil && perfUsable(p) {
			h.perf = p
		} else if o.fsyncTool == "perf" {
			fatalf("-fsync-counter perf: perf is missing or cannot count syscalls:sys_enter_fdatasync")
		}
	}
	if o.fsyncTool == "auto" || o.fsyncTool == "strace" {
		h.strace, _ = exec.LookPath("strace")
	}

	if h.tmp, err = os.MkdirTemp("", "redshard-bench-"); err != nil {
		fatalf("%v", err)
	}
	registerDir(h.tmp)
	// A closed stdout (go run ./bench | head) must not kill the harness
	// before cleanup: with SIGPIPE notified, writes just fail. (Not
	// signal.Ignore: an ignored SIGPIPE would be inherited by the servers.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigc
		fmt.Fprintf(os.Stderr, "\nbench: %v: stopping servers and removing %s\n", s, h.tmp)
		cleanup()
		os.Exit(130)
	}()
	defer func() {
		if r := recover(); r != nil {
			cleanup()
			panic(r)
		}
	}()

	if o.redshard != "" {
		h.bin, _ = filepath.Abs(o.redshard)
	} else {
		h.bin = filepath.Join(h.tmp, "redshard-server")
		h.logf("building redshard-server")
		var out bytes.Buffer
		p, err := startProc("go build", "", nil, &out, "go", "build", "-C", h.root, "-o", h.bin, "./cmd/redshard-server")
		if err == nil {
			err = p.wait(10 * time.Minute)
		}
		if err != nil {
			fatalf("go build ./cmd/redshard-server failed: %v\n%s", err, out.String())
		}
	}

	if o.profile {
		rc := h.profileMode()
		cleanup()
		os.Exit(rc)
	}

	load0 := loadAvg()
	mode := "full"
	if o.quick {
		mode = "quick"
	}
	h.logf("mode %s: %d round(s), groups %s; redshard %s", mode, o.rounds, o.onlyText(h.groups), h.bin)
	if h.groups["throughput"] {
		h.throughputGroup()
	}
	if h.groups["scripting"] {
		h.scriptingGroup()
	}
	if h.groups["aof"] {
		h.aofGroup()
	}
	if h.groups["memory"] {
		h.memoryGroup()
	}
	if h.groups["restart"] {
		h.restartGroup()
	}
	if h.groups["bigkeys"] {
		h.bigKeysGroup()
	}
	if h.groups["scaling"] {
		h.scalingGroup()
	}
	if h.groups["streams"] {
		h.streamsGroup()
	}
	if h.groups["rdb"] {
		h.rdbGroup()
	}
	if h.groups["repl"] {
		h.replGroup()
	}
	if h.groups["acl"] {
		h.aclGroup()
	}
	if h.groups["tls"] {
		h.tlsGroup()
	}
	if h.groups["tracking"] {
		h.trackingGroup()
	}

	if isClosing() {
		select {} // interrupted: the signal handler exits
	}
	host, _ := os.Hostname()
	host = regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(host, "_")
	date := time.Now().Format("2006-01-02")
	base := date + "-" + host
	if o.quick {
		base += "-quick"
	}
	if o.only != "" {
		base += "-partial"
	}
	rev := cmdLine("git", "-C", h.root, "rev-parse", "--short", "HEAD")
	if rev == "" {
		rev = "no commit"
	}
	if cmdLine("git", "-C", h.root, "status", "--porcelain") != "" {
		rev += ", with uncommitted changes"
	}
	if o.redshard != "" {
		// The binary was built elsewhere: the checkout's commit says
		// nothing of it.
		rev = "a binary given with -redshard; the checkout is at " + rev
	}
	pin := "none"
	if o.serverCPUs != "" || o.clientCPUs != "" {
		pin = fmt.Sprintf("server CPUs %s, client CPUs %s", orAll(o.serverCPUs), orAll(o.clientCPUs))
	}
	header := append(h.machineInfo(),
		fmt.Sprintf("mode: %s, %d round(s) per figure alternating redshard/redis, medians; -P 1 runs %d requests, -P 16 runs %d", mode, o.rounds, h.sz.p1, h.sz.p16),
		fmt.Sprintf("redshard: %s (%s)", cmdLine(h.bin, "--version"), rev),
		fmt.Sprintf("redis: %s", cmdLine(h.redisSv, "--version")),
		fmt.Sprintf("pinning: %s; load average %s at start, %s at end", pin, load0, loadAvg()),
		fmt.Sprintf("ran %s in %.0f s", time.Now().Format("2006-01-02 15:04 MST"), time.Since(h.started).Seconds()),
	)
	rows := h.res.rows()
	title := fmt.Sprintf("redshard vs redis-server, %s, %s", date, host)
	md := h.markdown(title, header, rows)
	fmt.Print("\n" + md)

	outDir := o.outDir
	if outDir == "" {
		outDir = filepath.Join(h.root, "bench", "results")
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fatalf("%v", err)
	}
	mdPath, svgPath := filepath.Join(outDir, base+".md"), filepath.Join(outDir, base+".svg")
	if err := os.WriteFile(mdPath, []byte(md), 0o644); err != nil {
		fatalf("%v", err)
	}
	if err := os.WriteFile(svgPath, []byte(svgChart(title+" ("+mode+")", rows)), 0o644); err != nil {
		fatalf("%v", err)
	}
	h.logf("wrote %s and %s", rel(h.root, mdPath), rel(h.root, svgPath))
	cleanup()
}

func (o options) onlyText(g map[string]bool) string {
	var out []string
	for _, n := range groupNames {
		if g[n] {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// ---------------------------------------------------------------------------
// Streams and geo

// streamEntryCmd is the entry of the memory figure: three short fields.
var streamEntryCmd = []string{"XADD", "s", "*", "a", "1", "b", "2", "c", "3"}

// geoAddCmd adds random points in the square lon 0–1°, lat 0–1°, and
// geoSearchCmd searches 1 km around a random point of the same square.
// Each __rand_int__ is replaced independently by 12 zero-padded digits of a
// number below -r, which redis-benchmark reads with atoi (so at most 2^31-1:
// "13.__rand_int__" could only reach 13.0021). "__rand_int__e-8" with
// -r 10^8 is N×10^-8 for N < 10^8: a coordinate in [0, 1) with 8 decimals,
// and members m:N are distinct for ~99.5% of 1.1M requests.
var (
	geoRand      = 100000000
	geoAddCmd    = []string{"GEOADD", "geo", "__rand_int__e-8", "__rand_int__e-8", "m:__rand_int__"}
	geoSearchCmd = []string{"GEOSEARCH", "geo", "FROMLONLAT", "__rand_int__e-8", "__rand_int__e-8", "BYRADIUS", "1", "km", "ASC", "COUNT", "10"}
)

// streamsGroup measures memory per stream entry (fresh servers each round,
// redshard then redis), and XADD, GEOADD and GEOSEARCH throughput on one
// pair of servers, alternating redshard and redis for every run.
func (h *harness) streamsGroup() {
	r := h.res
	ne := h.sz.memKeys // 1M entries (200k with -quick)
	r.sec(fmt.Sprintf("streams: memory, %s entries of 3 short fields (XADD s * a 1 b 2 c 3)", humanCount(ne)))
	fUsed := r.fig("used_memory/entry", fBytes, "", 0)
	fRSS := r.fig("RSS/entry", fBytes, "", 0)
	r.note("Stream memory per entry is (INFO memory used_memory after loading − before) / XLEN s, and the same for the process RSS (/proc/PID/status VmRSS); entries are loaded into one key with `redis-benchmark -c %d -n %d -P 32 XADD s * a 1 b 2 c 3`.", h.opt.clients, ne)
	for round := 0; round < h.opt.rounds; round++ {
		for k := 0; k < 2; k++ {
			s, err := h.startServer(k, srvOpts{})
			if err != nil {
				h.logf("streams memory: %v", err)
				fUsed.fail(k, "n/a (server failed)")
				fRSS.fail(k, "n/a (server failed)")
				continue
			}
			if why := h.isSupported(s, "xadd"); why != "" {
				fUsed.fail(k, why)
				fRSS.fail(k, why)
				s.stop()
				continue
			}
			rss0, used0 := h.memSample(s)
			res, err := h.runBench(s, benchSpec{custom: streamEntryCmd, n: ne, pipe: 32, csv: true})
			if err != nil {
				h.logf("streams memory load %s: %v", kindName[k], err)
				fUsed.fail(k, naReason(err))
				fRSS.fail(k, naReason(err))
				s.stop()
				continue
			}
			rss1, used1 := h.memSample(s)
			n := int64(0)
			if v, err := query(s.port, "XLEN", "s"); err == nil {
				n, _ = v.(int64)
			}
			if n != int64(ne) {
				h.logf("streams memory %s: XLEN s = %d after %d XADDs", kindName[k], n, ne)
				fUsed.fail(k, "n/a (XLEN wrong)")
				fRSS.fail(k, "n/a (XLEN wrong)")
				s.stop()
				continue
			}
			if used0 >= 0 && used1 >= 0 {
				fUsed.add(k, (used1-used0)/float64(n))
			} else {
				fUsed.fail(k, "n/a (no used_memory)")
			}
			fRSS.add(k, (rss1-rss0)/float64(n))
			h.logf("%s streams memory %-8s %d entries loaded at %s: used_memory %.1f B/entry, RSS %.1f→%.1f MB (%.1f B/entry)",
				h.roundsLabel(round), kindName[k], n, format(fOps, res.rps), (used1-used0)/float64(n),
				rss0/(1<<20), rss1/(1<<20), (rss1-rss0)/float64(n))
			s.stop()
		}
	}

	type spec struct {
		test, label string
		cmd         []string
		rnd         int
	}
	specs := []spec{
		{"xadd", "XADD s * f v", []string{"XADD", "s", "*", "f", "v"}, 0},
		{"geoadd", "GEOADD random point", geoAddCmd, geoRand},
		{"geosearch", "GEOSEARCH FROMLONLAT BYRADIUS 1 km ASC COUNT 10", geoSearchCmd, geoRand},
	}
	r.sec(fmt.Sprintf("streams and geo throughput (-c %d)", h.opt.clients))
	r.note("XADD appends to one stream key, which is deleted before each run. GEOADD adds `m:__rand_int__` at a random point `__rand_int__e-8 __rand_int__e-8` (-r 10^8: uniform over the square lon 0–1°, lat 0–1°, 8 decimals) into one key `geo`, deleted before the -P 1 GEOADD run; GEOSEARCH then searches 1 km around a random point of that square (ASC COUNT 10) in the points the two GEOADD runs left (about %d, so about %.0f within 1 km; ZCARD logged, and the GEOSEARCH figures are n/a if it is below half the GEOADD requests).", h.sz.p1+h.sz.p16, float64(h.sz.p1+h.sz.p16)*math.Pi/(111.2*111.2))
	figs := map[string]*figure{}
	for _, sp := range specs {
		for _, P := range []int{1, 16} {
			f := r.fig(fmt.Sprintf("%s -P %d", sp.label, P), fOps, "", 0)
			f.plausible = true
			figs[fmt.Sprintf("%s/%d", sp.test, P)] = f
		}
	}
	srv, err := h.startPair(srvOpts{})
	if err != nil {
		h.logf("streams: %v", err)
		for _, f := range figs {
			f.fail(rs, "n/a (server failed)")
			f.fail(rd, "n/a (server failed)")
		}
		return
	}
	defer srv[0].stop()
	defer srv[1].stop()
	for round := 0; round < h.opt.rounds; round++ {
		for _, sp := range specs {
			for _, P := range []int{1, 16} {
				for k := 0; k < 2; k++ {
					f := figs[fmt.Sprintf("%s/%d", sp.test, P)]
					if why := h.isSupported(srv[k], sp.test); why != "" {
						f.fail(k, why)
						continue
					}
					switch {
					case sp.test == "xadd":
						_, _ = query(srv[k].port, "DEL", "s")
					case sp.test == "geoadd" && P == 1:
						_, _ = query(srv[k].port, "DEL", "geo")
					}
					if sp.test == "geosearch" {
						v, err := query(srv[k].port, "ZCARD", "geo")
						if pts, _ := v.(int64); err != nil || pts < int64(h.sz.p1+h.sz.p16)/2 {
							h.logf("streams %s %s: ZCARD geo = %v (%v), fewer than half the GEOADDs", sp.label, kindName[k], v, err)
							f.fail(k, "n/a (points missing)")
							continue
						}
					}
					n := h.sz.p1
					if P > 1 {
						n = h.sz.p16
					}
					if sp.test == "geosearch" {
						// A search scans thousands of points (~3.5k/s on 2
						// cores with 1.1M points): a tenth of the requests.
						n = max(h.sz.p1/10, 1000)
					}
					res, err := h.runBench(srv[k], benchSpec{custom: sp.cmd, n: n, pipe: P, rnd: sp.rnd, csv: true})
					if err != nil {
						h.logf("streams %s -P %d %s: %v", sp.label, P, kindName[k], err)
						f.fail(k, naReason(err))
						continue
					}
					f.add(k, res.rps)
					extra := ""
					if sp.test == "geosearch" {
						if v, err := query(srv[k].port, "ZCARD", "geo"); err == nil {
							extra = fmt.Sprintf(" (%v points)", v)
						}
					}
					h.logf("%s %-8s -P %-2d %-8s %s%s", h.roundsLabel(round), sp.label, P, kindName[k], format(fOps, res.rps), extra)
				}
			}
		}
	}
	for k := 0; k < 2; k++ {
		_, _ = query(srv[k].port, "DEL", "s", "geo")
	}
}
