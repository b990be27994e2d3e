package server

// FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | FAILOVER ABORT: Redis
// 7.0's coordinated failover, master to one of its replicas, without
// losing a write.
//
//  1. FAILOVER pauses writes (CLIENT PAUSE WRITE, purpose failover; pause.go)
//     and the state becomes waiting-for-sync. Writes already submitted go
//     on to the log and the stream; no new one starts, the cron's PING to
//     replicas is held back so the offset stays put.
//  2. A watcher goroutine looks, every few milliseconds, for the target (or,
//     without TO, any online replica) whose REPLCONF ACK equals
//     master_repl_offset. When one looks caught up, it confirms with every
//     loop parked, after the writer has streamed every submitted batch
//     (waitWritten, as the full sync's cut): only then is the offset final.
//     With TIMEOUT, when the time is over it fails over anyway under FORCE,
//     else aborts ("Replica never caught up before timeout").
//  3. failover-in-progress: this server becomes a replica of the target
//     (replicaSet, every loop parked), and its handshake asks PSYNC <its
//     replid> <offset+1> FAILOVER. The target, a replica whose replid is
//     this one (the id it follows), promotes itself (REPLICAOF NO ONE, which
//     shifts the ids) and answers the PSYNC as a master: +CONTINUE with its
//     new id, because the old id is its replid2 up to this offset.
//  4. +CONTINUE (or +FULLRESYNC) ends the failover: the pause is lifted, and
//     the postponed writers get -READONLY from the replica this server now
//     is. Any other reply (the target refused PSYNC, NOPERM, LOADING, ...)
//     or an error writing it aborts: REPLICAOF NO ONE, the pause lifted
//     ("Failover target rejected psync request").
//
// The target's side of step 3 waits for what its link has already
// received: a PSYNC ... FAILOVER that arrives while bytes of the old
// master's stream are unread on the link's socket, or read and not yet
// applied, is postponed (its client waits, the command unparsed in its
// input, as CLIENT PAUSE does) until the link has applied them, for at most
// failoverDrainMax. So the write the old master sent last, which a target
// that was stopped (SIGSTOP, a stall) had received but not read, is in the
// data set and the offset when the target promotes itself, and the old
// master continues by partial resync, as Redis's single thread reads the
// master link's data before the new connection's PSYNC.
//
// FAILOVER ABORT ends either waiting state the same way. While a failover
// runs, REPLICAOF and SYNC/PSYNC of other replicas are refused, as Redis.
//
// The state is srv.fo: state is atomic for INFO and the handshake; the rest
// is guarded by mu.

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/redshard/redshard/shard"
)

const (
	foNone int32 = iota
	foWaitSync
	foInProgress
)

var foStateNames = [...]string{"no-failover", "waiting-for-sync", "failover-in-progress"}

type failoverState struct {
	state atomic.Int32
	mu    sync.Mutex
	host  string // the target; "" until one is chosen (no TO)
	port  int
	end   int64 // unix ms the wait ends; 0: no timeout
	force bool
	gen   uint64 // bumped by every FAILOVER and its end: a stale watcher stops
}

var failoverCommands = []serverCmd{
	{name: "failover", exec: cmdFailover, allShards: true},
}

func (srv *Server) failoverStateName() string {
	return foStateNames[srv.fo.state.Load()]
}

