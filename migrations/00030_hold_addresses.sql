-- The client address of each checkout session and cart, for the limits
-- that hold whatever buyer ids a client invents (checkout/addrlimits.go):
-- buyer_address is shop.Buyer.Address of the call that created the row (an
-- IPv4 address or an IPv6 /64 prefix, '' over stdio) and never changes.
-- checkout_sessions_address serves both the sum of what one address holds
-- (its sessions holding stock were all created within a session's lifetime)
-- and the sessions it created in the last hour; the buyer_key indexes the
-- sessions and carts a buyer created in the last hour.
--
-- ever_held says a session held stock at some point: the retention sweep
-- deletes ended sessions that never did after a day instead of the policy's
-- retention (checkout_sessions_unheld holds only those). Sessions made
-- before this migration count as having held stock, so keep their retention.

-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN buyer_address TEXT NOT NULL DEFAULT '';
ALTER TABLE checkout_sessions ADD COLUMN ever_held BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE carts ADD COLUMN buyer_address TEXT NOT NULL DEFAULT '';
CREATE INDEX checkout_sessions_address ON checkout_sessions (buyer_address, created_at);
CREATE INDEX checkout_sessions_buyer_created ON checkout_sessions (buyer_key, created_at);
CREATE INDEX checkout_sessions_unheld ON checkout_sessions (status, updated_at) WHERE ever_held = FALSE AND status IN ('canceled', 'expired');
CREATE INDEX carts_address ON carts (buyer_address, created_at);
CREATE INDEX carts_buyer_created ON carts (buyer_key, created_at);

-- +goose Down
DROP INDEX carts_buyer_created;
DROP INDEX carts_address;
DROP INDEX checkout_sessions_unheld;
DROP INDEX checkout_sessions_buyer_created;
DROP INDEX checkout_sessions_address;
ALTER TABLE carts DROP COLUMN buyer_address;
ALTER TABLE checkout_sessions DROP COLUMN ever_held;
ALTER TABLE checkout_sessions DROP COLUMN buyer_address;
