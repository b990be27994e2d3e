package server

// Redis 7.0.15 options that redshard accepts and reports but that steer
// machinery it does not have: replication, Redis Cluster, active
// defragmentation, syslog, process titles, dump payload sanitising (and
// two that are real, oom-score-adj and oom-score-adj-values, applied by
// oom.go). The stock redis.conf sets several of them, and so do
// operators' files and tools that read CONFIG GET *; refusing them would
// make such a file fail to load ("Bad directive"). Their values are kept
// with Redis's names, aliases, defaults, bounds and mutability, so CONFIG
// GET, CONFIG SET and CONFIG REWRITE behave as in Redis; nothing reads them
// but the oom-score-adj pair and rdb-key-save-delay, which paces an AOF
// rewrite as it paces Redis's rewrite child (rewrite.go).
//
// Where accepting a value would promise behaviour redshard lacks, the value
// is refused instead, with Redis's own error where Redis has one:
//   - activedefrag yes: the error of a Redis built without defrag support;
//   - (cluster-enabled, cluster-config-file, the announce options,
//     cluster-port, cluster-require-full-coverage and the "when down"
//     options are real: cluster_config.go, cmd_cluster.go; aclfile is
//     real: acl.go);
//   - replicaof/slaveof <host> <port> is real (replica.go): CONFIG GET
//     shows "<host> <port>" while the server is a replica, "" otherwise,
//     and masterauth, masteruser, replica-read-only,
//     replica-serve-stale-data, replica-ignore-maxmemory, repl-timeout and
//     replica-announce-ip/port steer its link; repl-diskless-load is
//     real too (replica_load.go).
// The tls-* options are real (tls.go). shutdown-on-sigint/sigterm are real
// options (shutdown.go).

import (
	"strconv"
	"strings"
	"sync/atomic"
)

// cfgInert holds the values of the options of this file; Config embeds it.
// Rows take slots in table order (see cfgInertTable).
type cfgInert struct {
	inertBools [24]atomic.Bool
	inertNums  [40]atomic.Int64
	inertStrs  [16]atomicString
	oomAdj     atomic.Pointer[[3]int64] // oom-score-adj-values

	// replicaof: the master's host ("" when this server is a master) and
	// port, set by the config and REPLICAOF (replica.go).
	replHost atomicString
	replPort atomic.Int64
}

