-- The buyers' OAuth 2.1 authorization server (CONTRACT.md §10).
--
-- oauth_clients: clients registered dynamically (RFC 7591); clients that
-- name themselves by a metadata document's URL are fetched, not kept here.
-- oauth_grants: authorization codes, access and refresh tokens and PKCE
-- challenges, one row each, keyed by the SHA-256 of the token's signature
-- (never the token); request_id ties a grant's family together, so that
-- one refresh token used twice revokes them all. Deleting an account
-- deletes its grants.
-- login_flows: a buyer's way through the login and consent pages, keyed by
-- the SHA-256 of the flow's cookie; the one-time code and the CSRF token
-- are stored hashed too.

-- +goose Up
CREATE TABLE oauth_clients (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	redirect_uris TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL
);

CREATE TABLE oauth_grants (
	signature_hash TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	request_id TEXT NOT NULL,
	client_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
	scopes TEXT NOT NULL,
	audience TEXT NOT NULL,
	form TEXT NOT NULL,
	requested_at TIMESTAMP NOT NULL,
	expires_at TIMESTAMP NOT NULL,
	active BOOLEAN NOT NULL,
	created_at TIMESTAMP NOT NULL
);
CREATE INDEX oauth_grants_request ON oauth_grants (request_id);
CREATE INDEX oauth_grants_expires ON oauth_grants (expires_at);

CREATE TABLE login_flows (
	id_hash TEXT PRIMARY KEY,
	csrf_hash TEXT NOT NULL,
	authorize_query TEXT NOT NULL,
	client_name TEXT NOT NULL,
	email TEXT NOT NULL,
	code_hash TEXT NOT NULL,
	code_expires_at TIMESTAMP,
	tries INTEGER NOT NULL,
	account_id TEXT REFERENCES accounts (id) ON DELETE CASCADE,
	address TEXT NOT NULL,
	created_at TIMESTAMP NOT NULL,
	expires_at TIMESTAMP NOT NULL
);
CREATE INDEX login_flows_email ON login_flows (email, created_at);
CREATE INDEX login_flows_address ON login_flows (address, created_at);

-- +goose Down
DROP TABLE login_flows;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
