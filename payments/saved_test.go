package payments_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// addAccount writes an account row, which customers and saved cards belong to.
func addAccount(t *testing.T, db *gorm.DB, id string) {
	t.Helper()
	now := time.Now().UTC()
	if err := db.Exec("INSERT INTO accounts (id, email, created_at, updated_at) VALUES (?, ?, ?, ?)", id, id+"@example.com", now, now).Error; err != nil {
		t.Fatal(err)
	}
}

func wantTokenError(t *testing.T, err error, what string) {
	t.Helper()
	var e *shop.Error
	if !errors.As(err, &e) || e.Param != "$.payment_data.token" {
		t.Errorf("%s: err = %v; want a *shop.Error for $.payment_data.token", what, err)
	}
}

type walletProvider interface {
	payments.Vault
	Charge(ctx context.Context, r payments.Request) (*payments.Result, error)
}

// TestWalletSaveListChargeRemove runs the whole life of saved cards on the
// sandbox and on the Stripe emulator: save two, list newest first, charge
// one off-session once per key, refuse another account's, a card needing
// authentication off-session asks for it, remove one.
func TestWalletSaveListChargeRemove(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		em := stripetest.New(t)
		for name, p := range map[string]walletProvider{
			"sandbox": payments.NewSandbox(db, nil),
			"stripe":  em.Stripe(payments.StripeOptions{}),
		} {
			t.Run(name, func(t *testing.T) {
				ada, bob := "acct_ada_"+name, "acct_bob_"+name
				addAccount(t, db, ada)
				addAccount(t, db, bob)
				w := payments.NewWallet(db, p)
				if _, err := w.Save(ctx, ada, "spt_from_the_sheet"); err == nil {
					t.Error("a shared payment token was saved")
				}
				if _, err := w.Save(ctx, ada, "pm_card_visa_chargeDeclined"); err == nil {
					t.Error("saved a card Stripe declines when attached")
				}
				visa, err := w.Save(ctx, ada, "pm_card_visa")
				if err != nil {
					t.Fatal(err)
				}
				auth, err := w.Save(ctx, ada, "pm_card_authenticationRequired")
				if err != nil {
					t.Fatal(err)
				}
				if visa.Customer == "" || visa.Customer != auth.Customer {
					t.Errorf("customers %q, %q; want one customer per account", visa.Customer, auth.Customer)
				}
				cards, err := w.Cards(ctx, ada)
				if err != nil || len(cards) != 2 || cards[0].ID != auth.ID || cards[1].ID != visa.ID {
					t.Fatalf("Cards = %+v, %v; want the two, newest first", cards, err)
				}
				if got := cards[1].DisplayName(); got != "Visa •••• 4242, expires 12/2034" {
					t.Errorf("DisplayName = %q", got)
				}
				if others, _ := w.Cards(ctx, bob); len(others) != 0 {
					t.Errorf("bob's cards = %+v; want none", others)
				}
				// Ownership: the card is ada's, not bob's nor a guest's.
				if c, err := w.Card(ctx, ada, visa.ID); err != nil || c == nil {
					t.Errorf("Card(ada) = %v, %v", c, err)
				}
				_, err = w.Card(ctx, bob, visa.ID)
				wantTokenError(t, err, "another account's card")
				_, err = w.Card(ctx, "", visa.ID)
				wantTokenError(t, err, "a guest naming a saved card")
				if c, err := w.Card(ctx, ada, "pm_card_visa"); c != nil || err != nil {
					t.Errorf("Card(pm_card_visa) = %v, %v; want no saved card", c, err)
				}

				req := payments.Request{Amount: 1500, Currency: "usd", Token: visa.ID, Customer: visa.Customer, IdempotencyKey: "k_" + name}
				for range 2 {
					res, err := p.Charge(ctx, req)
					if err != nil || res.Status != payments.Succeeded || res.CardLast4 != "4242" {
						t.Fatalf("Charge saved = %+v, %v", res, err)
					}
				}
				res, err := p.Charge(ctx, payments.Request{Amount: 1500, Currency: "usd", Token: auth.ID, Customer: auth.Customer, IdempotencyKey: "k3_" + name})
				if err != nil || res.Status != payments.RequiresAction || res.DeclineCode != "authentication_required" {
					t.Errorf("Charge authenticationRequired off-session = %+v, %v; want requires_action", res, err)
				}
				// Charged through another customer, the provider refuses too.
				_, err = p.Charge(ctx, payments.Request{Amount: 1500, Currency: "usd", Token: visa.ID, Customer: "cus_other", IdempotencyKey: "k4_" + name})
				wantTokenError(t, err, "a saved card charged through another customer")

				if err := w.Remove(ctx, bob, visa.ID); err == nil {
					t.Error("bob removed ada's card")
				}
				if err := w.Remove(ctx, ada, visa.ID); err != nil {
					t.Fatal(err)
				}
				cards, _ = w.Cards(ctx, ada)
				if len(cards) != 1 || cards[0].ID != auth.ID {
					t.Errorf("after Remove, Cards = %+v", cards)
				}
				_, err = w.Card(ctx, ada, visa.ID)
				wantTokenError(t, err, "a removed card")
				_, err = p.Charge(ctx, payments.Request{Amount: 1500, Currency: "usd", Token: visa.ID, Customer: visa.Customer, IdempotencyKey: "k5_" + name})
				wantTokenError(t, err, "a detached card at the provider")
			})
		}
		var n int
		for _, m := range em.SavedMethods() {
			if m.Customer == "" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("emulator: %d detached methods; want 1", n)
		}
	})
}

