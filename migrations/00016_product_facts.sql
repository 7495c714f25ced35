-- Per-product facts for the search's filters, kept with the variants they
-- sum up (catalog/facts.go), so that in_stock_only and the price bounds are
-- index reads instead of a visit to every matching product's variants:
--
--   variant_count      the variants not removed
--   min_price          the lowest and highest price of those variants
--   max_price          (NULL when there is none)
--   min_stocked_price  the lowest and highest price of those with stock on
--   max_stocked_price  hand (NULL when none has any)
--
-- Holds are not in the facts (they expire without a write): a search checks
-- the few products with live holds variant by variant. The catalog rewrites
-- a product's facts in every transaction that changes its variants' prices,
-- removal, or stock across zero, after locking the product's row.

-- +goose Up
ALTER TABLE products ADD COLUMN variant_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE products ADD COLUMN min_price BIGINT;
ALTER TABLE products ADD COLUMN max_price BIGINT;
ALTER TABLE products ADD COLUMN min_stocked_price BIGINT;
ALTER TABLE products ADD COLUMN max_stocked_price BIGINT;
UPDATE products SET
    variant_count = (SELECT COUNT(*) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE),
    min_price = (SELECT MIN(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE),
    max_price = (SELECT MAX(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE),
    min_stocked_price = (SELECT MIN(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE AND v.stock > 0),
    max_stocked_price = (SELECT MAX(v.price) FROM variants v WHERE v.product_id = products.id AND v.removed = FALSE AND v.stock > 0);
-- A text search joins its matches to this index by seq and reads the
-- filters from it alone; browsing pages through it in seq order.
CREATE INDEX products_facts ON products (seq, category_key, min_price, max_price, min_stocked_price, max_stocked_price);
CREATE INDEX products_category_facts ON products (category_key, seq, min_price, max_price, min_stocked_price, max_stocked_price);
-- Totals of a filter alone are counts over a range of these.
CREATE INDEX products_stocked ON products (min_stocked_price, max_stocked_price, seq);
CREATE INDEX products_priced ON products (min_price, max_price, seq);
-- A single word ranks its matches in this index's order: best weight first,
-- ties in catalog order.
CREATE INDEX product_terms_rank ON product_terms (term, weight DESC, product_seq);
ANALYZE products;
ANALYZE product_terms;

-- +goose Down
DROP INDEX product_terms_rank;
DROP INDEX products_priced;
DROP INDEX products_stocked;
DROP INDEX products_category_facts;
DROP INDEX products_facts;
ALTER TABLE products DROP COLUMN max_stocked_price;
ALTER TABLE products DROP COLUMN min_stocked_price;
ALTER TABLE products DROP COLUMN max_price;
ALTER TABLE products DROP COLUMN min_price;
ALTER TABLE products DROP COLUMN variant_count;
