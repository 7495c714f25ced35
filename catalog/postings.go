package catalog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The postings of a term (table term_postings, migration 00022) are its
// rows of product_terms in one text, "seq:weight,seq:weight,…" in seq
// order. A query without filters of several words, or of a word that
// begins longer terms (the union of those terms' postings), is answered
// here: one read of each word's postings and a merge, where product_terms
// would cost an index seek per product of the rarest word (2,439 for "mug" in
// 100,000 products, about 1.5 ms; the postings of "rustic" and "mug", 5
// times less). Only the page's products are then read.
//
// The import rewrites the postings of every term whose rows it changed
// (rebuildPostings), in its transaction, after it raised the catalog's
// version: on PostgreSQL that row's lock orders concurrent imports, so the
// later one reads the rows the earlier one committed.

// postingsRebuildChunk bounds the terms rewritten by one statement.
const postingsRebuildChunk = 500

// postingsSQL rewrites the postings of the terms that follow from
// product_terms (after the postings of those terms are deleted).
const postingsSQL = `INSERT INTO term_postings (term, postings)
SELECT term, string_agg(CAST(product_seq AS TEXT) || ':' || CAST(weight AS TEXT), ',' ORDER BY product_seq)
FROM product_terms WHERE term IN ? GROUP BY term`

// rebuildPostings rewrites the postings of the given terms, in tx.
func rebuildPostings(tx *gorm.DB, terms map[string]bool) error {
	list := make([]string, 0, len(terms))
	for t := range terms {
		list = append(list, t)
	}
	slices.Sort(list)
	for chunk := range slices.Chunk(list, postingsRebuildChunk) {
		if err := tx.Exec("DELETE FROM term_postings WHERE term IN ?", chunk).Error; err != nil {
			return fmt.Errorf("rewrite postings: %w", err)
		}
		if err := tx.Exec(postingsSQL, chunk).Error; err != nil {
			return fmt.Errorf("rewrite postings: %w", err)
		}
	}
	return nil
}

// scored is a product matching a query, by seq, with its score.
type scored struct{ seq, score int64 }

// maxPostingsRows bounds the postings a search reads: a word that begins
// more indexed terms than that ("c") is left to the index in SQL.
const maxPostingsRows = 64

// intersectPostings returns the products that hold every match's term
// (for a ranged match, one of the terms it begins), each with the sum over
// the matches of its best weight times the factor: 2 for the query's word
// itself, 1 for a longer term it begins. found is false when some match
// has no postings (no product holds it); usable is false when the matches
// hold more than maxPostingsRows terms, and the caller should search in SQL.
func (c *Catalog) intersectPostings(ctx context.Context, matches []termMatch) (out []scored, found, usable bool, err error) {
	lists, err := c.readPostings(ctx, matches)
	if err != nil || lists == nil {
		return nil, false, false, err
	}
	// The shortest postings first: the candidates, which the others narrow.
	order := make([]int, len(matches))
	for i := range order {
		order[i] = i
		if lists[i].size() == 0 {
			return nil, false, true, nil
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(lists[a].size(), lists[b].size()) })
	for k, i := range order {
		if l := lists[i]; l.ranged {
			out = narrowScored(out, l.union, k == 0)
		} else {
			out = narrow(out, l.exact, int64(matches[i].factor), k == 0)
		}
		if len(out) == 0 {
			return nil, false, true, nil
		}
	}
	return out, true, true, nil
}

// matchPostings are the postings of a match: an exact term's text, or the
// products of a ranged match's terms, each with its best weight times
// factor, in seq order.
type matchPostings struct {
	ranged bool
	exact  []byte
	union  []scored
}

// size is about how many products the postings hold, to order the merge.
func (m matchPostings) size() int {
	if m.ranged {
		return len(m.union) * 8
	}
	return len(m.exact)
}

