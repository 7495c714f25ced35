package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// File is a catalog in the import format (testdata/demo/catalog.json).
type File struct {
	// Currency is the currency of every price in the file; it must be the shop's.
	Currency string          `json:"currency"`
	Products []ProductRecord `json:"products"`
}

// ProductRecord is a product in the import format.
type ProductRecord struct {
	ID          string          `json:"id"`
	Title       string          `json:"title"`
	Category    string          `json:"category"`
	Description string          `json:"description"`
	Images      []string        `json:"images"`
	Variants    []VariantRecord `json:"variants"`
}

// VariantRecord is a variant in the import format: Price in minor units of
// the file's currency, Stock the units on hand.
type VariantRecord struct {
	ID      string            `json:"id"`
	Title   string            `json:"title"`
	Options map[string]string `json:"options"`
	Price   *int64            `json:"price"`
	Stock   *int64            `json:"stock"`
	Image   string            `json:"image,omitempty"`
}

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
)

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// ValidID reports whether s has the shape of a product or variant id.
func ValidID(s string) bool { return len(s) <= MaxIDLen && idPattern.MatchString(s) }

// ReadFile decodes a catalog file. Unknown fields are errors, to catch typos.
func ReadFile(r io.Reader) (*File, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("%s: expected %s, got a JSON %s (at byte %d)", typeErr.Field, typeErr.Type, typeErr.Value, typeErr.Offset)
		}
		return nil, fmt.Errorf("not a catalog file: %w", err)
	}
	return &f, nil
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
		at := fmt.Sprintf("products[%d]", i)
		if p.ID != "" {
			at += fmt.Sprintf(" (id %q)", p.ID)
		}
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
		for k, v := range p.Variants {
			vat := fmt.Sprintf("%s.variants[%d]", at, k)
			switch {
			case v.ID == "":
				report("%s.id: missing", vat)
			case !ValidID(v.ID):
				report("%s.id: use 1 to %d characters a-z, 0-9, - and _", vat, MaxIDLen)
			default:
				if owner, dup := variants[v.ID]; dup {
					report("%s.id: %q is already a variant of product %q", vat, v.ID, owner)
				}
				variants[v.ID] = p.ID
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
	}
	return errors.Join(errs...)
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

// ImportOptions tune Import; nil means defaults.
type ImportOptions struct {
	// Progress, when set, is called after every batch with the products
	// written so far and the total.
	Progress func(done, total int)
}

// Import validates a catalog file and writes it in one transaction: a product
// already in the catalog (by id) is replaced with its variants, others are
// added after the existing ones. Nothing is written when anything is invalid.
func (c *Catalog) Import(ctx context.Context, f *File, opts *ImportOptions) error {
	if err := f.Validate(c.currency.Code()); err != nil {
		return err
	}
	if opts == nil {
		opts = &ImportOptions{}
	}
	now := c.now().UTC()
	err := c.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var next int64
		if err := tx.Model(&productRow{}).Select("COALESCE(MAX(seq), 0)").Scan(&next).Error; err != nil {
			return fmt.Errorf("import: read sequence: %w", err)
		}
		for start := 0; start < len(f.Products); start += importBatch {
			batch := f.Products[start:min(start+importBatch, len(f.Products))]
			if err := writeBatch(tx, batch, &next, now); err != nil {
				return fmt.Errorf("import: products[%d…%d]: %w", start, start+len(batch)-1, err)
			}
			if opts.Progress != nil {
				opts.Progress(start+len(batch), len(f.Products))
			}
		}
		return nil
	})
	if err != nil || len(f.Products) < analyzeAfter {
		return err
	}
	// A large import changes the tables' statistics enough to change query
	// plans: refresh them now rather than when the database gets round to it.
	for _, table := range []string{"products", "variants", "product_terms"} {
		if err := c.db.WithContext(ctx).Exec("ANALYZE " + table).Error; err != nil {
			return fmt.Errorf("import: analyze %s: %w", table, err)
		}
	}
	return nil
}

func writeBatch(tx *gorm.DB, batch []ProductRecord, next *int64, now time.Time) error {
	ids := make([]string, len(batch))
	for i, p := range batch {
		ids[i] = p.ID
	}
	var existing []productRow
	if err := tx.Select("id", "seq", "created_at").Where("id IN ?", ids).Find(&existing).Error; err != nil {
		return err
	}
	known := make(map[string]productRow, len(existing))
	for _, p := range existing {
		known[p.ID] = p
	}
	if err := tx.Where("product_id IN ?", ids).Delete(&termRow{}).Error; err != nil {
		return err
	}
	if err := tx.Where("product_id IN ?", ids).Delete(&variantRow{}).Error; err != nil {
		return err
	}
	products := make([]productRow, 0, len(batch))
	var variants []variantRow
	var terms []termRow
	for _, p := range batch {
		row := productRow{
			ID: p.ID, Title: p.Title, Description: p.Description,
			Category: p.Category, CategoryKey: categoryKey(p.Category),
			Images: mustJSON(nonNil(p.Images)), CreatedAt: now, UpdatedAt: now,
		}
		if old, ok := known[p.ID]; ok {
			row.Seq, row.CreatedAt = old.Seq, old.CreatedAt
		} else {
			*next++
			row.Seq = *next
		}
		products = append(products, row)
		options := make([]map[string]string, len(p.Variants))
		for i, v := range p.Variants {
			options[i] = v.Options
			variants = append(variants, variantRow{
				ID: v.ID, ProductID: p.ID, Position: i, Title: v.Title,
				Options: mustJSON(nonNilMap(v.Options)), Price: *v.Price, Stock: *v.Stock,
				Image: v.Image, CreatedAt: now, UpdatedAt: now,
			})
		}
		for term, w := range indexTerms(p.Title, p.Category, p.Description, options) {
			terms = append(terms, termRow{Term: term, ProductID: p.ID, ProductSeq: row.Seq, Weight: w})
		}
	}
	err := tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"title", "description", "category", "category_key", "images", "updated_at"}),
	}).CreateInBatches(products, 1000).Error
	if err != nil {
		return err
	}
	if err := tx.CreateInBatches(variants, 1000).Error; err != nil {
		return err
	}
	return tx.CreateInBatches(terms, 5000).Error
}

// SeedIfEmpty imports the catalog file at path in fsys when the catalog holds
// no products. It reports whether it did.
func (c *Catalog) SeedIfEmpty(ctx context.Context, fsys fs.FS, path string) (bool, error) {
	var found []string
	if err := c.db.WithContext(ctx).Model(&productRow{}).Limit(1).Pluck("id", &found).Error; err != nil {
		return false, fmt.Errorf("seed: look for products: %w", err)
	}
	if len(found) > 0 {
		return false, nil
	}
	r, err := fsys.Open(path)
	if err != nil {
		return false, fmt.Errorf("seed: %w", err)
	}
	defer r.Close()
	f, err := ReadFile(r)
	if err != nil {
		return false, fmt.Errorf("seed: %s: %w", path, err)
	}
	if err := c.Import(ctx, f, nil); err != nil {
		return false, fmt.Errorf("seed: %s: %w", path, err)
	}
	return true, nil
}

func categoryKey(category string) string { return strings.ToLower(strings.TrimSpace(category)) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings, slices and maps of strings reach here
	}
	return string(b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
