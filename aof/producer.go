package aof

// Producer collects the records of one event loop. It is used only by the
// goroutine that owns it: Append and Len touch nothing shared, Submit takes
// the log's mutex once. Append never blocks and never does I/O.
//
// A batch is the unit of atomicity in the file: the writer puts whole
// batches in a group, and recovery keeps or drops whole groups. So a
// multi-key command or a MULTI ... EXEC must be appended within one batch
// (between two Submits).
type Producer struct {
	l   *Log
	buf []byte
	// firstDB is the database of the batch's first command, db the database
	// of its last one; -1 while the batch is empty.
	firstDB, db int
	cmds        int     // commands appended to the batch (metrics)
	repl        []int32 // replication-only records: [start, end) pairs in buf
	fileOnly    []int32 // records for the file only: [start, end) pairs in buf
}

// NewProducer returns a producer for one event loop.
func (l *Log) NewProducer() *Producer {
	l.producers.Add(1)
	return &Producer{l: l, firstDB: -1, db: -1}
}

// Append RESP-encodes argv, as executed in database db, into the pending
// batch. A SELECT is emitted when db differs from the previous command's
// within the batch; the writer emits one between batches when the file's
// current database differs from the batch's first (see Submit).
func (p *Producer) Append(db int, argv [][]byte) {
	p.inDB(db)
	p.buf = appendCommand(p.buf, argv)
	p.cmds++
}

// inDB puts the batch in database db for the next record: the batch's
// first database, or a SELECT when db differs from the last record's.
func (p *Producer) inDB(db int) {
	if p.firstDB < 0 {
		p.firstDB, p.db = db, db
	} else if db != p.db {
		p.buf = appendSelect(p.buf, db)
		p.db = db
	}
}

// AppendReplOnly RESP-encodes argv into the pending batch as a record for
// the replication stream only (Redis's PROPAGATE_REPL: PUBLISH): the Tap
// sees it in its place among the batch's records, the file never holds it.
// It is database-neutral: it changes neither the batch's databases nor
// the SELECTs around it.
func (p *Producer) AppendReplOnly(argv [][]byte) {
	start := len(p.buf)
	p.buf = appendCommand(p.buf, argv)
	p.repl = append(p.repl, int32(start), int32(len(p.buf)))
}

// Dest is where a record of AppendTo goes: Redis's PROPAGATE_AOF and
// PROPAGATE_REPL, which a script chooses with redis.set_repl.
type Dest uint8

const (
	DestAll  Dest = iota // the file and the replication stream (Append)
	DestFile             // the file only (REPL_AOF)
	DestRepl             // the replication stream only (REPL_REPLICA)
)

// AppendTo is Append for a record that goes to the file alone or to the
// replication stream alone. Unlike AppendReplOnly's records it is in
// database db: the SELECT in front of it, if one is needed, goes to both,
// so that the file and the stream each stay in the database the batch
// says it is in.
func (p *Producer) AppendTo(db int, argv [][]byte, d Dest) {
	if d == DestAll {
		p.Append(db, argv)
		return
	}
	p.inDB(db)
	start := len(p.buf)
	p.buf = appendCommand(p.buf, argv)
	if d == DestFile {
		p.fileOnly = append(p.fileOnly, int32(start), int32(len(p.buf)))
		p.cmds++
	} else {
		p.repl = append(p.repl, int32(start), int32(len(p.buf)))
	}
}

// Len returns the number of bytes pending in the batch.
func (p *Producer) Len() int { return len(p.buf) }

// Submit hands the pending batch to the writer as one unit and returns its
// sequence number. Sequence numbers are strictly increasing across all the
// producers of a log: submission order is log order. The batch is written
// (and, under "always", fsynced) once Written() (Durable()) reaches the
// returned number; if its group fails, OnFailed reports it.
//
// With nothing pending, Submit returns the highest sequence number assigned
// so far: waiting for it is a barrier for everything submitted before.
func (p *Producer) Submit() uint64 {
	queued := len(p.buf) > 0
	s := p.SubmitQuiet()
	if queued {
		p.l.signal()
	}
	return s
}

// SubmitQuiet is Submit without waking the writer: the caller then calls
// WriteNow, and Signal if that did not write.
func (p *Producer) SubmitQuiet() uint64 {
	l := p.l
	l.mu.Lock()
	if len(p.buf) == 0 {
		s := l.seq
		l.mu.Unlock()
		return s
	}
	l.seq++
	s := l.seq
	l.queue = append(l.queue, batch{seq: s, buf: p.buf, firstDB: p.firstDB, lastDB: p.db, cmds: p.cmds, repl: p.repl, fileOnly: p.fileOnly})
	l.queueBytes += int64(len(p.buf))
	l.submitted.Add(uint64(p.cmds))
	if n := len(l.free); n > 0 {
		p.buf = l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
	} else {
		p.buf = make([]byte, 0, 512)
	}
	l.mu.Unlock()
	p.firstDB, p.db = -1, -1
	p.cmds = 0
	p.repl, p.fileOnly = nil, nil // the batch's now
	return s
}
