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

// checkoutPayload is a checkout.session.* webhook body as Stripe sends it.
func checkoutPayload(typ, status, paymentStatus string, created int64) []byte {
	return fmt.Appendf(nil, `{
  "id": "evt_1PsCheckout",
  "object": "event",
  "api_version": "2025-08-27.basil",
  "created": %d,
  "livemode": false,
  "pending_webhooks": 1,
  "type": %q,
  "data": {"object": {
    "id": "cs_test_a1Hosted",
    "object": "checkout.session",
    "amount_total": 3830,
    "client_reference_id": "cs_shop_1",
    "currency": "usd",
    "metadata": {"checkout_session_id": "cs_shop_1", "attempt_id": "att_1"},
    "mode": "payment",
    "payment_intent": "pi_3PsHosted",
    "payment_status": %q,
    "status": %q,
    "url": null
  }}
}`, created, typ, paymentStatus, status)
}

func TestParseStripeEventCheckoutSession(t *testing.T) {
	now := time.Now()
	created := now.Add(-time.Second).Unix()
	tests := []struct {
		typ, status, paymentStatus string
		want                       payments.Status
	}{
		{"checkout.session.completed", "complete", "paid", payments.Succeeded},
		// A delayed payment method (a bank debit): completed, not yet paid.
		{"checkout.session.completed", "complete", "unpaid", ""},
		{"checkout.session.async_payment_succeeded", "complete", "paid", payments.Succeeded},
		{"checkout.session.async_payment_failed", "complete", "unpaid", payments.Declined},
		// Nothing was paid: no outcome to report.
		{"checkout.session.expired", "expired", "unpaid", ""},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.paymentStatus, func(t *testing.T) {
			payload := checkoutPayload(tt.typ, tt.status, tt.paymentStatus, created)
			got, err := payments.ParseStripeEvent(payload, sign(payload, whsec, now), whsec)
			if err != nil {
				t.Fatal(err)
			}
			want := &payments.Event{ID: "evt_1PsCheckout", Type: tt.typ, HostedCheckout: "cs_test_a1Hosted", ClientReference: "cs_shop_1",
				Status: tt.want, Metadata: map[string]string{"checkout_session_id": "cs_shop_1", "attempt_id": "att_1"},
				Created: time.Unix(created, 0).UTC()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseStripeEvent (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown checkout.session event", func(t *testing.T) {
		payload := checkoutPayload("checkout.session.created", "open", "unpaid", created)
		got, err := payments.ParseStripeEvent(payload, sign(payload, whsec, now), whsec)
		if err != nil {
			t.Fatal(err)
		}
		if got.HostedCheckout != "" || got.PaymentIntent != "" || got.Status != "" {
			t.Errorf("ParseStripeEvent = %+v, want an event to ignore", got)
		}
	})
	t.Run("bad signature", func(t *testing.T) {
		payload := checkoutPayload("checkout.session.completed", "complete", "paid", created)
		for name, signature := range map[string]string{
			"another secret": sign(payload, "whsec_other", now),
			"tampered body":  sign(bytes.Replace(payload, []byte(`"cs_shop_1"`), []byte(`"cs_shop_2"`), 1), whsec, now),
		} {
			if got, err := payments.ParseStripeEvent(payload, signature, whsec); !errors.Is(err, webhook.ErrNoValidSignature) {
				t.Errorf("%s: ParseStripeEvent = %+v, %v, want ErrNoValidSignature", name, got, err)
			}
		}
	})
}
