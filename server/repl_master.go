package server

// Replication, the master's side: REPLCONF, SYNC and PSYNC, the full sync,
// the stream to each replica, and WAIT.
//
// The stream is repl.go's: every group the log makes durable is appended
// by the log's tap (replTap) in log order, which is the total order of the
// writes across shards. With appendonly no, the first replica attaches a
// log without files (aof.OpenMemory) whose only job is that order.
//
// A replica is a client that sent SYNC or PSYNC. From then on its gnet
// connection only reads (REPLCONF ACK); everything the master sends it
// (+FULLRESYNC or +CONTINUE, the RDB, the stream) is written by one
// sender goroutine of its own on a duplicate of the socket (Conn.Dup), with
// blocking writes under repl-timeout: backpressure from a slow replica
// stops that goroutine, never a loop. Replies the loop would write to it
// are dropped, as Redis never replies to a replica.
//
// Partial resync. PSYNC <replid> <offset> continues (+CONTINUE) when
// replid is this history's and offset lies in the backlog, or replid is
// the previous history's and offset is at most second_repl_offset; the
// sender then starts at that offset in the backlog. This needs no cut.
//
// Full sync (+FULLRESYNC <replid> <offset>). The replica waits (state
// wait_bgsave) for repl-diskless-sync-delay, or until
// repl-diskless-sync-max-replicas are waiting, and until no other image is
// being taken (BGSAVE, BGREWRITEAOF: one image per shard at a time). Then,
// with every loop parked (the cut): each loop has submitted its records,
// the log's writer is waited for until it has handed every submitted
// batch to the stream, and the stream's offset at that moment is the
// replica's: the image holds every write up to it and none after. Each
// waiting replica gets +FULLRESYNC with that offset and a cursor at the
// next byte; the shards serialize the image in small steps between requests
// as for BGSAVE (snapshot.go), and it is written straight to the replicas'
// sockets (disk-less: "$EOF:<mark>\r\n", the RDB, the mark), or to
// dbfilename and then sent as "$<len>\r\n" + the file (repl-diskless-sync
// no, or a replica without capa eof: SYNC, redis-cli --rdb). After the RDB,
// the sender streams from the cursor; the bytes it needs are kept alive by
// the cursor even if the backlog has moved past them, and the replica is
// dropped when its lag passes the replica class's output buffer limit.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/bgchild"
	"github.com/redshard/redshard/shard"
)

var replMasterCommands = []serverCmd{
	{name: "psync", exec: cmdPsync, allShards: true},
	{name: "sync", exec: cmdSync, allShards: true},
	{name: "replconf", exec: cmdReplconf, home: true},
	{name: "wait", exec: cmdWait, home: true},
}

// Replica states (Redis's SLAVE_STATE_*).
const (
	repWaitBgsave int32 = iota // waiting for its full sync to start
	repSendBulk                // receiving the RDB file
	repStreamRDB               // receiving the disk-less image (shown as wait_bgsave, as Redis)
	repOnline                  // receiving the stream
)

// replica is one attached replica.
type replica struct {
	srv  *Server
	cl   *Client
	addr string // its address (ip:port of the connection)
	ip   string
	port int // REPLCONF listening-port

	capaEOF, capaPsync2 bool
	rdbOnly             bool  // REPLCONF rdb-only 1 (redis-cli --rdb): no stream after the RDB
	filtered            bool  // REPLCONF rdb-filter-only: an RDB without keys
	withFuncs           bool  // ... but with the function libraries ("functions")
	softSince           int64 // unix s since its lag is over the soft limit (repl.mu)
	prePsync            bool  // came with SYNC: no +FULLRESYNC line

	state atomic.Int32
	// writing is the unix ms at which the write in progress to it began,
	// 0 between writes (writeNow): Redis's repl_last_partial_write, set
	// only while a replica has data pending, so that a replica waiting
	// while the disk-less image is held up by another one is not taken
	// for stuck.
	writing atomic.Int64
	ack     atomic.Int64 // REPLCONF ACK offset
	ackTime atomic.Int64 // unix ms of its last ACK
	since   time.Time    // when it asked to sync

	conn net.Conn // the duplicate socket, the sender's
	// wmu orders the writes that may come from two goroutines before the
	// stream starts: the cron's keep-alive newlines and the sync's own.
	wmu sync.Mutex

	// The stream cursor: the next byte to send is blk.data[pos], at
	// offset sent+1. Set under repl.mu when the sender starts; the
	// sender's afterwards.
	blk  *replBlock
	pos  int
	sent atomic.Int64
	// holding: it has a cursor and streams (not waiting for its full sync
	// to start, not rdb-only), so the stream's bytes after sent are its
	// to send and the backlog keeps them (Redis's ref_repl_buf_node, see
	// repl.go). Set under repl.mu.
	holding atomic.Bool

	greeting string        // +FULLRESYNC or +CONTINUE line
	rdb      chan syncRDB  // the full sync's RDB, when the image is ready
	gone     chan struct{} // closed when it is dropped
	acked    chan struct{} // closed at its first ACK
	ackOnce  sync.Once
	dropped  atomic.Bool
}

// syncRDB tells a replica's sender that its RDB is ready: the disk-less
// image has been written to its socket (file ""), or the file to send.
type syncRDB struct {
	file string // send this file as $<len> (disk mode)
	data []byte // or these bytes, written whole (a filtered RDB)
	err  error
}

// replConf is what REPLCONF said before SYNC/PSYNC.
type replConf struct {
	port    int
	ip      string
	eof     bool
	psync2  bool
	rdbOnly bool
	// rdb-filter-only: filtered, the RDB holds no keys; withFuncs, it
	// holds the function libraries (the one include filter Redis 7.0 has).
	filtered, withFuncs bool
}

