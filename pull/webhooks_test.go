package pull_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pull/githubtest"
	"github.com/pluginyard/registry/store"
)

// A sync that publishes queues release.published; a refused release queues sync.failed
// and, when the pipeline refused the package, verification.failed; the same failure seen
// again in the next round is not news.
func TestSyncQueuesWebhookEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.st.SetWebhookEndpoints(ctx, []string{"ci"}); err != nil {
		t.Fatal(err)
	}
	e.gh.SetRelease(hello, "v1.0.0", githubtest.Asset{Name: "acme-hello-1.0.0.tar.gz", Data: pkg(t, "acme-hello", "1.0.0")})
	e.round()
	e.gh.SetRelease(hello, "v1.1.0", githubtest.Asset{Name: "acme-hello-1.1.0.tar.gz", Data: []byte("not a gzip stream")})
	e.round()
	e.round()
	var got []string
	_, err := e.st.SealWebhookEvents(ctx, time.Now(), 100, func(ev store.WebhookEvent) (store.WebhookSeal, error) {
		if strings.HasPrefix(ev.Subject, "acme-hello") || ev.Subject == "acme/kandev-plugin-hello" { // the others have no release: sync.failed each
			got = append(got, ev.Type+" "+ev.Subject+"@"+ev.Version)
		}
		return store.WebhookSeal{MsgID: ev.Type + ev.Subject + ev.Version, Body: []byte("{}")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The package did not read (not gzip): the refusal names the file, not id@version.
	want := []string{"release.published acme-hello@1.0.0", "verification.failed acme-hello-1.1.0.tar.gz@", "sync.failed acme/kandev-plugin-hello@"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}
