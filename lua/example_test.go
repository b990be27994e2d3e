package lua_test

import (
	"fmt"

	"github.com/redshard/redshard/lua"
	"github.com/redshard/redshard/resp"
)

// kv is the smallest Host: one map, GET and SET.
type kv map[string]string

func (m kv) Call(dst []byte, argv [][]byte, proto int) []byte {
	switch string(argv[0]) {
	case "GET", "get":
		v, ok := m[string(argv[1])]
		if !ok {
			return resp.AppendNull(dst, proto)
		}
		return resp.AppendBulkString(dst, v)
	case "SET", "set":
		m[string(argv[1])] = string(argv[2])
		return resp.AppendOK(dst)
	}
	return resp.AppendError(dst, "ERR unknown command")
}
func (m kv) ACLCheckCmd([][]byte) (allowed, known bool) { return true, true }
func (m kv) Log(level int, msg string)                  {}
func (m kv) SetRepl(flags int)                          {}

// A compare-and-delete lock release as applications send it: SCRIPT LOAD
// once, then EVALSHA per call.
func Example() {
	e := lua.New()
	host := kv{"lock": "token-1"}
	sha, _, err := e.Prepare([]byte(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], '') end return false`))
	if err != nil {
		panic(err)
	}
	out, st := e.EvalSHA(nil, host, []byte(sha), [][]byte{[]byte("lock")}, [][]byte{[]byte("token-1")}, 2)
	fmt.Printf("%q %+v\n", out, st)
	out, _ = e.EvalSHA(nil, host, []byte(sha), [][]byte{[]byte("lock")}, [][]byte{[]byte("token-1")}, 2)
	fmt.Printf("%q\n", out)
	// Output:
	// "+OK\r\n" {Err:false Killed:false Counted:false}
	// "$-1\r\n"
}
