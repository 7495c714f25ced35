package catalog_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/catalog"
	"shop/money"
)

// edited is the fixture testdata/name with cells changed: each edit names a
// row (as problems do: the header is row 1), a column and the new text.
func edited(t *testing.T, name string, edits ...edit) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		col := slices.Index(records[0], e.col)
		if col < 0 {
			t.Fatalf("%s has no column %q", name, e.col)
		}
		records[e.row-1][col] = e.value
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(records); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type edit struct {
	row        int
	col, value string
}

// problems reads data as a shop priced in code and returns the problems
// it refuses the file with.
func problems(t *testing.T, data []byte, code string) []string {
	t.Helper()
	_, err := catalog.ReadImport(bytes.NewReader(data), catalog.ReadOptions{Currency: money.MustLookup(code), Now: fixedNow})
	var pe *catalog.ProblemsError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *ProblemsError", err)
	}
	out := make([]string, len(pe.Problems))
	for i, p := range pe.Problems {
		out[i] = p.String()
	}
	if !strings.Contains(err.Error(), "nothing was imported") || !strings.Contains(err.Error(), out[0]) {
		t.Errorf("the error does not list its problems: %v", err)
	}
	return out
}

func TestShopifyProblems(t *testing.T) {
	const mug, apron = `row 2 (Handle "enamel-camp-mug"), `, `row 5 (Handle "linen-apron"), `
	long := strings.Repeat("word ", 1001)
	checkProblems(t, []problemCase{
		{"NotAPrice", "shopify.csv", "usd", []edit{{2, "Variant Price", "12.5x"}},
			[]string{mug + `"Variant Price": "12.5x" is not a price; send a number such as 12.50`}},
		{"TooManyDecimals", "shopify.csv", "usd", []edit{{2, "Variant Price", "12.505"}},
			[]string{mug + `"Variant Price": "12.505" has 3 decimals, but USD has 2 decimals; send a price such as 12.50`}},
		{"YenDecimals", "shopify-jpy.csv", "jpy", []edit{{3, "Variant Price", "5200.5"}},
			[]string{`row 3 (Handle "matcha-bowl"), "Variant Price": "5200.5" has 1 decimal, but JPY has no decimals; send a price such as 1250`}},
		{"PriceMissing", "shopify.csv", "usd", []edit{{3, "Variant Price", ""}},
			[]string{`row 3 (Handle "enamel-camp-mug"), "Variant Price": missing; send the price, such as 12.50`}},
		{"PriceTooHigh", "shopify.csv", "usd", []edit{{2, "Variant Price", "2000000000"}},
			[]string{mug + `"Variant Price": "2000000000" is more than the shop takes (at most 1000000000.00); send a smaller price`}},
		{"StockNotWhole", "shopify.csv", "usd", []edit{{2, "Variant Inventory Qty", "3.5"}},
			[]string{mug + `"Variant Inventory Qty": "3.5" is not a whole number; send the units on hand, such as 12`}},
		{"StockMissing", "shopify.csv", "usd", []edit{{5, "Variant Inventory Qty", ""}},
			[]string{apron + `"Variant Inventory Qty": missing; send the units on hand, such as 12`}},
		{"ImageNotHTTPS", "shopify.csv", "usd", []edit{{4, "Image Src", "http://cdn.example.com/a.jpg"}},
			[]string{`row 4 (Handle "enamel-camp-mug"), "Image Src": "http://cdn.example.com/a.jpg" is not an https URL the shop can show; send the image's https:// address (at most 500 characters)`}},
		{"TitleMissing", "shopify.csv", "usd", []edit{{2, "Title", ""}},
			[]string{mug + `"Title": missing; send the product's title on its first row`}},
		{"TitleTooLong", "shopify.csv", "usd", []edit{{2, "Title", strings.Repeat("x", 201)}},
			[]string{mug + `"Title": 201 characters; the shop keeps at most 200, so shorten it`}},
		{"CategoryMissing", "shopify.csv", "usd", []edit{{2, "Type", ""}, {2, "Product Category", ""}},
			[]string{mug + `"Type": missing; send the product's type, such as Mugs (the shop's category), or a Product Category`}},
		{"DescriptionTooLong", "shopify.csv", "usd", []edit{{2, "Body (HTML)", "<p>" + long + "</p>"}},
			[]string{mug + `"Body (HTML)": 5004 characters; the shop keeps at most 5000, so shorten it`}},
		{"HandleMissing", "shopify.csv", "usd", []edit{{3, "Handle", ""}},
			[]string{`row 3, "Handle": missing; send the product's handle on each of its rows, as Shopify exports it`}},
		{"OptionWithoutName", "shopify.csv", "usd", []edit{{3, "Option2 Value", "Large"}},
			[]string{`row 3 (Handle "enamel-camp-mug"), "Option2 Value": "Large" has no option name: the product's first row has no "Option2 Name"; name the option there`}},
		{"SameVariantTwice", "shopify.csv", "usd", []edit{{3, "Option1 Value", "Slate"}},
			[]string{`row 3 (Handle "enamel-camp-mug"), "Option1 Value": makes the variant id "enamel-camp-mug-slate", as row 2 does; give each variant its own option values`}},
		{"NoVariant", "shopify.csv", "usd", []edit{{8, "Variant Price", ""}, {8, "Option1 Value", ""}, {8, "Variant SKU", ""}},
			[]string{`row 8 (Handle "brass-candle-holder"), "Variant Price": no row of Handle "brass-candle-holder" holds a variant; send its price (and options) on its first row`}},
		{"EveryProblemListed", "shopify.csv", "usd", []edit{{2, "Variant Price", "12.5x"}, {7, "Variant Inventory Qty", "lots"}, {8, "Variant Price", "£28"}},
			[]string{
				mug + `"Variant Price": "12.5x" is not a price; send a number such as 12.50`,
				`row 7 (Handle "linen-apron"), "Variant Inventory Qty": "lots" is not a whole number; send the units on hand, such as 12`,
				`row 8 (Handle "brass-candle-holder"), "Variant Price": "£28" is not a price; send a number such as 12.50`,
			}},
		// A skipped product's rows are not checked: they are not imported.
		{"SkippedRowsUnchecked", "shopify.csv", "usd", []edit{{2, "Variant Price", "x"}, {11, "Variant Price", "y"}},
			[]string{mug + `"Variant Price": "x" is not a price; send a number such as 12.50`}},
	})
}

