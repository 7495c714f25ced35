package checkout_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// wallets is a paying shop whose provider keeps saved cards, with two
// linked accounts, ada and bob.
type wallets struct {
	*paying
	wallet *payments.Wallet
}

type vaultCharger interface {
	checkout.Charger
	payments.Vault
}

func walletShop(t *testing.T, db *gorm.DB, charger vaultCharger) *wallets {
	t.Helper()
	w := payments.NewWallet(db, charger)
	p := payingShopOpts(t, db, &checkout.Options{Charger: charger, Wallet: w}, nil)
	now := time.Now().UTC()
	for _, id := range []string{"ada", "bob"} {
		if err := db.Exec("INSERT INTO accounts (id, email, created_at, updated_at) VALUES (?, ?, ?, ?)", id, id+"@example.com", now, now).Error; err != nil {
			t.Fatal(err)
		}
	}
	return &wallets{paying: p, wallet: w}
}

// linkedAs is ctx for a linked account ("" for a guest).
func linkedAs(account string) context.Context {
	if account == "" {
		return context.Background()
	}
	return shop.WithBuyer(context.Background(), shop.Buyer{AccountID: account, AccountEmail: account + "@example.com", Scopes: []string{shop.ScopePayments}})
}

// save saves the card token pays with for account.
func (w *wallets) save(t *testing.T, account, token string) *payments.SavedCard {
	t.Helper()
	card, err := w.wallet.Save(context.Background(), account, token)
	if err != nil {
		t.Fatal(err)
	}
	return card
}

// readyAs is a session ready for payment made by account ("" for a guest).
func (w *wallets) readyAs(t *testing.T, account string) *checkout.Session {
	t.Helper()
	return readyFor(t, w.co, account)
}

func refusedToken(t *testing.T, err error, what string) {
	t.Helper()
	var e *shop.Error
	if !errors.As(err, &e) || e.Param != "$.payment_data.token" {
		t.Errorf("%s: err = %v; want a refusal for $.payment_data.token", what, err)
	}
}

// TestSavedCardRoad: a card saved on the payment page is offered by the
// account's next session, pays it in one call (one charge, one order,
// through the account's customer), and is offered to nobody else.
func TestSavedCardRoad(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := walletShop(t, db, payments.NewSandbox(db, nil))
		first := w.readyAs(t, "ada")
		if len(first.PaymentProvider.ManagedPaymentMethods) != 0 {
			t.Fatalf("a session before any saved card offers %+v", first.PaymentProvider.ManagedPaymentMethods)
		}
		saved, err := w.co.SaveCard(context.Background(), first.ID, "pm_card_mastercard")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.co.Complete(linkedAs("ada"), checkout.CompleteRequest{SessionID: first.ID, Payment: pay(saved)}); err != nil {
			t.Fatal(err)
		}

		next := w.readyAs(t, "ada")
		m := next.PaymentProvider.ManagedPaymentMethods
		want := checkout.ManagedPaymentMethod{Type: "card", ID: saved, DisplayName: "Mastercard •••• 4444, expires 12/2034", DisplayLast4: "4444", DisplayBrand: "mastercard"}
		if len(m) != 1 || m[0] != want {
			t.Fatalf("managed_payment_methods = %+v; want [%+v]", m, want)
		}
		guest := w.readyAs(t, "")
		raw, _ := json.Marshal(guest)
		if strings.Contains(string(raw), "managed_payment_methods") {
			t.Errorf("a guest's session has managed_payment_methods: %s", raw)
		}
		if bob := w.readyAs(t, "bob"); len(bob.PaymentProvider.ManagedPaymentMethods) != 0 {
			t.Errorf("bob's session offers %+v", bob.PaymentProvider.ManagedPaymentMethods)
		}
		// Anyone but ada (a guest who has the session's id, bob) cannot
		// read ada's session at all (owned_test.go); ada's own token shows
		// no saved cards when it does not allow payments.
		noPayments := shop.WithBuyer(context.Background(), shop.Buyer{AccountID: "ada", AccountEmail: "ada@example.com", Scopes: []string{shop.ScopeOrdersRead}})
		if read, err := w.co.Get(noPayments, next.ID); err != nil || len(read.PaymentProvider.ManagedPaymentMethods) != 0 {
			t.Errorf("ada's session read without the payments scope offers %+v (%v)", read.PaymentProvider.ManagedPaymentMethods, err)
		}
		for who, ctx := range map[string]context.Context{"guest": context.Background(), "bob": linkedAs("bob")} {
			if _, err := w.co.Get(ctx, next.ID); shop.ErrorCode(err) != shop.NotFound {
				t.Errorf("ada's session read by %s: %v; want not_found", who, err)
			}
		}

		done, err := w.co.Complete(linkedAs("ada"), checkout.CompleteRequest{SessionID: next.ID, Payment: pay(saved)})
		if err != nil || done.Status != checkout.Completed || done.Order == nil {
			t.Fatalf("complete with the saved card: %v %+v", err, done)
		}
		var customer string
		if err := db.Raw("SELECT customer_id FROM payment_attempts WHERE session_id = ?", next.ID).Scan(&customer).Error; err != nil || !strings.HasPrefix(customer, "cus_sandbox_") {
			t.Errorf("attempt's customer = %q, %v", customer, err)
		}
		if n := w.count(t, "sandbox_charges"); n != 2 {
			t.Errorf("%d charges for two orders", n)
		}
	})
}

