package stats

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPct(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		lat  []time.Duration
		p    float64
		want time.Duration
	}{
		{"none", nil, 0.99, 0},
		{"one", []time.Duration{3 * ms}, 0.5, 3 * ms},
		{"median of unsorted", []time.Duration{5 * ms, 1 * ms, 3 * ms}, 0.5, 3 * ms},
		{"p99 is the largest of ten", []time.Duration{9, 1, 2, 3, 4, 5, 6, 7, 8, 10}, 0.99, 10},
		{"p100 stays in range", []time.Duration{1, 2}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Stats{Lat: tt.lat}
			if got := s.Pct(tt.p); got != tt.want {
				t.Errorf("Pct(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestAddMergeRate(t *testing.T) {
	a, b := &Stats{}, &Stats{}
	a.Add(time.Millisecond, 10, nil)
	b.Add(2*time.Millisecond, 20, errors.New("first"))
	b.Add(3*time.Millisecond, 30, errors.New("second"))
	a.Merge(b)
	a.Elapsed = time.Second
	want := &Stats{N: 3, Errs: 2, Bytes: 60, Lat: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond},
		Elapsed: time.Second, FirstErr: "first"}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	if got := a.Rate(); got != 1 {
		t.Errorf("Rate() = %v, want 1 (one success in one second)", got)
	}
	if got := (&Stats{N: 5}).Rate(); got != 0 {
		t.Errorf("Rate() with no Elapsed = %v, want 0", got)
	}
}
