package server

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestMetaCounts(t *testing.T) {
	all := AllMeta()
	if len(all) != 240 {
		t.Fatalf("top-level commands: got %d, want 240 (Redis 7.0 COMMAND COUNT)", len(all))
	}
	total := 0
	for i, m := range all {
		total++
		if i > 0 && all[i-1].Name >= m.Name {
			t.Errorf("AllMeta not sorted at %q", m.Name)
		}
		if m.Container != "" || strings.Contains(m.Name, "|") {
			t.Errorf("%s: top-level command looks like a subcommand", m.Name)
		}
		if LookupMeta(m.Name) != m {
			t.Errorf("LookupMeta(%q) mismatch", m.Name)
		}
		for _, s := range m.Subcommands {
			total++
			if s.Container != m.Name || !strings.HasPrefix(s.Name, m.Name+"|") {
				t.Errorf("%s: bad container/name for parent %s", s.Name, m.Name)
			}
			if s.Group != m.Group {
				t.Errorf("%s: group %q differs from parent %q", s.Name, s.Group, m.Group)
			}
			if LookupMeta(s.Name) != s || m.Subcommand(strings.TrimPrefix(s.Name, m.Name+"|")) != s {
				t.Errorf("lookup of subcommand %q failed", s.Name)
			}
		}
	}
	if total != 366 {
		t.Errorf("commands including subcommands: got %d, want 366", total)
	}
	if LookupMeta("sentinel") != nil {
		t.Errorf("sentinel commands must be excluded")
	}
	if LookupMeta("nosuchcommand") != nil || LookupMeta("config|nosuch") != nil {
		t.Errorf("unknown names must give nil")
	}
	if LookupMeta("GET") != LookupMeta("get") {
		t.Errorf("LookupMeta should accept upper case")
	}
}

func metaWalkArgs(args []Arg, fn func(*Arg)) {
	for i := range args {
		fn(&args[i])
		metaWalkArgs(args[i].Args, fn)
	}
}

func TestMetaConsistency(t *testing.T) {
	var check func(m *CommandMeta)
	check = func(m *CommandMeta) {
		if m.Summary == "" || m.Group == "" || m.Since == "" || m.Arity == 0 {
			t.Errorf("%s: missing summary/group/since/arity", m.Name)
		}
		if m.Complexity != "" {
			t.Errorf("%s: complexity should be empty", m.Name)
		}
		if len(m.ACLCategories) == 0 || (m.HasACLCategory("fast") == m.HasACLCategory("slow")) {
			t.Errorf("%s: must be exactly one of @fast/@slow: %v", m.Name, m.ACLCategories)
		}
		metaWalkArgs(m.Args, func(a *Arg) {
			if a.KeySpecIndex < -1 || a.KeySpecIndex >= len(m.KeySpecs) {
				t.Errorf("%s: arg %s has bad key spec index %d", m.Name, a.Name, a.KeySpecIndex)
			}
			if (a.Type == "oneof" || a.Type == "block") != (len(a.Args) > 0) {
				t.Errorf("%s: arg %s type %s vs %d subargs", m.Name, a.Name, a.Type, len(a.Args))
			}
		})
		for _, s := range m.Subcommands {
			check(s)
		}
	}
	for _, m := range AllMeta() {
		check(m)
	}
}

