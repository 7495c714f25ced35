package checkout_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// TestOwnHoldsNeverBlock: the last units held by a buyer's ready session go
// to their newer session (the same host user, or the same buyer email from
// anywhere); the older one holds nothing then and says why. A stranger
// cannot take them, nor the buyer those of their session being paid, nor
// another session from the same client address alone (many people may call
// from one address).
func TestOwnHoldsNeverBlock(t *testing.T) {
	const pan = "cast-iron-skillet-12-in"
	ada := &checkout.Buyer{Email: "ada@example.com"}
	for _, tc := range []struct {
		name string
		// first and second make the buyer's two sessions; third is
		// another buyer's, after them.
		first, second context.Context
		firstBuyer    *checkout.Buyer
		secondBuyer   *checkout.Buyer
		paying        bool // the first session is being paid
		gives         bool // the first session gives way to the second
	}{
		{name: "OK_SameClientSameEmail", first: as("192.0.2.1"), firstBuyer: ada, second: as("192.0.2.1"), secondBuyer: ada, gives: true},
		{name: "OK_SameHostUser", first: subject("u-1", "192.0.2.1"), second: subject("u-1", "198.51.100.7"), gives: true},
		{name: "OK_SameEmail", first: as("192.0.2.1"), firstBuyer: ada,
			second: subject("u-2", "198.51.100.7"), secondBuyer: &checkout.Buyer{Email: "Ada@Example.com"}, gives: true},
		{name: "OK_SameEmailNoBuyerKnown", first: context.Background(), firstBuyer: ada,
			second: context.Background(), secondBuyer: ada, gives: true},
		{name: "ErrStranger", first: as("192.0.2.1"), firstBuyer: ada, second: as("192.0.2.2")},
		{name: "ErrStrangerOtherEmail", first: as("192.0.2.1"), firstBuyer: ada,
			second: as("192.0.2.2"), secondBuyer: &checkout.Buyer{Email: "grace@example.com"}},
		{name: "ErrNoBuyerKnown", first: context.Background(), second: context.Background()},
		// A client address is not a person: a host that sends no user id
		// calls for all its users from one address.
		{name: "ErrSameClientOnly", first: as("192.0.2.1"), second: as("192.0.2.1")},
		{name: "ErrSameClientOtherEmail", first: as("192.0.2.1"), firstBuyer: ada,
			second: as("192.0.2.1"), secondBuyer: &checkout.Buyer{Email: "grace@example.com"}},
		{name: "ErrBeingPaid", first: as("192.0.2.1"), second: as("192.0.2.1"), paying: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				lost := &lostAnswer{}
				p := payingShopWith(t, db, lost, noShare)
				lost.Sandbox = p.sandbox
				if err := db.Exec("UPDATE variants SET stock = 3 WHERE id = ?", pan).Error; err != nil {
					t.Fatal(err)
				}
				buyer := tc.firstBuyer
				if tc.paying {
					buyer = ada
				}
				first, err := p.co.Create(tc.first, checkout.Request{Items: items(pan, 3), Address: californian, Buyer: buyer})
				if err != nil || first.Status != checkout.Ready {
					t.Fatalf("first: %v %+v", err, first)
				}
				want := checkout.Ready
				if tc.paying {
					want = checkout.InProgress
					if first, err = p.co.Complete(tc.first, checkout.CompleteRequest{SessionID: first.ID, Payment: pay("pm_card_visa")}); err != nil || first.Status != want {
						t.Fatalf("paying the first: %v %+v", err, first)
					}
				}
				p.clk.Add(time.Second)
				second, err := p.co.Create(tc.second, checkout.Request{Items: items(pan, 2), Address: californian, Buyer: tc.secondBuyer})
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.co.Get(tc.first, first.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !tc.gives {
					if second.Status != checkout.NotReady || got.Status != want || sessionHolds(t, db, first.ID) != 3 {
						t.Fatalf("second %s %v, first %s holding %d: the first must keep its units", second.Status, errorParams(second), got.Status, sessionHolds(t, db, first.ID))
					}
					if diff := cmp.Diff([]string{"out_of_stock $.line_items[0].item.quantity"}, errorParams(second)); diff != "" {
						t.Errorf("second's errors (-want +got):\n%s", diff)
					}
					return
				}
				if second.Status != checkout.Ready || sessionHolds(t, db, second.ID) != 2 {
					t.Fatalf("second: %s %v, holding %d", second.Status, errorParams(second), sessionHolds(t, db, second.ID))
				}
				if got.Status != checkout.NotReady || sessionHolds(t, db, first.ID) != 0 {
					t.Fatalf("first after giving way: %s, holding %d", got.Status, sessionHolds(t, db, first.ID))
				}
				msgs := []checkout.Message{
					{Type: checkout.MessageInfo, ContentType: "plain", Key: checkout.KeyStockMoved,
						Content: "Its items were moved to your newer checkout session, which needed units this one held: the stock would not cover both."},
					{Type: checkout.MessageError, Code: "out_of_stock", Param: "$.line_items", ContentType: "plain", Key: checkout.KeyStockReleased,
						Content: "Nothing is held for this session any more; update it to hold its items again, or cancel it."},
				}
				if diff := cmp.Diff(msgs, got.Messages[:min(2, len(got.Messages))]); diff != "" {
					t.Errorf("first's messages (-want +got):\n%s", diff)
				}
				// The unit left is anyone's; the two the second holds are
				// not a stranger's.
				other, err := p.co.Create(as("203.0.113.50"), checkout.Request{Items: items(pan, 2), Address: californian})
				if err != nil {
					t.Fatal(err)
				}
				if other.Status != checkout.NotReady || len(other.Messages) == 0 || other.Messages[0].Content != "Only 1 of Pre-Seasoned Cast Iron Skillet — 12 in can be bought now; lower the quantity to 1 or less." {
					t.Errorf("stranger after: %s %+v", other.Status, other.Messages)
				}
			})
		})
	}
}

