package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// trigger describes one trigger type this extension offers.
type trigger struct {
	name        string
	description string
	numberKey   string // the prompt field holding the issue or PR number
	pulls       bool   // true: pull requests only; false: issues only
}

var triggerList = []trigger{
	{"github-issue", "A new open issue in a repository, optionally with given labels.", "issue_number", false},
	{"github-pull-request", "A new open pull request in a repository, optionally with given labels.", "pr_number", true},
}

var repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// pair is one field of a polled item.
type pair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// config is an automation's table with defaults applied.
type config struct {
	Repo     string
	Labels   []string
	APIURL   string
	TokenEnv string
}

// github polls the GitHub REST API. Each (trigger, table) keeps the numbers it has already
// returned, so an item is handed to the host once per process.
type github struct {
	client *http.Client
	getenv func(string) string
	log    *slog.Logger

	mu     sync.Mutex
	seen   map[string]map[int]bool
	queues map[string][][]pair
}

func newGitHub(client *http.Client, getenv func(string) string, log *slog.Logger) *github {
	return &github{client: client, getenv: getenv, log: log, seen: map[string]map[int]bool{}, queues: map[string][][]pair{}}
}

func (g *github) lookup(name string) (trigger, bool) {
	for _, t := range triggerList {
		if t.name == name {
			return t, true
		}
	}
	return trigger{}, false
}

func (g *github) known(name string) bool { _, ok := g.lookup(name); return ok }

func (g *github) describe() []map[string]string {
	var out []map[string]string
	for _, t := range triggerList {
		out = append(out, map[string]string{"trigger_type": t.name, "description": t.description})
	}
	return out
}

func (g *github) schema(name string) (any, *rpcError) {
	t, ok := g.lookup(name)
	if !ok {
		return nil, errorf(codeInvalidParams, "unknown trigger type %q", name)
	}
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"repo"},
		"properties": map[string]any{
			"repo":      map[string]any{"type": "string", "pattern": repoRE.String(), "description": "owner/name of the repository", "examples": []string{"octocat/Hello-World"}},
			"labels":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "default": []string{}, "description": "only items with all of these labels"},
			"api_url":   map[string]any{"type": "string", "format": "uri", "default": "https://api.github.com", "description": "GitHub REST API base URL (GitHub Enterprise: https://HOST/api/v3)"},
			"token_env": map[string]any{"type": "string", "default": "GITHUB_TOKEN", "description": "environment variable holding a token; unset means anonymous"},
		},
	}
	fields := []string{t.numberKey, "title", "url", "author", "labels", "body"}
	return map[string]any{"schema": schema, "prompt_fields": fields}, nil
}

func (g *github) validate(name string, table map[string]any) (any, *rpcError) {
	if !g.known(name) {
		return nil, errorf(codeInvalidParams, "unknown trigger type %q", name)
	}
	if _, err := parseConfig(table); err != nil {
		return nil, err
	}
	return map[string]bool{"ok": true}, nil
}

// parseConfig checks a table and applies the defaults; a bad table is error -32003.
func parseConfig(table map[string]any) (config, *rpcError) {
	c := config{APIURL: "https://api.github.com", TokenEnv: "GITHUB_TOKEN"}
	var problems []string
	for k, v := range table {
		switch k {
		case "repo":
			c.Repo, _ = v.(string)
		case "labels":
			labels, ok := stringList(v)
			if !ok {
				problems = append(problems, "labels must be a list of strings")
			}
			c.Labels = labels
		case "api_url":
			c.APIURL, _ = v.(string)
		case "token_env":
			c.TokenEnv, _ = v.(string)
		default:
			problems = append(problems, fmt.Sprintf("unknown key %q (known: repo, labels, api_url, token_env)", k))
		}
	}
	if !repoRE.MatchString(c.Repo) {
		problems = append(problems, `repo must be "owner/name"`)
	}
	if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		problems = append(problems, "api_url must be an http(s) URL")
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return c, errorf(codeConfig, "invalid table: %s", strings.Join(problems, "; "))
	}
	return c, nil
}

func stringList(v any) ([]string, bool) {
	items, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// poll returns the next item not yet returned, fetching the open items when the queue is
// empty; values null ends the host's round.
func (g *github) poll(name string, table map[string]any) (any, *rpcError) {
	t, ok := g.lookup(name)
	if !ok {
		return nil, errorf(codeInvalidParams, "unknown trigger type %q", name)
	}
	c, rerr := parseConfig(table)
	if rerr != nil {
		return nil, rerr
	}
	key := fmt.Sprintf("%s|%s|%s|%s", t.name, c.APIURL, c.Repo, strings.Join(c.Labels, ","))
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queues[key]) == 0 {
		if err := g.fetch(key, t, c); err != nil {
			return nil, errorf(codeInternal, "fetch %s: %v", c.Repo, err)
		}
	}
	q := g.queues[key]
	if len(q) == 0 {
		return map[string]any{"values": nil}, nil
	}
	g.queues[key] = q[1:]
	return map[string]any{"values": q[0]}, nil
}

type ghItem struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	HTMLURL string `json:"html_url"`
	Body    string `json:"body"`
	User    struct {
		Login string `json:"login"`
	} `json:"user"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
	PullRequest json.RawMessage `json:"pull_request"`
}

// fetch lists open items oldest first and queues those not seen yet.
func (g *github) fetch(key string, t trigger, c config) error {
	q := url.Values{"state": {"open"}, "sort": {"created"}, "direction": {"asc"}, "per_page": {"50"}}
	if len(c.Labels) > 0 {
		q.Set("labels", strings.Join(c.Labels, ","))
	}
	endpoint := strings.TrimRight(c.APIURL, "/") + "/repos/" + c.Repo + "/issues?" + q.Encode()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, endpoint, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	if tok := g.getenv(c.TokenEnv); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GitHub answered %s", resp.Status)
	}
	var items []ghItem
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
		return fmt.Errorf("decode issues: %w", err)
	}
	g.enqueue(key, t, items)
	return nil
}

func (g *github) enqueue(key string, t trigger, items []ghItem) {
	if g.seen[key] == nil {
		g.seen[key] = map[int]bool{}
	}
	for _, it := range items {
		isPull := len(it.PullRequest) > 0 && string(it.PullRequest) != "null"
		if isPull != t.pulls || g.seen[key][it.Number] {
			continue
		}
		g.seen[key][it.Number] = true
		g.queues[key] = append(g.queues[key], itemPairs(t, it))
	}
	g.log.Info("fetched", "trigger_type", t.name, "new", len(g.queues[key]))
}

func itemPairs(t trigger, it ghItem) []pair {
	labels := make([]string, 0, len(it.Labels))
	for _, l := range it.Labels {
		labels = append(labels, l.Name)
	}
	return []pair{
		{t.numberKey, strconv.Itoa(it.Number)},
		{"title", it.Title},
		{"url", it.HTMLURL},
		{"author", it.User.Login},
		{"labels", strings.Join(labels, ",")},
		{"body", it.Body},
	}
}
