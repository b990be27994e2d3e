package tests

// Random commands over every type, sent to redshard (four shards) and to
// redis-server 7.0 alike; both must answer the same, and after each
// command DEBUG DIGEST (Redis's digest of the whole data set) must agree.
// The arguments are picked from values that sit on parsers' edges (empty,
// signs, spaces, "inf", "nan", "0x10", 2^63 and 2^64, "(1", "[a", "-",
// "+"); keys share slots ({t}) or not, so commands cross shards. Left out,
// because Redis's own answer is not fixed: the order of an unordered
// reply (sorted here before comparing), DUMP (LZF output may differ while
// both load), "*" stream IDs and short TTLs (clock), random members.

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var fuzzKeys = []string{"k1", "k2", "k3", "{t}a", "{t}b", "h1", "s1", "z1", "l1", "x"}
var fuzzVals = []string{"", "0", "1", "-1", "10", "3.5", "abc", "1e3", "9223372036854775807", "-9223372036854775808",
	"18446744073709551616", "inf", "-inf", "nan", " 1", "0x10", "a b", "(1", "[a", "+inf", "-", "+"}

// unorderedReply: commands whose reply order Redis does not fix.
var unorderedReply = map[string]bool{"SMEMBERS": true, "SINTER": true, "SUNION": true, "SDIFF": true, "HGETALL": true,
	"HKEYS": true, "HVALS": true, "SORT": true, "SORT_RO": true}

func diffCommand(r *rand.Rand) []string {
	pick := func(s []string) string { return s[r.Intn(len(s))] }
	k := func() string { return pick(fuzzKeys) }
	v := func() string { return pick(fuzzVals) }
	n := func() string { return strconv.Itoa(r.Intn(7) - 3) }
	ttl := func() string {
		return pick([]string{"100000", "abc", "-1", "0", "3.5", "", "9223372036854775807", "-9223372036854775808"})
	}
	cmds := [][]string{
		{"SET", k(), v()}, {"GET", k()}, {"INCR", k()}, {"INCRBY", k(), v()}, {"INCRBYFLOAT", k(), v()}, {"APPEND", k(), v()},
		{"GETRANGE", k(), n(), n()}, {"SETRANGE", k(), n(), v()}, {"STRLEN", k()}, {"MSET", k(), v(), k(), v()}, {"MGET", k(), k()},
		{"SETNX", k(), v()}, {"GETDEL", k()}, {"DECRBY", k(), v()}, {"GETSET", k(), v()}, {"SET", k(), v(), "GET"},
		{"SET", k(), v(), "NX", "GET"}, {"HSET", k(), v(), v()}, {"HGET", k(), v()}, {"HINCRBY", k(), v(), v()},
		{"HINCRBYFLOAT", k(), v(), v()}, {"HDEL", k(), v()}, {"HLEN", k()}, {"HSTRLEN", k(), v()}, {"HSETNX", k(), v(), v()},
		{"HMGET", k(), v(), v()}, {"HEXISTS", k(), v()}, {"HGETALL", k()}, {"HKEYS", k()}, {"HVALS", k()},
		{"SADD", k(), v(), v()}, {"SREM", k(), v()}, {"SCARD", k()}, {"SISMEMBER", k(), v()}, {"SMISMEMBER", k(), v(), v()},
		{"SINTERCARD", "2", k(), k()}, {"SINTERCARD", v(), k(), k()}, {"SMOVE", k(), k(), v()}, {"SMEMBERS", k()},
		{"SINTER", k(), k()}, {"SDIFFSTORE", k(), k(), k()}, {"SUNIONSTORE", k(), k(), k()},
		{"ZADD", k(), v(), v()}, {"ZADD", k(), "NX", "GT", v(), v()}, {"ZADD", k(), "INCR", v(), v()}, {"ZADD", k(), "XX", "CH", v(), v(), v(), v()},
		{"ZINCRBY", k(), v(), v()}, {"ZSCORE", k(), v()}, {"ZRANK", k(), v()}, {"ZREVRANK", k(), v()}, {"ZCOUNT", k(), v(), v()},
		{"ZLEXCOUNT", k(), v(), v()}, {"ZRANGE", k(), v(), v()}, {"ZRANGE", k(), v(), v(), "BYSCORE"}, {"ZRANGE", k(), v(), v(), "BYLEX"},
		{"ZRANGE", k(), "0", "-1", "WITHSCORES"}, {"ZRANGEBYSCORE", k(), v(), v(), "LIMIT", n(), n()}, {"ZREMRANGEBYSCORE", k(), v(), v()},
		{"ZREMRANGEBYLEX", k(), v(), v()}, {"ZREMRANGEBYRANK", k(), n(), n()}, {"ZMSCORE", k(), v(), v()}, {"ZCARD", k()},
		{"ZPOPMIN", k(), v()}, {"ZPOPMAX", k()}, {"ZRANGESTORE", k(), k(), n(), n()}, {"ZDIFF", "2", k(), k()},
		{"ZINTER", "2", k(), k(), "WITHSCORES"}, {"ZUNION", v(), k(), k()}, {"ZUNIONSTORE", k(), "2", k(), k()},
		{"ZINTERSTORE", k(), v(), k(), k()}, {"ZMPOP", "1", k(), "MIN"}, {"ZMPOP", "2", k(), k(), "MAX", "COUNT", v()},
		{"LPUSH", k(), v(), v()}, {"RPUSH", k(), v()}, {"LPUSHX", k(), v()}, {"LPOP", k()}, {"RPOP", k(), n()}, {"LRANGE", k(), n(), n()},
		{"LINDEX", k(), n()}, {"LSET", k(), n(), v()}, {"LINSERT", k(), "BEFORE", v(), v()}, {"LREM", k(), n(), v()},
		{"LTRIM", k(), n(), n()}, {"LPOS", k(), v()}, {"LLEN", k()}, {"LMOVE", k(), k(), "LEFT", "RIGHT"},
		{"LMPOP", "2", k(), k(), "LEFT"}, {"LMPOP", v(), k(), "RIGHT", "COUNT", v()},
		{"DEL", k()}, {"UNLINK", k()}, {"EXISTS", k(), k()}, {"TOUCH", k(), k()}, {"TYPE", k()}, {"EXPIRE", k(), ttl()},
		{"EXPIRE", k(), ttl(), "GT"}, {"PERSIST", k()}, {"EXPIRETIME", k()}, {"RENAME", k(), k()}, {"RENAMENX", k(), k()},
		{"COPY", k(), k()}, {"OBJECT", "ENCODING", k()}, {"GETEX", k(), "PX", ttl()}, {"GETEX", k(), "PERSIST"}, {"SETEX", k(), ttl(), v()},
		{"BITCOUNT", k(), n(), n()}, {"SETBIT", k(), v(), v()}, {"GETBIT", k(), v()}, {"BITPOS", k(), v()},
		{"BITOP", "AND", k(), k(), k()}, {"BITOP", "NOT", k(), k()}, {"BITFIELD", k(), "INCRBY", "u8", v(), v()},
		{"BITFIELD", k(), "GET", "i16", v()}, {"BITFIELD_RO", k(), "GET", "u4", n()}, {"PFADD", k(), v()}, {"PFCOUNT", k()},
		{"PFMERGE", k(), k(), k()}, {"SORT", k()}, {"SORT", k(), "ALPHA"}, {"SORT", k(), "DESC", "ALPHA", "STORE", k()},
		{"SORT_RO", k(), "ALPHA"}, {"XADD", k(), v(), "f", v()}, {"XADD", k(), "NOMKSTREAM", v(), "f", v()}, {"XLEN", k()},
		{"XRANGE", k(), "-", "+"}, {"XREVRANGE", k(), "+", "-", "COUNT", v()}, {"XTRIM", k(), "MAXLEN", v()}, {"XDEL", k(), v()},
		{"XSETID", k(), v()}, {"LCS", k(), k()}, {"SUBSTR", k(), n(), n()},
	}
	return cmds[r.Intn(len(cmds))]
}

