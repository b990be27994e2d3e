package shard

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Sorted set tests: scripts of commands with the exact replies of Redis
// 7.0.15 (replayable against a real server: REDSHARD_REDIS_ADDR=127.0.0.1:7301
// go test -run TestZsetScriptsMatchRealRedis ./shard/), then the encodings
// against a model, ZSCAN's guarantee, Copy/Dump, cross-shard STOREs,
// propagation and notifications.

var allCmdTable = func() map[string]Command {
	m := map[string]Command{}
	for _, cmd := range Commands {
		m[cmd.Name] = cmd
	}
	return m
}()

// zDo runs one command of the full table and returns its reply; HELLO is
// emulated.
func zDo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	c.Out = c.Out[:0]
	c.Prop.Reset()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	name := strings.ToLower(args[0])
	switch name {
	case "hello":
		c.Proto, _ = strconv.Atoi(args[1])
		return ""
	case "object":
		name += "|" + strings.ToLower(args[1])
	}
	cmd, ok := allCmdTable[name]
	if !ok {
		t.Fatalf("no command %q", name)
	}
	cmd.Run(c, argv)
	return string(c.Out)
}

func zArr(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}
func zErr(msg string) string { return "-" + msg + "\r\n" }
func zDbl3(s string) string  { return "," + s + "\r\n" }

// zPairs spells a flat member/score array of bulk strings.
func zPairs(ms ...string) string {
	var items []string
	for _, m := range ms {
		items = append(items, bulk(m))
	}
	return zArr(items...)
}

