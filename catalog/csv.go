package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"shop/money"
)

// Format is the format of a catalog file ReadImport recognised.
type Format string

// The formats ReadImport reads.
const (
	FormatJSON        Format = "json"        // the shop's own (ReadFile)
	FormatShopify     Format = "shopify"     // Shopify's product CSV export
	FormatWooCommerce Format = "woocommerce" // WooCommerce's product CSV export
)

// ReadOptions say what a CSV export does not: the currency its prices are
// in and the day it is imported.
type ReadOptions struct {
	// Currency is the shop's: every price of a CSV export is a decimal
	// number of its major units ("12.50").
	Currency money.Currency
	// Now is the clock WooCommerce's sale dates are compared with; default
	// time.Now.
	Now func() time.Time
}

// Source is a catalog file read by ReadImport: the catalog in the import
// format, ready for Import, and what the reading left out.
type Source struct {
	File   *File
	Format Format
	// Skipped counts the products (and WooCommerce variations) left out, by
	// reason: "draft", "archived", "unpublished", "gift card", "grouped",
	// "external", "disabled variation".
	Skipped map[string]int
	// Notes say what the reading changed, for the merchant.
	Notes []string
}

// SkippedTotal is the number of products and variations left out.
func (s *Source) SkippedTotal() int {
	n := 0
	for _, k := range s.Skipped {
		n += k
	}
	return n
}

// MaxProblems bounds the problems a ProblemsError lists; it counts the rest.
const MaxProblems = 50

// Problem is what is wrong in one row (and column) of a CSV export.
type Problem struct {
	Row    int    // as a spreadsheet numbers rows: the header is row 1
	Record string // the row's product, as `Handle "enamel-mug"` or `ID 45`
	Column string // the column's name as the header has it; "" for the whole row
	Text   string // what is wrong and what to send
}

func (p Problem) String() string {
	s := fmt.Sprintf("row %d", p.Row)
	if p.Record != "" {
		s += " (" + p.Record + ")"
	}
	if p.Column != "" {
		return fmt.Sprintf("%s, %q: %s", s, p.Column, p.Text)
	}
	return s + ": " + p.Text
}

// ProblemsError refuses a CSV export: it lists every problem found (up to
// MaxProblems; More counts the others). Nothing was imported.
type ProblemsError struct {
	Format   Format
	Problems []Problem
	More     int
}

func (e *ProblemsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the %s export has %d problem(s); nothing was imported:", formatName[e.Format], len(e.Problems)+e.More)
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  … and %d more", e.More)
	}
	return b.String()
}

var formatName = map[Format]string{FormatShopify: "Shopify", FormatWooCommerce: "WooCommerce", FormatJSON: "JSON"}

