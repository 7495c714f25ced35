-- Saved payment methods (issue 48): a linked buyer's cards saved with the
-- merchant's payment provider, paid with off-session in one tap.
--
-- payment_customers is the provider's customer of an account (cus_… at
-- Stripe, cus_sandbox_… in the sandbox), created when first needed; one per
-- account and provider, so a shop moved from the sandbox to Stripe makes a
-- new one. saved_cards mirrors the cards attached to that customer, with
-- what the session shows of them (brand, last four, expiry): the shop lists
-- them and checks who owns one without asking the provider. A removed card
-- keeps its row (removed_at set), so that paying with it is refused by name. Deleting the
-- account deletes both (the provider's customer stays with the merchant).
--
-- payment_attempts.customer_id is the customer a saved card is charged
-- through (off-session), '' for any other token: every try of the attempt
-- sends the same request.
--
-- sandbox_payment_methods are the sandbox's own attached payment methods
-- (pm_sandbox_…): the test card behind each, and the customer it is
-- attached to ('' once detached).

-- +goose Up
CREATE TABLE payment_customers (
	account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
	provider TEXT NOT NULL,
	customer_id TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (account_id, provider)
);

CREATE TABLE saved_cards (
	id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
	provider TEXT NOT NULL,
	customer_id TEXT NOT NULL,
	brand TEXT NOT NULL,
	last4 TEXT NOT NULL,
	exp_month INTEGER NOT NULL,
	exp_year INTEGER NOT NULL,
	created_at TIMESTAMP NOT NULL,
	removed_at TIMESTAMP
);
CREATE INDEX saved_cards_account ON saved_cards (account_id, provider, created_at);

ALTER TABLE payment_attempts ADD COLUMN customer_id TEXT NOT NULL DEFAULT '';

CREATE TABLE sandbox_payment_methods (
	id TEXT PRIMARY KEY,
	customer_id TEXT NOT NULL,
	test_card TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);

-- +goose Down
DROP TABLE sandbox_payment_methods;
ALTER TABLE payment_attempts DROP COLUMN customer_id;
DROP INDEX saved_cards_account;
DROP TABLE saved_cards;
DROP TABLE payment_customers;
