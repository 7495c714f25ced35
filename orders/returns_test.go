package orders_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database/dbtest"
	"shop/money"
	"shop/orders"
)

// buyerCall runs a buyer's return tool (request_return, cancel_return)
// of r as a guest and decodes its answer.
func buyerCall(t *testing.T, r *orders.Returns, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	return callTool(t, context.Background(), r.Tools(), tool, args)
}

// shipped places an order of n mugs and ships all of it.
func (s *staffShop) shipped(t *testing.T, n int) *contract.Order {
	t.Helper()
	ord := s.order(t, n)
	if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": ord.ID, "carrier": "USPS", "tracking_number": "9400"}); err != nil {
		t.Fatal(err)
	}
	return ord
}

// ask asks to return q units of the order's first line.
func ask(t *testing.T, r *orders.Returns, ord *contract.Order, q int) (map[string]any, error) {
	t.Helper()
	return buyerCall(t, r, "request_return", map[string]any{"order_id": ord.ID, "email": "ada@example.com", "reason": "no_longer_needed",
		"lines": []map[string]any{{"line_item_id": ord.Receipt.LineItems[0].ID, "quantity": q}}})
}

// refusedAt checks that err is an invalid-input refusal naming param and saying why.
func refusedAt(t *testing.T, err error, param, why string) {
	t.Helper()
	e, ok := err.(*shop.Error)
	if !ok || e.Param != param || !strings.Contains(e.Message, why) {
		t.Fatalf("got %v, want a refusal at %s saying %q", err, param, why)
	}
}

func returnOf(t *testing.T, got map[string]any) (id, status string, amount int64) {
	t.Helper()
	r, _ := got["return"].(map[string]any)
	id, _ = r["id"].(string)
	status, _ = r["status"].(string)
	a, _ := r["refund_amount"].(float64)
	return id, status, int64(a)
}

func TestRequestReturn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		t.Run("NotShipped", func(t *testing.T) {
			ord := s.order(t, 2)
			_, err := ask(t, s.ret, ord, 1)
			refusedAt(t, err, "$.lines[0].quantity", "has not shipped yet")
		})
		ord := s.shipped(t, 3)
		line := ord.Receipt.LineItems[0]
		t.Run("MoreThanBought", func(t *testing.T) {
			_, err := ask(t, s.ret, ord, 4)
			refusedAt(t, err, "$.lines[0].quantity", "more than bought")
		})
		t.Run("WrongEmail", func(t *testing.T) {
			_, err := buyerCall(t, s.ret, "request_return", map[string]any{"order_id": ord.ID, "email": "eve@example.com", "reason": "other",
				"lines": []map[string]any{{"line_item_id": line.ID, "quantity": 1}}})
			if code(err) != shop.NotFound {
				t.Fatalf("got %v, want not_found", err)
			}
		})
		t.Run("BadReason", func(t *testing.T) {
			_, err := buyerCall(t, s.ret, "request_return", map[string]any{"order_id": ord.ID, "email": "ada@example.com", "reason": "meh",
				"lines": []map[string]any{{"line_item_id": line.ID, "quantity": 1}}})
			refusedAt(t, err, "$.reason", "send one of")
		})
		var first string
		t.Run("InsideWindow", func(t *testing.T) {
			s.advance(29 * 24 * time.Hour)
			got, err := ask(t, s.ret, ord, 2)
			if err != nil {
				t.Fatal(err)
			}
			id, status, amount := returnOf(t, got)
			if status != "requested" || amount != line.Total*2/3 {
				t.Fatalf("return %s %s %d, want requested, %d", id, status, amount, line.Total*2/3)
			}
			if ins, _ := got["return"].(map[string]any)["instructions"].(string); !strings.Contains(ins, "1 Dock Street") {
				t.Errorf("instructions %q name no return address", ins)
			}
			first = id
		})
		t.Run("SameUnitsTwice", func(t *testing.T) {
			_, err := ask(t, s.ret, ord, 2)
			refusedAt(t, err, "$.lines[0].quantity", "only 1 of")
		})
		t.Run("Canceled", func(t *testing.T) {
			got, err := buyerCall(t, s.ret, "cancel_return", map[string]any{"order_id": ord.ID, "email": "ada@example.com", "return_id": first})
			if err != nil {
				t.Fatal(err)
			}
			if _, status, _ := returnOf(t, got); status != "canceled" {
				t.Fatalf("status %s, want canceled", status)
			}
			_, err = buyerCall(t, s.ret, "cancel_return", map[string]any{"order_id": ord.ID, "email": "ada@example.com", "return_id": first})
			refusedAt(t, err, "$.return_id", "only a requested return")
			s.advance(time.Second)
			if _, err := ask(t, s.ret, ord, 3); err != nil { // the canceled units may be returned again
				t.Fatal(err)
			}
		})
		t.Run("ShownOnTheOrder", func(t *testing.T) {
			got, err := s.ords.Get(context.Background(), ord.ID, "ada@example.com")
			if err != nil {
				t.Fatal(err)
			}
			if rs := got.Receipt.Returns; len(rs) != 2 || rs[0].Status != "canceled" || rs[1].Status != "requested" || rs[1].RefundAmount != line.Total {
				t.Fatalf("returns %+v", rs)
			}
		})
		t.Run("OutsideWindow", func(t *testing.T) {
			late := s.shipped(t, 1)
			if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": late.ID, "delivered": true}); err != nil {
				t.Fatal(err)
			}
			s.advance(30*24*time.Hour + time.Second)
			_, err := ask(t, s.ret, late, 1)
			refusedAt(t, err, "$.order_id", "return window")
		})
	})
}

