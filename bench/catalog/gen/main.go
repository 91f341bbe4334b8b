// Command gen writes a generated catalogue (bench/catalog) to a directory and, optionally,
// seeds it into a registry:
//
//	go run ./bench/catalog/gen -n 10000 -out /tmp/cat                  # packages + plugins.yaml
//	go run ./bench/catalog/gen -n 10000 -out /tmp/cat -signed          # ed25519-signed, required by plugins.yaml
//	go run ./bench/catalog/gen -n 1000 -out /tmp/cat -http http://127.0.0.1:8080   # POST each (REGISTRY_ADMIN_TOKEN)
//	go run ./bench/catalog/gen -n 50000 -out /tmp/cat -data /tmp/data  # fast: straight into a stopped registry's data dir
//
// -n is at most 100000; -http must be a loopback URL. It prints the files and bytes written
// and the seeding time per 1,000 packages.
package main

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pluginyard/registry/bench/catalog"
)

func main() {
	n := flag.Int("n", 1000, "plugins (at most 100000)")
	out := flag.String("out", "", "directory to write plugins.yaml and packages/ into (required)")
	signed := flag.Bool("signed", false, "sign every package with the fixed bench key; plugins.yaml requires it")
	httpURL := flag.String("http", "", "seed over POST /api/v1/packages of this loopback registry with $REGISTRY_ADMIN_TOKEN")
	clients := flag.Int("clients", 4, "concurrent HTTP clients for -http")
	data := flag.String("data", "", "seed straight into this data directory (no registry may be serving it)")
	flag.Parse()
	if err := run(*n, *out, *signed, *httpURL, *clients, *data); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(n int, out string, signed bool, httpURL string, clients int, data string) error {
	if out == "" {
		return fmt.Errorf("-out is required: the directory for plugins.yaml and packages/")
	}
	var key ed25519.PrivateKey
	if signed {
		key = catalog.TestKey()
	}
	t0 := time.Now()
	rep, err := catalog.Write(out, catalog.Options{N: n, Key: key})
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d files, %d bytes (%.1f MB) under %s in %.1f s; list %s\n", rep.Files, rep.Bytes, float64(rep.Bytes)/1e6, out, time.Since(t0).Seconds(), rep.ListPath)
	ctx := context.Background()
	every := max(1, min(1000, n/10))
	var marks []catalog.Mark
	switch {
	case httpURL != "":
		token := os.Getenv("REGISTRY_ADMIN_TOKEN")
		if token == "" {
			return fmt.Errorf("-http needs REGISTRY_ADMIN_TOKEN, the registry's admin token")
		}
		marks, err = catalog.SeedHTTP(ctx, httpURL, token, rep, clients, every)
	case data != "":
		marks, err = catalog.SeedStore(ctx, data, rep, every)
	default:
		return nil
	}
	var prev catalog.Mark
	for _, m := range marks {
		fmt.Printf("seeded %d in %.1f s (%.1f s per 1,000 over the last %d)\n", m.Done, m.At.Seconds(),
			(m.At-prev.At).Seconds()/float64(m.Done-prev.Done)*1000, m.Done-prev.Done)
		prev = m
	}
	return err
}
