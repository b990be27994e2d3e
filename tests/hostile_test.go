package tests

// Hostile input (issue 7, part 4): each answered as Redis answers it, and no
// other client notices.

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHostileInputs(t *testing.T) {
	s := startServer(t, "--shards", "4")
	bystander := s.raw(t)
	bystander.do(resp("SET", "by", "stander"), "+OK\r\n")
	check := func(t *testing.T) {
		t.Helper()
		bystander.t = t
		bystander.do(resp("GET", "by"), "$7\r\nstander\r\n")
	}

	t.Run("null multibulk is ignored", func(t *testing.T) {
		rc := s.raw(t)
		rc.do("*-1\r\n*0\r\n"+resp("PING"), "+PONG\r\n")
		check(t)
	})
	t.Run("nested multibulk", func(t *testing.T) {
		rc := s.raw(t)
		rc.write("*1\r\n*1\r\n$4\r\nPING\r\n")
		rc.expect("-ERR Protocol error: expected '$', got '*'\r\n")
		rc.expectClosed()
		check(t)
	})
	t.Run("huge bulk length", func(t *testing.T) {
		rc := s.raw(t)
		rc.write("*2\r\n$3\r\nGET\r\n$9223372036854775807\r\n")
		rc.expect("-ERR Protocol error: invalid bulk length\r\n")
		rc.expectClosed()
		check(t)
	})
	t.Run("huge multibulk count, never sent", func(t *testing.T) {
		// Redis takes a count up to INT_MAX before the elements arrive; it
		// must not allocate for them up front, and the connection waits.
		rc := s.raw(t)
		rc.write("*1048576\r\n")
		rc.expectSilent(200 * time.Millisecond)
		check(t)
	})
	t.Run("multibulk count above INT_MAX", func(t *testing.T) {
		rc := s.raw(t)
		rc.write("*2147483648\r\n")
		rc.expect("-ERR Protocol error: invalid multibulk length\r\n")
		rc.expectClosed()
		check(t)
	})
	t.Run("a long inline line without newline", func(t *testing.T) {
		// Redis closes at 64 KiB of inline request without a newline; a
		// 1 GB line never gets that far.
		rc := s.raw(t)
		chunk := strings.Repeat("a", 32<<10)
		var err error
		for i := 0; i < 8 && err == nil; i++ {
			_ = rc.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, err = rc.c.Write([]byte(chunk))
		}
		rc.expect("-ERR Protocol error: too big inline request\r\n")
		rc.expectClosed()
		check(t)
	})
	t.Run("10000 pipelined unknown commands", func(t *testing.T) {
		rc := s.raw(t)
		var b strings.Builder
		for i := 0; i < 10000; i++ {
			b.WriteString(resp("NOSUCH" + strconv.Itoa(i%10)))
		}
		b.WriteString(resp("PING"))
		rc.write(b.String())
		for i := 0; i < 10000; i++ {
			rc.expect("-ERR unknown command 'NOSUCH" + strconv.Itoa(i%10) + "', with args beginning with: \r\n")
		}
		rc.expect("+PONG\r\n")
		check(t)
	})
	t.Run("half-sent command, then the rest", func(t *testing.T) {
		rc := s.raw(t)
		full := resp("SET", "half", strings.Repeat("x", 1000))
		rc.write(full[:len(full)/2])
		rc.expectSilent(100 * time.Millisecond)
		check(t)
		rc.write(full[len(full)/2:])
		rc.expect("+OK\r\n")
	})
	t.Run("connections closed mid-batch", func(t *testing.T) {
		// Pipelines of writes to every shard, cut off mid-command: the
		// server drops them without a trace and keeps serving.
		var batch strings.Builder
		for i := 0; i < 2000; i++ {
			batch.WriteString(resp("SET", "mid:"+strconv.Itoa(i), "v"))
		}
		req := batch.String()
		for i := 0; i < 50; i++ {
			c, err := net.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = c.Write([]byte(req[:len(req)*(i+1)/51]))
			c.Close()
		}
		check(t)
		rc := s.raw(t)
		rc.do(resp("PING"), "+PONG\r\n")
	})
}
