package shard

import (
	"strings"
	"testing"
)

// sgRun runs one command (XGROUP and XINFO by subcommand) and returns its reply.
func sgRun(c *Ctx, args ...string) string {
	c.Out = c.Out[:0]
	c.Prop.Reset()
	var argv [][]byte
	for _, a := range args {
		argv = append(argv, []byte(a))
	}
	name := strings.ToLower(args[0])
	if name == "xgroup" || name == "xinfo" {
		name += "|" + strings.ToLower(args[1])
	}
	hashCmdTable[name](c, argv)
	return string(c.Out)
}

func sgSetup(t *testing.T) *Ctx {
	c := ksCtx(1)
	c.NowMs = 1000
	for _, id := range []string{"1-1", "2-1", "3-1"} {
		sgRun(c, "xadd", "s", id, "f", id)
	}
	if got := sgRun(c, "xgroup", "create", "s", "g", "0"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	sgRun(c, "xreadgroup", "group", "g", "alice", "count", "2", "streams", "s", ">")
	c.NowMs = 1500
	sgRun(c, "xreadgroup", "group", "g", "bob", "streams", "s", ">")
	c.NowMs = 2000
	return c
}

func TestStreamXpending(t *testing.T) {
	c := sgSetup(t)
	for _, st := range []struct {
		args []string
		want string
	}{
		{[]string{"xpending", "s", "g"}, "*4\r\n:3\r\n" + bulk("1-1") + bulk("3-1") +
			"*2\r\n*2\r\n" + bulk("alice") + bulk("2") + "*2\r\n" + bulk("bob") + bulk("1")},
		{[]string{"xpending", "s", "g", "-", "+", "10"}, "*3\r\n" +
			"*4\r\n" + bulk("1-1") + bulk("alice") + ":1000\r\n:1\r\n" +
			"*4\r\n" + bulk("2-1") + bulk("alice") + ":1000\r\n:1\r\n" +
			"*4\r\n" + bulk("3-1") + bulk("bob") + ":500\r\n:1\r\n"},
		{[]string{"xpending", "s", "g", "(1-1", "(3-1", "10"}, "*1\r\n*4\r\n" + bulk("2-1") + bulk("alice") + ":1000\r\n:1\r\n"},
		{[]string{"xpending", "s", "g", "-", "+", "1", "bob"}, "*1\r\n*4\r\n" + bulk("3-1") + bulk("bob") + ":500\r\n:1\r\n"},
		{[]string{"xpending", "s", "g", "-", "+", "10", "nobody"}, "*0\r\n"},
		{[]string{"xpending", "s", "g", "idle", "600", "-", "+", "10"}, "*2\r\n" +
			"*4\r\n" + bulk("1-1") + bulk("alice") + ":1000\r\n:1\r\n" +
			"*4\r\n" + bulk("2-1") + bulk("alice") + ":1000\r\n:1\r\n"},
		{[]string{"xpending", "s", "g", "-", "+", "0"}, "*0\r\n"},
		{[]string{"xpending", "s", "g", "-", "+"}, "-ERR syntax error\r\n"},
		{[]string{"xpending", "s", "g", "idle", "1", "-", "+"}, "-ERR syntax error\r\n"},
		{[]string{"xpending", "s", "g", "(18446744073709551615-18446744073709551615", "+", "1"}, "-ERR invalid start ID for the interval\r\n"},
		{[]string{"xpending", "s", "g", "-", "(0-0", "1"}, "-ERR invalid end ID for the interval\r\n"},
		{[]string{"xpending", "s", "nog"}, "-NOGROUP No such key 's' or consumer group 'nog'\r\n"},
		{[]string{"xack", "s", "g", "1-1", "2-1", "3-1"}, ":3\r\n"},
		{[]string{"xpending", "s", "g"}, "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"},
	} {
		if got := sgRun(c, st.args...); got != st.want {
			t.Errorf("%q:\n got %q\nwant %q", st.args, got, st.want)
		}
	}
}

func TestStreamXautoclaim(t *testing.T) {
	c := sgSetup(t)
	sgRun(c, "xdel", "s", "2-1")
	// COUNT 1: 1-1 is claimed, the cursor is the next pending ID.
	got := sgRun(c, "xautoclaim", "s", "g", "carol", "0", "0", "count", "1", "justid")
	if want := "*3\r\n" + bulk("2-1") + "*1\r\n" + bulk("1-1") + "*0\r\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if len(c.Prop.Cmds) != 1 || string(c.Prop.Cmds[0][0]) != "XCLAIM" || string(c.Prop.Cmds[0][3]) != "carol" {
		t.Fatalf("prop %q", c.Prop.Cmds)
	}
	// 2-1 was deleted: it leaves the PEL, is reported, and logged as an XCLAIM.
	got = sgRun(c, "xautoclaim", "s", "g", "carol", "0", "2-1")
	want := "*3\r\n" + bulk("0-0") + "*1\r\n*2\r\n" + bulk("3-1") + "*2\r\n" + bulk("f") + bulk("3-1") +
		"*1\r\n" + bulk("2-1")
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if len(c.Prop.Cmds) != 2 || string(c.Prop.Cmds[0][5]) != "2-1" || string(c.Prop.Cmds[0][3]) != "alice" {
		t.Fatalf("prop %q", c.Prop.Cmds)
	}
	if got := sgRun(c, "xpending", "s", "g", "-", "+", "10", "carol"); !strings.Contains(got, "*2\r\n*4\r\n"+bulk("1-1")) ||
		!strings.Contains(got, bulk("3-1")+bulk("carol")+":0\r\n:2\r\n") {
		t.Fatalf("pending %q", got)
	}
	// min-idle-time filters; nothing claimed, nothing logged.
	got = sgRun(c, "xautoclaim", "s", "g", "dave", "5000", "0")
	if want := "*3\r\n" + bulk("0-0") + "*0\r\n*0\r\n"; got != want || len(c.Prop.Cmds) != 0 {
		t.Fatalf("got %q prop %q", got, c.Prop.Cmds)
	}
	for _, st := range []struct{ args, want string }{
		{"xautoclaim s g d 0 0 count 0", "-ERR COUNT must be > 0\r\n"},
		{"xautoclaim s g d 0 0 count 8070450532247928833", "-ERR COUNT must be > 0\r\n"},
		{"xautoclaim s g d x 0", "-ERR Invalid min-idle-time argument for XAUTOCLAIM\r\n"},
		{"xautoclaim s g d 0 0 foo", "-ERR syntax error\r\n"},
		{"xautoclaim s nog d 0 0", "-NOGROUP No such key 's' or consumer group 'nog'\r\n"},
	} {
		if got := sgRun(c, strings.Fields(st.args)...); got != st.want {
			t.Errorf("%s: got %q want %q", st.args, got, st.want)
		}
	}
}

