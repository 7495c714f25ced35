-- The outbox of the buyer's emails (package notify). A row is written in the
-- transaction of the change that causes it (an order placed, shipped,
-- refunded or canceled), so that a crash can neither lose it nor write it
-- twice: dedupe_key is unique (one confirmation per order, one shipping
-- notice per fulfilment, one refund notice per refund). A worker delivers
-- the rows over SMTP, claiming each with a conditional update of its status
-- (pending → sending, with a lease) so that of several replicas one sends;
-- a temporary refusal (4xx) puts it back to pending with next_at later, a
-- permanent one (5xx) ends it failed with the server's answer in last_error.
-- ref is what the email is about (an order id), for staff to list an
-- order's emails.

-- +goose Up
CREATE TABLE emails (
    id            TEXT PRIMARY KEY,
    dedupe_key    TEXT NOT NULL UNIQUE,
    ref           TEXT NOT NULL DEFAULT '',
    kind          TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    reply_to      TEXT NOT NULL DEFAULT '',
    subject       TEXT NOT NULL,
    body_text     TEXT NOT NULL,
    body_html     TEXT NOT NULL,
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
CREATE INDEX emails_due ON emails (status, next_at);
CREATE INDEX emails_ref ON emails (ref, created_at);

-- +goose Down
DROP TABLE emails;