func TestMetaKnownFacts(t *testing.T) {
	get := LookupMeta("get")
	if get == nil || get.Arity != 2 || get.FirstKey != 1 || get.LastKey != 1 || get.KeyStep != 1 {
		t.Fatalf("get: %+v", get)
	}
	if fmt.Sprint(get.Flags) != "[readonly fast]" {
		t.Errorf("get flags: %v", get.Flags)
	}
	if fmt.Sprint(get.ACLCategories) != "[@read @string @fast]" {
		t.Errorf("get categories: %v", get.ACLCategories)
	}
	if get.Group != "string" || get.Since != "1.0.0" {
		t.Errorf("get group/since: %q %q", get.Group, get.Since)
	}

	set := LookupMeta("set")
	if set.Arity != -3 || !set.HasFlag("write") || !set.HasFlag("denyoom") || set.FirstKey != 1 || set.LastKey != 1 {
		t.Errorf("set: arity %d flags %v keys %d,%d", set.Arity, set.Flags, set.FirstKey, set.LastKey)
	}
	if len(set.KeySpecs) != 1 || set.KeySpecs[0].Notes == "" || fmt.Sprint(set.KeySpecs[0].Flags) != "[RW ACCESS UPDATE VARIABLE_FLAGS]" {
		t.Errorf("set key specs: %+v", set.KeySpecs)
	}

	mset := LookupMeta("mset")
	if mset.Arity != -3 || mset.FirstKey != 1 || mset.LastKey != -1 || mset.KeyStep != 2 {
		t.Errorf("mset: arity %d keys %d,%d,%d", mset.Arity, mset.FirstKey, mset.LastKey, mset.KeyStep)
	}

	cfg := LookupMeta("config")
	cget := LookupMeta("config|get")
	if cget == nil || cget.Container != "config" || cfg.Subcommand("get") != cget {
		t.Fatalf("config|get is not a subcommand of config")
	}
	if cget.Arity != -3 || cfg.Arity != -2 {
		t.Errorf("config arities: %d %d", cfg.Arity, cget.Arity)
	}

	z := LookupMeta("zunionstore")
	if len(z.KeySpecs) != 2 {
		t.Fatalf("zunionstore key specs: %+v", z.KeySpecs)
	}
	ks := z.KeySpecs[1]
	if ks.FindKeysRange || ks.FindKeysUnknown || ks.BeginSearchIndex != 2 || ks.KeyNumIdx != 0 || ks.FirstKey != 1 || ks.KeyNumStep != 1 {
		t.Errorf("zunionstore keynum spec: %+v", ks)
	}
	if !z.HasFlag("movablekeys") || z.FirstKey != 1 || z.LastKey != 1 || z.KeyStep != 1 {
		t.Errorf("zunionstore legacy range/flags: %v %d,%d,%d", z.Flags, z.FirstKey, z.LastKey, z.KeyStep)
	}

	if m := LookupMeta("xread"); m.KeySpecs[0].BeginSearchKeyword != "STREAMS" || m.FirstKey != 0 || !m.HasFlag("blocking") {
		t.Errorf("xread: %+v", m)
	}
	if m := LookupMeta("sort"); !m.KeySpecs[1].BeginSearchUnknown || !m.KeySpecs[1].FindKeysUnknown {
		t.Errorf("sort unknown key specs: %+v", m.KeySpecs)
	}
	if m := LookupMeta("georadius"); m.DeprecatedSince != "6.2.0" || fmt.Sprint(m.DocFlags) != "[deprecated]" || m.ReplacedBy == "" {
		t.Errorf("georadius deprecation: %q %v %q", m.DeprecatedSince, m.DocFlags, m.ReplacedBy)
	}
	if m := LookupMeta("eval_ro"); m.HasACLCategory("read") || !m.HasACLCategory("scripting") {
		t.Errorf("eval_ro categories: %v", m.ACLCategories)
	}
	if m := LookupMeta("publish"); !m.HasFlag("may_replicate") || !m.HasACLCategory("pubsub") {
		t.Errorf("publish: %v %v", m.Flags, m.ACLCategories)
	}
}

// metaFixture turns a fixture (one RESP line per text line, "'" standing for
// a backquote) into wire bytes.
func metaFixture(s string) []byte {
	s = strings.ReplaceAll(s, "'", "`")
	return []byte(strings.ReplaceAll(s, "\n", "\r\n"))
}

func TestMetaCommandInfoBytes(t *testing.T) {
	cases := []struct {
		name  string
		proto int
		want  string
	}{
		{"get", 2, metaWantInfoGetRESP2},
		{"get", 3, metaWantInfoGetRESP3},
		{"zunionstore", 2, metaWantInfoZunionstoreRESP2},
		{"config|get", 3, metaWantInfoConfigGetRESP3},
	}
	for _, c := range cases {
		got := AppendCommandInfo(nil, LookupMeta(c.name), c.proto)
		if want := metaFixture(c.want); !bytes.Equal(got, want) {
			t.Errorf("COMMAND INFO %s RESP%d:\n got %q\nwant %q", c.name, c.proto, got, want)
		}
	}
	if got := string(AppendCommandInfo(nil, nil, 2)); got != "$-1\r\n" {
		t.Errorf("nil info RESP2: %q", got)
	}
	if got := string(AppendCommandInfo(nil, nil, 3)); got != "_\r\n" {
		t.Errorf("nil info RESP3: %q", got)
	}
}

// metaTestNode is a parsed RESP value (maps keep their flat key/value list).
type metaTestNode struct {
	typ  byte
	str  string
	kids []*metaTestNode
}

