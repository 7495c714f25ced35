-- An order keeps how its session displayed its figures (checkout's
-- Display: prices with tax included or not, and the tax's name), as JSON,
-- so that its receipt, its emails and its texts show them the same way;
-- '' for orders placed before, shown with tax as its own line.

-- +goose Up
ALTER TABLE orders ADD COLUMN display TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE orders DROP COLUMN display;
