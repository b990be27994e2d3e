package server

// INFO (Redis 7.0's genRedisInfoString) and the statistics behind it.
//
// Counters live where they are written: per-command and error counts and the
// dirty counter in each loop's loopStats, keyspace hits/misses/expiries in
// each shard's Stats, connection and network counters in serverStats
// (atomics). INFO and CONFIG RESETSTAT are allShards commands: every loop is
// parked while they run, so they may read (and reset) every loop's and every
// shard's plain counters, and every loop's clients map.
//
// Fields Redis has and redshard has no counterpart for are reported with the
// value Redis shows when the feature is idle (0, -1, "ok", ...), so that
// tools parsing INFO find every field they expect.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/lua"
	"github.com/redshard/redshard/shard"
	"golang.org/x/sys/unix"
)

// Process-wide identities: run_id and the replication ids are random 40-hex
// strings fixed for the life of the process.
var (
	processRunID  = randomHex40()
	processReplID = randomHex40()
)

func randomHex40() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// infoDefaultSections are the sections of a plain INFO (and of "default").
var infoDefaultSections = []string{
	"server", "clients", "memory", "persistence", "stats", "replication",
	"cpu", "module_list", "errorstats", "cluster", "keyspace",
}

// infoSelection is the set of sections an INFO call asked for.
type infoSelection struct {
	all, everything bool
	names           map[string]bool // lower case
}

// parseInfoSections interprets INFO's arguments as Redis 7.0 does: no
// argument means the default sections; "default", "all" and "everything"
// are keywords; any other word names a section (case-insensitively).
func parseInfoSections(args [][]byte) infoSelection {
	sel := infoSelection{names: make(map[string]bool)}
	if len(args) == 0 {
		for _, s := range infoDefaultSections {
			sel.names[s] = true
		}
		return sel
	}
	for _, a := range args {
		switch s := strings.ToLower(string(a)); s {
		case "default":
			for _, d := range infoDefaultSections {
				sel.names[d] = true
			}
		case "all":
			sel.all = true
		case "everything":
			sel.all, sel.everything = true, true
		default:
			sel.names[s] = true
		}
	}
	return sel
}

func (s *infoSelection) want(name string) bool { return s.all || s.names[name] }

// statTotals is every counter summed over the loops and shards.
type statTotals struct {
	cmds      []cmdStat        // by Cmd.id
	errors    map[string]int64 // errorstats
	totalCmds int64            // calls of every command
	reads     int64            // reads from clients
	writes    int64            // writes to clients
	totalErrs int64            // error replies (sum of errorstats)
	dirty     int64
	shard     shard.Stats

	dataUsed      int64     // what the shards' keys and values hold (Shard.UsedMemory)
	keys, expires []int64   // by database
	ttlWeighted   []float64 // by database: sum over shards of avg_ttl * expires

	maxQbuf, maxOut int64 // largest query / reply buffer of a client now
	clientMem       int64 // buffers held by clients
}

