package catalog_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/catalog"
	"shop/database/dbtest"
)

// TestHolds: held units are not available to others, in get_product and in
// search, until they are released or expire.
func TestHolds(t *testing.T) {
	ctx := context.Background()
	const variant = "cast-iron-skillet-12-in" // 7 on hand in the demo catalog
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		available := func() int64 {
			t.Helper()
			p, err := c.Product(ctx, "cast-iron-skillet")
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range p.Variants {
				if v.ID == variant {
					return v.Available
				}
			}
			t.Fatalf("no variant %s", variant)
			return 0
		}
		hold := func(holder string, n int64, until time.Time) []catalog.Shortfall {
			t.Helper()
			var short []catalog.Shortfall
			err := db.Transaction(func(tx *gorm.DB) error {
				var err error
				res, err := c.Hold(ctx, tx, catalog.HoldRequest{Holder: holder, Lines: []catalog.HoldLine{{VariantID: variant, Quantity: n}}, Until: until})
				if res != nil {
					short = res.Short
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return short
		}
		// inStock reports whether search finds the 12 in skillet, the only
		// skillet priced 5000 or more, in stock.
		inStock := func() bool {
			t.Helper()
			min := int64(5000)
			page, err := c.Search(ctx, catalog.Query{Text: "skillet", MinPrice: &min, InStockOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			return page.Total > 0
		}
		later := time.Now().Add(time.Hour)
		if got := available(); got != 7 {
			t.Fatalf("available %d before any hold, want 7", got)
		}
		if short := hold("cs_a", 5, later); short != nil {
			t.Fatalf("holding 5 of 7: %+v", short)
		}
		if got := available(); got != 2 || !inStock() {
			t.Errorf("available %d with 5 held (in stock: %t), want 2", got, inStock())
		}
		short := hold("cs_b", 3, later)
		if len(short) != 1 || short[0].Available != 2 {
			t.Fatalf("holding 3 of the 2 left: %+v", short)
		}
		// A holder's own hold does not stand in its way: cs_a may go to 7.
		if short := hold("cs_a", 7, later); short != nil {
			t.Fatalf("cs_a raising its hold to 7: %+v", short)
		}
		seen, err := c.ItemsToHold(ctx, nil, []string{"cs_b"}, catalog.HoldBuyer{}, []string{variant})
		items := seen.Items
		if err != nil || items[variant].Available != 0 || items[variant].OnHand != 7 {
			t.Fatalf("items for cs_b: %+v %v", items, err)
		}
		// Only the 12 in skillet costs 5000 or more, and all of it is held.
		if inStock() {
			t.Error("search lists the held 12 in skillet as in stock")
		}
		if err := c.Release(ctx, nil, "cs_a"); err != nil {
			t.Fatal(err)
		}
		if got := available(); got != 7 || !inStock() {
			t.Errorf("available %d after release (in stock: %t), want 7", got, inStock())
		}
		// An expired hold holds nothing, swept or not.
		hold("cs_c", 7, time.Now().Add(-time.Second))
		if got := available(); got != 7 || !inStock() {
			t.Errorf("available %d with only an expired hold (in stock: %t), want 7", got, inStock())
		}
		if n, err := c.ReleaseExpired(ctx); err != nil || n != 1 {
			t.Errorf("ReleaseExpired = %d, %v; want 1", n, err)
		}
	})
}
