package server

// CLIENT LIST / CLIENT INFO lines: Redis 7.0's catClientInfoString, field
// for field and in its order.
//
// Values come from where redshard keeps them; features other than this
// file's report their state through the small accessors below, which return
// Redis's idle values until the feature fills them in:
//
//	infoSubs   sub, psub, ssub        pub/sub subscriptions (pubsub.go)
//	infoMulti  multi, multi-mem       -1 and 0 outside MULTI
//	infoFlags  the flag letters       P (pub/sub), x (MULTI), b (blocked), ...

import (
	"strconv"
	"time"
)

// infoSubs returns the client's channel, pattern and shard-channel
// subscription counts.
func (cl *Client) infoSubs() (sub, psub, ssub int) { return cl.pubsubInfo() }

// infoMulti returns the number of commands queued by MULTI (-1 outside a
// transaction) and the bytes of their arguments.
func (cl *Client) infoMulti() (count, mem int) { return cl.multiCount(), cl.multiMem() }

// infoFlags appends the flag letters of features kept elsewhere, in
// Redis's order: 'P' (pub/sub), 'x' (MULTI), 'b' (blocked), 'd' (dirty CAS).
func (cl *Client) infoFlags(b []byte) []byte {
	if cl.rep != nil {
		b = append(b, 'S')
	}
	if cl.subscribed() {
		b = append(b, 'P')
	}
	b = cl.multiFlags(b) // x, d (multi.go)
	if cl.blocked != nil {
		b = append(b, 'b') // blocking.go (after d, which a blocked client rarely has)
	}
	return b
}

// replyChunk is the size of one Redis reply block, used to present pending
// output as Redis's obl (static buffer), oll (list length) and omem.
const replyChunk = 16 << 10

func (cl *Client) clientInfoString() string {
	now := time.Now()
	b := make([]byte, 0, 320)
	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.id, 10)
	b = append(b, " addr="...)
	b = append(b, cl.peerID()...)
	b = append(b, " laddr="...)
	if cl.c != nil {
		b = append(b, cl.laddr()...)
	}
	fd := -1
	if cl.c != nil && !cl.closed {
		fd = cl.c.Fd()
	}
	b = append(b, " fd="...)
	b = strconv.AppendInt(b, int64(fd), 10)
	b = append(b, " name="...)
	b = append(b, cl.name...)
	b = append(b, " age="...)
	b = strconv.AppendInt(b, int64(now.Sub(cl.created).Seconds()), 10)
	b = append(b, " idle="...)
	b = strconv.AppendInt(b, int64(now.Sub(cl.lastInteraction).Seconds()), 10)

	b = append(b, " flags="...)
	n := len(b)
	if cl.obs.monitor {
		b = append(b, 'O')
	}
	b = cl.infoFlags(b)
	if cl.closing && !cl.obs.obufKill {
		b = append(b, 'c')
	}
	if cl.obs.obufKill {
		b = append(b, 'A')
	}
	if cl.unixSocket() {
		b = append(b, 'U')
	}
	if cl.noEvict {
		b = append(b, 'e')
	}
	if cl.noTouch {
		b = append(b, 'T')
	}
	b = cl.trackInfoFlags(b) // tracking.go
	if len(b) == n {
		b = append(b, 'N')
	}

	sub, psub, ssub := cl.infoSubs()
	multi, multiMem := cl.infoMulti()
	b = append(b, " db="...)
	b = strconv.AppendInt(b, int64(cl.db), 10)
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, int64(sub), 10)
	b = append(b, " psub="...)
	b = strconv.AppendInt(b, int64(psub), 10)
	b = append(b, " ssub="...)
	b = strconv.AppendInt(b, int64(ssub), 10)
	b = append(b, " multi="...)
	b = strconv.AppendInt(b, int64(multi), 10)

	qbuf, qfree, argvMem := cl.queryBufferInfo() // querybuf.go
	b = append(b, " qbuf="...)
	b = strconv.AppendInt(b, int64(qbuf), 10)
	b = append(b, " qbuf-free="...)
	b = strconv.AppendInt(b, int64(qfree), 10)
	b = append(b, " argv-mem="...)
	b = strconv.AppendInt(b, int64(argvMem), 10)
	b = append(b, " multi-mem="...)
	b = strconv.AppendInt(b, int64(multiMem), 10)

	// Pending output: the replies not yet written and what the socket has
	// not taken (outputUsage), which client-output-buffer-limit measures:
	// omem, in oll blocks of 16 KiB. Redis's obl (its static reply buffer)
	// has no counterpart: 0.
	var pending int64
	if cl.c != nil {
		pending = cl.pendingOutput()
	}
	obl := int64(0)
	omem := pending
	var held int64
	if cl.rep != nil {
		// A replica's output is the stream it has yet to send, which the
		// backlog holds for it (repl.go), as Redis's
		// getClientOutputBufferMemoryUsage counts a replica's.
		held = cl.rep.held()
		omem += held
	}
	oll := (omem + replyChunk - 1) / replyChunk
	// rbs: Redis's reply buffer is 1-16 KiB (what a reply needs beyond it
	// goes to its reply list); redshard's one buffer grows as the replies
	// need, so rbs shows its first 16 KiB, and tot-mem all of it.
	rbs := min(max(int64(cap(cl.out)), replyMinBytes), replyChunk)
	b = append(b, " rbs="...)
	b = strconv.AppendInt(b, rbs, 10)
	b = append(b, " rbp="...) // the peak of its use in this period (resizeReplyBuffer)
	b = strconv.AppendInt(b, min(int64(max(cl.outPeak, len(cl.out))), rbs), 10)
	b = append(b, " obl="...)
	b = strconv.AppendInt(b, obl, 10)
	b = append(b, " oll="...)
	b = strconv.AppendInt(b, oll, 10)
	b = append(b, " omem="...)
	b = strconv.AppendInt(b, omem, 10)
	b = append(b, " tot-mem="...)
	b = strconv.AppendInt(b, cl.memUsage()+held, 10) // clientmem.go

	b = append(b, " events="...)
	if cl.c != nil && !cl.closed {
		b = append(b, 'r')
		if pending > 0 {
			b = append(b, 'w')
		}
	}
	cmd := cl.lastCmd
	if cmd == "" {
		cmd = "NULL"
	}
	b = append(b, " cmd="...)
	b = append(b, cmd...)
	b = append(b, " user="...)
	b = append(b, cl.userName()...) // acl.go
	b = append(b, " redir="...)
	b = strconv.AppendInt(b, cl.trackRedirInfo(), 10)
	b = append(b, " resp="...)
	b = strconv.AppendInt(b, int64(cl.proto), 10)
	if cl.libName != "" || cl.libVer != "" {
		b = append(b, " lib-name="...)
		b = append(b, cl.libName...)
		b = append(b, " lib-ver="...)
		b = append(b, cl.libVer...)
	}
	return string(b)
}
