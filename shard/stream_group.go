package shard

import (
	"math"
	"sort"
	"strconv"
)

// Consumer groups of streams: groups, consumers, their pending entries
// lists, and the commands on them.

type streamNACK struct {
	id            streamID
	deliveryTime  int64
	deliveryCount int64
	consumer      *streamConsumer
}

type streamConsumer struct {
	name     string
	seenTime int64
	pel      streamPEL
}

type streamGroup struct {
	name        string
	lastID      streamID
	entriesRead int64 // -1: invalid
	pel         streamPEL
	consumers   []*streamConsumer // sorted by name
}

// giveTo makes cons the owner of nk, moving it out of its old owner's PEL.
func (nk *streamNACK) giveTo(cons *streamConsumer) {
	if nk.consumer == cons {
		return
	}
	if nk.consumer != nil {
		nk.consumer.pel.delete(nk.id)
	}
	nk.consumer = cons
	cons.pel.insert(nk)
}

func (g *streamGroup) consumer(name []byte) *streamConsumer {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].name >= string(name) })
	if i < len(g.consumers) && g.consumers[i].name == string(name) {
		return g.consumers[i]
	}
	return nil
}

func (g *streamGroup) addConsumer(name []byte, now int64) *streamConsumer {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].name >= string(name) })
	if i < len(g.consumers) && g.consumers[i].name == string(name) {
		return nil
	}
	c := &streamConsumer{name: string(name), seenTime: now}
	g.consumers = append(g.consumers, nil)
	copy(g.consumers[i+1:], g.consumers[i:])
	g.consumers[i] = c
	return c
}

// lookupOrCreateConsumer is streamLookupConsumer (refreshing the seen time)
// falling back to streamCreateConsumer, which notifies and dirties.
func (g *streamGroup) lookupOrCreateConsumer(c *Ctx, db *DB, key, name []byte) *streamConsumer {
	now := c.Now()
	if cons := g.consumer(name); cons != nil {
		cons.seenTime = now
		return cons
	}
	cons := g.addConsumer(name, now)
	c.Dirty(1)
	db.Notify(NotifyStream, "xgroup-createconsumer", key)
	return cons
}

func (g *streamGroup) delConsumer(c *streamConsumer) {
	c.pel.each(func(nk *streamNACK) bool {
		g.pel.delete(nk.id)
		return true
	})
	for i, o := range g.consumers {
		if o == c {
			g.consumers = append(g.consumers[:i], g.consumers[i+1:]...)
			return
		}
	}
}

// ackID drops id from the group's PEL and its consumer's; false if it was
// not pending.
func (g *streamGroup) ackID(id streamID) bool {
	nk := g.pel.delete(id)
	if nk == nil {
		return false
	}
	if nk.consumer != nil {
		nk.consumer.pel.delete(id)
	}
	return true
}

// groupsMem estimates the memory of consumer groups (streamObj.Mem): every
// change to them comes after a db.Modify, which settles the figure again.
func groupsMem(groups []*streamGroup) int {
	n := 0
	for _, g := range groups {
		n += 96 + len(g.name) + g.pel.mem() + len(g.consumers)*(96+16)
	}
	return n
}

// copyGroups deep-copies consumer groups (streamObj.Copy).
func copyGroups(groups []*streamGroup) []*streamGroup {
	var out []*streamGroup
	for _, g := range groups {
		ng := &streamGroup{name: g.name, lastID: g.lastID, entriesRead: g.entriesRead}
		byOld := make(map[*streamConsumer]*streamConsumer, len(g.consumers))
		for _, c := range g.consumers {
			nc := &streamConsumer{name: c.name, seenTime: c.seenTime}
			byOld[c] = nc
			ng.consumers = append(ng.consumers, nc)
		}
		g.pel.each(func(nk *streamNACK) bool {
			x := &streamNACK{nk.id, nk.deliveryTime, nk.deliveryCount, byOld[nk.consumer]}
			ng.pel.insert(x)
			x.consumer.pel.insert(x)
			return true
		})
		out = append(out, ng)
	}
	return out
}

