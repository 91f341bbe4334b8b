package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/pluginyard/registry/index"
)

// DefaultIndexSignatureTTL is how long an index signature holds when Config sets none: a
// verifier refuses it from then on, so a registry or mirror that stops re-signing (frozen
// on old documents) is noticed within a week.
const DefaultIndexSignatureTTL = 7 * 24 * time.Hour

// ErrIndexUnsigned is returned by IndexSignature when the documents in force carry no
// signature: no key is configured, or a fallback (the last good documents) is served.
var ErrIndexUnsigned = errors.New("ingest: the index documents in force are not signed")

// IndexSignatures are the signatures of one rebuild's documents. They are re-signed, with
// a later expiry, once a seventh of their validity has passed, so a signature served is
// never older than that while the documents themselves stay unchanged.
//
// The documents are hashed and signed on the first request for a signature, not by the
// build: under a stream of publishes most documents are superseded unread, and hashing a
// 5 MiB index.json is about 3 ms of CPU per build.
type IndexSignatures struct {
	signer note.Signer
	ttl    time.Duration
	stmts  []IndexStatement // one per document; SHA256 is set by the first signing, SignedAt and Expires by each
	bodies []index.Body     // the documents' bodies, stmts' order, until hashed
	mu     sync.Mutex       // one signing at a time; guards stmts and bodies
	cur    atomic.Pointer[signedNotes]
}

type signedNotes struct {
	at    time.Time
	notes map[string][]byte // document → signed note
}

// signDocuments signs docs' documents against the log's latest checkpoint. Without a key
// (IndexSigner) nothing is signed; a key without a log is a wiring error.
func (s *Service) signDocuments(ctx context.Context, docs *Documents) error {
	if s.cfg.IndexSigner == nil {
		return nil
	}
	if s.cfg.LogCheckpoint == nil {
		return errors.New("ingest: sign the index: IndexSigner is set but LogCheckpoint is not; an index signature names the log checkpoint it was built from")
	}
	cp, err := s.cfg.LogCheckpoint(ctx)
	if err != nil {
		return fmt.Errorf("ingest: sign the index: %w", err)
	}
	ttl := s.cfg.IndexSignatureTTL
	if ttl <= 0 {
		ttl = DefaultIndexSignatureTTL
	}
	sigs := &IndexSignatures{signer: s.cfg.IndexSigner, ttl: ttl}
	for name, d := range map[string]*Document{KandevDocument: &docs.Kandev, CurupiraDocument: &docs.Curupira} {
		sigs.stmts = append(sigs.stmts, IndexStatement{Document: name,
			Serial: docs.Serial, GeneratedAt: d.LastModified.UTC(), LogOrigin: cp.Origin, LogSize: cp.Size, LogRoot: cp.Hash})
		sigs.bodies = append(sigs.bodies, d.Body)
	}
	docs.Signatures = sigs
	return nil
}

// sign signs every statement at now and puts the notes in force; the first signing hashes
// the documents (what a host verifies is their sha256; the ETag is index.Digest). g.mu is
// held.
func (g *IndexSignatures) sign(now time.Time) (*signedNotes, error) {
	for i, b := range g.bodies {
		h := sha256.New()
		_, _ = b.WriteTo(h) // a hash's Write does not fail
		g.stmts[i].SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	g.bodies = nil
	now = now.UTC().Truncate(time.Second)
	set := &signedNotes{at: now, notes: map[string][]byte{}}
	for _, st := range g.stmts {
		st.SignedAt, st.Expires = now, now.Add(g.ttl)
		msg, err := SignIndexStatement(st, g.signer)
		if err != nil {
			return nil, err
		}
		set.notes[st.Document] = msg
	}
	g.cur.Store(set)
	return set, nil
}

// note returns document's signature, re-signing first when a seventh of its validity has
// passed.
func (g *IndexSignatures) note(document string, now time.Time) ([]byte, error) {
	set := g.cur.Load()
	if set == nil || now.Sub(set.at) >= g.ttl/7 {
		g.mu.Lock()
		defer g.mu.Unlock()
		if set = g.cur.Load(); set == nil || now.Sub(set.at) >= g.ttl/7 {
			var err error
			if set, err = g.sign(now); err != nil {
				return nil, err
			}
		}
	}
	msg, ok := set.notes[document]
	if !ok {
		return nil, fmt.Errorf("ingest: no index document %q is signed (want %q or %q)", document, KandevDocument, CurupiraDocument)
	}
	return msg, nil
}

// IndexSignature returns the signed note over document (KandevDocument or
// CurupiraDocument) of the documents in force: their sha256, serial, generated_at, an
// expiry and the log checkpoint they were built from. ErrIndexUnsigned when they carry none.
func (s *Service) IndexSignature(document string) ([]byte, error) {
	docs := s.Documents()
	if docs == nil || docs.Signatures == nil {
		return nil, ErrIndexUnsigned
	}
	return docs.Signatures.note(document, s.now())
}
