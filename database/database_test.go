package database_test

import (
	"context"
	"strings"
	"testing"

	"shop/database"
	"shop/database/dbtest"
)

func TestReadyOnlyAfterMigrate(t *testing.T) {
	ctx := context.Background()
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			db, err := database.Open(ctx, dbtest.DSN(t, d), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer database.Close(db)
			if _, err := database.Ready(ctx, db); err == nil {
				t.Fatal("Ready on an unmigrated database: no error")
			}
			v, err := database.Migrate(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if v < 1 {
				t.Fatalf("schema version %d after Migrate", v)
			}
			got, err := database.Ready(ctx, db)
			if err != nil || got != v {
				t.Fatalf("Ready after Migrate = %d, %v; want %d, nil", got, err, v)
			}
			// Migrating again is a no-op.
			if again, err := database.Migrate(ctx, db); err != nil || again != v {
				t.Fatalf("second Migrate = %d, %v", again, err)
			}
		})
	}
}

func TestSQLitePragmas(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, database.SQLite)
	for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "10000"} {
		var got string
		if err := db.WithContext(ctx).Raw("PRAGMA " + pragma).Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %q, want %q", pragma, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"shop.db": "shop.db",
		"postgres://shop:s3cret@db.example.com:5432/shop?sslmode=require": "postgres://shop:xxxxx@db.example.com:5432/shop?sslmode=require",
	} {
		if got := database.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPostgresJITOff: the shop's PostgreSQL sessions run without JIT
// compilation unless the DSN asks for it.
func TestPostgresJITOff(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.DSN(t, database.Postgres)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	for _, tc := range []struct{ dsn, want string }{
		{dsn, "off"},
		{dsn + sep + "jit=on", "on"},
	} {
		db, err := database.Open(ctx, tc.dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		var jit string
		if err := db.Raw("SHOW jit").Scan(&jit).Error; err != nil {
			t.Fatal(err)
		}
		if err := database.Close(db); err != nil {
			t.Fatal(err)
		}
		if jit != tc.want {
			t.Errorf("%s: jit = %q, want %q", database.Redact(tc.dsn), jit, tc.want)
		}
	}
}
