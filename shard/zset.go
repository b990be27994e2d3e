package shard

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/redshard/redshard/cnum"
)

// Sorted set commands (Redis 7.0 t_zset.c). The values and their two
// encodings are in zsetenc.go. BZPOPMIN, BZPOPMAX and BZMPOP are built on
// zsetPop by the blocking framework.

var zsetCommands = []Command{
	{Name: "zadd", Run: cmdZadd},
	{Name: "zincrby", Run: cmdZincrby},
	{Name: "zrem", Run: cmdZrem},
	{Name: "zremrangebyscore", Run: cmdZremrangebyscore},
	{Name: "zremrangebyrank", Run: cmdZremrangebyrank},
	{Name: "zremrangebylex", Run: cmdZremrangebylex},
	{Name: "zunionstore", Run: cmdZunionstore},
	{Name: "zinterstore", Run: cmdZinterstore},
	{Name: "zdiffstore", Run: cmdZdiffstore},
	{Name: "zunion", Run: cmdZunion},
	{Name: "zinter", Run: cmdZinter},
	{Name: "zintercard", Run: cmdZintercard},
	{Name: "zdiff", Run: cmdZdiff},
	{Name: "zrange", Run: cmdZrange},
	{Name: "zrangestore", Run: cmdZrangestore},
	{Name: "zrangebyscore", Run: cmdZrangebyscore},
	{Name: "zrevrangebyscore", Run: cmdZrevrangebyscore},
	{Name: "zrangebylex", Run: cmdZrangebylex},
	{Name: "zrevrangebylex", Run: cmdZrevrangebylex},
	{Name: "zcount", Run: cmdZcount},
	{Name: "zlexcount", Run: cmdZlexcount},
	{Name: "zrevrange", Run: cmdZrevrange},
	{Name: "zcard", Run: cmdZcard},
	{Name: "zscore", Run: cmdZscore},
	{Name: "zmscore", Run: cmdZmscore},
	{Name: "zrank", Run: cmdZrank},
	{Name: "zrevrank", Run: cmdZrevrank},
	{Name: "zscan", Run: cmdZscan},
	{Name: "zpopmin", Run: cmdZpopmin},
	{Name: "zpopmax", Run: cmdZpopmax},
	{Name: "zmpop", Run: cmdZmpop},
	{Name: "zrandmember", Run: cmdZrandmember},
}

const (
	errZaddNXXX     = "ERR XX and NX options at the same time are not compatible"
	errZaddGTLTNX   = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZaddIncrPair = "ERR INCR option supports a single increment-element pair"
	errZsetNaN      = "ERR resulting score is not a number (NaN)"
	errMinMaxFloat  = "ERR min or max is not a float"
	errMinMaxLex    = "ERR min or max not valid string range item"
	errWeightFloat  = "ERR weight value is not a float"
	errLimitRank    = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	errScoresLex    = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	errPositive     = "ERR value is out of range, must be positive"
	errCountZero    = "ERR count should be greater than 0"
	errOutOfRange   = "ERR value is out of range"
)

var (
	wordZPOPMIN = []byte("ZPOPMIN")
	wordZPOPMAX = []byte("ZPOPMAX")
)

// zsetAt returns the sorted set at key, or nil if the key is missing; ok is
// false (and WRONGTYPE replied) when the key holds another type. write picks
// Redis's lookupKeyWrite over lookupKeyRead.
func zsetAt(c *Ctx, db *DB, key []byte, write bool) (slot int32, z *zset, ok bool) {
	if write {
		slot = db.Write(key)
	} else {
		slot = db.Read(key)
	}
	if slot < 0 {
		return -1, nil, true
	}
	if db.Type(slot) != TypeZSet {
		c.Err(ErrWrongType)
		return slot, nil, false
	}
	return slot, db.Obj(slot).(*zset), true
}

// Scores.

// zReplyScore replies a score as Redis's addReplyDouble does ("%.17g"; a
// RESP3 double), formatting integral scores, which that prints as plain
// integers, the fast way.
func zReplyScore(c *Ctx, f float64) {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && !(f == 0 && math.Signbit(f)) {
		var tmp [24]byte
		digits := strconv.AppendInt(tmp[:0], int64(f), 10)
		if c.Proto >= 3 {
			c.Out = append(c.Out, ',')
			c.Out = append(c.Out, digits...)
			c.Out = append(c.Out, '\r', '\n')
		} else {
			c.Bulk(digits)
		}
		return
	}
	c.Double(f)
}

// parseScore parses a score, weight or increment as Redis's string2d: the
// whole argument is a strtod number (decimal, hexadecimal, inf, infinity),
// with no leading space, no NaN, no overflow and no underflow to zero.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	f, n, rangeErr := strtod(b)
	if n != len(b) || math.IsNaN(f) || rangeErr && (math.IsInf(f, 0) || f == 0) {
		return 0, false
	}
	return f, true
}

func isCSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// strtod is C's strtod (cnum.Strtod).
func strtod(b []byte) (float64, int, bool) { return cnum.Strtod(b) }

// scoreRange is Redis's zrangespec.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

// parseRangeItem parses a min or max of a score range ("(" for exclusive)
// as zslParseRange does: strtod, nothing after the number, not NaN.
func parseRangeItem(b []byte) (float64, bool, bool) {
	ex := false
	if len(b) > 0 && b[0] == '(' {
		ex = true
		b = b[1:]
	}
	f, n, _ := strtod(b)
	if n < len(b) && b[n] != 0 || math.IsNaN(f) {
		return 0, false, false
	}
	return f, ex, true
}

func parseScoreRange(min, max []byte) (r scoreRange, ok bool) {
	var ok1, ok2 bool
	r.min, r.minex, ok1 = parseRangeItem(min)
	r.max, r.maxex, ok2 = parseRangeItem(max)
	return r, ok1 && ok2
}

