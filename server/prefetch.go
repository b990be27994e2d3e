package server

import "github.com/redshard/redshard/shard"

// Batch prefetch (shard.DB.Prefetch): before a client's pipelined commands
// run, the keys of the next few are found with a light scan of the input
// and their lookups' cache lines are loaded together, so that the commands
// then run out of the cache instead of waiting for memory one at a time.

// prefetch scans the multibulk commands at the start of data and, when the
// client's database is big and there are at least two, warms the lookups of the keys (second arguments)
// that live on this loop's shard. It returns how many bytes it looked at,
// so that the caller does not scan them again.
func (cl *Client) prefetch(data []byte) int {
	l := cl.loop
	if cl.db >= len(l.sh.DBs) || !l.sh.DBs[cl.db].PrefetchWorth() {
		return len(data) // a small database stays in the caches anyway
	}
	db := l.sh.DBs[cl.db]
	keys := l.pfKeys[:0]
	pos := 0
	for len(keys) < shard.PrefetchMax {
		key, n := scanKey(data[pos:])
		if n == 0 {
			break
		}
		pos += n
		if key != nil && (len(l.srv.shards) == 1 || shard.ShardOf(key, len(l.srv.shards)) == l.id) {
			keys = append(keys, key)
		}
	}
	if len(keys) >= 2 {
		l.pfSink += db.Prefetch(keys)
	}
	l.pfKeys = keys[:0]
	return pos
}

// scanKey reads one complete multibulk command at the start of data and
// returns its second argument (nil when it has fewer than two) and its
// length; n is 0 when data does not start with a whole, well-formed
// command (the parser then reports what is wrong, if anything).
func scanKey(data []byte) (key []byte, n int) {
	count, p := scanNum(data, '*')
	if p == 0 || count < 1 || count > 1<<20 {
		return nil, 0
	}
	for i := 0; i < count; i++ {
		ln, q := scanNum(data[p:], '$')
		if q == 0 || ln < 0 {
			return nil, 0
		}
		p += q
		if ln > len(data)-p-2 || data[p+ln] != '\r' || data[p+ln+1] != '\n' {
			return nil, 0
		}
		if i == 1 {
			key = data[p : p+ln]
		}
		p += ln + 2
	}
	return key, p
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
