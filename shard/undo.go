package shard

// Undo is a journal of keys as they were before a run of writes, so that the
// run can be taken back (server/script.go: a script that reaches for a shard
// it has not taken is rolled back and run again with more shards). Save
// records a key before its first write in the run; Rollback puts every
// saved key back as it was, latest first, and empties the journal.
//
// A saved string is copied; any other value is deep-copied (Object.Copy),
// which is why Save refuses a value bigger than its limit: the caller then
// stops the run before that write and runs it again where no rollback can
// be needed. Rolling back restores a key's value, type, encoding, expiry and
// access time. It does not take back what the writes told others: WATCH
// marks, ready keys of blocked clients (they look again and find what is
// there) and the keyspace notifications, which the server holds until its
// batch ends and drops itself.
type Undo struct {
	ents []undoEnt
	buf  []byte // saved keys and string values
}

type undoEnt struct {
	db       *DB
	key      [2]int // in buf
	str      [2]int // in buf, for a string
	obj      Object // a copy, for any other type
	present  bool
	typ, enc uint8
	exp      int64
	lru      uint32
}

// Len is the number of saved keys.
func (u *Undo) Len() int { return len(u.ents) }

// Reset forgets the journal (the run is kept).
func (u *Undo) Reset() {
	for i := range u.ents {
		u.ents[i].obj = nil
	}
	u.ents = u.ents[:0]
	if cap(u.buf) > 1<<20 {
		u.buf = nil
	} else {
		u.buf = u.buf[:0]
	}
}

// saved reports whether key of db is in the journal already.
func (u *Undo) saved(db *DB, key []byte) bool {
	for i := range u.ents {
		e := &u.ents[i]
		if e.db == db && string(u.buf[e.key[0]:e.key[1]]) == string(key) {
			return true
		}
	}
	return false
}

// Save records key of db as it is now, unless it is saved already. It
// returns false, saving nothing, when the value is bigger than limit bytes
// (Object.Mem, or a string's length).
func (u *Undo) Save(db *DB, key []byte, limit int) bool {
	if u.saved(db, key) {
		return true
	}
	e := undoEnt{db: db}
	slot := db.Peek(key)
	if slot >= 0 && db.Expired(slot) {
		slot = -1 // the write will find it gone; put back: still gone
	}
	if slot >= 0 {
		e.present = true
		e.typ, e.enc = db.Type(slot), db.Encoding(slot)
		e.exp = db.Expiry(slot)
		e.lru = db.LRU(slot)
		if e.typ == TypeString {
			v := db.Str(slot)
			if len(v) > limit {
				return false
			}
			s := len(u.buf)
			u.buf = append(u.buf, v...)
			e.str = [2]int{s, len(u.buf)}
		} else {
			o := db.Obj(slot)
			if o.Mem() > limit {
				return false
			}
			e.obj = o.Copy()
		}
	}
	s := len(u.buf)
	u.buf = append(u.buf, key...)
	e.key = [2]int{s, len(u.buf)}
	u.ents = append(u.ents, e)
	return true
}

// Rollback restores every saved key, latest save first, and resets the
// journal.
func (u *Undo) Rollback() {
	for i := len(u.ents) - 1; i >= 0; i-- {
		e := &u.ents[i]
		db := e.db
		key := u.buf[e.key[0]:e.key[1]]
		if slot := db.Peek(key); slot >= 0 {
			db.Delete(slot)
		}
		if !e.present {
			continue
		}
		var slot int32
		if e.typ == TypeString {
			slot = db.SetStr(key, u.buf[e.str[0]:e.str[1]], false)
		} else {
			slot = db.SetObj(key, e.typ, e.enc, e.obj)
			e.obj = nil // owned by the keyspace again
		}
		db.SetEncoding(slot, e.enc)
		if e.exp != 0 {
			db.SetExpiry(slot, e.exp)
		}
		db.at(slot).lru = e.lru
	}
	u.Reset()
}
