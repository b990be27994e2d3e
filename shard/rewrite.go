package shard

import "strconv"

// Rewrite support: a point-in-time image of the shard, made without fork and
// without stopping the shard.
//
// StartRewrite is called at the cut (every shard taken, so no write is in
// flight). From then on the shard serializes its keys in small steps
// between requests (RewriteStep, from its loop), walking each database's
// slots upward. A key that is about to change (written, deleted, expired,
// renamed) before the walk reached it is serialized first, in its state at
// the cut; keys created after the cut are marked done at once, since the
// new incremental file holds them. "Done" is an entry's rewrite epoch equal
// to the shard's. FLUSHDB/FLUSHALL/SWAPDB during a rewrite first serialize
// whatever is left, so the image stays the state at the cut.
type rewriteState struct {
	emit   func(db int, argv [][]byte)
	key    func(db *DB, slot int32) // StartImage's; emit is nil then
	dbIdx  int
	cursor int32
}

// StartRewrite begins an image of the shard; emit receives each key as the
// command that recreates it (SET key value [PXAT ms]), with its database.
func (s *Shard) StartRewrite(emit func(db int, argv [][]byte)) {
	s.startImage(&rewriteState{emit: emit})
}

// StartImage begins an image of the shard handed over key by key: fn gets
// each key's slot in its state at the cut (DB.RDBValue, DB.ExpireAt) and
// must serialize it before it returns, since the key may change right
// after. BGSAVE and SAVE use it (the same walk as the AOF rewrite's).
func (s *Shard) StartImage(fn func(db *DB, slot int32)) {
	s.startImage(&rewriteState{key: fn})
}

func (s *Shard) startImage(rw *rewriteState) {
	s.rwEpoch++
	if s.rwEpoch == 0 {
		// The epoch wrapped: entries marked 0 by an old rewrite would look
		// done. Reset every entry once every 255 rewrites.
		for _, db := range s.DBs {
			for slot := int32(0); slot < db.nslots; slot++ {
				db.at(slot).rwEpoch = 0
			}
		}
		s.rwEpoch = 1
	}
	s.rw = rw
	s.imgKeys.Store(0)
	s.imgCopied.Store(0)
}

// ImageProgress is the current (or last) image's progress: the keys it has
// serialized, and the memory of those it had to serialize ahead of the
// walk because a write was about to change them (copied to keep their
// state at the cut: what copy-on-write costs Redis's fork child, INFO's
// current_cow_size).
func (s *Shard) ImageProgress() (keys, copied int64) {
	return s.imgKeys.Load(), s.imgCopied.Load()
}

// RewriteKeys counts the keys the shard's images have serialized, ever:
// the difference across a RewriteStep is what the step serialized.
func (s *Shard) RewriteKeys() int64 { return s.rwKeys }

// Rewriting reports whether an image is being made.
func (s *Shard) Rewriting() bool { return s.rw != nil }

// RewriteStep serializes up to n slots and reports whether the image is
// complete (the rewrite state is then dropped).
func (s *Shard) RewriteStep(n int) bool {
	rw := s.rw
	if rw == nil {
		return true
	}
	for n > 0 && rw.dbIdx < len(s.DBs) {
		db := s.DBs[rw.dbIdx]
		if rw.cursor >= db.nslots {
			rw.dbIdx++
			rw.cursor = 0
			continue
		}
		slot := rw.cursor
		rw.cursor++
		n--
		if e := db.at(slot); e.live && e.rwEpoch != s.rwEpoch {
			s.serialize(db, slot)
		}
	}
	if rw.dbIdx >= len(s.DBs) {
		s.rw = nil
		return true
	}
	return false
}

// RewriteAll finishes the image at once.
func (s *Shard) RewriteAll() {
	for !s.RewriteStep(1 << 16) {
	}
}

// rwBefore is called before a slot's key or value changes.
func (db *DB) rwBefore(slot int32) {
	s := db.sh
	if s.rw == nil {
		return
	}
	if e := db.at(slot); e.live && e.rwEpoch != s.rwEpoch {
		s.imgCopied.Add(db.MemUsage(slot))
		s.serialize(db, slot)
	}
}

// serialize emits a key as it is now and marks it done.
func (s *Shard) serialize(db *DB, slot int32) {
	e := db.at(slot)
	e.rwEpoch = s.rwEpoch
	s.rwKeys++
	s.imgKeys.Add(1)
	if s.rw.key != nil {
		s.rw.key(db, slot)
		return
	}
	key := db.key(e)
	var argv [][]byte
	switch e.typ {
	case TypeString:
		argv = [][]byte{wordSET, key, db.Str(slot)}
	default:
		for _, c := range s.objs[e.vlen].Dump(key) {
			s.rw.emit(db.ID, c)
		}
		if exp := db.expOf(e); exp != 0 {
			s.rw.emit(db.ID, [][]byte{wordPEXPIREAT, key, strconv.AppendInt(nil, exp, 10)})
		}
		return
	}
	if exp := db.expOf(e); exp != 0 {
		argv = append(argv, wordPXAT, strconv.AppendInt(nil, exp, 10))
	}
	s.rw.emit(db.ID, argv)
}

// AbortRewrite drops the image in progress (the rewrite was stopped). Keys
// already serialized keep the epoch, which the next StartRewrite moves on.
func (s *Shard) AbortRewrite() { s.rw = nil }
