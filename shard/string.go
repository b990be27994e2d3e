package shard

import (
	"math"
	"strconv"
)

// String commands (Redis 7.0 t_string.c).

// maxStringBytes is the longest string value an entry can hold (its length
// is a uint32).
const maxStringBytes = 1<<32 - 1

// maxStringLen is the largest string APPEND, SETRANGE and LCS may build:
// proto-max-bulk-len (CONFIG SET changes it), and never more than an entry
// can hold.
func (c *Ctx) maxStringLen() int64 {
	return min(c.Shards[0].Cfg.ProtoMaxBulkLen.Load(), maxStringBytes)
}

var stringCommands = []Command{
	{Name: "get", Run: cmdGet},
	{Name: "set", Run: cmdSet},
	{Name: "setnx", Run: cmdSetnx},
	{Name: "setex", Run: cmdSetex},
	{Name: "psetex", Run: cmdPsetex},
	{Name: "mget", Run: cmdMget},
	{Name: "mset", Run: cmdMset},
	{Name: "msetnx", Run: cmdMsetnx},
	{Name: "getset", Run: cmdGetset},
	{Name: "getdel", Run: cmdGetdel},
	{Name: "getex", Run: cmdGetex},
	{Name: "append", Run: cmdAppend},
	{Name: "strlen", Run: cmdStrlen},
	{Name: "incr", Run: cmdIncr},
	{Name: "decr", Run: cmdDecr},
	{Name: "incrby", Run: cmdIncrby},
	{Name: "decrby", Run: cmdDecrby},
	{Name: "incrbyfloat", Run: cmdIncrbyfloat},
	{Name: "getrange", Run: cmdGetrange},
	{Name: "substr", Run: cmdGetrange},
	{Name: "setrange", Run: cmdSetrange},
	{Name: "lcs", Run: cmdLcs},
}

// Words of the commands logged in place of the one that ran.
var (
	wordSET       = []byte("SET")
	wordDEL       = []byte("DEL")
	wordPXAT      = []byte("PXAT")
	wordPEXPIREAT = []byte("PEXPIREAT")
	wordPERSIST   = []byte("PERSIST")
	wordKEEPTTL   = []byte("KEEPTTL")
)

const (
	errStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errOffsetRange   = "ERR offset is out of range"
	errDecrOverflow  = "ERR decrement would overflow"
	errNaNOrInf      = "ERR increment would produce NaN or Infinity"
	errLcsType       = "ERR The specified keys must contain string values"
	errLcsLenIdx     = "ERR If you want both the length and indexes, please just use IDX."
	errLcsTooLong    = "ERR String too long for LCS"
	errLcsMemory     = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
)

// errInvalidExpire is Redis's addReplyErrorExpireTime for a command.
func errInvalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// errArity is Redis's addReplyErrorArity for a command.
func errArity(cmd string) string {
	return "ERR wrong number of arguments for '" + cmd + "' command"
}

// Flags of SET and GETEX options.
const (
	optNX = 1 << iota
	optXX
	optEX
	optPX
	optKeepTTL
	optGet
	optEXAT
	optPXAT
	optPersist

	optExpire = optEX | optPX | optEXAT | optPXAT
)

