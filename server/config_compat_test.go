package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The directives the stock redis.conf of Redis 7.0 sets, beyond those
// redshard acts on, and the test suite's default.conf ones: a file holding
// them must load, and CONFIG GET reports them as Redis does.
func TestCompatOptionsLoad(t *testing.T) {
	conf := strings.Join([]string{
		`proc-title-template "{title} {listen-addr} {server-mode}"`,
		"rdb-del-sync-files no",
		"replica-serve-stale-data yes",
		"slave-serve-stale-data yes",
		"replica-read-only yes",
		"repl-diskless-sync yes",
		"repl-diskless-sync-delay 0",
		"repl-diskless-sync-max-replicas 0",
		"repl-diskless-load disabled",
		"repl-disable-tcp-nodelay no",
		"replica-priority 100",
		"replica-lazy-flush no",
		"oom-score-adj no",
		"oom-score-adj-values 0 200 800",
		"disable-thp yes",
		"jemalloc-bg-thread yes",
		"propagation-error-behavior panic",
		"repl-backlog-size 2mb",
		"syslog-facility local3",
		"replicaof no one",
		"maxmemory-clients 5%",
	}, "\n")
	path := filepath.Join(t.TempDir(), "redis.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, path)
	for name, want := range map[string]string{
		"repl-diskless-sync-delay":   "0",
		"slave-serve-stale-data":     "yes",
		"propagation-error-behavior": "panic",
		"repl-backlog-size":          "2097152",
		"syslog-facility":            "local3",
		"oom-score-adj-values":       "0 200 800",
		"proc-title-template":        "{title} {listen-addr} {server-mode}",
		"replicaof":                  "",
		"maxmemory-clients":          "5%",
	} {
		if got := get1(t, c, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	d := DefaultConfig()
	for name, want := range map[string]string{
		"repl-diskless-sync-delay":   "5",
		"repl-timeout":               "60",
		"min-slaves-max-lag":         "10",
		"cluster-config-file":        "nodes.conf",
		"syslog-ident":               "redis",
		"activedefrag":               "no",
		"cluster-enabled":            "no",
		"oom-score-adj":              "no",
		"acl-pubsub-default":         "resetchannels",
		"active-defrag-ignore-bytes": "104857600",
		"masterauth":                 "",
	} {
		if got := get1(t, d, name); got != want {
			t.Errorf("default %s = %q, want %q", name, got, want)
		}
	}
}

// CONFIG SET of the compatibility options: Redis's bounds, enum lists,
// immutability and error strings.
func TestCompatOptionsSet(t *testing.T) {
	c := DefaultConfig()
	for _, tc := range []struct{ name, val, err string }{
		{"repl-timeout", "0", "ERR CONFIG SET failed (possibly related to argument 'repl-timeout') - argument must be between 1 and 2147483647 inclusive"},
		{"syslog-enabled", "yes", "ERR CONFIG SET failed (possibly related to argument 'syslog-enabled') - can't set immutable config"},
		{"activedefrag", "yes", "ERR CONFIG SET failed (possibly related to argument 'activedefrag') - Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution"},
		{"activedefrag", "no", ""},
		{"oom-score-adj-values", "1 2 3000", "ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - Invalid oom-score-adj-values, elements must be between -2000 and 2000."},
		{"oom-score-adj-values", "1 2", "ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - wrong number of arguments"},
		{"oom-score-adj-values", "1 2 3", ""},
		{"oom-score-adj", "relative", ""},
		{"proc-title-template", "{foo}", "ERR CONFIG SET failed (possibly related to argument 'proc-title-template') - template format is invalid or contains unknown variables"},
		{"proc-title-template", "{title}", "ERR CONFIG SET failed (possibly related to argument 'proc-title-template') - template format is invalid or contains unknown variables"},
		{"proc-title-template", "{{ {title}", ""},
		{"cluster-announce-hostname", "a_b", "ERR CONFIG SET failed (possibly related to argument 'cluster-announce-hostname') - Hostnames may only contain alphanumeric characters, hyphens or dots"},
		{"propagation-error-behavior", "x", "ERR CONFIG SET failed (possibly related to argument 'propagation-error-behavior') - argument(s) must be one of the following: ignore, panic, panic-on-replicas"},
		{"slave-priority", "7", ""},
	} {
		err := c.Set([][2]string{{tc.name, tc.val}})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("CONFIG SET %s %q: got %q, want %q", tc.name, tc.val, got, tc.err)
		}
	}
	for name, want := range map[string]string{
		"oom-score-adj":        "yes", // Redis names the value by its first spelling
		"oom-score-adj-values": "1 2 3",
		"replica-priority":     "7",
		"proc-title-template":  "{{ {title}",
	} {
		if got := get1(t, c, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// cluster-enabled yes is real (cmd_cluster.go), and immutable.
	cc, err := LoadConfigFrom([]string{"--cluster-enabled", "yes"}, "", nil)
	if err != nil || !cc.ClusterEnabled() {
		t.Errorf("LoadConfig(--cluster-enabled yes): %v", err)
	}
}

// CONFIG REWRITE writes a percentage as it was given, and drops
// "replicaof no one" (a master has no such line, as in Redis).
func TestRewritePercentAndReplicaOf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redis.conf")
	if err := os.WriteFile(path, []byte("slaveof no one\nmaxmemory-clients 1mb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, path)
	if err := c.Set([][2]string{{"maxmemory-clients", "30%"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Rewrite(""); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if got := string(b); !strings.HasPrefix(got, "\nmaxmemory-clients 30%\n") || strings.Contains(got, "of ") {
		t.Errorf("rewritten file %q", got)
	}
	if got := get1(t, mustLoad(t, path), "maxmemory-clients"); got != "30%" {
		t.Errorf("reloaded maxmemory-clients %q", got)
	}
}
