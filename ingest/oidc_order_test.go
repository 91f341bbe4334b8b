package ingest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pluginyard/registry/index"
)

// TestUnlistedRepositoryStoresNothing: a verified token from a repository nothing is listed
// for is refused before its jti is kept, so once the repository is listed the same job's
// token still exchanges (it was never consumed).
func TestUnlistedRepositoryStoresNothing(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now().UTC().Truncate(time.Second)
	st := mustStore(t)
	raw := mustSign(t, is.key, "k1", is.claims(now, "acme/newcomer", "7", "1"))
	l := testList()
	tp := newTestTP(st, is, now)
	tp.list = func() *index.List { return l }
	if _, _, _, err := tp.Exchange(context.Background(), raw); !errors.Is(err, ErrForbidden) {
		t.Fatalf("unlisted exchange = %v, want forbidden", err)
	}
	listed := *l
	listed.Plugins = append(append([]index.Entry(nil), l.Plugins...), index.Entry{ID: "newcomer", Repo: "acme/newcomer", Kind: index.KindPlugin})
	l = &listed
	if _, _, ids, err := tp.Exchange(context.Background(), raw); err != nil || len(ids) != 1 || ids[0] != "newcomer" {
		t.Fatalf("exchange once listed = %v %v, want the newcomer scope (the refused exchange must not have consumed the token)", ids, err)
	}
}
