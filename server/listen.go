package server

// Listening sockets: bind, port and unixsocket, and CONFIG SET port / bind
// at run time (Redis's listenToPort, updatePort and applyBind).
//
// gnet can neither close a listening socket it was started with nor add
// one while it runs, and Redis does both (CONFIG SET bind "" stops all TCP
// service at once). So gnet serves no client socket (it listens only on the
// private one that tells its loops apart, see discoverLoops): redshard opens
// every socket itself (net.Listen), accepts in one goroutine per socket,
// and hands each connection to a loop (gnet's Enroll, round robin), where
// it is opened like any other. Accepting off the loops costs goroutine hops
// and a dup per connection, and each connection is registered before the
// next is accepted (see accept): redis-benchmark -k 0 (a new connection per
// request) measured 30-40% fewer requests per second than gnet's own accept
// on a loaded 2-core machine. Established connections are served exactly
// as before.
//
// The sockets are opened before the loops start, so that an address that
// can't be listened on stops the start with Redis's messages; they accept
// once every loop is known (discoverLoops). CONFIG SET port or bind opens
// the new addresses first and closes the old ones after; if an address
// can't be listened on (in use, not local), the sockets opened for the
// change are closed, CONFIG SET fails with Redis's error and rolls every
// option of the call back (config.go's apply hooks). The unix socket
// (unixsocket, unixsocketperm) is opened once: both options are immutable.

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
)

type listeners struct {
	mu   sync.Mutex
	tcp  map[string]net.Listener // address ("tcp4://host:port") -> socket
	unix net.Listener            // unixsocket, or nil
	next atomic.Uint64           // round robin over the loops
}

// openListeners opens the TCP sockets of bind and port and the unix socket,
// before the loops start. Nothing accepts until startAccepting. The error
// is the line Redis exits with.
func (srv *Server) openListeners() error {
	ls := &srv.lsn
	ls.tcp = make(map[string]net.Listener)
	if srv.cfg.Port() != 0 {
		for _, a := range srv.listenAddrs() {
			l, err := listenAddr(a)
			if err != nil {
				srv.logListenError(a, err)
				srv.closeListeners()
				return fmt.Errorf("Failed listening on port %d (TCP), aborting.", srv.cfg.Port())
			}
			ls.tcp[a] = l
		}
	}
	if path := srv.cfg.UnixSocket(); path != "" {
		_ = os.Remove(path) // as Redis: a stale socket file is replaced
		l, err := net.Listen("unix", path)
		if err != nil {
			srv.closeListeners()
			return fmt.Errorf("Failed opening Unix socket: bind: %s", strerrorOf(err))
		}
		if perm := srv.cfg.UnixSocketPerm(); perm != 0 {
			_ = os.Chmod(path, perm) // unchecked, as in Redis's anetUnixServer
		}
		ls.unix = l
	}
	if len(ls.tcp) == 0 && ls.unix == nil {
		return errors.New("Configured to not listen anywhere, exiting.")
	}
	return nil
}

// startAccepting hooks CONFIG SET port and bind and starts accepting on
// every socket (called by Run once the loops are known; Run closes them
// when it stops).
func (srv *Server) startAccepting() {
	ls := &srv.lsn
	srv.cfg.OnApply("port", func() error {
		if srv.relisten() != nil {
			return errors.New("Unable to listen on this port. Check server logs.")
		}
		return nil
	})
	srv.cfg.OnApply("bind", func() error {
		if srv.relisten() != nil {
			return errors.New("Failed to bind to specified addresses.")
		}
		return nil
	})
	ls.mu.Lock()
	for _, l := range ls.tcp {
		go srv.accept(l)
	}
	if ls.unix != nil {
		go srv.accept(ls.unix)
		srv.log.Noticef("The server is now ready to accept connections at %s", srv.cfg.UnixSocket())
	}
	ls.mu.Unlock()
}

// closeListeners closes every socket (the unix socket's file goes too).
func (srv *Server) closeListeners() {
	ls := &srv.lsn
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for a, l := range ls.tcp {
		l.Close()
		delete(ls.tcp, a)
	}
	if ls.unix != nil {
		ls.unix.Close()
		ls.unix = nil
	}
}

// listenAddrs returns the TCP addresses bind and port name, as gnet-style
// "tcp4://host:port" strings. An empty bind listens on no TCP address.
func (srv *Server) listenAddrs() []string {
	port := srv.cfg.Port()
	var addrs []string
	for _, b := range srv.cfg.Bind() {
		optional := strings.HasPrefix(b, "-")
		b = strings.TrimPrefix(b, "-")
		switch b {
		case "*":
			addrs = append(addrs, "tcp4://0.0.0.0:"+strconv.Itoa(port))
		case "::*":
			if !optional {
				addrs = append(addrs, "tcp6://[::]:"+strconv.Itoa(port))
			}
		default:
			if strings.Contains(b, ":") {
				if optional && !ipv6Available() {
					continue
				}
				addrs = append(addrs, "tcp6://["+b+"]:"+strconv.Itoa(port))
			} else {
				addrs = append(addrs, "tcp4://"+b+":"+strconv.Itoa(port))
			}
		}
	}
	return addrs
}

func listenAddr(a string) (net.Listener, error) {
	network, hostport, _ := strings.Cut(a, "://")
	// Keepalive is set per connection from tcp-keepalive (accept).
	lc := net.ListenConfig{KeepAlive: -1}
	return lc.Listen(context.Background(), network, hostport)
}

func (srv *Server) logListenError(a string, err error) {
	msg := err.Error()
	if errors.Is(err, syscall.EADDRINUSE) {
		msg = "bind: Address already in use"
	}
	_, hostport, _ := strings.Cut(a, "://")
	host, port, _ := net.SplitHostPort(hostport)
	srv.log.Warningf("Warning: Could not create server TCP listening socket %s:%s: %s", host, port, msg)
}

// relisten makes the TCP sockets match the configured port and bind.
func (srv *Server) relisten() error {
	ls := &srv.lsn
	want := map[string]bool{}
	if srv.cfg.Port() != 0 {
		for _, a := range srv.listenAddrs() {
			want[a] = true
		}
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	opened := map[string]net.Listener{}
	for a := range want {
		if ls.tcp[a] != nil {
			continue
		}
		l, err := listenAddr(a)
		if err != nil {
			srv.logListenError(a, err)
			for _, o := range opened {
				o.Close()
			}
			return err
		}
		opened[a] = l
	}
	for a, l := range ls.tcp {
		if !want[a] {
			l.Close()
			delete(ls.tcp, a)
		}
	}
	for a, l := range opened {
		ls.tcp[a] = l
		go srv.accept(l)
	}
	return nil
}

// accept accepts on one socket until it is closed.
func (srv *Server) accept(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE: go on, without spinning
			continue
		}
		if srv.stopping.Load() || len(srv.loops) == 0 {
			c.Close()
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok {
			if ka := srv.cfg.TCPKeepAlive(); ka > 0 {
				_ = tc.SetKeepAlive(true)
				_ = tc.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
			}
		}
		lp := srv.loops[srv.lsn.next.Add(1)%uint64(len(srv.loops))]
		done, err := lp.el.Enroll(context.Background(), c)
		if err != nil {
			c.Close()
			continue
		}
		// Enroll registers the connection from a pooled goroutine that
		// waits for the loop; one at a time keeps a burst of connections
		// from parking a goroutine each (the pool keeps idle ones 10 s).
		select {
		case <-done:
		case <-srv.stopCh:
			return
		}
	}
}

// strerrorOf renders err like C's strerror when it carries an errno.
func strerrorOf(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if s := errno.Error(); s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
