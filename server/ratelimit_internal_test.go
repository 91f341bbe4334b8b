package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLimiterRefillsAndForgetsIdleClients(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(2, 1000) // 2 a minute: one every 30 s, burst 2
	type step struct {
		at       time.Duration
		key      string
		wantWait time.Duration
	}
	steps := []step{
		{0, "a", 0},
		{0, "a", 0},
		{0, "a", 30 * time.Second},
		{0, "b", 0}, // another client has its own bucket
		{10 * time.Second, "a", 20 * time.Second},
		{30 * time.Second, "a", 0},
		{30 * time.Second, "a", 30 * time.Second},
	}
	var got, want []time.Duration
	for _, s := range steps {
		got = append(got, l.take(t0.Add(s.at), s.key))
		want = append(want, s.wantWait)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if n := l.size(); n != 2 {
		t.Errorf("tracked %d clients, want 2", n)
	}
	l.take(t0.Add(5*time.Minute), "c") // a and b have been idle long enough to be full again
	if n := l.size(); n != 1 {
		t.Errorf("after the idle sweep: tracked %d clients, want 1", n)
	}
}

func TestLimiterMemoryIsBounded(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(60, 100)
	for i := range 10_000 {
		l.take(t0.Add(time.Duration(i)*time.Millisecond), "ip:"+strconv.Itoa(i))
		if n := l.size(); n > 100 {
			t.Fatalf("after %d clients: tracked %d, want at most 100", i+1, n)
		}
	}
}

func TestLimiterAllOrNothing(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(1, 1000)
	if w := l.take(t0, "tok:x"); w != 0 {
		t.Fatalf("first take waits %v", w)
	}
	if w := l.take(t0, "ip:1", "tok:x"); w == 0 {
		t.Fatal("a spent token let a request through")
	}
	if w := l.take(t0, "ip:1"); w != 0 {
		t.Errorf("the refused request spent ip:1's budget (wait %v)", w)
	}
	if w := l.take(t0, "ip:1"); w != time.Minute {
		t.Errorf("ip:1 spent: wait %v, want 1m", w)
	}
}

func TestLimiterRefund(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(2, 1000)
	l.take(t0, "a")
	l.take(t0, "a")
	l.refund(t0, "a")
	if w := l.take(t0, "a"); w != 0 {
		t.Errorf("after a refund: wait %v, want 0", w)
	}
	l.refund(t0.Add(time.Hour), "a")
	l.refund(t0.Add(time.Hour), "a") // a refund never fills past a minute's worth
	for i, want := range []time.Duration{0, 0, 30 * time.Second} {
		if w := l.take(t0.Add(time.Hour), "a"); w != want {
			t.Errorf("take %d after refunds into a full bucket: wait %v, want %v", i, w, want)
		}
	}
}
