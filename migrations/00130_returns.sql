-- Returns the buyer starts from the chat (package orders, returns.go).
-- A return names units of an order's lines (lines, JSON
-- [{line_item_id, quantity}]) and moves requested → canceled (the buyer),
-- rejected (staff) or accepted (staff; its refund is pending) → refunded.
-- order_lines.returned counts the units in returns that are not canceled
-- or rejected: a conditional update keeps it at most the units shipped, so
-- the same units are never returned twice. refunds.return_id names the
-- return a refund pays; orders.delivered_at starts the return window.

-- +goose Up
CREATE TABLE returns (
    id            TEXT PRIMARY KEY,
    order_id      TEXT NOT NULL REFERENCES orders (id),
    status        TEXT NOT NULL,
    reason        TEXT NOT NULL,
    note          TEXT NOT NULL DEFAULT '',
    lines         TEXT NOT NULL,
    refund_amount BIGINT NOT NULL CHECK (refund_amount >= 0),
    refund_id     TEXT NOT NULL DEFAULT '',
    reject_reason TEXT NOT NULL DEFAULT '',
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);
CREATE INDEX returns_order ON returns (order_id);
CREATE INDEX returns_status ON returns (status, created_at, id);
ALTER TABLE order_lines ADD COLUMN returned BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN delivered_at TIMESTAMP;
ALTER TABLE refunds ADD COLUMN return_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE refunds DROP COLUMN return_id;
ALTER TABLE orders DROP COLUMN delivered_at;
ALTER TABLE order_lines DROP COLUMN returned;
DROP TABLE returns;
