package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"gorm.io/gorm"
)

// A SQLite database's writer: one connection for every write transaction
// (Transact) of the pool, and one goroutine that runs them on it, several
// to a commit.
//
// One connection for them all, apart from the readers, keeps its page cache:
// SQLite empties a connection's cache when it begins a transaction on a
// database another connection has committed to since, so write transactions
// spread over the reading pool would read again every page they touch.
//
// Group commit. The transactions that wait while one runs join it: the
// writer runs each one's function in turn in the same SQLite transaction and
// commits them together, up to groupMax, and each Transact returns once that
// commit is on disk (durable.go). The group shares the commit's sync of the
// log and writes once the pages several of them change (the last leaves of
// the orders, audit events and attempts).
//
// A group is all or nothing: the functions run without savepoints (a
// savepoint makes SQLite copy every page a function changes into its
// sub-journal), so when one of them fails or panics, or SQLite rolls the
// transaction back by itself on an error a function did not return
// (ErrTransactionGone), the group's transaction is rolled back and each
// function that ran in it runs again alone, in its own transaction, in the
// same order, as Transact would have run them one after the other. A
// function may thus run twice, as Transact's retries already make it; what
// it tells the world waits for the commit (AfterCommit), so that is told
// once, of what committed.
//
// The order is the database's: every SQLite transaction of the shop takes
// the database's write lock when it begins (_txlock=immediate), which keeps
// writers apart in this process and in any other. Waiting for the writer
// spares this process's writers SQLite's busy handler, which makes a writer
// that finds the lock taken sleep 1, 2, 5 … ms before it looks again, when
// the transaction ahead takes about one. PostgreSQL (row locks, writers side
// by side) has no writer.

// groupMax bounds the transactions of one commit: the first of a group
// waits for the last, each a fraction of a millisecond.
const groupMax = 8

// errWriterClosed answers the transactions that reach a closed database.
var errWriterClosed = errors.New("the database is closed")

// ErrTransactionGone answers a statement, and a transaction's function that
// returned no error, after SQLite rolled the transaction back by itself (on
// an error the function did not return): nothing of it commits.
var ErrTransactionGone = errors.New("SQLite rolled the transaction back (after an error its function did not return)")

// writers holds the writer of each SQLite pool Open opened.
var writers sync.Map // *sql.DB → *writer

// writer runs a SQLite pool's write transactions (see above).
type writer struct {
	conn *sql.DB // a pool of one connection
	// jobs hands a transaction to the writer. It has no buffer: a job
	// sent is one the writer took, to run or to refuse, never one left
	// behind when the writer stops.
	jobs chan *writeJob
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// writeJob is one try of a Transact on the writer.
type writeJob struct {
	ctx context.Context
	db  *gorm.DB
	fn  func(tx *gorm.DB) error
	// Set by the writer before it closes done.
	after    *afterCommit
	err      error
	panicked bool
	panicVal any
	done     chan struct{}
}

// openWriter opens the writer of the SQLite database c connects to and
// starts its goroutine; close stops it.
func openWriter(c sqliteConnector) *writer {
	c.writer = true
	conn := sql.OpenDB(c)
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	w := &writer{conn: conn, jobs: make(chan *writeJob), stop: make(chan struct{}), done: make(chan struct{})}
	go w.serve()
	return w
}

// writerOf is the writer of db's SQLite pool; nil when it has none
// (PostgreSQL).
func writerOf(db *gorm.DB) *writer {
	pool, ok := db.Statement.ConnPool.(*sql.DB)
	if !ok {
		return nil
	}
	if w, ok := writers.Load(pool); ok {
		return w.(*writer)
	}
	return nil
}

// close stops the writer, once the group it runs has committed, and closes
// its connection.
func (w *writer) close() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return w.conn.Close()
}

// transact is one try of Transact on the writer: it waits for the writer
// to take fn (or for ctx to end first), then for fn's commit, and answers
// what to run now that fn committed. A panic of fn's is raised here again.
func (w *writer) transact(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) (*afterCommit, error) {
	j := &writeJob{ctx: ctx, db: db, fn: fn, done: make(chan struct{})}
	select {
	case w.jobs <- j:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait to write: %w", ctx.Err())
	case <-w.stop:
		return nil, fmt.Errorf("wait to write: %w", errWriterClosed)
	}
	// Once taken, a job is run to its end or refused before it starts:
	// its caller waits, so that what it is told is what happened.
	<-j.done
	if j.panicked {
		panic(j.panicVal)
	}
	return j.after, j.err
}

// serve runs the jobs that come, a group at a time, until the writer stops.
func (w *writer) serve() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case j := <-w.jobs:
			for _, j := range w.group(j, true) { // the group failed: each alone
				w.group(j, false)
			}
		}
	}
}

