package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startSentinel starts Debian's redis-sentinel on a free port monitoring
// "mym" at 127.0.0.1:mport, and stops it by PID at the end of the test.
func startSentinel(t *testing.T, dir string, mport int) string {
	t.Helper()
	port := freePort(t)
	conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", port))
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mym 127.0.0.1 %d 2\n"+
		"sentinel down-after-milliseconds mym 1000\nsentinel failover-timeout mym 10000\n", port, dir, mport)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	cmd := exec.Command("redis-sentinel", conf)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("--- sentinel %d ---\n%s", port, logTail(log.String(), 30))
		}
	})
	return "127.0.0.1:" + strconv.Itoa(port)
}

// Three redis-sentinel processes watch a redshard master (--shards 4)
// with a redshard replica and a redis-server replica. The master is killed
// with SIGKILL while a go-redis FailoverClient writes; Sentinel promotes a
// replica, the other one follows it, the client carries on against the
// new master, and every write that WAIT 1 acknowledged before the kill is
// there.
func TestSentinelFailover(t *testing.T) {
	for _, bin := range []string{"redis-sentinel", "redis-server"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skip(bin + " not installed")
		}
	}
	ctx := context.Background()
	m := startServer(t, "--shards", "4", "--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0")
	r1 := startServer(t, "--shards", "4", "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	r2 := startRedisServer(t, t.TempDir(), "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	mc := m.client(t, 2)
	deadline := time.Now().Add(20 * time.Second)
	for infoField(t, mc, "replication", "connected_slaves") != "2" {
		if time.Now().After(deadline) {
			t.Fatalf("replicas not attached: %s", infoField(t, mc, "replication", "connected_slaves"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	dir := t.TempDir()
	var sentinels []string
	for i := 0; i < 3; i++ {
		sentinels = append(sentinels, startSentinel(t, dir, m.Port))
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sc.Close()
	deadline = time.Now().Add(30 * time.Second)
	for {
		mm, err := sc.Master(ctx, "mym").Result()
		if err == nil && mm["num-slaves"] == "2" && mm["num-other-sentinels"] == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinels do not see the set up: %v %v", mm, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mym", SentinelAddrs: sentinels,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, MaxRetries: -1})
	defer fc.Close()
	var mu sync.Mutex
	var acked []string // keys WAIT 1 acknowledged before the kill
	var killedAt time.Time
	afterKill := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conn *redis.Conn
		for i := 0; ; i++ {
			select {
			case <-stop:
				if conn != nil {
					conn.Close()
				}
				return
			default:
			}
			if conn == nil {
				conn = fc.Conn()
			}
			k := "w:" + strconv.Itoa(i)
			if err := conn.Set(ctx, k, i, 0).Err(); err != nil {
				conn.Close()
				conn = nil
				time.Sleep(50 * time.Millisecond)
				continue
			}
			n, err := conn.Do(ctx, "WAIT", "1", "1000").Int()
			mu.Lock()
			if killedAt.IsZero() && err == nil && n >= 1 {
				acked = append(acked, k)
			} else if !killedAt.IsZero() {
				afterKill++
			}
			mu.Unlock()
			if err != nil {
				conn.Close()
				conn = nil
			}
		}
	}()
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	killedAt = time.Now()
	nAcked := len(acked)
	mu.Unlock()
	m.kill9()
	if nAcked < 10 {
		t.Fatalf("only %d writes acknowledged by WAIT 1 before the kill", nAcked)
	}

	// Sentinel promotes a replica; the client carries on against it.
	deadline = time.Now().Add(40 * time.Second)
	var newAddr []string
	for {
		a, err := sc.GetMasterAddrByName(ctx, "mym").Result()
		mu.Lock()
		n := afterKill
		mu.Unlock()
		if err == nil && a[1] != strconv.Itoa(m.Port) && n >= 50 {
			newAddr = a
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failover: sentinel says %v (%v), %d writes after the kill", a, err, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	<-done
	var promoted, other *redis.Client
	r1c := r1.client(t, 2)
	r2c := redis.NewClient(&redis.Options{Addr: r2.Addr, Protocol: 2})
	defer r2c.Close()
	if newAddr[1] == strconv.Itoa(r1.Port) {
		promoted, other = r1c, r2c
	} else {
		promoted, other = r2c, r1c
	}
	if role := infoField(t, promoted, "replication", "role"); role != "master" {
		t.Fatalf("the promoted server's role is %s", role)
	}
	// The other replica follows the new master.
	deadline = time.Now().Add(30 * time.Second)
	for infoField(t, other, "replication", "master_port") != newAddr[1] || infoField(t, other, "replication", "master_link_status") != "up" {
		if time.Now().After(deadline) {
			t.Fatalf("the other replica does not follow %v: master_port %s, link %s", newAddr,
				infoField(t, other, "replication", "master_port"), infoField(t, other, "replication", "master_link_status"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	missing := 0
	for _, k := range acked {
		if n, err := promoted.Exists(ctx, k).Result(); err != nil || n != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d writes acknowledged by WAIT 1 before the kill are missing on the new master %v", missing, len(acked), newAddr)
	}
	t.Logf("failover to %v: %d writes acknowledged by WAIT 1 before the kill, all present; %d writes after it", newAddr, len(acked), afterKill)
}
