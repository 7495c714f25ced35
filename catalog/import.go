package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"shop/contract"
)

// File is a catalog in the import format (testdata/demo/catalog.json). The
// format is declared once, in package contract, which the shop's own tools
// (shop bench's catalog generator) write; File adds its validation.
type File contract.CatalogFile

// The records of the import format, as catalog names them.
type (
	// ProductRecord is a product in the import format.
	ProductRecord = contract.ProductRecord
	// VariantRecord is a variant in the import format.
	VariantRecord = contract.VariantRecord
)

// Bounds of the import format.
const (
	MaxIDLen          = 64
	MaxTitleLen       = 200
	MaxCategoryLen    = 64
	MaxDescriptionLen = 5000
	MaxImages         = 10
	MaxVariants       = 100
	MaxOptions        = 5
	MaxOptionLen      = 64
	MaxPrice          = 100_000_000_000 // minor units: a billion dollars
	MaxStock          = 1_000_000_000
	maxReportedErrors = 20
	importBatch       = 500
	analyzeAfter      = 1000 // products; smaller imports leave statistics to the database
	// importCacheKiB is the SQLite page cache an import's transaction keeps
	// (database.GrowPageCache), so that a large import's changed pages stay
	// in memory instead of spilling to the log and back.
	importCacheKiB = 64 << 10
)

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// ValidID reports whether s has the shape of a product or variant id:
// idPattern (which the tools' schemas give hosts), up to MaxIDLen bytes.
// Every line of every cart is checked, so it is read byte by byte rather
// than by the regular expression.
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ReadFile decodes a catalog file. Unknown fields are errors, to catch typos.
// Like Validate's, its errors name the record and the field and say what to
// send: `products[3] (id "mug-1").variants[0].price: send an integer number
// of minor units (1250 for 12.50), got a string`.
//
// The file is decoded one product at a time, so the index of a product at
// fault is known. encoding/json names the field of an error but not the
// element of an array, so a product that fails is decoded again, level by
// level, to find it; a file without errors is decoded once.
func ReadFile(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the catalog file: %w", err)
	}
	d := &fileDecoder{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	return d.file()
}

// fileExample is the shape of a catalog file, for messages.
const fileExample = `{"currency": "usd", "products": [...]}`

// sendWhat says what to send for a field of the import format, by its name
// ("product", "variant" and "option" for an element of products, variants
// and options).
var sendWhat = map[string]string{
	"currency":    `the currency code as a string, such as "usd"`,
	"products":    "an array of products",
	"product":     `a product as a JSON object {"id": …, "title": …, "category": …, "description": …, "images": […], "variants": […]}`,
	"id":          "the id as a string",
	"title":       "the title as a string",
	"category":    "the category as a string",
	"description": "the description as a string",
	"images":      `an array of image URLs, such as ["/static/products/mug.svg"]`,
	"image":       "the image URL as a string",
	"variants":    "an array of variants",
	"variant":     `a variant as a JSON object {"id": …, "title": …, "options": {…}, "price": …, "stock": …}`,
	"options":     `an object of option names and values, such as {"Size": "M", "Colour": "Navy"}`,
	"option":      "the option's value as a string",
	"price":       "an integer number of minor units (1250 for 12.50)",
	"stock":       "a whole number of units on hand",
}

// fileDecoder decodes a catalog file held in data.
type fileDecoder struct {
	data []byte
	dec  *json.Decoder
}

