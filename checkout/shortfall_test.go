package checkout_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/money"
	"shop/payments"
)

// syncBuffer is a log destination safe for the checkout's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// reimport imports the demo catalog's product id again, changed by edit.
func reimport(t *testing.T, cat *catalog.Catalog, id string, edit func(*catalog.ProductRecord)) {
	t.Helper()
	f, err := os.Open("../testdata/demo/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := catalog.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range file.Products {
		if p.ID == id {
			edit(&p)
			file.Products = []catalog.ProductRecord{p}
			if err := cat.Import(context.Background(), file, nil); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no product %s in the demo catalog", id)
}

// TestChargedOrderLandsWhateverTheCatalog: the provider charged and the
// answer was lost (the process ended right after the charge); meanwhile the
// catalog changed under the session being paid. One reconciler pass writes
// the order from the session's priced snapshot, takes the stock there is
// (never below zero) and records what it could not take on the order and
// its lines, with an audit event and one error logged; a second pass does
// nothing. One charge, one order, in every case.
func TestChargedOrderLandsWhateverTheCatalog(t *testing.T) {
	const (
		mug    = "enamel-camp-mug-forest-green" // 2 units in the session
		coffee = "stoneware-coffee-mug-16-oz"   // 1 unit
	)
	cases := []struct {
		name   string
		change func(t *testing.T, db *gorm.DB, cat *catalog.Catalog)
		// short are the units short by variant; stock what is left after.
		short map[string]int64
		stock map[string]int64
	}{
		{"StockLowered", func(t *testing.T, db *gorm.DB, cat *catalog.Catalog) {
			// adjust_inventory cannot go below the units being paid for …
			set := int64(1)
			err := db.Transaction(func(tx *gorm.DB) error {
				_, err := cat.AdjustStock(context.Background(), tx, mug, catalog.StockChange{Set: &set})
				return err
			})
			var se *shop.Error
			if !errors.As(err, &se) || se.Code != shop.Invalid || se.Param != "$.set" {
				t.Fatalf("adjusting the stock below the units being paid: %v, want invalid $.set", err)
			}
			// … but the database can be changed behind the shop's back.
			exec(t, db, "UPDATE variants SET stock = 1 WHERE id = ?", mug)
		}, map[string]int64{mug: 1}, map[string]int64{mug: 0, coffee: 47}},
		{"StockGone", func(t *testing.T, db *gorm.DB, _ *catalog.Catalog) {
			exec(t, db, "UPDATE variants SET stock = 0 WHERE id IN ?", []string{mug, coffee})
		}, map[string]int64{mug: 2, coffee: 1}, map[string]int64{mug: 0, coffee: 0}},
		{"VariantDeleted", func(t *testing.T, db *gorm.DB, _ *catalog.Catalog) {
			exec(t, db, "DELETE FROM variants WHERE id = ?", mug) // its holds go with it
		}, map[string]int64{mug: 2}, map[string]int64{coffee: 47}},
		{"PriceChanged", func(t *testing.T, db *gorm.DB, _ *catalog.Catalog) {
			exec(t, db, "UPDATE variants SET price = price * 3 WHERE id IN ?", []string{mug, coffee})
		}, nil, map[string]int64{mug: 80, coffee: 47}},
		{"ReimportedLowerStockAndPrice", func(t *testing.T, db *gorm.DB, cat *catalog.Catalog) {
			// The file says 0 units at another price: the import keeps the
			// 2 units being paid for, the order its price.
			reimport(t, cat, "enamel-camp-mug", func(p *catalog.ProductRecord) {
				for i := range p.Variants {
					if p.Variants[i].ID == mug {
						p.Variants[i].Stock, p.Variants[i].Price = ptr(int64(0)), ptr(int64(9999))
					}
				}
			})
			if got := stock(t, db, mug); got != 2 {
				t.Errorf("stock after the import: %d, want the 2 units being paid for", got)
			}
		}, nil, map[string]int64{mug: 0, coffee: 47}},
		{"ReimportedWithoutTheVariant", func(t *testing.T, db *gorm.DB, cat *catalog.Catalog) {
			reimport(t, cat, "enamel-camp-mug", func(p *catalog.ProductRecord) {
				var keep []catalog.VariantRecord
				for _, v := range p.Variants {
					if v.ID != mug {
						keep = append(keep, v)
					}
				}
				p.Variants = keep
			})
			got, err := cat.Product(context.Background(), "enamel-camp-mug")
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range got.Variants {
				if v.ID == mug {
					t.Errorf("get_product still shows %s, which the import left out", mug)
				}
			}
		}, nil, map[string]int64{mug: 80, coffee: 47}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				ctx := context.Background()
				var logs syncBuffer
				clk := &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}
				sandbox := payments.NewSandbox(db, &payments.SandboxOptions{Now: clk.Now})
				lost := &lostAnswer{Sandbox: sandbox, charge: true}
				co := newCheckout(t, db, clk, &checkout.Options{Charger: lost,
					Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))})
				p := &paying{co: co, clk: clk, db: db, sandbox: sandbox}
				cat := catalog.New(db, money.MustLookup("usd"), &catalog.Options{Now: clk.Now})

				s := p.ready(t)
				got, err := co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
				if err != nil || got.Status != checkout.InProgress {
					t.Fatalf("charged, the answer lost: %v %s", err, got.Status)
				}
				tc.change(t, db, cat)

				clk.Add(2 * time.Second)
				if n, err := co.Reconcile(ctx); err != nil || n != 1 {
					t.Fatalf("reconcile: settled %d (%v), want 1\n%s", n, err, logs.String())
				}
				got, err = co.Get(ctx, s.ID)
				if err != nil || got.Status != checkout.Completed || got.Order == nil {
					t.Fatalf("after one pass: %v %+v", err, got)
				}
				// What the buyer saw and paid: the snapshot's lines and total.
				if diff := cmp.Diff(s.LineItems, got.LineItems); diff != "" {
					t.Errorf("the order's lines differ from those paid for (-paid +order):\n%s", diff)
				}
				var lines []struct {
					VariantID                string
					UnitAmount, Total, Short int64
				}
				if err := db.Raw("SELECT variant_id, unit_amount, total, short_quantity AS short FROM order_lines ORDER BY position").Scan(&lines).Error; err != nil {
					t.Fatal(err)
				}
				var shortSum int64
				for i, l := range lines {
					if l.UnitAmount != s.LineItems[i].UnitAmount || l.Total != s.LineItems[i].Total {
						t.Errorf("line %d: %d × … = %d, want the snapshot's %d, %d", i, l.UnitAmount, l.Total, s.LineItems[i].UnitAmount, s.LineItems[i].Total)
					}
					if l.Short != tc.short[l.VariantID] {
						t.Errorf("line %s short %d, want %d", l.VariantID, l.Short, tc.short[l.VariantID])
					}
					shortSum += l.Short
				}
				var order struct{ Total, ShortUnits int64 }
				db.Raw("SELECT total, short_units FROM orders").Scan(&order)
				if order.Total != s.Totals[len(s.Totals)-1].Amount || order.ShortUnits != shortSum {
					t.Errorf("order total %d short %d, want %d and %d", order.Total, order.ShortUnits, s.Totals[len(s.Totals)-1].Amount, shortSum)
				}
				for v, want := range tc.stock {
					if got := stock(t, db, v); got != want {
						t.Errorf("stock of %s: %d, want %d", v, got, want)
					}
				}
				var audits int64
				db.Table("audit_events").Where("action = ? AND order_id = ?", "order.short", got.Order.ID).Count(&audits)
				logged := strings.Count(logs.String(), "short of stock")
				if want := map[bool]int64{true: 1, false: 0}[shortSum > 0]; audits != want || int64(logged) != want {
					t.Errorf("%d order.short audit events and %d errors logged, want %d\n%s", audits, logged, want, logs.String())
				}

				// No loop: a second pass finds nothing to do and logs nothing.
				before := logs.String()
				clk.Add(time.Minute)
				if n, err := co.Reconcile(ctx); err != nil || n != 0 {
					t.Errorf("second pass settled %d (%v), want 0", n, err)
				}
				if after := logs.String(); after != before {
					t.Errorf("the second pass logged: %s", strings.TrimPrefix(after, before))
				}
				if c, o := p.count(t, "sandbox_charges"), p.count(t, "orders"); c != 1 || o != 1 {
					t.Errorf("%d charges and %d orders, want 1 and 1", c, o)
				}
				var negative int64
				db.Table("variants").Where("stock < 0").Count(&negative)
				if negative != 0 {
					t.Errorf("%d variants with negative stock", negative)
				}
			})
		})
	}
}

