package shard

import (
	"math"
	"sort"
	"strconv"
)

// Consumer groups of streams: groups, consumers, their pending entries
// lists, and the commands on them.

type streamNACK struct {
	deliveryTime  int64
	deliveryCount int64
	consumer      *streamConsumer
}

type streamConsumer struct {
	name     string
	seenTime int64
	pel      map[streamID]*streamNACK
}

type streamGroup struct {
	name        string
	lastID      streamID
	entriesRead int64 // -1: invalid
	pel         map[streamID]*streamNACK
	consumers   []*streamConsumer // sorted by name
}

func (g *streamGroup) sortedPEL(pel map[streamID]*streamNACK) []streamID {
	ids := make([]streamID, 0, len(pel))
	for id := range pel {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].cmp(ids[j]) < 0 })
	return ids
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
	c := &streamConsumer{name: string(name), seenTime: now, pel: map[streamID]*streamNACK{}}
	g.consumers = append(g.consumers, nil)
	copy(g.consumers[i+1:], g.consumers[i:])
	g.consumers[i] = c
	return c
}

func (g *streamGroup) delConsumer(c *streamConsumer) {
	for id := range c.pel {
		delete(g.pel, id)
	}
	for i, o := range g.consumers {
		if o == c {
			g.consumers = append(g.consumers[:i], g.consumers[i+1:]...)
			return
		}
	}
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
		ids := g.sortedPEL(cons.pel)
		var out []streamID
		for _, id := range ids {
			if id.cmp(start) >= 0 {
				out = append(out, id)
			}
		}
		if count > 0 && int64(len(out)) > count {
			out = out[:count]
		}
		c.Array(len(out))
		var fv [][]byte
		for _, id := range out {
			var ok bool
			if fv, ok = s.get(id, fv[:0]); !ok {
				c.Array(2)
				c.bulkID(id)
				c.NullArray()
				continue
			}
			c.replyEntry(id, fv)
			nk := cons.pel[id]
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
			nk := g.pel[id]
			if nk == nil {
				nk = &streamNACK{deliveryTime: now, deliveryCount: 1, consumer: cons}
				g.pel[id] = nk
				cons.pel[id] = nk
			} else {
				delete(nk.consumer.pel, id)
				nk.consumer = cons
				nk.deliveryTime = now
				nk.deliveryCount = 1
				cons.pel[id] = nk
			}
			propagateXclaim(c, key, gname, g, id, nk)
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

func propagateXclaim(c *Ctx, key, gname []byte, g *streamGroup, id streamID, nk *streamNACK) {
	c.Propagate([]byte("XCLAIM"), key, gname, []byte(nk.consumer.name), []byte("0"), id.bytes(),
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
	g = &streamGroup{name: string(argv[3]), lastID: id, entriesRead: er, pel: map[streamID]*streamNACK{}}
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
	n := len(cons.pel)
	g.delConsumer(cons)
	c.Int(int64(n))
	c.Dirty(1)
	db.Notify(NotifyStream, "xgroup-delconsumer", argv[2])
}

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
		nk := g.pel[id]
		if nk == nil {
			continue
		}
		if n == 0 {
			db.Modify(slot)
		}
		delete(g.pel, id)
		delete(nk.consumer.pel, id)
		n++
	}
	c.Dirty(n)
	c.Int(int64(n))
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms]
// [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id] (Redis 7.0's xclaimCommand).
// It is logged as the XCLAIMs it amounts to, each with the resolved TIME,
// RETRYCOUNT and LASTID, FORCE and JUSTID (streamPropagateXCLAIM).
func cmdXclaim(c *Ctx, argv [][]byte) {
	key, gname := argv[1], argv[2]
	db := c.DBOf(key)
	s, slot, ok := streamLookup(c, db, key, true)
	if !ok {
		return
	}
	var g *streamGroup
	if s != nil {
		g = s.group(gname)
	}
	minIdle, err := strconv.ParseInt(string(argv[4]), 10, 64)
	if err != nil {
		c.Err("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	if minIdle < 0 {
		minIdle = 0
	}
	now := c.Now()
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
	lastIDArg := j
	deliveryTime, retry := int64(-1), int64(-1)
	force, justID := false, false
	var lastID streamID
	haveLast := false
	for ; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch {
		case EqualFold(argv[j], "force"):
			force = true
		case EqualFold(argv[j], "justid"):
			justID = true
		case EqualFold(argv[j], "idle") && more:
			j++
			v, err := strconv.ParseInt(string(argv[j]), 10, 64)
			if err != nil {
				c.Err("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			deliveryTime = now - v
		case EqualFold(argv[j], "time") && more:
			j++
			v, err := strconv.ParseInt(string(argv[j]), 10, 64)
			if err != nil {
				c.Err("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			deliveryTime = v
		case EqualFold(argv[j], "retrycount") && more:
			j++
			v, err := strconv.ParseInt(string(argv[j]), 10, 64)
			if err != nil {
				c.Err("ERR Invalid RETRYCOUNT option argument for XCLAIM")
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
			lastID, haveLast = id, true
		default:
			if j == lastIDArg && len(ids) == 0 {
				c.Err(errInvalidStreamID)
				return
			}
			c.Err("ERR Unrecognized XCLAIM option '" + string(argv[j]) + "'")
			return
		}
	}
	if g == nil {
		c.Err("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(gname) + "'")
		return
	}
	if deliveryTime != -1 && deliveryTime > now {
		deliveryTime = now // in the future: now, as Redis does
	} else if deliveryTime == -1 {
		deliveryTime = now
	}
	db.Modify(slot)
	if haveLast && lastID.cmp(g.lastID) > 0 {
		g.lastID = lastID
	}
	cons := g.consumer(argv[3])
	var body []byte
	saved := c.Out
	c.Out = body
	n := 0
	var fv [][]byte
	for _, id := range ids {
		nk := g.pel[id]
		exists := s.exists(id)
		if nk == nil && force && exists {
			if cons == nil {
				cons = g.addConsumer(argv[3], now)
			}
			nk = &streamNACK{deliveryTime: now, consumer: cons}
			g.pel[id] = nk
			cons.pel[id] = nk
		}
		if nk == nil {
			continue
		}
		if !exists {
			// Deleted from the stream: it leaves the pending lists.
			delete(g.pel, id)
			delete(nk.consumer.pel, id)
			c.Propagate([]byte("XCLAIM"), key, gname, []byte(nk.consumer.name), []byte("0"), id.bytes(),
				[]byte("TIME"), []byte(strconv.FormatInt(nk.deliveryTime, 10)), []byte("RETRYCOUNT"),
				[]byte(strconv.FormatInt(nk.deliveryCount, 10)), []byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.lastID.bytes())
			continue
		}
		if minIdle > 0 && now-nk.deliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons = g.addConsumer(argv[3], now)
		}
		if nk.consumer != cons {
			delete(nk.consumer.pel, id)
			nk.consumer = cons
			cons.pel[id] = nk
		}
		nk.deliveryTime = deliveryTime
		if retry >= 0 {
			nk.deliveryCount = retry
		} else if !justID {
			nk.deliveryCount++
		}
		cons.seenTime = now
		if justID {
			c.bulkID(id)
		} else {
			fv, _ = s.get(id, fv[:0])
			c.replyEntry(id, fv)
		}
		n++
		propagateXclaim(c, key, gname, g, id, nk)
	}
	body = c.Out
	c.Out = saved
	c.Array(n)
	c.Out = append(c.Out, body...)
	c.Prop.Custom = true
	c.Prop.Dirty++
}
