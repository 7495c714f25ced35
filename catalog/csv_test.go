package catalog_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/database/dbtest"
	"shop/money"
)

// readFixture reads testdata/name as a shop priced in code would.
func readFixture(t *testing.T, name, code string) *catalog.Source {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := catalog.ReadImport(f, catalog.ReadOptions{Currency: money.MustLookup(code), Now: fixedNow})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return src
}

func fixedNow() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }

func TestReadShopify(t *testing.T) {
	src := readFixture(t, "shopify.csv", "usd")
	const cdn = "https://cdn.shopify.com/s/files/1/0000/0001/files/"
	want := &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{
		{
			ID: "enamel-camp-mug", Title: "Enamel Camp Mug", Category: "Mugs",
			Description: "A steel mug with a glossy enamel coat & a rolled rim.\n- Holds 12 oz\n- Hand-wash",
			Images:      []string{cdn + "mug-front.jpg", cdn + "mug-side.jpg"},
			Variants: []catalog.VariantRecord{
				{ID: "enamel-camp-mug-slate", Title: "Slate", Options: map[string]string{"Colour": "Slate"}, Price: ptr[int64](1800), Stock: ptr[int64](12), Image: cdn + "mug-slate.jpg"},
				{ID: "enamel-camp-mug-cream", Title: "Cream", Options: map[string]string{"Colour": "Cream"}, Price: ptr[int64](1850), Stock: ptr[int64](0), Image: cdn + "mug-cream.jpg"},
			},
		},
		{
			ID: "linen-apron", Title: "Linen Apron", Category: "Aprons", Description: "Heavy linen, cross-back straps.",
			Images: []string{cdn + "apron.jpg"},
			Variants: []catalog.VariantRecord{
				{ID: "linen-apron-s-m-natural", Title: "S/M / Natural", Options: map[string]string{"Size": "S/M", "Colour": "Natural"}, Price: ptr[int64](4200), Stock: ptr[int64](5)},
				{ID: "linen-apron-l-xl-natural", Title: "L/XL / Natural", Options: map[string]string{"Size": "L/XL", "Colour": "Natural"}, Price: ptr[int64](4200), Stock: ptr[int64](0)},
				{ID: "linen-apron-l-xl-charcoal", Title: "L/XL / Charcoal", Options: map[string]string{"Size": "L/XL", "Colour": "Charcoal"}, Price: ptr[int64](4400), Stock: ptr[int64](7)},
			},
		},
		{
			ID: "brass-candle-holder", Title: "Brass Candle Holder", Category: "Candles", Description: "Solid brass.",
			Images: []string{cdn + "candle.jpg"},
			Variants: []catalog.VariantRecord{
				{ID: "brass-candle-holder-default", Title: "Default", Options: map[string]string{}, Price: ptr[int64](2800), Stock: ptr[int64](90)},
			},
		},
	}}
	if diff := cmp.Diff(want, src.File); diff != "" {
		t.Errorf("Shopify export read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"gift card": 1, "draft": 1, "archived": 1, "unpublished": 1}, src.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if src.Format != catalog.FormatShopify {
		t.Errorf("format %q", src.Format)
	}
	if err := src.File.Validate("usd"); err != nil {
		t.Errorf("the converted file does not validate: %v", err)
	}
}

func TestReadWooCommerce(t *testing.T) {
	src := readFixture(t, "woocommerce.csv", "usd")
	const wp = "https://shop.example.com/wp-content/uploads/2026/10/"
	want := &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{
		{
			ID: "woo-vneck-tee", Title: "V-Neck T-Shirt", Category: "Tshirts",
			Description: "This is a variable product.\n\nSoft cotton — pre-shrunk.",
			Images:      []string{wp + "vneck-tee.jpg", wp + "vneck-tee-back.jpg"},
			Variants: []catalog.VariantRecord{
				// The sale price below the regular one is the price.
				{ID: "woo-vneck-tee-red-m", Title: "Red / M", Options: map[string]string{"Color": "Red", "Size": "M"}, Price: ptr[int64](1650), Stock: ptr[int64](4), Image: wp + "vneck-red.jpg"},
				// A sale price above the regular one is not.
				{ID: "woo-vneck-tee-blue-l", Title: "Blue / L", Options: map[string]string{"Color": "Blue", "Size": "L"}, Price: ptr[int64](2000), Stock: ptr[int64](0)},
			},
		},
		{
			ID: "woo-beanie", Title: "Beanie", Category: "Accessories", Description: "Warm & soft\none size",
			Images: []string{wp + "beanie.jpg"},
			Variants: []catalog.VariantRecord{
				// The sale ended in 2020: the regular price.
				{ID: "woo-beanie-default", Title: "Default", Options: map[string]string{}, Price: ptr[int64](1800), Stock: ptr[int64](9)},
			},
		},
		{
			ID: "woo-51", Title: "Album", Category: "Music", Images: []string{wp + "album.jpg"},
			Variants: []catalog.VariantRecord{
				{ID: "woo-51-default", Title: "Default", Options: map[string]string{}, Price: ptr[int64](1200), Stock: ptr[int64](100)},
			},
		},
	}}
	if diff := cmp.Diff(want, src.File); diff != "" {
		t.Errorf("WooCommerce export read (-want +got):\n%s", diff)
	}
	wantSkipped := map[string]int{"grouped": 1, "external": 1, "draft": 1, "unpublished": 1, "disabled variation": 1}
	if diff := cmp.Diff(wantSkipped, src.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if err := src.File.Validate("usd"); err != nil {
		t.Errorf("the converted file does not validate: %v", err)
	}
}