var zsetScripts = []ksScript{
	{"zadd options and scores", []ksStep{
		{cmd: "ZADD z 1 a 2 b 3 c", want: num(3)},
		{cmd: "ZADD z NX XX 1 a", want: zErr(errZaddNXXX)},
		{cmd: "ZADD z GT LT 1 a", want: zErr(errZaddGTLTNX)},
		{cmd: "ZADD z NX GT 1 a", want: zErr(errZaddGTLTNX)},
		{cmd: "ZADD z INCR 1 a 2 b", want: zErr(errZaddIncrPair)},
		{cmd: "ZADD z 1", want: syntax, fake: true}, // the server checks arity first
		{cmd: "ZADD z 1 a 2", want: syntax},
		{cmd: "ZADD z nan a", want: notFlt},
		{cmd: "ZADD z abc a", want: notFlt},
		{argv: []string{"ZADD", "z", " 1", "a"}, want: notFlt},
		{argv: []string{"ZADD", "z", "1 ", "a"}, want: notFlt},
		{cmd: "ZADD z 1e400 a", want: notFlt},
		{cmd: "ZADD z 1e-400 a", want: notFlt},
		{cmd: "ZADD z 1 a x b", want: notFlt},
		{cmd: "ZCARD z", want: num(3)},
		{cmd: "ZADD z CH 10 a 2 b 4 d", want: num(2)},
		{cmd: "ZADD z XX 5 e", want: zero},
		{cmd: "ZSCORE z e", want: null2},
		{cmd: "ZADD z GT 1 a", want: zero},
		{cmd: "ZSCORE z a", want: bulk("10")},
		{cmd: "ZADD z LT CH 1 a", want: one},
		{cmd: "ZADD z INCR 2.5 a", want: bulk("3.5")},
		{cmd: "ZADD z INCR NX 1 a", want: null2},
		{cmd: "ZADD z XX INCR 1 zz", want: null2},
		{cmd: "ZADD z GT INCR -1 a", want: null2},
		{cmd: "ZINCRBY z -inf a", want: bulk("-inf")},
		{cmd: "ZINCRBY z +inf a", want: zErr("ERR resulting score is not a number (NaN)")},
		{cmd: "ZADD z 0x10 h", want: one},
		{cmd: "ZSCORE z h", want: bulk("16")},
		{cmd: "ZADD z inf i -inf j", want: num(2)},
		{cmd: "ZSCORE z i", want: bulk("inf")},
		{cmd: "ZADD z 0.1 k 1e20 l 1.5e-7 m", want: num(3)},
		{cmd: "ZMSCORE z k l m nosuch", want: zArr(bulk("0.10000000000000001"), bulk("1e+20"), bulk("1.4999999999999999e-07"), null2)},
		{cmd: "ZMSCORE nokey a b", want: zArr(null2, null2)},
		{cmd: "ZSCORE nokey a", want: null2},
		{cmd: "HELLO 3"},
		{cmd: "ZSCORE z k", want: zDbl3("0.10000000000000001")},
		{cmd: "ZSCORE z i", want: zDbl3("inf")},
		{cmd: "ZMSCORE z j nosuch", want: zArr(zDbl3("-inf"), null3)},
		{cmd: "ZSCORE z nosuch", want: null3},
		{cmd: "HELLO 2"},
		{cmd: "SET s x", want: ok},
		{cmd: "ZADD s 1 a", want: wrong},
		{cmd: "ZINCRBY s 1 a", want: wrong},
		{cmd: "ZSCORE s a", want: wrong},
		{cmd: "ZMSCORE s a", want: wrong},
		{cmd: "ZCARD s", want: wrong},
		{cmd: "ZCARD nokey", want: zero},
	}},
	{"ranges", []ksStep{
		{cmd: "ZADD r 1 a 2 b 3 c 4 d 5 e", want: num(5)},
		{cmd: "ZRANGE r 0 -1", want: zPairs("a", "b", "c", "d", "e")},
		{cmd: "ZRANGE r -2 -1 WITHSCORES", want: zPairs("d", "4", "e", "5")},
		{cmd: "ZRANGE r 3 1", want: zArr()},
		{cmd: "ZRANGE r -100 0", want: zPairs("a")},
		{cmd: "ZRANGE r 0 x", want: notInt},
		{cmd: "ZRANGE r 0 1 LIMIT 0 1", want: zErr(errLimitRank)},
		{cmd: "ZRANGE r 0 1 BYLEX WITHSCORES", want: zErr(errScoresLex)},
		{cmd: "ZRANGE r 0 1 FOO", want: syntax},
		{cmd: "ZRANGE r 0 1 REV REV", want: syntax},
		{cmd: "ZRANGE r (1 3 BYSCORE", want: zPairs("b", "c")},
		{cmd: "ZRANGE r 3 (1 BYSCORE REV", want: zPairs("c", "b")},
		{cmd: "ZRANGE r -inf +inf BYSCORE LIMIT 1 2", want: zPairs("b", "c")},
		{cmd: "ZRANGE r -inf +inf BYSCORE LIMIT -1 2", want: zArr()},
		{cmd: "ZRANGE r -inf +inf BYSCORE LIMIT 1 -1", want: zPairs("b", "c", "d", "e")},
		{cmd: "ZRANGE r +inf -inf BYSCORE REV LIMIT 1 2 WITHSCORES", want: zPairs("d", "4", "c", "3")},
		{cmd: "ZRANGE r 0 1 REV", want: zPairs("e", "d")},
		{cmd: "ZRANGE r a b BYSCORE", want: zErr(errMinMaxFloat)},
		{cmd: "ZRANGE r (1 (1 BYSCORE", want: zArr()},
		{cmd: "ZRANGE r 3 1 BYSCORE", want: zArr()},
		{cmd: "ZRANGEBYSCORE r 2 4 WITHSCORES LIMIT 1 1", want: zPairs("c", "3")},
		{cmd: "ZRANGEBYSCORE r 2 4 LIMIT 1", want: syntax},
		{cmd: "ZRANGEBYSCORE r 2 4 BYSCORE", want: syntax},
		{cmd: "ZREVRANGEBYSCORE r 4 2", want: zPairs("d", "c", "b")},
		{cmd: "ZREVRANGEBYSCORE r (4 (2", want: zPairs("c")},
		{cmd: "ZREVRANGE r 0 1 WITHSCORES", want: zPairs("e", "5", "d", "4")},
		{argv: []string{"ZRANGEBYSCORE", "r", "", "(3"}, want: zPairs("a", "b")}, // strtod("") is 0
		{argv: []string{"ZRANGEBYSCORE", "r", " 1", "2 "}, want: zErr(errMinMaxFloat)},
		{argv: []string{"ZRANGEBYSCORE", "r", " 1", "0x2"}, want: zPairs("a", "b")},
		{cmd: "ZRANGEBYSCORE r nan 2", want: zErr(errMinMaxFloat)},
		{cmd: "ZCOUNT r (1 3", want: num(2)},
		{cmd: "ZCOUNT r -inf +inf", want: num(5)},
		{cmd: "ZCOUNT r x 1", want: zErr(errMinMaxFloat)},
		{cmd: "ZCOUNT nokey 0 1", want: zero},
		{cmd: "ZRANK r c", want: num(2)},
		{cmd: "ZREVRANK r a", want: num(4)},
		{cmd: "ZRANK r zz", want: null2},
		{cmd: "ZRANK nokey a", want: null2},
		{cmd: "ZRANGESTORE dst r 1 2", want: num(2)},
		{cmd: "ZRANGE dst 0 -1 WITHSCORES", want: zPairs("b", "2", "c", "3")},
		{cmd: "ZRANGESTORE dst r 2 1 BYSCORE REV", want: num(2)},
		{cmd: "ZRANGE dst 0 -1 WITHSCORES", want: zPairs("a", "1", "b", "2")},
		{cmd: "ZRANGESTORE dst r 0 -1 WITHSCORES", want: syntax},
		{cmd: "ZRANGESTORE dst r 5 9", want: zero},
		{cmd: "EXISTS dst", want: zero},
		{cmd: "ZRANGESTORE dst nokey 0 -1", want: zero},
		{cmd: "ZADD l 0 a 0 b 0 c 0 d", want: num(4)},
		{cmd: "ZRANGEBYLEX l - +", want: zPairs("a", "b", "c", "d")},
		{cmd: "ZRANGEBYLEX l [b (d", want: zPairs("b", "c")},
		{cmd: "ZREVRANGEBYLEX l + [c", want: zPairs("d", "c")},
		{cmd: "ZRANGEBYLEX l - + LIMIT 1 2", want: zPairs("b", "c")},
		{cmd: "ZRANGE l [c - BYLEX REV LIMIT 0 1", want: zPairs("c")},
		{cmd: "ZRANGEBYLEX l + -", want: zArr()},
		{cmd: "ZLEXCOUNT l (a [c", want: num(2)},
		{cmd: "ZLEXCOUNT l - +", want: num(4)},
		{cmd: "ZRANGEBYLEX l a c", want: zErr(errMinMaxLex)},
		{cmd: "ZRANGEBYLEX l +x +", want: zErr(errMinMaxLex)},
		{cmd: "ZLEXCOUNT l [a c", want: zErr(errMinMaxLex)},
		{cmd: "ZREMRANGEBYLEX l [b [c", want: num(2)},
		{cmd: "ZRANGE l 0 -1", want: zPairs("a", "d")},
		{cmd: "ZREMRANGEBYLEX l foo [c", want: zErr(errMinMaxLex)},
		// lex ranges over different scores: unspecified, but a listpack
		// walks as Redis's does
		{cmd: "ZADD mx 2 a 1 b 3 c 0 d", want: num(4)},
		{cmd: "ZRANGEBYLEX mx [b [c", want: zArr()},
		{cmd: "ZRANGEBYLEX mx [a +", want: zPairs("d", "b", "a", "c")},
		{cmd: "ZREVRANGEBYLEX mx + [b", want: zPairs("c")},
		{cmd: "ZREVRANGEBYLEX mx + [b LIMIT 1 2", want: zArr()},
		{cmd: "ZRANGEBYLEX mx [a + LIMIT 1 2", want: zPairs("b", "a")},
		{cmd: "ZLEXCOUNT mx [b +", want: num(4)},
		{cmd: "ZREMRANGEBYLEX mx (c +", want: zero},
		{cmd: "ZREMRANGEBYRANK r 0 1", want: num(2)},
		{cmd: "ZREMRANGEBYRANK r 5 10", want: zero},
		{cmd: "ZREMRANGEBYRANK r x 1", want: notInt},
		{cmd: "ZREMRANGEBYSCORE r (3 +inf", want: num(2)},
		{cmd: "ZREMRANGEBYSCORE r a 1", want: zErr(errMinMaxFloat)},
		{cmd: "ZRANGE r 0 -1", want: zPairs("c")},
		{cmd: "ZREMRANGEBYRANK r 0 -1", want: one},
		{cmd: "EXISTS r", want: zero},
		{cmd: "ZREMRANGEBYRANK r 0 -1", want: zero},
		{cmd: "ZREM l a nosuch d", want: num(2)},
		{cmd: "EXISTS l", want: zero},
		{cmd: "ZREM l a", want: zero},
		{cmd: "HELLO 3"},
		{cmd: "ZADD r 1 a 2 b", want: num(2)},
		{cmd: "ZRANGE r 0 -1 WITHSCORES", want: zArr(zArr(bulk("a"), zDbl3("1")), zArr(bulk("b"), zDbl3("2")))},
		{cmd: "ZRANGE r 0 -1", want: zPairs("a", "b")},
		{cmd: "ZRANGE nokey 0 -1", want: zArr()},
		{cmd: "HELLO 2"},
		{cmd: "SET s x", want: ok},
		{cmd: "ZRANGE s 0 -1", want: wrong},
		{cmd: "ZRANGESTORE dst s 0 -1", want: wrong},
		{cmd: "ZREM s a", want: wrong},
		{cmd: "ZREMRANGEBYRANK s 0 -1", want: wrong},
	}},
	{"pops", []ksStep{
		{cmd: "ZADD p 1 a 2 b 3 c", want: num(3)},
		{cmd: "ZPOPMIN p", want: zPairs("a", "1")},
		{cmd: "ZPOPMAX p 5", want: zPairs("c", "3", "b", "2")},
		{cmd: "EXISTS p", want: zero},
		{cmd: "ZPOPMIN p", want: zArr()},
		{cmd: "ZPOPMIN p -1", want: zErr(errPositive)},
		{cmd: "ZPOPMIN p x", want: zErr(errPositive)},
		{cmd: "ZPOPMIN p 1 2", want: syntax},
		{cmd: "ZADD p 1 a 2 b 3 c", want: num(3)},
		{cmd: "ZPOPMIN p 0", want: zArr()},
		{cmd: "HELLO 3"},
		{cmd: "ZPOPMIN p", want: zArr(bulk("a"), zDbl3("1"))},
		{cmd: "ZPOPMIN p 1", want: zArr(zArr(bulk("b"), zDbl3("2")))},
		{cmd: "ZMPOP 1 nokey MIN", want: null3},
		{cmd: "HELLO 2"},
		{cmd: "ZADD p 4 d", want: one},
		{cmd: "ZMPOP 2 nokey p MAX COUNT 10", want: zArr(bulk("p"), zArr(zPairs("d", "4"), zPairs("c", "3")))},
		{cmd: "ZMPOP 1 p MIN", want: "*-1\r\n"},
		{cmd: "ZMPOP 0 p MIN", want: zErr(errNumkeysZero)},
		{cmd: "ZMPOP x p MIN", want: zErr(errNumkeysZero)},
		{cmd: "ZMPOP 2 p MIN", want: syntax},
		{cmd: "ZMPOP 9223372036854775807 p MIN", want: syntax}, // wrapped negative: a panic
		{cmd: "BZMPOP 0 9223372036854775807 p MIN", want: syntax},
		{cmd: "ZMPOP 1 p FOO", want: syntax},
		{cmd: "ZMPOP 1 p MIN COUNT 0", want: zErr(errCountZero)},
		{cmd: "ZMPOP 1 p MIN COUNT 1 COUNT 1", want: syntax},
		{cmd: "SET s x", want: ok},
		{cmd: "ZPOPMIN s", want: wrong},
		{cmd: "ZMPOP 2 nokey s MIN", want: wrong},
	}},
	{"set operations", []ksStep{
		{cmd: "ZADD {t}a 1 x 2 y 3 z", want: num(3)},
		{cmd: "ZADD {t}b 10 y 20 z 30 w", want: num(3)},
		{cmd: "SADD {t}s x w", want: num(2)},
		{cmd: "ZUNION 2 {t}a {t}b WITHSCORES", want: zPairs("x", "1", "y", "12", "z", "23", "w", "30")},
		{cmd: "ZUNION 2 {t}a {t}b", want: zPairs("x", "y", "z", "w")},
		{cmd: "ZINTER 2 {t}a {t}b WEIGHTS 2 1 AGGREGATE MAX WITHSCORES", want: zPairs("y", "10", "z", "20")},
		{cmd: "ZINTER 2 {t}a {t}b AGGREGATE min WITHSCORES", want: zPairs("y", "2", "z", "3")},
		{cmd: "ZDIFF 2 {t}a {t}b WITHSCORES", want: zPairs("x", "1")},
		{cmd: "ZDIFF 2 {t}b {t}s", want: zPairs("y", "z")},
		{cmd: "ZINTERCARD 2 {t}a {t}b", want: num(2)},
		{cmd: "ZINTERCARD 2 {t}a {t}b LIMIT 1", want: one},
		{cmd: "ZINTERCARD 2 {t}a {t}b LIMIT -1", want: zErr(errLimitNegative)},
		{cmd: "ZINTERCARD 2 {t}a {t}b WITHSCORES", want: syntax},
		{cmd: "ZUNIONSTORE {t}d 2 {t}a {t}s", want: num(4)},
		{cmd: "ZRANGE {t}d 0 -1 WITHSCORES", want: zPairs("w", "1", "x", "2", "y", "2", "z", "3")},
		{cmd: "ZINTERSTORE {t}d 2 {t}a {t}s WEIGHTS 1 5", want: one},
		{cmd: "ZRANGE {t}d 0 -1 WITHSCORES", want: zPairs("x", "6")},
		{cmd: "ZDIFFSTORE {t}d 2 {t}a {t}s", want: num(2)},
		{cmd: "ZRANGE {t}d 0 -1 WITHSCORES", want: zPairs("y", "2", "z", "3")},
		{cmd: "ZINTERSTORE {t}d 2 {t}a {t}nokey", want: zero},
		{cmd: "EXISTS {t}d", want: zero},
		{cmd: "ZDIFFSTORE {t}d 2 {t}a {t}a", want: zero},
		{cmd: "SADD {t}n 3 1 2", want: num(3)},
		{cmd: "ZUNION 2 {t}n {t}s WEIGHTS 2 1 WITHSCORES", want: zPairs("w", "1", "x", "1", "1", "2", "2", "2", "3", "2")},
		{cmd: "ZADD {t}nz 5 2 6 9", want: num(2)},
		{cmd: "ZINTERSTORE {t}d 2 {t}n {t}nz AGGREGATE MAX", want: one},
		{cmd: "ZRANGE {t}d 0 -1 WITHSCORES", want: zPairs("2", "5")},
		{cmd: "ZDIFF 2 {t}n {t}nz", want: zPairs("1", "3")},
		{cmd: "ZUNION 0 {t}a", want: zErr("ERR at least 1 input key is needed for 'zunion' command")},
		{cmd: "ZUNIONSTORE {t}d 0 {t}a", want: zErr("ERR at least 1 input key is needed for 'zunionstore' command")},
		{cmd: "ZINTERCARD 0 {t}a", want: zErr("ERR at least 1 input key is needed for 'zintercard' command")},
		{cmd: "ZUNION 3 {t}a", want: syntax},
		{cmd: "ZUNION x {t}a", want: notInt},
		{cmd: "ZUNION 1 {t}a WEIGHTS x", want: zErr(errWeightFloat)},
		{cmd: "ZUNION 1 {t}a WEIGHTS", want: syntax},
		{cmd: "ZDIFF 1 {t}a WEIGHTS 1", want: syntax},
		{cmd: "ZUNION 1 {t}a AGGREGATE foo", want: syntax},
		{cmd: "ZUNIONSTORE {t}d 1 {t}a WITHSCORES", want: syntax},
		{cmd: "SET {t}str x", want: ok},
		{cmd: "ZUNION 2 {t}a {t}str", want: wrong},
		{cmd: "ZUNIONSTORE {t}str 1 {t}a", want: num(3)},
		{cmd: "ZADD {t}i1 inf m", want: one},
		{cmd: "ZADD {t}i2 -inf m", want: one},
		{cmd: "ZUNION 2 {t}i1 {t}i2 WITHSCORES", want: zPairs("m", "0")},
		{cmd: "ZUNION 1 {t}i1 WEIGHTS 0 WITHSCORES", want: zPairs("m", "0")},
		{cmd: "HELLO 3"},
		{cmd: "ZINTER 2 {t}a {t}b WITHSCORES", want: zArr(zArr(bulk("y"), zDbl3("12")), zArr(bulk("z"), zDbl3("23")))},
		{cmd: "HELLO 2"},
	}},
	{"zscan and zrandmember", []ksStep{
		{cmd: "ZSCAN nokey 0", want: zArr(bulk("0"), zArr())},
		{cmd: "ZADD sc 1 a 2.5 b 4611686018427387904 c 1e17 d", want: num(4)},
		{cmd: "ZSCAN sc 0", want: zArr(bulk("0"), zPairs("a", "1", "b", "2.5", "d", "100000000000000000", "c", "4611686018427387904"))},
		{cmd: "ZSCAN sc 0 MATCH a*", want: zArr(bulk("0"), zPairs("a", "1"))},
		{cmd: "ZSCAN sc x", want: zErr(errInvalidCursor)},
		{cmd: "ZSCAN sc 0 COUNT 0", want: syntax},
		{cmd: "ZSCAN sc 0 COUNT x", want: notInt},
		{cmd: "ZSCAN sc 0 TYPE zset", want: syntax},
		{cmd: "ZRANDMEMBER nokey", want: null2},
		{cmd: "ZRANDMEMBER nokey 5", want: zArr()},
		{cmd: "ZRANDMEMBER sc 0", want: zArr()},
		{cmd: "ZRANDMEMBER sc 5 WITHSCORES", want: zPairs("c", "4.6116860184273879e+18", "d", "1e+17", "b", "2.5", "a", "1")},
		{cmd: "ZRANDMEMBER sc 1 2", want: syntax},
		{cmd: "ZRANDMEMBER sc x", want: notInt},
		{cmd: "ZRANDMEMBER sc -9223372036854775808", want: zErr("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")},
		{cmd: "ZRANDMEMBER sc 5000000000000000000 WITHSCORES", want: zErr(errOutOfRange)},
		{cmd: "ZADD one 7 m", want: one},
		{cmd: "ZRANDMEMBER one -3 WITHSCORES", want: zPairs("m", "7", "m", "7", "m", "7")},
		{cmd: "HELLO 3"},
		{cmd: "ZRANDMEMBER one -2 WITHSCORES", want: zArr(zArr(bulk("m"), zDbl3("7")), zArr(bulk("m"), zDbl3("7")))},
		{cmd: "HELLO 2"},
		{cmd: "SET s x", want: ok},
		{cmd: "ZSCAN s 0", want: wrong},
		{cmd: "ZRANDMEMBER s", want: wrong},
	}},
}