func metaTestParse(b []byte) (*metaTestNode, []byte, error) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return nil, nil, fmt.Errorf("truncated reply")
	}
	line, rest := string(b[:i]), b[i+2:]
	n := &metaTestNode{typ: line[0], str: line[1:]}
	switch n.typ {
	case '+', '-', ':', '_':
	case '$':
		l, err := strconv.Atoi(n.str)
		if err != nil || l < 0 || len(rest) < l+2 || string(rest[l:l+2]) != "\r\n" {
			return nil, nil, fmt.Errorf("bad bulk %q", line)
		}
		n.str, rest = string(rest[:l]), rest[l+2:]
	case '*', '~', '%':
		c, err := strconv.Atoi(n.str)
		if err != nil || c < 0 {
			return nil, nil, fmt.Errorf("bad aggregate %q", line)
		}
		if n.typ == '%' {
			c *= 2
		}
		n.str = ""
		for j := 0; j < c; j++ {
			var k *metaTestNode
			if k, rest, err = metaTestParse(rest); err != nil {
				return nil, nil, err
			}
			n.kids = append(n.kids, k)
		}
	default:
		return nil, nil, fmt.Errorf("bad type %q", line)
	}
	return n, rest, nil
}

func (n *metaTestNode) encode(b []byte) []byte {
	switch n.typ {
	case '$':
		return fmt.Appendf(b, "$%d\r\n%s\r\n", len(n.str), n.str)
	case '*', '~', '%':
		c := len(n.kids)
		if n.typ == '%' {
			c /= 2
		}
		b = fmt.Appendf(b, "%c%d\r\n", n.typ, c)
		for _, k := range n.kids {
			b = k.encode(b)
		}
		return b
	default:
		return fmt.Appendf(b, "%c%s\r\n", n.typ, n.str)
	}
}

// metaTestNormDocs replaces the summary by "X", drops the complexity and sorts
// subcommands (Redis replies them in dict order), recursively.
func metaTestNormDocs(n *metaTestNode) {
	var out []*metaTestNode
	for i := 0; i+1 < len(n.kids); i += 2 {
		k, v := n.kids[i], n.kids[i+1]
		switch k.str {
		case "complexity":
			continue
		case "summary":
			v = &metaTestNode{typ: '$', str: "X"}
		case "subcommands":
			type pair struct{ k, v *metaTestNode }
			var ps []pair
			for j := 0; j+1 < len(v.kids); j += 2 {
				metaTestNormDocs(v.kids[j+1])
				ps = append(ps, pair{v.kids[j], v.kids[j+1]})
			}
			sort.Slice(ps, func(a, b int) bool { return ps[a].k.str < ps[b].k.str })
			v.kids = v.kids[:0]
			for _, p := range ps {
				v.kids = append(v.kids, p.k, p.v)
			}
		}
		out = append(out, k, v)
	}
	n.kids = out
}

func TestMetaCommandDocsBytes(t *testing.T) {
	cases := []struct {
		name  string
		proto int
		want  string
	}{
		{"set", 2, metaWantDocsSetRESP2},
		{"set", 3, metaWantDocsSetRESP3},
		{"zadd", 2, metaWantDocsZaddRESP2},
	}
	for _, c := range cases {
		raw := AppendCommandDocs(nil, LookupMeta(c.name), c.proto)
		n, rest, err := metaTestParse(raw)
		if err != nil || len(rest) != 0 {
			t.Fatalf("COMMAND DOCS %s: unparsable reply (%v, %d trailing bytes)", c.name, err, len(rest))
		}
		metaTestNormDocs(n)
		got := n.encode(nil)
		if want := metaFixture(c.want); !bytes.Equal(got, want) {
			t.Errorf("COMMAND DOCS %s RESP%d (normalised):\n got %q\nwant %q", c.name, c.proto, got, want)
		}
	}
}

// TestMetaRepliesWellFormed checks that every entry encodes to exactly one
// well-formed RESP value in both protocols.
func TestMetaRepliesWellFormed(t *testing.T) {
	for _, m := range AllMeta() {
		for _, proto := range []int{2, 3} {
			for what, b := range map[string][]byte{
				"info": AppendCommandInfo(nil, m, proto),
				"docs": AppendCommandDocs(nil, m, proto),
			} {
				n, rest, err := metaTestParse(b)
				if err != nil || len(rest) != 0 {
					t.Errorf("%s %s RESP%d: %v, %d trailing bytes", what, m.Name, proto, err, len(rest))
					continue
				}
				if what == "info" && (len(n.kids) != 10 || n.kids[0].str != m.Name || len(n.kids[9].kids) != len(m.Subcommands)) {
					t.Errorf("info %s RESP%d: bad shape", m.Name, proto)
				}
			}
		}
	}
}

