package server

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func strs(argv [][]byte) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = string(a)
	}
	return out
}

func TestSlowlogArgv(t *testing.T) {
	many := []string{"sadd", "set"}
	for i := 3; i <= 33; i++ {
		many = append(many, fmt.Sprint(i))
	}
	want32 := append(append([]string{}, many[:31]...), "... (2 more arguments)")
	exactly32 := many[:32]
	long := strings.Repeat("A", 129)
	tests := []struct {
		name   string
		argv   []string
		redact []int
		want   []string
	}{
		{"plain", []string{"set", "k", "v"}, nil, []string{"set", "k", "v"}},
		{"33 args", many, nil, want32},
		{"32 args kept", exactly32, nil, exactly32},
		{"129 bytes", []string{"sadd", "set", "foo", long}, nil,
			[]string{"sadd", "set", "foo", strings.Repeat("A", 128) + "... (1 more bytes)"}},
		{"128 bytes kept", []string{"get", long[:128]}, nil, []string{"get", long[:128]}},
		{"redacted", []string{"auth", "user", "pw"}, []int{1, 2}, []string{"auth", "(redacted)", "(redacted)"}},
	}
	for _, tc := range tests {
		in := argvOf(tc.argv...)
		got := strs(slowlogArgv(in, tc.redact))
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %q\nwant %q", tc.name, got, tc.want)
		}
		// the entry must not alias the request's buffers
		for _, a := range in {
			for i := range a {
				a[i] = '!'
			}
		}
		if got2 := strs(slowlogArgv(argvOf(tc.argv...), tc.redact)); fmt.Sprint(got2) != fmt.Sprint(got) {
			t.Errorf("%s: not deterministic", tc.name)
		}
	}
	e := slowlogArgv(argvOf("set", "key", "val"), nil)
	src := argvOf("set", "key", "val")
	e2 := slowlogArgv(src, nil)
	src[1][0] = 'X'
	if string(e2[1]) != "key" || string(e[1]) != "key" {
		t.Errorf("entry aliases the request: %q", e2[1])
	}
}

func TestSlowRing(t *testing.T) {
	var r slowRing
	for i := 0; i < 10; i++ {
		r.push(slowEntry{id: int64(i)}, 4)
	}
	ids := func() []int64 {
		var out []int64
		for _, e := range r.entries() {
			out = append(out, e.id)
		}
		return out
	}
	if got := fmt.Sprint(ids()); got != "[6 7 8 9]" {
		t.Errorf("ring of 4 after 10: %s", got)
	}
	r.push(slowEntry{id: 10}, 2) // slowlog-max-len lowered
	if got := fmt.Sprint(ids()); got != "[9 10]" {
		t.Errorf("after shrinking to 2: %s", got)
	}
	r.push(slowEntry{id: 11}, 5)
	if got := fmt.Sprint(ids()); got != "[9 10 11]" {
		t.Errorf("after growing to 5: %s", got)
	}
	r.push(slowEntry{id: 12}, 0)
	if r.n != 0 {
		t.Errorf("max-len 0 keeps %d", r.n)
	}
}

func TestLatencyHistory(t *testing.T) {
	var m latencyMonitor
	now := int64(1000)
	m.now = func() int64 { return now }
	m.init()
	m.add("command", 300)
	m.add("command", 250) // same second: the worst stays
	m.add("command", 400)
	now++
	m.add("command", 120)
	now++
	m.add("fast-command", 50)
	s, max, ok := m.history("command")
	if !ok || max != 400 {
		t.Fatalf("history: ok=%v max=%d", ok, max)
	}
	if got := fmt.Sprint(s); got != "[{1000 400} {1001 120}]" {
		t.Errorf("samples %s", got)
	}
	l := m.latest()
	if len(l) != 2 || l[0] != (latencyLatest{"command", 1001, 120, 400}) || l[1].event != "fast-command" {
		t.Errorf("latest %+v", l)
	}
	// 160 samples at most, oldest dropped
	for i := 0; i < 200; i++ {
		now++
		m.add("expire-cycle", int64(i))
	}
	s, max, _ = m.history("expire-cycle")
	if len(s) != latencyTSLen || s[0].latency != 40 || s[len(s)-1].latency != 199 || max != 199 {
		t.Errorf("history of 200: len %d first %v last %v max %d", len(s), s[0], s[len(s)-1], max)
	}
	if n := m.reset("nosuch"); n != 0 {
		t.Errorf("reset of unknown event: %d", n)
	}
	if n := m.reset("command"); n != 1 {
		t.Errorf("reset command: %d", n)
	}
	if _, _, ok := m.history("command"); ok {
		t.Errorf("command survived its reset")
	}
	if n := m.reset(""); n != 2 {
		t.Errorf("reset all: %d", n)
	}
	if len(m.latest()) != 0 {
		t.Errorf("latest after reset")
	}
}

