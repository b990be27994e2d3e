package shard

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The keyspace command tests call the handlers directly and compare the
// exact RESP bytes they append with Redis 7.0.15's replies. The scripts of
// TestKeyScripts whose replies depend neither on the fake clock nor on how
// keys spread over shards can be replayed against a real server:
//
//	REDSHARD_REDIS_ADDR=127.0.0.1:7796 go test -run TestKeyScriptsMatchRealRedis ./shard/

const ksNow = int64(1_700_000_000_000) // the fake command time, unix ms

func ksCtx(nshards int) *Ctx {
	shards := make([]*Shard, nshards)
	for i := range shards {
		shards[i] = New(i, 16)
	}
	c := &Ctx{Shards: shards, Proto: 2}
	setNow(c, ksNow)
	return c
}

var ksCmdTable = func() map[string]Command {
	m := map[string]Command{}
	for _, cmd := range keyCommands {
		m[cmd.Name] = cmd
	}
	return m
}()

// ksList stands for a list value (the list type comes later); it can be copied.
type ksList struct{ items []string }

func (l *ksList) Copy() Object { return &ksList{items: slices.Clone(l.items)} }
func (l *ksList) Dump(key []byte) [][][]byte {
	argv := [][]byte{[]byte("RPUSH"), key}
	for _, it := range l.items {
		argv = append(argv, []byte(it))
	}
	return [][][]byte{argv}
}
func (l *ksList) Mem() int { return 16 * len(l.items) }

// ksDo runs one command and returns its reply, leaving the propagation
// record in c.Prop. SET (plain), GET, APPEND, RPUSH (new lists), SELECT and
// HELLO are emulated with the keyspace API so that scripts can set up data
// the same way against a real server.
func ksDo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	c.Out = c.Out[:0]
	c.Prop.Reset()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	name := strings.ToLower(args[0])
	switch name {
	case "set":
		c.DBOf(argv[1]).SetStr(argv[1], argv[2], false)
		return "+OK\r\n"
	case "get":
		db := c.DBOf(argv[1])
		if slot := db.Read(argv[1]); slot >= 0 {
			return bulk(string(db.Str(slot)))
		}
		return ksNullFor(c)
	case "append":
		db := c.DBOf(argv[1])
		slot := db.Write(argv[1])
		if slot < 0 {
			t.Fatalf("append emulation needs an existing key")
		}
		old := len(db.Str(slot))
		copy(db.ResizeStr(slot, old+len(argv[2]))[old:], argv[2])
		return num(int64(old + len(argv[2])))
	case "rpush":
		c.DBOf(argv[1]).SetObj(argv[1], TypeList, EncQuicklist, &ksList{items: args[2:]})
		return num(int64(len(args) - 2))
	case "select":
		c.DB, _ = strconv.Atoi(args[1])
		return "+OK\r\n"
	case "hello":
		c.Proto, _ = strconv.Atoi(args[1])
		return ""
	case "object":
		name += "|" + strings.ToLower(args[1])
	}
	cmd, ok := ksCmdTable[name]
	if !ok {
		t.Fatalf("no command %q", name)
	}
	cmd.Run(c, argv)
	return string(c.Out)
}

func ksNullFor(c *Ctx) string {
	if c.Proto >= 3 {
		return "_\r\n"
	}
	return "$-1\r\n"
}

// ksStep is one command of a script (split on spaces, or argv when set)
// and its exact reply ("" = not checked). fake marks a reply that depends on
// the fake clock or the shard layout: it is not replayed against Redis.
type ksStep struct {
	cmd  string
	want string
	argv []string
	fake bool
}

func (s ksStep) args() []string {
	if s.argv != nil {
		return s.argv
	}
	return strings.Fields(s.cmd)
}

type ksScript struct {
	name  string
	steps []ksStep
}