// replMaster is the master's side of srv.repl (guarded by repl.mu unless
// atomic).
type replMaster struct {
	replicas []*replica
	waiting  []*replica // wait_bgsave, their sync not started
	// syncFile: dump.rdb was written for a disk-based sync; with
	// rdb-del-sync-files and no persistence it is removed once no replica
	// needs it (removeSyncRDB).
	syncFile atomic.Bool
	syncing  atomic.Bool
	imaging  atomic.Bool                  // the shards serialize a disk-less sync image
	syncImg  atomic.Pointer[aof.Snapshot] // the disk-less image being sent
	eofMark  []byte                       // its end mark
	// syncChild is the child the image passes through (bgchild.go's
	// relaySync), nil without one; syncRelay is closed when all it gave
	// back has gone to the replicas. Set with every loop parked, read
	// once the image is done (remain).
	syncChild *bgchild.Child
	syncRelay chan struct{}
	syncFan   *replFan
	remain    atomic.Int32 // shards still serializing the sync image
	// diskWait are the replicas waiting for the BGSAVE of a disk-based sync.
	diskWait []*replica
	diskSave bool // the BGSAVE running was started for them (repl.mu)

	fullSyncs, partialOK, partialErr atomic.Int64

	// min-replicas-to-write: good replicas (online, ACK within
	// min-replicas-max-lag), refreshed by the cron and by CONFIG SET;
	// tooFewGood refuses writes (-NOREPLICAS).
	good       atomic.Int64
	tooFewGood atomic.Bool

	// WAIT (repl_wait.go).
	ring       []tapMark
	ringAt     int
	lastTapped uint64
	waits      []*replWait
	nwaits     atomic.Int32
}

var errNoMasterLink = "NOMASTERLINK Can't SYNC while not connected with my master"

// cmdReplconf is REPLCONF option value [option value ...].
func cmdReplconf(x *Exec, argv [][]byte) {
	cl := x.cl
	if (len(argv)-1)%2 != 0 || len(argv) < 2 {
		x.Err(shard.ErrSyntax)
		return
	}
	if cl.replc == nil {
		cl.replc = &replConf{}
	}
	rc := cl.replc
	for i := 1; i < len(argv); i += 2 {
		opt, val := strings.ToLower(string(argv[i])), string(argv[i+1])
		switch opt {
		case "listening-port":
			p, err := strconv.Atoi(val)
			if err != nil || p < 0 || p > 65535 {
				x.Err("ERR value is not an integer or out of range")
				return
			}
			rc.port = p
			if r := cl.rep; r != nil {
				r.port = p
			}
		case "ip-address":
			if len(val) >= 46 { // NET_HOST_STR_LEN
				x.Err("ERR REPLCONF ip-address provided by replica instance is too long: " + strconv.Itoa(len(val)) + " bytes")
				return
			}
			rc.ip = val
		case "capa":
			switch strings.ToLower(val) {
			case "eof":
				rc.eof = true
			case "psync2":
				rc.psync2 = true
			}
		case "ack":
			// From an online replica: its offset; never answered.
			if r := cl.rep; r != nil {
				if off, err := strconv.ParseInt(val, 10, 64); err == nil {
					if off > r.ack.Load() {
						r.ack.Store(off)
					}
					r.ackTime.Store(time.Now().UnixMilli())
					r.ackOnce.Do(func() { close(r.acked) })
					x.srv.replAcked()
				}
			}
			return // never answered
		case "getack":
			// Sent by a master to its replicas; a master ignores it.
			return
		case "rdb-only":
			rc.rdbOnly = val == "1"
		case "rdb-filter-only":
			// Include filters (Redis 7.0 knows "functions"; "" is an
			// empty RDB): everything else is left out.
			filters, ok := cfgSplitArgs(val)
			if !ok {
				x.Err("ERR Missing rdb-filter-only values")
				return
			}
			rc.filtered, rc.withFuncs = true, false
			for _, f := range filters {
				if !strings.EqualFold(f, "functions") {
					x.Err("ERR Unsupported rdb-filter-only option: " + f)
					return
				}
				rc.withFuncs = true
			}
		default:
			x.Err("ERR Unrecognized REPLCONF option: " + string(argv[i]))
			return
		}
	}
	x.OK()
}

// cmdSync is SYNC: a full sync without the PSYNC handshake (and without
// capa eof unless REPLCONF said so).
func cmdSync(x *Exec, argv [][]byte) {
	x.srv.replSync(x, nil, 0, false)
}

// cmdPsync is PSYNC replid offset.
func cmdPsync(x *Exec, argv [][]byte) {
	off, err := strconv.ParseInt(string(argv[2]), 10, 64)
	if err != nil {
		x.srv.log.Warningf("Replica %s asks for synchronization but with a wrong offset", x.cl.peerID())
		x.Err("ERR value is not an integer or out of range")
		return
	}
	if len(argv) > 3 && shard.EqualFold(argv[3], "failover") && x.cl.rep == nil && !x.srv.psyncFailover(x, argv[1]) { // failover.go
		return
	}
	x.srv.replSync(x, argv[1], off, true)
}

