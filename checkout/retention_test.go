package checkout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/money"
	"shop/orders"
)

const day = 24 * time.Hour

// rowsOf counts, per table, the rows a session left: its holds, links,
// attempts, surplus payments and the session itself.
func rowsOf(t *testing.T, db *gorm.DB, id string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for table, col := range map[string]string{
		"checkout_sessions": "id", "stock_holds": "holder", "payment_links": "session_id",
		"payment_attempts": "session_id", "surplus_payments": "session_id", "orders": "checkout_session_id",
	} {
		var n int64
		if err := db.Table(table).Where(col+" = ?", id).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out[table] = n
		}
	}
	return out
}

// withoutMoneyless is the JSON of a staff's get_order without the payment
// attempts that took no money, which the sweep deletes.
func withoutMoneyless(t *testing.T, order string) string {
	t.Helper()
	var d orders.OrderDetailResult
	if err := json.Unmarshal([]byte(order), &d); err != nil {
		t.Fatal(err)
	}
	kept := []orders.PaymentAttemptRecord{}
	for _, a := range d.Order.PaymentAttempts {
		if a.Status == "succeeded" || a.Status == "orphaned" {
			kept = append(kept, a)
		}
	}
	if len(kept) == len(d.Order.PaymentAttempts) {
		t.Fatalf("no attempt that took no money in %s", order)
	}
	d.Order.PaymentAttempts, d.Order.PaymentAttemptsTotal = kept, int64(len(kept))
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// staffOrder is the staff's get_order of id, as JSON.
func staffOrder(t *testing.T, db *gorm.DB, id string) string {
	t.Helper()
	usd, err := money.Lookup("usd")
	if err != nil {
		t.Fatal(err)
	}
	key, err := orders.LoadReceiptKey(context.Background(), db, "")
	if err != nil {
		t.Fatal(err)
	}
	admin := orders.NewAdmin(orders.New(db, &orders.Options{ReceiptKey: key, PaymentAttempts: checkout.PaymentAttempts}), catalog.New(db, usd, nil), nil)
	ctx := shop.WithActor(context.Background(), shop.Actor{Role: shop.Viewer, Label: "test"})
	for _, tl := range admin.Tools() {
		if tl.Name == "get_order" {
			res, err := tl.Handle(ctx, json.RawMessage(`{"order_id":"`+id+`"}`))
			if err != nil {
				t.Fatalf("get_order %s: %v", id, err)
			}
			b, _ := json.Marshal(res.Structured)
			return string(b)
		}
	}
	t.Fatal("no get_order tool")
	return ""
}

// TestDeleteEnded: the sweep deletes the sessions canceled or expired more
// than the retention ago with their holds, links and attempts; it keeps
// those that ended later, the open ones, the completed ones with their
// orders (only their attempts that took no money go) and those a surplus
// payment refers to.
func TestDeleteEnded(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		start := p.clk.Now()

		// old: declined once, given a payment page and a hold left over, then canceled.
		old := p.ready(t)
		if s, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: old.ID, Payment: pay("pm_card_visa_chargeDeclined")}); err != nil || s.Status != checkout.Ready {
			t.Fatalf("decline: %v %+v", err, s)
		}
		exec(t, db, `INSERT INTO payment_links (id, session_id, provider, amount, currency, status, expires_at, created_at, updated_at)
			VALUES ('pl_old', ?, 'stripe', 100, 'usd', 'expired', ?, ?, ?)`, old.ID, start, start, start)
		if _, err := p.co.Cancel(ctx, old.ID); err != nil {
			t.Fatal(err)
		}
		exec(t, db, `INSERT INTO stock_holds (holder, variant_id, quantity, expires_at) VALUES (?, 'enamel-camp-mug-cream', 1, ?)`, old.ID, start.Add(365*day))

		// paid: declined once, then paid.
		paid := p.ready(t)
		if _, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: paid.ID, Payment: pay("pm_card_chargeDeclinedInsufficientFunds")}); err != nil {
			t.Fatal(err)
		}
		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: paid.ID, Payment: pay("pm_card_visa")})
		if err != nil || done.Order == nil {
			t.Fatalf("pay: %v %+v", err, done)
		}
		orderBefore := staffOrder(t, db, done.Order.ID)
		key, err := orders.LoadReceiptKey(ctx, db, "")
		if err != nil {
			t.Fatal(err)
		}
		receiptBefore, err := orders.New(db, &orders.Options{ReceiptKey: key}).Get(ctx, done.Order.ID, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}

		// surplus: expired, then paid on a page after all (refunded, kept).
		surplus := p.ready(t)
		p.clk.Add(time.Hour)
		if _, err := p.co.ExpireDue(ctx); err != nil {
			t.Fatal(err)
		}
		exec(t, db, `INSERT INTO surplus_payments (id, session_id, provider, reference, amount, currency, reason, status, created_at, updated_at)
			VALUES ('sp_1', ?, 'stripe', 'pi_late', 100, 'usd', 'session_ended', 'refunded', ?, ?)`, surplus.ID, p.clk.Now(), p.clk.Now())

		// recent: canceled two days later, so 29 days before the sweep.
		p.clk.Add(2 * day)
		recent := p.ready(t)
		if _, err := p.co.Cancel(ctx, recent.ID); err != nil {
			t.Fatal(err)
		}

		p.clk.Add(29*day + time.Minute)
		open := p.ready(t)

		before := map[string]map[string]int64{}
		for _, id := range []string{old.ID, paid.ID, surplus.ID, recent.ID, open.ID} {
			before[id] = rowsOf(t, db, id)
		}
		if before[old.ID]["payment_attempts"] != 1 || before[old.ID]["payment_links"] != 1 || before[old.ID]["stock_holds"] != 1 || before[paid.ID]["payment_attempts"] != 2 {
			t.Fatalf("setup: %v", before)
		}
		n, err := p.co.DeleteEnded(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("deleted %d sessions, want 1", n)
		}
		want := map[string]map[string]int64{
			old.ID:     {},
			paid.ID:    {"checkout_sessions": 1, "payment_attempts": 1, "orders": 1}, // the declined attempt went
			surplus.ID: before[surplus.ID],
			recent.ID:  before[recent.ID],
			open.ID:    before[open.ID],
		}
		got := map[string]map[string]int64{}
		for id := range want {
			got[id] = rowsOf(t, db, id)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows after the sweep (-want +got):\n%s", diff)
		}
		var status string
		if err := db.Raw("SELECT status FROM payment_attempts WHERE session_id = ?", paid.ID).Scan(&status).Error; err != nil || status != "succeeded" {
			t.Errorf("the paid session's attempt left: %q %v; want the one that succeeded", status, err)
		}

		// The order reads as it did, to staff and buyer, and its session
		// answers it; staff no longer see the declined attempt that went.
		if diff := cmp.Diff(withoutMoneyless(t, orderBefore), staffOrder(t, db, done.Order.ID)); diff != "" {
			t.Errorf("get_order after the sweep (-before +after):\n%s", diff)
		}
		receipt, err := orders.New(db, &orders.Options{ReceiptKey: key}).Get(ctx, done.Order.ID, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(receiptBefore, receipt); diff != "" {
			t.Errorf("receipt after the sweep (-before +after):\n%s", diff)
		}
		if s, err := p.co.Get(ctx, paid.ID); err != nil || s.Order == nil || s.Order.ID != done.Order.ID {
			t.Errorf("completed session after the sweep: %v %+v", err, s)
		}
		if _, err := p.co.Get(ctx, old.ID); shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("deleted session: %v, want not_found", err)
		}

		// Nothing more to do: a second sweep deletes nothing.
		if n, err := p.co.DeleteEnded(ctx); err != nil || n != 0 {
			t.Errorf("second sweep: %d, %v", n, err)
		}
	})
}

