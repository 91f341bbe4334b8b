package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// BenchmarkDueWebhookDeliveries measures one pass's query for queue heads with n pending
// deliveries over n/10 packages (a receiver down for a while): the cost grows with the
// pending rows, each probed once against the queue index.
func BenchmarkDueWebhookDeliveries(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			s, err := store.Open(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.SetWebhookEndpoints(ctx, []string{"x"}); err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if err := s.Audit(ctx, store.AuditEntry{Actor: "ci", Action: "publish", Target: fmt.Sprintf("p%d@1.0.%d", i%(n/10), i), Outcome: "refused"}); err != nil {
					b.Fatal(err)
				}
			}
			now := time.Now()
			if _, err := s.SealWebhookEvents(ctx, now, n, func(ev store.WebhookEvent) (store.WebhookSeal, error) {
				return store.WebhookSeal{MsgID: fmt.Sprint("m", ev.ID), Body: []byte("{}"), Endpoints: []string{"x"}}, nil
			}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				due, err := s.DueWebhookDeliveries(ctx, now, 100)
				if err != nil || len(due) != min(100, n/10) {
					b.Fatalf("%d due, %v", len(due), err)
				}
			}
		})
	}
}

// BenchmarkWebhookDeliveriesLog measures one page (500) of the admin delivery log over
// events whose bodies are size bytes: the page does not read the bodies, so its cost does
// not grow with them.
func BenchmarkWebhookDeliveriesLog(b *testing.B) {
	for _, size := range []int{64, 4 << 10, 64 << 10} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			ctx := context.Background()
			s, err := store.Open(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.SetWebhookEndpoints(ctx, []string{"x"}); err != nil {
				b.Fatal(err)
			}
			for i := range 500 {
				if err := s.Audit(ctx, store.AuditEntry{Actor: "ci", Action: "publish", Target: fmt.Sprintf("p%d@1.0.0", i), Outcome: "refused"}); err != nil {
					b.Fatal(err)
				}
			}
			body := make([]byte, size)
			if _, err := s.SealWebhookEvents(ctx, time.Now(), 500, func(ev store.WebhookEvent) (store.WebhookSeal, error) {
				return store.WebhookSeal{MsgID: fmt.Sprint("m", ev.ID), Body: body, Endpoints: []string{"x"}}, nil
			}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				page, err := s.WebhookDeliveries(ctx, store.WebhookDeliveryQuery{Limit: 500})
				if err != nil || len(page) != 500 {
					b.Fatalf("%d deliveries, %v", len(page), err)
				}
			}
		})
	}
}
