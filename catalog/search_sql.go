package catalog

import (
	"fmt"
	"time"
)

// The SQL of a search. Every search is one statement (after resolve's for
// prefixes, and the read of the postings of several words without filters:
// postings.go): the page of matches in rank order, joined to the products
// it shows, with the query's exact total beside each row. The filters read the
// products' facts (facts.go) from the index products_facts alone, so that a
// filter costs an index read per match rather than a visit to its variants;
// only the few products with live holds are checked variant by variant.

// heldSQL lists the seqs of the products with live holds (one argument:
// now). Few products have any: a search reads the list once, from the
// holds outwards (written as nested lists, which both engines read in that
// order; as a join, SQLite without statistics on holds may start from
// every product).
const heldSQL = "SELECT seq FROM products WHERE id IN (SELECT product_id FROM variants WHERE id IN (SELECT variant_id FROM stock_holds WHERE expires_at > ?))"

// unheldSQL is the condition that no live hold is on a variant of product p
// (one argument: now), read from p's variants outwards: for the rows of a
// page, where building a list of every held product (heldSQL) costs more than
// the page itself once a few dozen products are held.
const unheldSQL = "NOT EXISTS (SELECT 1 FROM variants hv JOIN stock_holds hh ON hh.variant_id = hv.id WHERE hv.product_id = p.id AND hh.expires_at > ?)"

// noHoldsSQL is the condition that no variant has a live hold (one
// argument: now). It reads nothing of the product at hand, so both engines
// evaluate it once per statement: while nothing is held, the units in stock
// are the units available, and a page's summaries take their in-stock flag
// and lowest price in stock from the facts. (The filters and totals of
// in-stock searches read heldSQL's list whatever it holds.)
const noHoldsSQL = "NOT EXISTS (SELECT 1 FROM stock_holds WHERE expires_at > ?)"

// availableSQL is the condition that a variant v has units not held (one
// argument: now).
const availableSQL = "v.stock > COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.variant_id = v.id AND h.expires_at > ?), 0)"

// variantFiltered reports whether q asks something of the variants.
func (q Query) variantFiltered() bool {
	return q.MinPrice != nil || q.MaxPrice != nil || q.InStockOnly
}

// withoutCategory is q without its category (its other filters).
func (q Query) withoutCategory() Query {
	q.Category = ""
	return q
}

// filtered reports whether q has filters.
func (q Query) filtered() bool { return q.Category != "" || q.variantFiltered() }

// filterSQL writes the query's filters on products p, each an AND, reading
// only the columns of products_facts (seq, category and facts): the facts
// (factFilterSQL) and, with in_stock_only, the check of the products with
// live holds (holdsSQL).
func (q Query) filterSQL(s *sqlText, now time.Time) {
	q.factFilterSQL(s)
	if q.InStockOnly {
		s.add(" AND (p.seq NOT IN ("+heldSQL+") OR ", now)
		q.exactSQL(s, now)
		s.add(")")
	}
}

// factFilterSQL writes the filters as the facts answer them, holds aside.
//
// A price bound alone is a fact: a variant costs at most hi exactly when
// the cheapest does. Both bounds need a variant between them: the cheapest
// or dearest is one, or else (a product whose prices span the range) its
// variants are read. With in_stock_only the same holds of the prices of the
// variants with stock on hand.
func (q Query) factFilterSQL(s *sqlText) {
	if q.Category != "" {
		s.add(" AND p.category_key = ?", categoryKey(q.Category))
	}
	lo, hi := q.MinPrice, q.MaxPrice
	minCol, maxCol := "p.min_price", "p.max_price"
	if q.InStockOnly {
		minCol, maxCol = "p.min_stocked_price", "p.max_stocked_price"
	}
	switch {
	case lo != nil && hi != nil:
		s.add(" AND "+minCol+" <= ? AND "+maxCol+" >= ? AND ("+minCol+" >= ? OR "+maxCol+" <= ?", *hi, *lo, *lo, *hi)
		s.add(" OR EXISTS (SELECT 1 FROM products p3 JOIN variants v ON v.product_id = p3.id WHERE p3.seq = p.seq AND v.removed = FALSE")
		if q.InStockOnly {
			s.add(" AND v.stock > 0")
		}
		s.add(" AND v.price >= ? AND v.price <= ?))", *lo, *hi)
	case lo != nil:
		s.add(" AND "+maxCol+" >= ?", *lo)
	case hi != nil:
		s.add(" AND "+minCol+" <= ?", *hi)
	case q.InStockOnly:
		s.add(" AND " + minCol + " IS NOT NULL")
	}
}

