package server

import (
	"testing"

	"github.com/redshard/redshard/acl"
)

// The check of a user restricted to ~app:* +@read +@write costs about ten
// nanoseconds a command (the fast accept) and allocates nothing on SET and
// GET; the default user's costs one load and one flag test.
func BenchmarkACLCheck(b *testing.B) {
	srv := admServer(b, 1)
	u, _, _, msg := srv.acl.SetUser("app", [][]byte{[]byte("on"), []byte(">pw"), []byte("~app:*"), []byte("+@read"), []byte("+@write")})
	if msg != "" {
		b.Fatal(msg)
	}
	for _, tc := range []struct {
		name string
		user *acl.User
		argv [][]byte
	}{
		{"default/SET", srv.acl.Default(), [][]byte{[]byte("SET"), []byte("app:123456"), []byte("xxxxxxxxxx")}},
		{"restricted/SET", u, [][]byte{[]byte("SET"), []byte("app:123456"), []byte("xxxxxxxxxx")}},
		{"restricted/GET", u, [][]byte{[]byte("GET"), []byte("app:123456")}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cl := &Client{srv: srv, user: tc.user}
			c := srv.lookup(tc.argv)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if cl.user != nil && !cl.user.Load().Open() {
					if msg := cl.aclCheck(c, tc.argv); msg != "" {
						b.Fatal(msg)
					}
				}
			}
		})
	}
}

// The restricted user is denied what Redis denies it, with its texts, and
// the denial is logged once by route (peekRoute checks too).
func TestACLCheckDeniesWithRedisTexts(t *testing.T) {
	srv := admServer(t, 1)
	u, _, _, _ := srv.acl.SetUser("app", [][]byte{[]byte("on"), []byte("~app:*"), []byte("+@read"), []byte("+@write")})
	cl := &Client{srv: srv, user: u}
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"SET", "app:1", "v"}, ""},
		{[]string{"SET", "app:1", "v", "GET"}, ""},
		{[]string{"GET", "other"}, "NOPERM this user has no permissions to access one of the keys used as arguments"},
		{[]string{"MSET", "app:1", "v", "x", "v"}, "NOPERM this user has no permissions to access one of the keys used as arguments"},
		{[]string{"CONFIG", "SET", "maxmemory", "1"}, "NOPERM this user has no permissions to run the 'config|set' command"},
		{[]string{"PUBLISH", "ch", "m"}, "NOPERM this user has no permissions to run the 'publish' command"},
	} {
		argv := make([][]byte, len(tc.line))
		for i, a := range tc.line {
			argv[i] = []byte(a)
		}
		if got := cl.aclCheck(srv.lookup(argv), argv); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.line, got, tc.want)
		}
	}
}

// The check's fast paths (the one-key accept, CheckSpan from the key spec)
// answer what the generic check answers from the KeyRef and ChannelRef
// lists, denial and position included, over users with several selectors,
// read and write patterns, first-argument rules and pattern shapes.
func TestACLFastPathsAgreeWithGenericCheck(t *testing.T) {
	srv := admServer(t, 1)
	users := [][]string{
		{"on", "~app:*", "+@read", "+@write"},
		{"on", "%R~r:*", "%W~w:*", "~*.json", "+@all", "-set", "(+set ~s:*)"},
		{"on", "~k", "~a:very:long:prefix:*", "+get", "+select|0", "(~x* +incr)", "(%R~y? +@read)"},
		{"on", "allkeys", "+@read", "-get", "resetchannels", "&ch*", "+publish"},
		{"on", "resetkeys", "+@all"},
		{"on", "~a*", "+@all", "(~b* +@all)"},
	}
	lines := [][]string{
		{"GET", "app:1"}, {"GET", "app:123456789"}, {"GET", "other"}, {"GET", "r:12345678"}, {"GET", "w:1"},
		{"SET", "app:1", "v"}, {"SET", "w:12345678", "v"}, {"SET", "s:1", "v"}, {"SET", "r:1", "v"}, {"SET", "x", "v", "GET"},
		{"INCR", "x1"}, {"INCR", "app:1"}, {"MGET", "app:1", "r:1", "other"}, {"MSET", "w:1", "v", "app:2", "v"},
		{"GET", "a.json"}, {"GET", "k"}, {"GET", "a:very:long:prefix:"}, {"GET", "a:very:long:prefix:1"},
		{"GET", "y1"}, {"GET", "yy1"}, {"SELECT", "0"}, {"SELECT", "1"}, {"PUBLISH", "ch1", "m"}, {"PUBLISH", "x", "m"},
		{"HSET", "app:h", "f", "v"}, {"GET", ""}, {"LPUSH", "w:l", "a"}, {"PING"}, {"AUTH", "a", "b"},
		{"MGET", "a1", "b1", "c1"}, {"MGET", "b1", "a1", "c1"},
	}
	for i, ops := range users {
		argv := make([][]byte, len(ops))
		for j, o := range ops {
			argv[j] = []byte(o)
		}
		u, _, _, msg := srv.acl.SetUser("u"+string(rune('0'+i)), argv)
		if msg != "" {
			t.Fatalf("%v: %s", ops, msg)
		}
		cl := &Client{srv: srv, user: u}
		r := u.Load()
		for _, line := range lines {
			argv := make([][]byte, len(line))
			for j, a := range line {
				argv[j] = []byte(a)
			}
			c := srv.lookup(argv)
			if c == nil || c.acl == nil {
				t.Fatalf("%v: no command", line)
			}
			wantRes, wantPos := r.Check(c.acl, argv, aclKeys(c, argv, nil), aclChannels(c, argv, nil))
			if res, pos := aclCheckRules(r, c, argv); res != wantRes || pos != wantPos {
				t.Errorf("user %v line %v: aclCheckRules %v at %d, generic %v at %d", ops, line, res, pos, wantRes, wantPos)
			}
			want := ""
			if wantRes != acl.OK {
				want = acl.ErrorText(wantRes, c.fullName)
			}
			if got := cl.aclCheck(c, argv); got != want {
				t.Errorf("user %v line %v: aclCheck %q, want %q", ops, line, got, want)
			}
		}
	}
}
