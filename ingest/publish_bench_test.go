package ingest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkForbiddenPublish measures a publish refused from its file name: its cost must not
// grow with the package, which is never read.
func BenchmarkForbiddenPublish(b *testing.B) {
	st := mustStoreB(b)
	s := New(st, publishList(), Config{PublicURL: "http://r.example"}, discard())
	defer s.Close()
	stranger := Actor{Name: "publisher:globex", Publisher: "globex"}
	for _, size := range []int{1 << 10, 1 << 20, 8 << 20, 64 << 20} {
		data := bytes.Repeat([]byte{0x1f}, size)
		b.Run(fmt.Sprintf("package=%dKiB", size>>10), func(b *testing.B) {
			for b.Loop() {
				_, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(data), FileName: "acme-hello-1.0.0.tar.gz", Actor: stranger})
				if ruleOf(err) != "publish.forbidden" {
					b.Fatal(err)
				}
			}
		})
	}
}
