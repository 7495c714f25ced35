-- An account earns trust by paying (checkout/addrlimits.go): trusted says
-- the session's buyer is a linked account that had a paid order when the
-- session was created. Only such sessions are counted by account alone;
-- every other session (a guest's, a fresh account's) counts toward its
-- client address's aggregate and the unverified share. It is set once, when
-- the session is created, and never changes. Open sessions of accounts made
-- before this migration keep the trust they had if their account has an
-- order; the others are counted as a guest's from now on.

-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN trusted BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE checkout_sessions SET trusted = TRUE
 WHERE buyer_key LIKE 'account:%'
   AND status IN ('not_ready_for_payment', 'ready_for_payment', 'in_progress')
   AND EXISTS (SELECT 1 FROM orders o WHERE o.account_id = substr(checkout_sessions.buyer_key, 9));

-- +goose Down
ALTER TABLE checkout_sessions DROP COLUMN trusted;
