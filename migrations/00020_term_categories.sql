-- The search index carries each product's category key, so that a word in
-- a category is one range of the index (term, category_key, weight DESC,
-- product_seq): its page is read in rank order and its total counted there,
-- instead of probing products_facts for every match of the word, or the
-- word's index for every product of the category. A product's category
-- changes only when it is imported again, which rewrites its terms.

-- +goose Up
ALTER TABLE product_terms ADD COLUMN category_key TEXT NOT NULL DEFAULT '';
UPDATE product_terms SET category_key = (SELECT category_key FROM products WHERE products.id = product_terms.product_id);
CREATE INDEX product_terms_category ON product_terms (term, category_key, weight DESC, product_seq);
ANALYZE product_terms;

-- +goose Down
DROP INDEX product_terms_category;
ALTER TABLE product_terms DROP COLUMN category_key;
