package server

import (
	"strconv"

	"github.com/redshard/redshard/shard"
)

// debugPopulate is DEBUG POPULATE <count> [<prefix>] [<size>] (Redis's
// debug.c): it creates string keys <prefix>:0 .. <prefix>:<count-1> (prefix
// "key") with values "value:<n>", cut or padded with zero bytes to <size>
// when a size is given, skipping names that exist. Like Redis it neither
// logs the keys to the AOF nor fires notifications. It runs with every loop
// parked, as the keys fall on every shard.
func debugPopulate(x *Exec, argv [][]byte) {
	// getPositiveLongFromObjectOrReply: one error for both a non-number
	// and a negative one.
	const errPositive = "ERR value is out of range, must be positive"
	count, ok := shard.ParseInt(argv[2])
	if !ok || count < 0 {
		x.Err(errPositive)
		return
	}
	size := int64(0)
	if len(argv) == 5 {
		if size, ok = shard.ParseInt(argv[4]); !ok || size < 0 {
			x.Err(errPositive)
			return
		}
	}
	prefix := []byte("key")
	if len(argv) >= 4 {
		prefix = argv[3]
	}
	key := append([]byte(nil), prefix...)
	key = append(key, ':')
	base := len(key)
	var val []byte
	if size > 0 {
		val = make([]byte, size)
	}
	var num []byte
	for j := int64(0); j < count; j++ {
		key = strconv.AppendInt(key[:base], j, 10)
		db := x.DBOf(key)
		if db.Write(key) >= 0 {
			continue
		}
		num = append(append(num[:0], "value:"...), strconv.AppendInt(nil, j, 10)...)
		if size == 0 {
			db.SetStr(key, num, false)
			continue
		}
		n := copy(val, num)
		clear(val[n:])
		db.SetStr(key, val, false)
	}
	x.OK()
}
