package store_test

import (
	"testing"

	"github.com/pluginyard/registry/store/storetest"
)

// TestConformance runs the metadata store's conformance suite on SQLite, each behaviour
// on a fresh data directory; the PostgreSQL store runs the same suite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend { return MustOpen(t) })
}
