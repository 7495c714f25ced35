-- The retention sweep of order webhooks' events (orders.SweepWebhooks,
-- notify's Outbox.Sweep) deletes the events that ended (sent, or failed:
-- given up on) and last changed before a cutoff; this index finds them
-- without reading the table.

-- +goose Up
CREATE INDEX webhook_events_ended ON webhook_events (status, updated_at);

-- +goose Down
DROP INDEX webhook_events_ended;
