package catalog

// A search's terms: how each word of a query finds its products in
// product_terms (exactly, or as a prefix), and the SQL that intersects them.

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// termMatch is how a query term finds products in product_terms.
type termMatch struct {
	// term is the indexed term to match by equality, with factor 2 when it
	// is the query's word itself and 1 when it is a longer word the query's
	// word begins; or, when ranged, the prefix of the range to match.
	term   string
	factor int
	ranged bool
	// count is how many products hold the term (up to matchCountCap),
	// when the query has several terms.
	count int64
}

// resolve turns the query's terms into matches. A term of three letters or
// more matches every indexed term it begins; when that range holds a single
// indexed term (found with two index seeks, MIN and MAX), the term is matched
// by equality, which needs no grouping per product. found is false when a
// range is empty: then nothing matches the query. With several terms and
// counted (a filtered query, whose intersection runs in SQL: intersectSQL)
// each match also learns how many products it holds, up to matchCountCap,
// so that the intersection starts from the rarest; without filters the
// postings' lengths tell (intersectPostings). version is the catalog's
// version the terms were read at (knownterms.go), noVersion when none was
// read (terms too short for a range are matched as they are).
func (c *Catalog) resolve(ctx context.Context, terms []string, counted bool) (matches []termMatch, found bool, version int64, err error) {
	matches = make([]termMatch, len(terms))
	counted = counted && len(terms) > 1
	cols := []string{versionSQL}
	var args []any
	for i, t := range terms {
		cond, cargs := "term = ?", []any{t}
		if len(t) >= minPrefixMatch {
			cond, cargs = prefixRange(t)
			cols = append(cols, "(SELECT MIN(term) FROM product_terms WHERE "+cond+")", "(SELECT MAX(term) FROM product_terms WHERE "+cond+")")
			args = append(append(args, cargs...), cargs...)
		} else {
			matches[i] = termMatch{term: t, factor: 2}
		}
		if counted {
			cols = append(cols, fmt.Sprintf("(SELECT COUNT(*) FROM (SELECT 1 FROM product_terms WHERE %s LIMIT %d) capped)", cond, matchCountCap))
			args = append(args, cargs...)
		}
	}
	if len(cols) == 1 {
		return matches, true, noVersion, nil // nothing to read but the version
	}
	bounds := make([]sql.NullString, 0, 2*len(terms))
	counts := make([]int64, len(terms))
	dest := make([]any, 1, len(cols))
	dest[0] = &version
	for i, t := range terms {
		if len(t) >= minPrefixMatch {
			bounds = append(bounds, sql.NullString{}, sql.NullString{})
			dest = append(dest, &bounds[len(bounds)-2], &bounds[len(bounds)-1])
		}
		if counted {
			dest = append(dest, &counts[i])
		}
	}
	if err := c.queryRow(ctx, "SELECT "+strings.Join(cols, ", "), args, dest...); err != nil {
		return nil, false, noVersion, fmt.Errorf("search: terms: %w", err)
	}
	k := 0
	for i, t := range terms {
		matches[i].count = counts[i]
		if len(t) < minPrefixMatch {
			continue
		}
		lo, hi := bounds[k], bounds[k+1]
		k += 2
		switch {
		case !lo.Valid:
			return nil, false, version, nil
		case lo.String != hi.String:
			matches[i] = termMatch{term: t, ranged: true, count: counts[i]}
		case lo.String == t:
			matches[i] = termMatch{term: lo.String, factor: 2, count: counts[i]}
		default:
			matches[i] = termMatch{term: lo.String, factor: 1, count: counts[i]}
		}
	}
	return matches, true, version, nil
}

// matchCountCap bounds how far resolve counts a term's matches: far
// enough to tell a rare term from a common one in a large catalog (at
// 5,000, "blue" and "mug" tied in a million products, and the intersection
// started from the 250,000 blues: 61 ms instead of 14), and about 1 ms of
// index count for a term that reaches it.
const matchCountCap = 50_000

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
	if !slices.ContainsFunc(matches, func(m termMatch) bool { return m.ranged }) {
		return intersectSQL(sb, matches)
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

// intersectSQL writes matchesSQL for terms that are all matched by
// equality: the rarest term's index rows, each looked up in the others'
// (term, product_seq) index, in that order (CROSS JOIN keeps SQLite from
// reordering; PostgreSQL plans it as any join). Its cost follows the rarest
// term's matches rather than the sum of all of them.
func intersectSQL(sb *strings.Builder, matches []termMatch) []any {
	order := slices.Clone(matches)
	slices.SortStableFunc(order, func(a, b termMatch) int { return cmp.Compare(a.count, b.count) })
	args := make([]any, 0, len(order))
	sb.WriteString("SELECT t0.product_seq, ")
	for i, m := range order {
		if i > 0 {
			sb.WriteString(" + ")
		}
		fmt.Fprintf(sb, "t%d.weight * %d", i, m.factor)
	}
	sb.WriteString(" AS score FROM product_terms t0")
	for i := 1; i < len(order); i++ {
		fmt.Fprintf(sb, " CROSS JOIN product_terms t%d", i)
	}
	sb.WriteString(" WHERE t0.term = ?")
	args = append(args, order[0].term)
	for i := 1; i < len(order); i++ {
		fmt.Fprintf(sb, " AND t%d.term = ? AND t%d.product_seq = t0.product_seq", i, i)
		args = append(args, order[i].term)
	}
	return args
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
