package shard

// Lazy freeing, as INFO's lazyfreed_objects counts it.
//
// Redis frees a deleted value in its lazyfree thread instead of the main
// thread when the deletion asks for it (UNLINK; DEL with
// lazyfree-lazy-user-del, expiry with lazyfree-lazy-expire, eviction with
// lazyfree-lazy-eviction) and freeing it would cost more than
// LAZYFREE_THRESHOLD allocations (lazyfreeGetFreeEffort); a FLUSHALL or
// FLUSHDB ASYNC (or any with lazyfree-lazy-user-flush) hands over whole
// databases, every key counted. redshard frees nothing itself: a deleted
// value goes to Go's collector, which frees it concurrently, whatever the
// path. Stats.LazyFreed counts the values Redis's thread would have freed,
// so that lazyfreed_objects reads as it does there (lazyfree_pending_objects
// is always 0: nothing waits). Under lazyfree-lazy-server-del the server's
// own deletions count too: DB.Delete (a key overwritten by RENAME, MOVE,
// RESTORE REPLACE, a *STORE, a SET of another type, ...) and a string
// written over a collection.

// lazyfreeThreshold is Redis's LAZYFREE_THRESHOLD.
const lazyfreeThreshold = 64

// freeEffort is Redis's lazyfreeGetFreeEffort for the value at slot: the
// allocations freeing it would take. A compact encoding is one; a
// quicklist counts its nodes; a hash table, skiplist or set table its
// elements; a stream its nodes (Redis counts its radix tree's nodes, of
// which there are at least as many), plus, per consumer group, one and
// the first group's pending entries.
func (db *DB) freeEffort(slot int32) int {
	e := db.at(slot)
	if e.typ == TypeString {
		return 1
	}
	switch v := db.sh.objs[e.vlen].(type) {
	case *List:
		if e.enc == EncQuicklist {
			return v.nodes
		}
	case *setObj:
		if v.ht != nil {
			return v.len()
		}
	case *zset:
		if v.sl != nil {
			return v.sl.n
		}
	case *hashObj:
		if v.ht != nil {
			return v.ht.n
		}
	case *streamObj:
		n := len(v.nodes)
		if len(v.groups) > 0 {
			n += len(v.groups) * (1 + v.groups[0].pel.len())
		}
		return n
	}
	return 1
}

// countLazy counts the value at slot, about to be freed by a lazy
// deletion, if Redis would have handed it to its thread (freeObjAsync).
func (db *DB) countLazy(slot int32) {
	if db.freeEffort(slot) > lazyfreeThreshold {
		db.sh.Stats.LazyFreed++
	}
}

// deleteMaybeLazy deletes the key at slot, as a lazy deletion (Redis's
// dbAsyncDelete) when lazy, else as a synchronous one whatever
// lazyfree-lazy-server-del says (dbSyncDelete).
func (db *DB) deleteMaybeLazy(slot int32, lazy bool) {
	if lazy {
		db.countLazy(slot)
	}
	db.unlink(slot, true)
}

// flushIsAsync reports whether FLUSHALL or FLUSHDB with argv frees its
// databases in the background in Redis (getFlushCommandFlags).
func flushIsAsync(c *Ctx, argv [][]byte) bool {
	if len(argv) > 1 {
		return EqualFold(argv[1], "async")
	}
	return len(c.Shards) > 0 && c.Shards[0].Cfg.LazyUserFlush.Load()
}
