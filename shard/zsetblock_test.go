package shard

import (
	"strings"
	"testing"
)

// Blocking sorted set pops at the handler level: immediate pops, their
// replies (RESP2 and RESP3), propagation and notifications, blocking, the
// serve of one ready key, and MULTI. The waiting itself is server's
// (tests/blocking_test.go drives it end to end).

func TestBzpopImmediateRepliesAndPropagation(t *testing.T) {
	for _, tc := range []struct {
		proto int
		cmd   string
		want  string
		prop  string
	}{
		{2, "BZPOPMIN none z 0", sortBulks("z", "a", "1"), "ZPOPMIN z"},
		{2, "BZPOPMAX none z 0", sortBulks("z", "c", "3.5"), "ZPOPMAX z"},
		{3, "BZPOPMIN z 0", "*3\r\n$1\r\nz\r\n$1\r\na\r\n,1\r\n", "ZPOPMIN z"},
		{2, "BZMPOP 0 2 none z MIN", "*2\r\n$1\r\nz\r\n*1\r\n" + sortBulks("a", "1"), "ZPOPMIN z 1"},
		{2, "BZMPOP 0 1 z MAX COUNT 2", "*2\r\n$1\r\nz\r\n*2\r\n" + sortBulks("c", "3.5") + sortBulks("b", "2"), "ZPOPMAX z 2"},
		{2, "BZMPOP 0 1 z MIN COUNT 10", "*2\r\n$1\r\nz\r\n*3\r\n" + sortBulks("a", "1") + sortBulks("b", "2") + sortBulks("c", "3.5"), "ZPOPMIN z 3"},
		{3, "BZMPOP 1.5 1 z MAX", "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nc\r\n,3.5\r\n", "ZPOPMAX z 1"},
	} {
		c := newStringCtx(4)
		c.Proto = tc.proto
		ldo(t, c, "ZADD z 1 a 2 b 3.5 c")
		if got := ldo(t, c, tc.cmd); got != tc.want || c.Blocked() {
			t.Errorf("RESP%d %s: got %q (blocked %v), want %q", tc.proto, tc.cmd, got, c.Blocked(), tc.want)
		}
		if got := propString(&c.Prop); got != tc.prop {
			t.Errorf("%s: propagated %q, want %q", tc.cmd, got, tc.prop)
		}
	}
}

func TestBzpopErrors(t *testing.T) {
	c := newStringCtx(1)
	ldo(t, c, "SET s x")
	for cmd, want := range map[string]string{
		"BZPOPMIN s 0":                 wrong,
		"BZPOPMIN none s 0":            wrong,
		"BZPOPMAX z -1":                "-ERR timeout is negative\r\n",
		"BZPOPMAX z x":                 "-ERR timeout is not a float or out of range\r\n",
		"BZMPOP 0 0 z MIN":             "-ERR numkeys should be greater than 0\r\n",
		"BZMPOP 0 1 z LEFT":            syntax,
		"BZMPOP 0 2 z":                 syntax,
		"BZMPOP 0 1 z MIN COUNT 0":     "-ERR count should be greater than 0\r\n",
		"BZMPOP 0 1 z MIN COUNT 1 x y": syntax,
		// The arguments are checked before the timeout, as in Redis.
		"BZMPOP x 1 z MIN COUNT 0": "-ERR count should be greater than 0\r\n",
		"BZMPOP -1 1 z MIN":        "-ERR timeout is negative\r\n",
		"BZMPOP 0 1 s MIN":         wrong,
	} {
		if got := ldo(t, c, cmd); got != want || c.Blocked() {
			t.Errorf("%s: got %q (blocked %v), want %q", cmd, got, c.Blocked(), want)
		}
	}
}

