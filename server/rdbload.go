package server

// Loading an RDB file (dump.rdb at start with appendonly no, DEBUG RELOAD).
//
// The file is parsed once, on the calling goroutine (aof/rdb's Read); each
// key is sent, in batches, to a worker goroutine of the shard that owns it,
// which builds the value with redshard's own encodings (DB.AddValue) and
// sets its expiry. Shards are written by their worker only, and the caller
// waits for every worker before the shards are used: the same hand-off as
// the AOF's parallel loader (load.go). Keys already expired are dropped, as
// a master does (rdb_last_load_keys_expired). Function libraries are
// compiled once, at the end.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/failpoint"
	"github.com/redshard/redshard/shard"
)

const rdbLoadBatch = 512

// prefetchSink keeps the loaders' prefetch loads alive (shard.DB.Prefetch).
var prefetchSink atomic.Uint64

type rdbLoadResult struct {
	loaded, expired int64
	empty           int64 // empty collections skipped (Redis's empty_keys_skipped)
	size            int64 // bytes the RDB took (rdb.Summary.Size)
	// The replication aux fields (repl-id, repl-offset, repl-stream-db):
	// the history the data set belongs to, "" if none.
	replID  string
	replOff int64
	replDB  int64
}

// loadRDB loads the RDB file at path into shards (owned by the caller),
// function libraries included. A missing file is no error: found is false.
func (srv *Server) loadRDB(shards []*shard.Shard, path string) (res rdbLoadResult, found bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return res, false, nil
		}
		return res, true, err
	}
	defer f.Close()
	var fl funcLoad
	if res, err = srv.readRDB(shards, bufio.NewReaderSize(f, 256<<10), &fl); err != nil {
		return res, true, err
	}
	return res, true, srv.applyFunctionLoad(&fl)
}

// readRDB reads an RDB file into shards; its function libraries are added
// to fl, for the caller to apply.
func (srv *Server) readRDB(shards []*shard.Shard, r io.Reader, fl *funcLoad) (res rdbLoadResult, err error) {
	return srv.readRDBMerge(shards, r, fl, false)
}

