package verify_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/token"
	"github.com/pluginyard/registry/verify"
)

// fakeSecrets builds, at test time, one value of every format the scanner refuses. They are
// random (a fixed seed) and never valid anywhere; they are built here rather than committed
// so that no secret scanner (GitHub push protection included) flags the repository.
func fakeSecrets(t *testing.T) map[string]string {
	t.Helper()
	r := rand.New(rand.NewChaCha8([32]byte{19}))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	pick := func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	return map[string]string{
		"pkcs8":      pemBlock(t, "PRIVATE KEY", pkcs8(t)),
		"ec":         pemBlock(t, "EC PRIVATE KEY", ecKey(t)),
		"openssh":    pemBlock(t, "OPENSSH PRIVATE KEY", []byte(pick(alnum, 300))),
		"ghp":        "gh" + "p_" + pick(alnum, 36),
		"github_pat": "github" + "_pat_" + pick(alnum, 22) + "_" + pick(alnum, 59),
		"glpat":      "gl" + "pat-" + pick(alnum, 20),
		"npm":        "np" + "m_" + pick(alnum, 36),
		"pypi":       "pypi-" + "AgEIcHlwaS5vcmc" + pick(alnum+"-_", 60),
		"akia":       "AK" + "IA" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"asia":       "AS" + "IA" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"aws_secret": pick(alnum+"/+", 40),
		"xoxb":       "xo" + "xb-" + pick("0123456789", 12) + "-" + pick("0123456789", 13) + "-" + pick(alnum, 24),
		"slack_hook": "https://hooks." + "slack.com/services/T" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8) + "/B" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8) + "/" + pick(alnum, 24),
		"pyr":        newToken(t),
		"pyr_legacy": token.Prefix + pick("abcdefghijklmnopqrstuvwxyz234567", 40),
	}
}

