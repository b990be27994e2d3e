package server

import (
	"crypto/rand"
	"net"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/acl"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// Client is one connection. It is owned by its home loop: only that loop's
// goroutine touches it, except the hop it has in flight (dispatch.go) and
// while a cross-shard transaction that has taken every loop reads it (CLIENT
// LIST).
type Client struct {
	trk clientTrack // CLIENT TRACKING (tracking.go)
	// trkMemo: the key the client's last tracked read remembered, on which
	// shard and at which TrackEpoch; while both hold, its ref is in the
	// key's entry and a read of the same key need not look (trackKeys).
	// Used by the loop running the client's command.
	trkMemo struct {
		sh    *shard.Shard
		epoch uint64
		key   []byte
	}
	c    gnet.Conn
	tls  *tlsConn // a TLS client's session (tls.go), nil for plaintext
	srv  *Server
	loop *Loop
	id   int64

	db            int
	proto         int
	name          string
	libName       string
	libVer        string
	authenticated bool
	// user is the ACL user it runs as (acl.go); aclDenied and aclPos keep
	// the last denial of check for route to log.
	user          *acl.User
	aclDenied     acl.Result
	aclPos        int
	noEvict       bool
	noTouch       bool
	replyOff      bool
	replySkip     bool // drop the reply of the command being run (CLIENT REPLY SKIP)
	replySkipNext bool // CLIENT REPLY SKIP ran: replySkip for the next command

	created         time.Time
	lastInteraction time.Time
	lastCmd         string

	parser resp.Parser
	argv   [][]byte
	qbuf   []byte // unparsed input: gnet's buffer during a call, or ownBuf
	ownBuf []byte
	out    []byte
	// memAcct is what its loop's client memory holds for this client, and
	// memBucket its eviction bucket + 1, 0 if none (clientmem.go).
	memAcct   int64
	memBucket int8
	evicted   bool // closed by maxmemory-clients
	// stateAcct is the MULTI and subscription part of memAcct, kept while
	// a hop is out; evictDeferred: evicted while a hop was out, the notice
	// and the close wait for the hop.
	stateAcct     int64
	evictDeferred bool
	qpeak         int // the largest input of one read since the last cron (resizeQueryBuffer)
	// outPeak is the most the reply buffer held at a write since
	// outPeakAt, and outCap its capacity at the last cron
	// (resizeReplyBuffer).
	outPeak   int
	outPeakAt time.Time
	outCap    int
	qroom     bool // holds Redis's read room in its query buffer (querybuf.go)

	multi multiState // MULTI/EXEC and WATCH (multi.go)

	// What the busy watchdog read of a partial command while the loop was
	// stuck, handed to the loop with the next input (busy.go).
	busyIn     []byte
	busyParser resp.Parser

	hop           hop
	hopOut        bool
	escalated     bool    // its command just run at home was a script that must run over every shard (script.go)
	need          uint64  // log position its pending replies wait for (persist.go)
	waitingNow    bool    // also waits for its home loop's next submission
	held          bool    // replies written, waiting for the log
	inFlush       bool    // on the loop's flush list
	blocked       *waiter // blocked on a key (blocking.go)
	retryDeadline int64   // the deadline a retried blocking command keeps
	// failoverDrained: its PSYNC FAILOVER has waited for the link once
	// (failover.go waitForLink) and now goes on.
	failoverDrained bool
	hopRunnable     gnet.Runnable
	txRunnable      gnet.Runnable
	doneRunnable    gnet.Runnable

	pending  bool // not yet registered (connected before the loops were known)
	gateWait bool // its reads wait for a small load at start (persist.go's loadGate)
	internal bool // a loop-discovery connection
	closing  bool // close once the replies are written
	closed   bool
	killed   bool

	ps     *clientSubs // pub/sub subscriptions, nil until the first (pubsub.go)
	pushed bool        // the command's reply is pushes: CLIENT REPLY OFF keeps them

	obs clientObs // monitor state, output buffer limit clock (obs.go)

	replc *replConf   // what REPLCONF said (repl_master.go)
	rep   *replica    // set once it is a replica: its output is the sender's
	rm    *masterFeed // the master client of a replica: its stream (replica.go)
}

func (cl *Client) onClose() {
	cl.onCloseBlocked() // blocking.go
	cl.pubsubClose()
	cl.multiClose()
	cl.stopMonitor() // monitor.go
	cl.replicaClosed()
	cl.disableTracking() // tracking.go
	cl.dropMem()         // clientmem.go
}

// setAuthenticated records whether the client may run commands; until it
// may, the parser applies Redis's tighter limits for unauthenticated input.
func (cl *Client) setAuthenticated(ok bool) {
	cl.authenticated = ok
	cl.parser.Unauthenticated = !ok
}

// afterLocal and afterRemote record what a command did to client state that
// CLIENT LIST shows.
func (cl *Client) afterLocal(cmd *Cmd)  { cl.lastCmd = cmd.fullName }
func (cl *Client) afterRemote(cmd *Cmd) { cl.lastCmd = cmd.fullName }

// addr and laddr are CLIENT LIST's addr and laddr: host:port, or for a
// unix socket client the socket's path with port 0, as Redis shows it.
func (cl *Client) addr() string {
	if cl.c == nil {
		return ""
	}
	if cl.unixSocket() {
		return cl.srv.cfg.UnixSocket() + ":0"
	}
	if a := cl.c.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

func (cl *Client) laddr() string {
	if cl.c == nil {
		return ""
	}
	if cl.unixSocket() {
		return cl.srv.cfg.UnixSocket() + ":0"
	}
	if a := cl.c.LocalAddr(); a != nil {
		return a.String()
	}
	return ""
}

// unixSocket reports whether the client came through the unix socket.
func (cl *Client) unixSocket() bool {
	if cl.c == nil {
		return false
	}
	_, ok := cl.c.RemoteAddr().(*net.UnixAddr)
	return ok
}

// infoLine is CLIENT INFO / CLIENT LIST's line for this client
// (clientinfo.go).
func (cl *Client) infoLine() string { return cl.clientInfoString() }

func cryptoRand(b []byte) (int, error) { return rand.Read(b) }
