package server

// Persistence: how writes reach the AOF and how replies wait for it.
//
// Every loop has one aof.Producer. A command that changes the dataset
// appends what Redis would propagate (x.Prop) to the producer of the loop
// that runs it — the home loop for inline commands, the target loop for a
// hop, the executor for a cross-shard transaction — and so do keys that
// expire on the way (Shard.OnExpired points at the running loop's producer).
// At the end of every event (a read, a hop, a transaction, a cron tick) a
// loop submits its producer once: one global sequence number per batch,
// taken under the log's mutex, so submission order is log order. A loop
// always submits before its event ends, and a transaction's executor
// submits before it releases the parked loops, so two writes to the same
// key are submitted in the order they ran.
//
// Replies wait for the log (contract 4): a client's batch may be written to
// its socket only when the log's published position — Written(), which under
// "always" moves only after the fsync — has reached need, the highest of
//   - the sequence of every batch that holds one of its writes, and
//   - lastSeq of every shard its commands touched (the last batch that
//     wrote that shard), so that a reader never sees a write the log does
//     not yet hold.
// A client whose replies wait is held: its later input queues, as during a
// hop. The writer's OnDurable callback wakes each loop that holds clients,
// once per group. A failed write or fsync leaves replies held (never a
// silent +OK) while the writer retries; new writes answer -MISCONF.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// persist is the server's side of the log; nil when appendonly is no.
type persist struct {
	log     *aof.Log
	lastSeq []uint64      // per shard: the last submitted batch that wrote it (owned like the shard)
	pend    []pendingKeys // per shard: keys whose last write the log may not hold yet
}

// loopPersist is a loop's side of the log.
type loopPersist struct {
	prod      *aof.Producer
	wrote     uint64 // shards written during this event
	waiters   []*Client
	flushList []*Client
	held      []*Client
	wake      atomic.Bool
	wakeRun   gnet.Runnable
	endRun    gnet.Runnable // endEvent, queued once per poll round (deferEnd)
	endQueued bool
	inline    bool         // submitting at the end of a poll round (endEvent)
	curKeys   []pendingKey // keys written this event, resolved at submit
	expHook   func(db *shard.DB, key []byte)
}

var (
	wordDEL   = []byte("DEL")
	wordMULTI = []byte("MULTI")
	wordEXEC  = []byte("EXEC")
)

// openLog opens the AOF (manifest, files, writer) before the listeners
// start, and sets up the loops' side of it; the data is loaded later, by
// startLoading, while the server already answers -LOADING.
func (srv *Server) openLog() error {
	srv.installPersistHooks()
	srv.installReplHooks() // repl_master.go
	if !srv.cfg.AppendOnly() {
		return nil
	}
	return srv.attachLog(false)
}

// attachLog opens the log and connects the loops to it; fresh starts a new
// log for the data set in memory (CONFIG SET appendonly yes).
func (srv *Server) attachLog(fresh bool) error {
	lg, err := aof.Open(srv.aofOptions(fresh))
	if err != nil {
		return err
	}
	return srv.attach(lg)
}

// attach connects the loops to an open log (a file log, or a memory log
// that only orders the replication stream).
func (srv *Server) attach(lg *aof.Log) error {
	lg.SetTap(srv.replTap) // the replication stream (repl_master.go)
	srv.persist = &persist{log: lg, lastSeq: make([]uint64, len(srv.shards)), pend: make([]pendingKeys, len(srv.shards))}
	lg.OnLatency(srv.addLatency) // aof-write, aof-fsync-always (latency.go)
	lg.SetFlushSleep(time.Duration(srv.aofFlushSleep.Load()) * time.Microsecond)
	for _, l := range srv.loops {
		l := l
		l.p.prod = lg.NewProducer()
		l.p.wakeRun = gnet.RunnableFunc(func(context.Context) error {
			l.p.wake.Store(false)
			l.releaseHeld()
			l.endEvent()
			return nil
		})
		l.p.expHook = func(db *shard.DB, key []byte) {
			s := db.ShardID()
			l.p.wrote |= 1 << uint(s)
			l.p.prod.Append(db.ID, [][]byte{wordDEL, key})
			h := shard.Hash(key)
			l.srv.persist.pend[s].mark(h)
			l.p.curKeys = append(l.p.curKeys, pendingKey{s, h})
		}
	}
	lg.OnFailed(func(from, to uint64, err error) {
		srv.logFailing.Store(true)
		srv.log.Warningf("Error writing to the AOF file: %s", aof.Reason(err))
		// Replies held for these records become errors (failHeld).
		srv.wakeHeld()
	})
	lg.OnDurable(func(written, durable uint64) {
		if srv.logFailing.Load() && lg.Err() == nil {
			srv.logFailing.Store(false)
			srv.log.Warningf("AOF write error looks solved, Redis can write again.")
		}
		srv.wakeHeld()
	})
	return nil
}

