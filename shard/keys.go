package shard

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
)

// Generic keyspace commands (Redis's db.c, expire.c and object.c).

var keyCommands = []Command{
	{Name: "del", Run: cmdDel},
	{Name: "unlink", Run: cmdUnlink},
	{Name: "exists", Run: cmdExists},
	{Name: "touch", Run: cmdTouch},
	{Name: "type", Run: cmdType},
	{Name: "rename", Run: cmdRename},
	{Name: "renamenx", Run: cmdRenamenx},
	{Name: "copy", Run: cmdCopy},
	{Name: "move", Run: cmdMove},
	{Name: "swapdb", Run: cmdSwapdb, Route: AllShards},
	{Name: "expire", Run: cmdExpire},
	{Name: "pexpire", Run: cmdPexpire},
	{Name: "expireat", Run: cmdExpireat},
	{Name: "pexpireat", Run: cmdPexpireat},
	{Name: "ttl", Run: cmdTtl},
	{Name: "pttl", Run: cmdPttl},
	{Name: "expiretime", Run: cmdExpiretime},
	{Name: "pexpiretime", Run: cmdPexpiretime},
	{Name: "persist", Run: cmdPersist},
	{Name: "keys", Run: cmdKeys, Route: AllShards},
	{Name: "scan", Run: cmdScan, Shard: scanShard},
	{Name: "randomkey", Run: cmdRandomkey, Route: AllShards},
	{Name: "dbsize", Run: cmdDbsize, Route: AllShards},
	{Name: "flushdb", Run: cmdFlushdb, Route: AllShards},
	{Name: "flushall", Run: cmdFlushall, Route: AllShards},
	{Name: "object|encoding", Run: cmdObjectEncoding},
	{Name: "object|freq", Run: cmdObjectFreq},
	{Name: "object|idletime", Run: cmdObjectIdletime},
	{Name: "object|refcount", Run: cmdObjectRefcount},
	{Name: "object|help", Run: cmdObjectHelp},
}

