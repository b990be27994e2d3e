package shard

import (
	"strings"
	"testing"
)

func TestStreamBasics(t *testing.T) {
	c := ksCtx(2)
	c.NowMs = 1000
	for _, st := range []struct {
		args []string
		want string
	}{
		{[]string{"xadd", "s", "1-1", "a", "1"}, "$3\r\n1-1\r\n"},
		{[]string{"xadd", "s", "1-1", "a", "1"}, "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"},
		{[]string{"xadd", "s", "0-0", "a", "1"}, "-ERR The ID specified in XADD must be greater than 0-0\r\n"},
		{[]string{"xadd", "s", "1-*", "b", "2"}, "$3\r\n1-2\r\n"},
		{[]string{"xadd", "s", "*", "c", "3"}, "$6\r\n1000-0\r\n"},
		{[]string{"xadd", "s", "x-y", "c", "3"}, "-ERR Invalid stream ID specified as stream command argument\r\n"},
		{[]string{"xlen", "s"}, ":3\r\n"},
		{[]string{"xrange", "s", "(1-1", "+", "count", "1"}, "*1\r\n*2\r\n$3\r\n1-2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{[]string{"xrevrange", "s", "+", "-", "count", "1"}, "*1\r\n*2\r\n$6\r\n1000-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
		{[]string{"xdel", "s", "1-2", "9-9"}, ":1\r\n"},
		{[]string{"xtrim", "s", "maxlen", "1"}, ":1\r\n"},
		{[]string{"xlen", "s"}, ":1\r\n"},
		{[]string{"xadd", "nokey", "nomkstream", "*", "a", "1"}, "$-1\r\n"},
		// IDs are read as Redis's string2ull reads them: strtoull's leading
		// spaces and sign (redis-server 7.0.15: " 2000" is 2000-0, "2001-+5"
		// is 2001-5), but not a negative number or trailing junk.
		{[]string{"xadd", "s", " 2000", "d", "4"}, "$6\r\n2000-0\r\n"},
		{[]string{"xadd", "s", "2001-+5", "d", "4"}, "$6\r\n2001-5\r\n"},
		{[]string{"xadd", "s", "2002--5", "d", "4"}, "-ERR Invalid stream ID specified as stream command argument\r\n"},
		{[]string{"xadd", "s", "2003 ", "d", "4"}, "-ERR Invalid stream ID specified as stream command argument\r\n"},
	} {
		c.Out = c.Out[:0]
		c.Prop.Reset()
		var argv [][]byte
		for _, a := range st.args {
			argv = append(argv, []byte(a))
		}
		hashCmdTable[strings.ToLower(st.args[0])](c, argv)
		if string(c.Out) != st.want {
			t.Errorf("%q: got %q want %q", st.args, c.Out, st.want)
		}
	}
}

func TestStreamXaddPropagatesID(t *testing.T) {
	c := ksCtx(1)
	c.NowMs = 5
	hashCmdTable["xadd"](c, [][]byte{[]byte("xadd"), []byte("k"), []byte("*"), []byte("f"), []byte("v")})
	if len(c.Prop.Cmds) != 1 || string(c.Prop.Cmds[0][2]) != "5-0" {
		t.Fatalf("prop %q", c.Prop.Cmds)
	}
}

func TestStreamGroupRead(t *testing.T) {
	c := ksCtx(1)
	c.NowMs = 1000
	run := func(args ...string) string {
		c.Out = c.Out[:0]
		c.Prop.Reset()
		var argv [][]byte
		for _, a := range args {
			argv = append(argv, []byte(a))
		}
		name := strings.ToLower(args[0])
		if name == "xgroup" {
			name += "|" + strings.ToLower(args[1])
		}
		hashCmdTable[name](c, argv)
		return string(c.Out)
	}
	run("xadd", "s", "1-1", "a", "1")
	if got := run("xgroup", "create", "s", "g", "0"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	got := run("xreadgroup", "group", "g", "c1", "count", "10", "streams", "s", ">")
	want := "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
	if got != want {
		t.Fatalf("got %q", got)
	}
	if len(c.Prop.Cmds) != 1 || string(c.Prop.Cmds[0][0]) != "XCLAIM" {
		t.Fatalf("prop %q", c.Prop.Cmds)
	}
	if got := run("xack", "s", "g", "1-1"); got != ":1\r\n" {
		t.Fatal(got)
	}
}
