package aof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/redshard/redshard/failpoint"
)

// The group-commit protocol.
//
// Actors. Producers (one per event loop) encode records into private
// buffers and Submit them as batches. One writer goroutine (run) owns the
// current incr file and is the only goroutine that writes to it — except
// that a loop may run a writer round itself (write, and under "always" the
// fdatasync) right after its Submit when the writer is idle (WriteNow);
// rounds are serialised by wmu, so the file still has one writer at a time. One syncer
// goroutine fsyncs the file once a second under "everysec".
//
// Positions. Every batch gets a sequence number at Submit, under mu, and is
// appended to queue in the same critical section: queue order is sequence
// order is file order. Two positions are published with atomic stores and
// only grow:
//
//	written: every batch with seq <= written is in the file (write(2)
//	         returned; under "always", its fdatasync too).
//	durable: every batch with seq <= durable is covered by a successful
//	         fdatasync.
//
// Signals. Submit → writer: a non-blocking send on wake (capacity 1, so a
// burst of submissions costs one wake-up). Syncer → writer: syncRes under
// mu, then the same send. Writer → loops: written/durable, then the
// OnDurable callback (the server wakes its loops from it); failures go
// through OnFailed. Nobody ever waits for the writer while holding mu.
//
// One round of the writer:
//  0. Under "always", gather (gather.go): if fewer commands are pending
//     than the last group carried, wait — at most half an fsync, 1ms at
//     most — for the clients that group released to submit again.
//  1. Take mu once; swap out queue (the whole backlog, from every
//     producer) and the syncer's result; release mu. Producers keep
//     submitting into a fresh slice meanwhile.
//  2. Copy the drained batches into one group buffer, in sequence order.
//     A batch records the databases of its first and last commands; when
//     the first differs from the database the file is in (the previous
//     batch's last), the writer inserts SELECT before it. A new file
//     starts in no database, so its first batch always gets a SELECT.
//     Records for the replication stream only (PUBLISH) are left out of
//     the group; a group that has some gets a second buffer for the Tap,
//     with them in their places. A group of them alone writes nothing
//     (no annotation, no fdatasync) and still publishes its positions.
//  3. Fill the room reserved in front of the group with its annotation,
//     "#B:<len>:<crc32c>\r\n", and write the annotation and the group with
//     ONE write(2).
//  4. Under "always", ONE fdatasync. Only then publish written = durable =
//     the group's last sequence. Under "everysec" and "no", publish written
//     right after the write: the server releases replies once written
//     passes their batch, so a kill -9 loses nothing acknowledged; the
//     page cache has it.
//  5. Call OnDurable(written, durable).
//  While the writer does 3–4, producers fill the next group: the longer the
//  fsync, the bigger the next group, which is the point of group commit.
//
// Everysec. Every second the syncer takes fileMu, reads written (every
// batch up to it is in the current file: files change only under fileMu),
// fdatasyncs the file (concurrently with the writer's appends, which Linux
// allows), releases fileMu and hands {seq, err} to the writer, which
// publishes durable = seq and calls OnDurable, or enters the error state.
//
// Barriers. A rewrite's switch to a new incr file travels in the queue as a
// marker after the batch with the cut sequence. The writer writes the group
// before the marker to the old file, fsyncs the old file (so durable may
// pass its last batch), and only then swaps the file under fileMu. The
// marker is not passed while the group before it cannot be written: a
// batch at or below the cut must land in the old file, because the new base
// already contains it.
//
// Errors. A failed write(2), fdatasync or ftruncate puts the writer in the
// error state: Err() returns the error (the server answers writes with
// -MISCONF), OnFailed reports the group's sequences, and the group is kept.
// A partial write is cut off with ftruncate at once (as Redis does); a
// failed fdatasync leaves the written bytes in doubt, so they are cut off
// before the retry too (the kernel may have dropped the dirty pages and a
// later fsync would not bring them back). Batches submitted while in the
// error state are reported to OnFailed as soon as they are drained (they
// fail fast), and appended to the kept group: nothing is dropped, because
// the server has already applied them to its data set, and a later command
// may depend on them. The writer retries the whole kept group with
// exponential backoff (retryMin to retryMax); before each attempt it cuts the
// file back to the last good offset. The first success clears the error
// state and publishes the positions past every kept batch. written and
// durable never pass a failed batch before that. The file never holds a
// partial group except while the process is dying, which recovery handles.
//
// Failpoints (package failpoint). aof-write stands before step 3's write,
// aof-fsync between it and step 4's fdatasync (and before the syncer's),
// aof-publish between the fdatasync and the stores of written/durable,
// aof-published between those and OnDurable; rewrite-cut follows a file
// switch. All but the syncer's run under wmu, the syncer's under fileMu:
// a sleep there stalls the log (loops see a slow disk: WriteNow only
// TryLocks wmu, held replies wait) and never deadlocks, since no holder of
// wmu or fileMu waits for a loop. error at aof-write/aof-fsync is returned
// as the write's or fdatasync's *os.PathError, so the error state above is
// exactly a failing disk's.