// replSync attaches the client as a replica; every loop is parked.
func (srv *Server) replSync(x *Exec, replid []byte, off int64, psync bool) {
	cl := x.cl
	if cl.rep != nil || cl.c == nil {
		return // already a replica: ignored, as Redis
	}
	if x.InMulti {
		x.Err("ERR Command not allowed inside a transaction")
		return
	}
	if srv.fo.state.Load() != foNone {
		x.Err("NOMASTERLINK Can't SYNC while failing over")
		return
	}
	if srv.repl.isReplica.Load() && !srv.replicaLinkUp() {
		x.Err(errNoMasterLink)
		return
	}
	rc := cl.replc
	if rc == nil {
		rc = &replConf{}
	}
	if rc.filtered && !rc.eof {
		// A filtered RDB goes over the socket only, never through the
		// snapshot file (Redis's syncCommand).
		x.Err("ERR Filtered replica requires EOF capability")
		return
	}
	r := &replica{srv: srv, cl: cl, port: rc.port, ip: rc.ip, capaEOF: rc.eof && psync, capaPsync2: rc.psync2,
		rdbOnly: rc.rdbOnly, filtered: rc.filtered, withFuncs: rc.withFuncs, prePsync: !psync, since: time.Now(), gone: make(chan struct{}), acked: make(chan struct{}), rdb: make(chan syncRDB, 1)}
	if addr := cl.c.RemoteAddr(); addr != nil {
		r.addr = addr.String()
		if r.ip == "" {
			if h, _, err := net.SplitHostPort(r.addr); err == nil {
				r.ip = h
			}
		}
	}
	fd, err := cl.c.Dup()
	if err != nil {
		x.Err("ERR can't attach the replica: " + err.Error())
		return
	}
	f := os.NewFile(uintptr(fd), "replica")
	conn, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		x.Err("ERR can't attach the replica: " + err.Error())
		return
	}
	r.conn = conn
	if cl.tls != nil {
		r.conn = cl.tls.writeTo(conn) // the stream is sealed (tls.go)
	}
	if err := srv.ensureReplLog(); err != nil {
		_ = conn.Close()
		x.Err("ERR " + err.Error())
		return
	}
	cl.rep = r
	x.Out = x.Out[:0]
	rp := &srv.repl
	if psync && !rc.rdbOnly && !rc.filtered && srv.tryPartial(r, string(replid), off) {
		return
	}
	if psync && string(replid) != "?" {
		rp.m.partialErr.Add(1)
	}
	if r.filtered {
		srv.filteredSync(r)
		return
	}
	r.state.Store(repWaitBgsave)
	rp.mu.Lock()
	rp.m.replicas = append(rp.m.replicas, r)
	rp.m.waiting = append(rp.m.waiting, r)
	rp.mu.Unlock()
	srv.log.Noticef("Replica %s asks for synchronization", r.name())
	if psync {
		if string(replid) == "?" {
			srv.log.Noticef("Full resync requested by replica %s", r.name())
		} else if id := string(replid); id == rp.replid || id == rp.replid2 && off <= rp.second {
			// The history is ours but the backlog no longer holds it.
			srv.log.Noticef("Unable to partial resync with replica %s for lack of backlog (Replica request was: %d).", r.name(), off)
		} else if id == rp.replid2 {
			// Our previous history, past the point where we left it.
			srv.log.Noticef("Partial resynchronization not accepted: Requested offset for second ID was %d, but I can reply up to %d", off, rp.second)
		} else {
			srv.log.Noticef("Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '%s', my replication IDs are '%s' and '%s')", replid, rp.replid, rp.replid2)
		}
	}
	go r.send()
}

// filteredSync is the full sync of a replica that asked for an RDB
// without keys (REPLCONF rdb-filter-only, as `redis-cli --functions-rdb`
// does): no point-in-time image of the shards is needed, so the RDB (the
// function libraries or nothing) is made here, at the current offset, and
// the stream, unless rdb-only, follows from there; every loop is parked.
func (srv *Server) filteredSync(r *replica) {
	rp := &srv.repl
	eof := newEOFMark()
	rp.mu.Lock()
	rp.ensureBacklog()
	off := rp.off
	if !r.rdbOnly { // an rdb-only replica gets no stream: no cursor to keep blocks alive
		r.blk, r.pos = rp.cursorAt(off + 1)
	}
	r.sent.Store(off)
	r.holding.Store(!r.rdbOnly)
	r.ack.Store(0)
	rp.m.replicas = append(rp.m.replicas, r)
	id := rp.replid
	rp.mu.Unlock()
	srv.log.Noticef("Replica %s asks for synchronization", r.name())
	rp.m.fullSyncs.Add(1)
	var buf bytes.Buffer
	if !r.prePsync { // SYNC gets the RDB alone
		buf.WriteString("+FULLRESYNC " + id + " " + strconv.FormatInt(off, 10) + "\r\n")
	}
	buf.WriteString("$EOF:" + eof + "\r\n")
	h, codes := srv.imageHead(replAux(id, off)...)
	if !r.withFuncs {
		codes = nil
	}
	w, err := rdb.NewWriter(&buf, srv.rdbOptions(), h)
	for _, code := range codes {
		if err == nil {
			err = w.Function(code)
		}
	}
	if err == nil {
		err = w.Close()
	}
	buf.WriteString(eof)
	r.state.Store(repWaitBgsave)
	if err != nil {
		r.rdb <- syncRDB{err: err}
	} else {
		r.rdb <- syncRDB{data: buf.Bytes()}
	}
	go r.send()
}

func (r *replica) name() string {
	return fmt.Sprintf("%s:%d", r.ip, r.port)
}

// tryPartial continues the replica's history from the backlog when it can
// (Redis's masterTryPartialResynchronization); every loop is parked.
func (srv *Server) tryPartial(r *replica, replid string, off int64) bool {
	rp := &srv.repl
	rp.mu.Lock()
	ok := rp.active && (replid == rp.replid || replid == rp.replid2 && off <= rp.second) &&
		off >= rp.firstByteLocked() && off <= rp.off+1
	if !ok {
		rp.mu.Unlock()
		return false
	}
	r.blk, r.pos = rp.cursorAt(off)
	r.sent.Store(off - 1)
	r.holding.Store(true)
	r.ack.Store(off - 1)
	if r.capaPsync2 {
		r.greeting = "+CONTINUE " + rp.replid + "\r\n"
	} else {
		r.greeting = "+CONTINUE\r\n"
	}
	r.state.Store(repOnline)
	rp.m.replicas = append(rp.m.replicas, r)
	rp.mu.Unlock()
	rp.m.partialOK.Add(1)
	srv.log.Noticef("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", r.name(), rp.off+1-off, off)
	go r.send()
	return true
}