// sumStats adds up every loop's and shard's counters. Every loop must be
// parked (allShards command) or there must be a single loop (the caller's).
func (srv *Server) sumStats() *statTotals {
	t := &statTotals{
		cmds:   make([]cmdStat, len(srv.cmdList)),
		errors: make(map[string]int64),
	}
	for _, l := range srv.loops {
		for i, c := range l.stats.cmds {
			if i >= len(t.cmds) {
				break
			}
			s := &t.cmds[i]
			s.calls += c.calls
			s.nsec += c.nsec
			s.rejected += c.rejected
			s.failed += c.failed
			t.totalCmds += c.calls
		}
		for code, n := range l.stats.errors {
			t.errors[code] += n
			t.totalErrs += n
		}
		t.totalErrs += l.stats.errOther
		t.dirty += l.stats.dirty
		t.reads += l.stats.reads
		t.writes += l.stats.writes
		for _, cl := range l.clients {
			if q := int64(max(len(cl.qbuf), cl.qbufAlloc())); q > t.maxQbuf { // kept until the cron trims it (querybuf.go)
				t.maxQbuf = q
			}
			if o := cl.pendingOutput(); o > t.maxOut {
				t.maxOut = o
			}
			t.clientMem += cl.memUsage()
		}
	}
	for _, sh := range srv.shards {
		st := &sh.Stats
		t.shard.KeyspaceHits += st.KeyspaceHits
		t.shard.KeyspaceMisses += st.KeyspaceMisses
		t.shard.ExpiredKeys += st.ExpiredKeys
		t.shard.ExpiredStale += st.ExpiredStale
		t.shard.ExpireCycles += st.ExpireCycles
		t.shard.EvictedKeys += st.EvictedKeys
		t.shard.LazyFreed += st.LazyFreed
		t.dataUsed += sh.UsedMemory()
		if t.keys == nil {
			t.keys = make([]int64, len(sh.DBs))
			t.expires = make([]int64, len(sh.DBs))
			t.ttlWeighted = make([]float64, len(sh.DBs))
		}
		for j, db := range sh.DBs {
			if j < len(t.keys) {
				t.keys[j] += int64(db.Len())
				t.expires[j] += int64(db.Expires())
				t.ttlWeighted[j] += float64(db.AvgTTL()) * float64(db.Expires())
			}
		}
	}
	return t
}

// avgTTL is database j's avg_ttl: each shard estimates it for its part of
// the database as Redis does for a whole one (shard.DB.AvgTTL); the shards'
// estimates are averaged weighted by their keys with an expiry, which is
// what one estimate over all the keys would approach. A shard that has not
// sampled yet counts as 0, as Redis's estimate starts at 0.
func (t *statTotals) avgTTL(j int) int64 {
	if t.expires[j] == 0 {
		return 0
	}
	return int64(t.ttlWeighted[j] / float64(t.expires[j]))
}

// resetStats is CONFIG RESETSTAT: command, error, keyspace and network
// counters go back to zero (the dirty counter and the memory peak do not,
// as in Redis). Every loop must be parked.
func (srv *Server) resetStats() {
	for _, l := range srv.loops {
		clear(l.stats.cmds)
		clear(l.obs.lat) // INFO latencystats, LATENCY HISTOGRAM (obs.go)
		l.stats.errors = make(map[string]int64)
		l.stats.errOther = 0
		l.stats.totalCmds = 0
		l.stats.reads, l.stats.writes = 0, 0
	}
	for _, sh := range srv.shards {
		sh.Stats = shard.Stats{}
	}
	srv.stats.connections.Store(0)
	srv.stats.rejectedConn.Store(0)
	srv.stats.unexpectedErrors.Store(0)
	srv.stats.netInput.Store(0)
	srv.stats.netOutput.Store(0)
	srv.cmem.evicted.Store(0)
	srv.infoSampler.reset()
}

// instSampler produces the instantaneous_* rates of INFO stats: each INFO
// samples the totals, and a rate is the change since the previous sample
// taken at least 100 ms earlier (Redis samples every 100 ms in its cron and
// averages 16 samples; with no cron hook here, "since the previous INFO" is
// the honest equivalent). It also keeps the used_memory peak.
type instSampler struct {
	mu                   sync.Mutex
	last                 time.Time
	ops, in, out         int64
	opsRate, inKB, outKB float64
	peakMemory           int64
}

func (s *instSampler) sample(now time.Time, ops, in, out int64) (opsRate, inKB, outKB float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() {
		dt := now.Sub(s.last).Seconds()
		if dt < 0.1 {
			return s.opsRate, s.inKB, s.outKB
		}
		rate := func(cur, prev int64) float64 {
			if cur < prev {
				return 0
			}
			return float64(cur-prev) / dt
		}
		s.opsRate = rate(ops, s.ops)
		s.inKB = rate(in, s.in) / 1024
		s.outKB = rate(out, s.out) / 1024
	}
	s.last, s.ops, s.in, s.out = now, ops, in, out
	return s.opsRate, s.inKB, s.outKB
}

func (s *instSampler) reset() {
	s.mu.Lock()
	s.last = time.Time{}
	s.ops, s.in, s.out = 0, 0, 0
	s.opsRate, s.inKB, s.outKB = 0, 0, 0
	s.mu.Unlock()
}