// subject is a call from a host that names its user.
func subject(id, addr string) context.Context {
	return shop.WithBuyer(context.Background(), shop.Buyer{Subject: id, Address: addr})
}

// TestSessionKeepsItsBuyer: an update made by another caller leaves the
// session its creator's: it still gives way to its creator's newer
// session, not to the updater's.
func TestSessionKeepsItsBuyer(t *testing.T) {
	one := func(p *checkout.Policy) { p.Limits.OpenSessions = 1 }
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		clk := &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}
		co := newCheckoutWith(t, db, clk, &checkout.Options{}, one)
		creator, updater := subject("creator", "192.0.2.1"), subject("updater", "192.0.2.2")
		s, err := co.Create(creator, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian})
		if err != nil || s.Status != checkout.Ready {
			t.Fatalf("create: %v %+v", err, s)
		}
		clk.Add(time.Second)
		if s, err = co.Update(updater, s.ID, checkout.Request{Items: items("enamel-camp-mug-cream", 2)}); err != nil || s.Status != checkout.Ready {
			t.Fatalf("update by another caller: %v %+v", err, s)
		}
		clk.Add(time.Second)
		theirs, err := co.Create(updater, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian})
		if err != nil || theirs.Status != checkout.Ready {
			t.Fatalf("the updater's own session: %v %+v", err, theirs)
		}
		if got, _ := co.Get(creator, s.ID); got.Status != checkout.Ready {
			t.Fatalf("the updater's session took the creator's: %s %+v", got.Status, got.Messages)
		}
		clk.Add(time.Second)
		mine, err := co.Create(creator, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian})
		if err != nil || mine.Status != checkout.Ready {
			t.Fatalf("the creator's second session: %v %+v", err, mine)
		}
		if got, _ := co.Get(creator, s.ID); got.Status != checkout.NotReady {
			t.Errorf("the creator's first session is %s; with one session at a time it gives way", got.Status)
		}
		// Without a buyer known, sessions share nothing.
		for i := range 2 {
			if s, err := co.Create(context.Background(), checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian}); err != nil || s.Status != checkout.Ready {
				t.Fatalf("anonymous session %d: %v %+v", i, err, s)
			}
		}
		if got, _ := co.Get(updater, theirs.ID); got.Status != checkout.Ready {
			t.Errorf("another buyer's sessions changed the updater's: %s", got.Status)
		}
	})
}

