package server

import (
	"runtime"
	"testing"

	"github.com/redshard/redshard/shard"
)

// TestFitProcs: GOMAXPROCS follows the shards (plus one for the log's
// writer), never above the CPUs the process had, and an explicit
// GOMAXPROCS in the environment is left alone.
func TestFitProcs(t *testing.T) {
	saved := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(saved) })
	tests := []struct {
		name          string
		max, shards   int
		persist, user bool
		fsync         string
		want          int
	}{
		{"one shard, no log", 4, 1, false, false, "always", 1},
		{"one shard, log, always", 4, 1, true, false, "always", 2},
		{"one shard, log, everysec", 4, 1, true, false, "everysec", 1},
		{"as many shards as CPUs, log, always", 4, 4, true, false, "always", 4},
		{"more shards than CPUs", 2, 8, false, false, "always", 2},
		{"GOMAXPROCS set by the user", 3, 1, false, true, "always", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GOMAXPROCS(tc.max)
			cfg := DefaultConfig()
			if err := cfg.Set([][2]string{{"appendfsync", tc.fsync}}); err != nil {
				t.Fatal(err)
			}
			srv := &Server{cfg: cfg, shards: make([]*shard.Shard, tc.shards)}
			srv.procs = procs{max: tc.max, user: tc.user}
			if tc.persist {
				srv.persist = &persist{}
			}
			srv.fitProcs()
			if got := runtime.GOMAXPROCS(0); got != tc.want {
				t.Fatalf("GOMAXPROCS %d, want %d", got, tc.want)
			}
		})
	}
}

// TestFitProcsLoad: while a data set loads GOMAXPROCS is every CPU, and at
// least loadMinProcs on one CPU (a loop in epoll_wait holds its P), then
// back to the shards' count when the load ends.
func TestFitProcsLoad(t *testing.T) {
	saved := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(saved) })
	for _, c := range []struct{ max, want int }{{1, loadMinProcs}, {2, 2}, {4, 4}} {
		runtime.GOMAXPROCS(c.max)
		srv := &Server{cfg: DefaultConfig(), shards: make([]*shard.Shard, 1)}
		srv.procs = procs{max: c.max}
		srv.procsLoad(1)
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("%d CPUs, loading: GOMAXPROCS %d, want %d", c.max, got, c.want)
		}
		srv.procsLoad(-1)
		if got := runtime.GOMAXPROCS(0); got != 1 {
			t.Errorf("%d CPUs, after the load: GOMAXPROCS %d, want 1", c.max, got)
		}
	}
}
