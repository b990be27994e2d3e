package crashtest

import (
	"fmt"
	"math/rand"
	"strconv"
)

// Kinds of keys. A key's kind is fixed by its name, so a reader (and the
// read-back after a restart) knows how to read it without asking TYPE.
const (
	kindString  = 's'
	kindCounter = 'n'
	kindList    = 'l'
	kindHash    = 'h'
	kindStream  = 'x'
)

var kinds = [...]byte{kindString, kindCounter, kindList, kindHash, kindStream}

// tagsPerClient is how many hash tags a client's keys use: one tag, one
// shard; multi-key ops pick keys of different tags so that, with more than
// one shard, they usually span shards.
const tagsPerClient = 4

// Long expiries: nothing expires while the tool runs.
const (
	longPX = "100000000" // ms, about 28 hours
	longEX = "1000000"   // s, about 11 days
)

// evalScript is the script EVAL runs: two writes to keys of two tags.
const evalScript = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('RPUSH', KEYS[2], ARGV[1])"

// State is what one key holds. Sum is a digest of the value that does not
// depend on how the value was built (a hash's digest ignores field order),
// so a model state and a state read from the server compare in O(1) and
// the model keeps no copy of long lists.
type State struct {
	Present bool
	Sum     uint64
	TTL     bool
	Show    string // a short human form, for reports only
}

// Same reports whether two states are the same value (Show is not compared).
func (s State) Same(o State) bool {
	if !s.Present || !o.Present {
		return s.Present == o.Present
	}
	return s.Sum == o.Sum && s.TTL == o.TTL
}

func (s State) String() string {
	if !s.Present {
		return "(absent)"
	}
	if s.TTL {
		return s.Show + " +TTL"
	}
	return s.Show
}

// FNV-1a, 64 bits: the digest of strings and the chaining step of lists
// and streams.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	h ^= 0xff // separator: "ab"+"c" and "a"+"bc" differ
	h *= fnvPrime
	return h
}

func digestString(v string) uint64 { return fnvAdd(fnvOffset, v) }

// A list's or stream's digest chains its elements in order.
func digestAppend(h uint64, elems ...string) uint64 {
	for _, e := range elems {
		h = fnvAdd(h, e)
	}
	return h
}

// A hash's digest is the sum of its fields' digests: order-free, and a
// field's new value replaces the old by subtracting one and adding one.
func digestField(f, v string) uint64 { return fnvAdd(fnvAdd(fnvOffset, f), v) }

// keyModel is the model of one key while ops are generated.
type keyModel struct {
	st   State
	n    int64             // counter value; list length; stream length
	hash map[string]string // hash fields
}

// Effect is what an op leaves in one key of its client.
type Effect struct {
	Key int // index in the client's key table
	To  State
}

// Op is one element of a client's sequence: one command, or one MULTI ...
// EXEC block, which the check treats as a single step, so a half-applied
// multi-key op matches no prefix.
type Op struct {
	Name    string
	Cmds    [][]string
	Want    string // the expected text of the last reply (Reply.Text)
	Effects []Effect
}

// Model is one client's key table and sequence of ops.
type Model struct {
	ID   int
	Keys []string
	Kind []byte
	Ops  []Op
	cur  []keyModel
	rng  *rand.Rand
}

// NewModel makes client id's model; its keys are "{c<id><tag>}:<kind>".
func NewModel(id int, seed int64) *Model {
	m := &Model{ID: id, rng: rand.New(rand.NewSource(seed))}
	for t := 0; t < tagsPerClient; t++ {
		for _, k := range kinds {
			m.Keys = append(m.Keys, fmt.Sprintf("{c%d%c}:%c", id, 'a'+t, k))
			m.Kind = append(m.Kind, k)
		}
	}
	m.cur = make([]keyModel, len(m.Keys))
	return m
}

func (m *Model) key(tag int, kind byte) int {
	for i, k := range kinds {
		if k == kind {
			return tag*len(kinds) + i
		}
	}
	panic("crashtest: unknown kind")
}

// twoTags returns two different tags.
func (m *Model) twoTags() (int, int) {
	a := m.rng.Intn(tagsPerClient)
	b := (a + 1 + m.rng.Intn(tagsPerClient-1)) % tagsPerClient
	return a, b
}

// The model's writes: each changes m.cur and returns the effect.

func (m *Model) setString(k int, v string, ttl bool) Effect {
	m.cur[k] = keyModel{st: State{Present: true, Sum: digestString(v), TTL: ttl, Show: strconv.Quote(v)}}
	return Effect{k, m.cur[k].st}
}

