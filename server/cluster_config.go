package server

import "sync/atomic"

// cfgCluster holds the Redis Cluster options redshard reads (cluster mode
// on one node, cmd_cluster.go); the rest of Redis 7.0's cluster-* options
// are kept for compatibility only (config_compat.go).
type cfgCluster struct {
	clusterEnabled        atomic.Bool
	clusterConfigFile     atomicString
	clusterAnnounceIP     atomicString
	clusterAnnounceHost   atomicString
	clusterEndpointType   atomic.Int64
	clusterPort           atomic.Int64
	clusterAnnouncePort   atomic.Int64
	clusterAnnounceBus    atomic.Int64
	clusterAnnounceTLS    atomic.Int64
	clusterFullCoverage   atomic.Bool
	clusterReadsWhenDown  atomic.Bool
	clusterPubsubWhenDown atomic.Bool
	clusterCrossSlot      atomic.Bool
}

// Endpoint types of cluster-preferred-endpoint-type (cfgEnumEndpointType).
const (
	endpointIP = iota
	endpointHostname
	endpointUnknown
)

// cfgClusterTable returns the rows of the cluster options: Redis 7.0.15's
// names, defaults, bounds and mutability, and redshard's
// cluster-allow-cross-slot.
func cfgClusterTable() []*cfgOption {
	return []*cfgOption{
		cfgBoolOpt("cluster-enabled", "", cfgImmutable, "no", func(c *Config) *atomic.Bool { return &c.clusterEnabled }),
		cfgBoolOpt("cluster-require-full-coverage", "", cfgMutable, "yes", func(c *Config) *atomic.Bool { return &c.clusterFullCoverage }),
		cfgBoolOpt("cluster-allow-reads-when-down", "", cfgMutable, "no", func(c *Config) *atomic.Bool { return &c.clusterReadsWhenDown }),
		cfgBoolOpt("cluster-allow-pubsubshard-when-down", "", cfgMutable, "yes", func(c *Config) *atomic.Bool { return &c.clusterPubsubWhenDown }),
		// cluster-allow-cross-slot (redshard's own): yes lets multi-key
		// commands, transactions and scripts span slots, atomically across
		// shards as without cluster mode; no answers -CROSSSLOT as Redis
		// Cluster does.
		cfgBoolOpt("cluster-allow-cross-slot", "", cfgMutable, "no", func(c *Config) *atomic.Bool { return &c.clusterCrossSlot }),
		cfgStrOpt("cluster-config-file", cfgImmutable, "nodes.conf", nil, func(c *Config) *atomicString { return &c.clusterConfigFile }),
		cfgStrOpt("cluster-announce-ip", cfgMutable|cfgEmptyIsNull, "", nil, func(c *Config) *atomicString { return &c.clusterAnnounceIP }),
		cfgStrOpt("cluster-announce-hostname", cfgMutable|cfgEmptyIsNull, "", cfgCheckAnnouncedHostname, func(c *Config) *atomicString { return &c.clusterAnnounceHost }),
		cfgEnumOpt("cluster-preferred-endpoint-type", cfgMutable, cfgEnumEndpointType, "ip", func(c *Config) *atomic.Int64 { return &c.clusterEndpointType }),
		cfgNumOpt("cluster-port", "", cfgImmutable, 0, 65535, "0", func(c *Config) *atomic.Int64 { return &c.clusterPort }),
		cfgNumOpt("cluster-announce-bus-port", "", cfgMutable, 0, 65535, "0", func(c *Config) *atomic.Int64 { return &c.clusterAnnounceBus }),
		cfgNumOpt("cluster-announce-port", "", cfgMutable, 0, 65535, "0", func(c *Config) *atomic.Int64 { return &c.clusterAnnouncePort }),
		cfgNumOpt("cluster-announce-tls-port", "", cfgMutable, 0, 65535, "0", func(c *Config) *atomic.Int64 { return &c.clusterAnnounceTLS }),
	}
}

// ClusterEnabled reports cluster-enabled.
func (c *Config) ClusterEnabled() bool { return c.clusterEnabled.Load() }
