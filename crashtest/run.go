package crashtest

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config is one invocation of the tool.
type Config struct {
	Command []string // the server command, with {port} and {dir}
	Fsync   string   // always, everysec or no; "" = ask the server
	AOFGlob string   // where the server keeps its log, relative to {dir}
	Quick   bool
	Seed    int64
	Workdir string // "" = a temporary folder, removed when everything passed
	Keep    bool   // keep the work folder even when everything passed
	// Writers at depth 1 and at depth 16, and readers.
	Depth1, Depth16, Readers int
	// Margin is what everysec may lose (2 s: Redis's promise is "about one
	// second", and a write can wait up to two behind a slow fsync).
	Margin time.Duration
	// Strict makes "nothing acknowledged lost" the verdict of every crash
	// but a power cut, whatever the policy (redshard promises it: replies
	// wait for write(2) under everysec too).
	Strict    bool
	Scenarios []string // only these (exact names or prefixes ending in ':'); nil = the matrix
	Power     Power
	Out       io.Writer
}

// The failpoints redshard offers, by what sets them off.
var (
	logPoints     = []string{"aof-write", "aof-fsync", "aof-publish", "aof-published", "reply-write", "reply-written", "exec-locked"}
	rewritePoints = []string{"rewrite-cut", "rewrite-base-written", "rewrite-manifest-temp", "rewrite-manifest-renamed", "rewrite-old-removed"}
	rdbPoints     = []string{"rdb-temp-written", "rdb-renamed"}
)

// Matrix is the list of rows the tool runs.
func Matrix(quick bool) []string {
	if quick {
		return []string{"kill", "kill", "torn-tail", "corrupt-middle", "rewrite-kill",
			"failpoint:aof-write", "failpoint:aof-fsync", "failpoint:reply-write", "failpoint:exec-locked",
			"failpoint:rewrite-base-written", "failpoint:rewrite-manifest-renamed",
			"power", "power-torn", "power-first-start", "power-rewrite"}
	}
	var m []string
	for i := 0; i < 4; i++ {
		m = append(m, "kill")
	}
	m = append(m, "torn-tail", "torn-tail", "corrupt-middle", "corrupt-middle", "rewrite-kill", "rewrite-kill", "rewrite-kill")
	for _, p := range append(append(append([]string{}, logPoints...), rewritePoints...), rdbPoints...) {
		m = append(m, "failpoint:"+p)
	}
	m = append(m, "failpoint:load-record")
	for i := 0; i < 3; i++ {
		m = append(m, "power", "power-torn")
	}
	m = append(m, "power-first-start", "power-rewrite", "power-rewrite")
	return m
}

// runner holds what the rows share.
type runner struct {
	cfg      Config
	work     string
	rng      *rand.Rand
	fpErr    error // why the server has no failpoints, nil if it has
	powerErr error
}

// Run runs the matrix and returns the report; the error is for the tool's
// own failures (the server cannot start at all, ...), not for failed rows.
func Run(cfg Config) (*Report, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Power == nil {
		cfg.Power = DefaultPower
	}
	if cfg.AOFGlob == "" {
		cfg.AOFGlob = "appendonlydir/*"
	}
	if cfg.Margin == 0 {
		cfg.Margin = 2 * time.Second
	}
	r := &runner{cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed))}
	temp := cfg.Workdir == ""
	if temp {
		d, err := os.MkdirTemp("", "redshard-crashtest-")
		if err != nil {
			return nil, err
		}
		r.work = d
	} else {
		r.work = cfg.Workdir
		if err := os.MkdirAll(r.work, 0o755); err != nil {
			return nil, err
		}
	}
	if err := r.probe(); err != nil {
		return nil, fmt.Errorf("%w (server log in %s)", err, r.work)
	}
	r.powerErr = cfg.Power.Available()

	rows := cfg.Scenarios
	if rows == nil {
		rows = Matrix(cfg.Quick)
	}
	rep := &Report{Command: cfg.Command, Fsync: r.cfg.Fsync, Quick: cfg.Quick, Seed: cfg.Seed, Workdir: r.work,
		Margin: cfg.Margin.String(), Strict: cfg.Strict}
	if r.fpErr != nil {
		fmt.Fprintf(cfg.Out, "failpoints: skipped, the server has none (DEBUG FAILPOINT LIST: %v)\n", r.fpErr)
	}
	if r.powerErr != nil {
		fmt.Fprintf(cfg.Out, "power loss: skipped (%v)\n", r.powerErr)
	}
	fmt.Fprintln(cfg.Out, tableHeader())
	for i, sc := range rows {
		row := r.row(i+1, sc)
		if row.Verdict != "FAIL" && !cfg.Keep && row.Dir != "" {
			os.RemoveAll(row.Dir)
			row.Dir = ""
		}
		rep.Rows = append(rep.Rows, row)
		fmt.Fprintln(cfg.Out, row.line())
	}
	rep.finish()
	if temp && rep.Failed == 0 && !cfg.Keep {
		os.RemoveAll(r.work)
		rep.Workdir = ""
	}
	return rep, nil
}

