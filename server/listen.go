package server

// CONFIG SET port / bind at runtime (Redis's updatePort and applyBind).
//
// gnet takes its listening sockets when it starts and can neither close
// them nor add one while it runs. Closing gnet's descriptor under it would
// leave its poller and its close at shutdown acting on a number the kernel
// may since have given to another file (a client's socket, the AOF), and
// an accept on it that fails other than EAGAIN stops the engine. So a
// start socket that CONFIG SET port or bind no longer names is retired in
// place (retireListener): a listening unix socket with nothing to accept
// is dup3'd over its number, which closes the TCP socket (connections are
// refused, as after Redis's close, and CONFIG SET bind "" leaves none) and
// takes it out of gnet's poller, while the number stays taken. Addresses
// named that gnet does not listen on get sockets of redshard's own, whose
// connections are handed to a loop (gnet's Enroll, round robin), where
// they are opened like any other; addresses no longer named close them.

// If an address can't be listened on (in use, not local), the sockets
// opened for the change are closed, CONFIG SET fails with Redis's error and
// rolls every option of the call back (config.go's apply hooks).

import (
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type listeners struct {
	mu        sync.Mutex
	start     map[string]bool         // the addresses gnet listens on
	unixStart string                  // the unix socket gnet listens on, if any
	extra     map[string]net.Listener // address ("tcp4://host:port") -> our socket
	next      atomic.Uint64           // round robin over the loops
}

// initListeners records the start addresses and hooks CONFIG SET port and
// bind (called by Run once the loops are up).
func (srv *Server) initListeners(addrs []string) {
	ls := &srv.lsn
	ls.start = make(map[string]bool, len(addrs))
	for _, a := range addrs {
		ls.start[a] = true
	}
	ls.extra = make(map[string]net.Listener)
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
	go func() {
		<-srv.stopCh
		ls.mu.Lock()
		defer ls.mu.Unlock()
		for a, l := range ls.extra {
			l.Close()
			delete(ls.extra, a)
		}
	}()
}

// relisten makes the extra sockets match the configured port and bind, and
// retires the start sockets no longer named.
func (srv *Server) relisten() error {
	// Sockets taken over while loops are busy are given back first, and
	// taken again by the watchdog's next pass (hold.go).
	srv.intake.mu.Lock()
	defer srv.intake.mu.Unlock()
	srv.releaseIntakeLocked()
	ls := &srv.lsn
	want, named := map[string]bool{}, map[string]bool{}
	if srv.cfg.Port() != 0 {
		for _, a := range srv.listenAddrs() {
			named[a] = true
			if !ls.start[a] {
				want[a] = true
			}
		}
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	// Start sockets no longer named go first, as Redis closes the old
	// listeners before it binds the new (an address may be taken over by
	// a narrower one on the same port). A failure below rolls the option
	// back, and the rollback's relisten opens the old addresses again.
	for a, on := range ls.start {
		if on && !named[a] {
			if err := retireListener(a); err != nil {
				srv.log.Warningf("Could not close the listening socket %s: %v", a, err)
				continue
			}
			ls.start[a] = false // named again later, it gets a socket of redshard's own
		}
	}
	opened := map[string]net.Listener{}
	for a := range want {
		if ls.extra[a] != nil {
			continue
		}
		network, hostport, _ := strings.Cut(a, "://")
		l, err := net.Listen(network, hostport)
		if err != nil {
			msg := err.Error()
			if errors.Is(err, syscall.EADDRINUSE) {
				msg = "bind: Address already in use"
			}
			host, port, _ := net.SplitHostPort(hostport)
			srv.log.Warningf("Warning: Could not create server TCP listening socket %s:%s: %s", host, port, msg)
			for _, o := range opened {
				o.Close()
			}
			return err
		}
		opened[a] = l
	}
	for a, l := range ls.extra {
		if !want[a] {
			l.Close()
			delete(ls.extra, a)
		}
	}
	for a, l := range opened {
		ls.extra[a] = l
		go acceptEach(l, srv.placePlain)
	}
	return nil
}

// retireListener stops gnet's listening socket for addr
// ("tcp4://host:port") without closing its descriptor under gnet: a
// listening unix socket with nothing to accept (non-blocking, so an accept
// gnet may already be about to make answers EAGAIN) is dup3'd over the
// descriptor's number. That closes the TCP socket (new connections are
// refused, as after Redis's close) and drops it from gnet's poller, while
// the number stays taken until gnet closes it at shutdown, so no other
// file can meet gnet's use of it.
func retireListener(addr string) error {
	fd, err := findListener(addr) // hold.go
	if err != nil {
		return err
	}
	return standIn(fd)
}

// acceptEach accepts on ln until it is closed and gives each connection to
// handle: redshard's own sockets (CONFIG SET port and bind, tls-port, and
// gnet's while taken over, hold.go).
func acceptEach(ln net.Listener, handle func(c net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE: go on, without spinning
			continue
		}
		handle(c)
	}
}

// placePlain gives a plaintext connection to a loop (placeConn, hold.go).
func (srv *Server) placePlain(c net.Conn) { srv.placeConn(c, nil) }
