-- Order administration: what has been refunded and fulfilled, refunds (each
-- recorded with its idempotency key before the provider is called),
-- fulfilments, notes, and the single-use confirmation tokens of two-step
-- actions.

-- +goose Up
ALTER TABLE orders ADD COLUMN refunded BIGINT NOT NULL DEFAULT 0;
ALTER TABLE order_lines ADD COLUMN fulfilled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE order_lines ADD COLUMN restocked BIGINT NOT NULL DEFAULT 0;

CREATE TABLE refunds (
    id              TEXT      NOT NULL PRIMARY KEY,
    order_id        TEXT      NOT NULL REFERENCES orders (id),
    amount          BIGINT    NOT NULL CHECK (amount > 0),
    reason          TEXT      NOT NULL,
    idempotency_key TEXT      NOT NULL UNIQUE,
    status          TEXT      NOT NULL,
    reference       TEXT      NOT NULL DEFAULT '',
    actor           TEXT      NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL
);
CREATE INDEX refunds_order ON refunds (order_id);
CREATE INDEX refunds_created ON refunds (created_at);

CREATE TABLE fulfilments (
    id              TEXT      NOT NULL PRIMARY KEY,
    order_id        TEXT      NOT NULL REFERENCES orders (id),
    carrier         TEXT      NOT NULL,
    tracking_number TEXT      NOT NULL,
    tracking_url    TEXT      NOT NULL DEFAULT '',
    lines           TEXT      NOT NULL,
    actor           TEXT      NOT NULL,
    created_at      TIMESTAMP NOT NULL
);
CREATE INDEX fulfilments_order ON fulfilments (order_id);

CREATE TABLE order_notes (
    id         TEXT      NOT NULL PRIMARY KEY,
    order_id   TEXT      NOT NULL REFERENCES orders (id),
    actor      TEXT      NOT NULL,
    note       TEXT      NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX order_notes_order ON order_notes (order_id);

CREATE TABLE confirm_tokens (
    token_hash TEXT      NOT NULL PRIMARY KEY,
    actor      TEXT      NOT NULL,
    tool       TEXT      NOT NULL,
    args_hash  TEXT      NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    used_at    TIMESTAMP
);

-- +goose Down
DROP TABLE confirm_tokens;
DROP TABLE order_notes;
DROP TABLE fulfilments;
DROP TABLE refunds;
ALTER TABLE order_lines DROP COLUMN restocked;
ALTER TABLE order_lines DROP COLUMN fulfilled;
ALTER TABLE orders DROP COLUMN refunded;
