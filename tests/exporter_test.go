package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// exporterBin is Debian's prometheus-redis-exporter (upstream's
// redis_exporter under another name).
func exporterBin() string {
	for _, name := range []string{"prometheus-redis-exporter", "redis_exporter"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// scrapeExporter starts the exporter against addr on a free port, scrapes
// it once and returns its redis_* samples (series, name and labels, to
// value) and metric families (its "# TYPE" lines). It stops the exporter
// by PID.
func scrapeExporter(t *testing.T, bin, addr string) (map[string]float64, map[string]bool) {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin, "-redis.addr", "redis://"+addr, "-web.listen-address", "127.0.0.1:"+strconv.Itoa(port))
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	var body []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("exporter did not answer on %s: %v\n%s", url, err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, fams := map[string]float64{}, map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" && strings.HasPrefix(f[2], "redis_") {
			fams[f[2]] = true
		}
		if !strings.HasPrefix(line, "redis_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out, fams
}

// exporterLoad gives a server the state the family list was taken in.
func exporterLoad(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		c.Set(ctx, "plain:"+strconv.Itoa(i), "v", 0)
		c.Set(ctx, "ttl:"+strconv.Itoa(i), "v", 100*time.Second)
	}
	c.HSet(ctx, "h", "f", "v")
	c.Get(ctx, "nosuchkey")
	c.Do(ctx, "nosuchcommand")
}

func diffFamilies(want, got map[string]bool) (missing, extra []string) {
	for f := range want {
		if !got[f] {
			missing = append(missing, f)
		}
	}
	for f := range got {
		if !want[f] {
			extra = append(extra, f)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return
}

// prometheus-redis-exporter exports the same metric families from
// redshard as from redis-server 7.0 (the list in testdata, and a live
// redis-server when one is installed), with values that say what redshard
// holds and does.
func TestExporterParity(t *testing.T) {
	bin := exporterBin()
	if bin == "" {
		t.Skip("prometheus-redis-exporter is not installed (apt-get install prometheus-redis-exporter)")
	}
	s := startServer(t, "--shards", "2", "--hz", "50", "--appendonly", "yes")
	c := s.client(t, 2)
	exporterLoad(t, c)
	time.Sleep(300 * time.Millisecond) // some active expiry cycles: avg_ttl
	rs, got := scrapeExporter(t, bin, s.Addr)

	raw, err := os.ReadFile("testdata/exporter-families-redis-7.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			want[line] = true
		}
	}
	if missing, extra := diffFamilies(want, got); len(missing)+len(extra) > 0 {
		t.Errorf("families against redis-server 7.0's list: missing %v, extra %v", missing, extra)
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		r := startRedisServer(t, t.TempDir(), "--appendonly", "yes")
		rc := redis.NewClient(&redis.Options{Addr: r.Addr})
		defer rc.Close()
		exporterLoad(t, rc)
		time.Sleep(300 * time.Millisecond)
		_, live := scrapeExporter(t, bin, r.Addr)
		if missing, extra := diffFamilies(live, got); len(missing)+len(extra) > 0 {
			t.Errorf("families against a live redis-server: missing %v, extra %v", missing, extra)
		}
	} else {
		t.Log("redis-server is not installed: compared with the list only")
	}

	// Values.
	eq := func(series string, want float64) {
		t.Helper()
		if v, ok := rs[series]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	within := func(series string, lo, hi float64) {
		t.Helper()
		if v, ok := rs[series]; !ok || v < lo || v > hi {
			t.Errorf("%s = %v (present %v), want within [%v, %v]", series, v, ok, lo, hi)
		}
	}
	eq("redis_up", 1)
	eq(`redis_db_keys{db="db0"}`, 201)
	eq(`redis_db_keys_expiring{db="db0"}`, 100)
	within(`redis_db_avg_ttl_seconds{db="db0"}`, 80, 100)
	eq("redis_aof_enabled", 1)
	eq(`redis_commands_total{cmd="set"}`, 200)
	eq(`redis_commands_total{cmd="hset"}`, 1)
	eq("redis_keyspace_misses_total", 1)
	eq(`redis_errors_total{err="ERR"}`, 1)
	within("redis_connected_clients", 1, 10)
	within("redis_memory_used_bytes", 1, 1<<30)
	within("redis_memory_used_rss_bytes", 1<<20, 1<<30)
	// The kernel splits a young process's few ticks between user and
	// system time unevenly: one of the two may be 0, not their sum.
	within("redis_cpu_user_main_thread_seconds_total", 0, rs["redis_cpu_user_seconds_total"])
	within("redis_cpu_sys_main_thread_seconds_total", 0, rs["redis_cpu_sys_seconds_total"])
	if rs["redis_cpu_user_main_thread_seconds_total"]+rs["redis_cpu_sys_main_thread_seconds_total"] == 0 {
		t.Errorf("the main thread's CPU time is 0")
	}
	within(`redis_latency_percentiles_usec{cmd="set",quantile="99"}`, 0.001, 1e6)
	eq("redis_config_maxclients", 10000)
}
