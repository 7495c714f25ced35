package checkout_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// warmPool opens up to n connections of db's pool at once and puts them
// back idle, so that concurrent calls that follow do not wait for new
// connections one after another (which staggers them: a cold pool lets the
// first claim commit before the next one begins).
func warmPool(t *testing.T, db *gorm.DB, n int) {
	t.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	n = min(n, sqlDB.Stats().MaxOpenConnections)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			c, err := sqlDB.Conn(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			defer func() { _ = c.Close() }()
			errs[i] = c.PingContext(ctx)
			time.Sleep(20 * time.Millisecond) // hold it while the others open theirs
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if idle := sqlDB.Stats().Idle; idle < n {
		t.Logf("pool warmed to %d idle connections of %d", idle, n)
	}
}

// TestPromoLastUseRace: WELCOME10 with a usage limit of 2 and one use
// already taken by an order; many sessions priced with it are paid at the
// same instant on a warm pool, the code's row already there. Exactly one of
// them gets the last use (total uses 2, one more order with the discount,
// one more charge); every other is answered not ready with invalid
// $.promo_code "used up", with nothing charged.
//
// On PostgreSQL the claims overlap: without the row lock and the
// conditional take (used < usage_limit) every claim reads one use taken and
// takes another. On SQLite a write transaction holds the database's write
// lock from its BEGIN, so claims run one after another whatever the guards;
// there the test checks the same outcome of the serialised claims.
func TestPromoLastUseRace(t *testing.T) {
	ctx := context.Background()
	const n = 12
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShopWith(t, db, nil, welcomeLimit(2))

		// The first use, taken by an order: the code's row exists.
		first := p.withWelcome(t, "enamel-camp-mug-forest-green", 2)
		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: first.ID, Payment: pay("pm_card_visa")})
		if err != nil || done.Status != checkout.Completed || totals(done)[checkout.TotalItemsDiscount] == 0 {
			t.Fatalf("first order: %v %+v", err, done)
		}
		if got := welcomeUses(t, db); got != 1 {
			t.Fatalf("%d uses after the first order, want 1", got)
		}

		// n buyers, one session each, so that no limit on what one buyer
		// may hold or open has a say.
		buyers := make([]context.Context, n)
		sessions := make([]*checkout.Session, n)
		for i := range sessions {
			buyers[i] = shop.WithBuyer(ctx, shop.Buyer{Subject: fmt.Sprintf("race-buyer-%d", i)})
			sessions[i], err = p.co.Create(buyers[i], checkout.Request{
				Items: items("enamel-camp-mug-cream", 2), Address: californian, PromoCode: ptr("WELCOME10"),
				Buyer: &checkout.Buyer{Name: "Buyer", Email: fmt.Sprintf("buyer%d@example.com", i)},
			})
			if err != nil || sessions[i].Status != checkout.Ready || totals(sessions[i])[checkout.TotalItemsDiscount] == 0 {
				t.Fatalf("session %d, ready with WELCOME10: %v %+v", i, err, sessions[i])
			}
		}
		chargesBefore := p.count(t, "sandbox_charges")
		warmPool(t, db, n+2)
		g := gateReads(t, db, "promotion_uses", true, n, 300*time.Millisecond)

		results := make([]*checkout.Session, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Go(func() {
				<-start
				results[i], errs[i] = p.co.Complete(buyers[i], checkout.CompleteRequest{SessionID: sessions[i].ID, Payment: pay("pm_card_visa")})
			})
		}
		close(start)
		wg.Wait()
		t.Logf("%d claims read the uses of WELCOME10 together", g.together())

		completed, refused := 0, 0
		for i, r := range results {
			switch {
			case errs[i] != nil:
				t.Errorf("call %d: %v", i, errs[i])
			case r.Status == checkout.Completed:
				completed++
				if totals(r)[checkout.TotalItemsDiscount] == 0 {
					t.Errorf("call %d: the order has no discount", i)
				}
			case r.Status == checkout.NotReady && len(r.Messages) > 0 && r.Messages[0].Type == checkout.MessageError &&
				r.Messages[0].Code == "invalid" && r.Messages[0].Param == "$.promo_code" && strings.Contains(r.Messages[0].Content, "used up"):
				refused++
				if totals(r)[checkout.TotalItemsDiscount] != 0 {
					t.Errorf("call %d: refused, yet priced with the discount: %v", i, totals(r))
				}
			default:
				t.Errorf("call %d: %s %+v", i, r.Status, r.Messages)
			}
		}
		if completed != 1 || refused != n-1 {
			t.Errorf("%d completed with the last use, %d refused; want 1 and %d", completed, refused, n-1)
		}
		if got := welcomeUses(t, db); got != 2 {
			t.Errorf("%d uses of WELCOME10, want 2 (its limit)", got)
		}
		if got := p.count(t, "sandbox_charges") - chargesBefore; got != 1 {
			t.Errorf("%d charges made by the concurrent calls, want 1", got)
		}
		for table, want := range map[string]int64{"orders": 2, "payment_attempts": 2} {
			if got := p.count(t, table); got != want {
				t.Errorf("%s: %d rows, want %d", table, got, want)
			}
		}
	})
}
