package shard

// MatchGlob reports whether str matches the glob pattern, with the exact
// semantics of Redis's stringmatchlen (util.c), which KEYS, SCAN MATCH,
// PSUBSCRIBE, CONFIG GET and ACL patterns all share:
//
//   - '*' matches any run of bytes, '?' any one byte;
//   - '[abc]', '[^abc]' and ranges '[a-z]' (reversed ends are swapped) match
//     one byte; inside a class '\' quotes the next byte; an unterminated class
//     ends at the end of the pattern ("[a" matches "a", "[^" any byte), and
//     "[a-]" is the range from 'a' to ']', as in Redis;
//   - '\' quotes the next byte; a trailing '\' matches itself;
//   - with nocase, ASCII letters compare case-insensitively (quoted bytes
//     inside a class excepted, as in Redis).
//
// Range ends compare as C's signed char and go through glibc's tolower with
// nocase, as in Redis built on x86-64 Linux, so ranges reaching above 0x7f
// behave as they do there.
//
// Like Redis 7, it gives up on a '*' as soon as the rest of the pattern has
// failed to match at every later position, which keeps patterns such as
// "a*a*a*a*...b" linear per star instead of exponential.
func MatchGlob(pattern, str []byte, nocase bool) bool {
	skipLonger := false
	return globMatch(pattern, str, nocase, &skipLonger)
}

// globLower is C's tolower in the C locale as glibc implements it, also for
// the negative values a signed char above 0x7f becomes: those map to the
// byte's unsigned value, except -1 (0xff), which is EOF and stays -1.
func globLower(c int) int {
	if c < -1 {
		return c + 256
	}
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func globEq(a, b byte, nocase bool) bool {
	if a == b {
		return true
	}
	return nocase && globLower(int(a)) == globLower(int(b))
}

// globMatch follows stringmatchlen_impl step by step. The C code may read
// the byte just past the pattern (the sds NUL terminator); at stands for
// that read and yields 0 there.
func globMatch(pat, str []byte, nocase bool, skipLonger *bool) bool {
	plen, slen := len(pat), len(str)
	at := func(i int) byte {
		if i < plen {
			return pat[i]
		}
		return 0
	}
	p, s := 0, 0
	for p < plen && s < slen {
		switch pat[p] {
		case '*':
			for at(p+1) == '*' {
				p++
			}
			if p == plen-1 {
				return true // a trailing star matches the rest
			}
			for s < slen {
				if globMatch(pat[p+1:], str[s:], nocase, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s++
			}
			// The rest of the pattern matches nowhere in the rest of the
			// string: no earlier star can help by matching longer.
			*skipLonger = true
			return false
		case '?':
			s++
		case '[':
			p++
			not := at(p) == '^'
			if not {
				p++
			}
			match := false
			for {
				if at(p) == '\\' && plen-p >= 2 {
					p++
					if pat[p] == str[s] {
						match = true
					}
				} else if at(p) == ']' {
					break
				} else if p >= plen {
					p-- // unterminated class: stop on the last byte
					break
				} else if plen-p >= 3 && pat[p+1] == '-' {
					start, end, c := int(int8(pat[p])), int(int8(pat[p+2])), int(int8(str[s]))
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, c = globLower(start), globLower(end), globLower(c)
					}
					p += 2
					if c >= start && c <= end {
						match = true
					}
				} else if globEq(pat[p], str[s], nocase) {
					match = true
				}
				p++
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s++
		case '\\':
			if plen-p >= 2 {
				p++
			}
			fallthrough
		default:
			if !globEq(pat[p], str[s], nocase) {
				return false
			}
			s++
		}
		p++
		if s == slen {
			for at(p) == '*' {
				p++
			}
			break
		}
	}
	return p == plen && s == slen
}
