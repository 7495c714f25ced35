package database_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/database"
	"shop/database/dbtest"
)

// tally is a Counter's counts, by kind and operation.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (t *tally) add(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n[key]++
}

// TestCounterCounts: a Counter counts each statement gorm runs and each
// one run below it (raw.go), under the operation of the call's context,
// and each committed transaction once; a rolled-back one is not a commit.
func TestCounterCounts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		got := &tally{n: map[string]int{}}
		if err := db.Use(&database.Counter{
			Statement: func(op string) { got.add("statement " + op) },
			Commit:    func(op string) { got.add("commit " + op) },
		}); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("CREATE TABLE counted (id INTEGER PRIMARY KEY, n INTEGER)").Error; err != nil {
			t.Fatal(err)
		}
		ctx := shop.WithOperation(context.Background(), "buy")
		err := database.Transact(ctx, db, func(tx *gorm.DB) error {
			if err := tx.Exec("INSERT INTO counted (id, n) VALUES (1, 1)").Error; err != nil { // gorm
				return err
			}
			if _, err := database.Exec(tx, "UPDATE counted SET n = n + 1 WHERE id = ?", 1); err != nil { // below gorm
				return err
			}
			var n int
			if err := database.QueryRow(tx, "SELECT n FROM counted WHERE id = ?", 1).Scan(&n); err != nil {
				return err
			}
			var rows []struct{ ID, N int }
			return tx.Table("counted").Find(&rows).Error // gorm
		})
		if err != nil {
			t.Fatal(err)
		}
		refused := errors.New("refused")
		err = database.Transact(ctx, db, func(tx *gorm.DB) error {
			if err := tx.Exec("UPDATE counted SET n = 0").Error; err != nil {
				return err
			}
			return refused
		})
		if !errors.Is(err, refused) {
			t.Fatalf("Transact = %v, want %v", err, refused)
		}
		want := map[string]int{"statement other": 1, "statement buy": 5, "commit buy": 1}
		if diff := cmp.Diff(want, got.n); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
	})
}
