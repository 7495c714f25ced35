package checkout_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// hostedShop is the demo shop paying through Stripe, played by the
// emulator, with hosted pages (Stripe Checkout).
type hostedShop struct {
	co     *checkout.Checkout
	clk    *clock
	db     *gorm.DB
	stripe *stripetest.Server
}

func newHostedShop(t *testing.T, db *gorm.DB) *hostedShop {
	t.Helper()
	// Stripe's page expiry is checked against the real clock; the shop's
	// may move ahead of it.
	clk := &clock{now: time.Now().UTC()}
	srv := stripetest.New(t)
	st := srv.Stripe(payments.StripeOptions{Retries: -1})
	co := newCheckout(t, db, clk, &checkout.Options{Charger: st, Linker: st, PublicURL: "https://shop.example"})
	return &hostedShop{co: co, clk: clk, db: db, stripe: srv}
}

func (h *hostedShop) ready(t *testing.T) *checkout.Session {
	t.Helper()
	s, err := h.co.Create(context.Background(), checkout.Request{
		Items:   items("enamel-camp-mug-forest-green", 2, "stoneware-coffee-mug-16-oz", 1),
		Address: californian, Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"}, PromoCode: ptr("WELCOME10"),
	})
	if err != nil || s.Status != checkout.Ready {
		t.Fatalf("ready session: %v %+v", err, s)
	}
	return s
}

