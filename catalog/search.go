package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
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

	// The filters, on products p.
	var filter strings.Builder
	var filterArgs []any
	if q.Category != "" {
		filter.WriteString(" AND p.category_key = ?")
		filterArgs = append(filterArgs, categoryKey(q.Category))
	}
	if cond, cargs := q.variantFilter("v", c.now().UTC()); cond != "" {
		filter.WriteString(" AND EXISTS (SELECT 1 FROM variants v WHERE v.product_id = p.id" + cond + ")")
		filterArgs = append(filterArgs, cargs...)
	}

	var sb strings.Builder
	var args []any
	if len(terms) == 0 {
		// Browsing: catalog order, read off the seq index; the total is a
		// separate count, cheaper than numbering every row.
		sb.WriteString("SELECT p.seq, p.id, 0 AS score, 0 AS total FROM products p WHERE 1 = 1")
		sb.WriteString(filter.String())
		args = append(args, filterArgs...)
		if after != nil {
			sb.WriteString(" AND p.seq > ?")
			args = append(args, after.Seq)
		}
		sb.WriteString(" ORDER BY p.seq LIMIT ?")
		args = append(args, q.Limit+1)
	} else {
		sb.WriteString("WITH matches AS (SELECT product_id, SUM(score) AS score FROM (")
		for i, t := range terms {
			if i > 0 {
				sb.WriteString(" UNION ALL ")
			}
			args = append(args, termMatch(&sb, t)...)
		}
		sb.WriteString(") per_term GROUP BY product_id HAVING COUNT(*) = ?) ")
		args = append(args, len(terms))
		// COUNT(*) OVER () runs before the cursor cuts rows: it is the query's total.
		sb.WriteString("SELECT * FROM (SELECT p.seq, p.id, m.score, COUNT(*) OVER () AS total FROM products p JOIN matches m ON m.product_id = p.id WHERE 1 = 1")
		sb.WriteString(filter.String())
		args = append(args, filterArgs...)
		sb.WriteString(") ranked")
		if after != nil {
			sb.WriteString(" WHERE score < ? OR (score = ? AND seq > ?)")
			args = append(args, after.Score, after.Score, after.Seq)
		}
		sb.WriteString(" ORDER BY score DESC, seq ASC LIMIT ?")
		args = append(args, q.Limit+1)
	}

	type hit struct {
		Seq   int64
		ID    string
		Score int64
		Total int64
	}
	var hits []hit
	if err := c.db.WithContext(ctx).Raw(sb.String(), args...).Scan(&hits).Error; err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	page := &Page{Products: []ProductSummary{}}
	switch {
	case len(terms) == 0:
		err := c.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM products p WHERE 1 = 1"+filter.String(), filterArgs...).Scan(&page.Total).Error
		if err != nil {
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
	page.Products, err = c.summaries(ctx, ids, q)
	if err != nil {
		return nil, err
	}
	return page, nil
}

// termMatch writes the query that scores the products holding term t, one
// row per product: an exact match counts double a longer word it begins.
func termMatch(sb *strings.Builder, t string) []any {
	if len(t) < minPrefixMatch {
		sb.WriteString("SELECT product_id, weight * 2 AS score FROM product_terms WHERE term = ?")
		return []any{t}
	}
	sb.WriteString("SELECT product_id, MAX(CASE WHEN term = ? THEN weight * 2 ELSE weight END) AS score FROM product_terms WHERE term >= ?")
	args := []any{t, t}
	if end := prefixEnd(t); end != "" {
		sb.WriteString(" AND term < ?")
		args = append(args, end)
	}
	sb.WriteString(" GROUP BY product_id")
	return args
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
		sb.WriteString(" AND " + alias + ".stock > COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.variant_id = " +
			alias + ".id AND h.expires_at > ?), 0)")
		args = append(args, now)
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

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, fingerprint uint64) (*cursor, error) {
	bad := shop.Errorf(shop.Invalid, "$.cursor", "not a cursor from this shop; send the next_cursor of the previous page, or none for the first page")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.V != cursorVersion {
		return nil, bad
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
