package server

// The replica side of replication (Redis's replication.c, the slave half).
//
// REPLICAOF host port (or replicaof in the config) starts a link goroutine.
// It dials the master, runs the handshake (PING, AUTH with masterauth and
// masteruser, REPLCONF listening-port, REPLCONF capa eof capa psync2) and
// asks PSYNC <replid> <offset+1>, or PSYNC ? -1 when this server has no
// history the master could continue.
//
//   - +FULLRESYNC <id> <off>: the payload ($<len> or the disk-less
//     $EOF:<mark> ... <mark> form) is written to a temp file in dir (then
//     renamed to dbfilename, as Redis does), and loaded into the live
//     shards with every loop parked, as DEBUG RELOAD does: the shards are
//     flushed, the file read (rdbload.go), the function libraries replaced,
//     and srv.repl starts the master's history (resetTo). With appendonly
//     yes an AOF rewrite follows, so that the log holds the new data set.
//   - +CONTINUE [<id>]: the data set stays; a new id shifts the history.
//
// Then the stream. The bytes the master sends are handed, a read at a time,
// to the master client: an internal client of loop 0 with no connection,
// whose input runs through the ordinary parse, route and dispatch, so that
// commands reach every shard by the normal hops and MULTI ... EXEC blocks
// are cross-shard transactions, atomic as any client's (contract 3); its
// writes are logged by this server's AOF as any client's. Its replies are
// dropped, except REPLCONF GETACK, which the link answers with REPLCONF
// ACK <offset>; the link also sends an ACK every second.
//
// Offsets. The master client counts the bytes it was fed and those that
// belong to fully applied commands (not while a MULTI is open: the block
// counts at its EXEC, as Redis's reploff). Applied bytes are appended to
// srv.repl's stream verbatim (appendRaw) when its replies are written, so
// this server's offset, backlog and sub-replicas' stream are its master's
// byte for byte (PSYNC2). When the link drops, the master client drops
// what it had not applied (a partial command, an open MULTI), and the next
// PSYNC asks for the byte after the last applied one.
//
// Backpressure: the link goroutine hands at most feedChunks reads to the
// loop before the loop has run them through; a read buffer is reused only
// once its read was consumed, so the stream costs no allocation per read.
//
// On the replica, ordinary clients get -READONLY for writes (replica-read-
// only yes) and -MASTERDOWN while the link is down (replica-serve-stale-data
// no); with replica-ignore-maxmemory yes the replica neither evicts nor
// refuses for maxmemory (Redis's isSafeToPerformEvictions). The master
// client bypasses all of these and the MISCONF checks (Redis panics on a
// replica that cannot write its AOF unless repl-ignore-disk-write-error;
// redshard applies the command and logs a warning, the writer keeps
// retrying).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/redshard/redshard/failpoint"
	"github.com/redshard/redshard/shard"
)

// Link states (Redis's repl_state, as ROLE names them).
const (
	rlNone int32 = iota
	rlConnect
	rlConnecting
	rlHandshake
	rlTransfer
	rlConnected
)

var rlStateNames = [...]string{"none", "connect", "connecting", "handshake", "sync", "connected"}

const (
	feedChunks    = 4
	feedChunkSize = 64 << 10
)

// replicaSide is the state of this server as a replica (srv.rs).
type replicaSide struct {
	// bootIDs: the RDB loaded at start carried a replication id and
	// offset (repl-id, repl-offset aux fields) and srv.repl holds them, so
	// the first PSYNC can continue them; bootDB is the stream's database
	// then (repl-stream-db), -1 once used.
	bootIDs atomic.Bool
	bootDB  atomic.Int64

	mu   sync.Mutex
	gen  uint64 // bumped by every REPLICAOF: a link of an older gen stops
	host string
	port int
	conn net.Conn      // the current link's socket, nil if none
	quit chan struct{} // closed when the current link must stop
	done chan struct{} // closed when the current link goroutine returned
	mc   *Client       // the master client (loop 0), kept across links

	state     atomic.Int32
	downSince atomic.Int64 // unix seconds since the link is down; 0: unknown
	lastIO    atomic.Int64 // unix seconds of the last read from the master
	readOff   atomic.Int64 // slave_read_repl_offset
	procOff   atomic.Int64 // slave_repl_offset (the master client's reploff)
	hasOff    atomic.Bool  // the offsets above are known
	psyncable atomic.Bool  // the data set goes with srv.repl's ids: PSYNC can continue
	// asyncLoading: a full sync loads beside the data served (replica_load.go).
	asyncLoading atomic.Bool
	xferSize     atomic.Int64 // a full sync's payload: -1 while unknown (EOF form)
	xferRead     atomic.Int64
	xferIO       atomic.Int64

	readOnly, serveStale, ignoreMaxmem *atomic.Bool
}

// masterFeed is the master client's stream state; loop 0 owns it.
type masterFeed struct {
	srv     *Server
	cl      *Client
	base    int64 // the stream offset before the first byte fed
	fed     int64 // bytes given to the client since base
	applied int64 // bytes of fully applied commands since base
	// stopSeen: a command found the stream stopped and was dropped with
	// the rest, from stopAt on.
	stopSeen bool
	stopAt   int64
	flushed  int64 // bytes appended to srv.repl since base
	pending  []byte
	sem      chan struct{} // a token per read handed to the loop and not yet consumed
	held     int           // reads run by the loop whose tokens are not yet returned
	stop     atomic.Bool   // drop the input: the link ended
	broken   bool          // a protocol error closed the link
	ackNow   chan struct{} // REPLCONF GETACK wants an ACK
	chunks   [feedChunks]feedChunk
}

