package database

import (
	"container/list"
	"context"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// Prepared statements kept per SQLite connection. mattn/go-sqlite3 prepares,
// runs and finalizes every statement it is given as text, and gorm gives it
// every statement as text: the shop's fixed statements (a session read by id,
// its save, the stock and hold updates, the order's inserts) were compiled by
// SQLite anew each time. Here each connection keeps the statements it ran
// last, keyed by their text, and runs them again with new arguments: the
// statements, the arguments and the results are the same, so no caller
// changes and nothing outlives the connection (nothing is cached but compiled
// SQL, which SQLite recompiles by itself when the schema changes). PostgreSQL
// needs none of this: pgx keeps a statement cache per connection.

// stmtCacheSize bounds the statements a connection keeps: the hot paths'
// statements are a few dozen; those whose text varies (IN lists of another
// length) take the least recently used places.
const stmtCacheSize = 128

// sqliteConnector opens SQLite connections that keep their statements.
type sqliteConnector struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
	// writer marks the writer's connections (writer.go), whose statements
	// are refused once SQLite has rolled back their transaction
	// (stmtConn.gone).
	writer bool
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.driver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	lite, ok := conn.(*sqlite3.SQLiteConn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("sqlite3 driver opened a %T", conn)
	}
	// Every commit synced to disk (durable.go).
	if err := syncFully(lite); err != nil {
		_ = lite.Close()
		return nil, err
	}
	// The checkpointer (checkpoint.go) copies the log back; a connection
	// does it only when the log grows past what it should ever reach.
	for _, pragma := range []string{
		fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", fallbackCheckpointPages),
		fmt.Sprintf("PRAGMA journal_size_limit = %d", walSizeLimit),
	} {
		if _, err := lite.Exec(pragma, nil); err != nil {
			_ = lite.Close()
			return nil, fmt.Errorf("%s: %w", pragma, err)
		}
	}
	return &stmtConn{SQLiteConn: lite, stmts: map[string]*list.Element{}, lru: list.New(), writer: c.writer}, nil
}

func (c sqliteConnector) Driver() driver.Driver { return c.driver }

// stmtConn is a SQLite connection with its prepared statements. database/sql
// uses a connection from one goroutine at a time, so it needs no lock.
type stmtConn struct {
	*sqlite3.SQLiteConn
	stmts map[string]*list.Element // of *cachedStmt, by text
	lru   *list.List               // most recently used first
	// schema is the schema version (PRAGMA schema_version) the kept
	// statements were prepared under, read with schemaStmt.
	schema     int64
	schemaStmt *sqlite3.SQLiteStmt
	// writer is true on the writer's connection; inTx while a transaction
	// it began (BEGIN) has not ended by its COMMIT or ROLLBACK.
	writer, inTx bool
}

type cachedStmt struct {
	query string
	stmt  *sqlite3.SQLiteStmt
	// busy is true while rows read from the statement are open: a query of
	// the same text meanwhile (one run inside another's rows loop) is run
	// on a statement of its own.
	busy bool
	// execOK is cacheable(query, true): whether an exec of the text may
	// run the kept statement (a query's RETURNING may not).
	execOK bool
}

// cacheable reports whether a statement's text is kept: one statement
// (no ';'), of the kinds the hot paths run again and again, the writer's
// BEGIN, COMMIT and ROLLBACK among them. Savepoints (their names are
// unique), pragmas and DDL are run as text. An exec of a
// statement that returns rows (RETURNING) is not kept either: an exec steps
// it once, and a kept statement would stay active, unreset, afterwards.
func cacheable(query string, exec bool) bool {
	if len(query) > 8192 || strings.Contains(query, ";") {
		return false
	}
	verb, _, _ := strings.Cut(strings.TrimSpace(query), " ")
	switch strings.ToUpper(verb) {
	case "SELECT", "WITH":
		return !exec
	case "INSERT", "UPDATE", "DELETE":
		return !exec || !strings.Contains(strings.ToUpper(query), "RETURNING")
	case "BEGIN", "COMMIT", "ROLLBACK":
		// The writer's own, a few a commit (writer.go), run on no
		// context that can be canceled; not those that name a savepoint.
		return exec && !strings.Contains(strings.ToUpper(query), "SAVEPOINT")
	}
	return false
}

// stmt answers the connection's statement for query, preparing and keeping
// it the first time; nil when it is not to be kept or is in use.
func (c *stmtConn) stmt(ctx context.Context, query string, exec bool, args int) (*cachedStmt, error) {
	// A kept text was found cacheable when it was prepared: only a text
	// seen for the first time is read for its kind (a copy of it in upper
	// case, for an exec).
	e, kept := c.stmts[query]
	if !kept && !cacheable(query, exec) {
		return nil, nil
	}
	if strings.Contains(query, "*") {
		// SQLite recompiles a statement whose tables changed when it runs,
		// but the driver reads its columns before: a kept SELECT * would
		// answer the columns of the schema it was prepared under.
		if err := c.checkSchema(uninterrupted(ctx)); err != nil {
			return nil, err
		}
		if _, still := c.stmts[query]; kept && !still {
			return nil, nil // dropped: run as text this once, kept again next time
		}
	}
	if kept {
		cs := e.Value.(*cachedStmt)
		if cs.busy || exec && !cs.execOK {
			return nil, nil
		}
		c.lru.MoveToFront(e)
		return cs, nil
	}
	s, err := c.SQLiteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cs := &cachedStmt{query: query, stmt: s.(*sqlite3.SQLiteStmt), execOK: exec || cacheable(query, true)}
	if cs.stmt.NumInput() != args {
		_ = s.Close() // the driver's own path reports the mismatch
		return nil, nil
	}
	c.stmts[query] = c.lru.PushFront(cs)
	for c.lru.Len() > stmtCacheSize {
		c.evict(c.lru.Back())
	}
	return cs, nil
}

