package database_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"shop/database"
	"shop/database/dbtest"
)

// TestTransactPinsNow: inside a transaction every Now reads the time the
// transaction began by the clock WithClock gave, however the clock moves;
// a transaction nested in it (a savepoint) shares it.
func TestTransactPinsNow(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		start := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
		var ticks atomic.Int64
		clock := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Second) }
		ctx := database.WithClock(context.Background(), clock)
		var seen []time.Time
		err := database.Transact(ctx, db, func(tx *gorm.DB) error {
			seen = append(seen, database.Now(tx), database.Now(tx))
			return database.Transact(ctx, tx, func(tx *gorm.DB) error {
				seen = append(seen, database.Now(tx))
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range seen {
			if !s.Equal(start.Add(time.Second)) {
				t.Fatalf("Now inside one transaction: %v; want all %v", seen, start.Add(time.Second))
			}
		}
	})
}

// TestTransactRetriesDeadlock: two transactions that lock two rows in
// opposite orders deadlock on PostgreSQL; the one the engine aborts is run
// again by Transact, and both commit.
func TestTransactRetriesDeadlock(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, database.Postgres)
	if err := db.Exec("CREATE TABLE pair (id INT PRIMARY KEY, n INT NOT NULL); INSERT INTO pair VALUES (1, 0), (2, 0)").Error; err != nil {
		t.Fatal(err)
	}
	var tries atomic.Int64
	var both sync.WaitGroup
	both.Add(2)
	run := func(first, second int) error {
		return database.Transact(ctx, db, func(tx *gorm.DB) error {
			try := tries.Add(1)
			if err := tx.Exec("UPDATE pair SET n = n + 1 WHERE id = ?", first).Error; err != nil {
				return err
			}
			if try <= 2 {
				both.Done() // each first try holds its first row before taking the other
				both.Wait()
			}
			return tx.Exec("UPDATE pair SET n = n + 1 WHERE id = ?", second).Error
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- run(1, 2) }()
	go func() { errs <- run(2, 1) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("transaction: %v", err)
		}
	}
	// One victim is run again; both, when their deadlock checks ran at
	// once (a loaded machine), each found the cycle and gave way.
	if n := tries.Load(); n != 3 && n != 4 {
		t.Errorf("%d tries; want 3 (a deadlock victim run again), or 4 (both were)", n)
	}
	var sum int64
	if err := db.Raw("SELECT SUM(n) FROM pair").Scan(&sum).Error; err != nil || sum != 4 {
		t.Errorf("sum %d, %v; want 4 (both transactions committed once)", sum, err)
	}
}

// TestRetryable: the errors an engine gives when it cannot order a
// transaction (here SQLite's busy database) are retried; others are not.
func TestRetryable(t *testing.T) {
	ctx := context.Background()
	dsn := "file:" + t.TempDir() + "/busy.db?_busy_timeout=0&_txlock=immediate&_journal_mode=WAL"
	open := func() *gorm.DB {
		db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = database.Close(db) })
		return db
	}
	a, b := open(), open()
	if err := a.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_ = a.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	busy := b.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return nil })
	close(release)
	<-done // a's write lock is gone: what follows is not busy
	if busy == nil || !database.Retryable(busy) {
		t.Errorf("SQLite busy: %v; want a retryable error", busy)
	}
	dup := b.Exec("INSERT INTO t VALUES (1); INSERT INTO t VALUES (1)").Error
	for _, err := range []error{nil, errors.New("database is locked"), dup, context.Canceled} {
		if database.Retryable(err) {
			t.Errorf("Retryable(%v) = true", err)
		}
	}
}

