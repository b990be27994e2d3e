package server

// RDB snapshots without fork: BGSAVE, SAVE, the save schedule, and the save
// at shutdown.
//
// The image is the AOF rewrite's (rewrite.go, shard/rewrite.go), one
// mechanism for both: the command runs with every loop parked, which is the
// cut; aof.StartSnapshot opens the temp file and writes the header and the
// function libraries; every shard starts an image of itself
// (shard.StartImage) and its loop serializes it in small steps between
// requests (rewriteStep), each key as an RDB item (DB.RDBValue) into chunks
// of its own (rdb.ChunkWriter) that a background goroutine writes in
// arrival order. The loop only copies the strings: a compressor goroutine
// per shard LZF-compresses each full chunk
// before it is handed over (rdb.ChunkWriter.Offload; a loop whose
// compressor is 4 chunks behind compresses the next one itself). A key about to change before the walk reached it is
// serialized first, in its state at the cut, so the file is the data set
// at the cut, and memory grows only by the chunks waiting for the disk and
// the keys written meanwhile (no copy of the data set, no fork's
// copy-on-write). When the last shard is done a goroutine finishes the file
// off the loops: EOF and CRC64, fsync, rename over dbfilename, fsync of the
// dir.
//
// SAVE, and the save at shutdown, serialize every shard at once with the
// loops parked and write the file before anything else runs, as Redis's
// SAVE blocks the server.
//
// One image at a time per shard: BGSAVE while BGREWRITEAOF runs is refused
// (or scheduled, BGSAVE SCHEDULE), and BGREWRITEAOF while BGSAVE runs is
// scheduled, as Redis does with its one child.

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/shard"
)

var snapshotCommands = []serverCmd{
	{name: "bgsave", exec: cmdBgsave, allShards: true},
	{name: "save", exec: cmdSave, allShards: true},
}

// snapChunk is the size at which a loop hands a chunk of its image over.
const snapChunk = 1 << 20

// snapOffloadDepth is how many chunks of a loop's image may wait for its
// compressor (rdb.ChunkWriter.Offload) before the loop compresses them
// itself: what a BGSAVE holds beyond the data set stays a few MB a shard.
const snapOffloadDepth = 4

// snapPendingMax bounds the chunks of a BGSAVE handed to the file's writer
// and not yet written: past it the loops pause their walk (for
// snapPendingWait at a time) until the writer catches up. Unbounded, a
// writer that gives its P up to the loops (rdb.Writer.RawYielding) fell
// 40 MB behind, which grew the live heap and started collections whose
// mark worker took the loop's P for 8-11 ms at a time (gctrace: live heap
// 117 -> 160 MB during one BGSAVE of 1M keys).
const (
	snapPendingMax  = 8 << 20
	snapPendingWait = 200 * time.Microsecond
)

// saveRetryDelay is how long the schedule waits after a failed BGSAVE
// (Redis's CONFIG_BGSAVE_RETRY_DELAY).
const saveRetryDelay = 5 * time.Second

type saveStatus struct {
	active    atomic.Bool
	started   atomic.Int64 // unix ms of the BGSAVE in progress
	failed    atomic.Bool  // the last save failed (zero: ok)
	lastSecs  atomic.Int64 // duration of the last BGSAVE, -1 before any
	lastTry   atomic.Int64 // unix ms of the last BGSAVE attempt
	saves     atomic.Int64 // rdb_saves
	remaining atomic.Int32 // shards still serializing
	cur       atomic.Pointer[aof.Snapshot]
	// dirty is the dirty counter at the cut of the snapshot in progress;
	// base is the counter at the cut of the last successful one
	// (rdb_changes_since_last_save is the difference).
	dirty atomic.Int64
	base  atomic.Int64
	// scheduled: a BGSAVE SCHEDULE waits for the rewrite to end;
	// rewriteAfter: a BGREWRITEAOF waits for the BGSAVE to end.
	scheduled    atomic.Bool
	rewriteAfter atomic.Bool
	// loadedKeys and loadedExpired are what the last RDB load took and
	// dropped (rdb_last_load_keys_loaded, rdb_last_load_keys_expired).
	loadedKeys    atomic.Int64
	loadedExpired atomic.Int64
}

// loopSnap is a loop's part of a BGSAVE.
type loopSnap struct {
	s    *aof.Snapshot
	cw   *rdb.ChunkWriter
	sync bool // a replica's disk-less full sync (repl_master.go)
}

