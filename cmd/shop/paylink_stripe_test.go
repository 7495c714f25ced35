package main

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/payments/stripetest"
)

// deliver posts a signed event to the shop's webhook and answers the status.
func deliver(t *testing.T, base string, payload []byte, signature string) int {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/webhooks/stripe", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Stripe-Signature", signature)
	req.Header.Set("Content-Type", "application/json")
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPaymentLinkStripeWebhook: with a Stripe key, create_payment_link
// answers a Stripe Checkout page; its checkout.session.completed event and
// the buyer's return to the success address, arriving together, place one
// order; replayed and out-of-order events change nothing; a forged one is
// refused; a session also paid through complete_checkout has its second
// payment refunded.
func TestPaymentLinkStripeWebhook(t *testing.T) {
	srv := stripetest.New(t)
	dsn := dbtest.DSN(t, database.SQLite)
	shop := startShop(t, dsn, map[string]string{
		"STRIPE_SECRET_KEY": stripetest.SecretKey, "STRIPE_API_BASE": srv.URL, "STRIPE_WEBHOOK_SECRET": webhookSecret,
	})
	s := connect(t, shop.url)
	cs := readySession(t, s)
	res := call(t, s, "create_payment_link", map[string]any{"checkout_session_id": cs.ID})
	if res.IsError {
		t.Fatal(text(res))
	}
	link := structured[checkout.PaymentLink](t, res)
	u, _ := url.Parse(link.URL)
	page := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if link.Provider != "stripe" || !strings.HasPrefix(page, "cs_test_") {
		t.Fatalf("link %+v", link)
	}
	status := func() checkout.Session {
		return session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
	}

	payload, sig := srv.Event("checkout.session.completed", "whsec_someone_else", page)
	if code := deliver(t, shop.url, payload, sig); code != 400 {
		t.Errorf("forged event: %d, want 400", code)
	}
	srv.Pay(page)
	if got := status(); got.Status != checkout.Ready {
		t.Fatalf("paid before any word from Stripe: %s", got.Status)
	}
	payload, sig = srv.Event("checkout.session.completed", webhookSecret, page)
	success := srv.SuccessURL(page)
	if !strings.HasPrefix(success, shop.url+"/pay/"+cs.ID+"/return?") {
		t.Fatalf("success address %q", success)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	var hook, back int
	var loc string
	go func() { defer wg.Done(); hook = deliver(t, shop.url, payload, sig) }()
	go func() { defer wg.Done(); back, loc, _ = get(t, success) }()
	wg.Wait()
	if hook != 200 || back != http.StatusSeeOther || !strings.Contains(loc, "/orders/") {
		t.Fatalf("webhook %d, success page %d %q", hook, back, loc)
	}
	done := status()
	if done.Status != checkout.Completed || done.Order == nil || !strings.HasPrefix(loc, done.Order.PermalinkURL) {
		t.Fatalf("after paying: %s %+v", done.Status, done.Order)
	}
	late, lateSig := srv.Event("checkout.session.expired", webhookSecret, page)
	for _, ev := range []struct {
		payload []byte
		sig     string
	}{{payload, sig}, {late, lateSig}} {
		if code := deliver(t, shop.url, ev.payload, ev.sig); code != 200 {
			t.Errorf("replayed or late event: %d", code)
		}
	}
	if n := rows(t, dsn, "orders", "surplus_payments"); n["orders"] != 1 || n["surplus_payments"] != 0 || len(srv.Refunds()) != 0 {
		t.Errorf("rows %v, refunds %v; want one order and no refund", n, srv.Refunds())
	}

	// Paid both ways: a page paid, then complete_checkout, then Stripe's word.
	cs2 := readySession(t, s)
	link2 := structured[checkout.PaymentLink](t, call(t, s, "create_payment_link", map[string]any{"checkout_session_id": cs2.ID}))
	u2, _ := url.Parse(link2.URL)
	page2 := u2.Path[strings.LastIndex(u2.Path, "/")+1:]
	pi := srv.Pay(page2)
	if got := session(t, complete(t, s, cs2.ID, "pm_card_visa")); got.Status != checkout.Completed {
		t.Fatalf("complete_checkout: %s", got.Status)
	}
	payload, sig = srv.Event("checkout.session.completed", webhookSecret, page2)
	if code := deliver(t, shop.url, payload, sig); code != 200 {
		t.Fatalf("event: %d", code)
	}
	if refunds := srv.Refunds(); len(refunds) != 1 || refunds[0].PaymentIntent != pi || refunds[0].Amount != cs2.Totals[len(cs2.Totals)-1].Amount {
		t.Errorf("refunds %+v; want the page's payment %s refunded in full", refunds, pi)
	}
	if n := rows(t, dsn, "orders", "surplus_payments"); n["orders"] != 2 || n["surplus_payments"] != 1 {
		t.Errorf("rows %v; want 2 orders (one per session) and 1 surplus payment", n)
	}
}