// ReadImport reads a catalog file in any format the shop imports, told
// apart by its beginning: the shop's JSON (ReadFile), or, by the columns of
// its header, Shopify's or WooCommerce's product CSV export. A CSV export is
// converted into the import format; its problems come back as one
// *ProblemsError naming each row and column and what to send.
func ReadImport(r io.Reader, opts ReadOptions) (*Source, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the catalog file: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // spreadsheets' byte order mark
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] == '{' {
		f, err := ReadFile(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return &Source{File: f, Format: FormatJSON, Skipped: map[string]int{}}, nil
	}
	if opts.Currency == (money.Currency{}) {
		return nil, errors.New("read the catalog file: no currency for its prices")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s, err := readSheet(data, opts)
	if err != nil {
		return nil, err
	}
	src := &Source{File: &File{Currency: opts.Currency.Code()}, Format: s.format, Skipped: map[string]int{}}
	switch s.format {
	case FormatShopify:
		readShopify(s, src)
	default:
		readWooCommerce(s, src)
	}
	if len(s.problems) > 0 {
		slices.SortStableFunc(s.problems, func(a, b Problem) int { return a.Row - b.Row })
		return nil, &ProblemsError{Format: s.format, Problems: s.problems, More: s.more}
	}
	if len(src.File.Products) == 0 {
		return nil, fmt.Errorf("the %s export holds no product to import (%d skipped); publish some, or send another file", formatName[s.format], src.SkippedTotal())
	}
	return src, nil
}

// sheet is a CSV export read into memory, with the problems found in it.
type sheet struct {
	format   Format
	header   []string
	cols     map[string]int // lower-case column name → index
	records  [][]string     // records[i] is row i+2
	currency money.Currency
	now      time.Time
	problems []Problem
	more     int
}

// row is one record of a sheet.
type row struct {
	n      int // the row number (header = 1)
	cells  []string
	s      *sheet
	record string // names its product in problems
}

// readSheet parses data as CSV and tells which export it is by its header.
func readSheet(data []byte, opts ReadOptions) (*sheet, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	records, err := cr.ReadAll()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("not a valid CSV file at line %d, column %d: %v; export it again, or save it as CSV (UTF-8)", pe.Line, pe.Column, pe.Err)
		}
		return nil, fmt.Errorf("read the CSV file: %w", err)
	}
	s := &sheet{header: records[0], cols: map[string]int{}, records: records[1:], currency: opts.Currency, now: opts.Now()}
	for i, name := range s.header {
		s.cols[strings.ToLower(strings.TrimSpace(name))] = i
	}
	switch {
	case s.hasAll("handle", "title", "variant price"):
		s.format = FormatShopify
	case s.hasAll("type", "name", "regular price") && (s.has("id") || s.has("sku")):
		s.format = FormatWooCommerce
	default:
		return nil, errors.New("not a catalog file the shop reads: its header names neither Shopify's product CSV export " +
			"(Handle, Title, Variant Price, …) nor WooCommerce's (ID, Type, Name, Regular price, …); " +
			"send one of these exports as it was downloaded, or the shop's JSON catalog")
	}
	for i, rec := range records {
		for _, cell := range rec {
			if !utf8.ValidString(cell) {
				return nil, fmt.Errorf("row %d is not UTF-8 text; save the file as CSV (UTF-8) and send it again", i+1)
			}
		}
		if i > 0 && len(rec) != len(s.header) && !(len(rec) == 1 && rec[0] == "") {
			s.add(Problem{Row: i + 1, Text: fmt.Sprintf("%d cells, but the header has %d columns; export the file again", len(rec), len(s.header))})
		}
	}
	return s, nil
}

func (s *sheet) has(col string) bool { _, ok := s.cols[col]; return ok }

func (s *sheet) hasAll(cols ...string) bool {
	for _, c := range cols {
		if !s.has(c) {
			return false
		}
	}
	return true
}

// require reports each column of cols the header lacks (its name as the
// export writes it).
func (s *sheet) require(cols ...string) {
	for _, c := range cols {
		if s.has(strings.ToLower(c)) {
			continue
		}
		text := fmt.Sprintf("no such column; export the products again with every column (%s writes it)", formatName[s.format])
		if why, ok := missingColumn[c]; ok {
			text = why
		}
		s.add(Problem{Row: 1, Column: c, Text: text})
	}
}

// missingColumn says what to do about a column an export may lack.
var missingColumn = map[string]string{
	"Variant Inventory Qty": "no such column; Shopify writes it only for stores with one location: add it with each variant's units on hand " +
		"(from Shopify's inventory export), as the shop counts stock",
}

func (s *sheet) add(p Problem) {
	if len(s.problems) < MaxProblems {
		s.problems = append(s.problems, p)
	} else {
		s.more++
	}
}

// rows returns the sheet's records as rows, leaving out empty ones.
func (s *sheet) rows() []row {
	out := make([]row, 0, len(s.records))
	for i, rec := range s.records {
		if len(rec) == 1 && rec[0] == "" {
			continue
		}
		out = append(out, row{n: i + 2, cells: rec, s: s})
	}
	return out
}

// get returns the cell of column col (lower case), trimmed; "" when the
// column or the cell is missing.
func (r row) get(col string) string {
	i, ok := r.s.cols[col]
	if !ok || i >= len(r.cells) {
		return ""
	}
	return strings.TrimSpace(r.cells[i])
}

// name is the column col as the header writes it.
func (r row) name(col string) string {
	if i, ok := r.s.cols[col]; ok {
		return strings.TrimSpace(r.s.header[i])
	}
	return col
}

// bad reports a problem with the cell of column col ("" for the row).
func (r row) bad(col, format string, args ...any) {
	name := ""
	if col != "" {
		name = r.name(col)
	}
	r.s.add(Problem{Row: r.n, Record: r.record, Column: name, Text: fmt.Sprintf(format, args...)})
}

// examplePrice is a price of the sheet's currency as the export writes it.
func (s *sheet) examplePrice() string {
	amount := int64(1250)
	for range s.currency.Exponent() - 2 {
		amount *= 10
	}
	return s.currency.Decimal(amount)
}

