package tests

// Power cuts under the real binary: the data folder is a crashfs mount, the
// server is killed with SIGKILL, then the power is cut (every byte not
// fsynced and every name not made durable by a directory fsync is gone), and
// a new server starts on what a disk would have kept.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redshard/redshard/crashfs"
)

// mountCrashFS mounts a crashfs over a fresh folder for the test, or skips
// the test where FUSE cannot mount.
func mountCrashFS(t *testing.T) *crashfs.FS {
	t.Helper()
	if err := crashfs.Available(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := crashfs.Mount(backing, mnt, crashfs.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("crashfs unmount: %v", err)
		}
	})
	return f
}

// setUntilKilled runs writers SETting fresh keys for d, then kills the
// server with SIGKILL while they are still writing, and returns the keys
// whose SET was acknowledged (+OK), with their values.
func setUntilKilled(t *testing.T, s *server, d time.Duration) map[string]string {
	t.Helper()
	const writers = 8
	acked := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.client(t, 2)
			for i := 0; ctx.Err() == nil; i++ {
				k, v := fmt.Sprintf("w%d:k%d", w, i), fmt.Sprintf("v%d-%d", w, i)
				if err := c.Set(ctx, k, v, 0).Err(); err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked[k] = v
				mu.Unlock()
			}
		}()
	}
	time.Sleep(d)
	s.kill9()
	stop()
	wg.Wait()
	return acked
}

// lostKeys counts the acknowledged keys the restarted server lacks, and
// fails the test on a key with another value.
func lostKeys(t *testing.T, s *server, acked map[string]string) int {
	t.Helper()
	c := s.client(t, 2)
	lost := 0
	for k, v := range acked {
		got, err := c.Get(ctxT(t), k).Result()
		if err != nil {
			lost++
			continue
		}
		if got != v {
			t.Fatalf("%s = %q after the power cut, want %q", k, got, v)
		}
	}
	return lost
}

// The server starts on an empty mount: it must make its own folders
// durable (the parent of appendonlydir fsynced after the mkdir), or the cut
// undoes the whole log.
func TestPowerCutKeepsEveryAcknowledgedWriteUnderAppendfsyncAlways(t *testing.T) {
	f := mountCrashFS(t)
	s := startServerIn(t, f.Mountpoint(), aofArgs("always", "--shards", "2")...)
	acked := setUntilKilled(t, s, time.Second)
	if len(acked) == 0 {
		t.Fatal("no SET was acknowledged")
	}
	rep, err := f.PowerCut(crashfs.Cut{Torn: true, Rand: rand.New(rand.NewPCG(1, 7))})
	if err != nil {
		t.Fatal(err)
	}
	s2 := startServerIn(t, f.Mountpoint(), aofArgs("always", "--shards", "2")...)
	lost := lostKeys(t, s2, acked)
	t.Logf("appendfsync always: %d SETs acknowledged, %d lost; cut %+v; %+v", len(acked), lost, rep, f.Stats())
	if lost != 0 {
		t.Fatalf("%d of %d acknowledged SETs lost by a power cut under appendfsync always", lost, len(acked))
	}
}

// Under appendfsync no the server never fsyncs its log after start, so a
// power cut loses everything written since: the proof that crashfs really
// drops unsynced data.
func TestPowerCutLosesUnsyncedWritesUnderAppendfsyncNo(t *testing.T) {
	f := mountCrashFS(t)
	// No automatic rewrite: its fsyncs would make some writes durable.
	args := aofArgs("no", "--shards", "2", "--auto-aof-rewrite-percentage", "0")
	s := startServerIn(t, f.Mountpoint(), args...)
	// The first start writes and fsyncs the base and the manifest; wait
	// until it is done before counting the server's fsyncs.
	time.Sleep(200 * time.Millisecond)
	before := f.Stats()
	acked := setUntilKilled(t, s, 500*time.Millisecond)
	during := f.Stats()
	if len(acked) == 0 {
		t.Fatal("no SET was acknowledged")
	}
	if during.Fsyncs != before.Fsyncs {
		t.Fatalf("the server fsynced %d times under appendfsync no (Redis never does)", during.Fsyncs-before.Fsyncs)
	}
	rep, err := f.PowerCut(crashfs.Cut{})
	if err != nil {
		t.Fatal(err)
	}
	s2 := startServerIn(t, f.Mountpoint(), args...)
	lost := lostKeys(t, s2, acked)
	t.Logf("appendfsync no: %d SETs acknowledged, %d lost; cut %+v; %+v", len(acked), lost, rep, during)
	if rep.NamesUndone != 0 || rep.BytesLost == 0 {
		t.Fatalf("cut %+v: want the loss in the log's data, with no name undone", rep)
	}
	// No fsync after the acknowledged writes: not one of them may survive.
	if lost != len(acked) {
		t.Fatalf("%d of %d acknowledged SETs lost; with no fsync since they were written, all must be", lost, len(acked))
	}

	// Again with a torn cut: the log keeps a prefix of its first unsynced
	// write, cut inside a record or not, and the server must start on it.
	acked = setUntilKilled(t, s2, 300*time.Millisecond)
	rep, err = f.PowerCut(crashfs.Cut{Torn: true, Rand: rand.New(rand.NewPCG(11, 13))})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Torn) != 1 {
		t.Fatalf("torn cut %+v: want the log torn", rep)
	}
	s3 := startServerIn(t, f.Mountpoint(), args...)
	lost = lostKeys(t, s3, acked)
	t.Logf("appendfsync no, torn: %d SETs acknowledged, %d lost; cut %+v", len(acked), lost, rep)
	if lost == 0 {
		t.Fatalf("no acknowledged SET lost by a torn cut with no fsync")
	}
}

// TestPowerCutAfterRewriteKeepsAcknowledgedWrites: the rewrite's manifest
// swap (temp file, fsync, rename, directory fsync) must be durable once
// BGREWRITEAOF is done, and the log written after it too.
func TestPowerCutAfterRewriteKeepsAcknowledgedWrites(t *testing.T) {
	f := mountCrashFS(t)
	args := aofArgs("always", "--shards", "2")
	s := startServerIn(t, f.Mountpoint(), args...)
	c := s.client(t, 2)
	acked := map[string]string{}
	for i := range 1000 {
		k, v := fmt.Sprintf("before:%d", i), fmt.Sprintf("v%d", i)
		if err := c.Set(ctxT(t), k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		acked[k] = v
	}
	p := mustDialP(t, s.Addr)
	p.mustDo(t, "BGREWRITEAOF")
	waitRewrite(t, p)
	p.close()
	for k, v := range setUntilKilled(t, s, 300*time.Millisecond) {
		acked[k] = v
	}
	rep, err := f.PowerCut(crashfs.Cut{Torn: true, Rand: rand.New(rand.NewPCG(3, 5))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(f.Backing(), aofDirName, manifestNme))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), "appendonly.aof.2.base") {
		t.Fatalf("after the cut the manifest is the one before the rewrite:\n%s", m)
	}
	s2 := startServerIn(t, f.Mountpoint(), args...)
	lost := lostKeys(t, s2, acked)
	t.Logf("rewrite then cut: %d SETs acknowledged, %d lost; cut %+v", len(acked), lost, rep)
	if lost != 0 {
		t.Fatalf("%d of %d acknowledged SETs lost by a power cut after a rewrite under appendfsync always", lost, len(acked))
	}
}
