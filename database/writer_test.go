package database_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// group holds the writer with a first transaction while others queue
// behind it, so that they run in its group (writer.go), then lets it go.
// fns are the queued transactions' functions; it answers what each one's
// Transact returned or panicked with, and how many times each ran.
func group(t *testing.T, db *gorm.DB, fns []func(tx *gorm.DB) error) (errs []error, panics []any, runs []int) {
	t.Helper()
	ctx := context.Background()
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	var once sync.Once // it runs again when the group fails
	go func() {
		first <- database.Transact(ctx, db, func(tx *gorm.DB) error {
			once.Do(func() { close(held) })
			<-release
			return tx.Exec("INSERT INTO marks (name) VALUES ('first')").Error
		})
	}()
	<-held
	errs, panics, runs = make([]error, len(fns)), make([]any, len(fns)), make([]int, len(fns))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			errs[i] = database.Transact(ctx, db, func(tx *gorm.DB) error {
				mu.Lock()
				runs[i]++
				mu.Unlock()
				return fn(tx)
			})
		})
	}
	time.Sleep(50 * time.Millisecond) // for them to reach their wait
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("the first transaction: %v", err)
	}
	return errs, panics, runs
}

func marksDB(t *testing.T) *gorm.DB {
	t.Helper()
	db := dbtest.Open(t, database.SQLite)
	if err := db.Exec("CREATE TABLE marks (name TEXT PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	return db
}

func marks(t *testing.T, db *gorm.DB) map[string]bool {
	t.Helper()
	var names []string
	if err := db.Raw("SELECT name FROM marks").Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

func insertMark(name string) func(tx *gorm.DB) error {
	return func(tx *gorm.DB) error { return tx.Exec("INSERT INTO marks (name) VALUES (?)", name).Error }
}

// TestSQLiteGroupMemberFails: of the transactions that commit together on
// SQLite's writer, one that fails takes nothing of the others' with it and
// leaves nothing of its own: each that ran with it runs again alone, the
// failed one fails alone, and every other commits once.
func TestSQLiteGroupMemberFails(t *testing.T) {
	db := marksDB(t)
	refused := errors.New("refused")
	fns := []func(tx *gorm.DB) error{insertMark("a"), insertMark("b"), func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO marks (name) VALUES ('failed')").Error; err != nil {
			return err
		}
		return refused
	}, insertMark("c")}
	errs, _, runs := group(t, db, fns)
	for i, err := range errs {
		switch {
		case i == 2 && !errors.Is(err, refused):
			t.Errorf("the failing transaction: %v; want its own error", err)
		case i != 2 && err != nil:
			t.Errorf("transaction %d: %v", i, err)
		}
	}
	want := map[string]bool{"first": true, "a": true, "b": true, "c": true}
	if diff := cmp.Diff(want, marks(t, db)); diff != "" {
		t.Errorf("rows committed, want first, a, b, c and not the failed transaction's (-want +got):\n%s", diff)
	}
	again := 0
	for _, n := range runs {
		if n > 1 {
			again++
		}
	}
	if again == 0 {
		t.Errorf("runs of each function: %v; none ran in the group and again alone", runs)
	}
}

// TestSQLiteGroupMemberPanics: a transaction that panics in a group
// panics in its caller, leaving nothing written, and the others commit.
func TestSQLiteGroupMemberPanics(t *testing.T) {
	db := marksDB(t)
	fns := []func(tx *gorm.DB) error{insertMark("a"), func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO marks (name) VALUES ('panicked')").Error; err != nil {
			return err
		}
		panic("a bug")
	}, insertMark("b")}
	errs, panics, _ := group(t, db, fns)
	if errs[0] != nil || errs[2] != nil || panics[0] != nil || panics[2] != nil {
		t.Errorf("the other transactions: %v, %v", errs, panics)
	}
	if panics[1] != "a bug" {
		t.Errorf("the panic in the caller: %v; want a bug", panics[1])
	}
	if got := marks(t, db); got["panicked"] || !got["a"] || !got["b"] {
		t.Errorf("rows committed: %v; want first, a, b and not the panicking transaction's", got)
	}
}