func newToken(t *testing.T) string {
	tok, err := token.New()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func pkcs8(t *testing.T) []byte {
	_, key, err := ed25519.GenerateKey(rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func ecKey(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.NewChaCha8([32]byte{2}))
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func pemBlock(t *testing.T, typ string, der []byte) string {
	var b bytes.Buffer
	if err := pem.Encode(&b, &pem.Block{Type: typ, Bytes: der}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// corpus reads testdata/scan/<dir> as package files (path → body), filling ${name} from
// secrets.
func corpus(t *testing.T, dir string, secrets map[string]string) map[string]string {
	t.Helper()
	root := filepath.Join("testdata", "scan", dir)
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = os.Expand(string(data), func(k string) string {
			v, ok := secrets[k]
			if !ok {
				t.Fatalf("%s: no fake secret named %q", p, k)
			}
			return v
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scanProblems verifies a plugin package holding files and returns its scan.* problems as
// "rule file" strings, sorted.
func scanProblems(t *testing.T, files map[string]string) []string {
	t.Helper()
	entries := []entry{file("manifest.yaml", pluginManifest)}
	for name, body := range files {
		entries = append(entries, file(name, body))
	}
	rep, err := verify.Package(context.Background(), bytes.NewReader(buildTarGz(t, entries)), verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return scanRules(rep.Problems)
}

func scanRules(l problem.List) []string {
	var got []string
	for _, p := range l {
		if strings.HasPrefix(p.Rule, "scan.") {
			got = append(got, p.Rule+" "+p.File)
		}
	}
	sort.Strings(got)
	return got
}

// TestScanRefusesPlantedSecrets: every file of testdata/scan/planted/<rule>/ is refused
// with that rule and its path, and with no other scan rule.
func TestScanRefusesPlantedSecrets(t *testing.T) {
	secrets := fakeSecrets(t)
	rulesDirs, err := os.ReadDir(filepath.Join("testdata", "scan", "planted"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rulesDirs {
		rule := d.Name()
		for name, body := range corpus(t, filepath.Join("planted", rule), secrets) {
			t.Run(rule+"/"+name, func(t *testing.T) {
				got := scanProblems(t, map[string]string{name: body})
				if diff := cmp.Diff([]string{rule + " " + name}, got); diff != "" {
					t.Errorf("scan problems (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestScanPassesNearMisses: placeholders, documented example keys, public keys, template
// dotenv files and base64 that happens to contain AKIA are not secrets.
func TestScanPassesNearMisses(t *testing.T) {
	files := corpus(t, "pass", nil)
	if len(files) < 8 {
		t.Fatalf("the near-miss corpus has %d files; expected the whole of testdata/scan/pass", len(files))
	}
	if got := scanProblems(t, files); len(got) > 0 {
		t.Errorf("near misses were refused: %v", got)
	}
}

// TestScanNeedsTheRegistryChecksum: a string of a registry token's shape whose checksum
// is wrong (a placeholder, a truncated or edited copy) is not a token.
func TestScanNeedsTheRegistryChecksum(t *testing.T) {
	tok := newToken(t)
	last := "0"
	if tok[len(tok)-1] == '0' {
		last = "1"
	}
	bad := tok[:len(tok)-1] + last
	got := scanProblems(t, map[string]string{"good.txt": "t=" + tok + "\n", "bad.txt": "t=" + bad + "\n"})
	if diff := cmp.Diff([]string{"scan.token.registry good.txt"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestScanSkipsBinaryFiles: a file whose first 512 bytes hold a NUL byte is not text and is
// not scanned (compiled executables embed arbitrary bytes); the same bytes as text are.
func TestScanSkipsBinaryFiles(t *testing.T) {
	tok := fakeSecrets(t)["ghp"]
	text := strings.Repeat("x", 600) + " " + tok + "\n"
	binary := "\x7fELF\x00" + text
	got := scanProblems(t, map[string]string{"server/plugin-linux-amd64": binary, "notes.txt": text})
	if diff := cmp.Diff([]string{"scan.token.github notes.txt"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestScanMessageHidesTheSecret: the refusal names the line and the kind of secret but not
// the secret, since refusals are logged and audited.
func TestScanMessageHidesTheSecret(t *testing.T) {
	tok := fakeSecrets(t)["ghp"]
	entries := []entry{file("manifest.yaml", pluginManifest), file("a/b.txt", "one\ntwo\nkey="+tok+"\n")}
	rep, err := verify.Package(context.Background(), bytes.NewReader(buildTarGz(t, entries)), verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Rule != "scan.token.github" {
			continue
		}
		if strings.Contains(p.Message, tok[4:]) || !strings.Contains(p.Message, "line 3") || p.File != "a/b.txt" {
			t.Errorf("message %q (file %q): want line 3, file a/b.txt and no secret", p.Message, p.File)
		}
		return
	}
	t.Fatalf("no scan.token.github problem in %v", rep.Problems)
}

// TestScanLargeFile: a secret deep in a file larger than one read chunk is found, at its
// line.
func TestScanLargeFile(t *testing.T) {
	tok := fakeSecrets(t)["npm"]
	body := strings.Repeat("filler line of text\n", 40000) + "token=" + tok + "\n"
	got := scanProblems(t, map[string]string{"dist/bundle.js": body})
	if diff := cmp.Diff([]string{"scan.token.npm dist/bundle.js"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestScanPassesRealManifests: the real Kandev manifests of testdata/corpus (Slack plugins
// among them, whose descriptions say "the xoxb- token of your Slack app") hold no secret
// and none is found.
func TestScanPassesRealManifests(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "corpus", "kandev-manifests", "*.yaml"))
	if err != nil || len(paths) < 20 {
		t.Fatalf("corpus: %d files, %v", len(paths), err)
	}
	files := map[string]string{}
	for _, p := range paths {
		files["corpus/"+filepath.Base(p)] = string(mustReadFile(t, p))
	}
	if got := scanProblems(t, files); len(got) > 0 {
		t.Errorf("real manifests were refused: %v", got)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
