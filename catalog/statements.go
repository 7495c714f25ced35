package catalog

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"gorm.io/gorm"

	"shop/database"
)

// statements runs the search's queries through database/sql, below gorm,
// each prepared once per connection and kept: a search is one or two
// statements of a few shapes (the number of words, the filters asked), and
// preparing them anew was a tenth of its time on SQLite. Only statements
// are kept, never results: every search reads the database.
type statements struct {
	pool gorm.ConnPool // the handle's connections, when not a *sql.DB
	db   *sql.DB       // the pool, whose statements are kept; nil runs them unprepared
	pg   bool          // PostgreSQL: placeholders are $1, $2, …
	mu   sync.Mutex
	kept map[string]*sql.Stmt
}

// maxStatements bounds the statements kept; past it, new shapes run
// unprepared.
const maxStatements = 256

func newStatements(db *gorm.DB) *statements {
	s := &statements{pool: db.Statement.ConnPool, pg: database.DialectOfDB(db) == database.Postgres, kept: map[string]*sql.Stmt{}}
	s.db, _ = s.pool.(*sql.DB)
	return s
}

// query runs text (with ? placeholders) with args.
func (s *statements) query(ctx context.Context, text string, args []any) (*sql.Rows, error) {
	if !s.pg {
		// Not canceled with ctx: mattn/go-sqlite3 steps each row of a
		// query whose context can be canceled on a goroutine of its own,
		// and database/sql watches such rows with another; a search's
		// statements are bounded (BenchmarkSearch: a few ms at most on
		// 100,000 products), so a canceled search ends when they return.
		ctx = context.WithoutCancel(ctx)
	}
	if s.db == nil {
		return s.pool.QueryContext(ctx, s.rebind(text), args...)
	}
	s.mu.Lock()
	stmt, ok := s.kept[text]
	full := len(s.kept) >= maxStatements
	s.mu.Unlock()
	switch {
	case ok:
		return stmt.QueryContext(ctx, args...)
	case full:
		return s.db.QueryContext(ctx, s.rebind(text), args...)
	}
	prepared, err := s.db.PrepareContext(ctx, s.rebind(text))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if stmt, ok = s.kept[text]; ok { // prepared meanwhile by another search
		_ = prepared.Close()
	} else {
		s.kept[text], stmt = prepared, prepared
	}
	s.mu.Unlock()
	return stmt.QueryContext(ctx, args...)
}

// rebind numbers the placeholders for PostgreSQL (database.Numbered).
func (s *statements) rebind(text string) string {
	if !s.pg {
		return text
	}
	return database.Numbered(text)
}

// sqlText is a statement being written and its arguments, in order.
type sqlText struct {
	strings.Builder
	args []any
}

// add writes sql, whose placeholders take args.
func (s *sqlText) add(sql string, args ...any) {
	s.WriteString(sql)
	s.args = append(s.args, args...)
}
