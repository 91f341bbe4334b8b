package main

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args     []string
		wantPos  []string
		wantJSON bool
	}{
		{[]string{"a.tar.gz", "--json"}, []string{"a.tar.gz"}, true},
		{[]string{"--json", "a.tar.gz"}, []string{"a.tar.gz"}, true},
		{[]string{"a", "b"}, []string{"a", "b"}, false},
		{[]string{"--", "cmd", "--json"}, []string{"cmd", "--json"}, false},
		{[]string{"x", "--", "cmd", "--json"}, []string{"x", "cmd", "--json"}, false},
	}
	for _, tt := range tests {
		c := &cli{stderr: io.Discard}
		fs := c.flags("t")
		j := fs.Bool("json", false, "")
		pos, err := parse(fs, tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if diff := cmp.Diff(tt.wantPos, pos); diff != "" || *j != tt.wantJSON {
			t.Errorf("%v: pos (-want +got) %s json=%v", tt.args, diff, *j)
		}
	}
}
