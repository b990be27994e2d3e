package server

// Pub/Sub and keyspace notifications.
//
// Registry. One registry for the whole server (srv.ps): channel -> clients,
// pattern -> clients and shard channel -> clients, behind one RWMutex that
// only pub/sub work takes (PUBLISH, SPUBLISH, the (un)subscribe commands,
// PUBSUB, a subscriber's disconnect, and keyspace notifications when a
// subscriber exists). Ordinary commands never take it: a notification first
// checks an atomic count of channels and patterns and returns when nobody
// listens. Each client's own subscriptions (cl.ps) belong to its home loop,
// as the rest of the client does; the subscribe commands run at home.
//
// Delivery. Every loop has an inbox: a mutex-guarded buffer of message
// frames with the client each is for. A publisher, still holding the
// registry's read lock, appends the message once per destination loop and
// one entry per receiving client, and if the inbox was empty queues one
// drain task to that loop (EventLoop.Execute). The drain runs on the
// subscriber's loop: it encodes each frame for the client's protocol at that
// moment (RESP2 array or RESP3 push), appends it to the client's output and
// writes it as any reply (or leaves it behind a hop in flight, or behind
// replies held for the log). Hence:
//   - a PUBLISH reaches every subscriber on every loop, and one publisher's
//     messages arrive in publish order (appends to an inbox are ordered by
//     its mutex, and a loop drains its inbox in order);
//   - anything that happens after a PUBLISH's reply (another command of the
//     publisher, on any loop) appends after it: causal order holds;
//   - the reply counts exactly the clients the message was appended for
//     (channel subscribers plus, per matching pattern, its subscribers, as
//     Redis counts);
//   - an (P|S)UNSUBSCRIBE or RESET drains its own loop's inbox after it has
//     changed the registry and before it replies: every message counted for
//     the client while it was subscribed is in its output before the
//     unsubscribe confirmation, as in Redis.
//
// Subscribed state (RESP2): only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING /
// QUIT / RESET pass Client.check; PING answers ["pong", arg]. In RESP3 every
// command is allowed and messages are push frames. Subscribe and unsubscribe
// confirmations are pushes: CLIENT REPLY OFF/SKIP does not drop them
// (cl.pushed, honoured by replyDone).
//
// Output limits. After a drain appends to a client, and once a second from
// the loop's cron, the client's unsent output (our buffer plus gnet's
// outbound buffer; CLIENT LIST omem) is checked against
// client-output-buffer-limit for its class (pubsub while subscribed), as
// Redis's checkClientOutputBufferLimits: over the hard limit, or over the
// soft limit for longer than the soft seconds, the client is closed and
// logged as Redis logs it. (The normal class is not enforced here: that
// check belongs where replies are written.)
//
// Keyspace notifications. A shard calls its OnNotify hook from DB.Notify on
// the loop that runs the command (the shard's own loop, or the executor of a
// cross-shard transaction, which installs its own hook on the shards it has
// taken: dispatch.go's runRemote). The hook never touches the keyspace and
// never blocks. Without an AOF it publishes at once. With one, the write a
// notification reveals may not be in the log yet (contract 4), so the
// running loop keeps the notification until its next log submission, which
// every path runs before a reply leaves the loop, and publishes it then with
// that batch's sequence: the subscriber's output waits for the log like a
// reply would (cl.need). A PUBLISH on a loop that still keeps notifications
// queues behind them, so one command stream's notifications and messages stay
// in order.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
	"github.com/redshard/redshard/resp"
	"github.com/redshard/redshard/shard"
)

// Message kinds, in the registry's three namespaces.
const (
	kindMessage  uint8 = iota // a channel subscriber: message
	kindPMessage              // a pattern subscriber: pmessage
	kindSMessage              // a shard channel subscriber: smessage
)

// pubsubRegistry is the server's subscriptions (see the top of the file).
type pubsubRegistry struct {
	mu       sync.RWMutex
	channels map[string]map[*Client]struct{}
	patterns map[string]*patternSubs
	shardChs map[string]map[*Client]struct{}
	// active is len(channels)+len(patterns), for notifications to skip all
	// work when nobody listens.
	active atomic.Int64
}

