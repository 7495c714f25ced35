-- A refund keeps the units it puts back on sale when it succeeds, so that
-- the reconciler can settle a refund whose provider answer was lost exactly
-- as the staff member's call would have.

-- +goose Up
ALTER TABLE refunds ADD COLUMN restock TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE refunds DROP COLUMN restock;
