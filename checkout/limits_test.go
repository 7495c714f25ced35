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

// as is a call made by the buyer at a client address.
func as(addr string) context.Context {
	return shop.WithBuyer(context.Background(), shop.Buyer{Address: addr})
}

// inStock lists the ids of the demo variants with at least n units on hand.
func inStock(t *testing.T, db *gorm.DB, n int) []string {
	t.Helper()
	var ids []string
	if err := db.Raw("SELECT id FROM variants WHERE stock >= ? ORDER BY id", n).Scan(&ids).Error; err != nil {
		t.Fatal(err)
	}
	return ids
}

// heldUnits sums the live holds of the sessions of a buyer key ("" for all
// holds).
func heldUnits(t *testing.T, db *gorm.DB, buyerKey string) int64 {
	t.Helper()
	q := "SELECT COALESCE(SUM(quantity), 0) FROM stock_holds"
	var args []any
	if buyerKey != "" {
		q += " WHERE holder IN (SELECT id FROM checkout_sessions WHERE buyer_key = ?)"
		args = append(args, buyerKey)
	}
	var n int64
	if err := db.Raw(q, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// sessionHolds sums a session's holds.
func sessionHolds(t *testing.T, db *gorm.DB, id string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COALESCE(SUM(quantity), 0) FROM stock_holds WHERE holder = ?", id).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAttackHoldsNoMoreThanLimits is the attack: one anonymous
// client asks for 50 lines of 999 units, three times, with an address. No
// line is over the stock's reach but over the limit per line, so nothing is
// held; and however many sessions of lines within that limit it opens, it
// never holds more than the limit in all, nor in more sessions than the
// limit. From a client address alone (no host user id) a session past a
// limit is refused; a host's user's newer session takes over from their
// older ones instead.
func TestAttackHoldsNoMoreThanLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  context.Context
		key  string
	}{
		{"ClientAddress", as("203.0.113.7"), "addr:203.0.113.7"},
		{"HostUser", subject("u-attacker", "203.0.113.7"), "subject:u-attacker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				co, _ := demoShopWith(t, db, noShare) // the limits per buyer alone
				attackHugeCarts(t, co, db, tc.ctx)
				ready := attackFullCarts(t, co, db, tc.ctx, tc.key)
				if tc.key == "addr:203.0.113.7" {
					// Let go of the one full session, then many small ones.
					if _, err := co.Cancel(tc.ctx, ready); err != nil {
						t.Fatal(err)
					}
				}
				ids := inStock(t, db, 10)
				for k := range 7 {
					s, err := co.Create(tc.ctx, checkout.Request{Items: items(ids[k], 1), Address: californian})
					if err != nil {
						t.Fatal(err)
					}
					if k >= 5 && tc.key == "addr:203.0.113.7" {
						if diff := cmp.Diff([]string{"invalid $.line_items"}, errorParams(s)); diff != "" || s.Status != checkout.NotReady {
							t.Errorf("session %d past the limit of sessions: %s (-want +got):\n%s", k, s.Status, diff)
						}
					}
				}
				var open int64
				if err := db.Raw("SELECT COUNT(DISTINCT holder) FROM stock_holds").Scan(&open).Error; err != nil {
					t.Fatal(err)
				}
				if open != 5 {
					t.Errorf("%d sessions hold stock, want the limit of 5", open)
				}
			})
		})
	}
}

// attackHugeCarts: three sessions of 50 lines of 999 units hold nothing.
func attackHugeCarts(t *testing.T, co *checkout.Checkout, db *gorm.DB, ctx context.Context) {
	t.Helper()
	ids := inStock(t, db, 10)
	for k := range 3 {
		cart := make([]checkout.Item, checkout.MaxLines)
		for i := range cart {
			cart[i] = checkout.Item{ID: ids[(k*checkout.MaxLines+i)%len(ids)], Quantity: checkout.MaxQuantity}
		}
		s, err := co.Create(ctx, checkout.Request{Items: &cart, Address: californian, OptionID: ptr("us-standard")})
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != checkout.NotReady || len(s.Messages) == 0 {
			t.Fatalf("session %d: %s %+v", k, s.Status, s.Messages)
		}
		want := checkout.Message{Type: checkout.MessageError, Code: "invalid", Param: "$.line_items[0].item.quantity", ContentType: "plain",
			Content: "At most 10 units of one item per order; lower the quantity to 10 or less."}
		if diff := cmp.Diff(want, s.Messages[0], withoutKeys); diff != "" {
			t.Errorf("session %d's first message (-want +got):\n%s", k, diff)
		}
		if n := len(errorParams(s)); n != checkout.MaxLines {
			t.Errorf("session %d: %d errors, want one per line: %v", k, n, errorParams(s))
		}
	}
	if n := heldUnits(t, db, ""); n != 0 {
		t.Fatalf("%d units held after the attack, want none", n)
	}
}

