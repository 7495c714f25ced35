-- A cart converts to one checkout while that checkout is incomplete (UCP's
-- cart capability): checkout_id names the session made from the cart, and a
-- conversion claims it with a conditional UPDATE on the value it read, so
-- agents converting the same cart at once get the one session.

-- +goose Up
ALTER TABLE carts ADD COLUMN checkout_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE carts DROP COLUMN checkout_id;
