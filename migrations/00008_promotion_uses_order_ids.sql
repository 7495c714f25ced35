-- Promotion usage limits and order ids chosen before the charge.
--
-- promotion_uses counts, per promotion code, the uses that are taken: one
-- per order the promotion applied to, and one per payment in flight that
-- would make such an order. complete_checkout takes a use in the
-- transaction that claims the session, before the provider is called, by a
-- conditional update (used < the code's usage_limit); the attempt keeps the
-- code it took (payment_attempts.promo_code) and gives the use back when it
-- ends without an order (declined, failed, given up).
--
-- A session's order id is chosen with the session (checkout_sessions.order_id),
-- so that the provider receives it with the charge (PaymentIntent metadata
-- order_id); every payment attempt of the session carries it
-- (payment_attempts.order_id) and the order is written under it.
--
-- The uses already made are counted from the orders whose figures show the
-- promotion applied: a line or order discount, or free shipping (an order
-- whose shipping was free for another reason is counted too: the count errs
-- on the side of the limit).

-- +goose Up
CREATE TABLE promotion_uses (
    code TEXT   NOT NULL PRIMARY KEY,
    used BIGINT NOT NULL CHECK (used >= 0)
);

ALTER TABLE checkout_sessions ADD COLUMN order_id TEXT NOT NULL DEFAULT '';
ALTER TABLE payment_attempts ADD COLUMN order_id TEXT NOT NULL DEFAULT '';
ALTER TABLE payment_attempts ADD COLUMN promo_code TEXT NOT NULL DEFAULT '';

INSERT INTO promotion_uses (code, used)
SELECT s.promo_code, COUNT(*)
FROM orders o JOIN checkout_sessions s ON s.id = o.checkout_session_id
WHERE s.promo_code <> '' AND (
       o.totals NOT LIKE '%"type":"items_discount","display_text":"Item discounts","amount":0}%'
    OR o.totals NOT LIKE '%"type":"discount","display_text":"Discount","amount":0}%'
    OR o.totals LIKE '%"type":"fulfillment","display_text":"Shipping","amount":0}%')
GROUP BY s.promo_code;

-- +goose Down
ALTER TABLE payment_attempts DROP COLUMN promo_code;
ALTER TABLE payment_attempts DROP COLUMN order_id;
ALTER TABLE checkout_sessions DROP COLUMN order_id;
DROP TABLE promotion_uses;
