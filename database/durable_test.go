package database_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// allConns holds every connection db's pool may open at once (so that each
// is a distinct one) and answers them, released when the test ends.
func allConns(t *testing.T, db *gorm.DB) []*sql.Conn {
	t.Helper()
	pool, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	n := pool.Stats().MaxOpenConnections
	if n < 1 {
		t.Fatalf("the pool opens %d connections; want a bound", n)
	}
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := pool.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		conns[i] = c
	}
	return conns
}

// TestSQLiteCommitsAreDurable: every connection the shop opens on a SQLite
// database (each of the readers' pool, the writer's, the checkpointer's)
// syncs every commit (PRAGMA synchronous FULL, 2, or EXTRA, 3), whatever
// the DSN asks for: in WAL mode NORMAL (1) may lose the last commits to a
// power cut, which the buyer was told had happened.
func TestSQLiteCommitsAreDurable(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		dsn  func(path string) string
		want int
	}{
		{"path", func(p string) string { return p }, 2},
		{"file URI", func(p string) string { return "file:" + p + "?_journal_mode=WAL" }, 2},
		{"file URI asking for OFF", func(p string) string { return "file:" + p + "?_journal_mode=WAL&_synchronous=OFF" }, 2},
		{"file URI asking for NORMAL", func(p string) string { return "file:" + p + "?_journal_mode=WAL&_synchronous=NORMAL" }, 2},
		{"file URI asking for EXTRA", func(p string) string { return "file:" + p + "?_journal_mode=WAL&_synchronous=EXTRA" }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := dbtest.OpenDSN(t, tc.dsn(filepath.Join(t.TempDir(), "shop.db")))
			check := func(where string, q interface {
				QueryRowContext(context.Context, string, ...any) *sql.Row
			}) {
				t.Helper()
				var level int
				if err := q.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level); err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if level != tc.want {
					t.Errorf("%s: PRAGMA synchronous = %d; want %d (FULL is 2, EXTRA 3)", where, level, tc.want)
				}
			}
			// The writer, inside a transaction of the shop's.
			var level int
			if err := database.Transact(ctx, db, func(tx *gorm.DB) error {
				return tx.Raw("PRAGMA synchronous").Scan(&level).Error
			}); err != nil {
				t.Fatal(err)
			}
			if level != tc.want {
				t.Errorf("Transact's connection: PRAGMA synchronous = %d; want %d", level, tc.want)
			}
			check("the writer's connection", database.WriterConn(db))
			check("the checkpointer's connection", database.CheckpointerConn(db))
			for i, c := range allConns(t, db) {
				check(fmt.Sprintf("pooled connection %d", i+1), c)
			}
		})
	}
}

// TestPostgresCommitsAreDurable: the shop's PostgreSQL sessions commit
// synchronously (synchronous_commit on), and Open warns when an operator
// turned it off.
func TestPostgresCommitsAreDurable(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.DSN(t, database.Postgres)
	var logs bytes.Buffer
	db, err := database.Open(ctx, dsn, &database.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	for i, c := range allConns(t, db) {
		var mode string
		if err := c.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "on" {
			t.Errorf("connection %d: synchronous_commit = %q; want on", i+1, mode)
		}
	}
	if strings.Contains(logs.String(), "synchronous_commit") {
		t.Errorf("a warning with synchronous_commit on: %s", logs.String())
	}

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("synchronous_commit", "off") // an operator's setting, as a run-time parameter
	u.RawQuery = q.Encode()
	logs.Reset()
	off, err := database.Open(ctx, u.String(), &database.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(off) })
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "synchronous_commit=off") {
		t.Errorf("Open with synchronous_commit off logged %q; want a warning naming it", got)
	}
}
