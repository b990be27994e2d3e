package acl

import (
	"math"
	"strings"
)

// countCategory counts the commands of a category the selector allows (on)
// and denies (off).
func (s *Selector) countCategory(t *Table, bit uint64) (on, off int) {
	t.walk(func(c *Command) {
		if c.Categories&bit != 0 {
			if s.bit(c.ID) {
				on++
			} else {
				off++
			}
		}
	})
	return
}

// CommandRules describes the selector's commands as rules, in Redis 7.0's
// form: "+@all" or "-@all", then the categories that fit best (greedily, in
// category order), then the single commands and first arguments that make
// the bitmap exact.
func (s *Selector) CommandRules(t *Table) string {
	var b strings.Builder
	fake := &Selector{cmds: make([]uint64, len(s.cmds))}
	additive := !s.future
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		for i := range fake.cmds {
			fake.cmds[i] = ^uint64(0)
		}
	}
	temp := &Selector{cmds: append([]uint64(nil), s.cmds...)}
	applied := make([]bool, len(Categories))
	for {
		best, mindiff, maxsame := -1, math.MaxInt, 0
		for j := range Categories {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(t, 1<<uint(j))
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < mindiff || diff == mindiff && same > maxsame) {
				best, mindiff, maxsame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		bit := uint64(1) << uint(best)
		fake.category(t, bit, additive)
		temp.category(t, bit, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(Categories[best])
		b.WriteByte(' ')
		applied[best] = true
	}
	t.walk(func(c *Command) {
		user, f := s.bit(c.ID), fake.bit(c.ID)
		if user != f {
			if user {
				b.WriteByte('+')
			} else {
				b.WriteByte('-')
			}
			b.WriteString(c.Name)
			b.WriteByte(' ')
			fake.change(c, user)
		}
		if !user {
			for _, a := range s.firstArgs[c.ID] {
				b.WriteByte('+')
				b.WriteString(c.Name)
				b.WriteByte('|')
				b.WriteString(a)
				b.WriteByte(' ')
			}
		}
	})
	out := b.String()
	return out[:len(out)-1]
}

func (p KeyPattern) String() string {
	switch p.Perm {
	case PermRead:
		return "%R~" + p.Pattern
	case PermWrite:
		return "%W~" + p.Pattern
	}
	return "~" + p.Pattern
}

// KeysString is GETUSER's "keys": "~*" or the patterns separated by spaces.
func (s *Selector) KeysString() string {
	if s.flags&selAllKeys != 0 {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

// ChannelsString is GETUSER's "channels": "&*" or the patterns.
func (s *Selector) ChannelsString() string {
	if s.flags&selAllChannels != 0 {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// describe is Redis's ACLDescribeSelector.
func (s *Selector) describe(t *Table) string {
	var b strings.Builder
	if s.flags&selAllKeys != 0 {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String())
			b.WriteByte(' ')
		}
	}
	if s.flags&selAllChannels != 0 {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.CommandRules(t))
	return b.String()
}

// FlagNames are the user's flags as GETUSER lists them.
func (r *Rules) FlagNames() []string {
	var out []string
	for _, f := range []struct {
		bit  uint8
		name string
	}{{userOn, "on"}, {userOff, "off"}, {userNoPass, "nopass"}, {userSkipSanitize, "skip-sanitize-payload"}, {userSanitize, "sanitize-payload"}} {
		if r.flags&f.bit != 0 {
			out = append(out, f.name)
		}
	}
	return out
}

// Describe is the user as rules (ACL LIST without "user <name> ", and the
// aclfile), Redis's ACLDescribeUser.
func (r *Rules) Describe(t *Table) string {
	var b strings.Builder
	for _, f := range r.FlagNames() {
		b.WriteString(f)
		b.WriteByte(' ')
	}
	for _, p := range r.passwords {
		b.WriteString("#" + p + " ")
	}
	for i, s := range r.sels {
		if i == 0 {
			b.WriteString(s.describe(t))
		} else {
			b.WriteString(" (" + s.describe(t) + ")")
		}
	}
	return b.String()
}

// Selectors returns the root selector and the others.
func (r *Rules) Selectors() (root *Selector, more []*Selector) { return r.sels[0], r.sels[1:] }
