package server

// Expected strings in these tests were checked against redis-server 7.0.15
// (command line errors, CONFIG GET/SET replies and errors, CONFIG REWRITE).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

func mustLoad(t *testing.T, args ...string) *Config {
	t.Helper()
	c, err := LoadConfigFrom(args, "", nil)
	if err != nil {
		t.Fatalf("LoadConfig(%q): %v", args, err)
	}
	return c
}

func get1(t *testing.T, c *Config, name string) string {
	t.Helper()
	v, ok := c.GetValue(name)
	if !ok {
		t.Fatalf("no option %q", name)
	}
	return v
}

func fatalText(line int, text, reason string) string {
	return fmt.Sprintf("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s", line, text, reason)
}

func TestDefaults(t *testing.T) {
	c := DefaultConfig()
	want := map[string]string{
		"port":                              "6379",
		"bind":                              "* -::*",
		"protected-mode":                    "yes",
		"databases":                         "16",
		"requirepass":                       "",
		"maxclients":                        "10000",
		"timeout":                           "0",
		"tcp-keepalive":                     "300",
		"loglevel":                          "notice",
		"logfile":                           "",
		"pidfile":                           "",
		"daemonize":                         "no",
		"proto-max-bulk-len":                "536870912",
		"client-query-buffer-limit":         "1073741824",
		"hz":                                "10",
		"dynamic-hz":                        "yes",
		"save":                              "3600 1 300 100 60 10000",
		"appendonly":                        "no",
		"appendfsync":                       "everysec",
		"appenddirname":                     "appendonlydir",
		"appendfilename":                    "appendonly.aof",
		"aof-load-truncated":                "yes",
		"aof-use-rdb-preamble":              "yes",
		"aof-timestamp-enabled":             "no",
		"auto-aof-rewrite-percentage":       "100",
		"auto-aof-rewrite-min-size":         "67108864",
		"no-appendfsync-on-rewrite":         "no",
		"maxmemory":                         "0",
		"maxmemory-policy":                  "noeviction",
		"maxmemory-samples":                 "5",
		"notify-keyspace-events":            "",
		"slowlog-log-slower-than":           "10000",
		"slowlog-max-len":                   "128",
		"latency-monitor-threshold":         "0",
		"client-output-buffer-limit":        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"lazyfree-lazy-user-flush":          "no",
		"active-expire-effort":              "1",
		"list-max-listpack-size":            "-2",
		"list-max-ziplist-size":             "-2",
		"list-compress-depth":               "0",
		"hash-max-listpack-entries":         "512",
		"hash-max-ziplist-entries":          "512",
		"hash-max-listpack-value":           "64",
		"set-max-intset-entries":            "512",
		"zset-max-listpack-entries":         "128",
		"zset-max-listpack-value":           "64",
		"hll-sparse-max-bytes":              "3000",
		"stream-node-max-bytes":             "4096",
		"stream-node-max-entries":           "100",
		"activerehashing":                   "yes",
		"lfu-log-factor":                    "10",
		"lfu-decay-time":                    "1",
		"tracking-table-max-keys":           "1000000",
		"busy-reply-threshold":              "5000",
		"lua-time-limit":                    "5000",
		"unixsocket":                        "",
		"unixsocketperm":                    "0",
		"tcp-backlog":                       "511",
		"io-threads":                        "1",
		"supervised":                        "no",
		"always-show-logo":                  "no",
		"set-proc-title":                    "yes",
		"crash-log-enabled":                 "yes",
		"latency-tracking":                  "yes",
		"latency-tracking-info-percentiles": "50 99 99.9",
		"enable-debug-command":              "no",
		"enable-failpoints":                 "no",
		"enable-protected-configs":          "no",
		"shards":                            "0",
		"metrics-port":                      "0",
	}
	for name, v := range want {
		if got := get1(t, c, name); got != v {
			t.Errorf("default %s = %q, want %q", name, got, v)
		}
	}
	wd, _ := os.Getwd()
	if c.Dir() != wd {
		t.Errorf("default dir %q, want cwd %q", c.Dir(), wd)
	}
	if c.Shards() < 1 {
		t.Errorf("Shards() = %d", c.Shards())
	}
	if c.ConfigFile() != "" {
		t.Errorf("ConfigFile() = %q", c.ConfigFile())
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		want map[string]string
	}{
		{[]string{"--port", "7000", "--save", "", "--bind", "127.0.0.1", "::1"},
			map[string]string{"port": "7000", "save": "", "bind": "127.0.0.1 ::1"}},
		{[]string{"--port 7001"}, map[string]string{"port": "7001"}},
		{[]string{"--save"}, map[string]string{"save": ""}},
		{[]string{"--save", "--port", "7002"}, map[string]string{"save": "", "port": "7002"}},
		{[]string{"--save", "900 1 300 10"}, map[string]string{"save": "900 1 300 10"}},
		{[]string{"--save", "900", "1", "--save", "300", "10"}, map[string]string{"save": "900 1 300 10"}},
		{[]string{"--requirepass", "a b \"c\""}, map[string]string{"requirepass": `a b "c"`}},
		{[]string{"--requirepass", "--weird"}, map[string]string{"requirepass": "--weird"}},
		{[]string{"--hz", "1000"}, map[string]string{"hz": "500"}},
		{[]string{"--hz", "0"}, map[string]string{"hz": "1"}},
		{[]string{"--maxmemory", "1gb", "--maxmemory-policy", "ALLKEYS-LRU"},
			map[string]string{"maxmemory": "1073741824", "maxmemory-policy": "allkeys-lru"}},
		{[]string{"--maxmemory", "100k"}, map[string]string{"maxmemory": "100000"}},
		{[]string{"--appendonly", "YES"}, map[string]string{"appendonly": "yes"}},
		{[]string{"--bind", ""}, map[string]string{"bind": ""}},
		{[]string{"--client-output-buffer-limit", "replica 1mb 2mb 3"},
			map[string]string{"client-output-buffer-limit": "normal 0 0 0 slave 1048576 2097152 3 pubsub 33554432 8388608 60"}},
		{[]string{"--notify-keyspace-events", "KEA"}, map[string]string{"notify-keyspace-events": "AKE"}},
		{[]string{"--unixsocketperm", "700"}, map[string]string{"unixsocketperm": "700"}},
		{[]string{"--latency-tracking-info-percentiles", "50.5000 99.99 1e1"},
			map[string]string{"latency-tracking-info-percentiles": "50.5 99.99 10"}},
		{[]string{"--enable-debug-command", "local"}, map[string]string{"enable-debug-command": "local"}},
		{[]string{"--enable-failpoints", "yes", "--failpoint", "load-record=crash SKIP 5"}, map[string]string{"enable-failpoints": "yes"}},
		{[]string{"--hash-max-ziplist-entries", "100"},
			map[string]string{"hash-max-listpack-entries": "100", "hash-max-ziplist-entries": "100"}},
		{[]string{"--shards", "4", "--metrics-port", "9121"}, map[string]string{"shards": "4", "metrics-port": "9121"}},
		{[]string{"--list-max-ziplist-entries", "5"}, map[string]string{}}, // deprecated, ignored
	}
	for _, tt := range tests {
		c := mustLoad(t, tt.args...)
		for k, v := range tt.want {
			if got := get1(t, c, k); got != v {
				t.Errorf("%q: %s = %q, want %q", tt.args, k, got, v)
			}
		}
	}
	if c := mustLoad(t, "--shards", "4"); c.Shards() != 4 {
		t.Errorf("Shards() = %d", c.Shards())
	}
}

func TestCommandLineErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--port", "abc"}, fatalText(2, `port "abc"`, "argument couldn't be parsed into an integer")},
		{[]string{"--port", "7000", "--foo", "bar"}, fatalText(3, `foo "bar"`, "Bad directive or wrong number of arguments")},
		{[]string{"--port", "1", "2"}, fatalText(2, `port "1" "2"`, "wrong number of arguments")},
		{[]string{"--port"}, fatalText(2, `port`, "wrong number of arguments")},
		{[]string{"--save", "1"}, fatalText(2, `save "1"`, "Invalid save parameters")},
		{[]string{"--loglevel", "foo"}, fatalText(2, `loglevel "foo"`, "argument(s) must be one of the following: debug, verbose, notice, warning")},
		{[]string{"--maxmemory-policy", "x"}, fatalText(2, `maxmemory-policy "x"`, "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")},
		{[]string{"--client-output-buffer-limit", "normal", "1", "2"}, fatalText(2, `client-output-buffer-limit "normal" "1" "2"`, "Wrong number of arguments in buffer limit configuration.")},
		{[]string{"--client-output-buffer-limit", "foo", "1", "2", "3"}, fatalText(2, `client-output-buffer-limit "foo" "1" "2" "3"`, "Invalid client class specified in buffer limit configuration.")},
		{[]string{"--databases", "0"}, fatalText(2, `databases "0"`, "argument must be between 1 and 2147483647 inclusive")},
		{[]string{"--appendonly", "maybe"}, fatalText(2, `appendonly "maybe"`, "argument must be 'yes' or 'no'")},
		{[]string{"--unixsocketperm", "999"}, fatalText(2, `unixsocketperm "999"`, "argument couldn't be parsed as an octal number")},
		{[]string{"--notify-keyspace-events", "Q"}, fatalText(2, `notify-keyspace-events "Q"`, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")},
		{[]string{"--latency-tracking-info-percentiles", "101"}, fatalText(2, `latency-tracking-info-percentiles "101"`, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")},
		{[]string{"--appendfilename", "a/b"}, fatalText(2, `appendfilename "a/b"`, "appendfilename can't be a path, just a filename")},
		{[]string{"--enable-failpoints", "yes", "--failpoint", "no-such=crash"}, fatalText(3, `failpoint "no-such=crash"`, "unknown failpoint 'no-such'")},
		{[]string{"--enable-failpoints", "yes", "--failpoint", "aof-write=explode"}, fatalText(3, `failpoint "aof-write=explode"`, "failpoint: unknown action 'explode' (crash, panic, sleep <ms>, error <errno>)")},
		{[]string{"--enable-debug-command", "maybe"}, fatalText(2, `enable-debug-command "maybe"`, "argument(s) must be one of the following: no, yes, local")},
		{[]string{"--maxmemory", "1xb"}, fatalText(2, `maxmemory "1xb"`, "argument must be a memory value")},
		{[]string{"--shards", "-1"}, fatalText(2, `shards "-1"`, "argument must be between 0 and 64 inclusive")},
		{[]string{"--shutdown-on-sigint"}, fatalText(2, `shutdown-on-sigint`, "argument(s) must be one of the following: default, save, nosave, now, force")},
		{[]string{"--shutdown-on-sigint", "now force", "--shutdown-on-sigterm"}, fatalText(3, `shutdown-on-sigterm`, "argument(s) must be one of the following: default, save, nosave, now, force")},
		{[]string{"--shutdown-on-sigterm", "save", "nosave"}, fatalText(2, `shutdown-on-sigterm "save" "nosave"`, "shutdown options SAVE and NOSAVE can't be used simultaneously")},
		{[]string{"--shutdown-on-sigterm", "later"}, fatalText(2, `shutdown-on-sigterm "later"`, "argument(s) must be one of the following: default, save, nosave, now, force")},
		{[]string{"--rename-command", "nosuch", "x"}, fatalText(2, `rename-command "nosuch" "x"`, "No such command in rename-command")},
		{[]string{"--rename-command", "get", "SET"}, fatalText(2, `rename-command "get" "SET"`, "Target command name already exists")},
		{[]string{"--rename-command", "get", "", "--rename-command", "get", "x"}, fatalText(3, `rename-command "get" "x"`, "No such command in rename-command")},
	}
	for _, tt := range tests {
		_, err := LoadConfigFrom(tt.args, "", nil)
		if err == nil {
			t.Errorf("%q: no error", tt.args)
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %T is not a *ConfigError", tt.args, err)
		}
		if err.Error() != tt.want {
			t.Errorf("%q:\n got: %s\nwant: %s", tt.args, err, tt.want)
		}
	}
}

// TestFailpointsNeedEnableFailpoints: --failpoint without enable-failpoints
// stops the start, whatever the order of the two; with it, every
// --failpoint is kept in order for Run to arm before loading.
func TestFailpointsNeedEnableFailpoints(t *testing.T) {
	_, err := LoadConfigFrom([]string{"--failpoint", "load-record=crash"}, "", nil)
	want := "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nfailpoint 'load-record=crash' given but failpoints are disabled: add enable-failpoints yes"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	c, err := LoadConfigFrom([]string{"--failpoint", "load-record=crash,SKIP,3", "--failpoint", "aof-fsync", "error", "EIO", "--enable-failpoints", "yes"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Failpoints(), "|"); got != "load-record=crash,SKIP,3|aof-fsync=error EIO" {
		t.Fatalf("Failpoints() = %q", got)
	}
}

const testEmbedded = "dir ./embedded-data\nappendonly yes\nsave \"\"\nbind 127.0.0.1 -::1\n"

func TestEmbeddedDefault(t *testing.T) {
	wd, _ := os.Getwd()
	c, err := LoadConfigFrom(nil, testEmbedded, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir() != filepath.Join(wd, "embedded-data") || !c.AppendOnly() || get1(t, c, "save") != "" || get1(t, c, "bind") != "127.0.0.1 -::1" {
		t.Errorf("embedded default not applied: dir=%q appendonly=%v save=%q bind=%q", c.Dir(), c.AppendOnly(), get1(t, c, "save"), get1(t, c, "bind"))
	}
	// Options apply on top of it, and the first option is still on line 2.
	c, err = LoadConfigFrom([]string{"--save", "60", "1", "--appendonly", "no"}, testEmbedded, nil)
	if err != nil {
		t.Fatal(err)
	}
	if get1(t, c, "save") != "60 1" || c.AppendOnly() || get1(t, c, "bind") != "127.0.0.1 -::1" {
		t.Errorf("options over embedded default: save=%q appendonly=%v", get1(t, c, "save"), c.AppendOnly())
	}
	// A relative --dir is relative to the working directory, not to the
	// embedded default's dir.
	c, err = LoadConfigFrom([]string{"--dir", "mine"}, testEmbedded, nil)
	if err != nil || c.Dir() != filepath.Join(wd, "mine") {
		t.Errorf("--dir over embedded default: %v %q", err, c.Dir())
	}
	// The user's first save replaces the embedded default's rules.
	c, err = LoadConfigFrom([]string{"--save", "60", "1"}, "save 3600 1\n", nil)
	if err != nil || get1(t, c, "save") != "60 1" {
		t.Errorf("--save over embedded default: %v", err)
	}
	_, err = LoadConfigFrom([]string{"--port", "abc"}, testEmbedded, nil)
	if err == nil || err.Error() != fatalText(2, `port "abc"`, "argument couldn't be parsed into an integer") {
		t.Errorf("got %v", err)
	}
	// With a config file the embedded default is not used.
	f := filepath.Join(t.TempDir(), "r.conf")
	os.WriteFile(f, []byte("port 7001\n"), 0o644)
	c = mustLoad(t, f)
	if c.AppendOnly() || get1(t, c, "save") != "3600 1 300 100 60 10000" || get1(t, c, "bind") != "* -::*" {
		t.Errorf("embedded default applied with a config file")
	}
	// Nor with a stdin config.
	c, err = LoadConfigFrom([]string{"-"}, testEmbedded, strings.NewReader("maxmemory 128mb\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.AppendOnly() || c.MaxMemory() != 128<<20 {
		t.Errorf("stdin config: appendonly=%v maxmemory=%d", c.AppendOnly(), c.MaxMemory())
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := `# comment
   # indented comment
port 7797

save 900 1
save 300 10
bind 127.0.0.1 ::1
requirepass "foo bar"
logfile ''
notify-keyspace-events "Ex"
maxmemory 100mb
hash-max-ziplist-entries 100
rename-command FLUSHALL ""
list-max-ziplist-entries 5
client-output-buffer-limit pubsub 1mb 2mb 3
dir ` + dir + `
unixsocket "/tmp/a\x20b.sock"
	  timeout 30	
`
	f := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(f, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, f, "--save", "60", "5", "--loglevel", "warning")
	want := map[string]string{
		"port":                       "7797",
		"save":                       "900 1 300 10 60 5",
		"bind":                       "127.0.0.1 ::1",
		"requirepass":                "foo bar",
		"logfile":                    "",
		"notify-keyspace-events":     "xE",
		"maxmemory":                  "104857600",
		"hash-max-listpack-entries":  "100",
		"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2097152 3",
		"dir":                        dir,
		"unixsocket":                 "/tmp/a b.sock",
		"timeout":                    "30",
		"loglevel":                   "warning",
	}
	for k, v := range want {
		if got := get1(t, c, k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if c.ConfigFile() != f {
		t.Errorf("ConfigFile() = %q", c.ConfigFile())
	}
	if r := c.CommandRenames(); len(r) != 1 || r[0] != [2]string{"FLUSHALL", ""} {
		t.Errorf("CommandRenames() = %q", r)
	}
	if c.LogLevel() != LogLevelWarning || c.NotifyKeyspaceEvents() != cfgNotifyExpired|cfgNotifyKeyevent {
		t.Errorf("typed accessors: %v %d", c.LogLevel(), c.NotifyKeyspaceEvents())
	}
	if l, _ := c.ClientOutputBufferLimit("pubsub"); l != (ClientBufferLimit{1 << 20, 2 << 20, 3}) {
		t.Errorf("pubsub limit %+v", l)
	}
	if sp := c.SaveParams(); len(sp) != 3 || sp[2] != (SaveParam{60, 5}) {
		t.Errorf("SaveParams() = %v", sp)
	}
}

func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notADir := write("file", "")
	tests := []struct {
		text  string
		extra []string
		want  string
	}{
		{"port 7001\n\n# c\nmaxmemory 1xb\n", nil, fatalText(4, "maxmemory 1xb", "argument must be a memory value")},
		{"port 7001\n\n# c\nmaxmemory 1xb\n", []string{"--port", "5"}, fatalText(4, "maxmemory 1xb", "argument must be a memory value")},
		// Options come after the file: 2 lines + "\n" => first option on line 4.
		{"port 7001\nhz 5\n", []string{"--port", "x"}, fatalText(4, `port "x"`, "argument couldn't be parsed into an integer")},
		{"requirepass \"foo\n", nil, fatalText(1, `requirepass "foo`, "Unbalanced quotes in configuration line")},
		{"requirepass \"foo\"bar\n", nil, fatalText(1, `requirepass "foo"bar`, "Unbalanced quotes in configuration line")},
		{"port 6379 # comment\n", nil, fatalText(1, "port 6379 # comment", "wrong number of arguments")},
		{"  nosuchoption yes  \n", nil, fatalText(1, "nosuchoption yes", "Bad directive or wrong number of arguments")},
		{"loadmodule /x.so\n", nil, fatalText(1, "loadmodule /x.so", "Bad directive or wrong number of arguments")},
		{"sentinel monitor a b c\n", nil, fatalText(1, "sentinel monitor a b c", "sentinel directive while not in sentinel mode")},
		{"dir " + notADir + "\n", nil, fatalText(1, "dir "+notADir, "Not a directory")},
		{"replicaof 127.0.0.1 65536\n", nil, fatalText(1, "replicaof 127.0.0.1 65536", "Invalid master port")},
		{"slaveof 127.0.0.1 x\n", nil, fatalText(1, "slaveof 127.0.0.1 x", "Invalid master port")},
		{"maxmemory-clients 101%\n", nil, fatalText(1, "maxmemory-clients 101%", "percentage argument must be less or equal to 100")},
		{"include " + filepath.Join(dir, "missing.conf") + "\n", nil,
			"Fatal error, can't open config file '" + filepath.Join(dir, "missing.conf") + "': No such file or directory"},
	}
	for i, tt := range tests {
		f := write(fmt.Sprintf("t%d.conf", i), tt.text)
		_, err := LoadConfigFrom(append([]string{f}, tt.extra...), "", nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q %q:\n got: %v\nwant: %s", tt.text, tt.extra, err, tt.want)
		}
	}
	_, err := LoadConfigFrom([]string{filepath.Join(dir, "nope.conf")}, "", nil)
	if err == nil || err.Error() != "Fatal error, can't open config file '"+filepath.Join(dir, "nope.conf")+"': No such file or directory" {
		t.Errorf("missing config file: %v", err)
	}
}

func TestIncludeAndDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.conf"), []byte("port 7100\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "conf.d"), 0o755)
	os.WriteFile(filepath.Join(dir, "conf.d", "x.conf"), []byte("hz 20\n"), 0o644)
	main := filepath.Join(dir, "main.conf")
	os.WriteFile(main, []byte(fmt.Sprintf("include %s\ninclude %s/conf.d/*.conf\ninclude %s/empty.d/*.conf\ndir %s\ndir sub\n",
		filepath.Join(dir, "a.conf"), dir, dir, dir)), 0o644)
	c := mustLoad(t, main)
	if c.Port() != 7100 || c.Hz() != 20 {
		t.Errorf("include: port=%d hz=%d", c.Port(), c.Hz())
	}
	// A relative dir is relative to the previous one; a missing dir is fine
	// (the caller creates it).
	if c.Dir() != filepath.Join(dir, "sub") {
		t.Errorf("dir = %q", c.Dir())
	}
	// An error inside an included file reports the included file's line.
	os.WriteFile(filepath.Join(dir, "bad.conf"), []byte("\nport x\n"), 0o644)
	os.WriteFile(main, []byte("include "+filepath.Join(dir, "bad.conf")+"\n"), 0o644)
	_, err := LoadConfigFrom([]string{main}, "", nil)
	if err == nil || err.Error() != fatalText(2, "port x", "argument couldn't be parsed into an integer") {
		t.Errorf("got %v", err)
	}
	// Self inclusion is stopped.
	os.WriteFile(main, []byte("include "+main+"\n"), 0o644)
	if _, err := LoadConfigFrom([]string{main}, "", nil); err == nil || !strings.Contains(err.Error(), "Too many nested include directives") {
		t.Errorf("recursive include: %v", err)
	}
}

func TestStdin(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "r.conf")
	os.WriteFile(f, []byte("port 7001\n"), 0o644)
	c, err := LoadConfigFrom([]string{f, "--loglevel", "verbose", "-"}, "", strings.NewReader("maxmemory 128mb\nport 7002\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Port() != 7002 || c.MaxMemory() != 128<<20 || get1(t, c, "loglevel") != "verbose" {
		t.Errorf("port=%d maxmemory=%d", c.Port(), c.MaxMemory())
	}
	// "-" in the middle is an option argument, not stdin.
	_, err = LoadConfigFrom([]string{"--port", "1", "-", "--hz", "5"}, "", strings.NewReader("x"))
	if err == nil || err.Error() != fatalText(2, `port "1" "-"`, "wrong number of arguments") {
		t.Errorf("got %v", err)
	}
}

func sortedNames(kv [][2]string) []string {
	var s []string
	for _, p := range kv {
		s = append(s, p[0])
	}
	sort.Strings(s)
	return s
}

func TestConfigGet(t *testing.T) {
	c := DefaultConfig()
	tests := []struct {
		patterns []string
		want     []string // sorted names
	}{
		{[]string{"*max*entries*"}, []string{"hash-max-listpack-entries", "hash-max-ziplist-entries", "set-max-intset-entries",
			"stream-node-max-entries", "zset-max-listpack-entries", "zset-max-ziplist-entries"}},
		{[]string{"hash-max-ziplist-entries", "hash-max-listpack-entries"}, []string{"hash-max-listpack-entries", "hash-max-ziplist-entries"}},
		{[]string{"PORT"}, []string{"PORT"}},
		{[]string{"P*RT"}, []string{"port"}},
		{[]string{"port", "PORT"}, []string{"port"}},
		{[]string{"port", "p*rt"}, []string{"port"}},
		{[]string{"p*rt", "port"}, []string{"port"}},
		{[]string{"nomatch"}, nil},
		{[]string{"lua*"}, []string{"lua-time-limit"}},
		{[]string{"maxmemory-p?licy", "h[xyz]", "tcp-[a-c]*"}, []string{"hz", "maxmemory-policy", "tcp-backlog"}},
		{[]string{"[^abcdefghijklmnoqrstuvwxyz]ort"}, []string{"port"}},
		{[]string{"bind", "save", "dir"}, []string{"bind", "dir", "save"}},
	}
	for _, tt := range tests {
		got := sortedNames(c.Get(tt.patterns))
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Get(%q) = %q, want %q", tt.patterns, got, tt.want)
		}
	}
	all := c.Get([]string{"*"})
	visible := 0
	for _, e := range cfgEntries {
		if e.opt.flags&cfgHidden == 0 {
			visible++
		}
	}
	if len(all) != visible {
		t.Errorf("Get(*) returned %d names, want %d (the hidden options left out)", len(all), visible)
	}
	// Redis's "CONFIG GET multiple args": patterns and names together,
	// each name once, aliases reported beside their option.
	got := c.Get([]string{"maxmemory", "maxmemory*", "bind", "*of"})
	names := map[string]bool{}
	for _, kv := range got {
		if names[kv[0]] {
			t.Errorf("%s reported twice", kv[0])
		}
		names[kv[0]] = true
	}
	for _, n := range []string{"maxmemory", "maxmemory-samples", "maxmemory-clients", "bind", "replicaof", "slaveof"} {
		if !names[n] {
			t.Errorf("CONFIG GET maxmemory maxmemory* bind *of: no %s in %q", n, got)
		}
	}
	if kv := c.Get([]string{"PORT"}); kv[0][1] != "6379" {
		t.Errorf("Get(PORT) = %q", kv)
	}
}

func TestConfigSet(t *testing.T) {
	tests := []struct {
		pairs [][2]string
		err   string
		check map[string]string
	}{
		{[][2]string{{"foo", "bar"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", nil},
		{[][2]string{{"maxclients", "abc"}}, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer", nil},
		{[][2]string{{"daemonize", "yes"}}, "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config", nil},
		{[][2]string{{"hz", "5"}, {"hz", "6"}}, "ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter", nil},
		{[][2]string{{"hz", "5"}, {"HZ", "6"}}, "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter", nil},
		{[][2]string{{"dir", "/tmp"}}, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config", nil},
		{[][2]string{{"maxmemory", "1xb"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value", nil},
		{[][2]string{{"maxmemory", "1.5gb"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value", nil},
		{[][2]string{{"maxmemory", "-1"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value", nil},
		{[][2]string{{"port", "1"}, {"foo", "2"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", map[string]string{"port": "6379"}},
		{[][2]string{{"foo", "1"}, {"daemonize", "yes"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", nil},
		{[][2]string{{"daemonize", "yes"}, {"foo", "1"}}, "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config", nil},
		{[][2]string{{"save", "1 2 3"}}, "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters", nil},
		{[][2]string{{"client-output-buffer-limit", "master 1mb 2mb 3"}}, "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration.", nil},
		{[][2]string{{"appendfsync", "foo"}}, "ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no", nil},
		{[][2]string{{"latency-tracking-info-percentiles", "50 abc"}}, "ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - Invalid latency-tracking-info-percentiles parameters",
			map[string]string{"latency-tracking-info-percentiles": "50 99 99.9"}},
		{[][2]string{{"maxclients", "0"}}, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive", nil},
		{[][2]string{{"maxclients", "-1"}}, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive", nil},
		{[][2]string{{"list-max-listpack-size", "-100000000000"}}, "ERR CONFIG SET failed (possibly related to argument 'list-max-listpack-size') - argument must be between -2147483648 and 2147483647 inclusive", nil},
		{[][2]string{{"list-max-ziplist-size", "x"}}, "ERR CONFIG SET failed (possibly related to argument 'list-max-ziplist-size') - argument couldn't be parsed into an integer", nil},
		{[][2]string{{"proto-max-bulk-len", "99999999999999999999999"}}, "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive", nil},
		{[][2]string{{"timeout", "007"}}, "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer", nil},
		{[][2]string{{"timeout", "+5"}}, "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer", nil},
		{[][2]string{{"hz", "5"}, {"maxclients", "abc"}}, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer", map[string]string{"hz": "10"}},
		{[][2]string{{"save", "100 10"}, {"bind", "1.2.3.4"}, {"timeout", "x"}}, "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer",
			map[string]string{"save": "3600 1 300 100 60 10000", "bind": "* -::*"}},
		// successes
		{[][2]string{{"maxmemory", "1GB"}}, "", map[string]string{"maxmemory": "1073741824"}},
		{[][2]string{{"maxmemory", "100k"}}, "", map[string]string{"maxmemory": "100000"}},
		{[][2]string{{"maxmemory", "10B"}}, "", map[string]string{"maxmemory": "10"}},
		{[][2]string{{"maxmemory", ""}}, "", map[string]string{"maxmemory": "0"}},
		{[][2]string{{"maxmemory", "99999999999999999999999"}}, "", map[string]string{"maxmemory": "18446744073709551615"}},
		{[][2]string{{"hz", "1000"}}, "", map[string]string{"hz": "500"}},
		{[][2]string{{"hz", "0"}}, "", map[string]string{"hz": "1"}},
		{[][2]string{{"PORT", "7798"}}, "", map[string]string{"port": "7798"}},
		{[][2]string{{"protected-mode", "YES"}, {"loglevel", "NOTICE"}}, "", map[string]string{"protected-mode": "yes", "loglevel": "notice"}},
		{[][2]string{{"save", ""}}, "", map[string]string{"save": ""}},
		{[][2]string{{"save", "100 10 200 20"}}, "", map[string]string{"save": "100 10 200 20"}},
		{[][2]string{{"bind", "127.0.0.1 -::1"}}, "", map[string]string{"bind": "127.0.0.1 -::1"}},
		{[][2]string{{"client-output-buffer-limit", "normal 1mb 2mb 3"}}, "", map[string]string{"client-output-buffer-limit": "normal 1048576 2097152 3 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}},
		{[][2]string{{"notify-keyspace-events", "KEA"}}, "", map[string]string{"notify-keyspace-events": "AKE"}},
		{[][2]string{{"notify-keyspace-events", "Ex"}}, "", map[string]string{"notify-keyspace-events": "xE"}},
		{[][2]string{{"latency-tracking-info-percentiles", ""}}, "", map[string]string{"latency-tracking-info-percentiles": ""}},
		{[][2]string{{"latency-tracking-info-percentiles", "50.5000 99.99 1e1"}}, "", map[string]string{"latency-tracking-info-percentiles": "50.5 99.99 10"}},
		{[][2]string{{"hash-max-ziplist-entries", "1"}, {"hash-max-listpack-entries", "2"}}, "", map[string]string{"hash-max-ziplist-entries": "2"}},
		{[][2]string{{"requirepass", "secret"}}, "", map[string]string{"requirepass": "secret"}},
		// maxmemory-clients: a size or a percentage of maxmemory (stored as -N)
		{[][2]string{{"maxmemory-clients", "50%"}}, "", map[string]string{"maxmemory-clients": "50%"}},
		{[][2]string{{"maxmemory-clients", "100%"}}, "", map[string]string{"maxmemory-clients": "100%"}},
		{[][2]string{{"maxmemory-clients", "10mb"}}, "", map[string]string{"maxmemory-clients": "10485760"}},
		{[][2]string{{"maxmemory-clients", "101%"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100", nil},
		{[][2]string{{"maxmemory-clients", "-5%"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value", nil},
		{[][2]string{{"maxmemory-clients", "%"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value", nil},
		{[][2]string{{"maxmemory", "5%"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value", nil},
		// Redis's "CONFIG SET rollback on set error": the first bad value is
		// reported, and every value of the call is restored.
		{[][2]string{{"maxmemory", "10000001"}, {"maxmemory-clients", "200%"}, {"client-query-buffer-limit", "invalid"}},
			"ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100",
			map[string]string{"maxmemory": "0", "maxmemory-clients": "0", "client-query-buffer-limit": "1073741824"}},
		// replicaof: a master's empty value; immutable as in Redis
		{[][2]string{{"replicaof", ""}}, "ERR CONFIG SET failed (possibly related to argument 'replicaof') - can't set immutable config", map[string]string{"slaveof": ""}},
		// redshard's start-time options take only their current value
		{[][2]string{{"shards", "0"}, {"metrics-bind", "127.0.0.1"}, {"metrics-port", "0"}}, "", map[string]string{"shards": "0"}},
		{[][2]string{{"shards", "3"}}, "ERR CONFIG SET failed (possibly related to argument 'shards') - can't set immutable config", map[string]string{"shards": "0"}},
		{[][2]string{{"metrics-bind", "0.0.0.0"}}, "ERR CONFIG SET failed (possibly related to argument 'metrics-bind') - can't set immutable config", nil},
		// enable-failpoints is fixed at start: only its own value is taken
		{[][2]string{{"enable-failpoints", "yes"}}, "ERR CONFIG SET failed (possibly related to argument 'enable-failpoints') - can't set immutable config", map[string]string{"enable-failpoints": "no"}},
		{[][2]string{{"enable-failpoints", "no"}}, "", map[string]string{"enable-failpoints": "no"}},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		err := c.Set(tt.pairs)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Set(%q): %v", tt.pairs, err)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("Set(%q):\n got: %v\nwant: %s", tt.pairs, err, tt.err)
		}
		for k, v := range tt.check {
			if got := get1(t, c, k); got != v {
				t.Errorf("after Set(%q): %s = %q, want %q", tt.pairs, k, got, v)
			}
		}
	}
	if err := DefaultConfig().Set(nil); err == nil || err.Error() != "ERR wrong number of arguments for 'config|set' command" {
		t.Errorf("Set(nil) = %v", err)
	}
}

// Redis's "CONFIG sanity": every option CONFIG GET * shows, but for the
// immutable and protected ones of Redis's own list, can be set back to the
// value shown, and shows the same value afterwards.
func TestConfigSanityRoundTrip(t *testing.T) {
	c := DefaultConfig()
	if err := c.Set([][2]string{{"maxmemory-clients", "7%"}, {"save", ""}, {"notify-keyspace-events", "Kx"}}); err != nil {
		t.Fatal(err)
	}
	before := c.Get([]string{"*"})
	for _, kv := range before {
		o := cfgLookup(kv[0]).opt
		if o.flags&cfgImmutable != 0 && o.flags&cfgStartOnly == 0 || o.flags&cfgProtected != 0 {
			continue
		}
		if err := c.Set([][2]string{{kv[0], kv[1]}}); err != nil {
			t.Errorf("CONFIG SET %s %q: %v", kv[0], kv[1], err)
		}
	}
	after := c.Get([]string{"*"})
	if fmt.Sprint(before) != fmt.Sprint(after) {
		for i := range before {
			if i < len(after) && before[i] != after[i] {
				t.Errorf("%s: %q became %q", before[i][0], before[i][1], after[i][1])
			}
		}
	}
}

func TestConfigSetProtectedAndHooks(t *testing.T) {
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	tmp := t.TempDir()

	c := mustLoad(t, "--enable-protected-configs", "local")
	if err := c.SetFromClient([][2]string{{"dir", tmp}}, false); err == nil {
		t.Fatal("protected config set by a remote client")
	}
	if err := c.SetFromClient([][2]string{{"dir", tmp}}, true); err != nil {
		t.Fatal(err)
	}
	now, _ := os.Getwd()
	if r, _ := filepath.EvalSymlinks(tmp); now != r && now != tmp {
		t.Errorf("cwd = %q after CONFIG SET dir %q", now, tmp)
	}
	err := c.SetFromClient([][2]string{{"dir", filepath.Join(tmp, "nope")}}, true)
	if err == nil || err.Error() != "ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory" {
		t.Errorf("got %v", err)
	}
	os.Chdir(wd)

	// Hooks: OnChange runs once per changed option, not for no-op sets.
	c = DefaultConfig()
	var hzCalls, portCalls int
	c.OnChange("hz", func() { hzCalls++ })
	c.OnChange("port", func() { portCalls++ })
	if err := c.Set([][2]string{{"hz", "10"}}); err != nil || hzCalls != 0 {
		t.Errorf("no-op set ran hook: %v %d", err, hzCalls)
	}
	if err := c.Set([][2]string{{"hz", "20"}, {"port", "7000"}}); err != nil || hzCalls != 1 || portCalls != 1 {
		t.Errorf("hooks: %v hz=%d port=%d", err, hzCalls, portCalls)
	}
	// A failing apply hook rolls back every option of the call.
	c.OnApply("port", func() error {
		if c.Port() == 1 {
			return errors.New("Unable to listen on this port. Check server logs.")
		}
		return nil
	})
	err = c.Set([][2]string{{"maxmemory", "1mb"}, {"port", "1"}})
	if err == nil || err.Error() != "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs." {
		t.Errorf("got %v", err)
	}
	if c.Port() != 7000 || c.MaxMemory() != 0 || portCalls != 1 {
		t.Errorf("not rolled back: port=%d maxmemory=%d portCalls=%d", c.Port(), c.MaxMemory(), portCalls)
	}
}

func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "redis.conf")
	orig := `# comment
   # indented comment
port 7797
save 900 1
save 300 10
bind 127.0.0.1 ::1
requirepass "foo bar"
logfile ''
notify-keyspace-events "Ex"
maxmemory 100mb
hash-max-ziplist-entries 100
rename-command FLUSHALL ""
list-max-ziplist-entries 5
client-output-buffer-limit pubsub 1mb 2mb 3
dir ` + dir + `
`
	os.WriteFile(f, []byte(orig), 0o644)
	c := mustLoad(t, f, "--save", "60", "5", "--loglevel", "warning")
	if err := c.Set([][2]string{{"maxmemory", "200mb"}, {"hz", "20"}, {"appendfsync", "always"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Rewrite(""); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(f)
	want := `# comment
# indented comment
port 7797
save 900 1
save 300 10
bind 127.0.0.1 ::1
requirepass "foo bar"
logfile ""
notify-keyspace-events "xE"
maxmemory 200mb
hash-max-listpack-entries 100
rename-command FLUSHALL ""
# ??? list-max-ziplist-entries 5
client-output-buffer-limit normal 0 0 0
dir "` + dir + `"

# Generated by CONFIG REWRITE
loglevel warning
appendfsync always
hz 20
save 60 5
client-output-buffer-limit pubsub 1mb 2mb 3
latency-tracking-info-percentiles 50 99 99.9
`
	if string(got) != want {
		t.Errorf("rewrite:\n%s\nwant:\n%s", got, want)
	}
	// The rewritten file loads back to the same configuration, and a
	// second rewrite is stable.
	c2 := mustLoad(t, f)
	a, b := c.Get([]string{"*"}), c2.Get([]string{"*"})
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("reloaded config differs:\n%v\n%v", a, b)
	}
	// A second rewrite may move lines around (as in Redis: the spare
	// client-output-buffer-limit line gets reused by the replica class) but
	// keeps the configuration.
	if err := c2.Rewrite(""); err != nil {
		t.Fatal(err)
	}
	if c3 := mustLoad(t, f); fmt.Sprint(c3.Get([]string{"*"})) != fmt.Sprint(a) {
		again, _ := os.ReadFile(f)
		t.Errorf("second rewrite changed the configuration:\n%s", again)
	}
	// Removing an option and setting defaults back blanks lines.
	c2.Set([][2]string{{"save", ""}, {"bind", "* -::*"}, {"requirepass", ""}})
	c2.Rewrite("")
	got, _ = os.ReadFile(f)
	if strings.Contains(string(got), "save 900") || strings.Contains(string(got), "bind ") || strings.Contains(string(got), "requirepass") ||
		!strings.Contains(string(got), "save \"\"\n") {
		t.Errorf("rewrite after reset:\n%s", got)
	}
	if err := DefaultConfig().Rewrite(""); err == nil || err.Error() != "ERR The server is running without a config file" {
		t.Errorf("got %v", err)
	}
}

// TestShutdownOnSignalFlags: shutdown-on-sigint/sigterm hold SHUTDOWN's
// flags as a multi-argument enum, reported in Redis's order.
func TestShutdownOnSignalFlags(t *testing.T) {
	c := mustLoad(t, "--shutdown-on-sigint", "nosave", "force", "now", "--shutdown-on-sigterm", "nosave force")
	if got := get1(t, c, "shutdown-on-sigint"); got != "nosave now force" {
		t.Errorf("shutdown-on-sigint = %q, want %q", got, "nosave now force")
	}
	if got := get1(t, c, "shutdown-on-sigterm"); got != "nosave force" {
		t.Errorf("shutdown-on-sigterm = %q, want %q", got, "nosave force")
	}
	if got := get1(t, DefaultConfig(), "shutdown-on-sigint"); got != "default" {
		t.Errorf("default shutdown-on-sigint = %q", got)
	}
	if err := c.Set([][2]string{{"shutdown-on-sigterm", "SAVE now"}}); err != nil {
		t.Fatal(err)
	}
	if got := get1(t, c, "shutdown-on-sigterm"); got != "save now" {
		t.Errorf("after CONFIG SET: %q", got)
	}
	if err := c.Set([][2]string{{"shutdown-on-sigterm", "default"}}); err != nil || get1(t, c, "shutdown-on-sigterm") != "default" {
		t.Errorf("CONFIG SET default: %v, %q", err, get1(t, c, "shutdown-on-sigterm"))
	}
	for _, bad := range []string{"", "save nosave", "soon"} {
		if err := c.Set([][2]string{{"shutdown-on-sigint", bad}}); err == nil {
			t.Errorf("CONFIG SET shutdown-on-sigint %q accepted", bad)
		}
	}
}

// TestRewriteShutdownFlagsAndForceAll: CONFIG REWRITE writes the signal
// flags when not "default"; the force-all rewrite writes every option and
// loads back to the same configuration.
func TestRewriteShutdownFlagsAndForceAll(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "redis.conf")
	os.WriteFile(f, []byte("port 7797\nrename-command flushdb badger\nsave \"\"\ndir "+dir+"\n"), 0o644)
	c := mustLoad(t, f)
	c.Set([][2]string{{"shutdown-on-sigterm", "nosave now"}, {"shutdown-on-sigint", "save"}})
	if err := c.Rewrite(""); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(f)
	want := "port 7797\nrename-command flushdb badger\nsave \"\"\ndir \"" + dir + "\"\n\n# Generated by CONFIG REWRITE\n" +
		"shutdown-on-sigint save\nshutdown-on-sigterm nosave now\nlatency-tracking-info-percentiles 50 99 99.9\n"
	if string(got) != want {
		t.Errorf("rewrite:\n%s\nwant:\n%s", got, want)
	}

	if err := c.RewriteForceAll(""); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(f)
	for _, line := range []string{"\nhz 10\n", "\nmaxmemory-policy noeviction\n", "\nappendonly no\n", "\nrename-command flushdb badger\n"} {
		if !strings.Contains(string(got), line) {
			t.Errorf("force-all rewrite lacks %q:\n%s", line, got)
		}
	}
	if strings.Contains(string(got), "\nbind ") || strings.Contains(string(got), "\nrequirepass") {
		t.Errorf("force-all rewrite wrote a default bind or an unset string:\n%s", got)
	}
	c2 := mustLoad(t, f)
	if a, b := fmt.Sprint(c.Get([]string{"*"})), fmt.Sprint(c2.Get([]string{"*"})); a != b {
		t.Errorf("force-all rewrite reloads differently:\n%s\n%s", a, b)
	}
	if r := c2.CommandRenames(); len(r) != 1 || r[0] != [2]string{"flushdb", "badger"} {
		t.Errorf("renames after rewrite: %q", r)
	}
}

func TestWarnings(t *testing.T) {
	has := func(ws []string, sub string) bool {
		for _, w := range ws {
			if strings.Contains(w, sub) {
				return true
			}
		}
		return false
	}
	c := mustLoad(t, "--protected-mode", "no", "--bind", "0.0.0.0", "--appendonly", "yes", "--appendfsync", "no", "--maxmemory-policy", "allkeys-lru")
	ws := c.Warnings()
	for _, sub := range []string{"protected-mode", "appendfsync no", "maxmemory-policy"} {
		if !has(ws, sub) {
			t.Errorf("no warning about %s in %q", sub, ws)
		}
	}
	c = mustLoad(t, "--protected-mode", "no", "--bind", "127.0.0.1", "-::1", "--save", "", "--appendonly", "yes")
	if ws := c.Warnings(); len(ws) != 0 {
		t.Errorf("unexpected warnings %q", ws)
	}
	c = mustLoad(t, "--save", "", "--requirepass", "x", "--protected-mode", "no")
	if ws := c.Warnings(); !has(ws, "persistence is disabled") || has(ws, "protected-mode") {
		t.Errorf("warnings %q", ws)
	}
}

func TestHelpers(t *testing.T) {
	mem := []struct {
		in string
		v  uint64
		ok bool
	}{
		{"1gb", 1 << 30, true}, {"512mb", 512 << 20, true}, {"100k", 100000, true}, {"100KB", 102400, true},
		{"5", 5, true}, {"1g", 1e9, true}, {"1m", 1e6, true}, {"", 0, true}, {"kb", 0, true},
		{"-1", 0, false}, {"1.5gb", 0, false}, {"1tb", 0, false}, {" 1", 0, false},
	}
	for _, m := range mem {
		v, ok := cfgMemToULL(m.in)
		if v != m.v || ok != m.ok {
			t.Errorf("memtoull(%q) = %d,%v", m.in, v, ok)
		}
	}
	split := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`a b  c`, []string{"a", "b", "c"}, true},
		{`"a b" 'c d'`, []string{"a b", "c d"}, true},
		{`"\x41\n" 'it\'s'`, []string{"A\n", "it's"}, true},
		{`""`, []string{""}, true},
		{`"a"b`, nil, false},
		{`'a`, nil, false},
		{``, []string{}, true},
	}
	for _, s := range split {
		got, ok := cfgSplitArgs(s.in)
		if ok != s.ok || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", s.want) {
			t.Errorf("splitargs(%q) = %q,%v", s.in, got, ok)
		}
	}
	if r := cfgRepr("a\"b\\c\n\x01"); r != `"a\"b\\c\n\x01"` {
		t.Errorf("repr = %s", r)
	}
	glob := []struct {
		p, s string
		ok   bool
	}{
		{"*", "anything", true}, {"h?llo", "hello", true}, {"h[ae]llo", "hallo", true}, {"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true}, {"h\\*llo", "h*llo", true}, {"h\\*llo", "hello", false}, {"*a*b", "xxaxxb", true},
		{"*a*b", "xxaxxc", false}, {"[", "a", false}, {"a*", "a", true}, {"HZ", "hz", true},
	}
	for _, g := range glob {
		if cfgGlobMatch(g.p, g.s, true) != g.ok {
			t.Errorf("glob(%q,%q) != %v", g.p, g.s, g.ok)
		}
	}
}

func TestConcurrentGetSet(t *testing.T) {
	c := DefaultConfig()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = c.MaxClients() + c.ProtoMaxBulkLen() + c.ClientQueryBufferLimit() + c.Timeout() + int64(c.Hz())
				_ = c.MaxMemory()
				_ = c.MaxMemoryPolicy() + c.AppendFsync()
				_ = c.NotifyKeyspaceEvents()
				_ = c.SlowlogLogSlowerThan() + c.SlowlogMaxLen()
				_ = c.SaveParams()
				_ = c.Bind()
				_ = c.ClientOutputBufferLimits()
				_ = c.Get([]string{"*"})
			}
		}()
	}
	for i := 0; i < 200; i++ {
		pairs := [][2]string{
			{"maxclients", fmt.Sprint(100 + i)}, {"hz", fmt.Sprint(1 + i%50)}, {"maxmemory", fmt.Sprintf("%dmb", i)},
			{"maxmemory-policy", cfgEnumPolicy[i%len(cfgEnumPolicy)]}, {"notify-keyspace-events", "KEA"[:i%3+1]},
			{"save", fmt.Sprintf("%d 1", i+1)}, {"bind", "127.0.0.1"}, {"client-output-buffer-limit", fmt.Sprintf("normal %d 0 0", i)},
			{"appendfsync", cfgEnumFsync[i%3]}, {"slowlog-log-slower-than", fmt.Sprint(i)},
		}
		if err := c.Set(pairs); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	c := DefaultConfig()
	l := NewLoggerTo(&buf, c)
	l.Debugf("debug %d", 1)
	l.Verbosef("verbose")
	l.Noticef("notice %s", "x")
	l.Warningf("warning")
	c.Set([][2]string{{"loglevel", "debug"}})
	l.Debugf("now debug")
	l.Noticef("100%%")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	re := regexp.MustCompile(`^\d+:M \d\d [A-Z][a-z][a-z] \d{4} \d\d:\d\d:\d\d\.\d{3} ([.\-*#]) (.*)$`)
	want := [][2]string{{"*", "notice x"}, {"#", "warning"}, {".", "now debug"}, {"*", "100%"}}
	if len(lines) != len(want) {
		t.Fatalf("lines: %q", lines)
	}
	for i, line := range lines {
		m := re.FindStringSubmatch(line)
		if m == nil || m[1] != want[i][0] || m[2] != want[i][1] {
			t.Errorf("line %q, want level %s msg %q", line, want[i][0], want[i][1])
		}
	}
	if !strings.HasPrefix(lines[0], fmt.Sprintf("%d:M ", os.Getpid())) {
		t.Errorf("pid prefix: %q", lines[0])
	}

	// logfile
	f := filepath.Join(t.TempDir(), "r.log")
	c = mustLoad(t, "--logfile", f)
	fl, err := NewLogger(c)
	if err != nil {
		t.Fatal(err)
	}
	fl.SetRole('S')
	fl.Warningf("hello")
	data, _ := os.ReadFile(f)
	if !regexp.MustCompile(`^\d+:S .* # hello\n$`).Match(data) {
		t.Errorf("logfile content %q", data)
	}
	c = mustLoad(t, "--logfile", filepath.Join(f, "x", "y.log"))
	if _, err := NewLogger(c); err == nil || !strings.HasPrefix(err.Error(), "Can't open the log file: ") {
		t.Errorf("got %v", err)
	}
	var nl *Logger
	nl.Noticef("nil logger is a no-op")
}
