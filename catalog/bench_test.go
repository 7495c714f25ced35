package catalog_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"shop/catalog"
	"shop/database"
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

// BenchmarkSearch measures the search's query shapes on a large catalog: the
// database SHOP_BENCH_DB names (a SQLite file or a postgres:// URL), such as a
// copy of one that `shop import` filled with 100,000 products. It migrates that
// database, so point it at a copy. Without SHOP_BENCH_DB it is skipped. Besides
// ns/op it reports each query's median and 99th percentile.
//
//	SHOP_BENCH_DB=/tmp/copy.db go test ./catalog/ -run '^$' -bench Search
func BenchmarkSearch(b *testing.B) {
	dsn := os.Getenv("SHOP_BENCH_DB")
	if dsn == "" {
		b.Skip("set SHOP_BENCH_DB to a copy of a large catalog's database")
	}
	ctx := context.Background()
	db, err := database.Open(ctx, dsn, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = database.Close(db) })
	if _, err := database.Migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	c := catalog.New(db, money.MustLookup("usd"), nil)
	first, err := c.Search(ctx, catalog.Query{Text: "cotton", Limit: 10})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: \"cotton\" matches %d products", database.DialectOfDB(db), first.Total)
	maxPrice := int64(2000)
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
			for b.Loop() {
				t0 := time.Now()
				if _, err := c.Search(ctx, tc.q); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "ms-p99")
		})
	}
}
