package orders_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
	"shop/payments"
)

// lostRefunder loses the provider's answer to the first try of each
// refund, after refunding: as a network failure after Stripe acted does.
// Like Stripe, it refunds once per idempotency key.
type lostRefunder struct {
	mu     sync.Mutex
	tries  map[string]int
	amount int64
}

func (l *lostRefunder) Name() string { return "sandbox" }

func (l *lostRefunder) Refund(_ context.Context, r payments.RefundRequest) (*payments.Refund, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tries == nil {
		l.tries = map[string]int{}
	}
	l.tries[r.IdempotencyKey]++
	if l.tries[r.IdempotencyKey] == 1 {
		l.amount += r.Amount
		return nil, fmt.Errorf("refund %s: connection reset: %w", r.IdempotencyKey, payments.ErrUnknownOutcome)
	}
	return &payments.Refund{Reference: "re_lost_" + r.IdempotencyKey, Amount: r.Amount, Status: "succeeded"}, nil
}

// TestReconcileRefunds: a refund whose answer was lost stays pending, its
// amount reserved and its units not yet back on sale; the reconciler, after
// the grace period, asks again with the same key and settles it as the
// staff member's call would have: refunded once, units restocked, once.
func TestReconcileRefunds(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		lost := &lostRefunder{}
		s := newStaffShop(t, db, lost)
		ord := s.order(t, 2)
		total := ord.Receipt.Totals[len(ord.Receipt.Totals)-1].Amount
		before := stockOf(t, db, "enamel-camp-mug-cream")
		_, err := s.twoStep(t, owner, "refund_order", map[string]any{
			"order_id": ord.ID, "amount": total, "reason": "damaged",
			"restock": []map[string]any{{"line_id": ord.Receipt.LineItems[0].ID, "quantity": 2}},
		})
		if code(err) != shop.Unavailable {
			t.Fatalf("refund with its answer lost: %v, want unavailable", err)
		}
		status := func() string {
			var st string
			db.Raw("SELECT status FROM refunds WHERE order_id = ?", ord.ID).Scan(&st)
			return st
		}
		if st := status(); st != "pending" || stockOf(t, db, "enamel-camp-mug-cream") != before {
			t.Fatalf("refund %s, stock %d; want pending and %d", st, stockOf(t, db, "enamel-camp-mug-cream"), before)
		}
		if n, err := s.admin.ReconcileRefunds(ctx, time.Minute); err != nil || n != 0 {
			t.Fatalf("reconciled %d (%v) within the grace period", n, err)
		}
		s.advance(2 * time.Minute)
		if n, err := s.admin.ReconcileRefunds(ctx, time.Minute); err != nil || n != 1 {
			t.Fatalf("reconciled %d (%v), want 1", n, err)
		}
		if st := status(); st != "succeeded" {
			t.Errorf("refund %s after the reconciler, want succeeded", st)
		}
		if got := stockOf(t, db, "enamel-camp-mug-cream"); got != before+2 {
			t.Errorf("stock %d, want %d: the refund's units back on sale", got, before+2)
		}
		if lost.amount != total {
			t.Errorf("provider refunded %d, want %d once", lost.amount, total)
		}
		got, err := s.call(t, viewer, "get_order", map[string]any{"order_id": ord.ID})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := got["order"].(map[string]any)["status"].(string); st != "refunded" {
			t.Errorf("order status %q, want refunded", st)
		}
		if n, err := s.admin.ReconcileRefunds(ctx, time.Minute); err != nil || n != 0 {
			t.Errorf("a second run settled %d (%v), want 0", n, err)
		}
	})
}
