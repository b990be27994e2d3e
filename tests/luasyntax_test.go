package tests

// Lua syntax errors like Redis's: the same chunks, valid and broken, go to
// redshard and to redis-server 7.0 with SCRIPT LOAD and FUNCTION LOAD, and
// both must answer the same (the script's SHA1, or the same error text to
// the byte). The chunks are scripts of the shapes applications send (a
// rate limiter, a lock release, a job queue, ...) and seeded mutations of
// them: characters deleted, inserted (brackets, quotes, operators,
// keywords, "\300", "1e"), cut short and moved, so that most fail to
// compile somewhere in the lexer or the parser (lua/syntax.go).

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

var luaSyntaxBase = []string{
	"local key = KEYS[1]\nlocal limit = tonumber(ARGV[1])\nlocal current = redis.call('INCR', key)\nif current == 1 then\n  redis.call('EXPIRE', key, ARGV[2])\nend\nif current > limit then\n  return 0\nend\nreturn 1",
	"if redis.call('get', KEYS[1]) == ARGV[1] then\n  return redis.call('del', KEYS[1])\nelse\n  return 0\nend",
	"local t = {}\nfor i = 1, #KEYS do\n  t[#t+1] = redis.call('GET', KEYS[i]) or false\nend\nreturn t",
	"local function add(a, b)\n  return a + b\nend\nlocal r = {add(1, 2), [\"x\"] = 'y'; n = 3}\nreturn cjson.encode(r)",
	"for k, v in pairs({a=1, b=2}) do\n  if v > 1 then break end\nend\nrepeat local x = 1 until x == 1\nwhile false do end\nreturn 'ok'",
	"local s = [[long\nstring]] .. [==[ x ]==] -- comment\n--[[ block\ncomment ]]\nreturn s:upper():sub(1, 3)",
	"local a, b, c = 1, 2.5e3, 0x1F\nlocal d = -a ^ 2 .. 'x' and not b or c % 2\nreturn {a, b, c, d, ...}",
	"function M.f(self, ...)\n  local n = select('#', ...)\n  return n\nend\nlocal obj = {}\nfunction obj:m(x) return self, x end\nreturn obj:m(1)",
	"local ok, err = pcall(function() error({err='x'}) end)\nif not ok then return redis.error_reply(err.err) end\nreturn redis.status_reply('OK')",
	"local q = KEYS[1]\nlocal job = redis.call('RPOPLPUSH', q, q .. ':processing')\nif job then\n  redis.call('HSET', 'jobs', job, ARGV[1])\nend\nreturn job",
}

var luaSyntaxInserts = append(strings.Split("()[]{}=.,;:'\"\\-+*/%^#<>~ \n\tabcdefx019_", ""),
	"end", "then", "do", "local ", "function", "...", "..", "==", "--", "[[", "]]", "\\300", "return ", "break ", "1e", "0x", "\r")

// luaSyntaxCorpus is the base scripts and n seeded mutations of each.
func luaSyntaxCorpus(n int) []string {
	rng := rand.New(rand.NewSource(7))
	var out []string
	for _, b := range luaSyntaxBase {
		out = append(out, b)
		for k := 0; k < n; k++ {
			s := b
			for m := 1 + rng.Intn(3); m > 0; m-- {
				i := rng.Intn(len(s) + 1)
				switch op := rng.Float64(); {
				case op < 0.35 && len(s) > 0:
					j := min(len(s), i+1+rng.Intn(4))
					s = s[:i] + s[j:]
				case op < 0.7:
					s = s[:i] + luaSyntaxInserts[rng.Intn(len(luaSyntaxInserts))] + s[i:]
				case op < 0.85:
					s = s[:i]
				default:
					a, c := i, rng.Intn(len(s)+1)
					if a > c {
						a, c = c, a
					}
					s = s[:a] + s[c:] + s[a:c]
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// loadAll sends every chunk with SCRIPT LOAD (or FUNCTION LOAD, as a
// library's code) in one pipeline and returns each answer as text.
func loadAll(t *testing.T, c *redis.Client, chunks []string, asFunction bool) []string {
	t.Helper()
	ctx := context.Background()
	pipe := c.Pipeline()
	cmds := make([]*redis.StringCmd, len(chunks))
	for i, s := range chunks {
		if asFunction {
			cmds[i] = pipe.FunctionLoadReplace(ctx, "#!lua name=syntaxlib\n"+s)
		} else {
			cmds[i] = pipe.ScriptLoad(ctx, s)
		}
	}
	_, _ = pipe.Exec(ctx)
	out := make([]string, len(chunks))
	for i, cmd := range cmds {
		if v, err := cmd.Result(); err != nil {
			out[i] = "error: " + err.Error()
		} else {
			out[i] = v
		}
	}
	return out
}

func TestLuaSyntaxErrorsLikeRedis(t *testing.T) {
	rc := redisBeside(t)
	s := startServer(t, "--appendonly", "no")
	c := s.client(t, 2)

	chunks := luaSyntaxCorpus(150)
	errs := 0
	for _, asFunction := range []bool{false, true} {
		set := chunks
		if asFunction {
			set = chunks[:len(chunks)/4] // the same checker; a sample
		}
		got, want := loadAll(t, c, set, asFunction), loadAll(t, rc, set, asFunction)
		differ := 0
		for i := range set {
			if strings.HasPrefix(want[i], "error: ") {
				errs++
			}
			if got[i] != want[i] {
				differ++
				if differ <= 10 {
					t.Errorf("function %v, chunk %q:\n redshard     %s\n redis-server %s", asFunction, set[i], got[i], want[i])
				}
			}
		}
		if differ > 0 {
			t.Errorf("function %v: %d of %d chunks answered differently", asFunction, differ, len(set))
		}
	}
	// The corpus must exercise the error paths, not only valid chunks.
	if errs < len(chunks)/2 {
		t.Fatalf("only %d of the chunks failed to compile in redis-server", errs)
	}
}