func TestZsetScripts(t *testing.T) {
	for _, n := range []int{1, 4} {
		for _, sc := range zsetScripts {
			t.Run(fmt.Sprintf("%s/shards=%d", sc.name, n), func(t *testing.T) {
				c := ksCtx(n)
				for i, st := range sc.steps {
					if got := zDo(t, c, st.args()...); st.want != "" && got != st.want {
						t.Errorf("step %d %q: got %q, want %q", i, st.args(), got, st.want)
					}
				}
			})
		}
	}
}

// TestZsetScriptsMatchRealRedis replays the scripts against a real Redis
// when REDSHARD_REDIS_ADDR names one (it is flushed).
func TestZsetScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range zsetScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("HELLO", "2")
			send("FLUSHALL")
			for i, st := range sc.steps {
				got := send(st.args()...)
				if strings.EqualFold(st.args()[0], "hello") || st.fake {
					continue
				}
				if st.want != "" && got != st.want {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

// zModel is the obvious sorted set: a slice kept sorted.
type zModel struct {
	m []string
	s []float64
}

func (md *zModel) less(i int, score float64, m string) bool {
	return md.s[i] < score || md.s[i] == score && md.m[i] < m
}

func (md *zModel) find(m string) int { return slices.Index(md.m, m) }

func (md *zModel) insert(m string, score float64) {
	i := sort.Search(len(md.m), func(i int) bool { return !md.less(i, score, m) })
	md.m = slices.Insert(md.m, i, m)
	md.s = slices.Insert(md.s, i, score)
}

func (md *zModel) remove(i int) {
	md.m = slices.Delete(md.m, i, i+1)
	md.s = slices.Delete(md.s, i, i+1)
}

// checkAgainst compares every observable of z with the model.
func (md *zModel) checkAgainst(t *testing.T, z *zset, step int) {
	t.Helper()
	n := len(md.m)
	if z.Len() != n {
		t.Fatalf("step %d: len %d, want %d", step, z.Len(), n)
	}
	if n == 0 {
		return
	}
	if z.sl != nil {
		if got, err := z.sl.checkTree(); err != nil || got != n {
			t.Fatalf("step %d: tree holds %d elements, want %d (%v)", step, got, n, err)
		}
	}
	it := z.iter(0, false)
	for i := 0; i < n; i++ {
		m, s := it.next()
		if string(m) != md.m[i] || s != md.s[i] {
			t.Fatalf("step %d: forward rank %d = (%q %v), want (%q %v)", step, i, m, s, md.m[i], md.s[i])
		}
	}
	start := rand.IntN(n)
	it = z.iter(start, true)
	for i := start; i >= 0; i-- {
		if m, _ := it.next(); string(m) != md.m[i] {
			t.Fatalf("step %d: backward rank %d = %q, want %q", step, i, m, md.m[i])
		}
	}
	for k := 0; k < 5; k++ {
		i := rand.IntN(n)
		if m, s := z.at(i); string(m) != md.m[i] || s != md.s[i] {
			t.Fatalf("step %d: at(%d) = (%q %v)", step, i, m, s)
		}
		if r, ok := z.rank([]byte(md.m[i])); !ok || r != i {
			t.Fatalf("step %d: rank(%q) = %d %v, want %d", step, md.m[i], r, ok, i)
		}
		if s, ok := z.find([]byte(md.m[i])); !ok || s != md.s[i] {
			t.Fatalf("step %d: find(%q) = %v %v", step, md.m[i], s, ok)
		}
		bound := md.s[i]
		got := z.search(func(s float64, _ []byte) bool { return s >= bound })
		want := sort.Search(n, func(j int) bool { return md.s[j] >= bound })
		if got != want {
			t.Fatalf("step %d: search(>= %v) = %d, want %d", step, bound, got, want)
		}
	}
	if _, ok := z.find([]byte("absent")); ok {
		t.Fatalf("step %d: found a member never added", step)
	}
}

// TestZsetEncodingsMatchModel drives both encodings through random inserts,
// score changes, removals and range removals and compares them with a
// sorted slice after every step.
func TestZsetEncodingsMatchModel(t *testing.T) {
	cfg := DefaultTunables()
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skiplist=%v", skip), func(t *testing.T) {
			z := &zset{}
			if skip {
				z.convert()
			}
			md := &zModel{}
			for step := 0; step < 3000; step++ {
				limit := 120 // stay a listpack
				if skip {
					limit = 2000
				}
				m := "m" + strconv.Itoa(rand.IntN(limit))
				if skip && rand.IntN(100) == 0 {
					m += strings.Repeat("x", zArenaOwn) // a member with its own chunk
				}
				score := float64(rand.IntN(50)) // many ties: member order matters
				switch op := rand.IntN(10); {
				case op < 5:
					if i := md.find(m); i >= 0 {
						z.setScore([]byte(m), score)
						md.remove(i)
					} else {
						z.insert(cfg, []byte(m), score)
					}
					md.insert(m, score)
				case op < 8:
					i := md.find(m)
					if z.remove([]byte(m)) != (i >= 0) {
						t.Fatalf("step %d: remove(%q) disagrees", step, m)
					}
					if i >= 0 {
						md.remove(i)
					}
				case op < 9 && len(md.m) > 0:
					a, b := rand.IntN(len(md.m)), rand.IntN(len(md.m))
					a, b = min(a, b), max(a, b)
					if b-a > 20 {
						b = a + 20
					}
					z.removeRange(a, b)
					md.m = slices.Delete(md.m, a, b+1)
					md.s = slices.Delete(md.s, a, b+1)
				}
				if z.encoding() != map[bool]uint8{false: EncListpack, true: EncSkiplist}[skip] {
					t.Fatalf("step %d: encoding changed to %s", step, EncNames[z.encoding()])
				}
				if step%7 == 0 {
					md.checkAgainst(t, z, step)
				}
			}
			md.checkAgainst(t, z, -1)
			if skip {
				// the arena and the table stay proportionate to what is live
				s := z.sl
				live := 0
				for _, m := range md.m {
					live += len(m)
				}
				if s.live != live || s.dead > max(4096, s.live) || s.n > len(s.buckets) || s.n*10 < len(s.buckets) && len(s.buckets) > 4 {
					t.Fatalf("inconsistent: live %d (want %d) dead %d n %d buckets %d", s.live, live, s.dead, s.n, len(s.buckets))
				}
			}
		})
	}
}

