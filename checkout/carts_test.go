package checkout_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

func TestCarts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c, _ := demoShop(t, db)
		ctx := context.Background()
		const variant = "enamel-camp-mug-cream"
		available := func() int64 {
			t.Helper()
			var stock, held int64
			if err := db.Raw("SELECT stock FROM variants WHERE id = ?", variant).Scan(&stock).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Raw("SELECT COALESCE(SUM(quantity), 0) FROM stock_holds WHERE variant_id = ?", variant).Scan(&held).Error; err != nil {
				t.Fatal(err)
			}
			return stock - held
		}
		before := available()

		cart, err := c.CreateCart(ctx, checkout.CartRequest{Items: items(variant, 3)})
		if err != nil {
			t.Fatal(err)
		}
		if cart.Status != checkout.CartOpen || len(cart.LineItems) != 1 || cart.LineItems[0].BaseAmount != 3*cart.LineItems[0].UnitAmount {
			t.Fatalf("created: %+v", cart)
		}
		if got := available(); got != before {
			t.Errorf("a cart held stock: %d available, %d before", got, before)
		}
		cart, err = c.UpdateCart(ctx, cart.ID, checkout.CartRequest{Items: items(variant, 2), PromoCode: ptr("WELCOME10")})
		if err != nil {
			t.Fatal(err)
		}
		byType := map[checkout.TotalType]int64{}
		for _, x := range cart.Totals {
			byType[x.Type] = x.Amount
		}
		if cart.PromoCode != "WELCOME10" || byType[checkout.TotalItemsDiscount] <= 0 || byType[checkout.TotalFulfillment] != 0 {
			t.Errorf("updated: %+v", cart)
		}

		// A checkout made from the cart takes the holds.
		req := checkout.Request{Address: californian, Buyer: &checkout.Buyer{Email: "ada@example.com", Name: "Ada Lovelace"}}
		s, err := c.CreateFromCart(ctx, cart.ID, req)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != checkout.Ready || s.LineItems[0].Item.Quantity != 2 {
			t.Fatalf("session from the cart: %s %+v", s.Status, s.Messages)
		}
		if got := available(); got != before-2 {
			t.Errorf("the session from the cart holds %d units, want 2", before-got)
		}

		if _, err := c.CancelCart(ctx, cart.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetCart(ctx, cart.ID); shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("get of a canceled cart: %v", err)
		}
		if _, err := c.UpdateCart(ctx, cart.ID, checkout.CartRequest{Items: items(variant, 1)}); shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("update of a canceled cart: %v", err)
		}
		if _, err := c.CreateCart(ctx, checkout.CartRequest{Items: items(variant, 0)}); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("a cart of 0 units: %v", err)
		}
	})
}

func TestCartsExpire(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c, clk := demoShop(t, db)
		ctx := context.Background()
		canceled, err := c.CreateCart(ctx, checkout.CartRequest{Items: items("enamel-camp-mug-cream", 2)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CancelCart(ctx, canceled.ID); err != nil {
			t.Fatal(err)
		}
		old, err := c.CreateCart(ctx, checkout.CartRequest{Items: items("enamel-camp-mug-cream", 1)})
		if err != nil {
			t.Fatal(err)
		}
		clk.Add(checkout.CartTTL + time.Minute)
		if _, err := c.GetCart(ctx, old.ID); shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("get of an expired cart: %v", err)
		}
		if _, err := c.DeleteEnded(ctx); err != nil {
			t.Fatal(err)
		}
		var left int64
		if err := db.Raw("SELECT COUNT(*) FROM carts").Scan(&left).Error; err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Errorf("%d carts left after the sweep, want 0", left)
		}
	})
}