// TestReadYenAndDinar reads prices of currencies with no minor unit and
// with three decimals.
func TestReadYenAndDinar(t *testing.T) {
	yen := readFixture(t, "shopify-jpy.csv", "jpy")
	var got []int64
	for _, v := range yen.File.Products[0].Variants {
		got = append(got, *v.Price)
	}
	if diff := cmp.Diff([]int64{4800, 5200}, got); diff != "" {
		t.Errorf("yen prices (-want +got):\n%s", diff)
	}
	if yen.File.Currency != "jpy" || yen.File.Products[0].Title != "抹茶碗 Matcha Bowl" {
		t.Errorf("got %+v", yen.File)
	}
	dinar := readFixture(t, "woocommerce-kwd.csv", "kwd")
	got = nil
	for _, p := range dinar.File.Products {
		got = append(got, *p.Variants[0].Price)
	}
	if diff := cmp.Diff([]int64{9125, 4500}, got); diff != "" {
		t.Errorf("dinar prices (-want +got):\n%s", diff)
	}
}

// TestImportCSV imports both exports on both engines and reads them back as
// buyers do, through search_products and get_product.
func TestImportCSV(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		c := catalog.New(db, money.MustLookup("usd"), nil)
		for _, name := range []string{"shopify.csv", "woocommerce.csv"} {
			if err := c.Import(ctx, readFixture(t, name, "usd").File, nil); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		var page catalog.Page
		callTool(t, c, "search_products", `{"query": "enamel mug"}`, &page)
		if len(page.Products) != 1 || page.Products[0].ID != "enamel-camp-mug" || page.Products[0].Price.Amount != 1800 ||
			page.Products[0].ImageURL != "https://cdn.shopify.com/s/files/1/0000/0001/files/mug-front.jpg" || page.Products[0].VariantCount != 2 {
			t.Errorf("search enamel mug: %+v", page)
		}
		callTool(t, c, "search_products", `{"category": "tshirts"}`, &page)
		if len(page.Products) != 1 || page.Products[0].ID != "woo-vneck-tee" || page.Products[0].Price.Display != "$16.50" {
			t.Errorf("search category tshirts: %+v", page)
		}
		callTool(t, c, "search_products", `{"query": "draft"}`, &page)
		if page.Total != 0 {
			t.Errorf("skipped products are searchable: %+v", page)
		}
		var got catalog.ProductResult
		callTool(t, c, "get_product", `{"product_id": "linen-apron"}`, &got)
		p := got.Product
		if p == nil || len(p.Variants) != 3 || p.Variants[2].ID != "linen-apron-l-xl-charcoal" || p.Variants[2].Available != 7 ||
			p.Variants[1].Available != 0 || p.PriceRange.Max.Amount != 4400 || p.Description != "Heavy linen, cross-back straps." {
			t.Errorf("get_product linen-apron: %+v", p)
		}
		callTool(t, c, "get_product", `{"product_id": "woo-vneck-tee"}`, &got)
		if v := got.Product.Variants[0]; v.Options["Color"] != "Red" || v.Price.Amount != 1650 || v.ImageURL == "" {
			t.Errorf("get_product woo-vneck-tee: %+v", got.Product)
		}
	})
}

// TestImportYenAndDinar imports the yen and dinar exports into shops priced
// in those currencies, on both engines, and reads the prices back.
func TestImportYenAndDinar(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		for _, tc := range []struct {
			file, code, product string
			want                []string
		}{
			{"shopify-jpy.csv", "jpy", "matcha-bowl", []string{"¥4,800", "¥5,200"}},
			{"woocommerce-kwd.csv", "kwd", "dallah", []string{"KWD\u00a09.125"}},
		} {
			c := catalog.New(db, money.MustLookup(tc.code), nil)
			if err := c.Import(ctx, readFixture(t, tc.file, tc.code).File, nil); err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			var got catalog.ProductResult
			callTool(t, c, "get_product", `{"product_id": "`+tc.product+`"}`, &got)
			var prices []string
			for _, v := range got.Product.Variants {
				prices = append(prices, v.Price.Display)
			}
			if diff := cmp.Diff(tc.want, prices); diff != "" {
				t.Errorf("%s prices (-want +got):\n%s", tc.product, diff)
			}
		}
	})
}

// callTool calls the catalog's tool name with args and decodes its
// structured content into out.
func callTool(t *testing.T, c *catalog.Catalog, name, args string, out any) {
	t.Helper()
	for _, tool := range c.Tools() {
		if tool.Name != name {
			continue
		}
		res, err := tool.Handle(context.Background(), json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s %s: %v", name, args, err)
		}
		b, err := json.Marshal(res.Structured)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no tool %s", name)
}

// TestReadImportJSON reads the shop's own format through ReadImport too.
func TestReadImportJSON(t *testing.T) {
	src, err := catalog.ReadImport(strings.NewReader("\ufeff"+catalogFile(productB(nil, ""))), catalog.ReadOptions{})
	if err != nil || src.Format != catalog.FormatJSON || len(src.File.Products) != 2 {
		t.Fatalf("got %+v, %v", src, err)
	}
}
