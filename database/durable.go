package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"log/slog"

	"github.com/mattn/go-sqlite3"
)

// Durable commits. A transaction the shop committed is one a buyer was told
// about ("order confirmed") and a payment provider may have charged for, so
// it must survive a power cut, not only a crash of the process.
//
// SQLite in WAL mode with synchronous=NORMAL syncs the log only when it
// checkpoints: its documentation says a commit "might roll back following a
// power loss". With FULL it syncs the log at every commit, before COMMIT
// returns (EXTRA also syncs the directory when a log is deleted; it is kept
// when an operator's DSN asks for it). Every connection the shop opens on a
// SQLite database (the readers, the writer, the checkpointer) runs with at
// least FULL, whatever the DSN says. The writer's group commit (writer.go)
// shares one such sync among the transactions committed together.
//
// PostgreSQL is durable by default (synchronous_commit on); an operator can
// turn that off for a role, a database or the server, and Open then warns.

// synchronousFull is PRAGMA synchronous's value for FULL (EXTRA is 3).
const synchronousFull = 2

// syncFully sets a SQLite connection's synchronous to FULL unless it is
// FULL or EXTRA already.
func syncFully(conn *sqlite3.SQLiteConn) error {
	rows, err := conn.Query("PRAGMA synchronous", nil)
	if err != nil {
		return fmt.Errorf("read PRAGMA synchronous: %w", err)
	}
	level := int64(-1)
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err == nil {
		level, _ = dest[0].(int64)
	}
	_ = rows.Close()
	if level >= synchronousFull {
		return nil
	}
	if _, err := conn.Exec("PRAGMA synchronous = FULL", nil); err != nil {
		return fmt.Errorf("PRAGMA synchronous = FULL: %w", err)
	}
	return nil
}

// warnIfAsyncCommit logs a warning when PostgreSQL's synchronous_commit is
// off for the shop's sessions: then a commit returns before it is on disk,
// and the last ones before a crash of the server can vanish.
func warnIfAsyncCommit(ctx context.Context, pool *sql.DB, logger *slog.Logger) error {
	var mode string
	if err := pool.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&mode); err != nil {
		return fmt.Errorf("read synchronous_commit: %w", err)
	}
	if mode == "off" {
		if logger == nil {
			logger = slog.Default()
		}
		logger.Warn("PostgreSQL's synchronous_commit is off: a commit the shop confirmed to a buyer can be lost if the database server crashes; set it to on",
			"synchronous_commit", mode)
	}
	return nil
}
