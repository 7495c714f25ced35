-- The search index carries each product's lowest price and lowest price
-- in stock (products.min_price, products.min_stocked_price, migration
-- 00016), so that the exact total of a word under a price cap, in stock,
-- or both, is one range count of the index (term, min_price) or (term,
-- min_stocked_price), instead of a probe of products_facts for every match
-- of the word. The catalog rewrites them with the products' facts
-- (catalog/facts.go), in the same transaction.

-- +goose Up
ALTER TABLE product_terms ADD COLUMN min_price BIGINT;
ALTER TABLE product_terms ADD COLUMN min_stocked_price BIGINT;
UPDATE product_terms SET min_price = p.min_price, min_stocked_price = p.min_stocked_price
FROM products p WHERE p.id = product_terms.product_id;
CREATE INDEX product_terms_priced ON product_terms (term, min_price);
CREATE INDEX product_terms_stocked ON product_terms (term, min_stocked_price);
ANALYZE product_terms;

-- +goose Down
DROP INDEX product_terms_stocked;
DROP INDEX product_terms_priced;
ALTER TABLE product_terms DROP COLUMN min_stocked_price;
ALTER TABLE product_terms DROP COLUMN min_price;
