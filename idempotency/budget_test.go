package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/idempotency"
)

// TestBudget: a budget (a client address) claims at most its keys an hour:
// past them a new key is ErrBudget and stores nothing, while a replay of a
// key it holds is still answered and another budget is not touched; the
// next hour it claims again, and Sweep drops the spent hours. On SQLite
// and PostgreSQL.
func TestBudget(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		now := time.Date(2026, 4, 17, 12, 0, 0, 0, time.UTC)
		s := idempotency.New(db).WithClock(func() time.Time { return now }).WithKeysPerHour(3)
		var runs atomic.Int32
		do := func(budget string, i int) error {
			r := idempotency.Request{Scope: "ucp-rest|agent|PUT", Key: fmt.Sprintf("%s-k%d", budget, i), Fingerprint: fp(t, `{"a":1}`), Budget: budget}
			_, err := s.Do(ctx, r, counted(&runs, `{"id":"cs_1"}`, true, nil))
			return err
		}
		for i := range 3 {
			if err := do("addr 203.0.113.7", i); err != nil {
				t.Fatalf("key %d: %v", i, err)
			}
		}
		if err := do("addr 203.0.113.7", 3); !errors.Is(err, idempotency.ErrBudget) {
			t.Fatalf("a 4th new key in the hour: %v, want ErrBudget", err)
		}
		if err := do("addr 203.0.113.7", 0); err != nil {
			t.Errorf("a replay past the budget: %v, want its answer", err)
		}
		if err := do("addr 198.51.100.9", 0); err != nil {
			t.Errorf("another address: %v", err)
		}
		var keys int64
		if err := db.Table("idempotency_keys").Count(&keys).Error; err != nil || keys != 4 {
			t.Errorf("%d keys stored (%v), want 4: the refused one stores nothing", keys, err)
		}
		if n := runs.Load(); n != 4 {
			t.Errorf("%d runs, want 4", n)
		}
		now = now.Add(time.Hour)
		if err := do("addr 203.0.113.7", 3); err != nil {
			t.Errorf("the next hour: %v", err)
		}
		now = now.Add(idempotency.Retention)
		if _, err := s.Sweep(ctx, now.Add(-idempotency.Retention)); err != nil {
			t.Fatal(err)
		}
		var hours int64
		if err := db.Table("idempotency_budgets").Count(&hours).Error; err != nil || hours != 1 {
			t.Errorf("%d budget hours left after the sweep (%v), want 1 (the last hour's)", hours, err)
		}
	})
}

// TestBudgetNetwork: the budgets of the /64s of one IPv6 /48 claim together
// at most NetworkMultiple times one budget's keys an hour; a /64 of
// another /48 is not touched.
func TestBudgetNetwork(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := idempotency.New(db).WithKeysPerHour(1)
		var runs atomic.Int32
		do := func(slash64, slash48 string) error {
			r := idempotency.Request{Scope: "ucp-rest|agent|PUT", Key: slash64, Fingerprint: fp(t, `{"a":1}`),
				Budget: "address|" + slash64, Network: "network|" + slash48}
			_, err := s.Do(ctx, r, counted(&runs, `{"id":"cs_1"}`, true, nil))
			return err
		}
		claimed := 0
		for i := range idempotency.NetworkMultiple + 2 {
			switch err := do(fmt.Sprintf("2001:db8:1:%x::/64", i), "2001:db8:1::/48"); {
			case err == nil:
				claimed++
			case !errors.Is(err, idempotency.ErrBudget):
				t.Fatalf("/64 %d: %v", i, err)
			}
		}
		if claimed != idempotency.NetworkMultiple {
			t.Errorf("the /64s of one /48 claimed %d keys; want %d", claimed, idempotency.NetworkMultiple)
		}
		if err := do("2001:db8:2:1::/64", "2001:db8:2::/48"); err != nil {
			t.Errorf("a /64 of another /48: %v", err)
		}
	})
}
