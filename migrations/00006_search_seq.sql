-- The search index carries each product's seq, the order searches rank ties
-- and page by, so that a search reads the index (term, product_seq, weight)
-- alone and joins products only for its filters and for the page it returns.
-- product_id stays, for deletes when a product is imported again; a
-- product's seq never changes once given.

-- +goose Up
ALTER TABLE product_terms ADD COLUMN product_seq BIGINT NOT NULL DEFAULT 0;
UPDATE product_terms SET product_seq = (SELECT seq FROM products WHERE products.id = product_terms.product_id);
CREATE INDEX product_terms_seq ON product_terms (term, product_seq, weight);
-- Fresh statistics, so that the planner uses the new index at once.
ANALYZE product_terms;

-- +goose Down
DROP INDEX product_terms_seq;
ALTER TABLE product_terms DROP COLUMN product_seq;
