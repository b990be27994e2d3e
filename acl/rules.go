package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// Perm is a key pattern's permission: read, write or both.
type Perm uint8

const (
	PermRead  Perm = 1
	PermWrite Perm = 2
	PermAll        = PermRead | PermWrite
)

// KeyPattern is one ~, %R~, %W~ or %RW~ rule.
type KeyPattern struct {
	Perm    Perm
	Pattern string
	// How finish compiled it (match.go): the check never runs the
	// generic glob for the common shapes.
	m matcher
}

const (
	selAllKeys uint8 = 1 << iota
	selAllChannels
	selAllCommands
)

// Selector is one set of command, key and channel permissions: the root
// one a user is made of, or one given in parentheses.
type Selector struct {
	flags uint8
	// future: +@all was the last word on commands (Redis's reserved bit):
	// the description starts from +@all.
	future    bool
	cmds      []uint64
	firstArgs map[int][]string // command ID -> allowed first arguments
	keys      []KeyPattern
	channels  []string
}

const (
	userOn uint8 = 1 << iota
	userOff
	userNoPass
	userSkipSanitize
	userSanitize
)

// Rules is one immutable state of a user: flags, password hashes and
// selectors (the root first). Build new ones with Apply.
type Rules struct {
	flags     uint8
	passwords []string // hex SHA-256, in order of addition
	sels      []*Selector
	// open: one selector allowing every command, key and channel, the
	// default user's usual state; the check stops there.
	open bool
	// needKeys, needChans: some selector restricts keys, channels.
	needKeys, needChans bool
}

// Errors of Apply, with Redis's texts (ACLSetUserStringError).
var (
	ErrUnknownName     = errors.New("Unknown command or category name in ACL")
	ErrSyntax          = errors.New("Syntax error")
	ErrKeyAfterAll     = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	ErrChannelAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	ErrNoSuchPassword  = errors.New("The password you are trying to remove from the user does not exist")
	ErrBadHash         = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	ErrDuplicateUser   = errors.New("Duplicate user found. A user can only be defined once in config files")
	ErrFirstArgSub     = errors.New("Allowing first-arg of a subcommand is not supported")
)

// Env is what applying rules needs from the server.
type Env struct {
	Table *Table
	// AllChannels: acl-pubsub-default is allchannels (new selectors and
	// "reset" start with every channel).
	AllChannels bool
}

func (e *Env) newSelector() *Selector {
	s := &Selector{cmds: make([]uint64, e.Table.words)}
	if e.AllChannels {
		s.flags |= selAllChannels
	}
	return s
}

// NewRules is a new user's state: off, no passwords, nothing allowed.
func (e *Env) NewRules() *Rules {
	r := &Rules{flags: userOff, sels: []*Selector{e.newSelector()}}
	r.finish()
	return r
}

// DefaultRules is the default user: on nopass ~* &* +@all.
func (e *Env) DefaultRules() *Rules {
	r := e.NewRules()
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := r.apply(e, []byte(op)); err != nil {
			panic("acl: default user: " + err.Error())
		}
	}
	r.finish()
	return r
}