// metaWantInfoGetRESP2 is redis-server 7.0.15's reply to COMMAND INFO GET (RESP2).
var metaWantInfoGetRESP2 = `*10
$3
get
:2
*2
+readonly
+fast
:1
:1
:1
*3
+@read
+@string
+@fast
*0
*1
*6
$5
flags
*2
+RO
+access
$12
begin_search
*4
$4
type
$5
index
$4
spec
*2
$5
index
:1
$9
find_keys
*4
$4
type
$5
range
$4
spec
*6
$7
lastkey
:0
$7
keystep
:1
$5
limit
:0
*0
`

// metaWantInfoGetRESP3 is redis-server 7.0.15's reply to COMMAND INFO GET (RESP3).
var metaWantInfoGetRESP3 = `*10
$3
get
:2
~2
+readonly
+fast
:1
:1
:1
~3
+@read
+@string
+@fast
~0
~1
%3
$5
flags
~2
+RO
+access
$12
begin_search
%2
$4
type
$5
index
$4
spec
%1
$5
index
:1
$9
find_keys
%2
$4
type
$5
range
$4
spec
%3
$7
lastkey
:0
$7
keystep
:1
$5
limit
:0
~0
`

// metaWantInfoZunionstoreRESP2 is redis-server 7.0.15's reply to COMMAND INFO ZUNIONSTORE (RESP2).
var metaWantInfoZunionstoreRESP2 = `*10
$11
zunionstore
:-4
*3
+write
+denyoom
+movablekeys
:1
:1
:1
*3
+@write
+@sortedset
+@slow
*0
*2
*6
$5
flags
*2
+OW
+update
$12
begin_search
*4
$4
type
$5
index
$4
spec
*2
$5
index
:1
$9
find_keys
*4
$4
type
$5
range
$4
spec
*6
$7
lastkey
:0
$7
keystep
:1
$5
limit
:0
*6
$5
flags
*2
+RO
+access
$12
begin_search
*4
$4
type
$5
index
$4
spec
*2
$5
index
:2
$9
find_keys
*4
$4
type
$6
keynum
$4
spec
*6
$9
keynumidx
:0
$8
firstkey
:1
$7
keystep
:1
*0
`

// metaWantInfoConfigGetRESP3 is redis-server 7.0.15's reply to COMMAND INFO CONFIG|GET (RESP3).
var metaWantInfoConfigGetRESP3 = `*10
$10
config|get
:-3
~4
+admin
+noscript
+loading
+stale
:0
:0
:0
~3
+@admin
+@slow
+@dangerous
~0
~0
~0
`

// metaWantDocsSetRESP2 is redis-server 7.0.15's reply to COMMAND DOCS SET (RESP2), with the summary replaced by X and the complexity entry removed.
var metaWantDocsSetRESP2 = `*10
$7
summary
$1
X
$5
since
$5
1.0.0
$5
group
$6
string
$7
history
*4
*2
$6
2.6.12
$44
Added the 'EX', 'PX', 'NX' and 'XX' options.
*2
$5
6.0.0
$27
Added the 'KEEPTTL' option.
*2
$5
6.2.0
$42
Added the 'GET', 'EXAT' and 'PXAT' option.
*2
$5
7.0.0
$55
Allowed the 'NX' and 'GET' options to be used together.
$9
arguments
*5
*6
$4
name
$3
key
$4
type
$3
key
$14
key_spec_index
:0
*4
$4
name
$5
value
$4
type
$6
string
*10
$4
name
$9
condition
$4
type
$5
oneof
$5
since
$6
2.6.12
$5
flags
*1
+optional
$9
arguments
*2
*6
$4
name
$2
nx
$4
type
$10
pure-token
$5
token
$2
NX
*6
$4
name
$2
xx
$4
type
$10
pure-token
$5
token
$2
XX
*10
$4
name
$3
get
$4
type
$10
pure-token
$5
token
$3
GET
$5
since
$5
6.2.0
$5
flags
*1
+optional
*8
$4
name
$10
expiration
$4
type
$5
oneof
$5
flags
*1
+optional
$9
arguments
*5
*8
$4
name
$7
seconds
$4
type
$7
integer
$5
token
$2
EX
$5
since
$6
2.6.12
*8
$4
name
$12
milliseconds
$4
type
$7
integer
$5
token
$2
PX
$5
since
$6
2.6.12
*8
$4
name
$17
unix-time-seconds
$4
type
$9
unix-time
$5
token
$4
EXAT
$5
since
$5
6.2.0
*8
$4
name
$22
unix-time-milliseconds
$4
type
$9
unix-time
$5
token
$4
PXAT
$5
since
$5
6.2.0
*8
$4
name
$7
keepttl
$4
type
$10
pure-token
$5
token
$7
KEEPTTL
$5
since
$5
6.0.0
`