// readPostings reads the postings of every match in one statement: nil,
// without an error, when the matches hold more than maxPostingsRows terms.
func (c *Catalog) readPostings(ctx context.Context, matches []termMatch) ([]matchPostings, error) {
	var where []string
	var args []any
	for _, m := range matches {
		cond, cargs := "term = ?", []any{m.term}
		if m.ranged {
			cond, cargs = prefixRange(m.term)
		}
		where, args = append(where, "("+cond+")"), append(args, cargs...)
	}
	rows, err := c.stmts.query(ctx, "SELECT term, postings FROM term_postings WHERE "+strings.Join(where, " OR ")+
		fmt.Sprintf(" ORDER BY term LIMIT %d", maxPostingsRows+1), args)
	if err != nil {
		return nil, fmt.Errorf("search: postings: %w", err)
	}
	defer rows.Close()
	lists := make([]matchPostings, len(matches))
	n := 0
	for rows.Next() {
		if n++; n > maxPostingsRows {
			return nil, nil
		}
		var term string
		var postings []byte
		if err := rows.Scan(&term, &postings); err != nil {
			return nil, fmt.Errorf("search: postings: %w", err)
		}
		for i, m := range matches {
			switch {
			case !m.ranged && term == m.term:
				lists[i].exact = postings
			case m.ranged && strings.HasPrefix(term, m.term):
				factor := int64(1)
				if term == m.term {
					factor = 2
				}
				lists[i].union = unionBest(lists[i].union, narrow(nil, postings, factor, true))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: postings: %w", err)
	}
	for i, m := range matches {
		lists[i].ranged = m.ranged
	}
	return lists, nil
}

// unionBest merges two lists in seq order, keeping a product's best score.
func unionBest(a, b []scored) []scored {
	if len(a) == 0 {
		return b
	}
	out := make([]scored, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].seq < b[j].seq:
			out, i = append(out, a[i]), i+1
		case i == len(a) || b[j].seq < a[i].seq:
			out, j = append(out, b[j]), j+1
		default:
			out, i, j = append(out, scored{seq: a[i].seq, score: max(a[i].score, b[j].score)}), i+1, j+1
		}
	}
	return out
}

// narrowScored is narrow over a list already read: it keeps the candidates
// that list holds, adding its score to theirs; first takes list instead
// (each match's list is its own, narrowed in place afterwards).
func narrowScored(candidates, list []scored, first bool) []scored {
	if first {
		return list
	}
	kept, k := candidates[:0], 0
	for _, m := range list {
		for k < len(candidates) && candidates[k].seq < m.seq {
			k++
		}
		if k == len(candidates) {
			break
		}
		if candidates[k].seq == m.seq {
			kept = append(kept, scored{seq: m.seq, score: candidates[k].score + m.score})
			k++
		}
	}
	return kept
}

// narrow keeps the candidates (in seq order) that postings hold, adding
// their weight times factor to their score; first takes every product of
// postings as a candidate instead.
func narrow(candidates []scored, postings []byte, factor int64, first bool) []scored {
	if first {
		candidates = make([]scored, 0, len(postings)/8)
	}
	kept, k := candidates[:0], 0
	var seq, n int64
	for i := 0; i <= len(postings); i++ {
		switch {
		case i < len(postings) && postings[i] == ':':
			seq, n = n, 0
			continue
		case i < len(postings) && postings[i] != ',':
			n = n*10 + int64(postings[i]-'0')
			continue
		}
		weight := n
		n = 0
		if first {
			kept = append(kept, scored{seq: seq, score: weight * factor})
			continue
		}
		for k < len(candidates) && candidates[k].seq < seq {
			k++
		}
		if k == len(candidates) {
			break
		}
		if candidates[k].seq == seq {
			kept = append(kept, scored{seq: seq, score: candidates[k].score + weight*factor})
			k++
		}
	}
	return kept
}

// postingsPageSQL is the statement of a query answered from the postings
// (intersectPostings): the page of matches (ranked by intersectPostings' caller) with
// their scores and the total as arguments, joined to the products it shows.
func (c *Catalog) postingsPageSQL(q Query, page []scored, total int, now time.Time) *sqlText {
	return c.pageSQL(q, now, func(s *sqlText) {
		if len(page) == 0 {
			s.add("SELECT CAST(NULL AS BIGINT) AS seq, CAST(NULL AS BIGINT) AS score WHERE 1 = 0")
			return
		}
		for i, m := range page {
			if i > 0 {
				s.add(" UNION ALL ")
			}
			s.add("SELECT CAST(? AS BIGINT) AS seq, CAST(? AS BIGINT) AS score", m.seq, m.score)
		}
	}, func(s *sqlText) { s.add("CAST(? AS BIGINT)", int64(total)) })
}

// rankPostings orders matches best first (score, then seq) and returns the
// limit+1 that follow after, when set.
func rankPostings(matches []scored, after *cursor, limit int) []scored {
	if after != nil {
		matches = slices.DeleteFunc(matches, func(m scored) bool {
			return m.score > after.Score || (m.score == after.Score && m.seq <= after.Seq)
		})
	}
	slices.SortFunc(matches, func(a, b scored) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return matches[:min(len(matches), limit+1)]
}
