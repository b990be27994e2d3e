package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documented config file (cmd/redshard-server/redshard.conf) must name
// every option CONFIG GET * reports, show each one's built-in default as a
// commented directive, and load. Its format, which this test relies on: an
// option's commented directive is a line "# name value", once per option;
// a line "name value" is one of the file's own choices and comes after the
// commented default; aliases are named in the text.
const redshardConfPath = "../cmd/redshard-server/redshard.conf"

// confDirectives returns, per canonical option name, the commented
// directive lines and the active ones of the file.
func confDirectives(t *testing.T, text string) (commented, active map[string][]string) {
	t.Helper()
	commented, active = map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		body, isComment := line, false
		if strings.HasPrefix(line, "# ") {
			body, isComment = line[2:], true
		} else if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		name, _, _ := strings.Cut(body, " ")
		e := cfgByName[name]
		if e == nil || e.opt.name != name {
			if !isComment {
				t.Errorf("active line %q does not start with an option's canonical name", line)
			}
			continue
		}
		if isComment {
			commented[name] = append(commented[name], body)
		} else {
			active[name] = append(active[name], body)
		}
	}
	return commented, active
}

// loadLines loads the given directive lines on top of Redis's built-in
// defaults, as a config file.
func loadLines(t *testing.T, lines []string) *Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.conf")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfigFrom([]string{p}, "", nil)
	if err != nil {
		t.Fatalf("loading %q: %v", lines, err)
	}
	return c
}

func TestRedshardConf(t *testing.T) {
	raw, err := os.ReadFile(redshardConfPath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	commented, active := confDirectives(t, text)
	def := DefaultConfig()

	// Every option CONFIG GET * reports: its canonical name once as a
	// commented default, its alias somewhere in the text.
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Za-z0-9_-]+`).FindAllString(text, -1) {
		words[w] = true
	}
	var defaults []string
	for _, kv := range def.Get([]string{"*"}) {
		name := kv[0]
		e := cfgByName[name]
		if e.opt.name != name {
			if !words[name] {
				t.Errorf("alias %s (of %s) is not named in redshard.conf", name, e.opt.name)
			}
			continue
		}
		switch n := len(commented[name]); {
		case n == 0:
			t.Errorf("option %s has no commented default line in redshard.conf", name)
			continue
		case n > 1:
			t.Errorf("option %s has %d commented lines: %q", name, n, commented[name])
		}
		defaults = append(defaults, commented[name][0])
		if len(active[name]) > 1 {
			t.Errorf("option %s is set %d times", name, len(active[name]))
		}
	}
	if len(defaults) < 150 {
		t.Fatalf("only %d options found; is the parser right?", len(defaults))
	}

	// The commented lines are the defaults: loading all of them changes
	// nothing, option by option.
	all := loadLines(t, defaults)
	for _, kv := range def.Get([]string{"*"}) {
		if got, _ := all.GetValue(kv[0]); got != kv[1] {
			t.Errorf("redshard.conf's commented default of %s gives %q, the built-in default is %q", kv[0], got, kv[1])
		}
	}

	// The file loads as it is, and differs from the defaults exactly in
	// its active lines.
	c, err := LoadConfigFrom([]string{redshardConfPath}, "", nil)
	if err != nil {
		t.Fatalf("loading redshard.conf: %v", err)
	}
	for _, kv := range def.Get([]string{"*"}) {
		e := cfgByName[kv[0]]
		got, _ := c.GetValue(kv[0])
		want := kv[1]
		if lines := active[e.opt.name]; len(lines) > 0 {
			want, _ = loadLines(t, lines).GetValue(kv[0])
			if want == kv[1] {
				t.Errorf("redshard.conf sets %s to its default; leave it commented", kv[0])
			}
		}
		if got != want {
			t.Errorf("redshard.conf loads %s = %q, want %q", kv[0], got, want)
		}
	}
}