// probe starts the server once to learn its fsync policy and whether it
// has failpoints.
func (r *runner) probe() error {
	dir := filepath.Join(r.work, "probe")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s, err := startServer(r.cfg.Command, dir, nil, filepath.Join(r.work, "probe.log"))
	if err != nil {
		return err
	}
	defer s.kill()
	if err := s.waitReady(30 * time.Second); err != nil {
		return fmt.Errorf("the server does not start: %v: %s", err, strings.Join(lastLines(s.log, 3), " | "))
	}
	c, err := Dial(s.addr())
	if err != nil {
		return err
	}
	defer c.Close()
	get := func(name string) string {
		rep, err := c.Do(5*time.Second, "CONFIG", "GET", name)
		if err != nil || len(rep.Arr) != 2 {
			return ""
		}
		return rep.Arr[1].Str
	}
	if ao := get("appendonly"); ao != "yes" {
		return fmt.Errorf("the server runs with appendonly %q: give it appendonly yes", ao)
	}
	policy := get("appendfsync")
	switch {
	case r.cfg.Fsync == "":
		r.cfg.Fsync = policy
	case policy != "" && policy != r.cfg.Fsync:
		return fmt.Errorf("--fsync %s but the server says appendfsync %s", r.cfg.Fsync, policy)
	}
	switch r.cfg.Fsync {
	case "always", "everysec", "no":
	default:
		return fmt.Errorf("unknown fsync policy %q: give --fsync always|everysec|no", r.cfg.Fsync)
	}
	rep, err := c.Do(5*time.Second, "DEBUG", "FAILPOINT", "LIST")
	switch {
	case err != nil:
		r.fpErr = err
	case rep.Kind == '-':
		r.fpErr = errors.New(rep.Str)
	}
	return nil
}

// margin is the window the policy may lose in a crash of this kind.
func (r *runner) margin(power bool) time.Duration {
	switch {
	case r.cfg.Fsync == "always":
		return 0
	case r.cfg.Fsync == "no" && power:
		return -1 // appendfsync no promises nothing across a power cut
	}
	return r.cfg.Margin
}

// loadTime is how long the load runs before a crash.
func (r *runner) loadTime(power bool) time.Duration {
	lo, hi := 1000, 4000
	if r.cfg.Quick {
		lo, hi = 400, 1200
	}
	d := time.Duration(lo+r.rng.Intn(hi-lo)) * time.Millisecond
	// A power cut under everysec may lose the last Margin: load for longer
	// so that the check still has teeth.
	if m := r.margin(power); m > 0 && (power || !r.cfg.Quick) {
		d += m
	}
	return d
}