type patternSubs struct {
	pat     []byte
	clients map[*Client]struct{}
}

// clientSubs is a client's own subscriptions, owned by its home loop.
type clientSubs struct {
	channels map[string]struct{}
	patterns []string // in subscription order, as Redis's list
	shardChs map[string]struct{}
	// nameBytes is the length of every name above, the client's own copies
	// (its memory, clientmem.go).
	nameBytes int

	touched bool // on its loop's drain list
}

func (s *clientSubs) count() int      { return len(s.channels) + len(s.patterns) }
func (s *clientSubs) shardCount() int { return len(s.shardChs) }

// subscribed is Redis's CLIENT_PUBSUB flag.
func (cl *Client) subscribed() bool {
	return cl.ps != nil && cl.ps.count()+cl.ps.shardCount() > 0
}

func (cl *Client) subs() *clientSubs {
	if cl.ps == nil {
		cl.ps = &clientSubs{channels: map[string]struct{}{}, shardChs: map[string]struct{}{}}
	}
	return cl.ps
}

// loopPubsub is a loop's side of pub/sub.
type loopPubsub struct {
	in       inbox
	drainRun gnet.Runnable
	notifyFn func(db, class int, event string, key []byte)

	// drain scratch
	spareBuf  []byte
	spareEnts []inboxEnt
	touched   []*Client

	// publish scratch, used by whichever goroutine runs this loop's work
	targets [][]target // per destination loop
	woken   []int
	chanBuf []byte
	tail    []byte

	// With an AOF: notifications (and PUBLISHes behind them) waiting for
	// this loop's next log submission.
	notes    []byte
	noteEnts []note
}

type inbox struct {
	mu       sync.Mutex
	buf      []byte // message tails: bulk(channel) bulk(message)
	ents     []inboxEnt
	queued   bool        // a drain task is queued
	nonEmpty atomic.Bool // ents is not empty (read without the lock)
}

type inboxEnt struct {
	cl       *Client
	pat      []byte
	kind     uint8
	off, end int
	need     uint64 // log position the frame waits for (notifications)
	// tracking's entries (tracking.go): the client by id, and whose
	// change it was
	id, from int64
	self     bool
}

type target struct {
	cl   *Client
	pat  []byte
	kind uint8
}

// note is a notification (or a PUBLISH behind one) kept until the loop's
// next log submission: a (channel, message) pair in notes, or, for a
// keyspace event (publish false), the key and the event.
type note struct {
	publish    bool
	kind       uint8
	db         int
	event      string
	a0, a1, b1 int // notes[a0:a1] and notes[a1:b1]
}

func (srv *Server) initPubsub() {
	srv.ps.channels = map[string]map[*Client]struct{}{}
	srv.ps.patterns = map[string]*patternSubs{}
	srv.ps.shardChs = map[string]map[*Client]struct{}{}
	for _, l := range srv.loops {
		l := l
		l.ps.targets = make([][]target, len(srv.loops))
		l.ps.drainRun = gnet.RunnableFunc(func(context.Context) error {
			l.drainInbox(nil, true)
			l.deferEnd() // with an AOF, the clients written to flush with the round
			return nil
		})
		l.ps.notifyFn = l.notify
		l.sh.OnNotify = l.ps.notifyFn
	}
}

// ---------------------------------------------------------------------------
// Publishing and delivery
// ---------------------------------------------------------------------------

