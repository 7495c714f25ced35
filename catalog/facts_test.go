package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
	"shop/money"
)

// TestSearchFiltersExact checks every filtered search against an oracle
// computed from get_product (each variant's price and units available
// now): the same products in the same order on every page, the exact total
// on each, and each summary's lowest admitted price and in-stock flag. It
// checks again after each change that moves the products' facts or holds:
// holds taken, extended and expired, a sale of a variant's last units, an
// adjustment to zero and back, a restock, an import that reprices, and one
// that moves a variant away from a product it leaves out.
func TestSearchFiltersExact(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		c := catalog.New(db, money.MustLookup("usd"), &catalog.Options{Now: func() time.Time { return now }})
		file := generated(120)
		if err := c.Import(ctx, file, nil); err != nil {
			t.Fatal(err)
		}
		o := &oracle{t: t, c: c, db: db, file: file}
		o.check(ctx, "after the import")

		// Hold every unit of the first products' variants: they leave the
		// in-stock results while the holds live.
		var held []catalog.HoldLine
		for _, p := range file.Products[:6] {
			for _, v := range p.Variants {
				if *v.Stock > 0 {
					held = append(held, catalog.HoldLine{VariantID: v.ID, Quantity: *v.Stock})
				}
			}
		}
		transact(t, db, func(tx *gorm.DB) error {
			res, err := c.Hold(ctx, tx, catalog.HoldRequest{Holder: "cs_all", Lines: held, Until: now.Add(10 * time.Minute)})
			if err == nil && res.Short != nil {
				err = fmt.Errorf("short: %+v", res.Short)
			}
			return err
		})
		o.check(ctx, "with holds on every unit of six products")
		transact(t, db, func(tx *gorm.DB) error { return c.ExtendHolds(ctx, tx, "cs_all", now.Add(20*time.Minute)) })
		now = now.Add(15 * time.Minute)
		o.check(ctx, "with the holds extended past the first expiry")

		// Sell a variant's last units, and two whole products, through the
		// holds: their facts change in the same transaction.
		transact(t, db, func(tx *gorm.DB) error {
			_, err := c.Take(ctx, tx, "cs_all", held[:len(held)/2])
			return err
		})
		o.check(ctx, "after selling half the held variants to zero")
		now = now.Add(10 * time.Minute)
		o.check(ctx, "after the other holds expired")

		// Staff set a stocked variant to zero and an empty one back up;
		// a refund restocks a sold-out variant.
		stocked, empty := o.variant(ctx, true), o.variant(ctx, false)
		zero, five := int64(0), int64(5)
		transact(t, db, func(tx *gorm.DB) error {
			if _, err := c.AdjustStock(ctx, tx, stocked, catalog.StockChange{Set: &zero}); err != nil {
				return err
			}
			_, err := c.AdjustStock(ctx, tx, empty, catalog.StockChange{Set: &five})
			return err
		})
		o.check(ctx, "after adjustments to and from zero")
		transact(t, db, func(tx *gorm.DB) error {
			return c.Restock(ctx, tx, []catalog.HoldLine{{VariantID: held[0].VariantID, Quantity: 2}})
		})
		o.check(ctx, "after a restock")

		// An import that reprices a product.
		again := generated(120)
		for i := range again.Products[10].Variants {
			price := int64(100 + i)
			again.Products[10].Variants[i].Price = &price
		}
		if err := c.Import(ctx, again, nil); err != nil {
			t.Fatal(err)
		}
		o.file = again
		o.check(ctx, "after a re-import")
		// A file of one product that takes a variant from another: the
		// other, not in the file, loses it.
		for i := range again.Products[:len(again.Products)-1] {
			if from := again.Products[i]; len(from.Variants) > 1 {
				to := again.Products[i+1]
				to.Variants = append(slices.Clone(to.Variants), from.Variants[len(from.Variants)-1])
				if err := c.Import(ctx, &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{to}}, nil); err != nil {
					t.Fatal(err)
				}
				again.Products[i].Variants = from.Variants[:len(from.Variants)-1]
				again.Products[i+1] = to
				break
			}
		}
		o.check(ctx, "after an import moved a variant")
	})
}

