package catalog_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
	"shop/money"
)

// generated returns a catalog of n products built from word lists with a fixed
// seed: the same file on every run and every database.
func generated(n int) *catalog.File {
	r := rand.New(rand.NewPCG(1, 2))
	adjectives := strings.Fields("classic modern rustic vintage compact deluxe everyday heavy light soft sturdy slim bold quiet bright warm cool natural handmade organic recycled waxed quilted woven brushed polished hammered ribbed insulated folding")
	materials := strings.Fields("cotton linen wool merino leather canvas oak walnut bamboo steel brass copper enamel stoneware porcelain glass cork felt denim silk")
	nouns := strings.Fields("mug bowl plate tote bag tee hoodie jacket scarf beanie sock blanket pillow lamp candle vase planter basket notebook pen journal wallet belt cap bottle flask knife board towel apron napkin rug chair stool shelf hook tray jar kettle skillet")
	vocab := strings.Fields("made for daily use with care and attention by small workshops that source locally the finish improves over years wash by hand or machine on a gentle cycle dry flat keep away from direct heat fits most tables desks bags and shelves durable comfortable lightweight generous roomy thoughtful detail stitched seams reinforced edges soft touch matte gloss finish gift ready packed in recycled paper ideal for travel camping kitchens studios offices bedrooms living rooms gardens weekends mornings evenings coffee tea water books tools keys phones")
	colours := strings.Fields("Black White Navy Forest Rust Sand Slate Olive Blue Red")
	sizes := strings.Fields("XS S M L XL")
	categories := strings.Fields("Kitchen Apparel Home Outdoors Stationery Accessories Garden Bath Travel Office Kids Pets")
	f := &catalog.File{Currency: "usd", Products: make([]catalog.ProductRecord, n)}
	for i := range f.Products {
		title := fmt.Sprintf("%s %s %s", adjectives[r.IntN(len(adjectives))], materials[r.IntN(len(materials))], nouns[r.IntN(len(nouns))])
		var desc []string
		for range 20 + r.IntN(20) {
			desc = append(desc, vocab[r.IntN(len(vocab))])
		}
		id := fmt.Sprintf("p%06d", i)
		p := catalog.ProductRecord{
			ID: id, Title: strings.ToUpper(title[:1]) + title[1:], Category: categories[r.IntN(len(categories))],
			Description: strings.Join(desc, " ") + ".", Images: []string{"/static/products/" + id + ".svg"},
		}
		base := int64(400 + r.IntN(20000))
		for k := range 1 + r.IntN(4) {
			price, stock := base+int64(k*200), int64(r.IntN(50))
			p.Variants = append(p.Variants, catalog.VariantRecord{
				ID: fmt.Sprintf("%s-%d", id, k), Title: sizes[k] + " / " + colours[(i+k)%len(colours)],
				Options: map[string]string{"Size": sizes[k], "Colour": colours[(i+k)%len(colours)]},
				Price:   &price, Stock: &stock,
			})
		}
		f.Products[i] = p
	}
	return f
}

// BenchmarkSearch measures the search's query shapes over a generated catalog
// of 100,000 products (SHOP_BENCH_PRODUCTS to change it) on SQLite and on
// PostgreSQL, each in a fresh database it fills first (about a minute each).
// SHOP_BENCH_DB names a database of your own to measure instead (a SQLite
// file or a postgres:// URL, migrated first: point it at a copy). Besides
// ns/op each query reports its median and 99th percentile; give it enough
// iterations for a p99 that is not the maximum:
//
//	go test ./catalog/ -run '^$' -bench Search -benchtime 300x
func BenchmarkSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("fills a catalog of 100,000 products")
	}
	if dsn := os.Getenv("SHOP_BENCH_DB"); dsn != "" {
		db, err := database.Open(context.Background(), dsn, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = database.Close(db) })
		if _, err := database.Migrate(context.Background(), db); err != nil {
			b.Fatal(err)
		}
		benchSearch(b, db)
		return
	}
	n := 100_000
	if v := os.Getenv("SHOP_BENCH_PRODUCTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("SHOP_BENCH_PRODUCTS=%q: want a positive number of products", v)
		}
	}
	file := generated(n)
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			db := dbtest.Open(b, d)
			t0 := time.Now()
			if err := catalog.New(db, money.MustLookup("usd"), nil).Import(context.Background(), file, nil); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: imported %d products in %s", d, n, time.Since(t0).Round(time.Millisecond))
			benchSearch(b, db)
		})
	}
}

