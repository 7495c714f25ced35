package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop/database"
)

// ImportOptions tune Import; nil means defaults.
type ImportOptions struct {
	// Progress, when set, is called after every batch with the products
	// written so far and the total (a retried transaction reports only
	// what it had not reported yet).
	Progress func(done, total int)
	// KeptStock, when set, is called for each variant whose stock the import
	// kept above the file's because checkout sessions being paid hold more,
	// once the import has committed.
	KeptStock func(k KeptStock)
}

// KeptStock is a variant whose stock an import kept at Stock, above the
// file's FileStock: sessions being paid hold Stock units of it.
type KeptStock struct {
	VariantID        string
	FileStock, Stock int64
}

// Import validates a catalog file and writes it in one transaction: a product
// already in the catalog (by id) is replaced, others are added after the
// existing ones. Nothing is written when anything is invalid.
//
// A variant keeps its row and id: one in the file is updated in place (the
// stock held by checkout sessions stays held), and one the file leaves out
// of its product is marked removed (no longer sold or shown; orders and
// payments in flight still refer to it; an import that lists it again
// brings it back). The stock never goes below the units held by sessions
// being paid: a variant's stock is the file's or those units, whichever is
// more (ImportOptions.KeptStock reports each).
func (c *Catalog) Import(ctx context.Context, f *File, opts *ImportOptions) error {
	if err := f.Validate(c.currency.Code()); err != nil {
		return err
	}
	if opts == nil {
		opts = &ImportOptions{}
	}
	now := c.now().UTC()
	// The transaction may run more than once (database.Transact retries it):
	// the variants whose stock was kept are told once it commits, and a
	// retry reports no progress it reported already.
	var kept []KeptStock
	reported := 0
	err := database.Transact(database.WithClock(ctx, c.now), c.db, func(tx *gorm.DB) (err error) {
		kept = kept[:0]
		// Each batch's rows are inserted a chunk at a time (CreateInBatches)
		// straight into the import's transaction: gorm would otherwise wrap
		// the chunks in a savepoint, and SQLite copies every page changed
		// under a savepoint into its sub-journal first.
		tx = tx.Session(&gorm.Session{SkipDefaultTransaction: true})
		restore, err := database.GrowPageCache(tx, importCacheKiB)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer func() { err = errors.Join(err, restore()) }()
		return writeFile(tx, f, now, func(k KeptStock) { kept = append(kept, k) }, func(done int) {
			if opts.Progress != nil && done > reported {
				reported = done
				opts.Progress(done, len(f.Products))
			}
		})
	})
	if err == nil && opts.KeptStock != nil {
		for _, k := range kept {
			opts.KeptStock(k)
		}
	}
	if err != nil || len(f.Products) < analyzeAfter {
		return err
	}
	// A large import changes the tables' statistics enough to change query
	// plans: refresh them now rather than when the database gets round to it.
	// On PostgreSQL, VACUUM also marks the new pages all-visible, without
	// which the search's index-only scans visit the table for every row
	// until autovacuum passes (which may be never: it can be off).
	analyze := "ANALYZE "
	if database.DialectOfDB(c.db) == database.Postgres {
		analyze = "VACUUM (ANALYZE) "
	}
	for _, table := range []string{"products", "variants", "product_terms"} {
		if err := c.db.WithContext(ctx).Exec(analyze + table).Error; err != nil {
			return fmt.Errorf("import: %s%s: %w", analyze, table, err)
		}
	}
	return nil
}

// writeFile writes the products of f in tx, a batch at a time (progress
// hears of the products written after each), then the catalog's version and
// the search's postings of the terms it changed.
func writeFile(tx *gorm.DB, f *File, now time.Time, keep func(KeptStock), progress func(done int)) error {
	var next int64
	if err := tx.Model(&productRow{}).Select("COALESCE(MAX(seq), 0)").Scan(&next).Error; err != nil {
		return fmt.Errorf("import: read sequence: %w", err)
	}
	touched := map[string]bool{}
	for start := 0; start < len(f.Products); start += importBatch {
		batch := f.Products[start:min(start+importBatch, len(f.Products))]
		if err := writeBatch(tx, batch, &next, now, keep, touched); err != nil {
			return fmt.Errorf("import: products[%d…%d]: %w", start, start+len(batch)-1, err)
		}
		if err := writeImageOrigins(tx, batch); err != nil {
			return fmt.Errorf("import: products[%d…%d]: %w", start, start+len(batch)-1, err)
		}
		progress(start + len(batch))
	}
	if err := bumpVersion(tx, now); err != nil {
		return err
	}
	if err := rebuildPostings(tx, touched); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// writeBatch writes a batch of products, their variants and their search
// index rows; touched gains the terms whose rows it deleted or wrote.
func writeBatch(tx *gorm.DB, batch []ProductRecord, next *int64, now time.Time, kept func(KeptStock), touched map[string]bool) error {
	ids := make([]string, len(batch))
	var fileVariants []string
	for i, p := range batch {
		ids[i] = p.ID
		for _, v := range p.Variants {
			fileVariants = append(fileVariants, v.ID)
		}
	}
	var existing []productRow
	if err := tx.Select("id", "seq", "created_at").Where("id IN ?", ids).Find(&existing).Error; err != nil {
		return err
	}
	known := make(map[string]productRow, len(existing))
	for _, p := range existing {
		known[p.ID] = p
	}
	var gone []string
	if err := tx.Raw("DELETE FROM product_terms WHERE product_id IN ? RETURNING term", ids).Scan(&gone).Error; err != nil {
		return err
	}
	for _, t := range gone {
		touched[t] = true
	}
	paying, err := lockVariants(tx, ids, fileVariants)
	if err != nil {
		return err
	}
	// A variant the file moves to another product leaves that one's facts.
	var left []string
	if err := tx.Table("variants").Distinct("product_id").Where("id IN ? AND product_id NOT IN ?", fileVariants, ids).Pluck("product_id", &left).Error; err != nil {
		return err
	}
	products, variants, terms := batchRows(batch, known, next, paying, now, kept)
	err = tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"title", "description", "category", "category_key", "images", "updated_at"}),
	}).CreateInBatches(products, 1000).Error
	if err != nil {
		return err
	}
	if err := removeLeftOut(tx, ids, fileVariants, now); err != nil {
		return err
	}
	err = tx.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "id"}},
		DoUpdates: clause.Assignments(map[string]any{
			"product_id": gorm.Expr("excluded.product_id"), "position": gorm.Expr("excluded.position"),
			"title": gorm.Expr("excluded.title"), "options": gorm.Expr("excluded.options"),
			"price": gorm.Expr("excluded.price"), "stock": gorm.Expr("excluded.stock"),
			"image": gorm.Expr("excluded.image"), "removed": false, "updated_at": gorm.Expr("excluded.updated_at"),
		}),
	}).CreateInBatches(variants, 1000).Error
	if err != nil {
		return err
	}
	if err := refreshFacts(tx, append(ids, left...)); err != nil {
		return err
	}
	if err := withFacts(tx, ids, terms); err != nil {
		return err
	}
	for _, t := range terms {
		touched[t.Term] = true
	}
	// 4,000 rows of 7 columns stay below SQLite's 32,766 variables.
	return tx.CreateInBatches(terms, 4000).Error
}

