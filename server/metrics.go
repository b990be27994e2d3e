package server

// The Prometheus endpoint: with metrics-port set, GET /metrics on
// metrics-bind:metrics-port serves redshard's metrics in the Prometheus text
// format (github.com/prometheus/client_golang).
//
// Nothing is counted for it on the hot path: a custom Collector reads, at
// scrape time, the counters INFO reads (per-loop command statistics and
// latency histograms, per-shard keyspace counters, the server's atomics and
// the AOF's Stats and histograms). The per-loop and per-shard counters are
// plain integers owned by their loop, so the collector asks each loop to copy
// them (a task queued with EventLoop.Execute, run between the loop's
// events) and waits for the copies.

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redshard/redshard/aof"
)

// startMetrics starts the endpoint when metrics-port is set.
func (srv *Server) startMetrics() error {
	port := srv.cfg.MetricsPort()
	if port == 0 {
		return nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&metricsCollector{srv: srv})
	reg.MustRegister(collectors.NewGoCollector())
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	addr := net.JoinHostPort(srv.cfg.MetricsBind(), strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-srv.stopCh
		_ = hs.Close()
	}()
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			srv.log.Warningf("metrics endpoint: %v", err)
		}
	}()
	srv.log.Noticef("Serving metrics on http://%s/metrics", addr)
	return nil
}

var (
	mdCommands = prometheus.NewDesc("redshard_commands_total",
		"Commands run, by command (subcommands as container|sub).", []string{"cmd"}, nil)
	mdCmdErrors = prometheus.NewDesc("redshard_command_errors_total",
		"Commands that failed (ran and answered an error) or were rejected (not run: unknown, arity, auth, ...), by command.",
		[]string{"cmd", "kind"}, nil)
	mdCmdDuration = prometheus.NewDesc("redshard_command_duration_seconds",
		"Time commands took to run on their shard's loop (latency-tracking must be yes).", []string{"cmd"}, nil)
	mdClients = prometheus.NewDesc("redshard_connected_clients",
		"Client connections.", nil, nil)
	mdRejectedConns = prometheus.NewDesc("redshard_rejected_connections_total",
		"Connections refused (maxclients, protected mode).", nil, nil)
	mdConns = prometheus.NewDesc("redshard_connections_received_total",
		"Connections accepted.", nil, nil)
	mdKeys = prometheus.NewDesc("redshard_keys",
		"Keys, by database.", []string{"db"}, nil)
	mdExpires = prometheus.NewDesc("redshard_expires",
		"Keys with an expiry, by database.", []string{"db"}, nil)
	mdUsedMemory = prometheus.NewDesc("redshard_used_memory_bytes",
		"used_memory of INFO memory.", nil, nil)
	mdEvicted = prometheus.NewDesc("redshard_evicted_keys_total",
		"Keys evicted by maxmemory.", nil, nil)
	mdExpired = prometheus.NewDesc("redshard_expired_keys_total",
		"Keys deleted because they expired.", nil, nil)
	mdHits = prometheus.NewDesc("redshard_keyspace_hits_total",
		"Successful key lookups.", nil, nil)
	mdMisses = prometheus.NewDesc("redshard_keyspace_misses_total",
		"Failed key lookups.", nil, nil)
	mdNetIn = prometheus.NewDesc("redshard_net_input_bytes_total",
		"Bytes read from clients.", nil, nil)
	mdNetOut = prometheus.NewDesc("redshard_net_output_bytes_total",
		"Bytes written to clients.", nil, nil)
	mdObufKills = prometheus.NewDesc("redshard_client_output_buffer_limit_disconnections_total",
		"Clients closed for overcoming their client-output-buffer-limit.", nil, nil)
	mdAOFEnabled = prometheus.NewDesc("redshard_aof_enabled",
		"1 when appendonly is yes.", nil, nil)
	mdAOFFsync = prometheus.NewDesc("redshard_aof_fsync_duration_seconds",
		"Duration of the AOF writer's fdatasync calls.", nil, nil)
	mdAOFGroup = prometheus.NewDesc("redshard_aof_group_commit_batches",
		"Batches per group commit: each batch is the log records of one loop event (one or more commands), each group one write and, under appendfsync always, one fdatasync.", nil, nil)
	mdAOFGroupCmds = prometheus.NewDesc("redshard_aof_group_commit_commands",
		"Commands per group commit (each group is one write and, under appendfsync always, one fdatasync).", nil, nil)
	mdAOFWriteErrors = prometheus.NewDesc("redshard_aof_write_errors_total",
		"Failed AOF write, fsync or ftruncate calls.", nil, nil)
	mdAOFRewrite = prometheus.NewDesc("redshard_aof_rewrite_in_progress",
		"1 while an AOF rewrite runs.", nil, nil)
	mdAOFLastWriteOK = prometheus.NewDesc("redshard_aof_last_write_ok",
		"1 when the last AOF write and fsync succeeded (aof_last_write_status:ok).", nil, nil)
	mdAOFSize = prometheus.NewDesc("redshard_aof_current_size_bytes",
		"aof_current_size: the base plus the incremental files.", nil, nil)
	mdAOFRewrites = prometheus.NewDesc("redshard_aof_rewrites_total",
		"aof_rewrites: AOF rewrites done since the start.", nil, nil)
	mdAOFLastRewriteOK = prometheus.NewDesc("redshard_aof_last_rewrite_ok",
		"1 when the last AOF rewrite succeeded (aof_last_bgrewrite_status:ok).", nil, nil)
	mdBusyPoll = prometheus.NewDesc("redshard_busy_poll_windows_total",
		"Rounds after which a loop polled for its next event (busypoll.go), by how the window ended: event (the next round came) or timeout (the loop went to sleep).", []string{"outcome"}, nil)
	mdMaxmemory = prometheus.NewDesc("redshard_maxmemory_bytes",
		"The maxmemory limit; 0 is none.", nil, nil)

	// Replication (repl_master.go, replica.go).
	mdReplOffset = prometheus.NewDesc("redshard_repl_offset_bytes",
		"master_repl_offset: bytes of the replication stream.", nil, nil)
	mdReplicas = prometheus.NewDesc("redshard_connected_replicas",
		"connected_slaves: replicas attached to this server.", nil, nil)
	mdReplicaAcked = prometheus.NewDesc("redshard_replica_acked_offset_bytes",
		"The offset each replica acknowledged.", []string{"replica"}, nil)
	mdReplicaLag = prometheus.NewDesc("redshard_replica_lag_bytes",
		"Stream bytes each replica has not acknowledged yet.", []string{"replica"}, nil)
	mdReplSyncs = prometheus.NewDesc("redshard_repl_syncs_total",
		"Syncs served to replicas by kind (full, partial_ok, partial_err).", []string{"kind"}, nil)
)