func (r *scoreRange) gteMin(s float64) bool {
	if r.minex {
		return s > r.min
	}
	return s >= r.min
}

func (r *scoreRange) lteMax(s float64) bool {
	if r.maxex {
		return s < r.max
	}
	return s <= r.max
}

// bounds returns the ranks [lo, hi) of the elements in range.
func (r *scoreRange) bounds(z *zset) (int, int) {
	lo := z.search(func(s float64, _ []byte) bool { return r.gteMin(s) })
	hi := z.search(func(s float64, _ []byte) bool { return !r.lteMax(s) })
	return lo, max(lo, hi)
}

// lexRange is Redis's zlexrangespec; inf -1 is "-", +1 is "+".
type lexRange struct {
	min, max       []byte
	minInf, maxInf int
	minex, maxex   bool
}

func parseLexItem(b []byte) (v []byte, inf int, ex bool, ok bool) {
	if len(b) == 0 {
		return nil, 0, false, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) != 1 {
			return nil, 0, false, false
		}
		if b[0] == '+' {
			return nil, 1, true, true
		}
		return nil, -1, true, true
	case '(':
		return b[1:], 0, true, true
	case '[':
		return b[1:], 0, false, true
	}
	return nil, 0, false, false
}

func parseLexRange(min, max []byte) (r lexRange, ok bool) {
	var ok1, ok2 bool
	r.min, r.minInf, r.minex, ok1 = parseLexItem(min)
	r.max, r.maxInf, r.maxex, ok2 = parseLexItem(max)
	return r, ok1 && ok2
}

// cmpLex compares a member with a range bound (sdscmplex).
func cmpLex(m, bound []byte, inf int) int {
	if inf != 0 {
		return -inf
	}
	return bytes.Compare(m, bound)
}

func (r *lexRange) gteMin(m []byte) bool {
	if r.minex {
		return cmpLex(m, r.min, r.minInf) > 0
	}
	return cmpLex(m, r.min, r.minInf) >= 0
}

func (r *lexRange) lteMax(m []byte) bool {
	if r.maxex {
		return cmpLex(m, r.max, r.maxInf) < 0
	}
	return cmpLex(m, r.max, r.maxInf) <= 0
}

// bounds returns the ranks [lo, hi) of the elements in range, walking
// down from the top when rev. Lex ranges assume equal scores; when they
// differ the result is unspecified, but deterministic for a listpack in
// Redis (a linear scan from the end it starts at), so that form scans the
// same way. The skiplist form searches, as Redis's skiplist does.
func (r *lexRange) bounds(z *zset, rev bool) (int, int) {
	if z.sl != nil {
		lo := z.search(func(_ float64, m []byte) bool { return r.gteMin(m) })
		hi := z.search(func(_ float64, m []byte) bool { return !r.lteMax(m) })
		return lo, max(lo, hi)
	}
	n := len(z.scores)
	if n == 0 || r.empty() || !r.gteMin(z.lpMember(n-1)) || !r.lteMax(z.lpMember(0)) {
		return 0, 0
	}
	if !rev {
		i := 0
		for i < n && !r.gteMin(z.lpMember(i)) {
			i++
		}
		j := i
		for j < n && r.lteMax(z.lpMember(j)) {
			j++
		}
		return i, j
	}
	j := n - 1
	for j >= 0 && !r.lteMax(z.lpMember(j)) {
		j--
	}
	k := j
	for k >= 0 && r.gteMin(z.lpMember(k)) {
		k--
	}
	return k + 1, j + 1
}

// empty reports a range that holds nothing whatever the set (min above
// max, or equal and exclusive), as zzlIsInLexRange tests it first.
func (r *lexRange) empty() bool {
	var cmp int
	switch {
	case r.minInf != 0 && r.minInf == r.maxInf:
		cmp = 0
	case r.minInf == -1 || r.maxInf == 1:
		cmp = -1
	case r.minInf == 1 || r.maxInf == -1:
		cmp = 1
	default:
		cmp = bytes.Compare(r.min, r.max)
	}
	return cmp > 0 || cmp == 0 && (r.minex || r.maxex)
}

// longArg parses a C long argument (getLongFromObjectOrReply).
func longArg(c *Ctx, b []byte) (int64, bool) {
	v, ok := ParseInt(b)
	if !ok {
		c.Err(ErrNotInt)
	}
	return v, ok
}

// ZADD / ZINCRBY

// Flags of zsetAdd, in and out (Redis's ZADD_IN_* and ZADD_OUT_*).
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddIncr

	zaddAdded = 1 << iota
	zaddUpdated
	zaddNop
	zaddNaN
)