// diffAnswer renders a reply (or error) for comparison, sorting the
// top-level array of an unordered reply.
func diffAnswer(cmd []string, v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	if arr, ok := v.([]any); ok && unorderedReply[cmd[0]] {
		parts := make([]string, len(arr))
		for i, x := range arr {
			parts[i] = fmt.Sprintf("%#v", x)
		}
		if cmd[0] == "HGETALL" {
			// pairs stay pairs
			pairs := make([]string, 0, len(parts)/2)
			for i := 0; i+1 < len(parts); i += 2 {
				pairs = append(pairs, parts[i]+"="+parts[i+1])
			}
			parts = pairs
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%#v", v)
}

func TestDifferentialAgainstRedis(t *testing.T) {
	rc := redisBeside(t, "--enable-debug-command", "yes")
	ctx := ctxT(t)
	c := startServer(t, "--shards", "4", "--appendonly", "no", "--enable-debug-command", "yes").client(t, 2)
	rng := rand.New(rand.NewSource(20261206))
	var hist []string
	differ := 0
	const n = 6000
	for i := 0; i < n && differ < 5; i++ {
		cmd := diffCommand(rng)
		args := make([]any, len(cmd))
		for j, a := range cmd {
			args[j] = a
		}
		gv, ge := c.Do(ctx, args...).Result()
		wv, we := rc.Do(ctx, args...).Result()
		got, want := diffAnswer(cmd, gv, ge), diffAnswer(cmd, wv, we)
		hist = append(hist, fmt.Sprintf("%q -> %s", cmd, want))
		if len(hist) > 6 {
			hist = hist[1:]
		}
		if got == want {
			dg, _ := c.Do(ctx, "DEBUG", "DIGEST").Text()
			dw, _ := rc.Do(ctx, "DEBUG", "DIGEST").Text()
			if dg == dw {
				continue
			}
			got, want = got+" then digest "+dg, want+" then digest "+dw
		}
		differ++
		t.Errorf("command %d, after\n  %s\nredshard     %s\nredis-server %s", i, strings.Join(hist[:len(hist)-1], "\n  "), got, want)
		c.FlushAll(ctx)
		rc.FlushAll(ctx)
		hist = nil
	}
}
