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

// TestClaimFromOneVersion: two complete_checkout calls that both have the
// session at the same version in hand, before either claims it, claim it
// once: the second claim, over the version it had, loses to the first and
// answers from the fresh state. One payment attempt, one charge, one order,
// on both engines, whether the calls read the row (another replica: a gate
// holds each read until the other has made its own) or start from the row
// their process kept when it wrote it (the "claim" point holds them): on
// SQLite the claims run one after another, so only the version tells the
// second that the session was claimed since.
func TestClaimFromOneVersion(t *testing.T) {
	ctx := context.Background()
	for _, from := range []string{"read", "kept"} {
		t.Run(from, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				held := holdAt("claim", 2, 2*time.Second)
				p := payingShopOpts(t, db, &checkout.Options{Fault: held.fault}, nil)
				s := p.ready(t)
				together := held.together
				if from == "read" {
					p = payingShop(t, db, nil) // another replica's checkout: nothing kept
					together = gateReads(t, db, "checkout_sessions", false, 2, 2*time.Second).together
				}

				results := make([]*checkout.Session, 2)
				errs := make([]error, 2)
				var wg sync.WaitGroup
				for i := range results {
					wg.Go(func() {
						results[i], errs[i] = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
					})
				}
				wg.Wait()
				if n := together(); n != 2 {
					t.Fatalf("%d calls held together, want 2: the calls no longer start from one version, so this test no longer interleaves them", n)
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
		})
	}
}

// TestUpdatesFromOneVersion: two updates of different fields that both have
// the session at the same version in hand both land: the second, over the
// version it had, finds the first's (the lost race of its save), applies
// its change to the session as it is
// now and does not write over the first's. The rows are read (another
// replica's checkout, a gate holding the reads) or kept by the process that
// wrote them (the "change" point holding the updates).
func TestUpdatesFromOneVersion(t *testing.T) {
	ctx := context.Background()
	for _, from := range []string{"read", "kept"} {
		t.Run(from, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				held := holdAt("change", 2, 2*time.Second)
				co := newCheckout(t, db, &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}, &checkout.Options{Fault: held.fault})
				s, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1)})
				if err != nil {
					t.Fatal(err)
				}
				together := held.together
				if from == "read" {
					co, _ = demoShop(t, db) // another replica's checkout: nothing kept
					together = gateReads(t, db, "checkout_sessions", false, 2, 2*time.Second).together
				}
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
				if n := together(); n != 2 {
					t.Fatalf("%d updates held together, want 2: the updates no longer start from one version, so this test no longer interleaves them", n)
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
		})
	}
}

// held holds the first n calls that reach a Fault point until all n have,
// or until none has for quiet, as gateReads holds reads.
type held struct {
	point string
	g     *readGate
}

// holdAt is a held for the point named.
func holdAt(point string, n int, quiet time.Duration) *held {
	return &held{point: point, g: &readGate{n: n, quiet: quiet, open: make(chan struct{})}}
}

// fault is the Options.Fault that holds the calls.
func (h *held) fault(point string) {
	if point == h.point {
		h.g.arrive()
	}
}

// together is how many calls were held before they went on.
func (h *held) together() int { return h.g.together() }
