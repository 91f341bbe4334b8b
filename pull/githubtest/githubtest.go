// Package githubtest is an in-process fake of the few GitHub REST endpoints pull sync
// reads: GET /repos/{owner}/{repo}, GET /repos/{owner}/{repo}/releases/latest (both with
// ETags and If-None-Match), GET /repositories/{id} (where a renamed repository's old name
// redirects), and asset downloads, which redirect once to an object URL as GitHub's do.
// Every request is recorded, and rate-limit answers can be queued.
package githubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Repo is a fake repository.
type Repo struct {
	ID       int64
	OwnerID  int64
	FullName string // owner/name GitHub answers with; default the name it was set under
	Stars    int
	PushedAt time.Time
}

// Asset is a file attached to a release.
type Asset struct {
	Name string
	Data []byte
}

// Request is one request the fake received.
type Request struct {
	Path          string
	IfNoneMatch   string
	Authorization string
	Accept        string
	UserAgent     string
	Status        int
}

// Answer is a canned answer: status and headers (a rate limit, say).
type Answer struct {
	Status int
	Header http.Header
}

// Server is the fake API; its URL is the API base.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	repos    map[string]*repo // by lower-cased owner/name
	renamed  map[string]int64 // old lower-cased owner/name → repository id
	objects  map[string][]byte
	away     map[string]string // lower-cased owner/name → base its downloads redirect to
	queued   []Answer
	requests []Request
}

type repo struct {
	Repo
	tag    string
	assets []Asset
}

// New starts a fake; the caller closes it.
func New() *Server {
	s := &Server{repos: map[string]*repo{}, renamed: map[string]int64{}, objects: map[string][]byte{}, away: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func key(name string) string {
	owner, rest, _ := strings.Cut(name, "/")
	return strings.ToLower(owner) + "/" + rest
}

// SetRepo creates or replaces the repository name ("owner/name"), keeping its release.
func (s *Server) SetRepo(name string, r Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.FullName == "" {
		r.FullName = name
	}
	old := s.repos[key(name)]
	n := &repo{Repo: r}
	if old != nil {
		n.tag, n.assets = old.tag, old.assets
	}
	s.repos[key(name)] = n
}

// Rename moves a repository to a new name; the old name redirects (301) to
// /repositories/{id}, as GitHub does.
func (s *Server) Rename(from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[key(from)]
	delete(s.repos, key(from))
	r.FullName = to
	s.repos[key(to)] = r
	s.renamed[key(from)] = r.ID
}

// SetRelease makes tag, with assets, the latest release of name (or of what name was
// renamed to); an empty tag removes it.
func (s *Server) SetRelease(name, tag string, assets ...Asset) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[key(name)]
	if id, moved := s.renamed[key(name)]; r == nil && moved {
		for _, rp := range s.repos {
			if rp.ID == id {
				r = rp
			}
		}
	}
	r.tag, r.assets = tag, assets
	for _, a := range assets {
		s.objects[digest(a.Data)] = a.Data
	}
}

// RedirectDownloads makes the asset downloads of name redirect to base + /objects/{sha256}
// (another server) instead of this one, as a release whose assets live elsewhere would.
func (s *Server) RedirectDownloads(name, base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.away[key(name)] = base
}

// Queue answers the next API requests (not downloads) with these answers, in order.
func (s *Server) Queue(answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = append(s.queued, answers...)
}

// Requests returns the requests received so far and forgets them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.requests
	s.requests = nil
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	s.route(rec, r)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, IfNoneMatch: r.Header.Get("If-None-Match"),
		Authorization: r.Header.Get("Authorization"), Accept: r.Header.Get("Accept"),
		UserAgent: r.Header.Get("User-Agent"), Status: rec.status})
	s.mu.Unlock()
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "objects":
		s.serveObject(w, parts[1])
	case len(parts) == 5 && parts[0] == "download":
		s.serveDownload(w, r, parts[1]+"/"+parts[2], parts[3], parts[4])
	case s.answerQueued(w):
	case len(parts) == 3 && parts[0] == "repos":
		s.serveRepo(w, r, parts[1]+"/"+parts[2])
	case len(parts) == 5 && parts[0] == "repos" && parts[3] == "releases" && parts[4] == "latest":
		s.serveLatest(w, r, parts[1]+"/"+parts[2])
	case len(parts) == 2 && parts[0] == "repositories":
		s.serveRepoByID(w, r, parts[1])
	default:
		notFound(w)
	}
}