type feedChunk struct {
	rm  *masterFeed
	buf []byte
	n   int
	run gnet.Runnable
}

// initReplica prepares the replica side: the master client and, if the
// config names a master, the replica role (the link starts with
// startReplicaAtBoot, once the loops run).
func (srv *Server) initReplica() {
	rs := &srv.rs
	rs.readOnly = cfgByOpt["replica-read-only"].b(srv.cfg)
	rs.serveStale = cfgByOpt["replica-serve-stale-data"].b(srv.cfg)
	rs.ignoreMaxmem = cfgByOpt["replica-ignore-maxmemory"].b(srv.cfg)
	cl := srv.newSysClient()
	cl.id = srv.nextClientID.Add(1)
	rm := &masterFeed{srv: srv, cl: cl, sem: make(chan struct{}, feedChunks), ackNow: make(chan struct{}, 1)}
	for i := range rm.chunks {
		c := &rm.chunks[i]
		c.rm = rm
		c.buf = make([]byte, feedChunkSize)
		c.run = gnet.RunnableFunc(c.apply)
	}
	rm.stop.Store(true)
	cl.rm = rm
	rs.mc = cl
	if srv.cfg.replHost.Load() != "" {
		srv.repl.isReplica.Store(true)
		rs.state.Store(rlConnect)
		srv.log.SetRole('S')
		srv.setOOMScoreAdj()
	}
}

// startReplicaAtBoot starts the link the config asked for.
func (srv *Server) startReplicaAtBoot() {
	if h := srv.cfg.replHost.Load(); h != "" {
		srv.replicaSet(h, int(srv.cfg.replPort.Load()), false)
	}
}

// replicaLinkUp reports whether this server is a replica whose link is up
// (a sub-replica's PSYNC is refused while it is not).
func (srv *Server) replicaLinkUp() bool {
	return srv.repl.isReplica.Load() && srv.rs.state.Load() == rlConnected
}

// replIgnoresMaxmemory: a replica with replica-ignore-maxmemory yes neither
// evicts nor refuses commands for maxmemory.
func (srv *Server) replIgnoresMaxmemory() bool {
	return srv.repl.isReplica.Load() && srv.rs.ignoreMaxmem != nil && srv.rs.ignoreMaxmem.Load()
}

// stopLinkLocked ends the current link (its goroutine drains the master
// client and returns); rs.mu is held. It returns the goroutine's done.
func (rs *replicaSide) stopLinkLocked() chan struct{} {
	rs.gen++
	if rs.quit != nil {
		close(rs.quit)
		rs.quit = nil
	}
	if rs.conn != nil {
		_ = rs.conn.Close()
		rs.conn = nil
	}
	if rs.mc != nil {
		rs.mc.rm.stop.Store(true)
	}
	return rs.done
}

// replicaSet makes this server a replica of host:port (REPLICAOF, with
// every loop parked, or the config at start). runtime: a REPLICAOF, after
// which PSYNC may continue this server's own history.
func (srv *Server) replicaSet(host string, port int, runtime bool) {
	rs := &srv.rs
	wasMaster := !srv.repl.isReplica.Load()
	if runtime && rs.mc != nil {
		rs.mc.rm.flushApplied() // every loop is parked
	}
	rs.mu.Lock()
	prev := rs.stopLinkLocked()
	rs.host, rs.port = host, port
	gen := rs.gen
	quit, done := make(chan struct{}), make(chan struct{})
	rs.quit, rs.done = quit, done
	rs.mu.Unlock()
	srv.cfg.replHost.Store(host)
	srv.cfg.replPort.Store(int64(port))
	if wasMaster {
		rs.psyncable.Store(runtime || rs.bootIDs.Load()) // Redis's replicationCacheMasterUsingMyself
		rs.hasOff.Store(false)
		rs.downSince.Store(0)
	} else if rs.state.Load() == rlConnected {
		rs.downSince.Store(time.Now().Unix())
	}
	rs.state.Store(rlConnect)
	srv.repl.isReplica.Store(true)
	srv.setOOMScoreAdj() // the replica class of oom-score-adj-values
	if runtime && wasMaster {
		srv.disconnectBlocked()
	}
	// Its own replicas stay: they may continue partially with the new
	// history (Redis's replicationSetMaster); a new id or a full sync
	// drops them.
	srv.log.SetRole('S')
	go srv.replLinkRun(gen, host, port, prev, quit, done)
}

// disconnectBlocked answers every blocked client (but the ones CLIENT
// PAUSE holds) with Redis's error and closes it: a master that becomes a
// replica can serve them no more (Redis's disconnectAllBlockedClients).
// Every loop is parked.
func (srv *Server) disconnectBlocked() {
	const msg = "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"
	for _, cl := range srv.allClients() {
		w := cl.blocked
		if w == nil || w.delivered || w.postponed {
			continue // not blocked, or postponed by CLIENT PAUSE
		}
		if !w.state.CompareAndSwap(wWaiting, wCancelled) {
			continue
		}
		w.unblockMsg = msg
		cl.endWaitAtHome(w)
	}
}

