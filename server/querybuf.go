package server

// The client's own query buffer (Client.ownBuf), as Redis 7.0 sizes its
// query buffer (networking.c, clientsCronResizeQueryBuffer).
//
// Input is parsed where gnet read it; a client owns a buffer only for input
// that must outlive the read: a command split across reads, or the rest of
// a batch behind a hop. Like Redis:
//   - when an argument of 32 KiB or more is being received, the buffer is
//     sized at once for the whole of it (Redis's PROTO_MBULK_BIG_ARG
//     pre-sizing), so a big argument is not copied again at each doubling
//     and its memory shows as soon as its length is known (client eviction,
//     CLIENT LIST);
//   - the buffer is kept once its commands have run, and the cron trims it:
//     let go when the client has been idle for more than 2 seconds, cut to
//     the recent peak when it is over 32 KiB and more than twice that peak.
//     It only trims when more than 4 KiB are unused.
//   - CLIENT LIST's qbuf is the bytes of the element being received and
//     argv-mem the arguments already complete (Redis moves those out of the
//     query buffer into argv).
//   - Redis reads into the query buffer, making room for PROTO_IOBUF_LEN
//     (16 KiB) before each read, so a client that has read holds a query
//     buffer of at least 16 KiB until the cron finds it idle (qbuf +
//     qbuf-free, tot-mem, used_memory). Input here is parsed in gnet's
//     read buffer, which the loop shares between its clients; the client
//     is charged that read room as Redis charges it (Client.qroom, set on
//     every read, cleared by the idle trim), so that its memory, CLIENT
//     LIST and maxmemory agree with Redis's and do not depend on the
//     moment they are read (gnet's buffer lent to a call is never counted).

import (
	"time"
)

const (
	protoMbulkBigArg     = 32 << 10 // PROTO_MBULK_BIG_ARG
	protoResizeThreshold = 32 << 10 // PROTO_RESIZE_THRESHOLD
	protoIOBufLen        = 16 << 10 // PROTO_IOBUF_LEN: the room made for a read
)

// qbufAlloc is the size of the client's query buffer as Redis would hold
// it (sdsalloc(c->querybuf)): its own buffer, or the read room of 16 KiB
// if that is bigger and the client has read since its last idle trim.
func (cl *Client) qbufAlloc() int {
	n := cap(cl.ownBuf)
	if cl.qroom && n < protoIOBufLen {
		n = protoIOBufLen
	}
	return n
}

// notePeak records the size of the input the client has at once.
func (cl *Client) notePeak(n int) {
	if n > cl.qpeak {
		cl.qpeak = n
	}
}

// bigPending is the number of bytes the command being received still needs
// when it is receiving an argument of 32 KiB or more, else 0.
func (cl *Client) bigPending() int {
	n := cl.parser.Pending()
	if n == 0 || cl.parser.BulkLen() < protoMbulkBigArg {
		return 0
	}
	return n
}

// keepInput makes rest, the start of a command not complete yet, the
// client's input in its own buffer, sized for the whole of a big argument.
// rest may lie in the buffer already.
func (cl *Client) keepInput(rest []byte) {
	need := len(rest) + cl.bigPending()
	buf := cl.ownBuf[:0]
	if cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	buf = append(buf, rest...)
	cl.ownBuf = buf
	cl.qbuf = buf
}

// resizeQueryBuffer trims the client's own buffer from the cron (Redis's
// clientsCronResizeQueryBuffer) and starts a new peak.
func (cl *Client) resizeQueryBuffer(now time.Time) {
	if cl.qbufAlloc() == 0 {
		cl.qpeak = 0
		return
	}
	if cap(cl.ownBuf) == 0 {
		// Only the read room: nothing points into it, whatever the client
		// waits for (a blocked client's buffer is trimmed too, as Redis's).
		if cl.qroom && now.Unix()-cl.lastInteraction.Unix() > 2 {
			cl.qroom = false
		}
		cl.qpeak = 0
		return
	}
	if cl.hopOut || cl.held || cl.closing || cl.blocked != nil && len(cl.qbuf) > 0 {
		// Commands in flight may point into the buffer. A blocked
		// command's waiter holds its own copy of its arguments, so a
		// blocked client with nothing queued is trimmed like any other.
		return
	}
	used := 0
	if len(cl.qbuf) > 0 {
		if !within(cl.qbuf, cl.ownBuf) || &cl.qbuf[0] != &cl.ownBuf[:1][0] {
			return
		}
		used = len(cl.qbuf)
	}
	size := cl.qbufAlloc()
	if size-used > 4<<10 {
		idle := now.Unix() - cl.lastInteraction.Unix()
		switch {
		case idle > 2:
			cl.setOwnBuf(used, used)
			cl.qroom = false // sdsRemoveFreeSpace: the next read makes room again
		case size > protoResizeThreshold && size/2 > cl.qpeak:
			keep := used
			if keep < cl.qpeak {
				keep = cl.qpeak
			}
			if need := used + cl.bigPending(); keep < need {
				keep = need
			}
			cl.setOwnBuf(used, keep)
		}
	}
	cl.qpeak = used + cl.bigPending()
}

// setOwnBuf moves the first used bytes of the client's buffer into one of
// capacity size (none if size is 0).
func (cl *Client) setOwnBuf(used, size int) {
	if size == cap(cl.ownBuf) {
		return
	}
	var buf []byte
	if size > 0 {
		buf = make([]byte, used, size)
		copy(buf, cl.ownBuf[:used])
	}
	cl.ownBuf = buf[:0]
	if used > 0 {
		cl.qbuf = buf
	}
}

// queryBufferInfo is CLIENT LIST's qbuf, qbuf-free and argv-mem.
func (cl *Client) queryBufferInfo() (qbuf, free, argvMem int) {
	qbuf = len(cl.qbuf)
	if !cl.hopOut && !cl.held && cl.blocked == nil && qbuf > 0 {
		consumed, argv := cl.parser.Progress()
		if consumed <= qbuf {
			qbuf -= consumed
			argvMem = argv
		}
	}
	// The input is in the client's buffer or, during a call, in gnet's,
	// which stands for Redis's read room (qbufAlloc).
	free = cl.qbufAlloc() - len(cl.qbuf)
	if free < 0 {
		free = 0
	}
	return qbuf, free, argvMem
}
