package shard

import (
	"fmt"
	"testing"

	"github.com/redshard/redshard/aof/rdb"
)

// TestCorruptMessage: the reasons RESTORE logs (verbose) and a failed load
// logs, in Redis's words for the value's RDB type.
func TestCorruptMessage(t *testing.T) {
	for _, c := range []struct {
		typ  int
		err  error
		want string
	}{
		{rdb.TypeZSetZiplist, rdb.ErrBadBlob, "Zset ziplist integrity check failed."},
		{rdb.TypeStreamListpacks2, fmt.Errorf("%w: %w: x", rdb.ErrBadStream, rdb.ErrDuplicateConsumer), "Duplicate stream consumer detected."},
		{rdb.TypeHashListpack, fmt.Errorf("%w %q", rdb.ErrDuplicate, "a"), "Hash listpack integrity check failed: listpack with dup elements."},
		{rdb.TypeHashZiplist, fmt.Errorf("%w %q", rdb.ErrDuplicate, "a"), "Hash ziplist integrity check failed."},
		{rdb.TypeSet, fmt.Errorf("%w %q", rdb.ErrDuplicate, "a"), "Duplicate set members detected"},
		{rdb.TypeZSet, rdb.ErrNaNScore, "Zset with NAN score detected"},
	} {
		if got := CorruptMessage(c.typ, c.err); got != c.want {
			t.Errorf("type %d, %v: %q, want %q", c.typ, c.err, got, c.want)
		}
	}
}