// replicaUnset is REPLICAOF NO ONE: the link ends, the data stays, and a
// new history starts at the current offset; every loop is parked.
func (srv *Server) replicaUnset() {
	rs := &srv.rs
	if rs.mc != nil {
		rs.mc.rm.flushApplied()
	}
	rs.mu.Lock()
	rs.stopLinkLocked()
	rs.host, rs.port = "", 0
	rs.quit, rs.done = nil, nil
	rs.mu.Unlock()
	srv.cfg.replHost.Store("")
	srv.cfg.replPort.Store(0)
	srv.repl.isReplica.Store(false)
	srv.setOOMScoreAdj() // back to the master class
	srv.repl.shiftIDs("")
	// Its replicas reconnect to learn the new id, and continue partially
	// (Redis's replicationUnsetMaster).
	srv.dropReplicas()
	srv.repl.mu.Lock()
	srv.repl.db = -1 // the new master's stream starts with a SELECT
	srv.repl.mu.Unlock()
	rs.state.Store(rlNone)
	rs.hasOff.Store(false)
	rs.psyncable.Store(true)
	srv.log.SetRole('M')
}

// current reports whether gen is the current link.
func (rs *replicaSide) current(gen uint64) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.gen == gen
}

var errLinkStale = errors.New("the link was replaced")

// replLinkRun is a link's goroutine: sessions with the master until the
// link is replaced or the server stops, a second apart.
func (srv *Server) replLinkRun(gen uint64, host string, port int, prev, quit, done chan struct{}) {
	defer close(done)
	if prev != nil {
		<-prev // the previous link has drained the master client
	}
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-quit:
		case <-srv.stopCh:
		}
		return false
	}
	for srv.loading() {
		if !wait(100 * time.Millisecond) {
			return
		}
	}
	for {
		select {
		case <-quit:
			return
		case <-srv.stopCh:
			return
		default:
		}
		srv.log.Noticef("Connecting to MASTER %s:%d", host, port)
		err := srv.replSession(gen, host, port, quit)
		if errors.Is(err, errLinkStale) {
			return
		}
		if err != nil {
			srv.log.Warningf("%v", err)
		}
		if !wait(time.Second) {
			return
		}
	}
}

// linkReader reads the link with repl-timeout as deadline for each read.
type linkReader struct {
	c       net.Conn
	timeout time.Duration
	rs      *replicaSide
	xfer    bool
}

func (r *linkReader) Read(p []byte) (int, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(r.timeout))
	n, err := r.c.Read(p)
	if n > 0 {
		now := time.Now().Unix()
		r.rs.lastIO.Store(now)
		if r.xfer {
			r.rs.xferIO.Store(now)
		}
	}
	return n, err
}

func (srv *Server) replTimeout() time.Duration {
	secs, _ := strconv.Atoi(srv.cfg.getOr("repl-timeout", "60"))
	if secs < 1 {
		secs = 1
	}
	return time.Duration(secs) * time.Second
}

// getOr is an option's value, or def.
func (c *Config) getOr(name, def string) string {
	if v, ok := c.GetValue(name); ok {
		return v
	}
	return def
}