// readRDBMerge is readRDB; with merge a key already in the shards is
// replaced, else it is an error (DEBUG RELOAD NOFLUSH [MERGE]).
func (srv *Server) readRDBMerge(shards []*shard.Shard, r io.Reader, fl *funcLoad, merge bool) (res rdbLoadResult, err error) {
	defer gcLoading()()
	srv.procsLoad(1) // every CPU for the parser and the builders (procs.go)
	defer srv.procsLoad(-1)
	n := len(shards)
	type batch []rdb.Entry
	chans := make([]chan batch, n)
	// free holds each shard's batches once built, for the parser to fill
	// again: a batch is 512 entries of 184 bytes with pointers, and a new
	// one per batch made 190 MB of garbage to zero and scan for a load of
	// 1M keys (memclrNoHeapPointers and the collector's span scans, 15%
	// of the CPU of a load at one shard, pprof).
	free := make([]chan batch, n)
	errs := make([]error, n)
	counts := make([]int64, n)
	// key-load-delay (a test knob): microseconds per key, negative
	// nanoseconds, as Redis's debugDelay paces its loader.
	var delay time.Duration
	if o := cfgByOpt["key-load-delay"]; o != nil {
		delay = debugDelay(o.n(srv.cfg).Load())
	}
	var wg sync.WaitGroup
	for i := range chans {
		chans[i] = make(chan batch, 4)
		free[i] = make(chan batch, 6)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sh := shards[i]
			var pf [shard.PrefetchMax][]byte
			var sink uint64
			for b := range chans[i] {
				if errs[i] != nil {
					continue
				}
				for k := range b {
					e := &b[k]
					if k%shard.PrefetchMax == 0 && e.DB < len(sh.DBs) {
						// The index words the next keys land on, all
						// loads in flight at once: each key's lookup
						// was a miss to memory on a big keyspace
						// (index.lookup, 0.26 s of the worker's 0.9 s).
						if db := sh.DBs[e.DB]; db.PrefetchWorth() {
							keys := pf[:0]
							for _, x := range b[k:min(k+shard.PrefetchMax, len(b))] {
								if x.DB == e.DB {
									keys = append(keys, x.Key)
								}
							}
							sink += db.Prefetch(keys)
						}
					}
					if e.DB >= len(sh.DBs) {
						errs[i] = fmt.Errorf("DB index %d is out of range", e.DB)
						break
					}
					db := sh.DBs[e.DB]
					if old := db.Peek(e.Key); old >= 0 {
						if !merge {
							errs[i] = fmt.Errorf("duplicate key '%s' found in the RDB file", e.Key)
							break
						}
						db.Delete(old)
					}
					slot, err := db.AddValue(e.Key, &e.Value)
					if err != nil {
						errs[i] = fmt.Errorf("key '%s': %w", e.Key, err)
						break
					}
					if e.HasExpire {
						db.SetExpiry(slot, e.ExpireMS)
					}
					counts[i]++
					if delay > 0 {
						time.Sleep(delay)
					}
				}
				select {
				case free[i] <- b[:0]:
				default:
				}
			}
			prefetchSink.Add(sink)
		}(i)
	}
	pending := make([]batch, n)
	now := time.Now().UnixMilli()
	h := &rdb.Handler{
		Key: func(e *rdb.Entry) error {
			failpoint.Inject(failpoint.LoadRecord) // each key read, on the parser
			if e.HasExpire && e.ExpireMS < now {
				res.expired++
				return nil
			}
			s := shard.ShardOf(e.Key, n)
			pending[s] = append(pending[s], *e)
			if len(pending[s]) >= rdbLoadBatch {
				chans[s] <- pending[s]
				select {
				case pending[s] = <-free[s]:
				default:
					pending[s] = make(batch, 0, rdbLoadBatch)
				}
			}
			return nil
		},
		Function: func(code string) error { return fl.set(code) },
		Aux: func(name, val []byte) error {
			switch string(name) {
			case "repl-id":
				res.replID = string(val)
			case "repl-offset":
				res.replOff, _ = strconv.ParseInt(string(val), 10, 64)
			case "repl-stream-db":
				res.replDB, _ = strconv.ParseInt(string(val), 10, 64)
			}
			return nil
		},
		Empty: func(key []byte) {
			// Redis skips an empty collection (an old bug could save one)
			// and names the first ten.
			if res.empty++; res.empty <= 10 {
				srv.log.Warningf("rdbLoadObject skipping empty key: %s", key)
			}
		},
		ModuleAux: func(id uint64, name string) error {
			srv.log.Warningf("Skipping module aux data of module '%s' (id %d) in the RDB file: redshard has no modules", name, id)
			return nil
		},
	}
	sum, rerr := rdb.Read(r, h)
	if sum != nil {
		res.size = sum.Size
	}
	for i := range chans {
		if rerr == nil && len(pending[i]) > 0 {
			chans[i] <- pending[i]
		}
		close(chans[i])
	}
	wg.Wait()
	for i := range counts {
		res.loaded += counts[i]
	}
	if rerr != nil {
		return res, rerr
	}
	for _, e := range errs {
		if e != nil {
			return res, e
		}
	}
	return res, nil
}