// TestSQLiteWritesOnOneConnection: on SQLite, every transaction Transact
// runs is on the one connection kept for writing, whatever runs beside it:
// a TEMP table, which only the connection that made it sees, made in one
// transaction is there in each of twenty run at once while the pool's own
// connections read; those readers do not see it.
func TestSQLiteWritesOnOneConnection(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, database.SQLite)
	if err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		return tx.Exec("CREATE TEMP TABLE writer_mark (x INTEGER)").Error
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Go(func() {
			errs <- database.Transact(ctx, db, func(tx *gorm.DB) error {
				return tx.Exec("INSERT INTO temp.writer_mark (x) VALUES (?)", i).Error
			})
		})
		wg.Go(func() {
			var n int64
			err := db.WithContext(ctx).Raw("SELECT COUNT(*) FROM sqlite_temp_master WHERE name = 'writer_mark'").Scan(&n).Error
			if err == nil && n != 0 {
				err = errors.New("a reading connection sees the writer's TEMP table")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		return tx.Raw("SELECT COUNT(*) FROM temp.writer_mark").Scan(&n).Error
	}); err != nil || n != 20 {
		t.Fatalf("writer's TEMP table: %d rows, %v; want 20", n, err)
	}
}

// BenchmarkTransactPages measures a SQLite write transaction that inserts a
// row into each of 0, 1, 5, 20 and 40 tables: what a commit costs, and each
// page it writes to the log beside it.
func BenchmarkTransactPages(b *testing.B) {
	ctx := context.Background()
	db := dbtest.Open(b, database.SQLite)
	const tables = 40
	for i := range tables {
		if err := db.Exec(fmt.Sprintf("CREATE TABLE bench_pages_%d (id INTEGER PRIMARY KEY, v TEXT NOT NULL)", i)).Error; err != nil {
			b.Fatal(err)
		}
	}
	value := strings.Repeat("x", 64)
	for _, n := range []int{0, 1, 5, 20, tables} {
		b.Run(fmt.Sprintf("tables=%d", n), func(b *testing.B) {
			for b.Loop() {
				err := database.Transact(ctx, db, func(tx *gorm.DB) error {
					for i := range n {
						if err := tx.Exec(fmt.Sprintf("INSERT INTO bench_pages_%d (v) VALUES (?)", i), value).Error; err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSQLiteTimeAfterTurn: on SQLite a transaction's time (Now) is read
// once it has the writer, not while it waits for it, so that of two write
// transactions the one that commits later carries the later time.
func TestSQLiteTimeAfterTurn(t *testing.T) {
	var current atomic.Int64 // the clock, in seconds
	ctx := database.WithClock(context.Background(), func() time.Time { return time.Unix(current.Load(), 0) })
	db := dbtest.Open(t, database.SQLite)
	current.Store(10)
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- database.Transact(ctx, db, func(*gorm.DB) error {
			close(held)
			<-release
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-first:
		t.Fatalf("the first transaction: %v", err)
	}
	current.Store(20) // the second transaction starts waiting
	second := make(chan time.Time, 1)
	go func() {
		err := database.Transact(ctx, db, func(tx *gorm.DB) error {
			second <- database.Now(tx)
			return nil
		})
		if err != nil {
			t.Errorf("the second transaction: %v", err)
			second <- time.Time{}
		}
	}()
	time.Sleep(50 * time.Millisecond) // for it to reach its wait
	current.Store(30)                 // the first commits
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got, want := <-second, time.Unix(30, 0).UTC(); !got.Equal(want) {
		t.Fatalf("the second transaction's time: %v; want %v, after the first's commit", got, want)
	}
}

// TestSQLiteWriterAfterPanic: a transaction whose function panics gives the
// writer back: the next one runs.
func TestSQLiteWriterAfterPanic(t *testing.T) {
	db := dbtest.Open(t, database.SQLite)
	func() {
		defer func() { _ = recover() }()
		_ = database.Transact(context.Background(), db, func(*gorm.DB) error { panic("a bug") })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := database.Transact(ctx, db, func(*gorm.DB) error { return nil }); err != nil {
		t.Fatalf("the transaction after a panic: %v", err)
	}
}