// replSession is one connection to the master: handshake, sync, stream.
func (srv *Server) replSession(gen uint64, host string, port int, quit chan struct{}) error {
	rs := &srv.rs
	rm := rs.mc.rm
	timeout := srv.replTimeout()
	for srv.load.active.Load() { // the data set loaded at start comes first, its ids with it
		select {
		case <-quit:
			return errLinkStale
		case <-time.After(10 * time.Millisecond):
		}
	}
	rs.state.Store(rlConnecting)
	d := net.Dialer{Timeout: timeout}
	if src := srv.cfg.getOr("bind-source-addr", ""); src != "" {
		// The link leaves from this address (Redis's bind-source-addr).
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	conn, err := d.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		rs.state.Store(rlConnect)
		return fmt.Errorf("Error condition on socket for SYNC: %v", err)
	}
	if srv.cfg.TLSReplication() { // the link is TLS (tls.go)
		if conn, err = srv.tlsDial(conn, host, timeout); err != nil {
			rs.state.Store(rlConnect)
			return fmt.Errorf("Error condition on socket for SYNC: %v", err)
		}
	}
	rs.mu.Lock()
	if rs.gen != gen {
		rs.mu.Unlock()
		conn.Close()
		return errLinkStale
	}
	rs.conn = conn
	rs.mu.Unlock()
	ended := make(chan struct{})
	defer func() {
		close(ended)
		rs.mu.Lock()
		if rs.conn == conn {
			rs.conn = nil
		}
		rs.mu.Unlock()
		conn.Close()
		if rs.current(gen) {
			if rs.state.Load() == rlConnected {
				srv.log.Noticef("Connection with master lost.")
				rs.downSince.Store(time.Now().Unix())
			}
			rs.state.Store(rlConnect)
		}
	}()
	go func() {
		select {
		case <-srv.stopCh:
			conn.Close()
		case <-ended:
		}
	}()
	srv.log.Noticef("MASTER <-> REPLICA sync started")
	rs.state.Store(rlHandshake)
	lr := &linkReader{c: conn, timeout: timeout, rs: rs}
	br := bufio.NewReaderSize(lr, feedChunkSize)
	h := replHello{
		auth:   srv.cfg.getOr("masterauth", ""),
		user:   srv.cfg.getOr("masteruser", ""),
		ip:     srv.cfg.getOr("replica-announce-ip", ""),
		port:   srv.cfg.Port(),
		replid: "?",
		off:    -1,
	}
	if srv.cfg.TLSReplication() && srv.cfg.TLSPort() != 0 {
		h.port = srv.cfg.TLSPort() // as Redis: the port a TLS link reaches it on
	}
	if p, _ := strconv.Atoi(srv.cfg.getOr("replica-announce-port", "0")); p != 0 {
		h.port = p
	}
	if rs.psyncable.Load() {
		id, _, off, _ := srv.repl.ids()
		h.replid, h.off = id, off+1
	} else {
		srv.log.Noticef("Partial resynchronization not possible (no cached master)")
	}
	w := &deadlineWriter{c: conn, timeout: timeout}
	h.failover = srv.fo.state.Load() == foInProgress
	res, err := replHandshake(br, w, h, srv.log)
	if h.failover && rs.current(gen) {
		var refused errPsyncRefused
		switch {
		case err == nil:
			srv.failoverPsync(true, "")
		case errors.As(err, &refused):
			srv.failoverPsync(false, "Failover target rejected psync request")
		case strings.HasPrefix(err.Error(), "Error writing to MASTER"):
			srv.failoverPsync(false, "Write error to failover target")
		}
	}
	if err != nil {
		if isTimeout(err) {
			return errors.New("Timeout connecting to the MASTER...") // Redis's words
		}
		return err
	}
	if !rs.current(gen) {
		return errLinkStale
	}
	if res.full {
		srv.log.Noticef("Full resync from master: %s:%d", res.replid, res.off)
		if err := srv.replFullSync(gen, br, lr, res); err != nil {
			if isTimeout(err) {
				return errors.New("Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.")
			}
			return err
		}
		srv.log.Noticef("MASTER <-> REPLICA sync: Finished with success")
		srv.sdNotify("STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.")
	} else {
		srv.log.Noticef("Successful partial resynchronization with master.")
		if res.newID != "" {
			id, _, _, _ := srv.repl.ids()
			if res.newID != id {
				srv.repl.shiftIDs(res.newID)
				srv.dropReplicas() // they continue with the new id (repl_master.go)
				srv.log.Noticef("Master replication ID changed to %s", res.newID)
			}
		}
		srv.log.Noticef("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
		_, _, off, _ := srv.repl.ids()
		if !srv.onLoop0(func() { rm.begin(off, false) }) {
			return errLinkStale
		}
	}
	rs.lastIO.Store(time.Now().Unix())
	rs.state.Store(rlConnected)
	rs.downSince.Store(0)
	rs.hasOff.Store(true)
	err = srv.replStream(br, w, quit)
	srv.replDrain(rm)
	if !rs.current(gen) {
		return errLinkStale
	}
	return err
}

// deadlineWriter writes the link with repl-timeout as deadline.
type deadlineWriter struct {
	mu      sync.Mutex
	c       net.Conn
	timeout time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.c.Write(p)
}

// replHello is what the handshake says to the master.
type replHello struct {
	auth, user string
	ip         string
	port       int
	replid     string // "?" for none
	off        int64  // the PSYNC offset argument
	failover   bool   // PSYNC ... FAILOVER: the target takes over (failover.go)
}

// errPsyncRefused: the master answered PSYNC with an error.
type errPsyncRefused struct{ msg string }

func (e errPsyncRefused) Error() string { return e.msg }

// psyncReply is the master's answer to PSYNC.
type psyncReply struct {
	full   bool
	replid string
	off    int64
	newID  string // +CONTINUE <id>
}

// appendCommand appends a RESP command.
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// readReplyLine reads one line of the master's, skipping the empty lines a
// master sends to keep the link alive while it prepares a reply.
func readReplyLine(br *bufio.Reader) (string, error) {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return "", errors.New("Error reading from MASTER: line too long")
			}
			// %w: a read past repl-timeout is told apart (isTimeout), so
			// the handshake's reads say Redis's "Timeout connecting to the
			// MASTER..." (a master stopped by DEBUG SLEEP sends no newline).
			return "", fmt.Errorf("Error reading from MASTER: %w", err)
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s != "" {
			return s, nil
		}
	}
}

// replHandshake runs the handshake up to the PSYNC reply.
func replHandshake(br *bufio.Reader, w io.Writer, h replHello, log *Logger) (psyncReply, error) {
	var res psyncReply
	send := func(args ...string) (string, error) {
		if _, err := w.Write(appendCommand(nil, args...)); err != nil {
			return "", fmt.Errorf("Error writing to MASTER: %w", err)
		}
		return readReplyLine(br)
	}
	line, err := send("PING")
	if err != nil {
		return res, err
	}
	if line[0] == '-' && !strings.HasPrefix(line, "-NOAUTH") && !strings.HasPrefix(line, "-NOPERM") &&
		!strings.HasPrefix(line, "-ERR operation not permitted") {
		return res, fmt.Errorf("Error reply to PING from master: '%s'", line)
	}
	log.Noticef("Master replied to PING, replication can continue...")
	if h.auth != "" {
		args := []string{"AUTH", h.auth}
		if h.user != "" {
			args = []string{"AUTH", h.user, h.auth}
		}
		if line, err = send(args...); err != nil {
			return res, err
		}
		if line[0] == '-' {
			return res, fmt.Errorf("Unable to AUTH to MASTER: %s", line)
		}
	}
	if line, err = send("REPLCONF", "listening-port", strconv.Itoa(h.port)); err != nil {
		return res, err
	}
	if line[0] == '-' {
		log.Noticef("(Non critical) Master does not understand REPLCONF listening-port: %s", line)
	}
	if h.ip != "" {
		if line, err = send("REPLCONF", "ip-address", h.ip); err != nil {
			return res, err
		}
		if line[0] == '-' {
			log.Noticef("(Non critical) Master does not understand REPLCONF ip-address: %s", line)
		}
	}
	if line, err = send("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return res, err
	}
	if line[0] == '-' {
		log.Noticef("(Non critical) Master does not understand REPLCONF capa: %s", line)
	}
	if h.replid != "?" {
		log.Noticef("Trying a partial resynchronization (request %s:%d).", h.replid, h.off)
	}
	psync := []string{"PSYNC", h.replid, strconv.FormatInt(h.off, 10)}
	if h.failover {
		psync = append(psync, "FAILOVER")
	}
	if line, err = send(psync...); err != nil {
		return res, err
	}
	return parsePsyncReply(line)
}

