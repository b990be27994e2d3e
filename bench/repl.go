package main

// The repl group: replication, redshard master and replicas (no fork: the
// full sync's image is taken between requests and written to the
// replicas' sockets) against redis-server master and replicas (fork).
// Fresh servers each round, redshard then redis.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

func (h *harness) replGroup() {
	r := h.res
	keys := 1000000
	if h.opt.quick {
		keys = 200000
	}
	r.sec(fmt.Sprintf("repl: %s keys of 100 B (DEBUG POPULATE), disk-less sync (Redis 7's default), repl-diskless-sync-delay 0", humanCount(keys)))
	fSync := r.fig(fmt.Sprintf("full sync of %s keys (REPLICAOF to link up and loaded)", humanCount(keys)), fSeconds, "<=", 1.0)
	fT0 := r.fig("master SET -P 16, no replica", fOps, ">=", 1.0)
	fT1 := r.fig("master SET -P 16, 1 replica", fOps, ">=", 1.0)
	fT2 := r.fig("master SET -P 16, 2 replicas", fOps, ">=", 1.0)
	fR1 := r.fig("1 replica / none (throughput kept)", fCount, "", 0)
	fR2 := r.fig("2 replicas / none (throughput kept)", fCount, "", 0)
	fLag := r.fig("replica lag during the 2-replica load, max of samples every 20 ms", fBytes, "", 0)
	fCatch := r.fig("replica caught up after the load stops", fMillis, "", 0)
	fP0 := r.fig("master PUBLISH -P 16, no replica", fOps, ">=", 1.0)
	fP2 := r.fig("master PUBLISH -P 16, 2 replicas (propagated to them)", fOps, ">=", 1.0)
	fPR := r.fig("PUBLISH, 2 replicas / none (throughput kept)", fCount, "", 0)
	all := []*figure{fSync, fT0, fT1, fT2, fR1, fR2, fLag, fCatch, fP0, fP2, fPR}
	r.note("repl: each round starts a master and two replicas of one kind (`--appendonly no --save \"\"`, redshard with its default shards); the master gets DEBUG POPULATE; the full sync is timed from REPLICAOF on the first replica until its INFO says master_link_status:up and master_sync_in_progress:0 (polled every 5 ms). Throughput: `redis-benchmark -c 50 -P 16 -t set -r 1000000 -d 100 -n 2000000` on the master with none, one and two replicas attached; lag is master_repl_offset minus the slowest replica's acknowledged offset (INFO replication's slaveN offset), sampled every 20 ms during the 2-replica load; catch-up is from the load's end until every replica acknowledged the master's offset. PUBLISH: `redis-benchmark -c 50 -P 16 -n 2000000 PUBLISH chan <100 B>` on the master, no subscriber, before the first replica attaches and after the 2-replica SET load; Redis propagates PUBLISH to replicas (not to the AOF), and so does redshard.")
	for round := 0; round < h.opt.rounds; round++ {
		for k := 0; k < 2; k++ {
			if isClosing() {
				return
			}
			if err := h.replRound(k, round, keys, all); err != "" {
				for _, f := range all {
					f.fail(k, err)
				}
			}
		}
	}
}

