package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/pluginyard/registry/ingest"
)

// cmdExport is `registry export --out DIR [--public-url URL] [--data DIR] [--plugins FILE]`:
// a static mirror (index.json, packages, icons) for any static host or CDN. DIR holds exactly
// the new snapshot afterwards: nothing of an earlier export stays.
func cmdExport(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("export")
	out := fs.String("out", "", "folder of the mirror: replaced as a whole by the new, checked snapshot (a failed export leaves it as it was)")
	publicURL := fs.String("public-url", envDefault(c, "REGISTRY_PUBLIC_URL", ""), "URL the mirror will be served at (REGISTRY_PUBLIC_URL)")
	plugins := fs.String("plugins", envDefault(c, "REGISTRY_PLUGINS", "./plugins.yaml"), "curated list (REGISTRY_PLUGINS)")
	st, _, code := openStore(ctx, c, fs, args)
	if code != exitOK {
		return code
	}
	defer st.Close()
	if *out == "" || *publicURL == "" {
		fmt.Fprintln(c.stderr, "export: --out DIR and --public-url URL are required (every URL in the mirror's index starts with the public URL)")
		return exitUsage
	}
	list, err := loadList(*plugins)
	if err != nil {
		fmt.Fprintf(c.stderr, "export: %v\n", err)
		return exitUsage
	}
	cfg := Config{PublicURL: *publicURL, SiteName: envDefault(c, "REGISTRY_SITE_NAME", "Plugin Registry")}
	icfg, err := ingestConfig(cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "export: %v\n", err)
		return exitUsage
	}
	icfg.PublicURL = trimSlash(*publicURL)
	svc := ingest.New(st, list, icfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var files, total int64
	err = svc.Export(ctx, *out, func(path string, n int64) {
		files++
		total += n
		fmt.Fprintf(c.stderr, "  %s (%d bytes)\n", path, n)
	})
	if err != nil {
		fmt.Fprintf(c.stderr, "export: %v\n", err)
		return exitInvalid
	}
	fmt.Fprintf(c.stdout, "exported %d files (%d bytes) to %s; serve it at %s\n", files, total, *out, *publicURL)
	return exitOK
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
