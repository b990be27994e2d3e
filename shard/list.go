package shard

import (
	"math"
	"strconv"
)

// List commands (Redis 7.0 t_list.c). The value is a List (quicklist.go);
// an empty list is never stored: the key is deleted when its last element
// goes.
//
// The blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) are here too:
// when they find nothing they call Ctx.Block, and the server parks the
// client until a key is ready, then runs the command again with
// Ctx.ServeKey set (server/blocking.go).

var listCommands = []Command{
	{Name: "lpush", Run: cmdLpush},
	{Name: "rpush", Run: cmdRpush},
	{Name: "lpushx", Run: cmdLpushx},
	{Name: "rpushx", Run: cmdRpushx},
	{Name: "linsert", Run: cmdLinsert},
	{Name: "llen", Run: cmdLlen},
	{Name: "lindex", Run: cmdLindex},
	{Name: "lset", Run: cmdLset},
	{Name: "lpop", Run: cmdLpop},
	{Name: "rpop", Run: cmdRpop},
	{Name: "lmpop", Run: cmdLmpop},
	{Name: "lrange", Run: cmdLrange},
	{Name: "ltrim", Run: cmdLtrim},
	{Name: "lpos", Run: cmdLpos},
	{Name: "lrem", Run: cmdLrem},
	{Name: "lmove", Run: cmdLmove},
	{Name: "rpoplpush", Run: cmdRpoplpush},
	{Name: "blpop", Run: cmdBlpop},
	{Name: "brpop", Run: cmdBrpop},
	{Name: "blmove", Run: cmdBlmove},
	{Name: "brpoplpush", Run: cmdBrpoplpush},
	{Name: "blmpop", Run: cmdBlmpop},
}

var (
	wordLPOP      = []byte("LPOP")
	wordRPOP      = []byte("RPOP")
	wordLMOVE     = []byte("LMOVE")
	wordRPOPLPUSH = []byte("RPOPLPUSH")
	wordLEFT      = []byte("LEFT")
	wordRIGHT     = []byte("RIGHT")
)

const (
	errIndexRange    = "ERR index out of range"
	errNumkeys       = "ERR numkeys should be greater than 0"
	errCountPositive = "ERR count should be greater than 0"
	errRankZero      = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errCountNeg      = "ERR COUNT can't be negative"
	errMaxlenNeg     = "ERR MAXLEN can't be negative"
	errTimeoutFloat  = "ERR timeout is not a float or out of range"
	errTimeoutNeg    = "ERR timeout is negative"
)

// Ends of a list.
const (
	listHead = iota
	listTail
)

// lookupList finds key's list for a read or a write. ok is false (and
// WRONGTYPE replied) when the key holds another type; l is nil when the key
// is missing.
func lookupList(c *Ctx, db *DB, key []byte, write bool) (slot int32, l *List, ok bool) {
	if write {
		slot = db.Write(key)
	} else {
		slot = db.Read(key)
	}
	if slot < 0 {
		return -1, nil, true
	}
	if db.Type(slot) != TypeList {
		c.Err(ErrWrongType)
		return slot, nil, false
	}
	return slot, db.Obj(slot).(*List), true
}

// newList makes a list with the shard's list-max-listpack-size.
func newList(db *DB) *List {
	return NewList(int(db.sh.Cfg.ListMaxListpackSize.Load()))
}

// rangeArg is getRangeLongFromObjectOrReply with a message: the same error
// for a bad value and for one out of [min, max].
func rangeArg(c *Ctx, b []byte, min, max int64, msg string) (int64, bool) {
	v, ok := ParseInt(b)
	if !ok || v < min || v > max {
		c.Err(msg)
		return 0, false
	}
	return v, true
}

// whereArg parses LEFT or RIGHT.
func whereArg(b []byte) (int, bool) {
	switch {
	case EqualFold(b, "left"):
		return listHead, true
	case EqualFold(b, "right"):
		return listTail, true
	}
	return 0, false
}

func popEvent(where int) string {
	if where == listHead {
		return "lpop"
	}
	return "rpop"
}