func (s *instSampler) peak(used int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if used > s.peakMemory {
		s.peakMemory = used
	}
	return s.peakMemory
}

// cmdInfo is INFO [section ...]. It runs with every loop parked.
func cmdInfo(x *Exec, argv [][]byte) {
	sel := parseInfoSections(argv[1:])
	x.Verbatim(x.srv.genInfo(&sel, time.Now()))
}

// infoWriter builds the INFO text.
type infoWriter struct {
	b        []byte
	sections int
}

func (w *infoWriter) section(title string) {
	if w.sections > 0 {
		w.b = append(w.b, "\r\n"...)
	}
	w.sections++
	w.b = append(w.b, "# "...)
	w.b = append(w.b, title...)
	w.b = append(w.b, "\r\n"...)
}

func (w *infoWriter) str(name, v string) {
	w.b = append(w.b, name...)
	w.b = append(w.b, ':')
	w.b = append(w.b, v...)
	w.b = append(w.b, "\r\n"...)
}

func (w *infoWriter) int(name string, v int64) {
	w.b = append(w.b, name...)
	w.b = append(w.b, ':')
	w.b = strconv.AppendInt(w.b, v, 10)
	w.b = append(w.b, "\r\n"...)
}

func (w *infoWriter) float(name string, v float64) { w.str(name, strconv.FormatFloat(v, 'f', 2, 64)) }

func (w *infoWriter) percent(name string, v float64) {
	w.str(name, strconv.FormatFloat(v, 'f', 2, 64)+"%")
}

func (w *infoWriter) bool(name string, v bool) {
	if v {
		w.int(name, 1)
	} else {
		w.int(name, 0)
	}
}

