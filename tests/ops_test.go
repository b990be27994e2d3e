package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The documented config file starts the real server, and every name the
// server's CONFIG GET * reports (aliases included) is in it. (The defaults
// it states are checked option by option in server/redshardconf_test.go.)
func TestRedshardConfStartsAndNamesEveryOption(t *testing.T) {
	path, err := filepath.Abs(filepath.Join("..", "cmd", "redshard-server", "redshard.conf"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Za-z0-9_-]+`).FindAllString(string(text), -1) {
		words[w] = true
	}
	// startServer puts its own port, bind, dir, save and appendonly after
	// the file, as a command line would.
	s := startServer(t, configFileArg(path))
	c := s.client(t, 2)
	m, err := c.ConfigGet(ctxT(t), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) < 150 {
		t.Fatalf("CONFIG GET * returned only %d options", len(m))
	}
	for name := range m {
		if !words[name] {
			t.Errorf("CONFIG GET * reports %q, which redshard.conf does not name", name)
		}
	}
	// The file's own choices hold where the command line left them alone.
	for name, want := range map[string]string{"supervised": "auto", "protected-mode": "yes", "appendfsync": "everysec"} {
		if m[name] != want {
			t.Errorf("%s = %q, want %q from redshard.conf", name, m[name], want)
		}
	}
}
