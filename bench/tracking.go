package main

// The tracking group: what CLIENT TRACKING costs a read-heavy load.
// redis-benchmark cannot turn tracking on for its connections, so a small
// driver of this harness plays its part: 50 RESP3 connections (HELLO 3),
// each with CLIENT TRACKING on (default mode) or not, pipelining GETs of
// 10,000 keys 16 at a time, -n requests in all. It runs as a child process
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
	r.sec("tracking: GET key:__rand_int__ -P 16 (-c 50, 10,000 keys, RESP3), no tracking against CLIENT TRACKING on for every connection")
	off := r.fig("GET -P 16, no tracking", fOps, ">=", 1.0)
	on := r.fig("GET -P 16, CLIENT TRACKING on", fOps, ">=", 1.0)
	cpuOff := r.fig("GET -P 16 CPU/op, no tracking", fMicros, "<=", 1.0)
	cpuOn := r.fig("GET -P 16 CPU/op, CLIENT TRACKING on", fMicros, "<=", 1.0)
	cost := r.fig("tracking throughput cost (1 - on / off)", fPercent, "", 0)
	all := []*figure{off, on, cpuOff, cpuOn, cost}
	r.note("tracking: a driver of the harness (redis-benchmark cannot enable tracking) opens 50 connections, sends HELLO 3 and, for the tracking runs, CLIENT TRACKING on, then pipelines GET key:N (N random of %d keys, 16 per write) for %d requests in all; each round alternates the servers; CPU/op is the server's utime+stime over the run divided by the requests; the cost is 1 - on/off of one round's throughput (target under 10%%).", trackKeys, n)
	srv, err := h.startPair(srvOpts{})
	if err != nil {
		h.logf("tracking: %v", err)
		for _, f := range all {
			for k := 0; k < 2; k++ {
				f.fail(k, "n/a (server failed)")
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
		for k := 0; k < 2; k++ {
			var rps, cpu [2]float64
			for i, track := range []bool{false, true} {
				if isClosing() {
					return
				}
				cpu0, _ := cpuSeconds(srv[k].p.pid)
				var out bytes.Buffer
				p, err := startProc("tracking driver", h.opt.clientCPUs, nil, &out, self, "-tracking-driver",
					fmt.Sprintf("%d,%d,%d,%d,%t", srv[k].port, h.opt.clients, 16, n, track))
				if err != nil {
					h.logf("tracking: %v", err)
					continue
				}
				werr := p.wait(h.sz.benchTimeout)
				cpu1, _ := cpuSeconds(srv[k].p.pid)
				line := strings.TrimSpace(out.String())
				v, perr := strconv.ParseFloat(strings.TrimPrefix(line, "rps="), 64)
				if werr != nil || perr != nil || !strings.HasPrefix(line, "rps=") {
					h.logf("tracking: %s track=%t: %v %v: %s", kindName[k], track, werr, perr, lastLines(line, 3))
					continue
				}
				rps[i], cpu[i] = v, (cpu1-cpu0)/float64(n)
			}
			if rps[0] > 0 {
				off.add(k, rps[0])
				cpuOff.add(k, cpu[0])
			}
			if rps[1] > 0 {
				on.add(k, rps[1])
				cpuOn.add(k, cpu[1])
			}
			if rps[0] > 0 && rps[1] > 0 {
				cost.add(k, 1-rps[1]/rps[0])
			}
			keys, _ := infoInt(srv[k].port, "stats", "tracking_total_items")
			h.logf("tracking: round %d %s: off %s (%s/op), on %s (%s/op), tracking_total_items %d", round+1, kindName[k],
				format(fOps, rps[0]), format(fMicros, cpu[0]), format(fOps, rps[1]), format(fMicros, cpu[1]), keys)
		}
	}
}

// trackingDriver is the child process: "port,conns,pipe,n,track". It prints
// rps=<requests per second>.
func trackingDriver(spec string) {
	f := strings.Split(spec, ",")
	if len(f) != 5 {
		fmt.Println("bad spec")
		os.Exit(2)
	}
	port, _ := strconv.Atoi(f[0])
	conns, _ := strconv.Atoi(f[1])
	pipe, _ := strconv.Atoi(f[2])
	n, _ := strconv.Atoi(f[3])
	track := f[4] == "true"
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
			start.Done()
			<-ready
			for i := 0; i < per; i++ {
				buf = buf[:0]
				for j := 0; j < pipe; j++ {
					k := strconv.Itoa(rng.Intn(trackKeys))
					buf = append(buf, "*2\r\n$3\r\nGET\r\n$"...)
					buf = strconv.AppendInt(buf, int64(4+len(k)), 10)
					buf = append(buf, "\r\nkey:"...)
					buf = append(buf, k...)
					buf = append(buf, "\r\n"...)
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
	t0 := time.Now()
	close(ready)
	wg.Wait()
	el := time.Since(t0)
	select {
	case err := <-errs:
		fmt.Println("error:", err)
		os.Exit(1)
	default:
	}
	fmt.Printf("rps=%.0f\n", float64(per*conns*pipe)/el.Seconds())
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
