-- Order webhooks to agents' platforms (UCP's Order Event Webhook; package
-- orders). order_webhooks is where a platform asked the shop to send a
-- session's order's events: written by ucp before it completes the session
-- (session_id), given its order_id in the order's transaction.
-- webhook_events is their outbox, written in the transaction of the change
-- that causes each event (order created, fulfilled, canceled, refunded,
-- updated), unique by dedupe_key, delivered by a worker that claims a row
-- with a conditional update and a lease, as notify delivers emails.

-- +goose Up
CREATE TABLE order_webhooks (
    session_id TEXT PRIMARY KEY,
    order_id   TEXT NOT NULL DEFAULT '',
    url        TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX order_webhooks_order ON order_webhooks (order_id);
CREATE TABLE webhook_events (
    id            TEXT PRIMARY KEY,
    dedupe_key    TEXT NOT NULL UNIQUE,
    order_id      TEXT NOT NULL,
    event         TEXT NOT NULL,
    url           TEXT NOT NULL,
    status        TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_at       TIMESTAMP NOT NULL,
    claim         TEXT NOT NULL DEFAULT '',
    claimed_until TIMESTAMP,
    last_error    TEXT NOT NULL DEFAULT '',
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL,
    sent_at       TIMESTAMP
);
CREATE INDEX webhook_events_due ON webhook_events (status, next_at);

-- +goose Down
DROP TABLE webhook_events;
DROP TABLE order_webhooks;
