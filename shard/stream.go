package shard

import (
	"math"
	"strconv"

	"github.com/redshard/redshard/cnum"
)

// Streams (Redis 7.0's t_stream.c): entries ordered by ID, consumer groups
// with their pending entries lists.
//
// Storage of the entries: streamnode.go.

var streamCommands = []Command{
	{Name: "xadd", Run: cmdXadd},
	{Name: "xlen", Run: cmdXlen},
	{Name: "xrange", Run: cmdXrange},
	{Name: "xrevrange", Run: cmdXrevrange},
	{Name: "xdel", Run: cmdXdel},
	{Name: "xtrim", Run: cmdXtrim},
	{Name: "xread", Run: cmdXread},
	{Name: "xreadgroup", Run: cmdXread},
	{Name: "xgroup|create", Run: cmdXgroupCreate},
	{Name: "xgroup|destroy", Run: cmdXgroupDestroy},
	{Name: "xgroup|createconsumer", Run: cmdXgroupCreateConsumer},
	{Name: "xgroup|delconsumer", Run: cmdXgroupDelConsumer},
	{Name: "xgroup|setid", Run: cmdXgroupSetid},
	{Name: "xack", Run: cmdXack},
	{Name: "xclaim", Run: cmdXclaim},
	{Name: "xgroup|help", Run: cmdXgroupHelp},
	{Name: "xpending", Run: cmdXpending},
	{Name: "xautoclaim", Run: cmdXautoclaim},
	{Name: "xinfo|stream", Run: cmdXinfoStream},
	{Name: "xinfo|groups", Run: cmdXinfoGroups},
	{Name: "xinfo|consumers", Run: cmdXinfoConsumers},
	{Name: "xinfo|help", Run: cmdXinfoHelp},
	{Name: "xsetid", Run: cmdXsetid},
}

type streamID struct{ ms, seq uint64 }

