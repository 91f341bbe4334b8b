package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// BenchmarkDocumentsShare is what sharing one serial's documents costs, by index.json
// size: the builder's PutDocuments and one other replica's Documents.
func BenchmarkDocumentsShare(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, size := range []int{64 << 10, 1 << 20, 5 << 20} {
			b.Run(fmt.Sprintf("%s/%dKiB", backend, size>>10), func(b *testing.B) {
				url := "sqlite:" + filepath.Join(b.TempDir(), store.DBFile)
				if backend == "postgres" {
					url = storetest.CreateDatabase(b, storetest.SharedPostgres(b))
				}
				st, err := store.OpenURL(context.Background(), url, b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = st.Close() })
				body := indexLike(size)
				docs := docsOf(0, "x")
				docs[1].Body = body
				b.SetBytes(int64(size))
				b.ResetTimer()
				for i := range b.N {
					docs[0].Serial, docs[1].Serial = int64(i+1), int64(i+1)
					if ok, err := st.PutDocuments(context.Background(), docs); !ok || err != nil {
						b.Fatal(ok, err)
					}
					if got, err := st.Documents(context.Background(), int64(i+1)); err != nil || len(got) != 2 {
						b.Fatal(len(got), err)
					}
				}
			})
		}
	}
}

// indexLike is about size bytes shaped like index.json: entries with random ids and
// descriptions (as compressible as a real catalogue, not a repeated string).
func indexLike(size int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"plugins":[`)
	for buf.Len() < size {
		id := make([]byte, 6)
		_, _ = rand.Read(id)
		fmt.Fprintf(&buf, `{"id":"acme-%x","version":"1.%d.0","description":"Plugin %x does one thing well","categories":["tools"],"downloads":%d},`,
			id, id[0], id[1:], int(id[2])*1000)
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}
