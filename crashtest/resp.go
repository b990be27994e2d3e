package crashtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redshard/redshard/resp"
)

// A small RESP2 client of the tool's own: the tool is a black box, so it
// shares no code with the server's resp package, and it needs what general
// clients hide — exact control of what is on the wire and when (a pipeline
// of depth 16 is sixteen commands in one write), and the moment each reply
// arrived.

// Reply is one RESP2 reply, decoded.
type Reply struct {
	Kind byte // '+', '-', ':', '$', '*'
	Str  string
	Int  int64
	Arr  []Reply
	Nil  bool // a null bulk or null array
}

// Err reports an error reply as a Go error.
func (r Reply) Err() error {
	if r.Kind == '-' {
		return errors.New(r.Str)
	}
	return nil
}

// Text renders a reply compactly, the form the model's expected replies
// are written in: +OK, :3, $value, $nil, *[a,b], -ERR ...
func (r Reply) Text() string {
	switch r.Kind {
	case '+', '-':
		return string(r.Kind) + r.Str
	case ':':
		return ":" + strconv.FormatInt(r.Int, 10)
	case '$':
		if r.Nil {
			return "$nil"
		}
		return "$" + r.Str
	case '*':
		if r.Nil {
			return "*nil"
		}
		parts := make([]string, len(r.Arr))
		for i, e := range r.Arr {
			parts[i] = e.Text()
		}
		return "*[" + strings.Join(parts, ",") + "]"
	}
	return "?"
}

// maxBulk bounds what the client accepts, so a corrupt server cannot make
// the tool allocate without bound.
const maxBulk = 64 << 20

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return "", fmt.Errorf("resp: line without CRLF: %q", line)
	}
	return line[:len(line)-2], nil
}

// ReadReply reads one whole reply.
func ReadReply(r *bufio.Reader) (Reply, error) {
	line, err := readLine(r)
	if err != nil {
		return Reply{}, err
	}
	if line == "" {
		return Reply{}, errors.New("resp: empty line")
	}
	kind, rest := line[0], line[1:]
	switch kind {
	case '+', '-':
		return Reply{Kind: kind, Str: rest}, nil
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return Reply{}, fmt.Errorf("resp: bad integer %q", rest)
		}
		return Reply{Kind: kind, Int: n}, nil
	case '$':
		n, err := strconv.Atoi(rest)
		if err != nil || n < -1 || n > maxBulk {
			return Reply{}, fmt.Errorf("resp: bad bulk length %q", rest)
		}
		if n == -1 {
			return Reply{Kind: kind, Nil: true}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return Reply{}, err
		}
		return Reply{Kind: kind, Str: string(buf[:n])}, nil
	case '*':
		n, err := strconv.Atoi(rest)
		if err != nil || n < -1 || n > 1<<20 {
			return Reply{}, fmt.Errorf("resp: bad array length %q", rest)
		}
		if n == -1 {
			return Reply{Kind: kind, Nil: true}, nil
		}
		out := Reply{Kind: kind, Arr: make([]Reply, n)}
		for i := range out.Arr {
			if out.Arr[i], err = ReadReply(r); err != nil {
				return Reply{}, err
			}
		}
		return out, nil
	}
	return Reply{}, fmt.Errorf("resp: unknown reply type %q", kind)
}

// AppendCommand appends one command as a RESP2 multibulk, with the
// project's RESP encoders (a request is an array of bulk strings).
func AppendCommand(b []byte, args ...string) []byte {
	b = resp.AppendArrayLen(b, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// Conn is one connection to the server.
type Conn struct {
	nc net.Conn
	r  *bufio.Reader
}

// Dial connects with a short timeout: the server is local.
func Dial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10)}, nil
}

// Close closes the connection; a blocked Recv returns an error.
func (c *Conn) Close() error { return c.nc.Close() }

// Send writes bytes already encoded with AppendCommand.
func (c *Conn) Send(b []byte) error {
	_, err := c.nc.Write(b)
	return err
}

// Recv reads the next reply.
func (c *Conn) Recv() (Reply, error) { return ReadReply(c.r) }

// Do sends one command and waits for its reply, at most d.
func (c *Conn) Do(d time.Duration, args ...string) (Reply, error) {
	c.nc.SetDeadline(time.Now().Add(d))
	defer c.nc.SetDeadline(time.Time{})
	if err := c.Send(AppendCommand(nil, args...)); err != nil {
		return Reply{}, err
	}
	return c.Recv()
}

// do1 dials, runs one command and closes: for the rare control commands.
func do1(addr string, d time.Duration, args ...string) (Reply, error) {
	c, err := Dial(addr)
	if err != nil {
		return Reply{}, err
	}
	defer c.Close()
	return c.Do(d, args...)
}