func zEncodingOf(t *testing.T, c *Ctx, key string) string {
	t.Helper()
	got := zDo(t, c, "OBJECT", "ENCODING", key)
	return strings.TrimSuffix(got[strings.Index(got, "\n")+1:], "\r\n")
}

// TestZsetEncodingConversion checks Redis's thresholds: 128 members of at
// most 64 bytes stay a listpack; one more member, or a longer one, makes a
// skiplist, which never turns back. STORE results pick by size.
func TestZsetEncodingConversion(t *testing.T) {
	c := ksCtx(4)
	for i := 0; i < 128; i++ {
		zDo(t, c, "ZADD", "z", strconv.Itoa(i), "m"+strconv.Itoa(i))
	}
	if enc := zEncodingOf(t, c, "z"); enc != "listpack" {
		t.Fatalf("128 members: %s", enc)
	}
	zDo(t, c, "ZADD", "z", "1", "m1") // an update does not convert
	zDo(t, c, "ZADD", "z", "200", "last")
	if enc := zEncodingOf(t, c, "z"); enc != "skiplist" {
		t.Fatalf("129 members: %s", enc)
	}
	if got := zDo(t, c, "ZRANGE", "z", "-1", "-1", "WITHSCORES"); got != zPairs("last", "200") {
		t.Fatalf("after conversion: %q", got)
	}
	zDo(t, c, "ZREMRANGEBYRANK", "z", "0", "-3")
	if enc := zEncodingOf(t, c, "z"); enc != "skiplist" {
		t.Fatalf("shrunk skiplist became %s", enc)
	}
	// small results of a skiplist source are listpacks again
	if got := zDo(t, c, "ZRANGESTORE", "small", "z", "0", "-1"); got != num(2) {
		t.Fatalf("ZRANGESTORE: %q", got)
	}
	if enc := zEncodingOf(t, c, "small"); enc != "listpack" {
		t.Fatalf("ZRANGESTORE of 2: %s", enc)
	}
	zDo(t, c, "ZUNIONSTORE", "u", "1", "z")
	if enc := zEncodingOf(t, c, "u"); enc != "listpack" {
		t.Fatalf("ZUNIONSTORE of 2: %s", enc)
	}

	long := strings.Repeat("x", 65)
	zDo(t, c, "ZADD", "v", "1", strings.Repeat("y", 64))
	if enc := zEncodingOf(t, c, "v"); enc != "listpack" {
		t.Fatalf("64-byte member: %s", enc)
	}
	zDo(t, c, "ZADD", "v", "2", long)
	if enc := zEncodingOf(t, c, "v"); enc != "skiplist" {
		t.Fatalf("65-byte member: %s", enc)
	}
	zDo(t, c, "ZUNIONSTORE", "v2", "1", "v")
	if enc := zEncodingOf(t, c, "v2"); enc != "skiplist" {
		t.Fatalf("ZUNIONSTORE with a long member: %s", enc)
	}

	c.Shards[ShardOf([]byte("w"), 4)].Cfg.ZsetMaxListpackEntries.Store(0)
	zDo(t, c, "ZADD", "w", "1", "a")
	if enc := zEncodingOf(t, c, "w"); enc != "skiplist" {
		t.Fatalf("zset-max-listpack-entries 0: %s", enc)
	}
	zDo(t, c, "ZADD", "big", "1", "a")
	c.Shards[ShardOf([]byte("big"), 4)].Cfg.ZsetMaxListpackEntries.Store(0)
	zDo(t, c, "ZADD", "big", "2", "b")
	if enc := zEncodingOf(t, c, "big"); enc != "skiplist" {
		t.Fatalf("adding past a lowered limit: %s", enc)
	}
}

