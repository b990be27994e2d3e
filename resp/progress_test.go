package resp

import "testing"

// Progress and BulkLen describe an incomplete command as Redis's query
// buffer and argv would hold it.
func TestProgress(t *testing.T) {
	tests := []struct {
		in               string
		consumed, argv   int
		bulkLen, pending int
	}{
		{"", 0, 0, 0, 0},
		{"PING", 0, 0, 0, 0},                   // inline: all in the query buffer
		{"*3\r\n", 4, 0, 0, 0},                 // count line consumed
		{"*3\r\n$3\r\nset\r\n$1", 13, 3, 0, 0}, // "$1" being read
		{"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$10\r\nab", 25, 4, 10, 10}, // payload of 10 being read
		{"*1\r\n$5\r\n", 8, 0, 5, 7},
	}
	for _, tt := range tests {
		var p Parser
		args, n, err := p.Next([]byte(tt.in), nil)
		if args != nil || n != 0 || err != nil {
			t.Fatalf("%q: not incomplete: %q %d %v", tt.in, args, n, err)
		}
		c, a := p.Progress()
		if c != tt.consumed || a != tt.argv {
			t.Errorf("%q: Progress = %d, %d; want %d, %d", tt.in, c, a, tt.consumed, tt.argv)
		}
		if got := p.BulkLen(); got != int64(tt.bulkLen) {
			t.Errorf("%q: BulkLen = %d, want %d", tt.in, got, tt.bulkLen)
		}
		if got := p.Pending(); got != tt.pending {
			t.Errorf("%q: Pending = %d, want %d", tt.in, got, tt.pending)
		}
	}
}
