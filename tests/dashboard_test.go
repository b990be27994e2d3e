package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Grafana dashboard (dashboards/redshard.json) queries redshard's own
// /metrics; these tests keep it honest.

type grafanaPanel struct {
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	GridPos    *struct{ H, W, X, Y int }
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaDashboard struct {
	Title      string         `json:"title"`
	UID        string         `json:"uid"`
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

var promMetricName = regexp.MustCompile(`\b(?:redshard|process|go)_[a-z0-9_]+\b`)

// dashboardMetrics reads the dashboard and returns every metric name its
// queries (panels and template variables) use, by panel title.
func dashboardMetrics(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "dashboards", "redshard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboards/redshard.json: %v", err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("dashboard without title or uid")
	}
	uses := map[string][]string{}
	var walk func(ps []grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 || len(p.Datasource) == 0 {
				t.Errorf("panel %q: no gridPos or datasource", p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if refs[tg.RefID] || tg.RefID == "" {
					t.Errorf("panel %q: refId %q empty or repeated", p.Title, tg.RefID)
				}
				refs[tg.RefID] = true
				names := promMetricName.FindAllString(tg.Expr, -1)
				if len(names) == 0 {
					t.Errorf("panel %q: query %q names no metric", p.Title, tg.Expr)
				}
				for _, n := range names {
					uses[n] = append(uses[n], p.Title)
				}
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		for _, n := range promMetricName.FindAllString(string(v.Query), -1) {
			uses[n] = append(uses[n], "variable "+v.Name)
		}
	}
	return uses
}

// scrapeMetrics returns the sample names (histograms' _bucket, _sum and
// _count included) and the samples of a /metrics page.
func scrapeMetrics(t testing.TB, port int) (map[string]bool, map[string]float64) {
	t.Helper()
	res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	names, samples := map[string]bool{}, map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		name := l[:i]
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		names[name] = true
		if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			samples[l[:i]] = v
		}
	}
	return names, samples
}

// Every metric the dashboard's queries use exists on a live /metrics of a
// master with the AOF on, a replica, a rewrite behind it and errors, so a
// renamed or dropped metric breaks this test, not the board; and the board
// keeps a panel on each thing it is meant to show.
func TestDashboardMetricsExist(t *testing.T) {
	uses := dashboardMetrics(t)
	for _, m := range []string{
		"redshard_commands_total", "redshard_command_errors_total", "redshard_command_duration_seconds_bucket",
		"redshard_aof_group_commit_commands_bucket", "redshard_aof_fsync_duration_seconds_bucket",
		"redshard_aof_enabled", "redshard_aof_rewrites_total", "redshard_used_memory_bytes",
		"process_resident_memory_bytes", "redshard_maxmemory_bytes", "redshard_evicted_keys_total",
		"redshard_connected_clients", "redshard_keys", "redshard_connected_replicas", "redshard_replica_lag_bytes",
	} {
		if len(uses[m]) == 0 {
			t.Errorf("no panel queries %s", m)
		}
	}

	mport := freePort(t)
	m := startServer(t, "--metrics-port", strconv.Itoa(mport), "--appendonly", "yes", "--appendfsync", "always",
		"--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	r := startServer(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	c := m.client(t, 2)
	ctx := ctxT(t)
	for i := 0; i < 50; i++ {
		c.Set(ctx, "k"+strconv.Itoa(i), "v", time.Minute)
		c.Get(ctx, "k"+strconv.Itoa(i))
	}
	c.Do(ctx, "nosuchcommand")
	c.Do(ctx, "incr", "k1") // fails: not an integer
	if err := c.Do(ctx, "bgrewriteaof").Err(); err != nil {
		t.Fatal(err)
	}

	var names map[string]bool
	deadline := time.Now().Add(15 * time.Second)
	for {
		var samples map[string]float64
		names, samples = scrapeMetrics(t, mport)
		if samples["redshard_aof_rewrites_total"] >= 1 && samples["redshard_connected_replicas"] == 1 && names["redshard_replica_lag_bytes"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rewrite done or replica attached after 15s: rewrites %v, replicas %v\n--- replica log ---\n%s",
				samples["redshard_aof_rewrites_total"], samples["redshard_connected_replicas"], r.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	var missing []string
	for n, panels := range uses {
		if !names[n] {
			missing = append(missing, fmt.Sprintf("%s (used by %s)", n, strings.Join(panels, ", ")))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("the dashboard queries a metric /metrics does not have: %s", m)
	}
	if len(uses) < 20 {
		t.Errorf("only %d metrics used: %v", len(uses), uses)
	}
}

// REDSHARD_PANEL_OUT=<dir> renders the data of the dashboard's
// "Throughput by command" panel from a real run as an SVG in dir: a minute
// of load in three phases, /metrics scraped every two seconds, the rate of
// redshard_commands_total by command between scrapes.
func TestDashboardPanelPicture(t *testing.T) {
	out := os.Getenv("REDSHARD_PANEL_OUT")
	if out == "" {
		t.Skip("set REDSHARD_PANEL_OUT=<dir> to render the panel (a minute of load)")
	}
	mport := freePort(t)
	s := startServer(t, "--metrics-port", strconv.Itoa(mport), "--appendonly", "yes")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const phase = 20 * time.Second
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: s.Addr})
			defer c.Close()
			for ctx.Err() == nil {
				ph := int(time.Since(start) / phase)
				p := c.Pipeline()
				for i := 0; i < 10; i++ {
					k := "key:" + strconv.Itoa(rand.IntN(10000))
					switch x := rand.IntN(10); {
					case x < 6:
						p.Get(ctx, k)
					case x < 8 || ph == 0:
						p.Set(ctx, k, "value", 0)
					case ph == 1:
						p.LPush(ctx, "list:"+k, "v")
					default:
						p.HIncrBy(ctx, "hash:"+strconv.Itoa(rand.IntN(100)), k, 1)
					}
				}
				_, _ = p.Exec(ctx)
				time.Sleep(time.Millisecond)
			}
		}()
	}
	series := map[string]*chartSeries{}
	var lastT float64
	var last map[string]float64
	for time.Since(start) < 3*phase {
		_, samples := scrapeMetrics(t, mport)
		now := time.Since(start).Seconds()
		if last != nil {
			for k, v := range samples {
				cmd, ok := strings.CutPrefix(k, `redshard_commands_total{cmd="`)
				if !ok {
					continue
				}
				cmd = strings.TrimSuffix(cmd, `"}`)
				if cmd == "ping" || cmd == "info" || cmd == "client|setname" || cmd == "hello" {
					continue
				}
				sr := series[cmd]
				if sr == nil {
					sr = &chartSeries{name: cmd}
					series[cmd] = sr
				}
				sr.x = append(sr.x, now)
				sr.y = append(sr.y, (v-last[k])/(now-lastT))
			}
		}
		last, lastT = samples, now
		time.Sleep(2 * time.Second)
	}
	cancel()
	wg.Wait()
	var list []chartSeries
	for _, cmd := range []string{"get", "set", "lpush", "hincrby"} {
		if sr := series[cmd]; sr != nil {
			list = append(list, *sr)
		}
	}
	svg := lineChartSVG("Throughput by command: rate(redshard_commands_total[2s]), one redshard, 4 clients",
		"seconds", list, nil, func(v float64) string { return fmt.Sprintf("%.0f/s", v) })
	path := filepath.Join(out, time.Now().UTC().Format("2006-01-02")+"-dashboard-throughput.svg")
	if err := os.WriteFile(path, []byte(svg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}
