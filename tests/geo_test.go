package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Geo sets across shards: GEORADIUS ... STORE and GEOSEARCHSTORE write a
// destination on another shard atomically, COMMAND INFO marks the searches
// movablekeys, and GEOADD is logged as the ZADD Redis propagates, so the
// set comes back after a restart.
func TestGeoAcrossShardsAndRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "--shards", "4", "--appendonly", "yes")
	c := s.client(t, 2)
	keys := spreadKeys("geo", 4, 1)
	src, dst := keys[0], keys[1]
	runSteps(t, c, []step{
		cmd("geoadd", src, "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania").is(int64(2)),
		cmd("georadius", src, "15", "37", "200", "km", "STORE", dst).is(int64(2)),
		cmd("zrange", dst, "0", "-1", "withscores").is([]any{"Palermo", "3479099956230698", "Catania", "3479447370796909"}),
		cmd("geosearchstore", dst, src, "frommember", "Palermo", "byradius", "100", "km", "storedist").is(int64(1)),
		cmd("zrange", dst, "0", "-1", "withscores").is([]any{"Palermo", "0"}),
		cmd("geodist", src, "Palermo", "Catania", "km").is("166.2742"),
		cmd("command", "getkeys", "georadius", src, "15", "37", "200", "km", "STORE", dst).is([]any{src, dst}),
	})
	info := c.Do(ctxT(t), "command", "info", "georadius", "georadius_ro").Val().([]any)
	if flags := info[0].([]any)[2].([]any); !containsAny(flags, "movablekeys") {
		t.Errorf("GEORADIUS flags %v lack movablekeys", flags)
	}
	if flags := info[1].([]any)[2].([]any); containsAny(flags, "movablekeys") {
		t.Errorf("GEORADIUS_RO flags %v have movablekeys", flags)
	}
	s.stop()

	// The log holds ZADD, not GEOADD.
	var log strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		log.Write(b)
	}
	if l := strings.ToLower(log.String()); !strings.Contains(l, "zadd\r\n") || strings.Contains(l, "geoadd") {
		t.Errorf("AOF does not log GEOADD as ZADD:\n%q", log.String())
	}
	s = startServerIn(t, dir, "--shards", "4", "--appendonly", "yes")
	runSteps(t, s.client(t, 2), []step{
		cmd("geopos", src, "Palermo").is([]any{[]any{"13.36138933897018433", "38.11555639549629859"}}),
	})
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