// genInfo renders the selected sections. Every loop must be parked.
func (srv *Server) genInfo(sel *infoSelection, now time.Time) []byte {
	t := srv.sumStats()
	cfg := srv.cfg
	w := &infoWriter{b: make([]byte, 0, 4096)}
	uptime := int64(now.Sub(srv.startTime).Seconds())

	if sel.want("server") {
		w.section("Server")
		un := unameInfo()
		w.str("redis_version", RedisVersion)
		w.str("redis_git_sha1", "00000000")
		w.int("redis_git_dirty", 0)
		w.str("redis_build_id", buildID())
		w.str("redis_mode", srv.redisMode())
		w.str("os", un)
		w.int("arch_bits", int64(strconv.IntSize))
		w.str("monotonic_clock", "POSIX clock_gettime")
		w.str("multiplexing_api", multiplexingAPI())
		w.str("atomicvar_api", "c11-builtin")
		w.str("gcc_version", "0.0.0")
		w.int("process_id", int64(os.Getpid()))
		sup := cfg.Supervised()
		if sup != "upstart" && sup != "systemd" {
			sup = "no"
		}
		w.str("process_supervised", sup)
		w.str("run_id", processRunID)
		w.int("tcp_port", int64(cfg.Port()))
		w.int("server_time_usec", now.UnixMicro())
		w.int("uptime_in_seconds", uptime)
		w.int("uptime_in_days", uptime/(3600*24))
		w.int("hz", int64(cfg.Hz()))
		w.int("configured_hz", int64(cfg.Hz()))
		w.int("lru_clock", now.Unix()&(1<<24-1))
		w.str("executable", executablePath())
		w.str("config_file", cfg.ConfigFile())
		w.int("io_threads_active", 0)
		if until := srv.shut.waitUntil.Load(); until != 0 {
			w.int("shutdown_in_milliseconds", max(until-now.UnixMilli(), 0)) // shutdown.go
		}
		w.str("redshard_version", Version)
		w.int("shards", int64(len(srv.shards)))
	}

	if sel.want("clients") {
		w.section("Clients")
		w.int("connected_clients", srv.nclients.Load()-srv.repl.attached()) // replicas not counted, as Redis
		w.int("cluster_connections", 0)
		w.int("maxclients", cfg.MaxClients())
		w.int("client_recent_max_input_buffer", t.maxQbuf)
		w.int("client_recent_max_output_buffer", t.maxOut)
		w.int("blocked_clients", srv.blk.clients.Load())
		w.int("tracking_clients", srv.trk.shared.Clients.Load())
		w.int("clients_in_timeout_table", srv.blk.timed.Load())
	}

	if sel.want("memory") {
		w.section("Memory")
		m := readMemInfo(srv, t)
		peak := srv.infoSampler.peak(m.used)
		maxmem := int64(cfg.MaxMemory())
		w.int("used_memory", m.used)
		w.str("used_memory_human", bytesToHuman(m.used))
		w.int("used_memory_rss", m.rss)
		w.str("used_memory_rss_human", bytesToHuman(m.rss))
		w.int("used_memory_peak", peak)
		w.str("used_memory_peak_human", bytesToHuman(peak))
		w.percent("used_memory_peak_perc", ratio(m.used, peak)*100)
		w.int("used_memory_overhead", m.used-m.dataset)
		w.int("used_memory_startup", m.startup)
		w.int("used_memory_dataset", m.dataset)
		w.percent("used_memory_dataset_perc", ratio(m.dataset, m.used)*100)
		w.int("allocator_allocated", m.allocated)
		w.int("allocator_active", m.active)
		w.int("allocator_resident", m.resident)
		w.int("total_system_memory", m.system)
		w.str("total_system_memory_human", bytesToHuman(m.system))
		// The Lua heaps are part of the Go heap: estimates, as lua.Engine's
		// VMMemory makes them (an empty interpreter plus the sources).
		sc, fn := &srv.scripts, &srv.funcs
		vmEval := lua.VMBaseMemory + sc.mem.Load()
		vmFuncs := lua.VMBaseMemory + fn.mem.Load()
		scriptsEval, funcsMem := srv.scriptCachesMem()
		w.int("used_memory_lua", vmEval)
		w.int("used_memory_vm_eval", vmEval)
		w.str("used_memory_lua_human", bytesToHuman(vmEval))
		w.int("used_memory_scripts_eval", scriptsEval)
		w.int("number_of_cached_scripts", sc.count.Load())
		w.int("number_of_functions", fn.nfuncs.Load())
		w.int("number_of_libraries", fn.nlibs.Load())
		w.int("used_memory_vm_functions", vmFuncs)
		w.int("used_memory_vm_total", vmEval+vmFuncs)
		w.str("used_memory_vm_total_human", bytesToHuman(vmEval+vmFuncs))
		w.int("used_memory_functions", funcsMem)
		w.int("used_memory_scripts", scriptsEval+funcsMem)
		w.str("used_memory_scripts_human", bytesToHuman(scriptsEval+funcsMem))
		w.int("maxmemory", maxmem)
		w.str("maxmemory_human", bytesToHuman(maxmem))
		w.str("maxmemory_policy", cfg.MaxMemoryPolicy())
		w.float("allocator_frag_ratio", ratio(m.active, m.allocated))
		w.int("allocator_frag_bytes", m.active-m.allocated)
		w.float("allocator_rss_ratio", ratio(m.resident, m.active))
		w.int("allocator_rss_bytes", m.resident-m.active)
		w.float("rss_overhead_ratio", ratio(m.rss, m.resident))
		w.int("rss_overhead_bytes", m.rss-m.resident)
		w.float("mem_fragmentation_ratio", ratio(m.rss, m.used))
		w.int("mem_fragmentation_bytes", m.rss-m.used)
		w.int("mem_not_counted_for_evict", m.notCounted)
		backlog, total := srv.repl.bufferMem() // repl.go
		w.int("mem_replication_backlog", backlog)
		w.int("mem_total_replication_buffers", total)
		w.int("mem_clients_slaves", total-backlog)
		w.int("mem_clients_normal", t.clientMem)
		w.int("mem_cluster_links", 0)
		w.int("mem_aof_buffer", srv.aofBufferMem())
		w.str("mem_allocator", memAllocatorName)
		w.int("active_defrag_running", 0)
		w.int("lazyfree_pending_objects", 0)
		w.int("lazyfreed_objects", t.shard.LazyFreed) // shard/lazyfree.go
	}

	if sel.want("persistence") {
		w.section("Persistence")
		srv.infoPersistence(w, t, now)
	}

	if sel.want("stats") {
		w.section("Stats")
		in, out := srv.stats.netInput.Load(), srv.stats.netOutput.Load()
		opsRate, inKB, outKB := srv.infoSampler.sample(now, t.totalCmds, in, out)
		w.int("total_connections_received", srv.stats.connections.Load())
		w.int("total_commands_processed", t.totalCmds)
		w.int("instantaneous_ops_per_sec", int64(opsRate+0.5))
		w.int("total_net_input_bytes", in)
		w.int("total_net_output_bytes", out)
		w.int("total_net_repl_input_bytes", srv.stats.netReplInput.Load())
		w.int("total_net_repl_output_bytes", srv.stats.netReplOutput.Load())
		w.float("instantaneous_input_kbps", inKB)
		w.float("instantaneous_output_kbps", outKB)
		w.float("instantaneous_input_repl_kbps", 0)
		w.float("instantaneous_output_repl_kbps", 0)
		w.int("rejected_connections", srv.stats.rejectedConn.Load())
		w.int("sync_full", srv.repl.m.fullSyncs.Load())
		w.int("sync_partial_ok", srv.repl.m.partialOK.Load())
		w.int("sync_partial_err", srv.repl.m.partialErr.Load())
		w.int("expired_keys", t.shard.ExpiredKeys)
		w.float("expired_stale_perc", 0)
		w.int("expired_time_cap_reached_count", 0)
		w.int("expire_cycle_cpu_milliseconds", 0)
		w.int("evicted_keys", t.shard.EvictedKeys)
		w.int("evicted_clients", srv.cmem.evicted.Load())
		w.int("total_eviction_exceeded_time", 0)
		w.int("current_eviction_exceeded_time", 0)
		w.int("keyspace_hits", t.shard.KeyspaceHits)
		w.int("keyspace_misses", t.shard.KeyspaceMisses)
		nch, npat, nshard := srv.pubsubCounts()
		w.int("pubsub_channels", int64(nch))
		w.int("pubsub_patterns", int64(npat))
		w.int("pubsubshard_channels", int64(nshard))
		w.int("latest_fork_usec", srv.forks.lastUsec.Load()) // a background job's child (bgchild.go)
		w.int("total_forks", srv.forks.total.Load())
		w.int("migrate_cached_sockets", int64(shard.MigrateCachedSockets()))
		w.int("slave_expires_tracked_keys", 0)
		w.int("active_defrag_hits", 0)
		w.int("active_defrag_misses", 0)
		w.int("active_defrag_key_hits", 0)
		w.int("active_defrag_key_misses", 0)
		w.int("total_active_defrag_time", 0)
		w.int("current_active_defrag_time", 0)
		w.int("tracking_total_keys", srv.trk.shared.Keys.Load())
		w.int("tracking_total_items", srv.trk.shared.Items.Load())
		w.int("tracking_total_prefixes", srv.trk.nprefix.Load())
		w.int("unexpected_error_replies", srv.stats.unexpectedErrors.Load())
		w.int("total_error_replies", t.totalErrs)
		w.int("dump_payload_sanitizations", 0)
		w.int("total_reads_processed", t.reads)
		w.int("total_writes_processed", t.writes)
		w.int("io_threaded_reads_processed", 0)
		w.int("io_threaded_writes_processed", 0)
		w.int("reply_buffer_shrinks", srv.replyShrinks.Load())
		w.int("reply_buffer_expands", srv.replyExpands.Load())
	}

	if sel.want("replication") {
		w.section("Replication")
		if srv.repl.isReplica.Load() {
			w.str("role", "slave")
			srv.infoReplicaFields(w, now) // replica.go
		} else {
			w.str("role", "master")
		}
		srv.infoReplicas(w)
		w.str("master_failover_state", srv.failoverStateName())
		id, id2, off, second := srv.repl.ids()
		w.str("master_replid", id)
		w.str("master_replid2", id2)
		w.int("master_repl_offset", off)
		w.int("second_repl_offset", second)
		srv.repl.infoBacklog(w)
	}

	if sel.want("cpu") {
		w.section("CPU")
		var self, children syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		w.str("used_cpu_sys", timevalString(self.Stime))
		w.str("used_cpu_user", timevalString(self.Utime))
		w.str("used_cpu_sys_children", timevalString(children.Stime))
		w.str("used_cpu_user_children", timevalString(children.Utime))
		mainSys, mainUser := mainThreadCPU(&self) // cpu.go
		w.str("used_cpu_sys_main_thread", timevalString(mainSys))
		w.str("used_cpu_user_main_thread", timevalString(mainUser))
	}

	if sel.want("module_list") || sel.want("modules") {
		w.section("Modules")
	}

	if sel.want("commandstats") {
		w.section("Commandstats")
		for _, c := range srv.sortedCommands() {
			w.cmdstat(c, t)
			for _, sc := range sortedSubs(c) {
				w.cmdstat(sc, t)
			}
		}
	}

	if sel.want("errorstats") {
		w.section("Errorstats")
		codes := make([]string, 0, len(t.errors))
		for code := range t.errors {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			w.b = append(w.b, "errorstat_"...)
			w.b = append(w.b, safeInfoString(code)...)
			w.b = append(w.b, ":count="...)
			w.b = strconv.AppendInt(w.b, t.errors[code], 10)
			w.b = append(w.b, "\r\n"...)
		}
	}

	if sel.want("latencystats") {
		w.section("Latencystats")
		srv.infoLatencyStats(w) // latency.go
	}

	if sel.want("cluster") {
		w.section("Cluster")
		w.int("cluster_enabled", srv.infoClusterEnabled()) // cmd_cluster.go
	}

	if sel.want("keyspace") {
		w.section("Keyspace")
		for j := range t.keys {
			if t.keys[j] == 0 && t.expires[j] == 0 {
				continue
			}
			w.b = fmt.Appendf(w.b, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", j, t.keys[j], t.expires[j], t.avgTTL(j))
		}
	}
	return w.b
}

// infoPersistence is INFO's persistence section: Redis 7.0's fields, in
// its order and with its meanings, from the log's counters (aof.Stats), the
// rewrite's state and the loader's; fork and RDB fields show Redis's idle
// values (there is no fork and no RDB). After Redis's AOF fields come
// redshard's own, for the group commit:
//
//	aof_fsyncs              fdatasync calls on the AOF that succeeded
//	aof_groups              groups written (one write(2) each)
//	aof_batches             batches written (one per loop event that logged)
//	aof_last_group_batches  batches in the last group
//	aof_fsync_avg_usec      mean fdatasync time, microseconds
func (srv *Server) infoPersistence(w *infoWriter, t *statTotals, now time.Time) {
	loading := srv.load.active.Load()
	w.bool("loading", loading)
	w.bool("async_loading", srv.rs.asyncLoading.Load())
	srv.infoImage(w)        // bgchild.go
	srv.infoRDB(w, t.dirty) // snapshot.go

	ps := srv.aofLog()
	var st aof.Stats
	if ps != nil {
		st = ps.log.Stats()
	}
	rewriting := srv.rw.active.Load()
	curRewrite := int64(-1)
	if rewriting {
		curRewrite = (now.UnixMilli() - srv.rw.started.Load()) / 1000
	}
	status := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "err"
	}
	w.bool("aof_enabled", ps != nil)
	w.bool("aof_rewrite_in_progress", rewriting)
	// Scheduled: waits for a BGSAVE (snapshot.go), or for the retry of a
	// failed first rewrite (maybeAutoRewrite).
	waiting := srv.aofLog() != nil && srv.aofLog().log.WaitingRewrite() && !srv.rw.active.Load()
	w.int("aof_rewrite_scheduled", b2i(srv.save.rewriteAfter.Load() || waiting))
	w.int("aof_last_rewrite_time_sec", srv.rw.lastSecs.Load())
	w.int("aof_current_rewrite_time_sec", curRewrite)
	w.str("aof_last_bgrewrite_status", status(srv.rw.lastOK.Load()))
	w.int("aof_rewrites", srv.rw.count.Load())
	w.int("aof_rewrites_consecutive_failures", srv.rw.failures.Load())
	w.str("aof_last_write_status", status(ps == nil || st.LastWriteStatus == "ok"))
	w.int("aof_last_cow_size", srv.img.lastAOF.Load())
	w.int("module_fork_in_progress", 0)
	w.int("module_fork_last_cow_size", 0)
	if ps != nil {
		w.int("aof_current_size", st.CurrentSize)
		w.int("aof_base_size", st.BaseSize)
		w.int("aof_pending_rewrite", 0)
		w.int("aof_buffer_length", st.PendingBytes)
		w.int("aof_pending_bio_fsync", 0)
		w.int("aof_delayed_fsync", 0)
		w.int("aof_fsyncs", int64(st.Fsyncs))
		w.int("aof_groups", int64(st.Groups))
		w.int("aof_batches", int64(st.Batches))
		w.int("aof_last_group_batches", st.LastGroupBatches)
		var avg int64
		if st.Fsyncs > 0 {
			avg = st.FsyncLatencySum.Microseconds() / int64(st.Fsyncs)
		}
		w.int("aof_fsync_avg_usec", avg)
	}
	if loading && ps != nil {
		loaded, total := ps.log.LoadProgress()
		start := srv.load.start.Load()
		perc := loadPercent(loaded, total)
		remaining := total - loaded
		if total == 0 {
			remaining = 1
		}
		elapsed := now.Unix() - start
		eta := int64(1) // Redis's figure when nothing is known yet
		if elapsed > 0 {
			eta = elapsed * remaining / (loaded + 1)
		}
		w.int("loading_start_time", start)
		w.int("loading_total_bytes", total)
		w.int("loading_rdb_used_mem", 0)
		w.int("loading_loaded_bytes", loaded)
		w.float("loading_loaded_perc", perc)
		w.int("loading_eta_seconds", eta)
	}
}

