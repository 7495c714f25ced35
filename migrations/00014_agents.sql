-- Other agents' dialects (the ACP MCP binding at /acp/mcp, UCP at /ucp/mcp).
--
-- idempotency_keys keeps an agent's idempotency key and the answer it got,
-- so that a retry with the same key and the same payload gets that answer
-- again on any replica (package idempotency). A key is scoped by the dialect,
-- the calling agent and the tool; fingerprint is the SHA-256 (hex) of the
-- canonical payload. state is 'running' while the first call runs (until
-- lease_until, after which a crashed call's key may be taken over; owner
-- names the call that holds it) and 'done' once its answer is stored.
-- Answers are kept at least 24 hours from created_at, then swept.
--
-- channel says which endpoint a checkout session, and the order made from
-- it, came through: 'mcp' (the ChatGPT Apps dialect, and every row before
-- this), 'acp' or 'ucp'. Staff see it in the admin tools.

-- +goose Up
CREATE TABLE idempotency_keys (
    scope       TEXT      NOT NULL,
    idem_key    TEXT      NOT NULL,
    fingerprint TEXT      NOT NULL,
    state       TEXT      NOT NULL,
    owner       TEXT      NOT NULL,
    answer      TEXT      NOT NULL DEFAULT '',
    lease_until TIMESTAMP NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (scope, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
ALTER TABLE checkout_sessions ADD COLUMN channel TEXT NOT NULL DEFAULT 'mcp';
ALTER TABLE orders ADD COLUMN channel TEXT NOT NULL DEFAULT 'mcp';

-- +goose Down
ALTER TABLE orders DROP COLUMN channel;
ALTER TABLE checkout_sessions DROP COLUMN channel;
DROP INDEX idempotency_keys_created;
DROP TABLE idempotency_keys;
