package shard

import (
	"bytes"
	"slices"
	"strconv"
)

// SORT and SORT_RO (Redis 7.0 sort.c): sort a list, set or sorted set by
// its elements or by the values of other keys, with LIMIT, GET lookups and
// an optional STORE into a list.
//
// Keys on other shards. BY and GET patterns name keys built from the
// sorted elements ("weight_*", "obj_*->field"), which may sit on any shard,
// while the dispatcher takes only the shards of a command's declared keys
// (the sorted key and the STORE destination). Redis Cluster answers such a
// SORT with an error; a single server must not. So each SORT call says,
// through the table row's ExtraShards hook, which shards its patterns read:
//
//   - no pattern that looks keys up (no BY, BY without '*' — "don't sort" —
//     and only GET # or GETs without '*'): none, and SORT stays a
//     single-shard command on its key's shard, with no extra cost;
//   - a pattern whose part before the '*' holds a whole {hash tag}: the
//     shard of that tag, since every key it builds hashes there (SORT
//     {u}list BY {u}w_* is as fast as it can be);
//   - any other pattern: every shard.
//
// The dispatcher takes those shards with the declared keys' (ascending, as
// for any multi-key command), so the handler reads any pattern key through
// c.DBOf and the whole SORT, STORE included, is atomic. The AOF loader and
// the durability tracking honour the same hook (server/load.go,
// server/persist.go).

var sortCommands = []Command{
	{Name: "sort", Run: cmdSort, Keys: sortKeys, ExtraShards: sortExtraShards},
	{Name: "sort_ro", Run: cmdSortRO, Keys: sortROKeys, ExtraShards: sortROExtraShards},
}

const errSortDouble = "ERR One or more scores can't be converted into double"

// sortOpts is a parsed SORT argument list.
type sortOpts struct {
	desc, alpha bool
	// dontsort: a BY pattern without '*' (Redis's "BY nosort"): keep the
	// value's own order.
	dontsort     bool
	limitStart   int64
	limitCount   int64 // -1: no LIMIT
	by           int   // argv index of the (last) BY pattern, 0: none
	store        int   // argv index of the (last) STORE key, 0: none
	gets         []int // argv indexes of the GET patterns, in order
	errMsg       string
	lookupsByKey bool // some pattern reads keys (see sortExtraShards)
}

// parseSort parses argv[2:] as sortCommandGeneric does; gets is the buffer
// for the GET pattern positions. On a bad argument errMsg is Redis's reply.
// The key finders use it too, so that routing sees the very STORE key the
// handler writes.
func parseSort(argv [][]byte, readonly bool, gets []int) (o sortOpts) {
	o.limitCount = -1
	o.gets = gets
	for j := 2; j < len(argv); j++ {
		a := argv[j]
		left := len(argv) - j - 1
		switch {
		case EqualFold(a, "asc"):
			o.desc = false
		case EqualFold(a, "desc"):
			o.desc = true
		case EqualFold(a, "alpha"):
			o.alpha = true
		case EqualFold(a, "limit") && left >= 2:
			var ok1, ok2 bool
			o.limitStart, ok1 = ParseInt(argv[j+1])
			o.limitCount, ok2 = ParseInt(argv[j+2])
			if !ok1 || !ok2 {
				o.errMsg = ErrNotInt
				return o
			}
			j += 2
		case !readonly && EqualFold(a, "store") && left >= 1:
			o.store = j + 1
			j++
		case EqualFold(a, "by") && left >= 1:
			o.by = j + 1
			if bytes.IndexByte(argv[j+1], '*') < 0 {
				o.dontsort = true
			}
			j++
		case EqualFold(a, "get") && left >= 1:
			o.gets = append(o.gets, j+1)
			j++
		default:
			o.errMsg = ErrSyntax
			return o
		}
	}
	return o
}

// sortKeys is SORT's key finder for routing: the sorted key and the STORE
// destination the handler will write (the last STORE), read with the
// handler's own grammar. (COMMAND GETKEYS keeps Redis's sortGetKeys, which
// can differ on odd argument lists that SORT then rejects or reads
// otherwise.)
func sortKeys(argv [][]byte, dst []int) []int {
	var gbuf [8]int
	o := parseSort(argv, false, gbuf[:0])
	dst = append(dst, 1)
	if o.store > 0 {
		dst = append(dst, o.store)
	}
	return dst
}