func transact(t *testing.T, db *gorm.DB, fn func(tx *gorm.DB) error) {
	t.Helper()
	if err := database.Transact(context.Background(), db, fn); err != nil {
		t.Fatal(err)
	}
}

// oracle knows what each filtered search must answer, from get_product.
type oracle struct {
	t    *testing.T
	c    *catalog.Catalog
	db   *gorm.DB
	file *catalog.File
}

// variant is the id of a variant with stock on hand (or without).
func (o *oracle) variant(ctx context.Context, stocked bool) string {
	for _, p := range o.file.Products {
		prod, err := o.c.Product(ctx, p.ID)
		if err != nil {
			o.t.Fatal(err)
		}
		for _, v := range prod.Variants {
			if (v.Available > 0) == stocked {
				return v.ID
			}
		}
	}
	o.t.Fatalf("no variant with stock %t", stocked)
	return ""
}

// check runs every filtered query shape and compares it with the oracle.
func (o *oracle) check(ctx context.Context, when string) {
	o.t.Helper()
	products := map[string]*catalog.Product{}
	for _, p := range o.file.Products {
		prod, err := o.c.Product(ctx, p.ID)
		if err != nil {
			o.t.Fatal(err)
		}
		products[p.ID] = prod
	}
	// The search index's rows carry their products' facts.
	var stale int64
	err := o.db.Raw(`SELECT COUNT(*) FROM product_terms t JOIN products p ON p.id = t.product_id
		WHERE t.min_price IS DISTINCT FROM p.min_price OR t.min_stocked_price IS DISTINCT FROM p.min_stocked_price`).Scan(&stale).Error
	if err != nil {
		o.t.Fatal(err)
	}
	if stale != 0 {
		o.t.Errorf("%s: %d rows of product_terms carry facts their products no longer have", when, stale)
	}
	lo, hi, mid, cheap := int64(2000), int64(9000), int64(5000), int64(1500)
	shapes := []catalog.Query{
		{InStockOnly: true},
		{MaxPrice: &hi},
		{MinPrice: &lo},
		{MinPrice: &lo, MaxPrice: &hi},
		{MinPrice: &mid, MaxPrice: &mid},
		{MinPrice: &lo, MaxPrice: &hi, InStockOnly: true},
		{MaxPrice: &mid, InStockOnly: true},
		{Category: "Kitchen", InStockOnly: true},
		{Category: "Garden", MinPrice: &lo},
		{Text: "cotton"},
		{Text: "cotton", InStockOnly: true},
		{Text: "cotton", MaxPrice: &mid},
		{Text: "made", MinPrice: &lo, MaxPrice: &hi, InStockOnly: true},
		{Text: "made for", InStockOnly: true},
		{Text: "cot", MaxPrice: &hi, InStockOnly: true},
		{Text: "bag", Category: "Travel", MinPrice: &lo},
		// A word in a category: one range of product_terms_category.
		{Text: "made", Category: "Home"},
		{Text: "made", Category: "Kitchen", InStockOnly: true},
		// A common word and a narrow filter: counted from the filter's side.
		{Text: "made", MaxPrice: &cheap},
		{Text: "made", MaxPrice: &cheap, InStockOnly: true},
		{Text: "made", Category: "Home", MaxPrice: &hi},
		{Text: "made", Category: "Home", MaxPrice: &hi, InStockOnly: true},
		// A word under a price cap, in stock, or both: counted in the
		// word's index rows, which carry the facts.
		{Text: "cotton", MaxPrice: &mid, InStockOnly: true},
		{Text: "made", MaxPrice: &hi},
		{Text: "made", InStockOnly: true},
	}
	for _, q := range shapes {
		// The unfiltered search gives the order; the oracle filters it.
		base := q
		base.Category, base.MinPrice, base.MaxPrice, base.InStockOnly = "", nil, nil, false
		var want []catalog.ProductSummary
		for _, s := range o.all(ctx, base) {
			if price, inStock, ok := admitted(products[s.ID], q); ok && (q.Category == "" || s.Category == q.Category) {
				s.Price.Amount, s.InStock, s.VariantCount = price, inStock, len(products[s.ID].Variants)
				want = append(want, s)
			}
		}
		got := o.all(ctx, q)
		if !slices.EqualFunc(got, want, func(a, b catalog.ProductSummary) bool {
			return a.ID == b.ID && a.Price.Amount == b.Price.Amount && a.InStock == b.InStock && a.VariantCount == b.VariantCount
		}) {
			o.t.Errorf("%s: %+v:\n got %v\nwant %v", when, q, brief(got), brief(want))
		}
	}
}

