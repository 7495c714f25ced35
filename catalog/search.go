package catalog

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"shop"
)

// Bounds of a search.
const (
	MaxQueryLen    = 200
	MaxQueryTerms  = 8
	DefaultLimit   = 10
	MaxLimit       = 50
	maxCursorLen   = 200
	cursorVersion  = 1
	minPrefixMatch = 3 // shorter query terms match whole terms only
)

// Query is a search of the catalog; the zero Query lists every product.
type Query struct {
	Text        string
	Category    string
	MinPrice    *int64
	MaxPrice    *int64
	InStockOnly bool
	Limit       int
	Cursor      string
}

// Page is a page of search results.
type Page struct {
	Products   []ProductSummary `json:"products"`
	NextCursor string           `json:"next_cursor,omitempty"`
	Total      int64            `json:"total"`
}

// cursor is where a page ends: the score and sequence of its last product,
// and a fingerprint of the query it belongs to.
type cursor struct {
	V     int    `json:"v"`
	Score int64  `json:"s"`
	Seq   int64  `json:"q"`
	Query uint64 `json:"h"`
}

// Search runs a ranked search. Products match when they hold every word of
// the text (a word of three letters or more also matches as the start of a
// longer one: "lea" finds "leather"), are in the category, and have a variant within the price bounds
// (and in stock, when asked). They come best first: exact words over
// prefixes, title over category over options over description; ties in
// catalog order.
//
// Errors: invalid ($.query, $.category, $.min_price, $.max_price, $.limit,
// $.cursor).
func (c *Catalog) Search(ctx context.Context, q Query) (*Page, error) {
	terms, err := c.checkQuery(&q)
	if err != nil {
		return nil, err
	}
	page, stale, err := c.search(ctx, q, terms, true)
	if err == nil && stale {
		page, _, err = c.search(ctx, q, terms, false)
	}
	return page, err
}

// search answers q, whose terms checkQuery read, on the terms' kept
// resolutions when useKnown and all are kept (knownterms.go); stale is true
// when the page read on them cannot be trusted to be the catalog's, and the
// search must run again without them.
func (c *Catalog) search(ctx context.Context, q Query, terms []string, useKnown bool) (page *Page, stale bool, err error) {
	// The fingerprint is taken only for a cursor, read or written.
	var fingerprint uint64
	var after *cursor
	if q.Cursor != "" {
		fingerprint = q.fingerprint(terms)
		after, err = decodeCursor(q.Cursor, fingerprint)
		if err != nil {
			return nil, false, err
		}
	}
	now := c.now().UTC()
	var stmt *sqlText
	known := noVersion // the version of the kept resolutions used
	if len(terms) == 0 {
		stmt = c.browseSQL(q, after, now)
	} else {
		matches, found, err := c.resolveKnown(ctx, terms, q.filtered(), useKnown, &known)
		if err != nil {
			return nil, false, err
		}
		if !found {
			page, err := c.empty(ctx, q)
			return page, false, err
		}
		if len(matches) == 1 && !matches[0].ranged {
			stmt = c.termPageSQL(q, matches[0], after, now)
		} else if !q.filtered() {
			all, found, usable, err := c.intersectPostings(ctx, matches)
			if err != nil {
				return nil, false, err
			}
			if usable && !found {
				if stale, err := c.staleKnown(ctx, known, noVersion); stale || err != nil {
					return nil, stale, err
				}
				page, err := c.empty(ctx, q)
				return page, false, err
			}
			if usable {
				stmt = c.postingsPageSQL(q, rankPostings(all, after, q.Limit), len(all), now)
			} else if len(terms) > 1 {
				// Too many terms for the postings: the intersection runs in
				// SQL, which starts from the rarest match.
				if matches, _, _, err = c.resolve(ctx, terms, true); err != nil {
					return nil, false, err
				}
			}
		}
		if stmt == nil {
			stmt = c.rankPageSQL(q, matches, after, now)
		}
	}
	page, last, version, err := c.readPage(ctx, stmt, q.Limit)
	if err != nil {
		return nil, false, err
	}
	if stale, err := c.staleKnown(ctx, known, version); stale || err != nil {
		return nil, stale, err
	}
	switch {
	case len(page.Products) == 0 && after == nil:
		page, err = c.empty(ctx, q)
		return page, false, err
	case len(page.Products) == 0:
		// Past the last row: count the query's matches afresh.
		if page.Total, err = c.count(ctx, q); err != nil {
			return nil, false, err
		}
	case page.NextCursor != "":
		if after == nil {
			fingerprint = q.fingerprint(terms)
		}
		page.NextCursor = encodeCursor(cursor{V: cursorVersion, Score: last.Score, Seq: last.Seq, Query: fingerprint})
	}
	return page, false, nil
}

