package tests

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// RESP3 (HELLO 3) and RESP2 replies, byte for byte as Redis 7.0 sends them:
// maps, nulls, doubles, booleans and verbatim strings in RESP3, and their
// RESP2 equivalents.

func TestRESP3AndRESP2RepliesMatchRedis(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards), "--enable-debug-command", "yes")
	port := strconv.Itoa(s.Port)
	portBulk := bulk(port)

	type exchange struct {
		name        string
		req         string
		resp2       string
		resp3       string
		resp3Prefix bool // resp3 (and resp2) are prefixes of the reply; the rest is read by length
	}
	cases := []exchange{
		{"GET missing is null", resp("GET", "nokey"), "$-1\r\n", "_\r\n", false},
		{"MGET with a missing key", resp("MGET", "nokey", "a"), "*2\r\n$-1\r\n$1\r\n1\r\n", "*2\r\n_\r\n$1\r\n1\r\n", false},
		{"SET NX on an existing key is null", resp("SET", "a", "2", "NX"), "$-1\r\n", "_\r\n", false},
		{"SET GET of a missing key is null", resp("SET", "x", "1", "GET"), "$-1\r\n", "_\r\n", false},
		{"GETEX missing", resp("GETEX", "nokey"), "$-1\r\n", "_\r\n", false},
		// Redis 7 answers INCRBYFLOAT with a bulk string in both protocols.
		{"INCRBYFLOAT is a bulk string", resp("INCRBYFLOAT", "fl", "1.5"), "$1\r\n3\r\n", "$1\r\n3\r\n", false},
		{"TTL is an integer", resp("TTL", "a"), ":-1\r\n", ":-1\r\n", false},
		{"LCS IDX is a map", resp("LCS", "a", "x", "IDX"),
			"*4\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:0\r\n:0\r\n*2\r\n:0\r\n:0\r\n$3\r\nlen\r\n:1\r\n",
			"%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:0\r\n:0\r\n*2\r\n:0\r\n:0\r\n$3\r\nlen\r\n:1\r\n", false},
		{"CONFIG GET is a map", resp("CONFIG", "GET", "port"),
			"*2\r\n$4\r\nport\r\n" + portBulk, "%1\r\n$4\r\nport\r\n" + portBulk, false},
		{"DEBUG PROTOCOL double", resp("DEBUG", "PROTOCOL", "double"), "$5\r\n3.141\r\n", ",3.141\r\n", false},
		{"DEBUG PROTOCOL null", resp("DEBUG", "PROTOCOL", "null"), "$-1\r\n", "_\r\n", false},
		{"DEBUG PROTOCOL true", resp("DEBUG", "PROTOCOL", "true"), ":1\r\n", "#t\r\n", false},
		{"DEBUG PROTOCOL map", resp("DEBUG", "PROTOCOL", "map"),
			"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n", "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n", false},
		{"INFO is a verbatim string", resp("INFO", "keyspace"),
			"$", "=", true},
	}

	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			rc := s.raw(t)
			rc.do(resp("FLUSHALL"), "+OK\r\n")
			rc.do(resp("SET", "a", "1"), "+OK\r\n")
			rc.do(resp("SET", "fl", "1.5"), "+OK\r\n")
			if proto == 3 {
				rc.write(resp("HELLO", "3"))
				rc.expect("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:")
				id := rc.line()
				if _, err := strconv.Atoi(id); err != nil {
					t.Fatalf("HELLO id %q", id)
				}
				rc.expect("$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n")
			}
			for _, tc := range cases {
				want := tc.resp2
				if proto == 3 {
					want = tc.resp3
				}
				t.Run(tc.name, func(t *testing.T) {
					rc.t = t
					rc.write(tc.req)
					if !tc.resp3Prefix {
						rc.expect(want)
						return
					}
					// verbatim (RESP3) or bulk (RESP2) with the INFO text
					rc.expect(want)
					n, err := strconv.Atoi(rc.line())
					if err != nil {
						t.Fatalf("bad length")
					}
					body := rc.readN(n + 2)
					if proto == 3 {
						if !strings.HasPrefix(body, "txt:") {
							t.Fatalf("verbatim string %q does not start with txt:", body)
						}
						body = body[4:]
					}
					if want := "# Keyspace\r\ndb0:keys=3,expires=0,avg_ttl=0\r\n\r\n"; body != want {
						t.Errorf("INFO keyspace body %q, want %q", body, want)
					}
				})
			}
		})
	}
}

// HELLO through go-redis: its reply is a map in RESP3 and a flat array in
// RESP2; HELLO's errors are Redis's.
func TestHELLOWithGoRedis(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	ctx := ctxT(t)

	c3 := s.client(t, 3)
	v, err := c3.Do(ctx, "HELLO", "3").Result()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(map[any]any)
	if !ok {
		t.Fatalf("HELLO 3 reply %T %#v, want a map", v, v)
	}
	for k, want := range map[string]any{"server": "redis", "version": "7.0.15", "proto": int64(3), "mode": "standalone", "role": "master", "modules": []any{}} {
		if got := m[k]; !equalAny(got, want) {
			t.Errorf("HELLO 3 %s = %#v, want %#v", k, got, want)
		}
	}
	if _, ok := m["id"].(int64); !ok {
		t.Errorf("HELLO 3 id = %#v, want an integer", m["id"])
	}
	// nulls and maps through the RESP3 client
	if err := c3.Get(ctx, "nokey").Err(); err != redis.Nil {
		t.Errorf("GET nokey over RESP3: %v, want redis.Nil", err)
	}
	if cfg, err := c3.Do(ctx, "CONFIG", "GET", "port").Result(); err != nil {
		t.Errorf("CONFIG GET port over RESP3: %v", err)
	} else if mm, ok := cfg.(map[any]any); !ok || mm["port"] != strconv.Itoa(s.Port) {
		t.Errorf("CONFIG GET port over RESP3 = %#v, want map[port:%d]", cfg, s.Port)
	}
	if f, err := c3.IncrByFloat(ctx, "f", 0.25).Result(); err != nil || f != 0.25 {
		t.Errorf("INCRBYFLOAT over RESP3 = %v, %v; want 0.25", f, err)
	}

	c2 := s.client(t, 2)
	v, err = c2.Do(ctx, "HELLO", "2").Result()
	if err != nil {
		t.Fatal(err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 14 {
		t.Fatalf("HELLO 2 reply %#v, want a 14-element array", v)
	}
	if arr[0] != "server" || arr[1] != "redis" || arr[4] != "proto" || arr[5] != int64(2) {
		t.Errorf("HELLO 2 reply %#v", arr)
	}
	if cfg, err := c2.Do(ctx, "CONFIG", "GET", "port").Result(); err != nil || !equalAny(cfg, []any{"port", strconv.Itoa(s.Port)}) {
		t.Errorf("CONFIG GET port over RESP2 = %#v, %v", cfg, err)
	}

	runSteps(t, c2, []step{
		cmd("HELLO", "4").is(errReply("NOPROTO unsupported protocol version")),
		cmd("HELLO", "1").is(errReply("NOPROTO unsupported protocol version")),
		cmd("HELLO", "abc").is(errReply("ERR Protocol version is not an integer or out of range")),
		cmd("HELLO", "3", "BOGUS").is(errReply("ERR Syntax error in HELLO option 'BOGUS'")),
	})
}

func equalAny(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalAny(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}
