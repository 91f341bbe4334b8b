package replicas

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"strings"
	"testing/fstest"
	"time"

	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/problem"
)

// Client is the HTTP client of the tests and the benchmark: keep-alive, bounded.
var Client = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
	MaxIdleConnsPerHost: 64, DisableCompression: true,
}}

// Answer is one HTTP answer, read whole.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Problems are the problems of a refusal's JSON body.
func (a Answer) Problems() problem.List {
	var body struct {
		Problems problem.List `json:"problems"`
	}
	_ = json.Unmarshal(a.Body, &body)
	return body.Problems
}

// Rules are the rule ids of a refusal's problems.
func (a Answer) Rules() []string {
	var rules []string
	for _, p := range a.Problems() {
		rules = append(rules, p.Rule)
	}
	return rules
}

func (a Answer) String() string {
	body := string(a.Body)
	if len(body) > 600 {
		body = body[:600] + "…"
	}
	return fmt.Sprintf("HTTP %d %s", a.Status, strings.TrimSpace(body))
}

// Do sends one request and reads the whole answer; an answer cut short is an error.
func Do(req *http.Request) (Answer, error) {
	res, err := Client.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return Answer{}, fmt.Errorf("%s %s: read the answer: %w", req.Method, req.URL, err)
	}
	return Answer{Status: res.StatusCode, Header: res.Header, Body: body}, nil
}

// Get is GET url with optional header pairs (name, value, ...).
func Get(url string, header ...string) (Answer, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return Answer{}, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return Do(req)
}

// Post is POST url with a body of the given content type and optional bearer token.
func Post(url, contentType, token string, body []byte) (Answer, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Answer{}, err
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return Do(req)
}

// Publish is POST /api/v1/packages of pkg on the registry at base with token.
func Publish(base, token string, pkg Package) (Answer, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("package", pkg.ID+"-"+pkg.Version+".tar.gz")
	if err != nil {
		return Answer{}, err
	}
	if _, err := fw.Write(pkg.Data); err != nil {
		return Answer{}, err
	}
	if err := mw.Close(); err != nil {
		return Answer{}, err
	}
	return Post(base+"/api/v1/packages", mw.FormDataContentType(), token, body.Bytes())
}

// Package is a package file and what it is.
type Package struct {
	ID, Version string
	Data        []byte
}

// SHA256 is the hex digest of the package's bytes.
func (p Package) SHA256() string {
	sum := sha256.Sum256(p.Data)
	return hex.EncodeToString(sum[:])
}

