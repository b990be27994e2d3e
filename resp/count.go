package resp

// CountReplies counts the complete top-level replies at the start of b (a
// buffer of replies the server produced, RESP2 or RESP3) and returns how many
// there are; a truncated reply at the end is not counted. Attributes (`|`)
// belong to the reply that follows them.
func CountReplies(b []byte) int {
	n, pos := 0, 0
	for pos < len(b) {
		next, ok := SkipReply(b, pos, 0)
		if !ok {
			break
		}
		pos = next
		n++
	}
	return n
}

// MaxReplyDepth bounds the nesting SkipReply follows.
const MaxReplyDepth = 1000

// SkipReply returns the position after the reply (RESP2 or RESP3, with any
// attribute in front of it) that starts at b[pos:], at nesting depth; false
// if the reply is truncated, malformed or nested past MaxReplyDepth. It
// never trusts an aggregate's length beyond what b can hold.
func SkipReply(b []byte, pos, depth int) (int, bool) {
	if depth > MaxReplyDepth || pos >= len(b) {
		return 0, false
	}
	typ := b[pos]
	line, next, ok := replyLine(b, pos+1)
	if !ok {
		return 0, false
	}
	switch typ {
	case '+', '-', ':', '_', '#', ',', '(':
		return next, true
	case '$', '=', '!':
		n, ok := atoi(line)
		if !ok {
			return 0, false
		}
		if n < 0 {
			return next, true
		}
		if n > int64(len(b)-next-2) {
			return 0, false
		}
		return next + int(n) + 2, true
	case '*', '~', '>', '%', '|':
		n, ok := atoi(line)
		if !ok {
			return 0, false
		}
		if n < 0 {
			return next, true
		}
		if n > int64(len(b)-next)/3 { // each element takes 3 bytes at least
			return 0, false
		}
		if typ == '%' || typ == '|' {
			n *= 2
		}
		pos = next
		for i := int64(0); i < n; i++ {
			if pos, ok = SkipReply(b, pos, depth+1); !ok {
				return 0, false
			}
		}
		if typ == '|' { // the attribute is followed by its reply
			return SkipReply(b, pos, depth+1)
		}
		return pos, true
	}
	return 0, false
}

// replyLine returns the line starting at pos (without CRLF) and the position after it.
func replyLine(b []byte, pos int) ([]byte, int, bool) {
	for i := pos; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return b[pos:i], i + 2, true
		}
	}
	return nil, 0, false
}

func atoi(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > 1<<40 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, len(b) > 0
}
