package server

// New connections while loops are stuck: a script past
// busy-reply-threshold, or DEBUG LOADAOF (busy.go).
//
// Redis accepts connections inside processEventsWhileBlocked, so an
// operator whose script hangs can connect and send SCRIPT KILL. A
// redshard loop inside a script accepts nothing, and gnet's accepting
// goroutine hands each new socket to a loop chosen round robin, which
// registers it only when it runs again: such a client would wait for the
// script it came to kill. So while any loop is stuck:
//
//  1. The busy watchdog takes gnet's listening sockets over (takeIntake):
//     it keeps each socket on a descriptor of its own and dup3s a
//     listening unix socket nobody can reach over gnet's number, as
//     retireListener does, so gnet's accepts answer EAGAIN (its poller
//     still watches the real socket: the registration belongs to the
//     socket, which stays open). redshard accepts on the socket itself.
//  2. Each connection so accepted, and each of redshard's own listeners
//     (CONFIG SET port, tls-port), goes to a loop that is not stuck
//     (placeConn). If every loop is stuck (one shard, a script holding
//     every shard, DEBUG LOADAOF), the connection is held: a goroutine of
//     its own answers it as the watchdog answers the clients of a stuck
//     loop (busyServe: AUTH, HELLO, SCRIPT KILL, FUNCTION KILL, SHUTDOWN
//     NOSAVE, QUIT, MULTI/DISCARD; -BUSY or -LOADING to the rest; NOAUTH,
//     -NOPERM and unknown commands as always). Once a loop is free it
//     hands the socket to it (gnet's Enroll) with the client as the
//     connection's context: OnOpen adopts it, with its id, user, protocol
//     and the start of a command it read.
//  3. When no loop is stuck, the watchdog gives the sockets back
//     (releaseIntake): the real socket is dup3'd over gnet's number again,
//     and a last accept takes any connection that arrived meanwhile (its
//     wake-up went to gnet's accept on the stand-in).
//
// The normal path is untouched: gnet accepts, with no hand-over, as long
// as no loop is stuck. Takeover starts at the watchdog's first pass after
// the threshold, so a connection gnet accepted before (while a script
// under the threshold ran) is already queued to its loop and waits for
// the script to end; Redis, which accepts nothing before the threshold
// either, would serve it from the threshold on.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// intake is the takeover of gnet's listening sockets.
type intake struct {
	mu    sync.Mutex
	on    atomic.Bool  // taken (taken is non-nil)
	held  atomic.Int64 // connections held now: they count against maxclients
	taken []takenSocket
}

type takenSocket struct {
	fd   int          // gnet's number, holding the stand-in meanwhile
	keep int          // the real socket, on a number of our own
	ln   net.Listener // redshard's accepts on it
}

// heldConn is a held connection's context for OnOpen.
type heldConn struct {
	cl  *Client
	tls *tlsConn
}

// loopStuck reports whether l cannot take a new connection now.
func (srv *Server) loopStuck(l *Loop) bool {
	if l.lua.running.Load() || l.parked.Load() {
		// In a busy script, or parked by one (the mask is the watchdog's
		// view, 20 ms old at most; the flags say the loop is still
		// inside), or by DEBUG LOADAOF.
		return srv.busy.mask.Load()&(1<<uint(l.id)) != 0 || srv.load.active.Load()
	}
	return l.loadHold.Load()
}

// pickLoop chooses the next loop round robin, skipping the stuck ones; nil
// if every loop is stuck.
func (srv *Server) pickLoop() *Loop {
	n := uint64(len(srv.loops))
	if n == 0 {
		return nil
	}
	start := srv.lsn.next.Add(1)
	for i := uint64(0); i < n; i++ {
		if l := srv.loops[(start+i)%n]; !srv.loopStuck(l) {
			return l
		}
	}
	return nil
}

