package acl

// SplitArgs splits a line into arguments as Redis's sdssplitargs: blanks
// separate, "double quotes" take \n \r \t \b \a \\ \" and \xHH escapes,
// 'single quotes' take \'; a closing quote must be followed by a blank or
// the end. ok is false for unbalanced quotes.
func SplitArgs(line []byte) (args [][]byte, ok bool) {
	isSpace := func(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' }
	hex := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	i := 0
	args = [][]byte{}
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, true
		}
		var cur []byte
		inq, insq := false, false
		for {
			if inq {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' {
					h, ok1 := hex(line[i+2])
					l, ok2 := hex(line[i+3])
					if ok1 && ok2 {
						cur = append(cur, h*16+l)
						i += 4
						continue
					}
				}
				if c == '\\' && i+1 < len(line) {
					i++
					e := line[i]
					switch e {
					case 'n':
						e = '\n'
					case 'r':
						e = '\r'
					case 't':
						e = '\t'
					case 'b':
						e = '\b'
					case 'a':
						e = '\a'
					}
					cur = append(cur, e)
				} else if c == '"' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					i++
					break
				} else {
					cur = append(cur, c)
				}
				i++
				continue
			}
			if insq {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					cur = append(cur, '\'')
					i += 2
					continue
				}
				if c == '\'' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					i++
					break
				}
				cur = append(cur, c)
				i++
				continue
			}
			if i >= len(line) || isSpace(line[i]) {
				break
			}
			switch line[i] {
			case '"':
				inq = true
			case '\'':
				insq = true
			default:
				cur = append(cur, line[i])
			}
			i++
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}
