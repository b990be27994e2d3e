package shard

import (
	"strconv"
	"testing"
	"time"
)

// ksVolatile fills databases 0 and 3 of a shard with n keys each that
// expire at ksNow+10 and m keys each that do not expire soon.
func ksVolatile(s *Shard, n, m int) {
	for _, id := range []int{0, 3} {
		db := s.DBs[id]
		for i := 0; i < n; i++ {
			slot := db.SetStr([]byte("v"+strconv.Itoa(i)), []byte("x"), false)
			db.SetExpiry(slot, ksNow+10)
		}
		for i := 0; i < m; i++ {
			slot := db.SetStr([]byte("p"+strconv.Itoa(i)), []byte("x"), false)
			db.SetExpiry(slot, ksNow+1_000_000)
		}
	}
}

func TestActiveExpireCycleReclaimsAllExpiredKeys(t *testing.T) {
	s := New(0, 16)
	s.SetNow(ksNow)
	ksVolatile(s, 5000, 0)
	s.DBs[5].SetStr([]byte("persistent"), []byte("x"), false)
	var notified int
	s.OnExpired = func(db *DB, key []byte) { notified++ }

	s.ActiveExpireCycle(time.Second, 1)
	if keys, _ := s.Keys(); keys != 10001 {
		t.Fatalf("before the keys expire the cycle removed %d keys", 10001-keys)
	}
	s.SetNow(ksNow + 10)
	// Every sample is all expired, so each database is sampled until empty.
	s.ActiveExpireCycle(time.Minute, 1)
	keys, expires := s.Keys()
	if keys != 1 || expires != 0 {
		t.Fatalf("after the cycle: %d keys, %d with expiry; want 1 and 0", keys, expires)
	}
	if notified != 10000 || s.Stats.ExpiredKeys != 10000 {
		t.Fatalf("OnExpired called %d times, ExpiredKeys %d; want 10000", notified, s.Stats.ExpiredKeys)
	}
	if s.Stats.ExpireCycles != 2 {
		t.Fatalf("ExpireCycles %d, want 2", s.Stats.ExpireCycles)
	}
}

func TestActiveExpireCycleStopsWhenFewSamplesExpire(t *testing.T) {
	s := New(0, 16)
	s.SetNow(ksNow)
	// 1 stale key in 1000: the first sample is (nearly always) clean, so
	// the cycle leaves each database after one loop of 20 samples.
	ksVolatile(s, 1, 999)
	s.SetNow(ksNow + 10)
	s.ActiveExpireCycle(time.Minute, 1)
	if _, expires := s.Keys(); expires < 1998 {
		t.Fatalf("%d volatile keys left, the cycle kept sampling a clean keyspace", expires)
	}
	// Never a key that has time left.
	for _, id := range []int{0, 3} {
		for i := 0; i < 999; i++ {
			if s.DBs[id].Peek([]byte("p"+strconv.Itoa(i))) < 0 {
				t.Fatalf("db %d: live key p%d reclaimed", id, i)
			}
		}
	}
}

func TestActiveExpireCycleRespectsItsBudget(t *testing.T) {
	for _, tc := range []struct {
		effort, perLoop int
	}{
		{1, 20},
		{0, 20}, // below the range: effort 1
		{10, 65},
		{99, 65}, // above: effort 10
	} {
		s := New(0, 1)
		s.SetNow(ksNow)
		db := s.DBs[0]
		for i := 0; i < 1000; i++ {
			db.SetExpiry(db.SetStr([]byte("k"+strconv.Itoa(i)), nil, false), ksNow+1)
		}
		s.SetNow(ksNow + 1)
		// With no budget the cycle stops after its first loop.
		s.ActiveExpireCycle(0, tc.effort)
		if got := 1000 - db.Len(); got != tc.perLoop {
			t.Errorf("effort %d: %d keys reclaimed in one loop, want %d", tc.effort, got, tc.perLoop)
		}
	}
}

func TestActiveExpireCycleIdlesWhileLoading(t *testing.T) {
	s := New(0, 16)
	s.SetNow(ksNow)
	ksVolatile(s, 100, 0)
	s.SetNow(ksNow + 10)
	s.Loading = true
	s.ActiveExpireCycle(time.Second, 1)
	if keys, _ := s.Keys(); keys != 200 {
		t.Fatalf("%d keys left while loading, want 200", keys)
	}
	s.Loading = false
	s.ActiveExpireCycle(time.Second, 1)
	if keys, _ := s.Keys(); keys != 0 {
		t.Fatalf("%d keys left after loading, want 0", keys)
	}
}