func ksErr(msg string) string {
	return "-" + msg + "\r\n"
}
func ksArr(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

const (
	ksOK     = "+OK\r\n"
	ksNull   = "$-1\r\n"
	ksZero   = ":0\r\n"
	ksOne    = ":1\r\n"
	ksNotInt = "-ERR value is not an integer or out of range\r\n"
	ksSyntax = "-ERR syntax error\r\n"
	ksSame   = "-ERR source and destination objects are the same\r\n"
	ksDBIdx  = "-ERR DB index is out of range\r\n"
	ksNoKey  = "-ERR no such key\r\n"
	ksRange  = "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n"
)

var ksScripts = []ksScript{
	{"DEL and UNLINK count the keys they removed", []ksStep{
		{cmd: "set a 1", want: ksOK},
		{cmd: "set b 2", want: ksOK},
		{cmd: "del a", want: ksOne},
		{cmd: "del a", want: ksZero},
		{cmd: "set a 1", want: ksOK},
		{cmd: "del a b c", want: ":2\r\n"},
		{cmd: "exists a b", want: ksZero},
		{cmd: "set x 1", want: ksOK},
		{cmd: "unlink x y x", want: ksOne},
		{cmd: "exists x", want: ksZero},
	}},
	{"EXISTS counts a key named twice twice", []ksStep{
		{cmd: "set a 1", want: ksOK},
		{cmd: "exists a a nokey", want: ":2\r\n"},
		{argv: []string{"set", "", ""}, want: ksOK},
		{argv: []string{"exists", ""}, want: ksOne},
		{argv: []string{"get", ""}, want: bulk("")},
	}},
	{"TOUCH counts existing keys", []ksStep{
		{cmd: "set a 1", want: ksOK},
		{cmd: "rpush l x", want: ksOne},
		{cmd: "touch a l nokey a", want: ":3\r\n"},
	}},
	{"TYPE names the value type, none when missing", []ksStep{
		{cmd: "type nokey", want: "+none\r\n"},
		{cmd: "set s 1", want: ksOK},
		{cmd: "type s", want: "+string\r\n"},
		{cmd: "rpush l a b", want: ":2\r\n"},
		{cmd: "type l", want: "+list\r\n"},
	}},
	{"RENAME moves the value and replaces the target", []ksStep{
		{cmd: "set mykey hello", want: ksOK},
		{cmd: "rename mykey mykey1", want: ksOK},
		{cmd: "rename mykey1 mykey2", want: ksOK},
		{cmd: "get mykey2", want: bulk("hello")},
		{cmd: "exists mykey mykey1", want: ksZero},
		{cmd: "set mykey a", want: ksOK},
		{cmd: "set mykey2 b", want: ksOK},
		{cmd: "rename mykey2 mykey", want: ksOK},
		{cmd: "get mykey", want: bulk("b")},
		{cmd: "exists mykey2", want: ksZero},
		{cmd: "rpush l a", want: ksOne},
		{cmd: "rename l l2", want: ksOK},
		{cmd: "type l2", want: "+list\r\n"},
		{cmd: "type l", want: "+none\r\n"},
	}},
	{"RENAMENX refuses an existing target", []ksStep{
		{cmd: "set mykey foobar", want: ksOK},
		{cmd: "renamenx mykey mykey2", want: ksOne},
		{cmd: "get mykey2", want: bulk("foobar")},
		{cmd: "exists mykey", want: ksZero},
		{cmd: "set mykey foo", want: ksOK},
		{cmd: "renamenx mykey mykey2", want: ksZero},
		{cmd: "get mykey2", want: bulk("foobar")},
		{cmd: "get mykey", want: bulk("foo")},
	}},
	{"RENAME errors on a missing source, even onto itself", []ksStep{
		{cmd: "rename nokey foobar", want: ksNoKey},
		{cmd: "renamenx nokey foobar", want: ksNoKey},
		{cmd: "rename nokey nokey", want: ksNoKey},
		{cmd: "renamenx nokey nokey", want: ksNoKey},
		{cmd: "set mykey foo", want: ksOK},
		{cmd: "rename mykey mykey", want: ksOK},
		{cmd: "renamenx mykey mykey", want: ksZero},
		{cmd: "get mykey", want: bulk("foo")},
	}},
	{"RENAME moves the TTL and drops the target's", []ksStep{
		{cmd: "set a x", want: ksOK},
		{cmd: "expire a 100", want: ksOne},
		{cmd: "rename a b", want: ksOK},
		{cmd: "ttl b", want: ":100\r\n"},
		{cmd: "ttl a", want: ":-2\r\n"},
		{cmd: "set c y", want: ksOK},
		{cmd: "rename c b", want: ksOK},
		{cmd: "ttl b", want: ":-1\r\n"},
	}},
	{"COPY duplicates a string, REPLACE overwrites", []ksStep{
		{cmd: "set mykey foobar", want: ksOK},
		{cmd: "copy mykey mynewkey", want: ksOne},
		{cmd: "get mynewkey", want: bulk("foobar")},
		{cmd: "copy mykey mynewkey", want: ksZero},
		{cmd: "set mynewkey other", want: ksOK},
		{cmd: "copy mykey mynewkey", want: ksZero},
		{cmd: "get mynewkey", want: bulk("other")},
		{cmd: "copy mykey mynewkey REPLACE", want: ksOne},
		{cmd: "get mynewkey", want: bulk("foobar")},
		{cmd: "copy nokey mynewkey replace", want: ksZero},
		{cmd: "get mykey", want: bulk("foobar")},
	}},
	{"COPY DB copies into another database", []ksStep{
		{cmd: "set mykey foobar", want: ksOK},
		{cmd: "copy mykey mykey db 1", want: ksOne},
		{cmd: "copy mykey other DB 2 replace", want: ksOne},
		{cmd: "copy mykey mykey db 1", want: ksZero},
		{cmd: "copy mykey mykey replace db 1", want: ksOne},
		{cmd: "select 1", want: ksOK},
		{cmd: "get mykey", want: bulk("foobar")},
		{cmd: "select 2", want: ksOK},
		{cmd: "get other", want: bulk("foobar")},
		{cmd: "select 0", want: ksOK},
	}},
	{"COPY option and database errors", []ksStep{
		{cmd: "set k v", want: ksOK},
		{cmd: "copy k k", want: ksSame},
		{cmd: "copy k k db 0", want: ksSame},
		{cmd: "copy k k replace", want: ksSame},
		{cmd: "copy k k2 db 1 db x", want: ksNotInt},
		{cmd: "copy k k2 db notanumber", want: ksNotInt},
		{cmd: "copy k k2 db 99999999999", want: ksRange},
		{cmd: "copy k k2 db 99", want: ksDBIdx},
		{cmd: "copy k k2 db -1", want: ksDBIdx},
		{cmd: "copy k k2 foo", want: ksSyntax},
		{cmd: "copy k k2 db", want: ksSyntax},
		{cmd: "copy nokey k2 db 1 x", want: ksSyntax},
		{cmd: "copy nokey k2 db 1", want: ksZero},
		{cmd: "exists k2", want: ksZero},
	}},
	{"COPY carries the expiry and keeps the encoding", []ksStep{
		{cmd: "set a x", want: ksOK},
		{cmd: "expire a 100", want: ksOne},
		{cmd: "copy a b", want: ksOne},
		{cmd: "ttl b", want: ":100\r\n"},
		{cmd: "set c x", want: ksOK},
		{cmd: "copy c d", want: ksOne},
		{cmd: "ttl d", want: ":-1\r\n"},
		{cmd: "expire d 100", want: ksOne},
		{cmd: "copy c d replace", want: ksOne},
		{cmd: "ttl d", want: ":-1\r\n"},
		{cmd: "set r abc", want: ksOK},
		{cmd: "append r d", want: ":4\r\n"},
		{cmd: "copy r r2", want: ksOne},
		{cmd: "object encoding r2", want: bulk("raw")},
		{cmd: "set n 123", want: ksOK},
		{cmd: "copy n n2", want: ksOne},
		{cmd: "object encoding n2", want: bulk("int")},
		{cmd: "rpush l a b", want: ":2\r\n"},
		{cmd: "copy l l2", want: ksOne},
		{cmd: "type l2", want: "+list\r\n"},
		{cmd: "copy l n replace", want: ksOne},
		{cmd: "type n", want: "+list\r\n"},
		{cmd: "copy r n replace", want: ksOne},
		{cmd: "get n", want: bulk("abcd")},
	}},
	{"MOVE moves a key to another database", []ksStep{
		{cmd: "set mykey hello", want: ksOK},
		{cmd: "move mykey 1", want: ksOne},
		{cmd: "exists mykey", want: ksZero},
		{cmd: "set mykey x", want: ksOK},
		{cmd: "move mykey 1", want: ksZero},
		{cmd: "get mykey", want: bulk("x")},
		{cmd: "select 1", want: ksOK},
		{cmd: "get mykey", want: bulk("hello")},
		{cmd: "select 0", want: ksOK},
		{cmd: "move nokey 1", want: ksZero},
		{cmd: "set e v", want: ksOK},
		{cmd: "expire e 100", want: ksOne},
		{cmd: "move e 2", want: ksOne},
		{cmd: "ttl e", want: ":-2\r\n"},
		{cmd: "select 2", want: ksOK},
		{cmd: "ttl e", want: ":100\r\n"},
		{cmd: "select 0", want: ksOK},
		{cmd: "rpush l a", want: ksOne},
		{cmd: "move l 3", want: ksOne},
		{cmd: "select 3", want: ksOK},
		{cmd: "type l", want: "+list\r\n"},
		{cmd: "select 0", want: ksOK},
	}},
	{"MOVE database errors", []ksStep{
		{cmd: "set mykey hello", want: ksOK},
		{cmd: "move mykey notanumber", want: ksNotInt},
		{cmd: "move mykey 99999999999", want: ksRange},
		{cmd: "move mykey 16", want: ksDBIdx},
		{cmd: "move mykey -1", want: ksDBIdx},
		{cmd: "move mykey 0", want: ksSame},
		{cmd: "move nokey 0", want: ksSame},
		{cmd: "get mykey", want: bulk("hello")},
	}},
	{"SWAPDB swaps two databases", []ksStep{
		{cmd: "swapdb a b", want: ksErr("ERR invalid first DB index")},
		{cmd: "swapdb 0 b", want: ksErr("ERR invalid second DB index")},
		{cmd: "swapdb 99999999999 0", want: ksErr("ERR invalid first DB index")},
		{cmd: "swapdb 0 99", want: ksDBIdx},
		{cmd: "swapdb -1 0", want: ksDBIdx},
		{cmd: "set a 1", want: ksOK},
		{cmd: "select 1", want: ksOK},
		{cmd: "set b 2", want: ksOK},
		{cmd: "swapdb 0 1", want: ksOK},
		{cmd: "get a", want: bulk("1")},
		{cmd: "exists b", want: ksZero},
		{cmd: "select 0", want: ksOK},
		{cmd: "get b", want: bulk("2")},
		{cmd: "swapdb 0 0", want: ksOK},
		{cmd: "get b", want: bulk("2")},
	}},
	{"EXPIRE NX XX GT LT", []ksStep{
		{cmd: "set foo bar", want: ksOK},
		{cmd: "expire foo 100", want: ksOne},
		{cmd: "expire foo 200 NX", want: ksZero},
		{cmd: "ttl foo", want: ":100\r\n"},
		{cmd: "expire foo 200 XX", want: ksOne},
		{cmd: "ttl foo", want: ":200\r\n"},
		{cmd: "expire foo 100 GT", want: ksZero},
		{cmd: "expire foo 200 GT", want: ksZero, fake: true}, // equal: real time moves on
		{cmd: "expire foo 300 gt", want: ksOne},
		{cmd: "ttl foo", want: ":300\r\n"},
		{cmd: "expire foo 400 LT", want: ksZero},
		{cmd: "expire foo 300 LT", want: ksZero},
		{cmd: "expire foo 150 lt", want: ksOne},
		{cmd: "ttl foo", want: ":150\r\n"},
		{cmd: "expire foo 100 LT XX", want: ksOne},
		{cmd: "ttl foo", want: ":100\r\n"},
		{cmd: "persist foo", want: ksOne},
		{cmd: "expire foo 200 XX", want: ksZero},
		{cmd: "expire foo 200 GT", want: ksZero},
		{cmd: "expire foo 200 LT XX", want: ksZero},
		{cmd: "ttl foo", want: ":-1\r\n"},
		{cmd: "expire foo 200 LT", want: ksOne},
		{cmd: "ttl foo", want: ":200\r\n"},
		{cmd: "persist foo", want: ksOne},
		{cmd: "expire foo 200 NX", want: ksOne},
		{cmd: "ttl foo", want: ":200\r\n"},
		{cmd: "expire none 100 NX", want: ksZero},
		{cmd: "expire none 100 XX", want: ksZero},
		{cmd: "expire none 100 GT", want: ksZero},
		{cmd: "expire none 100 LT", want: ksZero},
	}},
	{"EXPIRE with a time in the past deletes the key", []ksStep{
		{cmd: "set foo bar", want: ksOK},
		{cmd: "expire foo 100", want: ksOne},
		{cmd: "expire foo -10 LT", want: ksOne},
		{cmd: "ttl foo", want: ":-2\r\n"},
		{cmd: "set foo bar", want: ksOK},
		{cmd: "expire foo -10 LT", want: ksOne},
		{cmd: "exists foo", want: ksZero},
		{cmd: "set foo bar", want: ksOK},
		{cmd: "expire foo 0", want: ksOne},
		{cmd: "exists foo", want: ksZero},
		{cmd: "set foo bar", want: ksOK},
		{cmd: "expireat foo 1", want: ksOne},
		{cmd: "exists foo", want: ksZero},
		{cmd: "set foo bar", want: ksOK},
		{cmd: "pexpire foo -1", want: ksOne},
		{cmd: "exists foo", want: ksZero},
		{cmd: "set foo bar", want: ksOK},
		{cmd: "pexpireat foo -9223372036854770000", want: ksOne},
		{cmd: "ttl foo", want: ":-2\r\n"},
		{cmd: "expire foo 100", want: ksZero},
	}},
	{"EXPIRE option and argument errors", []ksStep{
		{cmd: "set foo bar", want: ksOK},
		{cmd: "expire foo 200 LT GT", want: ksErr("ERR GT and LT options at the same time are not compatible")},
		{cmd: "expire foo 200 NX GT", want: ksErr("ERR NX and XX, GT or LT options at the same time are not compatible")},
		{cmd: "expire foo 200 NX LT", want: ksErr("ERR NX and XX, GT or LT options at the same time are not compatible")},
		{cmd: "expire foo 200 NX XX", want: ksErr("ERR NX and XX, GT or LT options at the same time are not compatible")},
		{cmd: "pexpire foo 200 xx nx", want: ksErr("ERR NX and XX, GT or LT options at the same time are not compatible")},
		{cmd: "expire foo 200 AB", want: ksErr("ERR Unsupported option AB")},
		{cmd: "expire foo 200 XX AB", want: ksErr("ERR Unsupported option AB")},
		{cmd: "expire foo abc AB", want: ksErr("ERR Unsupported option AB")},
		{argv: []string{"expire", "foo", "200", "a\r\nb"}, want: ksErr("ERR Unsupported option a  b")},
		{argv: []string{"expire", "foo", "200", "a\x00b"}, want: ksErr("ERR Unsupported option a")},
		{argv: []string{"expire", "foo", ""}, want: ksNotInt},
		{cmd: "expire foo abc", want: ksNotInt},
		{cmd: "expire foo 1.5", want: ksNotInt},
		{cmd: "expire foo 9223370399119966", want: ksErr("ERR invalid expire time in 'expire' command")},
		{cmd: "expire foo 9223372036854776", want: ksErr("ERR invalid expire time in 'expire' command")},
		{cmd: "expire foo 10000000000000000", want: ksErr("ERR invalid expire time in 'expire' command")},
		{cmd: "expire foo 18446744073709561", want: ksErr("ERR invalid expire time in 'expire' command")},
		{cmd: "expire foo -9223372036854776", want: ksErr("ERR invalid expire time in 'expire' command")},
		{cmd: "expire foo -9999999999999999", want: ksErr("ERR invalid expire time in 'expire' command")},
		{cmd: "pexpire foo 9223372036854770000", want: ksErr("ERR invalid expire time in 'pexpire' command")},
		{cmd: "expireat foo 9223372036854776", want: ksErr("ERR invalid expire time in 'expireat' command")},
		{cmd: "EXPIREAT foo -9223372036854776", want: ksErr("ERR invalid expire time in 'expireat' command")},
		{cmd: "expire nokey 9223372036854776", want: ksErr("ERR invalid expire time in 'expire' command")},
		{cmd: "ttl foo", want: ":-1\r\n"},
	}},
	{"TTL PTTL EXPIRETIME PEXPIRETIME", []ksStep{
		{cmd: "ttl nokey", want: ":-2\r\n"},
		{cmd: "pttl nokey", want: ":-2\r\n"},
		{cmd: "expiretime nokey", want: ":-2\r\n"},
		{cmd: "pexpiretime nokey", want: ":-2\r\n"},
		{cmd: "set k v", want: ksOK},
		{cmd: "ttl k", want: ":-1\r\n"},
		{cmd: "pttl k", want: ":-1\r\n"},
		{cmd: "expiretime k", want: ":-1\r\n"},
		{cmd: "pexpiretime k", want: ":-1\r\n"},
		{cmd: "expireat k 2000000000", want: ksOne},
		{cmd: "expiretime k", want: ":2000000000\r\n"},
		{cmd: "pexpiretime k", want: ":2000000000000\r\n"},
		{cmd: "pexpireat k 2000000000499", want: ksOne},
		{cmd: "expiretime k", want: ":2000000000\r\n"},
		{cmd: "pexpireat k 2000000000500", want: ksOne},
		{cmd: "expiretime k", want: ":2000000001\r\n"},
		{cmd: "pexpireat k 9223372036854775807", want: ksOne},
		{cmd: "pexpiretime k", want: ":9223372036854775807\r\n"},
		{cmd: "expiretime k", want: ":9223372036854776\r\n"},
		{cmd: "pexpireat k 9223372036854770000", want: ksOne},
		{cmd: "pexpiretime k", want: ":9223372036854770000\r\n"},
		{cmd: "pttl k", want: ":9223370336854770000\r\n", fake: true},
		{cmd: "ttl k", want: ":9223370336854770\r\n", fake: true},
		{cmd: "pexpire k 1499", want: ksOne},
		{cmd: "pttl k", want: ":1499\r\n", fake: true},
		{cmd: "ttl k", want: ksOne, fake: true},
		{cmd: "pexpire k 1500", want: ksOne},
		{cmd: "ttl k", want: ":2\r\n", fake: true},
		{cmd: "pexpiretime k", want: ":1700000001500\r\n", fake: true},
		{cmd: "expiretime k", want: ":1700000002\r\n", fake: true},
	}},
	{"PERSIST removes an expiry", []ksStep{
		{cmd: "set k v", want: ksOK},
		{cmd: "persist k", want: ksZero},
		{cmd: "expire k 100", want: ksOne},
		{cmd: "persist k", want: ksOne},
		{cmd: "ttl k", want: ":-1\r\n"},
		{cmd: "persist k", want: ksZero},
		{cmd: "persist nokey", want: ksZero},
	}},
	{"DBSIZE FLUSHDB FLUSHALL", []ksStep{
		{cmd: "dbsize", want: ksZero},
		{cmd: "set a 1", want: ksOK},
		{cmd: "set b 2", want: ksOK},
		{cmd: "rpush l x", want: ksOne},
		{cmd: "dbsize", want: ":3\r\n"},
		{cmd: "select 1", want: ksOK},
		{cmd: "set c 3", want: ksOK},
		{cmd: "dbsize", want: ksOne},
		{cmd: "flushdb", want: ksOK},
		{cmd: "dbsize", want: ksZero},
		{cmd: "flushdb", want: ksOK},
		{cmd: "select 0", want: ksOK},
		{cmd: "dbsize", want: ":3\r\n"},
		{cmd: "flushdb foo", want: ksSyntax},
		{cmd: "flushdb sync extra", want: ksSyntax},
		{cmd: "flushdb SYNC", want: ksOK},
		{cmd: "dbsize", want: ksZero},
		{cmd: "set a 1", want: ksOK},
		{cmd: "select 5", want: ksOK},
		{cmd: "set a 1", want: ksOK},
		{cmd: "flushall foo", want: ksSyntax},
		{cmd: "flushall async bar", want: ksSyntax},
		{cmd: "dbsize", want: ksOne},
		{cmd: "flushall ASYNC", want: ksOK},
		{cmd: "dbsize", want: ksZero},
		{cmd: "select 0", want: ksOK},
		{cmd: "dbsize", want: ksZero},
		{cmd: "flushall sync", want: ksOK},
		{cmd: "flushall", want: ksOK},
	}},
	{"RANDOMKEY", []ksStep{
		{cmd: "randomkey", want: ksNull},
		{cmd: "set x 10", want: ksOK},
		{cmd: "del x", want: ksOne},
		{cmd: "randomkey", want: ksNull},
		{cmd: "set onlykey 1", want: ksOK},
		{cmd: "randomkey", want: bulk("onlykey")},
		{cmd: "select 1", want: ksOK},
		{cmd: "randomkey", want: ksNull},
		{cmd: "hello 3"},
		{cmd: "randomkey", want: "_\r\n"},
		{cmd: "hello 2"},
	}},
	{"KEYS", []ksStep{
		{cmd: "keys *", want: "*0\r\n"},
		{cmd: "set dlskeriewrioeuwqoirueioqwrueoqwrueqw test", want: ksOK},
		{cmd: "keys *", want: ksArr(bulk("dlskeriewrioeuwqoirueioqwrueoqwrueqw"))},
		{cmd: "keys *", want: ksArr(bulk("dlskeriewrioeuwqoirueioqwrueoqwrueqw"))},
		{cmd: "keys dls*", want: ksArr(bulk("dlskeriewrioeuwqoirueioqwrueoqwrueqw"))},
		{cmd: "keys DLS*", want: "*0\r\n"},
		{cmd: "flushdb", want: ksOK},
		{cmd: "set aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1", want: ksOK},
		{cmd: "keys a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", want: "*0\r\n"},
		{cmd: "keys a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*", want: ksArr(bulk("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))},
	}},
	{"OBJECT", []ksStep{
		{cmd: "set foo 1", want: ksOK},
		{cmd: "object refcount foo", want: ":2147483647\r\n"},
		{cmd: "object encoding foo", want: bulk("int")},
		{cmd: "set bar 10000", want: ksOK},
		{cmd: "object refcount bar", want: ksOne},
		{cmd: "object encoding bar", want: bulk("int")},
		{cmd: "set neg -1", want: ksOK},
		{cmd: "object refcount neg", want: ksOne},
		{cmd: "set baz hello", want: ksOK},
		{cmd: "object refcount baz", want: ksOne},
		{cmd: "object encoding baz", want: bulk("embstr")},
		{cmd: "set big 123456789012345678901234567890123456789012345", want: ksOK},
		{cmd: "object encoding big", want: bulk("raw")},
		{cmd: "set huge 12345678901234567890", want: ksOK},
		{cmd: "object encoding huge", want: bulk("embstr")},
		{cmd: "rpush l a", want: ksOne},
		{cmd: "object encoding l", want: bulk("quicklist")},
		{cmd: "object refcount l", want: ksOne},
		{cmd: "object encoding nokey", want: ksNull},
		{cmd: "object refcount nokey", want: ksNull},
		{cmd: "object idletime nokey", want: ksNull},
		{cmd: "object freq nokey", want: ksNull},
		{cmd: "object idletime baz", want: ksZero, fake: true},
		{cmd: "object freq baz", want: ksErr(errNoLFU)},
		{cmd: "object help", want: ksArr(
			"+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n",
			"+ENCODING <key>\r\n",
			"+    Return the kind of internal representation used in order to store the value\r\n",
			"+    associated with a <key>.\r\n",
			"+FREQ <key>\r\n",
			"+    Return the access frequency index of the <key>. The returned integer is\r\n",
			"+    proportional to the logarithm of the recent access frequency of the key.\r\n",
			"+IDLETIME <key>\r\n",
			"+    Return the idle time of the <key>, that is the approximated number of\r\n",
			"+    seconds elapsed since the last access to the key.\r\n",
			"+REFCOUNT <key>\r\n",
			"+    Return the number of references of the value associated with the specified\r\n",
			"+    <key>.\r\n",
			"+HELP\r\n",
			"+    Prints this help.\r\n")},
		{cmd: "hello 3"},
		{cmd: "object encoding nokey", want: "_\r\n"},
		{cmd: "hello 2"},
	}},
	{"SCAN argument errors", []ksStep{
		{argv: []string{"scan", " 1"}, want: ksErr(errInvalidCursor)},
		{cmd: "scan 18446744073709551616", want: ksErr(errInvalidCursor)},
		{cmd: "scan -18446744073709551616", want: ksErr(errInvalidCursor)},
		{cmd: "scan 0x", want: ksErr(errInvalidCursor)},
		{cmd: "scan 1.0", want: ksErr(errInvalidCursor)},
		{cmd: "scan +", want: ksErr(errInvalidCursor)},
		{cmd: "scan -", want: ksErr(errInvalidCursor)},
		{cmd: "scan abc count 0", want: ksErr(errInvalidCursor)},
		{cmd: "scan 0 count 0", want: ksSyntax},
		{cmd: "scan 0 count -1", want: ksSyntax},
		{cmd: "scan 0 count abc", want: ksNotInt},
		{cmd: "scan 0 count 10 count 0", want: ksSyntax},
		{cmd: "scan 0 match", want: ksSyntax},
		{cmd: "scan 0 type", want: ksSyntax},
		{cmd: "scan 0 count", want: ksSyntax},
		{cmd: "scan 0 foo bar", want: ksSyntax},
		{cmd: "scan 0 match * foo", want: ksSyntax},
	}},
}

func TestKeyScripts(t *testing.T) {
	for _, n := range []int{1, 3} {
		for _, sc := range ksScripts {
			t.Run(fmt.Sprintf("%s/shards=%d", sc.name, n), func(t *testing.T) {
				c := ksCtx(n)
				for i, st := range sc.steps {
					if got := ksDo(t, c, st.args()...); st.want != "" && got != st.want {
						t.Errorf("step %d %q: got %q, want %q", i, st.args(), got, st.want)
					}
				}
			})
		}
	}
}

// TestKeyScriptsMatchRealRedis replays the scripts against a real Redis when
// REDSHARD_REDIS_ADDR names one (it is flushed), skipping fake-clock steps.
func TestKeyScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range ksScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("HELLO", "2")
			send("SELECT", "0")
			send("FLUSHALL")
			for i, st := range sc.steps {
				got := send(st.args()...)
				if st.fake || strings.EqualFold(st.args()[0], "hello") {
					continue
				}
				if st.want != "" && got != st.want {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

// ksProp renders the propagation record: "dirty=N" then each logged argv.
func ksProp(p *Propagation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dirty=%d", p.Dirty)
	if p.Custom {
		for _, argv := range p.Cmds {
			b.WriteString(" |")
			for _, a := range argv {
				b.WriteString(" " + string(a))
			}
		}
	}
	return b.String()
}

func TestKeyCommandsPropagateLikeRedis(t *testing.T) {
	abs := strconv.FormatInt(ksNow+100_000, 10)
	cases := []struct {
		name  string
		setup []string // commands run first, space separated
		cmd   string
		want  string
	}{
		{"DEL logs itself once per removed key", []string{"set a 1", "set b 1"}, "del a b c", "dirty=2"},
		{"DEL of nothing logs nothing", nil, "del a", "dirty=0"},
		{"UNLINK logs itself", []string{"set a 1"}, "unlink a", "dirty=1"},
		{"EXPIRE logs PEXPIREAT with the absolute time", []string{"set k v"}, "expire k 100", "dirty=1 | PEXPIREAT k " + abs},
		{"PEXPIRE logs PEXPIREAT", []string{"set k v"}, "pexpire k 100000", "dirty=1 | PEXPIREAT k " + abs},
		{"EXPIREAT logs PEXPIREAT in ms", []string{"set k v"}, "expireat k 2000000000", "dirty=1 | PEXPIREAT k 2000000000000"},
		{"EXPIRE keeps its options in the log", []string{"set k v"}, "expire k 100 NX", "dirty=1 | PEXPIREAT k " + abs + " NX"},
		{"PEXPIREAT logs itself", []string{"set k v"}, "pexpireat k 2000000000000", "dirty=1"},
		{"EXPIRE in the past logs DEL", []string{"set k v"}, "expire k -1", "dirty=1 | DEL k"},
		{"PEXPIREAT in the past logs DEL", []string{"set k v"}, "pexpireat k 5", "dirty=1 | DEL k"},
		{"EXPIRE refused by NX logs nothing", []string{"set k v", "expire k 10"}, "expire k 100 NX", "dirty=0"},
		{"EXPIRE of a missing key logs nothing", nil, "expire k 100", "dirty=0"},
		{"PERSIST logs itself", []string{"set k v", "expire k 10"}, "persist k", "dirty=1"},
		{"PERSIST without expiry logs nothing", []string{"set k v"}, "persist k", "dirty=0"},
		{"RENAME logs itself", []string{"set k v"}, "rename k k2", "dirty=1"},
		{"RENAME onto itself logs nothing", []string{"set k v"}, "rename k k", "dirty=0"},
		{"RENAMENX refused logs nothing", []string{"set k v", "set k2 v"}, "renamenx k k2", "dirty=0"},
		{"COPY logs itself", []string{"set k v"}, "copy k k2", "dirty=1"},
		{"MOVE logs itself", []string{"set k v"}, "move k 1", "dirty=1"},
		{"MOVE of a missing key logs nothing", nil, "move k 1", "dirty=0"},
		{"SWAPDB logs itself", nil, "swapdb 0 1", "dirty=1"},
		{"FLUSHDB logs itself even when empty", nil, "flushdb", "dirty=1"},
		{"FLUSHDB counts the removed keys", []string{"set a 1", "set b 1"}, "flushdb", "dirty=2"},
		{"FLUSHALL logs itself even when empty", nil, "flushall", "dirty=1"},
		{"TOUCH logs nothing", []string{"set k v"}, "touch k", "dirty=0"},
	}
	for _, n := range []int{1, 3} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/shards=%d", tc.name, n), func(t *testing.T) {
				c := ksCtx(n)
				for _, s := range tc.setup {
					ksDo(t, c, strings.Fields(s)...)
				}
				ksDo(t, c, strings.Fields(tc.cmd)...)
				if got := ksProp(&c.Prop); got != tc.want {
					t.Errorf("%s: logged %q, want %q", tc.cmd, got, tc.want)
				}
			})
		}
	}
}

func TestExpirePropagatedArgvOwnsItsNumber(t *testing.T) {
	c := ksCtx(1)
	ksDo(t, c, "set", "k", "v")
	ksDo(t, c, "expire", "k", "100")
	num := c.Prop.Cmds[0][2]
	want := string(num)
	c.Out = append(c.Out[:0], bytes.Repeat([]byte("x"), 64)...)
	ksDo(t, c, "set", "k2", "v")
	if string(num) != want {
		t.Fatalf("propagated time changed to %q", num)
	}
}

func TestExpiredKeysLookMissing(t *testing.T) {
	cases := []struct{ cmd, want string }{
		{"exists k", ksZero},
		{"type k", "+none\r\n"},
		{"ttl k", ":-2\r\n"},
		{"pttl k", ":-2\r\n"},
		{"expiretime k", ":-2\r\n"},
		{"persist k", ksZero},
		{"expire k 100", ksZero},
		{"touch k", ksZero},
		{"del k", ksZero},
		{"rename k k2", ksNoKey},
		{"renamenx k k2", ksNoKey},
		{"copy k k2", ksZero},
		{"move k 1", ksZero},
		{"object encoding k", ksNull},
		{"keys *", "*0\r\n"},
		{"randomkey", ksNull},
	}
	for _, n := range []int{1, 3} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/shards=%d", tc.cmd, n), func(t *testing.T) {
				c := ksCtx(n)
				ksDo(t, c, "set", "k", "v")
				ksDo(t, c, "pexpire", "k", "1000")
				setNow(c, ksNow+1000)
				if got := ksDo(t, c, strings.Fields(tc.cmd)...); got != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			})
		}
	}
}