// batch is one submission, or a switch marker (sw != nil).
type batch struct {
	seq     uint64
	buf     []byte
	firstDB int // -1: the batch holds replication-only records alone
	lastDB  int
	cmds    int     // commands in the batch (metrics)
	repl    []int32 // replication-only records, [start, end) pairs in buf
	// fileOnly are the records for the file only, [start, end) pairs in
	// buf (Producer.AppendTo)
	fileOnly []int32
	sw       *switchReq
}

// switchReq asks the writer to continue in a new incr file.
type switchReq struct {
	file File
	name string
	done chan struct{} // closed when the writer has switched
}

type syncResult struct {
	seq uint64
	err error
}

// writerState is owned by whoever holds Log.wmu — the writer goroutine,
// or a loop in WriteNow; nothing else touches it once Open has returned.
type writerState struct {
	l      *Log
	file   File
	off    int64 // size of file as far as whole groups go
	fileDB int   // database the file is in after its last group; -1: none

	q []batch // drained, not yet in a group (stops at a switch that must wait)

	grp        []byte // groupHeaderRoom reserved bytes, then the payload
	grpFrom    uint64
	grpTo      uint64
	grpDB      int // database after the payload
	grpStartDB int // database the file was in before the payload (the tap's)
	// tapGrp is the Tap's payload when a batch of the group holds
	// replication-only or file-only records (tapOn): the file's payload
	// with the former in their places and without the latter. Otherwise
	// the Tap gets the file's payload itself.
	tapGrp     []byte
	tapOn      bool
	grpBatches int
	grpCmds    int   // commands in the group (metrics)
	grpBytes   int64 // batch bytes in the group, for PendingBytes
	lastTS     int64 // unix second of the last timestamp annotation written
	doneBytes  int64 // batch bytes written since the last release
	recycle    [][]byte

	failing    bool
	needTrunc  bool   // cut the file back to off before writing again
	failedTo   uint64 // highest sequence reported to OnFailed
	delay      time.Duration
	retry      *time.Timer
	lastErrLog time.Time

	onDurable func(written, durable uint64)
	onFailed  func(from, to uint64, err error)
}

func (w *writerState) init(l *Log, f File) {
	w.l = l
	w.file = f
	w.fileDB = -1
	w.grp = make([]byte, groupHeaderRoom, 64<<10)
}

// run is the writer goroutine. Each round runs under wmu, which a loop
// may also take to run a round itself (WriteNow).
func (l *Log) run() {
	w := &l.w
	defer close(l.done)
	var retryC <-chan time.Time
	for {
		retryDue := false
		select {
		case <-l.wake:
		case <-retryC:
			retryDue = true
		}
		if !retryDue && l.gather(retryC) {
			retryDue = true
		}
		l.wmu.Lock()
		if retryDue {
			w.retry = nil
		}
		done := w.round(retryDue)
		retryC = nil
		if w.retry != nil {
			retryC = w.retry.C
		}
		l.wmu.Unlock()
		if done {
			return
		}
	}
}

