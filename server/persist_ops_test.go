package server

import (
	"strings"
	"testing"
)

func argvOf(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

func TestAllShardsIfPlacement(t *testing.T) {
	srv := admServer(t, 4)
	cl := admClient(srv, 1, 5000)
	for _, tc := range []struct {
		argv   []string
		target int
		mask   uint64
	}{
		{[]string{"debug", "loadaof"}, -1, 0xf},
		{[]string{"DEBUG", "LoadAOF"}, -1, 0xf},
		{[]string{"debug", "sleep", "0"}, -1, 0xf},
		{[]string{"DEBUG", "Sleep", "1.5"}, -1, 0xf},
		{[]string{"debug", "sleep"}, -1, 0},
		{[]string{"debug", "set-active-expire", "0"}, -1, 0},
		{[]string{"config", "set", "appendonly", "no"}, -1, 0xf},
		{[]string{"config", "set", "hz", "10", "APPENDONLY", "no"}, -1, 0xf},
		{[]string{"config", "set", "hz", "10"}, -1, 0},
		{[]string{"config", "set", "appendfsync", "always"}, -1, 0},
	} {
		argv := argvOf(tc.argv...)
		target, mask := cl.placement(srv.lookup(argv), argv)
		if target != tc.target || mask != tc.mask {
			t.Errorf("%v: placement (%d, %#x), want (%d, %#x)", tc.argv, target, mask, tc.target, tc.mask)
		}
	}
	one := admServer(t, 1)
	argv := argvOf("debug", "loadaof")
	if target, mask := admClient(one, 0, 5000).placement(one.lookup(argv), argv); target != 0 || mask != 0 {
		t.Errorf("one shard: DEBUG LOADAOF placement (%d, %#x), want (0, 0)", target, mask)
	}
}

func TestLoadingAnswersLoadingError(t *testing.T) {
	srv := admServer(t, 2)
	cl := admClient(srv, 0, 5000)
	srv.load.active.Store(true)
	const loading = "-LOADING Redis is loading the dataset in memory\r\n"
	for _, c := range [][]string{
		{"get", "k"},
		{"set", "k", "v"},
		{"ping"},
		{"dbsize"},
		{"config", "set", "appendonly", "no"},
		{"config", "set", "hz", "20", "dir", "/tmp"},
	} {
		if got := admDo(srv, cl, c...); got != loading {
			t.Errorf("%v while loading: %q", c, got)
		}
	}
	for _, c := range [][]string{
		{"config", "get", "appendonly"},
		{"config", "set", "hz", "20"},
		{"select", "1"},
		{"echo", "x"},
		{"client", "id"},
	} {
		if got := admDo(srv, cl, c...); strings.HasPrefix(got, "-") {
			t.Errorf("%v while loading: %q (it has the loading flag)", c, got)
		}
	}
	if got := admDo(srv, cl, "info", "persistence"); !strings.Contains(got, "\r\nloading:1\r\n") {
		t.Errorf("INFO while loading: %q", got)
	}
	srv.load.active.Store(false)
	if got := admDo(srv, cl, "ping"); got != "+PONG\r\n" {
		t.Errorf("PING after loading: %q", got)
	}
	if got := admDo(srv, cl, "info", "persistence"); !strings.Contains(got, "\r\nloading:0\r\n") || strings.Contains(got, "aof_current_size") {
		t.Errorf("INFO without AOF after loading: %q", got)
	}
}
