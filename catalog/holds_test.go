package catalog_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
)

const skillet12 = "cast-iron-skillet-12-in" // 7 on hand in the demo catalog

// holdFor holds n units of variant for holder and, when paying, claims them
// for payment as complete_checkout does.
func holdFor(t *testing.T, db *gorm.DB, c *catalog.Catalog, holder, variant string, n int64, paying bool) {
	t.Helper()
	ctx := context.Background()
	req := catalog.HoldRequest{Holder: holder, Lines: []catalog.HoldLine{{VariantID: variant, Quantity: n}}, Until: time.Now().Add(time.Hour)}
	if paying {
		req.Until, req.Paying = time.Now().Add(24*time.Hour), true
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		res, err := c.Hold(ctx, tx, req)
		if err != nil || res.Short != nil {
			t.Fatalf("hold %d of %s: %v %+v", n, variant, err, res)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func adjust(db *gorm.DB, c *catalog.Catalog, variant string, ch catalog.StockChange) (catalog.StockAdjustment, error) {
	var adj catalog.StockAdjustment
	err := db.Transaction(func(tx *gorm.DB) error {
		var err error
		adj, err = c.AdjustStock(context.Background(), tx, variant, ch)
		return err
	})
	return adj, err
}

func stockOf(t *testing.T, db *gorm.DB, variant string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT stock FROM variants WHERE id = ?", variant).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAdjustStockKeepsPayingHolds: the stock never goes below the units held
// by sessions being paid; the holds of sessions not being paid do not stand
// in the way (those sessions are priced again before payment).
func TestAdjustStockKeepsPayingHolds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		holdFor(t, db, c, "cs_paying_a", skillet12, 2, true)
		holdFor(t, db, c, "cs_paying_b", skillet12, 1, true)
		holdFor(t, db, c, "cs_ready", skillet12, 3, false)

		set := func(n int64) catalog.StockChange { return catalog.StockChange{Set: &n} }
		add := func(n int64) catalog.StockChange { return catalog.StockChange{Add: &n} }
		for _, tc := range []struct {
			name  string
			ch    catalog.StockChange
			param string // "" when allowed
		}{
			{"SetBelow", set(2), "$.set"},
			{"AddBelow", add(-5), "$.add"},
			{"SetToThePayingHolds", set(3), ""}, // below the ready session's too
			{"Raise", add(1), ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := stockOf(t, db, skillet12)
				adj, err := adjust(db, c, skillet12, tc.ch)
				want := catalog.PaymentHolds{Units: 3, Sessions: 2}
				if adj.Paying != want {
					t.Errorf("paying holds %+v, want %+v", adj.Paying, want)
				}
				if tc.param == "" {
					if err != nil || stockOf(t, db, skillet12) != adj.After {
						t.Fatalf("%+v: %v; stock %d", adj, err, stockOf(t, db, skillet12))
					}
					return
				}
				var se *shop.Error
				if !errors.As(err, &se) || se.Code != shop.Invalid || se.Param != tc.param ||
					!strings.Contains(se.Message, "3 unit(s) held by 2 checkout session(s) being paid") {
					t.Fatalf("got %v, want invalid %s naming the 3 units of 2 sessions", err, tc.param)
				}
				if got := stockOf(t, db, skillet12); got != before {
					t.Errorf("a refused change left the stock at %d, want %d", got, before)
				}
			})
		}
		got, err := c.PayingHolds(context.Background(), nil, []string{skillet12, "cast-iron-skillet-8-in"})
		if diff := cmp.Diff(map[string]catalog.PaymentHolds{skillet12: {Units: 3, Sessions: 2}}, got); err != nil || diff != "" {
			t.Errorf("PayingHolds (%v):\n%s", err, diff)
		}
	})
}

