package checkout_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
	"shop/server"
)

// Saving a card on Stripe Checkout (issue 48): the page of a linked
// buyer's session is made for their Stripe Customer and shows Checkout's
// own "save my card" checkbox; a card saved there is recorded as the
// account's, once, and pays their next session off-session.

// savingShop is the demo shop paying through Stripe (the emulator), with
// Stripe Checkout pages and saved cards, the accounts ada and bob, and its
// webhook endpoint served over HTTP.
type savingShop struct {
	*hostedShop
	wallet  *payments.Wallet
	webhook string
}

func newSavingShop(t *testing.T, db *gorm.DB) *savingShop {
	t.Helper()
	clk := &clock{now: time.Now().UTC()}
	srv := stripetest.New(t)
	st := srv.Stripe(payments.StripeOptions{Retries: -1})
	w := payments.NewWallet(db, st)
	co := newCheckout(t, db, clk, &checkout.Options{Charger: st, Linker: st, Wallet: w, PublicURL: "https://shop.example"})
	addAccounts(t, db, "ada", "bob")
	hook := httptest.NewServer(server.StripeWebhook(stripetest.WebhookSecret, co, slog.New(slog.DiscardHandler)))
	t.Cleanup(hook.Close)
	return &savingShop{hostedShop: &hostedShop{co: co, clk: clk, db: db, stripe: srv}, wallet: w, webhook: hook.URL}
}

// completed delivers page's checkout.session.completed event to the shop's
// webhook, as Stripe does; it must be acknowledged.
func (h *savingShop) completed(t *testing.T, page string) {
	t.Helper()
	payload, sig := h.stripe.Event("checkout.session.completed", stripetest.WebhookSecret, page)
	req, err := http.NewRequest(http.MethodPost, h.webhook, bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Stripe-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("webhook answered %d", res.StatusCode)
	}
}

// pageForm is the Checkout Session create request of page, found by its
// payment link's id in the metadata.
func (h *savingShop) pageForm(t *testing.T, page string) url.Values {
	t.Helper()
	var link string
	if err := h.db.Raw("SELECT id FROM payment_links WHERE external_id = ?", page).Scan(&link).Error; err != nil || link == "" {
		t.Fatalf("no link of page %s (%v)", page, err)
	}
	for _, r := range requestsTo(h.stripe, "/v1/checkout/sessions") {
		if r.Form.Get("metadata[payment_link_id]") == link {
			return r.Form
		}
	}
	t.Fatalf("no create request of page %s", page)
	return nil
}

func (h *savingShop) customerOf(t *testing.T, account string) string {
	t.Helper()
	var cust string
	if err := h.db.Raw("SELECT customer_id FROM payment_customers WHERE account_id = ?", account).Scan(&cust).Error; err != nil {
		t.Fatal(err)
	}
	return cust
}

func addAccounts(t *testing.T, db *gorm.DB, ids ...string) {
	t.Helper()
	now := time.Now().UTC()
	for _, id := range ids {
		if err := db.Exec("INSERT INTO accounts (id, email, created_at, updated_at) VALUES (?, ?, ?, ?)", id, id+"@example.com", now, now).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// TestPaymentLinkSavesCard: ada's page is made for her Stripe Customer
// with the save option; she ticks it and pays; the webhook (delivered
// twice) records the card once; her next session lists it and
// complete_checkout pays with it off-session: two PaymentIntents, two
// orders. Her next page is made for the same customer, created once with
// her email.
func TestPaymentLinkSavesCard(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newSavingShop(t, db)
		first := readyFor(t, h.co, "ada")
		_, page := h.page(t, first)
		cust := h.customerOf(t, "ada")
		form := h.pageForm(t, page)
		if !strings.HasPrefix(cust, "cus_") || form.Get("customer") != cust || form.Get("saved_payment_method_options[payment_method_save]") != "enabled" {
			t.Fatalf("ada's page was made with %v; want customer %q and the save option", form, cust)
		}
		if form.Has("customer_email") {
			t.Errorf("customer_email sent with customer: %v", form)
		}

		h.stripe.PaySaving(page)
		h.completed(t, page)
		h.completed(t, page)                                 // a replay
		if err := h.co.SettleHosted(ctx, page); err != nil { // the success page, or the reconciler
			t.Fatal(err)
		}
		if got, _ := h.co.Get(asOwner(t, db, first.ID), first.ID); got.Status != checkout.Completed {
			t.Fatalf("paid page: session %s", got.Status)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM saved_cards WHERE account_id = 'ada'"); n != 1 {
			t.Fatalf("%d saved cards; want the one saved on the page, once", n)
		}

		next := readyFor(t, h.co, "ada")
		saved := h.stripe.SavedMethods()
		m := next.PaymentProvider.ManagedPaymentMethods
		want := checkout.ManagedPaymentMethod{Type: "card", DisplayName: "Visa •••• 4242, expires 12/2034", DisplayLast4: "4242", DisplayBrand: "visa"}
		if len(saved) != 1 || saved[0].Customer != cust || len(m) != 1 {
			t.Fatalf("attached at Stripe %+v; offered %+v", saved, m)
		}
		want.ID = saved[0].ID
		if m[0] != want {
			t.Fatalf("managed_payment_methods = %+v; want [%+v]", m, want)
		}
		done, err := h.co.Complete(linkedAs("ada"), checkout.CompleteRequest{SessionID: next.ID, Payment: pay(want.ID)})
		if err != nil || done.Status != checkout.Completed || done.Order == nil {
			t.Fatalf("complete with the card saved on the page: %v %+v", err, done)
		}
		pis := h.stripe.PaymentIntents()
		if len(pis) != 2 || pis[0].CheckoutSession != page || pis[1].Status != "succeeded" || pis[1].Amount != total(next) {
			t.Fatalf("PaymentIntents %+v; want the page's and one off-session charge of the next session", pis)
		}
		for _, r := range h.stripe.Requests() {
			if r.Method == http.MethodPost && r.Path == "/v1/payment_intents" &&
				(r.Form.Get("customer") != cust || r.Form.Get("payment_method") != want.ID || r.Form.Get("off_session") != "true") {
				t.Errorf("charge of the saved card sent %v", r.Form)
			}
		}
		if n := h.count(t, "SELECT COUNT(*) FROM orders"); n != 2 {
			t.Errorf("%d orders; want 2", n)
		}

		third := readyFor(t, h.co, "ada")
		_, again := h.page(t, third)
		if got := h.pageForm(t, again).Get("customer"); got != cust {
			t.Errorf("ada's next page is for customer %q; want %q", got, cust)
		}
		if made := requestsTo(h.stripe, "/v1/customers"); len(made) != 1 || made[0].Form.Get("email") != "ada@example.com" {
			t.Errorf("ada's customers were created with %v; want one, with her email for Checkout to show", made)
		}
	})
}

