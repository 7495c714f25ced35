package catalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"shop/catalog"
)

// productA is a well-formed product.
const productA = `{"id": "a", "title": "Mug", "category": "Kitchen", "description": "A mug.",
		"images": ["/static/products/a.svg"],
		"variants": [{"id": "a-1", "title": "Default", "options": {}, "price": 1250, "stock": 3}]}`

// catalogFile is a catalog file of productA (lines 2 to 4) and the product b
// (line 5, after a tab).
func catalogFile(b string) string {
	return "{\"currency\": \"usd\", \"products\": [\n\t" + productA + ",\n\t" + b + "\n]}\n"
}

// productB is product "b", with two variants, the fields named in replace
// (with their JSON text) replaced and the members in extra added after the
// others.
func productB(replace map[string]string, extra string) string {
	return object([]string{"id", `"b"`, "title", `"Tee"`, "category", `"Apparel"`, "description", `"A tee."`,
		"images", `["/static/products/b.svg"]`, "variants", "[" + variantB1 + ", " + variantB2(nil, "") + "]"}, replace, extra)
}

// variantB1 is product "b"'s first variant.
const variantB1 = `{"id": "b-1", "title": "S / Navy", "options": {"Size": "S", "Colour": "Navy"}, "price": 2500, "stock": 4}`

// variantB2 is product "b"'s second variant, with fields replaced and added
// as productB's.
func variantB2(replace map[string]string, extra string) string {
	return object([]string{"id", `"b-2"`, "title", `"M / Navy"`, "options", `{"Size": "M", "Colour": "Navy"}`,
		"price", "2600", "stock", "5"}, replace, extra)
}

// object writes a JSON object of fields (names and JSON values in turn), the
// values of replace instead of theirs, and the members extra at the end.
func object(fields []string, replace map[string]string, extra string) string {
	var members []string
	for i := 0; i < len(fields); i += 2 {
		value, ok := replace[fields[i]]
		if !ok {
			value = fields[i+1]
		}
		members = append(members, fmt.Sprintf("%q: %s", fields[i], value))
	}
	if extra != "" {
		members = append(members, extra)
	}
	return "{" + strings.Join(members, ", ") + "}"
}

// withVariant is productB with variant as its second variant.
func withVariant(variant string) string {
	return productB(map[string]string{"variants": "[" + variantB1 + ", " + variant + "]"}, "")
}

func TestReadFile(t *testing.T) {
	f, err := catalog.ReadFile(strings.NewReader(catalogFile(productB(nil, ""))))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate("usd"); err != nil {
		t.Fatal(err)
	}
	if len(f.Products) != 2 || f.Currency != "usd" {
		t.Fatalf("got %+v", f)
	}
	v := f.Products[1].Variants[1]
	if v.ID != "b-2" || *v.Price != 2600 || *v.Stock != 5 || v.Options["Size"] != "M" {
		t.Errorf("products[1].variants[1] = %+v", v)
	}

	// Keys match without regard to case, as encoding/json matches them, and
	// a null list of products is no products (which Validate reports).
	f, err = catalog.ReadFile(strings.NewReader(`{"Currency": "usd", "Products": null}`))
	if err != nil || f.Currency != "usd" || len(f.Products) != 0 {
		t.Errorf("got %+v, %v", f, err)
	}
}

