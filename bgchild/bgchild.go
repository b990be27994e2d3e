// Package bgchild writes the file of a background job (an AOF rewrite's
// base, a BGSAVE's dump) in a child process, as Redis's fork child does.
//
// redshard does not fork: the loops make the point-in-time image in small
// steps and hand it over in chunks (aof.Rewrite, aof.Snapshot). What Redis
// users and their tools see of a background job, though, is a child
// process: `pgrep -P <server>` finds it, the temp file carries its pid
// (temp-<pid>.rdb, temp-rewriteaof-bg-<pid>.aof), its oom_score_adj is the
// "bgchild" class of oom-score-adj-values so the OOM killer takes it first,
// and killing it stops the job, which then fails as Redis's does
// ("terminated by signal 9", MISCONF after a killed BGSAVE). So the file
// side of the job really runs in a child: the server re-executes its own
// binary with the job in the environment (Main runs it), streams the image
// to the child's stdin, and the child creates the temp file, writes what it
// reads, fsyncs it and exits 0 at end of input. The parent renames the file
// into place once the child has exited 0 (Sync), exactly as it did with a
// file of its own.
//
// The protocol:
//   - env REDSHARD_BGCHILD=<pattern>, with one %d for the child's pid,
//     REDSHARD_BGCHILD_DIR=<dir>, REDSHARD_BGCHILD_OOM=<oom_score_adj or "">;
//   - stdin: the file's bytes; EOF ends them (a parent that dies leaves a
//     temp file nobody renames, as a dead Redis does);
//   - exit 0: written and fsynced; anything else: failed, with a line on
//     stderr saying why.
//
// The cost is one copy of the image through a pipe, and one process start
// per job (a few ms).
package bgchild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

const (
	envVar = "REDSHARD_BGCHILD"
	envDir = "REDSHARD_BGCHILD_DIR"
	envOOM = "REDSHARD_BGCHILD_OOM"
)

var enabled atomic.Bool

// Enable makes Start available: the binary calls Main first thing, so it
// can run as its own child. Tests of other packages, whose binary does not,
// leave it off and write in-process.
func Enable() { enabled.Store(true) }

// Enabled reports whether jobs run in a child.
func Enabled() bool { return enabled.Load() }

// Main runs the child when the environment says so, and never returns
// then; otherwise it returns at once. Call it first in main.
func Main() {
	pattern, ok := os.LookupEnv(envVar)
	if !ok {
		return
	}
	if pattern == pipeJob {
		os.Exit(pipeChild(os.Getenv(envOOM), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(child(os.Getenv(envDir), pattern, os.Getenv(envOOM), os.Stdin, os.Stderr))
}

// pipeJob is the job of a child that passes the image on (StartPipe).
const pipeJob = "-"

// pipeChild copies its input to its output: a disk-less full sync's
// image, which the server reads back and sends to the replicas, as Redis's
// child writes the RDB to a pipe its parent reads.
func pipeChild(oom string, in io.Reader, out, errOut io.Writer) int {
	if oom != "" {
		_ = os.WriteFile("/proc/self/oom_score_adj", []byte(oom), 0)
	}
	buf := make([]byte, 1<<16)
	if _, err := io.CopyBuffer(onlyWriter{out}, in, buf); err != nil {
		fmt.Fprintln(errOut, err)
		return 1
	}
	return 0
}

func child(dir, pattern, oom string, in io.Reader, errOut io.Writer) int {
	if strings.Count(pattern, "%d") != 1 || strings.ContainsRune(pattern, '/') {
		fmt.Fprintf(errOut, "bad job %q\n", pattern)
		return 2
	}
	if oom != "" {
		// As Redis's child sets its own (setOOMScoreAdj(CONFIG_OOM_BGCHILD)).
		_ = os.WriteFile("/proc/self/oom_score_adj", []byte(oom), 0)
	}
	path := filepath.Join(dir, fmt.Sprintf(pattern, os.Getpid()))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Fprintln(errOut, err)
		return 1
	}
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(onlyWriter{f}, in, buf); err != nil {
		f.Close()
		fmt.Fprintln(errOut, err)
		return 1
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fmt.Fprintln(errOut, err)
		return 1
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(errOut, err)
		return 1
	}
	return 0
}

// onlyWriter hides ReadFrom, so the copy goes through the buffer.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(b []byte) (int, error) { return o.w.Write(b) }

// Child is a running job's child: a file as the writer sees it.
type Child struct {
	cmd    *exec.Cmd
	in     *os.File
	path   string
	stderr bytes.Buffer

	mu     sync.Mutex
	closed bool // stdin closed by Sync or Close
	done   chan struct{}
	died   chan struct{} // closed if the child exits before its input ended
	exit   error         // set before done is closed
}

// StartPipe runs a child that passes what is written to it on to the
// returned reader (a disk-less full sync's image: see pipeChild). The
// reader ends at the child's exit; Sync ends the input and waits.
func StartPipe(title, oomAdj string) (*Child, *os.File, error) {
	or, ow, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	c, err := start(title, pipeJob, "", oomAdj, ow)
	ow.Close() // the child's copy stays open until it exits
	if err != nil {
		or.Close()
		return nil, nil, err
	}
	return c, or, nil
}

// Start runs a child that writes dir/<pattern with its pid>. title names
// the process in ps (Redis's "redis-rdb-bgsave", "redis-aof-rewrite").
// oomAdj is written to its oom_score_adj unless empty.
func Start(dir, pattern, title, oomAdj string) (*Child, error) {
	c, err := start(title, pattern, dir, oomAdj, nil)
	if err != nil {
		return nil, err
	}
	c.path = filepath.Join(dir, fmt.Sprintf(pattern, c.cmd.Process.Pid))
	return c, nil
}

func start(title, pattern, dir, oomAdj string, stdout *os.File) (*Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &Child{done: make(chan struct{}), died: make(chan struct{})}
	c.cmd = &exec.Cmd{
		Path:   exe,
		Args:   []string{title},
		Env:    append(os.Environ(), envVar+"="+pattern, envDir+"="+dir, envOOM+"="+oomAdj),
		Dir:    dir,
		Stderr: &c.stderr,
		Stdout: stdout,
		// The child goes with the server, as Redis's child exits when it
		// sees its parent gone.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.cmd.Stdin = pr
	// Started and registered under live's lock, so ReapStrays never
	// takes the exit of one of ours.
	live.mu.Lock()
	err = c.cmd.Start()
	if err == nil {
		live.pids[c.cmd.Process.Pid] = true
	}
	live.mu.Unlock()
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pr.Close()
	c.in = pw
	go c.wait()
	return c, nil
}

func (c *Child) wait() {
	err := c.cmd.Wait()
	live.mu.Lock()
	delete(live.pids, c.cmd.Process.Pid)
	live.mu.Unlock()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				err = &Killed{Signal: ws.Signal()}
			} else if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
				err = errors.New(msg)
			}
		}
	}
	c.mu.Lock()
	c.exit = err
	early := !c.closed
	c.mu.Unlock()
	if early {
		close(c.died)
	}
	close(c.done)
}