func (d *fileDecoder) file() (*File, error) {
	tok, err := d.dec.Token()
	switch {
	case err == io.EOF:
		return nil, fmt.Errorf("not a catalog file: it is empty; send a JSON object such as %s", fileExample)
	case err != nil:
		return nil, d.syntaxError("", err)
	case tok != json.Delim('{'):
		return nil, fmt.Errorf("not a catalog file: send a JSON object such as %s, got %s", fileExample, tokenKind(tok))
	}
	f := &File{}
	seen := map[string]bool{}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.syntaxError("", err)
		}
		key, _ := tok.(string)       // an object's keys are strings
		name := strings.ToLower(key) // as encoding/json matches them
		if seen[name] {
			return nil, fmt.Errorf("%s: given twice; send it once", strings.TrimPrefix(pathName(key), "."))
		}
		seen[name] = true
		switch name {
		case "currency":
			if err := d.dec.Decode(&f.Currency); err != nil {
				if isSyntaxError(err) {
					return nil, d.syntaxError("currency", err)
				}
				return nil, fmt.Errorf("currency: %s", sendGot("currency", err))
			}
		case "products":
			if err := d.products(f); err != nil {
				return nil, err
			}
		default:
			return nil, errors.New(strings.TrimPrefix(unknownField(key, reflect.TypeFor[File](), "a catalog file"), "."))
		}
	}
	if _, err := d.dec.Token(); err != nil { // the closing }
		return nil, d.syntaxError("", err)
	}
	end := d.dec.InputOffset()
	if _, err := d.dec.Token(); err != io.EOF {
		end += int64(len(d.data[end:]) - len(bytes.TrimLeft(d.data[end:], " \t\r\n")))
		return nil, fmt.Errorf("more data after the catalog object (%s); send one JSON object such as %s", d.position(end), fileExample)
	}
	return f, nil
}

// products decodes the products array into f, strictly, one product at a time.
func (d *fileDecoder) products(f *File) error {
	tok, err := d.dec.Token()
	switch {
	case err != nil:
		return d.syntaxError("products", err)
	case tok == nil:
		return nil // null: no products, which Validate reports
	case tok != json.Delim('['):
		return fmt.Errorf("products: send %s, got %s", sendWhat["products"], tokenKind(tok))
	}
	d.dec.DisallowUnknownFields()
	for i := 0; d.dec.More(); i++ {
		start := d.dec.InputOffset()
		f.Products = append(f.Products, ProductRecord{})
		if err := d.dec.Decode(&f.Products[i]); err != nil {
			if isSyntaxError(err) {
				return d.syntaxError(fmt.Sprintf("products[%d]", i), err)
			}
			// The decoder has read past the product: its text is the input
			// from start on, after the comma before it.
			raw := bytes.TrimLeft(d.data[start:d.dec.InputOffset()], " \t\r\n,")
			return errors.New(recordAt(i, leadingID(raw)) + explainProduct(raw, err))
		}
	}
	if _, err := d.dec.Token(); err != nil { // the closing ]
		return d.syntaxError(fmt.Sprintf("products, after products[%d]", len(f.Products)-1), err)
	}
	return nil
}

