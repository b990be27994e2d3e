package server

import (
	"bytes"
)

// cmdStat is INFO commandstats' line for one command, counted per loop.
type cmdStat struct {
	calls, nsec, rejected, failed int64
}

// loopStats are one loop's counters: plain integers, written only by the loop
// itself and summed by INFO while every loop is parked.
type loopStats struct {
	cmds      []cmdStat
	errors    map[string]int64 // errorstats, by error code
	errOther  int64            // error replies of codes past maxErrorCodes (total_error_replies only)
	dirty     int64
	totalCmds int64
	reads     int64 // reads from clients (total_reads_processed)
	writes    int64 // writes to clients (total_writes_processed)
}

func (s *loopStats) init(ncmds int) {
	s.cmds = make([]cmdStat, ncmds)
	s.errors = make(map[string]int64)
}

// maxErrorCodes bounds errorstats to 128 distinct codes per loop (Redis
// 7.2's ERROR_STATS_NUMBER; 7.0 has no bound), so that replies with made-up
// codes cannot grow it without end. Replies past it still count in
// total_error_replies.
const maxErrorCodes = 128

// countError counts an error reply by its code (the first word of the message).
func (s *loopStats) countError(msg []byte) {
	code := msg
	if i := bytes.IndexAny(msg, " \r"); i >= 0 {
		code = msg[:i]
	}
	if n, ok := s.errors[string(code)]; ok {
		s.errors[string(code)] = n + 1
		return
	}
	if len(s.errors) >= maxErrorCodes {
		s.errOther++
		return
	}
	s.errors[string(code)] = 1
}

func (s *loopStats) countErrorString(msg string) { s.countError([]byte(msg)) }