// TestZsetNegativeZeroInListpack: a listpack stores -0 as the integer 0, a
// skiplist keeps the sign, as in Redis.
func TestZsetNegativeZeroInListpack(t *testing.T) {
	c := ksCtx(1)
	zDo(t, c, "ZADD", "lp", "-0", "a")
	if got := zDo(t, c, "ZSCORE", "lp", "a"); got != bulk("0") {
		t.Errorf("listpack: %q", got)
	}
	c.Shards[0].Cfg.ZsetMaxListpackEntries.Store(0)
	zDo(t, c, "ZADD", "sl", "-0", "a")
	if got := zDo(t, c, "ZSCORE", "sl", "a"); got != bulk("-0") {
		t.Errorf("skiplist: %q", got)
	}
}

// TestZscanReturnsEveryStableMember checks the SCAN guarantee on the
// skiplist form: a member present from start to end of a scan is returned,
// while others are added and removed and the table grows and shrinks.
func TestZscanReturnsEveryStableMember(t *testing.T) {
	c := ksCtx(1)
	c.Shards[0].Cfg.ZsetMaxListpackEntries.Store(0)
	for i := 0; i < 500; i++ {
		zDo(t, c, "ZADD", "z", strconv.Itoa(i), "stable"+strconv.Itoa(i))
	}
	seen := map[string]bool{}
	cursor := "0"
	for round := 0; ; round++ {
		reply := zDo(t, c, "ZSCAN", "z", cursor, "COUNT", "7")
		lines := strings.Split(reply, "\r\n")
		cursor = lines[2]
		for i := 5; i+1 < len(lines); i += 4 {
			seen[lines[i]] = true
		}
		// churn: grow the table, then shrink it again
		if round%3 == 0 {
			for j := 0; j < 300; j++ {
				zDo(t, c, "ZADD", "z", "1", fmt.Sprintf("tmp%d-%d", round, j))
			}
		} else {
			zDo(t, c, "ZREMRANGEBYSCORE", "z", "1", "1")
		}
		if cursor == "0" {
			break
		}
		if round > 10000 {
			t.Fatal("scan does not end")
		}
	}
	for i := 0; i < 500; i++ {
		if m := "stable" + strconv.Itoa(i); !seen[m] && i != 1 {
			t.Fatalf("%s never returned", m)
		}
	}
}

