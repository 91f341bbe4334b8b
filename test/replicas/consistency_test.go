package replicas_test

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/test/replicas"
)

// visibleWithin is the bound: a publish on any replica is visible on every
// replica within 2 s.
const visibleWithin = 2 * time.Second

// TestReplicasAsOne is acceptance 4 of issue #16 on one cluster of three replicas started
// together against a fresh database and bucket; the subtests run in order on it.
func TestReplicasAsOne(t *testing.T) {
	c := startThree(t, replicas.Options{})
	t.Run("migrations_once", func(t *testing.T) { testMigrationsOnce(t, c) })
	t.Run("publish_visible_everywhere", func(t *testing.T) { testVisibleEverywhere(t, c) })
	t.Run("identical_index", func(t *testing.T) { testIdenticalIndex(t, c) })
	t.Run("one_build_per_serial", func(t *testing.T) { testOneBuildPerSerial(t, c) })
	t.Run("racing_publishes_one_winner", func(t *testing.T) { testRacingPublishes(t, c) })
}

// testMigrationsOnce: the three replicas started at the same moment on an empty database
// (Start launches them together) all came up, and each PostgreSQL migration of the
// repository is recorded exactly once. Without the migration lock two replicas would
// create the same tables at once and one would fail to start.
func testMigrationsOnce(t *testing.T, c *replicas.Cluster) {
	files, err := filepath.Glob(filepath.Join("..", "..", "migrations", "postgres", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("MISSING: no migrations/postgres/*.sql in the repository (%v)", err)
	}
	want := map[string]string{}
	for _, f := range files {
		num, _, _ := strings.Cut(filepath.Base(f), "_")
		n, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("migration file %s: %v", f, err)
		}
		want[strconv.Itoa(n)] = "1"
	}
	rows, err := replicas.Query(c.DatabaseURL, "SELECT version::text, count(*)::text FROM schema_migrations GROUP BY version")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]] = r[1]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema_migrations after three replicas started together: version → times recorded (-want +got):\n%s", diff)
	}
}

// testVisibleEverywhere publishes on each replica in turn and measures, on every replica,
// when index.json, the API and the plugin's page show the new version.
func testVisibleEverywhere(t *testing.T, c *replicas.Cluster) {
	for i, on := range c.Replicas {
		pkg := mustPackage(t, testPlugins[i].ID, fmt.Sprintf("3.1.%d", 40+i), 0, 8<<10)
		mustPublish(t, on.URL, pkg)
		acked := time.Now()
		var wg sync.WaitGroup
		for _, r := range c.Replicas {
			for _, ch := range channels {
				wg.Go(func() {
					d, err := eventually(visibleWithin, func() error { return ch.check(r.URL, pkg) })
					if err != nil {
						t.Errorf("%s@%s published on replica %d: not in the %s of replica %d after %s: %v", pkg.ID, pkg.Version, on.Index, ch.name, r.Index, d.Round(time.Millisecond), err)
						return
					}
					t.Logf("published on replica %d, in the %s of replica %d after %s", on.Index, ch.name, r.Index, time.Since(acked).Round(time.Millisecond))
				})
			}
		}
		wg.Wait()
	}
}

// channels are the three ways a reader sees a release.
var channels = []struct {
	name  string
	check func(base string, pkg replicas.Package) error
}{
	{"index.json", func(base string, pkg replicas.Package) error {
		idx, _, err := replicas.IndexOf(base)
		if err == nil && !idx.Lists(pkg.ID, pkg.Version) {
			err = fmt.Errorf("serial %d lists no %s@%s", idx.Serial, pkg.ID, pkg.Version)
		}
		return err
	}},
	{"API", func(base string, pkg replicas.Package) error {
		rels, err := replicas.Releases(base, pkg.ID)
		for _, r := range rels {
			if r.Version == pkg.Version && r.SHA256 == pkg.SHA256() {
				return nil
			}
		}
		return fmt.Errorf("GET /api/v1/plugins/%s lists %d versions, not %s (%v)", pkg.ID, len(rels), pkg.Version, err)
	}},
	{"page", func(base string, pkg replicas.Package) error {
		a, err := replicas.Get(base + "/plugins/" + pkg.ID)
		if err == nil && (a.Status != http.StatusOK || !bytes.Contains(a.Body, []byte(pkg.Version))) {
			err = fmt.Errorf("GET /plugins/%s: HTTP %d, mentions %s: %t", pkg.ID, a.Status, pkg.Version, bytes.Contains(a.Body, []byte(pkg.Version)))
		}
		return err
	}},
}

