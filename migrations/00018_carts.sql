-- Carts: a buyer's basket as the Universal Commerce Protocol's cart
-- capability keeps it (/ucp/mcp). A cart is priced from the catalog every
-- time it is read but holds no stock; a checkout made from it takes the
-- holds, with the limits of /mcp. items holds the lines as sent (JSON);
-- status is open or canceled; a cart is gone for good after expires_at.

-- +goose Up
CREATE TABLE carts (
	id TEXT PRIMARY KEY,
	status TEXT NOT NULL,
	currency TEXT NOT NULL,
	items TEXT NOT NULL,
	buyer TEXT NOT NULL DEFAULT '',
	promo_code TEXT NOT NULL DEFAULT '',
	buyer_key TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL,
	expires_at TIMESTAMP NOT NULL
);
CREATE INDEX carts_expires_at ON carts (expires_at);

-- +goose Down
DROP TABLE carts;