func (s *Server) answerQueued(w http.ResponseWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queued) == 0 {
		return false
	}
	a := s.queued[0]
	s.queued = s.queued[1:]
	for k, v := range a.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.Status)
	_, _ = w.Write([]byte(`{"message":"API rate limit exceeded"}`))
	return true
}

// lookup finds a repository by name: found, or moved (renamed: its id), or neither.
func (s *Server) lookup(name string) (*repo, int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.repos[key(name)]; ok {
		cp := *r
		return &cp, 0, true
	}
	id, moved := s.renamed[key(name)]
	return nil, id, moved && id != 0
}

// byID finds a repository by id.
func (s *Server) byID(id string) *repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rp := range s.repos {
		if strconv.FormatInt(rp.ID, 10) == id {
			cp := *rp
			return &cp
		}
	}
	return nil
}

func (s *Server) serveRepo(w http.ResponseWriter, r *http.Request, name string) {
	rp, movedID, ok := s.lookup(name)
	switch {
	case !ok:
		notFound(w)
	case rp == nil:
		http.Redirect(w, r, "/repositories/"+strconv.FormatInt(movedID, 10), http.StatusMovedPermanently)
	default:
		writeJSON(w, r, repoJSON(rp))
	}
}

func (s *Server) serveRepoByID(w http.ResponseWriter, r *http.Request, id string) {
	found := s.byID(id)
	if found == nil {
		notFound(w)
		return
	}
	writeJSON(w, r, repoJSON(found))
}

func repoJSON(r *repo) map[string]any {
	owner, _, _ := strings.Cut(r.FullName, "/")
	v := map[string]any{"id": r.ID, "full_name": r.FullName, "stargazers_count": r.Stars,
		"owner": map[string]any{"id": r.OwnerID, "login": owner}, "pushed_at": nil}
	if !r.PushedAt.IsZero() {
		v["pushed_at"] = r.PushedAt.UTC().Format(time.RFC3339)
	}
	return v
}

func (s *Server) serveLatest(w http.ResponseWriter, r *http.Request, name string) {
	rp, movedID, ok := s.lookup(name)
	if ok && rp == nil {
		rp = s.byID(strconv.FormatInt(movedID, 10)) // GitHub follows the rename too
	}
	if rp == nil || rp.tag == "" {
		notFound(w)
		return
	}
	assets := make([]map[string]any, 0, len(rp.assets))
	for _, a := range rp.assets {
		assets = append(assets, map[string]any{"name": a.Name, "size": len(a.Data),
			"browser_download_url": fmt.Sprintf("%s/download/%s/%s/%s", s.URL, rp.FullName, rp.tag, a.Name)})
	}
	writeJSON(w, r, map[string]any{"tag_name": rp.tag, "html_url": s.URL + "/" + rp.FullName + "/releases/tag/" + rp.tag, "assets": assets})
}

// serveDownload answers /download/{owner}/{name}/{tag}/{file} with a
// redirect to the object holding the bytes.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request, name, tag, file string) {
	rp, _, _ := s.lookup(name)
	if rp == nil || rp.tag != tag {
		notFound(w)
		return
	}
	s.mu.Lock()
	base := s.away[key(name)]
	s.mu.Unlock()
	for _, a := range rp.assets {
		if a.Name == file {
			http.Redirect(w, r, base+"/objects/"+digest(a.Data), http.StatusFound)
			return
		}
	}
	notFound(w)
}

func (s *Server) serveObject(w http.ResponseWriter, sha string) {
	s.mu.Lock()
	data, ok := s.objects[sha]
	s.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// writeJSON answers v with a strong ETag of its bytes, or 304 when If-None-Match has it.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	etag := `"` + digest(body)[:32] + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("X-RateLimit-Remaining", "4999")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"message":"Not Found"}`))
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// recorder remembers the status written.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
