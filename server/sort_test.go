package server

import (
	"strings"
	"testing"

	"github.com/redshard/redshard/shard"
)

// TestSortPlacementTakesPatternShards: a SORT whose BY/GET patterns read
// keys takes the shards they may live on besides its keys' (all, or a
// {tag}'s); one without such patterns stays on its key's shard.
func TestSortPlacementTakesPatternShards(t *testing.T) {
	const n = 4
	srv := admServer(t, n)
	cl := admClient(srv, 0, 5000)
	sh := func(k string) uint64 { return 1 << uint(shard.ShardOf([]byte(k), n)) }
	all := uint64(1<<n - 1)
	for _, tc := range []struct {
		cmd  string
		want uint64 // the shards taken
	}{
		{"SORT l", sh("l")},
		{"SORT l LIMIT 0 5 DESC ALPHA", sh("l")},
		{"SORT l BY nosort GET #", sh("l")},
		{"SORT l STORE d", sh("l") | sh("d")},
		{"SORT l BY w_*", all},
		{"SORT_RO l GET h_*->f", all},
		{"SORT {u}l BY {u}w_* GET {u}h_*->f STORE {u}d", sh("u")},
		{"SORT {u}l BY {v}w_*", sh("u") | sh("v")},
		{"SORT l BY w_* FOO", sh("l")}, // a syntax error reads nothing
	} {
		argv := make([][]byte, 0, 8)
		for _, a := range strings.Fields(tc.cmd) {
			argv = append(argv, []byte(a))
		}
		target, mask := cl.placement(srv.lookup(argv), argv)
		got := mask
		if mask == 0 {
			got = 1 << uint(target)
		}
		if got != tc.want || (mask != 0) != (tc.want&(tc.want-1) != 0) {
			t.Errorf("%s: target %d mask %04b, want shards %04b", tc.cmd, target, mask, tc.want)
		}
	}
}
