package acl

import "strings"

// Categories are Redis 7.0's ACL categories, in Redis's order (ACL CAT and
// the describing of rules follow it).
var Categories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// CategoryBit returns the bit of a category name (case-insensitive, without
// the '@'), or 0 when there is no such category.
func CategoryBit(name string) uint64 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << uint(i)
		}
	}
	return 0
}

// CommandInfo describes one command (or subcommand) to NewTable.
type CommandInfo struct {
	Name       string   // lower case full name: "get", "config|get"
	Categories []string // with or without '@'
	NoAuth     bool     // Redis's no_auth flag: always permitted
}

// Command is a command as the ACL sees it. ID indexes the command bitmaps.
type Command struct {
	ID         int
	Name       string // full name
	Categories uint64 // bit i: Categories[i]
	NoAuth     bool
	Parent     *Command
	Subs       []*Command // in table order
}

// Table is the set of commands rules refer to. It is read-only once built.
type Table struct {
	cmds   []*Command // by ID
	top    []*Command // top-level commands, in table order
	byName map[string]*Command
	words  int // uint64 words of a command bitmap
}

// NewTable builds the table; a subcommand's container must come before it
// or is created bare. IDs follow the order of rows.
func NewTable(rows []CommandInfo) *Table {
	t := &Table{byName: make(map[string]*Command, len(rows))}
	add := func(name string) *Command {
		c := &Command{ID: len(t.cmds), Name: name}
		t.cmds = append(t.cmds, c)
		t.byName[name] = c
		return c
	}
	for _, r := range rows {
		name := strings.ToLower(r.Name)
		c := t.byName[name]
		if c == nil {
			c = add(name)
			if parent, _, ok := strings.Cut(name, "|"); ok {
				p := t.byName[parent]
				if p == nil {
					p = add(parent)
					t.top = append(t.top, p)
				}
				c.Parent = p
				p.Subs = append(p.Subs, c)
			} else {
				t.top = append(t.top, c)
			}
		}
		c.NoAuth = r.NoAuth
		for _, cat := range r.Categories {
			c.Categories |= CategoryBit(strings.TrimPrefix(cat, "@"))
		}
	}
	t.words = (len(t.cmds) + 63) / 64
	return t
}

// Lookup finds a command by full name ("config|get"), case-insensitive.
func (t *Table) Lookup(name string) *Command {
	if c := t.byName[name]; c != nil {
		return c
	}
	return t.byName[strings.ToLower(name)]
}

// Len is the number of commands (the highest ID + 1).
func (t *Table) Len() int { return len(t.cmds) }

// walk calls fn for every command in Redis's order: a command, then its
// subcommands.
func (t *Table) walk(fn func(c *Command)) {
	for _, c := range t.top {
		fn(c)
		for _, s := range c.Subs {
			fn(s)
		}
	}
}

// InCategory returns the full names of the commands in a category (ACL CAT
// <category>), or ok=false for an unknown category.
func (t *Table) InCategory(name string) (names []string, ok bool) {
	bit := CategoryBit(name)
	if bit == 0 {
		return nil, false
	}
	names = []string{}
	t.walk(func(c *Command) {
		if c.Categories&bit != 0 {
			names = append(names, c.Name)
		}
	})
	return names, true
}