func (a streamID) cmp(b streamID) int {
	switch {
	case a.ms < b.ms:
		return -1
	case a.ms > b.ms:
		return 1
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func (a streamID) isZero() bool { return a.ms == 0 && a.seq == 0 }

func (a streamID) incr() (streamID, bool) {
	if a.seq == math.MaxUint64 {
		if a.ms == math.MaxUint64 {
			return a, false
		}
		return streamID{a.ms + 1, 0}, true
	}
	return streamID{a.ms, a.seq + 1}, true
}

func (a streamID) decr() (streamID, bool) {
	if a.seq == 0 {
		if a.ms == 0 {
			return a, false
		}
		return streamID{a.ms - 1, math.MaxUint64}, true
	}
	return streamID{a.ms, a.seq - 1}, true
}

func (a streamID) bytes() []byte {
	b := strconv.AppendUint(make([]byte, 0, 41), a.ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.seq, 10)
}

type streamObj struct {
	nodes        []*snode
	length       int64
	lastID       streamID
	firstID      streamID
	maxDeletedID streamID
	entriesAdded int64
	groups       []*streamGroup // sorted by name
	mem          int
}

func (s *streamObj) Mem() int { return 128 + s.mem + groupsMem(s.groups) }

func (s *streamObj) Copy() Object {
	n := *s
	n.nodes = copyNodes(s.nodes)
	n.groups = copyGroups(s.groups)
	return &n
}

func (s *streamObj) hasTombstones(start, end *streamID) bool {
	if s.length == 0 || s.maxDeletedID.isZero() {
		return false
	}
	if s.firstID.cmp(s.maxDeletedID) > 0 {
		return false
	}
	st := streamID{}
	if start != nil {
		st = *start
	}
	en := streamID{math.MaxUint64, math.MaxUint64}
	if end != nil {
		en = *end
	}
	return st.cmp(s.maxDeletedID) <= 0 && s.maxDeletedID.cmp(en) <= 0
}

func (s *streamObj) estimateDistance(id streamID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.cmp(s.lastID) < 1 {
		return s.entriesAdded
	}
	c := id.cmp(s.lastID)
	if c == 0 {
		return s.entriesAdded
	} else if c > 0 {
		return -1
	}
	cf := id.cmp(s.firstID)
	if s.maxDeletedID.isZero() || s.maxDeletedID.cmp(s.firstID) < 0 {
		if cf < 0 {
			return s.entriesAdded - s.length
		} else if cf == 0 {
			return s.entriesAdded - s.length + 1
		}
	}
	return -1
}

// Dump recreates the stream as Redis's rewriteStreamObject does.
func (s *streamObj) Dump(key []byte) [][][]byte {
	var cmds [][][]byte
	if s.length > 0 {
		s.each(streamID{}, streamID{math.MaxUint64, math.MaxUint64}, false, func(id streamID, fv [][]byte) bool {
			cmd := [][]byte{[]byte("XADD"), key, id.bytes()}
			cmd = append(cmd, fv...)
			cmds = append(cmds, cmd)
			return true
		})
	} else {
		cmds = append(cmds, [][]byte{[]byte("XADD"), key, []byte("MAXLEN"), []byte("0"), []byte("0-1"), []byte("x"), []byte("y")}) // as rewriteStreamObject; XSETID follows
	}
	cmds = append(cmds, [][]byte{[]byte("XSETID"), key, s.lastID.bytes(), []byte("ENTRIESADDED"),
		[]byte(strconv.FormatInt(s.entriesAdded, 10)), []byte("MAXDELETEDID"), s.maxDeletedID.bytes()})
	cmds = append(cmds, dumpGroups(key, s.groups)...)
	return cmds
}

// ID parsing.

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// parseStreamID is streamGenericParseIDOrReply; seqGiven non-nil accepts ms-*.
func parseStreamID(b []byte, missingSeq uint64, strict bool, seqGiven *bool) (streamID, bool) {
	if len(b) > 127 {
		return streamID{}, false
	}
	if strict && len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		return streamID{}, false
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	if len(b) == 1 && b[0] == '-' {
		return streamID{}, true
	}
	if len(b) == 1 && b[0] == '+' {
		return streamID{math.MaxUint64, math.MaxUint64}, true
	}
	msPart, seqPart, dash := b, []byte(nil), false
	for i, ch := range b {
		if ch == '-' {
			msPart, seqPart, dash = b[:i], b[i+1:], true
			break
		}
	}
	ms, ok := parseUint64(msPart)
	if !ok {
		return streamID{}, false
	}
	seq := missingSeq
	if dash {
		if seqGiven != nil && len(seqPart) == 1 && seqPart[0] == '*' {
			seq = 0
			*seqGiven = false
		} else if seq, ok = parseUint64(seqPart); !ok {
			return streamID{}, false
		}
	}
	return streamID{ms, seq}, true
}

// parseUint64 is Redis's string2ull: a strict integer (string2ll) that
// is not negative, else what C's strtoull reads whole: leading spaces and a
// sign allowed (" 1" and "+1" are 1, and " -1", as strtoull negates, is
// 2^64-1), nothing after the digits, no overflow.
func parseUint64(b []byte) (uint64, bool) {
	if v, ok := ParseInt(b); ok {
		return uint64(v), v >= 0
	}
	v, n, rangeErr := cnum.Strtoul(b, 10)
	return v, n > 0 && n == len(b) && !rangeErr
}

func parseIntervalID(c *Ctx, b []byte, missingSeq uint64) (streamID, bool, bool) {
	ex := len(b) > 1 && b[0] == '('
	var id streamID
	var ok bool
	if ex {
		id, ok = parseStreamID(b[1:], missingSeq, true, nil)
	} else {
		id, ok = parseStreamID(b, missingSeq, false, nil)
	}
	if !ok {
		c.Err(errInvalidStreamID)
	}
	return id, ex, ok
}

func (c *Ctx) streamID(id streamID) { c.bulkID(id) }

func (c *Ctx) bulkID(id streamID) {
	b := id.bytes()
	c.Out = append(c.Out, '$')
	c.Out = strconv.AppendInt(c.Out, int64(len(b)), 10)
	c.Out = append(c.Out, "\r\n"...)
	c.Out = append(c.Out, b...)
	c.Out = append(c.Out, "\r\n"...)
}

func (c *Ctx) replyEntry(id streamID, fv [][]byte) {
	c.Array(2)
	c.streamID(id)
	c.Array(len(fv))
	for _, f := range fv {
		c.Bulk(f)
	}
}

// streamLookup: s nil if missing; ok false after WRONGTYPE.
func streamLookup(c *Ctx, db *DB, key []byte, write bool) (*streamObj, int32, bool) {
	var slot int32
	if write {
		slot = db.Write(key)
	} else {
		slot = db.Read(key)
	}
	if slot < 0 {
		return nil, -1, true
	}
	if db.Type(slot) != TypeStream {
		c.Err(ErrWrongType)
		return nil, -1, false
	}
	return db.Obj(slot).(*streamObj), slot, true
}

func signalStream(db *DB, key []byte) {
	if db.sh.OnReady != nil {
		db.sh.OnReady(db, key)
	}
}

type trimArgs struct {
	strategy int // 0 none, 1 maxlen, 2 minid
	approx   bool
	maxlen   int64
	minid    streamID
	limit    int64
	argIdx   int
	noMk     bool
	id       streamID
	idGiven  bool
	seqGiven bool
}

func parseTrimArgs(c *Ctx, argv [][]byte, xadd bool) (trimArgs, int, bool) {
	var a trimArgs
	limitGiven := false
	i := 2
	for ; i < len(argv); i++ {
		more := len(argv) - 1 - i
		opt := argv[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			goto done
		case EqualFold(opt, "maxlen") && more > 0, EqualFold(opt, "minid") && more > 0:
			if a.strategy != 0 {
				c.Err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return a, -1, false
			}
			a.approx = false
			next := argv[i+1]
			if more >= 2 && len(next) == 1 && next[0] == '~' {
				a.approx = true
				i++
			} else if more >= 2 && len(next) == 1 && next[0] == '=' {
				i++
			}
			if EqualFold(opt, "maxlen") {
				v, ok := ParseInt(argv[i+1])
				if !ok {
					c.Err(ErrNotInt)
					return a, -1, false
				}
				if v < 0 {
					c.Err("ERR The MAXLEN argument must be >= 0.")
					return a, -1, false
				}
				a.maxlen, a.strategy = v, 1
			} else {
				id, ok := parseStreamID(argv[i+1], 0, true, nil)
				if !ok {
					c.Err(errInvalidStreamID)
					return a, -1, false
				}
				a.minid, a.strategy = id, 2
			}
			i++
			a.argIdx = i
		case EqualFold(opt, "limit") && more > 0:
			v, ok := ParseInt(argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return a, -1, false
			}
			if v < 0 {
				c.Err("ERR The LIMIT argument must be >= 0.")
				return a, -1, false
			}
			a.limit, limitGiven = v, true
			i++
		case xadd && EqualFold(opt, "nomkstream"):
			a.noMk = true
		case xadd:
			id, ok := parseStreamID(opt, 0, true, &a.seqGiven)
			if !ok {
				c.Err(errInvalidStreamID)
				return a, -1, false
			}
			a.id, a.idGiven = id, true
			goto done
		default:
			c.Err(ErrSyntax)
			return a, -1, false
		}
	}
done:
	if a.limit != 0 && a.strategy == 0 {
		c.Err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return a, -1, false
	}
	if !xadd && a.strategy == 0 {
		c.Err("ERR syntax error, XTRIM must be called with a trimming strategy")
		return a, -1, false
	}
	if c.DBOf(argv[1]).sh.Loading {
		a.limit = 0
	} else if limitGiven {
		if !a.approx {
			c.Err("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return a, -1, false
		}
	} else if a.approx {
		// At most 100 nodes' worth, capped both ways as Redis does.
		a.limit = 100 * c.DBOf(argv[1]).sh.Cfg.StreamNodeMaxEntries.Load()
		if a.limit <= 0 {
			a.limit = 10000
		}
		a.limit = min(a.limit, 1000000)
	} else {
		a.limit = 0
	}
	return a, i, true
}

func (s *streamObj) doTrim(a *trimArgs) int64 {
	switch a.strategy {
	case 1:
		return s.trim(a.maxlen, nil, a.approx, a.limit)
	case 2:
		return s.trim(0, &a.minid, a.approx, a.limit)
	}
	return 0
}

// rewriteTrim returns argv with the ~ trim made exact, as Redis propagates it.
func rewriteTrim(argv [][]byte, a *trimArgs, s *streamObj) [][]byte {
	out := append([][]byte(nil), argv...)
	out[a.argIdx-1] = []byte("=")
	if a.strategy == 1 {
		out[a.argIdx] = []byte(strconv.FormatInt(s.length, 10))
	} else {
		out[a.argIdx] = s.firstID.bytes()
	}
	return out
}

func cmdXadd(c *Ctx, argv [][]byte) {
	a, idpos, ok := parseTrimArgs(c, argv, true)
	if !ok {
		return
	}
	fp := idpos + 1
	if len(argv)-fp < 2 || (len(argv)-fp)%2 == 1 {
		c.Err(errArity("xadd"))
		return
	}
	if a.idGiven && a.seqGiven && a.id.isZero() {
		c.Err("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	s, slot, ok := streamLookup(c, db, key, true)
	if !ok {
		return
	}
	if s == nil && a.noMk {
		c.Null()
		return
	}
	var id streamID
	if s != nil {
		if s.lastID.ms == math.MaxUint64 && s.lastID.seq == math.MaxUint64 {
			c.Err("ERR The stream has exhausted the last possible ID, unable to add more items")
			return
		}
	}
	last := streamID{}
	if s != nil {
		last = s.lastID
	}
	if a.idGiven {
		id = a.id
		if !a.seqGiven {
			if id.ms == last.ms {
				if last.seq == math.MaxUint64 {
					c.Err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
					return
				}
				id.seq = last.seq + 1
			} else if id.ms < last.ms {
				c.Err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
				return
			}
		} else if id.cmp(last) <= 0 {
			c.Err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
			return
		}
	} else {
		ms := uint64(c.Now())
		if ms > last.ms {
			id = streamID{ms, 0}
		} else {
			id, _ = last.incr()
		}
	}
	if s == nil {
		s = &streamObj{}
		slot = db.SetObj(key, TypeStream, EncStream, s)
	} else {
		db.Modify(slot)
	}
	s.appendEntry(db.sh.Cfg, id, argv[fp:])
	c.bulkID(id)
	db.Notify(NotifyStream, "xadd", key)
	prop := argv
	if a.strategy != 0 {
		if s.doTrim(&a) > 0 {
			db.Notify(NotifyStream, "xtrim", key)
		}
		if a.approx {
			prop = rewriteTrim(prop, &a, s)
		}
	}
	if !a.idGiven || !a.seqGiven {
		if &prop[0] == &argv[0] {
			prop = append([][]byte(nil), argv...)
		}
		prop[idpos] = id.bytes()
	}
	c.Propagate(prop...)
	signalStream(db, key)
}

func cmdXlen(c *Ctx, argv [][]byte) {
	s, _, ok := streamLookup(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if s == nil {
		c.Int(0)
		return
	}
	c.Int(s.length)
}

func cmdXrange(c *Ctx, argv [][]byte)    { xrangeGeneric(c, argv, false) }
func cmdXrevrange(c *Ctx, argv [][]byte) { xrangeGeneric(c, argv, true) }

func xrangeGeneric(c *Ctx, argv [][]byte, rev bool) {
	sa, ea := argv[2], argv[3]
	if rev {
		sa, ea = ea, sa
	}
	start, sx, ok := parseIntervalID(c, sa, 0)
	if !ok {
		return
	}
	if sx {
		if start, ok = start.incr(); !ok {
			c.Err("ERR invalid start ID for the interval")
			return
		}
	}
	end, ex, ok := parseIntervalID(c, ea, math.MaxUint64)
	if !ok {
		return
	}
	if ex {
		if end, ok = end.decr(); !ok {
			c.Err("ERR invalid end ID for the interval")
			return
		}
	}
	count := int64(-1)
	for j := 4; j < len(argv); j++ {
		if EqualFold(argv[j], "count") && j+1 < len(argv) {
			v, ok := ParseInt(argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			count = max(v, 0)
			j++
		} else {
			c.Err(ErrSyntax)
			return
		}
	}
	s, _, ok := streamLookup(c, c.DBOf(argv[1]), argv[1], false)
	if !ok {
		return
	}
	if s == nil {
		c.Array(0)
		return
	}
	if count == 0 {
		c.NullArray()
		return
	}
	streamReplyRange(c, s, start, end, count, rev)
}

func streamReplyRange(c *Ctx, s *streamObj, start, end streamID, count int64, rev bool) int {
	var body []byte
	saved := c.Out
	c.Out = body
	n := 0
	s.each(start, end, rev, func(id streamID, fv [][]byte) bool {
		c.replyEntry(id, fv)
		n++
		return count <= 0 || int64(n) < count
	})
	body = c.Out
	c.Out = saved
	c.Array(n)
	c.Out = append(c.Out, body...)
	return n
}

// parseStreamIDs parses every argument as a strict stream ID, answering
// Redis's error for the first that is not one.
func parseStreamIDs(c *Ctx, args [][]byte) ([]streamID, bool) {
	ids := make([]streamID, 0, len(args))
	for _, a := range args {
		id, ok := parseStreamID(a, 0, true, nil)
		if !ok {
			c.Err(errInvalidStreamID)
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

func cmdXdel(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	s, slot, ok := streamLookup(c, db, key, true)
	if !ok {
		return
	}
	if s == nil {
		c.Int(0)
		return
	}
	ids, ok := parseStreamIDs(c, argv[2:])
	if !ok {
		return
	}
	deleted := 0
	for _, id := range ids {
		ni, at, ok := s.find(id)
		if !ok {
			continue
		}
		if deleted == 0 {
			db.Modify(slot) // reads the stream (rewrite, WATCH, memory), never moves its nodes
		}
		s.markDeleted(ni, at)
		if id.cmp(s.maxDeletedID) > 0 {
			s.maxDeletedID = id
		}
		deleted++
	}
	if deleted > 0 {
		s.fixFirst()
		db.Notify(NotifyStream, "xdel", key)
		c.Dirty(deleted)
	}
	c.Int(int64(deleted))
}

func cmdXtrim(c *Ctx, argv [][]byte) {
	a, _, ok := parseTrimArgs(c, argv, false)
	if !ok {
		return
	}
	key := argv[1]
	db := c.DBOf(key)
	s, slot, ok := streamLookup(c, db, key, true)
	if !ok {
		return
	}
	if s == nil {
		c.Int(0)
		return
	}
	db.Modify(slot)
	n := s.doTrim(&a)
	db.memNew(slot)
	if n > 0 {
		db.Notify(NotifyStream, "xtrim", key)
		if a.approx {
			c.Propagate(rewriteTrim(argv, &a, s)...)
		} else {
			c.Dirty(int(n))
		}
	}
	c.Int(n)
}

// XREAD [COUNT n] [BLOCK ms] STREAMS key... id...; XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS ...
func cmdXread(c *Ctx, argv [][]byte) {
	group := len(argv[0]) == 10
	timeout := int64(-1)
	count := int64(0)
	streamsArg, nstreams := 0, 0
	var gname, cname []byte
	noack := false
	for i := 1; i < len(argv); i++ {
		more := len(argv) - i - 1
		o := argv[i]
		switch {
		case EqualFold(o, "block") && more > 0:
			if c.InScript {
				c.Err("ERR " + string(lowerASCII(argv[0])) + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			v, ok := ParseInt(argv[i])
			if !ok {
				c.Err("ERR timeout is not an integer or out of range")
				return
			}
			if v < 0 {
				c.Err("ERR timeout is negative")
				return
			}
			timeout = v
		case EqualFold(o, "count") && more > 0:
			i++
			v, ok := ParseInt(argv[i])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			count = max(v, 0)
		case EqualFold(o, "streams") && more > 0:
			streamsArg = i + 1
			nstreams = len(argv) - streamsArg
			if nstreams%2 != 0 {
				c.Err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			nstreams /= 2
			i = len(argv)
		case EqualFold(o, "group") && more >= 2:
			if !group {
				c.Err("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			gname, cname = argv[i+1], argv[i+2]
			i += 2
		case EqualFold(o, "noack"):
			if !group {
				c.Err("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if streamsArg == 0 {
		c.Err(ErrSyntax)
		return
	}
	if group && gname == nil {
		c.Err("ERR Missing GROUP option for XREADGROUP")
		return
	}
	keys := argv[streamsArg : streamsArg+nstreams]
	ids := make([]streamID, nstreams)
	groups := make([]*streamGroup, nstreams)
	var blockArgv [][]byte
	for k := 0; k < nstreams; k++ {
		key := keys[k]
		idArg := argv[streamsArg+nstreams+k]
		db := c.DBOf(key)
		slot := db.Read(key)
		var s *streamObj
		if slot >= 0 {
			if db.Type(slot) != TypeStream {
				if c.ServeKey != nil && group {
					c.Err("UNBLOCKED the stream key no longer exists")
					return
				}
				c.Err(ErrWrongType)
				return
			}
			s = db.Obj(slot).(*streamObj)
		}
		if group {
			if s != nil {
				groups[k] = s.group(gname)
			}
			if groups[k] == nil {
				if c.ServeKey != nil {
					if s == nil {
						c.Err("UNBLOCKED the stream key no longer exists")
					} else {
						c.Err("NOGROUP the consumer group this client was blocked on no longer exists")
					}
					return
				}
				c.Err("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(gname) + "' in XREADGROUP with GROUP option")
				return
			}
		}
		switch {
		case len(idArg) == 1 && idArg[0] == '$':
			if group {
				c.Err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if s != nil {
				ids[k] = s.lastID
			}
			if blockArgv == nil {
				blockArgv = append([][]byte(nil), argv...)
			}
			blockArgv[streamsArg+nstreams+k] = ids[k].bytes()
		case len(idArg) == 1 && idArg[0] == '>':
			if !group {
				c.Err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids[k] = streamID{math.MaxUint64, math.MaxUint64}
		default:
			id, ok := parseStreamID(idArg, 0, true, nil)
			if !ok {
				c.Err(errInvalidStreamID)
				return
			}
			ids[k] = id
		}
	}
	if c.ServeKey != nil && count == 0 {
		count = 1000
	}
	var body []byte
	saved := c.Out
	c.Out = body
	served := 0
	for k := 0; k < nstreams; k++ {
		key := keys[k]
		if c.ServeKey != nil && string(key) != string(c.ServeKey) {
			continue
		}
		db := c.DBOf(key)
		slot := db.Lookup(key)
		if slot < 0 {
			continue
		}
		s := db.Obj(slot).(*streamObj)
		gt := ids[k]
		sync, history := false, false
		g := groups[k]
		if g != nil {
			if gt.ms != math.MaxUint64 || gt.seq != math.MaxUint64 {
				sync, history = true, true
			} else if c.ServeKey != nil {
				gt = g.lastID
				sync = s.lastID.cmp(gt) > 0
			} else if s.length > 0 && s.lastValid().cmp(g.lastID) > 0 {
				sync, gt = true, g.lastID
			}
		} else if c.ServeKey != nil {
			sync = s.lastID.cmp(gt) > 0
		} else if s.length > 0 && s.lastValid().cmp(gt) > 0 {
			sync = true
		}
		if !sync {
			continue
		}
		served++
		if c.Proto == 2 {
			c.Array(2)
		}
		c.Bulk(key)
		var cons *streamConsumer
		if g != nil {
			db.Modify(slot)
			cons = g.consumer(cname)
			if cons == nil {
				cons = g.addConsumer(cname, c.Now())
				db.Notify(NotifyStream, "xgroup-createconsumer", key)
				if noack {
					c.Propagate([]byte("XGROUP"), []byte("CREATECONSUMER"), key, gname, cname)
				}
			} else {
				cons.seenTime = c.Now()
			}
		}
		start, _ := gt.incr()
		streamReplyGroup(c, s, key, start, count, g, cons, gname, noack, history)
		if g != nil {
			c.Prop.Custom = true
			c.Prop.Dirty++
		}
	}
	body = c.Out
	c.Out = saved
	if served > 0 {
		if c.Proto == 2 {
			c.Array(served)
		} else {
			c.Map(served)
		}
		c.Out = append(c.Out, body...)
		return
	}
	if timeout >= 0 && !c.InMulti {
		deadline := int64(0)
		if timeout > 0 {
			deadline = c.Now() + timeout
		}
		c.Block(deadline, keys)
		c.BlockArgv = blockArgv
		return
	}
	c.NullArray()
}
