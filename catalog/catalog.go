// Package catalog keeps the merchant's products, their variants with price and
// stock on hand, and the search over them; it offers the buyer tools
// search_products and get_product.
//
// Search is ranked full-text over titles, descriptions, categories and
// options. The index is the product_terms table, written by the import in the
// same transaction as the products and queried with portable SQL, so SQLite
// and PostgreSQL give the same results in the same order (their built-in
// full-text engines tokenize and rank differently).
package catalog

import (
	"strings"
	"time"

	"gorm.io/gorm"

	"shop/money"
)

// Catalog is the merchant's catalog in the shop's database.
type Catalog struct {
	db        *gorm.DB
	currency  money.Currency
	publicURL string
	now       func() time.Time
	stmts     *statements
	known     knownTerms // the resolutions of search terms (knownterms.go)
}

// Options configure a Catalog; nil means defaults.
type Options struct {
	// PublicURL is the shop's base URL ("https://shop.example.com"); images
	// stored as paths ("/static/…") are served from it. Default
	// http://127.0.0.1:8000.
	PublicURL string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// DefaultPublicURL is where `shop serve` listens unless told otherwise.
const DefaultPublicURL = "http://127.0.0.1:8000"

// New returns the catalog stored in db, priced in currency.
func New(db *gorm.DB, currency money.Currency, opts *Options) *Catalog {
	c := &Catalog{db: db, currency: currency, publicURL: DefaultPublicURL, now: time.Now, stmts: newStatements(db)}
	if opts != nil {
		if opts.PublicURL != "" {
			c.publicURL = strings.TrimRight(opts.PublicURL, "/")
		}
		if opts.Now != nil {
			c.now = opts.Now
		}
	}
	return c
}

// Currency is the currency the catalog's prices are in.
func (c *Catalog) Currency() money.Currency { return c.currency }

// imageURL makes an image reference absolute: paths are served by the shop.
func (c *Catalog) imageURL(ref string) string {
	if strings.HasPrefix(ref, "/") {
		return c.publicURL + ref
	}
	return ref
}
