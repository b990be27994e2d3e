package tests

import (
	"os/exec"
	"strconv"
	"testing"

	"github.com/redshard/redshard/shard"
)

// keysOnShards returns one key per shard of n, named prefix0, prefix1, ...
func keysOnShards(prefix string, n int) []string {
	keys := make([]string, n)
	found := 0
	for i := 0; found < n; i++ {
		k := prefix + strconv.Itoa(i)
		if s := shard.ShardOf([]byte(k), n); keys[s] == "" {
			keys[s] = k
			found++
		}
	}
	return keys
}

// TestBitopAndPfmergeAcrossShards: BITOP and PFMERGE/PFCOUNT read sources
// and write a destination that live on four different shards.
func TestBitopAndPfmergeAcrossShards(t *testing.T) {
	s := startServer(t, "--shards", "4")
	c := s.client(t, 2)
	ctx := ctxT(t)
	k := keysOnShards("bits", 4)

	for _, bit := range []int64{0, 9, 100} {
		if err := c.SetBit(ctx, k[1], bit, 1).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.Set(ctx, k[2], "\xff", 0)
	if n, err := c.BitOpOr(ctx, k[0], k[1], k[2]).Result(); err != nil || n != 13 {
		t.Fatalf("BITOP OR = %d, %v; want 13", n, err)
	}
	if n, _ := c.BitCount(ctx, k[0], nil).Result(); n != 10 { // 8 from \xff, bits 9 and 100
		t.Fatalf("BITCOUNT = %d, want 10", n)
	}
	if n, _ := c.BitPos(ctx, k[0], 0).Result(); n != 8 {
		t.Fatalf("BITPOS 0 = %d, want 8", n)
	}
	if n, _ := c.BitOpAnd(ctx, k[0], k[1], k[2], k[3]).Result(); n != 13 {
		t.Fatalf("BITOP AND = %d, want 13", n)
	}
	if n, _ := c.BitCount(ctx, k[0], nil).Result(); n != 0 {
		t.Fatalf("BITCOUNT after AND with a missing key = %d, want 0", n)
	}
	if n, _ := c.BitOpNot(ctx, k[0], k[3]).Result(); n != 0 {
		t.Fatalf("BITOP NOT of a missing key = %d", n)
	}
	if n, _ := c.Exists(ctx, k[0]).Result(); n != 0 {
		t.Fatal("an empty BITOP result must delete the destination")
	}
	vals, err := c.BitField(ctx, k[3], "SET", "u8", "#0", 200, "INCRBY", "u8", "#0", 100, "GET", "i8", 0).Result()
	if err != nil || len(vals) != 3 || vals[0] != 0 || vals[1] != 44 || vals[2] != 44 {
		t.Fatalf("BITFIELD = %v, %v; want [0 44 44]", vals, err)
	}

	h := keysOnShards("hll", 4)
	for i := 0; i < 3; i++ {
		els := make([]any, 0, 500)
		for j := 0; j < 500; j++ {
			els = append(els, "e"+strconv.Itoa(i*250+j))
		}
		if err := c.PFAdd(ctx, h[i+1], els...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	union, err := c.PFCount(ctx, h[1], h[2], h[3]).Result()
	if err != nil || union < 990 || union > 1010 { // 1000 distinct elements
		t.Fatalf("PFCOUNT of three keys = %d, %v", union, err)
	}
	if err := c.PFMerge(ctx, h[0], h[1], h[2], h[3]).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.PFCount(ctx, h[0]).Result(); n != union {
		t.Fatalf("PFCOUNT of the merge = %d, want %d", n, union)
	}
	if err := c.PFAdd(ctx, h[1], "x").Err(); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, "plain", "text", 0)
	if err := c.PFMerge(ctx, h[0], h[1], "plain").Err(); err == nil || err.Error() != "WRONGTYPE Key is not a valid HyperLogLog string value." {
		t.Fatalf("PFMERGE with a plain string: %v", err)
	}
}

// TestHLLValuesMoveBetweenRedisAndRedshard: the same PFADDs give the same
// bytes in redis-server 7 and redshard, and a value copied either way with
// GET/SET counts the same (skipped when redis-server is not installed).
func TestHLLValuesMoveBetweenRedisAndRedshard(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	s := startServer(t, "--shards", "4")
	r := startRedisServer(t, t.TempDir())
	ours := s.client(t, 2)
	theirs := (&server{Addr: r.Addr}).client(t, 2)
	ctx := ctxT(t)

	for _, n := range []int{3, 300, 3000, 30000} { // sparse, and dense past 3000 bytes
		key := "h" + strconv.Itoa(n)
		for from := 0; from < n; from += 1000 {
			els := make([]any, 0, 1000)
			for j := from; j < min(n, from+1000); j++ {
				els = append(els, strconv.Itoa(j*7919))
			}
			if err := ours.PFAdd(ctx, key, els...).Err(); err != nil {
				t.Fatal(err)
			}
			if err := theirs.PFAdd(ctx, key, els...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		a, _ := ours.Get(ctx, key).Result()
		b, _ := theirs.Get(ctx, key).Result()
		if a != b {
			t.Fatalf("%d elements: redshard's value (%d bytes) differs from redis-server's (%d bytes)", n, len(a), len(b))
		}
		want, _ := theirs.PFCount(ctx, key).Result()
		ours.Set(ctx, "copy", b, 0)
		if got, err := ours.PFCount(ctx, "copy").Result(); err != nil || got != want {
			t.Fatalf("%d elements: redis-server's value counts %d, %v in redshard; want %d", n, got, err, want)
		}
		theirs.Set(ctx, "copy", a, 0)
		if got, _ := theirs.PFCount(ctx, "copy").Result(); got != want {
			t.Fatalf("%d elements: redshard's value counts %d in redis-server; want %d", n, got, want)
		}
	}
}
