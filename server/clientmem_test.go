package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxmemory-clients takes bytes or a percentage of maxmemory (Redis's
// PERCENT_CONFIG), with Redis's errors and CONFIG GET / REWRITE forms.
func TestMaxmemoryClientsConfig(t *testing.T) {
	const prefix = "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - "
	tests := []struct {
		val, err, get string
	}{
		{"10%", "", "10%"},
		{"0%", "", "0"}, // -0 is 0: off
		{"100%", "", "100%"},
		{"1mb", "", "1048576"},
		{"0", "", "0"},
		{"101%", "percentage argument must be less or equal to 100", ""},
		{"abc", "argument must be a memory or percent value", ""},
		{"-1", "argument must be a memory or percent value", ""},
		{"%", "argument must be a memory or percent value", ""},
		{"-5%", "argument must be a memory or percent value", ""},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		err := c.Set([][2]string{{"maxmemory-clients", tt.val}})
		if tt.err != "" {
			if err == nil || err.Error() != prefix+tt.err {
				t.Errorf("set %q: %v, want %q", tt.val, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("set %q: %v", tt.val, err)
			continue
		}
		if got := get1(t, c, "maxmemory-clients"); got != tt.get {
			t.Errorf("set %q: get %q, want %q", tt.val, got, tt.get)
		}
	}

	dir := t.TempDir()
	f := filepath.Join(dir, "redis.conf")
	os.WriteFile(f, []byte("maxmemory-clients 5%\ndir "+dir+"\n"), 0o644)
	c := mustLoad(t, f)
	if got := get1(t, c, "maxmemory-clients"); got != "5%" {
		t.Fatalf("loaded 5%%: %q", got)
	}
	if err := c.Set([][2]string{{"maxmemory-clients", "7%"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Rewrite(""); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f)
	if !strings.Contains(string(b), "maxmemory-clients 7%\n") {
		t.Fatalf("rewritten file:\n%s", b)
	}
}

// The eviction limit follows Redis's getClientEvictionLimit.
func TestClientEvictionLimit(t *testing.T) {
	tests := []struct {
		maxmemory, clients string
		want               int64
	}{
		{"0", "0", 0},
		{"0", "10%", 0}, // a percentage of no maxmemory: off
		{"100mb", "10%", 10 << 20},
		{"1mb", "10%", minClientEvictionLimit}, // 104857 is under the 128 KiB floor
		{"0", "1", minClientEvictionLimit},
		{"0", "3000000", 3000000},
		{"6mb", "7%", 6 << 20 * 7 / 100},
	}
	for _, tt := range tests {
		srv := &Server{cfg: DefaultConfig()}
		if err := srv.cfg.Set([][2]string{{"maxmemory", tt.maxmemory}, {"maxmemory-clients", tt.clients}}); err != nil {
			t.Fatal(err)
		}
		if got := srv.clientEvictionLimit(); got != tt.want {
			t.Errorf("maxmemory %s, maxmemory-clients %s: limit %d, want %d", tt.maxmemory, tt.clients, got, tt.want)
		}
	}
}

// Buckets are Redis's: log2 of the memory, 32 KiB and below in the first,
// 8 GiB and above in the last; a loop publishes its highest non-empty one.
func TestClientMemBuckets(t *testing.T) {
	for _, tt := range []struct {
		mem  int64
		want int8
	}{
		{0, 0}, {1, 0}, {32<<10 - 1, 0}, {32 << 10, 1}, {64<<10 - 1, 1}, {64 << 10, 2},
		{1 << 20, 6}, {3 << 20, 7}, {8 << 30, clientMemBuckets - 1}, {1 << 40, clientMemBuckets - 1},
	} {
		if got := clientMemBucket(tt.mem); got != tt.want {
			t.Errorf("bucket(%d) = %d, want %d", tt.mem, got, tt.want)
		}
	}
	l := &Loop{}
	l.cmem.top.Store(-1)
	l.moveBucket(-1, 3)
	l.moveBucket(-1, 7)
	if l.cmem.top.Load() != 7 {
		t.Fatalf("top %d, want 7", l.cmem.top.Load())
	}
	l.moveBucket(7, 2) // the big client shrank
	if l.cmem.top.Load() != 3 {
		t.Fatalf("top %d, want 3", l.cmem.top.Load())
	}
	l.moveBucket(3, -1)
	l.moveBucket(2, -1)
	if l.cmem.top.Load() != -1 {
		t.Fatalf("top %d, want -1", l.cmem.top.Load())
	}
}

// Key eviction counts the clients as what is left once those over
// maxmemory-clients are evicted: at most the limit, at least what the
// clients that may not be evicted hold.
func TestClientMemForKeys(t *testing.T) {
	srv := &Server{cfg: DefaultConfig(), loops: []*Loop{{}, {}}}
	set := func(total0, ev0, total1, ev1 int64) {
		srv.loops[0].cmem.total.Store(total0)
		srv.loops[0].cmem.evictable.Store(ev0)
		srv.loops[1].cmem.total.Store(total1)
		srv.loops[1].cmem.evictable.Store(ev1)
	}
	const mb = 1 << 20
	set(2*mb, 2*mb, 1*mb, 1*mb)
	if got := srv.clientMemForKeys(); got != 3*mb {
		t.Fatalf("no maxmemory-clients: %d, want all of it", got)
	}
	if err := srv.cfg.Set([][2]string{{"maxmemory-clients", "1mb"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ total0, ev0, total1, ev1, want int64 }{
		{2 * mb, 2 * mb, 1 * mb, 1 * mb, 1 * mb},      // all evictable: down to the limit
		{2 * mb, 0, 1 * mb, 0, 3 * mb},                // none evictable (no-evict): all counts
		{2 * mb, 1 * mb, 1 * mb, 0, 2 * mb},           // 1 MB may go
		{mb / 2, mb / 2, mb / 4, mb / 4, mb/2 + mb/4}, // under the limit: as it is
	} {
		set(tt.total0, tt.ev0, tt.total1, tt.ev1)
		if got := srv.clientMemForKeys(); got != tt.want {
			t.Errorf("totals %d+%d, evictable %d+%d: %d, want %d", tt.total0, tt.total1, tt.ev0, tt.ev1, got, tt.want)
		}
	}
}
