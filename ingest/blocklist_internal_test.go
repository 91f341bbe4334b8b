package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
)

// pluginWith builds acme-hello@version with extra files (path → body).
func pluginWith(t *testing.T, version string, extra map[string]string) []byte {
	t.Helper()
	manifest := "id: acme-hello\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Scanned." +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}
	for name, body := range extra {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func publishBytes(s *Service, version string, data []byte) (*PublishResult, error) {
	return s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(data),
		FileName: PackageFileName("acme-hello", version), Actor: anAdmin})
}

// refusedWith returns "rule file" of every error of a refusal.
func refusedWith(t *testing.T, err error) []string {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v; want a 422 refusal", err)
	}
	var out []string
	for _, p := range r.Problems.Errors() {
		out = append(out, p.Rule+" "+p.File)
	}
	return out
}

// fakeNPM is an npm-token-shaped value built at run time (never a real token).
var fakeNPM = "np" + "m_" + "q8ZkV3sLm2Xw9RtYp4Bn7CjHd6Fg1AeU5oIi"

// TestPublishRefusesScanFindings: a package with a token and a dotenv file is refused with
// both rules and paths; listing both in scan_allow publishes it, with the findings kept as
// warnings.
func TestPublishRefusesScanFindings(t *testing.T) {
	extra := map[string]string{"docs/setup.md": "token: " + fakeNPM + "\n", "test/.env": "A=1\n"}
	l := publishList()
	s := newPublishService(t, l, Config{})
	_, err := publishBytes(s, "1.0.0", pluginWith(t, "1.0.0", extra))
	want := []string{"scan.file.env test/.env", "scan.token.npm docs/setup.md"}
	got := refusedWith(t, err)
	if diff := cmp.Diff(want, sorted(got)); diff != "" {
		t.Fatalf("refusal (-want +got):\n%s", diff)
	}

	l = publishList()
	l.Plugins[0].ScanAllow = []index.ScanAllow{{Path: "docs/setup.md", Rule: "scan.token.npm"}}
	s = newPublishService(t, l, Config{})
	_, err = publishBytes(s, "1.0.0", pluginWith(t, "1.0.0", extra))
	if diff := cmp.Diff([]string{"scan.file.env test/.env"}, refusedWith(t, err)); diff != "" {
		t.Fatalf("one allowance leaves the other finding (-want +got):\n%s", diff)
	}

	l.Plugins[0].ScanAllow = append(l.Plugins[0].ScanAllow, index.ScanAllow{Path: "test/.env", Rule: "scan.file.env"})
	s = newPublishService(t, l, Config{})
	res, err := publishBytes(s, "1.0.0", pluginWith(t, "1.0.0", extra))
	if err != nil {
		t.Fatalf("publish with both allowed: %v", err)
	}
	var warned []string
	for _, p := range res.Report.Problems.Warnings() {
		if strings.HasPrefix(p.Rule, "scan.") && strings.HasPrefix(p.Message, "allowed by the plugins.yaml entry's scan_allow") {
			warned = append(warned, p.Rule+" "+p.File)
		}
	}
	if diff := cmp.Diff(want, sorted(warned)); diff != "" {
		t.Errorf("allowed findings as warnings (-want +got):\n%s", diff)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestPublishRefusesBlocklisted: a package whose sha256 is blocked, or one of whose files
// is, is refused with the rule (and the file); removing the entry lets it publish. The
// blocklist cannot be allowed by scan_allow.
func TestPublishRefusesBlocklisted(t *testing.T) {
	ctx := context.Background()
	l := publishList()
	l.Plugins[0].ScanAllow = []index.ScanAllow{{Path: "lib/payload.js", Rule: "scan.blocklist.file"}}
	s := newPublishService(t, l, Config{})
	payload := "module.exports = function steal() {}\n"
	pkg := pluginWith(t, "1.0.0", map[string]string{"lib/payload.js": payload})

	if _, _, err := s.BlockAdd(ctx, anAdmin, strings.ToUpper(sha(pkg)), "a known-bad build"); err != nil {
		t.Fatal(err)
	}
	_, err := publishBytes(s, "1.0.0", pkg)
	if diff := cmp.Diff([]string{"scan.blocklist.package "}, refusedWith(t, err)); diff != "" {
		t.Fatalf("blocked package (-want +got):\n%s", diff)
	}
	if err := s.BlockRemove(ctx, anAdmin, sha(pkg)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.BlockAdd(ctx, anAdmin, sha([]byte(payload)), "credential stealer"); err != nil {
		t.Fatal(err)
	}
	other := pluginWith(t, "1.0.1", map[string]string{"lib/payload.js": payload})
	_, err = publishBytes(s, "1.0.1", other)
	if diff := cmp.Diff([]string{"scan.blocklist.file lib/payload.js"}, refusedWith(t, err)); diff != "" {
		t.Fatalf("blocked file (-want +got):\n%s", diff)
	}
	var r *Refusal
	errors.As(err, &r)
	if !strings.Contains(r.Problems.Errors()[0].Message, "credential stealer") {
		t.Errorf("the refusal does not give the reason: %q", r.Problems.Errors()[0].Message)
	}
	if err := s.BlockRemove(ctx, anAdmin, sha([]byte(payload))); err != nil {
		t.Fatal(err)
	}
	if _, err := publishBytes(s, "1.0.1", other); err != nil {
		t.Fatalf("publish after the block was removed: %v", err)
	}
}

// TestPublishRefusesEveryCopyOfABlockedFile: files of equal content share one digest,
// looked up once; each copy is still named.
func TestPublishRefusesEveryCopyOfABlockedFile(t *testing.T) {
	ctx := context.Background()
	s := newPublishService(t, publishList(), Config{})
	payload := "module.exports = function steal() {}\n"
	if _, _, err := s.BlockAdd(ctx, anAdmin, sha([]byte(payload)), "credential stealer"); err != nil {
		t.Fatal(err)
	}
	pkg := pluginWith(t, "1.0.0", map[string]string{"lib/a.js": payload, "lib/b.js": payload})
	_, err := publishBytes(s, "1.0.0", pkg)
	want := []string{"scan.blocklist.file lib/a.js", "scan.blocklist.file lib/b.js"}
	if diff := cmp.Diff(want, refusedWith(t, err)); diff != "" {
		t.Fatalf("blocked copies (-want +got):\n%s", diff)
	}
}

// TestBlocklistAdmin: only admins change or read the blocklist; bad digests and reasons
// are refused before the store; removing an absent entry is ErrNotFound; every change is
// audited.
func TestBlocklistAdmin(t *testing.T) {
	ctx := context.Background()
	s := newPublishService(t, publishList(), Config{})
	good := strings.Repeat("ab", 32)
	pub := Actor{Name: "publisher:acme", Publisher: "acme"}
	if _, _, err := s.BlockAdd(ctx, pub, good, "x"); !errors.Is(err, ErrForbidden) {
		t.Errorf("publisher add: %v, want ErrForbidden", err)
	}
	if _, err := s.Blocklist(ctx, pub); !errors.Is(err, ErrForbidden) {
		t.Errorf("publisher list: %v, want ErrForbidden", err)
	}
	for _, c := range []struct{ sha, reason string }{
		{good[:63], "x"}, {good[:63] + "z", "x"}, {good, "  "}, {good, strings.Repeat("é", maxBlockReason+1)},
	} {
		if _, _, err := s.BlockAdd(ctx, anAdmin, c.sha, c.reason); !errors.Is(err, ErrInvalid) {
			t.Errorf("BlockAdd(%q, %d-char reason) = %v, want ErrInvalid", c.sha, len(c.reason), err)
		}
	}
	if err := s.BlockRemove(ctx, anAdmin, good); !errors.Is(err, ErrNotFound) {
		t.Errorf("remove absent: %v, want ErrNotFound", err)
	}
	if _, added, err := s.BlockAdd(ctx, anAdmin, " "+good+" ", " malware "); err != nil || !added {
		t.Fatalf("add: %v, %v", added, err)
	}
	list, err := s.Blocklist(ctx, anAdmin)
	if err != nil || len(list) != 1 || list[0].Reason != "malware" || list[0].AddedBy != "admin" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	log, err := s.db().AuditLog(ctx, 5, 0)
	if err != nil || len(log) == 0 || log[0].Action != "blocklist.add" || log[0].Target != good {
		t.Errorf("audit = %+v, %v", log, err)
	}
}

// TestScannerKnowsRegistryTokens: the tokens this registry issues (newSecret) are what
// verify's scan.token.registry finds.
func TestScannerKnowsRegistryTokens(t *testing.T) {
	for range 20 {
		_, secret, err := newSecret()
		if err != nil {
			t.Fatal(err)
		}
		body := "REGISTRY_TOKEN=" + secret + "\n"
		rep, err := verify.Package(context.Background(), bytes.NewReader(pluginWith(t, "1.0.0", map[string]string{"ci.txt": body})), verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !hasRule(rep.Problems, "scan.token.registry", "ci.txt") {
			t.Fatalf("a token from newSecret (%d characters, shape %s) is not found by the scanner: %v", len(secret), regexp.MustCompile(`[0-9A-Za-z]`).ReplaceAllString(secret[len(tokenPrefix):], "x"), rep.Problems)
		}
	}
}

func hasRule(l problem.List, rule, file string) bool {
	for _, p := range l {
		if p.Rule == rule && p.File == file {
			return true
		}
	}
	return false
}

// TestScanAllowsUnlisted: a package whose id the list does not name gets no allowances
// (and is refused later as unlisted), for plugins and extensions alike.
func TestScanAllowsUnlisted(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	for _, rep := range []*verify.Report{{ID: "nobody", Kind: verify.KindPlugin}, {ID: "@nobody/ext", Kind: verify.KindExtension}} {
		if got := s.scanAllows(rep); got != nil {
			t.Errorf("scanAllows(%s %s) = %v, want none", rep.Kind, rep.ID, got)
		}
	}
}
