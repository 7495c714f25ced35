-- The origins (scheme://host[:port]) that products' absolute image URLs load
-- from, theirs and their variants', one row per product and origin: the
-- widgets' CSP names them. The import writes a product's rows with the
-- product; the CSP reads the distinct origins one index seek at a time, so
-- its cost does not grow with the catalog.
--
-- A catalog imported before this table has its origins computed by the
-- shop at start (catalog.ResolveImageOrigins): portable SQL cannot parse the
-- images' JSON, so this migration only marks the products that have an
-- absolute image with an empty origin.

-- +goose Up
CREATE TABLE product_image_origins (
    origin     TEXT NOT NULL,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    PRIMARY KEY (origin, product_id)
);
CREATE INDEX product_image_origins_product ON product_image_origins (product_id);
INSERT INTO product_image_origins (origin, product_id)
SELECT '', p.id FROM products p
WHERE p.images LIKE '%"https://%'
   OR EXISTS (SELECT 1 FROM variants v WHERE v.product_id = p.id AND v.image LIKE 'https://%');

-- +goose Down
DROP TABLE product_image_origins;
