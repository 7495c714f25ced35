-- The second tier of the accounts' budgets per client address (docs/limits.md):
-- network is the IPv6 /48 of the address that registered a client or asked
-- for a sign-in code (shop.NetworkOf), '' for an IPv4 address, and the
-- registrations an hour and the codes an hour also hold per /48, at 8
-- times an address's. The partial indexes serve those counts, which name
-- network <> '' as the indexes do.

-- +goose Up
ALTER TABLE oauth_clients ADD COLUMN network TEXT NOT NULL DEFAULT '';
ALTER TABLE login_flows ADD COLUMN network TEXT NOT NULL DEFAULT '';
CREATE INDEX oauth_clients_network ON oauth_clients (network, created_at) WHERE network <> '';
CREATE INDEX login_flows_network ON login_flows (network, created_at) WHERE network <> '';

-- +goose Down
DROP INDEX login_flows_network;
DROP INDEX oauth_clients_network;
ALTER TABLE login_flows DROP COLUMN network;
ALTER TABLE oauth_clients DROP COLUMN network;
