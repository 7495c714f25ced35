-- Retention of ended checkout sessions: the sweeper deletes the sessions
-- canceled or expired longer ago than the policy's sessions.retention_days
-- (their updated_at is when they ended), with their stock holds, payment
-- links and payment attempts, keeping every session with an order or a
-- surplus payment. These indexes let it find them, and check the surplus
-- payments of each, without reading the tables whole.
--
-- A payment attempt keeps its payment token only while its outcome is
-- unknown: settling it clears the token (the reconciler asks the provider
-- by idempotency key, and staff keep the provider's reference). The tokens
-- of the attempts settled before are cleared here.

-- +goose Up
CREATE INDEX checkout_sessions_ended ON checkout_sessions (status, updated_at);
CREATE INDEX surplus_payments_session ON surplus_payments (session_id);
UPDATE payment_attempts SET token = '' WHERE status <> 'pending';

-- +goose Down
DROP INDEX surplus_payments_session;
DROP INDEX checkout_sessions_ended;