// checkSchema drops the kept statements when the schema changed since they
// were prepared (a migration, maybe by another process).
func (c *stmtConn) checkSchema(ctx context.Context) error {
	if c.schemaStmt == nil {
		s, err := c.SQLiteConn.PrepareContext(ctx, "PRAGMA schema_version")
		if err != nil {
			return err
		}
		c.schemaStmt = s.(*sqlite3.SQLiteStmt)
	}
	rows, err := c.schemaStmt.QueryContext(ctx, nil)
	if err != nil {
		return err
	}
	dest := make([]driver.Value, 1)
	err = rows.Next(dest)
	_ = rows.Close()
	if err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	v, _ := dest[0].(int64)
	if v != c.schema {
		for c.lru.Len() > 0 {
			c.evict(c.lru.Back())
		}
		c.schema = v
	}
	return nil
}

func (c *stmtConn) evict(e *list.Element) {
	cs := e.Value.(*cachedStmt)
	c.lru.Remove(e)
	delete(c.stmts, cs.query)
	if !cs.busy {
		_ = cs.stmt.Close()
	}
	// A busy statement is closed by its rows' Close (cachedRows).
}

// uninterrupted is ctx for a kept statement's run: not canceled with ctx.
// mattn/go-sqlite3 runs every exec, and every step of a query's rows, whose
// context can be canceled on a goroutine of its own that it can interrupt:
// a goroutine, a channel and two switches per statement and per row, for
// the hot paths' short fixed statements that a cancellation could not cut
// short anyway. A canceled request still ends there: database/sql rolls its
// transaction back, and closes its rows, once the statement running
// returns; the statements not kept (DDL, imports' batches, pragmas) stay
// interruptible. (The writer's BEGIN, which may wait for another process's
// write lock, runs on no context that can be canceled: writer.go.)
func uninterrupted(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}

// ExecContext runs query on the connection's prepared statement of it.
func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.writer {
		return c.writerExec(ctx, query, args)
	}
	return c.exec(ctx, query, args)
}

// writerExec is ExecContext on the writer's connection: it follows the
// transaction the writer begins and ends, and refuses a statement once
// SQLite has rolled that transaction back (gone).
func (c *stmtConn) writerExec(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	switch query {
	case "BEGIN IMMEDIATE":
		res, err := c.exec(ctx, query, args)
		c.inTx = err == nil
		return res, err
	case "COMMIT", "ROLLBACK":
		c.inTx = false
		return c.exec(ctx, query, args)
	}
	if c.gone() {
		return nil, ErrTransactionGone
	}
	return c.exec(ctx, query, args)
}

// gone reports whether the transaction the writer began is no more: SQLite
// rolls a whole transaction back by itself on some errors (an interrupted
// write, a trigger's RAISE(ROLLBACK), a full disk, an I/O error), and the
// connection's next statements would then each commit on their own.
func (c *stmtConn) gone() bool {
	return c.inTx && c.SQLiteConn.AutoCommit()
}

// exec runs query on the connection's prepared statement of it.
func (c *stmtConn) exec(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.stmt(ctx, query, true, len(args))
	if err != nil || cs == nil {
		if err != nil {
			return nil, err
		}
		return c.SQLiteConn.ExecContext(ctx, query, args)
	}
	return cs.stmt.ExecContext(uninterrupted(ctx), args)
}

// QueryContext runs query on the connection's prepared statement of it; the
// rows reset the statement when they close.
func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.writer && c.gone() {
		return nil, ErrTransactionGone
	}
	cs, err := c.stmt(ctx, query, false, len(args))
	if err != nil || cs == nil {
		if err != nil {
			return nil, err
		}
		return c.SQLiteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.QueryContext(uninterrupted(ctx), args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{SQLiteRows: rows.(*sqlite3.SQLiteRows), conn: c, cs: cs}, nil
}

// Close finalizes the connection's statements and closes it.
func (c *stmtConn) Close() error {
	for c.lru.Len() > 0 {
		c.evict(c.lru.Back())
	}
	if c.schemaStmt != nil {
		_ = c.schemaStmt.Close()
	}
	return c.SQLiteConn.Close()
}

// cachedRows are rows of a kept statement: closing them resets it (the
// driver's Close) and frees it for the next run.
type cachedRows struct {
	*sqlite3.SQLiteRows
	conn *stmtConn
	cs   *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.SQLiteRows.Close()
	if r.cs != nil {
		r.cs.busy = false
		if e, kept := r.conn.stmts[r.cs.query]; !kept || e.Value != r.cs {
			_ = r.cs.stmt.Close() // evicted while its rows were open
		}
		r.cs = nil
	}
	return err
}