// loadRDBAtStart loads dump.rdb into new shards and swaps them in with
// every loop parked, as loadAtStart does for the AOF.
func (srv *Server) loadRDBAtStart() error {
	fresh := make([]*shard.Shard, len(srv.shards))
	for i := range fresh {
		fresh[i] = srv.newShard(i)
		fresh[i].Loading = true
	}
	start := time.Now()
	path := srv.rdbPath()
	srv.sdNotify("STATUS=Loading the RDB file")
	res, found, err := srv.loadRDB(fresh, path)
	for _, sh := range fresh {
		sh.Loading = false
	}
	if err != nil {
		return loadError(rdbLoadFailure(srv.cfg.DBFilename(), err))
	}
	if err := srv.clusterVerifyData(fresh); err != nil { // cmd_cluster.go
		return err
	}
	took := time.Since(start)
	return srv.parkAll(func() {
		if found {
			for i, sh := range fresh {
				sh.UsedMemory()
				srv.shards[i] = sh
				srv.loops[i].sh = sh
				sh.OnNotify = srv.loops[i].ps.notifyFn
			}
			srv.save.loadedKeys.Store(res.loaded)
			srv.save.loadedExpired.Store(res.expired)
			srv.logLoadDone(res)
			if res.replID != "" && len(res.replID) == 40 && srv.cfg.replHost.Load() != "" {
				// A replica restarted: it continues the history its RDB
				// was saved in (Redis's rdbLoad with rsi).
				srv.repl.resetTo(res.replID, res.replOff)
				srv.rs.bootDB.Store(res.replDB)
				srv.rs.bootIDs.Store(true)
				srv.rs.psyncable.Store(true)
			}
			srv.log.Noticef("DB loaded from disk: %.3f seconds", took.Seconds())
		}
		srv.readyToAccept()
		srv.load.active.Store(false)
		srv.load.gate.release()
	})
}

// logLoadDone is rdbLoad's last line.
func (srv *Server) logLoadDone(res rdbLoadResult) {
	if res.empty > 0 {
		srv.log.Warningf("Done loading RDB, keys loaded: %d, keys expired: %d, empty keys skipped: %d.", res.loaded, res.expired, res.empty)
		return
	}
	srv.log.Noticef("Done loading RDB, keys loaded: %d, keys expired: %d.", res.loaded, res.expired)
}

// rdbLoadFailure is the log text of a failed load, in Redis's words
// (rdbReportCorruptRDB, rdbLoad's eoferr), which operators grep. A value
// that failed gets Redis's reason for its type ("Zset ziplist integrity
// check failed.") and the report redis-check-rdb adds when Redis runs it
// on the file (the offset, the key and its type), then Redis's last line.
func rdbLoadFailure(file string, err error) string {
	var re *rdb.Error
	if errors.As(err, &re) && re.InValue && !errors.Is(err, rdb.ErrShort) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		why := shard.CorruptMessage(int(re.Type), re.Err)
		return fmt.Sprintf("Internal error in RDB reading offset %d, function at rdb.c:0 -> %s (%s)\n"+
			"--- RDB ERROR DETECTED ---\n"+
			"[offset %d] Internal error in RDB reading offset %d, function at rdb.c:0 -> %s\n"+
			"[additional info] Reading key '%s'\n"+
			"[additional info] Reading type %d (%s)\n"+
			"Terminating server after rdb file reading failure.",
			re.Offset, why, file, re.Offset, re.Offset, why, re.Key, re.Type, rdb.TypeName(re.Type))
	}
	switch {
	case errors.Is(err, rdb.ErrChecksum):
		return fmt.Sprintf("Wrong RDB checksum in %s (%v). Aborting now. Internal error in RDB reading offset %d, function at rdb.c:0 -> RDB CRC error", file, err, offsetOf(err))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Sprintf("Short read or OOM loading DB. Unrecoverable error, aborting now. (%s: %v)", file, err)
	case errors.As(err, &re):
		return fmt.Sprintf("Internal error in RDB reading offset %d, function at rdb.c:0 -> %v (%s)", re.Offset, re.Err, file)
	}
	return fmt.Sprintf("Fatal error loading the DB: %v. Exiting.", err)
}

func offsetOf(err error) int64 {
	var re *rdb.Error
	if errors.As(err, &re) {
		return re.Offset
	}
	return 0
}
