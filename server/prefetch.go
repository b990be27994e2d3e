package server

import "github.com/redshard/redshard/shard"

// Batch prefetch (shard.DB.Prefetch): before a client's pipelined commands
// run, the keys of the next few are found with a light scan of the input
// and their lookups' cache lines are loaded together, so that the commands
// then run out of the cache instead of waiting for memory one at a time.

// prefetch scans the multibulk commands at the start of data and warms
// the lookups they are about to make: when the client's database is big
// and there are at least two, the keys (second arguments) that live on this
// loop's shard; and when at least two are hash commands on one big hash,
// their fields (third arguments). It returns how many bytes it looked at,
// so that the caller does not scan them again.
func (cl *Client) prefetch(data []byte) int {
	l := cl.loop
	if cl.db >= len(l.sh.DBs) {
		return len(data)
	}
	db := l.sh.DBs[cl.db]
	bigDB := db.PrefetchWorth()
	if !bigDB {
		// A small database stays in the caches; only the fields of a big
		// hash may be worth warming, and only if the batch starts on one.
		if name, _, _, n := scanCmd(data); n == 0 || !isHashFieldCmd(name) {
			return len(data)
		}
	}
	keys, fields := l.pfKeys[:0], l.pfFields[:0]
	var fkey []byte
	oneKey := true
	pos := 0
	for cmds := 0; cmds < 4*shard.PrefetchMax && len(keys) < shard.PrefetchMax && len(fields) < shard.PrefetchMax; cmds++ {
		name, key, arg3, n := scanCmd(data[pos:])
		if n == 0 {
			break
		}
		pos += n
		if key == nil || len(l.srv.shards) > 1 && shard.ShardOf(key, len(l.srv.shards)) != l.id {
			continue
		}
		if bigDB {
			keys = append(keys, key)
		}
		if arg3 != nil && isHashFieldCmd(name) {
			if fkey == nil {
				fkey = key
			} else if string(fkey) != string(key) {
				oneKey = false
			}
			fields = append(fields, arg3)
		}
	}
	if len(keys) >= 2 {
		l.pfSink += db.Prefetch(keys)
	}
	if len(fields) >= 2 && oneKey {
		l.pfSink += db.PrefetchFields(fkey, fields)
	}
	l.pfKeys, l.pfFields = keys[:0], fields[:0]
	return pos
}

// isHashFieldCmd reports whether a command looks up the field that is its
// third argument in the hash that is its second.
func isHashFieldCmd(name []byte) bool {
	if len(name) < 4 || name[0]|0x20 != 'h' {
		return false
	}
	for _, c := range [...]string{"hset", "hget", "hsetnx", "hexists", "hdel", "hincrby", "hincrbyfloat", "hstrlen", "hmget", "hmset"} {
		if shard.EqualFold(name, c) {
			return true
		}
	}
	return false
}

// scanCmd reads one complete multibulk command at the start of data and
// returns its first three arguments (nil where it has fewer) and its
// length; n is 0 when data does not start with a whole, well-formed
// command (the parser then reports what is wrong, if anything).
func scanCmd(data []byte) (name, key, arg3 []byte, n int) {
	count, p := scanNum(data, '*')
	if p == 0 || count < 1 || count > 1<<20 {
		return nil, nil, nil, 0
	}
	for i := 0; i < count; i++ {
		ln, q := scanNum(data[p:], '$')
		if q == 0 || ln < 0 {
			return nil, nil, nil, 0
		}
		p += q
		if ln > len(data)-p-2 || data[p+ln] != '\r' || data[p+ln+1] != '\n' {
			return nil, nil, nil, 0
		}
		switch i {
		case 0:
			name = data[p : p+ln]
		case 1:
			key = data[p : p+ln]
		case 2:
			arg3 = data[p : p+ln]
		}
		p += ln + 2
	}
	return name, key, arg3, p
}

// scanNum reads "<prefix><digits>\r\n" and returns the number and the
// bytes read (0 when the line is not that, or not complete).
func scanNum(b []byte, prefix byte) (v, n int) {
	if len(b) < 4 || b[0] != prefix {
		return 0, 0
	}
	i := 1
	for ; i < len(b) && i < 12; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int(c-'0')
	}
	if i == 1 || i+1 >= len(b) || b[i] != '\r' || b[i+1] != '\n' {
		return 0, 0
	}
	return v, i + 2
}