// TestClaimHoldOutlivesTTL: a session being paid keeps its stock past its
// TTL until the payment settles: the sweeper leaves its holds, and another
// buyer cannot take the units.
func TestClaimHoldOutlivesTTL(t *testing.T) {
	const pan = "cast-iron-skillet-12-in"
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		lost := &lostAnswer{charge: true}
		p := payingShop(t, db, lost)
		lost.Sandbox = p.sandbox
		if err := db.Exec("UPDATE variants SET stock = 2 WHERE id = ?", pan).Error; err != nil {
			t.Fatal(err)
		}
		s, err := p.co.Create(as("192.0.2.1"), checkout.Request{Items: items(pan, 2), Address: californian, Buyer: &checkout.Buyer{Email: "ada@example.com"}})
		if err != nil || s.Status != checkout.Ready {
			t.Fatalf("create: %v %+v", err, s)
		}
		if s, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil || s.Status != checkout.InProgress {
			t.Fatalf("with the answer lost: %v %+v", err, s)
		}
		for _, after := range []time.Duration{checkout.DefaultTTL + time.Minute, 12 * time.Hour} {
			p.clk.Add(after)
			if _, err := p.co.ExpireDue(ctx); err != nil {
				t.Fatal(err)
			}
			if n := sessionHolds(t, db, s.ID); n != 2 {
				t.Fatalf("%s later the session being paid holds %d units, want 2", after, n)
			}
			other, err := p.co.Create(as("203.0.113.50"), checkout.Request{Items: items(pan, 1), Address: californian})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"out_of_stock $.line_items[0].item.quantity"}, errorParams(other)); other.Status != checkout.NotReady || diff != "" {
				t.Fatalf("%s later another buyer got the units being paid for: %s (-want +got):\n%s", after, other.Status, diff)
			}
		}
		// The payment settles: the order takes the units.
		if _, err := p.co.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err := p.co.Get(ctx, s.ID); err != nil || got.Status != checkout.Completed || stock(t, db, pan) != 0 {
			t.Fatalf("settled: %v %s, stock %d", err, got.Status, stock(t, db, pan))
		}
	})
}

// TestGiveWayRacesPayment: a buyer's session being paid while their other
// session (the same email, another client) wants its units: either the
// payment wins and the other session is out of stock, or the other takes
// the units before the claim and the payment is refused; never both, which
// would sell units that are also held.
func TestGiveWayRacesPayment(t *testing.T) {
	const rounds = 30
	ctx := context.Background()
	ada := &checkout.Buyer{Email: "ada@example.com"}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		// The stock alone decides, and the buyer pays as often as it takes.
		p := payingShopWith(t, db, nil, func(p *checkout.Policy) {
			noShare(p)
			p.Limits.PaymentsPerHour, p.Limits.PaymentsPerAddressHour = 1000, 1000
		})
		ids := inStock(t, db, 10)
		warmPool(t, db, 4)
		for round := range rounds {
			v := ids[round%len(ids)]
			if err := db.Exec("UPDATE variants SET stock = 3 WHERE id = ?", v).Error; err != nil {
				t.Fatal(err)
			}
			first, err := p.co.Create(as("192.0.2.1"), checkout.Request{Items: items(v, 3), Address: californian, Buyer: ada})
			if err != nil || first.Status != checkout.Ready {
				t.Fatalf("round %d, first: %v %+v", round, err, first)
			}
			var paid, second *checkout.Session
			var payErr, createErr error
			var wg sync.WaitGroup
			start := make(chan struct{})
			wg.Go(func() {
				<-start
				paid, payErr = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: first.ID, Payment: pay("pm_card_visa")})
			})
			wg.Go(func() {
				<-start
				second, createErr = p.co.Create(as("198.51.100.1"), checkout.Request{Items: items(v, 3), Address: californian, Buyer: ada})
			})
			close(start)
			wg.Wait()
			if createErr != nil {
				t.Fatalf("round %d, second: %v", round, createErr)
			}
			if payErr != nil && shop.ErrorCode(payErr) != shop.Invalid {
				t.Fatalf("round %d, pay: %v", round, payErr)
			}
			completed := payErr == nil && paid.Status == checkout.Completed
			if completed && sessionHolds(t, db, second.ID) > 0 {
				t.Fatalf("round %d: the first session was paid and the second holds %d of its units (stock now %d)",
					round, sessionHolds(t, db, second.ID), stock(t, db, v))
			}
			if !completed && second.Status != checkout.Ready {
				t.Fatalf("round %d: neither the payment (%v) nor the second session (%s %v) won", round, payErr, second.Status, errorParams(second))
			}
		}
	})
}