// ensureReplLog makes sure a log orders the stream: the AOF's, or one
// without files; every loop is parked.
func (srv *Server) ensureReplLog() error {
	srv.repl.on.Store(true)
	if srv.persist != nil {
		return nil
	}
	return srv.attach(aof.OpenMemory(aof.Options{}))
}

// replTap is the log's tap: a group made durable goes to the stream.
func (srv *Server) replTap(group []byte, startDB, endDB int, last uint64) {
	rp := &srv.repl
	if rp.isReplica.Load() || !rp.on.Load() {
		return
	}
	rp.mu.Lock()
	if !rp.active {
		rp.mu.Unlock()
		return
	}
	if startDB != rp.db && startDB >= 0 && !bytes.HasPrefix(group, selectPrefix) {
		// The stream is not in the group's database, and the group does
		// not start by choosing one (a SELECT of its own, as Redis's
		// stream has a single SELECT before a MULTI in another database).
		var sel [32]byte
		rp.appendLocked(appendSelectCmd(sel[:0], startDB))
	}
	rp.appendLocked(group)
	rp.db = endDB
	rp.m.tapped(last, rp.off)
	over := srv.overLimit()
	rp.mu.Unlock()
	rp.cond.Broadcast()
	for _, r := range over {
		r.srv.obs.obufDisconnections.Add(1)
		r.drop(fmt.Sprintf("Client id=%d addr=%s flags=S scheduled to be closed ASAP for overcoming of output buffer limits.", r.cl.id, r.addr))
	}
	if rp.m.nwaits.Load() > 0 {
		srv.replAcked()
	}
}

var selectPrefix = []byte("*2\r\n$6\r\nSELECT\r\n")

func appendSelectCmd(b []byte, db int) []byte {
	s := strconv.Itoa(db)
	b = append(b, "*2\r\n$6\r\nSELECT\r\n$"...)
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

// send is the replica's sender goroutine.
func (r *replica) send() {
	srv := r.srv
	defer r.drop("")
	if r.state.Load() == repWaitBgsave {
		var res syncRDB
		select {
		case res = <-r.rdb:
		case <-r.gone:
			return
		}
		if res.err != nil {
			r.drop(res.err.Error())
			return
		}
		if res.file != "" {
			if err := r.sendFile(res.file); err != nil {
				r.drop(err.Error())
				return
			}
		} else if res.data != nil {
			if err := r.writeNow(res.data); err != nil {
				r.drop("write error: " + err.Error())
				return
			}
		} else if !r.rdbOnly {
			// Disk-less: the replica finds the end mark only in the last
			// bytes of a read, so the stream waits for its first ACK, sent
			// once it has loaded the RDB (Redis's
			// repl_start_cmd_stream_on_ack).
			select {
			case <-r.acked:
			case <-r.gone:
				return
			}
		}
		srv.log.Noticef("Synchronization with replica %s succeeded", r.name())
		if r.rdbOnly {
			// redis-cli --rdb: nothing follows; it closes the link.
			<-r.gone
			return
		}
		r.state.Store(repOnline)
	} else if err := r.writeNow([]byte(r.greeting)); err != nil {
		return
	}
	rp := &srv.repl
	var bufs net.Buffers
	for {
		rp.mu.Lock()
		for r.sent.Load() == rp.off && !r.dropped.Load() {
			rp.cond.Wait()
		}
		if r.dropped.Load() {
			rp.mu.Unlock()
			return
		}
		end := rp.off
		bufs = bufs[:0]
		b, pos, at := r.blk, r.pos, r.sent.Load()
		for at < end {
			n := min(int64(len(b.data)-pos), end-at)
			if n > 0 {
				bufs = append(bufs, b.data[pos:pos+int(n)])
				at += n
				pos += int(n)
			}
			if pos == cap(b.data) && b.next != nil {
				b, pos = b.next, 0
			} else if n == 0 {
				break
			}
		}
		rp.mu.Unlock()
		total := int64(0)
		for _, p := range bufs {
			total += int64(len(p))
		}
		_ = r.conn.SetWriteDeadline(time.Now().Add(r.timeout()))
		w := bufs
		if _, err := w.WriteTo(r.conn); err != nil {
			return
		}
		srv.stats.netReplOutput.Add(total)
		r.blk, r.pos = b, pos
		r.sent.Store(at)
	}
}

// sendFile sends an RDB file as a bulk ($<len>\r\n then the bytes).
func (r *replica) sendFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := r.writeNow([]byte(r.greeting + "$" + strconv.FormatInt(st.Size(), 10) + "\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if werr := r.writeNow(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return nil
		}
	}
}

// drop detaches the replica (its sender failed, it went away, or it is
// killed); why, when set, is logged.
func (r *replica) drop(why string) {
	if !r.dropped.CompareAndSwap(false, true) {
		return
	}
	srv := r.srv
	rp := &srv.repl
	if strings.HasPrefix(why, "Client ") {
		srv.log.Warningf("%s", why)
	} else if why != "" {
		srv.log.Warningf("Replica %s: %s", r.name(), why)
	}
	rp.mu.Lock()
	rp.m.replicas = removeReplica(rp.m.replicas, r)
	rp.m.waiting = removeReplica(rp.m.waiting, r)
	if r.holding.Swap(false) && rp.active {
		rp.trimLocked() // what only it held leaves the backlog
	}
	lastDisk := len(rp.m.diskWait) > 0
	rp.m.diskWait = removeReplica(rp.m.diskWait, r)
	lastDisk = lastDisk && len(rp.m.diskWait) == 0 && rp.m.diskSave
	if len(rp.m.replicas) == 0 {
		rp.noReplicas = time.Now()
	}
	rp.mu.Unlock()
	if lastDisk && len(srv.cfg.SaveParams()) == 0 {
		// The BGSAVE ran only for replicas that are gone, and no save
		// point wants the file: stop it (Redis's
		// killRDBChild on replication's behalf).
		go func() {
			_ = srv.parkAll(func() {
				rp.mu.Lock()
				still := len(rp.m.diskWait) == 0 && rp.m.diskSave
				rp.mu.Unlock()
				if still && srv.abortSnapshot() {
					srv.log.Noticef("Background saving stopped: no replica waits for it")
					rp.m.diskSave = false
					rp.m.syncing.Store(false)
				}
			})
		}()
	}
	rp.cond.Broadcast()
	close(r.gone)
	_ = r.conn.Close()
	// The gnet side: close the connection on its loop.
	cl := r.cl
	_ = cl.loop.post(gnet.RunnableFunc(func(context.Context) error {
		if !cl.closed {
			cl.closing = true
			cl.writeOut()
		}
		return nil
	}))
	srv.log.Noticef("Connection with replica %s lost.", r.name())
	srv.replAcked()
}

