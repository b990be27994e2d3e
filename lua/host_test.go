package lua

import (
	"strings"
	"testing"

	"github.com/redshard/redshard/resp"
)

// fakeHost is a tiny keyspace of strings answering GET, SET, INCR, DEL and
// a few canned replies, as a server would through Host.
type fakeHost struct {
	kv      map[string]string
	calls   []string
	logs    []string
	repl    int
	replies map[string]string // command name -> raw reply
}

func newFakeHost() *fakeHost { return &fakeHost{kv: map[string]string{}, repl: -1} }

func (h *fakeHost) Call(dst []byte, argv [][]byte, proto int) []byte {
	name := strings.ToLower(string(argv[0]))
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = string(a)
	}
	h.calls = append(h.calls, strings.Join(parts, " "))
	if r, ok := h.replies[name]; ok {
		return append(dst, r...)
	}
	switch name {
	case "get":
		v, ok := h.kv[string(argv[1])]
		if !ok {
			return resp.AppendNull(dst, proto)
		}
		return resp.AppendBulkString(dst, v)
	case "set":
		h.kv[string(argv[1])] = string(argv[2])
		return resp.AppendOK(dst)
	case "del":
		n := 0
		for _, k := range argv[1:] {
			if _, ok := h.kv[string(k)]; ok {
				delete(h.kv, string(k))
				n++
			}
		}
		return resp.AppendInt(dst, int64(n))
	case "incr":
		v := h.kv[string(argv[1])]
		n := int64(0)
		for _, c := range v {
			n = n*10 + int64(c-'0')
		}
		n++
		h.kv[string(argv[1])] = strings.TrimSpace(string(resp.AppendInt(nil, n)[1:]))
		return resp.AppendInt(dst, n)
	}
	return resp.AppendError(dst, "ERR unknown command '"+string(argv[0])+"', with args beginning with: ")
}

func (h *fakeHost) ACLCheckCmd(argv [][]byte) (bool, bool) {
	switch strings.ToLower(string(argv[0])) {
	case "get":
		return true, true
	case "set":
		return false, true
	}
	return false, false
}

func (h *fakeHost) Log(level int, msg string) { h.logs = append(h.logs, msg) }
func (h *fakeHost) SetRepl(flags int)         { h.repl = flags }

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// eval runs body with keys and args split at numkeys, for a RESP2 client.
func eval(t *testing.T, e *Engine, h Host, body string, proto int, keys []string, args ...string) string {
	t.Helper()
	out, _ := e.Eval(nil, h, []byte(body), bs(keys...), bs(args...), proto)
	return string(out)
}
