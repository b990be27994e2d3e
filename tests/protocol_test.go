package tests

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The wire protocol, byte for byte: inline and multibulk requests however
// they are cut, deep pipelines, Redis's protocol errors (which close only the
// offending connection) and its command errors (which do not).

func TestInlineCommands(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	rc := s.raw(t)
	for _, tc := range []struct {
		name, req, want string
	}{
		{"PING", "PING\r\n", "+PONG\r\n"},
		{"lower case", "ping\r\n", "+PONG\r\n"},
		{"LF only", "PING\n", "+PONG\r\n"},
		{"empty lines are skipped", "\r\n\n\r\nPING\r\n", "+PONG\r\n"},
		{"spaces between arguments", "ECHO    hello  \r\n", "$5\r\nhello\r\n"},
		{"double quotes", "ECHO \"hello world\"\r\n", "$11\r\nhello world\r\n"},
		{"single quotes", "ECHO 'a b'\r\n", "$3\r\na b\r\n"},
		{"escapes in double quotes", "ECHO \"\\x41\\n\\t\"\r\n", "$3\r\nA\n\t\r\n"},
		{"empty quoted argument", "ECHO \"\"\r\n", "$0\r\n\r\n"},
		{"SET and GET", "SET inline:k \"v w\"\r\nGET inline:k\r\n", "+OK\r\n$3\r\nv w\r\n"},
		{"several in one write", "PING\r\nPING x\r\nDBSIZE\r\n", "+PONG\r\n$1\r\nx\r\n:1\r\n"},
		{"mixed with multibulk", "PING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nPING\r\n", "+PONG\r\n$2\r\nhi\r\n+PONG\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc.t = t
			rc.do(tc.req, tc.want)
		})
	}
}

func TestRequestsSplitByteByByte(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	ks := spreadKeys("split:", nShards, 1)
	for _, tc := range []struct {
		name, req, want string
	}{
		{"multibulk PING", "*1\r\n$4\r\nPING\r\n", "+PONG\r\n"},
		{"inline PING", "PING\r\n", "+PONG\r\n"},
		{"SET then GET on other shards",
			resp("SET", ks[1], "v1") + resp("GET", ks[1]) + resp("SET", ks[2], "v2") + resp("GET", ks[2]),
			"+OK\r\n$2\r\nv1\r\n+OK\r\n$2\r\nv2\r\n"},
		{"cross-shard MSET and MGET",
			resp("MSET", ks[0], "a", ks[1], "b", ks[2], "c", ks[3], "d") + resp("MGET", ks[3], ks[2], ks[1], ks[0]),
			"+OK\r\n*4\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
		{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "$0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := s.raw(t)
			for i := 0; i < len(tc.req); i++ {
				rc.write(tc.req[i : i+1])
				time.Sleep(time.Millisecond) // a separate segment each
			}
			rc.expect(tc.want)
			rc.do("PING\r\n", "+PONG\r\n")
		})
	}
}

func TestPipelineOf1000PINGsInOneWrite(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	for _, tc := range []struct{ name, one, reply string }{
		{"multibulk", "*1\r\n$4\r\nPING\r\n", "+PONG\r\n"},
		{"inline", "PING\r\n", "+PONG\r\n"},
		{"PING with argument", "*2\r\n$4\r\nPING\r\n$3\r\nabc\r\n", "$3\r\nabc\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := s.raw(t)
			rc.do(strings.Repeat(tc.one, 1000), strings.Repeat(tc.reply, 1000))
			rc.expectSilent(50 * time.Millisecond)
		})
	}
}

// A protocol error answers Redis's error, after the replies of the commands
// before it in the same read, and closes that connection only.
func TestProtocolErrorsCloseOnlyThatConnection(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	bystander := s.raw(t)
	bystander.do(resp("SET", "by", "stander"), "+OK\r\n")

	const prefix = "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n" // answered +OK before the error
	for _, tc := range []struct {
		name, req, want string
	}{
		{"negative bulk length", "*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"null bulk in a request", "*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"bulk length not a number", "*1\r\n$abc\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"multibulk length not a number", "*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"multibulk length above INT_MAX", "*3000000000\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"bulk above proto-max-bulk-len (512mb)", "*1\r\n$536870913\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"no $ before a bulk", "*1\r\nfoo\r\n", "-ERR Protocol error: expected '$', got 'f'\r\n"},
		{"unbalanced quotes inline", "ECHO \"abc\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"closing quote not followed by space", "ECHO \"a\"b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"inline request over 64k", strings.Repeat("a", 70<<10), "-ERR Protocol error: too big inline request\r\n"},
		{"multibulk count line over 64k", "*" + strings.Repeat("1", 70<<10), "-ERR Protocol error: too big mbulk count string\r\n"},
		{"bulk count line over 64k", "*1\r\n$" + strings.Repeat("1", 70<<10), "-ERR Protocol error: too big bulk count string\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			victim := s.raw(t)
			victim.write(prefix + tc.req)
			victim.expect("+OK\r\n" + tc.want)
			victim.expectClosed()
			bystander.t = t
			bystander.do(resp("GET", "by"), "$7\r\nstander\r\n")
			bystander.do("PING\r\n", "+PONG\r\n")
		})
	}
	// the server is still whole
	rc := s.raw(t)
	rc.do(resp("GET", "a"), "$1\r\nb\r\n")
}

