package shard

// Blocking sorted set pops (Redis 7.0 t_zset.c's blockingGenericZpopCommand
// and blocked.c's serveClientsBlockedOnSortedSetKey): BZPOPMIN, BZPOPMAX and
// BZMPOP. They pop at once when a key holds a sorted set; otherwise they
// call Ctx.Block and the server parks the client (server/blocking.go) until
// a sorted set is added at one of the keys, then runs the command again
// with Ctx.ServeKey set, so that it pops from that key only. Inside
// MULTI/EXEC they answer as on a timeout. They are logged as Redis
// propagates them: ZPOPMIN/ZPOPMAX key, with the count popped for BZMPOP.

var zsetBlockingCommands = []Command{
	{Name: "bzpopmin", Run: cmdBzpopmin},
	{Name: "bzpopmax", Run: cmdBzpopmax},
	{Name: "bzmpop", Run: cmdBzmpop},
}

// BZPOPMIN key [key ...] timeout
func cmdBzpopmin(c *Ctx, argv [][]byte) { bzpopMinMax(c, argv, false) }

// BZPOPMAX key [key ...] timeout
func cmdBzpopmax(c *Ctx, argv [][]byte) { bzpopMinMax(c, argv, true) }

func bzpopMinMax(c *Ctx, argv [][]byte, max bool) {
	deadline, ok := BlockTimeout(c, argv[len(argv)-1])
	if !ok {
		return
	}
	blockingZpop(c, argv[1:len(argv)-1], max, -1, deadline)
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
func cmdBzmpop(c *Ctx, argv [][]byte) {
	// Redis checks the arguments before the timeout.
	keys, max, count, ok := parseZmpop(c, argv, 2)
	if !ok {
		return
	}
	deadline, ok := BlockTimeout(c, argv[1])
	if !ok {
		return
	}
	blockingZpop(c, keys, max, count, deadline)
}

// blockingZpop pops from the first of keys that holds a sorted set (only
// from c.ServeKey when the server serves a blocked client) or blocks. count
// -1 is BZPOPMIN/BZPOPMAX (one element, replied key member score); else
// BZMPOP's count and reply (key [[member score] ...]).
func blockingZpop(c *Ctx, keys [][]byte, max bool, count int, deadline int64) {
	for _, key := range keys {
		if c.ServeKey != nil && string(key) != string(c.ServeKey) {
			continue
		}
		db := c.DBOf(key)
		slot := db.Write(key)
		if slot < 0 {
			continue
		}
		if db.Type(slot) != TypeZSet {
			if c.ServeKey != nil {
				break // not a sorted set: stay blocked
			}
			c.Err(ErrWrongType)
			return
		}
		if count < 0 {
			n := zsetPop(c, db, key, slot, max, 1, zpopKeyFlat)
			zsetPopPropagate(c, key, max, n, false)
		} else {
			n := zsetPop(c, db, key, slot, max, count, zpopKeyNested)
			zsetPopPropagate(c, key, max, n, true)
		}
		return
	}
	if c.InMulti {
		c.NullArray()
		return
	}
	c.Block(deadline, keys)
}