// cmdstat writes a commandstats line for a command that was called, failed
// or rejected.
func (w *infoWriter) cmdstat(c *Cmd, t *statTotals) {
	if c.id >= len(t.cmds) {
		return
	}
	s := t.cmds[c.id]
	if s.calls == 0 && s.failed == 0 && s.rejected == 0 {
		return
	}
	perCall := 0.0
	if s.calls > 0 {
		perCall = float64(float32(s.nsec/1000) / float32(s.calls))
	}
	w.b = fmt.Appendf(w.b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
		safeInfoString(c.fullName), s.calls, s.nsec/1000, perCall, s.rejected, s.failed)
}

// sortedCommands returns the top-level commands, by name.
func (srv *Server) sortedCommands() []*Cmd {
	out := make([]*Cmd, 0, len(srv.cmds))
	for _, c := range srv.cmds {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].fullName < out[j].fullName })
	return out
}

// sortedSubs returns a container's implemented subcommands, by name.
func sortedSubs(c *Cmd) []*Cmd {
	if len(c.subs) == 0 {
		return nil
	}
	out := make([]*Cmd, 0, len(c.subs))
	for _, sc := range c.subs {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].fullName < out[j].fullName })
	return out
}

// safeInfoString replaces the characters that would break INFO's format
// (Redis's getSafeInfoString).
func safeInfoString(s string) string {
	if !strings.ContainsAny(s, "#:\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '#', ':', '\n', '\r':
			return '_'
		}
		return r
	}, s)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func timevalString(tv syscall.Timeval) string {
	return fmt.Sprintf("%d.%06d", tv.Sec, tv.Usec)
}

