-- Checkout: sessions and the stock they hold. A hold is live until its
-- expires_at, which moves with its session's; available stock is on hand
-- minus live holds.

-- +goose Up
CREATE TABLE stock_holds (
    holder     TEXT      NOT NULL,
    variant_id TEXT      NOT NULL REFERENCES variants (id) ON DELETE CASCADE,
    quantity   BIGINT    NOT NULL CHECK (quantity > 0),
    expires_at TIMESTAMP NOT NULL,
    PRIMARY KEY (holder, variant_id)
);
CREATE INDEX stock_holds_variant ON stock_holds (variant_id, expires_at);
CREATE INDEX stock_holds_expiry ON stock_holds (expires_at);

CREATE TABLE checkout_sessions (
    id         TEXT      NOT NULL PRIMARY KEY,
    status     TEXT      NOT NULL,
    version    BIGINT    NOT NULL,
    currency   TEXT      NOT NULL,
    items      TEXT      NOT NULL,
    buyer      TEXT      NOT NULL DEFAULT '',
    address    TEXT      NOT NULL DEFAULT '',
    option_id  TEXT      NOT NULL DEFAULT '',
    promo_code TEXT      NOT NULL DEFAULT '',
    metadata   TEXT      NOT NULL DEFAULT '',
    priced     TEXT      NOT NULL,
    total      BIGINT    NOT NULL CHECK (total >= 0),
    expires_at TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX checkout_sessions_expiry ON checkout_sessions (status, expires_at);
CREATE INDEX checkout_sessions_promo ON checkout_sessions (promo_code, status);

-- +goose Down
DROP TABLE checkout_sessions;
DROP TABLE stock_holds;
