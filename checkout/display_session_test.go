package checkout_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
)

// TestSessionDisplay: a session shows the home country's convention before
// an address, the address country's after (Berlin: VAT included; a
// Californian: sales tax on top), and its order keeps the one it was paid
// with; the figures are the same either way.
func TestSessionDisplay(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co := payingShopOpts(t, db, &checkout.Options{}, nil).co
		s, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Buyer: &checkout.Buyer{Email: "jo@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		excluded := contract.Display{TaxName: contract.TaxSales}
		if s.Display != excluded {
			t.Errorf("before an address: %+v, want the US home's %+v", s.Display, excluded)
		}
		us, err := co.Update(ctx, s.ID, checkout.Request{Address: californian})
		if err != nil || us.Display != excluded {
			t.Fatalf("California: %v %+v, want %+v", err, us.Display, excluded)
		}
		berlin := &checkout.Address{Name: "Jo", LineOne: "Invalidenstr. 1", City: "Berlin", Country: "DE", PostalCode: "10115"}
		de, err := co.Update(ctx, s.ID, checkout.Request{Address: berlin})
		included := contract.Display{PricesIncludeTax: true, TaxName: contract.TaxVAT}
		if err != nil || de.Display != included {
			t.Fatalf("Berlin: %v %+v, want %+v", err, de.Display, included)
		}
		done, err := co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || done.Order == nil {
			t.Fatalf("complete: %v %+v", err, done)
		}
		if got := done.Order.Receipt.Display; got != included {
			t.Errorf("the order's receipt shows %+v, want the session's %+v", got, included)
		}
	})
}
