package acl

import (
	"encoding/binary"
	"strings"

	"github.com/redshard/redshard/shard"
)

// Result is the outcome of a check, numbered as Redis's ACL_* codes (the
// most relevant denial over several selectors is the highest).
type Result int

const (
	OK Result = iota
	DeniedCmd
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// KeyFlags are the key-spec flags the ACL reads: what the command does with
// the value (Redis's CMD_KEY_ACCESS / INSERT / DELETE / UPDATE).
type KeyFlags uint8

const (
	KeyAccess KeyFlags = 1 << iota
	KeyInsert
	KeyDelete
	KeyUpdate
)

// KeyRef is one key of a command line: its argv position and flags.
type KeyRef struct {
	Pos   int
	Flags KeyFlags
}

// ChannelRef is one channel a command publishes or subscribes to; Pattern
// for PSUBSCRIBE's patterns (matched literally against the user's).
type ChannelRef struct {
	Pos     int
	Pattern bool
}

func (f KeyFlags) perm() Perm {
	var p Perm
	if f&KeyAccess != 0 {
		p |= PermRead
	}
	if f&(KeyInsert|KeyDelete|KeyUpdate) != 0 {
		p |= PermWrite
	}
	return p
}

// NeedsKeys reports whether a check must be given the command's keys.
func (r *Rules) NeedsKeys() bool { return r.needKeys }

// NeedsChannels reports whether a check must be given the channels.
func (r *Rules) NeedsChannels() bool { return r.needChans }

// KeyAllowed reports whether the selector allows the key with its flags.
func (s *Selector) KeyAllowed(key []byte, flags KeyFlags) bool {
	if s.flags&selAllKeys != 0 {
		return true
	}
	return s.keyAllowed(key, flags.perm())
}

func (s *Selector) keyAllowed(key []byte, need Perm) bool {
	for i := range s.keys {
		p := &s.keys[i]
		if p.Perm&need != need {
			continue
		}
		// The usual case inline: a prefix of up to 8 bytes ("app:*")
		// and a key of 8 bytes or more is one masked load.
		if p.m.kind == matchPrefix && len(p.m.lit) <= 8 && len(key) >= 8 {
			if binary.LittleEndian.Uint64(key)&p.m.mask == p.m.head {
				return true
			}
			continue
		}
		if p.m.match(key) {
			return true
		}
	}
	return false
}

// ChannelAllowed reports whether the selector allows the channel.
func (s *Selector) ChannelAllowed(ch []byte, pattern bool) bool {
	if s.flags&selAllChannels != 0 {
		return true
	}
	return channelInList(s.channels, ch, pattern)
}

func channelInList(list []string, ch []byte, pattern bool) bool {
	for _, p := range list {
		if pattern && p == string(ch) || !pattern && shard.MatchGlob([]byte(p), ch, false) {
			return true
		}
	}
	return false
}

// CommandAllowed is the command part of a selector's check.
func (s *Selector) CommandAllowed(c *Command, argv [][]byte) bool {
	if s.flags&selAllCommands != 0 || c.NoAuth || s.bit(c.ID) {
		return true
	}
	return s.firstArgAllowed(c, argv)
}

// firstArgAllowed: the command is allowed with its first argument
// (+select|0), Redis's allowed_firstargs.
func (s *Selector) firstArgAllowed(c *Command, argv [][]byte) bool {
	args := s.firstArgs[c.ID]
	if len(args) == 0 || len(argv) < 2 {
		return false
	}
	idx := 1
	if c.Parent != nil {
		idx = 2
	}
	if idx >= len(argv) {
		return false
	}
	for _, a := range args {
		if strings.EqualFold(a, string(argv[idx])) {
			return true
		}
	}
	return false
}

func (s *Selector) check(c *Command, argv [][]byte, keys []KeyRef, chans []ChannelRef) (Result, int) {
	if !s.CommandAllowed(c, argv) {
		return DeniedCmd, 0
	}
	if s.flags&selAllKeys == 0 {
		for _, k := range keys {
			if !s.keyAllowed(argv[k.Pos], k.Flags.perm()) {
				return DeniedKey, k.Pos
			}
		}
	}
	if s.flags&selAllChannels == 0 {
		for _, ch := range chans {
			if !channelInList(s.channels, argv[ch.Pos], ch.Pattern) {
				return DeniedChannel, ch.Pos
			}
		}
	}
	return OK, 0
}

// Check is Redis's ACLCheckAllUserCommandPerm: OK when some selector allows
// the command with all its keys and channels; otherwise the most relevant
// denial (a key or channel over a command; the later position among equals)
// and the argv position of the key or channel denied.
func (r *Rules) Check(c *Command, argv [][]byte, keys []KeyRef, chans []ChannelRef) (Result, int) {
	if r.open {
		return OK, 0
	}
	relevant, last := DeniedCmd, 0
	for _, s := range r.sels {
		res, pos := s.check(c, argv, keys, chans)
		if res == OK {
			return OK, 0
		}
		if res > relevant || res == relevant && pos > last {
			relevant, last = res, pos
		}
	}
	return relevant, last
}

// CheckSpan is Check for a command whose keys are argv[first], then every
// step-th argument up to argv[last] (none when last < first), all with the
// same flags, and whose channels the rules need not see (the command has
// none, or no selector restricts channels): the keys of most commands,
// found from their key spec with no KeyRef list to build. first >= 1 when
// there are keys.
func (r *Rules) CheckSpan(c *Command, argv [][]byte, first, last, step int, flags KeyFlags) (Result, int) {
	if r.open {
		return OK, 0
	}
	need := flags.perm()
	relevant, lastPos := DeniedCmd, 0
	for _, s := range r.sels {
		// CommandAllowed, its common part inline.
		if s.flags&selAllCommands == 0 && !c.NoAuth && !s.bit(c.ID) && !s.firstArgAllowed(c, argv) {
			// (DeniedCmd at position 0 never displaces what is kept.)
			continue
		}
		if s.flags&selAllKeys != 0 {
			return OK, 0
		}
		denied := 0
		for i := first; i <= last; i += step {
			if !s.keyAllowed(argv[i], need) {
				denied = i
				break
			}
		}
		if denied == 0 {
			return OK, 0
		}
		if relevant < DeniedKey || denied > lastPos {
			relevant, lastPos = DeniedKey, denied
		}
	}
	return relevant, lastPos
}

// AllowsKey is the fast accept of the usual command line, a command with
// one key and no channels: true when the root selector allows the command
// and the key with its flags, so Check would answer OK. false decides
// nothing (another selector may allow it, or a denial must be told): the
// caller then runs CheckSpan or Check.
func (r *Rules) AllowsKey(c *Command, key []byte, flags KeyFlags) bool {
	s := r.sels[0]
	if s.flags&selAllCommands == 0 && !s.bit(c.ID) {
		return false
	}
	return s.flags&selAllKeys != 0 || s.keyAllowed(key, flags.perm())
}

// ChannelAllowed is Redis's ACLUserCheckChannelPerm.
func (r *Rules) ChannelAllowed(ch []byte, pattern bool) bool {
	for _, s := range r.sels {
		if s.ChannelAllowed(ch, pattern) {
			return true
		}
	}
	return false
}

// KeyAllowed is Redis's ACLUserCheckKeyPerm.
func (r *Rules) KeyAllowed(key []byte, flags KeyFlags) bool {
	for _, s := range r.sels {
		if s.KeyAllowed(key, flags) {
			return true
		}
	}
	return false
}

// ChannelsRevoked reports whether a subscriber of the old rules may hold a
// channel the new ones deny (Redis's ACLKillPubsubClientsIfNeeded, first
// part): then the caller checks each subscriber with ChannelAllowed.
func ChannelsRevoked(old, new *Rules) bool {
	for _, s := range new.sels {
		if s.flags&selAllChannels != 0 {
			return false
		}
	}
	var upcoming []string
	for _, s := range new.sels {
		upcoming = append(upcoming, s.channels...)
	}
	for _, s := range old.sels {
		if s.flags&selAllChannels != 0 {
			return true
		}
		for _, c := range s.channels {
			found := false
			for _, u := range upcoming {
				if u == c {
					found = true
				}
			}
			if !found {
				return true
			}
		}
	}
	return false
}

// SubscriberAllowed checks a subscription against the union of the rules'
// channel lists, as Redis does when channels are revoked.
func (r *Rules) SubscriberAllowed(ch []byte, pattern bool) bool {
	for _, s := range r.sels {
		if s.flags&selAllChannels != 0 {
			return true
		}
		if channelInList(s.channels, ch, pattern) {
			return true
		}
	}
	return false
}

// ErrorText is the -NOPERM reply for a denial, Redis 7.0's texts.
func ErrorText(res Result, cmdName string) string {
	switch res {
	case DeniedCmd:
		return "NOPERM this user has no permissions to run the '" + cmdName + "' command"
	case DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "no permission"
}

// ScriptErrorText is the error redis.call gets (Redis's getAclErrorMessage).
func ScriptErrorText(res Result) string {
	switch res {
	case DeniedCmd:
		return "The user executing the script can't run this command or subcommand"
	case DeniedKey:
		return "The user executing the script can't access at least one of the keys mentioned in the command arguments"
	case DeniedChannel:
		return "The user executing the script can't publish to the channel mentioned in the command"
	}
	return "The user executing the script lacking the permissions for the command"
}

// AllowedWithAllKeys is Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess:
// some selector allows the command line and also every key with flags
// (allkeys, or a "*" pattern with the permission). SORT's BY and GET need
// it for reads.
func (r *Rules) AllowedWithAllKeys(c *Command, argv [][]byte, keys []KeyRef, chans []ChannelRef, flags KeyFlags) bool {
	need := flags.perm()
	for _, s := range r.sels {
		if res, _ := s.check(c, argv, keys, chans); res != OK {
			continue
		}
		if s.flags&selAllKeys != 0 {
			return true
		}
		for _, p := range s.keys {
			if p.Perm&need == need && p.Pattern == "*" {
				return true
			}
		}
	}
	return false
}
