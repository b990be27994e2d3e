package tests

import (
	"math/rand/v2"
	"testing"
)

// TestParallelLoadEqualsTheLiveDataSet: the loader feeds the shards in
// parallel and runs cross-shard commands at barriers; the data set it
// builds must be the one the server had. The log mixes single-key writes on
// every shard with cross-shard RENAME, MSET, DEL and COPY, and FLUSHDB and
// SWAPDB, in two databases.
func TestParallelLoadEqualsTheLiveDataSet(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--shards", "4", "--appendonly", "yes", "--appendfsync", "no"}
	s := startServerIn(t, dir, args...)
	p := mustDialP(t, s.Addr)
	rng := rand.New(rand.NewPCG(7, 7))
	key := func() string { return "k" + itoa(rng.IntN(300)) }
	var batch [][]string
	flush := func() {
		for _, argv := range batch {
			if err := p.send(argv); err != nil {
				t.Fatal(err)
			}
		}
		for range batch {
			if _, err := p.recv(); err != nil {
				t.Fatal(err)
			}
		}
		batch = batch[:0]
	}
	for i := 0; i < 10000; i++ {
		var argv []string
		switch r := rng.IntN(1000); {
		case r < 500:
			argv = []string{"SET", key(), itoa(i)}
		case r < 700:
			argv = []string{"INCR", "n" + itoa(rng.IntN(50))}
		case r < 800:
			argv = []string{"RENAME", key(), key()}
		case r < 880:
			argv = []string{"MSET", key(), itoa(i), key(), itoa(-i)}
		case r < 930:
			argv = []string{"DEL", key(), key(), key()}
		case r < 980:
			argv = []string{"COPY", key(), key(), "REPLACE"}
		case r < 990:
			argv = []string{"SELECT", itoa(rng.IntN(2))}
		case r < 996:
			argv = []string{"SWAPDB", "0", "1"}
		default:
			argv = []string{"FLUSHDB"}
		}
		batch = append(batch, argv)
		if len(batch) == 64 {
			flush()
		}
	}
	flush()
	want := dumpDBs(t, s.Addr, 0, 1)
	p.close()
	s.stop()
	s = startServerIn(t, dir, args...)
	if diff := diffDumps(dumpDBs(t, s.Addr, 0, 1), want); diff != "" {
		t.Fatalf("after loading:\n%s", diff)
	}
}
