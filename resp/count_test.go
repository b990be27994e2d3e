package resp

import "testing"

func TestCountReplies(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"+OK\r\n", 1},
		{"+OK\r\n:1\r\n$3\r\nfoo\r\n$-1\r\n", 4},
		{"*2\r\n$1\r\na\r\n*1\r\n:2\r\n-ERR x\r\n", 2},
		{"%1\r\n+a\r\n:1\r\n~2\r\n,1.5\r\n#t\r\n_\r\n", 3},
		{"|1\r\n+ttl\r\n:3\r\n$1\r\nx\r\n", 1},
		{">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n+OK\r\n", 2},
		{"=15\r\ntxt:Some string\r\n", 1},
		{"$3\r\nab\r\n", 0},        // truncated: bulk body too short
		{"+OK\r\n*2\r\n:1\r\n", 1}, // truncated array
		{"*-1\r\n", 1},
	}
	for _, c := range cases {
		if got := CountReplies([]byte(c.in)); got != c.want {
			t.Errorf("CountReplies(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
