-- The card a payment attempt was made with, as staff need it to find a
-- payment the buyer asks about: its brand as Stripe names it (visa,
-- mastercard, amex, …) and the last four digits of its number, written with
-- the provider's answer when the attempt is settled (in the update that
-- clears its payment token). Empty when the provider did not say, and for
-- the attempts settled before this. The sandbox keeps the card of its
-- charges too, so that looking a charge up answers it again.

-- +goose Up
ALTER TABLE payment_attempts ADD COLUMN card_brand TEXT NOT NULL DEFAULT '';
ALTER TABLE payment_attempts ADD COLUMN card_last4 TEXT NOT NULL DEFAULT '';
ALTER TABLE sandbox_charges ADD COLUMN card_brand TEXT NOT NULL DEFAULT '';
ALTER TABLE sandbox_charges ADD COLUMN card_last4 TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sandbox_charges DROP COLUMN card_last4;
ALTER TABLE sandbox_charges DROP COLUMN card_brand;
ALTER TABLE payment_attempts DROP COLUMN card_last4;
ALTER TABLE payment_attempts DROP COLUMN card_brand;