// testIdenticalIndex: once the replicas agree on the serial, index.json is the same bytes
// with the same ETag everywhere, plain and gzip, and one replica's ETag revalidates on the
// others (304), as a CDN in front of them relies on. Then replica 2 is restarted more than
// a second later (documents carry their build time, generated_at, to the second): it
// serves that serial's stored bytes too, not a build of its own.
func testIdenticalIndex(t *testing.T, c *replicas.Cluster) {
	for i, r := range c.Replicas {
		mustPublish(t, r.URL, mustPackage(t, testPlugins[i].ID, "3.2.0", 0, 4<<10))
	}
	waitSameSerial(t, c, "3.2.0")
	compareIndexes(t, c)
	time.Sleep(1100 * time.Millisecond)
	if err := c.Replicas[2].Stop(); err != nil {
		t.Fatal(err)
	}
	c.StartReplica(2)
	waitSameSerial(t, c, "3.2.0")
	t.Log("after replica 2 restarted:")
	compareIndexes(t, c)
}

// waitSameSerial waits until every replica lists version of every test plugin at one serial.
func waitSameSerial(t *testing.T, c *replicas.Cluster, version string) {
	t.Helper()
	_, err := eventually(5*time.Second, func() error {
		serials := map[int64]bool{}
		for _, r := range c.Replicas {
			idx, _, err := replicas.IndexOf(r.URL)
			if err != nil {
				return err
			}
			for _, p := range testPlugins {
				if !idx.Lists(p.ID, version) {
					return fmt.Errorf("replica %d serial %d does not list %s@%s yet", r.Index, idx.Serial, p.ID, version)
				}
			}
			serials[idx.Serial] = true
		}
		if len(serials) != 1 {
			return fmt.Errorf("the replicas serve serials %v", serials)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compareIndexes compares index.json of every replica with replica 0's, plain and gzip.
func compareIndexes(t *testing.T, c *replicas.Cluster) {
	t.Helper()
	for _, enc := range []string{"identity", "gzip"} {
		var first replicas.Answer
		for _, r := range c.Replicas {
			a, err := replicas.Get(r.URL+"/index.json", "Accept-Encoding", enc)
			if err != nil || a.Status != http.StatusOK {
				t.Fatalf("replica %d index.json (%s): %v %v", r.Index, enc, a, err)
			}
			if r.Index == 0 {
				first = a
				t.Logf("index.json (%s): %d bytes, ETag %s", enc, len(a.Body), a.Header.Get("ETag"))
				continue
			}
			if got, want := a.Header.Get("ETag"), first.Header.Get("ETag"); got != want || want == "" {
				t.Errorf("index.json (%s): replica %d ETag %s, replica 0 ETag %s", enc, r.Index, got, want)
			}
			if !bytes.Equal(a.Body, first.Body) {
				t.Errorf("index.json (%s): replica %d serves %d bytes that differ from replica 0's %d bytes%s", enc, r.Index, len(a.Body), len(first.Body), firstDiff(first.Body, a.Body))
			}
		}
		for _, r := range c.Replicas[1:] {
			a, err := replicas.Get(r.URL+"/index.json", "Accept-Encoding", enc, "If-None-Match", first.Header.Get("ETag"))
			if err != nil || a.Status != http.StatusNotModified {
				t.Errorf("index.json (%s) on replica %d with replica 0's ETag: %v %v, want 304", enc, r.Index, a, err)
			}
		}
	}
}

// firstDiff shows where two documents part (identity encoding), to name the field.
func firstDiff(a, b []byte) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	from := max(0, n-60)
	return fmt.Sprintf(": first difference at byte %d: %q vs %q", n, a[from:min(len(a), n+40)], b[from:min(len(b), n+40)])
}

// testOneBuildPerSerial publishes four times, round robin over the replicas, and checks
// that each serial's documents were built by exactly one replica: the builds the three
// replicas count (/readyz "replica") add up to the serials stored in the documents table
// in that window, one row per serial, and no replica built a serial another held the
// build lock for (fallback) or kept a build to itself (local).
func testOneBuildPerSerial(t *testing.T, c *replicas.Cluster) {
	before := buildCounts(t, c)
	first := serialOf(t, c.Replicas[0].URL)
	const publishes = 4
	for k := range publishes {
		mustPublish(t, c.Replicas[k%3].URL, mustPackage(t, testPlugins[k%3].ID, fmt.Sprintf("3.3.%d", k), 0, 4<<10))
	}
	var last int64
	if _, err := eventually(5*time.Second, func() error {
		last = serialOf(t, c.Replicas[0].URL)
		for _, r := range c.Replicas[1:] {
			if s := serialOf(t, r.URL); s != last {
				return fmt.Errorf("replica %d serves serial %d, replica 0 %d", r.Index, s, last)
			}
		}
		if last < first+publishes {
			return fmt.Errorf("serial %d, want at least %d", last, first+publishes)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after := buildCounts(t, c)
	rows, err := replicas.Query(c.DatabaseURL, "SELECT serial::text, built_by FROM documents WHERE name = 'kandev' AND serial > $1 AND serial <= $2 ORDER BY documents.serial", first, last)
	if err != nil {
		t.Fatal(err)
	}
	var sum replicas.BuildStats
	for i := range c.Replicas {
		d := after[i].Minus(before[i])
		sum = sum.Plus(d)
		t.Logf("replica %d, serials %d→%d: built %d, loaded %d, fallback %d, local %d", i, first, last, d.Built, d.Loaded, d.Fallbacks, d.Local)
		if d.Built+d.Loaded+d.Fallbacks+d.Local == 0 {
			t.Errorf("replica %d serves serial %d but neither built nor loaded documents since serial %d", i, last, first)
		}
	}
	t.Logf("documents stored for serials %d→%d (serial, built by): %v", first, last, rows)
	if sum.Built != int64(len(rows)) || sum.Built == 0 {
		t.Errorf("the replicas built %d document sets for serials %d→%d, and %d serials' documents are stored: want one build per stored serial", sum.Built, first, last, len(rows))
	}
	if sum.Fallbacks != 0 || sum.Local != 0 {
		t.Errorf("%d fallback and %d local builds for serials %d→%d: a serial was built by a replica that did not hold its build lock", sum.Fallbacks, sum.Local, first, last)
	}
}

func buildCounts(t *testing.T, c *replicas.Cluster) []replicas.BuildStats {
	t.Helper()
	out := make([]replicas.BuildStats, len(c.Replicas))
	for i, r := range c.Replicas {
		st, err := replicas.BuildStatsOf(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = st
	}
	return out
}

func serialOf(t *testing.T, base string) int64 {
	t.Helper()
	idx, _, err := replicas.IndexOf(base)
	if err != nil {
		t.Fatal(err)
	}
	return idx.Serial
}

// testRacingPublishes sends 20 different packages of one new version at once, spread over
// the three replicas: exactly one is created, the 19 others are refused with
// publish.version.exists, and every replica then serves the winner's bytes.
func testRacingPublishes(t *testing.T, c *replicas.Cluster) {
	const racers = 20
	pkgs := make([]replicas.Package, racers)
	for i := range pkgs {
		pkgs[i] = mustPackage(t, "replica-alpha", "4.0.0", i, 32<<10)
	}
	answers := make([]replicas.Answer, racers)
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range pkgs {
		wg.Go(func() {
			<-start
			answers[i], errs[i] = replicas.Publish(c.Replicas[i%3].URL, replicas.AdminToken, pkgs[i])
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, a := range answers {
		switch {
		case errs[i] != nil:
			t.Errorf("racer %d (replica %d): %v", i, i%3, errs[i])
		case a.Status == http.StatusCreated && winner >= 0:
			t.Errorf("racer %d (replica %d) was created too, after racer %d: two 201s for one version", i, i%3, winner)
		case a.Status == http.StatusCreated:
			winner = i
		case a.Status != http.StatusConflict || !hasRule(a, "publish.version.exists"):
			t.Errorf("racer %d (replica %d): %s, want 409 with rule publish.version.exists (rules %v)", i, i%3, a, a.Rules())
		}
	}
	if winner < 0 {
		t.Fatal("no racer was created")
	}
	t.Logf("racer %d on replica %d won; 19 refused with publish.version.exists", winner, winner%3)
	for _, r := range c.Replicas {
		if _, err := eventually(visibleWithin, func() error { return channels[1].check(r.URL, pkgs[winner]) }); err != nil {
			t.Errorf("replica %d does not list the winner: %v", r.Index, err)
			continue
		}
		checkDownloads(t, r.URL, map[string]string{"replica-alpha@4.0.0": pkgs[winner].SHA256()})
	}
}

// checkDownloads checks, on the replica at base, that every id@version of want is listed
// with that digest and that its download is those bytes.
func checkDownloads(t *testing.T, base string, want map[string]string) {
	t.Helper()
	byID := map[string][]replicas.Release{}
	for k, sha := range want {
		id, version, _ := strings.Cut(k, "@")
		if _, ok := byID[id]; !ok {
			rels, err := replicas.Releases(base, id)
			if err != nil {
				t.Errorf("%s: %v", base, err)
				continue
			}
			byID[id] = rels
		}
		found := false
		for _, rel := range byID[id] {
			if rel.Version != version {
				continue
			}
			found = true
			got, n, err := replicas.Download(base, rel)
			if err != nil || got != sha || rel.SHA256 != sha || n != rel.Size {
				t.Errorf("%s: %s listed with sha256 %s, downloads %d of %d bytes with sha256 %s (%v), want %s", base, k, rel.SHA256, n, rel.Size, got, err, sha)
			}
		}
		if !found {
			t.Errorf("%s: acknowledged %s is not listed", base, k)
		}
	}
}
