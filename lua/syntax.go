package lua

// Lua 5.1's syntax check, run on a script before gopher-lua compiles it.
//
// Redis runs Lua 5.1. gopher-lua's parser (goyacc) accepts some chunks
// Lua 5.1 refuses, and words the errors it finds in its own way ("syntax
// error"). Some of what it accepts ran where Redis answers an error: the
// numeral "1e" (a number, -9223372036854775808 when returned), the escape
// "\300" (a byte, where 5.1 says "escape sequence too large"), "..." in a
// function that is not vararg. So every
// script (EVAL, SCRIPT LOAD, FUNCTION LOAD) first goes through this
// checker, which is Lua 5.1's lexer and recursive-descent parser without
// the code generator: the same grammar, read in the same order, so it stops
// at the same first error with the same message, line and token:
//
//	user_script:1: 'end' expected near '<eof>'
//	user_script:3: 'end' expected (to close 'function' at line 1) near 'x'
//	user_script:1: malformed number near '1e'
//	user_script:1: unfinished string near '"abc'
//
// It keeps what the messages depend on: the current line and the line of
// the previous token (check_match's "(to close ... at line N)", funcargs'
// "ambiguous syntax (function call x new statement)"), the lexer's buffer
// (the text of a name, number or string shown after "near": a string as
// read, its escapes decoded, up to a NUL byte), the one-token lookahead of
// table constructors, the nesting depth ("chunk has too many syntax
// levels" past 200, counting as Lua does: each block and each
// subexpression), active locals per function (200), upvalues per function
// (60, resolved through the enclosing functions as Lua resolves names),
// loops for break, vararg functions for "...", and assignable targets
// ("syntax error" for "f() = 1"). The character classes are the C
// locale's, as in Redis (bytes from 128 up are single-character tokens).
//
// Not checked: the limits of Lua's code generator (registers: "function or
// expression too complex"; jump lengths; constants). A chunk past them is
// left to gopher-lua, as are the few Lua 5.1 chunks gopher-lua refuses
// (it takes "goto" as a keyword).

import (
	"strconv"
	"strings"
)

// Tokens: single characters are their byte value; the rest follow.
const (
	tkAnd = 257 + iota
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
	tkConcat
	tkDots
	tkEq
	tkGe
	tkLe
	tkNe
	tkNumber
	tkName
	tkString
	tkEOS
)

var tokenNames = [...]string{
	"and", "break", "do", "else", "elseif",
	"end", "false", "for", "function", "if",
	"in", "local", "nil", "not", "or", "repeat",
	"return", "then", "true", "until", "while",
	"..", "...", "==", ">=", "<=", "~=",
	"<number>", "<name>", "<string>", "<eof>",
}

var reserved = func() map[string]int {
	m := make(map[string]int, tkWhile-tkAnd+1)
	for t := tkAnd; t <= tkWhile; t++ {
		m[tokenNames[t-tkAnd]] = t
	}
	return m
}()

const (
	eoz           = -1
	maxSyntaxLvl  = 200 // LUAI_MAXCCALLS
	maxLocalVars  = 200 // LUAI_MAXVARS
	maxUpvalues   = 60  // LUAI_MAXUPVALUES
	unaryPriority = 8
)

// syntaxError is the panic value that carries the first error out.
type syntaxError struct{ msg string }

// CheckSyntax returns the first syntax error of src as Lua 5.1 reports it
// for a chunk named chunk ("user_script:<line>: <message> [near '<token>']"),
// or "" when src is valid Lua 5.1 (within the limits above).
func CheckSyntax(src, chunk string) (msg string) {
	p := &parser{lx: lexer{src: src, line: 1, lastline: 1, chunk: chunk}}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(syntaxError)
			if !ok {
				panic(r)
			}
			msg = se.msg
		}
	}()
	p.lx.ahead = tkEOS
	p.lx.nextChar()
	fs := &funcState{vararg: true}
	p.fs = fs
	p.lx.next()
	p.chunk()
	p.check(tkEOS)
	return ""
}

// ---------------------------------------------------------------- lexer