// withFacts fills in the facts that the search index rows terms carry,
// read from their products (ids), whose facts were just rewritten.
func withFacts(tx *gorm.DB, ids []string, terms []termRow) error {
	var facts []struct {
		ID                        string
		MinPrice, MinStockedPrice *int64
	}
	if err := tx.Model(&productRow{}).Select("id", "min_price", "min_stocked_price").Where("id IN ?", ids).Scan(&facts).Error; err != nil {
		return fmt.Errorf("read product facts: %w", err)
	}
	byID := make(map[string]int, len(facts))
	for i, f := range facts {
		byID[f.ID] = i
	}
	for i := range terms {
		j, ok := byID[terms[i].ProductID]
		if !ok {
			return fmt.Errorf("read product facts: no product %q", terms[i].ProductID)
		}
		f := facts[j]
		terms[i].MinPrice, terms[i].MinStockedPrice = f.MinPrice, f.MinStockedPrice
	}
	return nil
}

// batchRows are the rows of a batch of products: products keep the seq
// and creation time of those already known, new ones take the next seq; a
// variant's stock is the file's, or the units held by sessions being paid
// when more (kept hears of each).
func batchRows(batch []ProductRecord, known map[string]productRow, next *int64, paying map[string]int64, now time.Time, kept func(KeptStock)) ([]productRow, []variantRow, []termRow) {
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
			stock := *v.Stock
			if held := paying[v.ID]; held > stock {
				stock = held
				if kept != nil {
					kept(KeptStock{VariantID: v.ID, FileStock: *v.Stock, Stock: held})
				}
			}
			variants = append(variants, variantRow{
				ID: v.ID, ProductID: p.ID, Position: i, Title: v.Title,
				Options: mustJSON(nonNilMap(v.Options)), Price: *v.Price, Stock: stock,
				Image: v.Image, CreatedAt: now, UpdatedAt: now,
			})
		}
		for term, w := range indexTerms(p.Title, p.Category, p.Description, options) {
			terms = append(terms, termRow{Term: term, ProductID: p.ID, ProductSeq: row.Seq, Weight: w, CategoryKey: row.CategoryKey})
		}
	}
	return products, variants, terms
}

// lockVariants locks the rows of the variants of the given products and of
// the variants named (PostgreSQL: FOR UPDATE, in id order, as Hold does, so
// that no session is claimed for payment meanwhile; SQLite: the write lock
// the transaction holds) and returns the units held for payment of each.
func lockVariants(tx *gorm.DB, products, variants []string) (map[string]int64, error) {
	var locked []string
	err := tx.Table("variants").Where("product_id IN ? OR id IN ?", products, variants).Order("id").Clauses(database.Lock()).Pluck("id", &locked).Error
	if err != nil {
		return nil, fmt.Errorf("lock variants: %w", err)
	}
	var sums []struct {
		VariantID string
		Units     int64
	}
	err = tx.Model(&holdRow{}).Select("variant_id, SUM(quantity) AS units").
		Where(payingOf, variants).Group("variant_id").Scan(&sums).Error
	if err != nil {
		return nil, fmt.Errorf("sum stock held for payment: %w", err)
	}
	out := make(map[string]int64, len(sums))
	for _, s := range sums {
		out[s.VariantID] = s.Units
	}
	return out, nil
}

// removeLeftOut marks removed the variants of the given products that the
// file (keep) leaves out, and drops the holds of sessions not being paid on
// them: those sessions find the variant gone when they are priced again.
func removeLeftOut(tx *gorm.DB, products, keep []string, now time.Time) error {
	gone := tx.Model(&variantRow{}).Select("id").Where("product_id IN ? AND id NOT IN ? AND removed = ?", products, keep, false)
	if err := tx.Where("variant_id IN (?) AND paying = ?", gone, false).Delete(&holdRow{}).Error; err != nil {
		return fmt.Errorf("release holds of removed variants: %w", err)
	}
	err := tx.Model(&variantRow{}).Where("product_id IN ? AND id NOT IN ? AND removed = ?", products, keep, false).
		Updates(map[string]any{"removed": true, "updated_at": now}).Error
	if err != nil {
		return fmt.Errorf("remove variants: %w", err)
	}
	return nil
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