// attackFullCarts: within the limit per line, 5 lines of 10 units, session
// after session; the buyer never holds more than 50 units. A host user's
// newest session is the one ready, taking over from the older ones; from a
// client address alone the first stays the one ready and the others are
// refused. It returns the ready session's id.
func attackFullCarts(t *testing.T, co *checkout.Checkout, db *gorm.DB, ctx context.Context, key string) string {
	t.Helper()
	person := shop.IsHostUser(key)
	ids := inStock(t, db, 10)
	var sessions []string
	for k := range 8 {
		cart := make([]checkout.Item, 5)
		for i := range cart {
			cart[i] = checkout.Item{ID: ids[(k*5+i)%len(ids)], Quantity: 10}
		}
		s, err := co.Create(ctx, checkout.Request{Items: &cart, Address: californian})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case person || k == 0:
			if s.Status != checkout.Ready {
				t.Fatalf("session %d: %s %v", k, s.Status, errorParams(s))
			}
		default:
			want := "At most 50 units in all may be held for one buyer at once; this session has 50 and your other checkout sessions hold 50. Remove items or lower their quantities."
			if s.Status != checkout.NotReady || len(s.Messages) == 0 || s.Messages[0].Param != "$.line_items" || s.Messages[0].Content != want {
				t.Fatalf("session %d from the same address: %s %+v; want not ready: %s", k, s.Status, s.Messages, want)
			}
		}
		sessions = append(sessions, s.ID)
		if n := heldUnits(t, db, key); n > 50 {
			t.Fatalf("after session %d the buyer holds %d units, over the limit of 50", k, n)
		}
	}
	if n := heldUnits(t, db, ""); n != 50 {
		t.Errorf("%d units held in all, want the 50 of one session", n)
	}
	ready := sessions[0]
	if person {
		ready = sessions[len(sessions)-1]
	}
	for _, id := range sessions {
		s, err := co.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if id != ready && (s.Status != checkout.NotReady || sessionHolds(t, db, id) != 0) {
			t.Errorf("session %s: %s, holding %d; want not ready, holding nothing", id, s.Status, sessionHolds(t, db, id))
		}
	}
	return ready
}