// publish sends msg on channel to every subscriber and returns how many
// received it. l is the running loop (its scratch is used). need is the log
// position the message waits for (0: none).
func (srv *Server) publish(l *Loop, kind uint8, channel, msg []byte, need uint64) int {
	ps := &srv.ps
	ps.mu.RLock()
	n := 0
	tg := l.ps.targets
	m := ps.channels
	if kind == kindSMessage {
		m = ps.shardChs
	}
	for cl := range m[string(channel)] {
		tg[cl.loop.id] = append(tg[cl.loop.id], target{cl: cl, kind: kind})
		n++
	}
	if kind == kindMessage {
		for _, p := range ps.patterns {
			if !shard.MatchGlob(p.pat, channel, false) {
				continue
			}
			for cl := range p.clients {
				tg[cl.loop.id] = append(tg[cl.loop.id], target{cl: cl, pat: p.pat, kind: kindPMessage})
				n++
			}
		}
	}
	if n > 0 {
		tail := resp.AppendBulk(l.ps.tail[:0], channel)
		tail = resp.AppendBulk(tail, msg)
		l.ps.tail = tail
		for i, ts := range tg {
			if len(ts) == 0 {
				continue
			}
			ib := &srv.loops[i].ps.in
			ib.mu.Lock()
			off := len(ib.buf)
			ib.buf = append(ib.buf, tail...)
			end := len(ib.buf)
			for j := range ts {
				ib.ents = append(ib.ents, inboxEnt{cl: ts[j].cl, pat: ts[j].pat, kind: ts[j].kind, off: off, end: end, need: need})
				ts[j] = target{}
			}
			ib.nonEmpty.Store(true)
			wake := !ib.queued
			ib.queued = true
			ib.mu.Unlock()
			tg[i] = ts[:0]
			if wake {
				l.ps.woken = append(l.ps.woken, i)
			}
		}
	}
	ps.mu.RUnlock()
	for _, i := range l.ps.woken {
		_ = srv.loops[i].post(srv.loops[i].ps.drainRun)
	}
	l.ps.woken = l.ps.woken[:0]
	return n
}

// receivers counts who would receive a message on channel now.
func (srv *Server) receivers(kind uint8, channel []byte) int {
	ps := &srv.ps
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	if kind == kindSMessage {
		return len(ps.shardChs[string(channel)])
	}
	n := len(ps.channels[string(channel)])
	for _, p := range ps.patterns {
		if shard.MatchGlob(p.pat, channel, false) {
			n += len(p.clients)
		}
	}
	return n
}

// drainInbox moves the loop's inbox into its clients' output. x is the
// command running on this loop when called from (P|S)UNSUBSCRIBE or RESET
// (its client's output is x.Out then), or nil from the drain task.
func (l *Loop) drainInbox(x *Exec, task bool) {
	ib := &l.ps.in
	ib.mu.Lock()
	buf, ents := ib.buf, ib.ents
	ib.buf, ib.ents = l.ps.spareBuf[:0], l.ps.spareEnts[:0]
	ib.nonEmpty.Store(false)
	if task {
		ib.queued = false
	}
	ib.mu.Unlock()
	var cur *Client
	if x != nil {
		cur = x.cl
	}
	for i := range ents {
		e := &ents[i]
		cl := e.cl
		if e.kind >= kindInval {
			l.drainTracking(x, e, buf[e.off:e.end]) // tracking.go
		} else if !cl.closed && !cl.closing {
			if cl == cur {
				x.Out = appendFrame(x.Out, cl.proto, e.kind, e.pat, buf[e.off:e.end])
			} else {
				cl.out = appendFrame(cl.out, cl.proto, e.kind, e.pat, buf[e.off:e.end])
			}
			if e.need > cl.need {
				cl.need = e.need
			}
			if cs := cl.ps; cs != nil && !cs.touched {
				cs.touched = true
				l.ps.touched = append(l.ps.touched, cl)
			}
		}
		*e = inboxEnt{}
	}
	// Keep the buffers for the next swap unless a burst made them large.
	if cap(buf) <= 1<<20 {
		l.ps.spareBuf, l.ps.spareEnts = buf[:0], ents[:0]
	} else {
		l.ps.spareBuf, l.ps.spareEnts = nil, nil
	}
	touched := l.ps.touched
	for i, cl := range touched {
		touched[i] = nil
		cl.ps.touched = false
		if cl == cur {
			continue
		}
		if !cl.hopOut && !cl.held {
			cl.flush()
		}
		cl.checkOutputLimit(true)
	}
	l.ps.touched = touched[:0]
}

// wakeInbox queues the drain task of the loop's inbox.
func (l *Loop) wakeInbox() {
	_ = l.post(l.ps.drainRun)
}

