// Package migrations holds the shop's schema as numbered SQL files, embedded in
// the binary and applied in order by goose (package database runs them). The
// same files serve SQLite and PostgreSQL, so they are written in portable SQL.
package migrations

import "embed"

// FS holds the migration files (NNNNN_name.sql).
//
//go:embed *.sql
var FS embed.FS
