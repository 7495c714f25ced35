package database_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// TestGrowPageCache: inside a transaction the connection's page cache is
// the size asked for, and once restored it is what it was, for the
// transactions after it too; on PostgreSQL it changes nothing.
func TestGrowPageCache(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		sqlite := database.DialectOfDB(db) == database.SQLite
		cacheSize := func(tx *gorm.DB) int64 {
			t.Helper()
			var n int64
			if err := database.QueryRow(tx, "PRAGMA cache_size").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		var before, during, after int64
		err := database.Transact(ctx, db, func(tx *gorm.DB) error {
			if sqlite {
				before = cacheSize(tx)
			}
			restore, err := database.GrowPageCache(tx, 8192)
			if err != nil {
				return err
			}
			if sqlite {
				during = cacheSize(tx)
			}
			return restore()
		})
		if err != nil {
			t.Fatal(err)
		}
		if !sqlite {
			return
		}
		if err := database.Transact(ctx, db, func(tx *gorm.DB) error {
			after = cacheSize(tx)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if during != -8192 {
			t.Errorf("cache_size in the transaction = %d, want -8192 (8 MiB)", during)
		}
		if after != before {
			t.Errorf("cache_size after = %d, want %d as before", after, before)
		}
	})
}
