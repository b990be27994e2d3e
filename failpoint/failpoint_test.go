package failpoint

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseWritesBackTheSameSpec(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"crash", "crash"},
		{"CRASH", "crash"},
		{"panic COUNT 2", "panic COUNT 2"},
		{"sleep 250", "sleep 250"},
		{"error EIO", "error EIO"},
		{"error enospc COUNT 1", "error ENOSPC COUNT 1"},
		{"error 5", "error EIO"},
		{"error 28", "error ENOSPC"},
		{"error 30", "error EROFS"},
		{"error 122", "error EDQUOT"},
		{"error 12", "error ENOMEM"},
		{"error 7", "error 7"},
		{"crash SKIP 500", "crash SKIP 500"},
		{"crash PROBABILITY 0.25 COUNT 3 SKIP 1", "crash SKIP 1 COUNT 3 PROBABILITY 0.25"},
		{"crash PROBABILITY 1", "crash"},
		{"crash PROBABILITY 0", "crash PROBABILITY 0"},
	} {
		sp, err := Parse(splitWords(c.in))
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := sp.String(); got != c.want {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseRefusesBadSpecs(t *testing.T) {
	for _, in := range []string{
		"", "explode", "sleep", "sleep x", "sleep -1", "error", "error EWHAT", "error 0", "error 99999",
		"crash COUNT", "crash COUNT 0", "crash COUNT -1", "crash SKIP x", "crash PROBABILITY 2",
		"crash PROBABILITY -0.1", "crash PROBABILITY NaN", "crash TIMES 3",
	} {
		if sp, err := Parse(splitWords(in)); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, sp)
		}
	}
}

func TestSetRefusesUnknownPointsAndErrorWithoutASystemCall(t *testing.T) {
	t.Cleanup(func() { Clear("") })
	if err := Set("no-such-point", []string{"crash"}); err == nil {
		t.Fatal("unknown point accepted")
	}
	if err := Set("aof-publish", []string{"error", "EIO"}); err == nil {
		t.Fatal("error accepted at a point with no system call")
	}
	if err := SetArg("aof-publish"); err == nil {
		t.Fatal("argument without = accepted")
	}
	if Armed() {
		t.Fatal("armed after refused sets")
	}
}

func TestCommandLineArgumentsJoinWordsWithSpacesOrCommas(t *testing.T) {
	t.Cleanup(func() { Clear("") })
	for _, arg := range []string{"load-record=crash SKIP 500", "load-record=crash,SKIP,500", " load-record = crash , SKIP 500"} {
		Clear("")
		if err := CheckArg(arg); err != nil {
			t.Fatalf("CheckArg(%q): %v", arg, err)
		}
		if Armed() {
			t.Fatal("CheckArg armed a point")
		}
		if err := SetArg(arg); err != nil {
			t.Fatalf("SetArg(%q): %v", arg, err)
		}
		if got := List()[0]; got != "load-record crash SKIP 500 hits=0 fired=0" {
			t.Fatalf("SetArg(%q): List()[0] = %q", arg, got)
		}
	}
}

func TestNothingFiresWhenNothingIsSet(t *testing.T) {
	Clear("")
	for id := ID(0); id < numPoints; id++ {
		if e := Inject(id); e != 0 {
			t.Fatalf("%s: %v", id.Name(), e)
		}
	}
	for _, l := range List() {
		if !strings.HasSuffix(l, " off") {
			t.Fatalf("List: %q", l)
		}
	}
}

func TestErrorCountSkipAndList(t *testing.T) {
	t.Cleanup(func() { Clear("") })
	if err := Set("aof-fsync", []string{"error", "EIO", "SKIP", "1", "COUNT", "2"}); err != nil {
		t.Fatal(err)
	}
	if err := Set("reply-write", []string{"sleep", "1"}); err != nil {
		t.Fatal(err)
	}
	var got []syscall.Errno
	for range 5 {
		got = append(got, Inject(AOFFsync))
	}
	want := []syscall.Errno{0, syscall.EIO, syscall.EIO, 0, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("hits gave %v, want %v", got, want)
		}
	}
	if Inject(AOFWrite) != 0 {
		t.Fatal("another point fired")
	}
	l := List()
	if l[0] != "reply-write sleep 1 hits=0 fired=0" {
		t.Fatalf("List()[0] = %q", l[0])
	}
	var spent string
	for _, s := range l {
		if strings.HasPrefix(s, "aof-fsync ") {
			spent = s
		}
	}
	// Two fired, the COUNT disarmed it: the third hit was not counted.
	if spent != "aof-fsync off error EIO SKIP 1 COUNT 2 hits=3 fired=2" {
		t.Fatalf("spent point listed as %q", spent)
	}
	if err := Clear("reply-write"); err != nil {
		t.Fatal(err)
	}
	if Armed() {
		t.Fatal("still armed after the last point was cleared")
	}
	if err := Clear("nope"); err == nil {
		t.Fatal("Clear of an unknown point accepted")
	}
}

