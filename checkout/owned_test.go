package checkout_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
)

// TestLinkedSessionIsTheirs is issue 54's attack: a guest holding the id of
// ada's session, and bob with his own token, try everything a session id
// allows. Each call answers not_found, as for an unknown id, and ada's
// session, its stock and her saved card are as they were; ada herself, and
// the session's signed payment page, still act on it. A guest's session
// stays its id's holder's.
func TestLinkedSessionIsTheirs(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := walletShop(t, db, payments.NewSandbox(db, nil))
		card := w.save(t, "ada", "pm_card_visa")
		s := w.readyAs(t, "ada")
		before := sessionJSON(linkedAs("ada"), t, w.co, s.ID)
		mallory := &checkout.Address{Name: "Mallory", LineOne: "9 Drop St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94103"}
		calls := []struct {
			name string
			call func(ctx context.Context) error
		}{
			{"Read", func(ctx context.Context) error { _, err := w.co.Get(ctx, s.ID); return err }},
			{"UpdateAddress", func(ctx context.Context) error {
				_, err := w.co.Update(ctx, s.ID, checkout.Request{Address: mallory})
				return err
			}},
			{"CreatePaymentLink", func(ctx context.Context) error { _, err := w.co.CreateLink(ctx, s.ID); return err }},
			{"PayWithTheSavedCard", func(ctx context.Context) error {
				_, err := w.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay(card.ID)})
				return err
			}},
			{"PayWithACard", func(ctx context.Context) error {
				_, err := w.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
				return err
			}},
			{"Cancel", func(ctx context.Context) error { _, err := w.co.Cancel(ctx, s.ID); return err }},
		}
		// bob's token with every scope: still not ada's.
		bob := shop.WithBuyer(context.Background(), shop.Buyer{AccountID: "bob", AccountEmail: "bob@example.com",
			Scopes: []string{shop.ScopePayments, shop.ScopeAccount, shop.ScopeOrdersRead}})
		guestAtAdas := shop.WithBuyer(context.Background(), shop.Buyer{Subject: "ada-host-user", Address: "192.0.2.1"})
		for who, ctx := range map[string]context.Context{"Guest": context.Background(), "GuestWithHostUser": guestAtAdas, "AnotherAccount": bob} {
			for _, c := range calls {
				t.Run(who+"/"+c.name, func(t *testing.T) {
					err := c.call(ctx)
					if code := shop.ErrorCode(err); code != shop.NotFound {
						t.Fatalf("err = %v (code %q); want not_found", err, code)
					}
					var e *shop.Error
					if errors.As(err, &e); e.Param != "$.checkout_session_id" {
						t.Errorf("param %q; want $.checkout_session_id", e.Param)
					}
				})
			}
		}
		if after := sessionJSON(linkedAs("ada"), t, w.co, s.ID); after != before {
			t.Errorf("ada's session changed:\nbefore %s\nafter  %s", before, after)
		}
		for _, table := range []string{"payment_attempts", "payment_links", "sandbox_charges"} {
			if n := w.count(t, table); n != 0 {
				t.Errorf("%d rows in %s after strangers' calls", n, table)
			}
		}
		if held := sessionHolds(t, db, s.ID); held != 1 {
			t.Errorf("ada's session holds %d units; want 1", held)
		}

		// The signed payment page acts for ada: it reads the session and
		// offers her card.
		page, err := w.co.Get(checkout.OnPaymentPage(context.Background()), s.ID)
		if err != nil || len(page.PaymentProvider.ManagedPaymentMethods) != 1 {
			t.Fatalf("the payment page: %v %+v", err, page)
		}
		// ada pays with her card.
		done, err := w.co.Complete(linkedAs("ada"), checkout.CompleteRequest{SessionID: s.ID, Payment: pay(card.ID)})
		if err != nil || done.Status != checkout.Completed {
			t.Fatalf("ada pays: %v %+v", err, done)
		}

		// A guest's session: anyone with its id acts on it.
		g := w.readyAs(t, "")
		if _, err := w.co.Update(bob, g.ID, checkout.Request{Address: mallory}); err != nil {
			t.Errorf("a guest's session updated by another caller: %v", err)
		}
		if _, err := w.co.Cancel(context.Background(), g.ID); err != nil {
			t.Errorf("a guest's session canceled by its id: %v", err)
		}
	})
}

// sessionJSON is the session id as ctx reads it, as JSON.
func sessionJSON(ctx context.Context, t *testing.T, co *checkout.Checkout, id string) string {
	t.Helper()
	s, err := co.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// asOwner is a call of the buyer who made session id: their account's when
// it is a linked buyer's, a guest's otherwise.
func asOwner(t *testing.T, db *gorm.DB, id string) context.Context {
	t.Helper()
	var key string
	if err := db.Raw("SELECT buyer_key FROM checkout_sessions WHERE id = ?", id).Scan(&key).Error; err != nil {
		t.Fatal(err)
	}
	if account, ok := strings.CutPrefix(key, "account:"); ok {
		return linkedAs(account)
	}
	return context.Background()
}
