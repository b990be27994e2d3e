package shard

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ldo runs one command of any type and returns its reply.
func ldo(t testing.TB, c *Ctx, args ...string) string {
	t.Helper()
	if len(args) == 1 {
		args = strings.Fields(args[0])
	}
	c.Out = c.Out[:0]
	c.Prop.Reset()
	c.BlockKeys = nil
	name := strings.ToLower(args[0])
	switch name {
	case "hello":
		c.Proto, _ = strconv.Atoi(args[1])
		return ""
	case "object":
		name += "|" + strings.ToLower(args[1])
	}
	run := allCmdTable[name].Run
	if run == nil {
		t.Fatalf("no command %q", args[0])
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	run(c, argv)
	return string(c.Out)
}

func bulks(items ...string) string {
	var parts []string
	for _, s := range items {
		parts = append(parts, bulk(s))
	}
	return arr(parts...)
}

// listScripts hold no time-dependent reply and never block, so they can be
// replayed against a real server: REDSHARD_REDIS_ADDR=127.0.0.1:7797 go test
// -run TestListScriptsMatchRealRedis ./shard/
var listScripts = []script{
	{"push and range", []step{
		{cmd: "rpush l a b c", want: num(3)},
		{cmd: "lpush l x y", want: num(5)},
		{cmd: "lrange l 0 -1", want: bulks("y", "x", "a", "b", "c")},
		{cmd: "lrange l -2 100", want: bulks("b", "c")},
		{cmd: "lrange l 3 1", want: "*0\r\n"},
		{cmd: "lrange l a 1", want: notInt},
		{cmd: "lrange nokey 0 -1", want: "*0\r\n"},
		{cmd: "llen l", want: num(5)},
		{cmd: "llen nokey", want: zero},
		{cmd: "lpushx nokey a", want: zero},
		{cmd: "rpushx l z", want: num(6)},
		{cmd: "object encoding l", want: bulk("quicklist")},
		{cmd: "type l", want: "+list\r\n"},
	}},
	{"index and set", []step{
		{cmd: "rpush l a b c", want: num(3)},
		{cmd: "lindex l 0", want: bulk("a")},
		{cmd: "lindex l -1", want: bulk("c")},
		{cmd: "lindex l 3", want: null2},
		{cmd: "lindex l x", want: notInt},
		{cmd: "lindex nokey x", want: null2},
		{cmd: "lset l 1 BB", want: ok},
		{cmd: "lset l -1 CCCC", want: ok},
		{cmd: "lset l 3 x", want: "-ERR index out of range\r\n"},
		{cmd: "lset nokey 0 x", want: "-ERR no such key\r\n"},
		{cmd: "lrange l 0 -1", want: bulks("a", "BB", "CCCC")},
	}},
	{"pop", []step{
		{cmd: "rpush l a b c d e", want: num(5)},
		{cmd: "lpop l", want: bulk("a")},
		{cmd: "rpop l", want: bulk("e")},
		{cmd: "lpop l 2", want: bulks("b", "c")},
		{cmd: "rpop l 0", want: "*0\r\n"},
		{cmd: "rpop l -1", want: "-ERR value is out of range, must be positive\r\n"},
		{cmd: "rpop l 5", want: bulks("d")},
		{cmd: "exists l", want: zero},
		{cmd: "lpop l", want: null2},
		{cmd: "lpop l 1", want: "*-1\r\n"},
		{cmd: "lpop l 1 2", want: "-ERR wrong number of arguments for 'lpop' command\r\n"},
		{cmd: "hello 3"},
		{cmd: "lpop l 1", want: "_\r\n"},
		{cmd: "lpop l", want: "_\r\n"},
	}},
	{"insert rem trim", []step{
		{cmd: "rpush l a b a c a", want: num(5)},
		{cmd: "linsert l before c X", want: num(6)},
		{cmd: "linsert l after a Y", want: num(7)},
		{cmd: "linsert l after zz Y", want: ":-1\r\n"},
		{cmd: "linsert l middle a Y", want: syntax},
		{cmd: "linsert nokey after a Y", want: zero},
		{cmd: "lrange l 0 -1", want: bulks("a", "Y", "b", "a", "X", "c", "a")},
		{cmd: "lrem l -1 a", want: num(1)},
		{cmd: "lrange l 0 -1", want: bulks("a", "Y", "b", "a", "X", "c")},
		{cmd: "lrem l 1 a", want: num(1)},
		{cmd: "lrange l 0 -1", want: bulks("Y", "b", "a", "X", "c")},
		{cmd: "lrem l 0 zz", want: zero},
		{cmd: "ltrim l 1 -2", want: ok},
		{cmd: "lrange l 0 -1", want: bulks("b", "a", "X")},
		{cmd: "ltrim l 5 10", want: ok},
		{cmd: "exists l", want: zero},
		{cmd: "ltrim nokey 0 1", want: ok},
	}},
	{"lpos", []step{
		{cmd: "rpush l a b c 1 2 3 c c", want: num(8)},
		{cmd: "lpos l c", want: num(2)},
		{cmd: "lpos l c rank 2", want: num(6)},
		{cmd: "lpos l c rank -1", want: num(7)},
		{cmd: "lpos l c count 0", want: arr(num(2), num(6), num(7))},
		{cmd: "lpos l c count 2 rank -1", want: arr(num(7), num(6))},
		{cmd: "lpos l c maxlen 2", want: null2},
		{cmd: "lpos l c count 0 maxlen 7", want: arr(num(2), num(6))},
		{cmd: "lpos l c rank 0", want: "-" + errRankZero + "\r\n"},
		{cmd: "lpos l c count -1", want: "-ERR COUNT can't be negative\r\n"},
		{cmd: "lpos l c maxlen -1", want: "-ERR MAXLEN can't be negative\r\n"},
		{cmd: "lpos l c foo", want: syntax},
		{cmd: "lpos nokey c", want: null2},
		{cmd: "lpos nokey c count 1", want: "*0\r\n"},
	}},
	{"move", []step{
		{cmd: "rpush s a b c", want: num(3)},
		{cmd: "lmove s d left right", want: bulk("a")},
		{cmd: "rpoplpush s d", want: bulk("c")},
		{cmd: "lrange d 0 -1", want: bulks("c", "a")},
		{cmd: "lmove s s left left", want: bulk("b")},
		{cmd: "lmove s d up left", want: syntax},
		{cmd: "set str x", want: ok},
		{cmd: "lmove s str left left", want: wrong},
		{cmd: "lmove str s left left", want: wrong},
		{cmd: "lrange s 0 -1", want: bulks("b")},
		{cmd: "rpoplpush s d", want: bulk("b")},
		{cmd: "exists s", want: zero},
		{cmd: "rpoplpush s d", want: null2},
	}},
	{"mpop", []step{
		{cmd: "rpush b 1 2 3", want: num(3)},
		{cmd: "lmpop 2 a b left", want: arr(bulk("b"), bulks("1"))},
		{cmd: "lmpop 2 a b right count 5", want: arr(bulk("b"), bulks("3", "2"))},
		{cmd: "lmpop 2 a b right", want: "*-1\r\n"},
		{cmd: "lmpop 0 a left", want: "-ERR numkeys should be greater than 0\r\n"},
		{cmd: "lmpop 3 a b left", want: syntax},
		// numkeys near MaxInt64 wrapped the index negative: a panic (fuzz)
		{cmd: "lmpop 9223372036854775807 ch ch", want: syntax},
		{cmd: "lmpop 9223372036854775806 a left", want: syntax},
		{cmd: "blmpop 0 9223372036854775807 a left", want: syntax},
		{cmd: "lmpop 1 a up", want: syntax},
		{cmd: "lmpop 1 a left count 0", want: "-ERR count should be greater than 0\r\n"},
		{cmd: "lmpop 1 a left count 1 count 1", want: syntax},
		{cmd: "set s x", want: ok},
		{cmd: "lmpop 2 a s left", want: wrong},
	}},
	{"wrong type", []step{
		{cmd: "set s x", want: ok},
		{cmd: "lpush s a", want: wrong},
		{cmd: "llen s", want: wrong},
		{cmd: "lrange s 0 1", want: wrong},
		{cmd: "lpop s", want: wrong},
		{cmd: "blpop s 0", want: wrong},
		{cmd: "blmove s d left left 0", want: wrong},
	}},
	{"blocking with data", []step{
		{cmd: "rpush b x y", want: num(2)},
		{cmd: "blpop a b 0", want: bulks("b", "x")},
		{cmd: "brpop a b 0", want: bulks("b", "y")},
		{cmd: "blpop a b -1", want: "-ERR timeout is negative\r\n"},
		{cmd: "blpop a b x", want: "-ERR timeout is not a float or out of range\r\n"},
		{cmd: "rpush s 1 2 3", want: num(3)},
		{cmd: "blmpop 0 2 a s right count 2", want: arr(bulk("s"), bulks("3", "2"))},
		{cmd: "blmove s d right left 0.5", want: bulk("1")},
	}},
}

func TestListScripts(t *testing.T) {
	for _, sc := range listScripts {
		t.Run(sc.name, func(t *testing.T) {
			c := newStringCtx(4)
			for i, st := range sc.steps {
				if got := ldo(t, c, st.args()...); st.want != "" && got != st.want {
					t.Errorf("step %d %q: got %q, want %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

// TestListScriptsMatchRealRedis replays the scripts against a real Redis
// when REDSHARD_REDIS_ADDR names one (it is flushed).
func TestListScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range listScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("HELLO", "2")
			send("FLUSHALL")
			for i, st := range sc.steps {
				got := send(st.args()...)
				if strings.EqualFold(st.args()[0], "hello") {
					continue
				}
				if st.want != "" && got != st.want {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

func TestListPropagation(t *testing.T) {
	c := newStringCtx(4)
	cases := []struct{ cmd, prop string }{
		{"rpush l a b c d", "AS-IS 4"},
		{"lpop l", "AS-IS 1"},
		{"rpop l 2", "AS-IS 2"},
		{"lpush l x", "AS-IS 1"},
		{"ltrim l 0 100", ""},
		{"lmove l l2 left right", "AS-IS 1"},
		{"rpush b 1 2 3", "AS-IS 3"},
		{"blpop a b 0", "LPOP b"},
		{"brpop b 0", "RPOP b"},
		{"lmpop 1 b left count 10", "LPOP b 1"},
		{"rpush b 1 2 3", "AS-IS 3"},
		{"blmpop 0 1 b right count 2", "RPOP b 2"},
		{"blmove b d right left 0", "LMOVE b d RIGHT LEFT"},
		{"rpush b 1", "AS-IS 1"},
		{"brpoplpush b d 0", "RPOPLPUSH b d"},
		{"blpop nokey 0", ""},
	}
	for _, tc := range cases {
		ldo(t, c, strings.Fields(tc.cmd)...)
		if got := propString(&c.Prop); got != tc.prop {
			t.Errorf("%s: propagated %q, want %q", tc.cmd, got, tc.prop)
		}
	}
}

func TestBlockingPopBlocksOrAnswersInMulti(t *testing.T) {
	c := newStringCtx(4)
	setNow(c, 1000)
	if got := ldo(t, c, "blpop a b 1.5"); got != "" || !c.Blocked() || c.BlockDeadline != 2500 || len(c.BlockKeys) != 2 {
		t.Fatalf("blpop on missing keys: reply %q blocked %v deadline %d keys %q", got, c.Blocked(), c.BlockDeadline, c.BlockKeys)
	}
	if ldo(t, c, "blmove a b left left 0"); !c.Blocked() || c.BlockDeadline != 0 || string(c.BlockKeys[0]) != "a" || len(c.BlockKeys) != 1 {
		t.Fatalf("blmove: blocked %v deadline %d keys %q", c.Blocked(), c.BlockDeadline, c.BlockKeys)
	}
	c.InMulti = true
	for cmd, want := range map[string]string{
		"blpop a 0":              "*-1\r\n",
		"blmpop 0 1 a left":      "*-1\r\n",
		"blmove a b left left 0": null2,
		"brpoplpush a b 0":       null2,
	} {
		if got := ldo(t, c, strings.Fields(cmd)...); got != want || c.Blocked() {
			t.Errorf("%s in MULTI: got %q blocked %v, want %q", cmd, got, c.Blocked(), want)
		}
	}
}

func TestServeKeyPopsOnlyThatKey(t *testing.T) {
	c := newStringCtx(1)
	ldo(t, c, "rpush a 1")
	ldo(t, c, "rpush b 2")
	c.ServeKey = []byte("b")
	if got := ldo(t, c, "blpop a b 0"); got != bulks("b", "2") {
		t.Fatalf("serve b: got %q", got)
	}
	ldo(t, c, "set s x")
	c.ServeKey = []byte("s")
	if got := ldo(t, c, "blpop a s 0"); got != "" || !c.Blocked() {
		t.Fatalf("serve a string key: got %q blocked %v, want to stay blocked", got, c.Blocked())
	}
}

func TestListDeletedWhenEmptied(t *testing.T) {
	c := newStringCtx(1)
	for _, cmd := range []string{"lpop l", "rpop l 3", "lrem l 0 a", "ltrim l 1 0", "lmpop 1 l left count 9", "rpoplpush l other"} {
		ldo(t, c, "del", "l")
		ldo(t, c, "rpush", "l", "a", "a", "a")
		ldo(t, c, strings.Fields(cmd)...)
		want := zero
		if cmd == "lpop l" || cmd == "rpoplpush l other" {
			want = one
		}
		if got := ldo(t, c, "exists", "l"); got != want {
			t.Errorf("after %s: exists %q, want %q", cmd, got, want)
		}
	}
}

func TestListNotifications(t *testing.T) {
	c := newStringCtx(1)
	var events []string
	c.Shards[0].Cfg.NotifyFlags.Store(^uint32(0))
	c.Shards[0].OnNotify = func(db, class int, event string, key []byte) {
		events = append(events, event+":"+string(key))
	}
	for _, cmd := range []string{"rpush l a b", "linsert l before a x", "lset l 0 y", "lrem l 1 y", "lmove l d left left", "ltrim l 0 -1", "rpop l"} {
		ldo(t, c, strings.Fields(cmd)...)
	}
	want := "new:l rpush:l linsert:l lset:l lrem:l new:d lpush:d lpop:l ltrim:l rpop:l del:l"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
}

// TestQuicklistMatchesSlice drives the deque with random operations, small
// nodes and elements of many sizes, and compares it with a plain slice.
func TestQuicklistMatchesSlice(t *testing.T) {
	t.Cleanup(func() { SetPackedThreshold(0) })
	for _, fill := range []int{-1, -2, 1, 3, 16, 0} {
		if fill == 0 {
			SetPackedThreshold(10) // plain nodes for elements of 10 bytes and more
			fill = -2
		}
		rng := rand.New(rand.NewPCG(uint64(-fill+100), 7))
		l := NewList(fill)
		var ref [][]byte
		elem := func() []byte {
			n := rng.IntN(20)
			if rng.IntN(30) == 0 {
				n = 200 + rng.IntN(5000)
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + rng.IntN(3))
			}
			return b
		}
		for step := 0; step < 20000; step++ {
			switch op := rng.IntN(10); {
			case op < 2:
				e := elem()
				l.PushBack(e)
				ref = append(ref, e)
			case op < 4:
				e := elem()
				l.PushFront(e)
				ref = append([][]byte{e}, ref...)
			case op == 4 && len(ref) > 0:
				got := string(l.PopFront())
				if got != string(ref[0]) {
					t.Fatalf("fill %d step %d PopFront %q want %q", fill, step, got, ref[0])
				}
				ref = ref[1:]
			case op == 5 && len(ref) > 0:
				got := string(l.PopBack())
				if got != string(ref[len(ref)-1]) {
					t.Fatalf("fill %d step %d PopBack %q want %q", fill, step, got, ref[len(ref)-1])
				}
				ref = ref[:len(ref)-1]
			case op == 6:
				i := rng.IntN(len(ref) + 1)
				e := elem()
				l.InsertAt(i, e)
				ref = slices.Insert(ref, i, e)
			case op == 7 && len(ref) > 0:
				i := rng.IntN(len(ref))
				e := elem()
				l.Set(i, e)
				ref[i] = e
			case op == 8 && len(ref) > 0:
				i := rng.IntN(len(ref))
				n := rng.IntN(len(ref)-i+1) / 4
				l.DeleteRange(i, n)
				ref = slices.Delete(ref, i, i+n)
			case op == 9 && len(ref) > 0 && rng.IntN(10) == 0:
				v := ref[rng.IntN(len(ref))]
				m := 0
				for _, e := range ref {
					if string(e) == string(v) {
						m++
					}
				}
				skip := rng.IntN(m + 1)
				max := rng.IntN(3)
				got := l.Remove(v, skip, max)
				var kept [][]byte
				seen, removed := 0, 0
				for _, e := range ref {
					if string(e) == string(v) && (max == 0 || removed < max) {
						seen++
						if seen > skip {
							removed++
							continue
						}
					}
					kept = append(kept, e)
				}
				ref = kept
				if got != removed {
					t.Fatalf("fill %d step %d Remove = %d, want %d", fill, step, got, removed)
				}
			}
			if l.Len() != len(ref) {
				t.Fatalf("fill %d step %d: Len %d, want %d", fill, step, l.Len(), len(ref))
			}
			if step%97 == 0 {
				checkList(t, l, ref)
			}
		}
		checkList(t, l, ref)
		checkList(t, l.Copy().(*List), ref)
	}
}

func checkList(t *testing.T, l *List, ref [][]byte) {
	t.Helper()
	it := l.Iter(0, false)
	for i := range ref {
		e, ok := it.Next()
		if !ok || string(e) != string(ref[i]) {
			t.Fatalf("forward element %d: %q, want %q", i, e, ref[i])
		}
	}
	if len(ref) > 0 {
		it = l.Iter(len(ref)-1, true)
		for i := len(ref) - 1; i >= 0; i-- {
			e, ok := it.Next()
			if !ok || string(e) != string(ref[i]) {
				t.Fatalf("backward element %d: %q, want %q", i, e, ref[i])
			}
		}
		i := len(ref) / 3
		if e, _ := l.Index(i); string(e) != string(ref[i]) {
			t.Fatalf("Index(%d) = %q, want %q", i, e, ref[i])
		}
		if e, _ := l.Index(-1); string(e) != string(ref[len(ref)-1]) {
			t.Fatalf("Index(-1) = %q", e)
		}
	}
}

func TestListDumpChunksOf64(t *testing.T) {
	l := NewList(-2)
	for i := 0; i < 130; i++ {
		l.PushBack([]byte(strconv.Itoa(i)))
	}
	d := l.Dump([]byte("k"))
	if len(d) != 3 || len(d[0]) != 66 || len(d[2]) != 4 || string(d[2][0]) != "RPUSH" || string(d[2][3]) != "129" {
		t.Fatalf("dump: %d commands", len(d))
	}
	if l.Mem() <= 0 {
		t.Fatal("Mem")
	}
}
