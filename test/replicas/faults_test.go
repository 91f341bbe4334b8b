package replicas_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pluginyard/registry/test/replicas"
)

// TestKillReplicaDuringPublishes: three writers publish new versions round robin over the
// three replicas; replica 0 is SIGKILLed in the middle. Every publish acknowledged with 201
// (by any replica, the killed one included) is then listed by both survivors with the
// bytes sent, and downloads whole from each; so is every version they list. Replica 0,
// started again on its data directory, agrees.
func TestKillReplicaDuringPublishes(t *testing.T) {
	c := startThree(t, replicas.Options{})
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	const perWriter = 12
	var (
		mu    sync.Mutex
		acked = map[string]string{} // id@version → sha256 of the bytes acknowledged
		sent  atomic.Int64
		wg    sync.WaitGroup
	)
	pkgs := make([][]replicas.Package, len(testPlugins))
	for w, p := range testPlugins {
		for k := range perWriter {
			pkgs[w] = append(pkgs[w], mustPackage(t, p.ID, fmt.Sprintf("7.0.%d", k), 0, 64<<10+rng.IntN(192<<10)))
		}
	}
	for w := range testPlugins {
		wg.Go(func() {
			for k, pkg := range pkgs[w] {
				r := c.Replicas[(w+k)%3]
				sent.Add(1)
				a, err := replicas.Publish(r.URL, replicas.AdminToken, pkg)
				switch {
				case err != nil && r.Index == 0:
					continue // killed under it: not acknowledged
				case err != nil:
					t.Errorf("publish %s@%s on surviving replica %d: %v", pkg.ID, pkg.Version, r.Index, err)
				case a.Status == http.StatusCreated:
					mu.Lock()
					acked[pkg.ID+"@"+pkg.Version] = pkg.SHA256()
					mu.Unlock()
				case r.Index != 0 || !r.Exited():
					t.Errorf("publish %s@%s on replica %d: %s, want 201", pkg.ID, pkg.Version, r.Index, a)
				}
			}
		})
	}
	// The kill lands after a random number of publishes were sent, a third to two thirds
	// of them: in the middle of the stream, whatever the machine's speed.
	killAt := int64(perWriter + rng.IntN(perWriter))
	for sent.Load() < killAt {
		time.Sleep(time.Millisecond)
	}
	if err := c.Replicas[0].Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	t.Logf("replica 0 SIGKILLed after %d of %d publishes were sent; %d acknowledged", killAt, 3*perWriter, len(acked))
	if len(acked) == 0 {
		t.Fatal("no publish was acknowledged")
	}
	for _, r := range c.Replicas[1:] {
		waitListed(t, r.URL, acked)
		checkDownloads(t, r.URL, acked)
		checkListedWhole(t, r.URL)
	}
	r0 := c.StartReplica(0)
	waitListed(t, r0.URL, acked)
	checkDownloads(t, r0.URL, acked)
}

