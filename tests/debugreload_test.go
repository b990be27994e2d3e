package tests

import (
	"context"
	"testing"
)

// TestDebugReloadKeepsTheDigest: DEBUG RELOAD round-trips every key through
// its serialized image; DEBUG DIGEST is equal before and after, and changes
// when a value does.
func TestDebugReloadKeepsTheDigest(t *testing.T) {
	s := startServer(t, "--shards", "3", "--enable-debug-command", "yes")
	c := s.client(t, 2)
	ctx := context.Background()
	empty, err := c.Do(ctx, "DEBUG", "DIGEST").Text()
	if err != nil || empty != "0000000000000000000000000000000000000000" {
		t.Fatalf("digest of an empty data set: %q %v", empty, err)
	}
	c.Set(ctx, "str", "v", 0)
	c.Expire(ctx, "str", 1000_000_000)
	c.SAdd(ctx, "ints", 1, 2, 3)
	c.SAdd(ctx, "words", "a", "b", "c")
	before, _ := c.Do(ctx, "DEBUG", "DIGEST").Text()
	vals, _ := c.Do(ctx, "DEBUG", "DIGEST-VALUE", "ints", "words", "nokey").StringSlice()
	if err := c.Do(ctx, "DEBUG", "RELOAD").Err(); err != nil {
		t.Fatal(err)
	}
	after, _ := c.Do(ctx, "DEBUG", "DIGEST").Text()
	vals2, _ := c.Do(ctx, "DEBUG", "DIGEST-VALUE", "ints", "words", "nokey").StringSlice()
	if before != after || len(vals) != 3 || vals[0] != vals2[0] || vals[1] != vals2[1] || vals[2] != empty {
		t.Fatalf("digest %s -> %s, values %q -> %q", before, after, vals, vals2)
	}
	if ttl := c.TTL(ctx, "str").Val(); ttl <= 0 {
		t.Fatalf("TTL after DEBUG RELOAD: %v", ttl)
	}
	if enc := c.ObjectEncoding(ctx, "ints").Val(); enc != "intset" {
		t.Fatalf("encoding after DEBUG RELOAD: %s", enc)
	}
	c.SAdd(ctx, "words", "d")
	if changed, _ := c.Do(ctx, "DEBUG", "DIGEST").Text(); changed == after {
		t.Fatal("the digest did not change with a value")
	}
}
