package checkout_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
)

// TestPaymentLinkPaidForAnOldCart: a Stripe Checkout page is fixed-price;
// paid after its session changed (another total, or the same total for
// other lines), its payment becomes no order: it is refunded in full, once,
// and recorded why, and the session stays ready with its new cart and its
// stock held.
func TestPaymentLinkPaidForAnOldCart(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHostedShop(t, db)
		for _, tc := range []struct {
			name   string
			change checkout.Request
			reason string
		}{
			{"MoreUnits", checkout.Request{Items: items("enamel-camp-mug-forest-green", 3, "stoneware-coffee-mug-16-oz", 1)}, "the amount paid is not the session's total"},
			{"OtherAddress", checkout.Request{Address: &checkout.Address{Name: "Ada Lovelace", LineOne: "350 Fifth Ave", City: "New York", State: "NY", Country: "US", PostalCode: "10118"}}, "the amount paid is not the session's total"},
			{"SameTotalOtherLines", checkout.Request{Items: items("enamel-camp-mug-cream", 2, "stoneware-coffee-mug-16-oz", 1)}, "the session changed after the payment page was made"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := h.ready(t)
				_, page := h.page(t, s)
				h.clk.Add(time.Minute)
				changed, err := h.co.Update(ctx, s.ID, tc.change)
				if err != nil || changed.Status != checkout.Ready {
					t.Fatalf("update: %v %+v", err, changed)
				}
				if same := total(changed) == total(s); same != (tc.name == "SameTotalOtherLines") {
					t.Fatalf("total %d after the change, %d before", total(changed), total(s))
				}
				pi := h.stripe.Pay(page)
				for range 2 { // the webhook and the success page
					if err := h.co.SettleHosted(ctx, page); err != nil {
						t.Fatal(err)
					}
				}
				var refunds []int64
				for _, r := range h.stripe.Refunds() {
					if r.PaymentIntent == pi {
						refunds = append(refunds, r.Amount)
					}
				}
				if len(refunds) != 1 || refunds[0] != total(s) {
					t.Errorf("refunds of the page's payment %v, want one of %d", refunds, total(s))
				}
				var sp struct{ Status, Reason string }
				h.db.Raw("SELECT status, reason FROM surplus_payments WHERE reference = ?", pi).Scan(&sp)
				if sp.Status != "refunded" || sp.Reason != tc.reason {
					t.Errorf("surplus payment %+v, want refunded, %q", sp, tc.reason)
				}
				got, err := h.co.Get(ctx, s.ID)
				if err != nil || got.Status != checkout.Ready || total(got) != total(changed) || got.Order != nil {
					t.Errorf("session after the page's payment: %v %s, total %d, order %v", err, got.Status, total(got), got.Order)
				}
				if n := h.count(t, "SELECT COUNT(*) FROM orders WHERE checkout_session_id = ?", s.ID); n != 0 {
					t.Errorf("%d orders from a page of another cart", n)
				}
				if n := h.count(t, "SELECT COUNT(*) FROM stock_holds WHERE holder = ?", s.ID); n != 2 {
					t.Errorf("the session holds %d lines, want its 2", n)
				}
				_, _ = h.co.Cancel(ctx, s.ID)
			})
		}
	})
}