// dumpGroups is the consumer-group part of rewriteStreamObject.
func dumpGroups(key []byte, groups []*streamGroup) [][][]byte {
	var cmds [][][]byte
	for _, g := range groups {
		cmds = append(cmds, [][]byte{[]byte("XGROUP"), []byte("CREATE"), key, []byte(g.name), g.lastID.bytes(),
			[]byte("ENTRIESREAD"), []byte(strconv.FormatInt(g.entriesRead, 10))})
		for _, c := range g.consumers {
			if c.pel.len() == 0 {
				cmds = append(cmds, [][]byte{[]byte("XGROUP"), []byte("CREATECONSUMER"), key, []byte(g.name), []byte(c.name)})
				continue
			}
			c.pel.each(func(nk *streamNACK) bool {
				cmds = append(cmds, [][]byte{[]byte("XCLAIM"), key, []byte(g.name), []byte(c.name), []byte("0"), nk.id.bytes(),
					[]byte("TIME"), []byte(strconv.FormatInt(nk.deliveryTime, 10)), []byte("RETRYCOUNT"),
					[]byte(strconv.FormatInt(nk.deliveryCount, 10)), []byte("JUSTID"), []byte("FORCE")})
				return true
			})
		}
	}
	return cmds
}

func (s *streamObj) group(name []byte) *streamGroup {
	for _, g := range s.groups {
		if g.name == string(name) {
			return g
		}
	}
	return nil
}

func streamReplyGroup(c *Ctx, s *streamObj, key []byte, start streamID, count int64, g *streamGroup, cons *streamConsumer, gname []byte, noack, history bool) {
	now := c.Now()
	if g != nil && history {
		// The consumer's own pending entries from start (streamReplyWithRangeFromConsumerPEL).
		var out []*streamNACK
		cons.pel.ascend(start, func(nk *streamNACK) bool {
			out = append(out, nk)
			return count <= 0 || int64(len(out)) < count
		})
		c.Array(len(out))
		var fv [][]byte
		for _, nk := range out {
			var ok bool
			if fv, ok = s.get(nk.id, fv[:0]); !ok {
				c.Array(2)
				c.bulkID(nk.id)
				c.NullArray()
				continue
			}
			c.replyEntry(nk.id, fv)
			nk.deliveryTime = now
			nk.deliveryCount++
		}
		return
	}
	var body []byte
	saved := c.Out
	c.Out = body
	n := 0
	propLast := false
	s.each(start, streamID{math.MaxUint64, math.MaxUint64}, false, func(id streamID, fv [][]byte) bool {
		if g != nil && id.cmp(g.lastID) > 0 {
			if g.entriesRead != -1 && !s.hasTombstones(&id, nil) {
				g.entriesRead++
			} else if s.entriesAdded != 0 {
				g.entriesRead = s.estimateDistance(id)
			}
			g.lastID = id
			if noack {
				propLast = true
			}
		}
		c.replyEntry(id, fv)
		if g != nil && !noack {
			nk := g.pel.find(id)
			if nk == nil {
				nk = &streamNACK{id: id, deliveryTime: now, deliveryCount: 1, consumer: cons}
				g.pel.insert(nk)
				cons.pel.insert(nk)
			} else {
				nk.consumer.pel.delete(id)
				nk.consumer = cons
				nk.deliveryTime = now
				nk.deliveryCount = 1
				cons.pel.insert(nk)
			}
			propagateXclaim(c, key, gname, g, id.bytes(), nk)
		}
		n++
		return count <= 0 || int64(n) < count
	})
	if propLast {
		propagateGroupID(c, key, gname, g)
	}
	body = c.Out
	c.Out = saved
	c.Array(n)
	c.Out = append(c.Out, body...)
}

// propagateXclaim is streamPropagateXCLAIM: idArg is the ID as the client
// wrote it, or as formatted when the server picked it.
func propagateXclaim(c *Ctx, key, gname []byte, g *streamGroup, idArg []byte, nk *streamNACK) {
	c.Propagate([]byte("XCLAIM"), key, gname, []byte(nk.consumer.name), []byte("0"), idArg,
		[]byte("TIME"), []byte(strconv.FormatInt(nk.deliveryTime, 10)), []byte("RETRYCOUNT"),
		[]byte(strconv.FormatInt(nk.deliveryCount, 10)), []byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.lastID.bytes())
}

func propagateGroupID(c *Ctx, key, gname []byte, g *streamGroup) {
	c.Propagate([]byte("XGROUP"), []byte("SETID"), key, gname, g.lastID.bytes(), []byte("ENTRIESREAD"),
		[]byte(strconv.FormatInt(g.entriesRead, 10)))
}