var (
	bgsaveRequest       = []byte("*1\r\n$6\r\nBGSAVE\r\n")
	errBgsaveInProgress = errors.New("ERR Background save already in progress")
)

// cmdBgsave is BGSAVE [SCHEDULE].
func cmdBgsave(x *Exec, argv [][]byte) {
	srv := x.srv
	schedule := false
	if len(argv) > 1 {
		if len(argv) > 2 || !shard.EqualFold(argv[1], "schedule") {
			x.Err(shard.ErrSyntax)
			return
		}
		schedule = true
	}
	if srv.save.active.Load() {
		x.Err(errBgsaveInProgress.Error())
		return
	}
	if srv.rw.active.Load() || srv.repl.m.imaging.Load() || x.InMulti {
		if schedule || x.InMulti {
			srv.save.scheduled.Store(true)
			x.Simple("Background saving scheduled")
			return
		}
		x.Err("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
		return
	}
	if srv.persist != nil {
		x.loop.p.wrote |= 1<<uint(len(srv.shards)) - 1
		x.loop.submit()
	}
	if err := srv.startSnapshot(); err != nil {
		x.Err("ERR " + err.Error())
		return
	}
	x.Simple("Background saving started")
}

// cmdSave is SAVE.
func cmdSave(x *Exec, argv [][]byte) {
	srv := x.srv
	if srv.save.active.Load() {
		x.Err(errBgsaveInProgress.Error())
		return
	}
	if srv.rw.active.Load() {
		// Redis's SAVE refuses while a child saves; an AOF rewrite child
		// does not stop it, but here the shards' one image is taken.
		x.Err("ERR Background append only file rewriting in progress")
		return
	}
	if err := srv.saveParked(); err != nil {
		x.Err("ERR")
		return
	}
	x.OK()
}

// rdbOptions are the writer's settings from the config.
func (srv *Server) rdbOptions() rdb.Options {
	o := rdb.DefaultOptions()
	o.Compress = srv.cfg.RDBCompression()
	o.Checksum = srv.cfg.RDBChecksum()
	t := srv.tun
	o.HashMaxListpackEntries = int(t.HashMaxListpackEntries.Load())
	o.HashMaxListpackValue = int(t.HashMaxListpackValue.Load())
	o.ZSetMaxListpackEntries = int(t.ZsetMaxListpackEntries.Load())
	o.ZSetMaxListpackValue = int(t.ZsetMaxListpackValue.Load())
	o.SetMaxIntsetEntries = int(t.SetMaxIntsetEntries.Load())
	o.ListMaxListpackSize = int(t.ListMaxListpackSize.Load())
	o.StreamNodeMaxBytes = int(t.StreamNodeMaxBytes.Load())
	o.StreamNodeMaxEntries = int(t.StreamNodeMaxEntries.Load())
	return o
}

func (srv *Server) rdbPath() string {
	return filepath.Join(srv.cfg.Dir(), srv.cfg.DBFilename())
}

// openSnapshot starts the file: header and function libraries; repl, the
// replication aux fields (parked saves only).
func (srv *Server) openSnapshot(bg bool, repl ...[2]string) (*aof.Snapshot, error) {
	h, codes := srv.imageHead(repl...)
	return aof.StartSnapshot(nil, srv.rdbPath(), bg, srv.rdbOptions(), h, codes)
}

// imageHead is what every RDB image starts with: the header (with extra
// aux fields) and the function libraries' code, taken now.
func (srv *Server) imageHead(extra ...[2]string) (rdb.Header, []string) {
	var codes []string
	for _, lib := range srv.funcs.list() {
		codes = append(codes, lib.code)
	}
	return rdb.Header{CTime: time.Now().Unix(), UsedMem: srv.usedMemoryEstimate(), Extra: extra}, codes
}

// dirtyNow sums the loops' dirty counters; every loop must be parked.
func (srv *Server) dirtyNow() int64 {
	var n int64
	for _, l := range srv.loops {
		n += l.stats.dirty
	}
	return n
}

// imageKey is the StartImage callback that serializes a key into cw (a
// key that cannot be written is cw.Err(), which fails the file).
func imageKey(cw *rdb.ChunkWriter) func(db *shard.DB, slot int32) {
	var v rdb.Value // reused from key to key
	return func(db *shard.DB, slot int32) {
		db.RDBValueInto(slot, &v)
		exp := db.Expiry(slot)
		if exp == 0 {
			exp = -1
		}
		_ = cw.Key(db.ID, db.Key(slot), exp, &v)
	}
}

// startSnapshot makes the cut and starts every shard's image; every loop is
// parked.
func (srv *Server) startSnapshot() error {
	if !srv.save.active.CompareAndSwap(false, true) {
		return errors.New("Background save already in progress")
	}
	now := time.Now()
	srv.save.lastTry.Store(now.UnixMilli())
	s, err := srv.openSnapshot(true)
	if err != nil {
		srv.save.active.Store(false)
		srv.save.failed.Store(true)
		srv.log.Warningf("%v", err)
		return err
	}
	s.Background()
	srv.save.started.Store(now.UnixMilli())
	srv.save.dirty.Store(srv.dirtyNow())
	srv.save.cur.Store(s)
	srv.save.remaining.Store(int32(len(srv.loops)))
	srv.log.Noticef("Background saving started")
	srv.procsFor(1) // a P for the writer goroutine (procs.go)
	srv.imageStarted()
	for _, l := range srv.loops {
		l.startSnap(s, false)
	}
	if c := s.Child(); c != nil {
		go srv.watchSnapshotChild(s, c) // bgchild.go
	}
	return nil
}

// startSnap runs while every loop is parked: it starts the shard's image
// (a BGSAVE's, or a disk-less full sync's) and queues the loop's first
// step.
func (l *Loop) startSnap(s *aof.Snapshot, sync bool) {
	js := &loopSnap{s: s, sync: sync}
	l.startImageDelay()
	js.cw = rdb.NewChunkWriter(l.srv.rdbOptions(), snapChunk, s.Hand)
	js.cw.Offload(snapOffloadDepth) // LZF off the loop
	l.snap = js
	l.sh.StartImage(imageKey(js.cw))
	if l.rwStep == nil {
		l.rwStep = gnet.RunnableFunc(func(context.Context) error {
			l.rewriteStep()
			return nil
		})
	}
	_ = l.post(l.rwStep)
}

// snapStepDone is rewriteStep's end for a BGSAVE: the loop's image is
// complete.
func (l *Loop) snapStepDone() {
	js := l.snap
	l.snap = nil
	srv := l.srv
	// Close calls back once the compressor has handed every chunk over
	// (from its goroutine).
	js.cw.Close(func() {
		if err := js.cw.Err(); err != nil {
			js.s.Fail(err)
		}
		if js.sync {
			srv.syncImageDone(js) // a replica's disk-less full sync (repl_master.go)
			return
		}
		if srv.save.cur.Load() == js.s && srv.save.remaining.Add(-1) == 0 {
			go srv.finishSnapshot(js.s)
		}
	})
}

func (srv *Server) finishSnapshot(s *aof.Snapshot) {
	err := s.Finish()
	if !srv.save.cur.CompareAndSwap(s, nil) {
		return // aborted meanwhile
	}
	_, copied := srv.imageProgress()
	srv.img.lastRDB.Store(copied)
	srv.procsFor(-1)
	srv.save.lastSecs.Store((time.Now().UnixMilli() - srv.save.started.Load()) / 1000)
	if err != nil {
		srv.save.failed.Store(true)
		srv.log.Warningf("%v", err)
		srv.log.Warningf("Background saving error")
	} else {
		srv.saved(srv.save.dirty.Load())
		srv.log.Noticef("DB saved on disk")
		srv.log.Noticef("Background saving terminated with success")
	}
	srv.save.active.Store(false)
	srv.replDiskSaved(err) // replicas waiting for this file (repl_master.go)
	srv.runWaitingRewrite()
}

// saved records a successful save whose cut had dirty counter dirty.
func (srv *Server) saved(dirty int64) {
	srv.save.failed.Store(false)
	srv.save.base.Store(dirty)
	srv.save.saves.Add(1)
	srv.lastSave.Store(time.Now().Unix())
}

// sysRequest sends a command through loop 0's internal client (as the
// automatic rewrite does), from any goroutine.
func (srv *Server) sysRequest(req []byte) {
	l := srv.loops[0]
	_ = l.post(gnet.RunnableFunc(func(context.Context) error {
		sys := srv.sysClient
		if sys != nil && !sys.hopOut && len(sys.qbuf) == 0 {
			sys.onData(req)
		}
		return nil
	}))
}

// runWaitingRewrite starts the BGREWRITEAOF that was scheduled while an
// image was being taken (one image at a time).
func (srv *Server) runWaitingRewrite() {
	if srv.save.rewriteAfter.CompareAndSwap(true, false) {
		srv.sysRequest(bgrewriteaofRequest)
	}
}

// stopLoopSnaps stops every loop's part of the image s (its walk and its
// compressor); every loop is parked.
func (srv *Server) stopLoopSnaps(s *aof.Snapshot) {
	for _, l := range srv.loops {
		if l.snap != nil && l.snap.s == s {
			l.sh.AbortRewrite()
			l.snap.cw.Abort()
			l.snap = nil
		}
	}
}

// abortSnapshot stops the BGSAVE in progress, if any; every loop is parked.
func (srv *Server) abortSnapshot() bool {
	s := srv.save.cur.Swap(nil)
	if s == nil {
		return false
	}
	srv.stopLoopSnaps(s)
	s.Abort()
	srv.procsFor(-1)
	srv.save.lastSecs.Store((time.Now().UnixMilli() - srv.save.started.Load()) / 1000)
	srv.save.active.Store(false) // stopped, not failed: the status stays (Redis's SIGUSR1)
	return true
}

// saveParked writes the RDB file at once; every loop is parked (SAVE, the
// save at shutdown, DEBUG RELOAD).
func (srv *Server) saveParked() error { return srv.saveImage(true, 0) }

// saveImage is saveParked; walk false skips the shards, whose databases
// the caller knows empty (FLUSHALL: an AOF rewrite's image may be under
// way in them, yet there is nothing to walk), and pending is the dirty
// count of the running command, not yet added to its loop's.
func (srv *Server) saveImage(walk bool, pending int64) error {
	for _, sh := range srv.shards {
		if walk && sh.Rewriting() {
			return errors.New("an image of the data set is being made")
		}
	}
	start := time.Now()
	s, err := srv.openSnapshot(false, srv.replAux()...)
	if err != nil {
		srv.log.Warningf("%v", err)
		return err
	}
	dirty := srv.dirtyNow() + pending
	cw := rdb.NewChunkWriter(srv.rdbOptions(), snapChunk, s.Hand)
	key := imageKey(cw)
	if d := srv.cfg.RDBKeySaveDelay(); d != 0 {
		// rdb-key-save-delay (a test knob) slows SAVE as it slows Redis's.
		wait := debugDelay(d)
		inner := key
		key = func(db *shard.DB, slot int32) {
			inner(db, slot)
			time.Sleep(wait)
		}
	}
	for _, sh := range srv.shards {
		if !walk {
			break
		}
		sh.StartImage(key)
		sh.RewriteAll()
		cw.Flush()
	}
	// A failed SAVE leaves rdb_last_bgsave_status as it was, as Redis's
	// rdbSave does.
	if err := cw.Err(); err != nil {
		s.Abort()
		srv.log.Warningf("Write error saving DB on disk: %v", err)
		return err
	}
	if err := s.Finish(); err != nil {
		srv.log.Warningf("%v", err)
		return err
	}
	srv.saved(dirty)
	srv.log.Noticef("DB saved on disk (%s)", time.Since(start).Round(time.Millisecond))
	return nil
}

// stopBgsaveForFlush is the first half of Redis 7.0's
// flushAllDataAndResetRDB, before FLUSHALL empties the shards: a BGSAVE in
// progress is stopped (killRDBChild), so that the file it would put in
// place later cannot bring the old data set back, and so that the flush
// does not first serialize every key the walk has not reached. Replicas
// waiting for that file fail their sync and come back, as with Redis's
// killed child (and a disk-less sync's image stops too:
// stopSyncForFlush). Every loop is parked.
func (srv *Server) stopBgsaveForFlush() {
	if !srv.save.active.Load() {
		return
	}
	if srv.abortSnapshot() {
		srv.log.Noticef("Background saving stopped by FLUSHALL")
		srv.replDiskSaved(errors.New("Background saving stopped by FLUSHALL"))
		return
	}
	// The file is being finished off the loops (finishSnapshot, past its
	// rename): let it record its save before FLUSHALL's own does, which
	// must be the last. That takes no loop, so waiting here cannot block it.
	for i := 0; srv.save.active.Load() && i < 10000; i++ {
		time.Sleep(time.Millisecond)
	}
}

// saveAfterFlush is flushAllDataAndResetRDB's second half: with save
// points set, the empty data set (and the function libraries, which
// FLUSHALL keeps) is saved to dbfilename at once, as Redis's rdbSave, so
// that a restart does not load the keys just flushed from an older
// dump.rdb; rdb_changes_since_last_save is then 0. A failed save leaves
// FLUSHALL's reply +OK and rdb_last_bgsave_status as they were, as in
// Redis. pending is FLUSHALL's dirty count, not yet added to its loop's.
// Every loop is parked.
func (srv *Server) saveAfterFlush(pending int64) {
	if len(srv.cfg.SaveParams()) == 0 || srv.save.active.Load() {
		return
	}
	_ = srv.saveImage(false, pending)
}

// saveForShutdown is the final save of a shutdown, from any goroutine that
// is not a loop (parked: the caller holds every loop).
func (srv *Server) saveForShutdown(parked bool) error {
	var err error
	run := func() {
		srv.abortSnapshot()
		srv.abortRewrite()
		err = srv.saveParked()
	}
	if parked {
		run()
		return err
	}
	if perr := srv.parkAll(run); perr != nil {
		return perr
	}
	return err
}

// maybeAutoSave is the save schedule (save <seconds> <changes> ...), on loop
// 0 from its cron, as Redis's serverCron: a BGSAVE when some rule's changes
// happened in its seconds, not sooner than saveRetryDelay after a failed
// one; and a scheduled BGSAVE once no rewrite runs.
func (l *Loop) maybeAutoSave() {
	srv := l.srv
	if srv.save.active.Load() || srv.rw.active.Load() || srv.loading() {
		return
	}
	sys := srv.sysClient
	if sys == nil || sys.hopOut || len(sys.qbuf) > 0 {
		return
	}
	if srv.save.scheduled.CompareAndSwap(true, false) {
		sys.onData(bgsaveRequest)
		return
	}
	params := srv.cfg.SaveParams()
	if len(params) == 0 {
		return
	}
	var dirty int64
	for _, o := range srv.loops {
		dirty += o.dirtyPub.Load()
	}
	changes := dirty - srv.save.base.Load()
	now := time.Now()
	since := now.Unix() - srv.lastSave.Load()
	if srv.save.failed.Load() && now.UnixMilli()-srv.save.lastTry.Load() < saveRetryDelay.Milliseconds() {
		return
	}
	for _, p := range params {
		if changes >= p.Changes && since >= p.Seconds {
			srv.log.Noticef("%d changes in %d seconds. Saving...", p.Changes, p.Seconds)
			sys.onData(bgsaveRequest)
			return
		}
	}
}

// writesRefused is the -MISCONF error while the last BGSAVE failed with
// stop-writes-on-bgsave-error on and save points set (Redis's
// writeCommandsDeniedByDiskError), "" otherwise.
func (srv *Server) writesRefused() string {
	if !srv.save.failed.Load() || !srv.cfg.StopWritesOnBgsaveError() || len(srv.cfg.SaveParams()) == 0 {
		return ""
	}
	return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
}

// infoRDB is INFO persistence's rdb_* part.
func (srv *Server) infoRDB(w *infoWriter, dirty int64) {
	w.int("rdb_changes_since_last_save", dirty-srv.save.base.Load())
	active := srv.save.active.Load()
	// A disk-less full sync is a BGSAVE to the replicas' sockets, as Redis's
	// child.
	w.int("rdb_bgsave_in_progress", b2i(active || srv.repl.m.imaging.Load()))
	w.int("rdb_last_save_time", srv.lastSave.Load())
	status := "ok"
	if srv.save.failed.Load() {
		status = "err"
	}
	w.str("rdb_last_bgsave_status", status)
	w.int("rdb_last_bgsave_time_sec", srv.save.lastSecs.Load())
	cur := int64(-1)
	if active {
		cur = (time.Now().UnixMilli() - srv.save.started.Load()) / 1000
	}
	w.int("rdb_current_bgsave_time_sec", cur)
	w.int("rdb_saves", srv.save.saves.Load())
	w.int("rdb_last_cow_size", srv.img.lastRDB.Load())
	w.int("rdb_last_load_keys_expired", srv.save.loadedExpired.Load())
	w.int("rdb_last_load_keys_loaded", srv.save.loadedKeys.Load())
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
