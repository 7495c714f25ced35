-- Fewer index entries written per purchase. SQLite rewrites the entry of
-- every index that holds a column a statement sets, and a session's status
-- was in all five indexes of checkout_sessions: each status change wrote
-- them all. Each index below holds only the sessions its query reads, in
-- the statuses the query names (partial indexes: a session enters and
-- leaves them with its status and is written to no other), and its queries
-- name the same statuses as literals, as they must for SQLite and
-- PostgreSQL to use a partial index:
--   - checkout_sessions_buyer: a buyer's sessions that hold stock (ready or
--     being paid), for the limits on what one buyer may hold;
--   - checkout_sessions_buyer_email: the sessions ready for payment of an
--     email, the same limits;
--   - checkout_sessions_ended: the canceled and expired sessions, by when
--     they ended, for the retention sweep, which reads one status at a time
--     (PostgreSQL drops the statuses the index's condition implies from the
--     range it reads, and ranges over the one named apart).
-- checkout_sessions_expiry stays whole: the sweeper reads it for the open
-- sessions past their expiry, and the metrics count sessions by status in it.
-- checkout_sessions_promo goes: nothing has read sessions by promotion code
-- since promotion_uses counts the uses (00008).
--
-- stock_holds_paying holds the holds being paid only, the ones its queries
-- sum (what adjust_inventory and an import may not take): taking, extending
-- and releasing a hold that is not being paid no longer writes it. And
-- stock_holds_variant leaves out expires_at, which moves with every change
-- of a session and its claim: the sums of a variant's live holds read each
-- hold's row for its quantity, and its expiry there.

-- +goose Up
DROP INDEX checkout_sessions_promo;
DROP INDEX checkout_sessions_buyer;
DROP INDEX checkout_sessions_buyer_email;
DROP INDEX checkout_sessions_ended;
CREATE INDEX checkout_sessions_buyer ON checkout_sessions (buyer_key) WHERE status IN ('ready_for_payment', 'in_progress');
CREATE INDEX checkout_sessions_buyer_email ON checkout_sessions (buyer_email) WHERE status = 'ready_for_payment';
CREATE INDEX checkout_sessions_ended ON checkout_sessions (status, updated_at) WHERE status IN ('canceled', 'expired');
DROP INDEX stock_holds_paying;
CREATE INDEX stock_holds_paying ON stock_holds (variant_id, paying) WHERE paying = TRUE;
DROP INDEX stock_holds_variant;
CREATE INDEX stock_holds_variant ON stock_holds (variant_id);

-- +goose Down
DROP INDEX stock_holds_variant;
CREATE INDEX stock_holds_variant ON stock_holds (variant_id, expires_at);
DROP INDEX stock_holds_paying;
CREATE INDEX stock_holds_paying ON stock_holds (variant_id, paying);
DROP INDEX checkout_sessions_ended;
DROP INDEX checkout_sessions_buyer_email;
DROP INDEX checkout_sessions_buyer;
CREATE INDEX checkout_sessions_ended ON checkout_sessions (status, updated_at);
CREATE INDEX checkout_sessions_buyer_email ON checkout_sessions (buyer_email, status);
CREATE INDEX checkout_sessions_buyer ON checkout_sessions (buyer_key, status);
CREATE INDEX checkout_sessions_promo ON checkout_sessions (promo_code, status);