// staleKnown reports whether a page read on the kept resolutions of
// version known (noVersion: none) is stale: read at another version
// (read), or, when it has no row to tell (read is noVersion), at a
// version other than the catalog's now. Versions only rise: a page read
// between the resolutions and a reading of the same version was read at
// it. Stale resolutions are forgotten.
func (c *Catalog) staleKnown(ctx context.Context, known, read int64) (bool, error) {
	if known == noVersion {
		return false, nil
	}
	if read == noVersion {
		if err := c.queryRow(ctx, "SELECT "+versionSQL, nil, &read); err != nil {
			return false, fmt.Errorf("search: catalog version: %w", err)
		}
	}
	if read != known {
		c.known.forget(known)
		return true, nil
	}
	return false, nil
}

// noVersion stands for no catalog version read.
const noVersion int64 = -1

// resolveKnown is resolve, answered from the kept resolutions when useKnown
// and they hold every term (then *known is the version they were read at),
// and keeping what resolve reads. Counted resolutions are neither.
func (c *Catalog) resolveKnown(ctx context.Context, terms []string, counted, useKnown bool, known *int64) ([]termMatch, bool, error) {
	counted = counted && len(terms) > 1
	if useKnown && !counted {
		if matches, version, ok := c.known.lookup(terms); ok {
			*known = version
			return matches, true, nil
		}
	}
	matches, found, version, err := c.resolve(ctx, terms, counted)
	if err == nil && found && !counted && version != noVersion {
		c.known.keep(terms, matches, version)
	}
	return matches, found, err
}

// rankKey is where a row stands in a search's order.
type rankKey struct{ Score, Seq int64 }

