package server

// Supervision by systemd (Redis's redisSupervisedSystemd and
// redisCommunicateSystemd): with "supervised systemd", or "supervised auto"
// when systemd started the process (NOTIFY_SOCKET is set), the server speaks
// sd_notify's protocol on the socket systemd named: one datagram per
// message, "NAME=value" lines. It sends
//
//   - STATUS=<what it does> when it starts loading its data and once a
//     second while it loads (with the percentage), so `systemctl status`
//     shows the progress of a long load;
//   - STATUS=Ready to accept connections, then READY=1, when the data set
//     is loaded and commands run: a unit with Type=notify is started then,
//     not when the process forks or listens;
//   - STOPPING=1 when a shutdown begins, and READY=1 again if it is
//     abandoned (a failed final save, SHUTDOWN ABORT).
//
// Messages are best effort, as in Redis: a failed send is logged once and
// never stops the server. The socket may be a path or, with a leading '@',
// an abstract address (Go's net package maps '@' to the leading NUL).

import (
	"net"
	"os"
	"sync"
)

type sdNotifier struct {
	mu     sync.Mutex
	conn   *net.UnixConn // nil: not supervised by systemd
	warned bool          // a send failed and was logged
}

// initSupervised resolves the supervision mode at start.
func (srv *Server) initSupervised() {
	mode := srv.cfg.Supervised()
	sock := os.Getenv("NOTIFY_SOCKET")
	switch mode {
	case "systemd":
	case "auto":
		if sock == "" {
			return // not started by systemd (upstart is not spoken)
		}
	default:
		return
	}
	if sock == "" {
		srv.log.Warningf("systemd supervision requested or auto-detected, but NOTIFY_SOCKET not found!")
		return
	}
	srv.log.Noticef("Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.")
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		srv.log.Warningf("Can't connect to systemd socket %s: %v", sock, err)
		return
	}
	srv.sd.conn = conn
}

// sdNotify sends one message (lines without the final newline) to systemd,
// if the server is supervised by it. Safe from any goroutine.
func (srv *Server) sdNotify(msg string) {
	sd := &srv.sd
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.conn == nil {
		return
	}
	if _, err := sd.conn.Write([]byte(msg + "\n")); err != nil && !sd.warned {
		sd.warned = true
		srv.log.Warningf("Can't send notification to systemd: %v", err)
	}
}

// readyToAccept logs Redis's start-up line and tells systemd the server is
// ready; it is called once the data set is in place (or there is none).
func (srv *Server) readyToAccept() {
	srv.log.Noticef("Ready to accept connections tcp")
	if srv.cfg.replHost.Load() != "" {
		srv.sdNotify("STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync")
	} else {
		srv.sdNotify("STATUS=Ready to accept connections")
	}
	srv.sdNotify("READY=1")
}
