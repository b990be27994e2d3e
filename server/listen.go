package server

// CONFIG SET port / bind at runtime (Redis's updatePort and applyBind).
//
// gnet takes its listening sockets when it starts and can neither close
// them nor add one while it runs, so the addresses the server started with
// keep accepting until it stops; this is where redshard differs from Redis,
// which closes them (CONFIG SET bind "" leaves them open). gnet v2.9.7
// offers no clean way out: Engine.Dup and DupListener hand out copies of a
// listener, whose closing leaves gnet's own descriptor listening;
// Engine.Stop stops every loop, and the loops own the shards; and closing
// gnet's descriptor under it would leave its poller and its close at
// shutdown acting on a number the kernel may since have given to another
// file (a client's socket, the AOF), while an accept on it that fails
// other than EAGAIN stops the engine. When CONFIG SET port or bind names other addresses,
// redshard listens on those with sockets of its own and hands each
// connection it accepts to a loop (gnet's Enroll, round robin), where it is
// opened like any other. Setting the start addresses back, or port 0,
// closes those extra sockets.
//
// If an address can't be listened on (in use, not local), the sockets
// opened for the change are closed, CONFIG SET fails with Redis's error and
// rolls every option of the call back (config.go's apply hooks).

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type listeners struct {
	mu    sync.Mutex
	start map[string]bool         // the addresses gnet listens on
	extra map[string]net.Listener // address ("tcp4://host:port") -> our socket
	next  atomic.Uint64           // round robin over the loops
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

// relisten makes the extra sockets match the configured port and bind.
func (srv *Server) relisten() error {
	ls := &srv.lsn
	want := map[string]bool{}
	if srv.cfg.Port() != 0 {
		for _, a := range srv.listenAddrs() {
			if !ls.start[a] {
				want[a] = true
			}
		}
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
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
		go srv.acceptExtra(l)
	}
	return nil
}

// acceptExtra accepts on one of the extra sockets until it is closed.
func (srv *Server) acceptExtra(l net.Listener) {
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
		lp := srv.loops[srv.lsn.next.Add(1)%uint64(len(srv.loops))]
		if _, err := lp.el.Enroll(context.Background(), c); err != nil {
			c.Close()
		}
	}
}
