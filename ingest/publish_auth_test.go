package ingest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
)

// A publish that the file name and token do not allow is refused before one byte of the
// package is read, whatever the package holds.
func TestPublishAuthorisesFromTheFileNameBeforeReading(t *testing.T) {
	l := publishList()
	l.Extensions = []index.ExtensionEntry{{Name: "@acme/twin", Repo: "acme/twin"}}
	l.Plugins = append(l.Plugins, index.Entry{ID: "acme-twin", Repo: "acme/twin", Kind: index.KindPlugin})
	s := newPublishService(t, l, Config{})
	publisher := Actor{Name: "publisher:acme", Publisher: "acme"}
	stranger := Actor{Name: "publisher:globex", Publisher: "globex"}
	upload := Actor{Name: "upload", Scope: []string{"acme-other"}}
	tests := []struct {
		name  string
		actor Actor
		file  string
		kind  error
		rule  string
	}{
		{"not an owner", stranger, "acme-hello-1.0.0.tar.gz", ErrForbidden, "publish.forbidden"},
		{"upload token out of scope", upload, "acme-hello-1.0.0.tar.gz", ErrForbidden, "publish.forbidden"},
		{"not listed", publisher, "evil-1.0.0.tar.gz", ErrForbidden, "publish.unlisted"},
		{"not listed, admin too", anAdmin, "evil-1.0.0.tar.gz", ErrForbidden, "publish.unlisted"},
		{"no file name", publisher, "", ErrInvalid, "publish.filename"},
		{"not a tarball name", publisher, "acme-hello.zip", ErrInvalid, "publish.filename"},
		{"no version", publisher, "acme-hello.tar.gz", ErrInvalid, "publish.filename"},
		{"legacy version form", publisher, "acme-hello-v1.0.0.tar.gz", ErrInvalid, "publish.filename"},
		{"build metadata", publisher, "acme-hello-1.0.0+b.tar.gz", ErrInvalid, "publish.filename"},
		{"path", publisher, "../acme-hello-1.0.0.tar.gz", ErrInvalid, "publish.filename"},
		{"over 255 bytes", publisher, strings.Repeat("a", 250) + "-1.0.0.tar.gz", ErrInvalid, "publish.filename"},
		{"two listed ids share the file id", anAdmin, "acme-twin-1.0.0.tar.gz", ErrConflict, "publish.file_id.collision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg := &countingReader{r: bytes.NewReader(plugin(t, "acme-hello", "1.0.0", "x"))}
			_, err := s.Publish(context.Background(), PublishInput{Package: pkg, FileName: tt.file, Actor: tt.actor})
			if !errors.Is(err, tt.kind) || ruleOf(err) != tt.rule {
				t.Fatalf("err = %v (rule %q), want %v with rule %s", err, ruleOf(err), tt.kind, tt.rule)
			}
			if pkg.n != 0 {
				t.Errorf("%d bytes of the package were read before the refusal", pkg.n)
			}
		})
	}
	if files := blobFiles(t, s.db()); len(files) != 0 {
		t.Errorf("refusals left files: %v", files)
	}
}

func TestFileNameRefusalShowsTheNearestName(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	_, err := s.BeginUpload(anAdmin, "acme-hello-v1.2.tar.gz")
	if ruleOf(err) != "publish.filename" || !strings.Contains(err.Error(), `"acme-hello-1.2.0.tar.gz"`) {
		t.Errorf("err = %v, want publish.filename proposing acme-hello-1.2.0.tar.gz", err)
	}
}

func TestOwnerPublishesUnderTheFileName(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	for _, name := range []string{"acme-hello-1.0.0.tar.gz", "acme-hello-1.1.0-rc.1.tgz"} {
		v := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "acme-hello-"), ".tar.gz"), ".tgz")
		_, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", v, "x")), FileName: name,
			Actor: Actor{Name: "publisher:acme", Publisher: "acme"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// Two ids can share a file id: the package must be the very id its name was authorised for.
func TestPackageMustBeTheIDItsFileNameNamed(t *testing.T) {
	l := publishList()
	l.Plugins = append(l.Plugins, index.Entry{ID: "curupira-github-issues", Repo: "acme/x", Kind: index.KindPlugin})
	s := newPublishService(t, l, Config{})
	_, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(extensionPkg(t)),
		FileName: "curupira-github-issues-1.0.0.tar.gz", Actor: anAdmin})
	if !errors.Is(err, ErrInvalid) || ruleOf(err) != "publish.filename" {
		t.Fatalf("err = %v (rule %q), want 422 publish.filename", err, ruleOf(err))
	}
}

// The in-process demo seeding publishes as the admin without a file name.
func TestAdminMayPublishInProcessWithoutAFileName(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	if _, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.0.0", "x")), Actor: anAdmin}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(plugin(t, "evil", "1.0.0", "x")), Actor: anAdmin}); ruleOf(err) != "publish.unlisted" {
		t.Fatalf("unlisted without a file name: %v, want publish.unlisted", err)
	}
}

