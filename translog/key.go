package translog

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// KeyFile is the name of the log's private key inside the data directory.
const KeyFile = "log.key"

// Key is the registry's checkpoint signing key.
type Key struct {
	Signer   note.Signer
	Verifier note.Verifier
	// VerifierKey is the public key in note format (name+hash+base64), what operators pin
	// and `registry log key` prints.
	VerifierKey string
}

// ParseKey reads a note signer key (PRIVATE+KEY+name+hash+base64, as note.GenerateKey makes
// it) and derives its verifier key.
func ParseKey(skey string) (*Key, error) {
	skey = strings.TrimSpace(skey)
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("translog: log key: %w (want PRIVATE+KEY+NAME+HASH+BASE64, as `registry log key` generates)", err)
	}
	// PRIVATE+KEY+NAME+HASH+BASE64: a name has no '+', but base64 may.
	parts := strings.SplitN(skey, "+", 5)
	raw, err := base64.StdEncoding.DecodeString(parts[len(parts)-1])
	if err != nil || len(raw) != 1+ed25519.SeedSize {
		return nil, fmt.Errorf("translog: log key: not an ed25519 key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return nil, fmt.Errorf("translog: log key: %w", err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("translog: log key: %w", err)
	}
	return &Key{Signer: s, Verifier: v, VerifierKey: vkey}, nil
}

// LoadKey returns the log key: given, when not empty, is the key itself (PRIVATE+KEY+…) or
// the path of a file holding it; otherwise the key is dir/KeyFile, generated there (mode
// 0600) with the given name on first use. The name becomes the checkpoint origin; it must
// be a note key name (no spaces or '+').
func LoadKey(dir, given, name string) (*Key, error) {
	if given != "" {
		if strings.HasPrefix(strings.TrimSpace(given), "PRIVATE+KEY+") {
			return ParseKey(given)
		}
		b, err := os.ReadFile(given)
		if err != nil {
			return nil, keyFileError(given, err)
		}
		return ParseKey(string(b))
	}
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		return ParseKey(string(b))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("translog: log key: %w", err)
	}
	return createKey(path, name)
}

// createKey writes a new key to a temporary file, syncs it, and links it into place: a
// crash leaves either no key or a whole one, and of two processes starting on one data
// directory the second to link reads the first one's key instead of signing with its own.
func createKey(path, name string) (*Key, error) {
	skey, _, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return nil, fmt.Errorf("translog: generate log key named %q: %w (a key name has no spaces or '+')", name, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), KeyFile+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("translog: create log key: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(skey + "\n")
	if err := errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("translog: write log key %s: %w", path, err)
	}
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("translog: install log key %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("translog: log key: %w", err)
	}
	return ParseKey(string(b))
}

// KeyName is the key name (and so the checkpoint origin) a registry at publicURL generates
// its key with: the URL's host and path, then "/log", as in "plugins.example.com/log". A
// note key name may hold neither spaces nor '+'; anything else falls back to
// "registry/log".
func KeyName(publicURL string) string {
	rest := publicURL
	if _, after, ok := strings.Cut(publicURL, "://"); ok {
		rest = after
	}
	rest = strings.TrimRight(rest, "/")
	if rest == "" || strings.ContainsAny(rest, " +\t\n") {
		return "registry/log"
	}
	return rest + "/log"
}

// keyFileError words a --log-key that is neither a key nor a readable file; a value with a
// '+' is most likely a mistyped key, which must not reach a log.
func keyFileError(given string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	shown := strconv.Quote(given)
	if strings.Contains(given, "+") {
		shown = fmt.Sprintf("(a %d-character value, not shown)", len(given))
	}
	return fmt.Errorf("translog: log key %s is neither a key (PRIVATE+KEY+NAME+HASH+BASE64) nor a readable file: %w", shown, err)
}
