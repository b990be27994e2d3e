package main

// The tracking group: what CLIENT TRACKING costs a read-heavy load.
// redis-benchmark cannot turn tracking on for its connections, so a small
// driver of this harness plays its part: 50 RESP3 connections (HELLO 3),
// each with CLIENT TRACKING on (default mode) or not, pipelining GETs of
// 10,000 keys 16 at a time, -n requests in all, after a warm-up in which
// every connection reads every key once (the cache in use, not filling). It runs as a child process
// of the harness (the -tracking-driver flag), pinned like redis-benchmark
// with -client-cpus. Figures: throughput with and without tracking on both
// servers, the server's CPU per operation, and the cost (on/off - 1, target
// under 10%: issue 20).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const trackKeys = 10000

func (h *harness) trackingGroup() {
	r := h.res
	n := h.sz.p16
	type figs struct{ off, on, cpuOff, cpuOn, cost *figure }
	spaces := []int{trackKeys, 1}
	fs := map[int]*figs{}
	for _, keys := range spaces {
		what, tag := "10,000 keys", " (10k keys)"
		if keys == 1 {
			what, tag = "one key (redis-benchmark's default)", " (1 key)"
		}
		r.sec(fmt.Sprintf("tracking: GET -P 16 -c 50 over %s, RESP3, no tracking against CLIENT TRACKING on for every connection", what))
		fs[keys] = &figs{
			off:    r.fig("GET -P 16, no tracking"+tag, fOps, ">=", 1.0),
			on:     r.fig("GET -P 16, CLIENT TRACKING on"+tag, fOps, ">=", 1.0),
			cpuOff: r.fig("GET -P 16 CPU/op, no tracking"+tag, fMicros, "<=", 1.0),
			cpuOn:  r.fig("GET -P 16 CPU/op, CLIENT TRACKING on"+tag, fMicros, "<=", 1.0),
			cost:   r.fig("tracking throughput cost (1 - on / off)"+tag, fPercent, "", 0),
		}
	}
	r.note("tracking: a driver of the harness (redis-benchmark cannot enable tracking) opens 50 connections, sends HELLO 3 and, for the tracking runs, CLIENT TRACKING on, reads every key once (warm-up: the cache in use, not filling), then pipelines GET key:N (N random among the keys, 16 per write) for %d requests in all; each round alternates the servers; CPU/op is the server's utime+stime over the timed part divided by the requests; the cost is 1 - on/off of one round's throughput (target under 10%%).", n)
	srv, err := h.startPair(srvOpts{})
	if err != nil {
		h.logf("tracking: %v", err)
		for _, f := range fs {
			for _, g := range []*figure{f.off, f.on, f.cpuOff, f.cpuOn, f.cost} {
				for k := 0; k < 2; k++ {
					g.fail(k, "n/a (server failed)")
				}
			}
		}
		return
	}
	defer srv[0].stop()
	defer srv[1].stop()
	for k := 0; k < 2; k++ {
		for i := 0; i < trackKeys; i += 500 {
			args := []string{"MSET"}
			for j := i; j < i+500 && j < trackKeys; j++ {
				args = append(args, "key:"+strconv.Itoa(j), "xxxxxxxxxx")
			}
			if _, err := query(srv[k].port, args...); err != nil {
				h.logf("tracking: MSET on %s: %v", kindName[k], err)
			}
		}
	}
	self, err := os.Executable()
	if err != nil {
		h.logf("tracking: %v", err)
		return
	}
	for round := 0; round < h.opt.rounds; round++ {
		for _, keys := range spaces {
			f := fs[keys]
			for k := 0; k < 2; k++ {
				var rps, cpu [2]float64
				for i, track := range []bool{false, true} {
					if isClosing() {
						return
					}
					var out bytes.Buffer
					p, err := startProc("tracking driver", h.opt.clientCPUs, nil, &out, self, "-tracking-driver",
						fmt.Sprintf("%d,%d,%d,%d,%t,%d,%d", srv[k].port, h.opt.clients, 16, n, track, srv[k].p.pid, keys))
					if err != nil {
						h.logf("tracking: %v", err)
						continue
					}
					werr := p.wait(h.sz.benchTimeout)
					line := strings.TrimSpace(out.String())
					var cpuSec float64
					if i := strings.Index(line, " cpu="); i > 0 {
						cpuSec, _ = strconv.ParseFloat(line[i+5:], 64)
						line = line[:i]
					}
					v, perr := strconv.ParseFloat(strings.TrimPrefix(line, "rps="), 64)
					if werr != nil || perr != nil || !strings.HasPrefix(line, "rps=") {
						h.logf("tracking: %s track=%t: %v %v: %s", kindName[k], track, werr, perr, lastLines(line, 3))
						continue
					}
					rps[i], cpu[i] = v, cpuSec/float64(n)
				}
				if rps[0] > 0 {
					f.off.add(k, rps[0])
					f.cpuOff.add(k, cpu[0])
				}
				if rps[1] > 0 {
					f.on.add(k, rps[1])
					f.cpuOn.add(k, cpu[1])
				}
				if rps[0] > 0 && rps[1] > 0 {
					f.cost.add(k, 1-rps[1]/rps[0])
				}
				items, _ := infoInt(srv[k].port, "stats", "tracking_total_items")
				h.logf("tracking: round %d, %d keys, %s: off %s (%s/op), on %s (%s/op), tracking_total_items %d", round+1, keys, kindName[k],
					format(fOps, rps[0]), format(fMicros, cpu[0]), format(fOps, rps[1]), format(fMicros, cpu[1]), items)
			}
		}
	}
}