func sortROKeys(argv [][]byte, dst []int) []int { return append(dst, 1) }

func sortExtraShards(argv [][]byte, n int) uint64   { return sortPatternShards(argv, n, false) }
func sortROExtraShards(argv [][]byte, n int) uint64 { return sortPatternShards(argv, n, true) }

// sortPatternShards returns the shards the BY and GET patterns of a SORT
// call may read (see the top of this file); 0 when they read no key.
func sortPatternShards(argv [][]byte, n int, readonly bool) uint64 {
	if n <= 1 || len(argv) < 4 {
		return 0
	}
	var gbuf [8]int
	o := parseSort(argv, readonly, gbuf[:0])
	if o.errMsg != "" {
		return 0 // the handler answers an error and reads nothing else
	}
	var mask uint64
	if o.by > 0 && !o.dontsort {
		mask |= patternShard(argv[o.by], n)
	}
	for _, g := range o.gets {
		mask |= patternShard(argv[g], n)
	}
	return mask
}

// patternShard returns the shards the keys built from pattern p may live
// on: none for a pattern that names no key (# or one without '*'), the
// tag's shard when the part before the '*' holds a whole {tag}, else all.
func patternShard(p []byte, n int) uint64 {
	star := bytes.IndexByte(p, '*')
	if star < 0 || len(p) == 1 && p[0] == '#' {
		return 0
	}
	prefix := p[:star]
	if open := bytes.IndexByte(prefix, '{'); open >= 0 {
		if cl := bytes.IndexByte(prefix[open+1:], '}'); cl > 0 {
			return 1 << uint(ShardOf(prefix, n))
		}
	}
	return 1<<uint(n) - 1
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
// [ALPHA] [STORE destination]
func cmdSort(c *Ctx, argv [][]byte) { sortGeneric(c, argv, false) }

// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
// [ALPHA]
func cmdSortRO(c *Ctx, argv [][]byte) { sortGeneric(c, argv, true) }

// sortACLDenied is the error of the first BY pattern with '*' or GET
// pattern, in argument order, for a user without read access to every key.
func sortACLDenied(argv [][]byte, o sortOpts) string {
	for j := 2; j+1 < len(argv); j++ {
		if EqualFold(argv[j], "by") && j+1 == o.by && bytes.IndexByte(argv[j+1], '*') >= 0 {
			return "ERR BY option of SORT denied due to insufficient ACL permissions."
		}
		for _, g := range o.gets {
			if g == j+1 {
				return "ERR GET option of SORT denied due to insufficient ACL permissions."
			}
		}
	}
	return ""
}

// sortItem is one element of the sort vector (Redis's redisSortObject).
type sortItem struct {
	elem  []byte
	score float64
	by    []byte // the BY value, for ALPHA
	hasBy bool   // the BY pattern found a value
}

func sortGeneric(c *Ctx, argv [][]byte, readonly bool) {
	var gbuf [8]int
	o := parseSort(argv, readonly, gbuf[:0])
	if o.errMsg == "" && c.SortPatternsDenied {
		o.errMsg = sortACLDenied(argv, o)
	}
	if o.errMsg != "" {
		c.Err(o.errMsg)
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	slot := db.Read(key)
	typ := uint8(TypeList) // a missing key sorts as an empty list
	if slot >= 0 {
		typ = db.Type(slot)
		if typ != TypeList && typ != TypeSet && typ != TypeZSet {
			c.Err(ErrWrongType)
			return
		}
	}
	var by []byte
	if o.by > 0 {
		by = argv[o.by]
	}
	dontsort, alpha, desc := o.dontsort, o.alpha, o.desc
	// A set has no order of its own: a stored (or, in Redis, scripted)
	// result is sorted anyway, so that replicas and the AOF agree.
	if dontsort && typ == TypeSet && (o.store > 0 || c.InScript) {
		dontsort, alpha, by = false, true, nil
	}

	var l *List
	var s *setObj
	var z *zset
	n := 0
	if slot >= 0 {
		switch typ {
		case TypeList:
			l = db.Obj(slot).(*List)
			n = l.Len()
		case TypeSet:
			s = db.Obj(slot).(*setObj)
			n = s.len()
		case TypeZSet:
			z = db.Obj(slot).(*zset)
			// Redis 7.0 converts a listpack sorted set to a skiplist
			// here (for its nosort walk), visibly in OBJECT ENCODING.
			if z.sl == nil {
				db.memOut(slot, db.at(slot))
				z.convert()
				db.SetEncoding(slot, EncSkiplist)
			}
			n = z.Len()
		}
	}

	// LIMIT, clamped to the value's size as Redis does (so that huge
	// offsets and counts cannot overflow).
	start := min(max(o.limitStart, 0), int64(n))
	count := min(max(o.limitCount, -1), int64(n))
	end := int64(n) - 1
	if count >= 0 {
		end = start + count - 1
	}
	if start >= int64(n) {
		start, end = int64(n)-1, int64(n)-2
	}
	if end >= int64(n) {
		end = int64(n) - 1
	}
	vlen := n
	// Lists and sorted sets left in their own order load just the range.
	if (typ == TypeList || typ == TypeZSet) && dontsort && (start != 0 || end != int64(n)-1) {
		vlen = int(end - start + 1)
	}

	items := make([]sortItem, vlen)
	switch {
	case l != nil && dontsort:
		if end >= start && vlen > 0 {
			from := int(start)
			if desc {
				from = n - int(start) - 1
			}
			it := l.Iter(from, desc)
			for j := range items {
				items[j].elem, _ = it.Next()
			}
			end -= start
			start = 0
		}
	case l != nil:
		it := l.Iter(0, false)
		for j := range items {
			items[j].elem, _ = it.Next()
		}
	case s != nil:
		if s.ht != nil {
			for j := range items {
				items[j].elem = s.ht.member(int32(j))
			}
		} else {
			// Format the integers into one arena, then slice it.
			arena := make([]byte, 0, n*8)
			ends := make([]int, n)
			for j := range items {
				arena = strconv.AppendInt(arena, s.is.get(j), 10)
				ends[j] = len(arena)
			}
			prev := 0
			for j := range items {
				items[j].elem = arena[prev:ends[j]:ends[j]]
				prev = ends[j]
			}
		}
	case z != nil && dontsort:
		if vlen > 0 {
			from := int(start)
			if desc {
				from = n - int(start) - 1
			}
			it := z.iter(from, desc)
			for j := range items {
				items[j].elem, _ = it.next()
			}
		}
		end -= start
		start = 0
	case z != nil:
		it := z.iter(0, false)
		for j := range items {
			items[j].elem, _ = it.next()
		}
	}

	var kbuf []byte // key buffer of the pattern lookups
	convErr := false
	if !dontsort {
		for j := range items {
			it := &items[j]
			val := it.elem
			if by != nil {
				var found bool
				val, found = sortLookup(c, by, it.elem, &kbuf)
				if !found {
					continue
				}
			}
			if alpha {
				if by != nil {
					it.by, it.hasBy = val, true
				}
				continue
			}
			f, ok := sortScore(val)
			if !ok {
				convErr = true
			}
			it.score = f
		}
		if !convErr {
			sortItems(items, alpha, by != nil, o.store > 0, desc)
		}
	}

	rows := int(end - start + 1)
	outLen := rows
	if len(o.gets) > 0 {
		outLen = len(o.gets) * rows
	}
	switch {
	case convErr:
		c.Err(errSortDouble)
	case o.store == 0:
		c.Array(outLen)
		for j := start; j <= end; j++ {
			elem := items[j].elem
			if len(o.gets) == 0 {
				c.Bulk(elem)
			}
			for _, g := range o.gets {
				if v, ok := sortLookup(c, argv[g], elem, &kbuf); ok {
					c.Bulk(v)
				} else {
					c.Null()
				}
			}
		}
	default:
		dst := argv[o.store]
		ddb := c.DBOf(dst)
		if outLen == 0 {
			if ds := ddb.Peek(dst); ds >= 0 {
				ddb.Delete(ds)
				ddb.Notify(NotifyGeneric, "del", dst)
				c.Dirty(1)
			}
			c.Int(0)
			return
		}
		res := newList(ddb)
		for j := start; j <= end; j++ {
			elem := items[j].elem
			if len(o.gets) == 0 {
				res.PushBack(elem)
			}
			for _, g := range o.gets {
				v, _ := sortLookup(c, argv[g], elem, &kbuf)
				res.PushBack(v) // a missing value is stored as ""
			}
		}
		ddb.SetObj(dst, TypeList, EncQuicklist, res)
		ddb.Notify(NotifyList, "sortstore", dst)
		c.Dirty(outLen)
		c.Int(int64(outLen))
	}
}

// sortLookup is Redis's lookupKeyByPattern: "#" is the element itself;
// otherwise the first '*' of the pattern is replaced by the element to name
// a key, whose string value is returned, or, for "key*->field", the field of
// the hash at that key. A pattern without '*', a missing key, a key of
// another type or a missing field find nothing. kbuf is reused for the key.
// The value aliases the key's storage.
func sortLookup(c *Ctx, pat, elem []byte, kbuf *[]byte) ([]byte, bool) {
	if len(pat) == 1 && pat[0] == '#' {
		return elem, true
	}
	// The pattern is read as a C string for its '*' and "->".
	cpat := pat
	if nul := bytes.IndexByte(cpat, 0); nul >= 0 {
		cpat = cpat[:nul]
	}
	star := bytes.IndexByte(cpat, '*')
	if star < 0 {
		return nil, false
	}
	post := pat[star+1:]
	var field []byte
	if f := bytes.Index(cpat[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(cpat) {
		field = pat[star+1+f+2:]
		post = pat[star+1 : star+1+f]
	}
	k := append((*kbuf)[:0], pat[:star]...)
	k = append(k, elem...)
	k = append(k, post...)
	*kbuf = k
	db := c.DBOf(k)
	slot := db.Read(k)
	if slot < 0 {
		return nil, false
	}
	if field == nil {
		if db.Type(slot) != TypeString {
			return nil, false
		}
		return db.Str(slot), true
	}
	if db.Type(slot) != TypeHash {
		return nil, false
	}
	return db.Obj(slot).(*hashObj).Get(field)
}

// sortScore reads a value as a number the way SORT does: C's strtod over
// the value read as a C string, which must be used up, with no overflow,
// underflow or NaN. (Unlike scores elsewhere, leading spaces pass, and an
// empty value is 0.)
func sortScore(b []byte) (float64, bool) {
	if nul := bytes.IndexByte(b, 0); nul >= 0 {
		b = b[:nul]
	}
	f, used, rangeErr := strtod(b)
	if used == 0 {
		// Nothing parsed: strtod leaves its end pointer at the start.
		return 0, len(b) == 0
	}
	if used != len(b) || rangeErr || f != f {
		return f, false
	}
	return f, true
}

// collate compares two values as strcoll does in the C locale: as C
// strings (up to a NUL byte), byte by byte.
func collate(a, b []byte) int {
	if i := bytes.IndexByte(a, 0); i >= 0 {
		a = a[:i]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return bytes.Compare(a, b)
}

// sortItems sorts the vector as sortCompare orders it: by score (ties by
// element) or, with ALPHA, by the BY value (missing ones first) or by the
// element; a stored result compares bytes exactly, a replied one collates.
func sortItems(items []sortItem, alpha, byPattern, store, desc bool) {
	cmpStr := collate
	if store {
		cmpStr = bytes.Compare
	}
	slices.SortStableFunc(items, func(a, b sortItem) int {
		var r int
		switch {
		case !alpha:
			switch {
			case a.score > b.score:
				r = 1
			case a.score < b.score:
				r = -1
			default:
				r = bytes.Compare(a.elem, b.elem)
			}
		case byPattern:
			switch {
			case a.hasBy && b.hasBy:
				r = cmpStr(a.by, b.by)
			case a.hasBy:
				r = 1
			case b.hasBy:
				r = -1
			}
		default:
			r = cmpStr(a.elem, b.elem)
		}
		if desc {
			r = -r
		}
		return r
	})
}