type lexer struct {
	src      string
	pos      int // index of the character after cur
	cur      int // current character, or eoz
	line     int
	lastline int // line of the last token consumed
	chunk    string
	buf      []byte // the text of the token being read (Lua's Mbuffer)
	t        int    // current token
	tv       string // its name, when it is one
	ahead    int    // lookahead token, tkEOS for none
	av       string // its name
	sem      string // the name the last lex read
}

func (l *lexer) nextChar() {
	if l.pos < len(l.src) {
		l.cur = int(l.src[l.pos])
		l.pos++
	} else {
		l.cur = eoz
	}
}

func (l *lexer) save(c int)   { l.buf = append(l.buf, byte(c)) }
func (l *lexer) saveAndNext() { l.save(l.cur); l.nextChar() }
func (l *lexer) isNewline() bool {
	return l.cur == '\n' || l.cur == '\r'
}

func lxDigit(c int) bool { return c >= '0' && c <= '9' }
func lxAlpha(c int) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func lxAlnum(c int) bool { return lxAlpha(c) || lxDigit(c) }
func lxSpace(c int) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func tokenString(t int) string {
	if t < 257 {
		if t < 32 || t == 127 {
			return "char(" + strconv.Itoa(t) + ")"
		}
		return string([]byte{byte(t)})
	}
	return tokenNames[t-tkAnd]
}

// txtToken is what follows "near": a name, number or string as read (the
// buffer, up to a NUL as C's string would end), else the token's text.
func (l *lexer) txtToken(t int) string {
	switch t {
	case tkName, tkString, tkNumber:
		b := l.buf
		for i, c := range b {
			if c == 0 {
				b = b[:i]
				break
			}
		}
		return string(b)
	}
	return tokenString(t)
}

func (l *lexer) lexError(msg string, token int) {
	msg = l.chunk + ":" + strconv.Itoa(l.line) + ": " + msg
	if token != 0 {
		msg += " near '" + l.txtToken(token) + "'"
	}
	panic(syntaxError{msg})
}

func (l *lexer) syntaxError(msg string) { l.lexError(msg, l.t) }

func (l *lexer) incLine() {
	old := l.cur
	l.nextChar() // skip '\n' or '\r'
	if l.isNewline() && l.cur != old {
		l.nextChar() // skip "\n\r" or "\r\n"
	}
	l.line++
}

func (l *lexer) next() {
	l.lastline = l.line
	if l.ahead != tkEOS {
		l.t, l.tv = l.ahead, l.av
		l.ahead = tkEOS
	} else {
		l.t = l.lex()
		l.tv = l.sem
	}
}

func (l *lexer) lookahead() {
	l.ahead = l.lex()
	l.av = l.sem
}

func (l *lexer) checkNext(set string) bool {
	if l.cur == eoz || strings.IndexByte(set, byte(l.cur)) < 0 {
		return false
	}
	l.saveAndNext()
	return true
}

// numeral reads a number as Lua 5.1 does (digits and dots, an exponent
// with its sign, then any letters, digits and underscores) and checks it
// with luaO_str2d (str2number, coerce.go), as read_numeral does.
func (l *lexer) numeral() {
	for lxDigit(l.cur) || l.cur == '.' {
		l.saveAndNext()
	}
	if l.checkNext("Ee") {
		l.checkNext("+-")
	}
	for lxAlnum(l.cur) || l.cur == '_' {
		l.saveAndNext()
	}
	if _, ok := str2number(string(l.buf)); !ok {
		l.lexError("malformed number", tkNumber)
	}
}

// skipSep reads "[" or "]" and the "="s after it: the level of a long
// bracket, or -(level)-1 when the second bracket is missing.
func (l *lexer) skipSep() int {
	count := 0
	s := l.cur
	l.saveAndNext()
	for l.cur == '=' {
		l.saveAndNext()
		count++
	}
	if l.cur == s {
		return count
	}
	return -count - 1
}

func (l *lexer) longString(isString bool, sep int) {
	l.saveAndNext() // the second '['
	if l.isNewline() {
		l.incLine() // a first newline is skipped
	}
	for {
		switch l.cur {
		case eoz:
			if isString {
				l.lexError("unfinished long string", tkEOS)
			}
			l.lexError("unfinished long comment", tkEOS)
		case ']':
			if l.skipSep() == sep {
				l.saveAndNext()
				return
			}
		case '\n', '\r':
			l.save('\n')
			l.incLine()
			if !isString {
				l.buf = l.buf[:0]
			}
		default:
			if isString {
				l.saveAndNext()
			} else {
				l.nextChar()
			}
		}
	}
}

