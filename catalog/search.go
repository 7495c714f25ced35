package catalog

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"
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
	terms, err := c.checkQuery(ctx, &q)
	if err != nil {
		return nil, err
	}
	fingerprint := q.fingerprint(terms)
	var after *cursor
	if q.Cursor != "" {
		after, err = decodeCursor(q.Cursor, fingerprint)
		if err != nil {
			return nil, err
		}
	}

	filter, filterArgs := c.filterSQL(q)
	if len(terms) == 0 {
		return c.browse(ctx, q, after, fingerprint, filter, filterArgs)
	}
	matches, found, err := c.resolve(ctx, terms)
	if err != nil {
		return nil, err
	}
	if !found {
		return &Page{Products: []ProductSummary{}}, nil
	}
	var m strings.Builder
	mArgs := matchesSQL(&m, matches)
	// Without filters a single term's matches are counted apart (an index
	// range count, cheaper than numbering every row).
	separateCount := filter == "" && len(matches) == 1
	query, args := rankSQL(m.String(), mArgs, filter, filterArgs, separateCount, after, q.Limit)
	var hits []hit
	if err := c.db.WithContext(ctx).Raw(query, args...).Scan(&hits).Error; err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	page := &Page{Products: []ProductSummary{}}
	switch {
	case after == nil && len(hits) <= q.Limit:
		page.Total = int64(len(hits)) // the first page holds them all
	case separateCount:
		if err := c.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM ("+m.String()+") m", mArgs...).Scan(&page.Total).Error; err != nil {
			return nil, fmt.Errorf("search: count: %w", err)
		}
	case len(hits) > 0:
		page.Total = hits[0].Total
	case after != nil:
		// Past the last row: count the query's matches afresh.
		if page.Total, err = c.count(ctx, q); err != nil {
			return nil, err
		}
	}
	return c.fill(ctx, page, hits, q, fingerprint)
}

// filterSQL is the query's filters on products p, as conditions that
// follow a WHERE ("" for none), with their arguments.
func (c *Catalog) filterSQL(q Query) (string, []any) {
	var filter strings.Builder
	var args []any
	if q.Category != "" {
		filter.WriteString(" AND p.category_key = ?")
		args = append(args, categoryKey(q.Category))
	}
	if cond, cargs := q.variantFilter("v", c.now().UTC()); cond != "" {
		filter.WriteString(" AND EXISTS (SELECT 1 FROM variants v WHERE v.product_id = p.id AND v.removed = ?" + cond + ")")
		args = append(append(args, false), cargs...)
	}
	return filter.String(), args
}

// rankSQL is the query that ranks the matches (the SQL of matchesSQL, with
// its arguments) under filter and returns the page after the cursor after,
// limit rows and one more, as hits.
//
// Without filters the products table stays out of the ranking, joined for
// the page's few rows only; with separateCount the total is left to a
// count of its own. With filters, or several terms, COUNT(*) OVER ()
// counts in the same pass that ranks: it runs before the cursor cuts rows,
// so it is the query's total.
func rankSQL(matches string, matchArgs []any, filter string, filterArgs []any, separateCount bool, after *cursor, limit int) (string, []any) {
	var sb strings.Builder
	args := slices.Clone(matchArgs)
	if filter == "" {
		sb.WriteString("SELECT r.seq, p.id, r.score, r.total FROM (SELECT * FROM (SELECT m.product_seq AS seq, m.score, ")
		if separateCount {
			sb.WriteString("0")
		} else {
			sb.WriteString("COUNT(*) OVER ()")
		}
		sb.WriteString(" AS total FROM (" + matches + ") m) ranked")
	} else {
		sb.WriteString("SELECT * FROM (SELECT m.product_seq AS seq, p.id, m.score, COUNT(*) OVER () AS total FROM (" + matches +
			") m JOIN products p ON p.seq = m.product_seq WHERE 1 = 1" + filter + ") ranked")
		args = append(args, filterArgs...)
	}
	if after != nil {
		sb.WriteString(" WHERE score < ? OR (score = ? AND seq > ?)")
		args = append(args, after.Score, after.Score, after.Seq)
	}
	sb.WriteString(" ORDER BY score DESC, seq ASC LIMIT ?")
	args = append(args, limit+1)
	if filter == "" {
		// The page's ids, by seq, for its few rows only.
		sb.WriteString(") r JOIN products p ON p.seq = r.seq ORDER BY r.score DESC, r.seq ASC")
	}
	return sb.String(), args
}

