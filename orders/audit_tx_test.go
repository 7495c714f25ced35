package orders_test

import (
	"testing"

	"gorm.io/gorm"

	"shop/database/dbtest"
)

// TestAuditInTheSameTransaction: every change writes its audit row in its
// own transaction, so a change whose audit row cannot be written does not
// happen at all: with the audit table gone, each tool that changes
// something fails and leaves everything as it was (its confirm token
// unspent, no refund recorded or sent); with the table back, the same
// calls, with the same tokens, go through and are audited.
func TestAuditInTheSameTransaction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		exec := func(sql string) {
			t.Helper()
			if err := db.Exec(sql).Error; err != nil {
				t.Fatal(err)
			}
		}
		count := func(q string, args ...any) int64 {
			t.Helper()
			var n int64
			if err := db.Raw(q, args...).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		toShip, toRefund, toCancel, shipped := s.order(t, 2), s.order(t, 2), s.order(t, 1), s.order(t, 1)
		if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": shipped.ID, "carrier": "USPS", "tracking_number": "1"}); err != nil {
			t.Fatal(err)
		}
		// The two-step calls, previewed while the audit log works: a preview
		// writes no audit row.
		steps := []struct {
			tool string
			args map[string]any
		}{
			// First: its token is bound to the stock, which the others change.
			{"adjust_inventory", map[string]any{"variant_id": "enamel-camp-mug-cream", "add": 10, "reason": "delivery"}},
			{"refund_order", map[string]any{"order_id": toRefund.ID, "amount": 300, "reason": "chipped",
				"restock": []map[string]any{{"line_id": toRefund.Receipt.LineItems[0].ID, "quantity": 1}}}},
			{"cancel_order", map[string]any{"order_id": toCancel.ID, "reason": "asked"}},
		}
		for _, st := range steps {
			prev, err := s.call(t, owner, st.tool, st.args)
			if err != nil {
				t.Fatal(err)
			}
			st.args["confirm"] = prev["confirm"]
		}
		oneCalls := []struct {
			tool string
			args map[string]any
		}{
			{"fulfill_order", map[string]any{"order_id": toShip.ID, "carrier": "USPS", "tracking_number": "9400"}},
			{"fulfill_order", map[string]any{"order_id": shipped.ID, "delivered": true}},
			{"add_order_note", map[string]any{"order_id": toShip.ID, "note": "fragile"}},
		}
		stock := stockOf(t, db, "enamel-camp-mug-cream")
		audits := count("SELECT COUNT(*) FROM audit_events")

		exec("ALTER TABLE audit_events RENAME TO audit_events_away")
		for _, c := range append(oneCalls, steps...) {
			actor := support
			if c.tool != "fulfill_order" && c.tool != "add_order_note" {
				actor = owner
			}
			if _, err := s.call(t, actor, c.tool, c.args); err == nil {
				t.Errorf("%s succeeded without its audit row", c.tool)
			}
		}
		for _, c := range []struct {
			what string
			got  int64
			want int64
		}{
			{"stock", stockOf(t, db, "enamel-camp-mug-cream"), stock},
			{"fulfilments", count("SELECT COUNT(*) FROM fulfilments"), 1},
			{"units shipped", count("SELECT COALESCE(SUM(fulfilled), 0) FROM order_lines"), 1},
			{"units restocked", count("SELECT COALESCE(SUM(restocked), 0) FROM order_lines"), 0},
			{"notes", count("SELECT COUNT(*) FROM order_notes"), 0},
			{"refunds", count("SELECT COUNT(*) FROM refunds"), 0},
			{"refunded", count("SELECT COALESCE(SUM(refunded), 0) FROM orders"), 0},
			{"sandbox refunds", count("SELECT COUNT(*) FROM sandbox_refunds"), 0},
			{"orders not confirmed", count("SELECT COUNT(*) FROM orders WHERE status <> 'confirmed' AND id <> ?", shipped.ID), 0},
			{"shipped orders", count("SELECT COUNT(*) FROM orders WHERE status = 'shipped'"), 1},
			{"spent confirm tokens", count("SELECT COUNT(*) FROM confirm_tokens WHERE used_at IS NOT NULL"), 0},
		} {
			if c.got != c.want {
				t.Errorf("%s: %d after changes whose audit failed, want %d", c.what, c.got, c.want)
			}
		}

		exec("ALTER TABLE audit_events_away RENAME TO audit_events")
		for _, c := range append(oneCalls, steps...) {
			actor := support
			if c.tool != "fulfill_order" && c.tool != "add_order_note" {
				actor = owner
			}
			if _, err := s.call(t, actor, c.tool, c.args); err != nil {
				t.Errorf("%s with the audit log back: %v", c.tool, err)
			}
		}
		// fulfil, deliver, note, refund (reserved and settled), cancel
		// (with its refund reserved and settled), adjust.
		if got := count("SELECT COUNT(*) FROM audit_events") - audits; got != 9 {
			t.Errorf("%d new audit rows, want 9", got)
		}
		if got := stockOf(t, db, "enamel-camp-mug-cream"); got != stock+1+1+10 {
			t.Errorf("stock %d, want %d", got, stock+12)
		}
	})
}