// aofOptions are the log's options from the configuration.
func (srv *Server) aofOptions(fresh bool) aof.Options {
	cfg := srv.cfg
	return aof.Options{
		Dir:           cfg.Dir(),
		DirName:       cfg.AppendDirname(),
		FileName:      cfg.AppendFilename(),
		Fsync:         cfg.AppendFsync(),
		LoadTruncated: cfg.AOFLoadTruncated(),
		Timestamps:    cfg.AOFTimestampEnabled(),
		DisableAutoGC: cfg.AOFDisableAutoGC(),
		Fresh:         fresh,
		RDB: func(r io.Reader) (int64, error) { // an RDB base: loadLog's reader
			if srv.rdbBase == nil {
				return 0, errors.New("an RDB base outside a load")
			}
			return srv.rdbBase(r)
		},
		RDBBase: cfg.AOFUseRDBPreamble(),
		Logf: func(level int, format string, args ...any) {
			srv.log.Logf(LogLevel(level), format, args...)
		},
	}
}

// wakeHeld queues a release of the held clients on every loop that has
// some (from the writer goroutine, or after the log is closed).
func (srv *Server) wakeHeld() {
	for _, l := range srv.loops {
		if l.heldCount.Load() > 0 && l.p.wakeRun != nil && l.p.wake.CompareAndSwap(false, true) {
			if l.post(l.p.wakeRun) != nil {
				l.p.wake.Store(false)
			}
		}
	}
}

// Loading (Redis's startLoading / loadDataFromDisk, with the listeners up).
//
// The listeners start before the log is read. While it is, srv.load.active
// is set and a command without the "loading" flag is answered
// "-LOADING Redis is loading the dataset in memory" (Client.check); INFO,
// CONFIG, CLIENT, HELLO, ... run. The loader is a goroutine of its own and
// replays the log into shards of its own, which no loop can reach: the
// loops keep their empty shards meanwhile (so INFO and the cron may touch
// them as always). When the log is read, the loaded shards replace the
// empty ones while every loop is parked (parkAll), and the flag is cleared
// in the same stop: no command ever sees half a data set.

// loadState is the server's loading state.
type loadState struct {
	active  atomic.Bool   // the data set is being loaded: -LOADING
	start   atomic.Int64  // loading_start_time (unix seconds)
	failed  chan error    // the loader's error, for Run (capacity 1)
	exited  chan struct{} // closed when the loader goroutine returns
	aborted atomic.Bool   // the loader stopped because the server is stopping
	// caller is the client whose DEBUG LOADAOF replays the log meanwhile
	// (reloadData): the watchdog leaves it alone (busy.go).
	caller atomic.Pointer[Client]
	gate   loadGate
}

// loadGate holds clients' reads, unread, while a small data set loads at
// start. Redis serves no event while it loads, except every
// loading-process-events-interval-bytes of an RDB (and every 1024
// commands of a non-empty AOF): a client that connects as a small data set
// loads is answered once it is loaded, and never sees -LOADING. redshard's
// loops serve clients beside the loader, so without the gate such a client
// got -LOADING (a script that starts the server and talks to it at once,
// Redis's own test harness among them). A data set of at least
// loading-process-events-interval-bytes opens no gate: its clients get
// -LOADING, as Redis's would from its first events pass on.
//
// The gate closes before gnet listens and opens when the load is done and
// the server is ready, both; the clients that waited are woken (gnet's
// Wake runs OnTraffic with what they sent). The loops' discovery probes
// pass it (OnTraffic's probing).
type loadGate struct {
	closed atomic.Bool
	holds  atomic.Int32 // the load's end and the server's readiness
	mu     sync.Mutex
	conns  []gnet.Conn
}

// wait records c to be woken when the gate opens; false if it is open.
func (g *loadGate) wait(c gnet.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed.Load() {
		return false
	}
	g.conns = append(g.conns, c)
	return true
}

// release is one of the gate's two holds ending; the second opens it.
func (g *loadGate) release() {
	if !g.closed.Load() || g.holds.Add(-1) != 0 {
		return
	}
	g.mu.Lock()
	g.closed.Store(false)
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	for _, c := range conns {
		_ = c.Wake(nil)
	}
}

