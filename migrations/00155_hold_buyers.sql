-- A stock hold records its buyer (docs/architecture.md, "Stock and holds"):
-- the key the session was created by, its buyer email (lower case), its
-- client address and IPv6 /48, and whether the buyer is trusted (a linked
-- account that had paid). The limits on what one buyer, address, network
-- and the unverified buyers together may hold are then answered from
-- stock_holds alone, in the statement that reads the items being held.
-- Each partial index holds the holds of buyers that have the column.
-- The sessions' buyer indexes served only the reads of a buyer's other
-- sessions, which now go through their holds.

-- +goose Up
ALTER TABLE stock_holds ADD COLUMN buyer_key TEXT NOT NULL DEFAULT '';
ALTER TABLE stock_holds ADD COLUMN buyer_email TEXT NOT NULL DEFAULT '';
ALTER TABLE stock_holds ADD COLUMN buyer_address TEXT NOT NULL DEFAULT '';
ALTER TABLE stock_holds ADD COLUMN buyer_network TEXT NOT NULL DEFAULT '';
ALTER TABLE stock_holds ADD COLUMN trusted BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE stock_holds SET
  buyer_key = COALESCE((SELECT s.buyer_key FROM checkout_sessions s WHERE s.id = stock_holds.holder), ''),
  buyer_email = COALESCE((SELECT s.buyer_email FROM checkout_sessions s WHERE s.id = stock_holds.holder), ''),
  buyer_address = COALESCE((SELECT s.buyer_address FROM checkout_sessions s WHERE s.id = stock_holds.holder), ''),
  buyer_network = COALESCE((SELECT s.buyer_network FROM checkout_sessions s WHERE s.id = stock_holds.holder), ''),
  trusted = COALESCE((SELECT s.trusted FROM checkout_sessions s WHERE s.id = stock_holds.holder), FALSE);
CREATE INDEX stock_holds_buyer_key ON stock_holds (buyer_key) WHERE buyer_key <> '';
CREATE INDEX stock_holds_buyer_email ON stock_holds (buyer_email) WHERE buyer_email <> '';
CREATE INDEX stock_holds_buyer_address ON stock_holds (buyer_address) WHERE buyer_address <> '';
CREATE INDEX stock_holds_buyer_network ON stock_holds (buyer_network) WHERE buyer_network <> '';
DROP INDEX checkout_sessions_buyer;
DROP INDEX checkout_sessions_buyer_email;

-- +goose Down
CREATE INDEX checkout_sessions_buyer_email ON checkout_sessions (buyer_email) WHERE status = 'ready_for_payment';
CREATE INDEX checkout_sessions_buyer ON checkout_sessions (buyer_key) WHERE status IN ('ready_for_payment', 'in_progress');
DROP INDEX stock_holds_buyer_network;
DROP INDEX stock_holds_buyer_address;
DROP INDEX stock_holds_buyer_email;
DROP INDEX stock_holds_buyer_key;
ALTER TABLE stock_holds DROP COLUMN trusted;
ALTER TABLE stock_holds DROP COLUMN buyer_network;
ALTER TABLE stock_holds DROP COLUMN buyer_address;
ALTER TABLE stock_holds DROP COLUMN buyer_email;
ALTER TABLE stock_holds DROP COLUMN buyer_key;
