package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// Mark is the seeding progress at one point: Done packages after At.
type Mark struct {
	Done int
	At   time.Duration
}

// CheckLoopback refuses a base URL whose host is not a loopback address: the generator and
// the seeders only ever talk to a registry started on this machine.
func CheckLoopback(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("catalog: registry URL %q: %w", base, err)
	}
	switch u.Hostname() {
	case "127.0.0.1", "::1", "localhost":
		return nil
	}
	return fmt.Errorf("catalog: registry URL %q is not loopback: seed only a registry on 127.0.0.1", base)
}

// SeedHTTP publishes every package of rep through POST /api/v1/packages of the registry
// at base (loopback only) with the admin token, from clients concurrent clients, and
// returns a Mark every `every` packages (and at the end). A publish answered anything but
// 201 stops the seeding with its status and body.
func SeedHTTP(ctx context.Context, base, token string, rep *Report, clients, every int) ([]Mark, error) {
	if err := CheckLoopback(base); err != nil {
		return nil, err
	}
	c := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		mu         sync.Mutex
		marks      []Mark
		firstErr   error
		wg         sync.WaitGroup
	)
	start := time.Now()
	for range max(1, clients) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(rep.Packages) {
					return
				}
				err := publishFile(ctx, c, base, token, rep.Packages[i])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if n := int(done.Add(1)); err == nil && (n%every == 0 || n == len(rep.Packages)) {
					marks = append(marks, Mark{Done: n, At: time.Since(start)})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return marks, firstErr
	}
	return marks, ctx.Err()
}

func publishFile(ctx context.Context, c *http.Client, base, token, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	status, body, err := Post(ctx, c, base, token, filepath.Base(path), data)
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		return fmt.Errorf("catalog: publish %s: status %d: %.300s", filepath.Base(path), status, body)
	}
	return nil
}

// Post uploads one package to POST base/api/v1/packages as multipart form field
// "package" and returns the status and the answer's body.
func Post(ctx context.Context, c *http.Client, base, token, name string, data []byte) (int, []byte, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("package", name)
	if err != nil {
		return 0, nil, err
	}
	_, _ = fw.Write(data)
	if err := mw.Close(); err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/packages", &body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("catalog: publish %s: %w", name, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, out, err
}

// SeedStore is the fast mode for big catalogues: every package of rep is checked by
// verify.Package (the same package checks as a publish) and recorded with
// store.InsertRelease (blob, row, serial, audit entry and transparency-log leaf, as a
// publish records them) in the data directory dir, which no registry may be serving.
// What it bypasses: HTTP and authentication, the plugins.yaml authorisation and signature
// policy checks, and the index build after each publish (the registry builds once, when
// `registry serve` starts on dir). Releases get no card here: serve computes it at start
// for releases that lack one, as for releases stored before cards existed.
func SeedStore(ctx context.Context, dir string, rep *Report, every int) ([]Mark, error) {
	st, err := store.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("catalog: open %s: %w", dir, err)
	}
	defer st.Close()
	var marks []Mark
	start := time.Now()
	for i, p := range rep.Packages {
		if err := ctx.Err(); err != nil {
			return marks, err
		}
		if err := storeOne(ctx, st, p); err != nil {
			return marks, err
		}
		if n := i + 1; n%every == 0 || n == len(rep.Packages) {
			marks = append(marks, Mark{Done: n, At: time.Since(start)})
		}
	}
	return marks, nil
}

func storeOne(ctx context.Context, st *store.Store, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	name := filepath.Base(path)
	rep, err := Verify(ctx, name, data)
	if err != nil {
		return err
	}
	rel := &store.Release{PackageID: rep.ID, Version: rep.Version, Kind: rep.Kind, SHA256: rep.SHA256, Size: rep.Size,
		Manifest: rep.ManifestRaw, Warnings: rep.Problems.Warnings(), PublishedBy: "bench", Facts: &store.Facts{}}
	if rep.Checksums != nil {
		lines, _ := verify.ParseChecksums(rep.Checksums)
		rel.Facts.Checksums = &store.ChecksumFacts{Files: len(lines)}
	}
	if err := rel.SetREADME(rep.README); err != nil {
		return err
	}
	sha, err := st.Blobs.Put(data)
	if err != nil {
		return fmt.Errorf("catalog: store %s: %w", name, err)
	}
	if sha != rep.SHA256 {
		return fmt.Errorf("catalog: %s: stored sha256 %s, verify read %s", name, sha, rep.SHA256)
	}
	audit := store.AuditEntry{Actor: "bench", Action: "publish", Target: rep.ID + "@" + rep.Version, Outcome: "ok",
		Detail: map[string]any{"sha256": rep.SHA256, "size": rep.Size, "seed": "store"}}
	if _, err := st.InsertRelease(ctx, rel, audit); err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("catalog: record %s: %w", name, err)
	}
	return nil
}

// Verify runs the registry's package verification on one package and refuses it unless
// it passes.
func Verify(ctx context.Context, name string, data []byte) (*verify.Report, error) {
	rep, err := verify.Package(ctx, bytes.NewReader(data), verify.Options{FileName: name, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()})
	if err != nil {
		return nil, fmt.Errorf("catalog: verify %s: %w", name, err)
	}
	if !rep.OK() {
		return rep, fmt.Errorf("catalog: %s is invalid: %v", name, rep.Problems.Errors())
	}
	return rep, nil
}
