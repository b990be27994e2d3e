// Package server owns the network side of redshard: listeners and event
// loops, connections, the command table and dispatch (including cross-shard
// hops and transactions, see dispatch.go), admin commands and configuration.
// It must never touch a shard's data from a goroutine other than the shard's
// own loop, except as dispatch.go's transaction protocol allows.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/acl"
	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/failpoint"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// Version is redshard's own version; RedisVersion is the Redis version whose
// behaviour it implements (INFO redis_version, HELLO).
const (
	Version      = "0.1.0"
	RedisVersion = "7.0.15"
)

// Server is one redshard process.
type Server struct {
	forks  forkStats   // bgchild.go
	img    imageStats  // bgchild.go
	trk    serverTrack // CLIENT TRACKING (tracking.go)
	cfg    *Config
	tun    *shard.Tunables
	log    *Logger
	shards []*shard.Shard
	loops  []*Loop
	eng    gnet.Engine

	cmds    map[string]*Cmd
	cmdList []*Cmd
	acl     *acl.Registry // users and the ACL LOG (acl.go)

	ready      atomic.Bool
	loopMu     sync.Mutex
	loopByEL   map[gnet.EventLoop]*Loop
	probeToken string
	probes     []net.Conn
	probeUnix  string // the private socket the loops are found on without a TCP port
	tls        tlsServer

	nextClientID atomic.Int64
	nclients     atomic.Int64
	startTime    time.Time
	timing       bool // measure per-command time (commandstats usec, slowlog)

	stats       serverStats
	infoSampler instSampler // INFO's instantaneous rates and memory peak
	obs         obsState    // SLOWLOG, LATENCY, MONITOR, metrics (obs.go)

	persist *persist // the AOF, nil when appendonly is no
	rw      rewriteStatus
	save    saveStatus // BGSAVE, SAVE (snapshot.go)
	// rdbBase reads an RDB base during loadLog (load.go); nil otherwise.
	rdbBase func(r io.Reader) (int64, error)
	rwLimit rewriteLimiter // automatic rewrites after failures (loop 0)
	// aofFlushSleep is DEBUG AOF-FLUSH-SLEEP, in microseconds.
	aofFlushSleep atomic.Int64
	sysClient     *Client     // loop 0's internal client (automatic rewrites)
	logFailing    atomic.Bool // the AOF's last write or fsync failed
	load          loadState   // loading the AOF at start (persist.go)
	blk           serverBlocking
	repl          replState     // replication ids, offset and stream (repl.go)
	rs            replicaSide   // this server as a replica (replica.go)
	pause         pauseState    // CLIENT PAUSE (pause.go)
	fo            failoverState // FAILOVER (failover.go)

	stopping     atomic.Bool
	freeing      atomic.Bool   // a release of flushed memory is under way
	collecting   atomic.Bool   // a collection asked by a loop's cron is under way (background.go)
	stopCh       chan struct{} // closed when the loops are about to stop
	lsn          listeners     // sockets of CONFIG SET port/bind (listen.go)
	intake       intake        // gnet's sockets taken over while loops are stuck (hold.go)
	activeExpire atomic.Bool
	// The reply buffers' resizing (resizeReplyBuffer): on or off (DEBUG
	// REPLYBUFFER RESIZING), the period of a client's peak in ms (-1:
	// never reset; DEBUG REPLYBUFFER PEAK-RESET-TIME), and the counts of
	// INFO's reply_buffer_shrinks and reply_buffer_expands.
	replyResizeOff atomic.Bool
	replyPeakReset atomic.Int64
	replyShrinks   atomic.Int64
	replyExpands   atomic.Int64
	denyScriptsOff atomic.Bool // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands
	// configInExec: a CONFIG SET that parks every loop (configSetAllShards)
	// runs inside EXEC (Redis's server.in_exec for startAppendOnly).
	configInExec bool

	shut     shutdownState // SHUTDOWN and the shutdown signals (shutdown.go)
	sd       sdNotifier    // systemd notifications (sdnotify.go)
	lastSave atomic.Int64

	memStartup  int64           // used_memory_startup
	shardBudget atomic.Int64    // each shard's share of maxmemory; 0: no limit, -1: nothing fits
	cmem        serverClientMem // client eviction (clientmem.go)
	ps          pubsubRegistry  // pub/sub subscriptions (pubsub.go)
	procs       procs           // GOMAXPROCS policy (procs.go)
	oom         oomState        // oom-score-adj (oom.go)
	crash       crashState      // the crash report (crash.go)
	scripts     scriptRegistry  // EVAL's script bodies (script.go)
	funcs       funcRegistry    // FUNCTION's libraries (functions.go)
	busy        busyState       // scripts past busy-reply-threshold (busy.go)
	clus        *clusterState   // cluster mode, nil when cluster-enabled is no (cmd_cluster.go)
}