// closeLoadGate closes the gate if what startLoading will load is smaller
// than loading-process-events-interval-bytes. Called before gnet listens.
func (srv *Server) closeLoadGate() {
	var total int64
	if srv.persist != nil {
		_, total = srv.persist.log.LoadProgress()
	} else if st, err := os.Stat(srv.rdbPath()); err == nil {
		total = st.Size()
	} else {
		return // nothing to load
	}
	if total >= srv.cfg.intOr("loading-process-events-interval-bytes", 2<<20) {
		return
	}
	srv.load.gate.holds.Store(2)
	srv.load.gate.closed.Store(true)
}

const loadingError = "LOADING Redis is loading the dataset in memory"

// errLoadAborted stops a load when the server shuts down during it.
var errLoadAborted = errors.New("loading aborted: the server is shutting down")

// startLoading starts the loader goroutine if there is a log to load. It is
// called once the loops run and before clients are admitted.
func (srv *Server) startLoading() {
	srv.load.failed = make(chan error, 1)
	srv.load.exited = make(chan struct{})
	load := srv.loadAtStart
	if srv.persist == nil {
		// No AOF: the RDB file, if there is one (rdbload.go).
		if _, err := os.Stat(srv.rdbPath()); err != nil {
			close(srv.load.exited)
			srv.readyToAccept()
			srv.load.gate.release()
			return
		}
		load = srv.loadRDBAtStart
	}
	srv.load.start.Store(time.Now().Unix())
	srv.load.active.Store(true)
	go func() {
		defer close(srv.load.exited)
		if err := load(); err != nil {
			if errors.Is(err, errLoadAborted) {
				srv.load.aborted.Store(true)
				return
			}
			srv.load.failed <- err
		}
	}()
}

// waitLoader waits for the loader goroutine to return (it gives up soon
// once srv.stopping is set).
func (srv *Server) waitLoader() {
	if srv.load.exited != nil {
		<-srv.load.exited
	}
}

// loadAtStart is the loader: it replays the log into new shards, then swaps
// them in with every loop parked.
func (srv *Server) loadAtStart() error {
	lg := srv.persist.log
	fresh := make([]*shard.Shard, len(srv.shards))
	for i := range fresh {
		fresh[i] = srv.newShard(i)
	}
	start := time.Now()
	srv.log.Noticef("Loading the append only file...")
	srv.sdNotify("STATUS=Loading the append only file")
	if _, err := srv.loadLog(fresh, lg.Load, true); err != nil {
		return err
	}
	if err := srv.clusterVerifyData(fresh); err != nil { // cmd_cluster.go
		return err
	}
	keys := 0
	for _, sh := range fresh {
		k, _ := sh.Keys()
		keys += k
		sh.UsedMemory() // publishes it for maxmemory (makeRoom)
	}
	took := time.Since(start)
	err := srv.parkAll(func() {
		for i, sh := range fresh {
			srv.shards[i] = sh // l.x.Shards shares this array
			srv.loops[i].sh = sh
			sh.OnNotify = srv.loops[i].ps.notifyFn
		}
		// Logged before the first command can run on the data.
		srv.log.Noticef("DB loaded from append only file: %.3f seconds (%d keys)", took.Seconds(), keys)
		srv.readyToAccept()
		srv.load.active.Store(false)
		srv.load.gate.release()
	})
	if err != nil {
		return errLoadAborted // the loops are stopping
	}
	return nil
}

// parkAll runs fn with every loop parked, from a goroutine that is not a
// loop: the chain of a cross-shard transaction (dispatch.go) over all the
// loops, in ascending order, the last one running fn. It fails, without
// running fn, if the loops are stopping.
func (srv *Server) parkAll(fn func()) error {
	n := len(srv.loops)
	done := make(chan error, 1)
	steps := make([]gnet.Runnable, n)
	for i := range steps {
		i := i
		steps[i] = gnet.RunnableFunc(func(context.Context) error {
			srv.loops[i].submit() // what it logged goes before anything fn does
			if i == n-1 {
				fn()
				srv.release(seq(n - 1))
				done <- nil
				return nil
			}
			if err := srv.loops[i+1].post(steps[i+1]); err != nil {
				srv.release(seq(i))
				done <- err
				return nil
			}
			select {
			case <-srv.loops[i].park:
			case <-srv.stopCh:
			}
			return nil
		})
	}
	if err := srv.loops[0].post(steps[0]); err != nil {
		return err
	}
	return <-done
}

// seq returns 0, 1, ..., n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func loadPercent(done, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(done) / float64(total) * 100
}

