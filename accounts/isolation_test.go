package accounts_test

import (
	"context"
	"slices"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/orders"
)

// TestTwoAccounts: one buyer's token never shows or counts another's
// sessions. A guest's session id is a bearer secret (docs/security.md);
// a session started with a token is that account's alone. Ada's sessions count toward Ada's
// hold limits only, Bob's sessions start with Bob's email, and Bob's token
// cannot change or pay a session of Ada's: its order is hers, listed under
// her account and never under his.
func TestTwoAccounts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada, bob := ensure(t, db, "ada@example.com"), ensure(t, db, "bob@example.com")
		mugs := func(n int64) *[]checkout.Item {
			return &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: n}}
		}
		create := func(ctx context.Context, n int64) *checkout.Session {
			t.Helper()
			s, err := w.co.Create(ctx, checkout.Request{Items: mugs(n), Address: californian})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		ready := func(id string) bool {
			t.Helper()
			s, err := w.co.Get(checkout.OnPaymentPage(context.Background()), id)
			if err != nil {
				t.Fatal(err)
			}
			return s.Status == checkout.Ready
		}

		// The demo policy's limit is 10 units of one variant per buyer.
		adas := create(linked(ada), 10)
		if adas.Status != checkout.Ready || adas.Buyer == nil || adas.Buyer.Email != "ada@example.com" {
			t.Fatalf("Ada's session: %s, buyer %+v", adas.Status, adas.Buyer)
		}
		bobs := create(linked(bob), 10)
		if bobs.Status != checkout.Ready || bobs.Buyer == nil || bobs.Buyer.Email != "bob@example.com" || errorsOf(bobs) != 0 {
			t.Fatalf("Bob's session beside Ada's: %s, buyer %+v, messages %+v", bobs.Status, bobs.Buyer, bobs.Messages)
		}
		if !ready(adas.ID) {
			t.Fatal("Bob's session made Ada's give way: their holds were counted together")
		}
		// Ada's own sessions are counted together: her next one takes the
		// older one's place.
		adas2 := create(linked(ada), 10)
		if adas2.Status != checkout.Ready || ready(adas.ID) || !ready(bobs.ID) {
			t.Fatalf("Ada's second session %s: her first ready %v, Bob's ready %v; want hers to give way, Bob's kept",
				adas2.Status, ready(adas.ID), ready(bobs.ID))
		}

		// Bob's token on Ada's session, its id in hand, finds no such
		// session (docs/security.md); Ada changes and pays it, and the order
		// is hers.
		for what, err := range map[string]error{
			"update": func() error {
				_, err := w.co.Update(linked(bob), adas2.ID, checkout.Request{Items: mugs(1)})
				return err
			}(),
			"complete": func() error {
				_, err := w.co.Complete(linked(bob), checkout.CompleteRequest{SessionID: adas2.ID, Payment: checkout.PaymentData{Token: "pm_card_visa", Provider: "stripe"}})
				return err
			}(),
		} {
			if shop.ErrorCode(err) != shop.NotFound {
				t.Errorf("Bob's %s of Ada's session: %v; want not_found", what, err)
			}
		}
		upd, err := w.co.Update(linked(ada), adas2.ID, checkout.Request{Items: mugs(1)})
		if err != nil || upd.Buyer == nil || upd.Buyer.Email != "ada@example.com" {
			t.Fatalf("Ada's update of her session: %v %+v", err, upd)
		}
		done, err := w.co.Complete(linked(ada), checkout.CompleteRequest{SessionID: adas2.ID, Payment: checkout.PaymentData{Token: "pm_card_visa", Provider: "stripe"}})
		if err != nil || done.Order == nil {
			t.Fatalf("complete: %v %+v", err, done)
		}
		var detail orders.OrderDetailResult
		w.mustCall(t, owner(), "get_order", map[string]any{"order_id": done.Order.ID}, &detail)
		if detail.Order.AccountID != ada.ID {
			t.Errorf("the order of Ada's session belongs to %q, want Ada's %s", detail.Order.AccountID, ada.ID)
		}
		var mine accounts.MyOrders
		w.mustCall(t, linked(bob), "list_my_orders", nil, &mine)
		if len(mine.Orders) != 0 {
			t.Errorf("Bob's orders = %v, want none", orderIDs(mine.Orders))
		}
		if err := w.call(t, linked(bob), "get_my_order", map[string]any{"order_id": done.Order.ID}, nil); shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("Bob's get_my_order of Ada's order: %v, want not_found", err)
		}
		w.mustCall(t, linked(ada), "list_my_orders", nil, &mine)
		if got := orderIDs(mine.Orders); !slices.Equal(got, []string{done.Order.ID}) {
			t.Errorf("Ada's orders = %v, want %s", got, done.Order.ID)
		}
	})
}

// errorsOf counts a session's error messages.
func errorsOf(s *checkout.Session) int {
	n := 0
	for _, m := range s.Messages {
		if m.Type == "error" {
			n++
		}
	}
	return n
}
