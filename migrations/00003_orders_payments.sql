-- Completion: payment attempts (each with its idempotency key, written before
-- the provider is called), orders with their lines, the audit log, the
-- sandbox provider's own records, counters and settings.

-- +goose Up
CREATE TABLE payment_attempts (
    id              TEXT      NOT NULL PRIMARY KEY,
    session_id      TEXT      NOT NULL REFERENCES checkout_sessions (id),
    attempt         INTEGER   NOT NULL,
    idempotency_key TEXT      NOT NULL UNIQUE,
    provider        TEXT      NOT NULL,
    mode            TEXT      NOT NULL,
    token           TEXT      NOT NULL,
    amount          BIGINT    NOT NULL CHECK (amount >= 0),
    currency        TEXT      NOT NULL,
    status          TEXT      NOT NULL,
    reference       TEXT      NOT NULL DEFAULT '',
    decline_code    TEXT      NOT NULL DEFAULT '',
    message         TEXT      NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    UNIQUE (session_id, attempt)
);
CREATE INDEX payment_attempts_status ON payment_attempts (status, updated_at);

CREATE TABLE counters (
    name  TEXT   NOT NULL PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO counters (name, value) VALUES ('order_number', 1000);

CREATE TABLE settings (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE orders (
    id                  TEXT      NOT NULL PRIMARY KEY,
    number              BIGINT    NOT NULL UNIQUE,
    checkout_session_id TEXT      NOT NULL UNIQUE REFERENCES checkout_sessions (id),
    status              TEXT      NOT NULL,
    email               TEXT      NOT NULL,
    buyer               TEXT      NOT NULL,
    address             TEXT      NOT NULL,
    fulfillment_option  TEXT      NOT NULL,
    totals              TEXT      NOT NULL,
    links               TEXT      NOT NULL,
    currency            TEXT      NOT NULL,
    total               BIGINT    NOT NULL CHECK (total >= 0),
    payment_provider    TEXT      NOT NULL,
    payment_mode        TEXT      NOT NULL,
    payment_reference   TEXT      NOT NULL,
    payment_status      TEXT      NOT NULL,
    created_at          TIMESTAMP NOT NULL,
    updated_at          TIMESTAMP NOT NULL
);
CREATE INDEX orders_email ON orders (email, created_at);
CREATE INDEX orders_created ON orders (created_at);

CREATE TABLE order_lines (
    order_id    TEXT    NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    line_id     TEXT    NOT NULL,
    variant_id  TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    images      TEXT    NOT NULL,
    quantity    BIGINT  NOT NULL CHECK (quantity > 0),
    unit_amount BIGINT  NOT NULL,
    base_amount BIGINT  NOT NULL,
    discount    BIGINT  NOT NULL,
    subtotal    BIGINT  NOT NULL,
    tax         BIGINT  NOT NULL,
    total       BIGINT  NOT NULL,
    PRIMARY KEY (order_id, position)
);

CREATE TABLE audit_events (
    id         TEXT      NOT NULL PRIMARY KEY,
    at         TIMESTAMP NOT NULL,
    actor      TEXT      NOT NULL,
    action     TEXT      NOT NULL,
    order_id   TEXT      NOT NULL DEFAULT '',
    session_id TEXT      NOT NULL DEFAULT '',
    arguments  TEXT      NOT NULL DEFAULT '',
    before     TEXT      NOT NULL DEFAULT '',
    after      TEXT      NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_order ON audit_events (order_id, at);
CREATE INDEX audit_events_at ON audit_events (at);

CREATE TABLE sandbox_charges (
    idempotency_key TEXT      NOT NULL PRIMARY KEY,
    request_hash    TEXT      NOT NULL,
    reference       TEXT      NOT NULL UNIQUE,
    status          TEXT      NOT NULL,
    decline_code    TEXT      NOT NULL DEFAULT '',
    message         TEXT      NOT NULL DEFAULT '',
    amount          BIGINT    NOT NULL,
    currency        TEXT      NOT NULL,
    refunded        BIGINT    NOT NULL DEFAULT 0,
    created_at      TIMESTAMP NOT NULL
);

CREATE TABLE sandbox_refunds (
    idempotency_key TEXT      NOT NULL PRIMARY KEY,
    request_hash    TEXT      NOT NULL,
    reference       TEXT      NOT NULL UNIQUE,
    charge          TEXT      NOT NULL REFERENCES sandbox_charges (reference),
    amount          BIGINT    NOT NULL CHECK (amount > 0),
    created_at      TIMESTAMP NOT NULL
);

-- +goose Down
DROP TABLE sandbox_refunds;
DROP TABLE sandbox_charges;
DROP TABLE audit_events;
DROP TABLE order_lines;
DROP TABLE orders;
DROP TABLE settings;
DROP TABLE counters;
DROP TABLE payment_attempts;