// zsetAdd adds or updates one member of the sorted set at slot as Redis's
// zsetAdd does, calling db.Modify before it changes anything. It returns
// the out flags and the member's new score.
func zsetAdd(db *DB, slot int32, z *zset, score float64, m []byte, flags int) (int, float64) {
	if math.IsNaN(score) {
		return zaddNaN, 0
	}
	if cur, ok := z.find(m); ok {
		if flags&zaddNX != 0 {
			return zaddNop, 0
		}
		if flags&zaddIncr != 0 {
			score += cur
			if math.IsNaN(score) {
				return zaddNaN, 0
			}
		}
		if flags&zaddLT != 0 && score >= cur || flags&zaddGT != 0 && score <= cur {
			return zaddNop, 0
		}
		if score != cur {
			db.Modify(slot)
			z.setScore(m, score)
			return zaddUpdated, score
		}
		return 0, score
	}
	if flags&zaddXX != 0 {
		return zaddNop, 0
	}
	db.Modify(slot)
	z.insert(db.sh.Cfg, m, score)
	return zaddAdded, score
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
func cmdZadd(c *Ctx, argv [][]byte) { zaddGeneric(c, argv, 0) }

// ZINCRBY key increment member
func cmdZincrby(c *Ctx, argv [][]byte) { zaddGeneric(c, argv, zaddIncr) }

func zaddGeneric(c *Ctx, argv [][]byte, flags int) {
	key := argv[1]
	ch := false
	idx := 2
	for ; idx < len(argv); idx++ {
		switch opt := argv[idx]; {
		case EqualFold(opt, "nx"):
			flags |= zaddNX
		case EqualFold(opt, "xx"):
			flags |= zaddXX
		case EqualFold(opt, "ch"):
			ch = true
		case EqualFold(opt, "incr"):
			flags |= zaddIncr
		case EqualFold(opt, "gt"):
			flags |= zaddGT
		case EqualFold(opt, "lt"):
			flags |= zaddLT
		default:
			goto parsed
		}
	}
parsed:
	elements := len(argv) - idx
	if elements == 0 || elements%2 != 0 {
		c.Err(ErrSyntax)
		return
	}
	elements /= 2
	nx, xx, gt, lt, incr := flags&zaddNX != 0, flags&zaddXX != 0, flags&zaddGT != 0, flags&zaddLT != 0, flags&zaddIncr != 0
	if nx && xx {
		c.Err(errZaddNXXX)
		return
	}
	if gt && nx || lt && nx || gt && lt {
		c.Err(errZaddGTLTNX)
		return
	}
	if incr && elements > 1 {
		c.Err(errZaddIncrPair)
		return
	}
	var buf [8]float64
	scores := buf[:0]
	for j := 0; j < elements; j++ {
		s, ok := parseScore(argv[idx+2*j])
		if !ok {
			c.Err(ErrNotFloat)
			return
		}
		scores = append(scores, s)
	}
	db := c.DBOf(key)
	slot, z, ok := zsetAt(c, db, key, true)
	if !ok {
		return
	}
	added, updated, processed := 0, 0, 0
	var score float64
	if z == nil {
		if xx {
			goto reply
		}
		z = &zset{}
		slot = db.SetObj(key, TypeZSet, EncListpack, z)
	}
	for j := 0; j < elements; j++ {
		out, newscore := zsetAdd(db, slot, z, scores[j], argv[idx+2*j+1], flags)
		if out&zaddNaN != 0 {
			c.Err(errZsetNaN)
			goto done
		}
		if out&zaddAdded != 0 {
			added++
		}
		if out&zaddUpdated != 0 {
			updated++
		}
		if out&zaddNop == 0 {
			processed++
		}
		score = newscore
	}
	c.Dirty(added + updated)
reply:
	if incr {
		if processed > 0 {
			zReplyScore(c, score)
		} else {
			c.Null()
		}
	} else if ch {
		c.Int(int64(added + updated))
	} else {
		c.Int(int64(added))
	}
done:
	if added+updated > 0 {
		db.SetEncoding(slot, z.encoding())
		event := "zadd"
		if incr {
			event = "zincr"
		}
		db.Notify(NotifyZSet, event, key)
	}
}

// ZREM key member [member ...]
func cmdZrem(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	slot, z, ok := zsetAt(c, db, key, true)
	if !ok {
		return
	}
	if z == nil {
		c.Int(0)
		return
	}
	deleted, removed := 0, false
	for _, m := range argv[2:] {
		if _, found := z.find(m); found {
			db.Modify(slot)
			z.remove(m)
			deleted++
		}
		if z.Len() == 0 {
			db.Delete(slot)
			removed = true
			break
		}
	}
	if deleted > 0 {
		db.Notify(NotifyZSet, "zrem", key)
		if removed {
			db.Notify(NotifyGeneric, "del", key)
		}
		c.Dirty(deleted)
	}
	c.Int(int64(deleted))
}

// ZREMRANGEBYRANK / BYSCORE / BYLEX

const (
	zrangeRank = iota
	zrangeScore
	zrangeLex
)

func cmdZremrangebyrank(c *Ctx, argv [][]byte)  { zremrangeGeneric(c, argv, zrangeRank) }
func cmdZremrangebyscore(c *Ctx, argv [][]byte) { zremrangeGeneric(c, argv, zrangeScore) }
func cmdZremrangebylex(c *Ctx, argv [][]byte)   { zremrangeGeneric(c, argv, zrangeLex) }

func zremrangeGeneric(c *Ctx, argv [][]byte, kind int) {
	key := argv[1]
	var start, end int64
	var sr scoreRange
	var lr lexRange
	var event string
	switch kind {
	case zrangeRank:
		event = "zremrangebyrank"
		var ok bool
		if start, ok = longArg(c, argv[2]); !ok {
			return
		}
		if end, ok = longArg(c, argv[3]); !ok {
			return
		}
	case zrangeScore:
		event = "zremrangebyscore"
		var ok bool
		if sr, ok = parseScoreRange(argv[2], argv[3]); !ok {
			c.Err(errMinMaxFloat)
			return
		}
	case zrangeLex:
		event = "zremrangebylex"
		var ok bool
		if lr, ok = parseLexRange(argv[2], argv[3]); !ok {
			c.Err(errMinMaxLex)
			return
		}
	}
	db := c.DBOf(key)
	slot, z, ok := zsetAt(c, db, key, true)
	if !ok {
		return
	}
	if z == nil {
		c.Int(0)
		return
	}
	var lo, hi int // ranks [lo, hi)
	switch kind {
	case zrangeRank:
		n := int64(z.Len())
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
			c.Int(0)
			return
		}
		if end >= n {
			end = n - 1
		}
		lo, hi = int(start), int(end)+1
	case zrangeScore:
		lo, hi = sr.bounds(z)
	case zrangeLex:
		lo, hi = lr.bounds(z, false)
	}
	deleted := hi - lo
	if deleted > 0 {
		db.Modify(slot)
		z.removeRange(lo, hi-1)
		removed := z.Len() == 0
		if removed {
			db.Delete(slot)
		}
		db.Notify(NotifyZSet, event, key)
		if removed {
			db.Notify(NotifyGeneric, "del", key)
		}
		c.Dirty(deleted)
	}
	c.Int(int64(deleted))
}

