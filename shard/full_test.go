package shard

import (
	"strconv"
	"testing"
)

// runCmd runs one command of the full table with argv as given.
func runCmd(t *testing.T, c *Ctx, args ...string) string {
	t.Helper()
	c.Out = c.Out[:0]
	c.Prop.Reset()
	for _, cmd := range Commands {
		if cmd.Name == args[0] {
			argv := make([][]byte, len(args))
			for i, a := range args {
				argv[i] = []byte(a)
			}
			cmd.Run(c, argv)
			return string(c.Out)
		}
	}
	t.Fatalf("no command %q", args[0])
	return ""
}

// Commands whose reply has no bound stop building it once Full says the
// client is past its output buffer hard limit (Redis's CLIENT_CLOSE_ASAP
// checks in hrandfield, srandmember, zrandmember and KEYS), and build all
// of it when there is no limit.
func TestUnboundedRepliesStopWhenOutputIsFull(t *testing.T) {
	c := newStringCtx(4)
	runCmd(t, c, "hset", "h", "f", "v")
	runCmd(t, c, "sadd", "s", "m")
	runCmd(t, c, "zadd", "z", "1", "m")
	for i := 0; i < 3000; i++ {
		runCmd(t, c, "set", "key:"+strconv.Itoa(i), "v")
	}
	const limit = 20000
	cases := []struct {
		args []string
		full int // the reply's length without a limit
	}{
		{[]string{"hrandfield", "h", "-5000"}, 5000*7 + 7},
		{[]string{"hrandfield", "h", "-5000", "withvalues"}, 10000*7 + 8},
		{[]string{"srandmember", "s", "-5000"}, 5000*7 + 7},
		{[]string{"zrandmember", "z", "-5000"}, 5000*7 + 7},
		{[]string{"keys", "*"}, 0},
	}
	for _, tc := range cases {
		c.OutputFull = nil
		all := len(runCmd(t, c, tc.args...))
		if tc.full != 0 && all != tc.full {
			t.Errorf("%v without a limit: %d bytes, want %d", tc.args, all, tc.full)
		}
		calls := 0
		c.OutputFull = func(n int) bool { calls++; return n >= limit }
		got := len(runCmd(t, c, tc.args...))
		// It stops at the first check past the limit: at most one batch of
		// elements (of up to 20 bytes here) beyond it.
		if calls == 0 || got < limit || got > limit+fullEvery*20 || got >= all {
			t.Errorf("%v with a limit of %d: %d bytes of %d after %d checks", tc.args, limit, got, all, calls)
		}
	}
	c.OutputFull = nil
}