// propagate logs what a command changed (hook from Loop.call).
func (srv *Server) propagate(l *Loop, x *Exec, cmd *Cmd, argv [][]byte) {
	if srv.persist == nil {
		return
	}
	p := l.p.prod
	if x.cl != nil && x.cl.multi.running {
		x.cl.multi.propagate(x, argv) // held for one MULTI ... EXEC block (multi.go)
		return
	}
	if l.lua.run.active {
		l.lua.run.propagate(x, argv) // held until the script ends (script.go)
		return
	}
	if x.Prop.ReplOnly {
		p.AppendReplOnly(argv) // in its place in the stream, never in the file (aof.Producer)
		return
	}
	if !x.Prop.Custom {
		p.Append(x.DB, argv)
		return
	}
	cmds := x.Prop.Cmds
	if len(cmds) > 1 {
		p.Append(x.DB, [][]byte{wordMULTI})
	}
	for _, c := range cmds {
		p.Append(x.DB, c)
	}
	if len(cmds) > 1 {
		p.Append(x.DB, [][]byte{wordEXEC})
	}
}

// pendingKeys tracks, per shard, the keys written by batches the log may
// not hold yet: a read of such a key waits for that batch, a read of any
// other key waits for nothing. It is owned like the shard (its loop, or a
// transaction's executor). m maps a key's hash to the batch's sequence, or
// to seqCurrent while the write sits in the running loop's producer; fifo
// lists the submitted ones in order, so that entries the log has caught up
// with are dropped in O(1) each.
type pendingKeys struct {
	m    map[uint64]uint64
	fifo []pendingRec
	head int
}

type pendingRec struct{ hash, seq uint64 }

type pendingKey struct {
	shard int
	hash  uint64
}

const seqCurrent = ^uint64(0)

func (p *pendingKeys) mark(h uint64) {
	if p.m == nil {
		p.m = make(map[uint64]uint64)
	}
	p.m[h] = seqCurrent
}

// trim drops the entries of batches at or below the log's position.
func (p *pendingKeys) trim(pos uint64) {
	for p.head < len(p.fifo) && p.fifo[p.head].seq <= pos {
		r := p.fifo[p.head]
		if p.m[r.hash] == r.seq {
			delete(p.m, r.hash)
		}
		p.head++
	}
	if p.head == len(p.fifo) {
		p.fifo, p.head = p.fifo[:0], 0
	} else if p.head > 4096 && p.head*2 > len(p.fifo) {
		n := copy(p.fifo, p.fifo[p.head:])
		p.fifo, p.head = p.fifo[:n], 0
	}
}

// track records what a command that ran on this loop over the shards in
// mask means for the log: its writes (marked as pending in this loop's next
// submission) and what its replies must wait for — need, a submitted
// batch, and now, this loop's next submission. Server commands reveal no
// data and wait for nothing; keyless data commands (KEYS, SCAN, DBSIZE, ...)
// wait for the last write of each shard they read.
func (l *Loop) track(cmd *Cmd, argv [][]byte, mask uint64, wrote bool) (need uint64, now bool) {
	ps := l.srv.persist
	if wrote {
		l.p.wrote |= mask
		now = true
	}
	if cmd.run == nil {
		if cmd.fullName == "exec" {
			return l.execTracked() // its commands were tracked as they ran (multi.go)
		}
		if cmd.script != 0 {
			return l.scriptTracked() // its calls were tracked as they ran (script.go)
		}
		return need, now
	}
	var kbuf [16]int
	keys := cmd.keyPositions(argv, kbuf[:0])
	n := len(l.srv.shards)
	// A call that reads keys it does not declare (SORT's BY/GET patterns)
	// waits, as a keyless one does, for the last write of each shard it
	// read; its declared keys are tracked below as usual.
	if len(keys) == 0 || cmd.extraShards != nil && cmd.extraShards(argv, n) != 0 {
		for m := mask; m != 0; m &= m - 1 {
			if s := ps.lastSeq[bits.TrailingZeros64(m)]; s > need {
				need = s
			}
		}
		now = now || l.p.prod.Len() > 0
		if len(keys) == 0 {
			return need, now
		}
	}
	for _, i := range keys {
		if i >= len(argv) {
			continue
		}
		k := argv[i]
		s := shard.ShardOf(k, n)
		h := shard.Hash(k)
		pk := &ps.pend[s]
		if wrote {
			pk.mark(h)
			l.p.curKeys = append(l.p.curKeys, pendingKey{s, h})
			continue
		}
		if v, ok := pk.m[h]; ok {
			if v == seqCurrent {
				now = true
			} else if v > need {
				need = v
			}
		}
	}
	return need, now
}