// bytesToHuman formats a byte count as Redis does: 100B, 1.50K, 2.00M, ...
func bytesToHuman(n int64) string {
	if n < 0 {
		n = 0
	}
	const k = 1024
	units := []struct {
		limit float64
		div   float64
		sfx   string
	}{
		{k * k, k, "K"},
		{k * k * k, k * k, "M"},
		{k * k * k * k, k * k * k, "G"},
		{k * k * k * k * k, k * k * k * k, "T"},
		{k * k * k * k * k * k, k * k * k * k * k, "P"},
	}
	if n < k {
		return strconv.FormatInt(n, 10) + "B"
	}
	f := float64(n)
	for _, u := range units {
		if f < u.limit {
			return strconv.FormatFloat(f/u.div, 'f', 2, 64) + u.sfx
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// memInfo is the memory section's raw figures.
type memInfo struct {
	used, dataset, startup      int64
	replBufs, aofBuf            int64 // in used: the replication stream's blocks, the log's unwritten bytes
	notCounted                  int64 // mem_not_counted_for_evict
	rss                         int64
	allocated, active, resident int64
	system                      int64
}

var memMetricNames = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
}

// readMemInfo measures memory. used_memory is what the shards account for
// their keys and values (Shard.UsedMemory: slab bytes in use, a per-key
// overhead and every non-string value's size, kept up to date as they
// change — the figure maxmemory is enforced on), plus what the process held
// at startup (used_memory_startup) and the clients' buffers.
func readMemInfo(srv *Server, t *statTotals) memInfo {
	samples := make([]metrics.Sample, len(memMetricNames))
	for i, n := range memMetricNames {
		samples[i].Name = n
	}
	metrics.Read(samples)
	val := func(i int) int64 {
		if samples[i].Value.Kind() == metrics.KindUint64 {
			return int64(samples[i].Value.Uint64())
		}
		return 0
	}
	objects, unused, total, released := val(0), val(1), val(2), val(3)
	var m memInfo
	m.startup = srv.memStartup
	m.dataset = t.dataUsed
	// As Redis's used_memory, it holds the replication buffer and the AOF
	// buffer too; maxmemory leaves out the AOF buffer and the replication
	// buffer past repl-backlog-size (freeMemoryGetNotCountedMemory).
	m.replBufs, m.aofBuf = srv.repl.memTotal.Load(), srv.aofBufferMem()
	m.notCounted = max(0, m.replBufs-srv.repl.memEvict.Load()) + m.aofBuf // two loads: the stream may grow between them
	m.used = m.startup + t.dataUsed + t.clientMem + m.replBufs + m.aofBuf
	m.allocated = objects
	m.active = objects + unused
	m.resident = total - released
	m.rss = processRSS()
	m.system = systemMemory()
	return m
}

// processRSS reads the resident set size from /proc/self/statm (0 where
// there is no procfs).
func processRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

var systemMemoryOnce = sync.OnceValue(func() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
})

func systemMemory() int64 { return systemMemoryOnce() }

var unameInfo = sync.OnceValue(func() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return runtime.GOOS + " " + runtime.GOARCH
	}
	cstr := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	return cstr(u.Sysname[:]) + " " + cstr(u.Release[:]) + " " + cstr(u.Machine[:])
})

