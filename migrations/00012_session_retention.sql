-- Retention of ended checkout sessions: the sweeper deletes the sessions
-- canceled or expired longer ago than the policy's sessions.retention_days
-- (their updated_at is when they ended), with their stock holds, payment
-- links and payment attempts, keeping every session with an order or a
-- surplus payment. These indexes let it find them, and check the surplus
-- payments of each, without reading the tables whole.

-- +goose Up
CREATE INDEX checkout_sessions_ended ON checkout_sessions (status, updated_at);
CREATE INDEX surplus_payments_session ON surplus_payments (session_id);

-- +goose Down
DROP INDEX surplus_payments_session;
DROP INDEX checkout_sessions_ended;