// exactSQL writes the condition that product p has a variant q admits,
// read variant by variant (for the products with live holds).
func (q Query) exactSQL(s *sqlText, now time.Time) {
	s.add("EXISTS (SELECT 1 FROM products p2 JOIN variants v ON v.product_id = p2.id WHERE p2.seq = p.seq AND ")
	q.admitSQL(s, now)
	s.add(")")
}

// countSQL writes the total of q: facts writes the count of the products
// the facts admit, a scalar expression. With in_stock_only it then takes
// away the products with live holds that the facts admit and their
// variants do not (matching restricts them to the query's matches, written
// from the few held ones outwards): a check of every match against the held
// list cost more than the count.
func (q Query) countSQL(s *sqlText, now time.Time, facts func(*sqlText), matching func(*sqlText)) {
	facts(s)
	if !q.InStockOnly {
		return
	}
	s.add(" - (SELECT COUNT(*) FROM products p WHERE p.seq IN ("+heldSQL+")", now)
	matching(s)
	q.factFilterSQL(s)
	s.add(" AND NOT ")
	q.exactSQL(s, now)
	s.add(")")
}

// admitSQL writes the conditions under which q admits a variant v: not
// removed, within the price bounds, and with units not held when
// in_stock_only.
func (q Query) admitSQL(s *sqlText, now time.Time) {
	s.add("v.removed = FALSE")
	if q.MinPrice != nil {
		s.add(" AND v.price >= ?", *q.MinPrice)
	}
	if q.MaxPrice != nil {
		s.add(" AND v.price <= ?", *q.MaxPrice)
	}
	if q.InStockOnly {
		s.add(" AND "+availableSQL, now)
	}
}

// summarySQL writes the columns of a page's product p that its summary
// shows: id, title, category, images, variant count, the lowest price
// among the variants q admits, and whether any variant has units not held.
// The correlated subqueries run for the page's rows only.
//
// The lowest admitted price is a fact but under a lower bound: under a
// price cap alone it is the lowest price, which the filter put under the
// cap; in stock (under a cap or not), while nothing is held, the lowest
// price in stock. Otherwise the page's variants are read.
func (q Query) summarySQL(s *sqlText, now time.Time) {
	s.add("p.id, p.title, p.category, p.images, p.variant_count, ")
	lowest := func() {
		s.add("COALESCE((SELECT MIN(v.price) FROM variants v WHERE v.product_id = p.id AND ")
		q.admitSQL(s, now)
		s.add("), 0)")
	}
	switch {
	case !q.variantFiltered(), q.MinPrice == nil && !q.InStockOnly:
		s.add("COALESCE(p.min_price, 0)")
	case q.MinPrice == nil:
		s.add("CASE WHEN "+noHoldsSQL+" THEN COALESCE(p.min_stocked_price, 0) ELSE ", now)
		lowest()
		s.add(" END")
	default:
		lowest()
	}
	s.add(", CASE WHEN p.min_stocked_price IS NULL THEN 0 WHEN "+noHoldsSQL+" OR "+unheldSQL+" THEN 1", now, now)
	s.add(" WHEN EXISTS (SELECT 1 FROM variants v WHERE v.product_id = p.id AND v.removed = FALSE AND "+availableSQL+") THEN 1 ELSE 0 END", now)
}

// versionSQL is the catalog's version (knownterms.go), read once by a
// statement however many rows it answers.
const versionSQL = "(SELECT version FROM catalog_version WHERE id = 1)"

// pageSQL writes the statement that answers q: page writes the page's rows
// (seq, score, and total when windowed) in rank order, limit+1 of them;
// count writes the expression of the query's total (nil for a windowed
// page: r.total). Each row answered has the product's summary and the
// catalog's version beside.
func (c *Catalog) pageSQL(q Query, now time.Time, page func(*sqlText), count func(*sqlText)) *sqlText {
	s := &sqlText{}
	s.add("SELECT r.seq, r.score, ")
	if count == nil {
		s.add("r.total")
	} else {
		count(s)
	}
	s.add(", ")
	q.summarySQL(s, now)
	s.add(", " + versionSQL + " FROM (")
	page(s)
	s.add(") r JOIN products p ON p.seq = r.seq ORDER BY r.score DESC, r.seq")
	return s
}