type metricsCollector struct{ srv *Server }

func (mc *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mdCommands, mdCmdErrors, mdCmdDuration, mdClients,
		mdRejectedConns, mdConns, mdKeys, mdExpires, mdUsedMemory, mdEvicted, mdExpired, mdHits,
		mdMisses, mdNetIn, mdNetOut, mdObufKills, mdBusyPoll, mdAOFEnabled, mdAOFFsync, mdAOFGroup, mdAOFGroupCmds,
		mdAOFWriteErrors, mdAOFRewrite, mdAOFLastWriteOK, mdAOFSize, mdAOFRewrites, mdAOFLastRewriteOK, mdMaxmemory,
		mdReplOffset, mdReplicas, mdReplicaAcked, mdReplicaLag, mdReplSyncs} {
		ch <- d
	}
}

// loopSnapshot is a copy of one loop's counters and its shard's.
type loopSnapshot struct {
	ok                  bool
	cmds                []cmdStat
	hist                []cmdHist
	keys, expires       []int64
	hits, misses        int64
	expired, evicted    int64
	dataUsed, clientMem int64
}

// snapshotLoops copies every loop's counters on the loop itself. A loop that
// does not answer within the timeout (stopping, or stuck in a very long
// command) is left out of this scrape.
func (srv *Server) snapshotLoops(timeout time.Duration) []loopSnapshot {
	snaps := make([]loopSnapshot, len(srv.loops))
	var wg sync.WaitGroup
	var mu sync.Mutex // guards snaps against a late task after the timeout
	done := false
	for i, l := range srv.loops {
		if l.el == nil {
			continue
		}
		i, l := i, l
		wg.Add(1)
		task := gnet.RunnableFunc(func(context.Context) error {
			defer wg.Done()
			var s loopSnapshot
			s.cmds = append([]cmdStat(nil), l.stats.cmds...)
			s.hist = make([]cmdHist, len(l.obs.lat))
			for id, h := range l.obs.lat {
				if h != nil {
					h.toPow2(&s.hist[id])
				}
			}
			sh := l.sh
			s.hits, s.misses = sh.Stats.KeyspaceHits, sh.Stats.KeyspaceMisses
			s.expired, s.evicted = sh.Stats.ExpiredKeys, sh.Stats.EvictedKeys
			s.dataUsed = sh.UsedMemory()
			for _, cl := range l.clients {
				s.clientMem += int64(cl.qbufAlloc() + cap(cl.out))
			}
			for _, db := range sh.DBs {
				s.keys = append(s.keys, int64(db.Len()))
				s.expires = append(s.expires, int64(db.Expires()))
			}
			s.ok = true
			mu.Lock()
			if !done {
				snaps[i] = s
			}
			mu.Unlock()
			return nil
		})
		if err := l.post(task); err != nil {
			wg.Done()
		}
	}
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(timeout):
	case <-srv.stopCh:
	}
	mu.Lock()
	done = true
	out := append([]loopSnapshot(nil), snaps...)
	mu.Unlock()
	return out
}