// A file name can split into two listed ids when one is the other plus "-<version>": kit-1.0.0
// (owned by alice) and kit (owned by bob) in "kit-1.0.0-0.1.0.tar.gz", which is kit-1.0.0@0.1.0
// or kit@1.0.0-0.1.0. Each owner publishes their own; the manifest decides between them.
func TestFileNameSplitsIntoTwoListedIDs(t *testing.T) {
	l := &index.List{Plugins: []index.Entry{
		{ID: "kit-1.0.0", Repo: "alice/kit", Kind: index.KindPlugin, Owners: []string{"alice"}},
		{ID: "kit", Repo: "bob/kit", Kind: index.KindPlugin, Owners: []string{"bob"}},
	}}
	s := newPublishService(t, l, Config{})
	alice := Actor{Name: "publisher:alice", Publisher: "alice"}
	bob := Actor{Name: "publisher:bob", Publisher: "bob"}
	carol := Actor{Name: "publisher:carol", Publisher: "carol"}
	publish := func(a Actor, id, version string) error {
		_, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(plugin(t, id, version, "x")),
			FileName: PackageFileName(id, version), Actor: a})
		return err
	}
	if err := publish(alice, "kit-1.0.0", "0.1.0"); err != nil {
		t.Fatalf("alice publishing kit-1.0.0@0.1.0 as kit-1.0.0-0.1.0.tar.gz: %v", err)
	}
	if err := publish(bob, "kit", "1.0.0-0.1.0"); err != nil {
		t.Fatalf("bob publishing kit@1.0.0-0.1.0 as kit-1.0.0-0.1.0.tar.gz: %v", err)
	}
	if err := publish(bob, "kit", "2.0.0"); err != nil {
		t.Fatalf("bob publishing kit@2.0.0: %v", err)
	}
	if err := publish(bob, "kit-1.0.0", "0.2.0"); !errors.Is(err, ErrForbidden) || ruleOf(err) != "publish.forbidden" || !strings.Contains(err.Error(), `"kit-1.0.0"`) {
		t.Errorf("bob publishing kit-1.0.0@0.2.0: %v (rule %q), want publish.forbidden for kit-1.0.0", err, ruleOf(err))
	}
	if err := publish(alice, "kit", "1.0.0-0.2.0"); !errors.Is(err, ErrForbidden) || ruleOf(err) != "publish.forbidden" || !strings.Contains(err.Error(), `"kit"`) {
		t.Errorf("alice publishing kit@1.0.0-0.2.0: %v (rule %q), want publish.forbidden for kit", err, ruleOf(err))
	}
	pkg := &countingReader{r: bytes.NewReader(plugin(t, "kit-1.0.0", "0.3.0", "x"))}
	_, err := s.Publish(context.Background(), PublishInput{Package: pkg, FileName: "kit-1.0.0-0.3.0.tar.gz", Actor: carol})
	if !errors.Is(err, ErrForbidden) || ruleOf(err) != "publish.forbidden" || !strings.Contains(err.Error(), `"kit" or "kit-1.0.0"`) || pkg.n != 0 {
		t.Errorf("carol: %v (rule %q, %d bytes read), want publish.forbidden naming both ids before reading", err, ruleOf(err), pkg.n)
	}
	// The admin may publish either: the manifest decides.
	if err := publish(anAdmin, "kit", "1.0.0-0.4.0"); err != nil {
		t.Errorf("admin publishing kit@1.0.0-0.4.0: %v", err)
	}
	if err := publish(anAdmin, "kit-1.0.0", "0.4.0"); err != nil {
		t.Errorf("admin publishing kit-1.0.0@0.4.0: %v", err)
	}
}

// The unlisted-id refusal never proposes an entry plugins.yaml would refuse: an id listed
// in lower case gets the corrected file name, another invalid id the id pattern.
func TestUnlistedRefusalProposesOnlyValidIDs(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	publisher := Actor{Name: "publisher:acme", Publisher: "acme"}
	tests := []struct{ file, say, never string }{
		{"Acme-Hello-1.0.0.tar.gz", `upload the package as "acme-hello-1.0.0.tar.gz"`, "id: Acme-Hello"},
		{"Acme-Hello-1.0.0-RC.1.tgz", `upload the package as "acme-hello-1.0.0-RC.1.tgz"`, "id: Acme-Hello"},
		{"Alice-Tool-0.1.0.tar.gz", "^[a-z0-9][a-z0-9._-]*$", "id: Alice-Tool"},
	}
	for _, tt := range tests {
		_, err := s.BeginUpload(publisher, tt.file)
		if !errors.Is(err, ErrForbidden) || ruleOf(err) != "publish.unlisted" || !strings.Contains(err.Error(), tt.say) || strings.Contains(err.Error(), tt.never) {
			t.Errorf("%s: %v (rule %q), want publish.unlisted saying %q and not %q", tt.file, err, ruleOf(err), tt.say, tt.never)
		}
	}
}
