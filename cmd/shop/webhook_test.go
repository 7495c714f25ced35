package main

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"shop/checkout"
)

const webhookSecret = "whsec_test_secret_of_the_shop"

// post sends a Stripe event about a session's payment to the shop, signed
// with secret.
func postEvent(t *testing.T, addr, secret, id, typ, sessionID string) int {
	t.Helper()
	payload := []byte(fmt.Sprintf(`{"id": %q, "object": "event", "type": %q, "created": %d, "api_version": "2025-01-01",
		"data": {"object": {"id": "pi_unknown", "object": "payment_intent", "status": "succeeded",
		"metadata": {"checkout_session_id": %q}}}}`, id, typ, time.Now().Unix(), sessionID))
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret})
	req, err := http.NewRequest("POST", "http://"+addr+"/webhooks/stripe", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Stripe-Signature", signed.Header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestWebhook: a charge whose answer was lost (the process ended right after
// it) is settled by Stripe's event, well before the reconciler's grace
// period; replayed and out-of-order events change nothing; a bad signature
// is refused.
func TestWebhook(t *testing.T) {
	bin := buildShop(t)
	db := filepath.Join(t.TempDir(), "shop.db")
	p := runShop(t, bin, db, []string{"SHOP_TEST_FAULT=after_charge"})
	cs := payUntilFault(t, p)

	p = runShop(t, bin, db, []string{"STRIPE_WEBHOOK_SECRET=" + webhookSecret}) // default grace: the reconciler waits
	s := connect(t, "http://"+p.addr)
	status := func() checkout.Status {
		return session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID})).Status
	}
	if got := status(); got != checkout.InProgress {
		t.Fatalf("before the event: %s", got)
	}
	if code := postEvent(t, p.addr, "whsec_someone_else", "evt_forged", "payment_intent.succeeded", cs.ID); code != 400 {
		t.Errorf("forged event: %d, want 400", code)
	}
	if got := status(); got != checkout.InProgress {
		t.Fatalf("a forged event changed the session: %s", got)
	}
	if code := postEvent(t, p.addr, webhookSecret, "evt_1", "payment_intent.succeeded", cs.ID); code != 200 {
		t.Fatalf("event: %d", code)
	}
	if got := status(); got != checkout.Completed {
		t.Fatalf("after the event: %s", got)
	}
	for _, ev := range []struct{ id, typ string }{
		{"evt_1", "payment_intent.succeeded"},      // replayed
		{"evt_0", "payment_intent.payment_failed"}, // late, out of order
		{"evt_2", "charge.refunded"},               // not about a payment intent
	} {
		if code := postEvent(t, p.addr, webhookSecret, ev.id, ev.typ, cs.ID); code != 200 {
			t.Errorf("%s %s: %d", ev.id, ev.typ, code)
		}
	}
	if got := status(); got != checkout.Completed {
		t.Errorf("after replayed events: %s", got)
	}
	if counts := rows(t, db, "sandbox_charges", "orders"); counts["sandbox_charges"] != 1 || counts["orders"] != 1 {
		t.Errorf("after the events: %v; want one charge and one order", counts)
	}
}
