package server

import (
	"testing"
	"time"
)

// TestRewriteLimiterBacksOffAsRedis follows Redis's aofRewriteLimited:
// nothing below three consecutive failures, then waits of 1, 2, 4, ...
// minutes up to an hour, each logged once, and a success resets it.
func TestRewriteLimiterBacksOffAsRedis(t *testing.T) {
	var rl rewriteLimiter
	t0 := time.Unix(1_700_000_000, 0)
	if lim, _ := rl.limited(2, t0); lim {
		t.Fatal("limited after 2 failures")
	}
	now := t0
	for _, want := range []int{1, 2, 4, 8, 16, 32, 60, 60} {
		lim, m := rl.limited(3, now)
		if !lim || m != want {
			t.Fatalf("at %v: limited=%v minutes=%d, want a new wait of %d minutes", now.Sub(t0), lim, m, want)
		}
		// Within the wait: limited, nothing new to log.
		if lim, m := rl.limited(3, now.Add(time.Duration(want)*time.Minute-time.Second)); !lim || m != 0 {
			t.Fatalf("within a %d-minute wait: limited=%v minutes=%d", want, lim, m)
		}
		// At its end one attempt may run.
		now = now.Add(time.Duration(want) * time.Minute)
		if lim, _ := rl.limited(3, now); lim {
			t.Fatalf("the attempt after a %d-minute wait is refused", want)
		}
	}
	if lim, _ := rl.limited(0, now); lim {
		t.Fatal("limited after a success")
	}
	if lim, m := rl.limited(3, now); !lim || m != 1 {
		t.Fatalf("after a reset the first wait is %d minutes (limited=%v), want 1", m, lim)
	}
}