func TestExpiredTargetDoesNotBlock(t *testing.T) {
	// An expired target counts as absent for RENAMENX, COPY and MOVE.
	for _, n := range []int{1, 3} {
		c := ksCtx(n)
		for _, k := range []string{"t1", "t2"} {
			ksDo(t, c, "set", k, "old")
			ksDo(t, c, "pexpire", k, "10")
		}
		ksDo(t, c, "select", "1")
		ksDo(t, c, "set", "m", "old")
		ksDo(t, c, "pexpire", "m", "10")
		ksDo(t, c, "select", "0")
		setNow(c, ksNow+10)
		ksDo(t, c, "set", "src", "v")
		ksDo(t, c, "set", "m", "v")
		for _, st := range []ksStep{
			{cmd: "renamenx src t1", want: ksOne},
			{cmd: "copy t1 t2", want: ksOne},
			{cmd: "move m 1", want: ksOne},
			{cmd: "ttl t2", want: ":-1\r\n"},
		} {
			if got := ksDo(t, c, st.args()...); got != st.want {
				t.Errorf("shards=%d %q: got %q, want %q", n, st.cmd, got, st.want)
			}
		}
	}
}

func TestExpireWhileLoadingKeepsTheKey(t *testing.T) {
	c := ksCtx(1)
	ksDo(t, c, "set", "k", "v")
	ksDo(t, c, "set", "z", "v")
	c.Shards[0].Loading = true
	if got := ksDo(t, c, "expire", "k", "-10"); got != ksOne {
		t.Fatalf("got %q", got)
	}
	if got := ksProp(&c.Prop); got != "dirty=1 | PEXPIREAT k "+strconv.FormatInt(ksNow-10_000, 10) {
		t.Fatalf("logged %q", got)
	}
	if got := ksDo(t, c, "pexpireat", "z", "0"); got != ksOne {
		t.Fatalf("got %q", got)
	}
	if got := ksDo(t, c, "exists", "k", "z"); got != ":2\r\n" {
		t.Fatalf("while loading: exists = %q", got)
	}
	c.Shards[0].Loading = false
	if got := ksDo(t, c, "exists", "k", "z"); got != ksZero {
		t.Fatalf("after loading: exists = %q", got)
	}
}