// submit hands this loop's pending records to the log and returns the
// batch's sequence (0 when there was nothing to submit). The keyspace
// notifications of those writes are published then (pubsub.go).
func (l *Loop) submit() uint64 {
	seq := l.submitLog()
	if len(l.ps.noteEnts) > 0 {
		l.flushNotes(seq)
	}
	return seq
}

func (l *Loop) submitLog() uint64 {
	ps := l.srv.persist
	if ps == nil || l.p.prod.Len() == 0 {
		return 0
	}
	var seq uint64
	if l.p.inline {
		// The end of a poll round: write the batch right here if the
		// policy and the writer allow it (aof.Log.WriteNow).
		seq = l.p.prod.SubmitQuiet()
		if !ps.log.WriteNow() {
			ps.log.Signal()
		}
	} else {
		seq = l.p.prod.Submit()
	}
	// Blocked clients served since the last submission wait for this batch,
	// which holds their pops (blocking.go).
	if len(l.blk.served) > 0 {
		l.handServed(seq)
	}
	for m := l.p.wrote; m != 0; m &= m - 1 {
		ps.lastSeq[bits.TrailingZeros64(m)] = seq
	}
	l.p.wrote = 0
	for _, k := range l.p.curKeys {
		pk := &ps.pend[k.shard]
		if pk.m[k.hash] == seqCurrent {
			pk.m[k.hash] = seq
			pk.fifo = append(pk.fifo, pendingRec{k.hash, seq})
		}
	}
	l.p.curKeys = l.p.curKeys[:0]
	ps.pend[l.id].trim(ps.log.Written())
	// Whoever waits for this loop's next submission waits for this one:
	// resolve it here, whichever caller submitted (end of a poll round, a
	// hop leaving, a parking loop, BGREWRITEAOF at its cut).
	for _, cl := range l.p.waiters {
		cl.waitingNow = false
		if seq > cl.need {
			cl.need = seq
		}
	}
	l.p.waiters = l.p.waiters[:0]
	return seq
}

// deferEnd ends the events of this poll round together: the first read of
// a round queues one task to the loop itself, which runs after the round's
// other reads (gnet runs tasks after the I/O events of an epoll_wait), so
// the round's writes reach the log as one batch and one fsync covers all
// the clients served in it, as Redis's beforeSleep does. Until then the
// producer holds records; anything that lets another loop near this shard
// (a hop leaving, a transaction parking this loop) submits them first.
// Without a log the task only writes the replies (flush).
func (l *Loop) deferEnd() {
	if l.srv.persist == nil && len(l.p.flushList) == 0 {
		l.endEvent()
		return
	}
	if l.p.endQueued {
		return
	}
	if l.p.endRun == nil {
		l.p.endRun = gnet.RunnableFunc(func(context.Context) error {
			l.p.endQueued = false
			l.endEvent()
			l.busyPoll()
			return nil
		})
	}
	if l.post(l.p.endRun) != nil {
		l.endEvent()
		return
	}
	l.p.endQueued = true
}

// endEvent closes an event on the home side: submit, resolve the clients
// that depend on this submission, then write or hold their replies.
func (l *Loop) endEvent() {
	if l.srv.persist == nil {
		if len(l.p.flushList) > 0 || len(l.p.waiters) > 0 {
			l.dropWaits() // the log was closed during this event
		}
		return
	}
	l.p.inline = true
	l.submit()
	l.p.inline = false
	list := l.p.flushList
	l.p.flushList = l.p.flushList[:0]
	for _, cl := range list {
		cl.inFlush = false
		cl.deliver()
	}
}

// deliver writes the client's replies if the log has caught up, else holds them.
func (cl *Client) deliver() {
	if cl.closed {
		return
	}
	ps := cl.srv.persist
	if cl.need <= ps.log.Written() {
		cl.writeOut()
		return
	}
	if msg := cl.srv.logError(); msg != "" {
		cl.failHeld(msg)
		cl.writeOut()
		return
	}
	if !cl.held {
		cl.held = true
		l := cl.loop
		l.p.held = append(l.p.held, cl)
		l.heldCount.Add(1)
		// The log may have caught up between the check above and the
		// count: its wake-up (wakeHeld) then missed this loop.
		if cl.need <= ps.log.Written() && l.p.wake.CompareAndSwap(false, true) {
			if l.post(l.p.wakeRun) != nil {
				l.p.wake.Store(false)
			}
		}
	}
}