func removeReplica(list []*replica, r *replica) []*replica {
	for i, o := range list {
		if o == r {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}

// replCron runs on loop 0 from its cron: it starts the full sync that
// replicas wait for, pings the replicas, drops the silent ones and frees
// the backlog after repl-backlog-ttl without replicas.
func (srv *Server) replCron() {
	rp := &srv.repl
	srv.refreshGoodReplicas()
	if !rp.on.Load() {
		return
	}
	srv.removeSyncRDB()
	now := time.Now()
	rp.mu.Lock()
	nwait := len(rp.m.waiting)
	var first time.Time
	diskless := srv.cfg.boolOr("repl-diskless-sync", true)
	if nwait > 0 {
		first = rp.m.waiting[0].since
		for _, r := range rp.m.waiting {
			diskless = diskless && r.capaEOF
		}
	}
	nrep := len(rp.m.replicas)
	rp.mu.Unlock()
	if nwait > 0 && !rp.m.syncing.Load() && !srv.save.active.Load() && !srv.rw.active.Load() {
		delay := time.Duration(srv.cfg.intOr("repl-diskless-sync-delay", 5)) * time.Second
		max := srv.cfg.intOr("repl-diskless-sync-max-replicas", 0)
		// The delay gathers replicas for one disk-less transfer; a sync
		// through the disk starts at once (Redis's replicationCron).
		if !diskless || now.Sub(first) >= delay || max > 0 && int64(nwait) >= max {
			if rp.m.syncing.CompareAndSwap(false, true) {
				go func() {
					if err := srv.parkAll(srv.startFullSync); err != nil {
						rp.m.syncing.Store(false)
					}
				}()
			}
		}
	}
	// Replicas silent for repl-timeout are dropped (Redis's replicationCron).
	timeout := srv.cfg.intOr("repl-timeout", 60) * 1000
	var silent, waiting []*replica
	rp.mu.Lock()
	if now.Sub(rp.lastNewline) >= time.Second {
		// A replica waiting for its full sync gets a newline a second, so
		// that it knows the master is alive (Redis's replicationCron); a
		// master that stops (DEBUG SLEEP) lets its handshake time out.
		rp.lastNewline = now
		for _, r := range rp.m.replicas {
			// Not in its first second: a sync that starts at the next
			// tick answers +FULLRESYNC first, as Redis's starts at once.
			if r.state.Load() == repWaitBgsave && now.Sub(r.since) >= time.Second {
				waiting = append(waiting, r)
			}
		}
	}
	var stuck []*replica
	for _, r := range rp.m.replicas {
		if r.state.Load() == repOnline && !r.rdbOnly && r.ackTime.Load() > 0 && now.UnixMilli()-r.ackTime.Load() > timeout {
			silent = append(silent, r)
		}
		// A disk-less sync's write that has not gone through for
		// repl-timeout (Redis's check of a replica in the RDB pipe): the
		// running write has the deadline it started with, and repl-timeout
		// may have been lowered since.
		if w := r.writing.Load(); r.state.Load() == repStreamRDB && w > 0 && now.UnixMilli()-w > timeout {
			stuck = append(stuck, r)
		}
	}
	if rp.active {
		rp.trimLocked() // blocks the replicas have sent since
	}
	// The backlog goes after repl-backlog-ttl without replicas, and with it
	// the history: a new replication id (Redis's replicationCron).
	if ttl := srv.cfg.intOr("repl-backlog-ttl", 3600); rp.active && nrep == 0 && ttl > 0 && !rp.isReplica.Load() &&
		!rp.noReplicas.IsZero() && now.Sub(rp.noReplicas) > time.Duration(ttl)*time.Second {
		rp.active = false
		rp.head, rp.tail, rp.headPos, rp.histlen = nil, nil, 0, 0
		rp.publishMemLocked()
		rp.replid, rp.replid2, rp.second = randomHex40(), zeroReplID, -1
		srv.log.Noticef("Replication backlog freed after %d seconds without connected replicas.", ttl)
	}
	rp.mu.Unlock()
	for _, r := range waiting {
		r.wmu.Lock()
		if r.state.Load() == repWaitBgsave && !r.dropped.Load() {
			_ = r.conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = r.conn.Write([]byte("\n"))
		}
		r.wmu.Unlock()
	}
	for _, r := range silent {
		r.drop("Disconnecting timedout replica (streaming sync)")
	}
	for _, r := range stuck {
		r.drop("Disconnecting timedout replica (full sync)")
	}
	period := time.Duration(srv.cfg.intOr("repl-ping-replica-period", 10)) * time.Second
	if nrep > 0 && now.Sub(rp.lastPing) >= period && !rp.isReplica.Load() && srv.fo.state.Load() == foNone { // a replica's stream is its master's, PINGs included
		rp.lastPing = now
		rp.appendRaw([]byte("*1\r\n$4\r\nPING\r\n"))
	}
}

// overLimit returns the replicas whose lag breaks the replica class's
// client-output-buffer-limit (the hard limit, or the soft one for longer
// than its seconds); repl.mu is held.
func (srv *Server) overLimit() []*replica {
	lim := srv.cfg.ClientOutputBufferLimits()[cfgObufSlave]
	if lim.HardLimitBytes == 0 && lim.SoftLimitBytes == 0 {
		return nil
	}
	rp := &srv.repl
	// A hard limit under repl-backlog-size counts as repl-backlog-size:
	// a replica may lag by what a partial resync would send it anyway
	// (Redis's checkClientOutputBufferLimits).
	hard := lim.HardLimitBytes
	if hard != 0 && hard < uint64(rp.backlogSize) {
		hard = uint64(rp.backlogSize)
	}
	var over []*replica
	now := time.Now().Unix()
	for _, r := range rp.m.replicas {
		lag := uint64(r.heldLocked())
		if hard != 0 && lag >= hard {
			over = append(over, r)
			continue
		}
		if lim.SoftLimitBytes != 0 && lag >= lim.SoftLimitBytes {
			if r.softSince == 0 {
				r.softSince = now
			} else if now-r.softSince >= int64(lim.SoftLimitSeconds) {
				over = append(over, r)
			}
		} else {
			r.softSince = 0
		}
	}
	return over
}

// held is how much of the stream the replica has yet to send: its share
// of the replication buffer, its output buffer in CLIENT LIST and for
// client-output-buffer-limit (overLimit).
func (r *replica) held() int64 {
	rp := &r.srv.repl
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return r.heldLocked()
}

// heldLocked is held with repl.mu held. A replica still waiting for its
// full sync to start, or one that takes only the RDB, holds nothing
// (Redis's canFeedReplicaReplBuffer).
func (r *replica) heldLocked() int64 {
	if !r.holding.Load() {
		return 0
	}
	return max(r.srv.repl.off-r.sent.Load(), 0)
}

// installReplHooks applies CONFIG SET of the replication settings.
func (srv *Server) installReplHooks() {
	cfg := srv.cfg
	cfg.OnChange("min-replicas-to-write", srv.refreshGoodReplicas)
	cfg.OnChange("min-replicas-max-lag", srv.refreshGoodReplicas)
	cfg.OnChange("repl-backlog-size", func() {
		rp := &srv.repl
		rp.mu.Lock()
		rp.backlogSize = cfg.ReplBacklogSize()
		if rp.active {
			rp.trimLocked()
		}
		rp.publishMemLocked()
		rp.mu.Unlock()
	})
	srv.refreshGoodReplicas()
}

// refreshGoodReplicas counts the good replicas (Redis's
// refreshGoodSlavesCount).
func (srv *Server) refreshGoodReplicas() {
	rp := &srv.repl
	need := srv.cfg.intOr("min-replicas-to-write", 0)
	maxLag := srv.cfg.intOr("min-replicas-max-lag", 10)
	if need == 0 || maxLag == 0 || rp.isReplica.Load() {
		rp.m.good.Store(0)
		rp.m.tooFewGood.Store(false)
		return
	}
	now := time.Now().UnixMilli()
	var good int64
	rp.mu.Lock()
	for _, r := range rp.m.replicas {
		if r.state.Load() == repOnline && !r.rdbOnly && (now-r.ackTime.Load())/1000 <= maxLag {
			good++
		}
	}
	rp.mu.Unlock()
	rp.m.good.Store(good)
	rp.m.tooFewGood.Store(good < need)
}

// startFullSync is the cut of a full sync; every loop is parked.
func (srv *Server) startFullSync() {
	rp := &srv.repl
	if srv.save.active.Load() || srv.rw.active.Load() {
		rp.m.syncing.Store(false) // an image is being taken: next cron
		return
	}
	// Every loop has submitted (parkAll); wait until the writer has handed
	// all of it to the stream.
	if rp.isReplica.Load() && srv.rs.mc != nil {
		srv.rs.mc.rm.flushApplied() // the stream holds what the shards applied
	}
	if err := srv.waitWritten(srv.submitAll(), 10*time.Second); err != nil {
		rp.m.syncing.Store(false)
		srv.log.Warningf("Full sync postponed: the log does not move (%v)", err)
		return
	}
	rp.mu.Lock()
	waiting := append([]*replica(nil), rp.m.waiting...)
	rp.m.waiting = rp.m.waiting[:0]
	rp.ensureBacklog()
	rp.db = -1 // the stream after the cut starts with a SELECT
	off := rp.off
	disk := !srv.cfg.boolOr("repl-diskless-sync", true)
	for _, r := range waiting {
		if !r.rdbOnly { // no stream follows its RDB: no cursor to keep blocks alive
			r.blk, r.pos = rp.cursorAt(off + 1)
		}
		r.sent.Store(off)
		r.holding.Store(!r.rdbOnly)
		r.ack.Store(0)
		if !r.capaEOF {
			disk = true
		}
	}
	id := rp.replid
	rp.mu.Unlock()
	for _, r := range waiting {
		if !r.prePsync { // SYNC gets the RDB alone
			r.greeting = "+FULLRESYNC " + id + " " + strconv.FormatInt(off, 10) + "\r\n"
		}
	}
	rp.m.fullSyncs.Add(int64(len(waiting)))
	if disk {
		srv.startDiskSync(waiting)
		return
	}
	srv.startDisklessSync(waiting)
}

// startDisklessSync streams the image to the replicas; every loop is parked.
func (srv *Server) startDisklessSync(rs []*replica) {
	rp := &srv.repl
	eof := newEOFMark()
	fan := &replFan{rs: rs}
	for _, r := range rs {
		fan.pre(r, r.greeting+"$EOF:"+eof+"\r\n")
	}
	srv.log.Noticef("Starting BGSAVE for SYNC with target: replicas sockets")
	h, codes := srv.imageHead(replAux(rp.replid, rp.off)...)
	var sink io.Writer = fan
	rp.m.syncChild, rp.m.syncRelay = nil, nil
	if c, out := srv.startSyncChild(); c != nil { // bgchild.go
		sink = c
		rp.m.syncChild, rp.m.syncRelay, rp.m.syncFan = c, make(chan struct{}), fan
		srv.log.Noticef("Background RDB transfer started by pid %d", c.Pid())
		go srv.relaySync(c, out, fan, rp.m.syncRelay)
	}
	s, err := aof.StartStream(sink, srv.rdbOptions(), h, codes)
	if err != nil {
		if c := rp.m.syncChild; c != nil {
			c.Close()
			<-rp.m.syncRelay
		}
		for _, r := range rs {
			r.rdb <- syncRDB{err: err}
		}
		rp.m.syncing.Store(false)
		return
	}
	s.Background()
	for _, r := range rs {
		r.state.Store(repStreamRDB)
	}
	rp.m.syncImg.Store(s)
	rp.m.imaging.Store(true)
	rp.m.remain.Store(int32(len(srv.loops)))
	srv.procsFor(1)
	for _, l := range srv.loops {
		l.startSnap(s, true)
	}
	rp.m.eofMark = []byte(eof)
}

// newEOFMark is the 40 hex characters that end a disk-less RDB.
func newEOFMark() string {
	var mark [20]byte
	_, _ = rand.Read(mark[:])
	return fmt.Sprintf("%x", mark)
}

// replAux is the replication aux fields of a sync's RDB.
func replAux(id string, off int64) [][2]string {
	return [][2]string{{"repl-stream-db", "0"}, {"repl-id", id}, {"repl-offset", strconv.FormatInt(off, 10)}}
}

// replFan writes the image to every replica of a disk-less sync; a replica
// whose write fails is dropped and the others go on.
type replFan struct {
	rs []*replica
}

func (f *replFan) pre(r *replica, s string) {
	if err := r.writeNow([]byte(s)); err != nil {
		r.drop("write error: " + err.Error())
	}
}

func (f *replFan) Write(b []byte) (int, error) {
	live := 0
	for _, r := range f.rs {
		if r.dropped.Load() {
			continue
		}
		if err := r.writeNow(b); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// repl-timeout passed with the write blocked.
				r.drop("Disconnecting timedout replica (full sync)")
			} else {
				r.drop("write error during the full sync: " + err.Error())
			}
			continue
		}
		live++
	}
	if live == 0 {
		return 0, errors.New("no replica left to receive the RDB")
	}
	return len(b), nil
}