func (h *harness) replRound(k, round, keys int, figs []*figure) string {
	fSync, fT0, fT1, fT2, fR1, fR2, fLag, fCatch, fP0, fP2, fPR := figs[0], figs[1], figs[2], figs[3], figs[4], figs[5], figs[6], figs[7], figs[8], figs[9], figs[10]
	name := kindName[k]
	extra := []string{"--enable-debug-command", "yes", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
		"--client-output-buffer-limit", "replica 0 0 0"}
	m, err := h.startServer(k, srvOpts{extra: extra})
	if err != nil {
		h.logf("repl: %v", err)
		return "n/a (server failed)"
	}
	defer m.stop()
	var reps []*server
	defer func() {
		for _, s := range reps {
			s.stop()
		}
	}()
	for i := 0; i < 2; i++ {
		s, err := h.startServer(k, srvOpts{extra: extra})
		if err != nil {
			return "n/a (replica failed)"
		}
		reps = append(reps, s)
	}
	if _, err := queryWithin(m.port, 5*time.Minute, "DEBUG", "POPULATE", strconv.Itoa(keys), "key", "100"); err != nil {
		return "n/a (populate: " + err.Error() + ")"
	}
	attach := func(s *server) (time.Duration, error) {
		t0 := time.Now()
		if _, err := query(s.port, "REPLICAOF", "127.0.0.1", strconv.Itoa(m.port)); err != nil {
			return 0, err
		}
		for time.Since(t0) < 5*time.Minute {
			if v, err := info(s.port, "replication"); err == nil && v["master_link_status"] == "up" && v["master_sync_in_progress"] == "0" {
				return time.Since(t0), nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return 0, fmt.Errorf("no sync after 5 minutes")
	}
	spec := benchSpec{tests: "set", n: 2000000, pipe: 16, rnd: 1000000, data: 100, csv: true}
	if h.opt.quick {
		spec.n = 400000
	}
	res, err := h.runBench(m, spec)
	if err != nil {
		return "n/a (bench: " + err.Error() + ")"
	}
	fT0.add(k, res.rps)
	base := res.rps
	pub := benchSpec{custom: []string{"PUBLISH", "chan", strings.Repeat("m", 100)}, n: spec.n, pipe: 16, csv: true}
	pres, err := h.runBench(m, pub)
	if err != nil {
		return "n/a (bench: " + err.Error() + ")"
	}
	fP0.add(k, pres.rps)
	d, err := attach(reps[0])
	if err != nil {
		return "n/a (sync: " + err.Error() + ")"
	}
	fSync.add(k, d.Seconds())
	if res, err = h.runBench(m, spec); err != nil {
		return "n/a (bench: " + err.Error() + ")"
	}
	fT1.add(k, res.rps)
	fR1.add(k, res.rps/base)
	if _, err := attach(reps[1]); err != nil {
		return "n/a (sync: " + err.Error() + ")"
	}
	stop := make(chan struct{})
	maxLag := make(chan int64, 1)
	go func() {
		var worst int64
		for {
			select {
			case <-stop:
				maxLag <- worst
				return
			case <-time.After(20 * time.Millisecond):
			}
			if lag, ok := replLag(m.port); ok && lag > worst {
				worst = lag
			}
		}
	}()
	res, err = h.runBench(m, spec)
	end := time.Now()
	close(stop)
	worst := <-maxLag
	if err != nil {
		return "n/a (bench: " + err.Error() + ")"
	}
	fT2.add(k, res.rps)
	fR2.add(k, res.rps/base)
	fLag.add(k, float64(worst))
	for time.Since(end) < time.Minute {
		if lag, ok := replLag(m.port); ok && lag == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	fCatch.add(k, float64(time.Since(end).Microseconds())/1000)
	pres2, err := h.runBench(m, pub)
	if err != nil {
		return "n/a (bench: " + err.Error() + ")"
	}
	fP2.add(k, pres2.rps)
	fPR.add(k, pres2.rps/pres.rps)
	h.logf("%s repl %s: sync %.2fs, SET -P 16 %s / %s / %s, lag max %d B, PUBLISH -P 16 %s / %s", h.roundsLabel(round), name, d.Seconds(),
		format(fOps, base), format(fOps, fT1.vals[k][len(fT1.vals[k])-1]), format(fOps, res.rps), worst, format(fOps, pres.rps), format(fOps, pres2.rps))
	return ""
}

// replLag is master_repl_offset minus the lowest acknowledged replica
// offset, from the master's INFO replication.
func replLag(port int) (int64, bool) {
	v, err := info(port, "replication")
	if err != nil {
		return 0, false
	}
	off, err := strconv.ParseInt(v["master_repl_offset"], 10, 64)
	if err != nil {
		return 0, false
	}
	n, _ := strconv.Atoi(v["connected_slaves"])
	if n == 0 {
		return 0, false
	}
	low := off
	for i := 0; i < n; i++ {
		// ip=127.0.0.1,port=6380,state=online,offset=123,lag=0
		for _, kv := range strings.Split(v["slave"+strconv.Itoa(i)], ",") {
			if o, ok := strings.CutPrefix(kv, "offset="); ok {
				if x, err := strconv.ParseInt(o, 10, 64); err == nil && x < low {
					low = x
				}
			}
		}
	}
	return off - low, true
}