func (l *lexer) quoted(del int) {
	l.saveAndNext()
	for l.cur != del {
		switch l.cur {
		case eoz:
			l.lexError("unfinished string", tkEOS)
		case '\n', '\r':
			l.lexError("unfinished string", tkString)
		case '\\':
			l.nextChar() // the backslash is not kept
			c := 0
			switch l.cur {
			case 'a':
				c = '\a'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = '\v'
			case '\n', '\r':
				l.save('\n')
				l.incLine()
				continue
			case eoz:
				continue // the loop reports it
			default:
				if !lxDigit(l.cur) {
					l.saveAndNext() // \\, \", \' and any other character
				} else {
					for i := 0; i < 3 && lxDigit(l.cur); i++ {
						c = 10*c + (l.cur - '0')
						l.nextChar()
					}
					if c > 255 {
						l.lexError("escape sequence too large", tkString)
					}
					l.save(c)
				}
				continue
			}
			l.save(c)
			l.nextChar()
		default:
			l.saveAndNext()
		}
	}
	l.saveAndNext() // the closing delimiter
}

func (l *lexer) lex() int {
	l.buf = l.buf[:0]
	for {
		switch c := l.cur; {
		case c == '\n' || c == '\r':
			l.incLine()
		case c == '-':
			l.nextChar()
			if l.cur != '-' {
				return '-'
			}
			l.nextChar() // a comment
			if l.cur == '[' {
				sep := l.skipSep()
				l.buf = l.buf[:0]
				if sep >= 0 {
					l.longString(false, sep)
					l.buf = l.buf[:0]
					continue
				}
			}
			for !l.isNewline() && l.cur != eoz {
				l.nextChar()
			}
		case c == '[':
			sep := l.skipSep()
			if sep >= 0 {
				l.longString(true, sep)
				return tkString
			}
			if sep == -1 {
				return '['
			}
			l.lexError("invalid long string delimiter", tkString)
		case c == '=' || c == '<' || c == '>' || c == '~':
			l.nextChar()
			if l.cur != '=' {
				return c
			}
			l.nextChar()
			switch c {
			case '=':
				return tkEq
			case '<':
				return tkLe
			case '>':
				return tkGe
			}
			return tkNe
		case c == '"' || c == '\'':
			l.quoted(c)
			return tkString
		case c == '.':
			l.saveAndNext()
			if l.checkNext(".") {
				if l.checkNext(".") {
					return tkDots
				}
				return tkConcat
			}
			if !lxDigit(l.cur) {
				return '.'
			}
			l.numeral()
			return tkNumber
		case c == eoz:
			return tkEOS
		case lxSpace(c):
			l.nextChar()
		case lxDigit(c):
			l.numeral()
			return tkNumber
		case lxAlpha(c) || c == '_':
			for lxAlnum(l.cur) || l.cur == '_' {
				l.saveAndNext()
			}
			if t, ok := reserved[string(l.buf)]; ok {
				return t
			}
			l.sem = string(l.buf)
			return tkName
		default:
			l.nextChar()
			return c
		}
	}
}

// --------------------------------------------------------------- parser

type funcState struct {
	prev        *funcState
	vars        []string // locals: active ones first, then declared ones
	nactvar     int
	block       *blockScope
	upvals      []varRef
	vararg      bool
	linedefined int
}

type blockScope struct {
	prev      *blockScope
	nactvar   int
	breakable bool
}

// varRef is what a name resolves to in one function: a local (its
// register) or an upvalue (its index); Lua's indexupvalue keys on it.
type varRef struct {
	upval bool
	idx   int
}

// Expression kinds, as far as statements care.
const (
	expOther = iota
	expVar   // local, upvalue, global or indexed: assignable
	expCall
)

type parser struct {
	lx    lexer
	fs    *funcState
	level int // nCcalls
}

func (p *parser) enterLevel() {
	p.level++
	if p.level > maxSyntaxLvl {
		p.lx.lexError("chunk has too many syntax levels", 0)
	}
}

