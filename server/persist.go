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
	"fmt"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/shard"
)

// persist is the server's side of the log; nil when appendonly is no.
type persist struct {
	log     *aof.Log
	lastSeq []uint64 // per shard: the last submitted batch that wrote it (owned like the shard)
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
	expHook   func(db *shard.DB, key []byte)
}

var (
	wordDEL    = []byte("DEL")
	wordMULTI  = []byte("MULTI")
	wordEXEC   = []byte("EXEC")
	wordSELECT = []byte("SELECT")
)

// openLog opens and loads the AOF before the loops start.
func (srv *Server) openLog() error {
	cfg := srv.cfg
	if !cfg.AppendOnly() {
		return nil
	}
	lg, err := aof.Open(aof.Options{
		Dir:           cfg.Dir(),
		DirName:       cfg.AppendDirname(),
		FileName:      cfg.AppendFilename(),
		Fsync:         cfg.AppendFsync(),
		LoadTruncated: cfg.AOFLoadTruncated(),
		Logf: func(level int, format string, args ...any) {
			srv.log.Logf(LogLevel(level), format, args...)
		},
	})
	if err != nil {
		return err
	}
	srv.persist = &persist{log: lg, lastSeq: make([]uint64, len(srv.shards))}
	start := time.Now()
	srv.log.Noticef("Loading the append only file...")
	if err := srv.loadLog(lg); err != nil {
		return err
	}
	keys := 0
	for _, sh := range srv.shards {
		k, _ := sh.Keys()
		keys += k
	}
	srv.log.Noticef("DB loaded from append only file: %.3f seconds (%d keys)", time.Since(start).Seconds(), keys)
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
			l.p.wrote |= 1 << uint(db.ShardID())
			l.p.prod.Append(db.ID, [][]byte{wordDEL, key})
		}
	}
	lg.OnFailed(func(from, to uint64, err error) {
		srv.logFailing.Store(true)
		srv.log.Warningf("Error writing to the AOF file: %s", aof.Reason(err))
	})
	lg.OnDurable(func(written, durable uint64) {
		if srv.logFailing.Load() && lg.Err() == nil {
			srv.logFailing.Store(false)
			srv.log.Warningf("AOF write error looks solved, Redis can write again.")
		}
		for _, l := range srv.loops {
			if l.heldCount.Load() > 0 && l.p.wake.CompareAndSwap(false, true) {
				if l.el.Execute(context.Background(), l.p.wakeRun) != nil {
					l.p.wake.Store(false)
				}
			}
		}
	})
	return nil
}

// loadLog replays the log into the shards, on this goroutine, before any
// loop runs: commands go straight to the shards through the command table.
func (srv *Server) loadLog(lg *aof.Log) error {
	for _, sh := range srv.shards {
		sh.Loading = true
		sh.SetNow(time.Now().UnixMilli())
	}
	defer func() {
		for _, sh := range srv.shards {
			sh.Loading = false
		}
	}()
	x := &Exec{srv: srv}
	x.Shards = srv.shards
	x.Proto = 2
	_, err := lg.Load(func(argv [][]byte) error {
		if len(argv) == 0 {
			return nil
		}
		switch strings.ToLower(string(argv[0])) {
		case "select":
			if len(argv) == 2 {
				var db int
				if _, err := fmt.Sscan(string(argv[1]), &db); err == nil && db >= 0 && db < len(srv.shards[0].DBs) {
					x.DB = db
					return nil
				}
			}
			return fmt.Errorf("bad SELECT in the AOF")
		case "multi", "exec":
			return nil // the loader hands over whole transactions only
		}
		cmd := srv.lookup(argv)
		if cmd == nil || cmd.run == nil || cmd.subs != nil {
			return fmt.Errorf("unknown command '%s' reading the append only file", argv[0])
		}
		if (cmd.arity > 0 && len(argv) != cmd.arity) || len(argv) < -cmd.arity {
			return fmt.Errorf("wrong number of arguments for '%s' reading the append only file", cmd.fullName)
		}
		x.Out = x.Out[:0]
		x.NowMs = time.Now().UnixMilli()
		cmd.run(&x.Ctx, argv)
		return nil
	})
	return err
}

// propagate logs what a command changed (hook from Loop.call).
func (srv *Server) propagate(l *Loop, x *Exec, cmd *Cmd, argv [][]byte) {
	if srv.persist == nil {
		return
	}
	p := l.p.prod
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

// touched records, after a command on loop l touched the shards in mask,
// what the client's replies must wait for. It returns the already-submitted
// position they need; dependsNow says they also need this loop's next
// submission (its producer holds writes).
func (l *Loop) touched(mask uint64, wrote bool) (need uint64, dependsNow bool) {
	ps := l.srv.persist
	for m := mask; m != 0; m &= m - 1 {
		s := bits.TrailingZeros64(m)
		if ps.lastSeq[s] > need {
			need = ps.lastSeq[s]
		}
	}
	if wrote {
		l.p.wrote |= mask
	}
	return need, l.p.prod.Len() > 0
}

// submit hands this loop's pending records to the log and returns the
// batch's sequence (0 when there was nothing to submit).
func (l *Loop) submit() uint64 {
	ps := l.srv.persist
	if ps == nil || l.p.prod.Len() == 0 {
		return 0
	}
	seq := l.p.prod.Submit()
	for m := l.p.wrote; m != 0; m &= m - 1 {
		ps.lastSeq[bits.TrailingZeros64(m)] = seq
	}
	l.p.wrote = 0
	return seq
}

// endEvent closes an event on the home side: submit, resolve the clients
// that depend on this submission, then write or hold their replies.
func (l *Loop) endEvent() {
	if l.srv.persist == nil {
		return
	}
	seq := l.submit()
	for _, cl := range l.p.waiters {
		cl.waitingNow = false
		if seq > cl.need {
			cl.need = seq
		}
	}
	l.p.waiters = l.p.waiters[:0]
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
	if !cl.held {
		cl.held = true
		cl.loop.p.held = append(cl.loop.p.held, cl)
		cl.loop.heldCount.Add(1)
	}
}

// releaseHeld writes the replies of held clients the log has caught up with
// and lets them go on with their queued input.
func (l *Loop) releaseHeld() {
	ps := l.srv.persist
	pos := ps.log.Written()
	kept := l.p.held[:0]
	var ready []*Client
	for _, cl := range l.p.held {
		if cl.closed {
			cl.held = false
			l.heldCount.Add(-1)
			continue
		}
		if cl.need <= pos {
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
		if len(cl.qbuf) > 0 && !cl.closing && !cl.hopOut {
			cl.process(true)
		}
	}
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
		if err := srv.persist.log.Close(); err != nil {
			srv.log.Warningf("Error closing the append only file: %v", err)
		} else {
			srv.log.Noticef("Calling fsync() on the AOF file.")
		}
	}
}