// ZCARD / ZSCORE / ZMSCORE / ZRANK / ZREVRANK / ZCOUNT / ZLEXCOUNT

func cmdZcard(c *Ctx, argv [][]byte) {
	_, z, ok := zsetAt(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.Int(0)
		return
	}
	c.Int(int64(z.Len()))
}

func cmdZscore(c *Ctx, argv [][]byte) {
	_, z, ok := zsetAt(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.Null()
		return
	}
	if s, found := z.find(argv[2]); found {
		zReplyScore(c, s)
	} else {
		c.Null()
	}
}

func cmdZmscore(c *Ctx, argv [][]byte) {
	_, z, ok := zsetAt(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		if z == nil {
			c.Null()
		} else if s, found := z.find(m); found {
			zReplyScore(c, s)
		} else {
			c.Null()
		}
	}
}

func cmdZrank(c *Ctx, argv [][]byte)    { zrankGeneric(c, argv, false) }
func cmdZrevrank(c *Ctx, argv [][]byte) { zrankGeneric(c, argv, true) }

func zrankGeneric(c *Ctx, argv [][]byte, rev bool) {
	_, z, ok := zsetAt(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.Null()
		return
	}
	r, found := z.rank(argv[2])
	if !found {
		c.Null()
		return
	}
	if rev {
		r = z.Len() - 1 - r
	}
	c.Int(int64(r))
}

func cmdZcount(c *Ctx, argv [][]byte) {
	r, ok := parseScoreRange(argv[2], argv[3])
	if !ok {
		c.Err(errMinMaxFloat)
		return
	}
	_, z, ok := zsetAt(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.Int(0)
		return
	}
	lo, hi := r.bounds(z)
	c.Int(int64(hi - lo))
}

func cmdZlexcount(c *Ctx, argv [][]byte) {
	r, ok := parseLexRange(argv[2], argv[3])
	if !ok {
		c.Err(errMinMaxLex)
		return
	}
	_, z, ok := zsetAt(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.Int(0)
		return
	}
	lo, hi := r.bounds(z, false)
	c.Int(int64(hi - lo))
}

// ZRANGE and friends

const (
	zdirAuto = iota
	zdirForward
	zdirReverse
)

const zrangeAuto = -1

func cmdZrange(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, zrangeAuto, zdirAuto) }
func cmdZrangestore(c *Ctx, argv [][]byte) {
	zrangeGeneric(c, argv, 2, true, zrangeAuto, zdirAuto)
}
func cmdZrevrange(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, zrangeRank, zdirReverse) }
func cmdZrangebyscore(c *Ctx, argv [][]byte) {
	zrangeGeneric(c, argv, 1, false, zrangeScore, zdirForward)
}
func cmdZrevrangebyscore(c *Ctx, argv [][]byte) {
	zrangeGeneric(c, argv, 1, false, zrangeScore, zdirReverse)
}
func cmdZrangebylex(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, 1, false, zrangeLex, zdirForward) }
func cmdZrevrangebylex(c *Ctx, argv [][]byte) {
	zrangeGeneric(c, argv, 1, false, zrangeLex, zdirReverse)
}