// xgroupArgs resolves the key and group of an XGROUP subcommand.
func xgroupArgs(c *Ctx, argv [][]byte, needGroup bool, mk bool) (*DB, *streamObj, int32, *streamGroup, bool) {
	key := argv[2]
	db := c.DBOf(key)
	s, slot, ok := streamLookup(c, db, key, true)
	if !ok {
		return nil, nil, -1, nil, false
	}
	if s == nil && !mk {
		c.Err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
		return nil, nil, -1, nil, false
	}
	var g *streamGroup
	if s != nil {
		g = s.group(argv[3])
	}
	if needGroup && g == nil {
		c.Err("NOGROUP No such consumer group '" + string(argv[3]) + "' for key name '" + string(key) + "'")
		return nil, nil, -1, nil, false
	}
	return db, s, slot, g, true
}

func parseEntriesRead(c *Ctx, argv [][]byte, create bool) (mk bool, er int64, ok bool) {
	er = -1
	for i := 5; i < len(argv); {
		switch {
		case create && EqualFold(argv[i], "mkstream"):
			mk = true
			i++
		case EqualFold(argv[i], "entriesread") && i+1 < len(argv):
			v, ok := ParseInt(argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return false, 0, false
			}
			if v < 0 && v != -1 {
				c.Err("ERR value for ENTRIESREAD must be positive or -1")
				return false, 0, false
			}
			er = v
			i += 2
		default:
			c.Err("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try XGROUP HELP.")
			return false, 0, false
		}
	}
	return mk, er, true
}

func cmdXgroupCreate(c *Ctx, argv [][]byte) {
	mk, er, ok := parseEntriesRead(c, argv, true)
	if !ok {
		return
	}
	db, s, slot, g, ok := xgroupArgs(c, argv, false, mk)
	if !ok {
		return
	}
	if len(argv) > 8 {
		subcommandSyntaxError(c, argv)
		return
	}
	var id streamID
	if string(argv[4]) == "$" {
		if s != nil {
			id = s.lastID
		}
	} else if id, ok = parseStreamID(argv[4], 0, true, nil); !ok {
		c.Err(errInvalidStreamID)
		return
	}
	if g != nil {
		c.Err("BUSYGROUP Consumer Group name already exists")
		return
	}
	key := argv[2]
	if s == nil {
		s = &streamObj{}
		slot = db.SetObj(key, TypeStream, EncStream, s)
	} else {
		db.Modify(slot)
	}
	g = &streamGroup{name: string(argv[3]), lastID: id, entriesRead: er}
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].name >= g.name })
	s.groups = append(s.groups, nil)
	copy(s.groups[i+1:], s.groups[i:])
	s.groups[i] = g
	c.OK()
	c.Dirty(1)
	db.Notify(NotifyStream, "xgroup-create", key)
}

func cmdXgroupSetid(c *Ctx, argv [][]byte) {
	_, er, ok := parseEntriesRead(c, argv, false)
	if !ok {
		return
	}
	db, s, slot, g, ok := xgroupArgs(c, argv, true, false)
	if !ok {
		return
	}
	if len(argv) != 5 && len(argv) != 7 {
		subcommandSyntaxError(c, argv)
		return
	}
	var id streamID
	if string(argv[4]) == "$" {
		id = s.lastID
	} else if id, ok = parseStreamID(argv[4], 0, false, nil); !ok {
		c.Err(errInvalidStreamID)
		return
	}
	db.Modify(slot)
	g.lastID, g.entriesRead = id, er
	c.OK()
	c.Dirty(1)
	db.Notify(NotifyStream, "xgroup-setid", argv[2])
}

func cmdXgroupDestroy(c *Ctx, argv [][]byte) {
	db, s, slot, g, ok := xgroupArgs(c, argv, false, false)
	if !ok {
		return
	}
	if g == nil {
		c.Int(0)
		return
	}
	db.Modify(slot)
	for i, o := range s.groups {
		if o == g {
			s.groups = append(s.groups[:i], s.groups[i+1:]...)
			break
		}
	}
	c.Int(1)
	c.Dirty(1)
	db.Notify(NotifyStream, "xgroup-destroy", argv[2])
	signalStream(db, argv[2])
}

func cmdXgroupCreateConsumer(c *Ctx, argv [][]byte) {
	db, _, slot, g, ok := xgroupArgs(c, argv, true, false)
	if !ok {
		return
	}
	db.Modify(slot)
	if g.addConsumer(argv[4], c.Now()) == nil {
		c.Int(0)
		return
	}
	c.Int(1)
	c.Dirty(1)
	db.Notify(NotifyStream, "xgroup-createconsumer", argv[2])
}