func appendFrame(b []byte, proto int, kind uint8, pat, tail []byte) []byte {
	switch kind {
	case kindPMessage:
		b = resp.AppendPushLen(b, 4, proto)
		b = append(b, "$8\r\npmessage\r\n"...)
		b = resp.AppendBulk(b, pat)
	case kindSMessage:
		b = resp.AppendPushLen(b, 3, proto)
		b = append(b, "$8\r\nsmessage\r\n"...)
	default:
		b = resp.AppendPushLen(b, 3, proto)
		b = append(b, "$7\r\nmessage\r\n"...)
	}
	return append(b, tail...)
}

// checkOutputLimit (obuf.go) applies client-output-buffer-limit after a
// delivery (async) and from pubsubCron.

// outputUsage is the client's unsent output: our buffer and gnet's
// outbound one (CLIENT LIST omem, Redis's getClientOutputBufferMemoryUsage).
func (cl *Client) outputUsage() int {
	n := len(cl.out)
	if cl.c != nil {
		n += cl.c.OutboundBuffered()
	}
	return n
}

// pubsubCron checks the output limits of the loop's subscribers (the soft
// limit is a matter of time) once a second.
func (l *Loop) pubsubCron() {
	for _, cl := range l.clients {
		if cl.ps != nil && !cl.hopOut {
			cl.checkOutputLimit(false)
		}
	}
}

// ---------------------------------------------------------------------------
// Keyspace notifications
// ---------------------------------------------------------------------------

// notify is the shards' OnNotify hook while this loop runs their commands
// (Redis's notifyKeyspaceEvent; DB.Notify has checked the class).
func (l *Loop) notify(db, class int, event string, key []byte) {
	srv := l.srv
	if srv.ps.active.Load() == 0 {
		return
	}
	if srv.persist != nil || l.scriptHolds() {
		// Keep it until the write it reveals is submitted to the log (or
		// the script that made it is sure to stay, script.go).
		a0 := len(l.ps.notes)
		l.ps.notes = append(l.ps.notes, key...)
		l.ps.noteEnts = append(l.ps.noteEnts, note{db: db, event: event, a0: a0, a1: len(l.ps.notes)})
		return
	}
	srv.publishEvent(l, db, event, key, 0)
}

