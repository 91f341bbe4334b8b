package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
)

// Files the demo keeps in the data directory, under demoDir.
const (
	demoDir      = "demo"
	demoKeyFile  = "ed25519.key"  // base64 of the 32-byte seed; never leaves the data directory
	demoListFile = "plugins.yaml" // --plugins with the demo's public key added
)

// demo is what `serve --demo` adds to a registry: a signing key of its own, the curated
// list with that key's public half pinned on the entry of examples.Ed25519Example, and the
// publishing of the examples (one ed25519-signed, one with the committed Sigstore bundle).
type demo struct {
	key      ed25519.PrivateKey
	pub      string // base64, as plugins.yaml lists keys
	keyPath  string
	listPath string
	signed   bool // the last list written carries pub on examples.Ed25519Example
}

// startDemo loads the demo key from the data directory, generating it at the first start,
// and writes the demo's plugins.yaml from --plugins. Call it with the data directory locked.
func startDemo(c *cli, cfg Config) (*demo, *index.List, error) {
	dir := filepath.Join(cfg.DataDir, demoDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	d := &demo{keyPath: filepath.Join(dir, demoKeyFile), listPath: filepath.Join(dir, demoListFile)}
	created, err := d.loadKey()
	if err != nil {
		return nil, nil, err
	}
	if created {
		fmt.Fprintf(c.stdout, "demo: generated an ed25519 signing key in %s (key %s)\n", d.keyPath, d.fingerprint())
	}
	l, err := d.loadList(cfg.PluginsPath, cachedList{})
	if err != nil {
		return nil, nil, err
	}
	if d.signed {
		fmt.Fprintf(c.stdout, "demo: curated list %s: %s with signing.ed25519_keys [%s] on %s\n",
			d.listPath, cfg.PluginsPath, d.pub, examples.Ed25519Example)
	}
	return d, l, nil
}

func (d *demo) fingerprint() string {
	return signature.KeyFingerprint(d.key.Public().(ed25519.PublicKey))
}

// loadKey reads the demo key, or generates and stores one when there is none yet.
func (d *demo) loadKey() (created bool, err error) {
	raw, err := os.ReadFile(d.keyPath)
	if errors.Is(err, os.ErrNotExist) {
		return true, d.newKey()
	}
	if err != nil {
		return false, fmt.Errorf("demo: %w", err)
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return false, fmt.Errorf("demo: %s is not the base64 of a %d-byte ed25519 seed (%d bytes read); delete it and start again to generate a new key",
			d.keyPath, ed25519.SeedSize, len(raw))
	}
	d.setKey(ed25519.NewKeyFromSeed(seed))
	return false, nil
}

func (d *demo) newKey() error {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("demo: generate key: %w", err)
	}
	data := base64.StdEncoding.EncodeToString(key.Seed()) + "\n"
	if err := writeFileAtomic(d.keyPath, []byte(data), 0o600); err != nil {
		return fmt.Errorf("demo: store key: %w", err)
	}
	d.setKey(key)
	return nil
}

func (d *demo) setKey(key ed25519.PrivateKey) {
	d.key = key
	d.pub = base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
}

// loadList reads the curated list at path (its problems are reported against path), then
// writes the demo's copy of it with the demo key listed and loads that: the policy in force
// is a plugins.yaml anyone can read and lint. Without --demo (d is nil) it is cache's load.
func (d *demo) loadList(path string, cache cachedList) (*index.List, error) {
	if d == nil {
		return cache.load(path)
	}
	if _, err := loadList(path); err != nil {
		return nil, err
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--plugins %s: %w", path, err)
	}
	out, ok, err := withEd25519Key(src, examples.Ed25519Example, d.pub)
	if err != nil {
		return nil, fmt.Errorf("demo: add the demo key to %s: %w", path, err)
	}
	d.signed = ok
	header := fmt.Sprintf("# Written by `registry serve --demo` at every start and reload: %s with the demo's\n"+
		"# public key (%s) on %s. Edit %s, not this file.\n", path, d.fingerprint(), examples.Ed25519Example, path)
	if err := writeFileAtomic(d.listPath, append([]byte(header), out...), 0o600); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return loadList(d.listPath)
}

// reloadList is the reloader's list loader: the demo's when the demo runs.
func (r *reloader) reloadList() (*index.List, error) { return r.demo.loadList(r.path, r.cache) }

// withEd25519Key returns the plugins.yaml src with pub added to signing.ed25519_keys of the
// plugin id (and signing.required set when the entry had no signing block). ok is false,
// and src is returned as it is, when the list has no such plugin.
func withEd25519Key(src []byte, id, pub string) (out []byte, ok bool, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, false, err
	}
	entry := pluginNode(&doc, id)
	if entry == nil {
		return src, false, nil
	}
	signing := mapValue(entry, "signing")
	if signing == nil || signing.Kind != yaml.MappingNode {
		signing = &yaml.Node{Kind: yaml.MappingNode}
		setMapValue(entry, "signing", signing, "Added by --demo: releases must be signed by the demo key.")
		setMapValue(signing, "required", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}, "")
	}
	keys := mapValue(signing, "ed25519_keys")
	if keys == nil || keys.Kind != yaml.SequenceNode {
		keys = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		setMapValue(signing, "ed25519_keys", keys, "The demo key's public half; its private half is in the data directory.")
	}
	for _, k := range keys.Content {
		if k.Value == pub {
			return encodeYAML(&doc)
		}
	}
	keys.Content = append(keys.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: pub})
	return encodeYAML(&doc)
}

