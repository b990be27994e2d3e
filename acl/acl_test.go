package acl

import (
	"strings"
	"testing"

	"github.com/redshard/redshard/shard"
)

// testTable is a small command table in Redis's categories.
func testTable() *Table {
	return NewTable([]CommandInfo{
		{Name: "get", Categories: []string{"@read", "@string", "@fast"}},
		{Name: "set", Categories: []string{"@write", "@string", "@slow"}},
		{Name: "incr", Categories: []string{"@write", "@string", "@fast"}},
		{Name: "mget", Categories: []string{"@read", "@string", "@fast"}},
		{Name: "publish", Categories: []string{"@pubsub", "@fast"}},
		{Name: "subscribe", Categories: []string{"@pubsub", "@slow"}},
		{Name: "auth", Categories: []string{"@fast", "@connection"}, NoAuth: true},
		{Name: "select", Categories: []string{"@fast", "@connection"}},
		{Name: "debug", Categories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "config", Categories: []string{"@slow"}},
		{Name: "config|get", Categories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "config|set", Categories: []string{"@admin", "@slow", "@dangerous"}},
	})
}

func ops(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func argv(s string) [][]byte { return ops(s) }

func TestDescribeInRedisCanonicalForm(t *testing.T) {
	e := &Env{Table: testTable()}
	for _, tc := range []struct{ rules, want string }{
		{"", "off resetchannels -@all"},
		{"reset", "off sanitize-payload resetchannels -@all"},
		{"on nopass ~* &* +@all", "on nopass ~* &* +@all"},
		// In this table @read and @write together are exactly @string:
		// the best-fitting category wins, as in Redis.
		{"on >pw ~app:* +@read +@write", "on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~app:* resetchannels -@all +@string"},
		{"+@read +set", "off resetchannels -@all +@read +set"},
		{"+@all -@string", "off resetchannels +@all -@string"},
		{"+@all -debug +debug|digest", "off resetchannels +@all -debug +debug|digest"},
		{"-@all +config|get", "off resetchannels -@all +config|get"},
		{"%R~r* %W~w* %R~rw* %W~rw*", "off %R~r* %W~w* ~rw* resetchannels -@all"},
		{"&ch1 &ch2", "off resetchannels &ch1 &ch2 -@all"},
		{"+get (~k +set)", "off resetchannels -@all +get (~k resetchannels -@all +set)"},
	} {
		r, op, err := e.Apply(e.NewRules(), ops(tc.rules))
		if err != nil {
			t.Fatalf("%q: %s: %v", tc.rules, op, err)
		}
		if got := r.Describe(e.Table); got != tc.want {
			t.Errorf("%q described as %q, want %q", tc.rules, got, tc.want)
		}
	}
}

func TestSetUserErrorsAreRedisTexts(t *testing.T) {
	e := &Env{Table: testTable()}
	for _, tc := range []struct{ rules, want string }{
		{"+nosuch", "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"},
		{"+@nosuch", "Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL"},
		{"bogus", "Error in ACL SETUSER modifier 'bogus': Syntax error"},
		{"~* ~foo", "Error in ACL SETUSER modifier '~foo': " + ErrKeyAfterAll.Error()},
		{"&* &foo", "Error in ACL SETUSER modifier '&foo': " + ErrChannelAfterAll.Error()},
		{"<nope", "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist"},
		{"#abc", "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{"+config|get|x", "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported"},
		{"+select|", "Error in ACL SETUSER modifier '+select|': Syntax error"},
		{"(this-is-invalid)", "Error in ACL SETUSER modifier '(this-is-invalid)': Syntax error"},
		{"(+get", "Unmatched parenthesis in acl selector starting at '(+get'."},
		{"%X~foo", "Error in ACL SETUSER modifier '%X~foo': Syntax error"},
	} {
		_, op, err := e.Apply(e.NewRules(), ops(tc.rules))
		if err == nil {
			t.Fatalf("%q accepted", tc.rules)
		}
		if got := SetUserError(op, err); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.rules, got, tc.want)
		}
	}
}

