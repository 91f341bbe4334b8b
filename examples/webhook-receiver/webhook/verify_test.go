package webhook_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/examples/webhook-receiver/webhook"
)

// The example of the Standard Webhooks specification: a receiver built on any library of
// that standard agrees with this one.
const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS     = 1614265330
	specBody   = `{"test": 2432232314}`
	specSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	return h
}

func TestVerify(t *testing.T) {
	at := time.Unix(specTS, 0)
	other := "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	tests := []struct {
		name string
		now  time.Time
		h    http.Header
		body string
		want error
	}{
		{"the specification's example", at, headers(specID, specTS, specSig), specBody, nil},
		{"one of several signatures (rotation)", at, headers(specID, specTS, other+" "+specSig), specBody, nil},
		{"a changed body", at, headers(specID, specTS, specSig), `{"test": 2432232315}`, webhook.ErrSignature},
		{"a changed id", at, headers("msg_other", specTS, specSig), specBody, webhook.ErrSignature},
		{"a changed timestamp", at, headers(specID, specTS+1, specSig), specBody, webhook.ErrSignature},
		{"a wrong signature only", at, headers(specID, specTS, other), specBody, webhook.ErrSignature},
		{"no signature", at, headers(specID, specTS, ""), specBody, webhook.ErrHeaders},
		{"a timestamp that is not a number", at, http.Header{"Webhook-Id": {specID}, "Webhook-Timestamp": {"soon"}, "Webhook-Signature": {specSig}}, specBody, webhook.ErrHeaders},
		{"just inside the tolerance, late", at.Add(webhook.Tolerance), headers(specID, specTS, specSig), specBody, nil},
		{"older than the tolerance", at.Add(webhook.Tolerance + time.Second), headers(specID, specTS, specSig), specBody, webhook.ErrSkew},
		{"newer than the tolerance", at.Add(-webhook.Tolerance - time.Second), headers(specID, specTS, specSig), specBody, webhook.ErrSkew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := webhook.NewVerifier(specSecret, func() time.Time { return tt.now })
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Verify(tt.h, []byte(tt.body)); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

// A message id is accepted once; a forged request cannot use up an id.
func TestVerifyRefusesReplays(t *testing.T) {
	now := time.Unix(specTS, 0)
	v, err := webhook.NewVerifier(specSecret, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(headers(specID, specTS, "v1,forged"), []byte(specBody)); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("forged = %v", err)
	}
	if err := v.Verify(headers(specID, specTS, specSig), []byte(specBody)); err != nil {
		t.Fatalf("first = %v", err)
	}
	now = now.Add(time.Minute)
	if err := v.Verify(headers(specID, specTS, specSig), []byte(specBody)); !errors.Is(err, webhook.ErrReplay) {
		t.Fatalf("replayed a minute later = %v, want ErrReplay", err)
	}
	now = now.Add(2 * webhook.Tolerance) // forgotten by now, and refused for its age instead
	if err := v.Verify(headers(specID, specTS, specSig), []byte(specBody)); !errors.Is(err, webhook.ErrSkew) {
		t.Fatalf("replayed later still = %v, want ErrSkew", err)
	}
}

func TestNewVerifierRefusesMalformedSecret(t *testing.T) {
	if _, err := webhook.NewVerifier("whsec_not base64!", nil); err == nil {
		t.Fatal("a malformed secret was accepted")
	}
}

// A receiver that failed to handle an id forgets it, and the registry's retry of it (same
// id, new timestamp and signature) is then accepted.
func TestVerifyAcceptsRetryAfterForget(t *testing.T) {
	now := time.Unix(specTS, 0)
	v, err := webhook.NewVerifier(specSecret, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(specSecret, "whsec_"))
	if err := v.Verify(headers(specID, specTS, specSig), []byte(specBody)); err != nil {
		t.Fatal(err)
	}
	v.Forget(specID)
	now = now.Add(time.Minute)
	retry := headers(specID, specTS+60, webhook.Sign(key, specID, specTS+60, []byte(specBody)))
	if err := v.Verify(retry, []byte(specBody)); err != nil {
		t.Fatalf("retry after Forget = %v", err)
	}
	if err := v.Verify(retry, []byte(specBody)); !errors.Is(err, webhook.ErrReplay) {
		t.Fatalf("the retry again = %v, want ErrReplay", err)
	}
}
