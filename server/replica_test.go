package server

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/redshard/redshard/resp"
)

const testMark = "0123456789abcdef0123456789abcdef01234567"

// TestReplPayloadForms: both payload forms, read a byte at a time (the
// EOF mark split over reads) and whole, with keep-alive newlines first.
func TestReplPayloadForms(t *testing.T) {
	rdbBytes := "REDIS0009" + strings.Repeat("\x00payload", 3000) + "\xff"
	for name, in := range map[string]string{
		"len": "\n\n$" + itoaTest(len(rdbBytes)) + "\r\n" + rdbBytes + "*1\r\n$4\r\nPING\r\n",
		"eof": "\n$EOF:" + testMark + "\r\n" + rdbBytes + testMark,
	} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			br := bufio.NewReaderSize(r, 64<<10)
			var out bytes.Buffer
			total := int64(-2)
			err := readPayload(br, &out, func(read, tot int64) { total = tot })
			if err != nil {
				t.Fatalf("%s (one byte %v): %v", name, oneByte, err)
			}
			if out.String() != rdbBytes {
				t.Fatalf("%s (one byte %v): payload of %d bytes, want %d", name, oneByte, out.Len(), len(rdbBytes))
			}
			if name == "len" {
				if total != int64(len(rdbBytes)) {
					t.Errorf("len: total %d", total)
				}
				rest, _ := io.ReadAll(br)
				if string(rest) != "*1\r\n$4\r\nPING\r\n" {
					t.Errorf("len: the stream after the payload is %q", rest)
				}
			} else if total != -1 {
				t.Errorf("eof: total %d, want -1", total)
			}
		}
	}
	for _, bad := range []string{"-ERR oops\r\n", "+OK\r\n", "$-3\r\n", "$abc\r\n", "$10\r\nshort", "$EOF:" + testMark + "\r\nno mark"} {
		if err := readPayload(bufio.NewReader(strings.NewReader(bad)), io.Discard, func(int64, int64) {}); err == nil {
			t.Errorf("payload %q: no error", bad)
		}
	}
}

func itoaTest(n int) string { return strconv.Itoa(n) }

// TestReplHandshake: what the replica sends, and the PSYNC replies.
func TestReplHandshake(t *testing.T) {
	log := NewLoggerTo(io.Discard, nil)
	replies := "+PONG\r\n+OK\r\n-ERR unknown\r\n+OK\r\n\n\n+FULLRESYNC " + testMark + " 42\r\n"
	var sent bytes.Buffer
	h := replHello{auth: "pw", user: "u", port: 7000, replid: "?", off: -1}
	res, err := replHandshake(bufio.NewReader(strings.NewReader(replies)), &sent, h, log)
	if err != nil || !res.full || res.replid != testMark || res.off != 42 {
		t.Fatalf("handshake = %+v, %v", res, err)
	}
	want := string(appendCommand(nil, "PING")) + string(appendCommand(nil, "AUTH", "u", "pw")) +
		string(appendCommand(nil, "REPLCONF", "listening-port", "7000")) +
		string(appendCommand(nil, "REPLCONF", "capa", "eof", "capa", "psync2")) +
		string(appendCommand(nil, "PSYNC", "?", "-1"))
	if sent.String() != want {
		t.Errorf("sent %q\nwant %q", sent.String(), want)
	}
	for line, ok := range map[string]bool{
		"+CONTINUE":                       true,
		"+CONTINUE " + testMark:           true,
		"+FULLRESYNC " + testMark:         false,
		"+FULLRESYNC x 1":                 false,
		"-NOMASTERLINK no link":           false,
		"-ERR unknown command":            false,
		"$5":                              false,
		"+FULLRESYNC " + testMark + " -1": false,
	} {
		if _, err := parsePsyncReply(line); (err == nil) != ok {
			t.Errorf("parsePsyncReply(%q): %v", line, err)
		}
	}
	if r, _ := parsePsyncReply("+CONTINUE " + testMark); r.newID != testMark || r.full {
		t.Errorf("+CONTINUE <id> = %+v", r)
	}
	// An error to PING (other than an auth one) stops the handshake.
	if _, err := replHandshake(bufio.NewReader(strings.NewReader("-ERR bad\r\n")), io.Discard, h, log); err == nil {
		t.Error("PING -ERR: no error")
	}
	if _, err := replHandshake(bufio.NewReader(strings.NewReader("-NOAUTH x\r\n-ERR wrong pass\r\n")), io.Discard, h, log); err == nil {
		t.Error("AUTH -ERR: no error")
	}
}

// FuzzReplicaStream feeds arbitrary bytes as the master's side of a link:
// the handshake replies, the payload, then the stream as the master client
// parses it. Nothing panics; every malformed input ends in an error (the
// link is dropped) or in a stream parse that stops cleanly.
func FuzzReplicaStream(f *testing.F) {
	f.Add([]byte("+PONG\r\n+OK\r\n+OK\r\n+FULLRESYNC " + testMark + " 0\r\n$EOF:" + testMark + "\r\nREDIS" + testMark + "*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("+PONG\r\n+OK\r\n+OK\r\n+CONTINUE\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$5\r\nMULTI\r\n"))
	f.Add([]byte("+PONG\r\n+OK\r\n+OK\r\n+FULLRESYNC " + testMark + " 7\r\n$3\r\nabc*-1\r\n*2\r\n$-1\r\n"))
	f.Add([]byte("+PONG\r\n-ERR\r\n-ERR\r\n\n\n+CONTINUE " + testMark + "\r\n*1\r\n$999999999999\r\n"))
	f.Add([]byte("-NOAUTH\r\n+OK\r\n+OK\r\n$5\r\n"))
	f.Add([]byte("+PONG\r\n+OK\r\n+OK\r\n+FULLRESYNC " + testMark + " 0\r\n$EOF:short\r\n"))
	log := NewLoggerTo(io.Discard, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), 4096)
		res, err := replHandshake(br, io.Discard, replHello{port: 1, replid: "?", off: -1}, log)
		if err != nil {
			return // the link is dropped
		}
		if res.full {
			if err := readPayload(br, io.Discard, func(int64, int64) {}); err != nil {
				return
			}
		}
		rest, _ := io.ReadAll(br)
		var p resp.Parser
		p.Limits = resp.DefaultLimits()
		var argv [][]byte
		for len(rest) > 0 {
			args, n, err := p.Next(rest, argv[:0])
			if err != nil || n == 0 {
				return // a protocol error drops the link; a partial command waits
			}
			if n > len(rest) {
				t.Fatalf("parser consumed %d of %d bytes", n, len(rest))
			}
			_ = args
			rest = rest[n:]
		}
	})
}
