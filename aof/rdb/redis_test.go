package rdb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedisServer cross-checks against a real redis-server, when one is on
// PATH: FUNCTION RESTORE takes DumpFunctions's payloads (and strings this
// package LZF-compresses), FUNCTION DUMP's answer parses back to the same
// codes, and Redis refuses bad payloads with this package's error texts.
func TestRedisServer(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", t.TempDir())
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	var c net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err = net.Dial("tcp", l.Addr().String()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	defer c.Close()
	r := bufio.NewReader(c)
	do := func(args ...string) string { // the reply: "+OK", "-ERR ...", or a bulk's bytes
		t.Helper()
		fmt.Fprintf(c, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(c, "$%d\r\n%s\r\n", len(a), a)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line[0] != '$' {
			return line
		}
		n, _ := strconv.Atoi(line[1:])
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatal(err)
		}
		return string(b[:n])
	}
	if v := do("INFO", "server"); !strings.Contains(v, "redis_version:7.") {
		t.Skip("not a Redis 7 server")
	}

	codes := redisLibraries(t)
	if got := do("FUNCTION", "RESTORE", string(DumpFunctions(codes))); got != "+OK" {
		t.Fatalf("FUNCTION RESTORE of DumpFunctions: %s", got)
	}
	// Redis dumps in its dictionary's order.
	got, err := ParseFunctions([]byte(do("FUNCTION", "DUMP")))
	slices.Sort(got)
	if err != nil || !slices.Equal(got, slices.Sorted(slices.Values(codes))) {
		t.Fatalf("FUNCTION DUMP parses to %q, %v", got, err)
	}

	// This package's LZF, read by Redis's.
	lib := "#!lua name=lzf\n" + strings.Repeat("redis.register_function('f"+"', function() return 'lzflzflzf' end)\n", 1)
	for i := 0; i < 40; i++ {
		lib += fmt.Sprintf("redis.register_function('g%d', function() return 'lzflzflzf%d' end)\n", i, i)
	}
	body := AppendString([]byte{OpFunction2}, []byte(lib), true)
	if body[1] != 0xc3 {
		t.Fatal("not compressed")
	}
	if got := do("FUNCTION", "RESTORE", string(AppendFooter(body))); got != "+OK" {
		t.Fatalf("FUNCTION RESTORE of an LZF string: %s", got)
	}
	if got := do("FCALL", "g39", "0"); got != "lzflzflzf39" {
		t.Fatalf("FCALL g39: %q", got)
	}

	// Bad payloads: Redis's reply is this package's error.
	good := DumpFunctions([]string{"#!lua name=x\nredis.register_function('x', function() return 1 end)"})
	for _, p := range [][]byte{
		nil, good[:9], append(slices.Clone(good[:len(good)-1]), good[len(good)-1]^1),
		AppendFooter([]byte{0}),
		AppendFooter([]byte{OpFunction2, 0x82}),
		AppendFooter([]byte{OpFunction, 0x82}),
		AppendFooter([]byte{OpFunction, 1, 'n', 0x82}),
		AppendFooter([]byte{OpFunction, 1, 'n', 1, 'e', 0x82}),
		AppendFooter([]byte{OpFunction, 1, 'n', 1, 'e', 1, 0x82}),
		AppendFooter([]byte{OpFunction, 1, 'n', 1, 'e', 0, 0x82}),
	} {
		_, err := ParseFunctions(p)
		if err == nil {
			t.Fatalf("ParseFunctions(%x) accepted", p)
		}
		if got := do("FUNCTION", "RESTORE", string(p)); got != "-"+err.Error() {
			t.Errorf("FUNCTION RESTORE %x: redis %q, ParseFunctions %q", p, got, err)
		}
	}
	// The 7.0-rc format: Redis rebuilds the "#!" line as ParseFunctions does.
	old := []byte{OpFunction}
	old = AppendString(old, []byte("oldlib"), false)
	old = AppendString(old, []byte("LUA"), false)
	old = AppendLen(old, 1)
	old = AppendString(old, []byte("desc"), false)
	old = AppendString(old, []byte("redis.register_function('old', function() return 'old' end)"), false)
	want, err := ParseFunctions(AppendFooter(slices.Clone(old)))
	if err != nil {
		t.Fatal(err)
	}
	if got := do("FUNCTION", "RESTORE", string(AppendFooter(old))); got != "+OK" {
		t.Fatalf("FUNCTION RESTORE of OpFunction: %s", got)
	}
	got, err = ParseFunctions([]byte(do("FUNCTION", "DUMP")))
	if err != nil || !slices.Contains(got, want[0]) {
		t.Fatalf("Redis's dump %q lacks %q (%v)", got, want[0], err)
	}
}
