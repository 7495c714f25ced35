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
// order. A query of several words without filters intersects them here:
// one read of each word's postings and a merge, where product_terms would
// cost an index seek per product of the rarest word (2,439 for "mug" in
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

// intersectPostings returns the products that hold every match's term,
// each with the sum of its weights times the match's factor; found is false
// when some term has no postings (no product holds it).
func (c *Catalog) intersectPostings(ctx context.Context, matches []termMatch) (out []scored, found bool, err error) {
	args := make([]any, len(matches))
	for i, m := range matches {
		args[i] = m.term
	}
	rows, err := c.stmts.query(ctx, "SELECT term, postings FROM term_postings WHERE term IN ("+strings.Repeat("?, ", len(matches)-1)+"?)", args)
	if err != nil {
		return nil, false, fmt.Errorf("search: postings: %w", err)
	}
	defer rows.Close()
	byTerm := make(map[string][]byte, len(matches))
	for rows.Next() {
		var term string
		var postings []byte
		if err := rows.Scan(&term, &postings); err != nil {
			return nil, false, fmt.Errorf("search: postings: %w", err)
		}
		byTerm[term] = postings
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("search: postings: %w", err)
	}
	// The shortest postings first: the candidates, which the others narrow.
	order := slices.Clone(matches)
	for _, m := range order {
		if len(byTerm[m.term]) == 0 {
			return nil, false, nil
		}
	}
	slices.SortStableFunc(order, func(a, b termMatch) int { return cmp.Compare(len(byTerm[a.term]), len(byTerm[b.term])) })
	for i, m := range order {
		out = narrow(out, byTerm[m.term], int64(m.factor), i == 0)
		if len(out) == 0 {
			return nil, false, nil
		}
	}
	return out, true, nil
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

// postingsPageSQL is the statement of a query of several words without
// filters: the page of matches (ranked by intersectPostings' caller) with
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