// round drains the queue and writes it; it reports whether the log is
// closing (and then has finished).
func (w *writerState) round(retryDue bool) bool {
	l := w.l
	l.mu.Lock()
	w.drain()
	sr := l.syncRes
	l.syncRes = nil
	closing := l.closing
	l.mu.Unlock()

	if sr != nil {
		w.syncDone(sr)
	}
	if w.failing {
		w.failFast()
		if !retryDue && !closing {
			return false
		}
	}
	w.process()
	w.release()
	if closing {
		w.finish()
		return true
	}
	return false
}

// drain takes the whole submission queue. l.mu is held.
func (w *writerState) drain() {
	l := w.l
	drained := l.queue
	l.gth.drained = l.submitted.Load()
	if len(w.q) == 0 {
		l.queue, w.q = w.q[:0], drained
	} else {
		w.q = append(w.q, drained...)
		clear(drained)
		l.queue = drained[:0]
	}
	w.onDurable, w.onFailed = l.onDurable, l.onFailed
}

// WriteNow runs a writer round on the calling goroutine — an event loop at
// the end of its poll round, right after its Submit — when nothing else is
// under way (the writer goroutine's round, a rewrite's file switch, an
// error being retried, the syncer's result, Close). It reports whether it
// wrote the queue; if not, the caller must Signal the writer.
//
// Under everysec the server releases replies once their batch is written
// (as Redis writes the AOF buffer in beforeSleep before it sends replies),
// so waking the writer goroutine and being woken back by it was on every
// poll round's path: two thread wake-ups for one write(2). A write(2) to
// the page cache is short enough to make on the loop, as Redis does.
//
// Under always, with one producer (one shard), the round includes the
// fdatasync, as Redis's beforeSleep does, as long as the disk is fast (the
// smoothed fsync time is under inlineFsyncMax): the loop then writes the
// replies of its round right after, with no thread hand-off either way.
// With several producers the writer goroutine keeps every round under
// always, so that one fsync serves the batches of all the shards: loops
// that fsynced their own rounds made 2-3 times the fsyncs at -P 16 with
// two shards (2960-4620 against 1483-1589 per 400k SETs).
// Measured with one shard on 2 cores against the writer goroutine doing
// every round (3 alternating rounds beside redis-server 7.0.15, SET -c 50,
// 100k/400k requests): -P 1 39-44k ops/s instead of 30-32k (Redis 37-45k),
// 1.2-1.4k fsyncs/s instead of 0.75-0.84k, server CPU 1.4-1.7 s instead of
// 2.5-2.8 s per 100k; -P 16 366-474k instead of 253-396k (Redis 192-284k).
// The writer goroutine's way cost three threads' wake-ups per fsync
// (loop → writer per submission while it gathered, writer → loop at the
// end) and a loop woken for nearly every client that came back. On a slow
// disk the loop would stall its reads for the whole fsync, so then the
// writer goroutine takes the rounds again, as it does after a failure.
func (l *Log) WriteNow() bool {
	if !l.wmu.TryLock() {
		return false
	}
	if l.policy.Load() == policyAlways && (l.producers.Load() > 1 || l.gth.fsyncAvg > int64(inlineFsyncMax)) {
		l.wmu.Unlock()
		return false
	}
	w := &l.w
	l.mu.Lock()
	if w.failing || l.closing || l.syncRes != nil || l.rw != nil || len(w.q) > 0 {
		l.mu.Unlock()
		l.wmu.Unlock()
		return false
	}
	w.drain()
	l.mu.Unlock()
	w.process()
	w.release()
	failing := w.failing
	l.wmu.Unlock()
	if failing {
		l.signal() // the writer goroutine takes over the retries
	}
	return true
}

