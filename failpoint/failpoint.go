// Package failpoint lets a crash test aim: a fixed set of named points in
// the server where a crash, a panic, a delay or a failing system call can be
// made to happen on demand (DEBUG FAILPOINT, or --failpoint on the command
// line so that a point can fire while the data set loads).
//
// Rules.
//
//   - The set of points is fixed and declared here, each with the one line
//     it proves; an unknown name is refused. Names are part of the interface
//     of the crash tests: never rename one.
//   - When no point is set, a call site costs one atomic load and one
//     predictable branch: Inject is inlined as `if armed { hit(id) }`.
//     Nothing else (no map, no lock, no counter) is touched.
//   - crash is SIGKILL sent by the process to itself: no deferred function,
//     no log flush, no fsync. What survives is exactly what a power cut or
//     a kill -9 at that instant would leave.
//   - error makes Inject return a syscall.Errno; the call site returns it as
//     the error of the system call it stands for (wrapped as the real one
//     is, e.g. an *os.PathError with Op "write"), so the server takes the
//     path a failing disk takes. Points with no such call refuse error.
//   - sleep blocks the goroutine that hit the point, with whatever it holds;
//     each point's doc says what that stalls.
//   - The package imports nothing of the server and takes no lock on the
//     unarmed path; when armed, one mutex guards the points' state and is
//     never held while an action runs.
package failpoint

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ID names a point.
type ID uint8

// The points, in the order of a write's life and then of the files'.
const (
	AOFWrite ID = iota
	AOFFsync
	AOFPublish
	AOFPublished
	ReplyWrite
	ReplyWritten
	ExecLocked
	RewriteCut
	RewriteBaseWritten
	RewriteManifestTemp
	RewriteManifestRenamed
	RewriteOldRemoved
	RDBTempWritten
	RDBRenamed
	LoadRecord
	ReplFeed
	numPoints
)

type point struct {
	name string
	// syscall is the call whose failure error stands for; "" refuses error.
	syscall string
	proves  string
}

var points = [numPoints]point{
	AOFWrite:               {"aof-write", "write", "a write whose log write(2) fails or never happens is never acknowledged; the writer retries and -MISCONF guards writes meanwhile"},
	AOFFsync:               {"aof-fsync", "fdatasync", "between write and fsync: data in the page cache only is never acknowledged under always; a failed fdatasync turns held replies into errors"},
	AOFPublish:             {"aof-publish", "", "fsync done, durable position not yet published: a crash loses only unacknowledged writes, and recovery keeps the synced group"},
	AOFPublished:           {"aof-published", "", "durable position published, loops not yet told: replies held for it are released only by the loops; a crash here loses nothing acknowledged"},
	ReplyWrite:             {"reply-write", "", "a batch of replies about to leave: a crash here may lose replies but never a durable write (the client retries or reads it)"},
	ReplyWritten:           {"reply-written", "", "a batch of replies has left: every write it acknowledged is on disk under always"},
	ExecLocked:             {"exec-locked", "", "a cross-shard MULTI/EXEC, multi-key command or script holds its shards: a crash leaves all of it or none"},
	RewriteCut:             {"rewrite-cut", "", "rewrite switched to the new incr file: old base + old incrs + new incr hold the whole history"},
	RewriteBaseWritten:     {"rewrite-base-written", "write", "new base written and fsynced, manifest not yet: the old manifest still loads; a full disk here fails the rewrite cleanly"},
	RewriteManifestTemp:    {"rewrite-manifest-temp", "rename", "temp manifest fsynced, not renamed: the old manifest is used and the new base is ignored"},
	RewriteManifestRenamed: {"rewrite-manifest-renamed", "", "new manifest in place, old files not yet removed: the new base and incr load; leftovers are harmless"},
	RewriteOldRemoved:      {"rewrite-old-removed", "", "old files removed: the new manifest alone holds everything acknowledged"},
	RDBTempWritten:         {"rdb-temp-written", "rename", "RDB temp file fsynced, not renamed: the previous dump.rdb is intact and loadable"},
	RDBRenamed:             {"rdb-renamed", "", "new dump.rdb renamed in place and the directory fsynced: it loads"},
	LoadRecord:             {"load-record", "", "at each command replayed (AOF) or key loaded (RDB) at start: a crash mid-load changes no file, the next start loads everything"},
	ReplFeed:               {"repl-feed", "", "a replica has read a piece of its master's stream and not yet handed it to its loop (sleep stalls the link): a PSYNC FAILOVER that comes meanwhile promotes the replica only once it has applied it"},
}

// Action is what a point does when it fires.
type Action uint8

// The actions.
const (
	Crash Action = iota + 1
	Panic
	Sleep
	Error
)

// Spec is how a point is set.
type Spec struct {
	Action Action
	Sleep  time.Duration // Sleep
	Errno  syscall.Errno // Error
	Count  int64         // fire at most Count times, then disarm; 0: no limit
	Skip   int64         // the first Skip hits pass through
	Prob   float64       // each hit (after Skip) fires with this probability (Parse sets 1)
}