// NewPackage is a valid managed plugin id@version whose bytes depend only on id, version
// and variant (another variant: the same version with different bytes), with payload
// bytes of incompressible executable, so an upload of it is payload bytes on the wire.
func NewPackage(id, version string, variant, payload int) (Package, error) {
	seed := sha256.Sum256([]byte(fmt.Sprintf("%s@%s#%d", id, version, variant)))
	r := rand.New(rand.NewChaCha8(seed))
	exe := make([]byte, payload)
	for i := 0; i+8 <= len(exe); i += 8 {
		binary.LittleEndian.PutUint64(exe[i:], r.Uint64())
	}
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Replica test\n" +
		"description: A package of the multi-replica tests\nauthor: Replicas\ncategories: [tools]\n" +
		"runtime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: exe, Mode: 0o755},
		"README.md":                 {Data: []byte("# Replica test\n\nA package of the multi-replica tests.\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		return Package{}, fmt.Errorf("replicas: pack %s@%s: %w", id, version, err)
	}
	return Package{ID: id, Version: version, Data: buf.Bytes()}, nil
}

// Release is a version as GET /api/v1/plugins/{id} lists it.
type Release struct {
	Version    string `json:"version"`
	SHA256     string `json:"sha256"`
	Size       int64  `json:"size"`
	PackageURL string `json:"package_url"`
}

// Releases lists id's versions on the replica at base (nil, nil when id has none).
func Releases(base, id string) ([]Release, error) {
	a, err := Get(base + "/api/v1/plugins/" + id)
	if err != nil {
		return nil, err
	}
	if a.Status == http.StatusNotFound {
		return nil, nil
	}
	if a.Status != http.StatusOK {
		return nil, fmt.Errorf("GET %s/api/v1/plugins/%s: %s", base, id, a)
	}
	var detail struct {
		Versions []Release `json:"versions"`
	}
	if err := json.Unmarshal(a.Body, &detail); err != nil {
		return nil, fmt.Errorf("GET %s/api/v1/plugins/%s: %w", base, id, err)
	}
	return detail.Versions, nil
}

// Download fetches a release's package from the replica at base (its package_url names
// the shared public URL) and returns the digest and size of the bytes received.
func Download(base string, rel Release) (string, int64, error) {
	url := strings.Replace(rel.PackageURL, PublicURL, base, 1)
	res, err := Client.Get(url)
	if err != nil {
		return "", 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("GET %s: HTTP %d", url, res.StatusCode)
	}
	h := sha256.New()
	n, err := io.Copy(h, res.Body)
	if err != nil {
		return "", 0, fmt.Errorf("GET %s: %w", url, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Index is what the tests read of index.json.
type Index struct {
	Serial  int64 `json:"serial"`
	Plugins []struct {
		ID      string `json:"id"`
		Version string `json:"version"`
	} `json:"plugins"`
}

// IndexOf fetches and decodes index.json of the replica at base.
func IndexOf(base string) (Index, Answer, error) {
	a, err := Get(base + "/index.json")
	if err != nil {
		return Index{}, a, err
	}
	if a.Status != http.StatusOK {
		return Index{}, a, fmt.Errorf("GET %s/index.json: %s", base, a)
	}
	var idx Index
	if err := json.Unmarshal(a.Body, &idx); err != nil {
		return Index{}, a, fmt.Errorf("GET %s/index.json: %w", base, err)
	}
	return idx, a, nil
}

// Lists says whether the index lists id at version.
func (idx Index) Lists(id, version string) bool {
	for _, p := range idx.Plugins {
		if p.ID == id && p.Version == version {
			return true
		}
	}
	return false
}

// BuildStats are a replica's counts of how the documents of each serial came to be in
// force: built by it (it held the build lock), loaded from the documents another stored,
// built after waiting in vain for the lock's holder, built and not shared.
type BuildStats struct {
	Applied   int64 `json:"applied_serial"`
	Built     int64 `json:"documents_built"`
	Loaded    int64 `json:"documents_loaded"`
	Fallbacks int64 `json:"documents_fallback"`
	Local     int64 `json:"documents_local"`
}

// Minus is the counts since o.
func (s BuildStats) Minus(o BuildStats) BuildStats {
	return BuildStats{Applied: s.Applied, Built: s.Built - o.Built, Loaded: s.Loaded - o.Loaded,
		Fallbacks: s.Fallbacks - o.Fallbacks, Local: s.Local - o.Local}
}

// Plus is the sum of the counts.
func (s BuildStats) Plus(o BuildStats) BuildStats {
	return BuildStats{Applied: max(s.Applied, o.Applied), Built: s.Built + o.Built, Loaded: s.Loaded + o.Loaded,
		Fallbacks: s.Fallbacks + o.Fallbacks, Local: s.Local + o.Local}
}

// BuildStatsOf reads the "replica" object of /readyz on the replica at base.
func BuildStatsOf(base string) (BuildStats, error) {
	a, err := Get(base + "/readyz")
	if err != nil {
		return BuildStats{}, err
	}
	var r struct {
		Replica *BuildStats `json:"replica"`
	}
	if err := json.Unmarshal(a.Body, &r); err != nil {
		return BuildStats{}, fmt.Errorf("GET %s/readyz: %w", base, err)
	}
	if r.Replica == nil {
		return BuildStats{}, fmt.Errorf("MISSING: %s/readyz has no \"replica\" object (documents_built, documents_loaded: issue #16, one build per serial): %s", base, a)
	}
	return *r.Replica, nil
}