func encodeYAML(doc *yaml.Node) ([]byte, bool, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, false, err
	}
	if err := enc.Close(); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}

// pluginNode returns the mapping of the plugins: entry whose id is id, or nil.
func pluginNode(doc *yaml.Node, id string) *yaml.Node {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil
	}
	plugins := mapValue(doc.Content[0], "plugins")
	if plugins == nil || plugins.Kind != yaml.SequenceNode {
		return nil
	}
	for _, item := range plugins.Content {
		if v := mapValue(item, "id"); v != nil && v.Kind == yaml.ScalarNode && v.Value == id {
			return item
		}
	}
	return nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setMapValue replaces the value of key in m, or appends key with a head comment.
func setMapValue(m *yaml.Node, key string, v *yaml.Node, comment string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	if comment != "" {
		k.HeadComment = "# " + comment
	}
	m.Content = append(m.Content, k, v)
}

// writeFileAtomic writes data next to path and renames it into place, so that a reader (or
// a crash) never sees half a file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// demoActor is the publisher name of the demo's releases.
const demoActor = "demo"

// demoPending reports whether the demo's publishes are to run: the store holds no release,
// or only releases the demo published and fewer than there are examples (a first start
// interrupted part-way, by Ctrl-C or a crash). A store with any other release is left as
// it is. Examples already stored are published again as the same bytes: no change.
func demoPending(rels []*store.Release) bool {
	for _, r := range rels {
		if r.PublishedBy != demoActor {
			return false
		}
	}
	return len(rels) < len(examples.Names())
}

// publish packs and publishes every bundled example when demoPending says so:
// examples.Ed25519Example signed with the demo key (when the list pins it), and
// examples.SigstoreExample with the committed bundle. The bundle is verified by a service
// that trusts the demo's test root and nothing else, used for these publishes only: the
// registry itself keeps the trusted root it was configured with (none by default), so no
// other upload is ever checked against the test authority.
func (d *demo) publish(ctx context.Context, c *cli, st *store.Store, list *index.List, icfg ingest.Config, log *slog.Logger) error {
	rels, err := st.AllReleases(ctx)
	if err != nil || !demoPending(rels) {
		return err
	}
	if icfg.Sigstore, err = examples.SigstoreVerifier(); err != nil {
		return err
	}
	svc := ingest.New(st, list, icfg, log)
	defer svc.Close()
	admin := ingest.Actor{Name: demoActor, Admin: true}
	for _, name := range examples.Names() {
		in, err := d.release(c, name)
		if err != nil {
			return err
		}
		in.Actor = admin
		res, err := svc.Publish(ctx, in)
		var rf *ingest.Refusal
		if errors.As(err, &rf) {
			fmt.Fprintf(c.stderr, "demo: example %s refused: %s\n", name, rf.Message)
			for _, p := range rf.Problems {
				fmt.Fprintf(c.stderr, "  %s\n", p)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("demo: publish %s: %w", name, err)
		}
		if res.Created {
			fmt.Fprintf(c.stdout, "demo: published %s@%s%s\n", res.Release.PackageID, res.Release.Version, signedBy(res.Release.Signature))
		}
	}
	return nil
}

// release is the publish input of one example: signed when the demo signs it.
func (d *demo) release(c *cli, name string) (ingest.PublishInput, error) {
	var buf bytes.Buffer
	switch {
	case name == examples.Ed25519Example && d.signed:
		if err := examples.PackSigned(name, d.key, &buf); err != nil {
			return ingest.PublishInput{}, err
		}
	case name == examples.SigstoreExample:
		rel, err := examples.SigstorePackage()
		if err != nil {
			return ingest.PublishInput{}, err
		}
		if rel.Stale != nil {
			fmt.Fprintf(c.stderr, "demo: publishing %s unsigned: %v\n", name, rel.Stale)
		}
		return ingest.PublishInput{Package: bytes.NewReader(rel.Package), Bundle: rel.Bundle}, nil
	default:
		if err := examples.Pack(name, &buf); err != nil {
			return ingest.PublishInput{}, err
		}
	}
	return ingest.PublishInput{Package: &buf}, nil
}

// signedBy describes a stored signature result for the start-up output.
func signedBy(raw json.RawMessage) string {
	var r signature.Result
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		return ""
	}
	switch r.Type {
	case signature.TypeEd25519:
		return fmt.Sprintf(" (checksums.txt signed with the demo's ed25519 key %s, listed in the demo plugins.yaml)", r.KeyFingerprint)
	case signature.TypeSigstore:
		return fmt.Sprintf(" (Sigstore: %s, %s at %s; verified against the demo's TEST trusted root %s, not the public Sigstore)",
			r.Repository, r.Workflow, r.Ref, "examples/"+examples.SigstoreTrustedRootPath)
	}
	return ""
}
