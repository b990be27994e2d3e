package lua

import (
	"syscall"
	"testing"
	"time"

	"github.com/redshard/redshard/resp"
)

// benchHost holds one key, as a shard would answer GET and SET for it.
type benchHost struct{ val []byte }

func (h *benchHost) Call(dst []byte, argv [][]byte, proto int) []byte {
	switch len(argv) {
	case 2: // GET key
		return resp.AppendBulk(dst, h.val)
	default: // SET key value
		h.val = append(h.val[:0], argv[2]...)
		return resp.AppendOK(dst)
	}
}
func (h *benchHost) ACLCheckCmd([][]byte) (bool, bool) { return true, true }
func (h *benchHost) Log(int, string)                   {}
func (h *benchHost) SetRepl(int)                       {}

// BenchmarkEvalSHAGetCompareSet is the one-key script: GET, compare,
// SET, through EVALSHA.
func BenchmarkEvalSHAGetCompareSet(b *testing.B) {
	e := New()
	h := &benchHost{val: []byte("old")}
	sha, err := e.Load([]byte(`
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0`))
	if err != nil {
		b.Fatal(err)
	}
	shab := []byte(sha)
	keys := [][]byte{[]byte("key:000000000042")}
	args := [][]byte{[]byte("new")}
	vals := [][]byte{[]byte("new"), []byte("xxx")}
	var out []byte
	b.ReportAllocs()
	// CPU time per call as well as wall time: on a shared machine the wall
	// time also counts the other processes.
	cpu0 := cpuTime()
	n := 0
	for i := 0; b.Loop(); i++ {
		n++
		args[0] = vals[i&1]
		out, _ = e.EvalSHA(out[:0], h, shab, keys, args, 2)
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
	if string(out) != ":1\r\n" {
		b.Fatalf("reply %q", out)
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
