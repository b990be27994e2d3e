package crashtest

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Seen is one value a reader was shown: the state of a client's key at a
// moment. Readers record only present values (an absent key proves
// nothing: every key starts absent).
type Seen struct {
	Client int
	Key    int
	Sum    uint64
	Show   string
	At     time.Time
}

// Input is everything the check knows about one client after a restart.
type Input struct {
	Model *Model
	Sent  int         // ops whose bytes went to the socket: none later can be applied
	AckAt []time.Time // when the reply of op i arrived, for i < len(AckAt)
	Seen  []Seen      // what readers were shown of this client's keys
	Obs   []State     // what the restarted server holds, per key of the model
	Crash time.Time
	// Margin is the window the fsync policy may lose: 0 under always (every
	// acknowledged op must survive), 2 s under everysec, negative when the
	// policy promises nothing for this crash (appendfsync no, power cut).
	Margin time.Duration
	// WrongReply is a reply before the crash that the model did not expect.
	WrongReply string
}

// Verdict is the check of one client.
type Verdict struct {
	Client      int
	Sent, Acked int
	// Need is the least prefix the policy requires: acknowledged ops and
	// ops whose values a reader saw, those older than the margin only under
	// everysec. NeedStrict ignores the margin.
	Need, NeedStrict int
	// K is the longest prefix whose model state equals the server's, -1 if
	// there is none.
	K         int
	AckedLost int // acknowledged ops beyond K
	SeenLost  int // reader observations of ops beyond K
	OK        bool
	StrictOK  bool
	Detail    string
}

// countBefore is how many of the (non-decreasing) times are at or before t.
func countBefore(at []time.Time, t time.Time) int {
	return sort.Search(len(at), func(i int) bool { return at[i].After(t) })
}

// Check decides whether some prefix k of the client's sequence, with
// Need <= k <= Sent, leaves exactly the state the server holds. It walks k
// upward once, keeping the number of keys whose model state differs from
// the observed one, so it is linear in the ops' effects.
func Check(in Input) Verdict {
	m := in.Model
	v := Verdict{Client: m.ID, Sent: in.Sent, Acked: len(in.AckAt), K: -1}
	if in.Sent > len(m.Ops) {
		in.Sent = len(m.Ops)
	}

	// Which op first produced each value: a value read names its op.
	type kv struct {
		key int
		sum uint64
	}
	first := map[kv]int{}
	for j, op := range m.Ops {
		for _, e := range op.Effects {
			if e.To.Present {
				if _, ok := first[kv{e.Key, e.To.Sum}]; !ok {
					first[kv{e.Key, e.To.Sum}] = j
				}
			}
		}
	}

	var problems []string
	if in.WrongReply != "" {
		problems = append(problems, in.WrongReply)
	}

	// The bounds.
	v.NeedStrict = v.Acked
	switch {
	case in.Margin == 0:
		v.Need = v.Acked
	case in.Margin > 0:
		v.Need = countBefore(in.AckAt, in.Crash.Add(-in.Margin))
	}
	seenOp := make([]int, len(in.Seen))
	for i, s := range in.Seen {
		j, ok := first[kv{s.Key, s.Sum}]
		if !ok {
			seenOp[i] = -1
			problems = append(problems, fmt.Sprintf("a reader saw %s = %s, which no op wrote", m.Keys[s.Key], s.Show))
			continue
		}
		seenOp[i] = j
		v.NeedStrict = max(v.NeedStrict, j+1)
		if in.Margin == 0 || (in.Margin > 0 && !s.At.After(in.Crash.Add(-in.Margin))) {
			v.Need = max(v.Need, j+1)
		}
	}

	// The walk. best is the prefix at or above Need closest to the server's
	// state, for the report when nothing matches.
	cur := make([]State, len(m.Keys))
	diff := 0
	for i := range in.Obs {
		if !in.Obs[i].Same(cur[i]) {
			diff++
		}
	}
	best, bestDiff := -1, len(m.Keys)+1
	for k := 0; ; k++ {
		if diff == 0 {
			v.K = k
		}
		if k >= v.Need && diff < bestDiff {
			best, bestDiff = k, diff
		}
		if k == in.Sent {
			break
		}
		for _, e := range m.Ops[k].Effects {
			was := cur[e.Key].Same(in.Obs[e.Key])
			cur[e.Key] = e.To
			now := cur[e.Key].Same(in.Obs[e.Key])
			if was && !now {
				diff++
			} else if !was && now {
				diff--
			}
		}
	}

	if v.K >= 0 {
		v.AckedLost = max(0, v.Acked-v.K)
		for _, j := range seenOp {
			if j >= v.K {
				v.SeenLost++
			}
		}
	}
	v.StrictOK = len(problems) == 0 && v.K >= v.NeedStrict
	v.OK = len(problems) == 0 && v.K >= v.Need
	switch {
	case v.K < 0:
		problems = append(problems, "the data is no prefix of what it sent: "+diffAt(m, in.Obs, max(best, 0), in.Sent))
	case v.K < v.Need:
		problems = append(problems, fmt.Sprintf("holds ops 0..%d, needs at least 0..%d: lost %s",
			v.K-1, v.Need-1, opNames(m, v.K, v.Need)))
	case !v.StrictOK:
		// Allowed by the policy; said so.
		problems = append(problems, fmt.Sprintf("lost %d acknowledged ops within the policy's margin", v.NeedStrict-v.K))
	}
	v.Detail = strings.Join(problems, "; ")
	return v
}

// diffAt replays the model to prefix k and names up to three keys whose
// state differs from the server's.
func diffAt(m *Model, obs []State, k, sent int) string {
	k = min(k, sent)
	cur := make([]State, len(m.Keys))
	for _, op := range m.Ops[:k] {
		for _, e := range op.Effects {
			cur[e.Key] = e.To
		}
	}
	var out []string
	for i := range cur {
		if !cur[i].Same(obs[i]) {
			if len(out) == 3 {
				out = append(out, "...")
				break
			}
			out = append(out, fmt.Sprintf("%s holds %s, prefix %d has %s", m.Keys[i], obs[i], k, cur[i]))
		}
	}
	return strings.Join(out, ", ")
}

// opNames names the ops k..need-1, at most a few.
func opNames(m *Model, k, need int) string {
	var out []string
	for j := k; j < need; j++ {
		if len(out) == 3 {
			out = append(out, fmt.Sprintf("... (%d ops)", need-k))
			break
		}
		out = append(out, fmt.Sprintf("op %d %s", j, strings.Join(m.Ops[j].Cmds[0][:min(2, len(m.Ops[j].Cmds[0]))], " ")))
	}
	return strings.Join(out, ", ")
}
