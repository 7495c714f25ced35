package catalog

// The total of a word under filters counts the products that hold the word
// and pass the filters. Read from the word's side, that is an index seek
// into products_facts per match (29,489 for "made" in 100,000 products);
// read from the filter's side, a seek into the word's index per product the
// filter's index range holds. A price cap, in stock, or both are facts the
// word's index rows carry (migration 00022): they are counted in the word's
// range of product_terms_seq, which holds them, reading no other row. For
// the other filters termFactsCountSQL lets the statement choose, by two
// index counts, whichever side is smaller.

// termFactsCountSQL writes the count of the products that hold term and
// that the facts of q admit (factFilterSQL), a scalar expression.
func (c *Catalog) termFactsCountSQL(s *sqlText, q Query, term string) {
	if q.Category != "" {
		// The word's rows in the category are one index range, the
		// products joined only for the other filters.
		rest := q.withoutCategory()
		s.add("(SELECT COUNT(*) FROM product_terms t" + c.indexedBy("product_terms_category"))
		if rest.filtered() {
			s.add(" JOIN products p" + c.indexedBy("products_facts") + " ON p.seq = t.product_seq")
		}
		s.add(" WHERE t.term = ? AND t.category_key = ?", term, categoryKey(q.Category))
		rest.factFilterSQL(s)
		s.add(")")
		return
	}
	if index, cond, args := q.termFactRange(); index != "" {
		s.add("(SELECT COUNT(*) FROM product_terms t"+c.indexedBy(index)+" WHERE t.term = ? AND "+cond+")", append([]any{term}, args...)...)
		return
	}
	byMatch := func(s *sqlText) {
		s.add("(SELECT COUNT(*) FROM product_terms t JOIN products p"+c.indexedBy("products_facts")+" ON p.seq = t.product_seq WHERE t.term = ?", term)
		q.factFilterSQL(s)
		s.add(")")
	}
	holds := func(s *sqlText) {
		s.add(" AND EXISTS (SELECT 1 FROM product_terms t WHERE t.term = ? AND t.product_seq = p.seq)", term)
	}
	// The word's count, wanted up to three times, is counted once in the
	// statement's WITH (termPageSQL writes it: matchCountCTE).
	matches := func(s *sqlText) { s.add("(SELECT n FROM word_matches)") }
	index, cond, args, complement := q.factRange()
	if index == "" {
		byMatch(s)
		return
	}
	// The range is counted only as far as the matches go: its count
	// decides, and must not cost more than the count it saves.
	from := "FROM products p" + c.indexedBy(index) + " WHERE "
	s.add("CASE WHEN (SELECT COUNT(*) FROM (SELECT 1 "+from+cond+" LIMIT ", args...)
	matches(s)
	s.add(") capped) < ")
	matches(s)
	if complement {
		// Count the matches, less those the range leaves out (the range
		// is then the products the filter refuses).
		s.add(" THEN ")
		matches(s)
		s.add(" - (SELECT COUNT(*) "+from+cond, args...)
		holds(s)
		s.add(")")
	} else {
		s.add(" THEN (SELECT COUNT(*) "+from+cond, args...)
		q.factFilterSQL(s)
		holds(s)
		s.add(")")
	}
	s.add(" ELSE ")
	byMatch(s)
	s.add(" END")
}

// termFactRange is the index of a word's rows and the condition on them
// (after t.term = ?) that the facts of q admit, when the facts the rows
// carry answer q alone: a price cap, in stock, or both, with no lower bound
// and no category.
func (q Query) termFactRange() (index, cond string, args []any) {
	switch {
	case q.Category != "" || q.MinPrice != nil:
		return "", "", nil
	case q.InStockOnly && q.MaxPrice != nil:
		return "product_terms_seq", "t.min_stocked_price <= ?", []any{*q.MaxPrice}
	case q.InStockOnly:
		return "product_terms_seq", "t.min_stocked_price IS NOT NULL", nil
	case q.MaxPrice != nil:
		return "product_terms_seq", "t.min_price <= ?", []any{*q.MaxPrice}
	}
	return "", "", nil
}

// factRange is an index range of products that q's facts filter reads
// whole, when it has one: its index, its condition on p and their
// arguments. complement says that the range holds the products the filter
// refuses rather than those it may admit (in_stock_only alone: the few with
// nothing in stock).
func (q Query) factRange() (index, cond string, args []any, complement bool) {
	minCol, priceIndex, stockIndex := "p.min_price", "products_priced", "products_stocked"
	if q.InStockOnly {
		minCol, priceIndex = "p.min_stocked_price", stockIndex
	}
	switch {
	case q.Category != "":
		return "products_category_facts", "p.category_key = ?", []any{categoryKey(q.Category)}, false
	case q.MaxPrice != nil:
		return priceIndex, minCol + " <= ?", []any{*q.MaxPrice}, false
	case q.InStockOnly && q.MinPrice == nil:
		return stockIndex, "p.min_stocked_price IS NULL", nil, true
	}
	return "", "", nil, false
}

// matchCountCTE prefixes stmt, a statement whose total termFactsCountSQL
// wrote, with the count of term's matches it refers to, when it does
// (MATERIALIZED: counted once, however often it is read, on both engines).
func (q Query) matchCountCTE(stmt *sqlText, term string) *sqlText {
	if index, _, _, _ := q.factRange(); index == "" || q.Category != "" {
		return stmt // no count of the word's matches asked (termFactsCountSQL)
	}
	if index, _, _ := q.termFactRange(); index != "" {
		return stmt // counted in the word's index alone
	}
	s := &sqlText{}
	s.add("WITH word_matches AS MATERIALIZED (SELECT COUNT(*) AS n FROM product_terms WHERE term = ?) ", term)
	s.add(stmt.String(), stmt.args...)
	return s
}