func TestTTLCountsDownWithTheClock(t *testing.T) {
	c := ksCtx(3)
	ksDo(t, c, "set", "k", "v")
	ksDo(t, c, "expire", "k", "10")
	for _, tc := range []struct {
		after     int64
		ttl, pttl string
	}{
		{0, ":10\r\n", ":10000\r\n"},
		{499, ":10\r\n", ":9501\r\n"},
		{500, ":10\r\n", ":9500\r\n"},
		{501, ":9\r\n", ":9499\r\n"},
		{9499, ":1\r\n", ":501\r\n"},
		{9501, ":0\r\n", ":499\r\n"},
		{9999, ":0\r\n", ":1\r\n"},
		{10000, ":-2\r\n", ":-2\r\n"},
	} {
		setNow(c, ksNow+tc.after)
		if got := ksDo(t, c, "pttl", "k"); got != tc.pttl {
			t.Errorf("+%dms: PTTL %q, want %q", tc.after, got, tc.pttl)
		}
		if got := ksDo(t, c, "ttl", "k"); got != tc.ttl {
			t.Errorf("+%dms: TTL %q, want %q", tc.after, got, tc.ttl)
		}
	}
}

func TestRenameAcrossShardsMovesEverything(t *testing.T) {
	const n = 3
	c := ksCtx(n)
	src, dst := keyOnShard("src", 0, n), keyOnShard("dst", 2, n)
	list := &ksList{items: []string{"a", "b"}}
	sdb, ddb := c.DBOf([]byte(src)), c.DBOf([]byte(dst))
	slot := sdb.SetObj([]byte(src), TypeList, EncQuicklist, list)
	sdb.SetExpiry(slot, ksNow+5000)
	sdb.at(slot).lru = 12345
	ddb.SetObj([]byte(dst), TypeList, EncQuicklist, &ksList{})
	srcObjs := len(c.Shards[0].objs) - len(c.Shards[0].objFree)

	if got := ksDo(t, c, "rename", src, dst); got != ksOK {
		t.Fatalf("rename: %q", got)
	}
	if sdb.Peek([]byte(src)) >= 0 {
		t.Fatal("source still present")
	}
	ns := ddb.Peek([]byte(dst))
	if ns < 0 {
		t.Fatal("target missing")
	}
	if ddb.Obj(ns) != any(list) || ddb.Type(ns) != TypeList || ddb.Encoding(ns) != EncQuicklist {
		t.Fatalf("target holds %v type %d enc %d", ddb.Obj(ns), ddb.Type(ns), ddb.Encoding(ns))
	}
	if ddb.Expiry(ns) != ksNow+5000 || ddb.LRU(ns) != 12345 {
		t.Fatalf("expiry %d lru %d", ddb.Expiry(ns), ddb.LRU(ns))
	}
	if live := len(c.Shards[0].objs) - len(c.Shards[0].objFree); live != srcObjs-1 {
		t.Fatalf("source shard keeps %d objects, want %d", live, srcObjs-1)
	}
	if live := len(c.Shards[2].objs) - len(c.Shards[2].objFree); live != 1 {
		t.Fatalf("target shard holds %d objects, want 1", live)
	}
	// and a string back the other way, onto a missing key
	ksDo(t, c, "set", dst+"s", "value")
	if got := ksDo(t, c, "renamenx", dst+"s", src); got != ksOne {
		t.Fatalf("renamenx: %q", got)
	}
	if got := ksDo(t, c, "get", src); got != bulk("value") {
		t.Fatalf("get: %q", got)
	}
}

