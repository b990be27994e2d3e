package tests

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// compactValue is the value of string key i: 64 to 4095 bytes (some fifty
// slab classes) that name their key, so a value read through a wrong slot
// changes the digest.
func compactValue(i int) string {
	n := 64 + (i*7919)%4032
	var b strings.Builder
	b.Grow(n)
	fmt.Fprintf(&b, "<%d>", i)
	for b.Len() < n {
		b.WriteByte(byte('a' + (i+b.Len())%26))
	}
	return b.String()
}

// compactDeleted says whether key i is among the 70% the test deletes:
// scattered, so that every slab page keeps some live slots.
func compactDeleted(i int) bool { return (i*2654435761)>>7%10 < 7 }

const (
	compactStrings = 46000 // ~95 MB of values
	compactHashes  = 1000  // 20 fields each
	compactLists   = 1000  // 20 items each
)

// writeCompactData writes the test's keys (all, or only those the test
// keeps) through a pipeline.
func writeCompactData(t *testing.T, c *redis.Client, keptOnly bool) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	flush := func() {
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < compactStrings; i++ {
		if keptOnly && compactDeleted(i) {
			continue
		}
		p.Set(ctx, "s:"+strconv.Itoa(i), compactValue(i), 0)
		if p.Len() >= 200 {
			flush()
		}
	}
	for i := 0; i < compactHashes; i++ {
		if keptOnly && compactDeleted(i) {
			continue
		}
		args := make([]any, 0, 40)
		for f := 0; f < 20; f++ {
			args = append(args, "f"+strconv.Itoa(f), strings.Repeat(compactValue(i*20+f), 4)[:32+f*8])
		}
		p.HSet(ctx, "h:"+strconv.Itoa(i), args...)
		items := make([]any, 0, 20)
		for f := 0; f < 20; f++ {
			items = append(items, strings.Repeat(compactValue(i*20+f+7), 4)[:40+f*8])
		}
		p.RPush(ctx, "l:"+strconv.Itoa(i), items...)
		if p.Len() >= 200 {
			flush()
		}
	}
	flush()
}

// After a delete of 70% of ~100 MB of mixed keys, the process's anonymous
// RSS falls by at least a third within seconds (slab compaction in the
// loops' cron, shard/compact.go; the Go heap's scavenger), and the data
// left is intact: its DEBUG DIGEST equals that of the same keys written
// fresh into a second server. Two shards: two crons compact, and the
// digest is compared across shard counts.
func TestRSSFollowsLiveDataAfterDeletes(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes", "--shards", "2")
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ctx := context.Background()
	pid := s.cmd.Process.Pid
	trace := os.Getenv("REDSHARD_COMPACT_TRACE") != ""
	breakdown := func(when string) {
		_, anon := procRSS(pid)
		info, _ := c.Info(ctx, "memory").Result()
		t.Logf("%s: RssAnon %d MiB, used_memory %s", when, anon>>20, infoFields(info)["used_memory"])
		if trace {
			st, _ := c.Do(ctx, "memory", "malloc-stats").Text()
			t.Logf("%s: MEMORY MALLOC-STATS\n%s", when, st)
		}
	}

	writeCompactData(t, c, false)
	time.Sleep(500 * time.Millisecond)
	_, peak := procRSS(pid)
	breakdown("filled")

	ctx2, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	p := c.Pipeline()
	del := func(k string) {
		p.Unlink(ctx2, k)
		if p.Len() >= 500 {
			if _, err := p.Exec(ctx2); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < compactStrings; i++ {
		if compactDeleted(i) {
			del("s:" + strconv.Itoa(i))
		}
	}
	for i := 0; i < compactHashes; i++ {
		if compactDeleted(i) {
			del("h:" + strconv.Itoa(i))
			del("l:" + strconv.Itoa(i))
		}
	}
	if _, err := p.Exec(ctx2); err != nil {
		t.Fatal(err)
	}
	breakdown("deleted")

	// A third of the peak must go within 20 s (a few seconds on an idle
	// machine: compaction moves about 1% of a core's time).
	var anon int64
	start := time.Now()
	for {
		_, anon = procRSS(pid)
		if trace {
			t.Logf("%4.1fs RssAnon %d MiB", time.Since(start).Seconds(), anon>>20)
		}
		// Tracing watches the whole 20 s, to see where RSS settles.
		if (anon <= peak*2/3 && !trace) || time.Since(start) > 20*time.Second {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	breakdown("settled")
	if anon > peak*2/3 {
		t.Errorf("RssAnon %d MiB after deleting 70%% of the keys, %d MiB at the peak: less than a third given back", anon>>20, peak>>20)
	} else {
		t.Logf("RssAnon %d MiB -> %d MiB in %v", peak>>20, anon>>20, time.Since(start).Round(100*time.Millisecond))
	}

	got, err := c.Do(ctx, "debug", "digest").Text()
	if err != nil {
		t.Fatal(err)
	}
	fresh := startServer(t, "--enable-debug-command", "yes")
	fc := redis.NewClient(&redis.Options{Addr: fresh.Addr})
	defer fc.Close()
	writeCompactData(t, fc, true)
	want, err := fc.Do(ctx, "debug", "digest").Text()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("DEBUG DIGEST after compaction %s, the same keys written fresh %s", got, want)
	}
	n1, _ := c.DBSize(ctx).Result()
	n2, _ := fc.DBSize(ctx).Result()
	if n1 != n2 {
		t.Fatalf("%d keys after compaction, %d written fresh", n1, n2)
	}
}