// syncDir fsyncs a folder: its entries' names become durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// rowState is one row while it runs.
type rowState struct {
	n         int
	name      string
	dir       string // the row's folder
	data      string // the server's {dir}
	log       string
	rng       *rand.Rand
	models    []*Model
	writers   []*writer
	readers   []*reader
	stop      chan struct{}
	wg        sync.WaitGroup
	crashAt   time.Time
	notes     []string
	live      map[string]bool // corrupt-middle: the values the server holds
	corrupted string          // corrupt-middle: the base name of the damaged file
}

func (r *runner) row(n int, name string) (row Row) {
	start := time.Now()
	row = Row{N: n, Scenario: name, Fsync: r.cfg.Fsync}
	defer func() { row.Seconds = time.Since(start).Seconds() }()

	power := strings.HasPrefix(name, "power")
	fp := strings.TrimPrefix(name, "failpoint:")
	switch {
	case power && r.powerErr != nil:
		return row.skip(r.powerErr.Error())
	case fp != name && r.fpErr != nil:
		return row.skip("the server has no failpoints")
	}

	rs := &rowState{n: n, name: name, rng: rand.New(rand.NewSource(r.rng.Int63())), stop: make(chan struct{})}
	rs.dir = filepath.Join(r.work, fmt.Sprintf("row%02d-%s", n, strings.ReplaceAll(name, ":", "-")))
	rs.data = filepath.Join(rs.dir, "data")
	rs.log = filepath.Join(rs.dir, "server.log")
	row.Dir = rs.dir
	if err := os.MkdirAll(rs.data, 0o755); err != nil {
		return row.fail(err.Error())
	}
	var mnt Mounted
	if power {
		var err error
		mnt, err = r.cfg.Power.Mount(rs.data, filepath.Join(rs.dir, "mnt"))
		if err != nil {
			return row.fail("mount: " + err.Error())
		}
		rs.data = filepath.Join(rs.dir, "mnt")
		trackMount(mnt, true)
		defer func() {
			trackMount(mnt, false)
			if err := mnt.Unmount(); err != nil {
				row.Detail += "; unmount: " + err.Error()
			}
		}()
	}

	srv, err := startServer(r.cfg.Command, rs.data, nil, rs.log)
	if err != nil {
		return row.fail(err.Error())
	}
	defer srv.kill()
	if err := srv.waitReady(30 * time.Second); err != nil {
		return row.fail("start: " + err.Error() + ": " + strings.Join(lastLines(rs.log, 2), " | "))
	}
	if power && name != "power-first-start" {
		// The server's first start created its log folder inside {dir};
		// a file system's journal makes that durable within seconds, so
		// these rows make it durable at once and test the steady state.
		// power-first-start does not: it cuts the power while the folder's
		// name is durable only if the server fsynced {dir} itself.
		if err := syncDir(rs.data); err != nil {
			return row.fail("fsync " + rs.data + ": " + err.Error())
		}
	}
	if err := r.startLoad(rs, srv.addr()); err != nil {
		return row.fail("load: " + err.Error())
	}

	// Crash.
	cleanStop := func() {
		close(rs.stop)
		rs.wg.Wait()
	}
	switch {
	case name == "corrupt-middle":
		time.Sleep(r.loadTime(false))
		cleanStop() // every op sent is acknowledged: the log is whole
		live, err := liveValues(srv.addr(), rs.models)
		if err != nil {
			return row.fail("read live values: " + err.Error())
		}
		rs.live = live
		rs.crashAt = srv.kill()
	case name == "rewrite-kill":
		if msg := r.rewriteKill(rs, srv); msg != "" {
			cleanStop()
			return row.fail(msg)
		}
		cleanStop()
	case fp != name && fp != "load-record":
		fired, msg := r.failpoint(rs, srv, fp)
		cleanStop()
		if msg != "" {
			if !fired {
				return row.skip(msg)
			}
			return row.fail(msg)
		}
	case name == "power-rewrite":
		d := r.loadTime(true)
		time.Sleep(d / 3)
		if msg := rewriteAndWait(srv.addr()); msg != "" {
			cleanStop()
			return row.fail(msg)
		}
		rs.note("a rewrite ran to its end")
		// Long enough after the rewrite that, under everysec too, the
		// writes into its new incremental file must survive.
		time.Sleep(max(2*d/3, r.margin(true)+time.Second))
		rs.crashAt = srv.kill()
		cleanStop()
	default: // kill, power, power-torn, power-first-start, torn-tail, failpoint:load-record
		time.Sleep(r.loadTime(power))
		rs.crashAt = srv.kill()
		cleanStop()
	}

	// What the crash did to the files.
	tornKey := ""
	switch name {
	case "power", "power-torn", "power-first-start", "power-rewrite":
		what, err := mnt.PowerCut(name == "power-torn", rs.rng.Uint64())
		if err != nil {
			return row.fail("power cut: " + err.Error())
		}
		rs.note(what)
	case "torn-tail":
		k, err := r.tearTail(rs)
		if err != nil {
			return row.fail("torn tail: " + err.Error())
		}
		tornKey = k
	case "corrupt-middle":
		if err := r.corrupt(rs); err != nil {
			return row.fail("corrupt: " + err.Error())
		}
	case "failpoint:load-record":
		skip := 1 + rs.rng.Intn(200)
		s2, err := startServer(r.cfg.Command, rs.data, []string{"--failpoint", fmt.Sprintf("load-record=crash SKIP %d", skip)}, rs.log)
		if err != nil {
			return row.fail(err.Error())
		}
		if s2.waitExit(20 * time.Second) {
			rs.note(fmt.Sprintf("load crashed at record %d", skip+1))
		} else {
			s2.kill()
			rs.note(fmt.Sprintf("load-record SKIP %d did not fire (fewer records)", skip))
		}
	}

	// Restart and check.
	srv2, err := startServer(r.cfg.Command, rs.data, nil, rs.log)
	if err != nil {
		return row.fail(err.Error())
	}
	defer srv2.kill()
	if err := srv2.waitReady(60 * time.Second); err != nil {
		if name == "corrupt-middle" && errors.Is(err, errExited) {
			// Refusing is right only if the log says which file is damaged.
			r.fillCounts(rs, &row)
			last := append([]string{"(an empty log)"}, lastLines(rs.log, 3)...)
			row.Verdict = "PASS"
			if !strings.Contains(strings.Join(last, "\n"), rs.corrupted) {
				row.Verdict = "FAIL"
				rs.note("refused to start without naming " + rs.corrupted)
			}
			row.Detail = strings.Join(append(rs.notes, "refused to start: "+last[len(last)-1]), "; ")
			return row
		}
		r.fillCounts(rs, &row)
		return row.fail("restart: " + err.Error() + ": " + strings.Join(lastLines(rs.log, 1), ""))
	}
	if name == "corrupt-middle" {
		rs.note("started despite the flipped byte")
	}
	if tornKey != "" {
		if rep, err := do1(srv2.addr(), 5*time.Second, "EXISTS", tornKey); err != nil || rep.Int != 0 {
			rs.note(fmt.Sprintf("the torn record's key %s exists after the restart", tornKey))
			row.Verdict = "FAIL"
		}
	}
	return r.check(rs, srv2, row, power)
}

