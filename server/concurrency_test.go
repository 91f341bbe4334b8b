package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// publishAll publishes every package concurrently and returns the statuses in order.
func (e *env) publishAll(files []string, data [][]byte) []int {
	statuses := make([]int, len(data))
	var wg sync.WaitGroup
	for i := range data {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.publish(adminToken, files[i], data[i]).Status
		}()
	}
	wg.Wait()
	return statuses
}

func TestConcurrentPublishes(t *testing.T) {
	const n = 20
	t.Run("distinct versions all land", func(t *testing.T) {
		e := newEnv(t, "")
		files, data := make([]string, n), make([][]byte, n)
		for i := range n {
			v := fmt.Sprintf("1.%d.0", i)
			files[i], data[i] = "acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "x")
		}
		for i, st := range e.publishAll(files, data) {
			if st != http.StatusCreated {
				t.Errorf("publish %s: %d", files[i], st)
			}
		}
		var detail struct{ Versions []struct{ Version string } }
		e.get("/api/v1/plugins/acme-hello").json(t, &detail)
		if len(detail.Versions) != n {
			t.Errorf("%d versions stored, want %d", len(detail.Versions), n)
		}
		if doc := e.index(); doc.Plugins[0].Version != fmt.Sprintf("1.%d.0", n-1) {
			t.Errorf("latest = %s", doc.Plugins[0].Version)
		}
	})
	t.Run("identical bytes are idempotent", func(t *testing.T) {
		e := newEnv(t, "")
		same := pkg(t, "acme-hello", "2.0.0", "x")
		files, data := make([]string, n), make([][]byte, n)
		for i := range n {
			files[i], data[i] = "acme-hello-2.0.0.tar.gz", same
		}
		created := 0
		for _, st := range e.publishAll(files, data) {
			switch st {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Errorf("status %d", st)
			}
		}
		if created != 1 {
			t.Errorf("%d publishes created the release, want exactly 1 (the rest 200)", created)
		}
	})
	t.Run("different bytes: exactly one wins", func(t *testing.T) {
		e := newEnv(t, "")
		files, data := make([]string, n), make([][]byte, n)
		for i := range n {
			files[i], data[i] = "acme-hello-3.0.0.tar.gz", pkg(t, "acme-hello", "3.0.0", fmt.Sprintf("variant %d", i))
		}
		won, conflicts := 0, 0
		for _, st := range e.publishAll(files, data) {
			switch st {
			case http.StatusCreated:
				won++
			case http.StatusConflict:
				conflicts++
			default:
				t.Errorf("status %d", st)
			}
		}
		if won != 1 || conflicts != n-1 {
			t.Errorf("won %d, conflicts %d; want 1 and %d", won, conflicts, n-1)
		}
	})
}