// serverStats are process-wide counters updated with atomics off the hot path.
type serverStats struct {
	connections   atomic.Int64
	rejectedConn  atomic.Int64
	netInput      atomic.Int64
	netOutput     atomic.Int64
	netReplInput  atomic.Int64 // total_net_repl_input_bytes
	netReplOutput atomic.Int64 // total_net_repl_output_bytes
	// unexpectedErrors: errors a replica's master client got
	// (unexpected_error_replies, dispatch.go's errorToMaster)
	unexpectedErrors atomic.Int64
}

// Loop is one event loop and the shard it owns.
type Loop struct {
	id   int
	srv  *Server
	el   gnet.EventLoop
	sh   *shard.Shard
	park chan struct{}

	clients map[int64]*Client

	trk        loopTrack    // CLIENT TRACKING delivery scratch (tracking.go)
	trkClients atomic.Int32 // tracking clients homed here

	x         Exec
	cmdCache  cmdCache // the last command looked up (commands.go)
	nowMs     int64
	nowValid  bool
	tick      int64 // nanotime at the end of the last command of this event
	tickValid bool
	inRead    bool // OnTraffic is running a client's input: flush defers its replies to the round's end

	stats loopStats
	ps    loopPubsub // inbox and notification queue (pubsub.go)
	obs   loopObs    // slowlog ring, latency histograms (obs.go)

	p         loopPersist
	rwWriter  *aof.BaseWriter  // this shard's part of a rewrite in progress (RESP base)
	rwChunks  *rdb.ChunkWriter // or of an RDB base (aof-use-rdb-preamble yes)
	rwJob     *aof.Rewrite
	snap      *loopSnap    // this shard's part of a BGSAVE in progress (snapshot.go)
	dirtyPub  atomic.Int64 // stats.dirty as of the last cron, for the save schedule
	rwStep    gnet.Runnable
	imgDelay  int64        // rdb-key-save-delay when the image started (rewrite.go)
	imgGen    atomic.Int64 // counts the images started, for delayStep and rwLater
	rwRun     time.Time    // start of the rewrite steps run since the loop last served a client (rewrite.go)
	rwReads   int64        // stats.reads at the last step
	rwBusy    bool         // clients were served lately: short runs and steps (rewrite.go)
	rwServed  time.Time    // when a run last found that clients had been served
	heldCount atomic.Int32 // clients whose replies wait for the log
	blk       loopBlocking
	cmem      loopClientMem // its clients' memory (clientmem.go)

	bp loopBusyPoll // waiting for the next round before sleeping (busypoll.go)

	cronRunnable gnet.Runnable
	timeoutCheck time.Time
	cronBusy     atomic.Bool
	gcMark       heapMark // what the shard had left on the Go heap at the last collection asked (background.go)

	pfKeys   [][]byte // prefetch.go: keys of the commands about to run
	pfFields [][]byte // prefetch.go: hash fields of the commands about to run
	pfSink   uint64   // keeps the prefetch loads alive

	lua loopScripts // interpreters and the running script (script.go, functions.go)
	// busyMu, parked and loadHold: the watchdog serves this loop's clients
	// while a busy script or a DEBUG LOADAOF keeps it stuck (busy.go).
	busyMu   sync.Mutex
	parked   atomic.Bool
	loadHold atomic.Bool // this loop is replaying the log for DEBUG LOADAOF (persist.go)

	curCl   *Client  // the client whose command runs, for the crash report (crash.go)
	curArgv [][]byte // and its command
}