// parsePsyncReply reads the PSYNC reply line.
func parsePsyncReply(line string) (psyncReply, error) {
	var res psyncReply
	switch {
	case strings.HasPrefix(line, "+FULLRESYNC"):
		f := strings.Fields(line[len("+FULLRESYNC"):])
		if len(f) != 2 || len(f[0]) != 40 {
			return res, errors.New("Master replied with wrong +FULLRESYNC syntax.")
		}
		off, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || off < 0 {
			return res, errors.New("Master replied with wrong +FULLRESYNC syntax.")
		}
		res.full, res.replid, res.off = true, f[0], off
		return res, nil
	case strings.HasPrefix(line, "+CONTINUE"):
		id := strings.TrimSpace(line[len("+CONTINUE"):])
		if len(id) == 40 {
			res.newID = id
		}
		return res, nil
	case strings.HasPrefix(line, "-NOMASTERLINK"), strings.HasPrefix(line, "-LOADING"):
		return res, errPsyncRefused{"Master is currently unable to PSYNC but should be in the future: " + line}
	}
	return res, errPsyncRefused{"Unexpected reply to PSYNC from master: " + line}
}

// readPayload copies a full sync's RDB payload to w: "$<len>\r\n" and len
// bytes, or "$EOF:<40 bytes>\r\n", the bytes, and the 40 bytes again.
// progress is called with the bytes read so far, and once with -1 as the
// total size when it is not known.
func readPayload(br *bufio.Reader, w io.Writer, progress func(read, total int64)) error {
	line, err := readReplyLine(br)
	if err != nil {
		return err
	}
	if line[0] == '-' {
		return fmt.Errorf("MASTER aborted replication with an error: %s", line[1:])
	}
	if line[0] != '$' {
		return fmt.Errorf("Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and port are right?", line)
	}
	if strings.HasPrefix(line, "$EOF:") && len(line) >= 5+40 {
		mark := []byte(line[5 : 5+40])
		progress(0, -1)
		var read int64
		buf := make([]byte, feedChunkSize)
		carry := make([]byte, 0, 2*len(mark))
		for {
			n, err := br.Read(buf)
			if n > 0 {
				read += int64(n)
				progress(read, -1)
				data := buf[:n]
				if len(carry) > 0 {
					data = append(carry, buf[:n]...)
				}
				if bytes.HasSuffix(data, mark) {
					if _, werr := w.Write(data[:len(data)-len(mark)]); werr != nil {
						return werr
					}
					return nil
				}
				keep := min(len(data), len(mark))
				if _, werr := w.Write(data[:len(data)-keep]); werr != nil {
					return werr
				}
				carry = append(carry[:0], data[len(data)-keep:]...)
			}
			if err != nil {
				return fmt.Errorf("I/O error trying to sync with MASTER: %v", err)
			}
		}
	}
	size, perr := strconv.ParseInt(line[1:], 10, 64)
	if perr != nil || size < 0 {
		return fmt.Errorf("Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and port are right?", line)
	}
	progress(0, size)
	var read int64
	buf := make([]byte, feedChunkSize)
	for read < size {
		n, err := br.Read(buf[:min(int64(len(buf)), size-read)])
		if n > 0 {
			read += int64(n)
			progress(read, size)
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil && read < size {
			return fmt.Errorf("I/O error trying to sync with MASTER: %v", err)
		}
	}
	return nil
}

// replFullSync receives the payload to a file and loads it.
func (srv *Server) replFullSync(gen uint64, br *bufio.Reader, lr *linkReader, res psyncReply) error {
	rs := &srv.rs
	rs.state.Store(rlTransfer)
	rs.xferRead.Store(0)
	rs.xferSize.Store(-1)
	rs.xferIO.Store(time.Now().Unix())
	lr.xfer = true
	defer func() { lr.xfer = false }()
	if srv.disklessLoad() {
		return srv.replSocketLoad(gen, br, res) // replica_load.go
	}
	dir := srv.cfg.Dir()
	tmp := filepath.Join(dir, fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid()))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("Opening the temp file needed for MASTER <-> REPLICA synchronization: %v", err)
	}
	err = readPayload(br, f, srv.xferProgress("disk"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	final := srv.rdbPath()
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %v", filepath.Base(final), err)
	}
	// The master client is idle and empty (drained at the last link's end).
	var loadErr error
	stale := false
	rm := rs.mc.rm
	perr := srv.parkAll(func() {
		if !rs.current(gen) {
			stale = true
			return
		}
		if srv.save.active.Load() {
			srv.abortSnapshot()
		}
		srv.abortRewrite()
		srv.log.Noticef("MASTER <-> REPLICA sync: Flushing old data")
		for _, sh := range srv.shards {
			sh.FlushAll()
		}
		srv.funcs.flush()
		srv.log.Noticef("MASTER <-> REPLICA sync: Loading DB in memory")
		loadErr = srv.reloadRDBFile(final, false)
		if loadErr != nil {
			for _, sh := range srv.shards {
				sh.FlushAll()
			}
			srv.funcs.flush()
			rs.psyncable.Store(false)
			return
		}
		srv.repl.resetTo(res.replid, res.off)
		srv.dropReplicas() // a new history: sub-replicas sync again
		rs.psyncable.Store(true)
		rm.begin(res.off, true) // loop 0 is parked
	})
	if perr != nil || stale {
		return errLinkStale
	}
	if loadErr != nil {
		return fmt.Errorf("Failed trying to load the MASTER synchronization DB from disk, check server logs: %v", loadErr)
	}
	if srv.cfg.boolOr("rdb-del-sync-files", false) && srv.cfg.PersistenceOff() {
		// Nothing is meant to persist here: the file goes (Redis's
		// readSyncBulkPayload).
		srv.log.Noticef("Removing the RDB file obtained from the master. This replica has persistence disabled")
		_ = os.Remove(final)
	}
	if srv.persist != nil {
		// The log must hold the new data set (Redis's restartAOFAfterSYNC).
		srv.sysRequest(bgrewriteaofRequest)
	}
	return nil
}

