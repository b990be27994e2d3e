package tests

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runBinary runs redshard-server with args to completion (it must exit
// within 10 seconds) and returns its exit code and output.
func runBinary(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := exec.CommandContext(ctx, serverBin, args...)
	p.Dir = t.TempDir()
	var out, errb bytes.Buffer
	p.Stdout, p.Stderr = &out, &errb
	err := p.Run()
	if ctx.Err() != nil {
		t.Fatalf("redshard-server %s did not exit within 10s (it should not start)\nstdout: %s\nstderr: %s", strings.Join(args, " "), out.String(), errb.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		code = 0
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run: %v", err)
	}
	return code, out.String(), errb.String()
}

// Bad command lines stop the start with exit code 1 and redis-server's
// FATAL CONFIG FILE ERROR report naming the offending option.
func TestBadCommandLineStopsTheStart(t *testing.T) {
	port := strconv.Itoa(freePort(t))
	for _, tc := range []struct {
		name string
		args []string
		want []string // lines of the report, in order
	}{
		{"unknown option", []string{"--port", port, "--foo", "bar"},
			[]string{"*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***", ">>> 'foo \"bar\"'", "Bad directive or wrong number of arguments"}},
		{"port not a number", []string{"--port", "abc"},
			[]string{"*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***", ">>> 'port \"abc\"'", "argument couldn't be parsed into an integer"}},
		{"port out of range", []string{"--port", "70000"},
			[]string{">>> 'port \"70000\"'", "argument must be between 0 and 65535 inclusive"}},
		{"option without value", []string{"--port"},
			[]string{">>> 'port'", "wrong number of arguments"}},
		{"bad yes/no", []string{"--port", port, "--appendonly", "maybe"},
			[]string{">>> 'appendonly \"maybe\"'", "argument must be 'yes' or 'no'"}},
		{"shards not a number", []string{"--port", port, "--shards", "x"},
			[]string{">>> 'shards \"x\"'", "argument couldn't be parsed into an integer"}},
		{"missing config file", []string{filepath.Join(t.TempDir(), "nope.conf")},
			[]string{"Fatal error, can't open config file '", "nope.conf': No such file or directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, tc.args...)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			out := stdout + stderr
			pos := 0
			for _, w := range tc.want {
				i := strings.Index(out[pos:], w)
				if i < 0 {
					t.Errorf("output lacks %q (in order)\nstdout: %s\nstderr: %s", w, stdout, stderr)
					break
				}
				pos += i + len(w)
			}
			// it must not have started listening
			if strings.Contains(out, "Ready to accept connections") {
				t.Errorf("server reported ready:\n%s", out)
			}
		})
	}
}

// A port that is taken stops the start as in redis-server: the address
// and the reason in the log, exit status 1.
func TestPortInUseStopsTheStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	code, stdout, stderr := runBinary(t, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	out := stdout + stderr
	for _, w := range []string{
		"Could not create server TCP listening socket 127.0.0.1:" + port + ": bind: Address already in use",
		"Failed listening on port " + port + " (TCP), aborting.",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	for _, arg := range []string{"-v", "--version"} {
		code, stdout, _ := runBinary(t, arg)
		if code != 0 || !strings.HasPrefix(stdout, "redshard server v=") || !strings.Contains(stdout, "redis_version=7.0.15") {
			t.Errorf("%s: exit %d, output %q", arg, code, stdout)
		}
	}
}

// A redis.conf file is read with Redis's names, and --name value options
// given after it override it.
func TestConfigFileAndOverrides(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	content := "# a redis.conf\n" +
		"databases 4\n" +
		"maxmemory 64mb\n" +
		"hz 20\n" +
		"shards 2\n"
	if err := os.WriteFile(conf, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerWithConfig(t, conf, "--hz", "15")
	c := s.client(t, 2)
	runSteps(t, c, []step{
		cmd("CONFIG", "GET", "databases").is([]any{"databases", "4"}),
		cmd("CONFIG", "GET", "maxmemory").is([]any{"maxmemory", "67108864"}),
		cmd("CONFIG", "GET", "hz").is([]any{"hz", "15"}),
		cmd("CONFIG", "GET", "shards").is([]any{"shards", "2"}),
		cmd("CONFIG", "GET", "port").is([]any{"port", strconv.Itoa(s.Port)}),
		cmd("SELECT", 3).is("OK"),
		cmd("SELECT", 4).is(errReply("ERR DB index is out of range")),
	})
}

// SIGTERM while clients pipeline single-shard and cross-shard commands must
// still end the process promptly with exit status 0 (stop() checks both).
func TestSIGTERMDuringCrossShardTraffic(t *testing.T) {
	for round := 0; round < 2; round++ {
		t.Run("round "+strconv.Itoa(round), func(t *testing.T) {
			s := startServer(t, "--shards", strconv.Itoa(nShards))
			ks := spreadKeys("term:", nShards, 1)
			var pipeline strings.Builder
			for i := 0; i < 200; i++ {
				pipeline.WriteString(resp("MSET", ks[0], "1", ks[1], "2", ks[2], "3", ks[3], "4"))
				pipeline.WriteString(resp("GET", ks[i%4]))
				pipeline.WriteString(resp("DBSIZE"))
			}
			p := pipeline.String()
			for i := 0; i < 4; i++ {
				rc := s.raw(t)
				go func() {
					for {
						if _, err := rc.c.Write([]byte(p)); err != nil {
							return
						}
					}
				}()
				go func() { // drain replies so the server never stalls on us
					buf := make([]byte, 64<<10)
					for {
						if _, err := rc.c.Read(buf); err != nil {
							return
						}
					}
				}()
			}
			time.Sleep(time.Duration(50+round*40) * time.Millisecond)
			// SIGTERM now, under load; stop fails the test if the server
			// needs SIGKILL or exits non-zero.
			s.stop()
		})
	}
}

// startServerWithConfig is startServer with a config file as the first
// argument, as redis-server takes it.
func startServerWithConfig(t *testing.T, conf string, args ...string) *server {
	t.Helper()
	return startServer(t, append([]string{configFileArg(conf)}, args...)...)
}
