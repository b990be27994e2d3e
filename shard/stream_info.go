package shard

import "math"

// XINFO and XSETID (Redis 7.0's xinfoCommand, xsetidCommand).

var xinfoHelp = []string{
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
}

func cmdXinfoHelp(c *Ctx, argv [][]byte) { replyHelp(c, argv[0], xinfoHelp) }

// xinfoLookup is lookupKeyReadOrReply(nokeyerr) plus the type check.
func xinfoLookup(c *Ctx, key []byte) (*streamObj, bool) {
	db := c.DBOf(key)
	s, _, ok := streamLookup(c, db, key, false)
	if !ok {
		return nil, false
	}
	if s == nil {
		c.Err(ErrNoSuchKey)
		return nil, false
	}
	return s, true
}

// replyGroupLag is streamReplyWithCGLag: the entries not yet delivered to
// the group, or null when fragmentation makes it unknowable.
func replyGroupLag(c *Ctx, s *streamObj, g *streamGroup) {
	switch {
	case s.entriesAdded == 0:
		c.Int(0)
	case g.entriesRead != -1 && !s.hasTombstones(&g.lastID, nil):
		c.Int(s.entriesAdded - g.entriesRead)
	default:
		if er := s.estimateDistance(g.lastID); er != -1 {
			c.Int(s.entriesAdded - er)
		} else {
			c.Null()
		}
	}
}

func replyEntriesRead(c *Ctx, g *streamGroup) {
	if g.entriesRead != -1 {
		c.Int(g.entriesRead)
	} else {
		c.Null()
	}
}

// radixNodes estimates the nodes of the radix tree Redis would hold for
// this many keys (XINFO's radix-tree-nodes; nothing depends on its value).
func radixNodes(keys int) int64 {
	if keys == 0 {
		return 1
	}
	return int64(keys) + int64(keys)/2 + 1
}

// XINFO STREAM key [FULL [COUNT count]]
func cmdXinfoStream(c *Ctx, argv [][]byte) {
	// Redis looks the key up before it parses the options.
	s, ok := xinfoLookup(c, argv[2])
	if !ok {
		return
	}
	full := false
	count := int64(10)
	opts := argv[3:]
	if len(opts) > 0 {
		if len(opts) != 1 && len(opts) != 3 || !EqualFold(opts[0], "full") {
			subcommandSyntaxError(c, argv)
			return
		}
		if len(opts) == 3 {
			if !EqualFold(opts[1], "count") {
				subcommandSyntaxError(c, argv)
				return
			}
			v, ok := ParseInt(opts[2])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 {
				v = 10
			}
			count = v
		}
		full = true
	}
	if full {
		c.Map(9)
	} else {
		c.Map(10)
	}
	c.BulkStr("length")
	c.Int(s.length)
	c.BulkStr("radix-tree-keys")
	c.Int(int64(s.nodeCount()))
	c.BulkStr("radix-tree-nodes")
	c.Int(radixNodes(s.nodeCount()))
	c.BulkStr("last-generated-id")
	c.bulkID(s.lastID)
	c.BulkStr("max-deleted-entry-id")
	c.bulkID(s.maxDeletedID)
	c.BulkStr("entries-added")
	c.Int(s.entriesAdded)
	c.BulkStr("recorded-first-entry-id")
	c.bulkID(s.firstID)
	all := streamID{math.MaxUint64, math.MaxUint64}
	if !full {
		c.BulkStr("groups")
		c.Int(int64(len(s.groups)))
		for _, rev := range []bool{false, true} {
			if rev {
				c.BulkStr("last-entry")
			} else {
				c.BulkStr("first-entry")
			}
			emitted := false
			s.each(streamID{}, all, rev, func(id streamID, fv [][]byte) bool {
				c.replyEntry(id, fv)
				emitted = true
				return false
			})
			if !emitted {
				c.Null()
			}
		}
		return
	}
	c.BulkStr("entries")
	streamReplyRange(c, s, streamID{}, all, count, false)
	c.BulkStr("groups")
	c.Array(len(s.groups))
	for _, g := range s.groups {
		c.Map(7)
		c.BulkStr("name")
		c.BulkStr(g.name)
		c.BulkStr("last-delivered-id")
		c.bulkID(g.lastID)
		c.BulkStr("entries-read")
		replyEntriesRead(c, g)
		c.BulkStr("lag")
		replyGroupLag(c, s, g)
		c.BulkStr("pel-count")
		c.Int(int64(g.pel.len()))
		c.BulkStr("pending")
		replyFullPEL(c, &g.pel, count, true)
		c.BulkStr("consumers")
		c.Array(len(g.consumers))
		for _, cons := range g.consumers {
			c.Map(4)
			c.BulkStr("name")
			c.BulkStr(cons.name)
			c.BulkStr("seen-time")
			c.Int(cons.seenTime)
			c.BulkStr("pel-count")
			c.Int(int64(cons.pel.len()))
			c.BulkStr("pending")
			replyFullPEL(c, &cons.pel, count, false)
		}
	}
}

