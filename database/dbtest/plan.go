package dbtest

import (
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop/database"
)

// Plan is the plan of query (with ? placeholders, one per argument) as the
// database explains it, one line of text per row of the explanation, for a
// test to check that a query reads the index made for it. PostgreSQL is
// told to take any index over reading a table, whose few rows it would
// otherwise read whole.
func Plan(t testing.TB, db *gorm.DB, query string, args ...any) string {
	t.Helper()
	explain := "EXPLAIN QUERY PLAN "
	if database.DialectOfDB(db) == database.Postgres {
		explain = "EXPLAIN "
	}
	var lines []string
	err := db.Transaction(func(tx *gorm.DB) error {
		if database.DialectOfDB(db) == database.Postgres {
			if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
				return err
			}
		}
		rows, err := database.Query(tx, explain+query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			var line []string
			for _, v := range vals {
				switch v := v.(type) {
				case string:
					line = append(line, v)
				case []byte:
					line = append(line, string(v))
				}
			}
			lines = append(lines, strings.Join(line, " "))
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return strings.Join(lines, "\n")
}