var executablePath = sync.OnceValue(func() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
})

// buildID is a stable hex id of this build (redis_build_id).
var buildID = sync.OnceValue(func() string {
	var h uint64 = 14695981039346656037
	for _, c := range []byte("redshard " + Version + " " + runtime.Version()) {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return strconv.FormatUint(h, 16)
})

func multiplexingAPI() string {
	switch runtime.GOOS {
	case "linux":
		return "epoll"
	case "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
		return "kqueue"
	}
	return "select"
}

// scriptCachesMem is the memory of the EVAL scripts' cache and of the
// function libraries (used_memory_scripts_eval, used_memory_functions;
// MEMORY STATS lua.caches and functions.caches).
func (srv *Server) scriptCachesMem() (eval, funcs int64) {
	sc, fn := &srv.scripts, &srv.funcs
	return sc.mem.Load() + sc.count.Load()*scriptEntryOverhead, fn.mem.Load() + fn.nfuncs.Load()*scriptEntryOverhead
}

// aofBufferMem is what the log holds that its writer has not written
// (mem_aof_buffer; MEMORY STATS aof.buffer).
func (srv *Server) aofBufferMem() int64 {
	if ps := srv.aofLog(); ps != nil {
		return ps.log.Stats().PendingBytes
	}
	return 0
}
