package orders_test

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
	"shop/orders"
	"shop/payments"
)

const cream = "enamel-camp-mug-cream"

// answerLost charges in the sandbox and loses the answer: the session stays
// in_progress, its holds being paid, until the reconciler settles it.
type answerLost struct{ *payments.Sandbox }

func (a answerLost) Charge(ctx context.Context, r payments.Request) (*payments.Result, error) {
	if _, err := a.Sandbox.Charge(ctx, r); err != nil {
		return nil, err
	}
	return nil, payments.ErrUnknownOutcome
}

// paying starts paying for n mugs; the answer is lost, the session stays
// in_progress.
func (s *staffShop) paying(t *testing.T, n int) *checkout.Session {
	t.Helper()
	got, err := s.pay(t, n, "pm_card_visa")
	if err != nil || got.Status != checkout.InProgress {
		t.Fatalf("paying for %d: %v %+v", n, err, got)
	}
	return got
}

func refusedWith(t *testing.T, err error, param string, says ...string) {
	t.Helper()
	var se *shop.Error
	if !errors.As(err, &se) || se.Code != shop.Invalid || se.Param != param {
		t.Fatalf("got %v, want invalid %s", err, param)
	}
	for _, s := range says {
		if !strings.Contains(se.Message, s) {
			t.Errorf("the refusal %q does not say %q", se.Message, s)
		}
	}
}

// TestAdjustInventoryHeldForPayment: adjust_inventory's preview says how
// many units sessions being paid hold, and by how many sessions; a change
// below them is refused, at the preview and at the confirmation when a
// payment began in between, and the stock stays.
func TestAdjustInventoryHeldForPayment(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShopWith(t, db, answerLost{payments.NewSandbox(db, nil)}, nil)
		s.paying(t, 2)
		s.paying(t, 1)
		onHand := stockOf(t, db, cream)

		prev, err := s.call(t, owner, "adjust_inventory", map[string]any{"variant_id": cream, "set": 4, "reason": "count"})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := prev["preview"].(map[string]any)
		if p["held_for_payment"] != float64(3) || p["paying_sessions"] != float64(2) || p["before"] != float64(onHand) || p["after"] != float64(4) {
			t.Errorf("preview %v; want 3 units held for payment by 2 sessions, %d → 4", p, onHand)
		}
		_, err = s.call(t, owner, "adjust_inventory", map[string]any{"variant_id": cream, "set": 2, "reason": "count"})
		refusedWith(t, err, "$.set", "3 unit(s) held by 2 checkout session(s) being paid")
		_, err = s.call(t, owner, "adjust_inventory", map[string]any{"variant_id": cream, "add": -(onHand - 1), "reason": "broken"})
		refusedWith(t, err, "$.add", "3 unit(s)")

		// A payment begins between the preview and its confirmation: the
		// confirmed change would go below the 5 units now held.
		s.paying(t, 2)
		_, err = s.call(t, owner, "adjust_inventory", map[string]any{"variant_id": cream, "set": 4, "reason": "count", "confirm": prev["confirm"]})
		refusedWith(t, err, "$.set", "5 unit(s) held by 3 checkout session(s) being paid")
		if got := stockOf(t, db, cream); got != onHand {
			t.Errorf("stock %d after refusals, want %d", got, onHand)
		}
		if _, err := s.twoStep(t, owner, "adjust_inventory", map[string]any{"variant_id": cream, "set": 5, "reason": "count"}); err != nil {
			t.Errorf("down to the units held for payment: %v", err)
		}
	})
}

