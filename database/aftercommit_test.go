package database_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// TestAfterCommit: what a transaction registers runs once it committed,
// also when registered in a savepoint inside it; never for a rolled-back
// one, nor for a try that was run again.
func TestAfterCommit(t *testing.T) {
	db := dbtest.Open(t, database.SQLite)
	ctx := context.Background()
	var ran []string
	note := func(s string) func() { return func() { ran = append(ran, s) } }

	err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		database.AfterCommit(tx, note("outer"))
		if len(ran) != 0 {
			t.Error("ran before the commit")
		}
		return database.Transact(ctx, tx, func(sp *gorm.DB) error {
			database.AfterCommit(sp, note("savepoint"))
			return nil
		})
	})
	if err != nil || fmt.Sprint(ran) != "[outer savepoint]" {
		t.Fatalf("after a commit: %v, %v", ran, err)
	}

	ran = nil
	boom := errors.New("boom")
	if err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		database.AfterCommit(tx, note("rolled back"))
		return boom
	}); !errors.Is(err, boom) || ran != nil {
		t.Fatalf("after a rollback: %v, %v", ran, err)
	}

	tries := 0
	if err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		tries++
		database.AfterCommit(tx, note(fmt.Sprint("try ", tries)))
		if tries == 1 {
			return sqlite3.Error{Code: sqlite3.ErrBusy}
		}
		return nil
	}); err != nil || fmt.Sprint(ran) != "[try 2]" {
		t.Fatalf("after a retry: %v, %v", ran, err)
	}

	ran = nil
	database.AfterCommit(db, note("now"))
	if fmt.Sprint(ran) != "[now]" {
		t.Fatalf("outside a transaction: %v", ran)
	}
}
