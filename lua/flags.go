package lua

import (
	"bytes"
	"strings"

	"github.com/redshard/redshard/resp"
)

// Script flags, Redis's SCRIPT_FLAG_* values, from an EVAL script's
// "#!lua flags=..." shebang or a function's register_function flags.
const (
	FlagNoWrites       uint64 = 1 << 0
	FlagAllowOOM       uint64 = 1 << 1
	FlagAllowStale     uint64 = 1 << 2
	FlagNoCluster      uint64 = 1 << 3
	FlagEvalCompatMode uint64 = 1 << 4 // an EVAL script without a shebang: Redis 6 rules
	FlagAllowCrossSlot uint64 = 1 << 5
)

var flagNames = []struct {
	flag uint64
	name string
}{
	{FlagNoWrites, "no-writes"},
	{FlagAllowOOM, "allow-oom"},
	{FlagAllowStale, "allow-stale"},
	{FlagNoCluster, "no-cluster"},
	{FlagAllowCrossSlot, "allow-cross-slot-keys"},
}

// FlagNames lists the names of the flags set in f, in Redis's order (as
// FUNCTION LIST shows them).
func FlagNames(f uint64) []string {
	var out []string
	for _, fl := range flagNames {
		if f&fl.flag != 0 {
			out = append(out, fl.name)
		}
	}
	return out
}

// parseShebang is evalExtractShebangFlags: the flags of an EVAL body and
// the length of its shebang line (0 without one). err is the reply text
// without its "ERR " code.
func parseShebang(body string) (flags uint64, shebangLen int, err string) {
	if !strings.HasPrefix(body, "#!") {
		return FlagEvalCompatMode, 0, ""
	}
	end := strings.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, "Invalid script shebang"
	}
	parts, ok := resp.SplitArgs(body[:end])
	if !ok || len(parts) == 0 {
		return 0, 0, "Invalid engine in script shebang"
	}
	if parts[0] != "#!lua" {
		return 0, 0, "Unexpected engine in script shebang: " + parts[0]
	}
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, "Unknown lua shebang option: " + p
		}
		for _, name := range strings.Split(list, ",") {
			f := uint64(0)
			for _, fl := range flagNames {
				if fl.name == name {
					f = fl.flag
				}
			}
			if f == 0 {
				return 0, 0, "Unexpected flag in script shebang: " + name
			}
			flags |= f
		}
	}
	return flags, end, ""
}

// ScriptFlags returns the flags of an EVAL body's shebang (FlagEvalCompatMode
// without one); ok is false when the shebang is invalid.
func ScriptFlags(body []byte) (flags uint64, ok bool) {
	if len(body) < 2 || body[0] != '#' || body[1] != '!' {
		return FlagEvalCompatMode, true // no shebang: nothing to convert
	}
	line := body
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		line = body[:i+1] // the shebang line is all parseShebang reads
	}
	f, _, err := parseShebang(string(line))
	return f, err == ""
}