func (s *Selector) clone() *Selector {
	n := *s
	n.cmds = append([]uint64(nil), s.cmds...)
	n.keys = append([]KeyPattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	if s.firstArgs != nil {
		n.firstArgs = make(map[int][]string, len(s.firstArgs))
		for k, v := range s.firstArgs {
			n.firstArgs[k] = append([]string(nil), v...)
		}
	}
	return &n
}

func (r *Rules) clone() *Rules {
	n := &Rules{flags: r.flags, passwords: append([]string(nil), r.passwords...)}
	for _, s := range r.sels {
		n.sels = append(n.sels, s.clone())
	}
	return n
}

func (r *Rules) finish() {
	r.open = len(r.sels) == 1 && r.sels[0].flags == selAllKeys|selAllChannels|selAllCommands
	r.needKeys, r.needChans = false, false
	for _, s := range r.sels {
		r.needKeys = r.needKeys || s.flags&selAllKeys == 0
		r.needChans = r.needChans || s.flags&selAllChannels == 0
		for i := range s.keys {
			s.keys[i].m = compileMatcher(s.keys[i].Pattern)
		}
	}
}

// Enabled reports "on".
func (r *Rules) Enabled() bool { return r.flags&userOn != 0 }

// NoPass reports "nopass".
func (r *Rules) NoPass() bool { return r.flags&userNoPass != 0 }

// Open reports that every command, key and channel is allowed.
func (r *Rules) Open() bool { return r.open }

// Passwords returns the password hashes.
func (r *Rules) Passwords() []string { return r.passwords }

// HashPassword is the hex SHA-256 Redis stores for a password.
func HashPassword(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

func validHash(h []byte) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// hasSpaces is Redis's ACLStringHasSpaces (isspace or NUL).
func hasSpaces(b []byte) bool {
	for _, c := range b {
		if c == ' ' || (c >= '\t' && c <= '\r') || c == 0 {
			return true
		}
	}
	return false
}

func eqFold(b []byte, s string) bool { return len(b) == len(s) && strings.EqualFold(string(b), s) }

// Apply returns r with the modifiers applied, or the first error and the
// modifier it was in. ops are raw SETUSER arguments; a selector spread over
// several arguments is merged first (MergeSelectors).
func (e *Env) Apply(r *Rules, ops [][]byte) (*Rules, string, error) {
	merged, bad := MergeSelectors(ops)
	if merged == nil {
		return nil, "", &UnmatchedError{Op: string(ops[bad])}
	}
	n := r.clone()
	for _, op := range merged {
		if err := n.apply(e, op); err != nil {
			return nil, string(op), err
		}
	}
	n.finish()
	return n, "", nil
}

// UnmatchedError is an opening parenthesis without its closing one.
type UnmatchedError struct{ Op string }

func (u *UnmatchedError) Error() string {
	return "Unmatched parenthesis in acl selector starting at '" + u.Op + "'."
}

// MergeSelectors joins a selector written over several arguments
// ("(+get", "~k)") into one, as Redis's ACLMergeSelectorArguments; merged
// is nil on an unmatched '(' and bad is the argument that opened it.
func MergeSelectors(ops [][]byte) (merged [][]byte, bad int) {
	merged = make([][]byte, 0, len(ops))
	var sel []byte
	open := -1
	for j, op := range ops {
		if open == -1 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			sel = append([]byte(nil), op...)
			open = j
			continue
		}
		if open != -1 {
			sel = append(sel, ' ')
			sel = append(sel, op...)
			if len(op) > 0 && op[len(op)-1] == ')' {
				open = -1
				merged = append(merged, sel)
			}
			continue
		}
		merged = append(merged, op)
	}
	if open != -1 {
		return nil, open
	}
	return merged, 0
}

// apply is one modifier (Redis's ACLSetUser).
func (r *Rules) apply(e *Env, op []byte) error {
	if len(op) == 0 {
		return nil
	}
	switch {
	case eqFold(op, "on"):
		r.flags = r.flags&^userOff | userOn
	case eqFold(op, "off"):
		r.flags = r.flags&^userOn | userOff
	case eqFold(op, "skip-sanitize-payload"):
		r.flags = r.flags&^userSanitize | userSkipSanitize
	case eqFold(op, "sanitize-payload"):
		r.flags = r.flags&^userSkipSanitize | userSanitize
	case eqFold(op, "nopass"):
		r.flags |= userNoPass
		r.passwords = nil
	case eqFold(op, "resetpass"):
		r.flags &^= userNoPass
		r.passwords = nil
	case op[0] == '>' || op[0] == '#':
		var h string
		if op[0] == '>' {
			h = HashPassword(op[1:])
		} else {
			if !validHash(op[1:]) {
				return ErrBadHash
			}
			h = string(op[1:])
		}
		found := false
		for _, p := range r.passwords {
			if p == h {
				found = true
			}
		}
		if !found {
			r.passwords = append(r.passwords, h)
		}
		r.flags &^= userNoPass
	case op[0] == '<' || op[0] == '!':
		var h string
		if op[0] == '<' {
			h = HashPassword(op[1:])
		} else {
			if !validHash(op[1:]) {
				return ErrBadHash
			}
			h = string(op[1:])
		}
		for i, p := range r.passwords {
			if p == h {
				r.passwords = append(r.passwords[:i:i], r.passwords[i+1:]...)
				return nil
			}
		}
		return ErrNoSuchPassword
	case op[0] == '(' && op[len(op)-1] == ')':
		s := e.newSelector()
		if len(op) >= 2 {
			args, ok := SplitArgs(op[1 : len(op)-1])
			if !ok {
				return ErrSyntax
			}
			for _, a := range args {
				if len(a) > 0 && a[len(a)-1] == ')' {
					// A rule ending in ')' would end the selector early
					// when its saved line is read back (MergeSelectors, as
					// Redis's ACL LOAD merges): ACL SAVE would write a
					// file that does not load. Redis accepts it; refused.
					return ErrSyntax
				}
				if err := s.apply(e, a); err != nil {
					return err
				}
			}
		}
		r.sels = append(r.sels, s)
	case eqFold(op, "clearselectors"):
		r.sels = r.sels[:1]
	case eqFold(op, "reset"):
		r.flags &^= userNoPass
		r.passwords = nil
		root := r.sels[0]
		root.flags &^= selAllKeys | selAllChannels
		root.keys, root.channels = nil, nil
		if e.AllChannels {
			root.flags |= selAllChannels
		}
		r.flags = r.flags&^(userOn|userSkipSanitize) | userOff | userSanitize
		r.sels = r.sels[:1]
		root.noCommands()
	default:
		return r.sels[0].apply(e, op)
	}
	return nil
}

func (s *Selector) noCommands() {
	for i := range s.cmds {
		s.cmds[i] = 0
	}
	s.flags &^= selAllCommands
	s.future = false
	s.firstArgs = nil
}

func (s *Selector) bit(id int) bool { return s.cmds[uint(id)/64]&(1<<(uint(id)%64)) != 0 }

func (s *Selector) setBit(id int, on bool) {
	if on {
		s.cmds[id/64] |= 1 << uint(id%64)
	} else {
		s.cmds[id/64] &^= 1 << uint(id%64)
		s.flags &^= selAllCommands
	}
}

// change allows or denies a command and its subcommands.
func (s *Selector) change(c *Command, on bool) {
	s.setBit(c.ID, on)
	delete(s.firstArgs, c.ID)
	for _, sub := range c.Subs {
		s.setBit(sub.ID, on)
	}
}

func (s *Selector) category(t *Table, bit uint64, on bool) {
	t.walk(func(c *Command) {
		if c.Categories&bit != 0 {
			s.change(c, on)
		}
	})
}

// apply is one selector modifier (Redis's ACLSetSelector).
func (s *Selector) apply(e *Env, op []byte) error {
	t := e.Table
	if len(op) == 0 {
		return ErrSyntax // an empty argument inside a selector: ('')
	}
	switch {
	case eqFold(op, "allkeys") || string(op) == "~*":
		s.flags |= selAllKeys
		s.keys = nil
	case eqFold(op, "resetkeys"):
		s.flags &^= selAllKeys
		s.keys = nil
	case eqFold(op, "allchannels") || string(op) == "&*":
		s.flags |= selAllChannels
		s.channels = nil
	case eqFold(op, "resetchannels"):
		s.flags &^= selAllChannels
		s.channels = nil
	case eqFold(op, "allcommands") || eqFold(op, "+@all"):
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.flags |= selAllCommands
		s.future = true
		s.firstArgs = nil
	case eqFold(op, "nocommands") || eqFold(op, "-@all"):
		s.noCommands()
	case op[0] == '~' || op[0] == '%':
		if s.flags&selAllKeys != 0 {
			return ErrKeyAfterAll
		}
		var perm Perm
		off := 1
		if op[0] == '%' {
			for ; off < len(op); off++ {
				c := op[off]
				if (c == 'R' || c == 'r') && perm&PermRead == 0 {
					perm |= PermRead
				} else if (c == 'W' || c == 'w') && perm&PermWrite == 0 {
					perm |= PermWrite
				} else if c == '~' {
					off++
					break
				} else {
					return ErrSyntax
				}
			}
		} else {
			perm = PermAll
		}
		if perm == 0 {
			// "%~pat" names no permission; Redis 7.0 accepts it and then
			// aborts describing it, we refuse it.
			return ErrSyntax
		}
		if off > len(op) {
			off = len(op)
		}
		pat := op[off:]
		if hasSpaces(pat) {
			return ErrSyntax
		}
		found := false
		for i := range s.keys {
			if s.keys[i].Pattern == string(pat) {
				s.keys[i].Perm |= perm
				found = true
			}
		}
		if !found {
			s.keys = append(s.keys, KeyPattern{Perm: perm, Pattern: string(pat)})
		}
		s.flags &^= selAllKeys
	case op[0] == '&':
		if s.flags&selAllChannels != 0 {
			return ErrChannelAfterAll
		}
		pat := op[1:]
		if hasSpaces(pat) {
			return ErrSyntax
		}
		for _, c := range s.channels {
			if c == string(pat) {
				return nil
			}
		}
		s.channels = append(s.channels, string(pat))
		s.flags &^= selAllChannels
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		name := string(op[1:])
		cut := strings.LastIndexByte(name, '|')
		if cut < 0 {
			c := t.Lookup(name)
			if c == nil {
				return ErrUnknownName
			}
			s.change(c, true)
			return nil
		}
		c := t.Lookup(name[:cut])
		if c == nil {
			return ErrUnknownName
		}
		if c.Parent != nil {
			return ErrFirstArgSub
		}
		sub := name[cut+1:]
		if sub == "" {
			return ErrSyntax
		}
		if c.Subs != nil {
			sc := t.Lookup(name)
			if sc == nil {
				return ErrUnknownName
			}
			s.change(sc, true)
			return nil
		}
		if s.firstArgs == nil {
			s.firstArgs = make(map[int][]string)
		}
		for _, a := range s.firstArgs[c.ID] {
			if strings.EqualFold(a, sub) {
				return nil
			}
		}
		s.firstArgs[c.ID] = append(s.firstArgs[c.ID], sub)
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		c := t.Lookup(string(op[1:]))
		if c == nil {
			return ErrUnknownName
		}
		s.change(c, false)
	case (op[0] == '+' || op[0] == '-') && op[1] == '@':
		bit := CategoryBit(string(op[2:]))
		if bit == 0 {
			return ErrUnknownName
		}
		s.category(t, bit, op[0] == '+')
	default:
		return ErrSyntax
	}
	return nil
}
