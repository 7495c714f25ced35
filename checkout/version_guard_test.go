package checkout_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// TestClaimFromOneVersion: two complete_checkout calls that both read the
// session at the same version (a gate holds each read until the other has
// made its own) claim it once: the second claim, saved over the version it
// read, loses to the first and answers from the fresh state. One payment
// attempt, one charge, one order, on both engines: on SQLite the claims run
// one after another, so only the version in the claim's UPDATE tells the
// second that the session was claimed since it read it.
func TestClaimFromOneVersion(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		g := gateReads(t, db, "checkout_sessions", false, 2, 2*time.Second)

		results := make([]*checkout.Session, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				results[i], errs[i] = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
			})
		}
		wg.Wait()
		if n := g.together(); n != 2 {
			t.Fatalf("the gate held %d reads of the session, want 2: the calls no longer read it before claiming, so this test no longer interleaves them", n)
		}
		orderIDs := map[string]bool{}
		for i, r := range results {
			switch {
			case errs[i] != nil:
				t.Errorf("call %d: %v", i, errs[i])
			case r.Status == checkout.Completed:
				orderIDs[r.Order.ID] = true
			case r.Status == checkout.InProgress:
			default:
				t.Errorf("call %d: %s %+v", i, r.Status, r.Messages)
			}
		}
		if len(orderIDs) > 1 {
			t.Errorf("callers saw %d orders, want 1", len(orderIDs))
		}
		for table, want := range map[string]int64{"payment_attempts": 1, "sandbox_charges": 1, "orders": 1} {
			if got := p.count(t, table); got != want {
				t.Errorf("%s: %d rows, want %d", table, got, want)
			}
		}
		final, err := p.co.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if final.Status != checkout.Completed {
			t.Errorf("final status %s, want completed", final.Status)
		}
	})
}

// TestUpdatesFromOneVersion: two updates of different fields that both read
// the session at the same version both land; the second, saved over the
// version it read, loses to the first, reads the session again and applies
// its change to it, rather than writing over the first's.
func TestUpdatesFromOneVersion(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShop(t, db)
		s, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1)})
		if err != nil {
			t.Fatal(err)
		}
		g := gateReads(t, db, "checkout_sessions", false, 2, 2*time.Second)
		reqs := []checkout.Request{
			{Address: californian},
			{Buyer: &checkout.Buyer{Email: "ada@example.com"}},
		}
		errs := make([]error, len(reqs))
		var wg sync.WaitGroup
		for i, r := range reqs {
			wg.Go(func() { _, errs[i] = co.Update(ctx, s.ID, r) })
		}
		wg.Wait()
		if n := g.together(); n != 2 {
			t.Fatalf("the gate held %d reads of the session, want 2: the updates no longer read it before writing, so this test no longer interleaves them", n)
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("update %d: %v (code %s)", i, err, shop.ErrorCode(err))
			}
		}
		got, err := co.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.FulfillmentAddress == nil || got.Buyer == nil || got.Buyer.Email != "ada@example.com" {
			t.Errorf("an update was lost: address %+v, buyer %+v", got.FulfillmentAddress, got.Buyer)
		}
		if got.Status != checkout.Ready {
			t.Errorf("status %s: %v", got.Status, errorParams(got))
		}
	})
}