// placeConn gives an accepted connection (for TLS, after its handshake)
// to a loop that can take it, or holds it.
func (srv *Server) placeConn(c net.Conn, tcn *tlsConn) {
	if srv.stopping.Load() || len(srv.loops) == 0 {
		c.Close()
		return
	}
	if l := srv.pickLoop(); l != nil {
		ctx := context.Background()
		if tcn != nil {
			ctx = gnet.NewContext(ctx, tcn)
		}
		if _, err := l.el.Enroll(ctx, c); err != nil {
			c.Close()
		}
		return
	}
	go srv.holdConn(c, tcn)
}

// holdConn serves a connection while every loop is stuck, then hands it to
// the first loop free (see the top of the file).
func (srv *Server) holdConn(c net.Conn, tcn *tlsConn) {
	cl := &Client{srv: srv, tls: tcn}
	cl.obs.peer = c.RemoteAddr().String()
	if _, ok := c.RemoteAddr().(*net.UnixAddr); ok {
		cl.obs.peer = srv.cfg.UnixSocket() + ":0"
	}
	send := func(out []byte) bool {
		if tcn != nil {
			out = tcn.seal(out) // with an alert or key update pending
		}
		if len(out) == 0 {
			return true
		}
		_ = c.SetWriteDeadline(time.Now().Add(busyWriteWait))
		n, err := c.Write(out)
		srv.stats.netOutput.Add(int64(n))
		return err == nil
	}
	if msg := srv.admit(c.RemoteAddr()); msg != "" {
		send([]byte(msg))
		c.Close()
		return
	}
	srv.intake.held.Add(1)
	counted := true
	defer func() {
		if counted {
			srv.intake.held.Add(-1)
		}
	}()
	srv.initClient(cl)
	buf := make([]byte, 16<<10)
	serve := func() bool {
		loading := ""
		if srv.load.active.Load() {
			loading = loadingError
		}
		return send(srv.busyServe(srv.loops[0], cl, loading))
	}
	if tcn != nil {
		// The handshake may have read the client's first commands with
		// its last record (OnOpen's wake-up, in the loop's case).
		if cl.busyIn = append(cl.busyIn, tcn.read(nil)...); len(cl.busyIn) > 0 && srv.pickLoop() == nil && !serve() {
			c.Close()
			return
		}
	}
	for {
		if cl.closing || srv.stopping.Load() {
			c.Close()
			return
		}
		if l := srv.pickLoop(); l != nil {
			_ = c.SetDeadline(time.Time{})
			srv.intake.held.Add(-1) // before OnOpen's admit counts it among the loop's
			counted = false
			if _, err := l.el.Enroll(gnet.NewContext(context.Background(), &heldConn{cl: cl, tls: tcn}), c); err != nil {
				c.Close()
			}
			return
		}
		_ = c.SetReadDeadline(time.Now().Add(busyWatchEvery))
		n, err := c.Read(buf)
		if n == 0 {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			c.Close()
			return
		}
		srv.stats.netInput.Add(int64(n))
		in := buf[:n]
		if tcn != nil {
			in = tcn.read(in)
			if tcn.err != nil && len(in) == 0 {
				c.Close()
				return
			}
		}
		cl.busyIn = append(cl.busyIn, in...)
		if int64(len(cl.busyIn)) > srv.cfg.ClientQueryBufferLimit() {
			c.Close()
			return
		}
		if srv.pickLoop() != nil {
			continue // free meanwhile: the loop runs what was read (OnOpen)
		}
		if !serve() {
			c.Close()
			return
		}
	}
}

// takeIntake takes gnet's listening sockets over (see the top of the
// file); a socket it cannot take stays gnet's.
func (srv *Server) takeIntake() {
	in := &srv.intake
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.taken != nil || srv.stopping.Load() {
		return
	}
	in.taken = []takenSocket{}
	in.on.Store(true)
	ls := &srv.lsn
	ls.mu.Lock()
	defer ls.mu.Unlock()
	addrs := make([]string, 0, len(ls.start)+1)
	for a, on := range ls.start {
		if on { // else retired: CONFIG SET port or bind no longer names it
			addrs = append(addrs, a)
		}
	}
	if ls.unixStart != "" {
		addrs = append(addrs, "unix://"+ls.unixStart)
	}
	for _, a := range addrs {
		fd, err := findListener(a)
		if err != nil {
			continue
		}
		if ts, err := takeSocket(fd); err == nil {
			in.taken = append(in.taken, ts)
			go acceptEach(ts.ln, srv.placePlain)
		} else {
			srv.log.Verbosef("Could not take the listening socket %s while loops are busy: %v", a, err)
		}
	}
}