func TestCopyIsIndependentOfTheSource(t *testing.T) {
	for _, n := range []int{1, 3} {
		c := ksCtx(n)
		ksDo(t, c, "rpush", "l", "a", "b")
		ksDo(t, c, "copy", "l", "l2")
		db := c.DBOf([]byte("l2"))
		cp := db.Obj(db.Peek([]byte("l2"))).(*ksList)
		cp.items[0] = "changed"
		sdb := c.DBOf([]byte("l"))
		if orig := sdb.Obj(sdb.Peek([]byte("l"))).(*ksList); orig.items[0] != "a" || orig == cp {
			t.Fatalf("shards=%d: source changed with the copy", n)
		}
		ksDo(t, c, "set", "s", "abc")
		ksDo(t, c, "copy", "s", "s2", "db", "3")
		ksDo(t, c, "set", "s", "xyz")
		ksDo(t, c, "select", "3")
		if got := ksDo(t, c, "get", "s2"); got != bulk("abc") {
			t.Fatalf("shards=%d: copy reads %q", n, got)
		}
	}
}

func TestSwapdbSwapsEveryShard(t *testing.T) {
	c := ksCtx(3)
	var keys []string
	for i := 0; i < 30; i++ {
		k := "k" + strconv.Itoa(i)
		keys = append(keys, k)
		ksDo(t, c, "set", k, "v")
	}
	ksDo(t, c, "swapdb", "0", "7")
	if got := ksDo(t, c, "dbsize"); got != ksZero {
		t.Fatalf("db 0 size %q", got)
	}
	ksDo(t, c, "select", "7")
	if got := ksDo(t, c, "dbsize"); got != ":30\r\n" {
		t.Fatalf("db 7 size %q", got)
	}
	for _, s := range c.Shards {
		for i, db := range s.DBs {
			if db.ID != i {
				t.Fatalf("shard %d: DB at %d has ID %d", s.ID, i, db.ID)
			}
		}
	}
	for _, k := range keys {
		if got := ksDo(t, c, "exists", k); got != ksOne {
			t.Fatalf("%s missing after swap", k)
		}
	}
}

