package server

import "github.com/redshard/redshard/shard"

// tunables keeps the shards' view of the config (encoding thresholds and
// the notification mask, shard.Tunables) in step with CONFIG SET.
func (srv *Server) initTunables() {
	cfg := srv.cfg
	t := shard.DefaultTunables()
	srv.tun = t
	sync := func() {
		t.HashMaxListpackEntries.Store(cfg.hashMaxListpackEntries.Load())
		t.HashMaxListpackValue.Store(cfg.hashMaxListpackValue.Load())
		t.SetMaxIntsetEntries.Store(cfg.setMaxIntsetEntries.Load())
		t.ZsetMaxListpackEntries.Store(cfg.zsetMaxListpackEntries.Load())
		t.ZsetMaxListpackValue.Store(cfg.zsetMaxListpackValue.Load())
		t.ListMaxListpackSize.Store(cfg.listMaxListpackSize.Load())
		t.ListCompressDepth.Store(cfg.listCompressDepth.Load())
		t.ProtoMaxBulkLen.Store(cfg.protoMaxBulkLen.Load())
		t.HLLSparseMaxBytes.Store(cfg.hllSparseMaxBytes.Load())
		t.StreamNodeMaxBytes.Store(cfg.streamNodeMaxBytes.Load())
		t.StreamNodeMaxEntries.Store(cfg.streamNodeMaxEntries.Load())
		t.NotifyFlags.Store(uint32(cfg.notifyFlags.Load()))
		t.MaxmemoryPolicy.Store(cfg.maxmemoryPolicy.Load())
		t.MaxmemorySet.Store(cfg.maxmemory.Load() != 0)
		t.MaxmemorySamples.Store(cfg.maxmemorySamples.Load())
		t.MaxmemoryEvictionTenacity.Store(cfg.maxmemoryEvictionTenacity.Load())
		t.LFULogFactor.Store(cfg.lfuLogFactor.Load())
		t.LFUDecayTime.Store(cfg.lfuDecayTime.Load())
		t.RDBCompression.Store(cfg.rdbCompression.Load())
		t.LazyUserDel.Store(cfg.lazyfreeLazyUserDel.Load())
		t.LazyServerDel.Store(cfg.lazyfreeLazyServerDel.Load())
		t.LazyExpire.Store(cfg.lazyfreeLazyExpire.Load())
		t.LazyEviction.Store(cfg.lazyfreeLazyEviction.Load())
		t.LazyUserFlush.Store(cfg.lazyfreeLazyUserFlush.Load())
	}
	sync()
	for _, name := range []string{"hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
		"zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size", "list-compress-depth",
		"notify-keyspace-events", "maxmemory", "maxmemory-policy", "maxmemory-samples", "maxmemory-eviction-tenacity",
		"lfu-log-factor", "lfu-decay-time", "proto-max-bulk-len", "hll-sparse-max-bytes",
		"stream-node-max-bytes", "stream-node-max-entries", "rdbcompression", "lazyfree-lazy-user-del",
		"lazyfree-lazy-expire", "lazyfree-lazy-eviction", "lazyfree-lazy-user-flush", "lazyfree-lazy-server-del"} {
		cfg.OnChange(name, sync)
	}
}

// newShard makes a shard that reads the server's tunables.
func (srv *Server) newShard(id int) *shard.Shard {
	sh := shard.New(id, srv.cfg.Databases())
	sh.Cfg = srv.tun
	sh.OnReady = srv.readyHook(sh)
	sh.OnSwapDB = srv.swapHook(sh)
	sh.OnFlushDB = srv.flushHook(sh)
	sh.OnVerbose = func(msg string) { srv.log.Verbosef("%s", msg) }
	sh.KeepExpired = srv.keepExpired // pause.go
	sh.OwnExpiry = srv.repl.isReplica.Load
	sh.Trk = &srv.trk.shared // tracking.go
	return sh
}
