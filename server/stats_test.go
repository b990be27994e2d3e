package server

import (
	"fmt"
	"testing"
)

// Error replies are counted by their code (the first word); codes past
// maxErrorCodes get no errorstat line of their own but still count in
// total_error_replies.
func TestCountErrorCodes(t *testing.T) {
	var s loopStats
	s.init(1)
	s.countErrorString("ERR unknown command 'x'")
	s.countErrorString("ERR syntax error")
	s.countErrorString("WRONGTYPE Operation against a key holding the wrong kind of value")
	s.countError([]byte("NOSCRIPT\r\n"))
	if s.errors["ERR"] != 2 || s.errors["WRONGTYPE"] != 1 || s.errors["NOSCRIPT"] != 1 || len(s.errors) != 3 {
		t.Errorf("errors %v", s.errors)
	}
	for i := 0; i < maxErrorCodes+10; i++ {
		s.countErrorString(fmt.Sprintf("E%d oops", i))
	}
	if len(s.errors) != maxErrorCodes || s.errOther != 13 {
		t.Errorf("%d codes kept, %d others; want %d and 13", len(s.errors), s.errOther, maxErrorCodes)
	}
	s.countErrorString("ERR again")
	if s.errors["ERR"] != 3 {
		t.Errorf("a known code past the bound: ERR=%d", s.errors["ERR"])
	}
}