func TestNotReturnable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		r := orders.NewReturns(s.admin, orders.ReturnPolicy{NotReturnable: orders.NotReturnable{Categories: []string{"kitchen"}}})
		ord := s.shipped(t, 1)
		_, err := ask(t, r, ord, 1)
		refusedAt(t, err, "$.lines[0].line_item_id", "cannot be returned")
	})
}

// TestAcceptReturnOnce has two owners confirm the same return at once,
// for several returns: each refunds once. One unit of many each time: two
// refunds of it would fit in what the order paid, so only the return's own
// transition in the database stops the second.
func TestAcceptReturnOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		const rounds = 6
		ord := s.shipped(t, rounds+2)
		stock := stockOf(t, db, "enamel-camp-mug-cream")
		var want int64
		for range rounds {
			s.advance(time.Second)
			got, err := ask(t, s.ret, ord, 1)
			if err != nil {
				t.Fatal(err)
			}
			id, _, amount := returnOf(t, got)
			want += amount
			var tokens [2]string
			for i, who := range []shop.Actor{owner, owner2} {
				p, err := s.call(t, who, "accept_return", map[string]any{"return_id": id})
				if err != nil {
					t.Fatal(err)
				}
				tokens[i], _ = p["confirm"].(string)
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, 2)
			for i, who := range []shop.Actor{owner, owner2} {
				wg.Go(func() {
					<-start
					_, errs[i] = s.call(t, who, "accept_return", map[string]any{"return_id": id, "confirm": tokens[i]})
				})
			}
			close(start)
			wg.Wait()
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Fatalf("errors %v, want exactly one acceptance", errs)
			}
		}
		var n, refunded int64
		db.Raw("SELECT COUNT(*) FROM sandbox_refunds").Scan(&n)
		db.Raw("SELECT refunded FROM orders WHERE id = ?", ord.ID).Scan(&refunded)
		if n != rounds || refunded != want {
			t.Fatalf("%d provider refunds, %d refunded; want %d, %d", n, refunded, rounds, want)
		}
		if after := stockOf(t, db, "enamel-camp-mug-cream"); after != stock+rounds {
			t.Errorf("stock %d after the returns, want %d", after, stock+rounds)
		}
		o, err := s.ords.Get(context.Background(), ord.ID, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range o.Receipt.Returns {
			if r.Status != "refunded" {
				t.Errorf("return %s is %s, want refunded", r.ID, r.Status)
			}
		}
	})
}

// TestRefundAfterReturn: refund_order after a partial return refunds at
// most the rest, and a return after a full refund is refused.
func TestRefundAfterReturn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		ord := s.shipped(t, 2)
		got, err := ask(t, s.ret, ord, 1)
		if err != nil {
			t.Fatal(err)
		}
		id, _, amount := returnOf(t, got)
		if _, err := s.twoStep(t, owner, "accept_return", map[string]any{"return_id": id}); err != nil {
			t.Fatal(err)
		}
		p, err := s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "reason": "goodwill"})
		if err != nil {
			t.Fatal(err)
		}
		left := paid(ord) - amount
		if a := p["preview"].(map[string]any)["amount"].(map[string]any)["amount"].(float64); int64(a) != left {
			t.Fatalf("refund_order would refund %v, want the rest %d", a, left)
		}
		_, err = s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "reason": "too much", "amount": left + 1})
		refusedAt(t, err, "$.amount", "left to refund")
		if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "reason": "goodwill"}); err != nil {
			t.Fatal(err)
		}
		got, err = ask(t, s.ret, ord, 1)
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ = returnOf(t, got)
		_, err = s.call(t, owner, "accept_return", map[string]any{"return_id": id})
		refusedAt(t, err, "$.order_id", "refunded in full already")
	})
}