func (rs *rowState) note(s string) {
	if s != "" {
		rs.notes = append(rs.notes, s)
	}
}

// startLoad starts the writers and readers on their own connections.
func (r *runner) startLoad(rs *rowState, addr string) error {
	depths := make([]int, 0, r.cfg.Depth1+r.cfg.Depth16)
	for i := 0; i < r.cfg.Depth1; i++ {
		depths = append(depths, 1)
	}
	for i := 0; i < r.cfg.Depth16; i++ {
		depths = append(depths, 16)
	}
	for i, d := range depths {
		c, err := Dial(addr)
		if err != nil {
			return err
		}
		m := NewModel(i, rs.rng.Int63())
		rs.models = append(rs.models, m)
		rs.writers = append(rs.writers, &writer{model: m, depth: d, conn: c})
	}
	for i := 0; i < r.cfg.Readers; i++ {
		c, err := Dial(addr)
		if err != nil {
			return err
		}
		rs.readers = append(rs.readers, &reader{conn: c, models: rs.models, rng: rand.New(rand.NewSource(rs.rng.Int63()))})
	}
	for _, w := range rs.writers {
		w.run(rs.stop, &rs.wg)
	}
	for _, rd := range rs.readers {
		rd.run(rs.stop, &rs.wg)
	}
	go func() {
		// Connections close once the load has stopped, so a reader or a
		// sender blocked on a live server returns.
		<-rs.stop
		time.Sleep(5 * time.Second)
		for _, w := range rs.writers {
			w.conn.Close()
		}
		for _, rd := range rs.readers {
			rd.conn.Close()
		}
	}()
	return nil
}