func (mc *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	srv := mc.srv
	if srv.stopping.Load() {
		return
	}
	snaps := srv.snapshotLoops(5 * time.Second)
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}

	// Commands.
	n := len(srv.cmdList)
	tot := make([]cmdStat, n)
	hist := make([]cmdHist, n)
	var t statTotals
	for _, s := range snaps {
		if !s.ok {
			continue
		}
		for i := 0; i < n && i < len(s.cmds); i++ {
			c := s.cmds[i]
			tot[i].calls += c.calls
			tot[i].nsec += c.nsec
			tot[i].failed += c.failed
			tot[i].rejected += c.rejected
		}
		for i := 0; i < n && i < len(s.hist); i++ {
			for k, v := range s.hist[i] {
				hist[i][k] += v
			}
		}
		t.shard.KeyspaceHits += s.hits
		t.shard.KeyspaceMisses += s.misses
		t.shard.ExpiredKeys += s.expired
		t.shard.EvictedKeys += s.evicted
		t.dataUsed += s.dataUsed
		t.clientMem += s.clientMem
		if t.keys == nil {
			t.keys = make([]int64, len(s.keys))
			t.expires = make([]int64, len(s.keys))
		}
		for j := range s.keys {
			if j < len(t.keys) {
				t.keys[j] += s.keys[j]
				t.expires[j] += s.expires[j]
			}
		}
	}
	for _, c := range srv.cmdList {
		st := tot[c.id]
		if st.calls == 0 && st.failed == 0 && st.rejected == 0 {
			continue
		}
		counter(mdCommands, float64(st.calls), c.fullName)
		counter(mdCmdErrors, float64(st.failed), c.fullName, "failed")
		counter(mdCmdErrors, float64(st.rejected), c.fullName, "rejected")
		var count uint64
		buckets := make(map[float64]uint64, histBuckets-1)
		for k := 0; k < histBuckets; k++ {
			count += uint64(hist[c.id][k])
			// Every other power of two (×4 steps, 1 µs to 1 s) keeps the
			// series per command to a dozen.
			if k < histBuckets-1 && k%2 == 0 {
				buckets[float64(histUpperNs(k))/1e9] = count
			}
		}
		if count > 0 {
			ch <- prometheus.MustNewConstHistogram(mdCmdDuration, count, float64(st.nsec)/1e9, buckets, c.fullName)
		}
	}

	// Replication.
	_, _, replOff, _ := srv.repl.ids()
	gauge(mdReplOffset, float64(replOff))
	reps := srv.connectedReplicas()
	gauge(mdReplicas, float64(len(reps)))
	for _, r := range reps {
		name := r.ip + ":" + strconv.Itoa(r.port)
		gauge(mdReplicaAcked, float64(r.offset), name)
		gauge(mdReplicaLag, float64(max(replOff-r.offset, 0)), name)
	}
	counter(mdReplSyncs, float64(srv.repl.m.fullSyncs.Load()), "full")
	counter(mdReplSyncs, float64(srv.repl.m.partialOK.Load()), "partial_ok")
	counter(mdReplSyncs, float64(srv.repl.m.partialErr.Load()), "partial_err")

	// Clients and keyspace.
	gauge(mdClients, float64(srv.nclients.Load()))
	counter(mdRejectedConns, float64(srv.stats.rejectedConn.Load()))
	counter(mdConns, float64(srv.stats.connections.Load()))
	counter(mdNetIn, float64(srv.stats.netInput.Load()))
	counter(mdNetOut, float64(srv.stats.netOutput.Load()))
	counter(mdObufKills, float64(srv.obs.obufDisconnections.Load()))
	var bpHits, bpMisses int64
	for _, l := range srv.loops {
		bpHits += l.bp.hits.Load()
		bpMisses += l.bp.misses.Load()
	}
	counter(mdBusyPoll, float64(bpHits), "event")
	counter(mdBusyPoll, float64(bpMisses), "timeout")
	for j := range t.keys {
		if t.keys[j] == 0 && t.expires[j] == 0 && j != 0 {
			continue
		}
		db := strconv.Itoa(j)
		gauge(mdKeys, float64(t.keys[j]), db)
		gauge(mdExpires, float64(t.expires[j]), db)
	}
	gauge(mdUsedMemory, float64(readMemInfo(srv, &t).used))
	gauge(mdMaxmemory, float64(srv.cfg.MaxMemory()))
	counter(mdEvicted, float64(t.shard.EvictedKeys))
	counter(mdExpired, float64(t.shard.ExpiredKeys))
	counter(mdHits, float64(t.shard.KeyspaceHits))
	counter(mdMisses, float64(t.shard.KeyspaceMisses))

	// The AOF.
	ps := srv.aofLog()
	gauge(mdAOFEnabled, b2f(ps != nil))
	gauge(mdAOFRewrite, b2f(srv.rw.active.Load()))
	counter(mdAOFRewrites, float64(srv.rw.count.Load()))
	gauge(mdAOFLastRewriteOK, b2f(srv.rw.lastOK.Load()))
	if ps == nil {
		gauge(mdAOFLastWriteOK, 1)
		return
	}
	st := ps.log.Stats()
	gauge(mdAOFLastWriteOK, b2f(st.LastWriteStatus == "ok"))
	counter(mdAOFWriteErrors, float64(st.WriteErrors))
	gauge(mdAOFSize, float64(st.CurrentSize))
	h := ps.log.Histograms()
	ch <- aofHistogram(mdAOFFsync, h.FsyncNanos, 1e-9, 10, 32)
	ch <- aofHistogram(mdAOFGroup, h.GroupBatches, 1, 0, 16)
	ch <- aofHistogram(mdAOFGroupCmds, h.GroupCmds, 1, 0, 20)
}

// aofHistogram converts an aof.Hist (power-of-two buckets) to a Prometheus
// histogram with the buckets from..to, in units of scale.
func aofHistogram(d *prometheus.Desc, h *aof.Hist, scale float64, from, to int) prometheus.Metric {
	b, sum := h.Snapshot()
	var count uint64
	buckets := make(map[float64]uint64, to-from+1)
	for k := 0; k < aof.HistBuckets; k++ {
		count += b[k]
		if k >= from && k <= to {
			// bucket k holds values below 2^k; for integer values "≤ 2^k - 1"
			upper := float64(aof.HistUpper(k)) * scale
			if scale == 1 {
				upper = float64(aof.HistUpper(k) - 1)
			}
			buckets[upper] = count
		}
	}
	return prometheus.MustNewConstHistogram(d, count, float64(sum)*scale, buckets)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
