package lua

import (
	"hash/maphash"

	glua "github.com/yuin/gopher-lua"
)

// internCache turns short byte strings (KEYS, ARGV, bulk replies) into Lua
// strings, handing back the value made last time for the same bytes: a
// Lua string is immutable, so sharing it is safe, and a hit saves the two
// allocations (the string and its interface box) of a fresh one. It is
// direct-mapped: a miss replaces the slot's entry.
type internCache struct {
	seed  maphash.Seed
	slots [256]internSlot
}

type internSlot struct {
	s string
	v glua.LValue
}

const internMaxLen = 64

func (c *internCache) init() { c.seed = maphash.MakeSeed() }

func (c *internCache) str(b []byte) glua.LValue {
	if len(b) > internMaxLen {
		return glua.LString(b)
	}
	slot := &c.slots[maphash.Bytes(c.seed, b)%uint64(len(c.slots))]
	if slot.v != nil && slot.s == string(b) {
		return slot.v
	}
	s := string(b)
	slot.s, slot.v = s, glua.LString(s)
	return slot.v
}