// TestShortOrders: an order written short of stock (the stock was lowered
// behind the shop's back while it was paid) says so in get_order, each line
// with its units short, and list_orders finds it with short: true; a refund
// restocks only the units that were taken from stock.
func TestShortOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := newStaffShopWith(t, db, answerLost{payments.NewSandbox(db, nil)}, nil)
		covered := s.paying(t, 1)
		s.advance(time.Second) // the reconciler settles the older attempt first
		short := s.paying(t, 3)
		// 1 + 3 held for payment; 2 on hand left when the reconciler runs,
		// the older session first: 1 for it, 1 of 3 for the other.
		if err := db.Exec("UPDATE variants SET stock = 2 WHERE id = ?", cream).Error; err != nil {
			t.Fatal(err)
		}
		s.advance(10 * time.Minute)
		if n, err := s.co.Reconcile(ctx); err != nil || n != 2 {
			t.Fatalf("reconcile: %d %v", n, err)
		}
		ids := map[string]string{}
		for _, cs := range []*checkout.Session{covered, short} {
			got, err := s.co.Get(ctx, cs.ID)
			if err != nil || got.Order == nil {
				t.Fatalf("session %s: %v %+v", cs.ID, err, got)
			}
			ids[cs.ID] = got.Order.ID
		}
		shortID := ids[short.ID]

		detail, err := s.call(t, viewer, "get_order", map[string]any{"order_id": shortID})
		if err != nil {
			t.Fatal(err)
		}
		o, _ := detail["order"].(map[string]any)
		lines, _ := o["lines"].([]any)
		if o["short_units"] != float64(2) || len(lines) != 1 || lines[0].(map[string]any)["short"] != float64(2) {
			t.Errorf("get_order: short_units %v, lines %v; want 2 units short on the one line", o["short_units"], lines)
		}
		text := s.text(t, viewer, "get_order", map[string]any{"order_id": shortID})
		if !strings.Contains(text, "SHORT OF STOCK: 2 unit(s)") || !strings.Contains(text, "2 short of stock") {
			t.Errorf("get_order's text does not say the order is short:\n%s", text)
		}
		for _, tc := range []struct {
			short bool
			want  string
		}{{true, shortID}, {false, ids[covered.ID]}} {
			list, err := s.call(t, viewer, "list_orders", map[string]any{"short": tc.short})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := list["orders"].([]any)
			if len(got) != 1 || got[0].(map[string]any)["id"] != tc.want {
				t.Errorf("list_orders short: %t = %v, want only %s", tc.short, got, tc.want)
			}
		}
		events, err := s.call(t, viewer, "list_audit_events", map[string]any{"tool": "order.short"})
		if err != nil {
			t.Fatal(err)
		}
		if ev, _ := events["events"].([]any); len(ev) != 1 || ev[0].(map[string]any)["order_id"] != shortID {
			t.Errorf("order.short audit events: %v, want one for %s", ev, shortID)
		}

		// 1 of the 3 units was taken from stock: only it can go back.
		var line string
		db.Raw("SELECT line_id FROM order_lines WHERE order_id = ?", shortID).Scan(&line)
		_, err = s.call(t, owner, "refund_order", map[string]any{"order_id": shortID, "reason": "short",
			"restock": []map[string]any{{"line_id": line, "quantity": 2}}})
		refusedWith(t, err, "$.restock[0].quantity", "only 1")
		if _, err := s.twoStep(t, owner, "cancel_order", map[string]any{"order_id": shortID, "reason": "out of stock"}); err != nil {
			t.Fatal(err)
		}
		if got := stockOf(t, db, cream); got != 1 {
			t.Errorf("stock %d after canceling the short order, want the 1 unit it took back", got)
		}
	})
}

// refusingRefunder refuses the first refund it is asked for, then refunds in
// the sandbox.
type refusingRefunder struct {
	*payments.Sandbox
	mu      sync.Mutex
	refused bool
}

var errRefused = errors.New("the provider refuses: the charge is disputed")

func (r *refusingRefunder) Refund(ctx context.Context, req payments.RefundRequest) (*payments.Refund, error) {
	r.mu.Lock()
	first := !r.refused
	r.refused = true
	r.mu.Unlock()
	if first {
		return nil, errRefused
	}
	return r.Sandbox.Refund(ctx, req)
}

// TestRefusedRefundGivesItsAmountBack: a refund reserves its amount before
// the provider is called; refused, it gives the amount back, so that what is
// left to refund is what it was and a full refund of it then succeeds.
func TestRefusedRefundGivesItsAmountBack(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db, &refusingRefunder{Sandbox: payments.NewSandbox(db, nil)})
		ord := s.order(t, 2)
		total := paid(ord)
		part := total / 2
		_, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": part, "reason": "damaged"})
		refusedWith(t, err, "$.order_id", "nothing was refunded")
		var refunded int64
		db.Raw("SELECT refunded FROM orders WHERE id = ?", ord.ID).Scan(&refunded)
		if refunded != 0 {
			t.Errorf("the order counts %d refunded after a refused refund, want 0", refunded)
		}
		prev, err := s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "reason": "damaged"})
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := prev["preview"].(map[string]any); p["amount"].(map[string]any)["amount"] != float64(total) {
			t.Errorf("refund preview after the refusal: %v, want the whole %d", p["amount"], total)
		}
		if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "reason": "damaged"}); err != nil {
			t.Fatalf("refunding everything after the refusal: %v", err)
		}
		if st := s.status(t, ord.ID); st != orders.StatusRefunded {
			t.Errorf("status %s, want refunded", st)
		}
		var atProvider int64
		db.Raw("SELECT COALESCE(SUM(amount), 0) FROM sandbox_refunds").Scan(&atProvider)
		if atProvider != total {
			t.Errorf("the provider refunded %d, want %d", atProvider, total)
		}
	})
}

// text runs an admin tool as actor and returns its text.
func (s *staffShop) text(t *testing.T, actor shop.Actor, tool string, args map[string]any) string {
	t.Helper()
	for _, tl := range s.admin.Tools() {
		if tl.Name == tool {
			raw, _ := json.Marshal(args)
			res, err := tl.Handle(shop.WithActor(context.Background(), actor), raw)
			if err != nil {
				t.Fatal(err)
			}
			return res.Text
		}
	}
	t.Fatalf("no admin tool %s", tool)
	return ""
}