// benchSearch runs each query shape as a sub-benchmark on db.
func benchSearch(b *testing.B, db *gorm.DB) {
	ctx := context.Background()
	c := catalog.New(db, money.MustLookup("usd"), nil)
	first, err := c.Search(ctx, catalog.Query{Text: "cotton", Limit: 10})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: \"cotton\" matches %d products", database.DialectOfDB(db), first.Total)
	maxPrice, lo, hi, ceiling := int64(2000), int64(2000), int64(7000), int64(10000)
	queries := []struct {
		name string
		q    catalog.Query
	}{
		{"OneWord", catalog.Query{Text: "mug"}},
		{"CommonWord", catalog.Query{Text: "made"}},
		{"ShortWord", catalog.Query{Text: "xs"}},
		{"TwoWords", catalog.Query{Text: "blue mug"}},
		{"ThreeWords", catalog.Query{Text: "organic cotton tee"}},
		{"Prefix", catalog.Query{Text: "lea"}},
		{"WordInStock", catalog.Query{Text: "made", InStockOnly: true}},
		{"WordMaxPrice", catalog.Query{Text: "made", MaxPrice: &maxPrice}},
		{"WordAndFilters", catalog.Query{Text: "mug", Category: "Kitchen", MaxPrice: &maxPrice, InStockOnly: true}},
		// The shapes of shop bench's mix (bench/search.go).
		{"WordCategory", catalog.Query{Text: "mug", Category: "Kitchen"}},
		{"WordInStockMaxPrice", catalog.Query{Text: "cotton", InStockOnly: true, MaxPrice: &ceiling}},
		{"CategoryPriceRange", catalog.Query{Category: "Garden", MinPrice: &lo, MaxPrice: &hi}},
		{"SecondPage", catalog.Query{Text: "cotton", Limit: 10, Cursor: first.NextCursor}},
		{"Browse", catalog.Query{}},
		{"BrowseCategory", catalog.Query{Category: "Garden"}},
		{"BrowseInStock", catalog.Query{InStockOnly: true}},
		{"BrowseMaxPrice", catalog.Query{MaxPrice: &maxPrice}},
		{"BrowseCategoryInStock", catalog.Query{Category: "Garden", InStockOnly: true}},
		{"NoMatch", catalog.Query{Text: "submarine"}},
	}
	for _, tc := range queries {
		b.Run(tc.name, func(b *testing.B) {
			var took []time.Duration
			var total int64
			for b.Loop() {
				t0 := time.Now()
				page, err := c.Search(ctx, tc.q)
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
				total = page.Total
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "ms-p99")
			b.ReportMetric(float64(total), "total")
		})
	}
}

// BenchmarkHoldView reads what a checkout session of three lines reads in
// each of its write transactions (create, update, claim): the items with
// everyone's holds of them and the buyer's limits, without the bounds on
// untrusted buyers (Price) and with them (Hold), on SQLite, among 1,000
// generated products of which 24 variants are held by other sessions of
// eight host users (the reader one of them), all from one client address,
// as under `shop bench --scenario purchase`.
//
//	go test ./catalog/ -run '^$' -bench HoldView -benchmem
func BenchmarkHoldView(b *testing.B) {
	ctx := context.Background()
	db := dbtest.Open(b, database.SQLite)
	c := catalog.New(db, money.MustLookup("usd"), nil)
	if err := c.Import(ctx, generated(1000), nil); err != nil {
		b.Fatal(err)
	}
	var ids []string
	if err := db.Raw("SELECT id FROM variants ORDER BY id LIMIT 24").Scan(&ids).Error; err != nil || len(ids) < 24 {
		b.Fatalf("%d variants: %v", len(ids), err)
	}
	until := time.Now().Add(time.Hour)
	for i, id := range ids {
		buyer := catalog.HoldBuyer{Key: fmt.Sprintf("host-user-%d", i%8), Email: fmt.Sprintf("buyer%d@example.com", i), Address: "192.0.2.1"}
		err := database.Transact(ctx, db, func(tx *gorm.DB) error {
			_, err := c.Hold(ctx, tx, catalog.HoldRequest{Holder: fmt.Sprintf("cs_other%d", i), Buyer: buyer,
				Lines: []catalog.HoldLine{{VariantID: id, Quantity: 1}}, Until: until})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	lines := []string{ids[0], ids[9], ids[17]}
	buyer := catalog.HoldBuyer{Key: "host-user-3", Email: "ada@example.com", Address: "192.0.2.1"}
	for _, v := range []struct {
		name string
		read func(context.Context, *gorm.DB, []string, catalog.HoldBuyer, []string) (*catalog.HoldView, error)
	}{{"Price", c.ItemsToPrice}, {"Hold", c.ItemsToHold}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				view, err := v.read(ctx, db, []string{"cs_ada"}, buyer, lines)
				if err != nil {
					b.Fatal(err)
				}
				if len(view.Items) != 3 {
					b.Fatalf("%d items, want 3", len(view.Items))
				}
			}
		})
	}
}
