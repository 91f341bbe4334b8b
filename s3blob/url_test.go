package s3blob_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/s3blob"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		raw  string
		want s3blob.Config
	}{
		{"s3://blobs", s3blob.Config{Bucket: "blobs", Endpoint: s3blob.DefaultEndpoint, Secure: true}},
		{"s3://blobs/", s3blob.Config{Bucket: "blobs", Endpoint: s3blob.DefaultEndpoint, Secure: true}},
		{"s3://my.blobs?endpoint=127.0.0.1:7070&region=eu-west-1&insecure=1&prefix=/registry/prod/",
			s3blob.Config{Bucket: "my.blobs", Endpoint: "127.0.0.1:7070", Region: "eu-west-1", Prefix: "registry/prod"}},
		{"s3://blobs?insecure=false&endpoint=s3.example.com", s3blob.Config{Bucket: "blobs", Endpoint: "s3.example.com", Secure: true}},
		{"s3://blobs?insecure=true", s3blob.Config{Bucket: "blobs", Endpoint: s3blob.DefaultEndpoint}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := s3blob.ParseURL(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseURL (-want +got):\n%s", diff)
			}
			again, err := s3blob.ParseURL(got.String())
			if err != nil || again != got {
				t.Errorf("ParseURL(%q) = %+v, %v; want the same config back", got.String(), again, err)
			}
		})
	}
}

// Every refusal names the part at fault and says what to write instead.
func TestParseURLRefuses(t *testing.T) {
	tests := []struct {
		raw  string
		want []string // all in the error
	}{
		{"file:./data/blobs", []string{`scheme "file"`, "s3://BUCKET"}},
		{"http://blobs", []string{`scheme "http"`}},
		{"s3://", []string{`bucket ""`, "3 to 63"}},
		{"s3://Blobs", []string{`bucket "Blobs"`, "lowercase"}},
		{"s3://key:secret@blobs", []string{"credentials in the URL", "AWS_ACCESS_KEY_ID"}},
		{"s3://blobs/registry", []string{`path "/registry"`, "prefix=registry"}},
		{"s3://blobs?endpoint=http://127.0.0.1:7070", []string{"endpoint=http://127.0.0.1:7070", "without a scheme", "insecure=1"}},
		{"s3://blobs?endpoint=", []string{"endpoint", "HOST[:PORT]"}},
		{"s3://blobs?insecure=yes", []string{`insecure="yes"`, "want 1 or true"}},
		{"s3://blobs?prefix=a/../b", []string{`prefix="a/../b"`, `segment ".."`}},
		{"s3://blobs?prefix=a//b", []string{`prefix="a//b"`, `segment ""`}},
		{"s3://blobs?bucket=x", []string{`unknown parameter "bucket"`, "endpoint (", "insecure (", "prefix (", "region ("}},
		{"s3://blobs?region=a&region=b", []string{"region given 2 times", "once"}},
		{"s3://blobs#frag", []string{"fragment #frag"}},
		{"s3://blobs?endpoint=%zz", []string{"query"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := s3blob.ParseURL(tt.raw)
			if err == nil {
				t.Fatalf("ParseURL(%q) = nil error", tt.raw)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q repeats the URL's secret", err)
			}
		})
	}
}

// FuzzParseURL: no input panics, and every URL accepted parses back from its String to the
// same config.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://blobs", "s3://b.c?endpoint=127.0.0.1:7070&insecure=1&prefix=a/b&region=r", "s3://x?prefix=..", "s3://a:b@c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, err := s3blob.ParseURL(raw)
		if err != nil {
			return
		}
		again, err := s3blob.ParseURL(cfg.String())
		if err != nil || again != cfg {
			t.Fatalf("ParseURL(%q) = %+v; its String %q parses to %+v, %v", raw, cfg, cfg.String(), again, err)
		}
	})
}
