package database

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// Fixed statements below gorm. gorm builds every statement from clauses and
// scans rows by reflection: about 7 KB and tens of microseconds for a
// three-row read, more than the read itself. The hot paths' fixed
// statements (the stock and holds a purchase reads and writes) run here
// through database/sql on the same connection or transaction, with the
// placeholders numbered for PostgreSQL, and their callers scan the columns
// themselves. SQLite's connections keep the prepared statements
// (sqlitestmts.go), pgx its own.

// Query runs text, with ? placeholders (one per argument: see In), in db: a
// transaction Transact gave, or the pool, on db's context (on SQLite, as
// ShortRead's: the fixed statements read a few rows by key).
func Query(db *gorm.DB, text string, args ...any) (*sql.Rows, error) {
	countStatement(db)
	return db.Statement.ConnPool.QueryContext(rowsContext(db), rebind(db, text), args...)
}

// QueryRow runs text as Query does, for one row.
func QueryRow(db *gorm.DB, text string, args ...any) *sql.Row {
	countStatement(db)
	return db.Statement.ConnPool.QueryRowContext(rowsContext(db), rebind(db, text), args...)
}

// Exec runs text as Query does and returns the rows it changed. Its errors
// are translated as gorm's (gorm.ErrDuplicatedKey for a unique key, and so
// on), as the statements gorm runs are (Open sets TranslateError).
func Exec(db *gorm.DB, text string, args ...any) (int64, error) {
	countStatement(db)
	res, err := db.Statement.ConnPool.ExecContext(context0(db), rebind(db, text), args...)
	if err != nil {
		if t, ok := db.Dialector.(gorm.ErrorTranslator); ok {
			err = t.Translate(err)
		}
		return 0, err
	}
	return res.RowsAffected()
}

// Insert writes rows into table, in one statement: each row holds a value
// for each of columns, in their order. It returns the rows written.
func Insert(db *gorm.DB, table string, columns []string, rows ...[]any) (int64, error) {
	return InsertSuffix(db, table, columns, "", rows...)
}

// InsertSuffix is Insert with suffix after the values, such as
// " ON CONFLICT DO NOTHING".
func InsertSuffix(db *gorm.DB, table string, columns []string, suffix string, rows ...[]any) (int64, error) {
	var sql strings.Builder
	sql.WriteString("INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES ")
	one := "(" + In(len(columns)) + ")"
	args := make([]any, 0, len(rows)*len(columns))
	for i, r := range rows {
		if len(r) != len(columns) {
			return 0, fmt.Errorf("insert into %s: row %d has %d values for %d columns", table, i, len(r), len(columns))
		}
		if i > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString(one)
		args = append(args, r...)
	}
	sql.WriteString(suffix)
	return Exec(db, sql.String(), args...)
}

// Counts reads rows of (id, number), such as a GROUP BY's, into a map,
// and closes them; err is the query's, as Query answers it.
func Counts(rows *sql.Rows, err error) (map[string]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// In is the placeholders of a list of n values, "?, ?, ?" for 3, to write
// inside IN (…).
func In(n int) string {
	if n <= 0 {
		return "NULL" // IN (NULL) matches nothing
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// Strings appends ids to args as values for In's placeholders.
func Strings(args []any, ids []string) []any {
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// ForUpdate is the clause that locks the rows a SELECT reads, for
// PostgreSQL: " FOR UPDATE"; SQLite has none (its transactions hold the
// write lock from their start).
func ForUpdate(db *gorm.DB) string {
	if DialectOfDB(db) == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// rowsContext is the context of a fixed statement's rows: db's, and on
// SQLite not canceled with it (ShortRead).
func rowsContext(db *gorm.DB) context.Context {
	if DialectOfDB(db) == Postgres {
		return context0(db)
	}
	return uninterrupted(context0(db))
}

// ShortRead is db for a read of a few rows by key: on SQLite, its
// statement is not canceled with db's context. database/sql watches the
// rows of a context that can be canceled on a goroutine of their own, one
// a query, to close them when it ends, and the driver steps them on one
// more: on the purchase's hot paths, a dozen goroutines a flow for reads
// that are over before a cancellation could cut them short. A SQLite read
// never waits (WAL: readers do not block, and a write transaction holds
// the write lock from its start), so nothing is lost but a few
// microseconds' wait for the rows of a request that went away.
// PostgreSQL's statements keep their context: one may wait on a row lock
// or on the network.
func ShortRead(db *gorm.DB) *gorm.DB {
	if DialectOfDB(db) == Postgres {
		return db
	}
	return db.WithContext(rowsContext(db))
}

func context0(db *gorm.DB) context.Context {
	if ctx := db.Statement.Context; ctx != nil {
		return ctx
	}
	return context.Background()
}

// rebound keeps each text's PostgreSQL form, up to maxRebound texts: the
// hot statements are few, with lists of up to a cart's lines.
var (
	rebound    sync.Map // string → string
	reboundLen atomic.Int64
)

const maxRebound = 4096

// rebind numbers text's placeholders for PostgreSQL (Numbered); SQLite
// takes them as they are.
func rebind(db *gorm.DB, text string) string {
	if DialectOfDB(db) != Postgres {
		return text
	}
	return Numbered(text)
}

// Numbered is text with its placeholders numbered $1, $2, … as PostgreSQL
// takes them. The texts hold no ? other than placeholders.
func Numbered(text string) string {
	if !strings.Contains(text, "?") {
		return text
	}
	if pg, ok := rebound.Load(text); ok {
		return pg.(string)
	}
	var sb strings.Builder
	n := 0
	for rest := text; ; {
		i := strings.IndexByte(rest, '?')
		if i < 0 {
			sb.WriteString(rest)
			break
		}
		n++
		sb.WriteString(rest[:i])
		sb.WriteString("$" + strconv.Itoa(n))
		rest = rest[i+1:]
	}
	pg := sb.String()
	if reboundLen.Load() < maxRebound {
		if _, had := rebound.LoadOrStore(text, pg); !had {
			reboundLen.Add(1)
		}
	}
	return pg
}
