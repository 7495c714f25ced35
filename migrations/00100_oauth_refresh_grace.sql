-- A refresh token exchanged for a new one stays usable for a short grace
-- (accounts.refreshGrace) from its first exchange, so that two workers of
-- one host refreshing at once both succeed; rotated_at is when that was.
-- A use after the grace is a reuse: it revokes the token's family.

-- +goose Up
ALTER TABLE oauth_grants ADD COLUMN rotated_at TIMESTAMP;

-- +goose Down
ALTER TABLE oauth_grants DROP COLUMN rotated_at;
