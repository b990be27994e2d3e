package lua

import (
	"testing"

	"github.com/redshard/redshard/resp"
)

// rawHost answers every redis.call with the same raw bytes.
type rawHost struct{ reply []byte }

func (h *rawHost) Call(dst []byte, _ [][]byte, _ int) []byte { return append(dst, h.reply...) }
func (h *rawHost) ACLCheckCmd([][]byte) (bool, bool)         { return true, true }
func (h *rawHost) Log(int, string)                           {}
func (h *rawHost) SetRepl(int)                               {}

// FuzzReplyToLua feeds arbitrary bytes as a command's reply through the
// RESP->Lua conversion and the Lua->RESP conversion back, for both
// protocols: it must never panic, and what comes back must be whole
// replies.
func FuzzReplyToLua(f *testing.F) {
	for _, s := range []string{
		":1\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*-1\r\n", "+OK\r\n", "-ERR x\r\n",
		"*2\r\n:1\r\n*1\r\n$1\r\na\r\n", "%1\r\n+a\r\n:1\r\n", "~1\r\n_\r\n", ",1.5\r\n",
		",inf\r\n", ",nan\r\n", "#t\r\n", "(123\r\n", "=8\r\ntxt:abcd\r\n", "|1\r\n+a\r\n+b\r\n:7\r\n",
		"%1\r\n_\r\n:1\r\n", "*3\r\n:1\r\n", "$5\r\nab\r\n", "*100000000\r\n",
	} {
		f.Add([]byte(s))
	}
	e := New()
	h := &rawHost{}
	f.Fuzz(func(t *testing.T, reply []byte) {
		h.reply = reply
		for _, proto := range []int{2, 3} {
			for _, body := range []string{
				"return redis.pcall('x')",
				"redis.setresp(3) return redis.pcall('x')",
				"return {redis.pcall('x'), redis.pcall('x')}",
			} {
				out, _ := e.Eval(nil, h, []byte(body), nil, nil, proto)
				if n := resp.CountReplies(out); n != 1 {
					t.Fatalf("%q for reply %q: %d replies in %q", body, reply, n, out)
				}
			}
		}
	})
}