func TestCheckCommandsKeysAndChannels(t *testing.T) {
	e := &Env{Table: testTable()}
	tb := e.Table
	r, _, err := e.Apply(e.NewRules(), ops("on ~app:* %R~ro:* +@read +@write +select|0 &news.*"))
	if err != nil {
		t.Fatal(err)
	}
	get, set, pub, sel, dbg, auth := tb.Lookup("get"), tb.Lookup("set"), tb.Lookup("publish"), tb.Lookup("select"), tb.Lookup("debug"), tb.Lookup("auth")
	read := []KeyRef{{1, KeyAccess}}
	write := []KeyRef{{1, KeyUpdate}}
	for _, tc := range []struct {
		name  string
		cmd   *Command
		line  string
		keys  []KeyRef
		chans []ChannelRef
		want  Result
		pos   int
	}{
		{"read allowed key", get, "get app:1", read, nil, OK, 0},
		{"read other key", get, "get other", read, nil, DeniedKey, 1},
		{"write read-only pattern", set, "set ro:1 x", write, nil, DeniedKey, 1},
		{"read read-only pattern", get, "get ro:1", read, nil, OK, 0},
		{"command outside the categories", dbg, "debug object app:1", nil, nil, DeniedCmd, 0},
		{"no_auth command always", auth, "auth x", nil, nil, OK, 0},
		{"first arg allowed", sel, "select 0", nil, nil, OK, 0},
		{"first arg other", sel, "select 1", nil, nil, DeniedCmd, 0},
		{"publish pattern channel", pub, "publish news.1 m", nil, []ChannelRef{{Pos: 1}}, DeniedCmd, 0},
	} {
		res, pos := r.Check(tc.cmd, argv(tc.line), tc.keys, tc.chans)
		if res != tc.want || pos != tc.pos {
			t.Errorf("%s: %v at %d, want %v at %d", tc.name, res, pos, tc.want, tc.pos)
		}
	}
	r2, _, _ := e.Apply(r, ops("+publish"))
	if res, _ := r2.Check(pub, argv("publish news.1 m"), nil, []ChannelRef{{Pos: 1}}); res != OK {
		t.Errorf("publish news.1: %v", res)
	}
	if res, pos := r2.Check(pub, argv("publish sport m"), nil, []ChannelRef{{Pos: 1}}); res != DeniedChannel || pos != 1 {
		t.Errorf("publish sport: %v at %d", res, pos)
	}
	if r.Open() || !e.DefaultRules().Open() {
		t.Error("only the default rules are open")
	}
}

func TestSelectorsPickTheMostRelevantDenial(t *testing.T) {
	e := &Env{Table: testTable()}
	r, _, _ := e.Apply(e.NewRules(), ops("on +mget ~key (+mget ~key ~otherkey)"))
	mget := e.Table.Lookup("mget")
	keys := []KeyRef{{1, KeyAccess}, {2, KeyAccess}, {3, KeyAccess}}
	if res, pos := r.Check(mget, argv("mget key otherkey someotherkey"), keys, nil); res != DeniedKey || pos != 3 {
		t.Errorf("got %v at %d, want a key at 3", res, pos)
	}
	if res, _ := r.Check(e.Table.Lookup("get"), argv("get key"), keys[:1], nil); res != DeniedCmd {
		t.Errorf("get: %v", res)
	}
}

func TestAuthenticate(t *testing.T) {
	reg := NewRegistry(testTable())
	if reg.Authenticate([]byte("default"), []byte("anything")) == nil {
		t.Error("nopass default refused")
	}
	reg.SetDefaultPassword("secret")
	if reg.Authenticate([]byte("default"), []byte("x")) != nil || reg.Authenticate([]byte("default"), []byte("secret")) == nil {
		t.Error("requirepass not the default user's password")
	}
	reg.SetUser("u", ops(">p1 >p2"))
	if reg.Authenticate([]byte("u"), []byte("p1")) != nil {
		t.Error("an off user logged in")
	}
	reg.SetUser("u", ops("on <p1"))
	if reg.Authenticate([]byte("u"), []byte("p1")) != nil || reg.Authenticate([]byte("u"), []byte("p2")) == nil {
		t.Error("passwords after <p1")
	}
	removed, msg := reg.DelUser([]string{"u", "nobody"})
	if msg != "" || len(removed) != 1 || !removed[0].Deleted() {
		t.Errorf("DELUSER: %v %q", removed, msg)
	}
	if _, msg := reg.DelUser([]string{"default"}); msg != "The 'default' user cannot be removed" {
		t.Errorf("DELUSER default: %q", msg)
	}
}