type state struct {
	spec  *Spec // nil: not set
	last  *Spec // the last spec, kept for List after COUNT spent it
	hits  int64
	fired int64
}

var (
	armed atomic.Bool // some point is set
	mu    sync.Mutex  // guards st
	st    [numPoints]state
)

// Armed reports whether any point is set.
func Armed() bool { return armed.Load() }

// Inject is a point. It returns 0, or, when the point fires with error, the
// errno the call site must return as its system call's error. It crashes,
// panics or sleeps when the point fires with those actions.
func Inject(id ID) syscall.Errno {
	if !armed.Load() {
		return 0
	}
	return hit(id)
}

func hit(id ID) syscall.Errno {
	mu.Lock()
	s := &st[id]
	sp := s.spec
	if sp == nil {
		mu.Unlock()
		return 0
	}
	s.hits++
	if s.hits <= sp.Skip || (sp.Prob < 1 && rand.Float64() >= sp.Prob) {
		mu.Unlock()
		return 0
	}
	s.fired++
	if sp.Count > 0 && s.fired >= sp.Count {
		s.spec = nil
		rearm()
	}
	mu.Unlock()

	switch sp.Action {
	case Crash:
		crash()
	case Panic:
		panic("failpoint " + points[id].name + ": panic")
	case Sleep:
		time.Sleep(sp.Sleep)
	case Error:
		return sp.Errno
	}
	return 0
}

// crash kills the process at once. SIGKILL cannot be caught: no deferred
// function, no buffered log line, nothing the kernel does not already hold
// survives.
func crash() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	for {
		time.Sleep(time.Hour) // the signal is on its way
	}
}

// rearm recomputes armed. mu is held.
func rearm() {
	on := false
	for i := range st {
		if st[i].spec != nil {
			on = true
			break
		}
	}
	armed.Store(on)
}

// Lookup returns the point of a name.
func Lookup(name string) (ID, bool) {
	for i := range points {
		if strings.EqualFold(points[i].name, name) {
			return ID(i), true
		}
	}
	return 0, false
}

// Name returns a point's name.
func (id ID) Name() string { return points[id].name }

// ErrUnknown is returned for a name that is no point.
var ErrUnknown = errors.New("unknown failpoint")

// Set arms a point: words are the action and its options, as
// "error EIO COUNT 1" split on spaces (commas also separate words).
// Counters restart.
func Set(name string, words []string) error {
	id, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("%w '%s' (DEBUG FAILPOINT HELP lists them)", ErrUnknown, name)
	}
	sp, err := Parse(words)
	if err != nil {
		return err
	}
	if sp.Action == Error && points[id].syscall == "" {
		return fmt.Errorf("failpoint '%s' stands for no system call: use crash, panic or sleep", points[id].name)
	}
	mu.Lock()
	st[id] = state{spec: sp, last: sp}
	armed.Store(true)
	mu.Unlock()
	return nil
}

// SetArg arms a point from a command-line argument "name=action words...".
func SetArg(arg string) error {
	name, rest, ok := strings.Cut(arg, "=")
	if !ok {
		return fmt.Errorf("failpoint '%s': expected name=action", arg)
	}
	return Set(strings.TrimSpace(name), splitWords(rest))
}

// CheckArg parses a command-line argument without arming it.
func CheckArg(arg string) error {
	name, rest, ok := strings.Cut(arg, "=")
	if !ok {
		return fmt.Errorf("failpoint '%s': expected name=action", arg)
	}
	id, ok := Lookup(strings.TrimSpace(name))
	if !ok {
		return fmt.Errorf("%w '%s'", ErrUnknown, strings.TrimSpace(name))
	}
	sp, err := Parse(splitWords(rest))
	if err == nil && sp.Action == Error && points[id].syscall == "" {
		err = fmt.Errorf("failpoint '%s' stands for no system call: use crash, panic or sleep", points[id].name)
	}
	return err
}

func splitWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
}

// Clear disarms one point (and forgets its counters), or every point if
// name is "".
func Clear(name string) error {
	if name == "" {
		mu.Lock()
		st = [numPoints]state{}
		armed.Store(false)
		mu.Unlock()
		return nil
	}
	id, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("%w '%s'", ErrUnknown, name)
	}
	mu.Lock()
	st[id] = state{}
	rearm()
	mu.Unlock()
	return nil
}

// List describes every point, one string each, armed ones first:
//
//	<name> <action> [SKIP k] [COUNT n] [PROBABILITY p] hits=<h> fired=<f>
//
// for an armed point, "<name> off <action ...> hits=<h> fired=<f>" for one
// whose COUNT is spent, and "<name> off" for the others. hits counts the
// times the point was reached since it was set, fired the times it acted.
func List() []string {
	mu.Lock()
	defer mu.Unlock()
	var on, off []string
	for i := range st {
		s := &st[i]
		name := points[i].name
		switch {
		case s.spec != nil:
			on = append(on, fmt.Sprintf("%s %s hits=%d fired=%d", name, s.spec, s.hits, s.fired))
		case s.last != nil:
			off = append(off, fmt.Sprintf("%s off %s hits=%d fired=%d", name, s.last, s.hits, s.fired))
		default:
			off = append(off, name+" off")
		}
	}
	return append(on, off...)
}