func (p *parser) errorExpected(t int) {
	p.lx.syntaxError("'" + tokenString(t) + "' expected")
}

func (p *parser) errorLimit(limit int, what string) {
	var msg string
	if p.fs.linedefined == 0 {
		msg = "main function has more than " + strconv.Itoa(limit) + " " + what
	} else {
		msg = "function at line " + strconv.Itoa(p.fs.linedefined) + " has more than " + strconv.Itoa(limit) + " " + what
	}
	p.lx.lexError(msg, 0)
}

func (p *parser) testNext(t int) bool {
	if p.lx.t == t {
		p.lx.next()
		return true
	}
	return false
}

func (p *parser) check(t int) {
	if p.lx.t != t {
		p.errorExpected(t)
	}
}

func (p *parser) checkNext(t int) {
	p.check(t)
	p.lx.next()
}

func (p *parser) checkMatch(what, who, where int) {
	if !p.testNext(what) {
		if where == p.lx.line {
			p.errorExpected(what)
		}
		p.lx.syntaxError("'" + tokenString(what) + "' expected (to close '" + tokenString(who) + "' at line " + strconv.Itoa(where) + ")")
	}
}

func (p *parser) checkName() string {
	p.check(tkName)
	name := p.lx.tv
	p.lx.next()
	return name
}

func (p *parser) newLocal(name string, n int) {
	fs := p.fs
	if fs.nactvar+n+1 > maxLocalVars {
		p.errorLimit(maxLocalVars, "local variables")
	}
	for len(fs.vars) <= fs.nactvar+n {
		fs.vars = append(fs.vars, "")
	}
	fs.vars[fs.nactvar+n] = name
}

func (p *parser) adjustLocals(n int) { p.fs.nactvar += n }

func (p *parser) removeVars(to int) { p.fs.nactvar = to }

// resolve finds name from fs outward: a local of fs, an upvalue of fs
// (registered in every function between), or a global (ok false).
func (p *parser) resolve(fs *funcState, name string) (varRef, bool) {
	if fs == nil {
		return varRef{}, false
	}
	for i := fs.nactvar - 1; i >= 0; i-- {
		if fs.vars[i] == name {
			return varRef{idx: i}, true
		}
	}
	outer, ok := p.resolve(fs.prev, name)
	if !ok {
		return varRef{}, false
	}
	for i, u := range fs.upvals {
		if u == outer {
			return varRef{upval: true, idx: i}, true
		}
	}
	if len(fs.upvals)+1 > maxUpvalues {
		saved := p.fs
		p.fs = fs
		p.errorLimit(maxUpvalues, "upvalues")
		p.fs = saved
	}
	fs.upvals = append(fs.upvals, outer)
	return varRef{upval: true, idx: len(fs.upvals) - 1}, true
}

func (p *parser) singleVar() {
	p.resolve(p.fs, p.checkName())
}

func (p *parser) enterBlock(breakable bool) {
	p.fs.block = &blockScope{prev: p.fs.block, nactvar: p.fs.nactvar, breakable: breakable}
}

func (p *parser) leaveBlock() {
	b := p.fs.block
	p.fs.block = b.prev
	p.removeVars(b.nactvar)
}

func blockFollow(t int) bool {
	switch t {
	case tkElse, tkElseif, tkEnd, tkUntil, tkEOS:
		return true
	}
	return false
}

func (p *parser) chunk() {
	p.enterLevel()
	last := false
	for !last && !blockFollow(p.lx.t) {
		last = p.statement()
		p.testNext(';')
	}
	p.level--
}

func (p *parser) block() {
	p.enterBlock(false)
	p.chunk()
	p.leaveBlock()
}