// TestLimitMessages: each limit, when a session breaks it, is an invalid
// error at the line (or the lines) naming the limit in words; the session
// is not ready, holds nothing, and is ready once the buyer fixes it. The
// holds of the buyer's sessions being paid count.
func TestLimitMessages(t *testing.T) {
	const mug, cup = "enamel-camp-mug-cream", "stoneware-coffee-mug-12-oz" // 109 and 103 on hand
	limits := func(p *checkout.Policy) {
		p.Limits = checkout.Limits{UnitsPerLine: 10, UnitsPerVariant: 8, UnitsPerBuyer: 20, OpenSessions: 2}
	}
	for _, tc := range []struct {
		name string
		// paid are the carts of the buyer's sessions being paid first.
		paid  []*[]checkout.Item
		cart  *[]checkout.Item
		anon  bool // no buyer known (stdio)
		param string
		text  string
		fix   *[]checkout.Item
	}{{
		name: "ErrUnitsPerLine", cart: items(mug, 11), param: "$.line_items[0].item.quantity",
		text: "At most 10 units of one item per order; lower the quantity to 10 or less.",
		fix:  items(mug, 8),
	}, {
		name: "ErrUnitsPerLineNoBuyer", anon: true, cart: items(cup, 1, mug, 12), param: "$.line_items[1].item.quantity",
		text: "At most 10 units of one item per order; lower the quantity to 10 or less.",
		fix:  items(cup, 1, mug, 8),
	}, {
		name: "ErrUnitsPerVariant", cart: items(mug, 9), param: "$.line_items[0].item.quantity",
		text: "At most 8 units of Enamel Camp Mug — Cream may be held for one buyer at once; lower the quantity to 8 or less.",
		fix:  items(mug, 8),
	}, {
		name: "ErrUnitsPerVariantWithPaid", paid: []*[]checkout.Item{items(mug, 5)}, cart: items(cup, 1, mug, 4), param: "$.line_items[1].item.quantity",
		text: "At most 8 units of Enamel Camp Mug — Cream may be held for one buyer at once, and your checkout sessions being paid hold 5; lower the quantity to 3 or less.",
		fix:  items(cup, 1, mug, 3),
	}, {
		name: "ErrUnitsPerBuyer", cart: items(mug, 7, cup, 7, "cotton-tea-towels-natural", 7), param: "$.line_items",
		text: "At most 20 units in all may be held for one buyer at once; this session has 21. Remove items or lower their quantities.",
		fix:  items(mug, 7, cup, 7, "cotton-tea-towels-natural", 6),
	}, {
		name: "ErrUnitsPerBuyerNoBuyer", anon: true, cart: items(mug, 7, cup, 7, "cotton-tea-towels-natural", 7), param: "$.line_items",
		text: "At most 20 units in all may be held for one buyer at once; this session has 21. Remove items or lower their quantities.",
		fix:  items(mug, 7, cup, 7),
	}, {
		name: "ErrUnitsPerBuyerWithPaid", paid: []*[]checkout.Item{items(mug, 5)}, cart: items(cup, 8, "cotton-tea-towels-natural", 8), param: "$.line_items",
		text: "At most 20 units in all may be held for one buyer at once; this session has 16 and your checkout sessions being paid hold 5. Remove items or lower their quantities.",
		fix:  items(cup, 8, "cotton-tea-towels-natural", 7),
	}, {
		name: "ErrOpenSessions", paid: []*[]checkout.Item{items(mug, 1), items(cup, 1)}, cart: items("cotton-tea-towels-natural", 1), param: "$.line_items",
		text: "At most 2 checkout sessions may hold items for one buyer at once, and 2 of yours are being paid; update this session again once those payments are done.",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				lost := &lostAnswer{}
				p := payingShopWith(t, db, lost, limits)
				lost.Sandbox = p.sandbox
				ctx := as("198.51.100.1")
				if tc.anon {
					ctx = context.Background()
				}
				for i, cart := range tc.paid {
					s, err := p.co.Create(ctx, checkout.Request{Items: cart, Address: californian, Buyer: &checkout.Buyer{Email: "ada@example.com"}})
					if err != nil || s.Status != checkout.Ready {
						t.Fatalf("paid session %d: %v %+v", i, err, s)
					}
					// The answer is lost: the session stays being paid.
					if s, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil || s.Status != checkout.InProgress {
						t.Fatalf("paying session %d: %v %+v", i, err, s)
					}
				}
				s, err := p.co.Create(ctx, checkout.Request{Items: tc.cart, Address: californian})
				if err != nil {
					t.Fatal(err)
				}
				want := []checkout.Message{{Type: checkout.MessageError, Code: "invalid", Param: tc.param, ContentType: "plain", Content: tc.text}}
				var got []checkout.Message
				for _, m := range s.Messages {
					if m.Type == checkout.MessageError {
						got = append(got, m)
					}
				}
				if diff := cmp.Diff(want, got, withoutKeys); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
				if s.Status != checkout.NotReady || sessionHolds(t, db, s.ID) != 0 {
					t.Errorf("over a limit: %s, holding %d", s.Status, sessionHolds(t, db, s.ID))
				}
				if tc.fix == nil {
					return
				}
				s, err = p.co.Update(ctx, s.ID, checkout.Request{Items: tc.fix})
				if err != nil || s.Status != checkout.Ready {
					t.Fatalf("fixed: %v %s %v", err, s.Status, errorParams(s))
				}
				// The sessions being paid kept their holds.
				if n := heldUnits(t, db, ""); n != sessionHolds(t, db, s.ID)+paidUnits(tc.paid) {
					t.Errorf("%d units held in all, want the fixed session's and the paid ones'", n)
				}
			})
		})
	}
}

