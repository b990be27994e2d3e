package tests

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redis-cli, unchanged, against redshard. CI installs redis-tools; elsewhere
// these tests are skipped when redis-cli is not on PATH.

func redisCLI(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not on PATH (apt-get install -y redis-tools)")
	}
	return p
}

func runCLI(t *testing.T, cli string, stdin []byte, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, cli, args...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	out, err := c.CombinedOutput()
	return string(out), err
}

func TestRedisCLICommands(t *testing.T) {
	cli := redisCLI(t)
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	p := strconv.Itoa(s.Port)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ping"}, "PONG\n"},
		{[]string{"set", "cli:a", "hello world"}, "OK\n"},
		{[]string{"get", "cli:a"}, "hello world\n"},
		{[]string{"incr", "cli:n"}, "1\n"},
		{[]string{"mset", "cli:x", "1", "cli:y", "2", "cli:z", "3"}, "OK\n"},
		{[]string{"mget", "cli:x", "cli:y", "cli:nope", "cli:z"}, "1\n2\n\n3\n"},
		{[]string{"get", "cli:nope"}, "\n"},
		{[]string{"--no-raw", "get", "cli:nope"}, "(nil)\n"},
		{[]string{"--no-raw", "incr", "cli:n"}, "(integer) 2\n"},
		{[]string{"--no-raw", "mget", "cli:x", "cli:nope"}, "1) \"1\"\n2) (nil)\n"},
		{[]string{"dbsize"}, "5\n"},
		{[]string{"foo", "bar"}, "ERR unknown command 'foo', with args beginning with: 'bar' \n\n"},
		{[]string{"-3", "--no-raw", "hello", "3"}, ""}, // checked below: a RESP3 map
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := runCLI(t, cli, nil, append([]string{"-h", "127.0.0.1", "-p", p}, tc.args...)...)
			if err != nil {
				t.Fatalf("redis-cli %v: %v\n%s", tc.args, err, out)
			}
			if tc.args[0] == "-3" {
				for _, w := range []string{`1# "server" => "redis"`, `3# "proto" => (integer) 3`, `5# "mode" => "standalone"`} {
					if !strings.Contains(out, w) {
						t.Errorf("redis-cli -3 hello 3 output lacks %q:\n%s", w, out)
					}
				}
				return
			}
			if out != tc.want {
				t.Errorf("redis-cli %v:\n got  %q\n want %q", tc.args, out, tc.want)
			}
		})
	}
}

// redis-cli --pipe (mass insertion, as Redis's documentation describes it)
// loads 100,000 SETs spread over four shards.
func TestRedisCLIPipeMassInsert(t *testing.T) {
	cli := redisCLI(t)
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	const n = 100000
	var in bytes.Buffer
	for i := 0; i < n; i++ {
		in.WriteString(resp("SET", "key:"+strconv.Itoa(i), "value:"+strconv.Itoa(i)))
	}
	out, err := runCLI(t, cli, in.Bytes(), "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "--pipe")
	if err != nil {
		t.Fatalf("redis-cli --pipe: %v\n%s", err, out)
	}
	if !strings.Contains(out, "errors: 0, replies: 100000") {
		t.Errorf("redis-cli --pipe output:\n%s\nwant it to report %q", out, "errors: 0, replies: 100000")
	}
	c := s.client(t, 2)
	ctx := ctxT(t)
	if got, err := c.DBSize(ctx).Result(); err != nil || got != n {
		t.Errorf("DBSIZE = %d, %v; want %d", got, err, n)
	}
	for _, i := range []int{0, 1, 4242, 99999} {
		if v, err := c.Get(ctx, "key:"+strconv.Itoa(i)).Result(); err != nil || v != "value:"+strconv.Itoa(i) {
			t.Errorf("GET key:%d = %q, %v", i, v, err)
		}
	}
}

// redis-cli --functions-rdb (REPLCONF rdb-filter-only functions): an RDB
// with the function libraries and no keys, which loads in a fresh server;
// the filter Redis 7.0 does not have is refused, and a filtered sync
// without capa eof too.
func TestRedisCLIFunctionsRDB(t *testing.T) {
	cli := redisCLI(t)
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	c := s.client(t, 1)
	ctx := ctxT(t)
	code := "#!lua name=clilib\nredis.register_function('cli_echo', function(keys, args) return args[1] end)"
	if err := c.FunctionLoad(ctx, code).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		c.Set(ctx, "fk:"+strconv.Itoa(i), i, 0)
	}
	dir := t.TempDir()
	out, err := runCLI(t, cli, nil, "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "--functions-rdb", filepath.Join(dir, "dump.rdb"))
	if err != nil || !strings.Contains(out, "Transfer finished with success") {
		t.Fatalf("redis-cli --functions-rdb: %v\n%s", err, out)
	}
	// Served from memory at once: no snapshot was taken for it.
	if v := infoField(t, c, "persistence", "rdb_bgsave_in_progress"); v != "0" {
		t.Errorf("rdb_bgsave_in_progress:%s", v)
	}
	l := startServerIn(t, dir, "--shards", "2", "--appendonly", "no")
	lc := l.client(t, 1)
	if n, err := lc.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("DBSIZE of the loaded functions RDB: %d %v, want 0", n, err)
	}
	if v, err := lc.FCall(ctx, "cli_echo", nil, "hi").Text(); err != nil || v != "hi" {
		t.Errorf("FCALL cli_echo after loading the functions RDB: %q %v", v, err)
	}
	rc := s.raw(t)
	rc.do(resp("REPLCONF", "rdb-filter-only", "functions keys"), "-ERR Unsupported rdb-filter-only option: keys\r\n")
	rc.do(resp("REPLCONF", "rdb-filter-only", "functions"), "+OK\r\n")
	rc.do(resp("SYNC"), "-ERR Filtered replica requires EOF capability\r\n")
}
