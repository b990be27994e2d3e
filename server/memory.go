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
// publishes the figure; used_memory is the sum of the shards' figures, the
// clients' memory (accountMem; clientMemForKeys leaves out what clients over
// maxmemory-clients are about to give back) and used_memory_startup.
// Before every command (Redis's performEvictions, called from
// processCommand), the loop running it evicts, while used_memory is over
// maxmemory, from the shards the command touches (they are the ones it
// owns now), one after the other, by the policy: eviction takes the
// server's view, as Redis's does, and stops as soon as the whole is back
// within maxmemory, whichever shards hold the memory. Keys never hash so
// evenly that equal shares would fill alike: a shard that evicted only
// down to its own share would take more than the server needs (the
// tracking feedback-loop test of unit/maxmemory allows 10 to 50 keys
// evicted for 40 KB over), and one within its share that did not evict at
// all would let the total grow past maxmemory. Several loops evicting at
// once each read the others' published figures, so the whole overshoots
// by about one key per loop. Every loop's cron does the same for its own
// shard, so that a limit lowered while no write comes still takes effect.
// Evicted keys are logged to the AOF as DEL and fire the "evicted"
// notification. Under noeviction a command flagged denyoom is refused with
// -OOM whenever used_memory is over maxmemory, as in Redis; under a
// volatile policy, when the command's shards have no volatile key left and
// one of them is over its share of maxmemory (the budget, (maxmemory -
// used_memory_startup) / N less an equal part of the clients' memory): the
// others, over theirs, evict as they take writes and in their cron.
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
		// used: each loop from its own shard, until the whole is within.
		for _, l := range srv.loops {
			l := l
			_ = l.post(gnet.RunnableFunc(func(context.Context) error {
				l.evictCron()
				return nil
			}))
		}
	})
}

// evictCron evicts from the loop's shard while used_memory is over
// maxmemory (from the cron, and after CONFIG SET maxmemory), so that a limit lowered while no write comes
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

// makeRoom evicts from the shards of mask while used_memory is over
// maxmemory (see the top of the file); it reports false if the command must
// get -OOM. Clients' buffers count against maxmemory as in Redis (they are
// part of used_memory).
func (l *Loop) makeRoom(mask uint64) bool {
	ok, _ := l.makeRoomOr(mask, false)
	return ok
}

// makeRoomOr is makeRoom; with widen, when still over maxmemory with
// nothing the policy may evict on the shards of mask while another shard
// has something, it evicts no further and reports elsewhere: the command
// is to run again over every shard, and evict there before it runs, as
// Redis's performEvictions evicts from the whole data set before every
// command (Loop.call).
func (l *Loop) makeRoomOr(mask uint64, widen bool) (ok, elsewhere bool) {
	srv := l.srv
	maxmem := int64(srv.cfg.MaxMemory())
	for m := mask; m != 0; m &= m - 1 {
		srv.shards[bits.TrailingZeros64(m)].UsedMemory() // publish what the shards we hold use now
	}
	over := func() bool { return srv.usedMemoryEstimate() > maxmem }
	if !over() {
		return true, false
	}
	policy := l.sh.Cfg.MaxmemoryPolicy.Load()
	if policy == shard.PolicyNoEviction {
		return false, false
	}
	var hook func(*shard.DB, []byte)
	if srv.persist != nil {
		hook = l.p.expHook
	}
	for m := mask; m != 0; m &= m - 1 {
		if srv.shards[bits.TrailingZeros64(m)].EvictWhile(over, hook) {
			return true, false
		}
	}
	// Still over, and nothing of the command's shards can go (a volatile
	// policy without volatile keys there).
	if widen {
		for i, sh := range srv.shards {
			if mask&(1<<uint(i)) == 0 && sh.CanEvict(policy) {
				return false, true
			}
		}
	}
	// A shard over its share refuses,
	// as Redis does when nothing can be evicted; one within its share lets
	// the command run: the shards past theirs evict in their own loops.
	budget := srv.shardBudget.Load()
	if cm := srv.clientMemForKeys(); cm > 0 && budget > 0 {
		budget -= cm / int64(len(srv.shards))
		if budget < 1 {
			budget = -1 // the clients alone fill maxmemory: no key fits
		}
	}
	for m := mask; m != 0; m &= m - 1 {
		if srv.shards[bits.TrailingZeros64(m)].UsedMemory() > budget {
			return false, false
		}
	}
	return true, false
}

// mayWiden is whether x's command may run again over every shard to
// evict (makeRoomOr): a run's command (runLocal, runRemote set
// x.mayWiden) that does not hold every shard already, never a blocking one
// nor one that must run on its client's loop (cmd.home).
func (l *Loop) mayWiden(x *Exec, cmd *Cmd) bool {
	return x.mayWiden && x.cl != nil && x.mask != uint64(1)<<uint(len(l.srv.shards))-1 && !cmd.home && cmd.flags&flagBlocking == 0
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
// any loop to read, with the clients counted as key eviction counts them,
// and as much of the replication buffer as maxmemory counts (up to
// repl-backlog-size, repl.go's memEvict).
func (srv *Server) usedMemoryEstimate() int64 {
	used := srv.memStartup + srv.clientMemForKeys() + srv.repl.memEvict.Load()
	for _, sh := range srv.shards {
		used += sh.PublishedMemory()
	}
	return used
}