// TestZsetCopyIsDeep: COPY's value shares nothing with the source.
func TestZsetCopyIsDeep(t *testing.T) {
	for _, skip := range []bool{false, true} {
		c := ksCtx(2)
		if skip {
			for _, s := range c.Shards {
				s.Cfg.ZsetMaxListpackEntries.Store(0)
			}
		}
		zDo(t, c, "ZADD", "src", "1", "a", "2", "b")
		if got := zDo(t, c, "COPY", "src", "dst"); got != one {
			t.Fatalf("COPY: %q", got)
		}
		zDo(t, c, "ZADD", "src", "5", "a", "3", "c")
		zDo(t, c, "ZREM", "src", "b")
		if got := zDo(t, c, "ZRANGE", "dst", "0", "-1", "WITHSCORES"); got != zPairs("a", "1", "b", "2") {
			t.Errorf("skiplist=%v: copy changed with its source: %q", skip, got)
		}
		want := map[bool]string{false: "listpack", true: "skiplist"}[skip]
		if enc := zEncodingOf(t, c, "dst"); enc != want {
			t.Errorf("copy encoding %s, want %s", enc, want)
		}
	}
}

// TestZsetDumpReloadsExactly: the AOF rewrite's ZADD commands (64 pairs at
// most each) rebuild the same set with bit-identical scores.
func TestZsetDumpReloadsExactly(t *testing.T) {
	c := ksCtx(1)
	scores := []float64{0.1, 1.0 / 3, math.Pi * 1e300, -5e-324, math.Inf(1), math.Inf(-1), -1.5, 123456789.123456789, 0}
	args := []string{"ZADD", "z"}
	for i := 0; i < 150; i++ {
		s := scores[i%len(scores)] * float64(1+i/len(scores))
		args = append(args, strconv.FormatFloat(s, 'g', -1, 64), "member"+strconv.Itoa(i))
	}
	zDo(t, c, args...)
	db := c.DBOf([]byte("z"))
	orig := db.Obj(db.Read([]byte("z"))).(*zset)
	cmds := orig.Dump([]byte("z"))
	if len(cmds) != 3 || len(cmds[0]) != 2+2*64 || len(cmds[2]) != 2+2*(150-128) {
		t.Fatalf("dump shape: %d commands", len(cmds))
	}
	c2 := ksCtx(1)
	for _, cmd := range cmds {
		var words []string
		for _, a := range cmd {
			words = append(words, string(a))
		}
		if got := zDo(t, c2, words...); strings.HasPrefix(got, "-") {
			t.Fatalf("replaying %q: %s", words[:4], got)
		}
	}
	db2 := c2.DBOf([]byte("z"))
	re := db2.Obj(db2.Read([]byte("z"))).(*zset)
	if re.Len() != orig.Len() {
		t.Fatalf("reloaded %d members of %d", re.Len(), orig.Len())
	}
	a, b := orig.iter(0, false), re.iter(0, false)
	for i := 0; i < orig.Len(); i++ {
		m1, s1 := a.next()
		m2, s2 := b.next()
		if !bytes.Equal(m1, m2) || math.Float64bits(s1) != math.Float64bits(s2) {
			t.Fatalf("rank %d: (%q %v) reloaded as (%q %v)", i, m1, s1, m2, s2)
		}
	}
}

// TestZsetStoreAcrossShards: the STORE commands read and write keys on
// different shards (the dispatcher holds them all).
func TestZsetStoreAcrossShards(t *testing.T) {
	c := ksCtx(4)
	k0, k1, k2, k3 := keyOnShard("a", 0, 4), keyOnShard("b", 1, 4), keyOnShard("c", 2, 4), keyOnShard("d", 3, 4)
	zDo(t, c, "ZADD", k0, "1", "x", "2", "y")
	zDo(t, c, "ZADD", k1, "10", "y", "20", "z")
	zDo(t, c, "SADD", k2, "x", "z")
	for _, tc := range []struct {
		cmd  []string
		want string
		dst  string
	}{
		{[]string{"ZUNIONSTORE", k3, "3", k0, k1, k2}, num(3), zPairs("x", "2", "y", "12", "z", "21")},
		{[]string{"ZINTERSTORE", k3, "2", k0, k1, "AGGREGATE", "MAX"}, one, zPairs("y", "10")},
		{[]string{"ZDIFFSTORE", k3, "2", k0, k2}, one, zPairs("y", "2")},
		{[]string{"ZRANGESTORE", k3, k1, "0", "0"}, one, zPairs("y", "10")},
		{[]string{"ZUNIONSTORE", k0, "2", k0, k1}, num(3), zPairs("x", "1", "y", "12", "z", "20")},
	} {
		if got := zDo(t, c, tc.cmd...); got != tc.want {
			t.Fatalf("%q: %q, want %q", tc.cmd, got, tc.want)
		}
		if got := zDo(t, c, "ZRANGE", tc.cmd[1], "0", "-1", "WITHSCORES"); got != tc.dst {
			t.Fatalf("%q stored %q, want %q", tc.cmd, got, tc.dst)
		}
	}
	if got := zDo(t, c, "ZUNION", "3", k0, k1, k2, "WITHSCORES"); got != zPairs("x", "2", "y", "22", "z", "41") {
		t.Fatalf("ZUNION across shards: %q", got)
	}
}

