package shard

import (
	"strings"
	"testing"
)

// TestBitAndHLLCommandsDoNotAllocate: the hot commands reuse the reply
// buffer and edit values in place.
func TestBitAndHLLCommandsDoNotAllocate(t *testing.T) {
	c := newStringCtx(1)
	bitsDo(t, c, "SETBIT", "b", "100000", "1")
	bitsDo(t, c, "PFADD", "sparse", "a", "b", "c")
	bitsDo(t, c, seqArgs("PFADD", "dense", 1, 20000)...)
	for _, cmd := range []string{
		"SETBIT b 777 1", "GETBIT b 777", "BITCOUNT b", "BITCOUNT b 10 -10 BIT", "BITPOS b 1 3", "BITPOS b 0 3 100 BIT", "PFMERGE sparse dense",
		"BITFIELD b INCRBY u8 #3 1 GET i16 5", "BITFIELD_RO b GET u8 0",
		"PFADD sparse x", "PFADD dense x y z", "PFADD dense q", "PFCOUNT dense", "PFCOUNT sparse",
	} {
		args := strings.Fields(cmd)
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		run := bitsCmdTable[strings.ToLower(args[0])]
		n := testing.AllocsPerRun(100, func() {
			c.Out = c.Out[:0]
			c.Prop.Reset()
			run(c, argv)
		})
		if n != 0 {
			t.Errorf("%s: %.1f allocations per run", cmd, n)
		}
	}
}