func (p *parser) statement() bool {
	line := p.lx.line
	switch p.lx.t {
	case tkIf:
		p.ifStat(line)
	case tkWhile:
		p.lx.next()
		p.expr()
		p.enterBlock(true)
		p.checkNext(tkDo)
		p.block()
		p.checkMatch(tkEnd, tkWhile, line)
		p.leaveBlock()
	case tkDo:
		p.lx.next()
		p.block()
		p.checkMatch(tkEnd, tkDo, line)
	case tkFor:
		p.forStat(line)
	case tkRepeat:
		p.enterBlock(true)
		p.enterBlock(false)
		p.lx.next()
		p.chunk()
		p.checkMatch(tkUntil, tkRepeat, line)
		p.expr() // the condition sees the block's locals
		p.leaveBlock()
		p.leaveBlock()
	case tkFunction:
		p.lx.next()
		needSelf := p.funcName()
		p.body(needSelf, line)
	case tkLocal:
		p.lx.next()
		if p.testNext(tkFunction) {
			p.newLocal(p.checkName(), 0)
			p.adjustLocals(1)
			p.body(false, p.lx.line)
		} else {
			p.localStat()
		}
	case tkReturn:
		p.lx.next()
		if !blockFollow(p.lx.t) && p.lx.t != ';' {
			p.exprList()
		}
		return true
	case tkBreak:
		p.lx.next()
		b := p.fs.block
		for b != nil && !b.breakable {
			b = b.prev
		}
		if b == nil {
			p.lx.syntaxError("no loop to break")
		}
		return true
	default:
		p.exprStat()
	}
	return false
}

func (p *parser) ifStat(line int) {
	p.testThenBlock()
	for p.lx.t == tkElseif {
		p.testThenBlock()
	}
	if p.lx.t == tkElse {
		p.lx.next()
		p.block()
	}
	p.checkMatch(tkEnd, tkIf, line)
}

func (p *parser) testThenBlock() {
	p.lx.next() // IF or ELSEIF
	p.expr()
	p.checkNext(tkThen)
	p.block()
}

func (p *parser) forStat(line int) {
	p.enterBlock(true)
	p.lx.next()
	name := p.checkName()
	switch p.lx.t {
	case '=':
		// fornum: three hidden control variables, then the name
		for i := 0; i < 3; i++ {
			p.newLocal("(for)", i)
		}
		p.newLocal(name, 3)
		p.checkNext('=')
		p.expr()
		p.checkNext(',')
		p.expr()
		if p.testNext(',') {
			p.expr()
		}
		p.forBody(1)
	case ',', tkIn:
		for i := 0; i < 3; i++ {
			p.newLocal("(for)", i)
		}
		p.newLocal(name, 3)
		n := 4
		for p.testNext(',') {
			p.newLocal(p.checkName(), n)
			n++
		}
		p.checkNext(tkIn)
		p.exprList()
		p.forBody(n - 3)
	default:
		p.lx.syntaxError("'=' or 'in' expected")
	}
	p.checkMatch(tkEnd, tkFor, line)
	p.leaveBlock()
}

func (p *parser) forBody(nvars int) {
	p.adjustLocals(3)
	p.checkNext(tkDo)
	p.enterBlock(false)
	p.adjustLocals(nvars)
	p.block()
	p.leaveBlock()
}

func (p *parser) localStat() {
	n := 0
	for {
		p.newLocal(p.checkName(), n)
		n++
		if !p.testNext(',') {
			break
		}
	}
	if p.testNext('=') {
		p.exprList()
	}
	p.adjustLocals(n)
}

func (p *parser) funcName() bool {
	p.singleVar()
	for p.lx.t == '.' {
		p.field()
	}
	if p.lx.t == ':' {
		p.field()
		return true
	}
	return false
}

func (p *parser) field() {
	p.lx.next() // '.' or ':'
	p.checkName()
}

func (p *parser) body(needSelf bool, line int) {
	fs := &funcState{prev: p.fs, linedefined: line}
	p.fs = fs
	p.checkNext('(')
	if needSelf {
		p.newLocal("self", 0)
		p.adjustLocals(1)
	}
	// parlist
	n := 0
	if p.lx.t != ')' {
		for {
			switch p.lx.t {
			case tkName:
				p.newLocal(p.checkName(), n)
				n++
			case tkDots:
				p.lx.next()
				p.newLocal("arg", n) // LUA_COMPAT_VARARG
				n++
				fs.vararg = true
			default:
				p.lx.syntaxError("<name> or '...' expected")
			}
			if fs.vararg || !p.testNext(',') {
				break
			}
		}
	}
	p.adjustLocals(n)
	p.checkNext(')')
	p.chunk()
	p.checkMatch(tkEnd, tkFunction, line)
	p.fs = fs.prev
}

func (p *parser) exprList() {
	p.expr()
	for p.testNext(',') {
		p.expr()
	}
}