// Killed is the exit of a child ended by a signal.
type Killed struct{ Signal syscall.Signal }

func (k *Killed) Error() string {
	return "terminated by signal " + strconv.Itoa(int(k.Signal))
}

// Pid is the child's pid.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Path is the file the child writes.
func (c *Child) Path() string { return c.path }

// Done is closed when the child has exited, for whatever reason.
func (c *Child) Done() <-chan struct{} { return c.done }

// Died is closed when the child exits before its input has ended: it was
// killed, or it failed.
func (c *Child) Died() <-chan struct{} { return c.died }

// Err is why the child ended early (after Died), or nil.
func (c *Child) Err() error {
	select {
	case <-c.done:
		return c.exit
	default:
		return nil
	}
}

// Write streams b to the child's file.
func (c *Child) Write(b []byte) (int, error) {
	n, err := c.in.Write(b)
	if err != nil {
		select {
		case <-c.done:
			if c.exit != nil {
				return n, c.exit
			}
		default:
		}
	}
	return n, err
}

// Sync ends the input and waits for the child: nil once the file is
// written and fsynced.
func (c *Child) Sync() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.in.Close()
	<-c.done
	return c.exit
}

// Kill sends the child SIGKILL and returns at once; Close still ends the
// job (and waits for the exit).
func (c *Child) Kill() { _ = c.cmd.Process.Kill() }

// Close stops the child if its input has not ended (an aborted job) and
// waits for it. The file stays: the caller removes it.
func (c *Child) Close() error {
	c.mu.Lock()
	ended := c.closed
	c.closed = true
	c.mu.Unlock()
	if !ended {
		_ = c.cmd.Process.Kill()
		c.in.Close()
	}
	<-c.done
	return nil
}

// live are the pids of the children Start made and Wait has not reaped.
var live = struct {
	mu   sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// ReapStrays reaps children of this process that exited and are none of
// Start's: a process the server inherited as its child (a helper a
// wrapper script forked before it exec'd the server) would otherwise stay
// a zombie, and `pgrep -P` would find it instead of a job's child. Redis's
// waitpid(-1) reaps them too ("detected child with unmatched pid"). It
// returns the pids reaped. It reads /proc; call it now and then (the
// server's cron, once a second).
func ReapStrays() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var reaped []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				continue
			}
			st, err := os.ReadFile("/proc/" + field + "/stat")
			if err != nil {
				continue
			}
			// The state follows the command's closing parenthesis.
			i := bytes.LastIndexByte(st, ')')
			if i < 0 || i+2 >= len(st) || st[i+2] != 'Z' {
				continue
			}
			live.mu.Lock()
			ours := live.pids[pid]
			if !ours {
				var ws syscall.WaitStatus
				if p, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err == nil && p == pid {
					reaped = append(reaped, pid)
				}
			}
			live.mu.Unlock()
		}
	}
	return reaped
}
