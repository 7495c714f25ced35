-- The catalog's version: a number every import raises in its transaction,
-- so that whatever is derived from the products (the product feed) knows,
-- whichever replica asks, whether it is still the catalog's. One row.

-- +goose Up
CREATE TABLE catalog_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL,
    changed_at TIMESTAMP NOT NULL
);
INSERT INTO catalog_version (id, version, changed_at) VALUES (1, 0, CURRENT_TIMESTAMP);

-- +goose Down
DROP TABLE catalog_version;
