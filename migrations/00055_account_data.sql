-- A linked buyer's own data (CONTRACT.md §10).
--
-- orders.account_id is the account whose checkout session made the order,
-- NULL for a guest's. It has no foreign key: an order must be written once
-- the payment succeeded whatever happened to the account meanwhile, so
-- orders.Create sets it only to an account that still exists, and deleting
-- an account clears it on the account's orders in the same transaction. The
-- order keeps its own email for the merchant's books.
--
-- account_addresses are an account's saved shipping addresses (the contract's
-- Address as JSON), at most one of them the default; deleting the account
-- deletes them.

-- +goose Up
ALTER TABLE orders ADD COLUMN account_id TEXT;
CREATE INDEX orders_account ON orders (account_id, created_at);

CREATE TABLE account_addresses (
	id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
	address TEXT NOT NULL,
	is_default BOOLEAN NOT NULL DEFAULT FALSE,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX account_addresses_account ON account_addresses (account_id, created_at);
CREATE UNIQUE INDEX account_addresses_default ON account_addresses (account_id) WHERE is_default;

-- +goose Down
DROP TABLE account_addresses;
DROP INDEX orders_account;
ALTER TABLE orders DROP COLUMN account_id;
