package ingest

import (
	"io"
	"log/slog"
	"testing"
)

// A scoped extension name must give a URL the /packages/{id}/{file} route can answer.
func TestPackageURLUsesTheFileID(t *testing.T) {
	s := &Service{cfg: Config{PublicURL: "https://r.example"}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tests := map[string]string{
		"acme-hello":        "https://r.example/packages/acme-hello/acme-hello-1.0.0.tar.gz",
		"@acme/curupira-gh": "https://r.example/packages/acme-curupira-gh/acme-curupira-gh-1.0.0.tar.gz",
	}
	for id, want := range tests {
		if got := s.PackageURL(id, "1.0.0"); got != want {
			t.Errorf("PackageURL(%q) = %q, want %q", id, got, want)
		}
	}
}
