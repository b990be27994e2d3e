package server

import (
	"fmt"
	"io"
	"math/bits"
	"strings"
	"sync"
	"time"

	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/failpoint"
	"github.com/redshard/redshard/lua"
	"github.com/redshard/redshard/shard"
)

// Loading the log in parallel.
//
// The log is parsed once, by the goroutine that calls aof.Log.Load; each
// command whose keys all live on one shard is copied into that shard's
// batch, and full batches go to one worker goroutine per shard, which runs
// them in order. A command that touches several shards or none (FLUSHALL,
// SWAPDB, a multi-key MSET, ...) is a barrier: every batch is handed over,
// the loader waits until each worker is idle, and runs the command itself
// (the channel hand-off and the WaitGroup order the workers' writes before
// it). Per shard, commands therefore run in log order, and a cross-shard
// command sees exactly the commands before it — the same data set a
// sequential replay builds. With one shard every command goes to its one
// worker: parsing and applying still overlap.

const (
	loadBatchCmds  = 256
	loadBatchBytes = 256 << 10
)

// loadBatch is a run of commands for one shard: argument bytes in buf,
// each argument as [start, end) offsets.
type loadBatch struct {
	cmds []*Cmd
	dbs  []int
	argc []int
	offs []int
	buf  []byte
}

func (b *loadBatch) reset() {
	b.cmds, b.dbs, b.argc, b.offs, b.buf = b.cmds[:0], b.dbs[:0], b.argc[:0], b.offs[:0], b.buf[:0]
}

type loadWorker struct {
	in   chan *loadBatch
	free chan *loadBatch
	cur  *loadBatch
	x    Exec
	argv [][]byte
}

type parallelLoader struct {
	srv     *Server
	shards  []*shard.Shard
	workers []*loadWorker
	wg      sync.WaitGroup // batches handed over and not yet run
	x       Exec           // the loader's own, for barriers
	kbuf    []int
	eng     *lua.Engine // for EVAL in the log, made at the first
}

func (srv *Server) newParallelLoader(shards []*shard.Shard) *parallelLoader {
	p := &parallelLoader{srv: srv, shards: shards}
	p.x.srv = srv
	p.x.Shards = shards
	p.x.Proto = 2
	for range shards {
		w := &loadWorker{in: make(chan *loadBatch, 4), free: make(chan *loadBatch, 6)}
		for i := 0; i < 6; i++ {
			w.free <- &loadBatch{}
		}
		w.cur = <-w.free
		w.x.srv = srv
		w.x.Shards = shards
		w.x.Proto = 2
		p.workers = append(p.workers, w)
		go p.run(w)
	}
	return p
}

func (p *parallelLoader) run(w *loadWorker) {
	for b := range w.in {
		now := time.Now().UnixMilli()
		k := 0
		for i, cmd := range b.cmds {
			w.argv = w.argv[:0]
			for j := 0; j < b.argc[i]; j++ {
				w.argv = append(w.argv, b.buf[b.offs[k]:b.offs[k+1]])
				k += 2
			}
			w.x.DB = b.dbs[i]
			w.x.Out = w.x.Out[:0]
			w.x.NowMs = now
			cmd.run(&w.x.Ctx, w.argv)
		}
		b.reset()
		w.free <- b
		p.wg.Done()
	}
}

// add routes one command.
func (p *parallelLoader) add(cmd *Cmd, db int, argv [][]byte) {
	n := len(p.shards)
	target := 0
	if n > 1 {
		p.kbuf = cmd.keyPositions(argv, p.kbuf[:0])
		var mask uint64
		for _, k := range p.kbuf {
			mask |= 1 << uint(shard.ShardOf(argv[k], n))
		}
		if cmd.extraShards != nil {
			mask |= cmd.extraShards(argv, n) // SORT ... BY/GET: other shards' keys
		}
		if cmd.allShards || mask == 0 || mask&(mask-1) != 0 {
			p.barrier(cmd, db, argv)
			return
		}
		target = bits.TrailingZeros64(mask)
	}
	w := p.workers[target]
	b := w.cur
	b.cmds = append(b.cmds, cmd)
	b.dbs = append(b.dbs, db)
	b.argc = append(b.argc, len(argv))
	for _, a := range argv {
		start := len(b.buf)
		b.buf = append(b.buf, a...)
		b.offs = append(b.offs, start, len(b.buf))
	}
	if len(b.cmds) >= loadBatchCmds || len(b.buf) >= loadBatchBytes {
		p.send(w)
	}
}