// xferProgress is readPayload's progress callback for a full sync going
// to dest ("disk" or "parser"): INFO's master_sync_* fields and Redis's
// first log line.
func (srv *Server) xferProgress(dest string) func(read, total int64) {
	rs := &srv.rs
	logged := false
	return func(read, total int64) {
		rs.xferRead.Store(read)
		if logged {
			return
		}
		logged = true
		rs.xferSize.Store(total)
		if total < 0 {
			srv.log.Noticef("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to %s", dest)
		} else {
			srv.log.Noticef("MASTER <-> REPLICA sync: receiving %d bytes from master to %s", total, dest)
		}
	}
}

// onLoop0 runs fn on loop 0 and waits for it; false if the loops stop.
func (srv *Server) onLoop0(fn func()) bool {
	done := make(chan struct{})
	err := srv.loops[0].post(gnet.RunnableFunc(func(context.Context) error {
		fn()
		close(done)
		return nil
	}))
	if err != nil {
		return false
	}
	select {
	case <-done:
		return true
	case <-srv.stopCh:
		return false
	}
}

// replStream feeds the master's stream to the master client until the
// link fails or ends, and sends REPLCONF ACK every second.
func (srv *Server) replStream(br *bufio.Reader, w io.Writer, quit chan struct{}) error {
	rs := &srv.rs
	rm := rs.mc.rm
	ackQuit := make(chan struct{})
	defer close(ackQuit)
	sendAck := func() error {
		_, err := w.Write(appendCommand(nil, "REPLCONF", "ACK", strconv.FormatInt(rs.procOff.Load(), 10)))
		return err
	}
	_ = sendAck()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-rm.ackNow:
			case <-ackQuit:
				return
			}
			if sendAck() != nil {
				return
			}
		}
	}()
	l0 := srv.loops[0]
	for i := 0; ; i++ {
		select {
		case rm.sem <- struct{}{}:
		case <-quit:
			return nil
		case <-srv.stopCh:
			return nil
		}
		c := &rm.chunks[i%feedChunks]
		n, err := br.Read(c.buf)
		if n > 0 {
			rs.readOff.Add(int64(n))
			c.n = n
			failpoint.Inject(failpoint.ReplFeed)
			if l0.post(c.run) != nil {
				return nil
			}
		} else {
			<-rm.sem
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return errors.New("MASTER timeout: no data nor PING received...")
			}
			return err
		}
	}
}

