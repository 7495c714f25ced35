-- The sandbox keeps each charge's metadata (the checkout session, the
-- idempotency key), as Stripe does, so that the reconciler can find a
-- sandbox payment the shop has no attempt for and settle it; and finds the
-- charges of the last days by their time.

-- +goose Up
ALTER TABLE sandbox_charges ADD COLUMN metadata TEXT NOT NULL DEFAULT '';
CREATE INDEX sandbox_charges_created ON sandbox_charges (created_at);

-- +goose Down
DROP INDEX sandbox_charges_created;
ALTER TABLE sandbox_charges DROP COLUMN metadata;
