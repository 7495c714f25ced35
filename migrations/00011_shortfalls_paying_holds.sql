-- A charge always ends as an order or a refund.
--
-- An order is written from the session's priced snapshot once the provider
-- says it charged, whatever happened to the catalog since; where the stock on
-- hand no longer covers a line, the order takes what there is and records the
-- units it could not take: order_lines.short_quantity per line, and their sum
-- on the order (orders.short_units), which staff filter on.
--
-- The holds of a session being paid (in_progress) are marked paying: stock
-- never goes below them by adjust_inventory or an import. Holds of sessions
-- being paid when this runs are marked.
--
-- A variant that a re-import leaves out but that a paying hold or an order
-- line refers to is kept, marked removed: it is no longer sold or shown, and
-- its id still resolves (a refund restocks it, a payment in flight completes).

-- +goose Up
ALTER TABLE order_lines ADD COLUMN short_quantity BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN short_units BIGINT NOT NULL DEFAULT 0;
ALTER TABLE stock_holds ADD COLUMN paying BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE variants ADD COLUMN removed BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX stock_holds_paying ON stock_holds (variant_id, paying);
UPDATE stock_holds SET paying = TRUE
WHERE holder IN (SELECT id FROM checkout_sessions WHERE status = 'in_progress');

-- +goose Down
DROP INDEX stock_holds_paying;
ALTER TABLE variants DROP COLUMN removed;
ALTER TABLE stock_holds DROP COLUMN paying;
ALTER TABLE orders DROP COLUMN short_units;
ALTER TABLE order_lines DROP COLUMN short_quantity;
