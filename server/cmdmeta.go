package server

import (
	"strconv"
	"strings"
)

// KeySpec describes where a command finds its keys (Redis 7.0 key specs).
type KeySpec struct {
	Flags []string // as in the Redis JSON, upper case: "RO", "RW", "OW", "RM", "ACCESS", "UPDATE", "INSERT", "DELETE", "NOT_KEY", "INCOMPLETE", "VARIABLE_FLAGS"

	// begin_search: exactly one of index (BeginSearchIndex > 0), keyword
	// (BeginSearchKeyword != "") or unknown (BeginSearchUnknown).
	BeginSearchIndex     int // begin_search.index.pos (0 if keyword or unknown)
	BeginSearchKeyword   string
	BeginSearchStartFrom int
	BeginSearchUnknown   bool

	// find_keys: range (FindKeysRange), unknown (FindKeysUnknown) or else keynum.
	FindKeysRange           bool
	FindKeysUnknown         bool
	LastKey, KeyStep, Limit int // range
	KeyNumIdx, FirstKey     int // keynum
	KeyNumStep              int // keynum
	Notes                   string
}

// ArgFlag holds the flags of a command argument.
type ArgFlag uint8

// Argument flags (same bit values as Redis' CMD_ARG_*).
const (
	ArgOptional ArgFlag = 1 << iota
	ArgMultiple
	ArgMultipleToken
)

// Arg describes one command argument as COMMAND DOCS reports it.
type Arg struct {
	Name, Type, DisplayText, Token, Summary, Since, Deprecated string

	KeySpecIndex int // -1 when none
	Flags        ArgFlag
	Value        string // the JSON "value" field, if any (unused by Redis 7.0)
	Args         []Arg  // for oneof/block
}

// CommandMeta is the static description of a command or subcommand.
type CommandMeta struct {
	Name      string // lower case, e.g. "set"; for a subcommand "config|get"
	Container string // "" or the parent name, e.g. "config"
	Arity     int

	// Flags in lower case, in Redis' bit order. It includes flags that Redis
	// hides from COMMAND INFO ("may_replicate", "sentinel", "only_sentinel",
	// "protected", "touches_arbitrary_keys") and the derived "movablekeys".
	Flags []string
	// ACLCategories with the "@" prefix, including implicit ones, in the
	// order Redis replies them.
	ACLCategories []string
	// Legacy (first, last, step) triple as COMMAND INFO reports it.
	FirstKey, LastKey, KeyStep int
	KeySpecs                   []KeySpec
	Tips                       []string

	Group, Since, Summary, Complexity string
	DocFlags                          []string // "deprecated", "syscmd"
	DeprecatedSince, ReplacedBy       string
	History                           [][2]string
	Args                              []Arg
	Subcommands                       []*CommandMeta // sorted by name
}

// HasFlag reports whether m has the lower-case command flag f.
func (m *CommandMeta) HasFlag(f string) bool {
	for _, x := range m.Flags {
		if x == f {
			return true
		}
	}
	return false
}

// HasACLCategory reports whether m is in category c ("@write" or "write").
func (m *CommandMeta) HasACLCategory(c string) bool {
	if !strings.HasPrefix(c, "@") {
		c = "@" + c
	}
	for _, x := range m.ACLCategories {
		if x == c {
			return true
		}
	}
	return false
}

// Subcommand returns the subcommand named sub (e.g. "get" or "config|get"), or nil.
func (m *CommandMeta) Subcommand(sub string) *CommandMeta {
	if !strings.Contains(sub, "|") {
		sub = m.Name + "|" + sub
	}
	for _, s := range m.Subcommands {
		if s.Name == sub {
			return s
		}
	}
	return nil
}

var metaByName = func() map[string]*CommandMeta {
	idx := make(map[string]*CommandMeta, 400)
	for _, c := range metaCommandTable {
		idx[c.Name] = c
		for _, s := range c.Subcommands {
			idx[s.Name] = s
		}
	}
	return idx
}()

// LookupMeta returns the metadata of a command or "container|sub" name (lower
// case), or nil.
func LookupMeta(name string) *CommandMeta {
	if m, ok := metaByName[name]; ok {
		return m
	}
	if l := strings.ToLower(name); l != name {
		return metaByName[l]
	}
	return nil
}

// AllMeta returns the top-level commands, sorted by name. The slice is
// shared; callers must not modify it.
func AllMeta() []*CommandMeta {
	return metaCommandTable
}

