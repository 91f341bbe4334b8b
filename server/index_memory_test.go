package server_test

import (
	"bytes"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/pluginyard/registry/server"
)

// TestSmallDocumentsComeFromMemory: a document body under the sendfile threshold is sent
// from memory, both representations, even when its file holds other bytes of the same
// size; at a threshold of 0 the same request is sent from the file (the sendfile path),
// and a file of another size is still refused for the bytes in memory.
func TestSmallDocumentsComeFromMemory(t *testing.T) {
	e := newEnv(t, "")
	doc := e.svc.Documents().Kandev
	gz := doc.Gzip()
	reps := []struct {
		name, encoding string
		body           []byte
		file           string
	}{
		{"identity", "", doc.Body, written(doc.BodyFile)},
		{"gzip", "gzip", gz, written(doc.GzipFile)},
	}
	get := func(encoding string) response {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/index.json", nil)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		return e.doRaw(req)
	}
	for _, rep := range reps {
		if rep.file == "" {
			t.Fatalf("%s: the document has no file; the file path is not exercised", rep.name)
		}
		other := bytes.Repeat([]byte("x"), len(rep.body))
		if err := os.WriteFile(rep.file, other, 0o640); err != nil {
			t.Fatal(err)
		}
		if r := get(rep.encoding); r.Status != http.StatusOK || !bytes.Equal(r.Body, rep.body) {
			t.Errorf("%s, %d bytes (under the threshold): %d, %d bytes, from the file: %v; want the bytes in memory",
				rep.name, len(rep.body), r.Status, len(r.Body), bytes.Equal(r.Body, other))
		}
		restore := server.SetSendfileMin(0)
		if r := get(rep.encoding); !bytes.Equal(r.Body, other) {
			t.Errorf("%s at threshold 0: %d, %d bytes, not the file's; want the file (sendfile path)", rep.name, r.Status, len(r.Body))
		}
		if err := os.WriteFile(rep.file, append(bytes.Clone(rep.body), "trailing garbage"...), 0o640); err != nil {
			t.Fatal(err)
		}
		if r := get(rep.encoding); r.Status != http.StatusOK || !bytes.Equal(r.Body, rep.body) {
			t.Errorf("%s at threshold 0, file of another size: %d, %d bytes; want the %d bytes in memory", rep.name, r.Status, len(r.Body), len(rep.body))
		}
		restore()
	}
}

// written waits (at most 5 s) for a document file written in the background; "" if none.
func written(file func() string) string {
	for range 500 {
		if p := file(); p != "" {
			return p
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ""
}
