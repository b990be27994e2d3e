// Command redshard-server runs a redshard server.
//
//	redshard-server [/path/to/redis.conf] [--name value ...] [-]
//
// The arguments are those of redis-server 7.0: an optional config file, then
// "--option value" pairs applied after it, "-" to also read a config from
// stdin, -v/--version and -h/--help. Without a config file the embedded
// default.conf is applied first.
package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"

	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/bgchild"
	"github.com/redshard/redshard/server"
)

//go:embed default.conf
var defaultConf string

const (
	// daemonEnv marks the detached child started for "daemonize yes".
	daemonEnv = "REDSHARD_DAEMONIZED"
	// defaultPidFile is used when daemonizing without a pidfile (Redis
	// uses /var/run/redis.pid).
	defaultPidFile = "/var/run/redshard.pid"
)

func main() {
	// A background job's child (a BGSAVE's or a rewrite's file) is this
	// binary run again: Main runs it and exits; in the server, Enable lets
	// jobs start one.
	bgchild.Main()
	bgchild.Enable()
	os.Exit(run(os.Args))
}

func run(argv []string) int {
	prog := "redshard-server"
	if len(argv) > 0 {
		prog = argv[0]
	}
	args := argv[1:]

	if len(args) > 0 {
		switch args[0] {
		case "-v", "--version":
			fmt.Println(versionLine())
			return 0
		case "-h", "--help":
			usage(os.Stderr)
			return 1
		}
	}

	// A "-" config is read here so that it can be replayed to the detached
	// child when daemonizing.
	var stdin []byte
	if readsStdin(args) {
		var err error
		if stdin, err = io.ReadAll(os.Stdin); err != nil {
			return reportConfigError(fmt.Errorf("Fatal error, can't read config from stdin: %v", err))
		}
	}
	cfg, err := server.LoadConfigFrom(args, defaultConf, bytes.NewReader(stdin))
	if err != nil {
		return reportConfigError(err)
	}

	background := cfg.Daemonize() && !supervised(cfg)
	if background && os.Getenv(daemonEnv) == "" {
		// Go cannot fork: re-exec ourselves detached (new session, stdio on
		// /dev/null as Redis's daemonize()) and let the parent exit.
		if err := daemonize(args, stdin); err != nil {
			fmt.Fprintf(os.Stderr, "Can't daemonize: %v\n", err)
			return 1
		}
		return 0
	}
	os.Unsetenv(daemonEnv)

	// Redis chdir()s to dir while loading the config; we create it if
	// needed and enter it, so that relative appenddirname, dbfilename,
	// logfile and pidfile resolve under it.
	// Durably: a power cut must not undo the folder the log lives in.
	if err := aof.MkdirDurable(aof.OSFS{}, cfg.Dir(), 0o755); err != nil {
		return reportConfigError(&server.ConfigError{Reason: fmt.Sprintf("Can't create dir '%s': %s", cfg.Dir(), strerror(err))})
	}
	if err := os.Chdir(cfg.Dir()); err != nil {
		return reportConfigError(&server.ConfigError{Reason: fmt.Sprintf("Can't chdir to '%s': %s", cfg.Dir(), strerror(err))})
	}

	log, err := server.NewLogger(cfg)
	if err != nil {
		return reportConfigError(&server.ConfigError{Reason: err.Error()})
	}
	log.Warningf("oO0OoO0OoO0Oo Redshard is starting oO0OoO0OoO0Oo")
	log.Warningf("Redshard version=%s, redis_version=%s, bits=%d, go=%s, pid=%d, just started",
		server.Version, server.RedisVersion, strconv.IntSize, runtime.Version(), os.Getpid())
	if len(args) == 0 {
		log.Warningf("Warning: no config file specified, using the default config. In order to specify a config file use %s /path/to/redis.conf", prog)
	} else {
		log.Warningf("Configuration loaded")
	}
	// cfg.Warnings() are logged by server.Run.

	if background || cfg.PidFile() != "" {
		pidfile := cfg.PidFile()
		if pidfile == "" {
			pidfile = defaultPidFile
		}
		// Best effort, as in Redis.
		if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			log.Warningf("Failed to write PID file: %s", strerror(err))
		} else {
			defer os.Remove(pidfile)
		}
	}

	stopProfiles := startProfiles(log)
	defer stopProfiles()
	if err := server.Run(cfg, log); err != nil {
		// One log line per line of the error, each with its prefix (a
		// failed load reports several, as Redis's rdbReportError does).
		for _, line := range strings.Split(err.Error(), "\n") {
			log.Warningf("%s", line)
		}
		return 1
	}
	return 0
}