// readPage runs a page's statement (pageSQL) and reads up to limit
// products; when there are more, the page's NextCursor is set to a
// placeholder and last is the key of its last product. version is the
// catalog's version the page was read at, noVersion when it has no row.
func (c *Catalog) readPage(ctx context.Context, stmt *sqlText, limit int) (_ *Page, _ rankKey, version int64, _ error) {
	version = noVersion
	rows, err := c.stmts.query(ctx, stmt.String(), stmt.args)
	if err != nil {
		return nil, rankKey{}, version, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	page := &Page{Products: make([]ProductSummary, 0, limit)}
	var last rankKey
	for rows.Next() {
		if len(page.Products) == limit {
			page.NextCursor = "more"
			break
		}
		var key rankKey
		var s ProductSummary
		var images string
		var price, inStock int64
		if err := rows.Scan(&key.Seq, &key.Score, &page.Total, &s.ID, &s.Title, &s.Category, &images, &s.VariantCount, &price, &inStock, &version); err != nil {
			return nil, rankKey{}, version, fmt.Errorf("search: %w", err)
		}
		s.Price, s.InStock = c.currency.Price(price), inStock != 0
		s.ImageURL = c.firstImage(images)
		page.Products = append(page.Products, s)
		last = key
	}
	if err := rows.Err(); err != nil {
		return nil, rankKey{}, version, fmt.Errorf("search: %w", err)
	}
	return page, last, version, nil
}

// empty is the page of a query that matches nothing, or the error of its
// category when the catalog has none by that name.
func (c *Catalog) empty(ctx context.Context, q Query) (*Page, error) {
	if q.Category != "" {
		var one int64
		err := c.queryRow(ctx, "SELECT 1 FROM products WHERE category_key = ? LIMIT 1", []any{categoryKey(q.Category)}, &one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("search: check category: %w", err)
		}
		if err != nil {
			cats, err := c.Categories(ctx)
			if err != nil {
				return nil, err
			}
			return nil, shop.Errorf(shop.Invalid, "$.category", "no category %q; send one of: %s", q.Category, strings.Join(cats, ", "))
		}
	}
	return &Page{Products: []ProductSummary{}}, nil
}

// checkQuery validates q, fills in defaults and returns the query's terms.
func (c *Catalog) checkQuery(q *Query) ([]string, error) {
	if n := utf8.RuneCountInString(q.Text); n > MaxQueryLen {
		return nil, shop.Errorf(shop.Invalid, "$.query", "the query is %d characters; send at most %d (a few words such as \"blue mug\")", n, MaxQueryLen)
	}
	terms := tokenize(q.Text)
	if len(terms) > MaxQueryTerms {
		return nil, shop.Errorf(shop.Invalid, "$.query", "the query has %d words; send at most %d", len(terms), MaxQueryTerms)
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 1 || q.Limit > MaxLimit:
		return nil, shop.Errorf(shop.Invalid, "$.limit", "must be from 1 to %d (got %d)", MaxLimit, q.Limit)
	}
	if q.MinPrice != nil && (*q.MinPrice < 0 || *q.MinPrice > MaxPrice) {
		return nil, shop.Errorf(shop.Invalid, "$.min_price", "must be from 0 to %d minor units (%s: 1250 is %s)", int64(MaxPrice), c.currency.Code(), c.currency.Format(1250))
	}
	if q.MaxPrice != nil && (*q.MaxPrice < 0 || *q.MaxPrice > MaxPrice) {
		return nil, shop.Errorf(shop.Invalid, "$.max_price", "must be from 0 to %d minor units (%s: 1250 is %s)", int64(MaxPrice), c.currency.Code(), c.currency.Format(1250))
	}
	if q.MinPrice != nil && q.MaxPrice != nil && *q.MinPrice > *q.MaxPrice {
		return nil, shop.Errorf(shop.Invalid, "$.max_price", "is below min_price; send max_price ≥ min_price")
	}
	if len(q.Cursor) > maxCursorLen {
		return nil, shop.Errorf(shop.Invalid, "$.cursor", "not a cursor from this shop; send the next_cursor of the previous page, or none for the first page")
	}
	if q.Category != "" && utf8.RuneCountInString(q.Category) > MaxCategoryLen {
		return nil, shop.Errorf(shop.Invalid, "$.category", "at most %d characters", MaxCategoryLen)
	}
	return terms, nil
}

// fingerprint identifies what a query asks, so that a cursor is used only
// with the query that issued it.
func (q Query) fingerprint(terms []string) uint64 {
	h := sha256.New()
	fmt.Fprintf(h, "%q|%q|%v|%v|%t|%d", terms, categoryKey(q.Category), deref(q.MinPrice), deref(q.MaxPrice), q.InStockOnly, q.Limit)
	return binary.BigEndian.Uint64(h.Sum(nil))
}

func deref(p *int64) any {
	if p == nil {
		return "-"
	}
	return *p
}

func encodeCursor(c cursor) string { return shop.EncodeCursor(c) }

func decodeCursor(s string, fingerprint uint64) (*cursor, error) {
	var c cursor
	if !shop.DecodeCursor(s, &c) || c.V != cursorVersion {
		return nil, shop.Errorf(shop.Invalid, "$.cursor", "not a cursor from this shop; send the next_cursor of the previous page, or none for the first page")
	}
	if c.Query != fingerprint {
		return nil, shop.Errorf(shop.Invalid, "$.cursor", "this cursor belongs to a different search; send the same query, filters and limit as the page that gave it, or omit the cursor")
	}
	return &c, nil
}

// queryRow runs a statement that answers one row into dest.
func (c *Catalog) queryRow(ctx context.Context, text string, args []any, dest ...any) error {
	rows, err := c.stmts.query(ctx, text, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

// count counts the products a query matches.
func (c *Catalog) count(ctx context.Context, q Query) (int64, error) {
	q.Cursor, q.Limit = "", 1
	p, err := c.Search(ctx, q)
	if err != nil {
		return 0, err
	}
	return p.Total, nil
}