func (p *parser) exprStat() {
	if k := p.primaryExp(); k != expCall {
		p.assignment(k, 1)
	}
}

func (p *parser) assignment(kind, nvars int) {
	if kind != expVar {
		p.lx.syntaxError("syntax error")
	}
	if p.testNext(',') {
		k := p.primaryExp()
		if nvars > maxSyntaxLvl-p.level {
			p.errorLimit(maxSyntaxLvl-p.level, "variables in assignment")
		}
		p.assignment(k, nvars+1)
		return
	}
	p.checkNext('=')
	p.exprList()
}

func (p *parser) funcArgs() {
	line := p.lx.line
	switch p.lx.t {
	case '(':
		if line != p.lx.lastline {
			p.lx.syntaxError("ambiguous syntax (function call x new statement)")
		}
		p.lx.next()
		if p.lx.t != ')' {
			p.exprList()
		}
		p.checkMatch(')', '(', line)
	case '{':
		p.constructor()
	case tkString:
		p.lx.next()
	default:
		p.lx.syntaxError("function arguments expected")
	}
}

func (p *parser) prefixExp() int {
	switch p.lx.t {
	case '(':
		line := p.lx.line
		p.lx.next()
		p.expr()
		p.checkMatch(')', '(', line)
		return expOther
	case tkName:
		p.singleVar()
		return expVar
	}
	p.lx.syntaxError("unexpected symbol")
	return expOther
}

func (p *parser) primaryExp() int {
	kind := p.prefixExp()
	for {
		switch p.lx.t {
		case '.':
			p.field()
			kind = expVar
		case '[':
			p.index()
			kind = expVar
		case ':':
			p.lx.next()
			p.checkName()
			p.funcArgs()
			kind = expCall
		case '(', tkString, '{':
			p.funcArgs()
			kind = expCall
		default:
			return kind
		}
	}
}

func (p *parser) index() {
	p.lx.next() // '['
	p.expr()
	p.checkNext(']')
}

func (p *parser) constructor() {
	line := p.lx.line
	p.checkNext('{')
	for {
		if p.lx.t == '}' {
			break
		}
		switch p.lx.t {
		case tkName:
			p.lx.lookahead()
			if p.lx.ahead != '=' {
				p.expr()
			} else {
				p.checkName()
				p.checkNext('=')
				p.expr()
			}
		case '[':
			p.index()
			p.checkNext('=')
			p.expr()
		default:
			p.expr()
		}
		if !p.testNext(',') && !p.testNext(';') {
			break
		}
	}
	p.checkMatch('}', '{', line)
}

func (p *parser) simpleExp() {
	switch p.lx.t {
	case tkNumber, tkString, tkNil, tkTrue, tkFalse:
	case tkDots:
		if !p.fs.vararg {
			p.lx.syntaxError("cannot use '...' outside a vararg function")
		}
	case '{':
		p.constructor()
		return
	case tkFunction:
		p.lx.next()
		p.body(false, p.lx.line)
		return
	default:
		p.primaryExp()
		return
	}
	p.lx.next()
}

// Binary operators' left and right priorities (Lua 5.1's table); 0 is
// not a binary operator.
func binaryPriority(t int) (left, right int) {
	switch t {
	case '+', '-':
		return 6, 6
	case '*', '/', '%':
		return 7, 7
	case '^':
		return 10, 9
	case tkConcat:
		return 5, 4
	case tkEq, tkNe, '<', tkLe, '>', tkGe:
		return 3, 3
	case tkAnd:
		return 2, 2
	case tkOr:
		return 1, 1
	}
	return 0, 0
}

// subExpr reads operands and operators of priority over limit and returns
// the first operator it left.
func (p *parser) subExpr(limit int) int {
	p.enterLevel()
	if t := p.lx.t; t == tkNot || t == '-' || t == '#' {
		p.lx.next()
		p.subExpr(unaryPriority)
	} else {
		p.simpleExp()
	}
	op := p.lx.t
	for {
		left, right := binaryPriority(op)
		if left == 0 || left <= limit {
			break
		}
		p.lx.next()
		op = p.subExpr(right)
	}
	p.level--
	return op
}

func (p *parser) expr() { p.subExpr(0) }