// ksKeys runs KEYS and returns the sorted key names.
func ksKeys(t *testing.T, c *Ctx, pattern string) []string {
	t.Helper()
	out := ksDo(t, c, "keys", pattern)
	return ksSortedBulks(t, out)
}

// ksSortedBulks parses an array of bulk strings.
func ksSortedBulks(t *testing.T, out string) []string {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(out))
	line, _ := r.ReadString('\n')
	if line == "" || line[0] != '*' {
		t.Fatalf("not an array: %q", out)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	keys := []string{}
	for i := 0; i < n; i++ {
		h, _ := r.ReadString('\n')
		l, _ := strconv.Atoi(strings.TrimSpace(h[1:]))
		buf := make([]byte, l+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, string(buf[:l]))
	}
	slices.Sort(keys)
	return keys
}

func TestKeysMatchesAcrossShardsAndSkipsExpired(t *testing.T) {
	for _, n := range []int{1, 3} {
		c := ksCtx(n)
		for _, k := range []string{"hello", "hallo", "hxllo", "hllo", "heeeello", "hillo", "hbllo", "Hello"} {
			ksDo(t, c, "set", k, "1")
		}
		ksDo(t, c, "set", "gone", "1")
		ksDo(t, c, "pexpire", "gone", "5")
		ksDo(t, c, "set", "going", "1")
		ksDo(t, c, "pexpire", "going", "50")
		setNow(c, ksNow+5)
		ksDo(t, c, "select", "2")
		ksDo(t, c, "set", "hello2", "1")
		ksDo(t, c, "select", "0")
		for _, tc := range []struct {
			pat  string
			want []string
		}{
			{"*", []string{"Hello", "going", "hallo", "hbllo", "heeeello", "hello", "hillo", "hllo", "hxllo"}},
			{"h?llo", []string{"hallo", "hbllo", "hello", "hillo", "hxllo"}},
			{"h*llo", []string{"hallo", "hbllo", "heeeello", "hello", "hillo", "hllo", "hxllo"}},
			{"h[ae]llo", []string{"hallo", "hello"}},
			{"h[^e]llo", []string{"hallo", "hbllo", "hillo", "hxllo"}},
			{"h[a-b]llo", []string{"hallo", "hbllo"}},
			{"g*", []string{"going"}},
			{"nomatch*", []string{}},
		} {
			if got := ksKeys(t, c, tc.pat); !slices.Equal(got, tc.want) {
				t.Errorf("shards=%d KEYS %s = %q, want %q", n, tc.pat, got, tc.want)
			}
		}
		// KEYS skips the expired key but leaves it for the expiry machinery.
		if got := ksDo(t, c, "dbsize"); got != ":10\r\n" {
			t.Errorf("shards=%d: DBSIZE after KEYS = %q, want 10 (expired key kept)", n, got)
		}
	}
}

// ksScanAll runs a full SCAN iteration with the extra arguments and returns
// the keys (with repeats) and the number of calls. between, when set, runs
// after every call.
func ksScanAll(t *testing.T, c *Ctx, extra []string, between func(call int)) ([]string, int) {
	t.Helper()
	var all []string
	cursor := "0"
	for call := 1; ; call++ {
		args := append([]string{"scan", cursor}, extra...)
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		// the routing must agree with the cursor the handler decodes
		if cur, _ := strconv.ParseUint(cursor, 10, 64); scanShard(argv, len(c.Shards)) != int(cur%uint64(len(c.Shards))) {
			t.Fatalf("cursor %s routed to shard %d", cursor, scanShard(argv, len(c.Shards)))
		}
		out := ksDo(t, c, args...)
		r := bufio.NewReader(strings.NewReader(out))
		if l, _ := r.ReadString('\n'); l != "*2\r\n" {
			t.Fatalf("scan reply %q", out)
		}
		r.ReadString('\n')
		cl, _ := r.ReadString('\n')
		cursor = strings.TrimSpace(cl)
		rest, _ := r.ReadString(0)
		all = append(all, ksSortedBulks(t, rest)...)
		if between != nil {
			between(call)
		}
		if cursor == "0" {
			return all, call
		}
		if call > 1_000_000 {
			t.Fatal("SCAN does not terminate")
		}
	}
}

func TestScanReturnsEveryKeyOnceAcrossShards(t *testing.T) {
	for _, n := range []int{1, 3} {
		for _, count := range []string{"1", "5", "10", "1000"} {
			c := ksCtx(n)
			want := map[string]bool{}
			for i := 0; i < 1000; i++ {
				k := "key:" + strconv.Itoa(i)
				want[k] = true
				ksDo(t, c, "set", k, "v")
			}
			got, calls := ksScanAll(t, c, []string{"count", count}, nil)
			if len(got) != 1000 {
				t.Errorf("shards=%d count=%s: %d keys returned, want 1000", n, count, len(got))
			}
			seen := map[string]bool{}
			for _, k := range got {
				if !want[k] || seen[k] {
					t.Errorf("shards=%d count=%s: unexpected or repeated key %q", n, count, k)
				}
				seen[k] = true
			}
			if count == "1000" && calls != n {
				t.Errorf("shards=%d: COUNT 1000 took %d calls, want one per shard", n, calls)
			}
		}
	}
}

func TestScanMatchAndType(t *testing.T) {
	for _, n := range []int{1, 3} {
		c := ksCtx(n)
		for i := 0; i < 1000; i++ {
			ksDo(t, c, "set", "key:"+strconv.Itoa(i), "v")
		}
		for i := 0; i < 10; i++ {
			ksDo(t, c, "rpush", "list:"+strconv.Itoa(i), "a")
		}
		for _, tc := range []struct {
			extra []string
			want  int
		}{
			{[]string{"match", "key:1??"}, 100},
			{[]string{"match", "*"}, 1010},
			{[]string{"type", "list"}, 10},
			{[]string{"type", "LIST"}, 10},
			{[]string{"type", "string"}, 1000},
			{[]string{"type", "string", "match", "key:*", "count", "10"}, 1000},
			{[]string{"type", "hash"}, 0},
			{[]string{"type", "nonsense"}, 0},
			{[]string{"match", "list:*", "type", "string"}, 0},
		} {
			got, _ := ksScanAll(t, c, tc.extra, nil)
			if len(got) != tc.want {
				t.Errorf("shards=%d SCAN %q: %d keys, want %d", n, tc.extra, len(got), tc.want)
			}
		}
	}
}