// Error replies of this file, as Redis spells them.
const (
	errSameObject    = "ERR source and destination objects are the same"
	errIntRange      = "ERR value is out of range, value must between -2147483648 and 2147483647"
	errInvalidCursor = "ERR invalid cursor"
	errNoLFU         = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errLFU           = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// Arguments of the commands this file logs in place of the one that ran.
var (
	argDEL       = []byte("DEL")
	argPEXPIREAT = []byte("PEXPIREAT")
)

// lookupNoTouch is Redis's lookupKeyReadWithFlags(LOOKUP_NOTOUCH): lazy
// expiry, hit/miss statistics and the keymiss event, but the access time is
// left alone.
func lookupNoTouch(db *DB, key []byte) int32 {
	slot := lookupNoNotify(db, key)
	if slot < 0 {
		db.Notify(NotifyKeyMiss, "keymiss", key)
	}
	return slot
}

// lookupNoNotify is lookupNoTouch without the keymiss event (OBJECT's
// LOOKUP_NOTOUCH|LOOKUP_NONOTIFY).
func lookupNoNotify(db *DB, key []byte) int32 {
	slot := db.Lookup(key)
	if slot < 0 {
		db.sh.Stats.KeyspaceMisses++
	} else {
		db.sh.Stats.KeyspaceHits++
	}
	return slot
}

// intArg parses a C int argument as getIntFromObjectOrReply does: msg, when
// not empty, replaces both of its errors.
func intArg(c *Ctx, b []byte, msg string) (int, bool) {
	v, ok := ParseInt(b)
	if !ok {
		if msg == "" {
			msg = ErrNotInt
		}
		c.Err(msg)
		return 0, false
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		if msg == "" {
			msg = errIntRange
		}
		c.Err(msg)
		return 0, false
	}
	return int(v), true
}

// dbIndexArg parses a database number and checks its range (SELECT's rules).
func dbIndexArg(c *Ctx, b []byte) (int, bool) {
	id, ok := intArg(c, b, "")
	if !ok {
		return 0, false
	}
	if id < 0 || id >= len(c.Shards[0].DBs) {
		c.Err(ErrDBIndex)
		return 0, false
	}
	return id, true
}

// DEL key [key ...]
func cmdDel(c *Ctx, argv [][]byte) { delKeys(c, argv, false) }

// UNLINK key [key ...]: DEL, a lazy one (values are freed by the garbage
// collector either way; lazyfree.go).
func cmdUnlink(c *Ctx, argv [][]byte) { delKeys(c, argv, true) }

// delKeys is DEL, or UNLINK when unlink; DEL is lazy too under
// lazyfree-lazy-user-del.
func delKeys(c *Ctx, argv [][]byte, unlink bool) {
	n := 0
	for _, key := range argv[1:] {
		db := c.DBOf(key)
		if slot := db.Lookup(key); slot >= 0 {
			db.deleteMaybeLazy(slot, unlink || db.sh.Cfg.LazyUserDel.Load())
			db.Notify(NotifyGeneric, "del", key)
			n++
		}
	}
	c.Dirty(n)
	c.Int(int64(n))
}

// EXISTS key [key ...]: a key named twice counts twice.
func cmdExists(c *Ctx, argv [][]byte) {
	n := int64(0)
	for _, key := range argv[1:] {
		if lookupNoTouch(c.DBOf(key), key) >= 0 {
			n++
		}
	}
	c.Int(n)
}

// TOUCH key [key ...]
func cmdTouch(c *Ctx, argv [][]byte) {
	n := int64(0)
	for _, key := range argv[1:] {
		if c.DBOf(key).Read(key) >= 0 {
			n++
		}
	}
	c.Int(n)
}

// TYPE key
func cmdType(c *Ctx, argv [][]byte) {
	db := c.DBOf(argv[1])
	slot := lookupNoTouch(db, argv[1])
	if slot < 0 {
		c.Simple("none")
		return
	}
	c.Simple(typeName(db.Type(slot)))
}

func typeName(t uint8) string {
	if int(t) < len(TypeNames) {
		return TypeNames[t]
	}
	return "unknown"
}

// RENAME key newkey
func cmdRename(c *Ctx, argv [][]byte) { renameGeneric(c, argv, false) }

// RENAMENX key newkey
func cmdRenamenx(c *Ctx, argv [][]byte) { renameGeneric(c, argv, true) }

func renameGeneric(c *Ctx, argv [][]byte, nx bool) {
	key, newkey := argv[1], argv[2]
	src := c.DBOf(key)
	slot := src.Write(key)
	if slot < 0 {
		c.Err(ErrNoSuchKey)
		return
	}
	if bytes.Equal(key, newkey) {
		if nx {
			c.Int(0)
		} else {
			c.OK()
		}
		return
	}
	dst := c.DBOf(newkey)
	if dst.Write(newkey) >= 0 && nx {
		c.Int(0)
		return
	}
	// MoveTo replaces newkey and carries type, value, encoding, access
	// time and expiry, across shards too.
	src.MoveTo(slot, dst, newkey)
	src.Notify(NotifyGeneric, "rename_from", key)
	dst.Notify(NotifyGeneric, "rename_to", newkey)
	c.Dirty(1)
	if nx {
		c.Int(1)
	} else {
		c.OK()
	}
}

// COPY source destination [DB destination-db] [REPLACE]
func cmdCopy(c *Ctx, argv [][]byte) {
	key, newkey := argv[1], argv[2]
	dbid, replace := c.DB, false
	for j := 3; j < len(argv); j++ {
		switch {
		case EqualFold(argv[j], "replace"):
			replace = true
		case EqualFold(argv[j], "db") && j+1 < len(argv):
			id, ok := dbIndexArg(c, argv[j+1])
			if !ok {
				return
			}
			dbid = id
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if dbid == c.DB && bytes.Equal(key, newkey) {
		c.Err(errSameObject)
		return
	}
	src := c.DBOf(key)
	slot := src.Read(key)
	if slot < 0 {
		c.Int(0)
		return
	}
	dst := c.Shards[ShardOf(newkey, len(c.Shards))].DBs[dbid]
	if old := dst.Write(newkey); old >= 0 {
		if !replace {
			c.Int(0)
			return
		}
		// Replaced as Redis does (delete, then add): the key is "new".
		dst.Delete(old)
	}
	exp, typ, enc := src.Expiry(slot), src.Type(slot), src.Encoding(slot)
	var ns int32
	if typ == TypeString {
		// SetStr replaces whatever newkey holds and clears its expiry.
		ns = dst.SetStr(newkey, src.Str(slot), false)
		dst.SetEncoding(ns, enc)
	} else {
		ns = dst.SetObj(newkey, typ, enc, src.Obj(slot).Copy())
	}
	if exp != 0 {
		dst.SetExpiry(ns, exp)
	}
	dst.Notify(NotifyGeneric, "copy_to", newkey)
	c.Dirty(1)
	c.Int(1)
}

// MOVE key db
func cmdMove(c *Ctx, argv [][]byte) {
	id, ok := dbIndexArg(c, argv[2])
	if !ok {
		return
	}
	if id == c.DB {
		c.Err(errSameObject)
		return
	}
	key := argv[1]
	sh := c.Shards[ShardOf(key, len(c.Shards))]
	src, dst := sh.DBs[c.DB], sh.DBs[id]
	slot := src.Write(key)
	if slot < 0 || dst.Write(key) >= 0 {
		c.Int(0)
		return
	}
	src.MoveTo(slot, dst, key)
	src.Notify(NotifyGeneric, "move_from", key)
	dst.Notify(NotifyGeneric, "move_to", key)
	c.Dirty(1)
	c.Int(1)
}

// SWAPDB index1 index2: swaps the databases on every shard.
func cmdSwapdb(c *Ctx, argv [][]byte) {
	a, ok := intArg(c, argv[1], "ERR invalid first DB index")
	if !ok {
		return
	}
	b, ok := intArg(c, argv[2], "ERR invalid second DB index")
	if !ok {
		return
	}
	n := len(c.Shards[0].DBs)
	if a < 0 || a >= n || b < 0 || b >= n {
		c.Err(ErrDBIndex)
		return
	}
	if a != b {
		for _, s := range c.Shards {
			s.SwapDB(a, b)
		}
	}
	c.Dirty(1)
	c.OK()
}

// Conditions of the EXPIRE family.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

// parseExpireFlags parses the NX XX GT LT options from argv[3].
func parseExpireFlags(c *Ctx, argv [][]byte) (int, bool) {
	flags := 0
	for _, opt := range argv[3:] {
		switch {
		case EqualFold(opt, "nx"):
			flags |= expireNX
		case EqualFold(opt, "xx"):
			flags |= expireXX
		case EqualFold(opt, "gt"):
			flags |= expireGT
		case EqualFold(opt, "lt"):
			flags |= expireLT
		default:
			// Redis formats the option with %s: it ends at a NUL byte.
			if i := bytes.IndexByte(opt, 0); i >= 0 {
				opt = opt[:i]
			}
			c.Err("ERR Unsupported option " + string(opt))
			return 0, false
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		c.Err("ERR NX and XX, GT or LT options at the same time are not compatible")
		return 0, false
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.Err("ERR GT and LT options at the same time are not compatible")
		return 0, false
	}
	return flags, true
}

// EXPIRE key seconds [NX|XX|GT|LT]
func cmdExpire(c *Ctx, argv [][]byte) { expireGeneric(c, argv, "expire", c.Now(), true) }

// PEXPIRE key milliseconds [NX|XX|GT|LT]
func cmdPexpire(c *Ctx, argv [][]byte) { expireGeneric(c, argv, "pexpire", c.Now(), false) }

// EXPIREAT key unix-time-seconds [NX|XX|GT|LT]
func cmdExpireat(c *Ctx, argv [][]byte) { expireGeneric(c, argv, "expireat", 0, true) }

// PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT]
func cmdPexpireat(c *Ctx, argv [][]byte) { expireGeneric(c, argv, "pexpireat", 0, false) }

// expireGeneric is Redis's expireGenericCommand: base is the time (ms) a
// relative argument counts from (0 for the *AT forms), seconds says the
// argument's unit.
func expireGeneric(c *Ctx, argv [][]byte, name string, base int64, seconds bool) {
	flags, ok := parseExpireFlags(c, argv)
	if !ok {
		return
	}
	when, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	// Negative times are allowed, but the unit conversion and the addition
	// of the base time must not overflow.
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.Err("ERR invalid expire time in '" + name + "' command")
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		c.Err("ERR invalid expire time in '" + name + "' command")
		return
	}
	when += base

	key := argv[1]
	db := c.DBOf(key)
	slot := db.Write(key)
	if slot < 0 {
		c.Int(0)
		return
	}
	if flags != 0 {
		cur := db.Expiry(slot)
		has := cur != 0
		if (flags&expireNX != 0 && has) ||
			(flags&expireXX != 0 && !has) ||
			// no expiry counts as infinite: GT never beats it, LT always does
			(flags&expireGT != 0 && (!has || when <= cur)) ||
			(flags&expireLT != 0 && has && when >= cur) {
			c.Int(0)
			return
		}
	}

	if when <= c.Now() && !db.sh.Loading {
		// A time in the past deletes the key, logged as a DEL. (While the
		// log is replayed the expiry is set instead, and the replayed DEL
		// that follows removes the key.)
		db.Delete(slot)
		c.Propagate(argDEL, key)
		db.Notify(NotifyGeneric, "del", key)
		c.Int(1)
		return
	}
	if when == 0 {
		when = -1 // 0 means "no expiry" in the keyspace; still in the past
	}
	db.SetExpiry(slot, when)
	if name == "pexpireat" {
		c.Dirty(1)
	} else {
		// Logged as PEXPIREAT with the absolute time, keeping the options
		// as Redis's argument rewrite does.
		prop := make([][]byte, 0, len(argv))
		prop = append(prop, argPEXPIREAT, key, strconv.AppendInt(nil, when, 10))
		prop = append(prop, argv[3:]...)
		c.Propagate(prop...)
	}
	db.Notify(NotifyGeneric, "expire", key)
	c.Int(1)
}

// TTL key
func cmdTtl(c *Ctx, argv [][]byte) { ttlGeneric(c, argv, false, false) }

// PTTL key
func cmdPttl(c *Ctx, argv [][]byte) { ttlGeneric(c, argv, true, false) }

// EXPIRETIME key
func cmdExpiretime(c *Ctx, argv [][]byte) { ttlGeneric(c, argv, false, true) }

// PEXPIRETIME key
func cmdPexpiretime(c *Ctx, argv [][]byte) { ttlGeneric(c, argv, true, true) }

// ttlGeneric replies -2 for a missing key, -1 for no expiry, else the time
// left (or the absolute time with abs), in ms or rounded to seconds.
func ttlGeneric(c *Ctx, argv [][]byte, ms, abs bool) {
	db := c.DBOf(argv[1])
	slot := lookupNoTouch(db, argv[1])
	if slot < 0 {
		c.Int(-2)
		return
	}
	exp := db.Expiry(slot)
	if exp == 0 {
		c.Int(-1)
		return
	}
	t := exp
	if !abs {
		if now := c.Now(); exp > now {
			t = exp - now
		} else {
			t = 0
		}
	}
	if t < 0 {
		t = 0
	}
	if !ms {
		// (t+500)/1000 without overflowing near math.MaxInt64, which is
		// what Redis's compiled code yields there.
		t = int64((uint64(t) + 500) / 1000)
	}
	c.Int(t)
}

// PERSIST key
func cmdPersist(c *Ctx, argv [][]byte) {
	db := c.DBOf(argv[1])
	slot := db.Write(argv[1])
	if slot < 0 || db.Expiry(slot) == 0 {
		c.Int(0)
		return
	}
	db.SetExpiry(slot, 0)
	db.Notify(NotifyGeneric, "persist", argv[1])
	c.Dirty(1)
	c.Int(1)
}

// KEYS pattern: logically expired keys are skipped, not deleted.
func cmdKeys(c *Ctx, argv [][]byte) {
	pat := argv[1]
	all := len(pat) == 1 && pat[0] == '*'
	var found []int32
	ends := make([]int, len(c.Shards)) // found[ends[i-1]:ends[i]] are shard i's
	for i, s := range c.Shards {
		db := s.DBs[c.DB]
		for slot, n := int32(0), db.Slots(); slot < n; slot++ {
			if !db.Live(slot) || (!all && !MatchGlob(pat, db.Key(slot), false)) || db.Expired(slot) {
				continue
			}
			found = append(found, slot)
		}
		ends[i] = len(found)
	}
	c.Array(len(found))
	start := 0
	for i, s := range c.Shards {
		db := s.DBs[c.DB]
		for j, slot := range found[start:ends[i]] {
			c.Bulk(db.Key(slot))
			if (start+j)%fullEvery == fullEvery-1 && c.Full() {
				return // the client is being closed: the reply is dropped
			}
		}
		start = ends[i]
	}
}

// parseCursor parses a SCAN cursor as Redis's strtoul-based check does: an
// optional sign (a minus wraps around), decimal digits, nothing after them
// up to the first NUL byte; an empty cursor is 0.
func parseCursor(b []byte) (uint64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// scanShard routes SCAN by its cursor: cursor = pos*nshards + shard. An

// scanArgs are the options of SCAN, HSCAN, SSCAN and ZSCAN.
type scanArgs struct {
	count          int64
	pat, typ       []byte
	usePat, useTyp bool // a MATCH other than "*"; a TYPE (SCAN only)
}

// parseScanArgs reads [MATCH pattern] [COUNT count] (and [TYPE type] when
// withType) from argv[from:], replying Redis's error when they are wrong.
func parseScanArgs(c *Ctx, argv [][]byte, from int, withType bool) (o scanArgs, ok bool) {
	o.count = 10
	for i := from; i < len(argv); i += 2 {
		more := len(argv) - i
		switch {
		case EqualFold(argv[i], "count") && more >= 2:
			v, ok := ParseInt(argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return o, false
			}
			if v < 1 {
				c.Err(ErrSyntax)
				return o, false
			}
			o.count = v
		case EqualFold(argv[i], "match") && more >= 2:
			o.pat = argv[i+1]
			o.usePat = !(len(o.pat) == 1 && o.pat[0] == '*')
		case withType && EqualFold(argv[i], "type") && more >= 2:
			o.typ, o.useTyp = argv[i+1], true
		default:
			c.Err(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// emptyScan is the reply of a scan over a missing key: cursor 0, no elements.
func emptyScan(c *Ctx) { c.Out = append(c.Out, "*2\r\n$1\r\n0\r\n*0\r\n"...) }

// invalid cursor goes to shard 0, whose handler replies the error.
func scanShard(argv [][]byte, nshards int) int {
	cur, ok := parseCursor(argv[1])
	if !ok || nshards <= 1 {
		return 0
	}
	return int(cur % uint64(nshards))
}

// ScanRoute is where a SCAN starts (the cursor's shard) and its COUNT (10
// when absent or invalid: the handler answers a bad one), for a dispatcher
// that may give the call the shards after it as well (Ctx.Held).
func ScanRoute(argv [][]byte, nshards int) (first int, count int64) {
	count = 10
	for i := 2; i+1 < len(argv); i += 2 {
		if EqualFold(argv[i], "count") {
			if v, ok := ParseInt(argv[i+1]); ok && v > 0 {
				count = v
			}
		}
	}
	return scanShard(argv, nshards), count
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
//
// Each call walks the slots of one shard's database upward from the
// cursor's position. Slots never move while their key lives, so a key
// present for the whole iteration is returned (exactly once, unless it is
// deleted and added again). When a shard is done the cursor moves on to the
// next shard's slot 0, and to 0 after the last shard. A call that holds the
// next shards too (Ctx.Held: the dispatcher gives them when they hold few
// keys) goes on into them within its COUNT and visit budget, so that SCAN 0
// over a small data set returns every key and cursor 0, as Redis's does.
func cmdScan(c *Ctx, argv [][]byte) {
	cur, ok := parseCursor(argv[1])
	if !ok {
		c.Err(errInvalidCursor)
		return
	}
	o, ok := parseScanArgs(c, argv, 2, true)
	if !ok {
		return
	}
	count, pat, usePat, typ, useTyp := o.count, o.pat, o.usePat, o.typ, o.useTyp

	nsh := uint64(len(c.Shards))
	si := cur % nsh
	pos := cur / nsh

	// Like Redis, stop after count keys or after visiting ten times as many
	// slots, so that a sparse table does not block the loop.
	maxVisit := uint64(math.MaxUint64)
	if count <= math.MaxInt64/10 {
		maxVisit = uint64(count) * 10
	}
	type hit struct {
		db   *DB
		slot int32
	}
	found := make([]hit, 0, min(count, 128))
	var visited uint64
	for {
		db := c.Shards[si].DBs[c.DB]
		end := uint64(db.Slots())
		for ; pos < end && visited < maxVisit && int64(len(found)) < count; visited++ {
			if slot := int32(pos); db.Live(slot) {
				found = append(found, hit{db, slot})
			}
			pos++
		}
		if pos < end || visited >= maxVisit || int64(len(found)) >= count ||
			si+1 >= nsh || c.Held&(1<<(si+1)) == 0 {
			break
		}
		si, pos = si+1, 0
	}

	// Filter as Redis does after collecting: pattern, type, then expiry
	// (expired keys that passed the filters are deleted on the way).
	keep := found[:0]
	for _, h := range found {
		db, slot := h.db, h.slot
		if usePat && !MatchGlob(pat, db.Key(slot), false) {
			continue
		}
		expired := db.Expired(slot)
		if useTyp {
			// Redis looks the key up to learn its type (counting a hit or
			// miss, and firing expired then keymiss for a stale key).
			if expired {
				db.sh.Stats.KeyspaceMisses++
				key := append([]byte(nil), db.Key(slot)...)
				db.expireSlot(slot)
				db.Notify(NotifyKeyMiss, "keymiss", key)
				continue
			}
			db.sh.Stats.KeyspaceHits++
			if !EqualFold(typ, typeName(db.Type(slot))) {
				continue
			}
		}
		if expired {
			db.expireSlot(slot)
			continue
		}
		keep = append(keep, h)
	}

	var next uint64
	switch {
	case pos < uint64(c.Shards[si].DBs[c.DB].Slots()):
		next = pos*nsh + si
	case si+1 < nsh:
		next = si + 1 // the next shard's position 0
	}
	var buf [20]byte
	c.Array(2)
	c.Bulk(strconv.AppendUint(buf[:0], next, 10))
	c.Array(len(keep))
	for _, h := range keep {
		c.Bulk(h.db.Key(h.slot))
	}
}

// RANDOMKEY: a shard is drawn weighted by its key count, then a key of it;
// a logically expired key drawn is deleted and the draw repeated, as Redis
// does.
func cmdRandomkey(c *Ctx, argv [][]byte) {
	for {
		total := 0
		for _, s := range c.Shards {
			total += s.DBs[c.DB].Len()
		}
		if total == 0 {
			c.Null()
			return
		}
		r := rand.IntN(total)
		var db *DB
		for _, s := range c.Shards {
			db = s.DBs[c.DB]
			if r < db.Len() {
				break
			}
			r -= db.Len()
		}
		slot := db.RandomSlot()
		if slot < 0 {
			continue
		}
		if db.Expired(slot) {
			db.expireSlot(slot)
			continue
		}
		c.Bulk(db.Key(slot))
		return
	}
}

// DBSIZE: includes expired keys not yet reclaimed, as in Redis.
func cmdDbsize(c *Ctx, argv [][]byte) {
	n := 0
	for _, s := range c.Shards {
		n += s.DBs[c.DB].Len()
	}
	c.Int(int64(n))
}

// flushArgsOK checks FLUSHDB/FLUSHALL's optional SYNC|ASYNC (both free the
// memory at once here: the garbage collector reclaims it in the background).
func flushArgsOK(c *Ctx, argv [][]byte) bool {
	if FlushArgsValid(argv) {
		return true
	}
	c.Err(ErrSyntax)
	return false
}

// FlushArgsValid reports whether argv is FLUSHDB's or FLUSHALL's syntax:
// no argument, or one of ASYNC and SYNC.
func FlushArgsValid(argv [][]byte) bool {
	return len(argv) == 1 || (len(argv) == 2 && (EqualFold(argv[1], "sync") || EqualFold(argv[1], "async")))
}

// FLUSHDB [ASYNC|SYNC]
func cmdFlushdb(c *Ctx, argv [][]byte) {
	if !flushArgsOK(c, argv) {
		return
	}
	n := 0
	async := flushIsAsync(c, argv)
	for _, s := range c.Shards {
		db := s.DBs[c.DB]
		k := db.Len()
		n += k
		if async { // emptyDbAsync: every key counts (lazyfree.go)
			s.Stats.LazyFreed += int64(k)
		}
		db.Flush()
	}
	// Redis logs FLUSHDB even when nothing was removed.
	c.Dirty(max(n, 1))
	c.OK()
}

// FLUSHALL [ASYNC|SYNC]
func cmdFlushall(c *Ctx, argv [][]byte) {
	if !flushArgsOK(c, argv) {
		return
	}
	n := 0
	async := flushIsAsync(c, argv)
	for _, s := range c.Shards {
		k, _ := s.Keys()
		n += k
		if async { // emptyDbAsync: every key counts (lazyfree.go)
			s.Stats.LazyFreed += int64(k)
		}
		s.FlushAll()
	}
	c.Dirty(max(n, 1))
	c.OK()
}

// objectLookup looks the key of an OBJECT subcommand up without touching it,
// replying null when it is missing.
func objectLookup(c *Ctx, argv [][]byte) (*DB, int32) {
	db := c.DBOf(argv[2])
	slot := lookupNoNotify(db, argv[2])
	if slot < 0 {
		c.Null()
	}
	return db, slot
}

// OBJECT ENCODING key
func cmdObjectEncoding(c *Ctx, argv [][]byte) {
	db, slot := objectLookup(c, argv)
	if slot < 0 {
		return
	}
	enc := "unknown"
	if e := db.Encoding(slot); int(e) < len(EncNames) {
		enc = EncNames[e]
	}
	c.BulkStr(enc)
}

// sharedIntegers is Redis's OBJ_SHARED_INTEGERS: string values 0..9999 are
// shared objects, whose reference count is OBJ_SHARED_REFCOUNT.
const sharedIntegers = 10000

// OBJECT REFCOUNT key: 1, or INT_MAX for the values Redis shares. Redis
// does not share integers when maxmemory is set with an LRU or LFU policy
// (each key needs its own access time); it decides when the value is
// stored, this reports the current configuration's choice.
func cmdObjectRefcount(c *Ctx, argv [][]byte) {
	db, slot := objectLookup(c, argv)
	if slot < 0 {
		return
	}
	cfg := db.sh.Cfg
	p := cfg.MaxmemoryPolicy.Load()
	lruOrLFU := p == PolicyVolatileLRU || p == PolicyAllkeysLRU || lfuPolicyOf(p)
	if db.Type(slot) == TypeString && db.Encoding(slot) == EncInt && !(cfg.MaxmemorySet.Load() && lruOrLFU) {
		if v, ok := ParseInt(db.Str(slot)); ok && v >= 0 && v < sharedIntegers {
			c.Int(math.MaxInt32)
			return
		}
	}
	c.Int(1)
}

// OBJECT IDLETIME key: seconds since the last access.
func cmdObjectIdletime(c *Ctx, argv [][]byte) {
	db, slot := objectLookup(c, argv)
	if slot < 0 {
		return
	}
	if lfuPolicyOf(db.sh.Cfg.MaxmemoryPolicy.Load()) {
		c.Err(errLFU)
		return
	}
	idle := db.sh.Now()/1000 - int64(db.LRU(slot))
	c.Int(max(idle, 0))
}

// OBJECT FREQ key: the LFU counter, kept in the low 8 bits of the access
// field under an LFU policy (Redis's layout).
func cmdObjectFreq(c *Ctx, argv [][]byte) {
	db, slot := objectLookup(c, argv)
	if slot < 0 {
		return
	}
	if !lfuPolicyOf(db.sh.Cfg.MaxmemoryPolicy.Load()) {
		c.Err(errNoLFU)
		return
	}
	c.Int(db.LFUFreq(slot))
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// OBJECT HELP
func cmdObjectHelp(c *Ctx, argv [][]byte) {
	c.Array(len(objectHelp))
	for _, line := range objectHelp {
		c.Simple(line)
	}
}