// proto-max-bulk-len is honoured exactly: a bulk of that many bytes is
// accepted, one more byte is a protocol error.
func TestProtoMaxBulkLen(t *testing.T) {
	s := startServer(t, "--shards", "2", "--proto-max-bulk-len", "1mb")
	const max = 1 << 20
	ok := s.raw(t)
	val := strings.Repeat("x", max)
	ok.write("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(max) + "\r\n" + val + "\r\n")
	ok.expect("+OK\r\n")
	ok.do(resp("STRLEN", "big"), ":1048576\r\n")

	bad := s.raw(t)
	bad.write("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(max+1) + "\r\n")
	bad.expect("-ERR Protocol error: invalid bulk length\r\n")
	bad.expectClosed()
	ok.do("PING\r\n", "+PONG\r\n")
}

func TestCommandErrorsKeepTheConnection(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	rc := s.raw(t)
	a200 := strings.Repeat("a", 200)
	for _, tc := range []struct {
		name, req, want string
	}{
		{"unknown command", "foo bar\r\n", "-ERR unknown command 'foo', with args beginning with: 'bar' \r\n"},
		{"unknown command, multibulk", resp("foo", "bar", "baz"), "-ERR unknown command 'foo', with args beginning with: 'bar' 'baz' \r\n"},
		{"unknown command without args", "FOO\r\n", "-ERR unknown command 'FOO', with args beginning with: \r\n"},
		{"unknown command, args cut at 128 bytes", "foo " + a200 + " b\r\n",
			"-ERR unknown command 'foo', with args beginning with: '" + a200[:128] + "' \r\n"},
		{"unknown command, second arg cut", "foo " + a200[:100] + " " + strings.Repeat("b", 100) + " c\r\n",
			"-ERR unknown command 'foo', with args beginning with: '" + a200[:100] + "' '" + strings.Repeat("b", 25) + "' \r\n"},
		{"unknown command, name cut at 128 bytes", strings.Repeat("x", 200) + " b\r\n",
			"-ERR unknown command '" + strings.Repeat("x", 128) + "', with args beginning with: 'b' \r\n"},
		{"GET without key", "get\r\n", "-ERR wrong number of arguments for 'get' command\r\n"},
		{"GET with two keys", resp("GET", "a", "b"), "-ERR wrong number of arguments for 'get' command\r\n"},
		{"SET with one argument", resp("SET", "a"), "-ERR wrong number of arguments for 'set' command\r\n"},
		{"MSET with odd arguments", resp("MSET", "a", "1", "b"), "-ERR wrong number of arguments for 'mset' command\r\n"},
		{"PING with two arguments", "PING a b\r\n", "-ERR wrong number of arguments for 'ping' command\r\n"},
		{"arity in upper case names the command in lower case", "GETRANGE k 1\r\n", "-ERR wrong number of arguments for 'getrange' command\r\n"},
		{"container without subcommand", "OBJECT\r\n", "-ERR wrong number of arguments for 'object' command\r\n"},
		{"unknown subcommand", "OBJECT FOO\r\n", "-ERR unknown subcommand 'FOO'. Try OBJECT HELP.\r\n"},
		{"CONFIG without subcommand", "CONFIG\r\n", "-ERR wrong number of arguments for 'config' command\r\n"},
		{"CONFIG unknown subcommand", "CONFIG FOO\r\n", "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"},
		{"wrong type of argument", resp("INCRBY", "n", "x"), "-ERR value is not an integer or out of range\r\n"},
		{"error in a pipeline does not stop it", "PING\r\nGET\r\nPING\r\n", "+PONG\r\n-ERR wrong number of arguments for 'get' command\r\n+PONG\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc.t = t
			rc.do(tc.req, tc.want)
			rc.do("PING\r\n", "+PONG\r\n")
		})
	}
}

// A 100 MB value sent in 4 KB writes (on a key owned by another shard than
// the connection's, for most connections) arrives whole.
func TestHundredMegabyteValueRoundTrips(t *testing.T) {
	s := startServer(t, "--shards", strconv.Itoa(nShards))
	const size = 100 << 20
	val := make([]byte, size)
	for i := range val {
		val[i] = byte(i % 251)
	}
	var req bytes.Buffer
	req.WriteString("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(size) + "\r\n")
	req.Write(val)
	req.WriteString("\r\n")
	req.WriteString(resp("STRLEN", "big"))
	req.WriteString(resp("GETRANGE", "big", "52428800", "52428809"))

	rc := s.raw(t)
	_ = rc.c.SetWriteDeadline(time.Now().Add(2 * time.Minute))
	data := req.Bytes()
	for len(data) > 0 {
		n := min(4096, len(data))
		if _, err := rc.c.Write(data[:n]); err != nil {
			t.Fatalf("write: %v", err)
		}
		data = data[n:]
	}
	want := fmt.Sprintf("+OK\r\n:%d\r\n", size) + bulk(string(val[52428800:52428810]))
	rc.expect(want)

	// and back in full
	rc.write(resp("GET", "big"))
	rc.expect("$" + strconv.Itoa(size) + "\r\n")
	got := rc.readN(size + 2)
	if got[:size] != string(val) || got[size:] != "\r\n" {
		t.Fatalf("GET big returned different bytes")
	}
	rc.do(resp("DEL", "big"), ":1\r\n")
}