// publishEvent publishes one keyspace event on the channels the K and E
// flags select.
func (srv *Server) publishEvent(l *Loop, db int, event string, key []byte, need uint64) {
	flags := srv.tun.NotifyFlags.Load()
	if flags&shard.NotifyKeyspace != 0 {
		ch := append(l.ps.chanBuf[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		ev := append(ch, event...) // the event's bytes, after the channel
		l.ps.chanBuf = ev
		srv.publish(l, kindMessage, ch, ev[len(ch):], need)
	}
	if flags&shard.NotifyKeyevent != 0 {
		ch := append(l.ps.chanBuf[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		l.ps.chanBuf = ch
		srv.publish(l, kindMessage, ch, key, need)
	}
}

// flushNotes publishes what the loop kept for its log submission seq (the
// notifications of the writes it just submitted, and PUBLISHes behind them).
func (l *Loop) flushNotes(seq uint64) {
	notes, ents := l.ps.notes, l.ps.noteEnts
	for i := range ents {
		n := &ents[i]
		if n.publish {
			l.srv.publish(l, n.kind, notes[n.a0:n.a1], notes[n.a1:n.b1], seq)
		} else {
			l.srv.publishEvent(l, n.db, n.event, notes[n.a0:n.a1], seq)
		}
		*n = note{}
	}
	l.ps.notes, l.ps.noteEnts = notes[:0], ents[:0]
	if cap(notes) > 1<<20 {
		l.ps.notes = nil
	}
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

var pubsubCommands = []serverCmd{
	{name: "subscribe", exec: cmdSubscribe, home: true},
	{name: "unsubscribe", exec: cmdUnsubscribe, home: true},
	{name: "psubscribe", exec: cmdPsubscribe, home: true},
	{name: "punsubscribe", exec: cmdPunsubscribe, home: true},
	{name: "ssubscribe", exec: cmdSsubscribe, home: true},
	{name: "sunsubscribe", exec: cmdSunsubscribe, home: true},
	{name: "publish", exec: cmdPublish},
	{name: "spublish", exec: cmdSpublish, home: true},
	{name: "pubsub|channels", exec: cmdPubsubChannels},
	{name: "pubsub|shardchannels", exec: cmdPubsubChannels},
	{name: "pubsub|numsub", exec: cmdPubsubNumsub},
	{name: "pubsub|shardnumsub", exec: cmdPubsubNumsub},
	{name: "pubsub|numpat", exec: cmdPubsubNumpat},
	{name: "pubsub|help", exec: cmdPubsubHelp},
}

// pubsubAllowed is what a RESP2 client may run while subscribed.
func pubsubAllowed(cmd *Cmd) bool {
	switch cmd.fullName {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe",
		"psubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// pubsubCheck is the error for a command a subscribed RESP2 client may not
// run, or "" (Redis's processCommand check).
func (cl *Client) pubsubCheck(cmd *Cmd) string {
	if cl.proto != 2 || !cl.subscribed() || pubsubAllowed(cmd) {
		return ""
	}
	return fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", cmd.fullName)
}

var (
	wordSubscribe    = "subscribe"
	wordUnsubscribe  = "unsubscribe"
	wordPsubscribe   = "psubscribe"
	wordPunsubscribe = "punsubscribe"
	wordSsubscribe   = "ssubscribe"
	wordSunsubscribe = "sunsubscribe"
)

// pushConfirm appends a (un)subscribe confirmation: [type, name, count];
// a nil name is a null (an unsubscribe from nothing).
func pushConfirm(x *Exec, typ string, name []byte, isNull bool, count int) {
	x.Out = resp.AppendPushLen(x.Out, 3, x.Proto)
	x.BulkStr(typ)
	if isNull {
		x.Null()
	} else {
		x.Bulk(name)
	}
	x.Int(int64(count))
}

func cmdSubscribe(x *Exec, argv [][]byte)  { x.srv.subscribe(x, argv[1:], kindMessage) }
func cmdPsubscribe(x *Exec, argv [][]byte) { x.srv.subscribe(x, argv[1:], kindPMessage) }
func cmdSsubscribe(x *Exec, argv [][]byte) { x.srv.subscribe(x, argv[1:], kindSMessage) }

func (srv *Server) subscribe(x *Exec, names [][]byte, kind uint8) {
	cl := x.cl
	cs := cl.subs()
	ps := &srv.ps
	ps.mu.Lock()
	for _, b := range names {
		name := string(b)
		switch kind {
		case kindMessage:
			if _, ok := cs.channels[name]; !ok {
				cs.channels[name] = struct{}{}
				cs.nameBytes += len(name)
				m := ps.channels[name]
				if m == nil {
					m = map[*Client]struct{}{}
					ps.channels[name] = m
					ps.active.Add(1)
				}
				m[cl] = struct{}{}
			}
			pushConfirm(x, wordSubscribe, b, false, cs.count())
		case kindPMessage:
			if !hasString(cs.patterns, name) {
				cs.patterns = append(cs.patterns, name)
				cs.nameBytes += len(name)
				p := ps.patterns[name]
				if p == nil {
					p = &patternSubs{pat: []byte(name), clients: map[*Client]struct{}{}}
					ps.patterns[name] = p
					ps.active.Add(1)
				}
				p.clients[cl] = struct{}{}
			}
			pushConfirm(x, wordPsubscribe, b, false, cs.count())
		case kindSMessage:
			if _, ok := cs.shardChs[name]; !ok {
				cs.shardChs[name] = struct{}{}
				cs.nameBytes += len(name)
				m := ps.shardChs[name]
				if m == nil {
					m = map[*Client]struct{}{}
					ps.shardChs[name] = m
				}
				m[cl] = struct{}{}
			}
			pushConfirm(x, wordSsubscribe, b, false, cs.shardCount())
		}
	}
	ps.mu.Unlock()
	cl.pushed = true
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// unsubscribeLocked removes one subscription of cl (ps.mu held) and reports
// whether it existed.
func (srv *Server) unsubscribeLocked(cl *Client, kind uint8, name string) bool {
	ps := &srv.ps
	cs := cl.ps
	switch kind {
	case kindMessage:
		if _, ok := cs.channels[name]; !ok {
			return false
		}
		delete(cs.channels, name)
		if m := ps.channels[name]; m != nil {
			delete(m, cl)
			if len(m) == 0 {
				delete(ps.channels, name)
				ps.active.Add(-1)
			}
		}
	case kindPMessage:
		i := -1
		for j, p := range cs.patterns {
			if p == name {
				i = j
				break
			}
		}
		if i < 0 {
			return false
		}
		cs.patterns = append(cs.patterns[:i], cs.patterns[i+1:]...)
		if p := ps.patterns[name]; p != nil {
			delete(p.clients, cl)
			if len(p.clients) == 0 {
				delete(ps.patterns, name)
				ps.active.Add(-1)
			}
		}
	case kindSMessage:
		if _, ok := cs.shardChs[name]; !ok {
			return false
		}
		delete(cs.shardChs, name)
		if m := ps.shardChs[name]; m != nil {
			delete(m, cl)
			if len(m) == 0 {
				delete(ps.shardChs, name)
			}
		}
	}
	cs.nameBytes -= len(name)
	return true
}

func cmdUnsubscribe(x *Exec, argv [][]byte)  { x.srv.unsubscribe(x, argv[1:], kindMessage) }
func cmdPunsubscribe(x *Exec, argv [][]byte) { x.srv.unsubscribe(x, argv[1:], kindPMessage) }
func cmdSunsubscribe(x *Exec, argv [][]byte) { x.srv.unsubscribe(x, argv[1:], kindSMessage) }

func (srv *Server) unsubscribe(x *Exec, names [][]byte, kind uint8) {
	cl := x.cl
	cs := cl.subs()
	typ := wordUnsubscribe
	switch kind {
	case kindPMessage:
		typ = wordPunsubscribe
	case kindSMessage:
		typ = wordSunsubscribe
	}
	count := func() int {
		if kind == kindSMessage {
			return cs.shardCount()
		}
		return cs.count()
	}
	type conf struct {
		name  string
		count int
	}
	var confs []conf
	ps := &srv.ps
	ps.mu.Lock()
	if len(names) > 0 {
		for _, b := range names {
			srv.unsubscribeLocked(cl, kind, string(b))
			confs = append(confs, conf{string(b), count()})
		}
	} else {
		var all []string
		switch kind {
		case kindMessage:
			for ch := range cs.channels {
				all = append(all, ch)
			}
		case kindPMessage:
			all = append(all, cs.patterns...)
		case kindSMessage:
			for ch := range cs.shardChs {
				all = append(all, ch)
			}
		}
		for _, name := range all {
			srv.unsubscribeLocked(cl, kind, name)
			confs = append(confs, conf{name, count()})
		}
	}
	ps.mu.Unlock()
	// Messages counted for this client while it was subscribed go first.
	x.loop.drainInbox(x, false)
	if len(names) == 0 && len(confs) == 0 {
		pushConfirm(x, typ, nil, true, count())
	}
	for _, c := range confs {
		x.Out = resp.AppendPushLen(x.Out, 3, x.Proto)
		x.BulkStr(typ)
		x.BulkStr(c.name)
		x.Int(int64(c.count))
	}
	cl.pushed = true
}

// pubsubReset drops every subscription of the client (RESET): the
// messages already counted for it are delivered first.
func (x *Exec) pubsubReset() {
	if x.cl.ps == nil {
		return
	}
	x.srv.dropSubscriptions(x.cl)
	x.loop.drainInbox(x, false)
}

// dropSubscriptions removes every subscription of cl from the registry
// (RESET, disconnect).
func (srv *Server) dropSubscriptions(cl *Client) {
	cs := cl.ps
	if cs == nil || cs.count()+cs.shardCount() == 0 {
		return
	}
	srv.ps.mu.Lock()
	for ch := range cs.channels {
		srv.unsubscribeLocked(cl, kindMessage, ch)
	}
	for len(cs.patterns) > 0 {
		srv.unsubscribeLocked(cl, kindPMessage, cs.patterns[0])
	}
	for ch := range cs.shardChs {
		srv.unsubscribeLocked(cl, kindSMessage, ch)
	}
	srv.ps.mu.Unlock()
}

// pubsubClose is the client's disconnect: its subscriptions go.
func (cl *Client) pubsubClose() {
	if cl.ps != nil {
		cl.srv.dropSubscriptions(cl)
	}
}

func cmdPublish(x *Exec, argv [][]byte) {
	x.Int(int64(x.srv.publishCmd(x, kindMessage, argv[1], argv[2])))
	x.Prop.ReplOnly = x.srv.publishToReplicas()
}
func cmdSpublish(x *Exec, argv [][]byte) {
	x.Int(int64(x.srv.publishCmd(x, kindSMessage, argv[1], argv[2])))
	x.Prop.ReplOnly = x.srv.publishToReplicas()
}

// publishToReplicas reports whether PUBLISH and SPUBLISH go to the
// replication stream, as Redis's forceCommandPropagation(PROPAGATE_REPL)
// outside cluster mode, so that a replica's subscribers get the master's
// messages: only while there is a stream (a replica came once, repl.go)
// and this server is not itself a replica (its stream is its master's).
func (srv *Server) publishToReplicas() bool {
	return srv.clus == nil && srv.repl.on.Load() && !srv.repl.isReplica.Load()
}

// publishCmd is PUBLISH and SPUBLISH: with an AOF, behind the notifications
// the loop still keeps (see the top of the file).
func (srv *Server) publishCmd(x *Exec, kind uint8, channel, msg []byte) int {
	l := x.loop
	if (srv.persist != nil && len(l.ps.noteEnts) > 0) || l.scriptHolds() {
		n := srv.receivers(kind, channel)
		a0 := len(l.ps.notes)
		l.ps.notes = append(l.ps.notes, channel...)
		a1 := len(l.ps.notes)
		l.ps.notes = append(l.ps.notes, msg...)
		l.ps.noteEnts = append(l.ps.noteEnts, note{publish: true, kind: kind, a0: a0, a1: a1, b1: len(l.ps.notes)})
		return n
	}
	return srv.publish(l, kind, channel, msg, 0)
}

// PUBSUB CHANNELS [pattern] and PUBSUB SHARDCHANNELS [pattern].
func cmdPubsubChannels(x *Exec, argv [][]byte) {
	if len(argv) > 3 {
		subcommandSyntaxError(x, argv)
		return
	}
	var pat []byte
	if len(argv) == 3 {
		pat = argv[2]
	}
	ps := &x.srv.ps
	ps.mu.RLock()
	m := ps.channels
	if shard.EqualFold(argv[1], "shardchannels") {
		m = ps.shardChs
	}
	var names []string
	for ch := range m {
		if pat == nil || shard.MatchGlob(pat, []byte(ch), false) {
			names = append(names, ch)
		}
	}
	ps.mu.RUnlock()
	x.Array(len(names))
	for _, ch := range names {
		x.BulkStr(ch)
	}
}

// PUBSUB NUMSUB [channel ...] and PUBSUB SHARDNUMSUB [channel ...].
func cmdPubsubNumsub(x *Exec, argv [][]byte) {
	ps := &x.srv.ps
	ps.mu.RLock()
	m := ps.channels
	if shard.EqualFold(argv[1], "shardnumsub") {
		m = ps.shardChs
	}
	x.Array((len(argv) - 2) * 2)
	for _, ch := range argv[2:] {
		x.Bulk(ch)
		x.Int(int64(len(m[string(ch)])))
	}
	ps.mu.RUnlock()
}

func cmdPubsubNumpat(x *Exec, argv [][]byte) {
	ps := &x.srv.ps
	ps.mu.RLock()
	n := len(ps.patterns)
	ps.mu.RUnlock()
	x.Int(int64(n))
}

func cmdPubsubHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	})
}

// pubsubCounts is INFO's pubsub_channels, pubsub_patterns and
// pubsubshard_channels.
func (srv *Server) pubsubCounts() (channels, patterns, shardChannels int) {
	ps := &srv.ps
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return len(ps.channels), len(ps.patterns), len(ps.shardChs)
}

// pubsubInfo is CLIENT LIST's sub, psub and ssub.
func (cl *Client) pubsubInfo() (sub, psub, ssub int) {
	if cl.ps == nil {
		return 0, 0, 0
	}
	return len(cl.ps.channels), len(cl.ps.patterns), len(cl.ps.shardChs)
}