func isSyntaxError(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// syntaxError reports malformed JSON met while decoding at (a path, or ""
// at the top level), with its line and column in the file.
func (d *fileDecoder) syntaxError(at string, err error) error {
	if at != "" {
		at += ": "
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%sthe file ends in the middle of the JSON (%s): it looks cut short; send the whole file", at, d.position(int64(len(d.data))))
	}
	// The decoder's offsets count from the value it was reading; checking
	// the whole file again finds the error's place in the file (its offset
	// counts the character at fault).
	var se *json.SyntaxError
	if !errors.As(json.Unmarshal(d.data, new(json.RawMessage)), &se) {
		return fmt.Errorf("%snot valid JSON: %w", at, err)
	}
	return fmt.Errorf("%snot valid JSON at %s: %s", at, d.position(se.Offset-1), se.Error())
}

// position describes the byte offset off in the file as a line and column.
func (d *fileDecoder) position(off int64) string {
	before := d.data[:max(0, min(off, int64(len(d.data))))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

// recordAt names products[i], with its id when known, as errors begin.
func recordAt(i int, id string) string {
	at := fmt.Sprintf("products[%d]", i)
	if id != "" {
		if len(id) > MaxIDLen {
			id = strings.ToValidUTF8(id[:MaxIDLen], "") + "…"
		}
		at += fmt.Sprintf(" (id %q)", id)
	}
	return at
}

// leadingID returns the id of the product raw, or "" when it has none that
// is a string.
func leadingID(raw []byte) string {
	var id string
	_ = json.Unmarshal(member(raw, "id"), &id)
	return id
}

// Validate checks a catalog file against the shop's currency. It returns every
// problem (up to 20), each naming the record and the field.
func (f *File) Validate(currency string) error {
	var errs []error
	report := func(format string, args ...any) {
		if len(errs) < maxReportedErrors {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	if !strings.EqualFold(f.Currency, currency) {
		report("currency: the file is priced in %q, the shop in %q; send prices in %s", f.Currency, currency, currency)
	}
	if len(f.Products) == 0 {
		report("products: the file holds no products")
	}
	products := map[string]int{}
	variants := map[string]string{}
	for i, p := range f.Products {
		checkProduct(report, i, p, products)
		for k, v := range p.Variants {
			checkVariant(report, fmt.Sprintf("%s.variants[%d]", recordAt(i, p.ID), k), p.ID, v, variants)
		}
	}
	return errors.Join(errs...)
}

// checkProduct reports what is wrong with products[i] itself (not its
// variants); products maps the ids met so far to their index.
func checkProduct(report func(string, ...any), i int, p ProductRecord, products map[string]int) {
	at := recordAt(i, p.ID)
	switch {
	case p.ID == "":
		report("%s.id: missing", at)
	case !ValidID(p.ID):
		report("%s.id: use 1 to %d characters a-z, 0-9, - and _", at, MaxIDLen)
	default:
		if j, dup := products[p.ID]; dup {
			report("%s.id: already used by products[%d]", at, j)
		}
		products[p.ID] = i
	}
	checkText(report, at+".title", p.Title, MaxTitleLen, true)
	checkText(report, at+".category", p.Category, MaxCategoryLen, true)
	checkText(report, at+".description", p.Description, MaxDescriptionLen, false)
	if len(p.Images) > MaxImages {
		report("%s.images: at most %d images", at, MaxImages)
	}
	for k, img := range p.Images {
		checkImage(report, fmt.Sprintf("%s.images[%d]", at, k), img)
	}
	if len(p.Variants) == 0 {
		report("%s.variants: a product needs at least one variant", at)
	}
	if len(p.Variants) > MaxVariants {
		report("%s.variants: at most %d variants", at, MaxVariants)
	}
}

// checkVariant reports what is wrong with the variant at vat of product
// productID; variants maps the variant ids met so far to their product.
func checkVariant(report func(string, ...any), vat, productID string, v VariantRecord, variants map[string]string) {
	switch {
	case v.ID == "":
		report("%s.id: missing", vat)
	case !ValidID(v.ID):
		report("%s.id: use 1 to %d characters a-z, 0-9, - and _", vat, MaxIDLen)
	default:
		if owner, dup := variants[v.ID]; dup {
			report("%s.id: %q is already a variant of product %q", vat, v.ID, owner)
		}
		variants[v.ID] = productID
	}
	checkText(report, vat+".title", v.Title, MaxTitleLen, true)
	if len(v.Options) > MaxOptions {
		report("%s.options: at most %d options", vat, MaxOptions)
	}
	for name, value := range v.Options {
		checkText(report, fmt.Sprintf("%s.options[%q] (name)", vat, name), name, MaxOptionLen, true)
		checkText(report, fmt.Sprintf("%s.options[%q]", vat, name), value, MaxOptionLen, true)
	}
	switch {
	case v.Price == nil:
		report("%s.price: missing; send the price in minor units (1250 for 12.50)", vat)
	case *v.Price < 0 || *v.Price > MaxPrice:
		report("%s.price: must be from 0 to %d minor units", vat, int64(MaxPrice))
	}
	switch {
	case v.Stock == nil:
		report("%s.stock: missing; send the units on hand", vat)
	case *v.Stock < 0 || *v.Stock > MaxStock:
		report("%s.stock: must be from 0 to %d", vat, MaxStock)
	}
	if v.Image != "" {
		checkImage(report, vat+".image", v.Image)
	}
}

func checkText(report func(string, ...any), at, s string, max int, required bool) {
	switch {
	case required && strings.TrimSpace(s) == "":
		report("%s: missing", at)
	case !utf8.ValidString(s):
		report("%s: not valid UTF-8", at)
	case utf8.RuneCountInString(s) > max:
		report("%s: %d characters; at most %d", at, utf8.RuneCountInString(s), max)
	}
}

func checkImage(report func(string, ...any), at, ref string) {
	if !(strings.HasPrefix(ref, "/static/") || strings.HasPrefix(ref, "https://")) || len(ref) > 500 || strings.ContainsAny(ref, " \"'<>\\") {
		report("%s: send an https:// URL or a path under /static/ (got %q)", at, ref)
	}
}
