-- The catalog: products, their variants (price and stock on hand) and the
-- search index (one row per product and term, weighted by where the term
-- appears). Times are TIMESTAMP in UTC. Ordering uses seq, an integer, so that pages come out the same on
-- every database whatever its text collation.

-- +goose Up
CREATE TABLE products (
    id           TEXT    NOT NULL PRIMARY KEY,
    seq          BIGINT  NOT NULL UNIQUE,
    title        TEXT    NOT NULL,
    description  TEXT    NOT NULL,
    category     TEXT    NOT NULL,
    category_key TEXT    NOT NULL,
    images       TEXT    NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
CREATE INDEX products_category_key ON products (category_key, seq);

CREATE TABLE variants (
    id         TEXT    NOT NULL PRIMARY KEY,
    product_id TEXT    NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    title      TEXT    NOT NULL,
    options    TEXT    NOT NULL,
    price      BIGINT  NOT NULL CHECK (price >= 0),
    stock      BIGINT  NOT NULL CHECK (stock >= 0),
    image      TEXT    NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX variants_product ON variants (product_id, price);

CREATE TABLE product_terms (
    term       TEXT    NOT NULL,
    product_id TEXT    NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    weight     INTEGER NOT NULL,
    PRIMARY KEY (term, product_id)
);
CREATE INDEX product_terms_product ON product_terms (product_id);

-- +goose Down
DROP TABLE product_terms;
DROP TABLE variants;
DROP TABLE products;
