package orders_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database/dbtest"
	"shop/orders"
	"shop/payments"
)

// droppingRefunder is the sandbox, except that it loses the first try of a
// refund of drop minor units before doing anything, as a provider that
// never got the request.
type droppingRefunder struct {
	*payments.Sandbox
	drop    int64
	mu      sync.Mutex
	dropped map[string]bool
}

func (d *droppingRefunder) Refund(ctx context.Context, r payments.RefundRequest) (*payments.Refund, error) {
	d.mu.Lock()
	first := r.Amount == d.drop && !d.dropped[r.IdempotencyKey]
	d.dropped[r.IdempotencyKey] = true
	d.mu.Unlock()
	if first {
		return nil, fmt.Errorf("refund %s: connection reset: %w", r.IdempotencyKey, payments.ErrUnknownOutcome)
	}
	return d.Sandbox.Refund(ctx, r)
}

// as calls a tool as actor and decodes its structured content into T.
func as[T any](t *testing.T, s *staffShop, actor shop.Actor, tool string, args map[string]any) T {
	t.Helper()
	got, err := s.call(t, actor, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out T
	b, _ := json.Marshal(got)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %s: %v", tool, b, err)
	}
	return out
}

// TestSalesReportAgreesWithTools: sales_report, over orders made by real
// checkouts and refunds made by the staff's tools, agrees with the orders
// themselves (list_orders, get_order) and with what was paid and refunded:
// a declined payment is no sale, a refund counts once it has succeeded, a
// cancellation's refund counts like any other.
func TestSalesReportAgreesWithTools(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		const lost = 777 // the refund whose first try is lost
		drop := &droppingRefunder{Sandbox: payments.NewSandbox(db, nil), drop: lost, dropped: map[string]bool{}}
		s := newStaffShopWith(t, db, nil, drop)
		// Noon, so that the clock's moves below stay within the day.
		s.now = time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
		today := s.now.Format("2006-01-02")

		partly, whole, canceled, pending := s.order(t, 1), s.order(t, 2), s.order(t, 3), s.order(t, 1)
		if done, err := s.pay(t, 4, "pm_card_visa_chargeDeclined"); err != nil || done.Order != nil {
			t.Fatalf("a declined payment: %v, %+v", err, done)
		}
		var gross int64
		for _, o := range []*contract.Order{partly, whole, canceled, pending} {
			gross += paid(o)
		}
		if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": partly.ID, "amount": 250, "reason": "chipped"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": whole.ID, "reason": "returned"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.twoStep(t, owner, "cancel_order", map[string]any{"order_id": canceled.ID, "reason": "asked"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": pending.ID, "amount": lost, "reason": "late"}); code(err) != shop.Unavailable {
			t.Fatalf("the lost refund: %v", err)
		}
		refunds := 250 + paid(whole) + paid(canceled)

		// check compares the report with the orders as the tools show them
		// and with what the test did; succeeded is what was refunded.
		check := func(succeeded int64) {
			t.Helper()
			rep := as[orders.SalesReport](t, s, viewer, "sales_report", map[string]any{"from": today, "to": today})
			want := orders.SalesFigures{Orders: 4, Gross: usd.Price(gross), Refunds: usd.Price(succeeded), Net: usd.Price(gross - succeeded)}
			if len(rep.Days) != 1 || rep.Days[0].Date != today || rep.Days[0].SalesFigures != want || rep.Totals != want {
				t.Errorf("sales_report %+v; want %+v", rep, want)
			}
			list := as[orders.OrderList](t, s, viewer, "list_orders", map[string]any{"created_from": today})
			var listed, reserved, recorded int64
			for _, o := range list.Orders {
				listed += o.Total.Amount
				reserved += o.Refunded.Amount
				detail := as[orders.OrderDetailResult](t, s, viewer, "get_order", map[string]any{"order_id": o.ID})
				for _, r := range detail.Order.Refunds {
					if r.Status == "succeeded" {
						recorded += r.Amount.Amount
					}
				}
			}
			if len(list.Orders) != int(rep.Totals.Orders) || listed != rep.Totals.Gross.Amount {
				t.Errorf("list_orders: %d orders of %d in all; the report: %d of %d", len(list.Orders), listed, rep.Totals.Orders, rep.Totals.Gross.Amount)
			}
			if recorded != rep.Totals.Refunds.Amount || reserved != refunds+lost {
				t.Errorf("get_order: %d refunded, %d reserved on the orders; the report: %d refunded", recorded, reserved, rep.Totals.Refunds.Amount)
			}
			var provider int64
			if err := db.Raw("SELECT COALESCE(SUM(amount), 0) FROM sandbox_refunds").Scan(&provider).Error; err != nil {
				t.Fatal(err)
			}
			if provider != rep.Totals.Refunds.Amount {
				t.Errorf("the provider refunded %d, the report says %d", provider, rep.Totals.Refunds.Amount)
			}
		}
		check(refunds) // the lost refund is pending: not counted yet
		s.advance(2 * time.Minute)
		if n, err := s.admin.ReconcileRefunds(context.Background(), time.Minute); err != nil || n != 1 {
			t.Fatalf("reconciled %d (%v), want 1", n, err)
		}
		check(refunds + lost)
	})
}