// Reply flag tables, in the order Redis 7.0 emits them.
var (
	metaInfoFlagOrder = []string{
		"write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
		"blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking",
		"fast", "no_auth", "no_mandatory_keys", "no_async_loading", "no_multi",
		"movablekeys", "allow_busy",
	}
	metaKeySpecFlagOrder = [][2]string{
		{"RO", "RO"}, {"RW", "RW"}, {"OW", "OW"}, {"RM", "RM"},
		{"ACCESS", "access"}, {"UPDATE", "update"}, {"INSERT", "insert"},
		{"DELETE", "delete"}, {"NOT_KEY", "not_key"}, {"INCOMPLETE", "incomplete"},
		{"VARIABLE_FLAGS", "variable_flags"},
	}
	metaDocFlagOrder = []string{"deprecated", "syscmd"}
)

// ---- private RESP helpers ----

func metaAppendLen(b []byte, prefix byte, n int) []byte {
	b = append(b, prefix)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func metaAppendArrayLen(b []byte, n int) []byte { return metaAppendLen(b, '*', n) }

func metaAppendSetLen(b []byte, n, proto int) []byte {
	if proto >= 3 {
		return metaAppendLen(b, '~', n)
	}
	return metaAppendLen(b, '*', n)
}

func metaAppendMapLen(b []byte, n, proto int) []byte {
	if proto >= 3 {
		return metaAppendLen(b, '%', n)
	}
	return metaAppendLen(b, '*', 2*n)
}

func metaAppendBulk(b []byte, s string) []byte {
	b = metaAppendLen(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func metaAppendInt(b []byte, n int) []byte { return metaAppendLen(b, ':', n) }

func metaAppendStatus(b []byte, s string) []byte {
	b = append(b, '+')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func metaAppendNull(b []byte, proto int) []byte {
	if proto >= 3 {
		return append(b, '_', '\r', '\n')
	}
	return append(b, '$', '-', '1', '\r', '\n')
}

func metaContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// metaAppendStatusSet writes the members of order present in have as a set of
// status replies (Redis' addReplyCommandFlags).
func metaAppendStatusSet(b []byte, order, have []string, proto int) []byte {
	n := 0
	for _, f := range order {
		if metaContains(have, f) {
			n++
		}
	}
	b = metaAppendSetLen(b, n, proto)
	for _, f := range order {
		if metaContains(have, f) {
			b = metaAppendStatus(b, f)
		}
	}
	return b
}

func metaAppendKeySpecFlags(b []byte, flags []string, proto int) []byte {
	n := 0
	for _, f := range metaKeySpecFlagOrder {
		if metaContains(flags, f[0]) {
			n++
		}
	}
	b = metaAppendSetLen(b, n, proto)
	for _, f := range metaKeySpecFlagOrder {
		if metaContains(flags, f[0]) {
			b = metaAppendStatus(b, f[1])
		}
	}
	return b
}

func metaAppendKeySpecs(b []byte, specs []KeySpec, proto int) []byte {
	b = metaAppendSetLen(b, len(specs), proto)
	for i := range specs {
		ks := &specs[i]
		n := 3
		if ks.Notes != "" {
			n++
		}
		b = metaAppendMapLen(b, n, proto)
		if ks.Notes != "" {
			b = metaAppendBulk(b, "notes")
			b = metaAppendBulk(b, ks.Notes)
		}
		b = metaAppendBulk(b, "flags")
		b = metaAppendKeySpecFlags(b, ks.Flags, proto)

		b = metaAppendBulk(b, "begin_search")
		b = metaAppendMapLen(b, 2, proto)
		b = metaAppendBulk(b, "type")
		switch {
		case ks.BeginSearchUnknown:
			b = metaAppendBulk(b, "unknown")
			b = metaAppendBulk(b, "spec")
			b = metaAppendMapLen(b, 0, proto)
		case ks.BeginSearchKeyword != "":
			b = metaAppendBulk(b, "keyword")
			b = metaAppendBulk(b, "spec")
			b = metaAppendMapLen(b, 2, proto)
			b = metaAppendBulk(b, "keyword")
			b = metaAppendBulk(b, ks.BeginSearchKeyword)
			b = metaAppendBulk(b, "startfrom")
			b = metaAppendInt(b, ks.BeginSearchStartFrom)
		default:
			b = metaAppendBulk(b, "index")
			b = metaAppendBulk(b, "spec")
			b = metaAppendMapLen(b, 1, proto)
			b = metaAppendBulk(b, "index")
			b = metaAppendInt(b, ks.BeginSearchIndex)
		}

		b = metaAppendBulk(b, "find_keys")
		b = metaAppendMapLen(b, 2, proto)
		b = metaAppendBulk(b, "type")
		switch {
		case ks.FindKeysUnknown:
			b = metaAppendBulk(b, "unknown")
			b = metaAppendBulk(b, "spec")
			b = metaAppendMapLen(b, 0, proto)
		case ks.FindKeysRange:
			b = metaAppendBulk(b, "range")
			b = metaAppendBulk(b, "spec")
			b = metaAppendMapLen(b, 3, proto)
			b = metaAppendBulk(b, "lastkey")
			b = metaAppendInt(b, ks.LastKey)
			b = metaAppendBulk(b, "keystep")
			b = metaAppendInt(b, ks.KeyStep)
			b = metaAppendBulk(b, "limit")
			b = metaAppendInt(b, ks.Limit)
		default:
			b = metaAppendBulk(b, "keynum")
			b = metaAppendBulk(b, "spec")
			b = metaAppendMapLen(b, 3, proto)
			b = metaAppendBulk(b, "keynumidx")
			b = metaAppendInt(b, ks.KeyNumIdx)
			b = metaAppendBulk(b, "firstkey")
			b = metaAppendInt(b, ks.FirstKey)
			b = metaAppendBulk(b, "keystep")
			b = metaAppendInt(b, ks.KeyNumStep)
		}
	}
	return b
}

// AppendCommandInfo appends the COMMAND INFO reply entry for m exactly as
// Redis 7.0 does (10 elements: name, arity, flags set, first, last, step, acl
// categories set, tips, key specs, subcommands) for protocol proto (2 or 3).
// A nil m appends a null, as Redis does for unknown commands.
func AppendCommandInfo(b []byte, m *CommandMeta, proto int) []byte {
	if m == nil {
		return metaAppendNull(b, proto)
	}
	b = metaAppendArrayLen(b, 10)
	b = metaAppendBulk(b, m.Name)
	b = metaAppendInt(b, m.Arity)
	b = metaAppendStatusSet(b, metaInfoFlagOrder, m.Flags, proto)
	b = metaAppendInt(b, m.FirstKey)
	b = metaAppendInt(b, m.LastKey)
	b = metaAppendInt(b, m.KeyStep)
	b = metaAppendSetLen(b, len(m.ACLCategories), proto)
	for _, c := range m.ACLCategories {
		b = metaAppendStatus(b, c)
	}
	b = metaAppendSetLen(b, len(m.Tips), proto)
	for _, t := range m.Tips {
		b = metaAppendBulk(b, t)
	}
	b = metaAppendKeySpecs(b, m.KeySpecs, proto)
	if len(m.Subcommands) == 0 {
		return metaAppendSetLen(b, 0, proto)
	}
	b = metaAppendArrayLen(b, len(m.Subcommands))
	for _, s := range m.Subcommands {
		b = AppendCommandInfo(b, s, proto)
	}
	return b
}

func metaAppendArgs(b []byte, args []Arg, proto int) []byte {
	b = metaAppendArrayLen(b, len(args))
	for i := range args {
		a := &args[i]
		n := 2
		if a.KeySpecIndex != -1 {
			n++
		}
		if a.Token != "" {
			n++
		}
		if a.Summary != "" {
			n++
		}
		if a.Since != "" {
			n++
		}
		if a.Deprecated != "" {
			n++
		}
		if a.Flags != 0 {
			n++
		}
		nested := a.Type == "oneof" || a.Type == "block"
		if nested {
			n++
		}
		b = metaAppendMapLen(b, n, proto)
		b = metaAppendBulk(b, "name")
		b = metaAppendBulk(b, a.Name)
		b = metaAppendBulk(b, "type")
		b = metaAppendBulk(b, a.Type)
		if a.KeySpecIndex != -1 {
			b = metaAppendBulk(b, "key_spec_index")
			b = metaAppendInt(b, a.KeySpecIndex)
		}
		if a.Token != "" {
			b = metaAppendBulk(b, "token")
			b = metaAppendBulk(b, metaReplyToken(a.Token))
		}
		if a.Summary != "" {
			b = metaAppendBulk(b, "summary")
			b = metaAppendBulk(b, a.Summary)
		}
		if a.Since != "" {
			b = metaAppendBulk(b, "since")
			b = metaAppendBulk(b, a.Since)
		}
		if a.Deprecated != "" {
			b = metaAppendBulk(b, "deprecated_since")
			b = metaAppendBulk(b, a.Deprecated)
		}
		if a.Flags != 0 {
			b = metaAppendBulk(b, "flags")
			cnt := 0
			for f := ArgOptional; f <= ArgMultipleToken; f <<= 1 {
				if a.Flags&f != 0 {
					cnt++
				}
			}
			b = metaAppendSetLen(b, cnt, proto)
			if a.Flags&ArgOptional != 0 {
				b = metaAppendStatus(b, "optional")
			}
			if a.Flags&ArgMultiple != 0 {
				b = metaAppendStatus(b, "multiple")
			}
			if a.Flags&ArgMultipleToken != 0 {
				b = metaAppendStatus(b, "multiple_token")
			}
		}
		if nested {
			b = metaAppendBulk(b, "arguments")
			b = metaAppendArgs(b, a.Args, proto)
		}
	}
	return b
}

// metaReplyToken returns the token as Redis 7.0 replies it. Redis pastes the
// JSON token into a C string literal, so MIGRATE's `""` token (the empty
// string argument) becomes "" + "" and is replied as an empty string.
func metaReplyToken(tok string) string {
	if tok == `""` {
		return ""
	}
	return tok
}

// AppendCommandDocs appends the COMMAND DOCS map value for m (summary, since,
// group, complexity, doc_flags, deprecated_since, replaced_by, history,
// arguments, subcommands) shaped as Redis 7.0 does. Empty fields are omitted,
// as Redis omits NULL ones.
func AppendCommandDocs(b []byte, m *CommandMeta, proto int) []byte {
	n := 1 // group
	if m.Summary != "" {
		n++
	}
	if m.Since != "" {
		n++
	}
	if m.Complexity != "" {
		n++
	}
	if len(m.DocFlags) > 0 {
		n++
	}
	if m.DeprecatedSince != "" {
		n++
	}
	if m.ReplacedBy != "" {
		n++
	}
	if len(m.History) > 0 {
		n++
	}
	if len(m.Args) > 0 {
		n++
	}
	if len(m.Subcommands) > 0 {
		n++
	}
	b = metaAppendMapLen(b, n, proto)
	if m.Summary != "" {
		b = metaAppendBulk(b, "summary")
		b = metaAppendBulk(b, m.Summary)
	}
	if m.Since != "" {
		b = metaAppendBulk(b, "since")
		b = metaAppendBulk(b, m.Since)
	}
	b = metaAppendBulk(b, "group")
	b = metaAppendBulk(b, m.Group)
	if m.Complexity != "" {
		b = metaAppendBulk(b, "complexity")
		b = metaAppendBulk(b, m.Complexity)
	}
	if len(m.DocFlags) > 0 {
		b = metaAppendBulk(b, "doc_flags")
		b = metaAppendStatusSet(b, metaDocFlagOrder, m.DocFlags, proto)
	}
	if m.DeprecatedSince != "" {
		b = metaAppendBulk(b, "deprecated_since")
		b = metaAppendBulk(b, m.DeprecatedSince)
	}
	if m.ReplacedBy != "" {
		b = metaAppendBulk(b, "replaced_by")
		b = metaAppendBulk(b, m.ReplacedBy)
	}
	if len(m.History) > 0 {
		b = metaAppendBulk(b, "history")
		b = metaAppendSetLen(b, len(m.History), proto)
		for _, h := range m.History {
			b = metaAppendArrayLen(b, 2)
			b = metaAppendBulk(b, h[0])
			b = metaAppendBulk(b, h[1])
		}
	}
	if len(m.Args) > 0 {
		b = metaAppendBulk(b, "arguments")
		b = metaAppendArgs(b, m.Args, proto)
	}
	if len(m.Subcommands) > 0 {
		b = metaAppendBulk(b, "subcommands")
		b = metaAppendMapLen(b, len(m.Subcommands), proto)
		for _, s := range m.Subcommands {
			b = metaAppendBulk(b, s.Name)
			b = AppendCommandDocs(b, s, proto)
		}
	}
	return b
}
