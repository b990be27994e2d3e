package crashtest

import (
	"fmt"
	"math/rand"
	"sync"
	"time"
)

// writer drives one client's sequence on its own connection, keeping up to
// depth ops in flight: the sender writes every op it may send in one
// write(2), the receiver reads the replies in order and stamps each op's
// acknowledgement.
type writer struct {
	model *Model
	depth int
	conn  *Conn

	// Written by the sender only, read after both goroutines ended.
	sent int
	// Written by the receiver only, read after both goroutines ended.
	ackAt []time.Time
	wrong string
	err   error
}

// inflight is what the receiver needs of an op: how many replies it gets
// and what the last one must be.
type inflight struct {
	index   int
	replies int
	want    string
}

func (w *writer) run(stop <-chan struct{}, wg *sync.WaitGroup) {
	tokens := make(chan struct{}, w.depth)
	for i := 0; i < w.depth; i++ {
		tokens <- struct{}{}
	}
	queue := make(chan inflight, w.depth)
	wg.Add(2)
	go func() { // sender
		defer wg.Done()
		defer close(queue)
		var buf []byte
		for {
			select {
			case <-stop:
				return
			case <-tokens:
			}
			n := 1
		more:
			for n < w.depth {
				select {
				case <-tokens:
					n++
				default:
					break more
				}
			}
			buf = buf[:0]
			for i := 0; i < n; i++ {
				op := w.model.Next()
				for _, c := range op.Cmds {
					buf = AppendCommand(buf, c...)
				}
				queue <- inflight{len(w.model.Ops) - 1, len(op.Cmds), op.Want}
			}
			// Counted before the write: an op partly written may still
			// have reached the server whole.
			w.sent += n
			if err := w.conn.Send(buf); err != nil {
				return
			}
		}
	}()
	go func() { // receiver
		defer wg.Done()
		for f := range queue {
			var last Reply
			for r := 0; r < f.replies; r++ {
				var err error
				if last, err = w.conn.Recv(); err != nil {
					w.err = err
					w.conn.Close() // unblocks a sender stuck in write
					for range queue {
					}
					return
				}
			}
			if got := last.Text(); got != f.want && w.wrong == "" {
				w.wrong = fmt.Sprintf("op %d answered %.80s, expected %s", f.index, got, f.want)
			}
			w.ackAt = append(w.ackAt, time.Now())
			tokens <- struct{}{}
		}
	}()
}

// reader reads random keys of random clients, one at a time, and records
// every present value it was shown.
type reader struct {
	conn   *Conn
	models []*Model // key names and kinds only: fixed at creation
	rng    *rand.Rand
	seen   []Seen
}

func (r *reader) run(stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		var buf []byte
		for {
			select {
			case <-stop:
				return
			default:
			}
			m := r.models[r.rng.Intn(len(r.models))]
			k := r.rng.Intn(len(m.Keys))
			buf = AppendCommand(buf[:0], readCmd(m.Kind[k], m.Keys[k])...)
			if err := r.conn.Send(buf); err != nil {
				return
			}
			rep, err := r.conn.Recv()
			if err != nil {
				return
			}
			st, err := stateOf(m.Kind[k], rep)
			if err != nil || !st.Present {
				continue
			}
			r.seen = append(r.seen, Seen{Client: m.ID, Key: k, Sum: st.Sum, Show: st.Show, At: time.Now()})
		}
	}()
}

// readBack reads every key of a model, with its TTL, in one pipeline.
func readBack(addr string, m *Model) ([]State, error) {
	c, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	var buf []byte
	for i, k := range m.Keys {
		buf = AppendCommand(buf, readCmd(m.Kind[i], k)...)
		buf = AppendCommand(buf, "PTTL", k)
	}
	if err := c.Send(buf); err != nil {
		return nil, err
	}
	out := make([]State, len(m.Keys))
	for i, k := range m.Keys {
		val, err := c.Recv()
		if err != nil {
			return nil, err
		}
		ttl, err := c.Recv()
		if err != nil {
			return nil, err
		}
		st, err := stateOf(m.Kind[i], val)
		if err != nil {
			return nil, fmt.Errorf("read %s: %v", k, err)
		}
		if ttl.Kind != ':' {
			return nil, fmt.Errorf("PTTL %s replied %s", k, ttl.Text())
		}
		switch {
		case st.Present && ttl.Int == -2, !st.Present && ttl.Int != -2:
			// The value and PTTL disagree: matches no model state.
			st = State{Present: true, Sum: ^st.Sum, Show: fmt.Sprintf("%s but PTTL %d", st, ttl.Int)}
		case st.Present:
			st.TTL = ttl.Int >= 0
		}
		out[i] = st
	}
	return out, nil
}
