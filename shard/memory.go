package shard

// MEMORY USAGE (Redis 7.0 object.c). The Redis test suites call it on every
// data type (util.tcl's memory_usage), so it lives beside the types.

var memoryCommands = []Command{
	{Name: "memory|usage", Run: cmdMemoryUsage},
}

// entryMem is what a key costs beside its name and value: its keyspace
// entry and index slot.
const entryMem = 48 + 8

// MEMORY USAGE key [SAMPLES count]: the approximate bytes of the key, its
// value and its keyspace entry, or null. Values report their size exactly
// (Mem is O(1)), so SAMPLES is parsed and checked but changes nothing. Like
// Redis it finds the key without expiring it or counting a hit.
func cmdMemoryUsage(c *Ctx, argv [][]byte) {
	for j := 3; j < len(argv); j++ {
		if !EqualFold(argv[j], "samples") || j+1 >= len(argv) {
			c.Err(ErrSyntax)
			return
		}
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
	}
	key := argv[2]
	db := c.DBOf(key)
	slot := db.Peek(key)
	if slot < 0 {
		c.Null()
		return
	}
	size := entryMem + len(key)
	if db.Type(slot) == TypeString {
		size += len(db.Str(slot))
	} else {
		size += db.Obj(slot).Mem()
	}
	c.Int(int64(size))
}