// hit is a row of a search: a product, its score and the query's total.
type hit struct {
	Seq   int64
	ID    string
	Score int64
	Total int64
}

// browse lists the products that pass the filters (written on products p),
// in catalog order, read off the seq index; the total is a separate count,
// cheaper than numbering every row.
func (c *Catalog) browse(ctx context.Context, q Query, after *cursor, fingerprint uint64, filter string, filterArgs []any) (*Page, error) {
	var sb strings.Builder
	var args []any
	sb.WriteString("SELECT p.seq, p.id, 0 AS score, 0 AS total FROM products p WHERE 1 = 1")
	sb.WriteString(filter)
	args = append(args, filterArgs...)
	if after != nil {
		sb.WriteString(" AND p.seq > ?")
		args = append(args, after.Seq)
	}
	sb.WriteString(" ORDER BY p.seq LIMIT ?")
	args = append(args, q.Limit+1)
	var hits []hit
	if err := c.db.WithContext(ctx).Raw(sb.String(), args...).Scan(&hits).Error; err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	page := &Page{Products: []ProductSummary{}}
	if after == nil && len(hits) <= q.Limit {
		page.Total = int64(len(hits))
	} else if err := c.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM products p WHERE 1 = 1"+filter, filterArgs...).Scan(&page.Total).Error; err != nil {
		return nil, fmt.Errorf("search: count: %w", err)
	}
	return c.fill(ctx, page, hits, q, fingerprint)
}

// fill completes page with its hits (up to q.Limit+1 of them): their
// summaries and, when there are more, the cursor of the next page.
func (c *Catalog) fill(ctx context.Context, page *Page, hits []hit, q Query, fingerprint uint64) (*Page, error) {
	if len(hits) == 0 {
		return page, nil
	}
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
		last := hits[len(hits)-1]
		page.NextCursor = encodeCursor(cursor{V: cursorVersion, Score: last.Score, Seq: last.Seq, Query: fingerprint})
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	var err error
	if page.Products, err = c.summaries(ctx, ids, q); err != nil {
		return nil, err
	}
	return page, nil
}

// termMatch is how a query term finds products in product_terms.
type termMatch struct {
	// term is the indexed term to match by equality, with factor 2 when it
	// is the query's word itself and 1 when it is a longer word the query's
	// word begins; or, when ranged, the prefix of the range to match.
	term   string
	factor int
	ranged bool
}

// resolve turns the query's terms into matches. A term of three letters or
// more matches every indexed term it begins; when that range holds a single
// indexed term (found with two index seeks, MIN and MAX), the term is matched
// by equality, which needs no grouping per product. found is false when a
// range is empty: then nothing matches the query.
func (c *Catalog) resolve(ctx context.Context, terms []string) (matches []termMatch, found bool, err error) {
	matches = make([]termMatch, len(terms))
	var sb strings.Builder
	var args []any
	var prefixes []int
	for i, t := range terms {
		if len(t) < minPrefixMatch {
			matches[i] = termMatch{term: t, factor: 2}
			continue
		}
		cond, cargs := prefixRange(t)
		if len(prefixes) > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(SELECT MIN(term) FROM product_terms WHERE " + cond + "), (SELECT MAX(term) FROM product_terms WHERE " + cond + ")")
		args = append(args, cargs...)
		args = append(args, cargs...)
		prefixes = append(prefixes, i)
	}
	if len(prefixes) == 0 {
		return matches, true, nil
	}
	bounds := make([]sql.NullString, 2*len(prefixes))
	dest := make([]any, len(bounds))
	for i := range bounds {
		dest[i] = &bounds[i]
	}
	if err := c.db.WithContext(ctx).Raw("SELECT "+sb.String(), args...).Row().Scan(dest...); err != nil {
		return nil, false, fmt.Errorf("search: terms: %w", err)
	}
	for k, i := range prefixes {
		lo, hi := bounds[2*k], bounds[2*k+1]
		switch {
		case !lo.Valid:
			return nil, false, nil
		case lo.String != hi.String:
			matches[i] = termMatch{term: terms[i], ranged: true}
		case lo.String == terms[i]:
			matches[i] = termMatch{term: lo.String, factor: 2}
		default:
			matches[i] = termMatch{term: lo.String, factor: 1}
		}
	}
	return matches, true, nil
}

