package dbtest

import (
	"testing"

	"gorm.io/gorm"

	"shop/database"
)

// Size is the space the database's data takes, in bytes, for a test to
// bound how much a flood of requests makes it grow: on SQLite the pages in
// use (the free list's are not), on PostgreSQL the database's files.
func Size(t testing.TB, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	query := "SELECT pg_database_size(current_database())"
	if database.DialectOfDB(db) == database.SQLite {
		query = "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()"
	}
	if err := db.Raw(query).Scan(&n).Error; err != nil {
		t.Fatalf("database size: %v", err)
	}
	return n
}