func (m *Model) incr(k int) (Effect, int64) {
	km := &m.cur[k]
	km.n++
	v := strconv.FormatInt(km.n, 10)
	km.st = State{Present: true, Sum: digestString(v), TTL: km.st.TTL, Show: v}
	return Effect{k, km.st}, km.n
}

func (m *Model) rpush(k int, v string) (Effect, int64) {
	km := &m.cur[k]
	if !km.st.Present {
		km.st.Sum = fnvOffset
	}
	km.n++
	km.st = State{Present: true, Sum: digestAppend(km.st.Sum, v), TTL: km.st.TTL,
		Show: fmt.Sprintf("list len %d last %s", km.n, v)}
	return Effect{k, km.st}, km.n
}

func (m *Model) hset(k int, f, v string) (Effect, bool) {
	km := &m.cur[k]
	if !km.st.Present {
		km.hash = map[string]string{}
		km.st.Sum = 0
	}
	old, had := km.hash[f]
	sum := km.st.Sum
	if had {
		sum -= digestField(f, old)
	}
	sum += digestField(f, v)
	km.hash[f] = v
	km.st = State{Present: true, Sum: sum, TTL: km.st.TTL,
		Show: fmt.Sprintf("hash %d fields, %s=%s", len(km.hash), f, v)}
	return Effect{k, km.st}, !had
}

func (m *Model) xadd(k int, id, f, v string) Effect {
	km := &m.cur[k]
	if !km.st.Present {
		km.st.Sum = fnvOffset
	}
	km.n++
	km.st = State{Present: true, Sum: digestAppend(km.st.Sum, id, f, v), TTL: km.st.TTL,
		Show: fmt.Sprintf("stream len %d last %s", km.n, id)}
	return Effect{k, km.st}
}

func (m *Model) del(k int) (Effect, bool) {
	had := m.cur[k].st.Present
	m.cur[k] = keyModel{}
	return Effect{k, State{}}, had
}

func (m *Model) expire(k int) (Effect, bool) {
	km := &m.cur[k]
	if km.st.Present {
		km.st.TTL = true
	}
	return Effect{k, km.st}, km.st.Present
}

func boolInt(b bool) string {
	if b {
		return ":1"
	}
	return ":0"
}

// Next generates op number len(m.Ops), appends it and returns it. Its
// value, "c<id>.o<index>", is unique across the whole run, so a value read
// back names the op that wrote it.
func (m *Model) Next() *Op {
	i := len(m.Ops)
	v := fmt.Sprintf("c%d.o%d", m.ID, i)
	tag := m.rng.Intn(tagsPerClient)
	var op Op
	switch r := m.rng.Intn(100); {
	case r < 14:
		k := m.key(tag, kindString)
		op = Op{Name: "SET", Cmds: [][]string{{"SET", m.Keys[k], v}}, Want: "+OK",
			Effects: []Effect{m.setString(k, v, false)}}
	case r < 19:
		k := m.key(tag, kindString)
		op = Op{Name: "SET PX", Cmds: [][]string{{"SET", m.Keys[k], v, "PX", longPX}}, Want: "+OK",
			Effects: []Effect{m.setString(k, v, true)}}
	case r < 33:
		k := m.key(tag, kindCounter)
		e, n := m.incr(k)
		op = Op{Name: "INCR", Cmds: [][]string{{"INCR", m.Keys[k]}}, Want: ":" + strconv.FormatInt(n, 10),
			Effects: []Effect{e}}
	case r < 45:
		k := m.key(tag, kindList)
		e, n := m.rpush(k, v)
		op = Op{Name: "RPUSH", Cmds: [][]string{{"RPUSH", m.Keys[k], v}}, Want: ":" + strconv.FormatInt(n, 10),
			Effects: []Effect{e}}
	case r < 56:
		k := m.key(tag, kindHash)
		f := "f" + strconv.Itoa(m.rng.Intn(4))
		e, isNew := m.hset(k, f, v)
		op = Op{Name: "HSET", Cmds: [][]string{{"HSET", m.Keys[k], f, v}}, Want: boolInt(isNew),
			Effects: []Effect{e}}
	case r < 64:
		k := m.key(tag, kindStream)
		id := strconv.Itoa(i+1) + "-0" // increasing per client, so per key
		op = Op{Name: "XADD", Cmds: [][]string{{"XADD", m.Keys[k], id, "f", v}}, Want: "$" + id,
			Effects: []Effect{m.xadd(k, id, "f", v)}}
	case r < 68:
		// Never the last tag's keys: its list, hash and stream keep their
		// first writes to the end, so the middle of the log holds values
		// the server still serves (what corrupt-middle aims at).
		k := m.rng.Intn(len(m.Keys) - len(kinds))
		e, had := m.del(k)
		op = Op{Name: "DEL", Cmds: [][]string{{"DEL", m.Keys[k]}}, Want: boolInt(had), Effects: []Effect{e}}
	case r < 73:
		k := m.rng.Intn(len(m.Keys))
		e, had := m.expire(k)
		op = Op{Name: "EXPIRE", Cmds: [][]string{{"EXPIRE", m.Keys[k], longEX}}, Want: boolInt(had),
			Effects: []Effect{e}}
	case r < 82:
		// MSET over three tags: one atomic op across shards.
		cmd := []string{"MSET"}
		var effs []Effect
		for t, n := m.rng.Intn(tagsPerClient), 0; n < 3; t, n = (t+1)%tagsPerClient, n+1 {
			k := m.key(t, kindString)
			mv := fmt.Sprintf("%s.%d", v, n)
			cmd = append(cmd, m.Keys[k], mv)
			effs = append(effs, m.setString(k, mv, false))
		}
		op = Op{Name: "MSET", Cmds: [][]string{cmd}, Want: "+OK", Effects: effs}
	case r < 91:
		a, b := m.twoTags()
		c := (b + 1) % tagsPerClient
		e1, n1 := m.incr(m.key(a, kindCounter))
		e2, n2 := m.rpush(m.key(b, kindList), v)
		e3, isNew := m.hset(m.key(c, kindHash), "m", v)
		op = Op{Name: "MULTI", Cmds: [][]string{
			{"MULTI"},
			{"INCR", m.Keys[e1.Key]},
			{"RPUSH", m.Keys[e2.Key], v},
			{"HSET", m.Keys[e3.Key], "m", v},
			{"EXEC"},
		}, Want: fmt.Sprintf("*[:%d,:%d,%s]", n1, n2, boolInt(isNew)), Effects: []Effect{e1, e2, e3}}
	default:
		a, b := m.twoTags()
		ks, kl := m.key(a, kindString), m.key(b, kindList)
		e1 := m.setString(ks, v, false)
		e2, n := m.rpush(kl, v)
		op = Op{Name: "EVAL", Cmds: [][]string{{"EVAL", evalScript, "2", m.Keys[ks], m.Keys[kl], v}},
			Want: ":" + strconv.FormatInt(n, 10), Effects: []Effect{e1, e2}}
	}
	m.Ops = append(m.Ops, op)
	return &m.Ops[len(m.Ops)-1]
}