func TestProbabilityFiresAboutThatOften(t *testing.T) {
	t.Cleanup(func() { Clear("") })
	if err := Set("rdb-temp-written", []string{"error", "ENOSPC", "PROBABILITY", "0.3"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for range 10000 {
		if Inject(RDBTempWritten) == syscall.ENOSPC {
			n++
		}
	}
	if n < 2500 || n > 3500 {
		t.Fatalf("fired %d of 10000 at p=0.3", n)
	}
	Set("rdb-renamed", []string{"crash", "PROBABILITY", "0"})
	for range 1000 {
		Inject(RDBRenamed) // must never fire: the test would die
	}
}

func TestSleepBlocksTheCaller(t *testing.T) {
	t.Cleanup(func() { Clear("") })
	Set("exec-locked", []string{"sleep", "50", "COUNT", "1"})
	t0 := time.Now()
	Inject(ExecLocked)
	if d := time.Since(t0); d < 50*time.Millisecond {
		t.Fatalf("slept %v", d)
	}
	t0 = time.Now()
	Inject(ExecLocked)
	if d := time.Since(t0); d > 40*time.Millisecond {
		t.Fatalf("slept again after COUNT 1: %v", d)
	}
}

func TestPanicNamesThePoint(t *testing.T) {
	t.Cleanup(func() { Clear("") })
	Set("exec-locked", []string{"panic"})
	defer func() {
		r := recover()
		if s, _ := r.(string); s != "failpoint exec-locked: panic" {
			t.Fatalf("recovered %v", r)
		}
	}()
	Inject(ExecLocked)
	t.Fatal("no panic")
}

// TestCrashIsSIGKILL runs itself in a subprocess that arms a point and hits
// it: the child must die by SIGKILL before it prints anything after.
func TestCrashIsSIGKILL(t *testing.T) {
	if os.Getenv("FAILPOINT_CRASH_CHILD") == "1" {
		Set("aof-write", []string{"crash"})
		defer os.Stdout.WriteString("deferred ran\n")
		Inject(AOFWrite)
		os.Stdout.WriteString("survived\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashIsSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FAILPOINT_CRASH_CHILD=1")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("child: %v, output %q", err, out)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, output %q", ws, out)
	}
	if strings.Contains(string(out), "survived") || strings.Contains(string(out), "deferred ran") {
		t.Fatalf("child ran on after the crash: %q", out)
	}
}

func TestHelpAndNamesCoverEveryPoint(t *testing.T) {
	names := Names()
	if len(names) != int(numPoints) || len(Help()) != int(numPoints) {
		t.Fatalf("%d names, %d help lines", len(names), len(Help()))
	}
	want := "aof-write aof-fsync aof-publish aof-published reply-write reply-written exec-locked rewrite-cut " +
		"rewrite-base-written rewrite-manifest-temp rewrite-manifest-renamed rewrite-old-removed " +
		"rdb-temp-written rdb-renamed load-record repl-feed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("names changed (the crash tests use them):\n got %s\nwant %s", got, want)
	}
}

// BenchmarkInjectUnset is the cost of a point when nothing is set: one
// atomic load and a branch, inlined at the call site.
func BenchmarkInjectUnset(b *testing.B) {
	Clear("")
	var n int
	for range b.N {
		if Inject(ReplyWrite) != 0 {
			n++
		}
	}
	if n != 0 {
		b.Fatal(n)
	}
}

// TestSetClearAndInjectConcurrently: points are hit from many goroutines
// (loops, the log writer, loaders) while DEBUG FAILPOINT sets and clears
// them; run with -race.
func TestSetClearAndInjectConcurrently(t *testing.T) {
	t.Cleanup(func() { Clear("") })
	stop := make(chan struct{})
	done := make(chan int64)
	for range 4 {
		go func() {
			var n int64
			for {
				select {
				case <-stop:
					done <- n
					return
				default:
				}
				if Inject(AOFFsync) == syscall.EIO {
					n++
				}
				Inject(ReplyWrite)
				runtime.Gosched()
			}
		}()
	}
	for range 100 {
		Set("aof-fsync", []string{"error", "EIO", "COUNT", "3"})
		Set("reply-write", []string{"sleep", "0", "PROBABILITY", "0.5"})
		_ = List()
		Clear("reply-write")
		runtime.Gosched()
	}
	close(stop)
	var fired int64
	for range 4 {
		fired += <-done
	}
	if fired == 0 || fired > 3*100 {
		t.Fatalf("aof-fsync fired %d times over 100 sets of COUNT 3", fired)
	}
}
