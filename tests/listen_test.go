package tests

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// unixClient is a go-redis client on the server's unix socket.
func unixClient(t *testing.T, s *server, path string) *redis.Client {
	return s.clientWith(t, func(o *redis.Options) { o.Network, o.Addr = "unix", path })
}

// tcpRefused reports whether a TCP connection to addr is refused.
func tcpRefused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// The unix socket serves like TCP, with unixsocketperm and Redis's CLIENT
// LIST fields, and its file goes at shutdown. CONFIG SET bind "" closes the
// TCP socket the server started with (unit/networking's "Default bind
// address configuration handling": new connections are refused) and keeps
// the unix socket serving; binding again listens again, and the
// connections made before are served all along.
func TestUnixSocketAndEmptyBind(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	s := startServerIn(t, dir, "--unixsocket", sock, "--unixsocketperm", "700", "--shards", "2")
	st, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o700 {
		t.Errorf("socket file mode %v, want srwx------", st.Mode())
	}
	u := unixClient(t, s, sock)
	runSteps(t, u, []step{
		cmd("set", "k", "v").is("OK"),
		cmd("get", "k").is("v"),
	})
	line := u.Do(ctxT(t), "client", "info").Val().(string)
	for _, f := range []string{" addr=" + sock + ":0 ", " laddr=" + sock + ":0 ", " flags=U "} {
		if !strings.Contains(line, f) {
			t.Errorf("CLIENT INFO on the unix socket lacks %q: %s", f, line)
		}
	}

	before := s.client(t, 2)
	if err := before.Ping(ctxT(t)).Err(); err != nil {
		t.Fatal(err)
	}
	runSteps(t, u, []step{
		cmd("config", "set", "bind", "").is("OK"),
		cmd("config", "get", "bind").is([]any{"bind", ""}),
	})
	if !tcpRefused(s.Addr) {
		t.Errorf("%s still accepts after CONFIG SET bind \"\"", s.Addr)
	}
	if err := before.Ping(ctxT(t)).Err(); err != nil {
		t.Errorf("a connection made before CONFIG SET bind \"\": %v", err)
	}
	runSteps(t, u, []step{
		cmd("get", "k").is("v"),
		cmd("config", "set", "bind", "127.0.0.1").is("OK"),
	})
	if err := s.client(t, 2).Ping(ctxT(t)).Err(); err != nil {
		t.Errorf("TCP after CONFIG SET bind 127.0.0.1: %v", err)
	}
	// A new port closes the start one, and the new one serves every loop.
	np := freePort(t)
	runSteps(t, u, []step{cmd("config", "set", "port", strconv.Itoa(np)).is("OK")})
	if !tcpRefused(s.Addr) {
		t.Errorf("%s still accepts after CONFIG SET port %d", s.Addr, np)
	}
	c2 := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(np), MaxRetries: -1, DisableIdentity: true})
	defer c2.Close()
	for i := 0; i < 4; i++ {
		if err := c2.Set(ctxT(t), "p"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatalf("on the new port: %v", err)
		}
	}
	s.stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket file left after shutdown: %v", err)
	}
}

// With bind "" the server listens on its unix socket only; with neither it
// refuses to start, as redis-server does.
func TestEmptyBindAtStart(t *testing.T) {
	code, stdout, stderr := runBinary(t, "--port", "0", "--bind", "", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if want := "Configured to not listen anywhere, exiting."; code != 1 || !strings.Contains(stdout+stderr, want) {
		t.Errorf("exit %d, output %q; want 1 and %q", code, stdout+stderr, want)
	}

	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	port := freePort(t)
	p := exec.Command(serverBin, "--port", strconv.Itoa(port), "--bind", "", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	var log syncBuffer
	p.Stdout, p.Stderr = &log, &log
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	defer func() {
		_ = p.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}()
	var reply string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err != nil {
			continue
		}
		c.SetDeadline(time.Now().Add(time.Second))
		c.Write([]byte("PING\r\n"))
		reply, _ = bufio.NewReader(c).ReadString('\n')
		c.Close()
		if reply == "+PONG\r\n" {
			break
		}
	}
	if reply != "+PONG\r\n" {
		t.Fatalf("no PONG on the unix socket (last %q)\n%s", reply, log.String())
	}
	if !tcpRefused(net.JoinHostPort("127.0.0.1", strconv.Itoa(port))) {
		t.Errorf("bind \"\" at start: TCP port %d is not refused", port)
	}
}
