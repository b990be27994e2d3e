package bgchild

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is its own child, as the server's binary is.
func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

func TestChildWritesTheFileAndSyncs(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(dir, "temp-%d.rdb", "redshard-rdb-bgsave", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "temp-"+strconv.Itoa(c.Pid())+".rdb"); c.Path() != want {
		t.Fatalf("path %q, want %q", c.Path(), want)
	}
	var want []byte
	for i := 0; i < 3000; i++ {
		b := bytes.Repeat([]byte{byte(i)}, 1000+i)
		want = append(want, b...)
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(c.Path())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("file: %d bytes (err %v), want %d", len(got), err, len(want))
	}
	select {
	case <-c.Died():
		t.Fatal("Died closed after a clean end")
	default:
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// kill -9 of the child, as an operator or the OOM killer does: Died is
// closed, Err says "terminated by signal 9", writes fail.
func TestKilledChild(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(dir, "temp-rewriteaof-bg-%d.aof", "redshard-aof-rewrite", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Died():
	case <-time.After(10 * time.Second):
		t.Fatal("Died not closed")
	}
	var k *Killed
	if err := c.Err(); !errors.As(err, &k) || k.Signal != syscall.SIGKILL || err.Error() != "terminated by signal 9" {
		t.Fatalf("Err() = %v", c.Err())
	}
	if _, err := c.Write(make([]byte, 1<<20)); err == nil {
		t.Fatal("write to a dead child succeeded")
	}
	if err := c.Sync(); err == nil {
		t.Fatal("Sync of a dead child succeeded")
	}
}

// Close without Sync (an aborted job) stops the child.
func TestCloseStopsTheChild(t *testing.T) {
	c, err := Start(t.TempDir(), "temp-%d.rdb", "redshard-rdb-bgsave", "")
	if err != nil {
		t.Fatal(err)
	}
	pid := c.Pid()
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("child %d still exists", pid)
	}
}

// The child takes the oom_score_adj it is given (raising it needs no
// privilege), as Redis's child takes the bgchild class.
func TestChildOOMScoreAdj(t *testing.T) {
	cur, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skip("no /proc/self/oom_score_adj")
	}
	base, _ := strconv.Atoi(strings.TrimSpace(string(cur)))
	want := strconv.Itoa(min(base+30, 1000))
	c, err := Start(t.TempDir(), "temp-%d.rdb", "redshard-rdb-bgsave", want)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(c.Pid()) + "/oom_score_adj")
		if strings.TrimSpace(string(b)) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child's oom_score_adj %q, want %s", b, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A bad job in the environment fails with a line on stderr.
func TestBadSpec(t *testing.T) {
	var out bytes.Buffer
	if code := child(t.TempDir(), "no-pid", "", strings.NewReader(""), &out); code == 0 || !strings.Contains(out.String(), "bad job") {
		t.Fatalf("code %d, stderr %q", code, out.String())
	}
	out.Reset()
	if code := child(filepath.Join(t.TempDir(), "missing"), "temp-%d.rdb", "", strings.NewReader("x"), &out); code != 1 || out.Len() == 0 {
		t.Fatalf("code %d, stderr %q", code, out.String())
	}
}

// A child that is none of Start's (a wrapper's helper the server inherited)
// is reaped once it exits; Start's children are left to their Wait.
func TestReapStrays(t *testing.T) {
	ours, err := Start(t.TempDir(), "temp-%d.rdb", "redshard-rdb-bgsave", "")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/true")
	}
	deadline := time.Now().Add(5 * time.Second)
	var reaped []int
	for len(reaped) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		reaped = ReapStrays()
	}
	if len(reaped) != 1 || reaped[0] != pid {
		t.Fatalf("reaped %v, want [%d]", reaped, pid)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Fatalf("%d is still there", pid)
	}
	// Ours exits (input ended) and stays for its own Wait: Sync sees exit 0.
	if err := ours.Sync(); err != nil {
		t.Fatalf("Sync of our child: %v", err)
	}
}

// A pipe child passes its input on, as the child of a disk-less sync does;
// killed, its output ends early and Died is closed.
func TestPipeChild(t *testing.T) {
	c, out, err := StartPipe("redshard-rdb-to-replicas", "")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	done := make(chan struct{})
	go func() { got.ReadFrom(out); close(done) }()
	want := bytes.Repeat([]byte("0123456789"), 100000)
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	<-done
	out.Close()
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("read %d bytes, want %d", got.Len(), len(want))
	}

	c, out, err = StartPipe("redshard-rdb-to-replicas", "")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(out) }()
	c.Write([]byte("x"))
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	select {
	case <-c.Died():
	case <-time.After(10 * time.Second):
		t.Fatal("Died not closed")
	}
}
