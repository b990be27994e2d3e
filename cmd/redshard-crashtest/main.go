// Command redshard-crashtest crashes a Redis-compatible server under
// pipelined load, restarts it and checks what survived. See the crashtest
// package for the model and the checks.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redshard/redshard/crashtest"
)

func main() {
	fs := flag.NewFlagSet("redshard-crashtest", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: redshard-crashtest [flags] -- SERVER-COMMAND...

Runs pipelined writers (depths 1 and 16) and readers against the server,
crashes it (SIGKILL, failpoints, power loss through FUSE, torn tails, a
corrupted middle of the log, a kill during a rewrite), restarts it on the same
folder and checks that every acknowledged write and every value a reader saw
survived, that each client's data is a prefix of what it sent, and that
multi-key commands and transactions are all or nothing. Prints a row per
crash, a summary and "N passed, M failed"; exits 1 on any failure.

SERVER-COMMAND runs the server with {port} and {dir} in its arguments and
appendonly on, for example
  redshard-crashtest --strict -- redshard-server --port {port} --bind 127.0.0.1 --dir {dir} \
      --appendonly yes --appendfsync always --shards 4 --enable-failpoints yes
  redshard-crashtest -- redis-server --port {port} --bind 127.0.0.1 --dir {dir} \
      --appendonly yes --appendfsync everysec --save ""

Scenarios (--scenarios): kill, torn-tail, corrupt-middle, rewrite-kill,
failpoint:<name> (rows skip when DEBUG FAILPOINT LIST answers an error),
power, power-torn, power-rewrite, power-first-start (rows skip without FUSE).

flags:
`)
		fs.PrintDefaults()
	}
	quick := fs.Bool("quick", false, "a short matrix that ends within a minute")
	fsync := fs.String("fsync", "", "the promise to check: always, everysec or no (default: the server's appendfsync)")
	aof := fs.String("aof", "appendonlydir/*", "`GLOB` of the server's log files, relative to {dir} (torn-tail appends to the last incremental file, corrupt-middle flips a byte of the largest)")
	jsonOut := fs.String("json", "", "write the report as JSON to `FILE`")
	workdir := fs.String("workdir", "", "folder for server data and logs (default: a temporary folder, removed when every row passed)")
	keep := fs.Bool("keep", false, "keep the data and logs of rows that passed")
	seed := fs.Int64("seed", 0, "random seed (default: from the clock; printed)")
	d1 := fs.Int("depth1", 3, "writers at pipeline depth 1")
	d16 := fs.Int("depth16", 3, "writers at pipeline depth 16")
	readers := fs.Int("readers", 2, "readers recording every value they are shown")
	margin := fs.Duration("margin", 2*time.Second, "what appendfsync everysec may lose before a crash")
	strict := fs.Bool("strict", false, "make \"nothing acknowledged lost\" the verdict of every crash but power loss under everysec and no too (redshard promises it; redis-server does not)")
	only := fs.String("scenarios", "", "comma-separated rows to run instead of the default (or --quick) matrix, e.g. kill,kill,failpoint:aof-fsync,power")
	fs.Parse(os.Args[1:])

	cmd := fs.Args()
	if len(cmd) == 0 {
		fs.Usage()
		os.Exit(2)
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	cfg := crashtest.Config{
		Command: cmd, Fsync: *fsync, AOFGlob: *aof, Quick: *quick, Seed: *seed, Workdir: *workdir, Keep: *keep,
		Depth1: *d1, Depth16: *d16, Readers: *readers, Margin: *margin, Strict: *strict, Out: os.Stdout,
	}
	if *only != "" {
		cfg.Scenarios = strings.Split(*only, ",")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "redshard-crashtest: %v: stopping the servers and unmounting\n", s)
		crashtest.Abort()
		os.Exit(130)
	}()
	fmt.Printf("redshard-crashtest: seed %d: %s\n", *seed, strings.Join(cmd, " "))
	rep, err := crashtest.Run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "redshard-crashtest:", err)
		os.Exit(2)
	}
	rep.WriteSummary(os.Stdout)
	if *jsonOut != "" {
		if err := rep.WriteJSON(*jsonOut); err != nil {
			fmt.Fprintln(os.Stderr, "redshard-crashtest:", err)
			os.Exit(2)
		}
	}
	if rep.Failed > 0 {
		os.Exit(1)
	}
}