func cmdFailover(x *Exec, argv [][]byte) {
	srv := x.srv
	fo := &srv.fo
	if len(argv) == 2 && shard.EqualFold(argv[1], "abort") {
		if fo.state.Load() == foNone {
			x.Err("ERR No failover in progress.")
			return
		}
		srv.abortFailover("Failover manually aborted", true)
		x.OK()
		return
	}
	var timeout, port int64
	var host string
	hasHost, force := false, false
	for j := 1; j < len(argv); j++ {
		switch {
		case shard.EqualFold(argv[j], "timeout") && j+1 < len(argv) && timeout == 0:
			v, err := strconv.ParseInt(string(argv[j+1]), 10, 64)
			if err != nil {
				x.Err(shard.ErrNotInt)
				return
			}
			if v <= 0 {
				x.Err("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = v
			j++
		case shard.EqualFold(argv[j], "to") && j+2 < len(argv) && !hasHost:
			v, err := strconv.ParseInt(string(argv[j+2]), 10, 64)
			if err != nil {
				x.Err(shard.ErrNotInt)
				return
			}
			host, port, hasHost = string(argv[j+1]), v, true
			j += 2
		case shard.EqualFold(argv[j], "force") && !force:
			force = true
		default:
			x.Err(shard.ErrSyntax)
			return
		}
	}
	if fo.state.Load() != foNone {
		x.Err("ERR FAILOVER already in progress.")
		return
	}
	if srv.repl.isReplica.Load() {
		x.Err("ERR FAILOVER is not valid when server is a replica.")
		return
	}
	if len(srv.connectedReplicas()) == 0 {
		x.Err("ERR FAILOVER requires connected replicas.")
		return
	}
	if force && (timeout == 0 || !hasHost) {
		x.Err("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if hasHost {
		r := srv.findReplica(host, int(port))
		if r == nil {
			x.Err("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if r.state.Load() != repOnline {
			x.Err("ERR FAILOVER target replica is not online.")
			return
		}
		srv.log.Noticef("FAILOVER requested to %s:%d.", host, port)
	} else {
		srv.log.Noticef("FAILOVER requested to any replica.")
	}
	fo.mu.Lock()
	fo.host, fo.port, fo.force, fo.end = host, int(port), force, 0
	if timeout > 0 {
		fo.end = time.Now().UnixMilli() + timeout
	}
	fo.gen++
	gen := fo.gen
	fo.state.Store(foWaitSync)
	fo.mu.Unlock()
	srv.pauseClients(pauseByFailover, time.Now().UnixMilli()+10*365*24*3600*1000, pauseWrite) // until it ends
	go srv.watchFailover(gen)
	x.OK()
}

// findReplica is the attached replica at host:port (its announced or
// peer address and its listening port), or nil.
func (srv *Server) findReplica(host string, port int) *replica {
	rp := &srv.repl
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, r := range rp.m.replicas {
		if !r.rdbOnly && r.port == port && strings.EqualFold(r.ip, host) {
			return r
		}
	}
	return nil
}

// caughtUp is the target replica, or without one any online replica,
// whose ACK is master_repl_offset.
func (srv *Server) caughtUp(host string, port int) *replica {
	rp := &srv.repl
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, r := range rp.m.replicas {
		if r.rdbOnly || r.state.Load() != repOnline {
			continue
		}
		if host != "" && (r.port != port || !strings.EqualFold(r.ip, host)) {
			continue
		}
		if r.ack.Load() == rp.off {
			return r
		}
	}
	return nil
}

// watchFailover is the waiting-for-sync step (Redis's updateFailoverStatus).
func (srv *Server) watchFailover(gen uint64) {
	fo := &srv.fo
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-srv.stopCh:
			return
		case <-tick.C:
		}
		fo.mu.Lock()
		if fo.gen != gen || fo.state.Load() != foWaitSync {
			fo.mu.Unlock()
			return
		}
		host, port, end, force := fo.host, fo.port, fo.end, fo.force
		fo.mu.Unlock()
		if end > 0 && time.Now().UnixMilli() >= end {
			if force {
				srv.log.Noticef("FAILOVER to %s:%d time out exceeded, failing over.", host, port)
				srv.startFailover(gen, host, port, true)
			} else {
				srv.abortFailover("Replica never caught up before timeout", false)
			}
			return
		}
		if srv.caughtUp(host, port) == nil {
			continue
		}
		if srv.startFailover(gen, host, port, false) {
			return
		}
	}
}

// startFailover turns this server into a replica of the caught-up target
// (or, forced, of host:port whatever its offset) with every loop parked;
// false if, with the log drained, no replica is caught up after all.
func (srv *Server) startFailover(gen uint64, host string, port int, forced bool) bool {
	started := false
	err := srv.parkAll(func() {
		fo := &srv.fo
		if err := srv.waitWritten(srv.submitAll(), 10*time.Second); err != nil {
			return
		}
		h, p := host, port
		if !forced {
			r := srv.caughtUp(host, port)
			if r == nil {
				return
			}
			h, p = r.ip, r.port
		}
		fo.mu.Lock()
		if fo.gen != gen || fo.state.Load() != foWaitSync {
			fo.mu.Unlock()
			started = true // ended meanwhile: nothing more to watch
			return
		}
		fo.host, fo.port = h, p
		fo.state.Store(foInProgress)
		fo.mu.Unlock()
		if !forced {
			srv.log.Noticef("Failover target %s:%d is synced, failing over.", h, p)
		}
		srv.replicaSet(h, p, true)
		started = true
	})
	return err != nil || started
}

// failoverPsync is called by the link after the PSYNC FAILOVER reply:
// accepted ends the failover, anything else aborts it.
func (srv *Server) failoverPsync(accepted bool, why string) {
	if srv.fo.state.Load() != foInProgress {
		return
	}
	if accepted {
		srv.clearFailover()
		return
	}
	srv.abortFailover(why, false)
}

// clearFailover ends a failover and lifts its pause (Redis's
// clearFailoverState).
func (srv *Server) clearFailover() {
	fo := &srv.fo
	fo.mu.Lock()
	fo.gen++
	fo.host, fo.port, fo.end, fo.force = "", 0, 0, false
	fo.state.Store(foNone)
	fo.mu.Unlock()
	srv.unpauseClients(pauseByFailover)
}

// abortFailover ends a failover that did not complete: a server already
// turned replica becomes a master again (Redis's abortFailover). parked:
// every loop is parked already (FAILOVER ABORT).
func (srv *Server) abortFailover(why string, parked bool) {
	fo := &srv.fo
	fo.mu.Lock()
	st := fo.state.Load()
	host, port := fo.host, fo.port
	fo.mu.Unlock()
	if st == foNone {
		return
	}
	if host != "" {
		srv.log.Noticef("FAILOVER to %s:%d aborted: %s", host, port, why)
	} else {
		srv.log.Noticef("FAILOVER to any replica aborted: %s", why)
	}
	if st == foInProgress {
		unset := func() {
			if srv.fo.state.Load() == foInProgress && srv.repl.isReplica.Load() {
				srv.replicaUnset()
			}
		}
		if parked {
			unset()
		} else {
			_ = srv.parkAll(unset)
		}
	}
	srv.clearFailover()
}

// psyncFailover is the target's side of PSYNC <replid> <offset> FAILOVER:
// a replica following replid becomes a master, then answers the PSYNC as
// one; every loop is parked. It reports whether the PSYNC goes on.
func (srv *Server) psyncFailover(x *Exec, replid []byte) bool {
	srv.log.Warningf("Failover request received for replid %s.", replid)
	if !srv.repl.isReplica.Load() {
		x.Err("ERR PSYNC FAILOVER can't be sent to a master.")
		return false
	}
	id, _, _, _ := srv.repl.ids()
	if string(replid) != id {
		x.Err("ERR PSYNC FAILOVER replid must match my replid.")
		return false
	}
	srv.replicaUnset()
	srv.log.Noticef("MASTER MODE enabled (failover request from '%s')", x.cl.infoLine())
	return true
}

// failoverDrainMax bounds the wait of a PSYNC FAILOVER for the link (see
// the top of the file): a partial command of the stream never completes.
const failoverDrainMax = 200 * time.Millisecond

// failoverWaitsForLink reports whether argv, a PSYNC ... FAILOVER, must
// wait for the link first (dispatch's process, on a replica only). A
// client it waited for once goes on (failoverDrained).
func (cl *Client) failoverWaitsForLink(argv [][]byte) bool {
	if len(argv) != 4 || cl.rep != nil || !shard.EqualFold(argv[0], "psync") || !shard.EqualFold(argv[3], "failover") {
		return false
	}
	if cl.failoverDrained {
		cl.failoverDrained = false
		return false
	}
	return cl.srv.rs.linkUndrained()
}

// linkUndrained reports whether the link has received stream bytes it has
// not applied: read and not yet applied, or still in its socket.
func (rs *replicaSide) linkUndrained() bool {
	if rs.state.Load() != rlConnected {
		return false
	}
	if rs.readOff.Load() != rs.procOff.Load() {
		return true
	}
	c := rs.linkConn() // replica.go
	return c != nil && unreadBytes(c) > 0
}

// unreadBytes is what the kernel holds for c to read (SIOCINQ; for TLS,
// the encrypted bytes), 0 when unknown.
func unreadBytes(c net.Conn) int {
	n := 0
	rawControl(c, func(fd uintptr) { // replica.go
		n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	})
	return n
}

// waitForLink postpones the client's PSYNC FAILOVER until the link has
// applied what it received (or failoverDrainMax): the client waits as a
// keyless waiter, its command left in its input, and takes it up again
// with failoverDrained set.
func (cl *Client) waitForLink(argv [][]byte) {
	srv := cl.srv
	w := cl.waitPostponed(argv, func(*waiter) { cl.failoverDrained = true }) // pause.go
	go func() {
		end := time.Now().Add(failoverDrainMax)
		// Two quiet looks in a row: a read between the socket's count
		// and the offsets' would pass one.
		for quiet := 0; quiet < 2 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
			if srv.rs.linkUndrained() {
				quiet = 0
			} else {
				quiet++
			}
		}
		if w.state.CompareAndSwap(wWaiting, wDone) {
			_ = cl.loop.post(w.deliverRun)
		}
	}()
}