func pushEvent(where int) string {
	if where == listHead {
		return "lpush"
	}
	return "rpush"
}

// removed finishes a pop from key: the notification, and the key's
// deletion when the list is empty (Redis's listElementsRemoved).
func listRemoved(db *DB, slot int32, key []byte, l *List, where int) {
	db.Notify(NotifyList, popEvent(where), key)
	if l.Len() == 0 {
		db.Delete(slot)
		db.Notify(NotifyGeneric, "del", key)
	}
}

func cmdLpush(c *Ctx, argv [][]byte)  { pushGeneric(c, argv, listHead, false) }
func cmdRpush(c *Ctx, argv [][]byte)  { pushGeneric(c, argv, listTail, false) }
func cmdLpushx(c *Ctx, argv [][]byte) { pushGeneric(c, argv, listHead, true) }
func cmdRpushx(c *Ctx, argv [][]byte) { pushGeneric(c, argv, listTail, true) }

// pushGeneric is LPUSH/RPUSH/LPUSHX/RPUSHX key element [element ...].
func pushGeneric(c *Ctx, argv [][]byte, where int, xx bool) {
	key := argv[1]
	db := c.DBOf(key)
	slot, l, ok := lookupList(c, db, key, true)
	if !ok {
		return
	}
	if l == nil {
		if xx {
			c.Int(0)
			return
		}
		l = newList(db)
		db.SetObj(key, TypeList, EncQuicklist, l)
	} else {
		db.Modify(slot)
	}
	for _, e := range argv[2:] {
		if where == listHead {
			l.PushFront(e)
		} else {
			l.PushBack(e)
		}
	}
	c.Dirty(len(argv) - 2)
	c.Int(int64(l.Len()))
	db.Notify(NotifyList, pushEvent(where), key)
}

// LINSERT key BEFORE|AFTER pivot element
func cmdLinsert(c *Ctx, argv [][]byte) {
	var after bool
	switch {
	case EqualFold(argv[2], "after"):
		after = true
	case EqualFold(argv[2], "before"):
	default:
		c.Err(ErrSyntax)
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot, l, ok := lookupList(c, db, key, true)
	if !ok {
		return
	}
	if l == nil {
		c.Int(0)
		return
	}
	it := l.Iter(0, false)
	i := 0
	found := false
	for e, more := it.Next(); more; e, more = it.Next() {
		if string(e) == string(argv[3]) {
			found = true
			break
		}
		i++
	}
	if !found {
		c.Int(-1)
		return
	}
	db.Modify(slot)
	if after {
		i++
	}
	l.InsertAt(i, argv[4])
	db.Notify(NotifyList, "linsert", key)
	c.Dirty(1)
	c.Int(int64(l.Len()))
}

// LLEN key
func cmdLlen(c *Ctx, argv [][]byte) {
	_, l, ok := lookupList(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if l == nil {
		c.Int(0)
		return
	}
	c.Int(int64(l.Len()))
}

// LINDEX key index
func cmdLindex(c *Ctx, argv [][]byte) {
	_, l, ok := lookupList(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if l == nil {
		c.Null()
		return
	}
	idx, ok := longArg(c, argv[2])
	if !ok {
		return
	}
	if e, ok := l.Index(int(idx)); ok {
		c.Bulk(e)
	} else {
		c.Null()
	}
}

// LSET key index element
func cmdLset(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot, l, ok := lookupList(c, db, key, true)
	if !ok {
		return
	}
	if l == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	idx, ok := longArg(c, argv[2])
	if !ok {
		return
	}
	if idx < -int64(l.Len()) || idx >= int64(l.Len()) {
		c.Err(errIndexRange)
		return
	}
	db.Modify(slot)
	l.Set(int(idx), argv[3])
	c.OK()
	db.Notify(NotifyList, "lset", key)
	c.Dirty(1)
}

// replyRange appends elements start..end (inclusive, already clamped) of
// l, from end to start when reverse is set.
func replyRange(c *Ctx, l *List, start, end int, reverse bool) {
	n := end - start + 1
	c.Array(n)
	var it ListIter
	if reverse {
		it = l.Iter(end, true)
	} else {
		it = l.Iter(start, false)
	}
	for ; n > 0; n-- {
		e, _ := it.Next()
		c.Bulk(e)
	}
}

// popRange replies with (and removes) the first or last count elements, in
// pop order, as an array; it returns how many it popped.
func popRange(c *Ctx, l *List, where int, count int64) int {
	n := l.Len()
	if count < int64(n) {
		n = int(count)
	}
	if where == listHead {
		replyRange(c, l, 0, n-1, false)
		l.DeleteRange(0, n)
	} else {
		replyRange(c, l, l.Len()-n, l.Len()-1, true)
		l.DeleteRange(l.Len()-n, n)
	}
	return n
}

func cmdLpop(c *Ctx, argv [][]byte) { popGeneric(c, argv, listHead) }
func cmdRpop(c *Ctx, argv [][]byte) { popGeneric(c, argv, listTail) }

// popGeneric is LPOP/RPOP key [count].
func popGeneric(c *Ctx, argv [][]byte, where int) {
	if len(argv) > 3 {
		c.Err(errArity(string(toLowerASCII(argv[0]))))
		return
	}
	hasCount := len(argv) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = rangeArg(c, argv[2], 0, math.MaxInt64, errPositive); !ok {
			return
		}
	}
	key := argv[1]
	db := c.DBOf(key)
	slot, l, ok := lookupList(c, db, key, true)
	if !ok {
		return
	}
	if l == nil {
		if hasCount {
			c.NullArray()
		} else {
			c.Null()
		}
		return
	}
	if hasCount && count == 0 {
		c.Array(0)
		return
	}
	db.Modify(slot)
	n := 1
	if !hasCount {
		var e []byte
		if where == listHead {
			e = l.PopFront()
		} else {
			e = l.PopBack()
		}
		c.Bulk(e)
	} else {
		n = popRange(c, l, where, count)
	}
	listRemoved(db, slot, key, l, where)
	c.Dirty(n)
}

func toLowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		out[i] = ch
	}
	return out
}