// trackingDriver is the child process: "port,conns,pipe,n,track,pid,keys". It prints
// rps=<requests per second>.
func trackingDriver(spec string) {
	f := strings.Split(spec, ",")
	if len(f) != 7 {
		fmt.Println("bad spec")
		os.Exit(2)
	}
	port, _ := strconv.Atoi(f[0])
	conns, _ := strconv.Atoi(f[1])
	pipe, _ := strconv.Atoi(f[2])
	n, _ := strconv.Atoi(f[3])
	track := f[4] == "true"
	pid, _ := strconv.Atoi(f[5])
	nkeys, _ := strconv.Atoi(f[6])
	per := n / conns / pipe
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	ready := make(chan struct{})
	var start sync.WaitGroup
	start.Add(conns)
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				errs <- err
				start.Done()
				return
			}
			defer conn.Close()
			br := bufio.NewReaderSize(conn, 64<<10)
			init := "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n"
			if track {
				init += "*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n"
			}
			if _, err := conn.Write([]byte(init)); err != nil {
				errs <- err
				start.Done()
				return
			}
			replies := 1
			if track {
				replies = 2
			}
			for i := 0; i < replies; i++ {
				if err := skipValue(br); err != nil {
					errs <- err
					start.Done()
					return
				}
			}
			rng := rand.New(rand.NewSource(int64(c)))
			buf := make([]byte, 0, pipe*40)
			// Warm-up: every key once, so that the timed part measures a
			// cache in use (each key read again), not a table filling up.
			for k0 := 0; k0 < nkeys; k0 += pipe {
				buf = buf[:0]
				for k := k0; k < k0+pipe && k < nkeys; k++ {
					buf = appendGet(buf, strconv.Itoa(k))
				}
				if _, err := conn.Write(buf); err != nil {
					errs <- err
					start.Done()
					return
				}
				for k := k0; k < k0+pipe && k < nkeys; k++ {
					if err := skipValue(br); err != nil {
						errs <- err
						start.Done()
						return
					}
				}
			}
			start.Done()
			<-ready
			for i := 0; i < per; i++ {
				buf = buf[:0]
				for j := 0; j < pipe; j++ {
					buf = appendGet(buf, strconv.Itoa(rng.Intn(nkeys)))
				}
				if _, err := conn.Write(buf); err != nil {
					errs <- err
					return
				}
				for j := 0; j < pipe; {
					push, err := skipTop(br)
					if err != nil {
						errs <- err
						return
					}
					if !push {
						j++
					}
				}
			}
		}(c)
	}
	start.Wait()
	cpu0, _ := cpuSeconds(pid)
	t0 := time.Now()
	close(ready)
	wg.Wait()
	el := time.Since(t0)
	cpu1, _ := cpuSeconds(pid)
	select {
	case err := <-errs:
		fmt.Println("error:", err)
		os.Exit(1)
	default:
	}
	fmt.Printf("rps=%.0f cpu=%.6f\n", float64(per*conns*pipe)/el.Seconds(), cpu1-cpu0)
}

func appendGet(buf []byte, k string) []byte {
	buf = append(buf, "*2\r\n$3\r\nGET\r\n$"...)
	buf = strconv.AppendInt(buf, int64(4+len(k)), 10)
	buf = append(buf, "\r\nkey:"...)
	buf = append(buf, k...)
	return append(buf, "\r\n"...)
}

// skipTop reads one top-level value and says whether it was a push.
func skipTop(br *bufio.Reader) (bool, error) {
	b, err := br.Peek(1)
	if err != nil {
		return false, err
	}
	return b[0] == '>', skipValue(br)
}

// skipValue reads one RESP2/RESP3 value.
func skipValue(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return errors.New("short line")
	}
	n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		_, err := br.Discard(n + 2)
		return err
	case '*', '>', '~', '%', '|':
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := skipValue(br); err != nil {
				return err
			}
		}
	case '-':
		return errors.New(strings.TrimSpace(string(line)))
	}
	return nil
}