// TestSavedCardRefusals: a saved card pays only its owner's sessions; each
// refusal names $.payment_data.token and charges nothing.
func TestSavedCardRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := walletShop(t, db, payments.NewSandbox(db, nil))
		ada := w.save(t, "ada", "pm_card_visa")
		removed := w.save(t, "ada", "pm_card_amex")
		if err := w.wallet.Remove(context.Background(), "ada", removed.ID); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, owner, caller, token string
			// notFound: the session is not the caller's at all (owned_test.go).
			notFound bool
		}{
			{"AnotherBuyersCard", "bob", "bob", ada.ID, false},
			{"GuestNamesASavedCard", "", "", ada.ID, false},
			{"GuestCallsOnTheOwnersSession", "ada", "", ada.ID, true},
			{"AnotherBuyerCallsOnTheOwnersSession", "ada", "bob", ada.ID, true},
			{"RemovedCard", "ada", "ada", removed.ID, false},
			{"UnknownSandboxCard", "ada", "ada", "pm_sandbox_nosuchcard", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := w.readyAs(t, tc.owner)
				_, err := w.co.Complete(linkedAs(tc.caller), checkout.CompleteRequest{SessionID: s.ID, Payment: pay(tc.token)})
				if tc.notFound {
					if shop.ErrorCode(err) != shop.NotFound {
						t.Errorf("err = %v; want not_found", err)
					}
				} else {
					refusedToken(t, err, tc.name)
				}
				after, _ := w.co.Get(linkedAs(tc.owner), s.ID)
				if after.Status != checkout.Ready {
					t.Errorf("session %s after the refusal; want ready_for_payment", after.Status)
				}
			})
		}
		if n := w.count(t, "sandbox_charges"); n != 0 {
			t.Errorf("%d charges after refusals", n)
		}
		if n := w.count(t, "payment_attempts"); n != 0 {
			t.Errorf("%d payment attempts after refusals", n)
		}
	})
}