// zrangeGeneric is Redis's zrangeGenericCommand: ZRANGE, ZRANGESTORE and the
// older Z[REV]RANGE[BYSCORE|BYLEX]. argStart is the source key's position.
func zrangeGeneric(c *Ctx, argv [][]byte, argStart int, store bool, kind, dir int) {
	key := argv[argStart]
	minIdx, maxIdx := argStart+1, argStart+2
	withScores := false
	var offset, limit int64 = 0, -1
	for j := argStart + 3; j < len(argv); j++ {
		left := len(argv) - j - 1
		switch opt := argv[j]; {
		case !store && EqualFold(opt, "withscores"):
			withScores = true
		case EqualFold(opt, "limit") && left >= 2:
			var ok bool
			if offset, ok = longArg(c, argv[j+1]); !ok {
				return
			}
			if limit, ok = longArg(c, argv[j+2]); !ok {
				return
			}
			j += 2
		case dir == zdirAuto && EqualFold(opt, "rev"):
			dir = zdirReverse
		case kind == zrangeAuto && EqualFold(opt, "bylex"):
			kind = zrangeLex
		case kind == zrangeAuto && EqualFold(opt, "byscore"):
			kind = zrangeScore
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if dir == zdirAuto {
		dir = zdirForward
	}
	if kind == zrangeAuto {
		kind = zrangeRank
	}
	if limit != -1 && kind == zrangeRank {
		c.Err(errLimitRank)
		return
	}
	if withScores && kind == zrangeLex {
		c.Err(errScoresLex)
		return
	}
	rev := dir == zdirReverse
	if rev && kind != zrangeRank {
		minIdx, maxIdx = maxIdx, minIdx
	}
	var start, end int64
	var sr scoreRange
	var lr lexRange
	switch kind {
	case zrangeRank:
		var ok bool
		if start, ok = longArg(c, argv[minIdx]); !ok {
			return
		}
		if end, ok = longArg(c, argv[maxIdx]); !ok {
			return
		}
	case zrangeScore:
		var ok bool
		if sr, ok = parseScoreRange(argv[minIdx], argv[maxIdx]); !ok {
			c.Err(errMinMaxFloat)
			return
		}
	case zrangeLex:
		var ok bool
		if lr, ok = parseLexRange(argv[minIdx], argv[maxIdx]); !ok {
			c.Err(errMinMaxLex)
			return
		}
	}
	_, z, ok := zsetAt(c, c.DBOf(key), key, false)
	if !ok {
		return
	}
	// first: the rank of the first element to emit; n: how many (going
	// down from first when rev).
	first, n := 0, 0
	if z != nil {
		size := z.Len()
		switch kind {
		case zrangeRank:
			ln := int64(size)
			if start < 0 {
				start += ln
			}
			if end < 0 {
				end += ln
			}
			if start < 0 {
				start = 0
			}
			if start <= end && start < ln {
				if end >= ln {
					end = ln - 1
				}
				n = int(end - start + 1)
				first = int(start)
				if rev {
					first = size - 1 - int(start)
				}
			}
		case zrangeLex:
			if z.sl == nil {
				// As Redis walks a listpack: skip offset elements
				// unchecked, then go on while the far bound holds (this
				// matters only when scores differ).
				first, n = lexWalk(z, &lr, rev, offset, limit)
				break
			}
			fallthrough
		default:
			var lo, hi int
			if kind == zrangeScore {
				lo, hi = sr.bounds(z)
			} else {
				lo, hi = lr.bounds(z, rev)
			}
			if offset >= 0 && offset < int64(hi-lo) {
				n = hi - lo - int(offset)
				if limit >= 0 && limit < int64(n) {
					n = int(limit)
				}
				if rev {
					first = hi - 1 - int(offset)
				} else {
					first = lo + int(offset)
				}
			}
		}
	}
	if store {
		zrangeStore(c, argv[1], z, first, n, rev)
		return
	}
	if z == nil {
		c.Array(0)
		return
	}
	if withScores && c.Proto < 3 {
		c.Array(2 * n)
	} else {
		c.Array(n)
	}
	if n == 0 {
		return
	}
	it := z.iter(first, rev)
	for i := 0; i < n; i++ {
		m, s := it.next()
		if withScores && c.Proto >= 3 {
			c.Array(2)
		}
		c.Bulk(m)
		if withScores {
			zReplyScore(c, s)
		}
	}
}

// lexWalk returns the first rank and the count of a BYLEX range with
// offset and limit over the listpack form, walking as Redis does.
func lexWalk(z *zset, r *lexRange, rev bool, offset, limit int64) (first, n int) {
	lo, hi := r.bounds(z, rev)
	size := int64(z.Len())
	if lo >= hi || offset < 0 || offset >= size {
		return 0, 0
	}
	if !rev {
		p := int64(lo) + offset
		for p+int64(n) < size && (limit < 0 || int64(n) < limit) && r.lteMax(z.lpMember(int(p)+n)) {
			n++
		}
		return int(p), n
	}
	p := int64(hi-1) - offset
	for p-int64(n) >= 0 && (limit < 0 || int64(n) < limit) && r.gteMin(z.lpMember(int(p)-n)) {
		n++
	}
	return int(p), n
}

// zrangeStore stores n elements of z from rank first (down when rev) at
// dst, or deletes dst when there are none (ZRANGESTORE).
func zrangeStore(c *Ctx, dst []byte, z *zset, first, n int, rev bool) {
	db := c.DBOf(dst)
	if n == 0 {
		c.Int(0)
		if db.DeleteKey(dst) {
			db.Notify(NotifyGeneric, "del", dst)
			c.Dirty(1)
		}
		return
	}
	members := make([][]byte, n)
	scores := make([]float64, n)
	it := z.iter(first, rev)
	for i := 0; i < n; i++ {
		k := i
		if rev {
			k = n - 1 - i
		}
		members[k], scores[k] = it.next()
	}
	nz := newZsetSorted(db.sh.Cfg, members, scores)
	db.SetObj(dst, TypeZSet, nz.encoding(), nz)
	c.Int(int64(n))
	db.Notify(NotifyZSet, "zrangestore", dst)
	c.Dirty(1)
}

// ZUNION / ZINTER / ZDIFF and their STORE forms, ZINTERCARD

const (
	zopUnion = iota
	zopInter
	zopDiff
)

const (
	aggrSum = iota
	aggrMin
	aggrMax
)

// zsetSource is one input of a set operation: a sorted set, a plain set,
// or nothing (a missing key).
type zsetSource struct {
	z      *zset
	set    *setObj
	obj    Object // identity, to spot a key given twice
	weight float64
}

func (s *zsetSource) size() int {
	switch {
	case s.z != nil:
		return s.z.Len()
	case s.set != nil:
		return s.set.len()
	}
	return 0
}

func (s *zsetSource) each(fn func(m []byte, score float64) bool) {
	switch {
	case s.z != nil:
		n := s.z.Len()
		if n == 0 {
			return
		}
		it := s.z.iter(0, false)
		for i := 0; i < n; i++ {
			if m, sc := it.next(); !fn(m, sc) {
				return
			}
		}
	case s.set != nil:
		// Members may stay in the result: an intset's are formatted into
		// bytes of their own (buf nil).
		for i, n := 0, s.set.len(); i < n; i++ {
			if !fn(s.set.elem(i, nil), 1) {
				return
			}
		}
	}
}

func (s *zsetSource) find(m []byte) (float64, bool) {
	switch {
	case s.z != nil:
		return s.z.find(m)
	case s.set != nil:
		return 1, s.set.has(m)
	}
	return 0, false
}

func aggregate(target *float64, v float64, how int) {
	switch how {
	case aggrSum:
		*target += v
		if math.IsNaN(*target) {
			*target = 0 // inf + -inf
		}
	case aggrMin:
		if v < *target {
			*target = v
		}
	case aggrMax:
		if v > *target {
			*target = v
		}
	}
}

func cmdZunionstore(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, argv[1], 2, zopUnion, false) }
func cmdZinterstore(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, argv[1], 2, zopInter, false) }
func cmdZdiffstore(c *Ctx, argv [][]byte)  { zsetOpGeneric(c, argv, argv[1], 2, zopDiff, false) }
func cmdZunion(c *Ctx, argv [][]byte)      { zsetOpGeneric(c, argv, nil, 1, zopUnion, false) }
func cmdZinter(c *Ctx, argv [][]byte)      { zsetOpGeneric(c, argv, nil, 1, zopInter, false) }
func cmdZintercard(c *Ctx, argv [][]byte)  { zsetOpGeneric(c, argv, nil, 1, zopInter, true) }
func cmdZdiff(c *Ctx, argv [][]byte)       { zsetOpGeneric(c, argv, nil, 1, zopDiff, false) }

