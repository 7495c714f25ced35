package checkout_test

import (
	"context"
	"testing"
	"time"

	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// unanswered is Stripe whose charges never get an answer (the request
// never reached it): the session stays in progress until the reconciler.
type unanswered struct{ *payments.Stripe }

func (unanswered) Charge(context.Context, payments.Request) (*payments.Result, error) {
	return nil, payments.ErrUnknownOutcome
}

// TestPaymentLinkWhileAnotherPaymentRuns: a page paid while another payment
// of its session is being settled is not settled yet, and answers at once
// rather than holding the request (the webhook's retry or the reconciler
// settles it); once that payment ends without an order, the reconciler makes
// the page's payment the order, once, with nothing refunded.
func TestPaymentLinkWhileAnotherPaymentRuns(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, "sqlite")
	clk := &clock{now: time.Now().UTC()}
	srv := stripetest.New(t)
	st := srv.Stripe(payments.StripeOptions{Retries: -1})
	h := &hostedShop{co: newCheckout(t, db, clk, &checkout.Options{Charger: unanswered{st}, Linker: st, PublicURL: "https://shop.example"}),
		clk: clk, db: db, stripe: srv}
	s := h.ready(t)
	_, page := h.page(t, s)
	if got, err := h.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil || got.Status != checkout.InProgress {
		t.Fatalf("complete_checkout, answer lost: %v %+v", err, got)
	}
	h.stripe.Pay(page)

	start := time.Now()
	err := h.co.SettleHosted(ctx, page)
	if took := time.Since(start); err == nil || took > time.Second {
		t.Fatalf("settling the page while a payment runs: %v after %v; want an error at once", err, took)
	}
	if n := h.count(t, "SELECT COUNT(*) FROM orders") + h.count(t, "SELECT COUNT(*) FROM surplus_payments"); n != 0 {
		t.Fatalf("%d orders and surplus payments while the other payment runs", n)
	}
	if n := h.count(t, "SELECT COUNT(*) FROM payment_links WHERE status = 'open'"); n != 1 {
		t.Fatalf("%d open links; want the page still open", n)
	}

	// The other payment never reached Stripe: the reconciler gives it up,
	// then settles the page.
	h.clk.Add(2 * time.Minute)
	if _, err := h.co.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	done, err := h.co.Get(ctx, s.ID)
	if err != nil || done.Status != checkout.Completed || done.Order == nil {
		t.Fatalf("after the reconciler: %v %+v", err, done)
	}
	if n := h.count(t, "SELECT COUNT(*) FROM payment_links WHERE status = 'paid'"); n != 1 || len(h.stripe.Refunds()) != 0 {
		t.Errorf("%d paid links, refunds %v; want 1 and none", n, h.stripe.Refunds())
	}
}
