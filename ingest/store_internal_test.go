package ingest

import "github.com/pluginyard/registry/store"

// db is the concrete store of a Service built by the tests (mustStore, storetest), for
// the reads and seams its Store interface does not carry (the audit log, search, blobs).
func (s *Service) db() *store.Store { return s.store.(*store.Store) }
