package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

const logVerifyUsage = "registry log verify --registry URL --key VERIFIERKEY [--state FILE] [--packages]"

// logVerifyAbout is the help text of `registry log verify`, shown under `registry log -h`.
const logVerifyAbout = `Audits a registry, or a static mirror of one (registry export): checks the log checkpoint
against the pinned key, proves it extends the checkpoint kept in --state (no fork, no
rewritten history), checks every record the log added since against its tiles, checks that
every entry of index.json and curupira/index.json is a release the log recorded with the same
sha256, and checks each document's signature (its sha256, a serial no older than seen, not
expired, naming a checkpoint of this log). --packages also downloads and hashes every listed
package. Uses only /log/checkpoint and /log/tile/…, so a mirror served as static files works.
--state is written only when everything checked out. Progress goes to stderr.
Exit status: 0 when everything checked out, 1 when something did not (each problem named on
stderr), 2 on usage errors.`

// cmdLogVerify is `registry log verify`: the audit a host, mirror or auditor runs on a
// schedule.
func cmdLogVerify(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("log verify")
	base := fs.String("registry", envDefault(c, "REGISTRY_URL", ""), "base `URL` of the registry or mirror (REGISTRY_URL); required")
	key := fs.String("key", envDefault(c, "REGISTRY_LOG_KEY_PUBLIC", ""), "the registry's log verifier `KEY` (as `registry log key` prints it), or a file holding it; required")
	statePath := fs.String("state", "", "`FILE` keeping the last verified checkpoint and serials; read, and written when everything checks out")
	packages := fs.Bool("packages", false, "also download every listed package and check its sha256")
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	switch {
	case *base == "" || *key == "":
		return c.usageError("log verify", "--registry URL and --key VERIFIERKEY are required (pin the key `registry log key` prints on the registry)")
	case len(pos) > 0:
		return c.usageError("log verify", "expected no argument, found %q", strings.Join(pos, " "))
	}
	if err := checkHTTPURL(*base); err != nil {
		return c.usageError("log verify", "--registry %q: %v: give the base URL of the registry or mirror, such as https://plugins.example.com", *base, err)
	}
	v, err := loadVerifierKey(*key)
	if err != nil {
		return c.usageError("log verify", "%v", err)
	}
	a := &auditor{base: strings.TrimRight(*base, "/"), verifier: v, client: &http.Client{Timeout: 2 * time.Minute},
		progress: c.stderr, now: time.Now, packages: *packages}
	if err := a.loadState(*statePath); err != nil {
		fmt.Fprintf(c.stderr, "registry log verify: %v\n", err)
		return exitInvalid
	}
	sum, probs := a.run(ctx)
	if len(probs) > 0 {
		for _, p := range probs {
			fmt.Fprintf(c.stderr, "registry log verify: %s\n", p)
		}
		fmt.Fprintf(c.stderr, "registry log verify: %d problem(s); --state was not updated\n", len(probs))
		return exitInvalid
	}
	if *statePath != "" {
		if err := a.saveState(*statePath); err != nil {
			fmt.Fprintf(c.stderr, "registry log verify: %v\n", err)
			return exitUsage
		}
	}
	fmt.Fprintln(c.stdout, sum)
	return exitOK
}

// loadVerifierKey parses a note verifier key, given itself or as the path of a file.
func loadVerifierKey(key string) (note.Verifier, error) {
	v, err := note.NewVerifier(strings.TrimSpace(key))
	if err == nil {
		return v, nil
	}
	b, ferr := os.ReadFile(key)
	if ferr != nil {
		return nil, fmt.Errorf("--key %.80q is neither a verifier key (NAME+HASH+BASE64, as `registry log key` prints) nor a readable file: %v", key, err)
	}
	if v, err = note.NewVerifier(strings.TrimSpace(string(b))); err != nil {
		return nil, fmt.Errorf("--key file %s: not a verifier key (NAME+HASH+BASE64): %v", key, err)
	}
	return v, nil
}
