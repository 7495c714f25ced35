-- External checkout: the hosted payment pages (Stripe Checkout Sessions) made
-- for checkout sessions, and the payments that arrived when no order could
-- take them (a session paid twice, paid after it ended, a charge given up on),
-- each refunded automatically and kept here.

-- +goose Up
CREATE TABLE payment_links (
    id          TEXT      NOT NULL PRIMARY KEY,
    session_id  TEXT      NOT NULL REFERENCES checkout_sessions (id),
    provider    TEXT      NOT NULL,
    external_id TEXT      NOT NULL DEFAULT '',
    url         TEXT      NOT NULL DEFAULT '',
    amount      BIGINT    NOT NULL CHECK (amount >= 0),
    currency    TEXT      NOT NULL,
    status      TEXT      NOT NULL,
    expires_at  TIMESTAMP NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
CREATE INDEX payment_links_session ON payment_links (session_id);
CREATE INDEX payment_links_status ON payment_links (status, created_at);
CREATE INDEX payment_links_external ON payment_links (external_id);

CREATE TABLE surplus_payments (
    id               TEXT      NOT NULL PRIMARY KEY,
    session_id       TEXT      NOT NULL REFERENCES checkout_sessions (id),
    provider         TEXT      NOT NULL,
    reference        TEXT      NOT NULL UNIQUE,
    amount           BIGINT    NOT NULL CHECK (amount >= 0),
    currency         TEXT      NOT NULL,
    reason           TEXT      NOT NULL,
    status           TEXT      NOT NULL,
    refund_reference TEXT      NOT NULL DEFAULT '',
    message          TEXT      NOT NULL DEFAULT '',
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL
);
CREATE INDEX surplus_payments_status ON surplus_payments (status, updated_at);

-- +goose Down
DROP TABLE surplus_payments;
DROP TABLE payment_links;
