package catalog_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
	"shop/money"
)

// TestCSVImportTime imports a generated catalog of SHOP_IMPORT_ROWS rows
// (100000 for the figure; skipped when unset) from a Shopify and a
// WooCommerce export and from the shop's JSON of the very same catalog,
// each into a fresh database (SQLite; SHOP_IMPORT_DIALECT=postgres for the
// other), and requires each CSV import, reading included, to take at most
// the JSON import's (the mean of one run before and one after them, with
// 15% for the noise of a shared machine).
//
//	SHOP_IMPORT_ROWS=100000 go test ./catalog/ -run TestCSVImportTime -v
func TestCSVImportTime(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("SHOP_IMPORT_ROWS"))
	if rows <= 0 {
		t.Skip("set SHOP_IMPORT_ROWS (100000) to measure")
	}
	dialect := database.SQLite
	if os.Getenv("SHOP_IMPORT_DIALECT") == string(database.Postgres) {
		dialect = database.Postgres
	}
	usd := money.MustLookup("usd")
	// generated's products have 2.5 variants on average: one row each.
	shopify := shopifyCSV(t, generated(rows*2/5))
	src, err := catalog.ReadImport(bytes.NewReader(shopify), catalog.ReadOptions{Currency: usd})
	if err != nil {
		t.Fatal(err)
	}
	woo := wooCSV(t, src.File)
	jsonFile, err := json.Marshal(src.File)
	if err != nil {
		t.Fatal(err)
	}
	variants := 0
	for _, p := range src.File.Products {
		variants += len(p.Variants)
	}
	t.Logf("%d products, %d variants: Shopify CSV %d rows (%d MB), WooCommerce CSV %d MB, JSON %d MB",
		len(src.File.Products), variants, variants+1, len(shopify)>>20, len(woo)>>20, len(jsonFile)>>20)

	timed := func(name string, read func() (*catalog.File, error)) time.Duration {
		db := dbtest.Open(t, dialect)
		start := time.Now()
		f, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		readTime := time.Since(start)
		if err := catalog.New(db, usd, nil).Import(context.Background(), f, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		took := time.Since(start)
		t.Logf("%s on %s: %s (reading %s)", name, dialect, took.Round(time.Millisecond), readTime.Round(time.Millisecond))
		return took
	}
	// JSON first and last, so that the machine's drift weighs on both sides.
	readJSON := func() (*catalog.File, error) { return catalog.ReadFile(bytes.NewReader(jsonFile)) }
	readCSV := func(data []byte) func() (*catalog.File, error) {
		return func() (*catalog.File, error) {
			s, err := catalog.ReadImport(bytes.NewReader(data), catalog.ReadOptions{Currency: usd})
			if err != nil {
				return nil, err
			}
			return s.File, nil
		}
	}
	first := timed("JSON", readJSON)
	tShopify := timed("Shopify", readCSV(shopify))
	tWoo := timed("WooCommerce", readCSV(woo))
	tJSON := (first + timed("JSON", readJSON)) / 2
	for name, took := range map[string]time.Duration{"Shopify": tShopify, "WooCommerce": tWoo} {
		if took > tJSON*115/100 {
			t.Errorf("the %s import took %s, the JSON import of the same catalog %s", name, took, tJSON)
		}
	}
}

// fixtureHeader is the header row of a fixture.
func fixtureHeader(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := csv.NewReader(f).Read()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// writeCSV lays rows (column → value) out under header.
func writeCSV(t *testing.T, header []string, rows []map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(header)
	rec := make([]string, len(header))
	for _, r := range rows {
		for i, c := range header {
			rec[i] = r[c]
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// optionNames are a variant's option names in a fixed order.
func optionNames(v catalog.VariantRecord) []string {
	var names []string
	for n := range v.Options {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// shopifyCSV is f as Shopify exports it: HTML descriptions, https images.
func shopifyCSV(t *testing.T, f *catalog.File) []byte {
	var rows []map[string]string
	for _, p := range f.Products {
		names := optionNames(p.Variants[0])
		for k, v := range p.Variants {
			r := map[string]string{"Handle": p.ID, "Variant Price": dollars(*v.Price), "Variant Inventory Qty": strconv.FormatInt(*v.Stock, 10), "Variant SKU": v.ID}
			for i, n := range names {
				r["Option"+strconv.Itoa(i+1)+" Value"] = v.Options[n]
			}
			if k == 0 {
				r["Title"], r["Body (HTML)"], r["Type"], r["Status"], r["Published"] = p.Title, "<p>"+p.Description+"</p>", p.Category, "active", "true"
				r["Image Src"], r["Image Position"] = "https://cdn.example.com/products/"+p.ID+".jpg", "1"
				for i, n := range names {
					r["Option"+strconv.Itoa(i+1)+" Name"] = n
				}
			}
			rows = append(rows, r)
		}
	}
	return writeCSV(t, fixtureHeader(t, "shopify.csv"), rows)
}

// wooCSV is f as WooCommerce exports it, every product variable.
func wooCSV(t *testing.T, f *catalog.File) []byte {
	var rows []map[string]string
	id := 0
	for _, p := range f.Products {
		id++
		parent := strconv.Itoa(id)
		names := optionNames(p.Variants[0])
		rows = append(rows, map[string]string{"ID": parent, "Type": "variable", "SKU": p.ID, "Name": p.Title, "Published": "1",
			"Description": "<p>" + p.Description + "</p>", "Categories": p.Category, "Images": p.Images[0]})
		for _, v := range p.Variants {
			id++
			r := map[string]string{"ID": strconv.Itoa(id), "Type": "variation", "Parent": "id:" + parent, "Published": "1",
				"Regular price": dollars(*v.Price), "Stock": strconv.FormatInt(*v.Stock, 10), "Name": p.Title + " - " + v.Title}
			for i, n := range names {
				r["Attribute "+strconv.Itoa(i+1)+" name"], r["Attribute "+strconv.Itoa(i+1)+" value(s)"] = n, v.Options[n]
			}
			rows = append(rows, r)
		}
	}
	return writeCSV(t, fixtureHeader(t, "woocommerce.csv"), rows)
}

func dollars(amount int64) string {
	return strings.TrimSuffix(money.MustLookup("usd").Decimal(amount), ".00")
}
