package translog

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is a signed statement of the log's size and root hash. Its body is the
// transparency-dev checkpoint format (origin line, decimal tree size, base64 root hash, each
// ending in a newline), so existing witnesses can cosign it; Note is the whole signed note.
type Checkpoint struct {
	Origin string
	Size   int64
	Hash   tlog.Hash
	Note   []byte // the signed note text, as served at /log/checkpoint
}

// ErrCheckpoint is returned for a checkpoint that does not parse or does not verify.
var ErrCheckpoint = errors.New("translog: bad checkpoint")

// FormatCheckpoint is the checkpoint body for a tree.
func FormatCheckpoint(origin string, size int64, hash tlog.Hash) []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(hash[:]))
}

// ParseCheckpoint reads a checkpoint body: its first three lines; lines after them are
// extensions (transparency-dev allows them) and are ignored.
func ParseCheckpoint(body []byte) (origin string, size int64, hash tlog.Hash, err error) {
	lines := strings.SplitAfterN(string(body), "\n", 4)
	if len(lines) < 3 || !strings.HasSuffix(lines[2], "\n") {
		return "", 0, hash, fmt.Errorf("%w: want an origin, a size and a root hash on three lines", ErrCheckpoint)
	}
	// base64 decoding skips '\r' and '\n', so a "\r\n" ending would give one checkpoint two
	// spellings; the three lines end in "\n" and hold no '\r'.
	if strings.ContainsRune(lines[0]+lines[1]+lines[2], '\r') {
		return "", 0, hash, fmt.Errorf("%w: a carriage return in the checkpoint; its lines end in \"\\n\" only", ErrCheckpoint)
	}
	origin = strings.TrimSuffix(lines[0], "\n")
	if origin == "" {
		return "", 0, hash, fmt.Errorf("%w: empty origin line", ErrCheckpoint)
	}
	sizeText := strings.TrimSuffix(lines[1], "\n")
	size, err = strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != sizeText {
		return "", 0, hash, fmt.Errorf("%w: tree size %q is not a decimal number", ErrCheckpoint, sizeText)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSuffix(lines[2], "\n"))
	if err != nil || len(raw) != tlog.HashSize {
		return "", 0, hash, fmt.Errorf("%w: root hash is not %d bytes of base64", ErrCheckpoint, tlog.HashSize)
	}
	copy(hash[:], raw)
	return origin, size, hash, nil
}

// SignCheckpoint signs the checkpoint of a tree; the origin is the signer's key name.
func SignCheckpoint(s note.Signer, size int64, hash tlog.Hash) (Checkpoint, error) {
	body := FormatCheckpoint(s.Name(), size, hash)
	msg, err := note.Sign(&note.Note{Text: string(body)}, s)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("translog: sign checkpoint: %w", err)
	}
	return Checkpoint{Origin: s.Name(), Size: size, Hash: hash, Note: msg}, nil
}

// OpenCheckpoint verifies a signed checkpoint against the registry's verifier key and
// parses it. The origin must be the key's name: a note signed by this key for another log
// is not this log's checkpoint.
func OpenCheckpoint(msg []byte, v note.Verifier) (Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: signature: %w", ErrCheckpoint, err)
	}
	origin, size, hash, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return Checkpoint{}, err
	}
	if origin != v.Name() {
		return Checkpoint{}, fmt.Errorf("%w: origin %q is not the key's name %q", ErrCheckpoint, origin, v.Name())
	}
	return Checkpoint{Origin: origin, Size: size, Hash: hash, Note: bytes.Clone(msg)}, nil
}