// problemCase is a fixture with cells changed and the problems it is
// refused with.
type problemCase struct {
	name  string
	file  string
	code  string
	edits []edit
	want  []string
}

func checkProblems(t *testing.T, tests []problemCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, problems(t, edited(t, tc.file, tc.edits...), tc.code)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWooCommerceProblems(t *testing.T) {
	checkProblems(t, []problemCase{
		{"RegularPrice", "woocommerce.csv", "usd", []edit{{3, "Regular price", "20,00"}},
			[]string{`row 3 (ID 41), "Regular price": "20,00" is not a price; send a number such as 12.50`}},
		{"RegularPriceMissing", "woocommerce.csv", "usd", []edit{{6, "Regular price", ""}},
			[]string{`row 6 (ID 50), "Regular price": missing; send the price, such as 12.50`}},
		{"SalePrice", "woocommerce.csv", "usd", []edit{{3, "Sale price", "16.5.0"}},
			[]string{`row 3 (ID 41), "Sale price": "16.5.0" is not a price; send a number such as 12.50`}},
		{"DinarDecimals", "woocommerce-kwd.csv", "kwd", []edit{{2, "Regular price", "12.7505"}},
			[]string{`row 2 (ID 10), "Regular price": "12.7505" has 4 decimals, but KWD has 3 decimals; send a price such as 12.500`}},
		{"UnknownParent", "woocommerce.csv", "usd", []edit{{3, "Parent", "id:99"}},
			[]string{`row 3 (ID 41), "Parent": "id:99" names no variable product in the file; send the ID (as id:40) or SKU of the product this variation belongs to`}},
		{"ParentMissing", "woocommerce.csv", "usd", []edit{{4, "Parent", ""}},
			[]string{`row 4 (ID 42), "Parent": missing; send the variable product's ID (as id:40) or SKU`}},
		{"UnknownType", "woocommerce.csv", "usd", []edit{{6, "Type", "bundle"}},
			[]string{`row 6 (ID 50), "Type": "bundle" is not a product type the shop sells; send simple, variable or variation`}},
		{"StockMissing", "woocommerce.csv", "usd", []edit{{6, "Stock", ""}},
			[]string{`row 6 (ID 50), "Stock": missing; send the units on hand, such as 12 (the shop counts stock: have WooCommerce manage it, or fill it in)`}},
		{"NoVariations", "woocommerce.csv", "usd", []edit{{3, "Parent", "id:51"}, {4, "Parent", "id:51"}},
			[]string{
				`row 2 (ID 40), "Type": a variable product needs its variations; no row of Type variation names it in Parent`,
				`row 3 (ID 41), "Parent": "id:51" names no variable product in the file; send the ID (as id:40) or SKU of the product this variation belongs to`,
				`row 4 (ID 42), "Parent": "id:51" names no variable product in the file; send the ID (as id:40) or SKU of the product this variation belongs to`,
			}},
		{"NoID", "woocommerce.csv", "usd", []edit{{7, "ID", ""}},
			[]string{`row 7, "ID": missing, and so is SKU; send the product's ID or SKU, as WooCommerce exports them`}},
		{"CategoryMissing", "woocommerce.csv", "usd", []edit{{7, "Categories", ""}},
			[]string{`row 7 (ID 51), "Categories": missing; send the product's category, such as Clothing > Tshirts`}},
		{"SaleDate", "woocommerce.csv", "usd", []edit{{6, "Date sale price ends", "01/02/2020"}},
			[]string{`row 6 (ID 50), "Date sale price ends": "01/02/2020" is not a date; send it as 2026-11-27`}},
		{"ImageNotHTTPS", "woocommerce.csv", "usd", []edit{{7, "Images", "ftp://x/album.jpg"}},
			[]string{`row 7 (ID 51), "Images": "ftp://x/album.jpg" is not an https URL the shop can show; send the image's https:// address (at most 500 characters)`}},
		{"SameSKUTwice", "woocommerce.csv", "usd", []edit{{7, "SKU", "woo-beanie"}},
			[]string{`row 7 (ID 51), "SKU": makes the product id "woo-beanie", as row 6 does; give each product its own SKU`}},
	})
}

// TestCSVFileProblems: files that are no export the shop reads.
func TestCSVFileProblems(t *testing.T) {
	shopify, err := os.ReadFile("testdata/shopify.csv")
	if err != nil {
		t.Fatal(err)
	}
	woo, err := os.ReadFile("testdata/woocommerce.csv")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(shopify, []byte("\n"))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"UnknownHeader", []byte("sku,name,price\na,Mug,12.50\n"), "not a catalog file the shop reads: its header names neither Shopify's product CSV export"},
		{"BadQuotes", []byte(string(header) + "\nmug,\"Mug \"x\" y\",,\n"), "not a valid CSV file at line 2"},
		{"NotUTF8", append(append(bytes.Clone(header), '\n'), []byte("mug,Caf\xe9\n")...), "row 2 is not UTF-8 text; save the file as CSV (UTF-8)"},
		{"MissingColumn", bytes.Replace(shopify, []byte("Variant Inventory Qty"), []byte("Inventory"), 1),
			`row 1, "Variant Inventory Qty": no such column; Shopify writes it only for stores with one location: add it with each variant's units on hand (from Shopify's inventory export), as the shop counts stock`},
		{"MissingColumnWoo", bytes.Replace(woo, []byte("Regular price,Categories"), []byte("Regular price,Category"), 1),
			`row 1, "Categories": no such column; export the products again with every column (WooCommerce writes it)`},
		{"CellCount", append(append(bytes.Clone(header), '\n'), []byte("mug,Mug,x\n")...), "row 2: 3 cells, but the header has 39 columns; export the file again"},
		{"NothingToImport", append(append(bytes.Clone(header), '\n'), rest[bytes.Index(rest, []byte("gift-card")):]...), "the Shopify export holds no product to import (4 skipped)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := catalog.ReadImport(bytes.NewReader(tc.data), catalog.ReadOptions{Currency: money.MustLookup("usd")})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestReadImagesKept: a product keeps its first 10 images, and the
// merchant hears of the others.
func TestReadImagesKept(t *testing.T) {
	var imgs []string
	for i := range 12 {
		imgs = append(imgs, "https://img.example.com/album-"+strconv.Itoa(i)+".jpg")
	}
	data := edited(t, "woocommerce.csv", edit{7, "Images", strings.Join(imgs, ", ")})
	src, err := catalog.ReadImport(bytes.NewReader(data), catalog.ReadOptions{Currency: money.MustLookup("usd"), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if got := src.File.Products[2].Images; !slices.Equal(got, imgs[:10]) {
		t.Errorf("images %v", got)
	}
	if diff := cmp.Diff([]string{"row 7 (ID 51): 12 images; the shop keeps the first 10"}, src.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// TestReadSaleDates: a sale price counts only within its dates.
func TestReadSaleDates(t *testing.T) {
	for _, tc := range []struct {
		name, starts, ends string
		want               int64
	}{
		{"Undated", "", "", 1650},
		{"Running", "2026-11-27", "2026-12-01 23:59:59", 1650},
		{"NotYet", "2026-12-02 00:00:00", "", 2000},
		{"Over", "", "2026-11-30", 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := edited(t, "woocommerce.csv", edit{3, "Date sale price starts", tc.starts}, edit{3, "Date sale price ends", tc.ends})
			src, err := catalog.ReadImport(bytes.NewReader(data), catalog.ReadOptions{Currency: money.MustLookup("usd"), Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			if got := *src.File.Products[0].Variants[0].Price; got != tc.want {
				t.Errorf("price %d, want %d", got, tc.want)
			}
		})
	}
}
