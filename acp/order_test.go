package acp

import (
	"testing"

	"shop/contract"
)

// TestOrderShapes: the order of a completed session follows the amended
// 2026-04-17 order schema: statuses from its lists, each line's quantities
// ordered, current and fulfilled and the status they derive.
func TestOrderShapes(t *testing.T) {
	lines := []contract.LineItem{{ID: "li_1", Name: "Mug", Item: contract.Item{ID: "mug", Quantity: 3}, UnitAmount: 1800, Subtotal: 5400}}
	cases := []struct {
		shop, status, line string
		current, fulfilled int64
	}{
		{"confirmed", "confirmed", "processing", 3, 0},
		{"partially_shipped", "processing", "processing", 3, 0},
		{"shipped", "shipped", "fulfilled", 3, 3},
		{"delivered", "completed", "fulfilled", 3, 3},
		{"canceled", "canceled", "removed", 0, 0},
		{"refunded", "canceled", "processing", 3, 0},
		{"something_new", "processing", "processing", 3, 0},
	}
	for _, c := range cases {
		t.Run(c.shop, func(t *testing.T) {
			o := order(&contract.Order{ID: "ord_1", Status: c.shop, Receipt: contract.Receipt{LineItems: lines}})
			l := o.LineItems[0]
			if o.Status != c.status || l.Status != c.line || l.Quantity.Ordered != 3 || l.Quantity.Current != c.current || l.Quantity.Fulfilled != c.fulfilled {
				t.Errorf("order %s: status %s, line %s %+v; want %s, %s, current %d, fulfilled %d", c.shop, o.Status, l.Status, l.Quantity, c.status, c.line, c.current, c.fulfilled)
			}
		})
	}
	for _, q := range []struct {
		q    OrderQuantity
		want string
	}{{OrderQuantity{3, 3, 1}, "partial"}, {OrderQuantity{3, 2, 2}, "fulfilled"}, {OrderQuantity{3, 0, 0}, "removed"}, {OrderQuantity{3, 3, 0}, "processing"}} {
		if got := lineStatus(q.q); got != q.want {
			t.Errorf("lineStatus(%+v) = %s, want %s", q.q, got, q.want)
		}
	}
}
