-- The second tier of the per-address bounds (checkout/addrlimits.go):
-- buyer_network is the IPv6 /48 of the client address that created the
-- session or cart (shop.NetworkOf of buyer_address), '' for an IPv4 address
-- or none, and never changes. Every per-address bound also holds per /48 at
-- a multiple (limits.network_multiple); the partial indexes serve the sums
-- and counts per /48, which name buyer_network <> '' as the indexes do.
-- Rows from before this migration have none: they count per address only.

-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN buyer_network TEXT NOT NULL DEFAULT '';
ALTER TABLE carts ADD COLUMN buyer_network TEXT NOT NULL DEFAULT '';
CREATE INDEX checkout_sessions_network ON checkout_sessions (buyer_network, created_at) WHERE buyer_network <> '';
CREATE INDEX carts_network ON carts (buyer_network, created_at) WHERE buyer_network <> '';

-- +goose Down
DROP INDEX carts_network;
DROP INDEX checkout_sessions_network;
ALTER TABLE carts DROP COLUMN buyer_network;
ALTER TABLE checkout_sessions DROP COLUMN buyer_network;
