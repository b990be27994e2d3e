package shard

import (
	"strconv"
	"strings"
	"testing"
)

// Keyspace events: each command fires, in order, the events Redis 7.0's
// notifyKeyspaceEvent calls fire for it (db, event, key), on whichever
// shard holds the key.

func notifyCtx(flags uint32) (*Ctx, *[]string) {
	c := newStringCtx(3)
	var events []string
	t := DefaultTunables()
	t.NotifyFlags.Store(flags)
	for _, s := range c.Shards {
		s.Cfg = t
		s.OnNotify = func(db, class int, event string, key []byte) {
			events = append(events, strconv.Itoa(db)+" "+event+" "+string(key))
		}
	}
	return c, &events
}

var allCommands = func() map[string]func(*Ctx, [][]byte) {
	m := map[string]func(*Ctx, [][]byte){}
	for _, cmd := range Commands {
		m[cmd.Name] = cmd.Run
	}
	return m
}()

func runLine(t *testing.T, c *Ctx, line string) {
	t.Helper()
	args := strings.Fields(line)
	name := strings.ToLower(args[0])
	if name == "object" {
		name += "|" + strings.ToLower(args[1])
	}
	run := allCommands[name]
	if run == nil {
		t.Fatalf("no command %q", args[0])
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	c.Out = c.Out[:0]
	c.Prop.Reset()
	run(c, argv)
	if len(c.Out) > 0 && c.Out[0] == '-' {
		t.Fatalf("%s: %s", line, c.Out)
	}
}

const notifyAllClasses = NotifyGeneric | NotifyString | NotifyExpired | NotifyNew | NotifyKeyMiss |
	NotifyKeyspace | NotifyKeyevent

func TestCommandsFireKeyspaceEventsLikeRedis(t *testing.T) {
	cases := []struct {
		name  string
		setup []string
		cmd   string
		want  []string // "db event key"
	}{
		{"SET new key", nil, "set a 1", []string{"0 new a", "0 set a"}},
		{"SET overwrite is not new", []string{"set a 1"}, "set a 2", []string{"0 set a"}},
		{"SET EX", nil, "set a 1 ex 100", []string{"0 new a", "0 set a", "0 expire a"}},
		{"SET NX on existing fires nothing", []string{"set a 1"}, "set a 2 nx", nil},
		{"SETNX", nil, "setnx a 1", []string{"0 new a", "0 set a"}},
		{"SETEX", nil, "setex a 10 v", []string{"0 new a", "0 set a", "0 expire a"}},
		{"GETSET", []string{"set a 1"}, "getset a 2", []string{"0 set a"}},
		{"MSET", nil, "mset a 1 b 2", []string{"0 new a", "0 set a", "0 new b", "0 set b"}},
		{"MSETNX", nil, "msetnx a 1 b 2", []string{"0 new a", "0 set a", "0 new b", "0 set b"}},
		{"INCR", []string{"set a 1"}, "incr a", []string{"0 incrby a"}},
		{"DECRBY new key", nil, "decrby a 3", []string{"0 new a", "0 incrby a"}},
		{"INCRBYFLOAT", []string{"set a 1"}, "incrbyfloat a 1.5", []string{"0 incrbyfloat a"}},
		{"APPEND", []string{"set a 1"}, "append a x", []string{"0 append a"}},
		{"SETRANGE", []string{"set a 1"}, "setrange a 3 x", []string{"0 setrange a"}},
		{"GETDEL", []string{"set a 1"}, "getdel a", []string{"0 del a"}},
		{"GETDEL missing is a keymiss", nil, "getdel a", []string{"0 keymiss a"}},
		{"GET missing is a keymiss", nil, "get zz", []string{"0 keymiss zz"}},
		{"EXISTS miss", nil, "exists zz", []string{"0 keymiss zz"}},
		{"TTL miss", nil, "ttl zz", []string{"0 keymiss zz"}},
		{"OBJECT does not fire keymiss", nil, "object encoding zz", nil},
		{"GETEX EX", []string{"set a 1"}, "getex a ex 10", []string{"0 expire a"}},
		{"GETEX PERSIST", []string{"set a 1 ex 10"}, "getex a persist", []string{"0 persist a"}},
		{"GETEX PXAT in the past", []string{"set a 1"}, "getex a pxat 1", []string{"0 del a"}},
		{"DEL", []string{"set a 1", "set b 1"}, "del a b c", []string{"0 del a", "0 del b"}},
		{"UNLINK", []string{"set a 1"}, "unlink a", []string{"0 del a"}},
		{"EXPIRE", []string{"set a 1"}, "expire a 100", []string{"0 expire a"}},
		{"EXPIRE in the past deletes", []string{"set a 1"}, "expire a -1", []string{"0 del a"}},
		{"EXPIRE NX on a volatile key fires nothing", []string{"set a 1 ex 5"}, "expire a 100 nx", nil},
		{"PERSIST", []string{"set a 1 ex 5"}, "persist a", []string{"0 persist a"}},
		{"RENAME", []string{"set a 1"}, "rename a b", []string{"0 new b", "0 rename_from a", "0 rename_to b"}},
		{"MOVE", []string{"set a 1"}, "move a 3", []string{"3 new a", "0 move_from a", "3 move_to a"}},
		{"COPY", []string{"set a 1"}, "copy a b", []string{"0 new b", "0 copy_to b"}},
		{"COPY REPLACE is delete and add", []string{"set a 1", "set b 2"}, "copy a b replace", []string{"0 new b", "0 copy_to b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, events := notifyCtx(notifyAllClasses)
			for _, s := range tc.setup {
				runLine(t, c, s)
			}
			*events = nil
			runLine(t, c, tc.cmd)
			if strings.Join(*events, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("%s:\n got  %q\n want %q", tc.cmd, *events, tc.want)
			}
		})
	}
}

func TestExpiredKeysFireExpired(t *testing.T) {
	c, events := notifyCtx(notifyAllClasses)
	runLine(t, c, "set lazy 1 px 100")
	runLine(t, c, "set active 1 px 100")
	*events = nil
	setNow(c, testNow+200)
	runLine(t, c, "get lazy") // lazy expiry, then the miss
	if want := "0 expired lazy|0 keymiss lazy"; strings.Join(*events, "|") != want {
		t.Fatalf("lazy: got %q, want %q", *events, want)
	}
	*events = nil
	for _, s := range c.Shards {
		s.ActiveExpireCycle(1e9, 1)
	}
	if want := "0 expired active"; strings.Join(*events, "|") != want {
		t.Fatalf("active: got %q, want %q", *events, want)
	}
}

func TestScanTypeFiresExpiredThenKeymissForStaleKeys(t *testing.T) {
	c, events := notifyCtx(notifyAllClasses)
	c.Shards = c.Shards[:1]
	runLine(t, c, "set stale 1 px 100")
	setNow(c, testNow+200)
	*events = nil
	runLine(t, c, "scan 0 type string")
	if want := "0 expired stale|0 keymiss stale"; strings.Join(*events, "|") != want {
		t.Fatalf("got %q, want %q", *events, want)
	}
}

func TestNotifyRespectsClassesAndLoading(t *testing.T) {
	c, events := notifyCtx(NotifyString | NotifyKeyevent) // no g, no n
	runLine(t, c, "set a 1 ex 10")
	runLine(t, c, "del a")
	if want := "0 set a"; strings.Join(*events, "|") != want {
		t.Fatalf("got %q, want %q", *events, want)
	}
	*events = nil
	for _, s := range c.Shards {
		s.Loading = true
	}
	runLine(t, c, "set b 1")
	if len(*events) != 0 {
		t.Fatalf("events while loading: %q", *events)
	}
}
