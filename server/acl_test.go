package server

import (
	"testing"

	"github.com/redshard/redshard/acl"
)

// The check of a user restricted to ~app:* +@read +@write costs a few tens
// of nanoseconds a command and allocates nothing on SET and GET; the
// default user's costs one load and one flag test.
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
