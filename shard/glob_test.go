package shard

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The expected results below are those of Redis 7.0.15's stringmatchlen,
// compiled from util.c on x86-64 Linux (glibc) and run on the same inputs;
// the same harness agreed with MatchGlob on four million random patterns.
func TestMatchGlobFollowsStringmatchlen(t *testing.T) {
	cases := []struct {
		pattern, str string
		nocase, want bool
	}{
		// stars and question marks
		{"*", "anything", false, true},
		{"*", "", false, false}, // KEYS * and SCAN MATCH * bypass the matcher
		{"**", "", false, false},
		{"?", "", false, false},
		{"?", "a", false, true},
		{"?", "ab", false, false},
		{"a?c", "abc", false, true},
		{"a?c", "ac", false, false},
		{"a*", "a", false, true},
		{"a*", "", false, false},
		{"*a", "ba", false, true},
		{"*a", "ab", false, false},
		{"a*b*c", "aXXbYYc", false, true},
		{"a*b*c", "aXXbYY", false, false},
		{"a**b", "ab", false, true},
		{"*?", "a", false, true},
		{"*?", "", false, false},
		{"*a*", "", false, false},
		{"*.txt", "file.txt", false, true},
		{"*.txt", "file.txt.bak", false, false},
		// classes
		{"h[ae]llo", "hello", false, true},
		{"h[ae]llo", "hillo", false, false},
		{"h[^e]llo", "hello", false, false},
		{"h[^e]llo", "hallo", false, true},
		{"h[a-b]llo", "hbllo", false, true},
		{"h[a-b]llo", "hcllo", false, false},
		{"h[b-a]llo", "hallo", false, true}, // reversed range ends are swapped
		{"[a-]", "]", false, true},          // "a-]" is the range a..']'
		{"[a-]", "-", false, false},
		{"[a-]", "b", false, false},
		{"[a", "a", false, true}, // an unterminated class ends with the pattern
		{"[a", "b", false, false},
		{"[", "a", false, false},
		{"[", "", false, false},
		{"[^", "a", false, true},
		{"[^", "", false, false},
		{"[]", "]", false, false},
		{"[]]", "]", false, false},
		{`[\]]`, "]", false, true},
		{`[\\]`, `\`, false, true},
		{`[a\-z]`, "-", false, true},
		{`[a\-z]`, "b", false, false},
		{"[*]", "*", false, true},
		{"[?]", "a", false, false},
		// escapes
		{`\*`, "*", false, true},
		{`\*`, "a", false, false},
		{`\?`, "?", false, true},
		{`\[a]`, "[a]", false, true},
		{`a\`, `a\`, false, true}, // a trailing backslash matches itself
		{`a\`, "a", false, false},
		{`\`, `\`, false, true},
		{`*\`, `abc\`, false, true},
		// case
		{"Hello", "hello", false, false},
		{"Hello", "hello", true, true},
		{"h[A-Z]llo", "hello", true, true},
		{"H[a-z]LLO", "hEllo", true, true},
		{"[^A]", "a", true, false},
		{"[^A]", "a", false, true},
		{`[\A]`, "a", true, false}, // a quoted byte in a class compares exactly
		// bytes above 0x7f: signed char ranges, glibc tolower
		{"[a-\xffb", "*", true, true},
		{"[\x80-a]", "\x00", true, false},
		{"[\x80-a]", "\x00", false, true},
		{"[a-\xff]", "b", false, false},
		{"[a-\xff]", "b", true, false},
		{"\x00", "\x00", false, true},
		{"*\x00", "a\x00", false, true},
		// the nested-loop regression of keyspace.tcl
		{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false, false},
	}
	for _, tc := range cases {
		if got := MatchGlob([]byte(tc.pattern), []byte(tc.str), tc.nocase); got != tc.want {
			t.Errorf("MatchGlob(%q, %q, nocase=%v) = %v, want %v", tc.pattern, tc.str, tc.nocase, got, tc.want)
		}
	}
}

func TestMatchGlobDoesNotBlowUp(t *testing.T) {
	// Without the give-up rule these take exponential time.
	str := []byte(strings.Repeat("a", 5000))
	for _, pat := range []string{
		strings.Repeat("a*", 200) + "b",
		strings.Repeat("*a", 200) + "b",
		strings.Repeat("*?", 100) + "b",
		strings.Repeat("a*", 40) + strings.Repeat("a", 20) + "[b]",
	} {
		start := time.Now()
		if MatchGlob([]byte(pat), str, false) {
			t.Errorf("%.20q... matched", pat)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%.20q... took %v", pat, d)
		}
	}
	if !MatchGlob([]byte(strings.Repeat("a*", 200)), str, false) {
		t.Error("a*a*... does not match a run of a")
	}
}

func TestMatchGlobSurvivesArbitraryInput(t *testing.T) {
	alpha := []byte("ab*?[]^-\\\x00\xff")
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		p := make([]byte, r.IntN(10))
		s := make([]byte, r.IntN(10))
		for j := range p {
			p[j] = alpha[r.IntN(len(alpha))]
		}
		for j := range s {
			s[j] = alpha[r.IntN(len(alpha))]
		}
		MatchGlob(p, s, r.IntN(2) == 1) // must not panic
		// a pattern of only literal bytes matches itself, and only itself
		lit := []byte(strings.NewReplacer("*", "", "?", "", "[", "", "\\", "").Replace(string(p)))
		if !MatchGlob(lit, lit, false) {
			t.Fatalf("%q does not match itself", lit)
		}
	}
}