// TestAdjustStockRacingASale: a sale (Take) commits between AdjustStock's
// read of the stock and its update. PostgreSQL makes the overlap certain:
// the sale holds the variant's row while the adjustment reads the stock
// before the sale and waits to update it. The adjustment must not overwrite
// the sale (a lost update): it is refused as a conflict, and the stock is
// what the sale left.
func TestAdjustStockRacingASale(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, database.Postgres)
	c := demo(t, db)
	sale := db.Begin()
	t.Cleanup(func() { sale.Rollback() })
	if short, err := c.Take(ctx, sale, "cs_sale", []catalog.HoldLine{{VariantID: skillet12, Quantity: 2}}); err != nil || slices.Max(short) != 0 {
		t.Fatalf("take: %v %v", short, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := adjust(db, c, skillet12, catalog.StockChange{Add: ptr(int64(-1))})
		done <- err
	}()
	// The adjustment has read 7 and waits for the sale's row lock.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int64
		err := db.Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
			AND query LIKE 'UPDATE variants SET stock = $1%'`).Scan(&n).Error
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the adjustment never waited for the sale's lock")
		}
	}
	if err := sale.Commit().Error; err != nil {
		t.Fatal(err)
	}
	err := <-done
	got := stockOf(t, db, skillet12)
	var se *shop.Error
	switch {
	case err == nil && got == 4: // the sale's 2 and the adjustment's 1
	case errors.As(err, &se) && se.Code == shop.Conflict && got == 5:
	default:
		t.Fatalf("adjustment: %v, stock %d; want 4, or a conflict and 5 (7 − 2 sold): the sale was lost", err, got)
	}
}

// TestImportKeepsVariants: importing a product again updates its variants
// in place (the holds on them stay), keeps the units held by sessions being
// paid on hand, and marks a variant the file leaves out removed rather than
// deleting it: its id still resolves for the payments and orders that name
// it, and it is no longer sold or shown. Listed again, it is back.
func TestImportKeepsVariants(t *testing.T) {
	ctx := context.Background()
	const (
		small = "cast-iron-skillet-8-in"
		mid   = "cast-iron-skillet-10-in"
	)
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		holdFor(t, db, c, "cs_paying", skillet12, 5, true)
		holdFor(t, db, c, "cs_paying_small", small, 2, true)
		holdFor(t, db, c, "cs_ready", mid, 1, false)

		f, err := os.Open("../testdata/demo/catalog.json")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		file, err := catalog.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var product catalog.ProductRecord
		for _, p := range file.Products {
			if p.ID == "cast-iron-skillet" {
				product = p
			}
		}
		reimport := func(variants []catalog.VariantRecord) []catalog.KeptStock {
			t.Helper()
			p := product
			p.Variants = variants
			var kept []catalog.KeptStock
			err := c.Import(ctx, &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{p}},
				&catalog.ImportOptions{KeptStock: func(k catalog.KeptStock) { kept = append(kept, k) }})
			if err != nil {
				t.Fatal(err)
			}
			return kept
		}
		shown := func() []string {
			t.Helper()
			p, err := c.Product(ctx, "cast-iron-skillet")
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, v := range p.Variants {
				ids = append(ids, v.ID)
			}
			return ids
		}
		// The file lowers the 12 in skillet to 1 and the 8 in to 0, and
		// leaves out the 10 in.
		v8, v12 := product.Variants[0], product.Variants[2]
		v8.Stock, v12.Stock = ptr(int64(0)), ptr(int64(1))
		kept := reimport([]catalog.VariantRecord{v8, v12})
		want := []catalog.KeptStock{{VariantID: small, FileStock: 0, Stock: 2}, {VariantID: skillet12, FileStock: 1, Stock: 5}}
		if diff := cmp.Diff(want, kept); diff != "" {
			t.Errorf("kept stock (-want +got):\n%s", diff)
		}
		if s8, s12 := stockOf(t, db, small), stockOf(t, db, skillet12); s8 != 2 || s12 != 5 {
			t.Errorf("stock %d and %d, want the 2 and 5 units being paid for", s8, s12)
		}
		var holds int64
		db.Table("stock_holds").Where("holder IN ? AND paying = ?", []string{"cs_paying", "cs_paying_small"}, true).Count(&holds)
		if holds != 2 {
			t.Errorf("%d paying holds after the import, want both kept", holds)
		}
		if diff := cmp.Diff([]string{small, skillet12}, shown()); diff != "" {
			t.Errorf("get_product's variants (-want +got):\n%s", diff)
		}
		var removed struct {
			N       int64
			Removed bool
		}
		db.Raw("SELECT COUNT(*) AS n, MAX(CASE WHEN removed THEN 1 ELSE 0 END) = 1 AS removed FROM variants WHERE id = ?", mid).Scan(&removed)
		if removed.N != 1 || !removed.Removed {
			t.Errorf("variant %s left out: %+v, want kept and marked removed", mid, removed)
		}
		if items, err := c.Items(ctx, nil, []string{mid}); err != nil || len(items) != 0 {
			t.Errorf("Items of a removed variant: %+v %v, want none", items, err)
		}
		db.Table("stock_holds").Where("variant_id = ?", mid).Count(&holds)
		if holds != 0 {
			t.Errorf("%d holds left on the removed variant, want the ready session's released", holds)
		}
		if _, err := adjust(db, c, mid, catalog.StockChange{Add: ptr(int64(1))}); err == nil {
			t.Error("adjust_inventory changed a removed variant")
		}

		// Listed again, it is sold and shown again.
		reimport(product.Variants)
		if diff := cmp.Diff([]string{small, mid, skillet12}, shown()); diff != "" {
			t.Errorf("get_product's variants after listing %s again (-want +got):\n%s", mid, diff)
		}
	})
}