func (p *parallelLoader) send(w *loadWorker) {
	if len(w.cur.cmds) == 0 {
		return
	}
	p.wg.Add(1)
	w.in <- w.cur
	w.cur = <-w.free
}

// drain hands over every batch and waits until the workers are idle.
func (p *parallelLoader) drain() {
	for _, w := range p.workers {
		p.send(w)
	}
	p.wg.Wait()
}

func (p *parallelLoader) barrier(cmd *Cmd, db int, argv [][]byte) {
	p.drain()
	p.x.DB = db
	p.x.Out = p.x.Out[:0]
	p.x.NowMs = time.Now().UnixMilli()
	cmd.run(&p.x.Ctx, argv)
}

func (p *parallelLoader) close() {
	p.drain()
	if p.eng != nil {
		p.eng.Close()
		p.eng = nil
	}
	for _, w := range p.workers {
		close(w.in)
	}
}

// loadLog replays the log into shards (see above).
func (srv *Server) loadLog(shards []*shard.Shard, load func(func([][]byte) error) (aof.LoadStats, error), progress bool) (aof.LoadStats, error) {
	for _, sh := range shards {
		sh.Loading = true
		sh.SetNow(time.Now().UnixMilli())
	}
	p := srv.newParallelLoader(shards)
	defer func() {
		p.close()
		for _, sh := range shards {
			sh.Loading = false
		}
	}()
	var lg *aof.Log // progress reports read the log's (DEBUG RELOAD has none)
	if progress {
		lg = srv.persist.log
	}
	var n int64
	db := 0
	lastLog := time.Now()
	var fl funcLoad // the libraries (functions.go)
	// An RDB base (aof-use-rdb-preamble yes, Redis 7's default) loads as
	// dump.rdb does, before the files after it (rdbload.go), whichever
	// log or folder is replayed (aofOptions' RDB).
	srv.rdbBase = func(r io.Reader) (int64, error) {
		p.drain()
		res, err := srv.readRDB(shards, r, &fl)
		if err == nil {
			srv.save.loadedKeys.Store(res.loaded)
			srv.save.loadedExpired.Store(res.expired)
		}
		return res.size, err
	}
	defer func() { srv.rdbBase = nil }()
	st, err := load(func(argv [][]byte) error {
		if len(argv) == 0 {
			return nil
		}
		failpoint.Inject(failpoint.LoadRecord) // each command replayed
		if n++; n&4095 == 0 && progress {
			if srv.stopping.Load() {
				return errLoadAborted
			}
			if now := time.Now(); now.Sub(lastLog) >= time.Second {
				lastLog = now
				done, total := lg.LoadProgress()
				srv.log.Noticef("Loading the append only file: %.2f%% (%d of %d bytes, %d commands)",
					loadPercent(done, total), done, total, n)
				srv.sdNotify(fmt.Sprintf("STATUS=Loading the append only file: %.2f%% (%d of %d bytes)",
					loadPercent(done, total), done, total))
			}
		}
		switch strings.ToLower(string(argv[0])) {
		case "select":
			if len(argv) == 2 {
				var d int
				if _, err := fmt.Sscan(string(argv[1]), &d); err == nil && d >= 0 && d < len(shards[0].DBs) {
					db = d
					return nil
				}
			}
			return fmt.Errorf("bad SELECT in the AOF")
		case "multi", "exec":
			return nil // the loader hands over whole transactions only
		case "function":
			return fl.add(argv)
		case "eval":
			return p.loadScript(db, argv) // a Redis 6 log (functions.go)
		}
		cmd := srv.lookup(argv)
		if cmd == nil || cmd.run == nil || cmd.subs != nil {
			return fmt.Errorf("Unknown command '%s' reading the append only file", argv[0])
		}
		if (cmd.arity > 0 && len(argv) != cmd.arity) || len(argv) < -cmd.arity {
			return fmt.Errorf("wrong number of arguments for '%s' reading the append only file", cmd.fullName)
		}
		p.add(cmd, db, argv)
		return nil
	})
	if err == nil {
		err = srv.applyFunctionLoad(&fl)
	}
	return st, err
}