// Exec is the context of one command: the data-command context plus, for
// server commands, the client, its loop and the server.
type Exec struct {
	shard.Ctx
	mask      uint64 // the shards the running command may touch
	cl        *Client
	loop      *Loop
	srv       *Server
	hop       *hop // the run being executed for a client of another loop, or nil
	dropReply bool
	running   *Cmd // the command being run (Loop.call)
	// escalate: a script stopped to run again with every shard
	// (script.go); the command's reply and statistics are dropped.
	escalate bool
	// mayWiden: the command is a run's, which may be sent again over every
	// shard to evict (makeRoomOr, memory.go).
	mayWiden bool
	// errCounted: the error reply was counted in errorstats already (a
	// script passing on the error of a command it called).
	errCounted bool
	waitFor    *replWait // a WAIT that blocks (repl_wait.go)
	// trk: remember the keys of a read-only command for cl's tracking
	// (tracking.go), decided at home per command.
	trk bool
	// as is the client a command runs for when cl is nil (a blocked
	// client being served), for its invalidations (tracking.go).
	as       int64
	shutWait bool // a SHUTDOWN that waits (shutdown.go)
}

func (x *Exec) reset(cl *Client, db, proto int, ms int64) {
	x.cl = cl
	x.DB = db
	x.Proto = proto
	x.NowMs = ms
	x.dropReply = false
	x.mayWiden = false
	x.Held = 0 // set with mask by the runs that hold shards (dispatch.go)
}

