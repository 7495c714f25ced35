package database

import (
	"fmt"
	"strconv"

	"gorm.io/gorm"
)

// GrowPageCache lets the SQLite connection that tx, a transaction Transact
// gave, runs on keep up to kib KiB of pages in its cache, and returns the
// function that sets the cache back to what it was; call it before the
// transaction's function returns. On PostgreSQL it does nothing.
//
// A connection's cache holds 2 MiB of pages (SQLite's default, enough for the
// shop's short transactions). A transaction that changes more pages than
// that, such as a catalog import, spills the surplus into the write-ahead log
// before it commits and reads it back from there each time it changes a page
// again, which can take most of a large import's time. Setting it back does
// not drop a page the transaction changed: SQLite keeps those until the
// commit, and gives the memory back as it reuses the cache afterwards.
func GrowPageCache(tx *gorm.DB, kib int) (restore func() error, err error) {
	if DialectOfDB(tx) != SQLite {
		return func() error { return nil }, nil
	}
	var was int64
	if err := QueryRow(tx, "PRAGMA cache_size").Scan(&was); err != nil {
		return nil, fmt.Errorf("read the page cache's size: %w", err)
	}
	if _, err := Exec(tx, "PRAGMA cache_size = -"+strconv.Itoa(kib)); err != nil {
		return nil, fmt.Errorf("grow the page cache: %w", err)
	}
	return func() error {
		if _, err := Exec(tx, "PRAGMA cache_size = "+strconv.FormatInt(was, 10)); err != nil {
			return fmt.Errorf("set the page cache back: %w", err)
		}
		return nil
	}, nil
}