// group runs first in a new transaction and, with more, the jobs that come
// while it is open, up to groupMax, then commits them and finishes each.
// When a job's function fails or panics, it rolls the transaction back and
// answers the jobs that ran when they were several, for the caller to run
// each again alone; a job that ran alone is finished with its failure.
func (w *writer) group(first *writeJob, more bool) (failed []*writeJob) {
	ctx := context.Background() // a job's context ends its wait, not a group's work
	conn, err := w.conn.Conn(ctx)
	if err != nil {
		first.fail(fmt.Errorf("wait to write: %w", err))
		return nil
	}
	defer conn.Close()
	tx, err := begin(ctx, conn)
	if err != nil {
		first.fail(err)
		return nil
	}
	var ran []*writeJob
	for j := first; j != nil; j = w.next(more, len(ran)) {
		if err := j.ctx.Err(); err != nil {
			j.fail(fmt.Errorf("wait to write: %w", err))
			continue
		}
		ran = append(ran, j)
		ok := j.run(tx)
		if ok && tx.gone() {
			// SQLite rolled back the group's transaction on an error this
			// function did not return: what ran before it is gone too.
			ok, j.err = false, ErrTransactionGone
		}
		if ok {
			continue
		}
		_ = tx.Rollback()
		if len(ran) == 1 {
			close(j.done) // it ran alone: its failure is its own
			return nil
		}
		return ran
	}
	err = tx.Commit()
	for _, j := range ran {
		if err != nil {
			j.fail(err)
		} else {
			close(j.done)
		}
	}
	return nil
}

// groupYields bounds the times the writer yields its processor, looking for
// one more job, before it commits a group: with three instead of one the
// purchase cost the shop less CPU a flow, in fewer, larger commits
// (BENCHMARKS.md).
const groupYields = 3

// next is the job waiting to join the group, if there is one and room.
// When none waits, the writer yields its processor and looks again, up to
// groupYields times, before it commits: the goroutines queued behind it (a
// request about to write, which could not run while the writer held the
// processor) then join this commit instead of beginning the next.
func (w *writer) next(more bool, n int) *writeJob {
	if !more || n >= groupMax {
		return nil
	}
	for yields := 0; ; yields++ {
		select {
		case j := <-w.jobs:
			return j
		default:
		}
		if yields == groupYields {
			return nil
		}
		runtime.Gosched()
	}
}

// run runs the job's function in tx, its time pinned now: the transaction
// it joins has the write lock, so that a transaction that commits after
// another carries a later time. It reports whether the function succeeded;
// its error or panic is kept for its Transact.
//
// The statements run on the job's context, as they would alone: a caller
// that goes away interrupts its own statement (one the driver can
// interrupt: the kept statements and the short reads by key are not,
// sqlitestmts.go and raw.go), and SQLite then rolls back the whole
// transaction, the group's other work with it; the function fails, and the
// group runs again job by job, without it.
func (j *writeJob) run(tx connTx) (ok bool) {
	j.after, j.err, j.panicked, j.panicVal = &afterCommit{}, nil, false, nil
	defer func() {
		if p := recover(); p != nil {
			j.panicked, j.panicVal = true, p
		}
	}()
	gtx := j.db.WithContext(pin(j.ctx, j.db, j.after)) // a statement of its own
	gtx.Statement.ConnPool = tx
	j.err = j.fn(gtx)
	return j.err == nil
}

// fail finishes the job with err: it did not run, or did not commit.
func (j *writeJob) fail(err error) {
	j.after, j.err, j.panicked, j.panicVal = nil, err, false, nil
	close(j.done)
}

// connTx is a write transaction on the writer's connection, begun, committed
// and rolled back by statements of its own. It is what gorm runs the jobs'
// statements on: a gorm.ConnPool, and a gorm.TxCommitter so that they know
// they are in a transaction (gorm begins none of its own, a nested
// Transaction makes a savepoint). It has no BeginTx, which would make gorm
// begin another.
//
// It is not a *sql.Tx: database/sql watches a Tx's context on a goroutine
// of its own until it ends, and the rows of every query in it on another
// each, to close them should the transaction end first; the writer ends its
// transactions itself, and spares the hot path those goroutines.
type connTx struct {
	conn *sql.Conn
}

// begin begins a write transaction on conn: BEGIN IMMEDIATE, which takes the
// database's write lock (waiting for another process's writer as the
// connection's busy timeout allows), as the DSN's _txlock=immediate makes
// the driver's BeginTx do.
func begin(ctx context.Context, conn *sql.Conn) (connTx, error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return connTx{}, fmt.Errorf("begin: %w", err)
	}
	return connTx{conn: conn}, nil
}

// Commit commits the transaction. When COMMIT fails SQLite may leave the
// transaction open; it is rolled back then, so that the connection goes
// back to its pool with none, as the driver's own Commit does.
func (t connTx) Commit() error {
	if _, err := t.conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		_ = t.Rollback()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Rollback rolls the transaction back.
func (t connTx) Rollback() error {
	_, err := t.conn.ExecContext(context.Background(), "ROLLBACK")
	return err
}

// gone reports whether SQLite has rolled the transaction back by itself
// (stmtConn.gone).
func (t connTx) gone() bool {
	gone := false
	_ = t.conn.Raw(func(dc any) error {
		if c, ok := dc.(*stmtConn); ok {
			gone = c.gone()
		}
		return nil
	})
	return gone
}

// ExecContext, QueryContext, QueryRowContext and PrepareContext run on the
// transaction's connection (gorm.ConnPool).

func (t connTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.conn.ExecContext(ctx, query, args...)
}

func (t connTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.conn.QueryContext(ctx, query, args...)
}

func (t connTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.conn.QueryRowContext(ctx, query, args...)
}

func (t connTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.conn.PrepareContext(ctx, query)
}