// inlineFsyncMax is the smoothed fsync time above which a loop no longer
// fsyncs in WriteNow under always.
const inlineFsyncMax = 2 * time.Millisecond

// Signal wakes the writer goroutine (after SubmitQuiet).
func (l *Log) Signal() { l.signal() }

// process puts the drained batches into the group and writes it; at a
// switch marker it writes the group before it to the old file first.
func (w *writerState) process() {
	i := 0
	for ; i < len(w.q); i++ {
		b := &w.q[i]
		if b.sw != nil {
			if !w.flush() || !w.switchFile(b.sw) {
				break
			}
			continue
		}
		w.add(b)
	}
	if i == len(w.q) {
		w.flush()
	}
	n := copy(w.q, w.q[i:])
	clear(w.q[n:])
	w.q = w.q[:n]
}

// add appends one batch to the group, with a SELECT in front if the
// database at this point of the file differs from the batch's first.
func (w *writerState) add(b *batch) {
	if w.grpBatches == 0 {
		w.grp = w.grp[:groupHeaderRoom]
		w.grpFrom = b.seq
		w.grpDB = w.fileDB
		w.grpStartDB = w.fileDB
		w.tapOn = false
	}
	if b.firstDB >= 0 && b.firstDB != w.grpDB {
		w.grp = appendSelect(w.grp, b.firstDB)
		if w.tapOn {
			w.tapGrp = appendSelect(w.tapGrp, b.firstDB)
		}
	}
	if (len(b.repl) > 0 || len(b.fileOnly) > 0) && !w.tapOn {
		w.tapGrp = append(w.tapGrp[:0], w.grp[groupHeaderRoom:]...)
		w.tapOn = true
	}
	if w.tapOn { // the stream's part: the batch without the file's own records
		w.tapGrp = appendExcept(w.tapGrp, b.buf, b.fileOnly)
	}
	w.grp = appendExcept(w.grp, b.buf, b.repl) // the file's: without the stream's own
	if b.firstDB >= 0 {
		w.grpDB = b.lastDB
	}
	w.grpTo = b.seq
	w.grpBatches++
	w.grpCmds += b.cmds
	w.grpBytes += int64(len(b.buf))
	w.recycle = append(w.recycle, b.buf)
	b.buf = nil
}

// appendExcept appends buf to dst without the [start, end) spans of skip.
func appendExcept(dst, buf []byte, skip []int32) []byte {
	pos := 0
	for i := 0; i+1 < len(skip); i += 2 {
		dst = append(dst, buf[pos:skip[i]]...)
		pos = int(skip[i+1])
	}
	return append(dst, buf[pos:]...)
}