func cmdXgroupDelConsumer(c *Ctx, argv [][]byte) {
	db, _, slot, g, ok := xgroupArgs(c, argv, true, false)
	if !ok {
		return
	}
	cons := g.consumer(argv[4])
	if cons == nil {
		c.Int(0)
		return
	}
	db.Modify(slot)
	n := cons.pel.len()
	g.delConsumer(cons)
	c.Int(int64(n))
	c.Dirty(1)
	db.Notify(NotifyStream, "xgroup-delconsumer", argv[2])
}

var xgroupHelp = []string{
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
}

// replyHelp is Redis's addReplyHelp.
func replyHelp(c *Ctx, argv0 []byte, lines []string) {
	c.Array(len(lines) + 3)
	c.Simple(string(upperASCII(argv0)) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.Simple(l)
	}
	c.Simple("HELP")
	c.Simple("    Prints this help.")
}

func upperASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		if ch >= 'a' && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		out[i] = ch
	}
	return out
}

// subcommandSyntaxError is Redis's addReplySubcommandSyntaxError.
func subcommandSyntaxError(c *Ctx, argv [][]byte) {
	sub := argv[1]
	if len(sub) > 128 {
		sub = sub[:128]
	}
	c.Err("ERR unknown subcommand or wrong number of arguments for '" + string(sub) + "'. Try " +
		string(upperASCII(argv[0])) + " HELP.")
}

func cmdXgroupHelp(c *Ctx, argv [][]byte) { replyHelp(c, argv[0], xgroupHelp) }

func cmdXack(c *Ctx, argv [][]byte) {
	key := argv[1]
	db := c.DBOf(key)
	s, slot, ok := streamLookup(c, db, key, false)
	if !ok {
		return
	}
	var g *streamGroup
	if s != nil {
		g = s.group(argv[2])
	}
	if g == nil {
		c.Int(0)
		return
	}
	ids, ok := parseStreamIDs(c, argv[3:])
	if !ok {
		return
	}
	n := 0
	for _, id := range ids {
		if g.pel.find(id) == nil {
			continue
		}
		if n == 0 {
			db.Modify(slot)
		}
		g.ackID(id)
		n++
	}
	c.Dirty(n)
	c.Int(int64(n))
}