// zsetOpGeneric is Redis's zunionInterDiffGenericCommand. The input keys may
// live on several shards (the dispatcher holds them all).
func zsetOpGeneric(c *Ctx, argv [][]byte, dst []byte, numkeysIdx int, op int, cardOnly bool) {
	setnum, ok := longArg(c, argv[numkeysIdx])
	if !ok {
		return
	}
	if setnum < 1 {
		c.Err("ERR at least 1 input key is needed for '" + string(bytes.ToLower(argv[0])) + "' command")
		return
	}
	if setnum > int64(len(argv)-numkeysIdx-1) {
		c.Err(ErrSyntax)
		return
	}
	src := make([]zsetSource, setnum)
	j := numkeysIdx + 1
	for i := range src {
		key := argv[j]
		db := c.DBOf(key)
		src[i].weight = 1
		if slot := db.Read(key); slot >= 0 {
			switch db.Type(slot) {
			case TypeZSet:
				src[i].z = db.Obj(slot).(*zset)
				src[i].obj = src[i].z
			case TypeSet:
				src[i].set = db.Obj(slot).(*setObj)
				src[i].obj = src[i].set
			default:
				c.Err(ErrWrongType)
				return
			}
		}
		j++
	}
	how := aggrSum
	withScores := false
	var limit int64
	for j < len(argv) {
		remaining := len(argv) - j
		switch opt := argv[j]; {
		case op != zopDiff && !cardOnly && remaining >= int(setnum)+1 && EqualFold(opt, "weights"):
			j++
			for i := range src {
				w, ok := parseScore(argv[j])
				if !ok {
					c.Err(errWeightFloat)
					return
				}
				src[i].weight = w
				j++
			}
		case op != zopDiff && !cardOnly && remaining >= 2 && EqualFold(opt, "aggregate"):
			switch a := argv[j+1]; {
			case EqualFold(a, "sum"):
				how = aggrSum
			case EqualFold(a, "min"):
				how = aggrMin
			case EqualFold(a, "max"):
				how = aggrMax
			default:
				c.Err(ErrSyntax)
				return
			}
			j += 2
		case dst == nil && !cardOnly && EqualFold(opt, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && EqualFold(opt, "limit"):
			v, ok := ParseInt(argv[j+1])
			if !ok {
				c.Err(errLimitNegative)
				return
			}
			if v < 0 {
				c.Err(errLimitNegative)
				return
			}
			limit = v
			j += 2
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if op != zopDiff {
		sort.SliceStable(src, func(a, b int) bool { return src[a].size() < src[b].size() })
	}

	var members [][]byte
	var scores []float64
	cardinality := int64(0)
	switch op {
	case zopInter:
		if src[0].size() == 0 {
			break
		}
		src[0].each(func(m []byte, sc float64) bool {
			score := src[0].weight * sc
			if math.IsNaN(score) {
				score = 0
			}
			for k := 1; k < len(src); k++ {
				v, found := src[k].find(m)
				if !found {
					return true
				}
				aggregate(&score, v*src[k].weight, how)
			}
			if cardOnly {
				cardinality++
				return limit == 0 || cardinality < limit
			}
			members = append(members, m)
			scores = append(scores, score)
			return true
		})
	case zopUnion:
		index := make(map[string]int, src[len(src)-1].size())
		for i := range src {
			src[i].each(func(m []byte, sc float64) bool {
				score := src[i].weight * sc
				if math.IsNaN(score) {
					score = 0
				}
				if k, dup := index[string(m)]; dup {
					aggregate(&scores[k], score, how)
				} else {
					index[string(m)] = len(members)
					members = append(members, m)
					scores = append(scores, score)
				}
				return true
			})
		}
	case zopDiff:
		if src[0].size() == 0 {
			break
		}
		for k := 1; k < len(src); k++ {
			if src[k].obj != nil && src[k].obj == src[0].obj {
				goto computed // the first set minus itself
			}
		}
		src[0].each(func(m []byte, sc float64) bool {
			for k := 1; k < len(src); k++ {
				if _, found := src[k].find(m); found {
					return true
				}
			}
			members = append(members, m)
			scores = append(scores, sc)
			return true
		})
	}
computed:
	if cardOnly {
		c.Int(cardinality)
		return
	}
	if op != zopDiff || src[0].z == nil {
		sortByScore(members, scores)
	}
	if dst != nil {
		db := c.DBOf(dst)
		if len(members) == 0 {
			c.Int(0)
			if db.DeleteKey(dst) {
				db.Notify(NotifyGeneric, "del", dst)
				c.Dirty(1)
			}
			return
		}
		nz := newZsetSorted(db.sh.Cfg, members, scores)
		db.SetObj(dst, TypeZSet, nz.encoding(), nz)
		c.Int(int64(len(members)))
		event := [...]string{"zunionstore", "zinterstore", "zdiffstore"}[op]
		db.Notify(NotifyZSet, event, dst)
		c.Dirty(1)
		return
	}
	if withScores && c.Proto < 3 {
		c.Array(2 * len(members))
	} else {
		c.Array(len(members))
	}
	for i, m := range members {
		if withScores && c.Proto >= 3 {
			c.Array(2)
		}
		c.Bulk(m)
		if withScores {
			zReplyScore(c, scores[i])
		}
	}
}

// sortByScore sorts members and their scores by (score, member).
func sortByScore(members [][]byte, scores []float64) {
	sort.Sort(byScore{members, scores})
}

type byScore struct {
	m [][]byte
	s []float64
}

func (b byScore) Len() int { return len(b.m) }
func (b byScore) Less(i, j int) bool {
	if b.s[i] != b.s[j] {
		return b.s[i] < b.s[j]
	}
	return bytes.Compare(b.m[i], b.m[j]) < 0
}
func (b byScore) Swap(i, j int) {
	b.m[i], b.m[j] = b.m[j], b.m[i]
	b.s[i], b.s[j] = b.s[j], b.s[i]
}

// ZPOPMIN / ZPOPMAX / ZMPOP

// Reply shapes of zsetPop.
const (
	zpopFlat      = iota // ZPOPMIN/ZPOPMAX: member score ... (RESP2, or no COUNT)
	zpopNested           // ZPOPMIN/ZPOPMAX COUNT in RESP3: [member score] ...
	zpopKeyFlat          // BZPOPMIN/BZPOPMAX: key member score
	zpopKeyNested        // ZMPOP/BZMPOP: key [[member score] ...]
)

// zsetPop pops up to count (≥ 1) elements from the low end of the sorted
// set at key (the high end when max), which must exist in db at slot, and
// replies them in the given shape. It fires zpopmin/zpopmax (and del when
// the set empties, deleting the key) as Redis's genericZpopCommand does,
// and returns how many it popped; the caller logs the change (c.Dirty for
// ZPOPMIN/ZPOPMAX as they came, zsetPopPropagate for the others).
//
// ZPOPMIN, ZPOPMAX and ZMPOP call it; the blocking BZPOPMIN, BZPOPMAX and
// BZMPOP call it too once a key they wait for holds elements.
func zsetPop(c *Ctx, db *DB, key []byte, slot int32, max bool, count int, shape int) int {
	z := db.Obj(slot).(*zset)
	n := min(count, z.Len())
	switch shape {
	case zpopFlat:
		c.Array(2 * n)
	case zpopNested:
		c.Array(n)
	case zpopKeyFlat:
		c.Array(2*n + 1)
		c.Bulk(key)
	case zpopKeyNested:
		c.Array(2)
		c.Bulk(key)
		c.Array(n)
	}
	db.Modify(slot)
	size := z.Len()
	first := 0
	if max {
		first = size - 1
	}
	it := z.iter(first, max)
	for i := 0; i < n; i++ {
		m, s := it.next()
		if shape == zpopNested || shape == zpopKeyNested {
			c.Array(2)
		}
		c.Bulk(m)
		zReplyScore(c, s)
	}
	if max {
		z.removeRange(size-n, size-1)
	} else {
		z.removeRange(0, n-1)
	}
	event := "zpopmin"
	if max {
		event = "zpopmax"
	}
	db.Notify(NotifyZSet, event, key)
	if z.Len() == 0 {
		db.Delete(slot)
		db.Notify(NotifyGeneric, "del", key)
	}
	return n
}

// zsetPopPropagate logs a pop of n elements as ZPOPMIN/ZPOPMAX key [n]
// (count false: without the count, as Redis logs BZPOPMIN/BZPOPMAX).
func zsetPopPropagate(c *Ctx, key []byte, max bool, n int, count bool) {
	word := wordZPOPMIN
	if max {
		word = wordZPOPMAX
	}
	if count {
		c.Propagate(word, key, formatInt(int64(n)))
	} else {
		c.Propagate(word, key)
	}
}

func cmdZpopmin(c *Ctx, argv [][]byte) { zpopMinMax(c, argv, false) }
func cmdZpopmax(c *Ctx, argv [][]byte) { zpopMinMax(c, argv, true) }

func zpopMinMax(c *Ctx, argv [][]byte, max bool) {
	if len(argv) > 3 {
		c.Err(ErrSyntax)
		return
	}
	count := int64(-1)
	if len(argv) == 3 {
		v, ok := ParseInt(argv[2])
		if !ok || v < 0 {
			c.Err(errPositive)
			return
		}
		count = v
	}
	key := argv[1]
	db := c.DBOf(key)
	slot, z, ok := zsetAt(c, db, key, true)
	if !ok {
		return
	}
	if z == nil || count == 0 {
		c.Array(0)
		return
	}
	shape := zpopFlat
	if c.Proto >= 3 && count != -1 {
		shape = zpopNested
	}
	if count == -1 {
		count = 1
	}
	c.Dirty(zsetPop(c, db, key, slot, max, int(min(count, math.MaxInt32)), shape))
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
func cmdZmpop(c *Ctx, argv [][]byte) {
	keys, max, count, ok := parseZmpop(c, argv, 1)
	if !ok {
		return
	}
	for _, key := range keys {
		db := c.DBOf(key)
		slot, z, ok := zsetAt(c, db, key, true)
		if !ok {
			return
		}
		if z == nil {
			continue
		}
		n := zsetPop(c, db, key, slot, max, count, zpopKeyNested)
		zsetPopPropagate(c, key, max, n, true)
		return
	}
	c.NullArray()
}

// parseZmpop parses the arguments of ZMPOP (numkeysIdx 1) or BZMPOP (2):
// the keys, MIN or MAX, and COUNT (1 if not given).
func parseZmpop(c *Ctx, argv [][]byte, numkeysIdx int) (keys [][]byte, max bool, count int, ok bool) {
	numkeys, ok := ParseInt(argv[numkeysIdx])
	if !ok || numkeys < 1 {
		c.Err(errNumkeysZero)
		return nil, false, 0, false
	}
	if numkeys >= int64(len(argv)-numkeysIdx-1) { // before any sum: see mpopArgs
		c.Err(ErrSyntax)
		return nil, false, 0, false
	}
	whereIdx := int64(numkeysIdx) + numkeys + 1
	switch where := argv[whereIdx]; {
	case EqualFold(where, "min"):
	case EqualFold(where, "max"):
		max = true
	default:
		c.Err(ErrSyntax)
		return nil, false, 0, false
	}
	cnt := int64(-1)
	for j := int(whereIdx) + 1; j < len(argv); j++ {
		if cnt == -1 && EqualFold(argv[j], "count") && j+1 < len(argv) {
			j++
			v, ok := ParseInt(argv[j])
			if !ok || v < 1 {
				c.Err(errCountZero)
				return nil, false, 0, false
			}
			cnt = v
		} else {
			c.Err(ErrSyntax)
			return nil, false, 0, false
		}
	}
	if cnt == -1 {
		cnt = 1
	}
	return argv[numkeysIdx+1 : whereIdx], max, int(min(cnt, math.MaxInt32)), true
}

// ZRANDMEMBER key [count [WITHSCORES]]

// zrandSubStrategyMul is Redis's ZRANDMEMBER_SUB_STRATEGY_MUL.
const zrandSubStrategyMul = 3

func cmdZrandmember(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	if len(argv) >= 3 {
		l, ok := longArg(c, argv[2])
		if !ok {
			return
		}
		if l == math.MinInt64 {
			c.Err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return
		}
		withScores := false
		if len(argv) > 4 || len(argv) == 4 && !EqualFold(argv[3], "withscores") {
			c.Err(ErrSyntax)
			return
		} else if len(argv) == 4 {
			withScores = true
			if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
				c.Err(errOutOfRange)
				return
			}
		}
		zrandmemberCount(c, db, key, l, withScores)
		return
	}
	_, z, ok := zsetAt(c, db, key, false)
	if !ok {
		return
	}
	if z == nil {
		c.Null()
		return
	}
	m, _ := z.at(rand.IntN(z.Len()))
	c.Bulk(m)
}

func zrandmemberCount(c *Ctx, db *DB, key []byte, l int64, withScores bool) {
	_, z, ok := zsetAt(c, db, key, false)
	if !ok {
		return
	}
	if z == nil || l == 0 {
		c.Array(0)
		return
	}
	size := int64(z.Len())
	count, uniq := l, true
	if l < 0 {
		count, uniq = -l, false
	}
	emit := func(m []byte, s float64) {
		if withScores && c.Proto >= 3 {
			c.Array(2)
		}
		c.Bulk(m)
		if withScores {
			zReplyScore(c, s)
		}
	}
	header := func(n int64) {
		if withScores && c.Proto < 3 {
			c.Array(int(2 * n))
		} else {
			c.Array(int(n))
		}
	}
	// Repeats allowed (or a single element): sample the whole set each time.
	if !uniq || count == 1 {
		header(count)
		for i := int64(0); i < count; i++ {
			emit(z.at(rand.IntN(int(size))))
			if i%fullEvery == fullEvery-1 && c.Full() {
				return // the client is being closed: the reply is dropped
			}
		}
		return
	}
	// The whole set, from the highest score down (Redis's zuiNext order).
	if count >= size {
		header(size)
		it := z.iter(int(size-1), true)
		for i := int64(0); i < size; i++ {
			emit(it.next())
		}
		return
	}
	header(count)
	if count*zrandSubStrategyMul > size {
		// Close to the whole set: drop random ranks until count remain.
		ranks := make([]int, size)
		for i := range ranks {
			ranks[i] = i
		}
		rand.Shuffle(len(ranks), func(i, j int) { ranks[i], ranks[j] = ranks[j], ranks[i] })
		for _, r := range ranks[:count] {
			emit(z.at(r))
		}
		return
	}
	// Much larger than count: draw ranks until count distinct ones came.
	seen := make(map[int]struct{}, count)
	for int64(len(seen)) < count {
		r := rand.IntN(int(size))
		if _, dup := seen[r]; dup {
			continue
		}
		seen[r] = struct{}{}
		emit(z.at(r))
	}
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
func cmdZscan(c *Ctx, argv [][]byte) {
	cursor, ok := parseCursor(argv[2])
	if !ok {
		c.Err(errInvalidCursor)
		return
	}
	_, z, ok := zsetAt(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		emptyScan(c)
		return
	}
	o, ok := parseScanArgs(c, argv, 3, false)
	if !ok {
		return
	}
	count, pat, usePat := o.count, o.pat, o.usePat
	var found []int32 // skiplist elements, or listpack ranks
	if z.sl == nil {
		for i := range z.scores {
			found = append(found, int32(i))
		}
		cursor = 0
	} else {
		// Redis counts the list of keys and values: twice the elements.
		want := count
		maxIter := count * 20
		if count > math.MaxInt64/20 {
			maxIter = math.MaxInt64
		}
		for {
			cursor = z.sl.scan(cursor, func(t int32) { found = append(found, t) })
			if cursor == 0 || maxIter == 0 || int64(len(found)) >= want {
				break
			}
			maxIter--
		}
	}
	keep := found[:0]
	for _, t := range found {
		var m []byte
		if z.sl == nil {
			m = z.lpMember(int(t))
		} else {
			m = z.sl.mem(t)
		}
		if usePat && !MatchGlob(pat, m, false) {
			continue
		}
		keep = append(keep, t)
	}
	var buf [32]byte
	c.Array(2)
	c.Bulk(strconv.AppendUint(buf[:0], cursor, 10))
	c.Array(2 * len(keep))
	for _, t := range keep {
		if z.sl == nil {
			c.Bulk(z.lpMember(int(t)))
			c.Bulk(appendD2string(buf[:0], z.scores[t]))
		} else {
			c.Bulk(z.sl.mem(t))
			c.Bulk(appendScore(buf[:0], z.sl.e(t).score))
		}
	}
}