// Run starts the server and blocks until it shuts down.
func Run(cfg *Config, log *Logger) error {
	n := cfg.Shards()
	if n > 64 {
		n = 64 // a transaction's shard set is a uint64 mask
	}
	srv := &Server{
		cfg:       cfg,
		log:       log,
		loopByEL:  make(map[gnet.EventLoop]*Loop),
		startTime: time.Now(),
		timing:    true,
		stopCh:    make(chan struct{}),
	}
	// --failpoint: armed before anything is loaded, so a point can fire
	// in the middle of loading (LoadConfigFrom has checked them and
	// enable-failpoints).
	for _, fp := range cfg.Failpoints() {
		if err := failpoint.SetArg(fp); err != nil {
			return fmt.Errorf("failpoint: %w", err)
		}
		log.Warningf("Failpoint armed: %s", fp)
	}
	srv.lastSave.Store(time.Now().Unix())
	srv.activeExpire.Store(true)
	srv.replyPeakReset.Store(replyPeakResetDefault)
	srv.rw.lastSecs.Store(-1)
	srv.rw.lastOK.Store(true)
	srv.save.lastSecs.Store(-1)
	srv.save.failed.Store(false)
	srv.buildCommandTable()
	srv.initACL()
	if err := srv.loadACLUsers(); err != nil { // acl.go
		return err
	}
	srv.initTunables()
	srv.initBlocking(n)
	srv.repl.init(cfg.ReplBacklogSize())
	srv.rs.bootDB.Store(-1)
	for i := 0; i < n; i++ {
		sh := srv.newShard(i)
		srv.shards = append(srv.shards, sh)
		l := &Loop{id: i, srv: srv, sh: sh, park: make(chan struct{}, 1), clients: make(map[int64]*Client)}
		l.x.Shards = srv.shards
		l.x.loop = l
		l.x.srv = srv
		l.x.OutputFull = l.x.outputFull // obuf.go
		l.stats.init(len(srv.cmdList))
		srv.loops = append(srv.loops, l)
	}
	for _, l := range srv.loops {
		l.x.Shards = srv.shards
	}
	srv.initMemory()
	srv.initClientEviction() // maxmemory-clients (clientmem.go)
	if err := srv.initMaxclients(); err != nil {
		return err
	}
	srv.initPubsub()
	srv.initTracking()
	srv.initObs() // introspection state (obs.go)
	shard.OnFlush = srv.releaseMemory
	// Signals are caught from here on: a SIGTERM while the AOF opens or
	// loads is a shutdown like any other.
	srv.initShutdown()
	srv.initSupervised()    // sdnotify.go
	srv.initCrashHandlers() // crash.go
	go srv.busyWatch()      // long scripts (busy.go)
	srv.sysClient = srv.newSysClient()
	srv.initReplica() // the master client, the replica role (replica.go)
	// Cluster mode: nodes.conf, the slot map (cmd_cluster.go).
	if err := srv.initCluster(); err != nil {
		return err
	}
	if err := srv.openLog(); err != nil {
		// Redis prints its logo before it reads the AOF manifest, so
		// its log shows the banner and then the reason it exits; so
		// does redshard's, though it reads the manifest before it
		// listens (the start stops here, nothing was bound).
		srv.showBanner()
		return err
	}
	srv.initProcs()
	srv.fitProcs()
	var tok [16]byte
	_, _ = cryptoRand(tok[:])
	srv.probeToken = fmt.Sprintf("*2\r\n$15\r\n__redshard_probe\r\n$32\r\n%x\r\n", tok)

	addrs := srv.listenAddrs()
	if err := srv.checkListen(addrs); err != nil {
		return err
	}
	// gnet serves the start addresses and the unix socket itself (its
	// loops accept: the fast path for clients that connect per request);
	// addresses named later by CONFIG SET port or bind get sockets of
	// redshard's own (listen.go).
	gaddrs := addrs
	unixPath := cfg.UnixSocket()
	if unixPath != "" {
		if err := srv.checkUnixSocket(unixPath); err != nil {
			return err
		}
		gaddrs = append(append([]string(nil), addrs...), "unix://"+unixPath)
	}
	if len(gaddrs) == 0 && cfg.TLSPort() == 0 {
		return errors.New("Configured to not listen anywhere, exiting.")
	}
	if len(gaddrs) == 0 {
		// tls-port only: gnet still needs an address of its own to find
		// its loops on (discoverLoops), a unix socket nobody else knows;
		// its file is removed once the loops are found.
		srv.probeUnix = filepath.Join(os.TempDir(), fmt.Sprintf("redshard-%d-%x.sock", os.Getpid(), tok[:4]))
		_ = os.Remove(srv.probeUnix)
		gaddrs = []string{"unix://" + srv.probeUnix}
	}
	srv.log.Noticef("redshard %s (Redis %s compatible), pid %d, %d shards", Version, RedisVersion, os.Getpid(), n)
	for _, w := range cfg.Warnings() {
		srv.log.Warningf("WARNING %s", w)
	}

	// Before anything listens: clients of a small load wait for it
	// (persist.go's loadGate).
	srv.closeLoadGate()
	errc := make(chan error, 1)
	go func() {
		errc <- gnet.Rotate(srv, gaddrs,
			gnet.WithNumEventLoop(n),
			gnet.WithMulticore(true),
			gnet.WithReuseAddr(true),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithTCPKeepAlive(time.Duration(cfg.TCPKeepAlive())*time.Second),
			gnet.WithLoadBalancing(gnet.RoundRobin),
			gnet.WithTicker(true),
			gnet.WithLogger(gnetLogger{srv.log}),
		)
	}()
	err := srv.discoverLoops(errc)
	if srv.probeUnix != "" {
		_ = os.Remove(srv.probeUnix)
	}
	if err != nil {
		return err
	}
	srv.initListeners(addrs)
	if unixPath != "" {
		srv.lsn.unixStart = unixPath
	}
	if err := srv.initTLS(); err != nil {
		return err
	}
	if unixPath != "" {
		if perm := cfg.UnixSocketPerm(); perm != 0 {
			_ = os.Chmod(unixPath, perm) // unchecked, as in Redis's anetUnixServer
		}
		defer os.Remove(unixPath) // Redis unlinks it at exit
		srv.log.Noticef("The server is now ready to accept connections at %s", unixPath)
	}
	srv.showBanner() // after the sockets are bound, as Redis: scripts wait for its PID line
	// The listeners are up: clients connect while the AOF loads, and get
	// -LOADING until it is loaded (persist.go).
	srv.startLoading()
	srv.initOOMScoreAdj()
	srv.initBgChild()
	srv.ready.Store(true)
	srv.load.gate.release()
	srv.startBackground()
	srv.startReplicaAtBoot()                   // replicaof in the config (replica.go)
	if err := srv.startMetrics(); err != nil { // Prometheus endpoint (metrics.go)
		srv.log.Warningf("Could not start the metrics endpoint: %v", err)
	}

	select {
	case err := <-errc:
		return err
	case err := <-srv.load.failed:
		// Redis exits when the AOF can't be loaded; the files stay as
		// they are for redshard-check-aof.
		srv.stopping.Store(true)
		close(srv.stopCh)
		_ = srv.eng.Stop(context.Background())
		return err
	case <-srv.shut.exitReq:
	}
	// The loops stay parked: the process exits when Run returns.
	srv.finishExit()
	return nil
}