// price reads the price in column col: ok is false when the cell is empty
// (missing reports that, when set) or bad (reported).
func (r row) price(col string, missing bool) (int64, bool) {
	v := r.get(col)
	if v == "" {
		if missing {
			r.bad(col, "missing; send the price, such as %s", r.s.examplePrice())
		}
		return 0, false
	}
	amount, err := r.s.currency.ParseDecimal(v)
	switch {
	case errors.Is(err, money.ErrFractionDigits):
		_, frac, _ := strings.Cut(v, ".")
		r.bad(col, "%q has %s, but %s has %s; send a price such as %s",
			v, decimals(len(strings.TrimRight(frac, "0"))), strings.ToUpper(r.s.currency.Code()), decimals(r.s.currency.Exponent()), r.s.examplePrice())
	case err != nil:
		r.bad(col, "%q is not a price; send a number such as %s", v, r.s.examplePrice())
	case amount > MaxPrice:
		r.bad(col, "%q is more than the shop takes (at most %s); send a smaller price", v, r.s.currency.Decimal(MaxPrice))
	default:
		return amount, true
	}
	return 0, false
}

// decimals counts decimal places in words: "no decimals", "1 decimal", "3 decimals".
func decimals(n int) string {
	switch n {
	case 0:
		return "no decimals"
	case 1:
		return "1 decimal"
	}
	return strconv.Itoa(n) + " decimals"
}

// stock reads the units on hand in column col; a negative number (an
// oversold variant) is 0. ok is false when the cell is empty (not
// reported) or bad (reported).
func (r row) stock(col string) (int64, bool) {
	v := r.get(col)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) || n > MaxStock:
		r.bad(col, "%q is more than the shop counts (at most %d); send the units on hand", v, MaxStock)
	case err != nil:
		r.bad(col, "%q is not a whole number; send the units on hand, such as 12", v)
	default:
		return max(0, n), true
	}
	return 0, false
}

// text reads the cell of column col as a text of at most limit characters;
// missing, when set, reports an empty one (with what to send).
func (r row) text(col string, limit int, missing string) string {
	v := r.get(col)
	r.checkText(col, v, limit, missing)
	return v
}

// checkText reports v, read from column col, when longer than limit or
// empty with missing set.
func (r row) checkText(col, v string, limit int, missing string) {
	switch n := utf8.RuneCountInString(v); {
	case v == "" && missing != "":
		r.bad(col, "missing; send %s", missing)
	case n > limit:
		r.bad(col, "%d characters; the shop keeps at most %d, so shorten it", n, limit)
	}
}

// image reads an image URL, which must be https.
func (r row) image(col, ref string) (string, bool) {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "https" || u.Host == "" || len(ref) > 500 || strings.ContainsAny(ref, " \"'<>\\") {
		r.bad(col, "%q is not an https URL the shop can show; send the image's https:// address (at most 500 characters)", ref)
		return "", false
	}
	return ref, true
}

// makeID turns a name (a handle, a SKU, option values) into an id of the
// shop (ValidID): lower-case ASCII letters and digits, words joined by "-",
// accents dropped. A name with nothing left, or too long, gets a digest of
// itself, so the same name always makes the same id.
func makeID(name string) string {
	var b strings.Builder
	dash := false
	folded := strings.ToLower(name)
	if !isASCII(folded) {
		folded = norm.NFKD.String(folded)
	}
	for _, r := range folded {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		case unicode.Is(unicode.Mn, r): // a combining accent
		default:
			dash = true
		}
	}
	id := strings.TrimLeft(b.String(), "_")
	if id != "" && len(id) <= MaxIDLen {
		return id
	}
	sum := sha256.Sum256([]byte(name))
	digest := hex.EncodeToString(sum[:5])
	if id == "" {
		return "p-" + digest
	}
	return strings.TrimRight(id[:MaxIDLen-len(digest)-1], "-_") + "-" + digest
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lastSegment is the last step of a category path ("Home > Kitchen > Mugs").
func lastSegment(path string) string {
	if i := strings.LastIndex(path, ">"); i >= 0 {
		path = path[i+1:]
	}
	return strings.TrimSpace(path)
}

// variantKey collects the variants' ids of a file, to report a second use.
type variantKey map[string]int // id → row

// claim records id as made by row r from column col, reporting a clash.
func (k variantKey) claim(r row, col, id string) bool {
	if first, dup := k[id]; dup {
		r.bad(col, "makes the variant id %q, as row %d does; give each variant its own option values", id, first)
		return false
	}
	k[id] = r.n
	return true
}
