-- A linked buyer's checkout session says whether its completion saves the
-- shipping address to their account (save_address; NULL for guests'
-- sessions and those made before).

-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN save_address BOOLEAN;

-- +goose Down
ALTER TABLE checkout_sessions DROP COLUMN save_address;