func TestStreamXclaimLastIDOnly(t *testing.T) {
	c := sgSetup(t)
	if got := sgRun(c, "xclaim", "s", "g", "alice", "0", "9-9", "lastid", "5-0"); got != "*0\r\n" {
		t.Fatal(got)
	}
	if len(c.Prop.Cmds) != 1 || string(c.Prop.Cmds[0][0]) != "XGROUP" || string(c.Prop.Cmds[0][4]) != "5-0" {
		t.Fatalf("prop %q", c.Prop.Cmds)
	}
	// FORCE creates the NACK at one delivery, then the claim counts one more.
	sgRun(c, "xadd", "s", "6-1", "f", "v")
	sgRun(c, "xclaim", "s", "g", "zed", "0", "6-1", "force", "justid")
	if got := sgRun(c, "xpending", "s", "g", "6-1", "6-1", "1"); got != "*1\r\n*4\r\n"+bulk("6-1")+bulk("zed")+":0\r\n:1\r\n" {
		t.Fatal(got)
	}
}

func TestStreamXinfo(t *testing.T) {
	c := sgSetup(t)
	got := sgRun(c, "xinfo", "groups", "s")
	want := "*1\r\n*12\r\n" + bulk("name") + bulk("g") + bulk("consumers") + ":2\r\n" + bulk("pending") + ":3\r\n" +
		bulk("last-delivered-id") + bulk("3-1") + bulk("entries-read") + ":3\r\n" + bulk("lag") + ":0\r\n"
	if got != want {
		t.Fatalf("groups:\n got %q\nwant %q", got, want)
	}
	got = sgRun(c, "xinfo", "consumers", "s", "g")
	want = "*2\r\n*6\r\n" + bulk("name") + bulk("alice") + bulk("pending") + ":2\r\n" + bulk("idle") + ":1000\r\n" +
		"*6\r\n" + bulk("name") + bulk("bob") + bulk("pending") + ":1\r\n" + bulk("idle") + ":500\r\n"
	if got != want {
		t.Fatalf("consumers:\n got %q\nwant %q", got, want)
	}
	got = sgRun(c, "xinfo", "stream", "s")
	if !strings.HasPrefix(got, "*20\r\n"+bulk("length")+":3\r\n") || !strings.Contains(got, bulk("groups")+":1\r\n") ||
		!strings.HasSuffix(got, bulk("last-entry")+"*2\r\n"+bulk("3-1")+"*2\r\n"+bulk("f")+bulk("3-1")) {
		t.Fatalf("stream %q", got)
	}
	got = sgRun(c, "xinfo", "stream", "s", "full", "count", "1")
	for _, part := range []string{
		"*18\r\n",
		bulk("entries") + "*1\r\n*2\r\n" + bulk("1-1"),
		bulk("pel-count") + ":3\r\n" + bulk("pending") + "*1\r\n*4\r\n" + bulk("1-1") + bulk("alice") + ":1000\r\n:1\r\n",
		bulk("name") + bulk("bob") + bulk("seen-time") + ":1500\r\n" + bulk("pel-count") + ":1\r\n" + bulk("pending") + "*1\r\n*3\r\n" + bulk("3-1") + ":1500\r\n:1\r\n",
	} {
		if !strings.Contains(got, part) {
			t.Fatalf("full %q lacks %q", got, part)
		}
	}
	c.Proto = 3
	if got := sgRun(c, "xinfo", "stream", "s"); !strings.HasPrefix(got, "%10\r\n") {
		t.Fatalf("resp3 %q", got)
	}
	c.Proto = 2
	for _, st := range []struct{ args, want string }{
		{"xinfo stream nokey", "-ERR no such key\r\n"},
		{"xinfo stream s foo", "-ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.\r\n"},
		{"xinfo consumers s nog", "-NOGROUP No such consumer group 'nog' for key name 's'\r\n"},
	} {
		if got := sgRun(c, strings.Fields(st.args)...); got != st.want {
			t.Errorf("%s: got %q want %q", st.args, got, st.want)
		}
	}
	if got := sgRun(c, "xinfo", "help"); !strings.HasPrefix(got, "*9\r\n+XINFO <subcommand>") {
		t.Errorf("help %q", got)
	}
	if got := sgRun(c, "xgroup", "help"); !strings.HasPrefix(got, "*17\r\n+XGROUP <subcommand>") {
		t.Errorf("help %q", got)
	}
}