// listenAddrs returns the TCP addresses bind and port name, as gnet-style
// "tcp4://host:port" strings. An empty bind, or port 0, listens on no TCP
// address, as in Redis 7.0.
func (srv *Server) listenAddrs() []string {
	port := srv.cfg.Port()
	binds := srv.cfg.Bind()
	if port == 0 {
		return nil
	}
	var addrs []string
	for _, b := range binds {
		optional := strings.HasPrefix(b, "-")
		b = strings.TrimPrefix(b, "-")
		switch b {
		case "*":
			addrs = append(addrs, "tcp4://0.0.0.0:"+strconv.Itoa(port))
		case "::*":
			if !optional {
				addrs = append(addrs, "tcp6://[::]:"+strconv.Itoa(port))
			}
		default:
			if strings.Contains(b, ":") {
				if optional && !ipv6Available() {
					continue
				}
				addrs = append(addrs, "tcp6://["+b+"]:"+strconv.Itoa(port))
			} else {
				addrs = append(addrs, "tcp4://"+b+":"+strconv.Itoa(port))
			}
		}
	}
	return addrs
}

// checkUnixSocket replaces a stale socket file and tries the path before
// gnet binds it, so that a path that can't be listened on stops the start
// with Redis's message.
func (srv *Server) checkUnixSocket(path string) error {
	_ = os.Remove(path) // as Redis: a stale socket file is replaced
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("Failed opening Unix socket: bind: %s", aof.Strerror(err))
	}
	l.Close() // (removes the file)
	_ = os.Remove(path)
	return nil
}

// checkListen tries each address before the event loops take them, so that
// a port in use stops the start with Redis's messages rather than an error
// from deep inside the event loop library.
func (srv *Server) checkListen(addrs []string) error {
	for _, a := range addrs {
		network, hostport, _ := strings.Cut(a, "://")
		l, err := net.Listen(network, hostport)
		if err != nil {
			var msg string
			if errors.Is(err, syscall.EADDRINUSE) {
				msg = "bind: Address already in use"
			} else {
				msg = err.Error()
			}
			host, port, _ := net.SplitHostPort(hostport)
			srv.log.Warningf("Warning: Could not create server TCP listening socket %s:%s: %s", host, port, msg)
			return fmt.Errorf("Failed listening on port %d (TCP), aborting.", srv.cfg.Port())
		}
		l.Close()
	}
	return nil
}

