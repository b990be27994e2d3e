package shard

// MEMORY USAGE key [SAMPLES count]: the bytes the key and its value take, as
// the shard accounts for them (evict.go): the slab slots of the key (and a
// string value), the per-key overhead and a non-string value's Mem(). The
// count is exact, so SAMPLES is accepted and checked but changes nothing.
func cmdMemoryUsage(c *Ctx, argv [][]byte) {
	for j := 3; j < len(argv); j++ {
		if EqualFold(argv[j], "samples") && j+1 < len(argv) {
			n, ok := ParseInt(argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if n < 0 {
				c.Err(ErrSyntax)
				return
			}
			j++
			continue
		}
		c.Err(ErrSyntax)
		return
	}
	db, slot := objectLookup(c, argv)
	if slot < 0 {
		return
	}
	c.Int(db.MemUsage(slot))
}

// MemUsage is a key's share of UsedMemory.
func (db *DB) MemUsage(slot int32) int64 {
	e := db.at(slot)
	n := int64(keyOverhead)
	if e.typ == TypeString {
		return n + int64(db.sh.Slab.Cap(e.kv, int(e.klen)+int(e.vlen)))
	}
	return n + int64(db.sh.Slab.Cap(e.kv, int(e.klen))) + int64(db.sh.objs[e.vlen].Mem())
}

var memoryCommands = []Command{
	{Name: "memory|usage", Run: cmdMemoryUsage},
}