// page makes a payment link and returns the emulator's page id.
func (h *hostedShop) page(t *testing.T, s *checkout.Session) (*checkout.PaymentLink, string) {
	t.Helper()
	link, err := h.co.CreateLink(asOwner(t, h.db, s.ID), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	id := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if link.Provider != "stripe" || !strings.HasPrefix(id, "cs_test_") {
		t.Fatalf("link %+v", link)
	}
	return link, id
}

func (h *hostedShop) count(t *testing.T, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := h.db.Raw(q, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func total(s *checkout.Session) int64 {
	for _, t := range s.Totals {
		if t.Type == checkout.TotalTotal {
			return t.Amount
		}
	}
	return -1
}

// TestPaymentLinkStripe: the page carries the session's own figures and the
// shop's addresses; paid, it becomes the order, once, however often and
// however concurrently it is reported.
func TestPaymentLinkStripe(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHostedShop(t, db)
		s := h.ready(t)
		link, page := h.page(t, s)

		var create url.Values
		for _, r := range h.stripe.Requests() {
			if r.Method == "POST" && r.Path == "/v1/checkout/sessions" {
				create = r.Form
			}
		}
		for k, want := range map[string]string{
			"client_reference_id":                           s.ID,
			"metadata[checkout_session_id]":                 s.ID,
			"line_items[0][quantity]":                       "2",
			"line_items[0][price_data][unit_amount]":        itoa(s.LineItems[0].UnitAmount),
			"line_items[1][price_data][unit_amount]":        itoa(s.LineItems[1].UnitAmount),
			"line_items[2][price_data][product_data][name]": "Tax",
			"currency":       "usd",
			"customer_email": "ada@example.com",
			"cancel_url":     "https://shop.example/pay/" + s.ID + "/cancel?t=" + h.co.PayToken(s.ID),
			"success_url":    "https://shop.example/pay/" + s.ID + "/return?t=" + h.co.PayToken(s.ID) + "&checkout={CHECKOUT_SESSION_ID}",
			"expires_at":     itoa(link.ExpiresAt.Unix()),
		} {
			if got := create.Get(k); got != want {
				t.Errorf("checkout session %s = %q, want %q", k, got, want)
			}
		}
		if create.Get("discounts[0][coupon]") == "" || create.Get("payment_intent_data[metadata][idempotency_key]") == "" {
			t.Errorf("no coupon or payment intent key in %v", create)
		}
		var holds []time.Time
		if err := db.Table("stock_holds").Where("holder = ?", s.ID).Pluck("expires_at", &holds).Error; err != nil || len(holds) != 2 {
			t.Fatalf("holds %v (%v)", holds, err)
		}
		for _, until := range holds {
			if until.Before(link.ExpiresAt) {
				t.Errorf("stock held until %s, before the page closes at %s", until, link.ExpiresAt)
			}
		}

		if err := h.co.SettleHosted(ctx, page); err != nil {
			t.Fatal(err)
		}
		if got, _ := h.co.Get(ctx, s.ID); got.Status != checkout.Ready {
			t.Fatalf("an unpaid page changed the session: %s", got.Status)
		}
		pi := h.stripe.Pay(page)
		// The webhook, its replays and the success page, all at once.
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := h.co.SettleHosted(ctx, page); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		done, err := h.co.Get(ctx, s.ID)
		if err != nil || done.Status != checkout.Completed || done.Order == nil {
			t.Fatalf("after paying: %v %+v", err, done)
		}
		if r := done.Order.Receipt; r.Payment.Reference != pi || r.Payment.Provider != "stripe" || r.Totals[len(r.Totals)-1].Amount != total(s) {
			t.Errorf("receipt payment %+v, total %d; want %s and %d", r.Payment, r.Totals[len(r.Totals)-1].Amount, pi, total(s))
		}
		// The page and its PaymentIntent named the order it became.
		for _, k := range []string{"metadata[order_id]", "payment_intent_data[metadata][order_id]"} {
			if got := create.Get(k); got != done.Order.ID {
				t.Errorf("checkout session %s = %q, want the order's id %q", k, got, done.Order.ID)
			}
		}
		if n := h.count(t, "SELECT COUNT(*) FROM orders"); n != 1 {
			t.Errorf("%d orders", n)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM payment_links WHERE status = 'paid'"); n != 1 {
			t.Errorf("%d paid links", n)
		}
		if len(h.stripe.Refunds()) != 0 || h.count(t, "SELECT COUNT(*) FROM surplus_payments") != 0 {
			t.Errorf("refunds %v after one payment", h.stripe.Refunds())
		}
	})
}

// TestPaymentLinkPaidTwice: a session paid through complete_checkout and
// through a page keeps one order; the page's payment is refunded in full,
// once, and recorded.
func TestPaymentLinkPaidTwice(t *testing.T) {
	ctx := context.Background()
	h := newHostedShop(t, dbtest.Open(t, "sqlite"))
	s := h.ready(t)
	_, page := h.page(t, s)
	pi := h.stripe.Pay(page) // paid on the page; Stripe's word has not come yet

	done, err := h.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
	if err != nil || done.Status != checkout.Completed {
		t.Fatalf("complete_checkout: %v %+v", err, done)
	}
	for range 3 { // the webhook, a replay, the success page
		if err := h.co.SettleHosted(ctx, page); err != nil {
			t.Fatal(err)
		}
	}
	refunds := h.stripe.Refunds()
	if len(refunds) != 1 || refunds[0].PaymentIntent != pi || refunds[0].Amount != total(s) {
		t.Fatalf("refunds %+v; want one of %d on %s", refunds, total(s), pi)
	}
	var sp struct{ Status, Reason, RefundReference string }
	h.db.Raw("SELECT status, reason, refund_reference FROM surplus_payments WHERE reference = ?", pi).Scan(&sp)
	if sp.Status != "refunded" || sp.RefundReference != refunds[0].ID || !strings.Contains(sp.Reason, "already paid") {
		t.Errorf("surplus payment %+v", sp)
	}
	if n := h.count(t, "SELECT COUNT(*) FROM orders"); n != 1 {
		t.Errorf("%d orders", n)
	}
	if got, _ := h.co.Get(ctx, s.ID); got.Order == nil || got.Order.Receipt.Payment.Reference == pi {
		t.Errorf("the order is paid by the page's payment, not complete_checkout's")
	}
}

// TestPaymentLinkOutcomes: pages that cannot become the order: expired,
// paid for a cart changed since, paid after the session was canceled; a
// second page of a session paid on the first is expired.
func TestPaymentLinkOutcomes(t *testing.T) {
	ctx := context.Background()
	h := newHostedShop(t, dbtest.Open(t, "sqlite"))

	t.Run("Expired", func(t *testing.T) {
		s := h.ready(t)
		_, page := h.page(t, s)
		h.stripe.Expire(page)
		if err := h.co.SettleHosted(ctx, page); err != nil {
			t.Fatal(err)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM payment_links WHERE external_id = ? AND status = 'expired'", page); n != 1 {
			t.Errorf("link not marked expired")
		}
		if got, _ := h.co.Get(ctx, s.ID); got.Status != checkout.Ready {
			t.Errorf("session %s", got.Status)
		}
	})
	t.Run("CartChanged", func(t *testing.T) {
		s := h.ready(t)
		_, page := h.page(t, s)
		if _, err := h.co.Update(ctx, s.ID, checkout.Request{Items: items("enamel-camp-mug-forest-green", 3)}); err != nil {
			t.Fatal(err)
		}
		pi := h.stripe.Pay(page)
		if err := h.co.SettleHosted(ctx, page); err != nil {
			t.Fatal(err)
		}
		if got, _ := h.co.Get(ctx, s.ID); got.Status != checkout.Ready {
			t.Errorf("session %s, want ready (the paid amount was not its total)", got.Status)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM surplus_payments WHERE reference = ? AND status = 'refunded'", pi); n != 1 {
			t.Errorf("payment for an old cart not refunded")
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		s := h.ready(t)
		_, page := h.page(t, s)
		if _, err := h.co.Cancel(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		pi := h.stripe.Pay(page)
		if err := h.co.SettleHosted(ctx, page); err != nil {
			t.Fatal(err)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM surplus_payments WHERE reference = ? AND status = 'refunded'", pi); n != 1 {
			t.Errorf("payment for a canceled session not refunded")
		}
	})
	t.Run("OlderPageClosed", func(t *testing.T) {
		s := h.ready(t)
		_, first := h.page(t, s)
		_, second := h.page(t, s)
		if n := h.count(t, "SELECT COUNT(*) FROM payment_links WHERE external_id = ? AND status = 'expired'", first); n != 1 {
			t.Errorf("the first page stays open after a second was made")
		}
		h.stripe.Pay(second)
		if err := h.co.SettleHosted(ctx, second); err != nil {
			t.Fatal(err)
		}
		if got, _ := h.co.Get(ctx, s.ID); got.Status != checkout.Completed {
			t.Errorf("session %s after paying the newer page", got.Status)
		}
	})
	t.Run("PageClosedWhenPaidElsewhere", func(t *testing.T) {
		s := h.ready(t)
		_, page := h.page(t, s)
		if _, err := h.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil {
			t.Fatal(err)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM payment_links WHERE external_id = ? AND status = 'expired'", page); n != 1 {
			t.Errorf("the page stays open after the session was paid through complete_checkout")
		}
	})
	t.Run("Reconciler", func(t *testing.T) {
		s := h.ready(t)
		_, page := h.page(t, s)
		h.stripe.Pay(page) // and no webhook, no success page
		if n, err := h.co.ReconcileLinks(ctx); err != nil || n != 0 {
			t.Fatalf("reconciled %d (%v) before a minute passed", n, err)
		}
		h.clk.Add(2 * time.Minute)
		if n, err := h.co.Reconcile(ctx); err != nil || n < 1 {
			t.Fatalf("reconciled %d (%v)", n, err)
		}
		if got, _ := h.co.Get(ctx, s.ID); got.Status != checkout.Completed {
			t.Errorf("session %s after the reconciler", got.Status)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestStripeChargeOrderID: complete_checkout's PaymentIntent carries the
// session's id and the id of the order it becomes, in its metadata.
func TestStripeChargeOrderID(t *testing.T) {
	ctx := context.Background()
	h := newHostedShop(t, dbtest.Open(t, "sqlite"))
	s := h.ready(t)
	done, err := h.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
	if err != nil || done.Order == nil {
		t.Fatalf("complete: %v %+v", err, done)
	}
	intents := h.stripe.PaymentIntents()
	if len(intents) != 1 {
		t.Fatalf("%d payment intents, want 1", len(intents))
	}
	if md := intents[0].Metadata; md["order_id"] != done.Order.ID || md["checkout_session_id"] != s.ID || md["idempotency_key"] == "" {
		t.Errorf("payment intent metadata %v; want order_id %s, checkout_session_id %s", md, done.Order.ID, s.ID)
	}
}
