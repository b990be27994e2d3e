package tests

// The soak test (issue 7, part 5): many idle connections, busy clients,
// slow readers and clients that hang up mid-pipeline, in two cycles. After
// each cycle the clients leave and the server must come back to where it
// was: no goroutine left behind, RSS not growing from cycle to cycle, no
// loop stalled while it ran. CI runs a short version; REDSHARD_SOAK_SECONDS
// and REDSHARD_SOAK_IDLE make it long (e.g. 60 and 10000).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// scrape reads one sample of a metric from the Prometheus endpoint.
func scrape(t *testing.T, port int, metric string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if name, v, ok := strings.Cut(line, " "); ok && name == metric {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q", metric, line)
			}
			return f
		}
	}
	t.Fatalf("no %s in the metrics", metric)
	return 0
}

func TestSoak(t *testing.T) {
	secs := envInt("REDSHARD_SOAK_SECONDS", 2)
	idle := envInt("REDSHARD_SOAK_IDLE", 1000)
	const busy, slow, hangups = 200, 10, 200
	mport := freePort(t)
	s := startServer(t, "--shards", "2", "--maxclients", strconv.Itoa(idle+busy+slow+hangups+100),
		"--metrics-port", strconv.Itoa(mport))
	c := s.client(t, 2)
	ctx := context.Background()
	// Server-side stalls over 100 ms show in LATENCY LATEST, logged at the end.
	if err := c.ConfigSet(ctx, "latency-monitor-threshold", "100").Err(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 16<<10)
	if err := c.Set(ctx, "big", big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	rss := func() int64 {
		if err := c.Do(ctx, "MEMORY", "PURGE").Err(); err != nil {
			t.Fatal(err)
		}
		return memInfo(t, c)["used_memory_rss"]
	}
	baseG := scrape(t, mport, "go_goroutines")
	var rssAfter []int64
	for cycle := 0; cycle < 2; cycle++ {
		var conns []net.Conn
		for i := 0; i < idle; i++ {
			conn, err := net.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatalf("idle connection %d: %v", i, err)
			}
			conns = append(conns, conn)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var ops, failures atomic.Int64
		// Busy clients: pipelines of writes and reads.
		for i := 0; i < busy; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				p, err := dialP(s.Addr)
				if err != nil {
					failures.Add(1)
					return
				}
				defer p.close()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					k := "soak:" + itoa(i) + ":" + itoa(n%100)
					if err := p.send([]string{"SET", k, itoa(n)}, []string{"GET", k}, []string{"INCR", "soak:ctr"}); err != nil {
						failures.Add(1)
						return
					}
					for j := 0; j < 3; j++ {
						if r, err := p.recv(); err != nil || r.typ == '-' {
							failures.Add(1)
							return
						}
					}
					ops.Add(3)
				}
			}(i)
		}
		// Slow readers: ask for a lot and read it a little at a time.
		for i := 0; i < slow; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := net.Dial("tcp", s.Addr)
				if err != nil {
					failures.Add(1)
					return
				}
				defer conn.Close()
				var req strings.Builder
				for j := 0; j < 200; j++ {
					req.WriteString(resp("GET", "big"))
				}
				_, _ = conn.Write([]byte(req.String()))
				r := bufio.NewReader(conn)
				buf := make([]byte, 4096)
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					_ = conn.SetReadDeadline(time.Now().Add(time.Second))
					if _, err := r.Read(buf); err != nil {
						return
					}
				}
			}()
		}
		// Hang-ups: half a pipeline, then close.
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req strings.Builder
			for j := 0; j < 100; j++ {
				req.WriteString(resp("SET", "hang:"+itoa(j), big[:100]))
			}
			full := req.String()
			for i := 0; i < hangups; i++ {
				conn, err := net.Dial("tcp", s.Addr)
				if err != nil {
					failures.Add(1)
					return
				}
				_, _ = conn.Write([]byte(full[:len(full)*(i%97+1)/98]))
				conn.Close()
			}
		}()
		// No loop stalls: a probe answers quickly all along.
		deadline := time.Now().Add(time.Duration(secs) * time.Second)
		var worst time.Duration
		for time.Now().Before(deadline) {
			t0 := time.Now()
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatalf("PING during the soak: %v", err)
			}
			if d := time.Since(t0); d > worst {
				worst = d
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		for _, conn := range conns {
			conn.Close()
		}
		if failures.Load() > 0 {
			t.Fatalf("cycle %d: %d clients failed", cycle, failures.Load())
		}
		if worst > time.Second {
			t.Errorf("cycle %d: a PING took %v while the soak ran", cycle, worst)
		}
		// Everybody left: the server comes back to its baseline.
		var g, clients float64
		for wait := time.Now().Add(10 * time.Second); ; {
			g = scrape(t, mport, "go_goroutines")
			clients = scrape(t, mport, "redshard_connected_clients")
			if (g <= baseG+2 && clients <= 2) || time.Now().After(wait) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if g > baseG+2 || clients > 2 {
			t.Errorf("cycle %d: %v goroutines (baseline %v), %v clients after everybody left", cycle, g, baseG, clients)
		}
		rssAfter = append(rssAfter, rss())
		t.Logf("cycle %d: %d ops by %d busy clients with %d idle connections in %ds, worst PING %v, RSS after %d MB",
			cycle, ops.Load(), busy, idle, secs, worst.Round(time.Millisecond), rssAfter[cycle]>>20)
	}
	if lat, err := c.Do(ctx, "LATENCY", "LATEST").Slice(); err == nil && len(lat) > 0 {
		t.Logf("LATENCY LATEST (events over 100 ms): %v", lat)
	}
	if rssAfter[1] > rssAfter[0]+rssAfter[0]/5+8<<20 {
		t.Errorf("RSS grew from %d to %d bytes between two identical cycles", rssAfter[0], rssAfter[1])
	}
}