func TestScanGuaranteeUnderWriteLoad(t *testing.T) {
	// Keys present for the whole iteration are returned even while other
	// keys are deleted and added between the calls.
	for _, n := range []int{1, 3} {
		c := ksCtx(n)
		stable := map[string]bool{}
		for i := 0; i < 500; i++ {
			k := "stable:" + strconv.Itoa(i)
			stable[k] = true
			ksDo(t, c, "set", k, "v")
			ksDo(t, c, "set", "churn:"+strconv.Itoa(i), "v")
		}
		next := 500
		got, _ := ksScanAll(t, c, []string{"count", "7"}, func(call int) {
			// delete a few churn keys, add new ones (which reuse freed slots)
			for j := 0; j < 5; j++ {
				ksDo(t, c, "del", "churn:"+strconv.Itoa((call*5+j)%next))
				ksDo(t, c, "set", "new:"+strconv.Itoa(next), "v")
				next++
			}
		})
		seen := map[string]bool{}
		for _, k := range got {
			seen[k] = true
		}
		for k := range stable {
			if !seen[k] {
				t.Fatalf("shards=%d: stable key %s never returned", n, k)
			}
		}
	}
}

func TestScanSkipsAndReclaimsExpiredKeys(t *testing.T) {
	for _, n := range []int{1, 3} {
		c := ksCtx(n)
		var expired []string
		for _, s := range c.Shards {
			s.OnExpired = func(db *DB, key []byte) { expired = append(expired, string(key)) }
		}
		for i := 0; i < 100; i++ {
			k := "k" + strconv.Itoa(i)
			ksDo(t, c, "set", k, "v")
			if i%2 == 0 {
				ksDo(t, c, "pexpire", k, "10")
			}
		}
		setNow(c, ksNow+10)
		got, _ := ksScanAll(t, c, []string{"match", "k*"}, nil)
		if len(got) != 50 {
			t.Fatalf("shards=%d: %d keys returned, want 50", n, len(got))
		}
		for _, k := range got {
			if i, _ := strconv.Atoi(k[1:]); i%2 == 0 {
				t.Fatalf("expired key %s returned", k)
			}
		}
		if len(expired) != 50 {
			t.Fatalf("shards=%d: %d keys reclaimed, want 50", n, len(expired))
		}
		if got := ksDo(t, c, "dbsize"); got != ":50\r\n" {
			t.Fatalf("dbsize %q", got)
		}
	}
}

func TestScanBoundsItsWorkOnASparseTable(t *testing.T) {
	c := ksCtx(1)
	for i := 0; i < 1000; i++ {
		ksDo(t, c, "set", "k"+strconv.Itoa(i), "v")
	}
	for i := 0; i < 999; i++ {
		ksDo(t, c, "del", "k"+strconv.Itoa(i))
	}
	// COUNT 2 visits at most 20 slots: nothing found, the cursor moves on.
	if got := ksDo(t, c, "scan", "0", "count", "2"); got != "*2\r\n$2\r\n20\r\n*0\r\n" {
		t.Fatalf("got %q", got)
	}
	if got := ksDo(t, c, "scan", "980", "count", "2"); got != "*2\r\n$1\r\n0\r\n*1\r\n$4\r\nk999\r\n" {
		t.Fatalf("got %q", got)
	}
}

func TestScanCursorsWalkTheShardsInOrder(t *testing.T) {
	const n = 3
	c := ksCtx(n)
	// one key per shard: each call finishes a shard and points at the next
	for i := 0; i < n; i++ {
		ksDo(t, c, "set", keyOnShard("k", i, n), "v")
	}
	for i, want := range []string{"1", "2", "0"} {
		out := ksDo(t, c, "scan", strconv.Itoa(i))
		if !strings.HasPrefix(out, "*2\r\n"+bulk(want)+"*1\r\n") {
			t.Fatalf("scan %d: %q, want cursor %s and one key", i, out, want)
		}
	}
	// cursors Redis accepts: empty, signed, NUL-terminated; huge positions end the shard
	for _, tc := range []struct{ cursor, want string }{
		{"", "*2\r\n$1\r\n1\r\n*1\r\n"},
		{"+0", "*2\r\n$1\r\n1\r\n*1\r\n"},
		{"0\x00junk", "*2\r\n$1\r\n1\r\n*1\r\n"},
		{"-1", "*2\r\n$1\r\n1\r\n*0\r\n"}, // 2^64-1: shard 0 of 3, past its end
		{"3000000", "*2\r\n$1\r\n1\r\n*0\r\n"},
	} {
		if out := ksDo(t, c, "scan", tc.cursor); !strings.HasPrefix(out, tc.want) {
			t.Errorf("scan %q: %q, want prefix %q", tc.cursor, out, tc.want)
		}
	}
	if got := scanShard([][]byte{[]byte("scan"), []byte("bad")}, n); got != 0 {
		t.Errorf("invalid cursor routed to %d", got)
	}
	if got := scanShard([][]byte{[]byte("scan"), []byte("5")}, n); got != 2 {
		t.Errorf("cursor 5 routed to %d", got)
	}
}

// TestScanGoesOnIntoHeldShards: a call that holds the shards after its
// cursor's (Ctx.Held) walks on into them within its COUNT, so SCAN 0 over
// a small data set ends the iteration in one call; without them it stops
// at its shard's end, as before.
func TestScanGoesOnIntoHeldShards(t *testing.T) {
	const n = 3
	c := ksCtx(n)
	for i := 0; i < n; i++ {
		ksDo(t, c, "set", keyOnShard("k", i, n), "v")
	}
	c.Held = 1<<n - 1
	if out := ksDo(t, c, "scan", "0"); !strings.HasPrefix(out, "*2\r\n"+bulk("0")+"*3\r\n") {
		t.Fatalf("scan 0 holding every shard: %q, want cursor 0 and the three keys", out)
	}
	// COUNT 2: two keys, from shards 0 and 1; shard 1 is done, so the
	// cursor names shard 2's start.
	if out := ksDo(t, c, "scan", "0", "count", "2"); !strings.HasPrefix(out, "*2\r\n"+bulk("2")+"*2\r\n") {
		t.Fatalf("scan 0 count 2: %q, want cursor 2 and two keys", out)
	}
	// From shard 1, holding shards 1 and 2 only.
	c.Held = 6
	if out := ksDo(t, c, "scan", "1"); !strings.HasPrefix(out, "*2\r\n"+bulk("0")+"*2\r\n") {
		t.Fatalf("scan 1 holding shards 1-2: %q, want cursor 0 and two keys", out)
	}
	// Not holding the next shard: the call stops at its own shard's end.
	c.Held = 1
	if out := ksDo(t, c, "scan", "0"); !strings.HasPrefix(out, "*2\r\n"+bulk("1")+"*1\r\n") {
		t.Fatalf("scan 0 holding shard 0: %q, want cursor 1 and one key", out)
	}
	// Expired keys of every held shard are reclaimed by the one call.
	c.Held = 1<<n - 1
	for i := 0; i < n; i++ {
		ksDo(t, c, "pexpire", keyOnShard("k", i, n), "1")
	}
	setNow(c, ksNow+10)
	if out := ksDo(t, c, "scan", "0"); out != "*2\r\n"+bulk("0")+"*0\r\n" {
		t.Fatalf("scan 0 over expired keys: %q", out)
	}
	for i := 0; i < n; i++ {
		if k, _ := c.Shards[i].Keys(); k != 0 {
			t.Fatalf("shard %d still has %d keys after SCAN met them expired", i, k)
		}
	}
	if first, count := ScanRoute([][]byte{[]byte("scan"), []byte("5"), []byte("match"), []byte("x"), []byte("COUNT"), []byte("7")}, n); first != 2 || count != 7 {
		t.Fatalf("ScanRoute: %d %d", first, count)
	}
}