// syncImageDone is a loop's end of its part of the sync image.
func (srv *Server) syncImageDone(js *loopSnap) {
	rp := &srv.repl
	if rp.m.syncImg.Load() != js.s || rp.m.remain.Add(-1) != 0 {
		return
	}
	go func() {
		s := js.s
		err := s.Finish()
		if c := rp.m.syncChild; c != nil {
			// The end of the input; the child exits once it has passed
			// everything on, and the relay has sent it.
			cerr := c.Sync()
			if cerr != nil {
				// It died (killed): no replica can get a whole RDB. They
				// are dropped, which also ends a relay stuck writing to
				// a slow one; they come back for a new sync.
				if err == nil {
					err = errors.New("the child of the disk-less sync " + cerr.Error())
				}
				for _, r := range rp.m.syncFan.rs {
					r.drop("Diskless rdb transfer failed: " + err.Error())
				}
			}
			<-rp.m.syncRelay
		}
		rs := srv.streamingReplicas()
		if err == nil {
			// The trailer: the mark again.
			for _, r := range rs {
				if !r.dropped.Load() {
					if werr := r.writeNow(rp.m.eofMark); werr != nil {
						r.drop("write error: " + werr.Error())
					}
				}
			}
		}
		srv.syncImageEnded()
		for _, r := range rs {
			if err != nil {
				r.rdb <- syncRDB{err: err}
			} else {
				r.rdb <- syncRDB{}
			}
		}
		srv.log.Noticef("Background RDB transfer terminated with success")
	}()
}