// releaseHeld writes the replies of held clients the log has caught up with
// and lets them go on with their queued input.
func (l *Loop) releaseHeld() {
	pos := ^uint64(0) // the log is closed: everything it had is written
	if ps := l.srv.persist; ps != nil {
		pos = ps.log.Written()
	}
	kept := l.p.held[:0]
	var ready []*Client
	failMsg := l.srv.logError()
	for _, cl := range l.p.held {
		if cl.closed {
			cl.held = false
			l.heldCount.Add(-1)
			continue
		}
		if cl.need <= pos || failMsg != "" {
			if cl.need > pos {
				cl.failHeld(failMsg)
			}
			cl.held = false
			l.heldCount.Add(-1)
			ready = append(ready, cl)
			continue
		}
		kept = append(kept, cl)
	}
	l.p.held = kept
	l.nowValid, l.tickValid = false, false
	for _, cl := range ready {
		cl.writeOut()
		if len(cl.qbuf) > 0 && !cl.closing && !cl.hopOut && cl.blocked == nil {
			cl.process(true)
		}
	}
}

// failHeld replaces a client's held replies, which wait for records the
// log failed to write or fsync, with one error each: a write whose log
// record is not known durable is never answered as if it were (the writer
// keeps retrying the records, so the outcome is unknown, not undone), and a
// read that saw such a write does not reveal it.
func (cl *Client) failHeld(msg string) {
	n := resp.CountReplies(cl.out)
	cl.out = cl.out[:0]
	for i := 0; i < n; i++ {
		cl.out = resp.AppendError(cl.out, msg)
	}
	cl.need = 0
}

// logError is the -MISCONF reply for writes while the log is failing, or "".
func (srv *Server) logError() string {
	if srv.persist == nil || !srv.logFailing.Load() {
		return ""
	}
	if err := srv.persist.log.Err(); err != nil {
		return "MISCONF Errors writing to the AOF file: " + aof.Reason(err)
	}
	return ""
}

func (srv *Server) closeLog() {
	if srv.persist != nil {
		if srv.persist.log.Memory() {
			_ = srv.persist.log.Close()
			return
		}
		if err := srv.persist.log.Close(); err != nil {
			srv.log.Warningf("Error closing the append only file: %v", err)
		} else {
			srv.log.Noticef("Calling fsync() on the AOF file.")
		}
	}
}

// dropWaits writes the replies of the clients of this event that waited
// for a log that has been closed since (CONFIG SET appendonly no).
func (l *Loop) dropWaits() {
	for _, cl := range l.p.waiters {
		cl.waitingNow = false
	}
	l.p.waiters = l.p.waiters[:0]
	list := l.p.flushList
	l.p.flushList = l.p.flushList[:0]
	for _, cl := range list {
		cl.inFlush = false
		cl.writeOut()
	}
}

// submitAll submits every loop's pending records. Every loop must be
// parked (or be the caller's): a loop parked in the middle of an event (the
// home loop of the client whose transaction parked it) may hold records.
func (srv *Server) submitAll() uint64 {
	var last uint64
	for _, l := range srv.loops {
		if s := l.submit(); s > last {
			last = s
		}
	}
	if st := srv.persist.log.Stats(); st.Submitted > last {
		last = st.Submitted
	}
	return last
}

// waitWritten waits until the log has written every batch up to seq, or
// fails when the log is in the error state (or after the timeout).
func (srv *Server) waitWritten(seq uint64, timeout time.Duration) error {
	lg := srv.persist.log
	deadline := time.Now().Add(timeout)
	for d := 20 * time.Microsecond; lg.Written() < seq; {
		if err := lg.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the AOF has not written everything after %v", timeout)
		}
		time.Sleep(d)
		if d < 5*time.Millisecond {
			d *= 2
		}
	}
	return nil
}

// debugLoadAOF is DEBUG LOADAOF (debug.c): write out what is pending, empty
// the data set and load it back from the log. It runs with every loop
// parked (the DEBUG row routes LOADAOF to every shard).
func debugLoadAOF(x *Exec) {
	srv := x.srv
	switch {
	case srv.load.active.Load():
		x.Err(loadingError)
		return
	case srv.rw.active.Load():
		x.Err("ERR Background append only file rewriting in progress: DEBUG LOADAOF can't reload the AOF now")
		return
	}
	if srv.aofLog() == nil {
		// Redis 7.0 empties the data set and loads whatever AOF the
		// folder holds (and exits if there is none; redshard answers an
		// error and keeps its data).
		debugLoadFolder(x)
		return
	}
	lg := srv.persist.log
	if err := srv.waitWritten(srv.submitAll(), 30*time.Second); err != nil {
		x.Err("ERR DEBUG LOADAOF: " + aof.Reason(err))
		return
	}
	if err := lg.Err(); err != nil {
		x.Err("ERR DEBUG LOADAOF: " + aof.Reason(err))
		return
	}
	reloadData(x, lg.Reload)
}