// browseSQL is the statement of a query without words: the products that
// pass the filters in catalog order, read off products_facts (or its
// category's index), and their count.
func (c *Catalog) browseSQL(q Query, after *cursor, now time.Time) *sqlText {
	index := "products_facts"
	if q.Category != "" {
		index = "products_category_facts"
	}
	return c.pageSQL(q, now, func(s *sqlText) {
		s.add("SELECT p.seq, 0 AS score FROM products p" + c.indexedBy(index) + " WHERE 1 = 1")
		q.filterSQL(s, now)
		if after != nil {
			s.add(" AND p.seq > ?", after.Seq)
		}
		s.add(" ORDER BY p.seq LIMIT ?", q.Limit+1)
	}, func(s *sqlText) {
		q.countSQL(s, now, func(s *sqlText) {
			// A count of the whole table is SQLite's quickest (it adds
			// up the cells of the smallest index's pages); in stock alone
			// is that less the few products with nothing in stock.
			_, cond, _, complement := q.factRange()
			switch {
			case !q.filtered():
				s.add("(SELECT COUNT(*) FROM products)")
			case complement:
				s.add("(SELECT COUNT(*) FROM products) - (SELECT COUNT(*) FROM products p WHERE " + cond + ")")
			default:
				s.add("(SELECT COUNT(*) FROM products p WHERE 1 = 1")
				q.factFilterSQL(s)
				s.add(")")
			}
		}, func(*sqlText) {})
	})
}

// termPageSQL is the statement of a query of one word matched by equality:
// its index rows in rank order (product_terms_rank: weight, then seq), the
// filters joined per row until the page is full, and the total counted
// apart.
//
// With a category the word's rows in it are one range of
// product_terms_category, in rank order too: the products are joined only
// for the other filters.
func (c *Catalog) termPageSQL(q Query, m termMatch, after *cursor, now time.Time) *sqlText {
	score := fmt.Sprintf("t.weight * %d", m.factor)
	index := "product_terms_rank"
	if q.Category != "" {
		index = "product_terms_category"
	}
	join := func(s *sqlText) {
		if q.Category != "" {
			rest := q.withoutCategory()
			if rest.filtered() {
				s.add(" JOIN products p" + c.indexedBy("products_facts") + " ON p.seq = t.product_seq")
			}
			s.add(" WHERE t.term = ? AND t.category_key = ?", m.term, categoryKey(q.Category))
			rest.filterSQL(s, now)
			return
		}
		if q.filtered() {
			s.add(" JOIN products p" + c.indexedBy("products_facts") + " ON p.seq = t.product_seq")
		}
		s.add(" WHERE t.term = ?", m.term)
		q.filterSQL(s, now)
	}
	stmt := c.pageSQL(q, now, func(s *sqlText) {
		s.add("SELECT t.product_seq AS seq, " + score + " AS score FROM product_terms t" + c.indexedBy(index))
		join(s)
		if after != nil {
			s.add(" AND ("+score+" < ? OR ("+score+" = ? AND t.product_seq > ?))", after.Score, after.Score, after.Seq)
		}
		s.add(" ORDER BY t.weight DESC, t.product_seq LIMIT ?", q.Limit+1)
	}, func(s *sqlText) {
		if !q.filtered() {
			s.add("(SELECT COUNT(*) FROM product_terms t WHERE t.term = ?)", m.term)
			return
		}
		q.countSQL(s, now, func(s *sqlText) { c.termFactsCountSQL(s, q, m.term) }, func(s *sqlText) {
			s.add(" AND EXISTS (SELECT 1 FROM product_terms t WHERE t.term = ? AND t.product_seq = p.seq)", m.term)
		})
	})
	if !q.filtered() {
		return stmt
	}
	return q.matchCountCTE(stmt, m.term)
}

// rankPageSQL is the statement of any other text query: the matches
// (matchesSQL) ranked under the filters, COUNT(*) OVER () counting them in
// the same pass, before the cursor cuts rows, so that it is the total.
func (c *Catalog) rankPageSQL(q Query, matches []termMatch, after *cursor, now time.Time) *sqlText {
	return c.pageSQL(q, now, func(s *sqlText) {
		s.add("SELECT * FROM (SELECT m.product_seq AS seq, m.score, COUNT(*) OVER () AS total FROM (")
		s.args = append(s.args, matchesSQL(&s.Builder, matches)...)
		s.add(") m")
		if q.filtered() {
			s.add(" JOIN products p" + c.indexedBy("products_facts") + " ON p.seq = m.product_seq WHERE 1 = 1")
			q.filterSQL(s, now)
		}
		s.add(") ranked")
		if after != nil {
			s.add(" WHERE score < ? OR (score = ? AND seq > ?)", after.Score, after.Score, after.Seq)
		}
		s.add(" ORDER BY score DESC, seq LIMIT ?", q.Limit+1)
	}, nil)
}

// indexedBy names the index SQLite must read a table by (its planner,
// without statistics, may pick the unique index on seq and visit the
// table for every row); PostgreSQL's planner chooses alone.
func (c *Catalog) indexedBy(index string) string {
	if c.stmts.pg {
		return ""
	}
	return " INDEXED BY " + index
}
