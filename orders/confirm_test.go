package orders_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
)

// staleRefusal checks that err refuses a confirmation because what its
// preview showed has changed, and says what to do.
func staleRefusal(t *testing.T, err error, what string) {
	t.Helper()
	var e *shop.Error
	if !errors.As(err, &e) || e.Code != shop.Invalid || e.Param != "$.confirm" ||
		!strings.Contains(e.Message, "changed since the preview") || !strings.Contains(e.Message, what) ||
		!strings.Contains(e.Message, "without confirm for a new preview") {
		t.Errorf("got %v; want an invalid $.confirm saying it changed since the preview, with %q", err, what)
	}
}

// TestConfirmStalePlan: a confirm token is bound to the plan its preview
// showed, not only to the arguments: when the order or the stock changed
// meanwhile so that the same call would now do something else, the
// confirmation is refused, nothing is done, and a new preview works.
func TestConfirmStalePlan(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		refunded := func(orderID string) int64 {
			var n int64
			if err := db.Raw("SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE order_id = ? AND status = 'succeeded'", orderID).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		confirm := func(actor shop.Actor, tool string, args map[string]any, token any) (map[string]any, error) {
			c := map[string]any{"confirm": token}
			for k, v := range args {
				c[k] = v
			}
			return s.call(t, actor, tool, c)
		}

		t.Run("RefundOfWhatIsLeft", func(t *testing.T) {
			ord := s.order(t, 2)
			total := paid(ord)
			rest := map[string]any{"order_id": ord.ID, "reason": "all of it"}
			prev, err := s.call(t, owner, "refund_order", rest)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 100, "reason": "a scratch"}); err != nil {
				t.Fatal(err)
			}
			// The preview showed the whole total; confirming it now would
			// refund total-100.
			_, err = confirm(owner, "refund_order", rest, prev["confirm"])
			staleRefusal(t, err, usd.Format(total-100))
			if got := refunded(ord.ID); got != 100 {
				t.Errorf("refunded %d after a stale confirmation, want 100", got)
			}
			if _, err := s.twoStep(t, owner, "refund_order", rest); err != nil {
				t.Fatalf("a new preview: %v", err)
			}
			if got := refunded(ord.ID); got != total {
				t.Errorf("refunded %d, want %d", got, total)
			}
		})

		t.Run("RefundAfterShipping", func(t *testing.T) {
			ord := s.order(t, 1)
			args := map[string]any{"order_id": ord.ID, "amount": 100, "reason": "late"}
			prev, err := s.call(t, owner, "refund_order", args)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": ord.ID, "carrier": "USPS", "tracking_number": "9400"}); err != nil {
				t.Fatal(err)
			}
			_, err = confirm(owner, "refund_order", args, prev["confirm"])
			staleRefusal(t, err, "it is shipped now")
			if got := refunded(ord.ID); got != 0 {
				t.Errorf("refunded %d after a stale confirmation", got)
			}
		})

		t.Run("RefundOfAnAmountAfterAnother", func(t *testing.T) {
			// A named amount is what the preview showed however much else
			// was refunded meanwhile, as long as that much is left.
			ord := s.order(t, 2)
			args := map[string]any{"order_id": ord.ID, "amount": 300, "reason": "chipped"}
			prev, err := s.call(t, owner, "refund_order", args)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 200, "reason": "other"}); err != nil {
				t.Fatal(err)
			}
			if _, err := confirm(owner, "refund_order", args, prev["confirm"]); err != nil {
				t.Errorf("confirming a named amount after another refund: %v", err)
			}
			if got := refunded(ord.ID); got != 500 {
				t.Errorf("refunded %d, want 500", got)
			}
		})

		t.Run("Cancel", func(t *testing.T) {
			before := stockOf(t, db, "enamel-camp-mug-cream")
			ord := s.order(t, 2)
			total := paid(ord)
			args := map[string]any{"order_id": ord.ID, "reason": "buyer asked"}
			prev, err := s.call(t, owner, "cancel_order", args)
			if err != nil {
				t.Fatal(err)
			}
			// A partial refund that puts one unit back: the cancellation
			// would now refund less and restock fewer.
			if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 100, "reason": "broken",
				"restock": []map[string]any{{"line_id": ord.Receipt.LineItems[0].ID, "quantity": 1}}}); err != nil {
				t.Fatal(err)
			}
			_, err = confirm(owner, "cancel_order", args, prev["confirm"])
			staleRefusal(t, err, "refunding "+usd.Format(total-100))
			if st := s.status(t, ord.ID); st != "confirmed" {
				t.Errorf("order %s after a stale cancellation", st)
			}
			if got := refunded(ord.ID); got != 100 {
				t.Errorf("refunded %d after a stale cancellation, want 100", got)
			}
			if _, err := s.twoStep(t, owner, "cancel_order", args); err != nil {
				t.Fatalf("a new preview: %v", err)
			}
			if got := refunded(ord.ID); got != total {
				t.Errorf("refunded %d, want %d", got, total)
			}
			if got := stockOf(t, db, "enamel-camp-mug-cream"); got != before {
				t.Errorf("stock %d, want %d: every unit back once", got, before)
			}
		})

		t.Run("AdjustInventory", func(t *testing.T) {
			stock := stockOf(t, db, "enamel-camp-mug-cream")
			args := map[string]any{"variant_id": "enamel-camp-mug-cream", "add": 5, "reason": "delivery"}
			prev, err := s.call(t, owner, "adjust_inventory", args)
			if err != nil {
				t.Fatal(err)
			}
			s.order(t, 1) // a sale meanwhile
			_, err = confirm(owner, "adjust_inventory", args, prev["confirm"])
			staleRefusal(t, err, "it is "+strconv.FormatInt(stock-1, 10)+" now")
			if got := stockOf(t, db, "enamel-camp-mug-cream"); got != stock-1 {
				t.Errorf("stock %d after a stale adjustment, want %d", got, stock-1)
			}
			// A new preview, of the stock as it is, confirms.
			prev, err = s.call(t, owner, "adjust_inventory", args)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := confirm(owner, "adjust_inventory", args, prev["confirm"]); err != nil {
				t.Fatal(err)
			}
			if got := stockOf(t, db, "enamel-camp-mug-cream"); got != stock+4 {
				t.Errorf("stock %d, want %d", got, stock+4)
			}
		})
	})
}