func TestZsetCommandsPropagateLikeRedis(t *testing.T) {
	for _, tc := range []struct {
		setup []string
		cmd   string
		want  string
	}{
		{nil, "ZADD z 1 a 2 b", "AS-IS 2"},
		{[]string{"ZADD z 1 a"}, "ZADD z 1 a", ""},
		{[]string{"ZADD z 1 a"}, "ZADD z CH 2 a 1 b", "AS-IS 2"},
		{nil, "ZADD z XX 1 a", ""},
		{nil, "ZINCRBY z 1.5 a", "AS-IS 1"},
		{[]string{"ZADD z 1 a"}, "ZINCRBY z 0 a", ""},
		{[]string{"ZADD z 1 a 2 b"}, "ZREM z a c", "AS-IS 1"},
		{[]string{"ZADD z 1 a 2 b 3 c"}, "ZREMRANGEBYSCORE z 2 +inf", "AS-IS 2"},
		{[]string{"ZADD z 1 a 2 b"}, "ZPOPMIN z 5", "AS-IS 2"},
		{[]string{"ZADD z 1 a 2 b"}, "ZPOPMAX z", "AS-IS 1"},
		{[]string{"ZADD z 1 a 2 b"}, "ZPOPMIN z 0", ""},
		{[]string{"ZADD z 1 a 2 b"}, "ZMPOP 2 y z MAX COUNT 5", "ZPOPMAX z 2"},
		{[]string{"ZADD z 1 a 2 b"}, "ZMPOP 1 z MIN", "ZPOPMIN z 1"},
		{nil, "ZMPOP 1 z MIN", ""},
		{[]string{"ZADD {t}a 1 a"}, "ZUNIONSTORE {t}d 1 {t}a", "AS-IS 1"},
		{nil, "ZUNIONSTORE {t}d 1 {t}a", ""},
		{[]string{"ZADD {t}d 1 a"}, "ZINTERSTORE {t}d 1 {t}a", "AS-IS 1"},
		{[]string{"ZADD z 1 a"}, "ZRANGESTORE {z}d z 0 -1", "AS-IS 1"},
		{nil, "ZRANGE z 0 -1", ""},
	} {
		c := ksCtx(4)
		for _, s := range tc.setup {
			zDo(t, c, strings.Fields(s)...)
		}
		zDo(t, c, strings.Fields(tc.cmd)...)
		if got := propString(&c.Prop); got != tc.want {
			t.Errorf("%s: propagated %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestZsetNotifications(t *testing.T) {
	for _, tc := range []struct {
		setup []string
		cmd   string
		want  string
	}{
		{nil, "ZADD z 1 a", "zadd:z"},
		{[]string{"ZADD z 1 a"}, "ZADD z 1 a", ""},
		{nil, "ZINCRBY z 1 a", "zincr:z"},
		{[]string{"ZADD z 1 a 2 b"}, "ZREM z a", "zrem:z"},
		{[]string{"ZADD z 1 a"}, "ZREM z a", "zrem:z del:z"},
		{[]string{"ZADD z 1 a 2 b"}, "ZREMRANGEBYRANK z 0 0", "zremrangebyrank:z"},
		{[]string{"ZADD z 1 a 2 b"}, "ZREMRANGEBYSCORE z -inf +inf", "zremrangebyscore:z del:z"},
		{[]string{"ZADD z 0 a 0 b"}, "ZREMRANGEBYLEX z [a [a", "zremrangebylex:z"},
		{[]string{"ZADD z 1 a 2 b"}, "ZPOPMIN z", "zpopmin:z"},
		{[]string{"ZADD z 1 a"}, "ZPOPMAX z 3", "zpopmax:z del:z"},
		{[]string{"ZADD z 1 a"}, "ZMPOP 1 z MAX", "zpopmax:z del:z"},
		{[]string{"ZADD {t}a 1 a"}, "ZUNIONSTORE {t}d 1 {t}a", "zunionstore:{t}d"},
		{[]string{"ZADD {t}a 1 a"}, "ZINTERSTORE {t}d 1 {t}a", "zinterstore:{t}d"},
		{[]string{"ZADD {t}a 1 a"}, "ZDIFFSTORE {t}d 1 {t}a", "zdiffstore:{t}d"},
		{[]string{"ZADD {t}d 1 a"}, "ZDIFFSTORE {t}d 1 {t}a", "del:{t}d"},
		{[]string{"ZADD z 1 a"}, "ZRANGESTORE {z}d z 0 -1", "zrangestore:{z}d"},
	} {
		c := ksCtx(2)
		var got []string
		for _, s := range c.Shards {
			s.Cfg.NotifyFlags.Store(NotifyKeyspace | NotifyKeyevent | NotifyGeneric | NotifyZSet)
			s.OnNotify = func(db int, class int, event string, key []byte) {
				got = append(got, event+":"+string(key))
			}
		}
		for _, s := range tc.setup {
			zDo(t, c, strings.Fields(s)...)
		}
		got = nil
		zDo(t, c, strings.Fields(tc.cmd)...)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: notified %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestParseScoreIsString2d(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1", 1, true}, {"-1.5", -1.5, true}, {"+2", 2, true}, {".5", 0.5, true}, {"5.", 5, true},
		{"1e3", 1000, true}, {"1E-2", 0.01, true}, {"0x10", 16, true}, {"0x1p-2", 0.25, true}, {"0x.8", 0.5, true},
		{"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true}, {"+INF", math.Inf(1), true},
		{"4.9e-324", 5e-324, true},
		{"", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"nan", 0, false}, {"-nan", 0, false},
		{"1e400", 0, false}, {"-1e400", 0, false}, {"1e-400", 0, false}, {"1e", 0, false}, {"0x", 0, false},
		{"1,5", 0, false}, {"1\x00", 0, false}, {"infinit", 0, false}, {"1_000", 0, false}, {"e5", 0, false},
	} {
		got, ok := parseScore([]byte(tc.in))
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("parseScore(%q) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	// ranges use plain strtod: leading spaces, empty, overflow and a NUL end are fine
	for _, tc := range []struct {
		in   string
		want float64
		ex   bool
		ok   bool
	}{
		{"", 0, false, true}, {"(", 0, true, true}, {" 3", 3, false, true}, {"(1e400", math.Inf(1), true, true},
		{"1\x00x", 1, false, true}, {"1e-400", 0, false, true}, {"3 ", 0, false, false}, {"nan", 0, false, false},
		{"((1", 0, false, false}, {"[1", 0, false, false}, {"1e", 0, false, false},
	} {
		got, ex, ok := parseRangeItem([]byte(tc.in))
		if ok != tc.ok || ok && (got != tc.want || ex != tc.ex) {
			t.Errorf("parseRangeItem(%q) = %v %v %v, want %v %v %v", tc.in, got, ex, ok, tc.want, tc.ex, tc.ok)
		}
	}
}

func TestZsetReadsDoNotAllocate(t *testing.T) {
	c := ksCtx(1)
	c.Out = make([]byte, 0, 1<<16)
	for _, key := range []string{"small", "big"} {
		if key == "big" {
			c.Shards[0].Cfg.ZsetMaxListpackEntries.Store(0)
		}
		args := []string{"ZADD", key}
		for i := 0; i < 200; i++ {
			args = append(args, strconv.Itoa(i), "member"+strconv.Itoa(i))
		}
		zDo(t, c, args...)
		for _, argv := range [][]string{
			{"ZSCORE", key, "member7"},
			{"ZRANK", key, "member150"},
			{"ZCARD", key},
			{"ZRANGE", key, "10", "60", "WITHSCORES"},
			{"ZREVRANGE", key, "0", "100"},
			{"ZRANGEBYSCORE", key, "(5", "100", "LIMIT", "3", "10"},
			{"ZCOUNT", key, "5", "(100"},
			{"ZADD", key, "7", "member7"},
		} {
			run := allCmdTable[strings.ToLower(argv[0])].Run
			bargv := make([][]byte, len(argv))
			for i, a := range argv {
				bargv[i] = []byte(a)
			}
			allocs := testing.AllocsPerRun(100, func() {
				c.Out = c.Out[:0]
				c.Prop.Reset()
				run(c, bargv)
			})
			if allocs != 0 {
				t.Errorf("%s %q: %.1f allocations per run", key, argv, allocs)
			}
		}
	}
}

// TestZreplyScoreIsAddReplyDouble: the integral fast path prints what
// "%.17g" prints.
func TestZreplyScoreIsAddReplyDouble(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 42, -123456789, 999999999999999, 1e15, 1e17, 0.5, -2.25, math.Inf(1), math.Inf(-1), 4611686018427387904} {
		for _, proto := range []int{2, 3} {
			c := &Ctx{Proto: proto}
			zReplyScore(c, f)
			want := &Ctx{Proto: proto}
			want.Double(f)
			if string(c.Out) != string(want.Out) {
				t.Errorf("%v RESP%d: %q, want %q", f, proto, c.Out, want.Out)
			}
		}
	}
}

// checkTree checks the B+ tree's invariants and returns how many elements
// it holds, or an error: every node but the root holds 1..btMax-1 entries,
// every inner entry has its child's count and last element, the leaves are
// all at one depth, in order, and linked both ways in that order, and no
// two neighbouring children of a node would fit in half a node together.
func (s *zskip) checkTree() (int, error) {
	if s.root < 0 {
		if s.nodesIn != 0 {
			return 0, fmt.Errorf("empty tree: %d nodes in use", s.nodesIn)
		}
		return 0, nil
	}
	var leaves []int32
	nodes := 0
	leafDepth := -1
	var walk func(x int32, depth int) (int, error)
	walk = func(x int32, depth int) (int, error) {
		nodes++
		nd := s.node(x)
		if nd.n < 1 || nd.n >= btMax {
			return 0, fmt.Errorf("node %d holds %d entries", x, nd.n)
		}
		if nd.leaf {
			if leafDepth < 0 {
				leafDepth = depth
			} else if depth != leafDepth {
				return 0, fmt.Errorf("leaf %d at depth %d, others at %d", x, depth, leafDepth)
			}
			for i := 0; i < int(nd.n); i++ {
				if nd.key[i] != s.e(nd.id[i]).score {
					return 0, fmt.Errorf("leaf %d entry %d: score %v, element has %v", x, i, nd.key[i], s.e(nd.id[i]).score)
				}
			}
			leaves = append(leaves, x)
			return int(nd.n), nil
		}
		sum := 0
		for i := 0; i < int(nd.n); i++ {
			c := s.node(nd.id[i])
			got, err := walk(nd.id[i], depth+1)
			if err != nil {
				return 0, err
			}
			if got != int(nd.cnt[i]) {
				return 0, fmt.Errorf("node %d entry %d: count %d, child holds %d", x, i, nd.cnt[i], got)
			}
			last := c.id[c.n-1]
			if !c.leaf {
				last = c.last[c.n-1]
			}
			if nd.last[i] != last || nd.key[i] != s.e(last).score {
				return 0, fmt.Errorf("node %d entry %d: last %d (%v), child's is %d", x, i, nd.last[i], nd.key[i], last)
			}
			if i > 0 && s.node(nd.id[i-1]).n+c.n <= btMax/2 {
				return 0, fmt.Errorf("node %d: children %d and %d hold %d and %d entries", x, i-1, i, s.node(nd.id[i-1]).n, c.n)
			}
			sum += got
		}
		return sum, nil
	}
	n, err := walk(s.root, 0)
	if err != nil {
		return 0, err
	}
	if nodes != int(s.nodesIn) {
		return 0, fmt.Errorf("%d nodes in the tree, %d counted", nodes, s.nodesIn)
	}
	for i, x := range leaves {
		nd := s.node(x)
		want := int32(-1)
		if i+1 < len(leaves) {
			want = leaves[i+1]
		}
		if nd.next != want {
			return 0, fmt.Errorf("leaf %d: next %d, want %d", x, nd.next, want)
		}
		want = -1
		if i > 0 {
			want = leaves[i-1]
		}
		if nd.prev != want {
			return 0, fmt.Errorf("leaf %d: prev %d, want %d", x, nd.prev, want)
		}
	}
	return n, nil
}

// TestZsetTreeGrowsAndShrinks takes the skiplist form through a deep tree
// (20k members, four levels) and back to empty by removals at random, then
// by rank ranges, checking the tree against the model on the way.
func TestZsetTreeGrowsAndShrinks(t *testing.T) {
	cfg := DefaultTunables()
	z := &zset{}
	z.convert()
	md := &zModel{}
	const n = 20000
	for i := 0; i < n; i++ {
		m := "m" + strconv.Itoa(i)
		score := float64(rand.IntN(1000))
		z.insert(cfg, []byte(m), score)
		md.insert(m, score)
		if i%2500 == 0 {
			md.checkAgainst(t, z, i)
		}
	}
	md.checkAgainst(t, z, n)
	for i := 0; len(md.m) > n/2; i++ {
		j := rand.IntN(len(md.m))
		if !z.remove([]byte(md.m[j])) {
			t.Fatalf("remove(%q) found nothing", md.m[j])
		}
		md.remove(j)
		if i%1000 == 0 {
			md.checkAgainst(t, z, i)
		}
	}
	for len(md.m) > 0 {
		a := rand.IntN(len(md.m))
		b := min(len(md.m)-1, a+rand.IntN(300))
		z.removeRange(a, b)
		md.m = slices.Delete(md.m, a, b+1)
		md.s = slices.Delete(md.s, a, b+1)
		md.checkAgainst(t, z, len(md.m))
	}
	if got, err := z.sl.checkTree(); err != nil || got != 0 || z.Len() != 0 {
		t.Fatalf("after removing everything: %d elements, len %d (%v)", got, z.Len(), err)
	}
}