// Help lists the points: "<name>: <what it proves>", with the system call
// error stands for.
func Help() []string {
	out := make([]string, 0, numPoints)
	for _, p := range points {
		s := p.name + ": " + p.proves
		if p.syscall != "" {
			s += " [error fails " + p.syscall + "]"
		}
		out = append(out, s)
	}
	return out
}

// Names returns the points' names in order.
func Names() []string {
	out := make([]string, 0, numPoints)
	for _, p := range points {
		out = append(out, p.name)
	}
	return out
}

var errnoNames = []struct {
	name string
	no   syscall.Errno
}{
	{"EIO", syscall.EIO},
	{"ENOSPC", syscall.ENOSPC},
	{"EROFS", syscall.EROFS},
	{"EDQUOT", syscall.EDQUOT},
	{"ENOMEM", syscall.ENOMEM},
}

func parseErrno(s string) (syscall.Errno, bool) {
	for _, e := range errnoNames {
		if strings.EqualFold(e.name, s) {
			return e.no, true
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 4095 {
		return 0, false
	}
	return syscall.Errno(n), true
}

func errnoString(e syscall.Errno) string {
	for _, x := range errnoNames {
		if x.no == e {
			return x.name
		}
	}
	return strconv.Itoa(int(e))
}

// Parse reads an action and its options:
//
//	crash | panic | sleep <ms> | error <EIO|ENOSPC|EROFS|EDQUOT|ENOMEM|n>
//	  [COUNT n] [SKIP k] [PROBABILITY p]
//
// Words are case-insensitive.
func Parse(words []string) (*Spec, error) {
	if len(words) == 0 {
		return nil, errors.New("failpoint: missing action (crash, panic, sleep <ms>, error <errno>)")
	}
	sp := &Spec{Prob: 1}
	i := 1
	switch strings.ToLower(words[0]) {
	case "crash":
		sp.Action = Crash
	case "panic":
		sp.Action = Panic
	case "sleep":
		sp.Action = Sleep
		if len(words) < 2 {
			return nil, errors.New("failpoint: sleep needs milliseconds")
		}
		ms, err := strconv.ParseInt(words[1], 10, 64)
		if err != nil || ms < 0 || ms > 3600_000 {
			return nil, fmt.Errorf("failpoint: bad sleep milliseconds '%s'", words[1])
		}
		sp.Sleep = time.Duration(ms) * time.Millisecond
		i = 2
	case "error":
		sp.Action = Error
		if len(words) < 2 {
			return nil, errors.New("failpoint: error needs an errno (EIO, ENOSPC, EROFS, EDQUOT, ENOMEM or a number)")
		}
		e, ok := parseErrno(words[1])
		if !ok {
			return nil, fmt.Errorf("failpoint: bad errno '%s'", words[1])
		}
		sp.Errno = e
		i = 2
	default:
		return nil, fmt.Errorf("failpoint: unknown action '%s' (crash, panic, sleep <ms>, error <errno>)", words[0])
	}
	for ; i < len(words); i += 2 {
		opt := strings.ToUpper(words[i])
		if i+1 >= len(words) {
			return nil, fmt.Errorf("failpoint: %s needs a value", opt)
		}
		v := words[i+1]
		switch opt {
		case "COUNT", "SKIP":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || (opt == "COUNT" && n == 0) {
				return nil, fmt.Errorf("failpoint: bad %s '%s'", opt, v)
			}
			if opt == "COUNT" {
				sp.Count = n
			} else {
				sp.Skip = n
			}
		case "PROBABILITY":
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || !(p >= 0 && p <= 1) {
				return nil, fmt.Errorf("failpoint: bad PROBABILITY '%s' (0 <= p <= 1)", v)
			}
			sp.Prob = p
		default:
			return nil, fmt.Errorf("failpoint: unknown option '%s' (COUNT, SKIP, PROBABILITY)", words[i])
		}
	}
	return sp, nil
}

// String writes a spec back in Parse's syntax, options in the order SKIP,
// COUNT, PROBABILITY.
func (sp *Spec) String() string {
	var b strings.Builder
	switch sp.Action {
	case Crash:
		b.WriteString("crash")
	case Panic:
		b.WriteString("panic")
	case Sleep:
		fmt.Fprintf(&b, "sleep %d", sp.Sleep.Milliseconds())
	case Error:
		b.WriteString("error " + errnoString(sp.Errno))
	}
	if sp.Skip > 0 {
		fmt.Fprintf(&b, " SKIP %d", sp.Skip)
	}
	if sp.Count > 0 {
		fmt.Fprintf(&b, " COUNT %d", sp.Count)
	}
	if sp.Prob < 1 {
		b.WriteString(" PROBABILITY " + strconv.FormatFloat(sp.Prob, 'g', -1, 64))
	}
	return b.String()
}
