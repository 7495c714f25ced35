package feed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
	"shop/money"
)

// schema compiles a definition of ACP's feed schema (testdata/acp), with
// formats (uri, date-time) asserted.
func schema(t *testing.T, def string) *sjs.Schema {
	t.Helper()
	f, err := os.Open("testdata/acp/schema.feed.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := sjs.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.feed.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.feed.json#/$defs/" + def)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate checks one JSON document against s.
func validate(t *testing.T, s *sjs.Schema, doc []byte) error {
	t.Helper()
	v, err := sjs.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	return s.Validate(v)
}

// testFeed is the feed of the demo catalog and the Shopify fixture's, on db.
func testFeed(t *testing.T, db *gorm.DB) (*Feed, *catalog.Catalog) {
	t.Helper()
	ctx := context.Background()
	c := catalog.New(db, money.MustLookup("usd"), &catalog.Options{PublicURL: "https://shop.example.com"})
	if _, err := c.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	importFile(t, c, "../catalog/testdata/shopify.csv")
	return New(c, Options{
		Seller: "Northwind Goods", PublicURL: "https://shop.example.com",
		Links: []Link{
			{Type: "terms_of_service", Title: "Terms of use", URL: "/static/terms.html"},
			{Type: "refund_policy", Title: "Returns", URL: "https://northwind.example/returns"},
		},
	}), c
}

func importFile(t *testing.T, c *catalog.Catalog, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := catalog.ReadImport(f, catalog.ReadOptions{Currency: c.Currency()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Import(context.Background(), src.File, nil); err != nil {
		t.Fatal(err)
	}
}

// lines returns the records of a JSON Lines feed, by product id.
func lines(t *testing.T, data []byte) (map[string]Product, [][]byte) {
	t.Helper()
	byID := map[string]Product{}
	var raw [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		var p Product
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatalf("line %d: %v", len(raw)+1, err)
		}
		byID[p.ID] = p
		raw = append(raw, line)
	}
	return byID, raw
}

// TestFeedValidates writes the feed in both formats on both engines and
// validates every record against ACP's schema; the records say what the
// catalog says, with the variant ids checkout takes.
func TestFeedValidates(t *testing.T) {
	product, products := schema(t, "Product"), schema(t, "ProductsResponse")
	// The schema refuses what the shop must not write: the check can fail.
	if err := validate(t, product, []byte(`{"id": "x", "variants": [{"id": "v", "title": "V", "price": {"amount": 100, "currency": "usd"}}]}`)); err == nil {
		t.Fatal("the schema accepts a lower-case currency")
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		f, c := testFeed(t, db)
		var jsonl, whole bytes.Buffer
		if _, err := f.Write(ctx, &jsonl, JSONL); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(ctx, &whole, JSON); err != nil {
			t.Fatal(err)
		}
		byID, raw := lines(t, jsonl.Bytes())
		for i, line := range raw {
			if err := validate(t, product, line); err != nil {
				t.Errorf("line %d does not follow the schema: %v\n%s", i+1, err, line)
			}
		}
		if err := validate(t, products, whole.Bytes()); err != nil {
			t.Errorf("the JSON feed does not follow the schema: %v", err)
		}
		var decoded struct{ Products []Product }
		if err := json.Unmarshal(whole.Bytes(), &decoded); err != nil || len(decoded.Products) != len(raw) {
			t.Fatalf("the JSON feed has %d products, the JSON Lines %d (%v)", len(decoded.Products), len(raw), err)
		}
		page, err := c.Search(ctx, catalog.Query{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(raw)) != page.Total {
			t.Errorf("the feed has %d products, the catalog %d", len(raw), page.Total)
		}
		// Every variant is one get_product lists, at its price and availability.
		for id, rec := range byID {
			p, err := c.Product(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Variants) != len(p.Variants) {
				t.Errorf("%s: %d variants in the feed, %d in the catalog", id, len(rec.Variants), len(p.Variants))
				continue
			}
			for i, v := range p.Variants {
				got := rec.Variants[i]
				if got.ID != v.ID || got.Price.Amount != v.Price.Amount || got.Price.Currency != "USD" || got.Availability.Available != (v.Available > 0) {
					t.Errorf("%s: feed variant %+v, catalog %+v", id, got, v)
				}
			}
		}
		mug := byID["enamel-camp-mug"]
		want := Variant{
			ID: "enamel-camp-mug-cream", Title: "Enamel Camp Mug — Cream",
			Price:          &Price{Amount: 1850, Currency: "USD"},
			Availability:   &Availability{Available: false, Status: "out_of_stock"},
			Categories:     []Category{{Value: "Mugs", Taxonomy: "merchant"}},
			VariantOptions: []VariantOption{{Name: "Colour", Value: "Cream"}},
			Media: []Media{
				{Type: "image", URL: "https://cdn.shopify.com/s/files/1/0000/0001/files/mug-cream.jpg", AltText: "Enamel Camp Mug — Cream"},
				{Type: "image", URL: "https://cdn.shopify.com/s/files/1/0000/0001/files/mug-front.jpg", AltText: "Enamel Camp Mug"},
				{Type: "image", URL: "https://cdn.shopify.com/s/files/1/0000/0001/files/mug-side.jpg", AltText: "Enamel Camp Mug"},
			},
			Seller: &Seller{Name: "Northwind Goods", Links: []Link{
				{Type: "terms_of_service", Title: "Terms of use", URL: "https://shop.example.com/static/terms.html"},
				{Type: "refund_policy", Title: "Returns", URL: "https://northwind.example/returns"},
			}},
		}
		if diff := cmp.Diff(want, mug.Variants[1]); diff != "" {
			t.Errorf("enamel-camp-mug-cream (-want +got):\n%s", diff)
		}
		if mug.Description == nil || !strings.HasPrefix(mug.Description.Plain, "A steel mug") {
			t.Errorf("description %+v", mug.Description)
		}
		// The demo's images are paths the shop serves: absolute in the feed.
		if m := byID["stoneware-coffee-mug"].Media; len(m) != 1 || m[0].URL != "https://shop.example.com/static/products/stoneware-coffee-mug.svg" {
			t.Errorf("stoneware-coffee-mug media %+v", m)
		}
	})
}

// TestFeedAvailability: a variant whose last units a checkout holds is out
// of stock in the feed until the hold ends.
func TestFeedAvailability(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		f, c := testFeed(t, db)
		const variant = "linen-apron-s-m-natural" // 5 on hand
		status := func() string {
			var b bytes.Buffer
			if _, err := f.Write(ctx, &b, JSONL); err != nil {
				t.Fatal(err)
			}
			byID, _ := lines(t, b.Bytes())
			for _, v := range byID["linen-apron"].Variants {
				if v.ID == variant {
					return v.Availability.Status
				}
			}
			t.Fatalf("no %s in the feed", variant)
			return ""
		}
		if s := status(); s != "in_stock" {
			t.Fatalf("before any hold: %s", s)
		}
		hold := func(units int64, until time.Time) {
			err := database.Transact(ctx, db, func(tx *gorm.DB) error {
				res, err := c.Hold(ctx, tx, catalog.HoldRequest{Holder: "cs_test", Lines: []catalog.HoldLine{{VariantID: variant, Quantity: units}}, Until: until})
				if err == nil && len(res.Short) > 0 {
					t.Fatalf("short: %+v", res.Short)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		hold(4, time.Now().Add(time.Hour))
		if s := status(); s != "in_stock" {
			t.Errorf("with 1 of 5 left: %s", s)
		}
		hold(5, time.Now().Add(time.Hour))
		if s := status(); s != "out_of_stock" {
			t.Errorf("with all 5 held: %s", s)
		}
		hold(5, time.Now().Add(-time.Second)) // the hold has expired
		if s := status(); s != "in_stock" {
			t.Errorf("after the hold expired: %s", s)
		}
	})
}
