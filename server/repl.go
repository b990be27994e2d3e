package server

// Replication state shared by both roles: the replication IDs, the offset,
// and the stream (the backlog and what each replica still has to receive).
//
// The stream. As a master, the stream is what the log writes: the writer
// hands every group it has made durable (written, and under "always"
// fsynced) to the stream in log order, so a replica never holds a write
// the master's AOF could lose, and master, log and replicas agree on one
// order across shards (aof.Options.Tap; with appendonly no the log runs
// without a file, only to order the stream). As a replica, the stream is
// the master's stream, byte for byte, appended as it is applied, so that
// offsets agree along a chain and after a promotion (PSYNC2).
//
// The bytes live in fixed-size blocks in a singly linked list that only
// grows at the tail: a block's bytes are never changed once appended, so a
// sender reads [pos, end) of a block outside the mutex after reading end
// under it. The backlog is the suffix of the list holding the last
// repl-backlog-size bytes (head); a replica's sender holds a pointer to its
// own block, so a lagging replica keeps older blocks alive without the
// backlog keeping them (Redis 7's shared replication buffer, with the GC
// as reference count).
//
// Offsets are Redis's: off is master_repl_offset, the number of bytes the
// stream has ever held under this history; the byte at offset o (1-based,
// as PSYNC's) is the (o - first)th byte of the backlog, where first is
// repl_backlog_first_byte_offset = off - histlen + 1.

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// replBlockSize is the capacity of a stream block.
const replBlockSize = 64 << 10

type replBlock struct {
	start int64  // offset of data[0] minus one: bytes before this block
	data  []byte // cap replBlockSize, appended to under replState.mu only
	next  *replBlock
}

// replState is the server's replication state (srv.repl).
type replState struct {
	mu   sync.Mutex
	cond *sync.Cond // senders wait for new bytes on it

	replid  string
	replid2 string // the previous history's id, "000..." if none
	second  int64  // second_repl_offset: first offset valid for replid2, -1
	off     int64  // master_repl_offset

	// The backlog: head..tail, histlen bytes of it are the backlog's.
	active      bool // a backlog exists (repl_backlog_active)
	head, tail  *replBlock
	headPos     int // first backlog byte in head.data
	histlen     int64
	backlogSize int64
	noReplicas  time.Time // since when no replica is attached (repl-backlog-ttl)

	// db is the database the stream is in after its last command, -1 when
	// unknown (a SELECT goes first then).
	db int

	// isReplica: this server replicates a master; its stream is then the
	// master's bytes (appendRaw), not its own log's groups.
	isReplica atomic.Bool

	on          atomic.Bool // a replica came once: the tap feeds the stream
	lastPing    time.Time   // loop 0's (replCron)
	lastNewline time.Time   // loop 0's: keep-alive newlines to waiting replicas
	m           replMaster  // the master's side (repl_master.go)
}

const zeroReplID = "0000000000000000000000000000000000000000"

func (r *replState) init(backlogSize int64) {
	r.cond = sync.NewCond(&r.mu)
	r.replid = processReplID
	r.replid2 = zeroReplID
	r.second = -1
	r.db = -1
	r.backlogSize = backlogSize
	// The first PING leaves a period after the start, as Redis's
	// (replication_cron_loops % repl-ping-replica-period): a replica that
	// attaches at once sees offset 0 until the first write.
	r.lastPing = time.Now()
}

// ensureBacklog creates the backlog if there is none (the first replica).
// r.mu is held.
func (r *replState) ensureBacklog() {
	if r.active {
		return
	}
	r.active = true
	b := &replBlock{start: r.off, data: make([]byte, 0, replBlockSize)}
	r.head, r.tail, r.headPos, r.histlen = b, b, 0, 0
	r.db = -1
}

// appendLocked adds p to the stream; r.mu is held. Without a backlog the
// offset still advances (Redis's master_repl_offset counts only what it
// propagates to a backlog, which exists once a replica came; callers check
// active first).
func (r *replState) appendLocked(p []byte) {
	r.off += int64(len(p))
	for len(p) > 0 {
		t := r.tail
		room := cap(t.data) - len(t.data)
		if room == 0 {
			nb := &replBlock{start: t.start + int64(len(t.data)), data: make([]byte, 0, replBlockSize)}
			t.next = nb
			r.tail = nb
			continue
		}
		n := min(room, len(p))
		t.data = append(t.data, p[:n]...)
		p = p[n:]
	}
	r.histlen = r.off - (r.head.start + int64(r.headPos))
	r.trimLocked()
}

