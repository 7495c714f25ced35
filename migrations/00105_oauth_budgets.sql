-- Budgets on what a stranger's unauthenticated calls store (docs/limits.md).
--
-- oauth_clients: metadata_hash is the SHA-256 of a registration's metadata,
-- unique, so that registering the same metadata again answers the same
-- client and stores nothing; address is the client address that registered
-- it, whose registrations an hour are counted; authorized_at is when the
-- client first got an authorization code: accounts.Sweep deletes a client
-- that never did a day after its registration. Clients registered before
-- this migration are counted as authorized, so none is deleted by it.
-- login_flows: the authorization request no longer waits in the database;
-- it travels, sealed, in the sign-in pages' forms, and a flow's row is
-- written only when a code is sent. Flows under way are dropped (a buyer
-- signing in at that moment starts again).

-- +goose Up
ALTER TABLE oauth_clients ADD COLUMN metadata_hash TEXT;
ALTER TABLE oauth_clients ADD COLUMN address TEXT NOT NULL DEFAULT '';
ALTER TABLE oauth_clients ADD COLUMN authorized_at TIMESTAMP;
UPDATE oauth_clients SET authorized_at = created_at;
CREATE UNIQUE INDEX oauth_clients_metadata ON oauth_clients (metadata_hash);
CREATE INDEX oauth_clients_address ON oauth_clients (address, created_at);
CREATE INDEX oauth_clients_unused ON oauth_clients (created_at) WHERE authorized_at IS NULL;
DELETE FROM login_flows;
ALTER TABLE login_flows DROP COLUMN authorize_query;

-- +goose Down
ALTER TABLE login_flows ADD COLUMN authorize_query TEXT NOT NULL DEFAULT '';
DROP INDEX oauth_clients_unused;
DROP INDEX oauth_clients_address;
DROP INDEX oauth_clients_metadata;
ALTER TABLE oauth_clients DROP COLUMN authorized_at;
ALTER TABLE oauth_clients DROP COLUMN address;
ALTER TABLE oauth_clients DROP COLUMN metadata_hash;
