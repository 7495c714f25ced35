package database

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The one way the shop runs a transaction, modelled on pkgsite's
// internal/database Transact and wtf's Tx:
//   - it pins now: the clock is read once when a try begins, and the code
//     inside reads Now(tx) instead of the clock, so every row a transaction
//     writes carries the same time;
//   - it retries, a bounded number of times, the failures that only say the
//     engine could not order the transaction against another one
//     (PostgreSQL serialization failures and deadlocks, SQLite busy and
//     locked), recognised by their codes, never their text;
//   - row locks are taken with Lock (gorm's clause.Locking, which the SQLite
//     dialect drops: a SQLite write transaction holds the database's write
//     lock from its start, database.Open sets _txlock=immediate).
//
// A transaction that is retried runs its function again from the start on a
// fresh transaction: the function must not carry what it changed in memory
// from one try to the next.

// MaxTries bounds how many times Transact runs a transaction that keeps
// failing for a retryable reason.
const MaxTries = 5

// retryPause is the pause before the n-th retry: 5, 10, 20, 40 ms.
func retryPause(n int) time.Duration { return 5 * time.Millisecond << (n - 1) }

type clockKey struct{}

type nowKey struct{}

// WithClock returns ctx whose transactions (Transact) take their time from
// clock instead of the database's (gorm.Config.NowFunc): a package with a
// clock of its own (a test's) passes it here.
func WithClock(ctx context.Context, clock func() time.Time) context.Context {
	return context.WithValue(ctx, clockKey{}, clock)
}

// Transact runs fn in a transaction of db and commits it when fn returns
// nil, else rolls it back and returns fn's error. Inside, tx carries ctx
// and the transaction's time (Now). A serialization failure, a deadlock or
// a busy SQLite database rolls the try back and runs fn again, at most
// MaxTries times in all; the last error is returned, wrapped.
//
// On SQLite, fn runs on the database's writer (writer.go): on its
// goroutine, with the transactions that wait beside it in one commit, and
// again alone when one of them fails; Transact returns once fn's commit
// has.
//
// When db is already a transaction (a caller's), fn runs in it, under a
// savepoint, without retries and with the caller's time: the caller's
// Transact retries the whole.
func Transact(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) error {
	if inTransaction(db) {
		if _, ok := ctx.Value(afterKey{}).(*afterCommit); !ok && db.Statement.Context != nil {
			if after, ok := db.Statement.Context.Value(afterKey{}).(*afterCommit); ok {
				ctx = context.WithValue(ctx, afterKey{}, after) // the caller's commit runs them
			}
		}
		tx := db.WithContext(ctx)
		if _, pinned := ctx.Value(nowKey{}).(time.Time); !pinned {
			tx = db.WithContext(context.WithValue(ctx, nowKey{}, Now(db)))
		}
		return tx.Transaction(fn)
	}
	var err error
	for try := 1; try <= MaxTries; try++ {
		if try > 1 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (after %d tries: %w)", ctx.Err(), try-1, err)
			case <-time.After(retryPause(try - 1)):
			}
		}
		var after *afterCommit
		after, err = transactOnce(ctx, db, fn)
		if err == nil {
			countCommit(ctx, db)
			for _, f := range after.fns {
				f()
			}
		}
		if !Retryable(err) {
			return err
		}
	}
	return fmt.Errorf("transaction failed %d times: %w", MaxTries, err)
}

// transactOnce is one try of Transact: fn in a transaction of db (on
// SQLite, on its writer: writer.go), its time pinned once the transaction
// has its connection. It answers what to run once it committed.
func transactOnce(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) (*afterCommit, error) {
	if w := writerOf(db); w != nil {
		return w.transact(ctx, db, fn)
	}
	after := &afterCommit{}
	return after, db.WithContext(pin(ctx, db, after)).Transaction(fn) // a statement of its own
}

// pin is ctx carrying a transaction's time, read now from ctx's or db's
// clock, and the list of what to run once it committed (after).
func pin(ctx context.Context, db *gorm.DB, after *afterCommit) context.Context {
	// To the microsecond, as PostgreSQL keeps times: a row saved and the
	// same row read back hold the same instant.
	now := clockOf(ctx, db)().UTC().Truncate(time.Microsecond)
	return context.WithValue(context.WithValue(ctx, nowKey{}, now), afterKey{}, after)
}

type afterKey struct{}

// afterCommit holds what a try of Transact runs once it committed.
type afterCommit struct{ fns []func() }

// AfterCommit runs fn once the transaction tx is in (Transact's) has
// committed, and never when it rolls back or is tried again: what a
// transaction tells the world (the operator's metrics) is told once, of
// what happened. Outside Transact, fn runs now. Like Now, it finds the
// transaction through tx's context.
func AfterCommit(tx *gorm.DB, fn func()) {
	if ctx := tx.Statement.Context; ctx != nil {
		if after, ok := ctx.Value(afterKey{}).(*afterCommit); ok {
			after.fns = append(after.fns, fn)
			return
		}
	}
	fn()
}

// Now is the time of the transaction tx is in (Transact pinned it when the
// transaction began), in UTC; outside Transact, the clock's time now. The
// time travels in tx's context: pass the tx Transact gave (or one derived
// from it without a new context), not tx.WithContext(otherCtx).
func Now(tx *gorm.DB) time.Time {
	ctx := tx.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if t, ok := ctx.Value(nowKey{}).(time.Time); ok {
		return t
	}
	return clockOf(ctx, tx)().UTC()
}

// clockOf is the clock of ctx (WithClock), else db's.
func clockOf(ctx context.Context, db *gorm.DB) func() time.Time {
	if c, ok := ctx.Value(clockKey{}).(func() time.Time); ok && c != nil {
		return c
	}
	if db.Config != nil && db.NowFunc != nil {
		return db.NowFunc
	}
	return time.Now
}

// inTransaction reports whether db runs inside a transaction already.
func inTransaction(db *gorm.DB) bool {
	_, ok := db.Statement.ConnPool.(gorm.TxCommitter)
	return ok
}

// Retryable reports whether err says only that the engine could not order
// a transaction against another one, so that running it again may succeed:
// PostgreSQL's serialization_failure (40001) and deadlock_detected (40P01),
// SQLite's BUSY and LOCKED (with their extended codes).
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	if liteErr, ok := errors.AsType[sqlite3.Error](err); ok {
		return liteErr.Code == sqlite3.ErrBusy || liteErr.Code == sqlite3.ErrLocked
	}
	return false
}

// Lock is the clause that locks the rows a SELECT reads until the
// transaction ends (FOR UPDATE) on PostgreSQL; the SQLite dialect drops it,
// SQLite's write transactions holding the whole database's lock already.
//
//	tx.Clauses(database.Lock()).Where("id IN ?", ids).Find(&rows)
func Lock() clause.Locking { return clause.Locking{Strength: clause.LockingStrengthUpdate} }

// LockKey takes, on PostgreSQL, a lock on key (an advisory lock) that the
// transaction tx holds until it ends, so that the transactions that take it
// run one at a time; on SQLite it does nothing, the write lock serializing
// writers already.
func LockKey(tx *gorm.DB, key string) error {
	if DialectOfDB(tx) != Postgres {
		return nil
	}
	if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtext(?))", key).Error; err != nil {
		return fmt.Errorf("lock %s: %w", key, err)
	}
	return nil
}
