package lua

import "testing"

func TestStructAsRedis(t *testing.T) {
	e := New()
	for _, tc := range []struct{ script, want string }{
		{`return hex(struct.pack('>I2', 258))`, "0102"},
		{`return hex(struct.pack('<i', -2))`, "feffffff"},
		{`return hex(struct.pack('HB', 1, 2))`, "010002"},
		{`return hex(struct.pack('!4 B i', 1, 2))`, "0100000002000000"},
		{`return hex(struct.pack('s', 'ab'))`, "616200"},
		{`return hex(struct.pack('c3', 'abcd'))`, "616263"},
		{`return hex(struct.pack('>d', 1.5))`, "3ff8000000000000"},
		{`return hex(struct.pack('<f', 1.5))`, "0000c03f"},
		{`return table.concat({struct.unpack('>I2 b', '\1\2\255')}, ',')`, "258,-1,4"},
		{`return table.concat({struct.unpack('B c0', '\3abcd')}, ',')`, "abc,5"},
		{`return table.concat({struct.unpack('s B', 'hi\0\7')}, ',')`, "hi,7,5"},
		{`return table.concat({struct.unpack('<d', struct.pack('<d', 0.1))}, ',')`, "0.1,9"},
		{`return struct.size('!8 b d')`, "16"},
		{`return struct.size('i l h')`, "14"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			got := eval(t, e, newFakeHost(), hexOf+"local r = (function() "+tc.script+" end)() return tostring(r)", 2, nil)
			if got != "$"+itoa(len(tc.want))+"\r\n"+tc.want+"\r\n" {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStructErrorsAsRedis(t *testing.T) {
	e := New()
	for _, tc := range []struct{ script, want string }{
		{`struct.pack('i33', 1)`, "integral size 33 is larger than limit of 32"},
		{`struct.pack('!3', 1)`, "alignment 3 is not a power of 2"},
		{`struct.unpack('s', 'abc')`, "unfinished string in data"},
		{`struct.unpack('c0', 'abc')`, "format 'c0' needs a previous size"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			got := eval(t, e, newFakeHost(), "local ok, err = pcall(function() "+tc.script+" end) return err", 2, nil)
			want := "user_script:1: " + tc.want
			if got != "$"+itoa(len(want))+"\r\n"+want+"\r\n" {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
