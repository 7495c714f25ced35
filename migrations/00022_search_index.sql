-- The search index carries each product's lowest price and lowest price
-- in stock (products.min_price, products.min_stocked_price, migration
-- 00016), and its index product_terms_seq carries them too, so that the
-- exact total of a word under a price cap, in stock, or both is counted in
-- the word's range of that index alone, instead of a probe of
-- products_facts for every match of the word. (Indexes of their own,
-- (term, min_price) and (term, min_stocked_price), counted a narrower range
-- but took their rows in random order: a 100,000-product import took twice
-- as long.) The catalog rewrites them with the products' facts
-- (catalog/facts.go), in the same transaction.
--
-- term_postings holds each term's rows of product_terms in one text,
-- "seq:weight,…" in seq order, so that several words without filters are
-- intersected by a merge of their postings (catalog/postings.go) instead of
-- an index seek per product of the rarest word. The import rewrites the
-- postings of the terms whose rows it changes, in its transaction.

-- +goose Up
ALTER TABLE product_terms ADD COLUMN min_price BIGINT;
ALTER TABLE product_terms ADD COLUMN min_stocked_price BIGINT;
UPDATE product_terms SET min_price = p.min_price, min_stocked_price = p.min_stocked_price
FROM products p WHERE p.id = product_terms.product_id;
DROP INDEX product_terms_seq;
CREATE INDEX product_terms_seq ON product_terms (term, product_seq, weight, min_price, min_stocked_price);
ANALYZE product_terms;
CREATE TABLE term_postings (
    term     TEXT NOT NULL PRIMARY KEY,
    postings TEXT NOT NULL
);
INSERT INTO term_postings (term, postings)
SELECT term, string_agg(CAST(product_seq AS TEXT) || ':' || CAST(weight AS TEXT), ',' ORDER BY product_seq)
FROM product_terms GROUP BY term;

-- +goose Down
DROP TABLE term_postings;
DROP INDEX product_terms_seq;
CREATE INDEX product_terms_seq ON product_terms (term, product_seq, weight);
ALTER TABLE product_terms DROP COLUMN min_stocked_price;
ALTER TABLE product_terms DROP COLUMN min_price;