// rewriteKill starts BGREWRITEAOF, slowed by rdb-key-save-delay so that it
// lasts about half a second, and kills the server at a random moment of it.
func (r *runner) rewriteKill(rs *rowState, srv *server) string {
	time.Sleep(r.loadTime(false) / 2)
	c, err := Dial(srv.addr())
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	// µs per key: 2 s of waits in all, so at least half a second per shard
	// with up to 4 shards (redshard's shards serialize in parallel).
	perKey := 2000000 / (len(rs.models) * len(rs.models[0].Keys))
	if rep, err := c.Do(5*time.Second, "CONFIG", "SET", "rdb-key-save-delay", strconv.Itoa(perKey)); err != nil || rep.Kind == '-' {
		rs.note("rdb-key-save-delay not settable: the rewrite runs at full speed")
	}
	if rep, err := c.Do(5*time.Second, "BGREWRITEAOF"); err != nil || rep.Kind == '-' {
		return fmt.Sprintf("BGREWRITEAOF: %v %s", err, rep.Text())
	}
	time.Sleep(time.Duration(r.rng.Intn(450)) * time.Millisecond)
	rep, _ := c.Do(time.Second, "INFO", "persistence")
	rs.crashAt = srv.kill()
	if strings.Contains(rep.Str, "aof_rewrite_in_progress:1") {
		rs.note("killed during the rewrite")
	} else {
		rs.note("killed after the rewrite ended")
	}
	return ""
}

// rewriteAndWait runs BGREWRITEAOF and waits for its end.
func rewriteAndWait(addr string) string {
	c, err := Dial(addr)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	if rep, err := c.Do(5*time.Second, "BGREWRITEAOF"); err != nil || rep.Kind == '-' {
		return fmt.Sprintf("BGREWRITEAOF: %v %s", err, rep.Text())
	}
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		rep, err := c.Do(5*time.Second, "INFO", "persistence")
		if err != nil {
			return "INFO: " + err.Error()
		}
		if strings.Contains(rep.Str, "aof_rewrite_in_progress:0") && !strings.Contains(rep.Str, "aof_rewrite_scheduled:1") {
			return ""
		}
	}
	return "the rewrite did not end in 20 s"
}