// TestWalletAnotherProvider: a card saved with the sandbox is refused once
// the shop takes payments through Stripe.
func TestWalletAnotherProvider(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		addAccount(t, db, "ada")
		c, err := payments.NewWallet(db, payments.NewSandbox(db, nil)).Save(ctx, "ada", "pm_card_visa")
		if err != nil {
			t.Fatal(err)
		}
		w := payments.NewWallet(db, stripetest.New(t).Stripe(payments.StripeOptions{}))
		_, err = w.Card(ctx, "ada", c.ID)
		wantTokenError(t, err, "a card saved with another provider")
		if cards, _ := w.Cards(ctx, "ada"); len(cards) != 0 {
			t.Errorf("Stripe's wallet lists the sandbox's cards: %+v", cards)
		}
	})
}

// TestStripeMockSavedCards sends saved cards' requests (create a Customer,
// attach, charge off-session, detach, delete the Customer) to stripe-mock, which checks each
// parameter against Stripe's OpenAPI spec.
func TestStripeMockSavedCards(t *testing.T) {
	s, rt, _, _ := mockedStripe(t)
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		addAccount(t, db, "ada")
		w := payments.NewWallet(db, s)
		c, err := w.Save(ctx, "ada", "pm_card_visa")
		if err != nil {
			t.Fatalf("Save: %v", err)
		}
		if c.Customer == "" || c.ID == "" || c.Last4 == "" {
			t.Errorf("saved %+v", c)
		}
		rt.accepted(t, 2) // the customer, the attach
		if _, err := s.Charge(ctx, payments.Request{Amount: 1500, Currency: "usd", Token: c.ID, Customer: c.Customer, IdempotencyKey: "k_mock"}); err != nil {
			t.Fatalf("Charge: %v", err)
		}
		ex := rt.accepted(t, 1)[0]
		if ex.Form.Get("off_session") != "true" || ex.Form.Get("customer") != c.Customer || ex.Form.Get("payment_method") != c.ID {
			t.Errorf("the charge sent %v; want the customer, the saved payment method and off_session", ex.Form)
		}
		if err := w.Remove(ctx, "ada", c.ID); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		rt.accepted(t, 1)
		if err := w.Forget(ctx, "ada"); err != nil {
			t.Fatalf("Forget: %v", err)
		}
		if ex := rt.accepted(t, 1)[0]; ex.Method != http.MethodDelete || ex.Path != "/v1/customers/"+c.Customer || len(ex.Form) != 0 {
			t.Errorf("Forget sent %s %s %v; want DELETE /v1/customers/%s", ex.Method, ex.Path, ex.Form, c.Customer)
		}
	})
}

// TestWalletRecord: a card saved on a hosted page is recorded for the
// account only when it was saved to the account's own customer, once
// however often it is reported, and a card removed since stays removed.
func TestWalletRecord(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := payments.NewWallet(db, stripetest.New(t).Stripe(payments.StripeOptions{Retries: -1}))
		for _, id := range []string{"ada", "bob", "cy"} {
			addAccount(t, db, id)
		}
		ada, err := w.Customer(ctx, "ada", "")
		if err != nil {
			t.Fatal(err)
		}
		bob, err := w.Customer(ctx, "bob", "")
		if err != nil {
			t.Fatal(err)
		}
		card := payments.SavedCard{ID: "pm_1OnThePage", Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2034}
		for _, tt := range []struct {
			account, customer string
		}{{"ada", bob}, {"cy", ada}, {"", ada}, {"ada", ""}} {
			c := card
			c.Customer = tt.customer
			if kept, err := w.Record(ctx, tt.account, c); kept || err != nil {
				t.Errorf("Record for %q of a card of customer %q = %v, %v; want nothing recorded", tt.account, tt.customer, kept, err)
			}
		}
		card.Customer = ada
		for range 2 {
			if kept, err := w.Record(ctx, "ada", card); !kept || err != nil {
				t.Fatalf("Record = %v, %v", kept, err)
			}
		}
		cards, err := w.Cards(ctx, "ada")
		if err != nil || len(cards) != 1 || cards[0].ID != card.ID || cards[0].Customer != ada || cards[0].Provider != "stripe" ||
			cards[0].DisplayName() != "Visa •••• 4242, expires 12/2034" {
			t.Fatalf("ada's cards %+v, %v", cards, err)
		}
		if others, _ := w.Cards(ctx, "bob"); len(others) != 0 {
			t.Errorf("bob's cards %+v", others)
		}
		if err := w.Remove(ctx, "ada", card.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Record(ctx, "ada", card); err != nil {
			t.Fatal(err)
		}
		if cards, _ := w.Cards(ctx, "ada"); len(cards) != 0 {
			t.Errorf("a removed card recorded again is offered: %+v", cards)
		}
	})
}

