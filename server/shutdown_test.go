package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shutdown-on-sigint/sigterm: Redis's flags enum, its canonical names in
// enum order, its errors, and CONFIG REWRITE.
func TestShutdownOnSigConfig(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"default", "default", ""},
		{"NOW", "now", ""},
		{"default now", "now", ""},
		{"force now nosave", "nosave now force", ""},
		{"save force", "save force", ""},
		{"save nosave", "", "shutdown options SAVE and NOSAVE can't be used simultaneously"},
		{"soon", "", "argument(s) must be one of the following: default, save, nosave, now, force"},
	} {
		c := DefaultConfig()
		err := c.loadString("shutdown-on-sigterm "+tc.in, &cfgLoadState{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if v, _ := c.GetValue("shutdown-on-sigterm"); v != tc.want {
			t.Errorf("%q reads %q, want %q", tc.in, v, tc.want)
		}
		if v, _ := c.GetValue("shutdown-on-sigint"); v != "default" {
			t.Errorf("shutdown-on-sigint %q", v)
		}
	}
	c := DefaultConfig()
	path := filepath.Join(t.TempDir(), "redis.conf")
	if err := os.WriteFile(path, []byte("port 7000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.loadString("shutdown-on-sigint nosave now", &cfgLoadState{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Rewrite(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if s := string(b); !strings.Contains(s, "\nshutdown-on-sigint nosave now\n") || strings.Contains(s, "shutdown-on-sigterm") {
		t.Errorf("rewritten config:\n%s", s)
	}
}