// failpoint arms the point to SIGKILL the server at a random moment under
// load and waits for it. fired is false when the point could not be armed
// (the server does not know it): the row is skipped.
func (r *runner) failpoint(rs *rowState, srv *server, point string) (fired bool, msg string) {
	time.Sleep(r.loadTime(false) / 2)
	c, err := Dial(srv.addr())
	if err != nil {
		return true, err.Error()
	}
	defer c.Close()
	args := []string{"DEBUG", "FAILPOINT", "SET", point, "crash"}
	// The log's points fire many times a second: a random SKIP picks one of
	// the next hits. A rewrite or a save hits its points once each.
	if skip := rs.rng.Intn(4); skip > 0 && !strings.HasPrefix(point, "rewrite-") && !strings.HasPrefix(point, "rdb-") {
		args = append(args, "SKIP", strconv.Itoa(skip))
	}
	rep, err := c.Do(5*time.Second, args...)
	if err != nil {
		// The point may fire before the reply to SET leaves (aof-write
		// with no SKIP fires at the next write of the log).
		if srv.waitExit(2 * time.Second) {
			rs.crashAt = srv.exitAt
			rs.note(strings.Join(args[3:], " ") + " (fired before its reply)")
			return true, ""
		}
		return true, "arm: " + err.Error()
	}
	if rep.Kind == '-' {
		return false, "not offered: " + rep.Str
	}
	rs.note(strings.Join(args[3:], " "))
	trigger := func() {
		switch {
		case strings.HasPrefix(point, "rewrite-"):
			c.Do(5*time.Second, "BGREWRITEAOF")
		case strings.HasPrefix(point, "rdb-"):
			c.Do(5*time.Second, "BGSAVE")
		}
	}
	trigger()
	for i := 0; i < 5; i++ {
		if srv.waitExit(2 * time.Second) {
			rs.crashAt = srv.exitAt
			return true, ""
		}
		trigger() // a rewrite already running, a save refused: again
	}
	rs.crashAt = srv.kill()
	if point == "exec-locked" {
		// It fires only when a transaction takes more than one shard.
		return false, "exec-locked never fired in 10 s: no transaction spanned shards (one shard?)"
	}
	return true, "armed but never fired in 10 s"
}

// lastFile is the file of the log that the server appends to: the
// incremental file with the highest sequence, or the last file matched.
func (r *runner) logFiles(rs *rowState) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(rs.data, r.cfg.AOFGlob))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no file matches %s in %s", r.cfg.AOFGlob, rs.data)
	}
	return out, nil
}

var seqRe = regexp.MustCompile(`\.(\d+)\.incr\.`)

func seqOf(name string) int {
	if m := seqRe.FindStringSubmatch(filepath.Base(name)); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return -1
}

// tearTail appends the first part of a record to the last incremental
// file, as a crash in the middle of its write(2) leaves it: half the time
// with an annotation line of redshard's shape before it. It returns the key
// the record would set.
func (r *runner) tearTail(rs *rowState) (string, error) {
	files, err := r.logFiles(rs)
	if err != nil {
		return "", err
	}
	sort.Slice(files, func(i, j int) bool { return seqOf(files[i]) < seqOf(files[j]) })
	last := files[len(files)-1]
	key := "{torn}:k"
	rec := AppendCommand(nil, "SET", key, fmt.Sprintf("torn-%d", rs.n))
	if rs.rng.Intn(2) == 0 {
		sum := crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli))
		rec = append([]byte(fmt.Sprintf("#B:%d:%08x\r\n", len(rec), sum)), rec...)
	}
	cut := 1 + rs.rng.Intn(len(rec)-1)
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Write(rec[:cut]); err != nil {
		return "", err
	}
	rs.note(fmt.Sprintf("appended %d of %d bytes to %s", cut, len(rec), filepath.Base(last)))
	return key, nil
}

// bulkRe finds the tool's values in a log: "$<len>\r\nc<id>.o<index>...\r\n".
var bulkRe = regexp.MustCompile(`\$\d+\r\n(c\d+\.o[0-9.]+)\r\n`)

