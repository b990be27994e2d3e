package server

import (
	"context"
	"math"
	"math/bits"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/shard"
)

// maxmemory.
//
// Each shard accounts for its keys and values (shard.Shard.UsedMemory) and
// owns an equal share of the budget: (maxmemory - used_memory_startup) / N,
// less an equal part of the clients' memory (accountMem; clientMemForKeys
// leaves out what clients over maxmemory-clients are about to give back).
// Equal shares add up to maxmemory. Before every command (Redis's
// performEvictions, called from processCommand), the loop running it looks
// at each shard the command touches: one over its share evicts by the
// policy until it is within it, if the server as a whole (used_memory from
// the shards' published figures, which each owner updates before its
// commands) is over maxmemory. A shard alone over its share while the
// total is not does not evict: keys never hash so evenly that every share
// fills alike, and Redis evicts only past maxmemory. Each shard that takes
// writes comes back to its share, so used_memory stays within maxmemory by
// about one write per shard. Evicted keys are logged to the AOF as DEL and
// fire the "evicted" notification. If a shard cannot get under its share
// (noeviction, or a volatile policy with no volatile keys left) while the
// total is over maxmemory, a command flagged denyoom is refused with -OOM,
// as Redis does; under noeviction, whenever the total is over maxmemory.
//
// The Go heap is kept close to the data: the keyspace is pointer-free (the
// collector marks little), so collecting often is cheap, and the default
// GOGC is 25 instead of 100 — heap growth between collections, which shows
// as RSS, is a quarter of the live heap instead of all of it (200k hashes
// of 10 fields: 499 RSS bytes per key at 100, 397 at 25; SET/GET -P 16
// throughput unchanged within noise); a small heap gets at least 16 MiB
// of headroom (gctune.go). A GOGC in the environment wins.
//
// With maxmemory set, the runtime's soft
// memory limit (GOMEMLIMIT) is maxmemory plus a quarter plus 16 MiB, so garbage is
// collected before RSS runs far past the data; a GOMEMLIMIT given in the
// environment wins.

const oomError = "OOM command not allowed when used memory > 'maxmemory'."

// initMemory records what the process holds before any data (Redis's
// used_memory_startup) and applies maxmemory to the Go heap.
func (srv *Server) initMemory() {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		srv.memStartup = int64(s[0].Value.Uint64())
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		startGCTuner() // GOGC 25, with a floor of headroom (gctune.go)
	}
	srv.applyMaxmemory()
	srv.cfg.OnChange("maxmemory", func() {
		srv.applyMaxmemory()
		// Like Redis, evict at once when the new limit is below what is
		// used: each loop on its own shard.
		for _, l := range srv.loops {
			l := l
			_ = l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
				l.evictCron()
				return nil
			}))
		}
	})
}

// evictCron brings the loop's shard within its share (from the cron, and
// after CONFIG SET maxmemory), so that a limit lowered while no write comes
// still takes effect, as Redis's CONFIG SET does.
func (l *Loop) evictCron() {
	if l.srv.shardBudget.Load() == 0 {
		return
	}
	l.sh.SetNow(time.Now().UnixMilli())
	l.nowValid, l.tickValid = false, false
	if l.srv.persist != nil {
		defer l.endEvent() // submit the DELs
	}
	l.makeRoom(1 << uint(l.id))
}

// applyMaxmemory computes the shards' shares and the Go memory limit.
func (srv *Server) applyMaxmemory() {
	max := int64(srv.cfg.MaxMemory())
	if max <= 0 {
		srv.shardBudget.Store(0)
	} else {
		share := (max - srv.memStartup) / int64(len(srv.shards))
		if share < 1 {
			// maxmemory below what the server holds at startup: nothing
			// fits, as in Redis, where used_memory is already over it.
			share = -1
		}
		srv.shardBudget.Store(share)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	if max <= 0 {
		debug.SetMemoryLimit(math.MaxInt64)
	} else {
		debug.SetMemoryLimit(max + max/4 + 16<<20)
	}
}

// within reports whether b's memory lies inside buf's.
func within(b, buf []byte) bool {
	if cap(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= lo && p < lo+uintptr(cap(buf))
}

// makeRoom evicts on the shards of mask until each is within its share; it
// reports false if one cannot be (the command gets -OOM). Clients' buffers
// count against maxmemory as in Redis (they are part of used_memory), so
// they come out of every shard's share.
func (l *Loop) makeRoom(mask uint64) bool {
	budget := l.srv.shardBudget.Load()
	if cm := l.srv.clientMemForKeys(); cm > 0 && budget > 0 {
		budget -= cm / int64(len(l.srv.shards))
		if budget < 1 {
			budget = -1 // the clients alone fill maxmemory: no key fits
		}
	}
	var hook func(*shard.DB, []byte)
	if l.srv.persist != nil {
		hook = l.p.expHook
	}
	ok := true
	total := int64(-1) // used_memory, read once a shard is over its share
	maxmem := int64(l.srv.cfg.MaxMemory())
	for m := mask; m != 0; m &= m - 1 {
		sh := l.srv.shards[bits.TrailingZeros64(m)]
		if sh.UsedMemory() <= budget {
			continue
		}
		// Over its share: it evicts only when the server as a whole is
		// over maxmemory, as Redis evicts only then; the keys never hash
		// so evenly that every share is filled alike.
		if total < 0 {
			total = l.srv.usedMemoryEstimate()
		}
		if total <= maxmem {
			continue
		}
		if !sh.Evict(budget, hook) {
			ok = false
		}
	}
	switch {
	case !ok:
		// A shard over its share that cannot evict (noeviction, or a
		// volatile policy without volatile keys) refuses writes only while
		// the server as a whole is over maxmemory, as Redis does.
		ok = l.srv.usedMemoryEstimate() <= maxmem
	case l.sh.Cfg.MaxmemoryPolicy.Load() == shard.PolicyNoEviction:
		// Under noeviction Redis refuses writes whenever used_memory is
		// over maxmemory, also on a shard still within its share (the
		// others are past theirs and nothing will bring them back).
		if total < 0 {
			total = l.srv.usedMemoryEstimate()
		}
		ok = total <= maxmem
	}
	return ok
}

// clientMemForKeys is the clients' memory as key eviction counts it: with
// maxmemory-clients set, what is left once the clients over it are
// evicted (at most the limit, at least what the clients that may not be
// evicted hold). Redis evicts those clients before the keys (evictClients,
// then performEvictions, in processCommand); here their loops evict them a
// little later, and the keys must not go for memory the clients are about
// to give back.
func (srv *Server) clientMemForKeys() int64 {
	cm := srv.clientMemTotal()
	if lim := srv.clientEvictionLimit(); lim != 0 && cm > lim {
		cm = max(lim, cm-srv.clientMemEvictable())
	}
	return cm
}

// usedMemoryEstimate is used_memory from the shards' published figures, for
// any loop to read, with the clients counted as key eviction counts them.
func (srv *Server) usedMemoryEstimate() int64 {
	used := srv.memStartup + srv.clientMemForKeys()
	for _, sh := range srv.shards {
		used += sh.PublishedMemory()
	}
	return used
}