// parseStringOpts parses the options of SET (set true: from argv[3]) or GETEX
// (from argv[2]) with Redis's rules: an option may repeat, but NX/XX,
// KEEPTTL/PERSIST and the four expiry forms exclude one another, and an
// expiry form needs a following argument. It returns the flags and the
// expiry argument (nil if none); ok is false on a syntax error.
func parseStringOpts(argv [][]byte, set bool) (flags int, expire []byte, ok bool) {
	j := 2
	if set {
		j = 3
	}
	for ; j < len(argv); j++ {
		opt := argv[j]
		hasNext := j+1 < len(argv)
		switch {
		case set && EqualFold(opt, "nx") && flags&optXX == 0:
			flags |= optNX
		case set && EqualFold(opt, "xx") && flags&optNX == 0:
			flags |= optXX
		case set && EqualFold(opt, "get"):
			flags |= optGet
		case set && EqualFold(opt, "keepttl") && flags&(optPersist|optExpire) == 0:
			flags |= optKeepTTL
		case !set && EqualFold(opt, "persist") && flags&(optKeepTTL|optExpire) == 0:
			flags |= optPersist
		case EqualFold(opt, "ex") && hasNext && flags&(optKeepTTL|optPersist|optExpire&^optEX) == 0:
			flags |= optEX
			expire = argv[j+1]
			j++
		case EqualFold(opt, "px") && hasNext && flags&(optKeepTTL|optPersist|optExpire&^optPX) == 0:
			flags |= optPX
			expire = argv[j+1]
			j++
		case EqualFold(opt, "exat") && hasNext && flags&(optKeepTTL|optPersist|optExpire&^optEXAT) == 0:
			flags |= optEXAT
			expire = argv[j+1]
			j++
		case EqualFold(opt, "pxat") && hasNext && flags&(optKeepTTL|optPersist|optExpire&^optPXAT) == 0:
			flags |= optPXAT
			expire = argv[j+1]
			j++
		default:
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// expireAt converts an EX/PX/EXAT/PXAT argument to an absolute time in unix
// ms, replying with the error when it is not a positive integer or the result
// overflows (Redis's getExpireMillisecondsOrReply).
func expireAt(c *Ctx, arg []byte, flags int, cmd string) (int64, bool) {
	ms, ok := ParseInt(arg)
	if !ok {
		c.Err(ErrNotInt)
		return 0, false
	}
	seconds := flags&(optEX|optEXAT) != 0
	if ms <= 0 || (seconds && ms > math.MaxInt64/1000) {
		c.Err(errInvalidExpire(cmd))
		return 0, false
	}
	if seconds {
		ms *= 1000
	}
	if flags&(optEX|optPX) != 0 {
		ms += c.Now() // wraps negative on overflow, as in Redis
	}
	if ms <= 0 {
		c.Err(errInvalidExpire(cmd))
		return 0, false
	}
	return ms, true
}

// alreadyExpired reports whether an absolute expiry set now on db would be
// in the past (never while loading, when keys do not expire).
func alreadyExpired(c *Ctx, db *DB, ms int64) bool {
	return ms <= c.Now() && !db.sh.Loading
}

// formatInt returns n in decimal in a new slice (for a propagated argv).
func formatInt(n int64) []byte { return strconv.AppendInt(make([]byte, 0, 20), n, 10) }

// replyStr appends a key's string value, or null if it is missing; ok is
// false (and WRONGTYPE replied) when the key holds another type. It is
// Redis's getGenericCommand; slot is the key's slot or -1.
func replyStr(c *Ctx, db *DB, key []byte) (slot int32, ok bool) {
	slot = db.Read(key)
	if slot < 0 {
		c.Null()
		return -1, true
	}
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return slot, false
	}
	c.Bulk(db.Str(slot))
	return slot, true
}

func cmdGet(c *Ctx, argv [][]byte) {
	replyStr(c, c.DBOf(argv[1]), argv[1])
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL]
func cmdSet(c *Ctx, argv [][]byte) {
	flags, expire, ok := parseStringOpts(argv, true)
	if !ok {
		c.Err(ErrSyntax)
		return
	}
	setGeneric(c, argv, flags, argv[1], argv[2], expire, "set", false)
}

func cmdSetnx(c *Ctx, argv [][]byte) {
	setGeneric(c, argv, optNX, argv[1], argv[2], nil, "setnx", true)
}

func cmdSetex(c *Ctx, argv [][]byte) {
	setGeneric(c, argv, optEX, argv[1], argv[3], argv[2], "setex", false)
}

func cmdPsetex(c *Ctx, argv [][]byte) {
	setGeneric(c, argv, optPX, argv[1], argv[3], argv[2], "psetex", false)
}

// setGeneric is Redis's setGenericCommand for SET, SETNX, SETEX and PSETEX.
// intReply selects SETNX's :1/:0 replies over +OK/null.
func setGeneric(c *Ctx, argv [][]byte, flags int, key, val, expire []byte, cmd string, intReply bool) {
	var ms int64
	if expire != nil {
		var ok bool
		if ms, ok = expireAt(c, expire, flags, cmd); !ok {
			return
		}
	}
	db := c.DBOf(key)
	get := flags&optGet != 0
	if get {
		if _, ok := replyStr(c, db, key); !ok {
			return
		}
	}
	slot := db.Write(key)
	found := slot >= 0
	if (flags&optNX != 0 && found) || (flags&optXX != 0 && !found) {
		if !get {
			if intReply {
				c.Int(0)
			} else {
				c.Null()
			}
		}
		return
	}
	switch {
	case expire != nil:
		// A time already past is stored as it is and expires lazily, as in
		// Redis 7.0 (later versions delete at once).
		slot = db.SetStr(key, val, false)
		db.Notify(NotifyString, "set", key)
		db.SetExpiry(slot, ms)
		c.Propagate(wordSET, key, val, wordPXAT, formatInt(ms))
		db.Notify(NotifyGeneric, "expire", key)
	default:
		db.SetStr(key, val, flags&optKeepTTL != 0)
		db.Notify(NotifyString, "set", key)
		if get {
			// Log the command without its GET options.
			args := make([][]byte, 0, len(argv))
			for j, a := range argv {
				if j < 3 || !EqualFold(a, "get") {
					args = append(args, a)
				}
			}
			c.Propagate(args...)
		} else {
			c.Dirty(1)
		}
	}
	if !get {
		if intReply {
			c.Int(1)
		} else {
			c.OK()
		}
	}
}

// GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST]
func cmdGetex(c *Ctx, argv [][]byte) {
	flags, expire, ok := parseStringOpts(argv, false)
	if !ok {
		c.Err(ErrSyntax)
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Read(key)
	if slot < 0 {
		c.Null()
		return
	}
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return
	}
	var ms int64
	if expire != nil {
		if ms, ok = expireAt(c, expire, flags, "getex"); !ok {
			return
		}
	}
	c.Bulk(db.Str(slot))
	switch {
	case flags&(optEXAT|optPXAT) != 0 && alreadyExpired(c, db, ms):
		db.Delete(slot)
		c.Propagate(wordDEL, key)
		db.Notify(NotifyGeneric, "del", key)
	case expire != nil:
		db.SetExpiry(slot, ms)
		c.Propagate(wordPEXPIREAT, key, formatInt(ms))
		db.Notify(NotifyGeneric, "expire", key)
	case flags&optPersist != 0 && db.Expiry(slot) != 0:
		db.SetExpiry(slot, 0)
		c.Propagate(wordPERSIST, key)
		db.Notify(NotifyGeneric, "persist", key)
	}
}

func cmdGetdel(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot, ok := replyStr(c, db, key)
	if !ok || slot < 0 {
		return
	}
	db.Delete(slot)
	c.Propagate(wordDEL, key)
	db.Notify(NotifyGeneric, "del", key)
}

func cmdGetset(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	if _, ok := replyStr(c, db, key); !ok {
		return
	}
	db.SetStr(key, argv[2], false)
	db.Notify(NotifyString, "set", key)
	c.Propagate(wordSET, key, argv[2])
}

func cmdMget(c *Ctx, argv [][]byte) {
	c.Array(len(argv) - 1)
	for _, key := range argv[1:] {
		db := c.DBOf(key)
		if slot := db.Read(key); slot < 0 || db.Type(slot) != TypeString {
			c.Null()
		} else {
			c.Bulk(db.Str(slot))
		}
	}
}

func cmdMset(c *Ctx, argv [][]byte) {
	if len(argv)%2 == 0 {
		c.Err(errArity("mset"))
		return
	}
	for j := 1; j < len(argv); j += 2 {
		db := c.DBOf(argv[j])
		db.Write(argv[j]) // expire a stale key first, as setKey does
		db.SetStr(argv[j], argv[j+1], false)
		db.Notify(NotifyString, "set", argv[j])
	}
	c.Dirty(len(argv) / 2)
	c.OK()
}

func cmdMsetnx(c *Ctx, argv [][]byte) {
	if len(argv)%2 == 0 {
		c.Err(errArity("msetnx"))
		return
	}
	for j := 1; j < len(argv); j += 2 {
		if c.DBOf(argv[j]).Write(argv[j]) >= 0 {
			c.Int(0)
			return
		}
	}
	for j := 1; j < len(argv); j += 2 {
		db := c.DBOf(argv[j])
		db.SetStr(argv[j], argv[j+1], false)
		db.Notify(NotifyString, "set", argv[j])
	}
	c.Dirty(len(argv) / 2)
	c.Int(1)
}

func cmdIncr(c *Ctx, argv [][]byte) { incrDecr(c, argv[1], 1) }
func cmdDecr(c *Ctx, argv [][]byte) { incrDecr(c, argv[1], -1) }

func cmdIncrby(c *Ctx, argv [][]byte) {
	incr, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	incrDecr(c, argv[1], incr)
}

func cmdDecrby(c *Ctx, argv [][]byte) {
	incr, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if incr == math.MinInt64 {
		c.Err(errDecrOverflow)
		return
	}
	incrDecr(c, argv[1], -incr)
}

// incrDecr adds incr to the integer at key (0 if missing), keeping its TTL.
func incrDecr(c *Ctx, key []byte, incr int64) {
	db := c.DBOf(key)
	slot := db.Write(key)
	var v int64
	if slot >= 0 {
		if db.Type(slot) != TypeString {
			c.Err(ErrWrongType)
			return
		}
		var ok bool
		if v, ok = ParseInt(db.Str(slot)); !ok {
			c.Err(ErrNotInt)
			return
		}
	}
	if (incr < 0 && v < 0 && incr < math.MinInt64-v) ||
		(incr > 0 && v > 0 && incr > math.MaxInt64-v) {
		c.Err(ErrOverflow)
		return
	}
	v += incr
	var buf [20]byte
	db.SetStr(key, strconv.AppendInt(buf[:0], v, 10), true)
	db.Notify(NotifyString, "incrby", key)
	c.Dirty(1)
	c.Int(v)
}

func cmdIncrbyfloat(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Write(key)
	if slot >= 0 && db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return
	}
	var val []byte
	if slot >= 0 {
		val = db.Str(slot)
	} else {
		val = []byte{'0'}
	}
	v, ok := ParseLongDouble(val)
	if !ok {
		c.Err(ErrNotFloat)
		return
	}
	incr, ok := ParseLongDouble(argv[2])
	if !ok {
		c.Err(ErrNotFloat)
		return
	}
	sum, ok := AddLongDouble(v, incr)
	if !ok {
		c.Err(errNaNOrInf)
		return
	}
	text := AppendLongDouble(nil, sum)
	slot = db.SetStr(key, text, true)
	// Redis stores the text as a plain string object, never int-encoded.
	if len(text) <= 44 {
		db.SetEncoding(slot, EncEmbstr)
	} else {
		db.SetEncoding(slot, EncRaw)
	}
	db.Notify(NotifyString, "incrbyfloat", key)
	c.Bulk(text)
	// Logged as a SET of the result, so replicas and AOF replays cannot
	// diverge on float precision or formatting.
	c.Propagate(wordSET, key, text, wordKEEPTTL)
}

// checkStringLength replies with an error and returns false when a string of
// size bytes growing by add bytes would exceed the longest allowed string.
func checkStringLength(c *Ctx, size, add int64) bool {
	if max := c.maxStringLen(); add > max || size > max-add {
		c.Err(errStringTooLong)
		return false
	}
	return true
}

func cmdAppend(c *Ctx, argv [][]byte) {
	key, add := argv[1], argv[2]
	db := c.DBOf(key)
	slot := db.Write(key)
	var total int
	if slot < 0 {
		db.SetStr(key, add, false)
		total = len(add)
	} else {
		if db.Type(slot) != TypeString {
			c.Err(ErrWrongType)
			return
		}
		old := len(db.Str(slot))
		if !checkStringLength(c, int64(old), int64(len(add))) {
			return
		}
		total = old + len(add)
		copy(db.ResizeStr(slot, total)[old:], add)
	}
	db.Notify(NotifyString, "append", key)
	c.Dirty(1)
	c.Int(int64(total))
}

func cmdStrlen(c *Ctx, argv [][]byte) {
	db := c.DBOf(argv[1])
	slot := db.Read(argv[1])
	if slot < 0 {
		c.Int(0)
		return
	}
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return
	}
	c.Int(int64(len(db.Str(slot))))
}

