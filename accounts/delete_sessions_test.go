package accounts_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"

	"shop/accounts"
	"shop/checkout"
	"shop/database/dbtest"
)

// TestDeleteEndsSessions: deleting an account cancels its open sessions
// (ready and not ready) and releases the stock they held, clearing their
// buyer and address, in the deletion's transaction: a deletion that fails
// later leaves them as they were. Another buyer's session is untouched.
func TestDeleteEndsSessions(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada, bob := ensure(t, db, "ada@example.com"), ensure(t, db, "bob@example.com")
		open := func(a accounts.Account, n int64) *checkout.Session {
			s, err := w.co.Create(linked(a), checkout.Request{Items: &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: n}},
				Address: californian, Buyer: &checkout.Buyer{Email: a.Email}})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("session of %s: %v %+v", a.Email, err, s)
			}
			return s
		}
		ready, other := open(ada, 2), open(bob, 1)
		notReady, err := w.co.Create(linked(ada), checkout.Request{Items: &[]checkout.Item{{ID: "enamel-camp-mug-cream", Quantity: 1}}})
		if err != nil || notReady.Status != checkout.NotReady {
			t.Fatalf("a session without an address: %v %+v", err, notReady)
		}
		held := func(id string) int64 {
			var n int64
			if err := db.Raw("SELECT COALESCE(SUM(quantity), 0) FROM stock_holds WHERE holder = ?", id).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		status := func(id string) (s string) {
			if err := db.Raw("SELECT status FROM checkout_sessions WHERE id = ?", id).Scan(&s).Error; err != nil {
				t.Fatal(err)
			}
			return s
		}

		// A deletion that fails after the sessions were ended ends none.
		failed := errors.New("audit failed")
		if _, err := w.data.Delete(ctx, ada.ID, func(*gorm.DB, *accounts.Deleted) error { return failed }); !errors.Is(err, failed) {
			t.Fatalf("a failing deletion: %v", err)
		}
		if status(ready.ID) != string(checkout.Ready) || held(ready.ID) != 2 {
			t.Fatalf("after a failed deletion ada's session is %s holding %d; want ready holding 2", status(ready.ID), held(ready.ID))
		}

		w.mustCall(t, linked(ada), "delete_my_account", map[string]any{"confirm_email": ada.Email}, nil)
		for _, id := range []string{ready.ID, notReady.ID} {
			if got := status(id); got != string(checkout.Canceled) {
				t.Errorf("ada's session %s is %s after her deletion; want canceled", id, got)
			}
			if n := held(id); n != 0 {
				t.Errorf("ada's session %s holds %d units after her deletion", id, n)
			}
		}
		var address, email string
		if err := db.Raw("SELECT address, buyer_email FROM checkout_sessions WHERE id = ?", ready.ID).Row().Scan(&address, &email); err != nil || address != "" || email != "" {
			t.Errorf("ada's canceled session keeps address %q, email %q (%v)", address, email, err)
		}
		if status(other.ID) != string(checkout.Ready) || held(other.ID) != 1 {
			t.Errorf("bob's session is %s holding %d; want ready holding 1", status(other.ID), held(other.ID))
		}
	})
}
