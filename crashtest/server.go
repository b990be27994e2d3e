package crashtest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server is one run of the server command. It runs in a process group of
// its own, so SIGKILL reaches whatever it forked (redis-server's rewrite
// and save children) and nothing of it outlives a row.
type server struct {
	cmd    *exec.Cmd
	port   int
	log    string
	done   chan struct{}
	exitAt time.Time
	state  *os.ProcessState
}

// live holds the process groups of the servers running, for Abort.
var live = struct {
	sync.Mutex
	pgids  map[int]bool
	mounts map[Mounted]bool
}{pgids: map[int]bool{}, mounts: map[Mounted]bool{}}

func track(pgid int, on bool) {
	live.Lock()
	defer live.Unlock()
	if on {
		live.pgids[pgid] = true
	} else {
		delete(live.pgids, pgid)
	}
}

func trackMount(m Mounted, on bool) {
	live.Lock()
	defer live.Unlock()
	if on {
		live.mounts[m] = true
	} else {
		delete(live.mounts, m)
	}
}

// Abort kills every server the tool started and unmounts every crashfs it
// mounted: for a tool interrupted by SIGINT or SIGTERM, so that nothing it
// started outlives it.
func Abort() {
	live.Lock()
	defer live.Unlock()
	for pgid := range live.pgids {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	time.Sleep(100 * time.Millisecond) // the kernel closes their files
	for m := range live.mounts {
		m.Unmount()
	}
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// expand substitutes {port} and {dir} in the command template.
func expand(tmpl []string, port int, dir string) []string {
	out := make([]string, len(tmpl))
	for i, a := range tmpl {
		a = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
		out[i] = strings.ReplaceAll(a, "{dir}", dir)
	}
	return out
}

// startServer starts the command with extra arguments appended, its output
// appended to logPath.
func startServer(tmpl []string, dir string, extra []string, logPath string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	argv := append(expand(tmpl, port, dir), extra...)
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(lf, "\n=== crashtest: %s: %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	s := &server{cmd: cmd, port: port, log: logPath, done: make(chan struct{})}
	track(s.cmd.Process.Pid, true)
	go func() {
		defer track(s.cmd.Process.Pid, false)
		cmd.Wait()
		s.state = cmd.ProcessState
		s.exitAt = time.Now()
		lf.Close()
		close(s.done)
	}()
	return s, nil
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

var errExited = errors.New("the server exited")

// waitReady waits until the server answers commands with data (not
// -LOADING), or exits, or the timeout passes.
func (s *server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s.exited() {
			return fmt.Errorf("%w (%s)", errExited, s.state)
		}
		r, err := do1(s.addr(), time.Second, "EXISTS", "crashtest:probe")
		if err == nil && r.Kind == ':' {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v", timeout)
}

// kill sends SIGKILL to the server's process group and waits for it to
// die. It returns the moment of the signal.
func (s *server) kill() time.Time {
	at := time.Now()
	if !s.exited() {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
	// The group's other members (a fork) may outlive the leader by a moment.
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	return at
}

// waitExit waits for the server to exit by itself, at most d.
func (s *server) waitExit(d time.Duration) bool {
	select {
	case <-s.done:
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		return true
	case <-time.After(d):
		return false
	}
}

// lastLines returns the last n non-empty lines of the server's log.
func lastLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
