// Command curupira-github-issues is a Curupira trigger extension: it turns new GitHub
// issues and pull requests into Curupira tasks. It speaks protocol version 2 (JSON-RPC 2.0
// in length-prefixed frames) on stdin and stdout and logs to stderr. It uses only the
// standard library, so it builds with nothing but a Go toolchain.
//
// It is also the registry's reference extension: `registry conformance` passes on it.
package main

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"
)

// manifest is printed on --curupira-print-manifest, so the package and the binary always agree.
//
//go:embed curupira-extension.toml
var manifest []byte

// The identity initialize reports; the conformance tests check it against the manifest.
const (
	extName    = "curupira-github-issues"
	extVersion = "1.0.0"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	for _, a := range args {
		if a == "--curupira-print-manifest" {
			if _, err := stdout.Write(manifest); err != nil {
				return 1
			}
			return 0
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "usage: %s [--curupira-print-manifest]\n", extName)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s := &server{
		log:      log,
		out:      stdout,
		triggers: newGitHub(&http.Client{Timeout: 20 * time.Second}, getenv, log),
	}
	if err := s.serve(bufio.NewReader(stdin)); err != nil {
		log.Error("stopped", "err", err)
		return 1
	}
	return 0
}
