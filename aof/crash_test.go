package aof

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestKill9LosesNoAcknowledgedBatch runs a writer in a child process,
// acknowledges batches the way the server releases replies (Durable under
// "always", Written under "everysec"), kills the child with SIGKILL and
// loads the folder: every acknowledged batch is there, and each producer's
// batches form a prefix of what it submitted, each applied once.
func TestKill9LosesNoAcknowledgedBatch(t *testing.T) {
	if os.Getenv("AOF_CRASH_CHILD") != "" {
		crashChild()
		return
	}
	for _, policy := range []string{FsyncAlways, FsyncEverysec} {
		t.Run(policy, func(t *testing.T) {
			for round := 0; round < 3; round++ {
				dir := t.TempDir()
				cmd := exec.Command(os.Args[0], "-test.run=^TestKill9LosesNoAcknowledgedBatch$")
				cmd.Env = append(os.Environ(), "AOF_CRASH_CHILD="+dir, "AOF_CRASH_POLICY="+policy)
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				acked := map[string]int{} // producer → highest acknowledged batch
				sc := bufio.NewScanner(out)
				deadline := time.Now().Add(time.Duration(100+100*round) * time.Millisecond)
				n := 0
				for sc.Scan() {
					f := strings.Fields(sc.Text())
					if len(f) == 3 && f[0] == "ack" {
						i, _ := strconv.Atoi(f[2])
						acked[f[1]] = max(acked[f[1]], i)
						n++
					}
					if time.Now().After(deadline) && n > 0 {
						break
					}
				}
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()

				o := testOptions(dir, policy)
				got, _, err := loadAll(t, o)
				if err != nil {
					t.Fatal(err)
				}
				next := map[string]int{}
				for _, c := range got {
					f := strings.Fields(c)
					if len(f) != 3 || f[0] != "SET" {
						continue
					}
					g := f[1]
					i, _ := strconv.Atoi(f[2])
					if i != next[g] {
						t.Fatalf("producer %s: batch %d loaded after %d: not a prefix, or applied twice", g, i, next[g]-1)
					}
					next[g]++
				}
				for g, i := range acked {
					if next[g] <= i {
						t.Fatalf("producer %s: batch %d was acknowledged but only %d loaded", g, i, next[g])
					}
				}
				t.Logf("round %d: %d acks, %d commands loaded", round, n, len(got))
			}
		})
	}
}

// crashChild writes until killed, printing "ack <producer> <batch>" for
// each acknowledged batch.
func crashChild() {
	o := testOptions(os.Getenv("AOF_CRASH_CHILD"), os.Getenv("AOF_CRASH_POLICY"))
	o.syncEvery = time.Second
	l, err := Open(o)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	l.OnDurable(func(_, _ uint64) { mu.Lock(); cond.Broadcast(); mu.Unlock() })
	pos := l.Written
	if o.Fsync == FsyncAlways {
		pos = l.Durable
	}
	var outMu sync.Mutex
	for g := 0; g < 8; g++ {
		go func() {
			p := l.NewProducer()
			name := fmt.Sprintf("p%d", g)
			for i := 0; ; i++ {
				p.Append(g%3, args("SET", name, strconv.Itoa(i)))
				seq := p.Submit()
				mu.Lock()
				for pos() < seq {
					cond.Wait()
				}
				mu.Unlock()
				outMu.Lock()
				fmt.Fprintf(os.Stdout, "ack %s %d\n", name, i)
				outMu.Unlock()
			}
		}()
	}
	select {}
}
