package main

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsCheck(t *testing.T) {
	good := options{duration: time.Second, readers: 4, publishers: 4, maxPublish: 1500, payload: 16 << 10, seed: 50, rounds: 2}
	tests := []struct {
		name    string
		change  func(*options)
		wantErr string // "" when the options are accepted
	}{
		{"defaults", func(*options) {}, ""},
		{"no seed, empty payload", func(o *options) { o.seed, o.payload = 0, 0 }, ""},
		{"no publishers", func(o *options) { o.publishers = 0 }, "-publishers 0"},
		{"no readers", func(o *options) { o.readers = 0 }, "-readers 0"},
		{"no duration", func(o *options) { o.duration = 0 }, "-duration"},
		{"nothing to publish", func(o *options) { o.maxPublish = 0 }, "-max-publishes 0"},
		{"negative payload", func(o *options) { o.payload = -1 }, "-payload -1"},
		{"too much in memory", func(o *options) { o.maxPublish, o.payload = 1<<20, 1<<20 }, "over 4294967296"},
		{"at the memory bound", func(o *options) { o.maxPublish, o.payload = 4096, 1<<20 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.change(&o)
			err := o.check()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("check() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("check() = %v, want an error naming %q", err, tt.wantErr)
			}
		})
	}
}
