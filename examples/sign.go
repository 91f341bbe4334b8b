package examples

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"io"

	"github.com/pluginyard/registry/pack"
)

// Ed25519Example is the example the demo signs with its own ed25519 key (generated at the
// first start, kept in the data directory), to show a key-signed release.
const Ed25519Example = "hello-managed"

// PackSigned writes the package of the example name as Pack does, with checksums.txt.sig
// added right after checksums.txt: the base64 ed25519 signature by key of the exact
// checksums.txt bytes, which is what a publisher's signing step adds after `registry pack`.
// ed25519 signatures are deterministic, so one key always gives the same bytes.
func PackSigned(name string, key ed25519.PrivateKey, w io.Writer) error {
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("examples: sign %s: the ed25519 private key is %d bytes, want %d", name, len(key), ed25519.PrivateKeySize)
	}
	var plain bytes.Buffer
	if err := Pack(name, &plain); err != nil {
		return err
	}
	if err := pack.Sign(plain.Bytes(), key, w); err != nil {
		return fmt.Errorf("examples: sign %s: %w", name, err)
	}
	return nil
}
