package catalog

import (
	"fmt"
	"slices"

	"gorm.io/gorm"

	"shop/database"
)

// A product's facts (migration 00016) sum up its variants for the search's
// filters: how many are not removed, the lowest and highest price among
// them, and the lowest and highest among those with stock on hand. They
// change only when a variant's price, removal or product changes, or its
// stock crosses zero, and every transaction that does any of these rewrites
// them (refreshFacts) before it commits: the import, the sale that takes a
// variant's last unit (Take), a restock, an adjustment to or from zero.
//
// The search index carries the lowest price and the lowest price in stock
// of its product on every row and in its index product_terms_seq
// (migration 00022), so that a word's total under those filters is counted
// in the word's range of that index: refreshFacts rewrites them
// too, on the rows of the products whose facts it changed.
//
// Holds are not among the facts: they expire with no write to mark it. A
// search that asks for stock reads the products with live holds apart
// (search_sql.go), variant by variant.
//
// Across replicas on PostgreSQL, refreshFacts first locks the products'
// rows, and only then reads their variants in a statement of its own: a
// transaction that changed the same products' variants and refreshed them
// holds those locks until it commits, so the read sees its changes, and one
// that has not refreshed yet will read this one's after it commits. The last
// to refresh a product has seen every change before its own. (On SQLite the
// write lock serializes the writers already.)

// factsSQL rewrites the facts of the products whose ids follow.
const factsSQL = `UPDATE products SET
    variant_count = (SELECT COUNT(*) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE),
    min_price = (SELECT MIN(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE),
    max_price = (SELECT MAX(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE),
    min_stocked_price = (SELECT MIN(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE AND v.stock > 0),
    max_stocked_price = (SELECT MAX(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE AND v.stock > 0)
WHERE id IN ?`

// termFactsSQL copies the facts that the search index carries from the
// products whose ids follow to their rows in product_terms, where they
// differ (a sale that leaves a cheaper variant in stock changes none).
const termFactsSQL = `UPDATE product_terms SET min_price = p.min_price, min_stocked_price = p.min_stocked_price
FROM products p
WHERE p.id = product_terms.product_id AND product_terms.product_id IN ?
    AND (product_terms.min_price IS DISTINCT FROM p.min_price OR product_terms.min_stocked_price IS DISTINCT FROM p.min_stocked_price)`

// refreshFacts rewrites the facts of the products with the given ids, and
// those their search index rows carry, in tx, after locking the products'
// rows in id order.
func refreshFacts(tx *gorm.DB, productIDs []string) error {
	if len(productIDs) == 0 {
		return nil
	}
	ids := slices.Compact(slices.Sorted(slices.Values(productIDs)))
	if database.DialectOfDB(tx) == database.Postgres {
		var locked []string
		if err := tx.Table("products").Where("id IN ?", ids).Order("id").Clauses(database.Lock()).Pluck("id", &locked).Error; err != nil {
			return fmt.Errorf("lock products: %w", err)
		}
	}
	if err := tx.Exec(factsSQL, ids).Error; err != nil {
		return fmt.Errorf("product facts: %w", err)
	}
	if err := tx.Exec(termFactsSQL, ids).Error; err != nil {
		return fmt.Errorf("product facts in the search index: %w", err)
	}
	return nil
}

// refreshFactsOf rewrites the facts of the products of the variants with
// the given ids, in tx.
func refreshFactsOf(tx *gorm.DB, variantIDs []string) error {
	if len(variantIDs) == 0 {
		return nil
	}
	var products []string
	if err := tx.Table("variants").Distinct("product_id").Where("id IN ?", variantIDs).Pluck("product_id", &products).Error; err != nil {
		return fmt.Errorf("product facts: %w", err)
	}
	return refreshFacts(tx, products)
}
