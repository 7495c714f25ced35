package orders

import (
	"context"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
)

// TestTransitions moves an order by each transition from every status: it
// moves from the transition's from-states only, and never from a status
// other than the one the order was read in.
func TestTransitions(t *testing.T) {
	all := []Status{StatusConfirmed, StatusPartiallyShipped, StatusShipped, StatusDelivered, StatusCanceled, StatusRefunded}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	transitions := []struct {
		name string
		from []Status
		to   Status
		move func(ctx context.Context, tx *gorm.DB, o *orderRow) error
	}{
		{"shipOrder some", []Status{StatusConfirmed, StatusPartiallyShipped}, StatusPartiallyShipped,
			func(ctx context.Context, tx *gorm.DB, o *orderRow) error { return shipOrder(ctx, tx, o, false, now) }},
		{"shipOrder all", []Status{StatusConfirmed, StatusPartiallyShipped}, StatusShipped,
			func(ctx context.Context, tx *gorm.DB, o *orderRow) error { return shipOrder(ctx, tx, o, true, now) }},
		{"deliverOrder", []Status{StatusShipped}, StatusDelivered,
			func(ctx context.Context, tx *gorm.DB, o *orderRow) error { return deliverOrder(ctx, tx, o, now) }},
		{"cancelOrder", []Status{StatusConfirmed}, StatusCanceled,
			func(ctx context.Context, tx *gorm.DB, o *orderRow) error { return cancelOrder(ctx, tx, o, now) }},
		{"markRefunded", []Status{StatusConfirmed, StatusPartiallyShipped, StatusShipped, StatusDelivered, StatusRefunded}, StatusRefunded,
			func(ctx context.Context, tx *gorm.DB, o *orderRow) error { return markRefunded(ctx, tx, o, now) }},
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		n := int64(1000)
		place := func(t *testing.T, st Status) *orderRow {
			t.Helper()
			n++
			session := "cs_" + randomID()
			err := db.Exec(`INSERT INTO checkout_sessions (id, status, version, currency, items, priced, total, expires_at, created_at, updated_at)
				VALUES (?, 'completed', 1, 'usd', '[]', '{}', 0, ?, ?, ?)`, session, now, now, now).Error
			if err != nil {
				t.Fatal(err)
			}
			o := &orderRow{ID: newOrderID(), Number: n, CheckoutSessionID: session, Status: st, Email: "b@example.com",
				Currency: "usd", Total: 100, CreatedAt: now, UpdatedAt: now}
			if err := db.Create(o).Error; err != nil {
				t.Fatal(err)
			}
			return o
		}
		stored := func(t *testing.T, id string) Status {
			t.Helper()
			var o orderRow
			if err := db.Where("id = ?", id).Take(&o).Error; err != nil {
				t.Fatal(err)
			}
			return o.Status
		}
		for _, tr := range transitions {
			for _, st := range all {
				o := place(t, st)
				err := tr.move(ctx, db, o)
				allowed := slices.Contains(tr.from, st)
				switch got := stored(t, o.ID); {
				case allowed && (err != nil || got != tr.to || o.Status != tr.to):
					t.Errorf("%s from %s: err %v, stored %s, in memory %s; want %s", tr.name, st, err, got, o.Status, tr.to)
				case !allowed && (err == nil || got != st):
					t.Errorf("%s from %s: err %v, stored %s; want an error and %s", tr.name, st, err, got, st)
				}
			}
			// Read in one allowed status, moved meanwhile to another allowed
			// one: the move is refused as a conflict.
			if len(tr.from) < 2 {
				continue
			}
			o := place(t, tr.from[0])
			if err := db.Model(&orderRow{}).Where("id = ?", o.ID).Update("status", tr.from[1]).Error; err != nil {
				t.Fatal(err)
			}
			if err := tr.move(ctx, db, o); shop.ErrorCode(err) != shop.Conflict || stored(t, o.ID) != tr.from[1] {
				t.Errorf("%s of an order read %s, now %s: err %v, stored %s; want a conflict and no move", tr.name, tr.from[0], tr.from[1], err, stored(t, o.ID))
			}
		}
	})
}