// trimLocked drops backlog bytes beyond repl-backlog-size, a block at a time.
func (r *replState) trimLocked() {
	for r.histlen > r.backlogSize && r.head != r.tail {
		h := r.head
		drop := int64(len(h.data) - r.headPos)
		if r.histlen-drop < r.backlogSize {
			break
		}
		r.head, r.headPos = h.next, 0
		r.histlen -= drop
	}
}

// firstByte is repl_backlog_first_byte_offset.
func (r *replState) firstByteLocked() int64 {
	if !r.active {
		return 0
	}
	return r.head.start + int64(r.headPos) + 1
}

// cursorAt returns the block and position of offset o (1-based), which
// must lie in [firstByte, off+1]; r.mu is held.
func (r *replState) cursorAt(o int64) (*replBlock, int) {
	b := r.head
	for b.next != nil && o > b.start+int64(len(b.data)) {
		b = b.next
	}
	return b, int(o - 1 - b.start)
}

// appendRaw adds bytes to the stream as they are (a replica proxying its
// master's stream, a master's PING) and wakes the senders.
func (r *replState) appendRaw(p []byte) {
	r.mu.Lock()
	if r.active {
		r.appendLocked(p)
	} else {
		r.off += int64(len(p))
	}
	r.mu.Unlock()
	r.cond.Broadcast()
}

// resetTo starts a new history at a full sync from a master: its id, its
// offset, an empty backlog.
func (r *replState) resetTo(replid string, off int64) {
	r.mu.Lock()
	r.replid, r.replid2, r.second, r.off = replid, zeroReplID, -1, off
	r.active = false
	r.ensureBacklog()
	r.mu.Unlock()
	r.cond.Broadcast()
}

// shiftIDs keeps the current history as the second one and starts a new
// id at the current offset: a promotion (REPLICAOF NO ONE), or a master
// that continues with another id (+CONTINUE <newid>, then newID is it).
func (r *replState) shiftIDs(newID string) {
	r.mu.Lock()
	r.replid2 = r.replid
	r.second = r.off + 1
	if newID == "" {
		newID = randomHex40()
	}
	r.replid = newID
	r.mu.Unlock()
}

// ids returns master_replid, master_replid2, master_repl_offset and
// second_repl_offset.
func (r *replState) ids() (id, id2 string, off, second int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replid, r.replid2, r.off, r.second
}

// infoBacklog writes the repl_backlog_* fields.
func (r *replState) infoBacklog(w *infoWriter) {
	r.mu.Lock()
	active, size, first, hist := r.active, r.backlogSize, r.firstByteLocked(), r.histlen
	r.mu.Unlock()
	w.int("repl_backlog_active", b2i(active))
	w.int("repl_backlog_size", size)
	w.int("repl_backlog_first_byte_offset", first)
	w.int("repl_backlog_histlen", hist)
}

// bufferMem is INFO memory's mem_replication_backlog and
// mem_total_replication_buffers: the bytes of the stream the backlog
// holds, and those held by the backlog or by a replica that has not
// written them to its socket yet (the blocks from the oldest of the two
// on; Redis 7's shared replication buffer).
func (r *replState) bufferMem() (backlog, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.active {
		return 0, 0
	}
	oldest := r.off - r.histlen // the byte before the backlog's first
	for _, rp := range r.m.replicas {
		if rp.state.Load() == repOnline {
			oldest = min(oldest, rp.sent.Load())
		}
	}
	return r.histlen, r.off - oldest
}

// attached is the number of replica connections.
func (r *replState) attached() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.m.replicas))
}

// replicaInfo is one attached replica, as ROLE and INFO show it.
type replicaInfo struct {
	ip     string
	port   int
	state  string // wait_bgsave, send_bulk, online
	offset int64  // acknowledged
	lag    int64  // seconds since its last ACK
}

// infoReplicas writes connected_slaves and the slaveN lines.
func (srv *Server) infoReplicas(w *infoWriter) {
	rs := srv.connectedReplicas()
	w.int("connected_slaves", int64(len(rs)))
	if srv.cfg.intOr("min-replicas-to-write", 0) > 0 && srv.cfg.intOr("min-replicas-max-lag", 10) > 0 {
		w.int("min_slaves_good_slaves", srv.repl.m.good.Load())
	}
	for i, r := range rs {
		w.str("slave"+strconv.Itoa(i), "ip="+r.ip+",port="+strconv.Itoa(r.port)+",state="+r.state+
			",offset="+strconv.FormatInt(r.offset, 10)+",lag="+strconv.FormatInt(r.lag, 10))
	}
}