func TestParseCursorFollowsStrtoul(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"", 0, true},
		{"007", 7, true},
		{"+12", 12, true},
		{"-1", math.MaxUint64, true},
		{"-18446744073709551615", 1, true},
		{"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1\x00 ", 1, true},
		{"\x00", 0, true},
		{"0x1", 0, false},
		{"+", 0, false},
		{"--1", 0, false},
	} {
		got, ok := parseCursor([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseCursor(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRandomkeyReclaimsExpiredKeys(t *testing.T) {
	for _, n := range []int{1, 3} {
		c := ksCtx(n)
		for i := 0; i < 50; i++ {
			k := "k" + strconv.Itoa(i)
			ksDo(t, c, "set", k, "v")
			ksDo(t, c, "pexpire", k, "10")
		}
		ksDo(t, c, "set", "live", "v")
		setNow(c, ksNow+10)
		for i := 0; i < 20; i++ {
			if got := ksDo(t, c, "randomkey"); got != bulk("live") {
				t.Fatalf("shards=%d: randomkey %q", n, got)
			}
		}
		ksDo(t, c, "del", "live")
		if got := ksDo(t, c, "randomkey"); got != ksNull {
			t.Fatalf("shards=%d: randomkey over expired keys %q", n, got)
		}
		if got := ksDo(t, c, "dbsize"); got != ksZero {
			t.Fatalf("shards=%d: expired keys left: %q", n, got)
		}
	}
}

func TestRandomkeyReachesEveryShard(t *testing.T) {
	const n = 3
	c := ksCtx(n)
	// 1 key on shard 0, 99 on shard 2: draws follow the key counts
	ksDo(t, c, "set", keyOnShard("a", 0, n), "v")
	for i := 0; c.Shards[2].DBs[0].Len() < 99; i++ {
		ksDo(t, c, "set", keyOnShard("b"+strconv.Itoa(i)+"-", 2, n), "v")
	}
	hits := map[int]int{}
	for i := 0; i < 2000; i++ {
		out := ksDo(t, c, "randomkey")
		k := ksSortedBulks(t, "*1\r\n"+out)[0]
		hits[ShardOf([]byte(k), n)]++
	}
	if hits[1] != 0 || hits[0] == 0 || hits[0] > 100 || hits[2] < 1800 {
		t.Fatalf("draws per shard %v, want about 20/0/1980", hits)
	}
}

func TestObjectIdletimeAndFreq(t *testing.T) {
	c := ksCtx(3)
	ksDo(t, c, "set", "k", "v")
	setNow(c, ksNow+5000)
	if got := ksDo(t, c, "object", "idletime", "k"); got != ":5\r\n" {
		t.Fatalf("idletime %q", got)
	}
	// OBJECT, TYPE, EXISTS and TTL do not touch the key; TOUCH and COPY do.
	for _, cmd := range []string{"object encoding k", "type k", "exists k", "ttl k", "object idletime k"} {
		ksDo(t, c, strings.Fields(cmd)...)
	}
	if got := ksDo(t, c, "object", "idletime", "k"); got != ":5\r\n" {
		t.Fatalf("idletime after non-touching reads %q", got)
	}
	ksDo(t, c, "touch", "k")
	if got := ksDo(t, c, "object", "idletime", "k"); got != ksZero {
		t.Fatalf("idletime after TOUCH %q", got)
	}
	for _, sh := range c.Shards {
		sh.Cfg.MaxmemoryPolicy.Store(PolicyAllkeysLFU)
	}
	if got := ksDo(t, c, "object", "idletime", "k"); got != ksErr(errLFU) {
		t.Fatalf("idletime under LFU %q", got)
	}
	db := c.DBOf([]byte("k"))
	db.at(db.Peek([]byte("k"))).lru = lfuMinutes(ksNow+5000)<<8 | 7
	if got := ksDo(t, c, "object", "freq", "k"); got != ":7\r\n" {
		t.Fatalf("freq under LFU %q", got)
	}
	// Three minutes later, at lfu-decay-time 1, the counter has lost three.
	setNow(c, ksNow+5000+3*60000)
	if got := ksDo(t, c, "object", "freq", "k"); got != ":4\r\n" {
		t.Fatalf("freq three minutes later %q", got)
	}
}

func TestReadsCountKeyspaceHitsAndMisses(t *testing.T) {
	c := ksCtx(1)
	ksDo(t, c, "set", "k", "v")
	st := &c.Shards[0].Stats
	for _, cmd := range []string{"exists k nokey", "type k", "ttl nokey", "touch k", "object encoding k"} {
		ksDo(t, c, strings.Fields(cmd)...)
	}
	if st.KeyspaceHits != 4 || st.KeyspaceMisses != 2 {
		t.Fatalf("hits %d misses %d, want 4 and 2", st.KeyspaceHits, st.KeyspaceMisses)
	}
	// writes do not count
	for _, cmd := range []string{"del nokey", "expire k 100", "persist k", "rename k k2"} {
		ksDo(t, c, strings.Fields(cmd)...)
	}
	if st.KeyspaceHits != 4 || st.KeyspaceMisses != 2 {
		t.Fatalf("writes counted: hits %d misses %d", st.KeyspaceHits, st.KeyspaceMisses)
	}
}

func TestFlushdbReleasesMemory(t *testing.T) {
	c := ksCtx(1)
	sh := c.Shards[0]
	ksDo(t, c, "select", "1")
	ksDo(t, c, "set", "other", "db")
	used := sh.Slab.Used()
	ksDo(t, c, "select", "0")
	for i := 0; i < 1000; i++ {
		ksDo(t, c, "set", "k"+strconv.Itoa(i), strings.Repeat("v", i))
		ksDo(t, c, "rpush", "l"+strconv.Itoa(i), "a")
	}
	ksDo(t, c, "flushdb")
	if got := sh.Slab.Used(); got != used {
		t.Fatalf("slab used %d after FLUSHDB, want %d", got, used)
	}
	if live := len(sh.objs) - len(sh.objFree); live != 0 {
		t.Fatalf("%d objects left", live)
	}
	ksDo(t, c, "select", "1")
	if got := ksDo(t, c, "get", "other"); got != bulk("db") {
		t.Fatalf("other database lost: %q", got)
	}
}

func TestDelAndExistsOfOneKeyAllocateNothing(t *testing.T) {
	c := ksCtx(3)
	c.Out = make([]byte, 0, 64)
	key := []byte("somekey")
	val := []byte("v")
	db := c.DBOf(key)
	del := [][]byte{[]byte("del"), key}
	exists := [][]byte{[]byte("exists"), key}
	// warm the free lists up
	db.SetStr(key, val, false)
	cmdDel(c, del)
	if n := testing.AllocsPerRun(100, func() {
		c.Out = c.Out[:0]
		cmdExists(c, exists)
		c.Out = c.Out[:0]
		cmdDel(c, del)
	}); n != 0 {
		t.Fatalf("DEL/EXISTS of a missing key: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		db.SetStr(key, val, false)
		c.Out = c.Out[:0]
		cmdExists(c, exists)
		c.Out = c.Out[:0]
		c.Prop.Reset()
		cmdDel(c, del)
	}); n != 0 {
		t.Fatalf("DEL/EXISTS of a present key: %v allocations", n)
	}
}

func TestKeyCommandTableNamesEveryCommand(t *testing.T) {
	want := []string{"copy", "dbsize", "del", "exists", "expire", "expireat", "expiretime",
		"flushall", "flushdb", "keys", "move", "object|encoding", "object|freq", "object|help",
		"object|idletime", "object|refcount", "persist", "pexpire", "pexpireat", "pexpiretime",
		"pttl", "randomkey", "rename", "renamenx", "scan", "swapdb", "touch", "ttl", "type", "unlink"}
	var got []string
	for _, cmd := range keyCommands {
		got = append(got, cmd.Name)
		all := cmd.Name == "keys" || cmd.Name == "dbsize" || cmd.Name == "flushdb" ||
			cmd.Name == "flushall" || cmd.Name == "swapdb" || cmd.Name == "randomkey"
		if (cmd.Route&AllShards != 0) != all {
			t.Errorf("%s: Route %d", cmd.Name, cmd.Route)
		}
		if (cmd.Shard != nil) != (cmd.Name == "scan") {
			t.Errorf("%s: Shard func set: %v", cmd.Name, cmd.Shard != nil)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("commands %q, want %q", got, want)
	}
}

// Redis does not share small integers when maxmemory is set with an LRU or
// LFU policy, so OBJECT REFCOUNT is 1 there (unit/maxmemory "With maxmemory
// and LRU policy integers are not shared").
func TestObjectRefcountUnsharedUnderLRU(t *testing.T) {
	c := ksCtx(1)
	cfg := c.Shards[0].Cfg
	ksDo(t, c, "set", "a", "1")
	for _, tc := range []struct {
		maxmemory bool
		policy    int64
		want      string
	}{
		{false, PolicyNoEviction, ":2147483647\r\n"},
		{false, PolicyAllkeysLRU, ":2147483647\r\n"},
		{true, PolicyAllkeysRandom, ":2147483647\r\n"},
		{true, PolicyNoEviction, ":2147483647\r\n"},
		{true, PolicyAllkeysLRU, ksOne},
		{true, PolicyVolatileLRU, ksOne},
		{true, PolicyAllkeysLFU, ksOne},
		{true, PolicyVolatileLFU, ksOne},
	} {
		cfg.MaxmemorySet.Store(tc.maxmemory)
		cfg.MaxmemoryPolicy.Store(tc.policy)
		if got := ksDo(t, c, "object", "refcount", "a"); got != tc.want {
			t.Errorf("maxmemory set %v, policy %d: OBJECT REFCOUNT %q, want %q", tc.maxmemory, tc.policy, got, tc.want)
		}
	}
}