// reloadData empties the data set and loads it back with load (DEBUG
// LOADAOF). Redis exits when that fails; the files are untouched, so a
// restart loads them, but the data set in memory is incomplete.
//
// Every loop is parked (or is this one) while the log replays, as Redis's
// event loop is inside loadAppendOnlyFiles; Redis answers its clients
// -LOADING meanwhile (processEventsWhileBlocked), and so does redshard:
// load.active is set and this loop marked loadHold, and the busy watchdog
// serves the clients of every stuck loop with -LOADING (busy.go). The
// loader owns the shards; the watchdog touches only clients, under each
// loop's busyMu, and this loop takes its busyMu before it goes on.
func reloadData(x *Exec, load func(func([][]byte) error) (aof.LoadStats, error)) {
	srv := x.srv
	for _, sh := range srv.shards {
		sh.FlushAll()
	}
	srv.load.start.Store(time.Now().Unix())
	srv.load.caller.Store(x.cl)
	srv.load.active.Store(true)
	l := x.loop
	l.loadHold.Store(true) // last: the watchdog may serve our clients from now
	defer func() {
		l.loadHold.Store(false)
		l.resumeAfterBusy() // a watchdog pass serving our clients ends first
		srv.load.caller.Store(nil)
		srv.load.active.Store(false)
	}()
	if _, err := srv.loadLog(srv.shards, load, false); err != nil {
		srv.log.Warningf("DEBUG LOADAOF failed, the data set in memory is incomplete: %v", err)
		x.Err("ERR DEBUG LOADAOF failed, the data set in memory is incomplete: " + err.Error())
		return
	}
	srv.log.Warningf("Append Only File loaded by DEBUG LOADAOF")
	// Redis sets server.dirty to 0: rdb_changes_since_last_save reads 0.
	srv.save.base.Store(srv.dirtyNow())
	x.OK()
}

// debugLoadFolder is DEBUG LOADAOF while appendonly is no: the folder's
// files, as its manifest lists them, replace the data set.
func debugLoadFolder(x *Exec) {
	srv := x.srv
	f := aof.OpenFolder(srv.aofOptions(false))
	if !f.HasManifest() {
		x.Err("ERR DEBUG LOADAOF: there is no append only file to load (appendonly is no and the AOF folder has no manifest)")
		return
	}
	reloadData(x, f.Load)
}

// installPersistHooks connects CONFIG SET appendonly and appendfsync to the
// log. Both hooks run on the CONFIG SET caller's loop; a CONFIG SET that
// names appendonly runs with every loop parked (configSetAllShards).
func (srv *Server) installPersistHooks() {
	cfg := srv.cfg
	cfg.OnApply("appendfsync", func() error {
		if ps := srv.aofLog(); ps != nil {
			if err := ps.log.SetFsync(cfg.AppendFsync()); err != nil {
				return err
			}
			srv.fitProcs()
		}
		return nil
	})
	cfg.OnChange("aof-timestamp-enabled", func() {
		if ps := srv.persist; ps != nil {
			ps.log.SetTimestamps(cfg.AOFTimestampEnabled())
		}
	})
	cfg.OnApply("aof-disable-auto-gc", func() error {
		// Turned off, the history files go at once (Redis's
		// updateAofAutoGCEnabled).
		if ps := srv.aofLog(); ps != nil {
			if err := ps.log.SetDisableAutoGC(cfg.AOFDisableAutoGC()); err != nil {
				srv.log.Warningf("Can't remove the AOF history files: %v", err)
			}
		}
		return nil
	})
	cfg.OnApply("appendonly", func() error {
		if cfg.AppendOnly() && srv.aofLog() == nil {
			return srv.startAppendOnly()
		}
		return nil
	})
	cfg.OnChange("appendonly", func() {
		if !cfg.AppendOnly() && srv.aofLog() != nil {
			srv.stopAppendOnly()
		}
	})
}

// configSetAllShards reports whether a CONFIG SET must run with every loop
// parked: turning the AOF off closes the log under the loops.
func configSetAllShards(argv [][]byte) bool {
	for i := 2; i < len(argv); i += 2 {
		if shard.EqualFold(argv[i], "appendonly") {
			return true
		}
	}
	return false
}