// TestPaymentLinkSavesNothing: a page paid without ticking the box saves
// nothing; a guest's page has no customer and no save option; a card saved
// to another customer than the buyer's is not recorded for the buyer; a
// customer Stripe cannot create now leaves a page that takes payment
// without saving.
func TestPaymentLinkSavesNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newSavingShop(t, db)
		unticked := readyFor(t, h.co, "ada")
		_, page := h.page(t, unticked)
		h.stripe.Pay(page)
		h.completed(t, page)
		if got, _ := h.co.Get(asOwner(t, db, unticked.ID), unticked.ID); got.Status != checkout.Completed {
			t.Fatalf("paid page: session %s", got.Status)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM saved_cards"); n != 0 || len(h.stripe.SavedMethods()) != 0 {
			t.Fatalf("%d cards saved without the buyer ticking the box", n)
		}
		if m := readyFor(t, h.co, "ada").PaymentProvider.ManagedPaymentMethods; len(m) != 0 {
			t.Errorf("ada's next session offers %+v", m)
		}

		guest := readyFor(t, h.co, "")
		_, page = h.page(t, guest)
		form := h.pageForm(t, page)
		if form.Has("customer") || hasKeyPrefix(form, "saved_payment_method_options") || form.Get("customer_email") != "ada@example.com" {
			t.Errorf("a guest's page was made with %v; want customer_email, no customer and no save option", form)
		}

		// Ada's customer is another one by the time her page is settled
		// (the shop's record of it restored from elsewhere): the card
		// Stripe attached to the page's customer is not hers to be offered.
		elsewhere := readyFor(t, h.co, "ada")
		_, page = h.page(t, elsewhere)
		h.stripe.PaySaving(page)
		if err := db.Exec("UPDATE payment_customers SET customer_id = 'cus_elsewhere' WHERE account_id = 'ada'").Error; err != nil {
			t.Fatal(err)
		}
		h.completed(t, page)
		if got, _ := h.co.Get(asOwner(t, db, elsewhere.ID), elsewhere.ID); got.Status != checkout.Completed {
			t.Fatalf("paid page: session %s", got.Status)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM saved_cards"); n != 0 {
			t.Errorf("%d cards recorded for ada that were saved to another customer", n)
		}

		// Bob's first page, while Stripe fails: no customer, no save
		// option, a page all the same.
		bobs := readyFor(t, h.co, "bob")
		h.stripe.FailNext(1, http.StatusInternalServerError)
		_, page = h.page(t, bobs)
		form = h.pageForm(t, page)
		if form.Has("customer") || hasKeyPrefix(form, "saved_payment_method_options") {
			t.Errorf("bob's page without a customer was made with %v", form)
		}
		if n := h.count(t, "SELECT COUNT(*) FROM payment_customers WHERE account_id = 'bob'"); n != 0 {
			t.Errorf("bob has %d customers after Stripe failed", n)
		}
	})
}

// readyFor is a session ready for payment made by account ("" for a guest).
func readyFor(t *testing.T, co *checkout.Checkout, account string) *checkout.Session {
	t.Helper()
	s, err := co.Create(linkedAs(account), checkout.Request{
		Items:   items("enamel-camp-mug-forest-green", 1),
		Address: californian, Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"},
	})
	if err != nil || s.Status != checkout.Ready {
		t.Fatalf("ready session: %v %+v", err, s)
	}
	return s
}

func requestsTo(srv *stripetest.Server, path string) []stripetest.Request {
	var out []stripetest.Request
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost && r.Path == path && r.Status == http.StatusOK {
			out = append(out, r)
		}
	}
	return out
}

func hasKeyPrefix(form url.Values, prefix string) bool {
	for k := range form {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