func TestStreamXsetid(t *testing.T) {
	c := sgSetup(t)
	for _, st := range []struct{ args, want string }{
		{"xsetid s 1-1", "-ERR The ID specified in XSETID is smaller than the target stream top item\r\n"},
		{"xsetid s 9-9 entriesadded 1", "-ERR The entries_added specified in XSETID is smaller than the target stream length\r\n"},
		{"xsetid s 9-9 entriesadded -1", "-ERR entries_added must be positive\r\n"},
		{"xsetid s 9-9 maxdeletedid 10-0", "-ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id\r\n"},
		{"xsetid s 9-9 foo", "-ERR syntax error\r\n"},
		{"xsetid s x", "-ERR Invalid stream ID specified as stream command argument\r\n"},
		{"xsetid nokey 1-1", "-ERR no such key\r\n"},
		{"xsetid s 9-9 entriesadded 50 maxdeletedid 2-0", "+OK\r\n"},
	} {
		if got := sgRun(c, strings.Fields(st.args)...); got != st.want {
			t.Errorf("%s: got %q want %q", st.args, got, st.want)
		}
	}
	got := sgRun(c, "xinfo", "stream", "s")
	for _, part := range []string{bulk("last-generated-id") + bulk("9-9"), bulk("max-deleted-entry-id") + bulk("2-0"), bulk("entries-added") + ":50\r\n"} {
		if !strings.Contains(got, part) {
			t.Errorf("%q lacks %q", got, part)
		}
	}
	// Lag: max-deleted 2-0 is before last-delivered 3-1 (no tombstone ahead),
	// so it is entries-added minus entries-read.
	if got := sgRun(c, "xinfo", "groups", "s"); !strings.Contains(got, bulk("lag")+":47\r\n") {
		t.Errorf("lag %q", got)
	}
}
