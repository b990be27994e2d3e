package server

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// bannerArt is redshard's start banner, in the shape of the ASCII logo
// redis-server 7.0 prints (asciilogo.h): the version, the mode, the port and
// the PID on the right, the PID line exactly as Redis's (" PID: <pid>"),
// which scripts and Redis's test harness look for.
const bannerArt = "" +
	"                _._                                                  \n" +
	"           _.-``__ ''-._                                             \n" +
	"      _.-``    `.  `_.  ''-._           redshard %s (Redis %s compatible) %d bit\n" +
	"  .-`` .-```.  ```\\/    _.,_ ''-._                                  \n" +
	" (    '      ,       .-`  | `,    )     Running in %s mode, shards: %d\n" +
	" |`-._`-...-` __...-.``-._|'` _.-'|     Port: %d\n" +
	" |    `-._   `._    /     _.-'    |     PID: %d\n" +
	"  `-._    `-._  `-./  _.-'    _.-'                                   \n" +
	" |`-._`-._    `-.__.-'    _.-'_.-'|                                  \n" +
	" |    `-._`-._        _.-'_.-'    |     one loop per shard,          \n" +
	"  `-._    `-._`-.__.-'_.-'    _.-'      one fsync per batch          \n" +
	" |`-._`-._    `-.__.-'    _.-'_.-'|                                  \n" +
	" |    `-._`-._        _.-'_.-'    |                                  \n" +
	"  `-._    `-._`-.__.-'_.-'    _.-'                                   \n" +
	"      `-._    `-.__.-'    _.-'                                       \n" +
	"          `-._        _.-'                                           \n" +
	"              `-.__.-'                                               \n\n"

// showBanner is Redis's redisAsciiArt, called once the listening sockets
// are bound: the banner (to the log, as a raw message) when always-show-logo
// is set, or when the log is standard output, a terminal, and syslog is
// off; otherwise the one-line "Running mode=..., port=...." notice.
func (srv *Server) showBanner() {
	mode := srv.redisMode() // cmd_cluster.go
	syslog, _ := srv.cfg.GetValue("syslog-enabled")
	show := srv.cfg.AlwaysShowLogo() ||
		(syslog != "yes" && srv.cfg.LogFile() == "" && isTerminal(os.Stdout))
	if !show {
		srv.log.Noticef("Running mode=%s, port=%d.", mode, srv.bannerPort())
		return
	}
	srv.log.Raw(LogLevelNotice, fmt.Sprintf(bannerArt, Version, RedisVersion, strconv.IntSize,
		mode, len(srv.loops), srv.bannerPort(), os.Getpid()))
}

// bannerPort is the port the banner names: port, or tls-port when port
// is 0 (Redis's server.port ? server.port : server.tls_port).
func (srv *Server) bannerPort() int {
	if p := srv.cfg.Port(); p != 0 {
		return p
	}
	return srv.cfg.TLSPort()
}

// isTerminal is isatty(3).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
