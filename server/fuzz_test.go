package server

import (
	"strings"
	"testing"
	"time"
)

// fuzzTokens are the arguments FuzzCommands draws from: keys on different
// shards, numbers at the edges, the option words of the data commands, and
// range syntax.
var fuzzTokens = []string{
	"k", "k2", "{k}x", "other", "", "0", "1", "-1", "2", "3", "10", "100", "-100", "1000000",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808", "4294967296",
	"1.5", "-0.5", "inf", "-inf", "+inf", "nan", "1e308", "(1", "[a", "(a", "-", "+", "*", "?",
	"a", "b", "abc", "field", "member", "value",
	"EX", "PX", "EXAT", "PXAT", "KEEPTTL", "GET", "NX", "XX", "GT", "LT", "CH", "INCR", "PERSIST",
	"WITHSCORES", "WITHVALUES", "LIMIT", "BYSCORE", "BYLEX", "REV", "MATCH", "COUNT", "TYPE",
	"LEFT", "RIGHT", "BEFORE", "AFTER", "RANK", "MAXLEN", "WEIGHTS", "AGGREGATE", "SUM", "MIN",
	"MAX", "AND", "OR", "XOR", "NOT", "BIT", "BYTE", "OVERFLOW", "WRAP", "SAT", "FAIL", "SET",
	"INCRBY", "u8", "i64", "u63", "i65", "#1", "BY", "ALPHA", "ASC", "DESC", "STORE", "DB",
	"REPLACE", "ABSTTL", "IDLETIME", "FREQ", "LEN", "IDX", "MINMATCHLEN", "WITHMATCHLEN", "NOVALUES",
}

// FuzzCommands runs random argv against every data command (issue 7: bad
// arguments must never panic or hang a loop). Each input is a few commands
// run in order on three shards, so later ones see the state earlier ones
// left (a list, a hash, ...).
func FuzzCommands(f *testing.F) {
	srv := admServer(f, 3)
	var cmds []*Cmd
	for _, c := range srv.cmdList {
		if c.run != nil && c.flags&flagBlocking == 0 {
			cmds = append(cmds, c)
		}
	}
	cl := admClient(srv, 0, 50000)
	f.Add([]byte{0, 3, 1, 2, 3})
	f.Add([]byte("\x05\x04\x00\x01\x02\x03\x10\x02\x00\x05"))
	for i := range cmds {
		f.Add([]byte{byte(i), 4, 0, 6, 7, 40})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for n := 0; n < 6 && len(data) >= 2; n++ {
			c := cmds[int(data[0])%len(cmds)]
			nargs := int(data[1] % 9)
			data = data[2:]
			name := c.fullName
			args := strings.Split(name, "|")
			for i := 0; i < nargs && len(data) > 0; i++ {
				b := data[0]
				data = data[1:]
				if b >= 250 && len(data) > 0 { // a raw argument from the input
					l := int(data[0]) % (len(data))
					args = append(args, string(data[1:1+l]))
					data = data[1+l:]
					continue
				}
				args = append(args, fuzzTokens[int(b)%len(fuzzTokens)])
			}
			done := make(chan struct{})
			var panicked any
			go func() {
				defer close(done)
				defer func() { panicked = recover() }()
				admDo(srv, cl, args...)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%q did not return in 5s", args)
			}
			if panicked != nil {
				t.Fatalf("%q panicked: %v", args, panicked)
			}
		}
	})
}