// TestReadFileErrors checks that every error of decoding names the record
// (index, and id when it has one) and the field, and says what to send.
func TestReadFileErrors(t *testing.T) {
	at, vat := `products[1] (id "b")`, `products[1] (id "b").variants[1]`
	type m = map[string]string
	cases := []struct {
		name string
		file string
		want string // the whole message
	}{
		// Wrong types in a product's fields.
		{"ProductTitleNumber", catalogFile(productB(m{"title": "5"}, "")),
			at + `.title: send the title as a string, got a number`},
		{"ProductIDNumber", catalogFile(productB(m{"id": "2"}, "")),
			`products[1].id: send the id as a string, got a number`},
		{"ProductDescriptionObject", catalogFile(productB(m{"description": `{"en": "A tee."}`}, "")),
			at + `.description: send the description as a string, got an object`},
		{"ImagesNotArray", catalogFile(productB(m{"images": `"/static/products/b.svg"`}, "")),
			at + `.images: send an array of image URLs, such as ["/static/products/mug.svg"], got a string`},
		{"ImageNotString", catalogFile(productB(m{"images": `["/static/products/b.svg", 5]`}, "")),
			at + `.images[1]: send the image URL as a string, got a number`},
		{"VariantsNotArray", catalogFile(productB(m{"variants": variantB1}, "")),
			at + `.variants: send an array of variants, got an object`},
		{"ProductNotObject", catalogFile(`"b"`),
			`products[1]: send a product as a JSON object {"id": …, "title": …, "category": …, "description": …, "images": […], "variants": […]}, got a string`},

		// Wrong types in a variant's fields.
		{"PriceString", catalogFile(withVariant(variantB2(m{"price": `"26.00"`}, ""))),
			vat + `.price: send an integer number of minor units (1250 for 12.50), got a string`},
		{"PriceFraction", catalogFile(withVariant(variantB2(m{"price": "26.5"}, ""))),
			vat + `.price: send an integer number of minor units (1250 for 12.50), got 26.5`},
		{"PriceOverflows", catalogFile(withVariant(variantB2(m{"price": "1e30"}, ""))),
			vat + `.price: send an integer number of minor units (1250 for 12.50), got 1e30`},
		{"StockBool", catalogFile(withVariant(variantB2(m{"stock": "true"}, ""))),
			vat + `.stock: send a whole number of units on hand, got true or false`},
		{"VariantIDNumber", catalogFile(withVariant(variantB2(m{"id": "2"}, ""))),
			vat + `.id: send the id as a string, got a number`},
		{"VariantImageArray", catalogFile(withVariant(variantB2(nil, `"image": ["/static/products/b.svg"]`))),
			vat + `.image: send the image URL as a string, got an array`},
		{"OptionsArray", catalogFile(withVariant(variantB2(m{"options": `["M"]`}, ""))),
			vat + `.options: send an object of option names and values, such as {"Size": "M", "Colour": "Navy"}, got an array`},
		{"OptionValueNumber", catalogFile(withVariant(variantB2(m{"options": `{"Colour": "Navy", "Size": 10}`}, ""))),
			vat + `.options["Size"]: send the option's value as a string, got a number`},
		{"VariantNotObject", catalogFile(withVariant(`"b-2"`)),
			vat + `: send a variant as a JSON object {"id": …, "title": …, "options": {…}, "price": …, "stock": …}, got a string`},
		{"FirstVariantAtFault", catalogFile(productB(m{"variants": "[" + variantB2(m{"stock": `"5"`}, "") + "]"}, "")),
			at + `.variants[0].stock: send a whole number of units on hand, got a string`},

		// A field given twice: encoding/json keeps the last, but the first
		// fails; the error names the field without an index.
		{"VariantsTwice", catalogFile(productB(m{"variants": "[" + variantB2(m{"price": `"1"`}, "") + `], "variants": [` + variantB1 + "]"}, "")),
			at + `.variants.price: send an integer number of minor units (1250 for 12.50), got a string`},

		// Unknown fields at every level, with a suggestion for a near miss.
		{"UnknownTop", `{"currency": "usd", "prodcts": [` + productA + `]}`,
			`prodcts: unknown field (did you mean "products"?); a catalog file holds only currency and products`},
		{"UnknownTopFarOff", `{"currency": "usd", "merchant": "x", "products": [` + productA + `]}`,
			`merchant: unknown field; a catalog file holds only currency and products`},
		{"UnknownProduct", catalogFile(productB(nil, `"titel": "Tee"`)),
			at + `.titel: unknown field (did you mean "title"?); a product holds only id, title, category, description, images and variants`},
		{"UnknownVariant", catalogFile(withVariant(variantB2(nil, `"prise": 2600`))),
			vat + `.prise: unknown field (did you mean "price"?); a variant holds only id, title, options, price, stock and image`},
		{"UnknownVariantOddName", catalogFile(withVariant(variantB2(nil, `"sale price": 2600`))),
			vat + `["sale price"]: unknown field; a variant holds only id, title, options, price, stock and image`},

		// The file's shape.
		{"Empty", "", `not a catalog file: it is empty; send a JSON object such as {"currency": "usd", "products": [...]}`},
		{"NotAnObject", `[` + productA + `]`,
			`not a catalog file: send a JSON object such as {"currency": "usd", "products": [...]}, got an array`},
		{"ProductsNotArray", `{"currency": "usd", "products": ` + productA + `}`,
			`products: send an array of products, got an object`},
		{"ProductsString", `{"currency": "usd", "products": "a"}`,
			`products: send an array of products, got a string`},
		{"CurrencyNumber", `{"currency": 840, "products": [` + productA + `]}`,
			`currency: send the currency code as a string, such as "usd", got a number`},
		{"GivenTwice", `{"currency": "usd", "products": [], "products": [` + productA + `]}`,
			`products: given twice; send it once`},
		{"MoreAfter", "{\"currency\": \"usd\", \"products\": []}\n\n  {}",
			`more data after the catalog object (line 3, column 3); send one JSON object such as {"currency": "usd", "products": [...]}`},

		// Malformed and truncated JSON: the record, and the line and column.
		{"TrailingComma", catalogFile(`{"id": "b", "title": "Tee",}`),
			`products[1]: not valid JSON at line 5, column 29: invalid character '}' looking for beginning of object key string`},
		{"SingleQuotes", catalogFile(`{"id": "b", "title": 'Tee'}`),
			`products[1]: not valid JSON at line 5, column 23: invalid character '\'' looking for beginning of value`},
		{"MissingComma", "{\"currency\": \"usd\", \"products\": [\n\t" + productA + "\n\t" + productA + "]}",
			`products[1]: not valid JSON at line 5, column 2: invalid character '{' after array element`},
		{"ProductsClosedWrong", "{\"currency\": \"usd\", \"products\": [\n\t" + productA + "\n}",
			`products, after products[0]: not valid JSON at line 5, column 1: invalid character '}' after array element`},
		{"TruncatedInProduct", "{\"currency\": \"usd\", \"products\": [\n\t" + productA + ",\n\t{\"id\": \"b\", \"tit",
			`products[1]: the file ends in the middle of the JSON (line 5, column 18): it looks cut short; send the whole file`},
		{"TruncatedAfterProducts", "{\"currency\": \"usd\", \"products\": [\n\t" + productA + "\n]",
			`the file ends in the middle of the JSON (line 5, column 2): it looks cut short; send the whole file`},
		{"TruncatedInCurrency", `{"currency": "us`,
			`currency: the file ends in the middle of the JSON (line 1, column 17): it looks cut short; send the whole file`},
		{"TruncatedAtTop", `{"currency": "usd"`,
			`the file ends in the middle of the JSON (line 1, column 19): it looks cut short; send the whole file`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := catalog.ReadFile(strings.NewReader(tc.file))
			if err == nil {
				t.Fatalf("read without error: %+v", f)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

// TestReadFileLongID checks that an error names a product by a shortened id
// when the id is long.
func TestReadFileLongID(t *testing.T) {
	id := strings.Repeat("x", 500)
	_, err := catalog.ReadFile(strings.NewReader(`{"currency": "usd", "products": [{"id": "` + id + `", "title": 5}]}`))
	want := fmt.Sprintf(`products[0] (id "%s…").title: send the title as a string, got a number`, id[:catalog.MaxIDLen])
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// validFile returns a catalog file that passes Validate: product "a" and
// product "b" with two variants.
func validFile(t *testing.T) *catalog.File {
	t.Helper()
	f, err := catalog.ReadFile(strings.NewReader(catalogFile(productB(nil, ""))))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate("usd"); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestValidateErrors checks each rule of Validate: every error names the
// record and the field.
func TestValidateErrors(t *testing.T) {
	at, vat := `products[1] (id "b")`, `products[1] (id "b").variants[1]`
	cases := []struct {
		name     string
		spoil    func(f *catalog.File)
		wants    []string // the messages, in order
		currency string   // the shop's; default usd
	}{
		{"Currency", func(f *catalog.File) {}, []string{`currency: the file is priced in "usd", the shop in "eur"; send prices in eur`}, "eur"},
		{"NoProducts", func(f *catalog.File) { f.Products = nil }, []string{"products: the file holds no products"}, ""},
		{"MissingID", func(f *catalog.File) { f.Products[1].ID = "" }, []string{"products[1].id: missing"}, ""},
		{"BadID", func(f *catalog.File) { f.Products[1].ID = "Big Mug" }, []string{`products[1] (id "Big Mug").id: use 1 to 64 characters a-z, 0-9, - and _`}, ""},
		{"DuplicateID", func(f *catalog.File) { f.Products[1].ID = "a" }, []string{`products[1] (id "a").id: already used by products[0]`}, ""},
		{"EmptyTitle", func(f *catalog.File) { f.Products[1].Title = "  " }, []string{at + ".title: missing"}, ""},
		{"LongTitle", func(f *catalog.File) { f.Products[1].Title = strings.Repeat("é", 201) }, []string{at + ".title: 201 characters; at most 200"}, ""},
		{"TitleNotUTF8", func(f *catalog.File) { f.Products[1].Title = "Mug \xff" }, []string{at + ".title: not valid UTF-8"}, ""},
		{"MissingCategory", func(f *catalog.File) { f.Products[1].Category = "" }, []string{at + ".category: missing"}, ""},
		{"LongDescription", func(f *catalog.File) { f.Products[1].Description = strings.Repeat("a", 5001) }, []string{at + ".description: 5001 characters; at most 5000"}, ""},
		{"TooManyImages", func(f *catalog.File) {
			for range 10 {
				f.Products[1].Images = append(f.Products[1].Images, "/static/products/b.svg")
			}
		}, []string{at + ".images: at most 10 images"}, ""},
		{"ImageNotURL", func(f *catalog.File) { f.Products[1].Images[0] = "http://example.com/b.svg" },
			[]string{at + `.images[0]: send an https:// URL or a path under /static/ (got "http://example.com/b.svg")`}, ""},
		{"ImageWithQuote", func(f *catalog.File) { f.Products[1].Images[0] = `https://example.com/"onload="x` },
			[]string{at + `.images[0]: send an https:// URL or a path under /static/ (got "https://example.com/\"onload=\"x")`}, ""},
		{"NoVariants", func(f *catalog.File) { f.Products[1].Variants = nil }, []string{at + ".variants: a product needs at least one variant"}, ""},
		{"TooManyVariants", func(f *catalog.File) {
			for k := range 99 {
				v := f.Products[1].Variants[0]
				v.ID = fmt.Sprintf("b-extra-%d", k)
				f.Products[1].Variants = append(f.Products[1].Variants, v)
			}
		}, []string{at + ".variants: at most 100 variants"}, ""},
		{"VariantMissingID", func(f *catalog.File) { f.Products[1].Variants[1].ID = "" }, []string{vat + ".id: missing"}, ""},
		{"VariantBadID", func(f *catalog.File) { f.Products[1].Variants[1].ID = "b/2" }, []string{vat + ".id: use 1 to 64 characters a-z, 0-9, - and _"}, ""},
		{"VariantIDOfAnotherProduct", func(f *catalog.File) { f.Products[1].Variants[1].ID = "a-1" }, []string{vat + `.id: "a-1" is already a variant of product "a"`}, ""},
		{"VariantMissingTitle", func(f *catalog.File) { f.Products[1].Variants[1].Title = "" }, []string{vat + ".title: missing"}, ""},
		{"TooManyOptions", func(f *catalog.File) {
			f.Products[1].Variants[1].Options = map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}
		}, []string{vat + ".options: at most 5 options"}, ""},
		{"EmptyOptionValue", func(f *catalog.File) { f.Products[1].Variants[1].Options["Size"] = "" }, []string{vat + `.options["Size"]: missing`}, ""},
		{"EmptyOptionName", func(f *catalog.File) { f.Products[1].Variants[1].Options = map[string]string{" ": "M"} }, []string{vat + `.options[" "] (name): missing`}, ""},
		{"MissingPrice", func(f *catalog.File) { f.Products[1].Variants[1].Price = nil }, []string{vat + ".price: missing; send the price in minor units (1250 for 12.50)"}, ""},
		{"NegativePrice", func(f *catalog.File) { f.Products[1].Variants[1].Price = ptr[int64](-1) }, []string{vat + ".price: must be from 0 to 100000000000 minor units"}, ""},
		{"HugePrice", func(f *catalog.File) { f.Products[1].Variants[1].Price = ptr[int64](catalog.MaxPrice + 1) }, []string{vat + ".price: must be from 0 to 100000000000 minor units"}, ""},
		{"MissingStock", func(f *catalog.File) { f.Products[1].Variants[1].Stock = nil }, []string{vat + ".stock: missing; send the units on hand"}, ""},
		{"NegativeStock", func(f *catalog.File) { f.Products[1].Variants[1].Stock = ptr[int64](-3) }, []string{vat + ".stock: must be from 0 to 1000000000"}, ""},
		{"VariantImageNotURL", func(f *catalog.File) { f.Products[1].Variants[1].Image = "b.svg" },
			[]string{vat + `.image: send an https:// URL or a path under /static/ (got "b.svg")`}, ""},
		{"Several", func(f *catalog.File) {
			f.Products[0].Title = ""
			f.Products[1].Variants[1].Price = ptr[int64](-1)
		}, []string{`products[0] (id "a").title: missing`, vat + ".price: must be from 0 to 100000000000 minor units"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := validFile(t)
			tc.spoil(f)
			currency := tc.currency
			if currency == "" {
				currency = "usd"
			}
			err := f.Validate(currency)
			if err == nil {
				t.Fatal("valid")
			}
			if got, want := err.Error(), strings.Join(tc.wants, "\n"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}

	t.Run("AtMost20", func(t *testing.T) {
		f := validFile(t)
		for range 30 {
			f.Products = append(f.Products, catalog.ProductRecord{})
		}
		err := f.Validate("usd")
		if n := strings.Count(err.Error(), "\n") + 1; n != 20 {
			t.Errorf("%d errors reported, want 20:\n%s", n, err)
		}
	})
}

// BenchmarkReadFile decodes a generated file of 100,000 products, the size
// of a large import.
func BenchmarkReadFile(b *testing.B) {
	data, err := json.Marshal(generated(100_000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		f, err := catalog.ReadFile(bytes.NewReader(data))
		if err != nil || len(f.Products) != 100_000 {
			b.Fatal(len(f.Products), err)
		}
	}
}
