-- The buyer's language (a BCP 47 tag from the host's locale or the payment
-- page's Accept-Language): a session keeps the last one it was called
-- with, and its order keeps it, so that the order's emails are written in
-- it; '' when none was known (the emails are then in English).

-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN locale TEXT NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN locale TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE orders DROP COLUMN locale;
ALTER TABLE checkout_sessions DROP COLUMN locale;