// readCmd is the command that reads a key of the given kind.
func readCmd(kind byte, key string) []string {
	switch kind {
	case kindList:
		return []string{"LRANGE", key, "0", "-1"}
	case kindHash:
		return []string{"HGETALL", key}
	case kindStream:
		return []string{"XRANGE", key, "-", "+"}
	}
	return []string{"GET", key}
}

// stateOf turns the reply of readCmd into a State (without TTL).
func stateOf(kind byte, r Reply) (State, error) {
	if err := r.Err(); err != nil {
		return State{}, err
	}
	switch kind {
	case kindString, kindCounter:
		if r.Kind != '$' {
			return State{}, fmt.Errorf("GET replied %s", r.Text())
		}
		if r.Nil {
			return State{}, nil
		}
		return State{Present: true, Sum: digestString(r.Str), Show: strconv.Quote(r.Str)}, nil
	case kindList:
		if r.Kind != '*' || len(r.Arr) == 0 {
			return State{}, nil
		}
		h := uint64(fnvOffset)
		for _, e := range r.Arr {
			h = digestAppend(h, e.Str)
		}
		last := r.Arr[len(r.Arr)-1].Str
		return State{Present: true, Sum: h, Show: fmt.Sprintf("list len %d last %s", len(r.Arr), last)}, nil
	case kindHash:
		if r.Kind != '*' || len(r.Arr) == 0 {
			return State{}, nil
		}
		var sum uint64
		for i := 0; i+1 < len(r.Arr); i += 2 {
			sum += digestField(r.Arr[i].Str, r.Arr[i+1].Str)
		}
		return State{Present: true, Sum: sum, Show: fmt.Sprintf("hash %d fields", len(r.Arr)/2)}, nil
	case kindStream:
		if r.Kind != '*' || len(r.Arr) == 0 {
			return State{}, nil
		}
		h := uint64(fnvOffset)
		var last string
		for _, e := range r.Arr {
			if len(e.Arr) != 2 {
				return State{}, fmt.Errorf("XRANGE entry %s", e.Text())
			}
			last = e.Arr[0].Str
			h = digestAppend(h, last)
			for _, fv := range e.Arr[1].Arr {
				h = digestAppend(h, fv.Str)
			}
		}
		return State{Present: true, Sum: h, Show: fmt.Sprintf("stream len %d last %s", len(r.Arr), last)}, nil
	}
	return State{}, fmt.Errorf("unknown kind %q", kind)
}