// mpopArgs parses [B]LMPOP's numkeys keys LEFT|RIGHT [COUNT n] from argv[at].
func mpopArgs(c *Ctx, argv [][]byte, at int) (keys [][]byte, where int, count int64, ok bool) {
	numkeys, ok := rangeArg(c, argv[at], 1, math.MaxInt64, errNumkeys)
	if !ok {
		return nil, 0, 0, false
	}
	// numkeys is compared with the arguments left before any sum: at
	// MaxInt64 the sum wrapped negative, and indexing argv with it panicked.
	if numkeys >= int64(len(argv)-at-1) {
		c.Err(ErrSyntax)
		return nil, 0, 0, false
	}
	whereIdx := int64(at) + numkeys + 1
	if where, ok = whereArg(argv[whereIdx]); !ok {
		c.Err(ErrSyntax)
		return nil, 0, 0, false
	}
	count = -1
	for j := int(whereIdx) + 1; j < len(argv); j++ {
		if count == -1 && EqualFold(argv[j], "count") && j+1 < len(argv) {
			j++
			if count, ok = rangeArg(c, argv[j], 1, math.MaxInt64, errCountPositive); !ok {
				return nil, 0, 0, false
			}
			continue
		}
		c.Err(ErrSyntax)
		return nil, 0, 0, false
	}
	if count == -1 {
		count = 1
	}
	return argv[at+1 : whereIdx], where, count, true
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
func cmdLmpop(c *Ctx, argv [][]byte) {
	keys, where, count, ok := mpopArgs(c, argv, 1)
	if !ok {
		return
	}
	if served, ok := mpopFrom(c, keys, where, count); ok && !served {
		c.NullArray()
	}
}

// mpopFrom pops up to count elements from the first non-empty list of keys
// (only c.ServeKey when it is set), replying [key, [elements]] and logging
// LPOP/RPOP key n. ok is false when WRONGTYPE was replied.
func mpopFrom(c *Ctx, keys [][]byte, where int, count int64) (served, ok bool) {
	for _, key := range keys {
		if c.ServeKey != nil && string(key) != string(c.ServeKey) {
			continue
		}
		db := c.DBOf(key)
		slot := db.Write(key)
		if slot < 0 {
			continue
		}
		if db.Type(slot) != TypeList {
			if c.ServeKey != nil {
				return false, true // not a list (yet): stay blocked
			}
			c.Err(ErrWrongType)
			return false, false
		}
		l := db.Obj(slot).(*List)
		db.Modify(slot)
		c.Array(2)
		c.Bulk(key)
		n := popRange(c, l, where, count)
		listRemoved(db, slot, key, l, where)
		word := wordLPOP
		if where == listTail {
			word = wordRPOP
		}
		c.Propagate(word, key, formatInt(int64(n)))
		c.Prop.Dirty += n - 1
		return true, true
	}
	return false, true
}

// LRANGE key start stop
func cmdLrange(c *Ctx, argv [][]byte) {
	start, ok := longArg(c, argv[2])
	if !ok {
		return
	}
	end, ok := longArg(c, argv[3])
	if !ok {
		return
	}
	_, l, ok := lookupList(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if l == nil {
		c.Array(0)
		return
	}
	s, e, empty := clampRange(start, end, int64(l.Len()))
	if empty {
		c.Array(0)
		return
	}
	replyRange(c, l, s, e, false)
}

// clampRange converts LRANGE/LTRIM indexes (negative: from the end) to a
// range within [0, n); empty when nothing is in it.
func clampRange(start, end, n int64) (s, e int, empty bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= n {
		return 0, 0, true
	}
	if end >= n {
		end = n - 1
	}
	return int(start), int(end), false
}

// LTRIM key start stop
func cmdLtrim(c *Ctx, argv [][]byte) {
	start, ok := longArg(c, argv[2])
	if !ok {
		return
	}
	end, ok := longArg(c, argv[3])
	if !ok {
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot, l, ok := lookupList(c, db, key, true)
	if !ok {
		return
	}
	if l == nil {
		c.OK()
		return
	}
	n := l.Len()
	ltrim, rtrim := n, 0
	if s, e, empty := clampRange(start, end, int64(n)); !empty {
		ltrim, rtrim = s, n-e-1
	}
	db.Modify(slot)
	l.DeleteRange(0, ltrim)
	l.DeleteRange(l.Len()-rtrim, rtrim)
	db.Notify(NotifyList, "ltrim", key)
	if l.Len() == 0 {
		db.Delete(slot)
		db.Notify(NotifyGeneric, "del", key)
	}
	c.Dirty(ltrim + rtrim)
	c.OK()
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
func cmdLpos(c *Ctx, argv [][]byte) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch {
		case EqualFold(argv[j], "rank") && more:
			j++
			v, ok := longArg(c, argv[j])
			if !ok {
				return
			}
			if v == 0 {
				c.Err(errRankZero)
				return
			}
			rank = v
		case EqualFold(argv[j], "count") && more:
			j++
			v, ok := rangeArg(c, argv[j], 0, math.MaxInt64, errCountNeg)
			if !ok {
				return
			}
			count = v
		case EqualFold(argv[j], "maxlen") && more:
			j++
			v, ok := rangeArg(c, argv[j], 0, math.MaxInt64, errMaxlenNeg)
			if !ok {
				return
			}
			maxlen = v
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	back := false
	if rank < 0 {
		if rank == math.MinInt64 {
			rank = math.MaxInt64 // -LONG_MIN overflows in C too; no list is that long
		} else {
			rank = -rank
		}
		back = true
	}
	_, l, ok := lookupList(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if l == nil {
		if count != -1 {
			c.Array(0)
		} else {
			c.Null()
		}
		return
	}
	var it ListIter
	if back {
		it = l.Iter(l.Len()-1, true)
	} else {
		it = l.Iter(0, false)
	}
	llen := int64(l.Len())
	var matches, index int64
	var found []int64
	match := int64(-1)
	for e, more := it.Next(); more && (maxlen == 0 || index < maxlen); e, more = it.Next() {
		if string(e) == string(argv[2]) {
			matches++
			pos := index
			if back {
				pos = llen - index - 1
			}
			if matches >= rank {
				if count != -1 {
					found = append(found, pos)
					if count != 0 && matches-rank+1 >= count {
						break
					}
				} else {
					match = pos
					break
				}
			}
		}
		index++
	}
	if count != -1 {
		c.Array(len(found))
		for _, p := range found {
			c.Int(p)
		}
		return
	}
	if match >= 0 {
		c.Int(match)
	} else {
		c.Null()
	}
}

// LREM key count element
func cmdLrem(c *Ctx, argv [][]byte) {
	toremove, ok := longArg(c, argv[2])
	if !ok {
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot, l, ok := lookupList(c, db, key, true)
	if !ok {
		return
	}
	if l == nil {
		c.Int(0)
		return
	}
	skip, max := 0, 0
	switch {
	case toremove < 0:
		// The last -toremove matches, counting from the tail.
		m := int64(l.Count(argv[3]))
		if -toremove < m {
			skip = int(m + toremove)
		}
	case toremove > 0:
		if toremove < int64(l.Len()) {
			max = int(toremove)
		}
	}
	db.Modify(slot)
	removed := l.Remove(argv[3], skip, max)
	if removed > 0 {
		db.Notify(NotifyList, "lrem", key)
	}
	if l.Len() == 0 {
		db.Delete(slot)
		db.Notify(NotifyGeneric, "del", key)
	}
	c.Dirty(removed)
	c.Int(int64(removed))
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
func cmdLmove(c *Ctx, argv [][]byte) {
	from, ok1 := whereArg(argv[3])
	to, ok2 := whereArg(argv[4])
	if !ok1 || !ok2 {
		c.Err(ErrSyntax)
		return
	}
	lmoveGeneric(c, argv, from, to, nil)
}

// RPOPLPUSH source destination
func cmdRpoplpush(c *Ctx, argv [][]byte) {
	lmoveGeneric(c, argv, listTail, listHead, nil)
}

// lmoveGeneric pops from argv[1]'s end from and pushes to argv[2]'s end to,
// replying the element (null when the source is missing). prop, when set,
// is what to log instead of the command. It reports whether it moved.
func lmoveGeneric(c *Ctx, argv [][]byte, from, to int, prop [][]byte) bool {
	src, dst := argv[1], argv[2]
	sdb := c.DBOf(src)
	sslot, sl, ok := lookupList(c, sdb, src, true)
	if !ok {
		return false
	}
	if sl == nil {
		c.Null()
		return false
	}
	ddb := c.DBOf(dst)
	dslot, dl, ok := lookupList(c, ddb, dst, true)
	if !ok {
		return false
	}
	sdb.Modify(sslot)
	var v []byte
	if from == listHead {
		v = sl.PopFront()
	} else {
		v = sl.PopBack()
	}
	v = append([]byte(nil), v...) // the push may reuse the popped bytes
	if dl == nil {
		dl = newList(ddb)
		ddb.SetObj(dst, TypeList, EncQuicklist, dl)
	} else if dslot != sslot || ddb != sdb {
		ddb.Modify(dslot)
	}
	if to == listHead {
		dl.PushFront(v)
	} else {
		dl.PushBack(v)
	}
	ddb.Notify(NotifyList, pushEvent(to), dst)
	c.Bulk(v)
	sdb.Notify(NotifyList, popEvent(from), src)
	if sl.Len() == 0 {
		sdb.Delete(sdb.Write(src))
		sdb.Notify(NotifyGeneric, "del", src)
	}
	if prop != nil {
		c.Propagate(prop...)
	} else {
		c.Dirty(1)
	}
	return true
}

// Blocking pops.

// BlockTimeout parses a blocking command's timeout in seconds (a double) as
// Redis's getTimeoutFromObjectOrReply does, and returns the deadline in unix
// ms (0: wait forever).
func BlockTimeout(c *Ctx, arg []byte) (int64, bool) {
	var f float64
	var err error
	if v, ok := ParseInt(arg); ok {
		f = float64(v) // the common case, without ParseFloat's string copy
	} else {
		f, err = strconv.ParseFloat(string(arg), 64)
	}
	if err != nil || math.IsNaN(f) {
		c.Err(errTimeoutFloat)
		return 0, false
	}
	ms := math.Ceil(f * 1000)
	if ms < 0 {
		c.Err(errTimeoutNeg)
		return 0, false
	}
	if ms >= math.MaxInt64/2 {
		ms = math.MaxInt64 / 2 // ~forever, without overflowing
	}
	t := int64(ms)
	if t > 0 {
		t += c.Now()
	}
	return t, true
}

func cmdBlpop(c *Ctx, argv [][]byte) { blockingPop(c, argv, listHead) }
func cmdBrpop(c *Ctx, argv [][]byte) { blockingPop(c, argv, listTail) }

// BLPOP/BRPOP key [key ...] timeout
func blockingPop(c *Ctx, argv [][]byte, where int) {
	deadline, ok := BlockTimeout(c, argv[len(argv)-1])
	if !ok {
		return
	}
	keys := argv[1 : len(argv)-1]
	for _, key := range keys {
		if c.ServeKey != nil && string(key) != string(c.ServeKey) {
			continue
		}
		db := c.DBOf(key)
		slot := db.Write(key)
		if slot < 0 {
			continue
		}
		if db.Type(slot) != TypeList {
			if c.ServeKey != nil {
				break // not a list: stay blocked
			}
			c.Err(ErrWrongType)
			return
		}
		l := db.Obj(slot).(*List)
		db.Modify(slot)
		var e []byte
		if where == listHead {
			e = l.PopFront()
		} else {
			e = l.PopBack()
		}
		c.Array(2)
		c.Bulk(key)
		c.Bulk(e)
		listRemoved(db, slot, key, l, where)
		word := wordLPOP
		if where == listTail {
			word = wordRPOP
		}
		c.Propagate(word, key)
		return
	}
	if c.InMulti {
		c.NullArray()
		return
	}
	c.Block(deadline, keys)
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
func cmdBlmpop(c *Ctx, argv [][]byte) {
	deadline, ok := BlockTimeout(c, argv[1])
	if !ok {
		return
	}
	keys, where, count, ok := mpopArgs(c, argv, 2)
	if !ok {
		return
	}
	served, ok := mpopFrom(c, keys, where, count)
	if !ok || served {
		return
	}
	if c.InMulti {
		c.NullArray()
		return
	}
	c.Block(deadline, keys)
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
func cmdBlmove(c *Ctx, argv [][]byte) {
	from, ok1 := whereArg(argv[3])
	to, ok2 := whereArg(argv[4])
	if !ok1 || !ok2 {
		c.Err(ErrSyntax)
		return
	}
	deadline, ok := BlockTimeout(c, argv[5])
	if !ok {
		return
	}
	blmoveGeneric(c, argv, from, to, deadline, [][]byte{wordLMOVE, argv[1], argv[2], whereWord(from), whereWord(to)})
}

// BRPOPLPUSH source destination timeout
func cmdBrpoplpush(c *Ctx, argv [][]byte) {
	deadline, ok := BlockTimeout(c, argv[3])
	if !ok {
		return
	}
	blmoveGeneric(c, argv, listTail, listHead, deadline, [][]byte{wordRPOPLPUSH, argv[1], argv[2]})
}

func whereWord(w int) []byte {
	if w == listHead {
		return wordLEFT
	}
	return wordRIGHT
}

func blmoveGeneric(c *Ctx, argv [][]byte, from, to int, deadline int64, prop [][]byte) {
	src := argv[1]
	db := c.DBOf(src)
	slot := db.Write(src)
	if slot >= 0 && db.Type(slot) != TypeList {
		if c.ServeKey != nil {
			c.Block(deadline, argv[1:2]) // not a list: stay blocked
			return
		}
		c.Err(ErrWrongType)
		return
	}
	if slot < 0 {
		if c.InMulti {
			c.Null()
			return
		}
		c.Block(deadline, argv[1:2])
		return
	}
	lmoveGeneric(c, argv, from, to, prop)
}
