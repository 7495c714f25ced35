package checkout_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
)

// TestFreeOverAfterOrderDiscount: a session's Standard shipping (free from
// $75.00) is judged on its items after the order discount, as created and
// as read back: SAVE5 ($5 off) takes $78.00 of mugs under the threshold, so
// shipping is charged; $86.00 stays over it, so it is free.
func TestFreeOverAfterOrderDiscount(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShop(t, db)
		for _, c := range []struct {
			name     string
			items    *[]checkout.Item
			promo    string
			shipping int64
		}{
			{"NoCodeOver", items("stoneware-coffee-mug-16-oz", 3), "", 0},                                                      // 7800 ≥ 7500
			{"CodeTakesItUnder", items("stoneware-coffee-mug-16-oz", 3), "SAVE5", 500},                                         // 7800 − 500 = 7300
			{"CodeLeavesItOver", items("stoneware-coffee-mug-16-oz", 2, "insulated-travel-mug-20-oz-charcoal", 1), "SAVE5", 0}, // 8600 − 500 = 8100
		} {
			t.Run(c.name, func(t *testing.T) {
				s, err := co.Create(ctx, checkout.Request{Items: c.items, Address: californian, PromoCode: ptr(c.promo)})
				if err != nil || s.Status != checkout.Ready {
					t.Fatalf("create: %v %+v", err, s)
				}
				if c.promo != "" && totals(s)[checkout.TotalDiscount] != 500 {
					t.Fatalf("%s not applied: %v %+v", c.promo, totals(s), s.Messages)
				}
				got, err := co.Get(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range []*checkout.Session{s, got} {
					if x.FulfillmentOptionID != "us-standard" || totals(x)[checkout.TotalFulfillment] != c.shipping {
						t.Errorf("shipping %s %d, want us-standard %d (totals %v)", x.FulfillmentOptionID, totals(x)[checkout.TotalFulfillment], c.shipping, totals(x))
					}
				}
			})
		}
	})
}