func TestRejectReturn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		ord := s.shipped(t, 1)
		got, err := ask(t, s.ret, ord, 1)
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ := returnOf(t, got)
		if _, err := s.call(t, viewer, "reject_return", map[string]any{"return_id": id, "reason": "x"}); code(err) != shop.Forbidden {
			t.Fatalf("a viewer rejected: %v", err)
		}
		if _, err := s.call(t, support, "reject_return", map[string]any{"return_id": id, "reason": "The mug was used."}); err != nil {
			t.Fatal(err)
		}
		list, err := s.call(t, viewer, "list_returns", map[string]any{"status": "rejected"})
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := list["returns"].([]any)
		if len(rs) != 1 || rs[0].(map[string]any)["reject_reason"] != "The mug was used." {
			t.Fatalf("list_returns %v", list)
		}
		if _, err := ask(t, s.ret, ord, 1); err != nil { // rejected units may be returned again
			t.Fatal(err)
		}
		var n int64
		db.Raw("SELECT COUNT(*) FROM audit_events WHERE action IN ('request_return', 'reject_return')").Scan(&n)
		if n != 3 {
			t.Errorf("%d audit events, want 3", n)
		}
	})
}

func TestReturnEmails(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newMailShop(t, db)
		ord := s.buy(t, "Ada", 2)
		if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": ord.ID, "carrier": "USPS", "tracking_number": "9400"}); err != nil {
			t.Fatal(err)
		}
		got, err := ask(t, s.ret, ord, 1)
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ := returnOf(t, got)
		if _, err := s.twoStep(t, owner, "accept_return", map[string]any{"return_id": id}); err != nil {
			t.Fatal(err)
		}
		got, err = ask(t, s.ret, ord, 1)
		if err != nil {
			t.Fatal(err)
		}
		id2, _, _ := returnOf(t, got)
		if _, err := s.call(t, support, "reject_return", map[string]any{"return_id": id2, "reason": "The mug was used."}); err != nil {
			t.Fatal(err)
		}
		bodies := map[string]string{}
		for _, p := range s.deliver(t) {
			bodies[p.Header.Get("Subject")] = p.Parts["text/plain"]
		}
		n := itoa(ord.Number)
		for subject, want := range map[string]string{
			"Northwind Goods: your return of order " + n + " is on its way to us":                                      "1 Dock Street",
			"Northwind Goods: your return of order " + n + " was not accepted":                                         "The mug was used.",
			"Northwind Goods: " + fmtUSD(ord.Receipt.LineItems[0].Total/2) + " refunded for your return of order " + n: id,
		} {
			if !strings.Contains(bodies[subject], want) {
				t.Errorf("email %q: %q does not say %q (emails: %v)", subject, bodies[subject], want, keys(bodies))
			}
		}
	})
}

func fmtUSD(a int64) string {
	cur, _ := money.Lookup("usd")
	return cur.Format(a)
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestConcurrentReturnRequests: two requests for the same units at once
// hold them once (the units returned are counted by a conditional update).
func TestConcurrentReturnRequests(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		for range 4 {
			ord := s.shipped(t, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, 2)
			for i := range errs {
				wg.Go(func() {
					<-start
					_, errs[i] = ask(t, s.ret, ord, 2)
				})
			}
			close(start)
			wg.Wait()
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Fatalf("errors %v, want exactly one return of the 2 units", errs)
			}
		}
	})
}

// TestLinkedBuyerReturn: a linked buyer returns their order without its
// email; another linked buyer's request finds no order.
func TestLinkedBuyerReturn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		ord := s.shipped(t, 1)
		args := map[string]any{"order_id": ord.ID, "reason": "defective",
			"lines": []map[string]any{{"line_item_id": ord.Receipt.LineItems[0].ID, "quantity": 1}}}
		as := func(email string) context.Context {
			return shop.WithBuyer(context.Background(), shop.Buyer{AccountID: "acct_1", AccountEmail: email, Scopes: []string{shop.ScopeOrdersRead}})
		}
		if _, err := callTool(t, as("eve@example.com"), s.ret.Tools(), "request_return", args); code(err) != shop.NotFound {
			t.Fatalf("another buyer's return: %v, want not_found", err)
		}
		_, err := callTool(t, context.Background(), s.ret.Tools(), "request_return", args)
		refusedAt(t, err, "$.email", "send the email address")
		got, err := callTool(t, as("Ada@example.com"), s.ret.Tools(), "request_return", args)
		if err != nil {
			t.Fatal(err)
		}
		if _, status, _ := returnOf(t, got); status != "requested" {
			t.Fatalf("status %s, want requested", status)
		}
	})
}
