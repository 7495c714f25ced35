// Package dbtest gives tests a fresh, migrated database of their own: a SQLite
// file in t.TempDir(), or a PostgreSQL database created for the test and
// dropped after it, so that packages' tests can run in parallel.
//
// PostgreSQL is found at $SHOP_TEST_POSTGRES (default
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable). When it cannot be
// reached the PostgreSQL half of a test is skipped, unless CI=true, where it
// fails.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database"
)

// DefaultPostgres is the server tests use when SHOP_TEST_POSTGRES is unset.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Dialects lists the engines every storage test runs on.
var Dialects = []database.Dialect{database.SQLite, database.Postgres}

// Each runs f as a subtest once per engine, each with a fresh migrated database.
func Each(t *testing.T, f func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) {
			f(t, Open(t, d))
		})
	}
}

// Open returns a fresh migrated database of the given engine, closed (and,
// for PostgreSQL, dropped) when the test ends.
func Open(t testing.TB, d database.Dialect) *gorm.DB {
	t.Helper()
	return OpenDSN(t, DSN(t, d))
}

// OpenDSN opens and migrates the database at dsn (from DSN), closed when the
// test ends: a second handle on one database is a second replica's.
func OpenDSN(t testing.TB, dsn string) *gorm.DB {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	if _, err := database.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	return db
}

// DSN returns the DSN of a new empty database of the given engine: a file in
// t.TempDir() for SQLite, a newly created database for PostgreSQL.
func DSN(t testing.TB, d database.Dialect) string {
	t.Helper()
	if d == database.SQLite {
		return filepath.Join(t.TempDir(), "shop.db")
	}
	base := os.Getenv("SHOP_TEST_POSTGRES")
	if base == "" {
		base = DefaultPostgres
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := database.Open(ctx, base, nil)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required under CI=true: %v", err)
		}
		t.Skipf("PostgreSQL not reachable (set SHOP_TEST_POSTGRES): %v", err)
	}
	defer func() { _ = database.Close(admin) }()

	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "shop_test_" + hex.EncodeToString(b[:])
	if err := admin.WithContext(ctx).Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := database.Open(ctx, base, nil)
		if err != nil {
			t.Logf("drop test database %s: %v", name, err)
			return
		}
		defer func() { _ = database.Close(admin) }()
		if err := admin.WithContext(ctx).Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error; err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("SHOP_TEST_POSTGRES: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