// TestSavedCardAuthenticationRequired: a saved card whose bank wants the
// buyer off-session answers requires_3ds and points to the payment page.
func TestSavedCardAuthenticationRequired(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := walletShop(t, db, payments.NewSandbox(db, nil))
		card := w.save(t, "ada", "pm_card_authenticationRequired")
		s := w.readyAs(t, "ada")
		got, err := w.co.Complete(linkedAs("ada"), checkout.CompleteRequest{SessionID: s.ID, Payment: pay(card.ID)})
		if err != nil || got.Status != checkout.Ready || len(got.Messages) == 0 {
			t.Fatalf("complete: %v %+v", err, got)
		}
		m := got.Messages[0]
		if m.Code != string(shop.Requires3DS) || !strings.Contains(m.Content, "create_payment_link") {
			t.Errorf("message %+v; want requires_3ds pointing to create_payment_link", m)
		}
	})
}

// TestSavedCardConcurrently: many calls paying one session with a saved
// card charge it once.
func TestSavedCardConcurrently(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := walletShop(t, db, payments.NewSandbox(db, nil))
		card := w.save(t, "ada", "pm_card_visa")
		s := w.readyAs(t, "ada")
		var wg sync.WaitGroup
		orders := make([]string, 16)
		for i := range orders {
			wg.Go(func() {
				r, err := w.co.Complete(linkedAs("ada"), checkout.CompleteRequest{SessionID: s.ID, Payment: pay(card.ID)})
				if err == nil && r.Order != nil {
					orders[i] = r.Order.ID
				}
			})
		}
		wg.Wait()
		ids := map[string]bool{}
		for _, id := range orders {
			if id != "" {
				ids[id] = true
			}
		}
		if len(ids) != 1 {
			t.Errorf("callers saw %d orders; want 1", len(ids))
		}
		for table, want := range map[string]int64{"orders": 1, "sandbox_charges": 1, "payment_attempts": 1} {
			if n := w.count(t, table); n != want {
				t.Errorf("%s: %d rows, want %d", table, n, want)
			}
		}
	})
}

// TestSavedCardStripe: the same road through Stripe's API (the emulator):
// the charge is a PaymentIntent with the customer, the saved payment
// method, off_session and confirm; a retry after a lost answer charges
// once; another buyer's card is refused before Stripe is asked.
func TestSavedCardStripe(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		em := stripetest.New(t)
		w := walletShop(t, db, em.Stripe(payments.StripeOptions{RetryWait: time.Millisecond}))
		first := w.readyAs(t, "ada")
		saved, err := w.co.SaveCard(context.Background(), first.ID, "pm_card_visa")
		if err != nil {
			t.Fatal(err)
		}
		s := w.readyAs(t, "ada")
		if m := s.PaymentProvider.ManagedPaymentMethods; len(m) != 1 || m[0].ID != saved || !strings.HasPrefix(saved, "pm_1") {
			t.Fatalf("managed_payment_methods = %+v", m)
		}
		bobs := w.readyAs(t, "bob")
		_, err = w.co.Complete(linkedAs("bob"), checkout.CompleteRequest{SessionID: bobs.ID, Payment: pay(saved)})
		refusedToken(t, err, "bob paying with ada's card")

		em.FailNext(1, 500)
		done, err := w.co.Complete(linkedAs("ada"), checkout.CompleteRequest{SessionID: s.ID, Payment: pay(saved)})
		if err != nil || done.Status != checkout.Completed {
			t.Fatalf("complete: %v %+v", err, done)
		}
		var creates []stripetest.Request
		for _, r := range em.Requests() {
			if r.Method == "POST" && r.Path == "/v1/payment_intents" {
				creates = append(creates, r)
			}
		}
		if len(creates) != 2 || creates[0].IdempotencyKey != creates[1].IdempotencyKey {
			t.Fatalf("%d PaymentIntent creates; want a failed one and its retry with the same key", len(creates))
		}
		f := creates[1].Form
		if f.Get("customer") == "" || f.Get("payment_method") != saved || f.Get("off_session") != "true" || f.Get("confirm") != "true" {
			t.Errorf("PaymentIntent create form %v; want customer, the saved payment_method, off_session and confirm", f)
		}
		if n := len(em.PaymentIntents()); n != 1 {
			t.Errorf("%d PaymentIntents; want 1", n)
		}
	})
}
