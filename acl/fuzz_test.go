package acl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/redshard/redshard/shard"
)

// FuzzSetUser: any modifiers never panic, and every user they make is
// described by rules that re-parse to the same description (ACL LIST and
// ACL SAVE then LOAD are faithful).
func FuzzSetUser(f *testing.F) {
	for _, s := range []string{
		"on >pw ~app:* +@read +@write", "reset +@all -@string +incr -debug +debug|digest",
		"(+get ~k) (+set %W~w*) clearselectors", "%RW~x &ch resetchannels allchannels",
		"nopass resetpass #34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6",
		"+select|0 +config|get -config allkeys", "( ~a", "(\"+get\" '~k')",
	} {
		f.Add(s)
	}
	tb := testTable()
	f.Fuzz(func(t *testing.T, s string) {
		e := &Env{Table: tb}
		r, _, err := e.Apply(e.NewRules(), ops(s))
		if err != nil {
			return
		}
		d := r.Describe(tb)
		if _, more := r.Selectors(); len(more) > 0 && strings.ContainsAny(s, "()\"'") {
			// A selector's patterns may hold parentheses or quotes, which
			// its description in parentheses cannot carry back (Redis's
			// format has the same limit).
			return
		}
		r2, op, err := e.Apply(e.NewRules(), ops(d))
		if err != nil {
			t.Fatalf("%q described as %q, which fails at %q: %v", s, d, op, err)
		}
		if d2 := r2.Describe(tb); d2 != d {
			t.Fatalf("%q described as %q, re-parsed as %q", s, d, d2)
		}
		// The aclfile of the user loads back to the same text.
		reg := NewRegistry(tb)
		text := "user u " + d + "\n"
		if _, errs := reg.LoadFile(text, "f.acl"); errs != "" {
			if !bytes.ContainsAny([]byte(d), "\t\r\n\x00") && !strings.Contains(d, "  ") {
				t.Fatalf("aclfile %q refused: %s", text, errs)
			}
			return
		}
	})
}

// FuzzLoadFile: any aclfile text never panics, and a file accepted saves
// back to a file that loads to the same text.
func FuzzLoadFile(f *testing.F) {
	f.Add("user default on nopass ~* &* +@all\nuser a on >x ~k (+get)\n")
	f.Add("user a\n\n# c\nuser a\n")
	tb := testTable()
	f.Fuzz(func(t *testing.T, text string) {
		reg := NewRegistry(tb)
		if _, errs := reg.LoadFile(text, "f.acl"); errs != "" {
			return
		}
		saved := reg.FileText()
		reg2 := NewRegistry(tb)
		if _, errs := reg2.LoadFile(saved, "f.acl"); errs != "" {
			t.Fatalf("saved file %q refused: %s", saved, errs)
		}
		if again := reg2.FileText(); again != saved {
			t.Fatalf("saved %q, reloaded %q", saved, again)
		}
	})
}

// FuzzCompiledMatch: a compiled key pattern matches exactly the keys
// Redis's glob (shard.MatchGlob) matches.
func FuzzCompiledMatch(f *testing.F) {
	for _, s := range [][2]string{{"app:*", "app:1"}, {"*", ""}, {"*.json", "a.json"}, {"12345678*", "123456789"},
		{"k", "k"}, {"a\\*", "a*"}, {"[a-c]*", "b"}, {"a:long:prefix:*", "a:long:prefix:"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, key string) {
		m := compileMatcher(pat)
		if got, want := m.match([]byte(key)), shard.MatchGlob([]byte(pat), []byte(key), false); got != want {
			t.Fatalf("pattern %q key %q: compiled %v, glob %v", pat, key, got, want)
		}
	})
}