func TestLatencyGraph(t *testing.T) {
	// redis-server 7.0.15's LATENCY GRAPH for the same samples
	want := "command - high 50 ms, low 10 ms (all time high 50 ms)\n" +
		strings.Repeat("-", 80) + "\n" +
		" # \n" +
		" | \n" +
		" |_\n" +
		"_||\n" +
		"   \n" +
		"421\n" +
		"sss\n"
	got := latencyGraph("command", []latencySample{{96, 10}, {98, 50}, {99, 20}}, 50, 100)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestHistBucket(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want int
	}{{0, 0}, {1023, 0}, {1024, 1}, {2047, 1}, {2048, 2}, {1 << 20, 11}, {int64(time.Hour), histBuckets - 1}} {
		if got := histBucket(tc.ns); got != tc.want {
			t.Errorf("histBucket(%d) = %d, want %d", tc.ns, got, tc.want)
		}
		if tc.want < histBuckets-1 && tc.ns >= histUpperNs(tc.want) {
			t.Errorf("%d is not below bucket %d's bound", tc.ns, tc.want)
		}
	}
}

func TestMonitorLine(t *testing.T) {
	now := time.Unix(1339518083, 107412000)
	got := string(monitorLine(nil, now, 3, nil, argvOf("set", "a b", "q\"\\\n\r\t\a\b\x01\xff"), nil))
	want := `+1339518083.107412 [3 ] "set" "a b" "q\"\\\n\r\t\a\b\x01\xff"` + "\r\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = string(monitorLine(nil, time.Unix(5, 1000), 0, nil, argvOf("auth", "pw"), []int{1}))
	if want := "+5.000001 [0 ] \"auth\" \"(redacted)\"\r\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestRedactions(t *testing.T) {
	cmd := func(name string) *Cmd { return &Cmd{fullName: name} }
	for _, tc := range []struct {
		cmd  string
		argv []string
		want string
	}{
		{"auth", []string{"auth", "pw"}, "[1]"},
		{"auth", []string{"auth", "u", "pw"}, "[1 2]"},
		{"hello", []string{"hello", "3", "AUTH", "u", "p", "SETNAME", "n"}, "[3 4]"},
		{"hello", []string{"hello", "3", "SETNAME", "auth"}, "[]"},
		{"migrate", []string{"migrate", "h", "p", "k", "0", "5000", "AUTH2", "u", "p"}, "[7 8]"},
		{"config|set", []string{"config", "set", "masterauth", "x", "maxmemory", "1"}, "[3]"},
		{"get", []string{"get", "auth"}, "[]"},
	} {
		if got := fmt.Sprint(redactions(cmd(tc.cmd), argvOf(tc.argv...))); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.argv, got, tc.want)
		}
	}
}

func TestOutputLimitClock(t *testing.T) {
	cfg := DefaultConfig()
	srv := &Server{cfg: cfg}
	cl := &Client{srv: srv}
	if err := cfg.Set([][2]string{{"client-output-buffer-limit", "normal 1000 500 2"}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(100, 0)
	if cl.overOutputLimit(clientTypeNormal, 600, t0) {
		t.Errorf("over the soft limit for 0 s: closed")
	}
	if cl.overOutputLimit(clientTypeNormal, 600, t0.Add(2*time.Second)) {
		t.Errorf("over the soft limit for 2 s (limit 2): closed")
	}
	if !cl.overOutputLimit(clientTypeNormal, 600, t0.Add(3*time.Second)) {
		t.Errorf("over the soft limit for 3 s: not closed")
	}
	if cl.overOutputLimit(clientTypeNormal, 100, t0.Add(4*time.Second)) || cl.obs.softSince != 0 {
		t.Errorf("under the soft limit: clock not reset")
	}
	if !cl.overOutputLimit(clientTypeNormal, 1000, t0) {
		t.Errorf("at the hard limit: not closed")
	}
	if cl.overOutputLimit(clientTypePubsub, 1000, t0.Add(10*time.Second)) {
		t.Errorf("pubsub class uses its own (32mb) limit")
	}
}

// CONFIG SET of the thresholds and MONITOR move the hot path's gate.
func TestObsGate(t *testing.T) {
	srv := admServer(t, 2)
	cl := admClient(srv, 0, 5000)
	if g := srv.obs.slowNs.Load(); g != 10000*1000 {
		t.Errorf("default gate %d, want 10 ms (slowlog-log-slower-than 10000)", g)
	}
	admDo(srv, cl, "config", "set", "latency-monitor-threshold", "5")
	if g := srv.obs.slowNs.Load(); g != 5e6 {
		t.Errorf("gate with latency-monitor-threshold 5: %d", g)
	}
	admDo(srv, cl, "config", "set", "slowlog-log-slower-than", "0")
	admDo(srv, cl, "slowlog", "reset")
	admDo(srv, cl, "echo", "hi")
	got := admDo(srv, cl, "slowlog", "get")
	if !strings.Contains(got, "$4\r\necho\r\n$2\r\nhi\r\n") || !strings.HasPrefix(got, "*2\r\n") {
		t.Errorf("slowlog get: %q", got)
	}
	admDo(srv, cl, "config", "set", "slowlog-log-slower-than", "-1", "latency-monitor-threshold", "0")
	if g := srv.obs.slowNs.Load(); g != math.MaxInt64 {
		t.Errorf("gate with both off: %d", g)
	}
	mon := admClient(srv, 1, 5001)
	admDo(srv, mon, "monitor")
	if g := srv.obs.slowNs.Load(); g != -1 {
		t.Errorf("gate with a monitor: %d", g)
	}
	mon.stopMonitor()
	if g := srv.obs.slowNs.Load(); g != math.MaxInt64 {
		t.Errorf("gate after the monitor left: %d", g)
	}
}