func paidUnits(carts []*[]checkout.Item) int64 {
	var n int64
	for _, c := range carts {
		for _, it := range *c {
			n += it.Quantity
		}
	}
	return n
}

// TestOpenSessionsGiveWay: a host user's sixth session holding stock makes
// the one they changed least recently let go of its holds, saying why;
// changed again, that one takes its turn back from the next.
func TestOpenSessionsGiveWay(t *testing.T) {
	ctx := subject("u-open", "192.0.2.10")
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, clk := demoShop(t, db)
		ids := inStock(t, db, 10)
		var sessions []*checkout.Session
		for k := range 6 {
			clk.Add(time.Second)
			s, err := co.Create(ctx, checkout.Request{Items: items(ids[k], 1), Address: californian})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("session %d: %v %+v", k, err, s)
			}
			sessions = append(sessions, s)
		}
		status := func() []checkout.Status {
			t.Helper()
			var out []checkout.Status
			for _, s := range sessions {
				got, err := co.Get(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				if held := sessionHolds(t, db, s.ID); (got.Status == checkout.Ready) != (held > 0) {
					t.Errorf("session %s is %s holding %d", s.ID, got.Status, held)
				}
				out = append(out, got.Status)
			}
			return out
		}
		R, N := checkout.Ready, checkout.NotReady
		if diff := cmp.Diff([]checkout.Status{N, R, R, R, R, R}, status()); diff != "" {
			t.Fatalf("statuses (-want +got):\n%s", diff)
		}
		first, err := co.Get(ctx, sessions[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []checkout.Message{
			{Type: checkout.MessageInfo, ContentType: "plain", Key: checkout.KeyStockMovedLimits,
				Params:  map[string]string{"units_per_variant": "10", "units_per_buyer": "50", "open_sessions": "5"},
				Content: "Its items were moved to your newer checkout session: one buyer may hold at most 10 units of one item, 50 units in all and 5 checkout sessions at once."},
			{Type: checkout.MessageError, Code: "out_of_stock", Param: "$.line_items", ContentType: "plain", Key: checkout.KeyStockReleased,
				Content: "Nothing is held for this session any more; update it to hold its items again, or cancel it."},
		}
		if diff := cmp.Diff(want, first.Messages[:min(2, len(first.Messages))]); diff != "" {
			t.Errorf("messages of the session that gave way (-want +got):\n%s", diff)
		}
		clk.Add(time.Second)
		if s, err := co.Update(ctx, sessions[0].ID, checkout.Request{}); err != nil || s.Status != checkout.Ready {
			t.Fatalf("update of the first again: %v %+v", err, s)
		}
		if diff := cmp.Diff([]checkout.Status{R, N, R, R, R, R}, status()); diff != "" {
			t.Errorf("statuses after the first changed again (-want +got):\n%s", diff)
		}
	})
}

// TestBuyerLimitsUnderConcurrency: one buyer's sessions created at once,
// each within the limits alone, never hold more than the limit in all
// together.
func TestBuyerLimitsUnderConcurrency(t *testing.T) {
	const workers = 8
	ctx := as("203.0.113.99")
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		clk := &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}
		co := newCheckoutWith(t, db, clk, &checkout.Options{}, func(p *checkout.Policy) {
			p.Limits = checkout.Limits{UnitsPerBuyer: 5}
		})
		ids := inStock(t, db, 10)
		warmPool(t, db, workers)
		for round := range 3 {
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, workers)
			for i := range workers {
				wg.Go(func() {
					<-start
					_, errs[i] = co.Create(ctx, checkout.Request{Items: items(ids[(round*workers+i)%len(ids)], 2), Address: californian})
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil && shop.ErrorCode(err) != shop.Conflict {
					t.Fatalf("round %d, create %d: %v", round, i, err)
				}
			}
			if n := heldUnits(t, db, "addr:203.0.113.99"); n > 5 {
				t.Fatalf("round %d: the buyer holds %d units, over the limit of 5", round, n)
			}
		}
	})
}
