package payments_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stripe/stripe-go/v82/webhook"

	"shop/payments"
)

const whsec = "whsec_test_secret_for_payments_tests"

// eventPayload is a webhook body as Stripe sends it, with an API version
// other than stripe-go's, which ParseStripeEvent must not refuse.
func eventPayload(typ, status string, created int64) []byte {
	return fmt.Appendf(nil, `{
  "id": "evt_3PsEvent",
  "object": "event",
  "api_version": "2024-06-20",
  "created": %d,
  "livemode": false,
  "pending_webhooks": 1,
  "type": %q,
  "data": {"object": {
    "id": "pi_3PsEvent",
    "object": "payment_intent",
    "amount": 2599,
    "currency": "usd",
    "status": %q,
    "metadata": {"checkout_session_id": "cs_test", "idempotency_key": "shop_cs_test_attempt_1"}
  }}
}`, created, typ, status)
}

func sign(payload []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at}).Header
}

func TestParseStripeEvent(t *testing.T) {
	now := time.Now()
	created := now.Add(-time.Second).Unix()
	meta := map[string]string{"checkout_session_id": "cs_test", "idempotency_key": "shop_cs_test_attempt_1"}
	tests := []struct {
		typ, status string
		want        payments.Status
	}{
		{"payment_intent.succeeded", "succeeded", payments.Succeeded},
		{"payment_intent.payment_failed", "requires_payment_method", payments.Declined},
		{"payment_intent.requires_action", "requires_action", payments.RequiresAction},
		{"payment_intent.processing", "processing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			payload := eventPayload(tt.typ, tt.status, created)
			got, err := payments.ParseStripeEvent(payload, sign(payload, whsec, now), whsec)
			if err != nil {
				t.Fatal(err)
			}
			want := &payments.Event{ID: "evt_3PsEvent", Type: tt.typ, PaymentIntent: "pi_3PsEvent", Status: tt.want,
				Metadata: meta, Created: time.Unix(created, 0).UTC()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseStripeEvent (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("other object", func(t *testing.T) {
		payload := []byte(`{"id":"evt_2","object":"event","api_version":"2025-08-27.basil","created":1714567890,"type":"charge.refunded","data":{"object":{"id":"ch_1","object":"charge"}}}`)
		got, err := payments.ParseStripeEvent(payload, sign(payload, whsec, now), whsec)
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != "charge.refunded" || got.PaymentIntent != "" || got.Status != "" {
			t.Errorf("ParseStripeEvent = %+v, want a charge.refunded event with no PaymentIntent", got)
		}
	})
}

func TestParseStripeEventRefused(t *testing.T) {
	now := time.Now()
	payload := eventPayload("payment_intent.succeeded", "succeeded", now.Unix())
	tampered := bytes.Replace(payload, []byte(`"amount": 2599`), []byte(`"amount": 1`), 1)
	tests := []struct {
		name      string
		payload   []byte
		signature string
		secret    string
		want      error // a stripe-go webhook error in the chain, when there is one
	}{
		{"signed with another secret", payload, sign(payload, "whsec_other", now), whsec, webhook.ErrNoValidSignature},
		{"stale timestamp", payload, sign(payload, whsec, now.Add(-10*time.Minute)), whsec, webhook.ErrTooOld},
		{"tampered body", tampered, sign(payload, whsec, now), whsec, webhook.ErrNoValidSignature},
		{"no signature", payload, "", whsec, webhook.ErrNotSigned},
		{"garbled signature", payload, "t=abc,v1=zz", whsec, webhook.ErrInvalidHeader},
		{"no secret configured", payload, sign(payload, "", now), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := payments.ParseStripeEvent(tt.payload, tt.signature, tt.secret)
			if err == nil {
				t.Fatalf("ParseStripeEvent accepted it: %+v", got)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("ParseStripeEvent = %v, want %v", err, tt.want)
			}
		})
	}
}
