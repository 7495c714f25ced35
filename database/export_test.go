package database

import (
	"database/sql"

	"gorm.io/gorm"
)

// WriterConn is the connection pool (of one) of db's SQLite writer; nil on
// PostgreSQL.
func WriterConn(db *gorm.DB) *sql.DB {
	if w := writerOf(db); w != nil {
		return w.conn
	}
	return nil
}

// CheckpointerConn is the connection of db's SQLite checkpointer; nil on
// PostgreSQL.
func CheckpointerConn(db *gorm.DB) *sql.DB {
	pool, err := db.DB()
	if err != nil {
		return nil
	}
	if cp, ok := checkpointers.Load(pool); ok {
		return cp.(*checkpointer).conn
	}
	return nil
}