// TestWalletForget: forgetting an account deletes its customer at the
// provider, so its saved card is detached there and charging it is
// refused, and the shop lists it no more; forgetting again, or a customer
// already gone at Stripe, is fine; a provider's failure forgets nothing.
func TestWalletForget(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		em := stripetest.New(t)
		for name, p := range map[string]walletProvider{
			"sandbox": payments.NewSandbox(db, nil),
			"stripe":  em.Stripe(payments.StripeOptions{Retries: -1}),
		} {
			t.Run(name, func(t *testing.T) {
				ada := "acct_forget_" + name
				addAccount(t, db, ada)
				w := payments.NewWallet(db, p)
				if err := w.Forget(ctx, ada); err != nil {
					t.Fatalf("Forget without a customer: %v", err)
				}
				visa, err := w.Save(ctx, ada, "pm_card_visa")
				if err != nil {
					t.Fatal(err)
				}
				if name == "stripe" {
					em.FailNext(1, 500)
					if err := w.Forget(ctx, ada); err == nil {
						t.Fatal("Forget succeeded while Stripe answered 500")
					}
					if cards, _ := w.Cards(ctx, ada); len(cards) != 1 || !attached(em, visa.ID, visa.Customer) {
						t.Fatalf("after a failed Forget: cards %+v, emulator %+v; want the card kept", cards, em.SavedMethods())
					}
				}
				for range 2 {
					if err := w.Forget(ctx, ada); err != nil {
						t.Fatalf("Forget: %v", err)
					}
				}
				if cards, _ := w.Cards(ctx, ada); len(cards) != 0 {
					t.Errorf("after Forget, cards %+v", cards)
				}
				_, err = p.Charge(ctx, payments.Request{Amount: 1500, Currency: "usd", Token: visa.ID, Customer: visa.Customer, IdempotencyKey: "kf_" + name})
				wantTokenError(t, err, "a card of a deleted customer")
				if name == "stripe" && attached(em, visa.ID, visa.Customer) {
					t.Errorf("the emulator's card is still attached: %+v", em.SavedMethods())
				}
				// Another account's customer, deleted at Stripe meanwhile (in
				// the Dashboard): Forget takes it as done.
				bob := "acct_forget_bob_" + name
				addAccount(t, db, bob)
				other, err := w.Save(ctx, bob, "pm_card_amex")
				if err != nil {
					t.Fatal(err)
				}
				if name == "stripe" {
					deleteAtStripe(t, em, other.Customer)
				}
				if err := w.Forget(ctx, bob); err != nil {
					t.Errorf("Forget of a customer already deleted: %v", err)
				}
			})
		}
	})
}

// attached reports whether the emulator's payment method id is attached to
// customer.
func attached(em *stripetest.Server, id, customer string) bool {
	for _, m := range em.SavedMethods() {
		if m.ID == id {
			return m.Customer == customer
		}
	}
	return false
}

// deleteAtStripe deletes a customer as the merchant would in the Dashboard.
func deleteAtStripe(t *testing.T, em *stripetest.Server, customer string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, em.URL+"/v1/customers/"+customer, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk_test_dashboard")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deleting %s at the emulator: %d", customer, res.StatusCode)
	}
}

// TestIsSavedCardID: only a PaymentMethod's id can name a saved card, so
// that complete_checkout asks the database for nothing else.
func TestIsSavedCardID(t *testing.T) {
	for token, want := range map[string]bool{
		"pm_1OnThePage": true, "pm_sandbox_abc": true,
		"pm_card_visa": false, "pm_card_authenticationRequired": false, "spt_123": false, "tok_visa": false, "": false,
	} {
		if got := payments.IsSavedCardID(token); got != want {
			t.Errorf("IsSavedCardID(%q) = %v, want %v", token, got, want)
		}
	}
}
