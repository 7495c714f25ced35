package main

import (
	"context"
	"testing"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// TestWebhookPaymentWithoutAttempt: Stripe's payment_intent.succeeded for a
// charge the shop made but has no attempt for (its database restored from
// before it) settles it: on a session still payable at its amount the
// payment becomes the order; on a session another payment completed it is
// refunded, with a surplus payment and an audit event. Replayed events
// change nothing.
func TestWebhookPaymentWithoutAttempt(t *testing.T) {
	srv := stripetest.New(t)
	dsn := dbtest.DSN(t, database.SQLite)
	shop := startShop(t, dsn, map[string]string{
		"STRIPE_SECRET_KEY": stripetest.SecretKey, "STRIPE_API_BASE": srv.URL, "STRIPE_WEBHOOK_SECRET": webhookSecret,
	})
	s := connect(t, shop.url)
	stripe := srv.Stripe(payments.StripeOptions{Retries: -1})
	// lost charges a session as its attempt under key did, the shop's
	// record of it lost, and delivers Stripe's event about it.
	lost := func(cs checkout.Session, key, token string) string {
		t.Helper()
		var amount int64
		for _, tot := range cs.Totals {
			if tot.Type == checkout.TotalTotal {
				amount = tot.Amount
			}
		}
		res, err := stripe.Charge(context.Background(), payments.Request{Amount: amount, Currency: cs.Currency, Token: token,
			IdempotencyKey: key, Metadata: map[string]string{"checkout_session_id": cs.ID, "order_id": "ord_lost"}})
		if err != nil || res.Status != payments.Succeeded {
			t.Fatalf("charge: %v %+v", err, res)
		}
		for range 2 { // the second is a replay
			payload, sig := srv.Event("payment_intent.succeeded", webhookSecret, res.Reference)
			if code := deliver(t, shop.url, payload, sig); code != 200 {
				t.Fatalf("event: %d\n%s", code, shop.logs.String())
			}
		}
		return res.Reference
	}
	refunded := func(ref string) int64 {
		for _, pi := range srv.PaymentIntents() {
			if pi.ID == ref {
				return pi.AmountRefunded
			}
		}
		return -1
	}
	db, err := database.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)

	t.Run("payable", func(t *testing.T) {
		cs := readySession(t, s)
		ref := lost(cs, "shop_"+cs.ID+"_attempt_1", "pm_card_visa")
		got := session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
		if got.Status != checkout.Completed {
			t.Fatalf("after the event: %s", got.Status)
		}
		var paidBy string
		db.Raw("SELECT payment_reference FROM orders WHERE checkout_session_id = ?", cs.ID).Scan(&paidBy)
		if paidBy != ref || refunded(ref) != 0 {
			t.Errorf("order paid by %q, want %s not refunded (refunded %d)", paidBy, ref, refunded(ref))
		}
	})
	t.Run("already paid", func(t *testing.T) {
		cs := readySession(t, s)
		if got := session(t, complete(t, s, cs.ID, "pm_card_visa")); got.Status != checkout.Completed {
			t.Fatalf("complete: %s", got.Status)
		}
		ref := lost(cs, "shop_"+cs.ID+"_attempt_5", "pm_card_mastercard")
		var amount int64
		db.Raw("SELECT total FROM orders WHERE checkout_session_id = ?", cs.ID).Scan(&amount)
		if r := refunded(ref); r != amount || amount == 0 {
			t.Errorf("the second payment refunded %d of %d", r, amount)
		}
		var surplus, audited int64
		db.Raw("SELECT COUNT(*) FROM surplus_payments WHERE reference = ? AND status = 'refunded'", ref).Scan(&surplus)
		db.Raw(`SELECT COUNT(*) FROM audit_events WHERE action = 'payment.surplus' AND order_id = (SELECT id FROM orders WHERE checkout_session_id = ?)`, cs.ID).Scan(&audited)
		if surplus != 1 || audited != 1 {
			t.Errorf("%d refunded surplus payments, %d audit events; want 1 and 1", surplus, audited)
		}
	})
	if n := rows(t, dsn, "orders")["orders"]; n != 2 {
		t.Errorf("%d orders, want 2", n)
	}
}
