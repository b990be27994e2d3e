package crashtest

import (
	"strings"
	"testing"
	"time"
)

// stateAt replays the first k ops of a model: what a server that applied
// exactly them holds.
func stateAt(m *Model, k int) []State {
	st := make([]State, len(m.Keys))
	for _, op := range m.Ops[:k] {
		for _, e := range op.Effects {
			st[e.Key] = e.To
		}
	}
	return st
}

func newTestModel(t *testing.T, n int) *Model {
	t.Helper()
	m := NewModel(7, 42)
	for i := 0; i < n; i++ {
		m.Next()
	}
	return m
}

// acks stamps the first n ops one millisecond apart, ending at end.
func acks(n int, end time.Time) []time.Time {
	at := make([]time.Time, n)
	for i := range at {
		at[i] = end.Add(-time.Duration(n-i) * time.Millisecond)
	}
	return at
}

// firstOp returns the index of the first op at or after from whose name is
// name.
func firstOp(t *testing.T, m *Model, name string, from int) int {
	t.Helper()
	for j := from; j < len(m.Ops); j++ {
		if m.Ops[j].Name == name {
			return j
		}
	}
	t.Fatalf("no %s op after %d", name, from)
	return -1
}

func TestCheckPassesWhenThePrefixHoldsEveryAcknowledgedOp(t *testing.T) {
	m := newTestModel(t, 300)
	crash := time.Now()
	// Acknowledged 200, sent 260, the server applied 230 of them.
	v := Check(Input{Model: m, Sent: 260, AckAt: acks(200, crash), Obs: stateAt(m, 230), Crash: crash})
	if !v.OK || !v.StrictOK || v.AckedLost != 0 {
		t.Fatalf("verdict %+v, want a pass", v)
	}
	if v.K < 230 {
		t.Fatalf("K = %d, want at least 230", v.K)
	}
}

func TestCheckFailsWhenAnAcknowledgedWriteIsMissing(t *testing.T) {
	m := newTestModel(t, 300)
	crash := time.Now()
	v := Check(Input{Model: m, Sent: 260, AckAt: acks(200, crash), Obs: stateAt(m, 190), Crash: crash})
	if v.OK || v.StrictOK {
		t.Fatalf("verdict %+v: a state missing 10 acknowledged ops passed", v)
	}
	// A key may hold the same value at several prefixes (EXPIRE of an
	// absent key changes nothing), so K is 190 or a little more.
	if v.K < 190 || v.K >= 200 || v.AckedLost != 200-v.K {
		t.Fatalf("K = %d, acked lost = %d, want 190 <= K < 200 and 200-K lost", v.K, v.AckedLost)
	}
	if !strings.Contains(v.Detail, "needs at least") {
		t.Fatalf("detail %q does not say what is needed", v.Detail)
	}
}

func TestCheckFailsAHalfAppliedMSET(t *testing.T) {
	m := newTestModel(t, 300)
	j := firstOp(t, m, "MSET", 50)
	obs := stateAt(m, j)
	first := m.Ops[j].Effects[0]
	obs[first.Key] = first.To // one key of the three written
	crash := time.Now()
	v := Check(Input{Model: m, Sent: j + 20, AckAt: acks(j-5, crash), Obs: obs, Crash: crash})
	if v.OK || v.K != -1 {
		t.Fatalf("verdict %+v: half an MSET matched a prefix", v)
	}
	if !strings.Contains(v.Detail, "no prefix") {
		t.Fatalf("detail %q", v.Detail)
	}
}

func TestCheckFailsAHalfAppliedTransaction(t *testing.T) {
	m := newTestModel(t, 300)
	j := firstOp(t, m, "MULTI", 50)
	obs := stateAt(m, j+1)
	last := m.Ops[j].Effects[2]
	obs[last.Key] = stateAt(m, j)[last.Key] // the HSET of the block is missing
	crash := time.Now()
	v := Check(Input{Model: m, Sent: j + 20, AckAt: acks(j-5, crash), Obs: obs, Crash: crash})
	if v.OK || v.K != -1 {
		t.Fatalf("verdict %+v: two thirds of a MULTI/EXEC matched a prefix", v)
	}
}