// corrupt flips one byte in the middle third of the largest log file:
// inside a value the server still holds, if that third has one (so that a
// loader which does not notice serves a value nobody wrote, rather than
// damage some write a later one overwrote), else at a random offset.
func (r *runner) corrupt(rs *rowState) error {
	files, err := r.logFiles(rs)
	if err != nil {
		return err
	}
	var big string
	var size int64
	for _, f := range files {
		if st, _ := os.Stat(f); st.Size() > size {
			big, size = f, st.Size()
		}
	}
	if size < 3 {
		return fmt.Errorf("the log is empty")
	}
	data, err := os.ReadFile(big)
	if err != nil {
		return err
	}
	lo, hi := size/3, 2*size/3
	off := lo + rs.rng.Int63n(hi-lo)
	where := "at random"
	var hits [][]int
	for _, m := range bulkRe.FindAllSubmatchIndex(data[lo:hi], -1) {
		if rs.live[string(data[lo+int64(m[2]):lo+int64(m[3])])] {
			hits = append(hits, m)
		}
	}
	// A value written once (EVAL writes its value twice, to a string and to
	// a list) so that the flipped copy is the one the server serves.
	rs.rng.Shuffle(len(hits), func(i, j int) { hits[i], hits[j] = hits[j], hits[i] })
	for len(hits) > 1 {
		m := hits[0]
		if bytes.Count(data, data[lo+int64(m[0]):lo+int64(m[1])]) == 1 {
			break
		}
		hits = hits[1:]
	}
	if len(hits) > 0 {
		m := hits[0]
		off = lo + int64(m[2]+rs.rng.Intn(m[3]-m[2]))
		where = fmt.Sprintf("in the live value %q", data[lo+int64(m[2]):lo+int64(m[3])])
	}
	was := data[off]
	b := []byte{was ^ byte(1+rs.rng.Intn(255))}
	f, err := os.OpenFile(big, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		return err
	}
	rs.corrupted = filepath.Base(big)
	rs.note(fmt.Sprintf("%s byte %d of %d %s: %q -> %q", rs.corrupted, off, size, where, was, b[0]))
	return nil
}

// liveValues reads every key of every client and returns the values.
func liveValues(addr string, models []*Model) (map[string]bool, error) {
	c, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	live := map[string]bool{}
	var add func(Reply)
	add = func(r Reply) {
		if r.Kind == '$' && !r.Nil {
			live[r.Str] = true
		}
		for _, e := range r.Arr {
			add(e)
		}
	}
	for _, m := range models {
		for i, k := range m.Keys {
			rep, err := c.Do(5*time.Second, readCmd(m.Kind[i], k)...)
			if err != nil {
				return nil, err
			}
			add(rep)
		}
	}
	return live, nil
}

// fillCounts sums what the writers sent and had acknowledged.
func (r *runner) fillCounts(rs *rowState, row *Row) {
	for _, w := range rs.writers {
		row.Sent += w.sent
		row.Acked += len(w.ackAt)
	}
}

// check reads every client's keys from the restarted server and checks
// each client.
func (r *runner) check(rs *rowState, srv *server, row Row, power bool) Row {
	r.fillCounts(rs, &row)
	seen := map[int][]Seen{}
	for _, rd := range rs.readers {
		row.Seen += len(rd.seen)
		for _, s := range rd.seen {
			seen[s.Client] = append(seen[s.Client], s)
		}
	}
	strict := r.cfg.Strict && !power
	var bad []string
	var lostPolicy int
	for i, w := range rs.writers {
		obs, err := readBack(srv.addr(), w.model)
		if err != nil {
			return row.fail("read back: " + err.Error())
		}
		v := Check(Input{Model: w.model, Sent: w.sent, AckAt: w.ackAt, Seen: seen[i], Obs: obs,
			Crash: rs.crashAt, Margin: r.margin(power), WrongReply: w.wrong})
		row.AckedLost += v.AckedLost
		row.SeenLost += v.SeenLost
		ok := v.OK && (!strict || v.StrictOK)
		if !ok {
			bad = append(bad, fmt.Sprintf("client %d (depth %d): %s", i, w.depth, v.Detail))
			row.Clients = append(row.Clients, v)
		} else if !v.StrictOK {
			lostPolicy += v.NeedStrict - v.K
		}
	}
	if lostPolicy > 0 {
		rs.note(fmt.Sprintf("strict: %d acknowledged ops lost within the %v the policy allows", lostPolicy, r.cfg.Margin))
	}
	if len(bad) > 0 || row.Verdict == "FAIL" {
		row.Verdict = "FAIL"
		if name := row.Scenario; name == "corrupt-middle" {
			bad = append([]string{"started and serves data that is no prefix"}, bad...)
		}
		row.Detail = strings.Join(append(bad, rs.notes...), "; ")
		return row
	}
	row.Verdict = "PASS"
	row.Detail = strings.Join(rs.notes, "; ")
	return row
}