var (
	cfgEnumSyslogFacility = []string{"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}
	cfgEnumDisklessLoad   = []string{"disabled", "on-empty-db", "swapdb"}
	cfgEnumACLPubsub      = []string{"allchannels", "resetchannels"}
	cfgEnumSanitize       = []string{"no", "yes", "clients"}
	cfgEnumEndpointType   = []string{"ip", "hostname", "unknown-endpoint"}
	cfgEnumPropagationErr = []string{"ignore", "panic", "panic-on-replicas"}
	// oom-score-adj: Redis's enum maps "yes" and "relative" to one value
	// and reports it by its first name, "yes"; see cfgSetOOMScoreAdj.
	cfgEnumOOMScoreAdj = []string{"no", "yes", "absolute"}
)

// cfgInertTable returns the rows of this file's options (Redis 7.0.15
// config.c: names, aliases, flags, bounds, defaults).
func cfgInertTable() []*cfgOption {
	var nb, nn, ns int
	b := func(name, alias string, flags cfgFlag, def string) *cfgOption {
		i := nb
		nb++
		return cfgBoolOpt(name, alias, flags, def, func(c *Config) *atomic.Bool { return &c.inertBools[i] })
	}
	n := func(name, alias string, flags cfgFlag, min, max int64, def string) *cfgOption {
		i := nn
		nn++
		return cfgNumOpt(name, alias, flags, min, max, def, func(c *Config) *atomic.Int64 { return &c.inertNums[i] })
	}
	e := func(name string, flags cfgFlag, vals []string, def string) *cfgOption {
		i := nn
		nn++
		return cfgEnumOpt(name, flags, vals, def, func(c *Config) *atomic.Int64 { return &c.inertNums[i] })
	}
	s := func(name, alias string, flags cfgFlag, def string, check func(string) string) *cfgOption {
		i := ns
		ns++
		o := cfgStrOpt(name, flags, def, check, func(c *Config) *atomicString { return &c.inertStrs[i] })
		o.alias = alias
		return o
	}
	boolOnlyNo := func(name string, flags cfgFlag, reason string) *cfgOption {
		i := nb
		nb++
		o := cfgSpecialOpt(name, flags, "no", func(c *Config, args []string, _ *cfgLoadState) string {
			if len(args) != 1 {
				return "wrong number of arguments"
			}
			switch cfgLower(args[0]) {
			case "no":
				c.inertBools[i].Store(false)
				return ""
			case "yes":
				return reason
			}
			return "argument must be 'yes' or 'no'"
		}, func(c *Config) string { return "no" }, nil)
		o.srewrite = func(c *Config, o *cfgOption, rw *cfgRewriteState) {
			rw.rewriteLine(o.name, o.name+" no", false)
		}
		return o
	}
	// oom-score-adj is an enum with an alias value ("relative" is "yes"),
	// so it is special; it keeps its index in a numeric slot.
	oomSlot := nn
	nn++
	oom := cfgSpecialOpt("oom-score-adj", cfgMutable, "no", cfgSetOOMScoreAdj,
		func(c *Config) string { return cfgEnumOOMScoreAdj[c.inertNums[oomSlot].Load()] },
		func(c *Config, o *cfgOption, rw *cfgRewriteState) {
			v := cfgEnumOOMScoreAdj[c.inertNums[oomSlot].Load()]
			rw.rewriteLine(o.name, o.name+" "+v, v != o.def)
		})
	oom.n = func(c *Config) *atomic.Int64 { return &c.inertNums[oomSlot] }
	replicaof := cfgSpecialOpt("replicaof", cfgImmutable|cfgMultiArg, "no one", cfgSetReplicaOf,
		func(c *Config) string {
			if h := c.replHost.Load(); h != "" {
				return h + " " + strconv.FormatInt(c.replPort.Load(), 10)
			}
			return ""
		},
		func(c *Config, o *cfgOption, rw *cfgRewriteState) {
			if h := c.replHost.Load(); h != "" {
				rw.rewriteLine(o.name, o.name+" "+h+" "+strconv.FormatInt(c.replPort.Load(), 10), true)
				return
			}
			rw.markProcessed(o.name)
		})
	replicaof.alias = "slaveof"
	const intMax, longMax = cfgIntMax, cfgLongMax
	rows := []*cfgOption{
		// ---- yes/no
		b("rdb-del-sync-files", "", cfgMutable, "no"),
		b("repl-disable-tcp-nodelay", "", cfgMutable, "no"),
		b("repl-diskless-sync", "", cfgMutable, "yes"),
		b("cluster-replica-no-failover", "cluster-slave-no-failover", cfgMutable, "no"),
		b("replica-lazy-flush", "slave-lazy-flush", cfgMutable, "no"),
		b("replica-serve-stale-data", "slave-serve-stale-data", cfgMutable, "yes"),
		b("replica-read-only", "slave-read-only", cfgMutable, "yes"),
		b("replica-ignore-maxmemory", "slave-ignore-maxmemory", cfgMutable, "yes"),
		b("jemalloc-bg-thread", "", cfgMutable, "yes"),
		b("syslog-enabled", "", cfgImmutable, "no"),
		b("use-exit-on-panic", "", cfgMutable|cfgHidden, "no"),
		b("disable-thp", "", cfgImmutable, "yes"),
		b("cluster-allow-replica-migration", "", cfgMutable, "yes"),
		b("replica-announced", "", cfgMutable, "yes"),
		b("replica-ignore-disk-write-errors", "", cfgMutable, "no"),
		boolOnlyNo("activedefrag", cfgMutable, "Active defragmentation cannot be enabled: it "+
			"requires a Redis server compiled with a modified Jemalloc like the one shipped "+
			"by default with the Redis source distribution"),

		// ---- strings
		s("aclfile", "", cfgImmutable, "", nil),
		s("replica-announce-ip", "slave-announce-ip", cfgMutable|cfgEmptyIsNull, "", nil),
		s("masteruser", "", cfgMutable|cfgEmptyIsNull, "", nil),
		s("masterauth", "", cfgMutable|cfgEmptyIsNull, "", nil),
		s("syslog-ident", "", cfgImmutable, "redis", nil),
		s("ignore-warnings", "", cfgMutable, "", nil),
		s("proc-title-template", "", cfgMutable, "{title} {listen-addr} {server-mode}", cfgCheckProcTitleTemplate),
		s("bind-source-addr", "", cfgMutable|cfgEmptyIsNull, "", nil),
		// CPU pinning lists (redshard places its loops itself).
		s("server_cpulist", "", cfgImmutable|cfgEmptyIsNull, "", nil),
		s("bio_cpulist", "", cfgImmutable|cfgEmptyIsNull, "", nil),
		s("aof_rewrite_cpulist", "", cfgImmutable|cfgEmptyIsNull, "", nil),
		s("bgsave_cpulist", "", cfgImmutable|cfgEmptyIsNull, "", nil),

		// ---- enums
		e("syslog-facility", cfgImmutable, cfgEnumSyslogFacility, "local0"),
		e("repl-diskless-load", cfgMutable, cfgEnumDisklessLoad, "disabled"),
		e("acl-pubsub-default", cfgMutable, cfgEnumACLPubsub, "resetchannels"),
		e("sanitize-dump-payload", cfgMutable, cfgEnumSanitize, "no"),
		e("propagation-error-behavior", cfgMutable, cfgEnumPropagationErr, "ignore"),

		// ---- numbers
		n("cluster-replica-validity-factor", "cluster-slave-validity-factor", cfgMutable, 0, intMax, "10"),
		n("cluster-migration-barrier", "", cfgMutable, 0, intMax, "1"),
		n("active-defrag-cycle-min", "", cfgMutable, 1, 99, "1"),
		n("active-defrag-cycle-max", "", cfgMutable, 1, 99, "25"),
		n("active-defrag-threshold-lower", "", cfgMutable, 0, 1000, "10"),
		n("active-defrag-threshold-upper", "", cfgMutable, 0, 1000, "100"),
		n("replica-priority", "slave-priority", cfgMutable, 0, intMax, "100"),
		n("repl-diskless-sync-delay", "", cfgMutable, 0, intMax, "5"),
		n("replica-announce-port", "slave-announce-port", cfgMutable, 0, 65535, "0"),
		n("repl-timeout", "", cfgMutable, 1, intMax, "60"),
		n("repl-ping-replica-period", "repl-ping-slave-period", cfgMutable, 1, intMax, "10"),
		n("rdb-key-save-delay", "", cfgMutable|cfgHidden, cfgIntMin, intMax, "0"),
		n("key-load-delay", "", cfgMutable|cfgHidden, cfgIntMin, intMax, "0"),
		n("min-replicas-to-write", "min-slaves-to-write", cfgMutable, 0, intMax, "0"),
		n("min-replicas-max-lag", "min-slaves-max-lag", cfgMutable, 0, intMax, "10"),
		n("watchdog-period", "", cfgMutable|cfgHidden, 0, intMax, "0"),
		n("repl-diskless-sync-max-replicas", "", cfgMutable, 0, intMax, "0"),
		n("socket-mark-id", "", cfgImmutable|cfgUnsigned, 0, cfgUintMax, "0"),
		n("active-defrag-max-scan-fields", "", cfgMutable|cfgUnsigned, 1, longMax, "1000"),
		n("cluster-node-timeout", "", cfgMutable, 0, longMax, "15000"),
		n("repl-backlog-size", "", cfgMutable|cfgMemory, 1, longMax, "1mb"),
		n("cluster-link-sendbuf-limit", "", cfgMutable|cfgMemory|cfgUnsigned, 0, -1, "0"),
		n("active-defrag-ignore-bytes", "", cfgMutable|cfgMemory|cfgUnsigned, 1, longMax, "100mb"),
		n("repl-backlog-ttl", "", cfgMutable, 0, longMax, "3600"),
		n("loading-process-events-interval-bytes", "", cfgMutable|cfgHidden, 1024, intMax, "2097152"),

		// ---- special
		oom,
		replicaof,
		cfgSpecialOpt("oom-score-adj-values", cfgMutable|cfgMultiArg, "0 200 800",
			cfgSetOOMScoreAdjValues, cfgGetOOMScoreAdjValues, cfgRewriteOOMScoreAdjValues),
	}
	if nb > len(cfgInert{}.inertBools) || nn > len(cfgInert{}.inertNums) || ns > len(cfgInert{}.inertStrs) {
		panic("config: cfgInert has too few slots")
	}
	return rows
}

// cfgSetReplicaOf is Redis's setConfigReplicaOfOption, for a master only.
func cfgSetReplicaOf(c *Config, args []string, _ *cfgLoadState) string {
	if len(args) != 2 {
		return "wrong number of arguments"
	}
	if cfgLower(args[0]) == "no" && cfgLower(args[1]) == "one" {
		c.replHost.Store("")
		c.replPort.Store(0)
		return ""
	}
	p, err := strconv.Atoi(args[1])
	if err != nil || p < 0 || p > 65535 {
		return "Invalid master port"
	}
	c.replHost.Store(args[0])
	c.replPort.Store(int64(p))
	return ""
}

// cfgSetOOMScoreAdj parses oom-score-adj: "relative" is another name for
// "yes" (Redis's oom_score_adj_enum).
func cfgSetOOMScoreAdj(c *Config, args []string, _ *cfgLoadState) string {
	o := cfgByOpt["oom-score-adj"]
	if len(args) == 1 {
		v := cfgLower(args[0])
		if v == "relative" {
			v = "yes"
		}
		for i, name := range cfgEnumOOMScoreAdj {
			if name == v {
				o.n(c).Store(int64(i))
				return ""
			}
		}
	}
	return "argument(s) must be one of the following: no, yes, relative, absolute"
}

func cfgSetOOMScoreAdjValues(c *Config, args []string, _ *cfgLoadState) string {
	if len(args) != 3 {
		return "wrong number of arguments"
	}
	var v [3]int64
	for i, a := range args {
		// strtoll: optional leading blanks and sign, digits, nothing after.
		x, err := strconv.ParseInt(strings.TrimLeft(a, " \t\n\v\f\r"), 10, 64)
		if err != nil || x < -2000 || x > 2000 {
			return "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
		}
		v[i] = x
	}
	c.oomAdj.Store(&v)
	return ""
}

func cfgGetOOMScoreAdjValues(c *Config) string {
	v := c.oomAdj.Load()
	if v == nil {
		return "0 200 800"
	}
	return strconv.FormatInt(v[0], 10) + " " + strconv.FormatInt(v[1], 10) + " " + strconv.FormatInt(v[2], 10)
}

func cfgRewriteOOMScoreAdjValues(c *Config, o *cfgOption, rw *cfgRewriteState) {
	v := cfgGetOOMScoreAdjValues(c)
	rw.rewriteLine(o.name, o.name+" "+v, v != o.def)
}

// ReplBacklogSize is repl-backlog-size, which INFO reports (redshard keeps
// no backlog).
func (c *Config) ReplBacklogSize() int64 {
	v, _ := c.GetValue("repl-backlog-size")
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// cfgCheckProcTitleTemplate is Redis's validateProcTitleTemplate: the
// template must expand (known {variables}, "{{" for a brace) to something
// other than blanks when the title is empty.
func cfgCheckProcTitleTemplate(t string) string {
	const bad = "template format is invalid or contains unknown variables"
	nonBlank := false
	for p := t; p != ""; {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			nonBlank = nonBlank || strings.Trim(p, " ") != ""
			break
		}
		nonBlank = nonBlank || strings.Trim(p[:i], " ") != ""
		p = p[i+1:]
		if p == "" {
			return bad
		}
		if p[0] == '{' {
			nonBlank = true
			p = p[1:]
			continue
		}
		j := strings.IndexByte(p, '}')
		if j < 0 {
			return bad
		}
		switch p[:j] {
		case "title", "server-mode", "unixsocket":
			// empty with an empty title, outside cluster mode, without a
			// unix socket
		case "listen-addr", "config-file", "port", "tls-port":
			nonBlank = true
		default:
			return bad
		}
		p = p[j+1:]
	}
	if !nonBlank {
		return bad
	}
	return ""
}

// cfgCheckAnnouncedHostname is Redis's isValidAnnouncedHostname.
func cfgCheckAnnouncedHostname(v string) string {
	if len(v) >= 256 {
		return "Hostnames must be less than 256 characters"
	}
	for i := 0; i < len(v); i++ {
		ch := v[i]
		if (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' {
			continue
		}
		return "Hostnames may only contain alphanumeric characters, hyphens or dots"
	}
	return ""
}

// intOr is an integer option's value, or def if it does not parse.
func (c *Config) intOr(name string, def int64) int64 {
	v, ok := c.GetValue(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

// boolOr is a yes/no option's value, or def.
func (c *Config) boolOr(name string, def bool) bool {
	v, ok := c.GetValue(name)
	if !ok {
		return def
	}
	return v == "yes"
}
