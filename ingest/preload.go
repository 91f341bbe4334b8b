package ingest

import "context"

// Preload reads the rows of the first build (readRows) while the caller does other work:
// `registry serve` starts it before it checks plugins.yaml, which at 50,000 entries is a
// second of one CPU (parsing and checking) that the rows' decoding, over the other CPUs,
// then no longer waits behind. The first build (Service.Rebuild or a list change) takes
// it through Config.Preload; later builds read the store again.
//
// The rows are a consistent view as of the serial read first, as any build's: a change
// committed after it (another process's publish) reaches the index at the next build,
// exactly as if it had come just after the start. Nothing the caller does itself between
// Preload and the first build may change releases (serve's --demo publishes, so it does
// not preload).
type Preload struct {
	done chan struct{}
	rows rows
}

// StartPreload starts reading the first build's rows from st.
func StartPreload(ctx context.Context, st Store) *Preload {
	p := &Preload{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.rows = readRows(ctx, st)
	}()
	return p
}

// Wait returns when the rows are read (or the read failed); the caller must not close the
// store before.
func (p *Preload) Wait() { <-p.done }

// takePreload returns the preloaded rows, once: the first build takes them, waiting for
// them if need be; every other build reads the store (ok false).
func (s *Service) takePreload() (rows, bool) {
	p := s.preload.Swap(nil)
	if p == nil {
		return rows{}, false
	}
	p.Wait()
	r := p.rows
	p.rows = rows{} // the caller may keep p (serve does): the rows must not outlive the build
	return r, true
}