// streamNoGroup is the NOGROUP error of XPENDING, XCLAIM and XAUTOCLAIM.
func streamNoGroup(c *Ctx, key, gname []byte) {
	c.Err("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(gname) + "'")
}

// streamGroupLookup finds key's stream and its group gname, answering
// WRONGTYPE or NOGROUP (ok false) when there is none.
func streamGroupLookup(c *Ctx, db *DB, key, gname []byte) (*streamObj, int32, *streamGroup, bool) {
	s, slot, ok := streamLookup(c, db, key, false)
	if !ok {
		return nil, -1, nil, false
	}
	var g *streamGroup
	if s != nil {
		g = s.group(gname)
	}
	if g == nil {
		streamNoGroup(c, key, gname)
		return nil, -1, nil, false
	}
	return s, slot, g, true
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms]
// [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id] (Redis 7.0's xclaimCommand).
// It is logged as the XCLAIMs it amounts to, each with the resolved TIME,
// RETRYCOUNT and LASTID, FORCE and JUSTID (streamPropagateXCLAIM), or as an
// XGROUP SETID when only LASTID moved the group.
func cmdXclaim(c *Ctx, argv [][]byte) {
	key, gname := argv[1], argv[2]
	db := c.DBOf(key)
	s, slot, g, ok := streamGroupLookup(c, db, key, gname)
	if !ok {
		return
	}
	minIdle, ok := ParseInt(argv[4])
	if !ok {
		c.Err("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	if minIdle < 0 {
		minIdle = 0
	}
	// The IDs come first; the first argument that is not one starts the options.
	j := 5
	var ids []streamID
	for ; j < len(argv); j++ {
		id, ok := parseStreamID(argv[j], 0, true, nil)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := c.Now()
	deliveryTime, retry := int64(-1), int64(-1)
	force, justID := false, false
	var lastID streamID
	// intArg reads option argv[j]'s integer argument (moving j past it).
	intArg := func(what string) (int64, bool) {
		j++
		v, ok := ParseInt(argv[j])
		if !ok {
			c.Err("ERR Invalid " + what + " option argument for XCLAIM")
		}
		return v, ok
	}
	for ; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch {
		case EqualFold(argv[j], "force"):
			force = true
		case EqualFold(argv[j], "justid"):
			justID = true
		case EqualFold(argv[j], "idle") && more:
			v, ok := intArg("IDLE")
			if !ok {
				return
			}
			deliveryTime = now - v
		case EqualFold(argv[j], "time") && more:
			v, ok := intArg("TIME")
			if !ok {
				return
			}
			deliveryTime = v
		case EqualFold(argv[j], "retrycount") && more:
			v, ok := intArg("RETRYCOUNT")
			if !ok {
				return
			}
			retry = v
		case EqualFold(argv[j], "lastid") && more:
			j++
			id, ok := parseStreamID(argv[j], 0, true, nil)
			if !ok {
				c.Err(errInvalidStreamID)
				return
			}
			lastID = id
		default:
			c.Err("ERR Unrecognized XCLAIM option '" + string(argv[j]) + "'")
			return
		}
	}
	c.Prop.Custom = true // preventCommandPropagation: only what changed is logged
	modified := false
	modify := func() {
		if !modified {
			db.Modify(slot)
			modified = true
		}
	}
	propagateLast := false
	if lastID.cmp(g.lastID) > 0 {
		modify()
		g.lastID = lastID
		propagateLast = true
	}
	if deliveryTime != -1 {
		if deliveryTime < 0 || deliveryTime > now {
			deliveryTime = now
		}
	} else {
		deliveryTime = now
	}
	var cons *streamConsumer
	var body []byte
	saved := c.Out
	c.Out = body
	n := 0
	var fv [][]byte
	for k, id := range ids {
		idArg := argv[5+k]
		nk := g.pel.find(id)
		if !s.exists(id) {
			// Deleted from the stream: it leaves the pending lists.
			if nk != nil {
				modify()
				propagateXclaim(c, key, gname, g, idArg, nk)
				propagateLast = false
				g.ackID(id)
			}
			continue
		}
		if force && nk == nil {
			modify()
			nk = &streamNACK{id: id, deliveryTime: now, deliveryCount: 1}
			g.pel.insert(nk)
		}
		if nk == nil {
			continue
		}
		if nk.consumer != nil && minIdle > 0 && now-nk.deliveryTime < minIdle {
			continue
		}
		modify()
		if cons == nil {
			cons = g.lookupOrCreateConsumer(c, db, key, argv[3])
		}
		nk.giveTo(cons)
		nk.deliveryTime = deliveryTime
		if retry >= 0 {
			nk.deliveryCount = retry
		} else if !justID {
			nk.deliveryCount++
		}
		if justID {
			c.bulkID(id)
		} else {
			fv, _ = s.get(id, fv[:0])
			c.replyEntry(id, fv)
		}
		n++
		propagateXclaim(c, key, gname, g, idArg, nk)
		propagateLast = false
	}
	if propagateLast {
		propagateGroupID(c, key, gname, g)
	}
	body = c.Out
	c.Out = saved
	c.Array(n)
	c.Out = append(c.Out, body...)
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
func cmdXpending(c *Ctx, argv [][]byte) {
	key, gname := argv[1], argv[2]
	justInfo := len(argv) == 3
	if len(argv) != 3 && (len(argv) < 6 || len(argv) > 9) {
		c.Err(ErrSyntax)
		return
	}
	var start, end streamID
	var count, minIdle int64
	var consName []byte
	if len(argv) >= 6 {
		si := 3
		if EqualFold(argv[3], "idle") {
			v, ok := ParseInt(argv[4])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			minIdle = v
			if len(argv) < 8 {
				c.Err(ErrSyntax)
				return
			}
			si += 2
		}
		v, ok := ParseInt(argv[si+2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		count = max(v, 0)
		var ex bool
		if start, ex, ok = parseIntervalID(c, argv[si], 0); !ok {
			return
		}
		if ex {
			if start, ok = start.incr(); !ok {
				c.Err("ERR invalid start ID for the interval")
				return
			}
		}
		if end, ex, ok = parseIntervalID(c, argv[si+1], math.MaxUint64); !ok {
			return
		}
		if ex {
			if end, ok = end.decr(); !ok {
				c.Err("ERR invalid end ID for the interval")
				return
			}
		}
		if si+3 < len(argv) {
			consName = argv[si+3]
		}
	}
	db := c.DBOf(key)
	_, _, g, ok := streamGroupLookup(c, db, key, gname)
	if !ok {
		return
	}
	if justInfo {
		c.Array(4)
		c.Int(int64(g.pel.len()))
		if g.pel.len() == 0 {
			c.Null()
			c.Null()
			c.NullArray()
			return
		}
		c.bulkID(g.pel.first().id)
		c.bulkID(g.pel.last().id)
		n := 0
		for _, cons := range g.consumers {
			if cons.pel.len() > 0 {
				n++
			}
		}
		c.Array(n)
		for _, cons := range g.consumers {
			if cons.pel.len() > 0 {
				c.Array(2)
				c.BulkStr(cons.name)
				c.BulkStr(strconv.Itoa(cons.pel.len()))
			}
		}
		return
	}
	pel := &g.pel
	if consName != nil {
		cons := g.consumer(consName)
		if cons == nil {
			c.Array(0)
			return
		}
		pel = &cons.pel
	}
	now := c.Now()
	var body []byte
	saved := c.Out
	c.Out = body
	n := 0
	if count > 0 {
		pel.ascend(start, func(nk *streamNACK) bool {
			if nk.id.cmp(end) > 0 {
				return false
			}
			if minIdle != 0 && now-nk.deliveryTime < minIdle {
				return true
			}
			c.Array(4)
			c.bulkID(nk.id)
			c.BulkStr(nk.consumer.name)
			c.Int(max(now-nk.deliveryTime, 0))
			c.Int(nk.deliveryCount)
			n++
			return int64(n) < count
		})
	}
	body = c.Out
	c.Out = saved
	c.Array(n)
	c.Out = append(c.Out, body...)
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
// Reply: the next cursor, the claimed entries (or IDs), the IDs that were
// pending but no longer exist in the stream (dropped from the PEL). Logged as
// one XCLAIM per claimed or dropped entry, as Redis 7.0 does.
func cmdXautoclaim(c *Ctx, argv [][]byte) {
	key, gname := argv[1], argv[2]
	minIdle, ok := ParseInt(argv[4])
	if !ok {
		c.Err("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	if minIdle < 0 {
		minIdle = 0
	}
	start, ex, ok := parseIntervalID(c, argv[5], 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = start.incr(); !ok {
			c.Err("ERR invalid start ID for the interval")
			return
		}
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch {
		case EqualFold(argv[j], "count") && more:
			v, ok := ParseInt(argv[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.Err("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case EqualFold(argv[j], "justid"):
			justID = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	db := c.DBOf(key)
	s, slot, g, ok := streamGroupLookup(c, db, key, gname)
	if !ok {
		return
	}
	c.Prop.Custom = true // preventCommandPropagation
	modified := false
	modify := func() {
		if !modified {
			db.Modify(slot)
			modified = true
		}
	}
	attempts := count * 10
	now := c.Now()
	var cons *streamConsumer
	var deleted []streamID
	var body []byte
	saved := c.Out
	c.Out = body
	n := 0
	cur, eof := start, false
	var fv [][]byte
	for attempts > 0 && count > 0 {
		attempts--
		nk := g.pel.seek(cur)
		if nk == nil {
			eof = true
			break
		}
		id := nk.id
		if cur, ok = id.incr(); !ok {
			eof = true // nothing can follow the largest ID
		}
		if !s.exists(id) {
			modify()
			propagateXclaim(c, key, gname, g, id.bytes(), nk)
			g.ackID(id)
			deleted = append(deleted, id)
			count--
		} else if minIdle == 0 || now-nk.deliveryTime >= minIdle {
			modify()
			if cons == nil {
				cons = g.lookupOrCreateConsumer(c, db, key, argv[3])
			}
			nk.giveTo(cons)
			nk.deliveryTime = now
			if !justID {
				nk.deliveryCount++
			}
			if justID {
				c.bulkID(id)
			} else {
				fv, _ = s.get(id, fv[:0])
				c.replyEntry(id, fv)
			}
			n++
			count--
			propagateXclaim(c, key, gname, g, id.bytes(), nk)
		}
		if eof {
			break
		}
	}
	var next streamID
	if !eof {
		if nk := g.pel.seek(cur); nk != nil {
			next = nk.id
		}
	}
	body = c.Out
	c.Out = saved
	c.Array(3)
	c.bulkID(next)
	c.Array(n)
	c.Out = append(c.Out, body...)
	c.Array(len(deleted))
	for _, id := range deleted {
		c.bulkID(id)
	}
}
