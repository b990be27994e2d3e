package shard

import (
	"strings"
	"testing"
)

// wDo runs any command of the table (by name) against c.
func wDo(t *testing.T, c *Ctx, args ...string) string {
	t.Helper()
	name := strings.ToLower(args[0])
	for _, cmd := range Commands {
		if cmd.Name == name {
			c.Out = c.Out[:0]
			c.Prop.Reset()
			argv := make([][]byte, len(args))
			for i, a := range args {
				argv[i] = []byte(a)
			}
			cmd.Run(c, argv)
			return string(c.Out)
		}
	}
	t.Fatalf("no command %q", name)
	return ""
}

// watch registers a fresh watcher of key in c's database.
func watch(c *Ctx, key string) (*Watcher, int64) {
	w := new(Watcher)
	exp := c.DBOf([]byte(key)).Watch([]byte(key), w)
	return w, exp
}

// Every change of a watched key marks its watcher, and nothing else does
// (Redis's signalModifiedKey points, through the data layer).
func TestWatchTouchedByChanges(t *testing.T) {
	cases := []struct {
		name    string
		setup   [][]string // before WATCH
		then    [][]string // after WATCH
		touched bool
	}{
		{"SET existing", [][]string{{"set", "k", "1"}}, [][]string{{"set", "k", "1"}}, true},
		{"SET new", nil, [][]string{{"set", "k", "1"}}, true},
		{"INCR", [][]string{{"set", "k", "1"}}, [][]string{{"incr", "k"}}, true},
		{"APPEND", [][]string{{"set", "k", "1"}}, [][]string{{"append", "k", "x"}}, true},
		{"SETRANGE", [][]string{{"set", "k", "1"}}, [][]string{{"setrange", "k", "3", "x"}}, true},
		{"EXPIRE", [][]string{{"set", "k", "1"}}, [][]string{{"expire", "k", "100"}}, true},
		{"PERSIST with a TTL", [][]string{{"set", "k", "1", "ex", "100"}}, [][]string{{"persist", "k"}}, true},
		{"DEL", [][]string{{"set", "k", "1"}}, [][]string{{"del", "k"}}, true},
		{"RENAME away", [][]string{{"set", "k", "1"}}, [][]string{{"rename", "k", "other"}}, true},
		{"RENAME onto", [][]string{{"set", "other", "1"}}, [][]string{{"rename", "other", "k"}}, true},
		{"MOVE", [][]string{{"set", "k", "1"}}, [][]string{{"move", "k", "3"}}, true},
		{"FLUSHDB", [][]string{{"set", "k", "1"}}, [][]string{{"flushdb"}}, true},
		{"FLUSHALL", [][]string{{"set", "k", "1"}}, [][]string{{"flushall"}}, true},
		{"SWAPDB with the key", [][]string{{"set", "k", "1"}}, [][]string{{"swapdb", "0", "1"}}, true},

		{"GET", [][]string{{"set", "k", "1"}}, [][]string{{"get", "k"}, {"exists", "k"}, {"ttl", "k"}}, false},
		{"DEL of a missing key", nil, [][]string{{"del", "k"}}, false},
		{"PERSIST without a TTL", [][]string{{"set", "k", "1"}}, [][]string{{"persist", "k"}}, false},
		{"another key", [][]string{{"set", "k", "1"}}, [][]string{{"set", "k2", "1"}, {"del", "k2"}}, false},
		{"FLUSHDB of a missing key", [][]string{{"set", "k2", "1"}}, [][]string{{"flushdb"}}, false},
		{"SWAPDB, missing in both", nil, [][]string{{"swapdb", "0", "1"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newStringCtx(1)
			for _, a := range tc.setup {
				wDo(t, c, a...)
			}
			w, _ := watch(c, "k")
			for _, a := range tc.then {
				wDo(t, c, a...)
			}
			if w.Dirty() != tc.touched {
				t.Errorf("dirty=%v, want %v", w.Dirty(), tc.touched)
			}
		})
	}
}

// A watched key in another database is not touched by a write to the same
// name in the database being used.
func TestWatchRemembersTheDatabase(t *testing.T) {
	c := newStringCtx(1)
	c.DB = 5
	w, _ := watch(c, "k")
	c.DB = 1
	wDo(t, c, "set", "k", "1")
	if w.Dirty() {
		t.Fatal("a write in db 1 touched a key watched in db 5")
	}
	c.DB = 5
	wDo(t, c, "set", "k", "1")
	if !w.Dirty() {
		t.Fatal("a write in db 5 did not touch the key watched there")
	}
}

// Expiry: Watch reports the key's expiry so EXEC can check it; a key that
// expires lazily is touched; a key already expired when watched is not
// touched by its deletion (Redis 7.0's wk->expired), but is by a new write.
func TestWatchAndExpiry(t *testing.T) {
	c := newStringCtx(1)
	wDo(t, c, "set", "k", "1", "px", "100")
	w, exp := watch(c, "k")
	if exp != testNow+100 {
		t.Fatalf("Watch returned expiry %d, want %d", exp, testNow+100)
	}
	setNow(c, testNow+200)
	wDo(t, c, "get", "k") // lazy expiry deletes it
	if !w.Dirty() {
		t.Fatal("a lazily expired watched key did not touch its watcher")
	}

	setNow(c, testNow)
	wDo(t, c, "set", "s", "1", "px", "1")
	setNow(c, testNow+10)
	w, exp = watch(c, "s") // stale: still present, logically expired
	if exp != 0 {
		t.Fatalf("Watch of a stale key returned expiry %d, want 0", exp)
	}
	if got := wDo(t, c, "exists", "s"); got != ":0\r\n" {
		t.Fatalf("EXISTS of a stale key: %q", got)
	}
	if w.Dirty() {
		t.Fatal("deleting a key that was already expired when watched touched it")
	}
	wDo(t, c, "set", "s", "2")
	if !w.Dirty() {
		t.Fatal("creating a key that was watched as expired did not touch it")
	}

	// FLUSHDB of a stale watched key: no change.
	wDo(t, c, "set", "f", "1", "px", "1")
	setNow(c, testNow+20)
	w, _ = watch(c, "f")
	wDo(t, c, "flushdb")
	if w.Dirty() {
		t.Fatal("FLUSHDB of a key already expired when watched touched it")
	}
}

// SWAPDB and stale keys, as Redis's touchAllWatchedKeysInDb decides.
func TestWatchSwapDBAndStaleKeys(t *testing.T) {
	stale := func(c *Ctx, db int, key string) {
		c.DB = db
		wDo(t, c, "set", key, "v", "px", "1")
	}
	// stale key replaced with nothing: no change
	c := newStringCtx(1)
	stale(c, 1, "x")
	setNow(c, testNow+10)
	c.DB = 1
	w, _ := watch(c, "x")
	wDo(t, c, "swapdb", "0", "1")
	if w.Dirty() {
		t.Error("stale key replaced with nothing: touched")
	}
	// no key replaced with a stale key: no change
	c = newStringCtx(1)
	stale(c, 0, "x")
	setNow(c, testNow+10)
	c.DB = 1
	w, _ = watch(c, "x")
	wDo(t, c, "swapdb", "0", "1")
	if w.Dirty() {
		t.Error("missing key replaced with a stale key: touched")
	}
	// stale key replaced with another stale key: no change
	c = newStringCtx(1)
	stale(c, 0, "x")
	stale(c, 1, "x")
	setNow(c, testNow+10)
	c.DB = 1
	w, _ = watch(c, "x")
	wDo(t, c, "swapdb", "0", "1")
	if w.Dirty() {
		t.Error("stale key replaced with a stale key: touched")
	}
	// missing key replaced with a live one: touched
	c = newStringCtx(1)
	c.DB = 1
	wDo(t, c, "set", "x", "v")
	c.DB = 0
	w, _ = watch(c, "x")
	wDo(t, c, "swapdb", "0", "1")
	if !w.Dirty() {
		t.Error("missing key replaced with a live one: not touched")
	}
}

// Unwatch removes exactly the watcher's registrations; afterwards changes
// mark nobody, and the shard's count returns to zero (changes cost nothing).
func TestUnwatch(t *testing.T) {
	c := newStringCtx(1)
	sh := c.Shards[0]
	w1, _ := watch(c, "k")
	w2, _ := watch(c, "k")
	if sh.Watched() != 2 {
		t.Fatalf("Watched=%d, want 2", sh.Watched())
	}
	sh.Unwatch(0, []byte("k"), w1)
	sh.Unwatch(0, []byte("missing"), w1)
	sh.Unwatch(3, []byte("k"), w2) // another database: nothing
	if sh.Watched() != 1 {
		t.Fatalf("Watched=%d after one Unwatch, want 1", sh.Watched())
	}
	wDo(t, c, "set", "k", "1")
	if w1.Dirty() || !w2.Dirty() {
		t.Fatalf("after unwatching w1: w1 dirty=%v w2 dirty=%v", w1.Dirty(), w2.Dirty())
	}
	sh.Unwatch(0, []byte("k"), w2)
	if sh.Watched() != 0 || len(sh.watched[0]) != 0 {
		t.Fatalf("registry not empty: %d, %v", sh.Watched(), sh.watched[0])
	}
}