// stopSyncForFlush is stopBgsaveForFlush's for a disk-less sync. Redis's
// FLUSHALL kills any RDB child, the one streaming to replicas included:
// those replicas fail their sync, come back, and get a new one of the
// emptied data set. So here: the image stops (the flush does not first
// serialize every key the walk has not reached, which with
// rdb-key-save-delay could take hours), the child is killed, and the
// replicas receiving the image are dropped. An image whose loops have all
// finished is left to end (syncImageDone is sending its last bytes): its
// replicas get the FLUSHALL through the stream after it. Every loop is
// parked.
func (srv *Server) stopSyncForFlush() {
	rp := &srv.repl
	s := rp.m.syncImg.Load()
	if s == nil || rp.m.remain.Load() == 0 {
		return
	}
	rp.m.syncImg.Store(nil) // syncImageDone now ignores the image
	srv.stopLoopSnaps(s)    // snapshot.go
	rs := srv.streamingReplicas()
	srv.log.Noticef("Background RDB transfer stopped by FLUSHALL")
	c, relay := rp.m.syncChild, rp.m.syncRelay
	if c != nil {
		// Killed first, so that the image's last writes to it fail at
		// once rather than wait for a slow replica.
		c.Kill()
	}
	for _, r := range rs {
		srv.log.Warningf("SYNC failed. BGSAVE child returned an error")
		r.drop("") // closes its socket: a write in progress to it fails
	}
	go func() {
		s.Abort()
		if c != nil {
			_ = c.Close()
			<-relay
		}
		srv.syncImageEnded()
	}()
}

// syncImageEnded is the end of a disk-less sync's image, done or stopped:
// its P goes, a new sync or image may start, and a rewrite that waited for
// it runs.
func (srv *Server) syncImageEnded() {
	rp := &srv.repl
	srv.procsFor(-1)
	rp.m.syncImg.Store(nil)
	rp.m.imaging.Store(false)
	rp.m.syncing.Store(false)
	srv.runWaitingRewrite()
}