func TestCheckFailsWhenAValueAReaderSawIsGone(t *testing.T) {
	m := newTestModel(t, 300)
	crash := time.Now()
	// Nothing acknowledged is lost (100 acked, 150 applied), but a reader
	// was shown what op 170 wrote.
	j := 170
	e := m.Ops[j].Effects[0]
	for !e.To.Present {
		j++
		e = m.Ops[j].Effects[0]
	}
	seen := []Seen{{Client: m.ID, Key: e.Key, Sum: e.To.Sum, Show: e.To.Show, At: crash.Add(-time.Second)}}
	v := Check(Input{Model: m, Sent: 250, AckAt: acks(100, crash), Seen: seen, Obs: stateAt(m, 150), Crash: crash})
	if v.OK || v.SeenLost != 1 {
		t.Fatalf("verdict %+v: a value a reader saw is gone, and it passed", v)
	}
	if v.Need != j+1 {
		t.Fatalf("Need = %d, want %d", v.Need, j+1)
	}
}

func TestCheckFailsAValueNoOpWrote(t *testing.T) {
	m := newTestModel(t, 100)
	crash := time.Now()
	seen := []Seen{{Client: m.ID, Key: 0, Sum: 12345, Show: `"forged"`, At: crash}}
	v := Check(Input{Model: m, Sent: 100, AckAt: acks(100, crash), Seen: seen, Obs: stateAt(m, 100), Crash: crash})
	if v.OK || !strings.Contains(v.Detail, "no op wrote") {
		t.Fatalf("verdict %+v", v)
	}
}

func TestCheckFailsAWrongReplyBeforeTheCrash(t *testing.T) {
	m := newTestModel(t, 100)
	crash := time.Now()
	v := Check(Input{Model: m, Sent: 100, AckAt: acks(100, crash), Obs: stateAt(m, 100), Crash: crash,
		WrongReply: "op 3 answered :2, expected :1"})
	if v.OK {
		t.Fatalf("verdict %+v", v)
	}
}

func TestCheckEverysecAllowsTheMarginOnly(t *testing.T) {
	m := newTestModel(t, 300)
	crash := time.Now()
	// 200 acknowledged one a millisecond, so op i's ack is 200-i ms before
	// the crash; with a 50 ms margin ops 0..149 must be there.
	in := Input{Model: m, Sent: 200, AckAt: acks(200, crash), Crash: crash, Margin: 50 * time.Millisecond}
	in.Obs = stateAt(m, 160)
	if v := Check(in); !v.OK || v.StrictOK || v.AckedLost == 0 {
		t.Fatalf("lost within the margin: verdict %+v, want policy pass, strict fail", v)
	}
	in.Obs = stateAt(m, 140)
	if v := Check(in); v.OK {
		t.Fatalf("lost beyond the margin: verdict %+v, want a fail", v)
	}
}

// The model's digests and the digests of values read back agree, whatever
// the order a hash's fields come in.
func TestStateOfAgreesWithTheModel(t *testing.T) {
	m := NewModel(1, 1)
	l := m.key(0, kindList)
	m.rpush(l, "a")
	el, _ := m.rpush(l, "b")
	got, _ := stateOf(kindList, Reply{Kind: '*', Arr: []Reply{{Kind: '$', Str: "a"}, {Kind: '$', Str: "b"}}})
	if !got.Same(el.To) {
		t.Errorf("list: read %v, model %v", got, el.To)
	}
	h := m.key(0, kindHash)
	m.hset(h, "f1", "x")
	m.hset(h, "f2", "y")
	eh, _ := m.hset(h, "f1", "z")
	got, _ = stateOf(kindHash, Reply{Kind: '*', Arr: []Reply{{Kind: '$', Str: "f2"}, {Kind: '$', Str: "y"}, {Kind: '$', Str: "f1"}, {Kind: '$', Str: "z"}}})
	if !got.Same(eh.To) {
		t.Errorf("hash: read %v, model %v", got, eh.To)
	}
	x := m.key(0, kindStream)
	ex := m.xadd(x, "5-0", "f", "v")
	got, _ = stateOf(kindStream, Reply{Kind: '*', Arr: []Reply{{Kind: '*', Arr: []Reply{{Kind: '$', Str: "5-0"},
		{Kind: '*', Arr: []Reply{{Kind: '$', Str: "f"}, {Kind: '$', Str: "v"}}}}}}})
	if !got.Same(ex.To) {
		t.Errorf("stream: read %v, model %v", got, ex.To)
	}
	// A list holding the same elements in another order differs.
	got, _ = stateOf(kindList, Reply{Kind: '*', Arr: []Reply{{Kind: '$', Str: "b"}, {Kind: '$', Str: "a"}}})
	if got.Same(el.To) {
		t.Errorf("list b,a has the digest of a,b")
	}
}