func cmdSetrange(c *Ctx, argv [][]byte) {
	key, val := argv[1], argv[3]
	offset, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if offset < 0 {
		c.Err(errOffsetRange)
		return
	}
	db := c.DBOf(key)
	slot := db.Write(key)
	if slot < 0 {
		if len(val) == 0 {
			c.Int(0)
			return
		}
		if !checkStringLength(c, offset, int64(len(val))) {
			return
		}
		slot = db.SetStr(key, nil, false)
	} else {
		if db.Type(slot) != TypeString {
			c.Err(ErrWrongType)
			return
		}
		if len(val) == 0 {
			c.Int(int64(len(db.Str(slot))))
			return
		}
		if !checkStringLength(c, offset, int64(len(val))) {
			return
		}
	}
	n := max(len(db.Str(slot)), int(offset)+len(val))
	copy(db.ResizeStr(slot, n)[offset:], val)
	db.Notify(NotifyString, "setrange", key)
	c.Dirty(1)
	c.Int(int64(n))
}

// GETRANGE key start end (and its old name SUBSTR)
func cmdGetrange(c *Ctx, argv [][]byte) {
	start, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	end, ok := ParseInt(argv[3])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	db := c.DBOf(argv[1])
	slot := db.Read(argv[1])
	if slot < 0 {
		c.BulkStr("")
		return
	}
	if db.Type(slot) != TypeString {
		c.Err(ErrWrongType)
		return
	}
	s := db.Str(slot)
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		c.BulkStr("")
		return
	}
	if start < 0 {
		start = max(n+start, 0)
	}
	if end < 0 {
		end = max(n+end, 0)
	}
	if end >= n {
		end = n - 1
	}
	if n == 0 || start > end {
		c.BulkStr("")
		return
	}
	c.Bulk(s[start : end+1])
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]
func cmdLcs(c *Ctx, argv [][]byte) {
	dba, dbb := c.DBOf(argv[1]), c.DBOf(argv[2])
	sa, sb := dba.Read(argv[1]), dbb.Read(argv[2])
	if (sa >= 0 && dba.Type(sa) != TypeString) || (sb >= 0 && dbb.Type(sb) != TypeString) {
		c.Err(errLcsType)
		return
	}
	var a, b []byte
	if sa >= 0 {
		a = dba.Str(sa)
	}
	if sb >= 0 {
		b = dbb.Str(sb)
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(argv); j++ {
		switch opt := argv[j]; {
		case EqualFold(opt, "idx"):
			getIdx = true
		case EqualFold(opt, "len"):
			getLen = true
		case EqualFold(opt, "withmatchlen"):
			withMatchLen = true
		case EqualFold(opt, "minmatchlen") && j+1 < len(argv):
			v, ok := ParseInt(argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			minMatchLen = max(v, 0)
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.Err(errLcsLenIdx)
		return
	}
	if uint64(len(a)) >= math.MaxUint32-1 || uint64(len(b)) >= math.MaxUint32-1 {
		c.Err(errLcsTooLong)
		return
	}
	if (int64(len(a))+1)*(int64(len(b))+1)*4 > c.maxStringLen() {
		c.Err(errLcsMemory)
		return
	}

	// table[i*w+j] is the length of the LCS of a[:i] and b[:j].
	w := len(b) + 1
	table := make([]uint32, (len(a)+1)*w)
	for i := 1; i <= len(a); i++ {
		row, prev := table[i*w:(i+1)*w], table[(i-1)*w:i*w]
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
	}
	total := table[len(table)-1]
	if getLen {
		c.Int(int64(total))
		return
	}

	// Walk back from the end, collecting the LCS bytes (backwards) and the
	// maximal runs matched in both strings, as Redis reports them: from the
	// last match to the first.
	type span struct{ a0, a1, b0, b1 uint32 }
	lcs := make([]byte, total)
	var spans []span
	k := total
	i, j := len(a), len(b)
	var cur span
	inRun := false
	emit := func() {
		if l := int64(cur.a1 - cur.a0 + 1); minMatchLen == 0 || l >= minMatchLen {
			spans = append(spans, cur)
		}
		inRun = false
	}
	for i > 0 && j > 0 {
		if a[i-1] == b[j-1] {
			k--
			lcs[k] = a[i-1]
			ai, bj := uint32(i-1), uint32(j-1)
			switch {
			case !inRun:
				cur, inRun = span{ai, ai, bj, bj}, true
			case cur.a0 == ai+1 && cur.b0 == bj+1:
				cur.a0, cur.b0 = ai, bj
			default:
				// Not contiguous: the finished run is emitted and this
				// match is dropped from the ranges, as in Redis.
				emit()
			}
			if inRun && (cur.a0 == 0 || cur.b0 == 0) {
				emit()
			}
			i--
			j--
		} else {
			if table[(i-1)*w+j] > table[i*w+j-1] {
				i--
			} else {
				j--
			}
			if inRun {
				emit()
			}
		}
	}
	if !getIdx {
		c.Bulk(lcs)
		return
	}
	c.Map(2)
	c.BulkStr("matches")
	c.Array(len(spans))
	for _, s := range spans {
		if withMatchLen {
			c.Array(3)
		} else {
			c.Array(2)
		}
		c.Array(2)
		c.Int(int64(s.a0))
		c.Int(int64(s.a1))
		c.Array(2)
		c.Int(int64(s.b0))
		c.Int(int64(s.b1))
		if withMatchLen {
			c.Int(int64(s.a1 - s.a0 + 1))
		}
	}
	c.BulkStr("len")
	c.Int(int64(total))
}