// streamingReplicas are the replicas receiving the disk-less image.
func (srv *Server) streamingReplicas() []*replica {
	rp := &srv.repl
	rp.mu.Lock()
	defer rp.mu.Unlock()
	var rs []*replica
	for _, r := range rp.m.replicas {
		if r.state.Load() == repStreamRDB {
			rs = append(rs, r)
		}
	}
	return rs
}

// removeSyncRDB is Redis's removeRDBUsedToSyncReplicas (from the cron):
// with rdb-del-sync-files yes and persistence off, the dump.rdb a
// disk-based sync wrote is removed once no replica waits for or receives
// it, so that a server meant to keep nothing on disk keeps nothing.
func (srv *Server) removeSyncRDB() {
	rp := &srv.repl
	if !srv.cfg.boolOr("rdb-del-sync-files", false) {
		rp.m.syncFile.Store(false) // a later CONFIG SET yes finds no stale mark
		return
	}
	if !rp.m.syncFile.Load() || !srv.cfg.PersistenceOff() || srv.save.active.Load() {
		return
	}
	rp.mu.Lock()
	busy := rp.m.diskSave || len(rp.m.diskWait) > 0
	for _, r := range rp.m.replicas {
		if st := r.state.Load(); st == repWaitBgsave || st == repSendBulk {
			busy = true
		}
	}
	rp.mu.Unlock()
	if busy {
		return
	}
	path := srv.rdbPath()
	if _, err := os.Lstat(path); err != nil {
		return
	}
	rp.m.syncFile.Store(false)
	srv.log.Noticef("Removing the RDB file used to feed replicas in a persistence-less instance")
	_ = os.Remove(path)
}

// startDiskSync runs a BGSAVE for the replicas, which get the file when it
// is done (replDiskSaved); every loop is parked.
func (srv *Server) startDiskSync(rs []*replica) {
	rp := &srv.repl
	rp.mu.Lock()
	rp.m.diskWait = append(rp.m.diskWait, rs...)
	rp.m.diskSave = true
	rp.mu.Unlock()
	srv.log.Noticef("Starting BGSAVE for SYNC with target: disk")
	rp.m.syncFile.Store(true)
	if err := srv.startSnapshot(); err != nil {
		srv.replDiskSaved(err)
	}
}

// replDiskSaved is the end of a BGSAVE: replicas waiting for a disk-based
// sync get the file (or the error).
func (srv *Server) replDiskSaved(err error) {
	rp := &srv.repl
	rp.mu.Lock()
	rs := rp.m.diskWait
	rp.m.diskWait = nil
	rp.m.diskSave = false
	rp.mu.Unlock()
	for _, r := range rs {
		r.state.Store(repSendBulk)
		if err != nil {
			r.rdb <- syncRDB{err: err}
		} else {
			r.rdb <- syncRDB{file: srv.rdbPath()}
		}
	}
	// Also when every replica it was for went away meanwhile: a sync
	// left marked as running would keep every later replica waiting.
	rp.m.syncing.Store(false)
}

// writeNow writes b to the replica under repl-timeout, ordered with the
// other writers of the sync (wmu), and counts it.
func (r *replica) writeNow(b []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	now := time.Now()
	_ = r.conn.SetWriteDeadline(now.Add(r.timeout()))
	r.writing.Store(now.UnixMilli())
	_, err := r.conn.Write(b)
	r.writing.Store(0)
	r.srv.stats.netReplOutput.Add(int64(len(b)))
	return err
}

func (r *replica) timeout() time.Duration {
	return time.Duration(r.srv.cfg.intOr("repl-timeout", 60)) * time.Second
}

// replicaClosed is the client's close: its replica goes too.
func (cl *Client) replicaClosed() {
	if r := cl.rep; r != nil {
		r.drop("")
	}
}

// connectedReplicas lists the attached replicas.
func (srv *Server) connectedReplicas() []replicaInfo {
	rp := &srv.repl
	rp.mu.Lock()
	defer rp.mu.Unlock()
	now := time.Now().UnixMilli()
	out := make([]replicaInfo, 0, len(rp.m.replicas))
	for _, r := range rp.m.replicas {
		if r.rdbOnly {
			continue
		}
		st := "online"
		switch r.state.Load() {
		case repWaitBgsave, repStreamRDB:
			st = "wait_bgsave"
		case repSendBulk:
			st = "send_bulk"
		}
		lag := int64(0)
		if t := r.ackTime.Load(); t > 0 {
			lag = (now - t) / 1000
		}
		out = append(out, replicaInfo{ip: r.ip, port: r.port, state: st, offset: r.ack.Load(), lag: lag})
	}
	return out
}

// dropReplicas disconnects every replica (this server became a replica,
// or its history was replaced by a full sync from its master): they
// reconnect and resync with the new history, partially when they can
// (Redis's disconnectSlaves).
func (srv *Server) dropReplicas() {
	rp := &srv.repl
	rp.mu.Lock()
	rs := append([]*replica(nil), rp.m.replicas...)
	rp.mu.Unlock()
	for _, r := range rs {
		r.drop("")
	}
}

// replAux are the replication aux fields of an RDB saved with every loop
// parked (SAVE, the save at shutdown): the history the data set is at and
// the stream's database, so that a restarted replica continues with a
// partial resync (Redis's rdbPopulateSaveInfo). None without a backlog.
func (srv *Server) replAux() [][2]string {
	rp := &srv.repl
	db := 0
	if rp.isReplica.Load() {
		if mc := srv.rs.mc; mc != nil {
			mc.rm.flushApplied() // the stream holds what the shards applied
			db = mc.db
		}
	} else if srv.persist != nil {
		if err := srv.waitWritten(srv.submitAll(), 10*time.Second); err != nil {
			return nil
		}
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if !rp.active {
		return nil
	}
	if !rp.isReplica.Load() && rp.db >= 0 {
		db = rp.db
	}
	return [][2]string{{"repl-stream-db", strconv.Itoa(db)}, {"repl-id", rp.replid},
		{"repl-offset", strconv.FormatInt(rp.off, 10)}}
}