// metaWantDocsSetRESP3 is redis-server 7.0.15's reply to COMMAND DOCS SET (RESP3), with the summary replaced by X and the complexity entry removed.
var metaWantDocsSetRESP3 = `%5
$7
summary
$1
X
$5
since
$5
1.0.0
$5
group
$6
string
$7
history
~4
*2
$6
2.6.12
$44
Added the 'EX', 'PX', 'NX' and 'XX' options.
*2
$5
6.0.0
$27
Added the 'KEEPTTL' option.
*2
$5
6.2.0
$42
Added the 'GET', 'EXAT' and 'PXAT' option.
*2
$5
7.0.0
$55
Allowed the 'NX' and 'GET' options to be used together.
$9
arguments
*5
%3
$4
name
$3
key
$4
type
$3
key
$14
key_spec_index
:0
%2
$4
name
$5
value
$4
type
$6
string
%5
$4
name
$9
condition
$4
type
$5
oneof
$5
since
$6
2.6.12
$5
flags
~1
+optional
$9
arguments
*2
%3
$4
name
$2
nx
$4
type
$10
pure-token
$5
token
$2
NX
%3
$4
name
$2
xx
$4
type
$10
pure-token
$5
token
$2
XX
%5
$4
name
$3
get
$4
type
$10
pure-token
$5
token
$3
GET
$5
since
$5
6.2.0
$5
flags
~1
+optional
%4
$4
name
$10
expiration
$4
type
$5
oneof
$5
flags
~1
+optional
$9
arguments
*5
%4
$4
name
$7
seconds
$4
type
$7
integer
$5
token
$2
EX
$5
since
$6
2.6.12
%4
$4
name
$12
milliseconds
$4
type
$7
integer
$5
token
$2
PX
$5
since
$6
2.6.12
%4
$4
name
$17
unix-time-seconds
$4
type
$9
unix-time
$5
token
$4
EXAT
$5
since
$5
6.2.0
%4
$4
name
$22
unix-time-milliseconds
$4
type
$9
unix-time
$5
token
$4
PXAT
$5
since
$5
6.2.0
%4
$4
name
$7
keepttl
$4
type
$10
pure-token
$5
token
$7
KEEPTTL
$5
since
$5
6.0.0
`

// metaWantDocsZaddRESP2 is redis-server 7.0.15's reply to COMMAND DOCS ZADD (RESP2), with the summary replaced by X and the complexity entry removed.
var metaWantDocsZaddRESP2 = `*10
$7
summary
$1
X
$5
since
$5
1.2.0
$5
group
$10
sorted-set
$7
history
*3
*2
$5
2.4.0
$26
Accepts multiple elements.
*2
$5
3.0.2
$46
Added the 'XX', 'NX', 'CH' and 'INCR' options.
*2
$5
6.2.0
$32
Added the 'GT' and 'LT' options.
$9
arguments
*6
*6
$4
name
$3
key
$4
type
$3
key
$14
key_spec_index
:0
*10
$4
name
$9
condition
$4
type
$5
oneof
$5
since
$5
3.0.2
$5
flags
*1
+optional
$9
arguments
*2
*6
$4
name
$2
nx
$4
type
$10
pure-token
$5
token
$2
NX
*6
$4
name
$2
xx
$4
type
$10
pure-token
$5
token
$2
XX
*10
$4
name
$10
comparison
$4
type
$5
oneof
$5
since
$5
6.2.0
$5
flags
*1
+optional
$9
arguments
*2
*6
$4
name
$2
gt
$4
type
$10
pure-token
$5
token
$2
GT
*6
$4
name
$2
lt
$4
type
$10
pure-token
$5
token
$2
LT
*10
$4
name
$6
change
$4
type
$10
pure-token
$5
token
$2
CH
$5
since
$5
3.0.2
$5
flags
*1
+optional
*10
$4
name
$9
increment
$4
type
$10
pure-token
$5
token
$4
INCR
$5
since
$5
3.0.2
$5
flags
*1
+optional
*8
$4
name
$12
score_member
$4
type
$5
block
$5
flags
*1
+multiple
$9
arguments
*2
*4
$4
name
$5
score
$4
type
$6
double
*4
$4
name
$6
member
$4
type
$6
string
`