func exec(t *testing.T, db *gorm.DB, sql string, args ...any) {
	t.Helper()
	if err := db.Exec(sql, args...).Error; err != nil {
		t.Fatal(err)
	}
}

// TestUnchargedAttemptVariantRemoved: the provider never saw the charge
// and, meanwhile, an import removed a variant of the session. The reconciler
// gives the attempt up once: the session holds nothing, is not ready and
// says which item to change; it is not left open for every pass to fail on.
func TestUnchargedAttemptVariantRemoved(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		var logs syncBuffer
		clk := &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}
		sandbox := payments.NewSandbox(db, &payments.SandboxOptions{Now: clk.Now})
		co := newCheckout(t, db, clk, &checkout.Options{Charger: &lostAnswer{Sandbox: sandbox},
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))})
		p := &paying{co: co, clk: clk, db: db, sandbox: sandbox}
		s := p.ready(t)
		if got, err := co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil || got.Status != checkout.InProgress {
			t.Fatalf("the charge never reached the provider: %v %s", err, got.Status)
		}
		reimport(t, catalog.New(db, money.MustLookup("usd"), &catalog.Options{Now: clk.Now}), "enamel-camp-mug", func(p *catalog.ProductRecord) {
			p.Variants = slices.DeleteFunc(p.Variants, func(v catalog.VariantRecord) bool { return v.ID == "enamel-camp-mug-forest-green" })
		})
		clk.Add(2 * time.Second)
		if n, err := co.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("reconcile: %d %v\n%s", n, err, logs.String())
		}
		var status string
		db.Raw("SELECT status FROM checkout_sessions WHERE id = ?", s.ID).Scan(&status)
		var holds int64
		db.Table("stock_holds").Where("holder = ?", s.ID).Count(&holds)
		if status != string(checkout.NotReady) || holds != 0 {
			t.Errorf("session %s holding %d variants, want %s and none", status, holds, checkout.NotReady)
		}
		clk.Add(time.Minute)
		if n, err := co.Reconcile(ctx); err != nil || n != 0 || logs.String() != "" {
			t.Errorf("second pass: %d %v, logged %q", n, err, logs.String())
		}
		if p.count(t, "sandbox_charges") != 0 || p.count(t, "orders") != 0 {
			t.Errorf("%d charges, %d orders; want none", p.count(t, "sandbox_charges"), p.count(t, "orders"))
		}
	})
}