// waitListed waits until the replica at base lists every acknowledged id@version.
func waitListed(t *testing.T, base string, acked map[string]string) {
	t.Helper()
	d, err := eventually(10*time.Second, func() error {
		for k := range acked {
			id, version, _ := strings.Cut(k, "@")
			rels, err := replicas.Releases(base, id)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(rels, func(r replicas.Release) bool { return r.Version == version }) {
				return fmt.Errorf("acknowledged %s is not listed", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", base, err)
	}
	t.Logf("%s lists all %d acknowledged publishes after %s", base, len(acked), d.Round(time.Millisecond))
}

// checkListedWhole downloads every version the replica at base lists and checks its bytes
// against the listed digest: nothing half-stored is listed.
func checkListedWhole(t *testing.T, base string) {
	t.Helper()
	for _, p := range testPlugins {
		rels, err := replicas.Releases(base, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range rels {
			sha, n, err := replicas.Download(base, rel)
			if err != nil || sha != rel.SHA256 || n != rel.Size {
				t.Errorf("%s: %s@%s listed (%d bytes, sha256 %s) downloads %d bytes sha256 %s (%v)", base, p.ID, rel.Version, rel.Size, rel.SHA256, n, sha, err)
			}
		}
	}
}

// outage is how long the database is down; the issue says 10 s.
const outage = 10 * time.Second

// TestDatabaseStopUnderReadLoad: PostgreSQL is stopped for 10 s while readers poll
// index.json on all three replicas. Every read answers 200 with a whole document
// throughout (what the API, a page and a download answer meanwhile is logged: the issue
// asks only that reads answer from the last documents); a publish on each replica during the outage answers 503 with Retry-After;
// after the database is back, each replica (the same processes) accepts a publish again
// and every replica lists it.
func TestDatabaseStopUnderReadLoad(t *testing.T) {
	c := startThree(t, replicas.Options{})
	before := mustPackage(t, "replica-alpha", "8.0.0", 0, 4<<10)
	mustPublish(t, c.Replicas[0].URL, before)
	for _, r := range c.Replicas {
		if _, err := eventually(visibleWithin, func() error { return channels[1].check(r.URL, before) }); err != nil {
			t.Fatalf("replica %d: %v", r.Index, err)
		}
	}
	pids := make([]int, 3)
	for i, r := range c.Replicas {
		pids[i] = r.Pid()
	}
	stop := make(chan struct{})
	readers := startReaders(c, stop)
	if err := c.PG.Stop(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	t.Logf("PostgreSQL stopped")
	logOtherReads(t, c, before)
	for i, r := range c.Replicas {
		pkg := mustPackage(t, "replica-beta", fmt.Sprintf("8.1.%d", i), 0, 4<<10)
		began := time.Now()
		a, err := replicas.Publish(r.URL, replicas.AdminToken, pkg)
		if err != nil {
			t.Errorf("publish on replica %d with the database down: %v", i, err)
			continue
		}
		retry := a.Header.Get("Retry-After")
		if secs, err := strconv.Atoi(retry); a.Status != http.StatusServiceUnavailable || err != nil || secs < 1 {
			t.Errorf("publish on replica %d with the database down: %s, Retry-After %q; want 503 with Retry-After in seconds", i, a, retry)
		}
		t.Logf("replica %d answered a publish with the database down in %s: HTTP %d, Retry-After %s", i, time.Since(began).Round(time.Millisecond), a.Status, retry)
	}
	time.Sleep(time.Until(down.Add(outage)))
	if err := c.PG.Start(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	t.Logf("PostgreSQL started again after %s", up.Sub(down).Round(time.Millisecond))
	for i, r := range c.Replicas {
		pkg := mustPackage(t, "replica-gamma", fmt.Sprintf("8.2.%d", i), 0, 4<<10)
		var last replicas.Answer
		_, err := eventually(30*time.Second, func() error {
			a, err := replicas.Publish(r.URL, replicas.AdminToken, pkg)
			if err != nil {
				return err
			}
			last = a
			if a.Status != http.StatusCreated {
				return fmt.Errorf("%s", a)
			}
			return nil
		})
		if err != nil {
			t.Errorf("replica %d after the database came back: %v (last %s)", i, err, last)
			continue
		}
		t.Logf("replica %d accepted a publish %s after the database came back", i, time.Since(up).Round(time.Millisecond))
		for _, o := range c.Replicas {
			if _, err := eventually(visibleWithin, func() error { return channels[0].check(o.URL, pkg) }); err != nil {
				t.Errorf("%s@%s published on replica %d after the outage: replica %d: %v", pkg.ID, pkg.Version, i, o.Index, err)
			}
		}
	}
	close(stop)
	for i, r := range c.Replicas {
		if r.Exited() || r.Pid() != pids[i] {
			t.Errorf("replica %d did not survive the outage as the same process", i)
		}
		rd := readers[i]
		rd.mu.Lock()
		t.Logf("replica %d: %d index.json reads, %d during the outage, %d failed", i, rd.reads, rd.duringOutage(down, up), len(rd.failures))
		for _, f := range rd.failures[:min(len(rd.failures), 5)] {
			t.Errorf("replica %d: a read failed: %s", i, f)
		}
		if rd.duringOutage(down, up) == 0 {
			t.Errorf("replica %d answered no read while the database was down", i)
		}
		rd.mu.Unlock()
	}
}

// logOtherReads logs what the API, the plugin's page and a download of pkg answer on each
// replica while the database is down.
func logOtherReads(t *testing.T, c *replicas.Cluster, pkg replicas.Package) {
	t.Helper()
	for _, r := range c.Replicas {
		var got []string
		for _, path := range []string{"/api/v1/plugins/" + pkg.ID, "/plugins/" + pkg.ID, "/packages/" + pkg.ID + "/" + pkg.ID + "-" + pkg.Version + ".tar.gz"} {
			a, err := replicas.Get(r.URL + path)
			if err != nil {
				got = append(got, fmt.Sprintf("%s: %v", path, err))
				continue
			}
			got = append(got, fmt.Sprintf("%s: HTTP %d", path, a.Status))
		}
		t.Logf("replica %d with the database down: %s", r.Index, strings.Join(got, ", "))
	}
}

// reader polls one replica's index.json until stop, recording every answer that is not a
// 200 with a whole JSON document.
type reader struct {
	mu       sync.Mutex
	reads    int
	okAt     []time.Time
	failures []string
}

func (rd *reader) duringOutage(down, up time.Time) int {
	n := 0
	for _, at := range rd.okAt {
		if at.After(down) && at.Before(up) {
			n++
		}
	}
	return n
}

func startReaders(c *replicas.Cluster, stop chan struct{}) []*reader {
	out := make([]*reader, len(c.Replicas))
	for i, r := range c.Replicas {
		rd := &reader{}
		out[i] = rd
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				_, _, err := replicas.IndexOf(r.URL)
				now := time.Now()
				rd.mu.Lock()
				rd.reads++
				if err != nil {
					rd.failures = append(rd.failures, fmt.Sprintf("%s: %v", now.Format("15:04:05.000"), err))
				} else {
					rd.okAt = append(rd.okAt, now)
				}
				rd.mu.Unlock()
			}
		}()
	}
	return out
}

// TestBucketUnreachableDuringPublish: the bucket becomes unreachable in the middle of a
// package's upload (the connections to it cut after 512 KiB of a 3 MiB package), and then
// the S3 server is stopped (SIGKILL) before another's. Each publish answers 503 with Retry-After
// and stores nothing: no release or blob row in the database, no object or unfinished
// upload in the bucket, no replica lists it. With the bucket back, the same bytes publish
// with 201 and download whole from every replica.
func TestBucketUnreachableDuringPublish(t *testing.T) {
	c := startThree(t, replicas.Options{})
	cases := []struct {
		name string
		pkg  replicas.Package
		cut  func() error
	}{
		{"mid-upload", mustPackage(t, "replica-gamma", "9.0.0", 0, 3<<20), func() error { return c.Bucket.CutAfter(512 << 10) }},
		{"server stopped", mustPackage(t, "replica-gamma", "9.1.0", 0, 256<<10), c.Bucket.Stop},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			on := c.Replicas[1+i%2]
			if err := tc.cut(); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			a, err := replicas.Publish(on.URL, replicas.AdminToken, tc.pkg)
			if tc.name == "mid-upload" && !c.Bucket.CutOff() {
				t.Errorf("the publish ended (%v %v) before 512 KiB of its upload reached the bucket: the cut did not land in the upload", a, err)
			}
			if rerr := c.Bucket.Restore(); rerr != nil {
				t.Fatal(rerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			retry := a.Header.Get("Retry-After")
			if secs, err := strconv.Atoi(retry); a.Status != http.StatusServiceUnavailable || err != nil || secs < 1 {
				t.Errorf("publish with the bucket unreachable (%s): %s, Retry-After %q; want 503 with Retry-After in seconds", tc.name, a, retry)
			}
			t.Logf("replica %d answered HTTP %d (Retry-After %s) in %s with the bucket unreachable (%s)", on.Index, a.Status, retry, time.Since(began).Round(time.Millisecond), tc.name)
			checkAbsent(t, c, tc.pkg)
			a, err = replicas.Publish(on.URL, replicas.AdminToken, tc.pkg)
			if err != nil || a.Status != http.StatusCreated {
				t.Fatalf("re-publish with the bucket back: %v %v, want 201", a, err)
			}
			for _, r := range c.Replicas {
				if _, err := eventually(visibleWithin, func() error { return channels[1].check(r.URL, tc.pkg) }); err != nil {
					t.Errorf("replica %d: %v", r.Index, err)
					continue
				}
				checkDownloads(t, r.URL, map[string]string{tc.pkg.ID + "@" + tc.pkg.Version: tc.pkg.SHA256()})
			}
		})
	}
}

// checkAbsent checks that a refused publish left nothing: no rows, no objects, no listing.
func checkAbsent(t *testing.T, c *replicas.Cluster, pkg replicas.Package) {
	t.Helper()
	sha := pkg.SHA256()
	for query, arg := range map[string][]any{
		"SELECT count(*)::text FROM releases WHERE package_id = $1 AND version = $2": {pkg.ID, pkg.Version},
		"SELECT count(*)::text FROM blobs WHERE sha256 = $1":                         {sha},
	} {
		rows, err := replicas.Query(c.DatabaseURL, query, arg...)
		if err != nil {
			t.Fatal(err)
		}
		if rows[0][0] != "0" {
			t.Errorf("%s %v: %s rows after a refused publish, want 0", query, arg, rows[0][0])
		}
	}
	objects, incomplete, err := c.Bucket.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		if strings.Contains(o, sha) {
			t.Errorf("object %s of the refused package is in the bucket", o)
		}
	}
	if len(incomplete) > 0 {
		t.Errorf("unfinished uploads left in the bucket: %v", incomplete)
	}
	for _, r := range c.Replicas {
		rels, err := replicas.Releases(r.URL, pkg.ID)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(rels, func(rel replicas.Release) bool { return rel.Version == pkg.Version }) {
			t.Errorf("replica %d lists %s@%s after its publish was refused", r.Index, pkg.ID, pkg.Version)
		}
	}
}
