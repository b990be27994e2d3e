package lua

import "testing"

const hexOf = `local function hex(s) local h = "" for i = 1, #s do h = h .. string.format("%02x", string.byte(s, i)) end return h end `

func TestCmsgpackPacksAsRedis(t *testing.T) {
	e := New()
	for _, tc := range []struct{ expr, want string }{
		{"cmsgpack.pack(0.1)", "cb3fb999999999999a"},
		{"cmsgpack.pack(-1099511627776)", "d3ffffff0000000000"},
		{"cmsgpack.pack(1.5)", "ca3fc00000"},
		{"cmsgpack.pack(1, 127, 128, 255, 256, 65535, 65536)", "017fcc80ccffcd0100cdffffce00010000"},
		{"cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769)", "ffe0d0dfd080d1ff7fd18000d2ffff7fff"},
		{"cmsgpack.pack(2^32)", "cf0000000100000000"},
		{"cmsgpack.pack({})", "90"}, // table_is_an_array: 0 keys, max 0
		{"cmsgpack.pack({1,2,3})", "93010203"},
		{"cmsgpack.pack({a=1})", "81a16101"},
		{"cmsgpack.pack(true, false, nil)", "c3c2c0"},
		{"cmsgpack.pack(string.rep('x', 32)):sub(1, 2)", "d920"},
		{"cmsgpack.pack(string.rep('x', 256)):sub(1, 3)", "da0100"},
	} {
		if tc.want == "" {
			continue
		}
		t.Run(tc.expr, func(t *testing.T) {
			got := eval(t, e, newFakeHost(), hexOf+"return hex("+tc.expr+")", 2, nil)
			if got != "$"+itoa(len(tc.want))+"\r\n"+tc.want+"\r\n" {
				t.Errorf("got %q, want %s", got, tc.want)
			}
		})
	}
}

// TestCmsgpackRedisSuite runs the cmsgpack scripts of Redis 7.0's
// tests/unit/scripting.tcl with their expected replies.
func TestCmsgpackRedisSuite(t *testing.T) {
	e := New()
	circular := hexOf + `local a = {x=nil,y=5}
local b = {x=a}
a['x'] = b
local encoded = cmsgpack.pack(a)
local re = cmsgpack.unpack(encoded)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil)
return {hex(encoded), re.x.x.x.x.x.x.x.x.y == re.y, re.y == 5}`
	want := "82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0"
	if got := eval(t, e, newFakeHost(), circular, 2, nil); got != "*3\r\n$"+itoa(len(want))+"\r\n"+want+"\r\n:1\r\n:1\r\n" {
		t.Errorf("circular: got %q", got)
	}
	smoke := `
local str_lt_32 = string.rep("x", 30)
local str_lt_255 = string.rep("x", 250)
local str_lt_65535 = string.rep("x", 65530)
local str_long = string.rep("x", 100000)
local array_big = {}
for i=1, 100000 do array_big[i] = i end
local map_big = {}
for i=1, 100000 do map_big[tostring(i)] = i end
local some_map = {s1=str_lt_32, s2=str_lt_255, s3=str_lt_65535, s4=str_long, d1=0.1, i1=1, i2=250, i3=65530,
  i4=100000, i5=2^40, i6=-1, i7=-120, i8=-32000, i9=-100000, i10=-3147483648, a1={1,2,3,4,5},
  a2={1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18}, a3=array_big, m1={a=1,b=2}, m2=map_big, b1=false, b2=true}
local encoded = cmsgpack.pack(some_map)
local decoded = cmsgpack.unpack(encoded)
for k, v in pairs(some_map) do
  if type(v) ~= 'table' then assert(decoded[k] == v, k) end
end
assert(decoded.a3[100000] == 100000 and decoded.m2["777"] == 777 and decoded.a2[18] == 18)
local offset, decoded_one = cmsgpack.unpack_one(encoded, 0)
assert(offset == -1 and decoded_one.i10 == -3147483648)
local encoded_multiple = cmsgpack.pack(str_lt_32, str_lt_255, str_lt_65535, str_long)
local offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, 0)
assert(obj == str_lt_32)
offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
assert(obj == str_lt_255)
offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
assert(obj == str_lt_65535)
offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
assert(obj == str_long)
assert(offset == -1)
return 'ok'`
	if got := eval(t, e, newFakeHost(), smoke, 2, nil); got != "$2\r\nok\r\n" {
		t.Errorf("smoke: got %q", got)
	}
}

func TestCmsgpackUnpackErrors(t *testing.T) {
	e := New()
	for _, tc := range []struct{ script, want string }{
		{`cmsgpack.unpack('\146\1')`, "Missing bytes in input."},
		{`cmsgpack.unpack('\193')`, "Bad data format in input."},
		{`cmsgpack.pack()`, "bad argument #0 to 'pack' (MessagePack pack needs input.)"}, // Redis: to '?' (no name through pcall)
		{`cmsgpack.unpack_one('\1', 5)`, "Start offset 5 greater than input length 1."},
		{`cmsgpack.unpack('\129\206\3\138\50\128\1')`, "cmsgpack: integer map key 59388544 too sparse for this Lua (gap over 1048576)"},
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