// all collects every page of q, checking that each carries the total.
func (o *oracle) all(ctx context.Context, q catalog.Query) []catalog.ProductSummary {
	o.t.Helper()
	q.Limit = 7
	var out []catalog.ProductSummary
	var total int64 = -1
	for {
		page, err := o.c.Search(ctx, q)
		if err != nil {
			o.t.Fatalf("%+v: %v", q, err)
		}
		if total >= 0 && page.Total != total {
			o.t.Errorf("%+v: total %d on a later page, %d on the first", q, page.Total, total)
		}
		total = page.Total
		out = append(out, page.Products...)
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	if int64(len(out)) != total {
		o.t.Errorf("%+v: total %d, but the pages list %d products", q, total, len(out))
	}
	return out
}

// admitted says whether a product passes q's price bounds and in_stock_only,
// with the lowest price among the variants that do and whether any variant
// has units available.
func admitted(p *catalog.Product, q catalog.Query) (price int64, inStock, ok bool) {
	for _, v := range p.Variants {
		inStock = inStock || v.Available > 0
		if (q.MinPrice != nil && v.Price.Amount < *q.MinPrice) || (q.MaxPrice != nil && v.Price.Amount > *q.MaxPrice) ||
			(q.InStockOnly && v.Available == 0) {
			continue
		}
		if !ok || v.Price.Amount < price {
			price, ok = v.Price.Amount, true
		}
	}
	return price, inStock, ok
}

func brief(list []catalog.ProductSummary) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%s:%d:%t", s.ID, s.Price.Amount, s.InStock)
	}
	return out
}

// TestFactsConcurrentSales sells the last unit of each of a product's two
// variants in two transactions at once, again and again: whichever commits
// last must leave the product out of stock in its facts (on PostgreSQL each
// reads the other's variant only after locking the product's row).
func TestFactsConcurrentSales(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := catalog.New(db, money.MustLookup("usd"), nil)
		one := int64(1)
		price := int64(1000)
		file := &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{{
			ID: "pair", Title: "Pair of socks", Category: "Apparel", Description: "Two of them.",
			Variants: []catalog.VariantRecord{
				{ID: "pair-l", Title: "Left", Options: map[string]string{"Side": "Left"}, Price: &price, Stock: &one},
				{ID: "pair-r", Title: "Right", Options: map[string]string{"Side": "Right"}, Price: &price, Stock: &one},
			},
		}}}
		if err := c.Import(ctx, file, nil); err != nil {
			t.Fatal(err)
		}
		for round := range 15 {
			start := make(chan struct{})
			errs := make(chan error, 2)
			for _, v := range []string{"pair-l", "pair-r"} {
				go func() {
					<-start
					errs <- database.Transact(ctx, db, func(tx *gorm.DB) error {
						_, err := c.Take(ctx, tx, "cs_"+v, []catalog.HoldLine{{VariantID: v, Quantity: 1}})
						return err
					})
				}()
			}
			close(start)
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			page, err := c.Search(ctx, catalog.Query{Text: "socks", InStockOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != 0 {
				t.Fatalf("round %d: both variants sold out, yet in stock: %+v", round, page)
			}
			transact(t, db, func(tx *gorm.DB) error {
				return c.Restock(ctx, tx, []catalog.HoldLine{{VariantID: "pair-l", Quantity: 1}, {VariantID: "pair-r", Quantity: 1}})
			})
		}
	})
}