func TestLogGroupsLikeEntries(t *testing.T) {
	var l Log
	e := LogEntry{Reason: DeniedCmd, Object: "get", Username: "u", Time: 1000}
	l.Add(e, 128)
	l.Add(e, 128)
	e2 := e
	e2.Object = "set"
	l.Add(e2, 128)
	l.Add(e, 128)
	got := l.Entries(10)
	if len(got) != 2 || got[0].Object != "get" || got[0].Count != 3 || got[1].Count != 1 {
		t.Errorf("entries %+v", got)
	}
	l.Trim(1)
	if len(l.Entries(10)) != 1 {
		t.Error("trim")
	}
}

func TestFileRoundTrip(t *testing.T) {
	reg := NewRegistry(testTable())
	reg.SetUser("alice", ops("on >a ~* &* +@all"))
	reg.SetUser("bob", ops("on >b -@all +get %R~r* (+set %W~w*)"))
	text := reg.FileText()
	reg2 := NewRegistry(testTable())
	if _, errs := reg2.LoadFile(text, "users.acl"); errs != "" {
		t.Fatal(errs)
	}
	if got := reg2.FileText(); got != text {
		t.Errorf("saved %q, reloaded as %q", text, got)
	}
	_, errs := reg2.LoadFile("user a on\n# comment\nuser a off\nuser b +nosuch\n", "users.acl")
	want := "users.acl:2 should start with user keyword followed by the username. WARNING: Duplicate user 'a' found on line 3. users.acl:4: Error in applying operation '+nosuch': Unknown command or category name in ACL. WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if errs != want {
		t.Errorf("errors %q\nwant   %q", errs, want)
	}
	if reg2.Get("alice") == nil {
		t.Error("a bad file changed the users")
	}
}

func TestGenPass(t *testing.T) {
	for bits, n := range map[int]int{256: 64, 1: 1, 5: 2, 4096: 1024} {
		if p := GenPass(bits); len(p) != n || strings.Trim(p, "0123456789abcdef") != "" {
			t.Errorf("GENPASS %d: %q", bits, p)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	args, ok := SplitArgs([]byte(` a "b c" 'd\'e' "\x41\n" `))
	if !ok || len(args) != 4 || string(args[1]) != "b c" || string(args[2]) != "d'e" || string(args[3]) != "A\n" {
		t.Errorf("%q %v", args, ok)
	}
	if _, ok := SplitArgs([]byte(`"open`)); ok {
		t.Error("unbalanced quotes accepted")
	}
}

// A compiled key pattern matches exactly what Redis's glob does.
func TestCompiledPatternsMatchAsGlob(t *testing.T) {
	pats := []string{"app:*", "app:", "*", "", "a*b", "a?*", "x\\*", "[ab]*", "app:**", "k",
		"*:1", "*1", "**1", "*\\1", "*[1]", "a:very:long:prefix:*", "12345678*", "1234567*", "123456789*",
		"*a*", "\\*", "[^a]*", "[a-c]", "?"}
	keys := []string{"app:", "app:1", "app", "", "a*b", "x*", "k", "kk", "b1", "app:*", "1", ":1", "x:1",
		"a:very:long:prefix:", "a:very:long:prefix:k", "a:very:long:prefiX:k", "12345678", "1234567",
		"123456789", "1234567x9", "*", "a", "b", "d"}
	for _, p := range pats {
		s := &Selector{keys: []KeyPattern{{Perm: PermAll, Pattern: p}}}
		(&Rules{sels: []*Selector{s}}).finish()
		for _, k := range keys {
			want := shard.MatchGlob([]byte(p), []byte(k), false)
			if got := s.KeyAllowed([]byte(k), KeyAccess); got != want {
				t.Errorf("pattern %q key %q: %v, glob says %v", p, k, got, want)
			}
		}
	}
	// The shapes compile to their cheap tests (a slip here would only
	// cost speed, which the table above cannot see).
	for p, kind := range map[string]matchKind{"app:*": matchPrefix, "*": matchPrefix, "k": matchExact, "": matchExact,
		"*.json": matchSuffix, "**": matchGlob, "a*b": matchGlob, "x\\*": matchGlob, "*[a]": matchGlob, "a?*": matchGlob} {
		if m := compileMatcher(p); m.kind != kind {
			t.Errorf("pattern %q compiled to kind %d, want %d", p, m.kind, kind)
		}
	}
}
