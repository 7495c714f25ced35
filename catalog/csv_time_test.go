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
	"syscall"
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
// the JSON import's time (the mean of one run before and one after them,
// with 10% for noise): CPU time on SQLite, where the database works in the
// process and a shared machine makes wall time meaningless; wall time on
// PostgreSQL. Both are logged.
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

	// took is how long an import took: wall time, and this process's CPU
	// time, which the other work of a busy machine does not inflate (SQLite
	// runs in the process; PostgreSQL's own work is not in it).
	type took struct{ wall, cpu time.Duration }
	timed := func(name string, read func() (*catalog.File, error)) took {
		db := dbtest.Open(t, dialect)
		start, cpu := time.Now(), cpuTime()
		f, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		readTime := time.Since(start)
		if err := catalog.New(db, usd, nil).Import(context.Background(), f, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tk := took{time.Since(start), cpuTime() - cpu}
		t.Logf("%s on %s: %s wall (reading %s), %s CPU", name, dialect, tk.wall.Round(time.Millisecond), readTime.Round(time.Millisecond), tk.cpu.Round(time.Millisecond))
		return tk
	}
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
	// JSON first and last, so that the machine's drift weighs on both sides.
	first := timed("JSON", readJSON)
	csvs := map[string]took{"Shopify": timed("Shopify", readCSV(shopify)), "WooCommerce": timed("WooCommerce", readCSV(woo))}
	last := timed("JSON", readJSON)
	ofJSON := took{(first.wall + last.wall) / 2, (first.cpu + last.cpu) / 2}
	for name, tk := range csvs {
		got, want, what := tk.cpu, ofJSON.cpu, "CPU"
		if dialect == database.Postgres {
			got, want, what = tk.wall, ofJSON.wall, "wall"
		}
		if got > want*110/100 {
			t.Errorf("the %s import took %s (%s), the JSON import of the same catalog %s", name, got, what, want)
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

// BenchmarkReadCSV measures reading (not importing) the exports of
// TestCSVImportTime's catalog, and the JSON of it.
func BenchmarkReadCSV(b *testing.B) {
	t := &testing.T{}
	usd := money.MustLookup("usd")
	shopify := shopifyCSV(t, generated(40_000))
	src, err := catalog.ReadImport(bytes.NewReader(shopify), catalog.ReadOptions{Currency: usd})
	if err != nil {
		b.Fatal(err)
	}
	woo := wooCSV(t, src.File)
	jsonFile, _ := json.Marshal(src.File)
	for name, data := range map[string][]byte{"Shopify": shopify, "WooCommerce": woo} {
		b.Run(name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				if _, err := catalog.ReadImport(bytes.NewReader(data), catalog.ReadOptions{Currency: usd}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
	b.Run("JSON", func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			if _, err := catalog.ReadFile(bytes.NewReader(jsonFile)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	})
}

// cpuTime is the CPU time the process has used (user and system), which a
// busy machine's other work does not add to as it does to wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
