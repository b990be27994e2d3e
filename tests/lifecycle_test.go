package tests

// Start, stop and crash like redis-server: the start banner, SHUTDOWN and
// the shutdown signals, the crash report, oom-score-adj.

import (
	"bufio"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startRaw starts redshard-server on a free port with args and returns the
// process and a channel of its stdout lines (closed at EOF). The caller
// kills it.
func startRaw(t *testing.T, args ...string) (*exec.Cmd, int, <-chan string) {
	t.Helper()
	port := freePort(t)
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir()}, args...)
	cmd := exec.Command(serverBin, all...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, port, lines
}

// TestStartBanner: with always-show-logo the banner carries Redis's
// " PID: <pid>" and "Port: <port>" lines, and it is printed only once the
// port accepts connections (the Redis test harness connects as soon as it
// sees the PID line).
func TestStartBanner(t *testing.T) {
	cmd, port, lines := startRaw(t, "--always-show-logo", "yes")
	pidLine := regexp.MustCompile(` PID: (\d+)$`)
	var sawPort bool
	deadline := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("server exited before its PID line")
			}
			if strings.HasSuffix(l, "Port: "+strconv.Itoa(port)) {
				sawPort = true
			}
			m := pidLine.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
			if err != nil {
				t.Fatalf("PID line printed before the port listens: %v", err)
			}
			c.Close()
			if m[1] != strconv.Itoa(cmd.Process.Pid) {
				t.Fatalf("PID line %q, process %d", l, cmd.Process.Pid)
			}
			if !sawPort {
				t.Fatalf("no \"Port: %d\" line before the PID line", port)
			}
			return
		case <-deadline:
			t.Fatal("no PID line within 15s")
		}
	}
}

// TestStartNoBanner: without always-show-logo and with stdout not a
// terminal, Redis logs the one-line form instead of the banner.
func TestStartNoBanner(t *testing.T) {
	_, port, lines := startRaw(t)
	want := "Running mode=standalone, port=" + strconv.Itoa(port) + "."
	deadline := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("server exited")
			}
			if strings.Contains(l, " PID: ") {
				t.Fatalf("banner printed without always-show-logo: %q", l)
			}
			if strings.HasSuffix(l, " * "+want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q line within 15s", want)
		}
	}
}