// replDrain stops the master client's stream and drops what it did not
// apply, once no hop of it is out.
func (srv *Server) replDrain(rm *masterFeed) {
	rm.stop.Store(true)
	for {
		ok := false
		if !srv.onLoop0(func() { ok = rm.reset() }) || ok {
			return
		}
		select {
		case <-srv.stopCh:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// apply runs on loop 0: the read goes to the master client.
func (c *feedChunk) apply(context.Context) error {
	rm := c.rm
	cl := rm.cl
	rm.held++
	if rm.stop.Load() {
		rm.giveBack()
		return nil
	}
	p := c.buf[:c.n]
	rm.pending = append(rm.pending, p...)
	rm.fed += int64(len(p))
	cl.onData(p)
	cl.loop.endEvent()
	return nil
}

// giveBack returns the tokens of the reads run through.
func (rm *masterFeed) giveBack() {
	for ; rm.held > 0; rm.held-- {
		<-rm.sem
	}
}

// begin starts a stream at offset base (loop 0, or every loop parked).
func (rm *masterFeed) begin(base int64, full bool) {
	rm.base = base
	rm.fed, rm.applied, rm.flushed = 0, 0, 0
	rm.stopSeen, rm.stopAt = false, 0
	rm.pending = rm.pending[:0]
	rm.broken = false
	if full {
		rm.cl.db = 0
	} else if db := rm.srv.rs.bootDB.Swap(-1); db >= 0 {
		rm.cl.db = int(db) // continuing the history of the RDB loaded at start
	}
	rm.srv.rs.procOff.Store(base)
	rm.srv.rs.readOff.Store(base)
	rm.stop.Store(false)
}

// step is called by Client.process before each command of the master
// client: the input before rest is applied. It reports whether the stream
// stopped (the rest is dropped).
func (rm *masterFeed) step(rest int) bool {
	if !rm.cl.multi.active {
		rm.applied = rm.fed - int64(rest)
	}
	if rm.stop.Load() {
		if !rm.stopSeen {
			rm.stopSeen, rm.stopAt = true, rm.fed-int64(rest) // nothing from here on runs
		}
		return true
	}
	return false
}

// replconf handles REPLCONF from the master (GETACK; anything else is
// ignored, as a replica does).
func (rm *masterFeed) replconf(argv [][]byte) {
	if len(argv) >= 2 && shard.EqualFold(argv[1], "getack") {
		rm.srv.rs.procOff.Store(rm.base + rm.applied)
		select {
		case rm.ackNow <- struct{}{}:
		default:
		}
	}
}

// settle is called when the master client's replies would be written:
// what is applied goes to srv.repl, and the reads run through give their
// tokens back.
func (rm *masterFeed) settle() {
	cl := rm.cl
	if cl.hopOut {
		return
	}
	rm.countApplied()
	rm.flushApplied()
	rm.giveBack()
	if cl.closing && !rm.broken {
		// A protocol error in the stream: the link is dropped.
		rm.broken = true
		rm.stop.Store(true)
		rs := &rm.srv.rs
		rs.mu.Lock()
		if rs.conn != nil {
			_ = rs.conn.Close()
		}
		rs.mu.Unlock()
	}
}

// countApplied brings applied to the end of what the master client ran,
// with no hop out: everything consumed, up to where a stop dropped the
// rest. An EXEC that ended the input counts even if the link went down
// before this (else the partial resync would run its block again); an open
// MULTI does not.
func (rm *masterFeed) countApplied() {
	cl := rm.cl
	if cl.multi.active {
		return
	}
	if rm.stopSeen {
		rm.applied = min(rm.stopAt, rm.fed-int64(len(cl.qbuf)))
	} else {
		rm.applied = rm.fed - int64(len(cl.qbuf))
	}
}

// flushApplied appends the applied bytes to srv.repl's stream.
func (rm *masterFeed) flushApplied() {
	d := rm.applied - rm.flushed
	if d <= 0 {
		return
	}
	if rm.srv.repl.isReplica.Load() {
		rm.srv.repl.appendRaw(rm.pending[:d])
	}
	n := copy(rm.pending, rm.pending[d:])
	rm.pending = rm.pending[:n]
	rm.flushed = rm.applied
	rm.srv.rs.procOff.Store(rm.base + rm.applied)
}

// reset drops the master client's unapplied input at the end of a link
// (Redis's replicationCacheMaster); false while a hop of it is out.
func (rm *masterFeed) reset() bool {
	cl := rm.cl
	if cl.hopOut {
		return false
	}
	rm.countApplied()
	rm.flushApplied()
	cl.qbuf = nil
	cl.parser.Reset()
	cl.resetOwnBuf()
	if cl.multi.active {
		cl.discardMulti(1 << uint(cl.loop.id))
	}
	cl.closing = false
	cl.out = cl.out[:0]
	rm.base += rm.applied
	rm.fed, rm.applied, rm.flushed = 0, 0, 0
	rm.pending = rm.pending[:0]
	rm.giveBack()
	return true
}

// Commands.

var replicaCommands = []serverCmd{
	{name: "replicaof", exec: cmdReplicaof, allShards: true},
	{name: "slaveof", exec: cmdReplicaof, allShards: true},
	{name: "role", exec: cmdRole, home: true},
}

// cmdReplicaof is REPLICAOF host port | NO ONE (and SLAVEOF), with every
// loop parked.
func cmdReplicaof(x *Exec, argv [][]byte) {
	srv := x.srv
	who := ""
	if x.cl != nil {
		who = x.cl.infoLine()
	}
	if srv.fo.state.Load() != foNone {
		x.Err("ERR REPLICAOF not allowed while failing over.")
		return
	}
	if shard.EqualFold(argv[1], "no") && shard.EqualFold(argv[2], "one") {
		if srv.repl.isReplica.Load() {
			srv.replicaUnset()
			srv.log.Noticef("MASTER MODE enabled (user request from '%s')", who)
		}
		x.OK()
		return
	}
	port, err := strconv.ParseInt(string(argv[2]), 10, 64)
	if err != nil || port < 0 || port > 65535 {
		x.Err("ERR Invalid master port")
		return
	}
	host := string(argv[1])
	if srv.repl.isReplica.Load() && strings.EqualFold(srv.cfg.replHost.Load(), host) && srv.cfg.replPort.Load() == port {
		srv.log.Noticef("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.")
		x.Simple("OK Already connected to specified master")
		return
	}
	srv.replicaSet(host, int(port), true)
	srv.log.Noticef("REPLICAOF %s:%d enabled (user request from '%s')", host, port, who)
	x.OK()
}

// cmdRole is ROLE.
func cmdRole(x *Exec, argv [][]byte) {
	srv := x.srv
	if !srv.repl.isReplica.Load() {
		_, _, off, _ := srv.repl.ids()
		var online []replicaInfo
		for _, r := range srv.connectedReplicas() {
			if r.state == "online" {
				online = append(online, r)
			}
		}
		x.Array(3)
		x.BulkStr("master")
		x.Int(off)
		x.Array(len(online))
		for _, r := range online {
			x.Array(3)
			x.BulkStr(r.ip)
			x.BulkStr(strconv.Itoa(r.port))
			x.BulkStr(strconv.FormatInt(r.offset, 10))
		}
		return
	}
	rs := &srv.rs
	st := rs.shownState()
	x.Array(5)
	x.BulkStr("slave")
	x.BulkStr(srv.cfg.replHost.Load())
	x.Int(srv.cfg.replPort.Load())
	x.BulkStr(rlStateNames[st])
	if st == rlConnected {
		x.Int(rs.procOff.Load())
	} else {
		x.Int(-1)
	}
}

// shownState is the link's state as ROLE and INFO show it: a connected
// link whose master has closed the connection (a FIN or an error waits on
// the socket) shows as down at once, before the link's goroutine has read
// it. Redis's single thread reads the master link before it serves a
// request that came later, so a client that saw the master drop the link
// (CLIENT KILL TYPE replica) never reads "up" from the replica afterwards.
func (rs *replicaSide) shownState() int32 {
	st := rs.state.Load()
	if st != rlConnected {
		return st
	}
	if c := rs.linkConn(); c != nil && peerClosed(c) {
		return rlConnect
	}
	return st
}

// linkConn is the current link's socket, nil if none.
func (rs *replicaSide) linkConn() net.Conn {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.conn
}

// peerClosed reports whether the peer of c has closed the connection or
// it failed (POLLRDHUP, POLLHUP, POLLERR), without reading from it.
func peerClosed(c net.Conn) bool {
	closed := false
	rawControl(c, func(fd uintptr) {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		if n, err := unix.Poll(p, 0); err == nil && n > 0 {
			closed = p[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
		}
	})
	return closed
}

// rawControl runs f with c's file descriptor (a TLS connection's TCP
// one), if it has one.
func rawControl(c net.Conn, f func(fd uintptr)) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			_ = raw.Control(f)
		}
	}
}

// infoReplicaFields writes a replica's fields of INFO replication, after
// role.
func (srv *Server) infoReplicaFields(w *infoWriter, now time.Time) {
	rs := &srv.rs
	st := rs.shownState()
	unix := now.Unix()
	w.str("master_host", srv.cfg.replHost.Load())
	w.int("master_port", srv.cfg.replPort.Load())
	if st == rlConnected {
		w.str("master_link_status", "up")
		w.int("master_last_io_seconds_ago", unix-rs.lastIO.Load())
	} else {
		w.str("master_link_status", "down")
		w.int("master_last_io_seconds_ago", -1)
	}
	w.int("master_sync_in_progress", b2i(st == rlTransfer))
	readOff, procOff := int64(1), int64(1)
	if rs.hasOff.Load() {
		readOff, procOff = rs.readOff.Load(), rs.procOff.Load()
	}
	w.int("slave_read_repl_offset", readOff)
	w.int("slave_repl_offset", procOff)
	if st == rlTransfer {
		size, read := rs.xferSize.Load(), rs.xferRead.Load()
		if size < 0 {
			size = 0
		}
		perc := 0.0
		if size > 0 {
			perc = float64(read) / float64(size) * 100
		}
		w.int("master_sync_total_bytes", size)
		w.int("master_sync_read_bytes", read)
		w.int("master_sync_left_bytes", size-read)
		w.str("master_sync_perc", strconv.FormatFloat(perc, 'f', 2, 64))
		w.int("master_sync_last_io_seconds_ago", unix-rs.xferIO.Load())
	}
	if st != rlConnected {
		if d := rs.downSince.Load(); d != 0 {
			w.int("master_link_down_since_seconds", unix-d)
		} else {
			w.int("master_link_down_since_seconds", -1)
		}
	}
	prio, _ := strconv.ParseInt(srv.cfg.getOr("replica-priority", "100"), 10, 64)
	w.int("slave_priority", prio)
	w.int("slave_read_only", b2i(rs.readOnly.Load()))
	w.int("replica_announced", b2i(srv.cfg.getOr("replica-announced", "yes") == "yes"))
}

// setShardFlags sets shard.Shard.ObeyMaster (the master client's command)
// and ForceExpire (a writable replica's own write) on the shards in mask
// while a command runs on them.
func (l *Loop) setShardFlags(mask uint64, obey, force bool) {
	for m := mask; m != 0; m &= m - 1 {
		sh := l.srv.shards[bits.TrailingZeros64(m)]
		sh.ObeyMaster, sh.ForceExpire = obey, force
	}
}

// isTimeout reports whether err is a deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// killMasterLink is CLIENT KILL for the link to the master, which has no
// gnet connection: ADDR (the master's address) or TYPE master closes it,
// and the link reconnects with a partial resync, as Redis's does after a
// killed master client. It returns 1 if it closed the link.
func (srv *Server) killMasterLink(f *clientKillFilter) int {
	rs := &srv.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	c := rs.conn
	if c == nil || f.id != 0 || f.hasLaddr || f.hasUser && f.user != "default" || f.maxAge != 0 {
		return 0
	}
	if f.typ >= 0 && f.typ != clientTypeMaster || !f.hasAddr && f.typ != clientTypeMaster {
		return 0
	}
	if f.hasAddr && c.RemoteAddr().String() != f.addr {
		return 0
	}
	_ = c.Close()
	return 1
}