// maximalMetadata is the most metadata a session takes: every key, each
// value as long as the total allows.
func maximalMetadata(i int) map[string]string {
	m := map[string]string{}
	const keys, total = 20, 4096
	for k := range keys {
		key := fmt.Sprintf("k%02d_%s", k, strings.Repeat("x", 36))[:40]
		m[key] = strings.Repeat(string(rune('a'+k)), total/keys-len(key)-1)
	}
	m[fmt.Sprintf("k00_%s", strings.Repeat("x", 36))[:40]] = fmt.Sprintf("%d", i)
	return m
}

// TestRetentionFlood: a flood of sessions with maximal metadata, ended and
// swept after the retention, leaves no rows; a second flood reuses the
// space the first freed, so the database does not grow.
func TestRetentionFlood(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		const flood = 240
		checkout.SetRetentionBatch(t, 50) // several batches, the last one short
		sqlite := database.DialectOfDB(db) == database.SQLite
		pages := func() (total, free int64) {
			if err := db.Raw("PRAGMA page_count").Scan(&total).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Raw("PRAGMA freelist_count").Scan(&free).Error; err != nil {
				t.Fatal(err)
			}
			return total, free
		}
		round := func() (total, used int64) {
			for i := range flood {
				s, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Metadata: maximalMetadata(i)})
				if err != nil {
					t.Fatalf("session %d: %v", i, err)
				}
				if i%2 == 0 {
					if _, err := p.co.Cancel(ctx, s.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			p.clk.Add(time.Hour) // the rest expire
			if _, err := p.co.ExpireDue(ctx); err != nil {
				t.Fatal(err)
			}
			if n := p.count(t, "checkout_sessions"); n != flood {
				t.Fatalf("%d sessions before the sweep, want %d", n, flood)
			}
			if sqlite {
				total, free := pages()
				used = total - free
			}
			// They never held stock (no address): kept a day, not 30.
			p.clk.Add(day - 2*time.Hour)
			if n, err := p.co.DeleteEnded(ctx); err != nil || n != 0 {
				t.Fatalf("sweep within a day: deleted %d, %v", n, err)
			}
			p.clk.Add(2*time.Hour + time.Minute) // a day after the last ended
			n, err := p.co.DeleteEnded(ctx)
			if err != nil || n != flood {
				t.Fatalf("sweep after the retention: deleted %d, %v; want %d", n, err, flood)
			}
			for _, table := range []string{"checkout_sessions", "stock_holds", "payment_attempts", "payment_links"} {
				if n := p.count(t, table); n != 0 {
					t.Errorf("%d rows left in %s", n, table)
				}
			}
			if sqlite {
				after, free := pages()
				if freed := used - (after - free); freed < int64(flood) { // each session took more than a page
					t.Errorf("the sweep freed %d pages of %d used; want at least %d", freed, used, flood)
				}
				t.Logf("pages: %d used by the flood, %d in the file after the sweep, %d of them free", used, after, free)
				return after, used
			}
			return 0, 0
		}
		first, _ := round()
		second, _ := round()
		if sqlite && second > first+first/20 {
			t.Errorf("the database grew from %d to %d pages for the same flood: the freed pages were not reused", first, second)
		}
	})
}

// TestSweepDeletesEnded: the sweep the shop runs every minute deletes the
// ended sessions past the retention.
func TestSweepDeletesEnded(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		if _, err := p.co.Cancel(context.Background(), s.ID); err != nil {
			t.Fatal(err)
		}
		p.clk.Add(checkout.DefaultRetentionDays*day + time.Second)
		if _, err := p.co.DeleteEnded(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rows := rowsOf(t, db, s.ID); len(rows) > 0 {
			t.Fatalf("the sweep left %v", rows)
		}
	})
}