// flush writes the group (one write, and one fdatasync under "always") and
// publishes its positions. It returns false, with the group kept and the
// error state set, if the group could not be made as durable as the
// policy requires.
func (w *writerState) flush() bool {
	if w.grpBatches == 0 {
		return true
	}
	l := w.l
	always := l.policy.Load() == policyAlways
	if w.needTrunc {
		if err := w.file.Truncate(w.off); err != nil {
			w.fail("ftruncate", err, w.grpFrom, w.grpTo)
			return false
		}
		w.needTrunc = false
	}
	if d := l.flushSleep.Load(); d > 0 {
		time.Sleep(time.Duration(d)) // DEBUG AOF-FLUSH-SLEEP
	}
	var ts int64
	if l.timestamps.Load() {
		// One annotation per second at most, before the first group of
		// that second, as Redis's genAofTimestampAnnotationIfNeeded.
		if now := time.Now().Unix(); now > w.lastTS {
			ts = now
		}
	}
	var out []byte
	var n int
	var err error
	// A group of replication-only records alone has nothing for the file.
	empty := len(w.grp) == groupHeaderRoom
	if l.memory || empty {
		out = w.grp[groupHeaderRoom:] // no file, or nothing for it: nothing to seal or write
		n = len(out)
		ts = 0
	} else {
		out = sealGroupTS(w.grp, ts)
		tw := time.Now()
		if e := failpoint.Inject(failpoint.AOFWrite); e != 0 {
			err = &os.PathError{Op: "write", Path: fileName(w.file), Err: e}
		} else {
			n, err = w.file.Write(out)
		}
		l.latency("aof-write", time.Since(tw))
	}
	if err == nil && n < len(out) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Never leave a partial group in the middle of the file: cut it now,
		// or before the next attempt if that fails too.
		w.needTrunc = true
		if n > 0 {
			if terr := w.file.Truncate(w.off); terr == nil {
				w.needTrunc = false
			} else {
				w.logError("Could not remove short write from the append-only file. Will retry: ftruncate: %v", terr)
			}
		} else {
			w.needTrunc = false
		}
		w.fail("write", err, w.grpFrom, w.grpTo)
		return false
	}
	if always && !empty {
		t0 := time.Now()
		var serr error
		if e := failpoint.Inject(failpoint.AOFFsync); e != 0 {
			serr = &os.PathError{Op: "fdatasync", Path: fileName(w.file), Err: e}
		} else {
			serr = w.file.Sync()
		}
		if serr != nil {
			w.needTrunc = true
			w.fail("fsync", serr, w.grpFrom, w.grpTo)
			return false
		}
		d := time.Since(t0)
		l.recordFsync(d)
		l.latency("aof-fsync-always", d)
		l.gatherNext(w.grpCmds, d)
	}
	if !empty { // a group the file got
		l.hist.group.Observe(int64(w.grpBatches))
		l.hist.groupCmds.Observe(int64(w.grpCmds))
		w.off += int64(n)
		if ts > 0 {
			w.lastTS = ts
		}
		l.stats.groups.Add(1)
		l.stats.batches.Add(uint64(w.grpBatches))
		l.stats.bytes.Add(uint64(n))
		l.stats.lastGroupBytes.Store(int64(n))
		l.stats.lastGroupBatch.Store(int64(w.grpBatches))
		l.stats.incrSize.Store(w.off)
	}

	if tap := l.tap.Load(); tap != nil {
		payload := w.grp[groupHeaderRoom:]
		if w.tapOn {
			payload = w.tapGrp
		}
		(*tap)(payload, w.grpStartDB, w.grpDB, w.grpTo)
	}
	w.tapOn = false
	if cap(w.tapGrp) > 16<<20 {
		w.tapGrp = nil
	}
	to := w.grpTo
	w.fileDB = w.grpDB
	w.doneBytes += w.grpBytes
	w.grpBytes = 0
	w.grpBatches = 0
	w.grpCmds = 0
	w.grp = w.grp[:groupHeaderRoom]
	if cap(w.grp) > 16<<20 {
		w.grp = make([]byte, groupHeaderRoom, 64<<10)
	}
	// aof-publish: the group is in the file (and synced under always) but
	// no loop may release a reply for it yet.
	failpoint.Inject(failpoint.AOFPublish)
	maxStore(&l.written, to)
	if always {
		maxStore(&l.durable, to)
	}
	if w.failing {
		w.recovered()
	}
	// aof-published: the positions are public (a loop polling them may
	// already release replies), the loops are not told yet.
	failpoint.Inject(failpoint.AOFPublished)
	w.notify()
	return true
}