func takeSocket(fd int) (takenSocket, error) {
	keep, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return takenSocket{}, err
	}
	ts := takenSocket{fd: fd, keep: keep}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err == nil {
		f := os.NewFile(uintptr(dup), "listener")
		ts.ln, err = net.FileListener(f) // a descriptor of its own, in Go's poller
		f.Close()
	}
	if err == nil {
		err = standIn(fd)
	}
	if err != nil {
		if ts.ln != nil {
			ts.ln.Close()
		}
		unix.Close(keep)
		return takenSocket{}, err
	}
	return ts, nil
}

// standIn dup3s a listening unix socket nobody can reach (an abstract
// address, no file; non-blocking, so an accept gnet may be about to make
// answers EAGAIN) over fd.
func standIn(fd int) error {
	dummy, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(dummy)
	err = syscall.Bind(dummy, &syscall.SockaddrUnix{Name: fmt.Sprintf("@redshard-standin-%d-%d-%d", os.Getpid(), fd, time.Now().UnixNano())})
	if err == nil {
		err = syscall.Listen(dummy, 0)
	}
	if err == nil {
		err = unix.Dup3(dummy, fd, unix.O_CLOEXEC)
	}
	return err
}

// releaseIntake gives gnet its sockets back.
func (srv *Server) releaseIntake() {
	srv.intake.mu.Lock()
	defer srv.intake.mu.Unlock()
	srv.releaseIntakeLocked()
}

// releaseIntakeLocked is releaseIntake with intake.mu held.
func (srv *Server) releaseIntakeLocked() {
	in := &srv.intake
	for _, ts := range in.taken {
		err := unix.Dup3(ts.keep, ts.fd, unix.O_CLOEXEC)
		ts.ln.Close()
		if err != nil {
			// gnet's number keeps the stand-in: the address accepts
			// nothing more, as after a CONFIG SET that retired it.
			srv.log.Warningf("Could not give a listening socket back after a busy script: %v", err)
			unix.Close(ts.keep)
			continue
		}
		// A connection that arrived since the last accept above woke
		// gnet's accept on the stand-in: taken here.
		for {
			nfd, _, err := unix.Accept4(ts.keep, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			if err != nil {
				break
			}
			f := os.NewFile(uintptr(nfd), "conn")
			c, err := net.FileConn(f)
			f.Close()
			if err == nil {
				srv.placeConn(c, nil)
			}
		}
		unix.Close(ts.keep)
	}
	in.taken = nil
	in.on.Store(false)
}

// findListener returns the number of the listening socket serving addr
// ("tcp4://host:port", "tcp6://...", "unix://path").
func findListener(addr string) (int, error) {
	network, hostport, _ := strings.Cut(addr, "://")
	var want *net.TCPAddr
	if network != "unix" {
		var err error
		if want, err = net.ResolveTCPAddr(network, hostport); err != nil {
			return -1, err
		}
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1, err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if on, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN); err != nil || on != 1 {
			continue
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			continue
		}
		switch a := sa.(type) {
		case *syscall.SockaddrUnix:
			if network == "unix" && a.Name == hostport {
				return fd, nil
			}
		case *syscall.SockaddrInet4:
			if network == "tcp4" && a.Port == want.Port && net.IP(a.Addr[:]).Equal(want.IP) {
				return fd, nil
			}
		case *syscall.SockaddrInet6:
			if network == "tcp6" && a.Port == want.Port && net.IP(a.Addr[:]).Equal(want.IP) {
				return fd, nil
			}
		}
	}
	return -1, errors.New("no listening socket found")
}
