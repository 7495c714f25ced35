-- The buyer of each checkout session, for the limits on what one buyer may
-- hold at once and for a buyer's own holds never blocking them: buyer_key is
-- who created the session (shop.Buyer.Key: "subject:…" for the host's
-- anonymous user id, "addr:…" for the client's address, '' when nobody is
-- known, as over stdio) and never changes; buyer_email is the session's
-- buyer email in lower case ('' without one), kept with the buyer.
--
-- Sessions made before this migration have neither: they share nothing with
-- other sessions and expire within their lifetime.

-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN buyer_key TEXT NOT NULL DEFAULT '';
ALTER TABLE checkout_sessions ADD COLUMN buyer_email TEXT NOT NULL DEFAULT '';
CREATE INDEX checkout_sessions_buyer ON checkout_sessions (buyer_key, status);
CREATE INDEX checkout_sessions_buyer_email ON checkout_sessions (buyer_email, status);

-- +goose Down
DROP INDEX checkout_sessions_buyer_email;
DROP INDEX checkout_sessions_buyer;
ALTER TABLE checkout_sessions DROP COLUMN buyer_email;
ALTER TABLE checkout_sessions DROP COLUMN buyer_key;