// fileName is a log file's name for the errors a failpoint makes up.
func fileName(f File) string {
	if n, ok := f.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

func (w *writerState) notify() {
	if w.onDurable != nil {
		w.onDurable(w.l.written.Load(), w.l.durable.Load())
	}
}

// switchFile moves appends to the new incr file of a rewrite. The group
// before the marker has been written to the old file.
func (w *writerState) switchFile(sw *switchReq) bool {
	l := w.l
	old := w.file
	t0 := time.Now()
	if err := old.Sync(); err != nil {
		w.fail("fsync", err, l.durable.Load()+1, l.written.Load())
		return false
	}
	l.recordFsync(time.Since(t0))
	maxStore(&l.durable, l.written.Load())
	l.fileMu.Lock()
	l.mu.Lock()
	l.file = sw.file
	l.mu.Unlock()
	l.fileMu.Unlock()
	if err := old.Close(); err != nil {
		l.o.Logf(LogWarning, "Error closing the previous AOF incr file: %v", err)
	}
	w.file = sw.file
	w.off = 0
	w.lastTS = 0 // each incr file starts with its own timestamp (aof-timestamp-enabled)
	w.fileDB = -1
	l.stats.otherSize.Add(l.stats.incrSize.Load())
	l.stats.incrSize.Store(0)
	if w.failing {
		w.recovered()
	}
	// rewrite-cut: appends go to the new incr file, which the manifest
	// already lists; the old one is synced. Runs on the writer under wmu:
	// sleep here stalls every log write, as a slow disk would.
	failpoint.Inject(failpoint.RewriteCut)
	close(sw.done)
	w.notify()
	return true
}

// fail enters (or stays in) the error state after a failed operation on
// the group with sequences from..to.
func (w *writerState) fail(op string, err error, from, to uint64) {
	l := w.l
	l.stats.writeErrors.Add(1)
	err = &WriteError{Op: op, Err: err}
	l.mu.Lock()
	l.writeErr = err
	l.mu.Unlock()
	if !w.failing {
		w.failing = true
		w.delay = l.o.retryMin
	} else {
		w.delay = min(2*w.delay, l.o.retryMax)
	}
	w.logError("Error writing to the AOF file: %v", err)
	w.report(from, to, err)
	w.failFast()
	if w.retry != nil {
		w.retry.Stop()
	}
	w.retry = time.NewTimer(w.delay)
}

// failFast reports the drained batches that wait behind a failed group.
func (w *writerState) failFast() {
	var hi uint64
	for i := len(w.q) - 1; i >= 0; i-- {
		if w.q[i].sw == nil {
			hi = w.q[i].seq
			break
		}
	}
	if hi > 0 {
		w.l.mu.Lock()
		err := w.l.writeErr
		w.l.mu.Unlock()
		if err == nil {
			return
		}
		w.report(w.failedTo+1, hi, err)
	}
}

// report calls OnFailed for the sequences in from..to not reported before.
func (w *writerState) report(from, to uint64, err error) {
	from = max(from, w.failedTo+1, w.l.written.Load()+1)
	if from > to || to == 0 {
		return
	}
	w.failedTo = to
	if w.onFailed != nil {
		w.onFailed(from, to, err)
	}
}

func (w *writerState) recovered() {
	l := w.l
	w.failing = false
	w.delay = 0
	if w.retry != nil {
		w.retry.Stop()
		w.retry = nil
	}
	l.mu.Lock()
	l.writeErr = nil
	l.mu.Unlock()
	l.o.Logf(LogWarning, "AOF write error looks solved, Redis can write again.")
}

// logError logs at most one line per 30 seconds, as Redis's
// AOF_WRITE_LOG_ERROR_RATE.
func (w *writerState) logError(format string, args ...any) {
	if now := time.Now(); now.Sub(w.lastErrLog) > 30*time.Second {
		w.lastErrLog = now
		w.l.o.Logf(LogWarning, format, args...)
	}
}

// syncDone handles the syncer's result.
func (w *writerState) syncDone(sr *syncResult) {
	l := w.l
	if sr.err == nil {
		maxStore(&l.durable, sr.seq)
		l.mu.Lock()
		wasErr := l.syncErr != nil
		l.syncErr = nil
		l.mu.Unlock()
		if wasErr {
			l.o.Logf(LogWarning, "AOF fsync error looks solved, Redis can write again.")
		}
		w.notify()
		return
	}
	err := &WriteError{Op: "fsync", Err: sr.err}
	l.stats.writeErrors.Add(1)
	l.mu.Lock()
	l.syncErr = err
	l.mu.Unlock()
	w.logError("Error syncing the AOF file: %v", err)
	// The batches were acknowledged under everysec; the report lets the
	// server count them, and nothing past them becomes durable until an
	// fsync succeeds.
	from := max(l.durable.Load()+1, w.failedTo+1)
	if from <= sr.seq {
		w.failedTo = sr.seq
		if w.onFailed != nil {
			w.onFailed(from, sr.seq, err)
		}
	}
}

// release hands the written batches' buffers back to the producers.
func (w *writerState) release() {
	l := w.l
	l.mu.Lock()
	l.queueBytes -= w.doneBytes
	w.doneBytes = 0
	for i, b := range w.recycle {
		if cap(b) <= 1<<20 && len(l.free) < 1024 {
			l.free = append(l.free, b[:0])
		}
		w.recycle[i] = nil
	}
	l.mu.Unlock()
	w.recycle = w.recycle[:0]
}

// finish is the writer's last round, at Close.
func (w *writerState) finish() {
	l := w.l
	var err error
	if w.failing || len(w.q) > 0 || w.grpBatches > 0 {
		l.mu.Lock()
		err = l.writeErr
		l.mu.Unlock()
		if err == nil {
			err = fmt.Errorf("aof: close with unwritten records")
		}
	} else {
		t0 := time.Now()
		if serr := w.file.Sync(); serr != nil {
			err = &WriteError{Op: "fsync", Err: serr}
		} else {
			l.recordFsync(time.Since(t0))
			maxStore(&l.durable, l.written.Load())
			w.notify()
		}
	}
	if w.retry != nil {
		w.retry.Stop()
	}
	l.fileMu.Lock()
	if cerr := w.file.Close(); cerr != nil && err == nil {
		err = cerr
	}
	l.fileMu.Unlock()
	l.closeErr = err
}

func (l *Log) recordFsync(d time.Duration) {
	l.stats.fsyncs.Add(1)
	l.stats.fsyncNanos.Add(int64(d))
	l.hist.fsync.Observe(int64(d))
	maxStoreInt(&l.stats.fsyncMaxNanos, int64(d))
}

// syncer is the everysec fsync goroutine.
func (l *Log) syncer() {
	defer close(l.syncDone)
	t := time.NewTicker(l.o.syncEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stopSync:
			return
		case <-t.C:
		}
		if l.policy.Load() != policyEverysec {
			continue
		}
		l.fileMu.Lock()
		seq := l.written.Load()
		if seq <= l.durable.Load() {
			l.fileMu.Unlock()
			continue
		}
		l.mu.Lock()
		f := l.file
		l.mu.Unlock()
		t0 := time.Now()
		var err error
		if e := failpoint.Inject(failpoint.AOFFsync); e != 0 {
			err = &os.PathError{Op: "fdatasync", Path: fileName(f), Err: e}
		} else {
			err = f.Sync()
		}
		d := time.Since(t0)
		l.fileMu.Unlock()
		if err == nil {
			l.recordFsync(d)
		}
		l.mu.Lock()
		l.syncRes = &syncResult{seq: seq, err: err}
		l.mu.Unlock()
		l.signal()
	}
}

// WriteError is a failed operation on the AOF file.
type WriteError struct {
	Op  string // "write", "fsync", "ftruncate"
	Err error
}

func (e *WriteError) Error() string { return "aof: " + e.Op + ": " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Reason returns the error as Redis words it after "-MISCONF Errors
// writing to the AOF file: ": the C library's message for the errno
// ("No space left on device"), or the error text if there is no errno.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	var en syscall.Errno
	for e := err; e != nil; {
		if x, ok := e.(syscall.Errno); ok {
			en = x
			break
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	if en == 0 {
		if errors.Is(err, io.ErrShortWrite) {
			return "No space left on device" // Redis sets ENOSPC on a short write
		}
		return err.Error()
	}
	s := en.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
