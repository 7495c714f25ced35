package catalog_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"shop/catalog"
	"shop/database/dbtest"
	"shop/money"
)

// TestImportWritesUnderNoSavepoint: an import's batches of more rows than
// one INSERT takes are written straight into its transaction, with no
// savepoint around them (SQLite copies every page changed under a savepoint
// into its sub-journal first, which took half of a 100,000-product import).
func TestImportWritesUnderNoSavepoint(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var savepoints atomic.Int64
		err := db.Callback().Raw().Before("gorm:raw").Register("test:savepoints", func(tx *gorm.DB) {
			if strings.HasPrefix(strings.ToUpper(tx.Statement.SQL.String()), "SAVEPOINT") {
				savepoints.Add(1)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		c := catalog.New(db, money.MustLookup("usd"), nil)
		// 600 products: a first batch of 500 with more than the 1,000
		// variants and 4,000 index rows that one INSERT writes.
		f := generated(600)
		if err := c.Import(context.Background(), f, nil); err != nil {
			t.Fatal(err)
		}
		var variants int64
		if err := db.Table("variants").Count(&variants).Error; err != nil {
			t.Fatal(err)
		}
		if variants <= 1000 {
			t.Fatalf("the file has %d variants; the test needs more than 1,000 in its first batch", variants)
		}
		if n := savepoints.Load(); n != 0 {
			t.Errorf("the import opened %d savepoints, want none", n)
		}
	})
}