// prefixRange returns the condition on product_terms.term that selects the
// terms starting with t, with its arguments.
func prefixRange(t string) (string, []any) {
	if end := prefixEnd(t); end != "" {
		return "term >= ? AND term < ?", []any{t, end}
	}
	return "term >= ?", []any{t}
}

// matchesSQL writes the query of the products matching every term, one row
// per product: its seq (product_seq) and score, the sum over the terms of
// the weight of the best indexed term each matches, doubled for an exact
// match.
func matchesSQL(sb *strings.Builder, matches []termMatch) []any {
	if len(matches) == 1 {
		return termSQL(sb, matches[0])
	}
	var args []any
	sb.WriteString("SELECT product_seq, SUM(score) AS score FROM (")
	for i, m := range matches {
		if i > 0 {
			sb.WriteString(" UNION ALL ")
		}
		args = append(args, termSQL(sb, m)...)
	}
	sb.WriteString(") per_term GROUP BY product_seq HAVING COUNT(*) = ?")
	return append(args, len(matches))
}

// termSQL writes the query that scores the products holding a term, one row
// per product: an exact match counts double a longer word it begins.
func termSQL(sb *strings.Builder, m termMatch) []any {
	if !m.ranged {
		fmt.Fprintf(sb, "SELECT product_seq, weight * %d AS score FROM product_terms WHERE term = ?", m.factor)
		return []any{m.term}
	}
	cond, args := prefixRange(m.term)
	sb.WriteString("SELECT product_seq, MAX(CASE WHEN term = ? THEN weight * 2 ELSE weight END) AS score FROM product_terms WHERE " + cond + " GROUP BY product_seq")
	return append([]any{m.term}, args...)
}

// variantFilter returns the conditions on a variant (aliased alias) that the
// price bounds and in_stock_only ask for, with their arguments; stock held
// by checkout sessions live at now is not in stock.
func (q Query) variantFilter(alias string, now time.Time) (string, []any) {
	var sb strings.Builder
	var args []any
	if q.MinPrice != nil {
		sb.WriteString(" AND " + alias + ".price >= ?")
		args = append(args, *q.MinPrice)
	}
	if q.MaxPrice != nil {
		sb.WriteString(" AND " + alias + ".price <= ?")
		args = append(args, *q.MaxPrice)
	}
	if q.InStockOnly {
		// Most variants have no live hold: the list of those that do is
		// read once (NOT IN an uncorrelated subquery), and only the others
		// sum their holds.
		sb.WriteString(" AND " + alias + ".stock > 0 AND (" + alias + ".id NOT IN (SELECT h.variant_id FROM stock_holds h WHERE h.expires_at > ?) OR " +
			alias + ".stock > COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.variant_id = " + alias + ".id AND h.expires_at > ?), 0))")
		args = append(args, now, now)
	}
	return sb.String(), args
}

// admits reports whether a variant with available units passes the price
// bounds and in_stock_only.
func (q Query) admits(v variantRow, available int64) bool {
	return (q.MinPrice == nil || v.Price >= *q.MinPrice) &&
		(q.MaxPrice == nil || v.Price <= *q.MaxPrice) &&
		(!q.InStockOnly || available > 0)
}

// checkQuery validates q, fills in defaults and returns the query's terms.
func (c *Catalog) checkQuery(ctx context.Context, q *Query) ([]string, error) {
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
	if q.Category != "" {
		if utf8.RuneCountInString(q.Category) > MaxCategoryLen {
			return nil, shop.Errorf(shop.Invalid, "$.category", "at most %d characters", MaxCategoryLen)
		}
		var found []string
		err := c.db.WithContext(ctx).Model(&productRow{}).Where("category_key = ?", categoryKey(q.Category)).Limit(1).Pluck("category", &found).Error
		if err != nil {
			return nil, fmt.Errorf("search: check category: %w", err)
		}
		if len(found) == 0 {
			cats, err := c.Categories(ctx)
			if err != nil {
				return nil, err
			}
			return nil, shop.Errorf(shop.Invalid, "$.category", "no category %q; send one of: %s", q.Category, strings.Join(cats, ", "))
		}
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

// count counts the products a query matches.
func (c *Catalog) count(ctx context.Context, q Query) (int64, error) {
	q.Cursor, q.Limit = "", 1
	p, err := c.Search(ctx, q)
	if err != nil {
		return 0, err
	}
	return p.Total, nil
}