func ipv6Available() bool {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// discoverLoops learns which gnet loop is which: gnet does not list its
// loops, so we open one internal connection per loop (round-robin places the
// k-th connection on loop k) and each announces itself with a token; the
// loops are numbered in the order they are found, and loop i owns shard i.
func (srv *Server) discoverLoops(errc chan error) error {
	network, addr := "tcp", srv.dialAddr()
	if len(srv.listenAddrs()) == 0 { // unix socket only
		network, addr = "unix", srv.cfg.UnixSocket()
		if srv.probeUnix != "" {
			addr = srv.probeUnix
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		srv.loopMu.Lock()
		found := len(srv.loopByEL)
		srv.loopMu.Unlock()
		if found == len(srv.loops) {
			return nil
		}
		select {
		case err := <-errc:
			if err == nil {
				err = errors.New("event loops stopped")
			}
			return err
		default:
		}
		if time.Now().After(deadline) {
			return errors.New("could not reach every event loop")
		}
		// As many probes as loops are still unknown, back to back: n
		// consecutive connections land on n different loops, wherever
		// round-robin stands (a client connecting meanwhile shifts it, which
		// one probe at a time paid for with a wait each).
		dialed := 0
		for k := found; k < len(srv.loops); k++ {
			c, err := net.DialTimeout(network, addr, time.Second)
			if err != nil {
				break
			}
			srv.probes = append(srv.probes, c)
			_, _ = c.Write([]byte(srv.probeToken))
			dialed++
		}
		if dialed == 0 {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		for t := 0; t < 100; t++ {
			srv.loopMu.Lock()
			now := len(srv.loopByEL)
			srv.loopMu.Unlock()
			if now == len(srv.loops) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func (srv *Server) dialAddr() string {
	for _, b := range srv.cfg.Bind() {
		b = strings.TrimPrefix(b, "-")
		switch b {
		case "*", "0.0.0.0":
			return "127.0.0.1:" + strconv.Itoa(srv.cfg.Port())
		case "::*", "::":
			continue
		default:
			return net.JoinHostPort(b, strconv.Itoa(srv.cfg.Port()))
		}
	}
	return "127.0.0.1:" + strconv.Itoa(srv.cfg.Port())
}

// gnet event handlers.

func (srv *Server) OnBoot(eng gnet.Engine) gnet.Action {
	srv.eng = eng
	return gnet.None
}

func (srv *Server) OnShutdown(gnet.Engine) {}

func (srv *Server) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	cl := &Client{c: c, srv: srv}
	switch t := c.Context().(type) {
	case *heldConn:
		// Served while every loop was stuck (hold.go): the client is
		// adopted as it is (id, user, protocol, a command begun).
		cl = t.cl
		cl.c = c
		if len(cl.busyIn) > 0 || cl.tls != nil {
			// Commands read and not run yet, or plaintext its session
			// holds: a wake-up serves them (OnTraffic, onData).
			_ = c.Wake(nil)
		}
	case *tlsConn:
		cl.tls = t
		// The handshake may have read the client's first commands with
		// its last record: a wake-up serves them (OnTraffic).
		_ = c.Wake(nil)
	}
	c.SetContext(cl)
	if !srv.ready.Load() {
		cl.pending = true // a probe, or a client that came very early
		return nil, gnet.None
	}
	if msg := srv.admit(c.RemoteAddr()); msg != "" {
		cl.internal = true // never registered
		if cl.tls != nil {
			return append([]byte(nil), cl.tls.seal([]byte(msg))...), gnet.Close
		}
		return []byte(msg), gnet.Close
	}
	srv.openClient(cl)
	return nil, gnet.None
}

// admit returns the error a new connection gets instead of service, or "":
// maxclients, then protected mode, in Redis's order and words.
func (srv *Server) admit(remote net.Addr) string {
	if srv.nclients.Load()+srv.intake.held.Load() >= srv.cfg.MaxClients() {
		srv.stats.rejectedConn.Add(1)
		return "-ERR max number of clients reached\r\n"
	}
	if srv.cfg.ProtectedMode() && srv.acl.Default().Load().NoPass() && !isLoopback(remote) {
		srv.stats.rejectedConn.Add(1)
		return protectedModeError
	}
	return ""
}

func isLoopback(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return true // unix sockets are local
}

const protectedModeError = "-DENIED Redis is running in protected mode because protected " +
	"mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you " +
	"may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command " +
	"'CONFIG SET protected-mode no' from the loopback interface " +
	"by connecting to Redis from the same host the server is " +
	"running, however MAKE SURE Redis is not publicly accessible " +
	"from internet if you do so. Use CONFIG REWRITE to make this " +
	"change permanent. " +
	"2) Alternatively you can just disable the protected mode by " +
	"editing the Redis configuration file, and setting the protected " +
	"mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart " +
	"it with the '--protected-mode no' option. " +
	"4) Setup a an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for " +
	"the server to start accepting connections from the outside.\r\n"

func (srv *Server) openClient(cl *Client) {
	cl.loop = srv.loopOf(cl.c.EventLoop())
	if cl.id == 0 { // else a held connection's client, made by initClient (hold.go)
		srv.initClient(cl)
	}
	cl.bindRunnables()
	cl.loop.clients[cl.id] = cl
	srv.nclients.Add(1)
	srv.stats.connections.Add(1)
	cl.pending = false
}

// initClient gives a new client its id and defaults.
func (srv *Server) initClient(cl *Client) {
	cl.id = srv.nextClientID.Add(1)
	cl.proto = 2
	cl.created = time.Now()
	cl.lastInteraction = cl.created
	cl.parser.Limits = srv.protoLimits()
	cl.user = srv.acl.Default()
	cl.setAuthenticated(srv.defaultAuthenticated())
}

func (srv *Server) loopOf(el gnet.EventLoop) *Loop {
	srv.loopMu.Lock()
	defer srv.loopMu.Unlock()
	return srv.loopByEL[el]
}

func (srv *Server) protoLimits() resp.Limits {
	lim := resp.DefaultLimits()
	lim.MaxBulkLen = srv.cfg.ProtoMaxBulkLen()
	return lim
}

func (srv *Server) OnClose(c gnet.Conn, _ error) gnet.Action {
	cl, _ := c.Context().(*Client)
	if cl == nil || cl.closed {
		return gnet.None
	}
	cl.closed = true
	if cl.loop != nil && !cl.internal {
		delete(cl.loop.clients, cl.id)
		srv.nclients.Add(-1)
		cl.onClose()
	}
	return gnet.None
}

// probing reports whether c is one of the loops' discovery probes, which
// run before the server is ready (discoverLoops).
func (srv *Server) probing(c gnet.Conn, cl *Client) bool {
	if !cl.pending || srv.ready.Load() {
		return false
	}
	b, _ := c.Peek(-1)
	return string(b) == srv.probeToken
}

func (srv *Server) OnTraffic(c gnet.Conn) gnet.Action {
	cl := c.Context().(*Client)
	defer func() { // a panic is reported as Redis reports a crash (crash.go)
		if r := recover(); r != nil {
			srv.crashFromPanic(r, cl.loop)
		}
	}()
	if srv.load.gate.closed.Load() && !cl.internal && !srv.probing(c, cl) {
		// A small data set is loading at start: the client's bytes stay
		// unread until it is loaded (persist.go's loadGate).
		if cl.gateWait || srv.load.gate.wait(c) {
			cl.gateWait = true
			return gnet.None
		}
	}
	cl.gateWait = false
	data, _ := c.Next(-1)
	if cl.tls != nil {
		data = cl.tls.read(data)
		if out := cl.tls.p.takeOut(); len(out) > 0 {
			_, _ = c.Write(out) // an alert, a key update
		}
		if cl.tls.err != nil && len(data) == 0 {
			return gnet.Close // close_notify, a bad record
		}
	}
	if cl.pending {
		if !srv.ready.Load() && string(data) == srv.probeToken {
			srv.loopMu.Lock()
			if _, ok := srv.loopByEL[c.EventLoop()]; !ok {
				l := srv.loops[len(srv.loopByEL)]
				l.el = c.EventLoop()
				srv.loopByEL[l.el] = l
			}
			srv.loopMu.Unlock()
			cl.internal = true
			return gnet.None
		}
		if cl.internal {
			return gnet.None
		}
		if !srv.ready.Load() {
			cl.send([]byte("-LOADING Redis is loading the dataset in memory\r\n"))
			return gnet.None
		}
		if msg := srv.admit(c.RemoteAddr()); msg != "" {
			cl.internal = true
			cl.send([]byte(msg))
			return gnet.Close
		}
		srv.openClient(cl)
	}
	if cl.internal {
		return gnet.None
	}
	l := cl.loop
	if l.cmem.evictQueued {
		// A client served earlier in this round put the clients over
		// maxmemory-clients: evict before serving this one (Redis's
		// evictClients in processCommand).
		l.evictNow()
		if cl.evicted || cl.closed {
			return gnet.None
		}
	}
	l.tickValid = false
	srv.stats.netInput.Add(int64(len(data)))
	l.stats.reads++
	// One clock read serves the client's last interaction and the
	// commands' time snapshot (batchNow); time.Now is 65 ns here.
	now := time.Now()
	l.busyPollWoke(c, now)
	if cl.tls != nil {
		l.bp.tls = true
	}
	cl.lastInteraction = now
	cl.qroom = true // Redis's query buffer makes room for a read (querybuf.go)
	l.nowMs, l.nowValid = now.UnixMilli(), true
	l.sh.SetNow(l.nowMs)
	l.inRead = true
	if srv.trk.shared.Clients.Load() > 0 && l.trackLimit() {
		l.trackFlush(1<<uint(l.id), 0) // the invalidations go before the replies
	}
	cl.onData(data)
	l.inRead = false
	l.deferEnd()
	return gnet.None
}

func (srv *Server) OnTick() (time.Duration, gnet.Action) {
	return time.Second, gnet.None
}

// flush ends the client's batch. Replies to what the loop read in this
// poll round are written when the round ends (deferEnd), after the log
// submission if there is a log (persist.go), so that the clients served in
// a round get their replies together, as Redis writes them in beforeSleep:
// MSET(10) -P 1 with 50 clients ran 15% faster on 15% less CPU, its p99
// 1.3-1.4 ms instead of 1.7-2.7 ms. Without a log, replies made outside a
// read (a hop coming back, a timeout, a publish from another loop) are
// written at once.
func (cl *Client) flush() {
	if cl.srv.persist == nil && !cl.loop.inRead {
		cl.writeOut()
		return
	}
	if !cl.hopOut && !cl.closed && (cl.obs.obufKill || !cl.closing && cl.noteOutput()) {
		// Over its output buffer limits: closed now, before the next
		// client is served, as Redis frees a client marked CLOSE_ASAP
		// after its read (beforeNextClient); its memory never makes
		// another client evicted.
		cl.writeOut()
		return
	}
	if !cl.inFlush {
		cl.inFlush = true
		cl.loop.p.flushList = append(cl.loop.p.flushList, cl)
	}
	// The replies wait in cl.out for the round's end: account them now, so
	// that the next client served in this round finds the clients over
	// maxmemory-clients evicted (OnTraffic), as Redis accounts a client
	// after its commands and evicts before the next command; maxmemory
	// counts them too. With neither set, writeOut's accounting is enough.
	if cl.srv.shardBudget.Load() != 0 || cl.srv.cfg.maxmemoryClients.Load() != 0 {
		cl.accountMem()
	}
}

// writeOut writes the batch's replies, once, and closes the connection if
// the client asked for it (QUIT, protocol error, CLIENT KILL).
func (cl *Client) writeOut() {
	if cl.c == nil { // the internal client: nobody reads its replies
		cl.out = cl.out[:0]
		if cl.rm != nil {
			cl.rm.settle() // the master client (replica.go)
		}
		return
	}
	if cl.rep != nil && len(cl.out) > 0 && !cl.closing {
		// A replica: its sender writes everything it gets, and a command
		// of its that answers something ends the link (Redis's
		// prepareClientToWrite for a replica).
		cl.srv.log.Warningf("Replica generated a reply to command '%s', disconnecting it: %s", cl.lastCmd, cl.infoLine())
		cl.closing = true
	}
	if cl.rep != nil {
		cl.out = cl.out[:0]
	}
	cl.beforeWrite() // MONITOR lines held for it, output buffer limits (obuf.go)
	if len(cl.out) > 0 && !cl.closed {
		cl.srv.stats.netOutput.Add(int64(len(cl.out)))
		cl.loop.stats.writes++
		// reply-write / reply-written: on the client's loop, so sleep
		// stalls that loop's clients. "Written" is Conn.Write returned:
		// the kernel has the bytes, or gnet's outbound buffer when the
		// socket is full.
		failpoint.Inject(failpoint.ReplyWrite)
		cl.send(cl.out)
		failpoint.Inject(failpoint.ReplyWritten)
		cl.outPeak = max(cl.outPeak, len(cl.out))
		if cap(cl.out) > 64<<10 {
			cl.out = nil
		} else {
			cl.out = cl.out[:0]
		}
	}
	cl.accountMem()
	if cl.closing && !cl.closed && !cl.hopOut {
		cl.closed = true
		_ = cl.c.CloseWithCallback(nil)
		if !cl.internal {
			delete(cl.loop.clients, cl.id)
			cl.srv.nclients.Add(-1)
			cl.onClose()
		}
	}
}

func (cl *Client) closeNow() {
	cl.out = cl.out[:0]
	cl.closing = true
}

func (cl *Client) protocolError(err error) {
	cl.out = resp.AppendError(cl.out, "ERR "+err.Error())
	cl.srv.log.Verbosef("Protocol error (%s) from client: %s", err.Error(), cl.infoLine())
	cl.closing = true
}

type gnetLogger struct{ l *Logger }

func (g gnetLogger) Debugf(string, ...any) {}
func (g gnetLogger) Infof(string, ...any)  {}
func (g gnetLogger) Warnf(f string, a ...any) {
	g.l.Verbosef("gnet: "+f, a...)
}
func (g gnetLogger) Errorf(f string, a ...any) { g.l.Warningf("gnet: "+f, a...) }
func (g gnetLogger) Fatalf(f string, a ...any) { g.l.Warningf("gnet: "+f, a...) }
