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
// under it. The backlog is the suffix of the list from head: the last
// repl-backlog-size bytes, or more, from the oldest byte a replica has yet
// to send (Redis 7's shared replication buffer: one copy of the stream for
// the backlog and every replica, repl_backlog_histlen outgrowing
// repl-backlog-size while a replica lags, and a partial resync possible
// from anywhere in it). A replica's sender holds a pointer to its own
// block; blocks before the head are left to the GC.
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

// blockSize is the capacity of a new stream block: a sixteenth of
// repl-backlog-size, from 16 KiB (Redis's PROTO_REPLY_CHUNK_BYTES) to
// 64 KiB, so that a small backlog trims in small steps and holds little
// more than its size once no replica needs more (Redis sizes its blocks
// the same way, without the upper bound).
func (r *replState) blockSize() int {
	return int(min(max(r.backlogSize/16, 16<<10), 64<<10))
}

type replBlock struct {
	start int64  // offset of data[0] minus one: bytes before this block
	data  []byte // cap blockSize(), appended to under replState.mu only
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
	// memEvict: what of the stream's blocks maxmemory counts, published
	// for the loops (usedMemoryEstimate): up to repl-backlog-size, as
	// Redis's freeMemoryGetNotCountedMemory leaves only the part past it
	// out. memTotal is every block (publishMemLocked).
	memEvict, memTotal atomic.Int64

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
	b := &replBlock{start: r.off, data: make([]byte, 0, r.blockSize())}
	r.head, r.tail, r.headPos, r.histlen = b, b, 0, 0
	r.db = -1
	r.publishMemLocked()
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
			nb := &replBlock{start: t.start + int64(len(t.data)), data: make([]byte, 0, r.blockSize())}
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

// trimLocked drops backlog bytes beyond repl-backlog-size, a block at a
// time, but never a block a replica has not sent whole: the backlog starts
// at the oldest byte a replica still holds, so it outgrows
// repl-backlog-size while a replica lags, and a replica that reconnects
// can continue from anywhere in it (Redis 7's shared replication buffer).
// It is called as the stream grows, when a replica goes, and from the
// cron (a replica that caught up releases its blocks then).
func (r *replState) trimLocked() {
	defer r.publishMemLocked()
	if r.histlen <= r.backlogSize || r.head == r.tail {
		return
	}
	keep := r.off // the bytes after keep are still to be sent
	for _, rp := range r.m.replicas {
		if rp.holding.Load() {
			keep = min(keep, rp.sent.Load())
		}
	}
	for r.histlen > r.backlogSize && r.head != r.tail {
		h := r.head
		drop := int64(len(h.data) - r.headPos)
		if r.histlen-drop < r.backlogSize || h.start+int64(len(h.data)) > keep {
			break
		}
		r.head, r.headPos = h.next, 0
		r.histlen -= drop
	}
}

// publishMemLocked publishes the blocks' memory (memTotal, memEvict) after
// a change of the blocks, of repl-backlog-size or of the backlog's
// existence; r.mu is held.
func (r *replState) publishMemLocked() {
	total := r.blocksMemLocked()
	r.memTotal.Store(total)
	r.memEvict.Store(min(total, r.backlogSize))
}

// blocksMemLocked is the memory of the stream's blocks: every block but
// the tail is full; r.mu is held.
func (r *replState) blocksMemLocked() int64 {
	if !r.active {
		return 0
	}
	return r.tail.start - r.head.start + int64(cap(r.tail.data))
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
// mem_total_replication_buffers: the blocks the stream holds (the
// backlog's, which include every block a replica has yet to send), and of
// that the backlog's own share, as Redis's getMemoryOverheadData counts
// it: repl-backlog-size while replicas are attached and the blocks
// outgrow it (the rest is the replicas', mem_clients_slaves), else all.
func (r *replState) bufferMem() (backlog, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	total = r.blocksMemLocked()
	if len(r.m.replicas) > 0 && total > r.backlogSize {
		return r.backlogSize, total
	}
	return total, total
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