// startAppendOnly is CONFIG SET appendonly yes (Redis's startAppendOnly):
// a new log starts (whatever an earlier run left in the folder is dropped:
// the data set in memory is the truth) and a rewrite begins at once, whose
// image of the data set becomes the new base. Writes from now on are logged
// (and, under always, their replies wait for the fsync) in the new
// incremental file. Every loop is parked.
func (srv *Server) startAppendOnly() error {
	if srv.rw.cur.Load() != nil {
		// A rewrite of the folder started while the AOF was off: its
		// image has no new incremental file behind it (startAppendOnly in
		// aof.c kills the child too).
		srv.log.Warningf("AOF was enabled but there is already an AOF rewriting in background. Stopping background AOF and starting a rewrite now.")
		srv.abortRewrite()
	}
	if ps := srv.persist; ps != nil {
		// The log without files that ordered the replication stream: what
		// it holds reaches the stream, then the file log takes over.
		srv.submitAll()
		_ = ps.log.Close()
		srv.persist = nil
		srv.forgetNeeds()
	}
	if err := srv.attachLog(true); err != nil {
		srv.log.Warningf("Redis needs to enable the AOF but can't open the append only file: %v", err)
		return errors.New("ERR Unable to turn on AOF. Check server logs.")
	}
	for _, l := range srv.loops {
		l.sh.OnExpired = nil // set per command by the loops from now on
	}
	srv.fitProcs()
	srv.wakeHeld() // replies held for the closed log's records (forgetNeeds)
	switch {
	case srv.save.active.Load() || srv.repl.m.imaging.Load():
		// One image at a time: the rewrite is scheduled (INFO's
		// aof_rewrite_scheduled) and starts when the BGSAVE or the
		// replica's full sync is done; meanwhile the records go to the
		// temp incr file, and the manifest stays as it was.
		srv.save.rewriteAfter.Store(true)
		srv.log.Warningf("AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.")
	case srv.configInExec:
		// As Redis's startAppendOnly: no rewrite starts inside a
		// transaction; the cron starts it (maybeAutoRewrite: the log waits
		// for its rewrite).
		srv.save.rewriteAfter.Store(true)
		srv.log.Warningf("AOF was enabled during a transaction. An AOF background was scheduled to start when possible.")
	default:
		if err := srv.startRewrite(); err != nil {
			srv.log.Warningf("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation: %v", err)
		}
	}
	srv.log.Noticef("AOF turned on by CONFIG SET appendonly yes")
	return nil
}

// stopAppendOnly is CONFIG SET appendonly no (Redis's stopAppendOnly): the
// log writes what it has, fsyncs and closes; from then on nothing is logged
// and no reply waits. Every loop is parked.
func (srv *Server) stopAppendOnly() {
	ps := srv.persist
	srv.submitAll()
	if srv.rw.cur.Load() != nil {
		// Redis kills its rewrite child here; redshard's rewrite runs in
		// its loops, which drop their part of the image.
		srv.log.Noticef("Killing running AOF rewrite child: the rewrite runs in redshard's loops (no child process) and is stopped")
		srv.abortRewrite()
	}
	if err := ps.log.Close(); err != nil {
		srv.log.Warningf("Fail to fsync the AOF file: %v", err)
	}
	srv.persist = nil
	srv.forgetNeeds()
	srv.logFailing.Store(false)
	for _, sh := range srv.shards {
		sh.OnExpired = nil
	}
	if srv.repl.on.Load() {
		_ = srv.attach(aof.OpenMemory(aof.Options{})) // the replication stream's order
	}
	srv.fitProcs()
	// Replies held for the log go out now: everything it was given is in
	// the file (or, if the disk failed, the AOF is off anyway).
	srv.wakeHeld()
	srv.log.Noticef("AOF turned off by CONFIG SET appendonly no")
}

// forgetNeeds is the end of a log that another replaces (CONFIG SET
// appendonly, with the log without files of the replication stream before
// or after): everything the closed log was given is written, and the
// sequences the clients wait for were its own, which the new log numbers
// anew from 1. Every loop is parked.
func (srv *Server) forgetNeeds() {
	for _, cl := range srv.allClients() {
		cl.need = 0
	}
}

// aofLog is the AOF's side of the log, nil when appendonly is no (the log
// may then still run without files, for the replication stream).
func (srv *Server) aofLog() *persist {
	if ps := srv.persist; ps != nil && !ps.log.Memory() {
		return ps
	}
	return nil
}
