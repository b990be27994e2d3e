package acl

import (
	"encoding/binary"

	"github.com/redshard/redshard/shard"
)

// A matcher is a key pattern compiled once, when rules are made, into the
// cheapest test that gives what Redis 7.0's stringmatchlen gives (nocase
// off, as for keys): a literal is a compare, a literal and one final '*'
// ("app:*", and "*" itself) a prefix test, one leading '*' and a literal a
// suffix test; any pattern with '?', '[', '\' or another '*' keeps the
// generic glob. stringmatchlen's loop never runs for an empty string, so
// every pattern with a '*' matches no empty key: the prefix and suffix tests
// require a key of at least one byte.
type matcher struct {
	kind matchKind
	lit  []byte
	// head, mask: the first min(8, len(lit)) bytes of a prefix, little
	// endian, for a one-load compare when the key has 8 bytes or more.
	head, mask uint64
}

type matchKind uint8

const (
	matchGlob matchKind = iota
	matchExact
	matchPrefix
	matchSuffix
)

func compileMatcher(p string) matcher {
	body, kind := p, matchExact
	if len(body) > 0 && body[len(body)-1] == '*' {
		body, kind = body[:len(body)-1], matchPrefix
	} else if len(body) > 1 && body[0] == '*' {
		body, kind = body[1:], matchSuffix
	}
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '*', '?', '[', '\\':
			return matcher{kind: matchGlob, lit: []byte(p)}
		}
	}
	m := matcher{kind: kind, lit: []byte(body)}
	if kind == matchPrefix {
		var b [8]byte
		n := copy(b[:], body)
		m.head = binary.LittleEndian.Uint64(b[:])
		if n < 8 {
			m.mask = 1<<(8*uint(n)) - 1
		} else {
			m.mask = ^uint64(0)
		}
	}
	return m
}

func (m *matcher) match(key []byte) bool {
	switch m.kind {
	case matchPrefix:
		n := len(m.lit)
		if len(key) < n || len(key) == 0 {
			return false
		}
		if len(key) >= 8 {
			if binary.LittleEndian.Uint64(key)&m.mask != m.head {
				return false
			}
			return n <= 8 || string(key[8:n]) == string(m.lit[8:])
		}
		return string(key[:n]) == string(m.lit)
	case matchExact:
		return string(key) == string(m.lit)
	case matchSuffix:
		return len(key) >= len(m.lit) && string(key[len(key)-len(m.lit):]) == string(m.lit)
	}
	return shard.MatchGlob(m.lit, key, false)
}
