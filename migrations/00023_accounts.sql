-- Buyer accounts (CONTRACT.md §10): a buyer who linked their account from a
-- host by proving their email with a one-time code. email is stored
-- lower-cased and is the account's one identity; deleting an account
-- deletes this row (and, by their foreign keys, its tokens and addresses)
-- while orders keep their own copy of the email for the merchant's books.

-- +goose Up
CREATE TABLE accounts (
	id TEXT PRIMARY KEY,
	email TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	updated_at TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX accounts_email ON accounts (email);

-- +goose Down
DROP TABLE accounts;
