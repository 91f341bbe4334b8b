package docs_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A sample output in a Markdown document is marked by a comment on the line before its
// fence, naming the golden file it must equal: <!-- output: publish-acme-stats -->.
var outputMarker = regexp.MustCompile(`^<!-- output: ([a-z0-9.-]+) -->$`)

// checkSamples compares every marked sample block of the documents, and the refusal on
// the /docs authors page, with what the commands printed (outputs, by golden name) and
// with the API's answer to the refused package.
func checkSamples(t *testing.T, s *session, outputs map[string]string) {
	t.Helper()
	outputs["refusal.json"] = refusalJSON(t, s)
	checkGolden(t, "refusal.json", outputs["refusal.json"])
	used := map[string]bool{}
	for _, doc := range documentsIn(t) {
		for _, name := range checkMarkedBlocks(t, doc, outputs) {
			used[name] = true
		}
	}
	for _, name := range []string{"refusal.json", "publish-acme-stats", "publish-refused"} {
		if !used[name] {
			t.Errorf("no document shows the %s sample (<!-- output: %[1]s --> before its block)", name)
		}
	}
	checkPageRefusal(t, outputs["refusal.json"])
}

// refusalJSON is the API's 422 for the broken package, indented as the documents show it.
func refusalJSON(t *testing.T, s *session) string {
	t.Helper()
	status, body := s.postPackage(t, s.env["REGISTRY_TOKEN"], filepath.Join(s.work, "acme-stats-1.2.1.tar.gz"))
	if status != http.StatusUnprocessableEntity {
		t.Fatalf("the broken package: HTTP %d, want 422: %s", status, body)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	return s.normalize(strings.TrimSpace(out.String())) + "\n"
}

// checkMarkedBlocks checks (or with -update rewrites) the marked blocks of one document
// and returns the golden names it shows.
func checkMarkedBlocks(t *testing.T, doc string, outputs map[string]string) []string {
	t.Helper()
	path := filepath.Join("..", "..", doc)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	var names []string
	changed := false
	for i := 0; i < len(lines); i++ {
		m := outputMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		name := m[1]
		names = append(names, name)
		start, end := blockAfter(lines, i)
		if start < 0 {
			t.Errorf("%s:%d: the output marker %q is not followed by a fenced block", doc, i+1, name)
			continue
		}
		want, ok := outputs[name]
		if !ok {
			t.Errorf("%s:%d: no case produces the output %q", doc, i+1, name)
			continue
		}
		got := strings.Join(lines[start+1:end], "\n") + "\n"
		if got == want {
			continue
		}
		if *update {
			lines = append(lines[:start+1], append(strings.Split(strings.TrimSuffix(want, "\n"), "\n"), lines[end:]...)...)
			changed = true
			continue
		}
		t.Errorf("%s:%d: the sample %q differs from what the command prints (-document +real); run go test ./test/docs -update:\n%s",
			doc, start+1, name, cmp.Diff(got, want))
	}
	if changed {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// blockAfter returns the lines of the opening and closing fence of the block right after
// line i (-1, -1 when there is none).
func blockAfter(lines []string, i int) (int, int) {
	if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") {
		return -1, -1
	}
	for j := i + 2; j < len(lines); j++ {
		if strings.TrimSpace(lines[j]) == "```" {
			return i + 1, j
		}
	}
	return -1, -1
}

// checkPageRefusal compares the refusal on /docs/authors (web/docs_examples.go, which
// -update does not rewrite) with the API's real answer.
func checkPageRefusal(t *testing.T, want string) {
	t.Helper()
	const status = "HTTP/1.1 422 Unprocessable Entity\n"
	for _, b := range docsPageBlocks(t)["authors"] {
		if rest, ok := strings.CutPrefix(b, status); ok {
			if got := rest + "\n"; got != want {
				t.Errorf("the refusal on /docs/authors (exampleRefusal in web/docs_examples.go) differs from the API's (-page +real):\n%s",
					cmp.Diff(got, want))
			}
			return
		}
	}
	t.Errorf("/docs/authors shows no refusal (a block starting %q)", strings.TrimSpace(status))
}