// startProfiles honours REDSHARD_CPUPROFILE (a CPU profile written until
// the server stops), REDSHARD_TRACE (an execution trace, `go tool trace`,
// written until the server stops: where a loop waited) and
// REDSHARD_MEMPROFILE (an allocation profile written at exit), for `make
// profile`.
func startProfiles(log *server.Logger) func() {
	var stops []func()
	// A recording written until the server stops: started on the file
	// named by env, stopped (and the file closed) by the returned stops.
	record := func(env, what string, start func(io.Writer) error, stop func()) {
		name := os.Getenv(env)
		if name == "" {
			return
		}
		f, err := os.Create(name)
		if err == nil {
			if err = start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			log.Warningf("cannot write %s %s: %v", what, name, err)
			return
		}
		stops = append(stops, func() { stop(); f.Close() })
	}
	record("REDSHARD_CPUPROFILE", "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
	record("REDSHARD_TRACE", "execution trace", trace.Start, trace.Stop)
	if name := os.Getenv("REDSHARD_MEMPROFILE"); name != "" {
		runtime.MemProfileRate = 64 << 10
		stops = append(stops, func() {
			f, err := os.Create(name)
			if err != nil {
				log.Warningf("cannot write memory profile %s: %v", name, err)
				return
			}
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// readsStdin mirrors redis-server: a lone "-" as the first or the last
// argument reads the configuration from stdin.
func readsStdin(args []string) bool {
	for j, a := range args {
		if a == "-" && (j == 0 || j == len(args)-1) {
			return true
		}
	}
	return false
}

// reportConfigError prints a configuration error the way redis-server does
// (the FATAL CONFIG FILE ERROR report on stderr, other start-up errors as a
// log line on stdout) and returns the exit status.
func reportConfigError(err error) int {
	var ce *server.ConfigError
	if errors.As(err, &ce) {
		fmt.Fprintf(os.Stderr, "\n%s\n", ce.Error())
		return 1
	}
	server.NewLoggerTo(os.Stdout, nil).Warningf("%s", err)
	return 1
}

// supervised mirrors redisIsSupervised: upstart and systemd supervision
// (explicit or "auto"-detected from the environment) disable daemonizing.
func supervised(cfg *server.Config) bool {
	upstart := os.Getenv("UPSTART_JOB") != ""
	systemd := os.Getenv("NOTIFY_SOCKET") != ""
	switch cfg.Supervised() {
	case "upstart":
		return upstart
	case "systemd":
		return systemd
	case "auto":
		return upstart || systemd
	}
	return false
}

// daemonize starts a detached copy of this process with the same arguments
// and working directory, replaying the stdin config if there was one.
func daemonize(args []string, stdin []byte) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// cmd.Stdout and cmd.Stderr stay nil: /dev/null.
	var w *os.File
	if stdin != nil {
		r, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		defer r.Close()
		cmd.Stdin, w = r, pw
	}
	if err := cmd.Start(); err != nil {
		if w != nil {
			w.Close()
		}
		return err
	}
	if w != nil {
		_, err = w.Write(stdin)
		w.Close()
		if err != nil {
			return err
		}
	}
	return cmd.Process.Release()
}

func versionLine() string {
	sha, dirty := "00000000", "0"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if len(s.Value) >= 8 {
					sha = s.Value[:8]
				}
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "1"
				}
			}
		}
	}
	return fmt.Sprintf("redshard server v=%s redis_version=%s sha=%s:%s go=%s bits=%d build=%s/%s",
		server.Version, server.RedisVersion, sha, dirty, runtime.Version(), strconv.IntSize, runtime.GOOS, runtime.GOARCH)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: ./redshard-server [/path/to/redis.conf] [options] [-]
       ./redshard-server - (read config from stdin)
       ./redshard-server -v or --version
       ./redshard-server -h or --help

Examples:
       ./redshard-server (run the server with the embedded default conf)
       echo 'maxmemory 128mb' | ./redshard-server -
       ./redshard-server /etc/redis/6379.conf
       ./redshard-server --port 7777
       ./redshard-server --port 7777 --save "" --bind 127.0.0.1 ::1
       ./redshard-server /etc/myredis.conf --loglevel verbose -
       ./redshard-server /etc/myredis.conf --loglevel verbose

Without a config file the embedded default applies first: port 6379,
bind 127.0.0.1 -::1, dir ./data, appendonly yes, appendfsync everysec, save "".
`)
}

// strerror renders err like C's strerror ("No such file or directory").
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if s := errno.Error(); s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
