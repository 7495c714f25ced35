package checkout_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
)

// TestKeptRowOfAnotherReplica: a replica that keeps the row it last wrote
// of a session (A) acts on the session as another replica (B) left it, not
// on its own row: its update keeps B's change, an update that changes
// nothing from A's row still lands, a session B canceled is refused, and
// A's payment charges and orders B's cart.
func TestKeptRowOfAnotherReplica(t *testing.T) {
	ctx := context.Background()
	const mug = "enamel-camp-mug-forest-green"
	cart := func(n int) *[]checkout.Item { return items(mug, n, "stoneware-coffee-mug-16-oz", 1) }
	quantity := func(s *checkout.Session) int64 {
		for _, l := range s.LineItems {
			if l.Item.ID == mug {
				return l.Item.Quantity
			}
		}
		return 0
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		a := payingShop(t, db, nil)
		b := payingShop(t, db, nil) // another replica on the same database: nothing of A's kept
		ready := func(t *testing.T) *checkout.Session {
			t.Helper()
			s := a.ready(t) // A keeps the row it wrote, with 2 mugs
			if _, err := b.co.Update(ctx, s.ID, checkout.Request{Items: cart(3)}); err != nil {
				t.Fatal(err)
			}
			return s
		}
		t.Run("update", func(t *testing.T) {
			s := ready(t)
			got, err := a.co.Update(ctx, s.ID, checkout.Request{Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "grace@example.com"}})
			if err != nil {
				t.Fatalf("A's update: %v", err)
			}
			if quantity(got) != 3 || got.Buyer.Email != "grace@example.com" {
				t.Fatalf("A's update: %d mugs, %+v; want B's 3 mugs and A's email", quantity(got), got.Buyer)
			}
		})
		t.Run("unchanged", func(t *testing.T) {
			s := ready(t)
			got, err := a.co.Update(ctx, s.ID, checkout.Request{Items: cart(2)}) // what A's row has already
			if err != nil {
				t.Fatalf("A's update: %v", err)
			}
			if quantity(got) != 2 {
				t.Fatalf("A's update: %d mugs; want 2", quantity(got))
			}
			if now, err := b.co.Get(ctx, s.ID); err != nil || quantity(now) != 2 {
				t.Fatalf("the session after A's update: %v, %d mugs; want the 2 A answered", err, quantity(now))
			}
		})
		t.Run("canceled", func(t *testing.T) {
			s := a.ready(t)
			if _, err := b.co.Cancel(ctx, s.ID); err != nil {
				t.Fatal(err)
			}
			if got, err := a.co.Update(ctx, s.ID, checkout.Request{Items: cart(1)}); err == nil {
				t.Errorf("A's update of a canceled session: %s, want refused", got.Status)
			}
			charges := a.count(t, "sandbox_charges")
			if got, err := a.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err == nil {
				t.Errorf("A's payment of a canceled session: %s, want refused", got.Status)
			}
			if n := a.count(t, "sandbox_charges"); n != charges {
				t.Errorf("%d charges after paying a canceled session, want %d", n, charges)
			}
		})
		t.Run("complete", func(t *testing.T) {
			s := ready(t)
			want, err := b.co.Get(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
			if err != nil || got.Status != checkout.Completed {
				t.Fatalf("A's payment: %v %+v", err, got)
			}
			var orderTotal, mugs int64
			if err := db.Raw("SELECT total FROM orders WHERE checkout_session_id = ?", s.ID).Scan(&orderTotal).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Raw("SELECT l.quantity FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE o.checkout_session_id = ? AND l.variant_id = ?", s.ID, mug).Scan(&mugs).Error; err != nil {
				t.Fatal(err)
			}
			if orderTotal != total(want) || mugs != 3 {
				t.Errorf("order of %d (%d mugs), want B's %d (3 mugs)", orderTotal, mugs, total(want))
			}
		})
	})
}