// XINFO GROUPS key
func cmdXinfoGroups(c *Ctx, argv [][]byte) {
	s, ok := xinfoLookup(c, argv[2])
	if !ok {
		return
	}
	c.Array(len(s.groups))
	for _, g := range s.groups {
		c.Map(6)
		c.BulkStr("name")
		c.BulkStr(g.name)
		c.BulkStr("consumers")
		c.Int(int64(len(g.consumers)))
		c.BulkStr("pending")
		c.Int(int64(g.pel.len()))
		c.BulkStr("last-delivered-id")
		c.bulkID(g.lastID)
		c.BulkStr("entries-read")
		replyEntriesRead(c, g)
		c.BulkStr("lag")
		replyGroupLag(c, s, g)
	}
}

// XINFO CONSUMERS key group
func cmdXinfoConsumers(c *Ctx, argv [][]byte) {
	key := argv[2]
	s, ok := xinfoLookup(c, key)
	if !ok {
		return
	}
	g := s.group(argv[3])
	if g == nil {
		c.Err("NOGROUP No such consumer group '" + string(argv[3]) + "' for key name '" + string(key) + "'")
		return
	}
	now := c.Now()
	c.Array(len(g.consumers))
	for _, cons := range g.consumers {
		c.Map(3)
		c.BulkStr("name")
		c.BulkStr(cons.name)
		c.BulkStr("pending")
		c.Int(int64(cons.pel.len()))
		c.BulkStr("idle")
		c.Int(max(now-cons.seenTime, 0))
	}
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
func cmdXsetid(c *Ctx, argv [][]byte) {
	id, ok := parseStreamID(argv[2], 0, true, nil)
	if !ok {
		c.Err(errInvalidStreamID)
		return
	}
	entriesAdded := int64(-1)
	var maxDel streamID
	for i := 3; i < len(argv); i += 2 {
		more := i+1 < len(argv)
		switch {
		case EqualFold(argv[i], "entriesadded") && more:
			v, ok := ParseInt(argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 {
				c.Err("ERR entries_added must be positive")
				return
			}
			entriesAdded = v
		case EqualFold(argv[i], "maxdeletedid") && more:
			v, ok := parseStreamID(argv[i+1], 0, true, nil)
			if !ok {
				c.Err(errInvalidStreamID)
				return
			}
			if id.cmp(v) < 0 {
				c.Err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = v
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	key := argv[1]
	db := c.DBOf(key)
	s, slot, ok := streamLookup(c, db, key, true)
	if !ok {
		return
	}
	if s == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if s.length > 0 {
		if id.cmp(s.lastValid()) < 0 {
			c.Err("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.length > entriesAdded {
			c.Err("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	db.Modify(slot)
	s.lastID = id
	if entriesAdded != -1 {
		s.entriesAdded = entriesAdded
	}
	if !maxDel.isZero() {
		s.maxDeletedID = maxDel
	}
	c.OK()
	c.Dirty(1)
	db.Notify(NotifyStream, "xsetid", key)
}

// replyFullPEL is XINFO STREAM FULL's list of pending entries (at most
// count when positive): ID, the consumer's name (a group's list), delivery
// time and count.
func replyFullPEL(c *Ctx, pel *streamPEL, count int64, withConsumer bool) {
	n := pel.len()
	if count > 0 && int64(n) > count {
		n = int(count)
	}
	c.Array(n)
	k := 0
	pel.each(func(nk *streamNACK) bool {
		if k == n {
			return false
		}
		k++
		if withConsumer {
			c.Array(4)
			c.bulkID(nk.id)
			c.BulkStr(nk.consumer.name)
		} else {
			c.Array(3)
			c.bulkID(nk.id)
		}
		c.Int(nk.deliveryTime)
		c.Int(nk.deliveryCount)
		return true
	})
}
