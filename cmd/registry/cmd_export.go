package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/translog"
)

var exportHelp = help{
	Summary: "write a static mirror (index.json, packages, icons) for a CDN",
	Usage:   "registry export --out DIR --public-url URL [--data DIR] [--plugins FILE]",
	About: `Writes a static mirror of the registry in the data directory: index.json, every listed
package and icon, at the paths the registry serves them, with every URL starting with
--public-url. DIR holds exactly the new snapshot afterwards; a failed export leaves it as it
was. Prints each file on stderr and a total on stdout.
The data directory must hold its log key (log.key there, or REGISTRY_LOG_KEY): an export
never creates one.
Exit status: 0 when written, 1 when the export failed or the log key is missing, 2 on usage
or I/O errors.`,
	Example: "registry export --data /var/lib/registry --out ./mirror --public-url https://plugins.example.com",
}

// cmdExport is `registry export --out DIR [--public-url URL] [--data DIR] [--plugins FILE]`:
// a static mirror (index.json, packages, icons) for any static host or CDN. DIR holds exactly
// the new snapshot afterwards: nothing of an earlier export stays.
func cmdExport(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("export")
	out := fs.String("out", "", "`DIR` of the mirror: replaced as a whole by the new, checked snapshot (a failed export leaves it as it was; a symlink stays, the folder it names is replaced); required")
	publicURL := fs.String("public-url", envDefault(c, "REGISTRY_PUBLIC_URL", ""), "`URL` the mirror will be served at (REGISTRY_PUBLIC_URL); required")
	plugins := fs.String("plugins", envDefault(c, "REGISTRY_PLUGINS", "./plugins.yaml"), "curated list `FILE` (REGISTRY_PLUGINS)")
	st, blobs, pos, code := openBackends(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	switch {
	case *out == "" || *publicURL == "":
		return c.usageError("export", "--out DIR and --public-url URL are required (every URL in the mirror's index starts with the public URL)")
	case len(pos) > 0:
		return c.usageError("export", "expected no argument, found %q", strings.Join(pos, " "))
	}
	if err := checkHTTPURL(*publicURL); err != nil { // as serve checks its own
		return c.usageError("export", "--public-url %q (REGISTRY_PUBLIC_URL): %s", *publicURL,
			expected("an absolute http(s) URL such as https://plugins.example.com", err))
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
	icfg.PublicURL, icfg.Blobs = trimSlash(*publicURL), blobs
	icfg.NoLastGood = true // documents at the mirror's URL must never be what serve falls back to
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.DataDir, cfg.LogKey = st.Dir(), envDefault(c, "REGISTRY_LOG_KEY", "")
	// The key names the transparency log after the public URL of the registry that made
	// it: an export, at a mirror's URL, only ever loads one.
	keyFile := filepath.Join(cfg.DataDir, translog.KeyFile)
	if _, err := os.Stat(keyFile); cfg.LogKey == "" && errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(c.stderr, "export: the log key is missing from %s, and an export never creates one (it would name the log after the mirror): "+
			"restore %s from the backup of this data directory, or run `registry serve --data %s` once to create it\n", keyFile, translog.KeyFile, cfg.DataDir)
		return exitInvalid
	}
	tl, err := openTransparencyLog(ctx, cfg, st, quiet) // the mirror carries the log and signed documents
	if err != nil {
		fmt.Fprintf(c.stderr, "export: %v\n", err)
		return exitUsage
	}
	icfg.LogCheckpoint, icfg.IndexSigner, icfg.LogTile = tl.Checkpoint, tl.Key().Signer, tl.Tile
	svc := ingest.New(st, list, icfg, quiet)
	defer svc.Close() // before the store closes: background writes end first
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