func TestBzpopBlocksOrAnswersInMulti(t *testing.T) {
	c := newStringCtx(4)
	setNow(c, 1000)
	if got := ldo(t, c, "BZPOPMIN a b 1.5"); got != "" || !c.Blocked() || c.BlockDeadline != 2500 || len(c.BlockKeys) != 2 {
		t.Fatalf("BZPOPMIN on missing keys: reply %q blocked %v deadline %d keys %q", got, c.Blocked(), c.BlockDeadline, c.BlockKeys)
	}
	if got := ldo(t, c, "BZMPOP 0 3 a b c MAX COUNT 2"); got != "" || !c.Blocked() || c.BlockDeadline != 0 ||
		strings.Join(bytesToStrings(c.BlockKeys), " ") != "a b c" {
		t.Fatalf("BZMPOP: reply %q blocked %v deadline %d keys %q", got, c.Blocked(), c.BlockDeadline, c.BlockKeys)
	}
	if propString(&c.Prop) != "" {
		t.Errorf("a blocked pop propagated %q", propString(&c.Prop))
	}
	c.InMulti = true
	for _, proto := range []int{2, 3} {
		c.Proto = proto
		want := "*-1\r\n"
		if proto == 3 {
			want = null3
		}
		for _, cmd := range []string{"BZPOPMIN a 0", "BZPOPMAX a b 0", "BZMPOP 0 1 a MIN"} {
			if got := ldo(t, c, cmd); got != want || c.Blocked() {
				t.Errorf("RESP%d %s in MULTI: got %q blocked %v, want %q", proto, cmd, got, c.Blocked(), want)
			}
		}
	}
}

func bytesToStrings(bs [][]byte) []string {
	var out []string
	for _, b := range bs {
		out = append(out, string(b))
	}
	return out
}

func TestBzpopServeKeyPopsOnlyThatKey(t *testing.T) {
	c := newStringCtx(1)
	ldo(t, c, "ZADD a 1 x")
	ldo(t, c, "ZADD b 2 y 3 w")
	c.ServeKey = []byte("b")
	if got := ldo(t, c, "BZPOPMAX a b 0"); got != sortBulks("b", "w", "3") {
		t.Fatalf("serve b: got %q", got)
	}
	if got := propString(&c.Prop); got != "ZPOPMAX b" {
		t.Errorf("served pop propagated %q", got)
	}
	if got := ldo(t, c, "BZMPOP 0 2 a b MIN COUNT 5"); got != "*2\r\n$1\r\nb\r\n*1\r\n"+sortBulks("y", "2") {
		t.Fatalf("serve b with BZMPOP: got %q", got)
	}
	if got := propString(&c.Prop); got != "ZPOPMIN b 1" {
		t.Errorf("served BZMPOP propagated %q", got)
	}
	if got := ldo(t, c, "EXISTS b"); got != zero {
		t.Errorf("emptied sorted set still exists: %q", got)
	}
	// The served key is gone or of another type: stay blocked.
	if got := ldo(t, c, "BZPOPMIN a b 0"); got != "" || !c.Blocked() {
		t.Fatalf("serve a missing key: got %q blocked %v", got, c.Blocked())
	}
	ldo(t, c, "RPUSH b x")
	if got := ldo(t, c, "BZPOPMIN a b 0"); got != "" || !c.Blocked() {
		t.Fatalf("serve a list key: got %q blocked %v", got, c.Blocked())
	}
	c.ServeKey = nil
	if got := ldo(t, c, "BZPOPMIN a b 0"); got != sortBulks("a", "x", "1") {
		t.Fatalf("unserved: got %q", got)
	}
}

func TestBzpopNotifications(t *testing.T) {
	c := newStringCtx(1)
	s := c.Shards[0]
	s.Cfg.NotifyFlags.Store(^uint32(NotifyNew | NotifyKeyMiss)) // what "AKE" selects
	ldo(t, c, "ZADD z 1 a 2 b")
	var got []string
	s.OnNotify = func(db, class int, event string, key []byte) { got = append(got, event+":"+string(key)) }
	ldo(t, c, "BZPOPMAX z 0")
	ldo(t, c, "BZMPOP 0 1 z MIN COUNT 3")
	if g := strings.Join(got, " "); g != "zpopmax:z zpopmin:z del:z" {
		t.Errorf("events %q", g)
	}
}
