package catalog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
)

func TestCheckBounds(t *testing.T) {
	tests := []struct {
		n    int
		fail bool
	}{
		{0, true}, {-1, true}, {1, false}, {MaxPlugins, false}, {MaxPlugins + 1, true},
	}
	for _, tc := range tests {
		err := Check(tc.n)
		if (err != nil) != tc.fail {
			t.Errorf("Check(%d) = %v, want failure %v", tc.n, err, tc.fail)
		}
	}
	if _, err := Write(t.TempDir(), Options{N: MaxPlugins + 1}); err == nil || !strings.Contains(err.Error(), "outside 1..100000") {
		t.Errorf("Write(N=%d) = %v, want the bound refused", MaxPlugins+1, err)
	}
}

func TestPackagesVerify(t *testing.T) {
	key := TestKey()
	for _, signed := range []bool{false, true} {
		var k ed25519.PrivateKey
		if signed {
			k = key
		}
		data, err := Package(7, "1.2.3", k)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(context.Background(), FileName(7, "1.2.3"), data)
		if err != nil {
			t.Fatalf("signed=%v: %v", signed, err)
		}
		got := []string{rep.ID, rep.Version, rep.Kind}
		if diff := cmp.Diff([]string{ID(7), "1.2.3", "plugin"}, got); diff != "" {
			t.Errorf("signed=%v: report (-want +got):\n%s", signed, diff)
		}
		if !strings.Contains(string(rep.ManifestRaw), CommonWord) {
			t.Errorf("signed=%v: the description lacks the common word %q", signed, CommonWord)
		}
		if (rep.ChecksumsSig != nil) != signed {
			t.Fatalf("signed=%v: checksums.txt.sig present = %v", signed, rep.ChecksumsSig != nil)
		}
		if signed {
			pub := base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
			if _, err := signature.VerifyEd25519(rep.Checksums, rep.ChecksumsSig, []string{pub}); err != nil {
				t.Errorf("the signature does not verify with the catalogue key: %v", err)
			}
		}
	}
}

func TestVerifyRefusesInvalid(t *testing.T) {
	var buf bytes.Buffer
	fsys := fstest.MapFS{"manifest.yaml": {Data: []byte("id: gen-bad-000001\napi_version: 2\nversion: \"1.0.0\"\n")}}
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), "gen-bad-000001-1.0.0.tar.gz", buf.Bytes())
	if err == nil || rep == nil || !rep.Problems.HasErrors() {
		t.Fatalf("Verify(a manifest without display_name, description, author) = %v, want it refused with its problems", err)
	}
}

func TestWriteListLoads(t *testing.T) {
	dir := t.TempDir()
	rep, err := Write(dir, Options{N: 25, Key: TestKey()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 26 || len(rep.Packages) != 25 || rep.Bytes <= 0 {
		t.Errorf("report = %d files, %d packages, %d bytes; want 26, 25, > 0", rep.Files, len(rep.Packages), rep.Bytes)
	}
	l, probs, err := index.LoadList(rep.ListPath)
	if err != nil || probs.HasErrors() {
		t.Fatalf("plugins.yaml: %v %v", err, probs)
	}
	if len(l.Plugins) != 25 {
		t.Fatalf("plugins.yaml lists %d plugins, want 25", len(l.Plugins))
	}
	e, ok := l.Plugin(ID(3))
	if !ok || e.Signing == nil || !e.Signing.Required || len(e.Signing.Ed25519Keys) != 1 {
		t.Errorf("entry %s = %+v, want a required ed25519 signing policy", ID(3), e)
	}
	if _, err := os.Stat(filepath.Join(dir, "packages", FileName(24, "1.0.0"))); err != nil {
		t.Error(err)
	}
}

func TestSeedStore(t *testing.T) {
	ctx := context.Background()
	rep, err := Write(t.TempDir(), Options{N: 12})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	marks, err := SeedStore(ctx, data, rep, 5)
	if err != nil {
		t.Fatal(err)
	}
	var done []int
	for _, m := range marks {
		done = append(done, m.Done)
	}
	if diff := cmp.Diff([]int{5, 10, 12}, done); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	st, err := store.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rels, err := st.AllReleases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 12 {
		t.Fatalf("stored %d releases, want 12", len(rels))
	}
	if err := st.Blobs.Check(rels[0].SHA256, rels[0].Size); err != nil {
		t.Errorf("blob of %s: %v", rels[0].PackageID, err)
	}
}

func TestSeedHTTPRefusesNonLoopback(t *testing.T) {
	for _, base := range []string{"http://example.com", "http://10.0.0.1:8080", "http://[::2]:80"} {
		if _, err := SeedHTTP(context.Background(), base, "t", &Report{}, 1, 1); err == nil || !strings.Contains(err.Error(), "not loopback") {
			t.Errorf("SeedHTTP(%s) = %v, want a loopback refusal", base, err)
		}
	}
}
